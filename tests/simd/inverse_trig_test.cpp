// Tests of lockstep/core/vector_math/atan_inl.hpp and asin_acos_inl.hpp: the same bits at W = 1, 2, 4, 8 on
// every instruction set compiled in (scalar, SSSE3, SSE4, AVX2, AVX-512 where the CPU has them), no lane
// depending on its neighbours, within 1 ulp of the exact value (subnormal arguments and results
// included, every range of fdlibm's reductions and both sides of each of its thresholds), and C99
// Annex F's exceptional values.
//
// atan2 takes the harness's two arguments in the order they are printed: the harness's x is atan2's
// first argument (the ordinate y) and the harness's y is its second (the abscissa x), so a message
// "f(a, b)" or "x = a, y = b" means atan2(a, b).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/inverse_trig_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/asin_acos_inl.hpp"
#include "lockstep/core/vector_math/atan_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Atan, atan)
LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(Atan2, atan2)  // the harness's (x, y) is atan2's (y, x): see the top of this file
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Asin, asin)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Acos, acos)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Atan);
HWY_EXPORT(Atan2);
HWY_EXPORT(Asin);
HWY_EXPORT(Acos);

namespace {

const entry_fn atan_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Atan);
const entry_fn atan2_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Atan2);
const entry_fn asin_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Asin);
const entry_fn acos_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Acos);
constexpr double inf = HUGE_VAL;
const double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double pi = 0x1.921fb54442d18p+1;  // the doubles nearest pi, pi/2, pi/4, 3 pi/4
constexpr double half_pi = 0x1.921fb54442d18p+0;
constexpr double quarter_pi = 0x1.921fb54442d18p-1;
constexpr double three_quarters_pi = 0x1.2d97c7f3321d2p+1;
constexpr size_t kArguments = 1 << 18;

// Each threshold, its neighbours up to 16 ulp on either side, and 64 random points within 2^-20 of it
// relative, with both signs.
std::vector<double> around(const std::vector<double>& thresholds, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-0x1p-20, 0x1p-20);
  std::vector<double> v;
  for (const double c : thresholds) {
    double below = c, above = c;
    v.push_back(c);
    for (int i = 0; i < 16; ++i) {
      below = std::nextafter(below, 0.0), above = std::nextafter(above, inf);
      v.push_back(below), v.push_back(above);
    }
    for (int i = 0; i < 64; ++i) v.push_back(c * (1 + u(g)));
  }
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}
std::vector<double> negated_half(std::vector<double> v) {
  for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
  return v;
}
std::vector<double> subnormals(size_t n, uint64_t seed) {
  return negated_half(bit_patterns(0x1p-1074, 0x1p-1022, n, seed));
}

TEST(SimdAtan, WholeRangeIsDeterministicAndWithinOneUlp) {
  // Magnitudes from 1e-300 to 1e300 and the subnormals, the range models use, and fdlibm's breakpoints
  // 7/16, 11/16, 19/16, 39/16 with the bounds 2^-29 (atan x = x below) and 2^66 (pi/2 above).
  expect_accurate_by_set("atan", atan_entry,
                         {{"wide", log_uniform(1e-300, 1e300, kArguments, 11, true), {}},
                          {"subnormal", subnormals(kArguments / 8, 12), {}},
                          {"typical", uniform(-10, 10, kArguments, 13), {}},
                          {"breakpoints", concat({log_uniform(1.0 / 16, 16, kArguments, 14, true),
                                                  around({0.4375, 0.6875, 1.1875, 2.4375, 0x1p-29, 0x1p66, 1.0}, 15)}),
                           {}}},
                         [](double a, double) { return std::atan(static_cast<long double>(a)); }, 1.0);
}

TEST(SimdAtan, ExceptionalValues) {
  expect_exact_cases("atan", atan_entry,
                     {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {inf, 1, half_pi}, {-inf, 1, -half_pi}, {nan, 1, nan},
                      {1.0, 1, quarter_pi}, {-1.0, 1, -quarter_pi}, {0x1p-1074, 1, 0x1p-1074},
                      {-0x1p-1022, 1, -0x1p-1022}, {1e300, 1, half_pi}, {-0x1p66, 1, -half_pi}});
}

