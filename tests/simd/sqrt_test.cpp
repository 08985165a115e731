// Tests of lockstep/core/vector_math/sqrt_inl.hpp: IEEE 754's square root is correctly rounded, so every width
// and instruction set must give exactly std::sqrt's bits (C99 Annex F values included).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/sqrt_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/sqrt_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Sqrt, sqrt)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Sqrt);

namespace {

const entry_fn sqrt_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Sqrt);

TEST(SimdSqrt, EqualsTheCorrectlyRoundedSquareRoot) {
  const std::vector<double> x = concat({bit_patterns(0x1p-1074, 0x1.fffffffffffffp+1023, 1 << 16, 11),
                                        uniform(0, 100, 1 << 16, 12)});
  const std::vector<double> got = expect_deterministic("sqrt", sqrt_entry, x, {});
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += !same_bits(got[i], std::sqrt(x[i]));
  EXPECT_EQ(differ, 0u);
  expect_no_exceptions("sqrt", sqrt_entry, x, {});
  const double inf = HUGE_VAL, nan = std::numeric_limits<double>::quiet_NaN();
  expect_exact_cases("sqrt", sqrt_entry,
                     {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {inf, 1, inf}, {-1.0, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {4.0, 1, 2.0}, {0x1p-1074, 1, 0x1p-537}});
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
