// host/core/elementary.cpp — the library's one definition of lockstep/core/elementary.hpp's functions
// (lockstep's own elementary functions, one lane of lockstep/simd/math), compiled for the baseline
// instruction set.
#include "lockstep/core/elementary_definitions.hpp"