TEST(SimdAtan2, AllQuadrantsAreDeterministicAndWithinOneUlp) {
  // Harness x = atan2's y, harness y = atan2's x. Both from 1e-300 to 1e300 with independent signs
  // (ratios from 1e-600 to 1e600, all four quadrants), subnormals against normals and each other, the
  // range models use, ratios at fdlibm's breakpoints (of |y/x|) and around its cut-offs 2^+-60, and
  // ratios spread over 2^-70 .. 2^70, where its exponent test switches between dividing and not.
  const size_t n = kArguments;
  argument_set ratios{"ratios", {}, {}};
  const std::vector<double> r = concat({around({0.4375, 0.6875, 1.1875, 2.4375, 0x1p-29, 0x1p66, 1.0, 0x1p60,
                                                0x1p61, 0x1p-60, 0x1p-61, 0x1p62, 0x1p-62},
                                               31),
                                        log_uniform(0x1p-70, 0x1p70, n / 4, 33, false)});
  const std::vector<double> scale = log_uniform(1e-250, 1e250, r.size(), 32, true);
  for (size_t i = 0; i < r.size(); ++i) {  // y = r x, x spread over the binades, all four sign combinations
    ratios.x.push_back(r[i] * scale[i] * ((i / 2) % 2 ? -1 : 1));
    ratios.y.push_back(scale[i]);
  }
  expect_accurate_by_set(
      "atan2", atan2_entry,
      {{"wide", log_uniform(1e-300, 1e300, n, 21, true), log_uniform(1e-300, 1e300, n, 26, true)},
       {"subnormal",
        concat({subnormals(n / 8, 22), log_uniform(1e-300, 1e300, n / 8, 23, true), subnormals(n / 8, 24)}),
        concat({log_uniform(1e-300, 1e300, n / 8, 27, true), subnormals(n / 8, 28), subnormals(n / 8, 29)})},
       {"typical", uniform(-100, 100, n, 25), uniform(-100, 100, n, 30)},
       ratios},
      [](double y, double x) { return std::atan2(static_cast<long double>(y), static_cast<long double>(x)); }, 1.0);
}

TEST(SimdAtan2, ExceptionalValues) {
  // {y, x, atan2(y, x)}: C99 Annex F.10.1.4 case by case, then NaNs and extreme finite ratios.
  const double max = 0x1.fffffffffffffp+1023, min = 0x1p-1074;
  expect_exact_cases(
      "atan2", atan2_entry,
      {// atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0
       {0.0, -0.0, pi}, {-0.0, -0.0, -pi}, {0.0, 0.0, 0.0}, {-0.0, 0.0, -0.0},
       // atan2(+-0, x < 0) = +-pi, atan2(+-0, x > 0) = +-0 (infinite x included)
       {0.0, -1.0, pi}, {-0.0, -1.0, -pi}, {0.0, -inf, pi}, {-0.0, -inf, -pi}, {0.0, -min, pi}, {-0.0, -max, -pi},
       {0.0, 1.0, 0.0}, {-0.0, 1.0, -0.0}, {0.0, inf, 0.0}, {-0.0, inf, -0.0}, {0.0, min, 0.0}, {-0.0, max, -0.0},
       // atan2(y < 0, +-0) = -pi/2, atan2(y > 0, +-0) = pi/2
       {-1.0, 0.0, -half_pi}, {-1.0, -0.0, -half_pi}, {1.0, 0.0, half_pi}, {1.0, -0.0, half_pi},
       {-max, 0.0, -half_pi}, {min, -0.0, half_pi},
       // atan2(+-y, -inf) = +-pi, atan2(+-y, +inf) = +-0 for finite y > 0
       {1.0, -inf, pi}, {-1.0, -inf, -pi}, {max, -inf, pi}, {-min, -inf, -pi},
       {1.0, inf, 0.0}, {-1.0, inf, -0.0}, {max, inf, 0.0}, {-min, inf, -0.0},
       // atan2(+-inf, x) = +-pi/2 for finite x
       {inf, 1.0, half_pi}, {-inf, 1.0, -half_pi}, {inf, -1.0, half_pi}, {-inf, -max, -half_pi},
       {inf, 0.0, half_pi}, {-inf, -0.0, -half_pi},
       // atan2(+-inf, -inf) = +-3pi/4, atan2(+-inf, +inf) = +-pi/4
       {inf, -inf, three_quarters_pi}, {-inf, -inf, -three_quarters_pi}, {inf, inf, quarter_pi},
       {-inf, inf, -quarter_pi},
       // NaN in, NaN out
       {nan, 1.0, nan}, {1.0, nan, nan}, {nan, nan, nan}, {nan, inf, nan}, {inf, nan, nan}, {0.0, nan, nan},
       {nan, -0.0, nan},
       // |y/x| beyond 2^+-60, and ratio 1
       {max, min, half_pi}, {-max, -min, -half_pi}, {min, -max, pi}, {-min, -max, -pi}, {min, max, 0.0},
       {-1e-300, 1e300, -0.0}, {1.0, 1.0, quarter_pi}, {-max, -max, -three_quarters_pi}});
}

