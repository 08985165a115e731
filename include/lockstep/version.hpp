// lockstep/version.hpp — the library's version and the identity of an engine build.
//
// LOCKSTEP_VERSION must equal the project version in CMakeLists.txt (the configure step checks it).
// LOCKSTEP_BUILD_ID goes into every engine table and request struct (lockstep/engine/abi.h): the
// host refuses an engine library built from other headers.
#pragma once

#define LOCKSTEP_VERSION_MAJOR 0
#define LOCKSTEP_VERSION_MINOR 1
#define LOCKSTEP_VERSION_PATCH 0
#define LOCKSTEP_VERSION "0.1.0"
#define LOCKSTEP_BUILD_ID "lockstep 0.1.0 engine-abi 4"
