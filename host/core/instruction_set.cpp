// host/core/instruction_set.cpp — the CPU check of a build for an instruction set beyond the
// baseline (instruction_set.hpp). The top-level CMakeLists.txt compiles this unit for the baseline
// whatever the build's instruction set (-mno-sse3 and the other -mno- flags), so that the check runs
// on any x86-64 CPU.
//
// The check's own path calls only functions of internal linkage and the C library. A C++ library
// template (std::string, std::vector) would not do: its copies are weak, every unit that uses it emits
// one, and the linker keeps one of them for the whole program, possibly one compiled for AVX-512 in
// another unit (docs/SIMD.md, "What remains for the lanes backend").
#include "host/core/instruction_set.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#ifndef LOCKSTEP_INSTRUCTION_SET_NAME
#error "LOCKSTEP_INSTRUCTION_SET_NAME and LOCKSTEP_INSTRUCTION_SET_CPU_FEATURES come from the top-level CMakeLists.txt"
#endif

namespace lockstep::host {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// F16C from CPUID leaf 1 (ECX bit 29), usable where AVX is: clang 14's __builtin_cpu_supports does not
// know the name, and g++'s answers the same way (libgcc sets it only where AVX is usable).
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx") != 0 && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
#endif

bool cpu_has_feature(const char* name, std::size_t length) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports takes a string literal only, hence the table. For avx, avx2, fma and the
  // avx512 features it also requires the operating system to save the registers (XCR0).
  __builtin_cpu_init();
  struct entry {
    const char* name;
    bool present;
  };
  const entry table[] = {
      {"ssse3", __builtin_cpu_supports("ssse3") != 0},       {"sse4.1", __builtin_cpu_supports("sse4.1") != 0},
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},     {"pclmul", __builtin_cpu_supports("pclmul") != 0},
      {"aes", __builtin_cpu_supports("aes") != 0},           {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},         {"bmi", __builtin_cpu_supports("bmi") != 0},
      {"bmi2", __builtin_cpu_supports("bmi2") != 0},         {"fma", __builtin_cpu_supports("fma") != 0},
      {"f16c", cpu_has_f16c()},                             {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0}, {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
  };
  for (const entry& e : table)
    if (std::strlen(e.name) == length && std::memcmp(e.name, name, length) == 0) return e.present;
#else
  (void)name;
  (void)length;
#endif
  return false;
}

// Calls missing(begin, length) for each space-separated word of `features` for which has(begin,
// length) is false, in their order: the one rule of both the check and missing_cpu_features.
template <class Has, class Missing>
void for_each_missing_feature(const char* features, Has has, Missing missing) {
  while (*features != '\0') {
    while (*features == ' ') ++features;
    const char* end = features;
    while (*end != '\0' && *end != ' ') ++end;
    const std::size_t length = static_cast<std::size_t>(end - features);
    if (length > 0 && !has(features, length)) missing(features, length);
    features = end;
  }
}

// Runs before the constructors of default priority, which are those of every other unit of lockstep
// and of the program (the C++ library's own run earlier, in its shared object, and are baseline code).
[[gnu::constructor(101)]] void refuse_a_cpu_without_the_instruction_set() {
  char missing[256] = "";
  std::size_t used = 0;
  // The longest set's features take about 110 characters; a longer list would be cut, never overrun.
  const auto add = [&](const char* feature, std::size_t length) {
    if (used + length + 2 > sizeof missing) return;
    if (used > 0) missing[used++] = ' ';
    std::memcpy(missing + used, feature, length);
    used += length;
    missing[used] = '\0';
  };
  for_each_missing_feature(LOCKSTEP_INSTRUCTION_SET_CPU_FEATURES, cpu_has_feature, add);
  if (used == 0) return;
  std::fprintf(stderr,
               "lockstep: this program was built for the instruction set %s (LOCKSTEP_INSTRUCTION_SET), "
               "which needs the CPU features %s; this CPU lacks %s. Build lockstep with "
               "-DLOCKSTEP_INSTRUCTION_SET=baseline, or with the widest set this CPU has.\n",
               LOCKSTEP_INSTRUCTION_SET_NAME, LOCKSTEP_INSTRUCTION_SET_CPU_FEATURES, missing);
  // _Exit, not exit: nothing of lockstep has run that needs finishing, and a module being loaded by
  // dlopen (the Python module) must not run the process's exit handlers from inside the loader.
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

}  // namespace

instruction_set built_instruction_set() {
  return {LOCKSTEP_INSTRUCTION_SET_NAME, LOCKSTEP_INSTRUCTION_SET_CPU_FEATURES};
}

std::vector<std::string> missing_cpu_features(std::string_view cpu_features, bool (*cpu_has)(std::string_view)) {
  const std::string words(cpu_features);
  std::vector<std::string> missing;
  const auto has = [&](const char* feature, std::size_t length) { return cpu_has(std::string_view(feature, length)); };
  for_each_missing_feature(words.c_str(), has,
                           [&](const char* feature, std::size_t length) { missing.emplace_back(feature, length); });
  return missing;
}

bool this_cpu_has(std::string_view feature) { return cpu_has_feature(feature.data(), feature.size()); }

std::string describe(const instruction_set& set) {
  if (set.cpu_features.empty()) return std::string(set.name) + " (any x86-64 CPU)";
  return std::string(set.name) + " (needs " + std::string(set.cpu_features) + ")";
}

}  // namespace lockstep::host

// Referenced by the link option of lockstep (the top-level CMakeLists.txt), so that the linker keeps
// this unit, and with it the check, in every program that links the static library.
extern "C" void lockstep_instruction_set_check() {}