TEST(SimdAsinAcos, WholeDomainIsDeterministicAndWithinOneUlp) {
  // [-1, 1] uniformly, 1 - d for d from 2^-53 to 1/2 (both signs), magnitudes from 1e-300 to 1/2 and
  // the subnormals, and fdlibm's thresholds 1/2, 0.975 (its high word 0x3fef3333), 2^-27 and 2^-57.
  const std::vector<double> gap = log_uniform(0x1p-53, 0.5, kArguments, 41, false);
  std::vector<double> near_one(gap.size());
  for (size_t i = 0; i < near_one.size(); ++i) near_one[i] = (i % 2 ? -1 : 1) * (1 - gap[i]);
  std::vector<double> below_one = around({1.0}, 42);
  std::erase_if(below_one, [](double v) { return std::fabs(v) > 1; });
  const std::vector<argument_set> sets = {
      {"uniform", uniform(-1, 1, kArguments, 43), {}},
      {"near +-1", concat({near_one, below_one}), {}},
      {"small", concat({log_uniform(1e-300, 0.5, kArguments / 4, 44, true), subnormals(kArguments / 16, 45)}), {}},
      {"thresholds", around({0.5, 0x1.f3333p-1, 0x1p-27, 0x1p-57, 0x1.00001p-57}, 46), {}}};
  expect_accurate_by_set("asin", asin_entry, sets,
                         [](double a, double) { return std::asin(static_cast<long double>(a)); }, 1.0);
  expect_accurate_by_set("acos", acos_entry, sets,
                         [](double a, double) { return std::acos(static_cast<long double>(a)); }, 1.0);
}

TEST(SimdAsin, ExceptionalValues) {
  const double above_one = 0x1.0000000000001p+0;
  expect_exact_cases("asin", asin_entry,
                     {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {1.0, 1, half_pi}, {-1.0, 1, -half_pi}, {above_one, 1, nan},
                      {-above_one, 1, nan}, {2.0, 1, nan}, {inf, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {0x1p-1074, 1, 0x1p-1074}, {-0x1p-30, 1, -0x1p-30}, {0.5, 1, 0x1.0c152382d7366p-1}});
}

TEST(SimdAcos, ExceptionalValues) {
  const double above_one = 0x1.0000000000001p+0;
  expect_exact_cases("acos", acos_entry,
                     {{1.0, 1, 0.0}, {-1.0, 1, pi}, {0.0, 1, half_pi}, {-0.0, 1, half_pi}, {above_one, 1, nan},
                      {-above_one, 1, nan}, {-2.0, 1, nan}, {inf, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {0x1p-1074, 1, half_pi}, {-0x1p-60, 1, half_pi}, {0.5, 1, 0x1.0c152382d7366p+0},
                      {-0.5, 1, 0x1.0c152382d7366p+1}});
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
