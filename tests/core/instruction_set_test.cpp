// The CPU check of a build for an instruction set (host/core/instruction_set.hpp): the list of missing
// features, the CPU query against the kernel's own view of the CPU (/proc/cpuinfo), and the
// description --version prints. The refusal itself is instruction_set_refusal_probe's test
// (tests/core/CMakeLists.txt).
#include "host/core/instruction_set.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using lockstep::host::missing_cpu_features;

bool has_only_avx_and_sse(std::string_view feature) { return feature == "avx" || feature == "sse4.2"; }
bool has_nothing(std::string_view) { return false; }

TEST(InstructionSet, MissingFeaturesAreListedInTheirOrder) {
  EXPECT_EQ(missing_cpu_features("sse4.2 avx avx2 fma", has_only_avx_and_sse),
            (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(missing_cpu_features("  avx512f   avx  avx512bw ", has_only_avx_and_sse),
            (std::vector<std::string>{"avx512f", "avx512bw"}));
  EXPECT_TRUE(missing_cpu_features("", has_nothing).empty());
  EXPECT_TRUE(missing_cpu_features("avx sse4.2", has_only_avx_and_sse).empty());
}

// The kernel's names for the features where they differ from __builtin_cpu_supports's.
std::string kernel_name(const std::string& feature) {
  if (feature == "sse4.1") return "sse4_1";
  if (feature == "sse4.2") return "sse4_2";
  if (feature == "pclmul") return "pclmulqdq";
  if (feature == "bmi") return "bmi1";
  return feature;
}

TEST(InstructionSet, TheCpuQueryAgreesWithTheKernel) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) GTEST_SKIP() << "no /proc/cpuinfo";
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string word; words >> word;) flags.insert(word);
      break;
    }
  ASSERT_FALSE(flags.empty()) << "/proc/cpuinfo has no flags line";
  // Every feature any instruction set of the build option asks for (the avx512 set holds them all).
  for (const char* feature : {"ssse3", "sse4.1", "sse4.2", "pclmul", "aes", "avx", "avx2", "bmi", "bmi2", "fma",
                              "f16c", "avx512f", "avx512vl", "avx512dq", "avx512bw"})
    EXPECT_EQ(lockstep::host::this_cpu_has(feature), flags.count(kernel_name(feature)) == 1) << feature;
  EXPECT_FALSE(lockstep::host::this_cpu_has("no-such-feature"));
  EXPECT_FALSE(lockstep::host::this_cpu_has("avx5"));  // a prefix of a known name is not that name
}

TEST(InstructionSet, ThisBuildsSetIsDescribedAndPresent) {
  const lockstep::host::instruction_set set = lockstep::host::built_instruction_set();
  const std::string text = lockstep::host::describe(set);
  EXPECT_EQ(text.rfind(std::string(set.name), 0), 0u) << text;
  if (set.cpu_features.empty()) {
    EXPECT_EQ(set.name, "baseline");
    EXPECT_NE(text.find("any x86-64 CPU"), std::string::npos) << text;
  } else {
    EXPECT_NE(text.find(std::string(set.cpu_features)), std::string::npos) << text;
  }
  // This program started, so the check found every feature; the query must say so too.
  EXPECT_TRUE(missing_cpu_features(set.cpu_features, lockstep::host::this_cpu_has).empty());
}

}  // namespace
