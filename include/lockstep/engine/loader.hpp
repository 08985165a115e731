// lockstep/engine/loader.hpp — an engine compiled into a shared library, loaded at run time.
//
// load_engine_library opens the library with dlopen(RTLD_NOW | RTLD_LOCAL) — every symbol resolved at
// once, none of its symbols visible to later libraries — and never RTLD_DEEPBIND (which would let the
// library's own copies of the C++ runtime's symbols shadow the program's). It looks up the entry point
// LOCKSTEP_ENGINE_ENTRY_POINT, calls it, and checks the table's ABI version, size and build id against
// this program's. A library is never closed: its table, names and code must outlive every engine
// handle, and a second load of the same path returns the same table. docs/ENGINE-ABI.md has the rules
// an engine library is built by.
#pragma once

#include <filesystem>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

// Throws std::invalid_argument naming the library and the reason (dlopen's message, a missing entry
// point, another ABI or another lockstep build).
engine load_engine_library(const std::filesystem::path& library);

}  // namespace lockstep
