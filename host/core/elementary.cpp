// host/core/elementary.cpp — the library's one definition of lockstep/core/elementary.hpp's functions
// (lockstep's own elementary functions, one lane of lockstep/core/vector_math), compiled for the build's
// instruction set (LOCKSTEP_INSTRUCTION_SET, the baseline by default): Highway's static target follows
// it, and every target gives the same bits (tests/simd/scalar_path_test.cpp).
#include "lockstep/core/elementary_definitions.hpp"
