// host/core/instruction_set.hpp — the x86-64 instruction set this build of lockstep was compiled for
// (the CMake option LOCKSTEP_INSTRUCTION_SET) and the check that the CPU running it has it.
//
// A build for AVX2 or AVX-512 runs its code only on CPUs with those instructions; on any other it
// would die of an illegal instruction somewhere in the middle of a run. So every program that links
// lockstep checks the CPU before anything else of it runs (instruction_set.cpp: a constructor of
// priority 101, compiled for the baseline instruction set) and, on a CPU without one of the needed
// features, prints which and exits with status 1 (EXIT_FAILURE). The results do not depend on the
// instruction set: a member's bits are the same in every build (docs/SIMD.md, "The instruction set
// of a build").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockstep::host {

struct instruction_set {
  std::string_view name;          // baseline, sse4, avx2 or avx512
  std::string_view cpu_features;  // the features it needs, space-separated (__builtin_cpu_supports names)
};

// The instruction set of this build.
instruction_set built_instruction_set();

// The features of `cpu_features` (space-separated) for which `cpu_has` is false, in their order.
std::vector<std::string> missing_cpu_features(std::string_view cpu_features, bool (*cpu_has)(std::string_view));

// Whether this CPU (and its operating system, for the AVX register state) has `feature`, one of the
// names instruction_set::cpu_features uses; false for a name it does not know.
bool this_cpu_has(std::string_view feature);

// "avx512 (needs ssse3 sse4.1 ... avx512bw)", or "baseline (any x86-64 CPU)": for --version and logs.
std::string describe(const instruction_set& set);

}  // namespace lockstep::host
