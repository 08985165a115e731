// tests/simd/every_variant.hpp — what the lanes-method tests share: the loop that runs a lanes function
// on every instruction set the test was built for and the machine runs, at W = 1, 2, 4 and 8, and
// requires each variant to give every member the bits the scalar code gives it alone, raising no
// floating-point exception the scalar code does not; and the draw of magnitudes over many scales.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "hwy/targets.h"

namespace lockstep::simd_test {

// Equal bits, or both NaN (a NaN's payload is not part of a result).
inline bool same_bits(double x, double y) {
  return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y) || (std::isnan(x) && std::isnan(y));
}

// A magnitude between lo and hi whose logarithm is uniformly distributed.
inline double log_uniform(std::mt19937_64& g, double lo, double hi) {
  return lo * std::pow(hi / lo, std::uniform_real_distribution<double>(0, 1)(g));
}

// For every target and width: clears the FP flags and calls run(lanes), which returns false where the
// target has no such width (the variant is skipped) and otherwise leaves its results for
// count_differences(variant), which compares them with the members alone, reports the first difference
// itself (naming the variant, e.g. "AVX3 W=8") and returns how many members differ. Requires that the
// run raised none of `flags` outside `raised_alone`, that no member differs, and at least min_variants
// variants (a test built for Highway's scalar target alone has one: W = 1). Returns the number run.
template <class Run, class CountDifferences>
size_t expect_every_variant_equal(const std::string& name, int flags, int raised_alone, const Run& run,
                                  const CountDifferences& count_differences, size_t min_variants = 2) {
  size_t variants = 0;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const size_t lanes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      std::feclearexcept(FE_ALL_EXCEPT);
      if (!run(lanes)) continue;
      const int raised = std::fetestexcept(flags);
      ++variants;
      const std::string variant = std::string(hwy::TargetName(target)) + " W=" + std::to_string(lanes);
      EXPECT_EQ(raised & ~raised_alone, 0) << name << ", " << variant << " raised a floating-point exception ("
                                           << (raised & ~raised_alone) << ") the scalar code does not";
      EXPECT_EQ(count_differences(variant), 0u) << name << ", " << variant;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(variants, min_variants) << name;
  return variants;
}

}  // namespace lockstep::simd_test
