// Tests of lockstep/core/vector_math/pow_inl.hpp: the same bits at W = 1, 2, 4, 8 on every instruction set
// compiled in (scalar, SSSE3, SSE4, AVX2, AVX-512 where the CPU has them), no lane depending on its
// neighbours, within 0.9 ulp of the exact value wherever the result is finite (subnormal results, bases near
// 1 with huge exponents and negative bases with integer exponents included), exact integer powers of 2,
// 3 and 10, and C99 Annex F.10.4.4's exceptional values.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/pow_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/pow_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(Pow, pow)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Pow);

namespace {

const entry_fn pow_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Pow);
constexpr double inf = HUGE_VAL;
constexpr double max = 0x1.fffffffffffffp+1023;
const double nan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kArguments = 1 << 17;
// The accuracy bound: below 1 ulp with a margin (the largest errors measured over 2^22 arguments of
// each set are 0.83-0.85 ulp).
constexpr double kBound = 0.9;

// The reference: glibc's powl in x87 extended precision (within about 1 ulp of a long double, 2^-11 ulp
// of a double).
long double reference(double x, double y) {
  return std::pow(static_cast<long double>(x), static_cast<long double>(y));
}

// Exponents y = t / log2|x| for t uniform in [-1080, 1030], so that x^y = 2^t spans the normal range,
// the subnormals and both edges (overflow above 2^1024, underflow below 2^-1075).
std::vector<double> exponents_spanning_the_range(const std::vector<double>& x, uint64_t seed) {
  const std::vector<double> t = uniform(-1080, 1030, x.size(), seed);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double l = std::log2(std::fabs(x[i]));
    y[i] = l == 0 ? t[i] : t[i] / l;
  }
  return y;
}

// Checks determinism, neighbour independence and the accuracy bound over one argument set.
void expect_pow(const char* name, const std::vector<double>& x, const std::vector<double>& y, double bound) {
  const std::vector<double> got = expect_deterministic(name, pow_entry, x, y);
  expect_accurate(name, x, y, got, reference, bound);
}

TEST(SimdPow, TypicalArgumentsAreDeterministicAndWithinOneUlp) {
  const std::vector<double> x = uniform(0, 10, kArguments, 1), y = uniform(-10, 10, kArguments, 2);
  expect_pow("pow (typical)", x, y, kBound);
  expect_no_exceptions("pow (typical)", pow_entry, x, y);
}

TEST(SimdPow, WholeRangeIsDeterministicAndWithinOneUlp) {
  // Every positive bit pattern (subnormals included) as the base, results from overflow to underflow.
  const std::vector<double> x = bit_patterns(0x1p-1074, max, kArguments, 3);
  const std::vector<double> y = exponents_spanning_the_range(x, 4);
  expect_pow("pow (wide)", x, y, kBound);
  // No exception where the result is far from overflow (underflow is not checked).
  std::vector<double> quiet_x, quiet_y;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::fabs(reference(x[i], y[i])) < 0x1p1020L) quiet_x.push_back(x[i]), quiet_y.push_back(y[i]);
  expect_no_exceptions("pow (wide)", pow_entry, quiet_x, quiet_y);
  // Bases below 1e-300 and above 1e300 with exponents of magnitude below 1 and 1e-10.
  const std::vector<double> x2 = concat({bit_patterns(0x1p-1074, 1e-300, kArguments / 4, 5),
                                         bit_patterns(1e300, max, kArguments / 4, 6)});
  expect_pow("pow (extreme bases)", x2,
             concat({uniform(-1, 1, kArguments / 4, 7), log_uniform(1e-20, 1e-10, kArguments / 4, 8, true)}), kBound);
}

TEST(SimdPow, BasesNearOneWithHugeExponentsAreWithinOneUlp) {
  // x = 1 + k 2^-52 (or 1 - k 2^-53) for small k, and x within 2^-20 of 1, with |y| up to 2^62.
  std::mt19937_64 g(9);
  std::uniform_int_distribution<int> k(1, 1000);
  std::vector<double> x(kArguments / 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i & 1) ? 1 + k(g) * 0x1p-52 : 1 - k(g) * 0x1p-53;
  x = concat({x, uniform(1 - 0x1p-20, 1 + 0x1p-20, kArguments / 2, 10)});
  const std::vector<double> y = exponents_spanning_the_range(x, 11);
  expect_pow("pow (near 1)", x, y, kBound);
  // The same bases with exponents such that the result is at most 2^+-30 (no overflow anywhere).
  const std::vector<double> t = uniform(-30, 30, x.size(), 12);
  std::vector<double> y2(x.size());
  for (size_t i = 0; i < x.size(); ++i) y2[i] = t[i] / std::log2(x[i]);
  expect_no_exceptions("pow (near 1)", pow_entry, x, y2);
}

TEST(SimdPow, NegativeBasesWithIntegerExponentsTakeTheParitysSign) {
  // Odd and even integer exponents over the whole range of results, small ones, and |y| beyond 2^53.
  const std::vector<double> x = concat({bit_patterns(-0x1p-1074, -max, kArguments / 2, 13),
                                        uniform(-10, 0, kArguments / 2, 14)});
  std::vector<double> y = exponents_spanning_the_range(x, 15);
  for (double& v : y) v = std::round(v);
  const std::vector<double> small = uniform(-40, 40, kArguments / 2, 16);
  for (size_t i = kArguments / 2; i < kArguments; ++i) y[i] = std::round(small[i - kArguments / 2]);
  // Bases within 2^-40 of -1 with exponents up to 2^60, so that |y| >= 2^53 (always even) is frequent.
  const std::vector<double> x2 = uniform(-1 - 0x1p-40, -1 + 0x1p-40, kArguments / 2, 17);
  std::vector<double> y2 = log_uniform(1, 0x1p60, kArguments / 2, 18, true);
  for (double& v : y2) v = std::round(v);
  const std::vector<double> all_x = concat({x, x2}), all_y = concat({y, y2});
  const std::vector<double> got = expect_deterministic("pow (negative base)", pow_entry, all_x, all_y);
  expect_accurate("pow (negative base)", all_x, all_y, got, reference, kBound);
  size_t odd = 0, even = 0, wrong_sign = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool is_odd = std::fmod(all_y[i], 2.0) != 0;  // fmod is exact
    (is_odd ? odd : even) += 1;
    wrong_sign += std::signbit(got[i]) != is_odd;
  }
  EXPECT_EQ(wrong_sign, 0u);
  EXPECT_GT(odd, kArguments / 4);
  EXPECT_GT(even, kArguments / 4);
  expect_no_exceptions("pow (negative base)", pow_entry, uniform(-10, -0.1, kArguments / 2, 19), small);
}

TEST(SimdPow, IntegerPowersAreExact) {
  // 2^k for every k with a nonzero result (subnormals included) and 0.5^k, 10^k and 3^k while exact,
  // (-2)^k, (-10)^k with their sign; then all integer powers of 2 and 10 within 1 ulp.
  std::vector<exact_case> cases;
  for (int k = -1074; k <= 1023; ++k) {
    cases.push_back({2.0, double(k), std::ldexp(1.0, k)});
    cases.push_back({0.5, double(-k), std::ldexp(1.0, k)});
    cases.push_back({-2.0, double(k), (k & 1) ? -std::ldexp(1.0, k) : std::ldexp(1.0, k)});
  }
  double p10 = 1, p3 = 1;
  for (int k = 0; k <= 22; ++k, p10 *= 10) {
    cases.push_back({10.0, double(k), p10});
    cases.push_back({-10.0, double(k), (k & 1) ? -p10 : p10});
  }
  for (int k = 0; k <= 33; ++k, p3 *= 3) cases.push_back({3.0, double(k), p3});
  // Every power of an integer base up to 1000 that is an integer below 2^53, with either sign.
  for (int64_t b = 2; b <= 1000; ++b)
    for (int64_t k = 1, p = b; p < (int64_t{1} << 53); ++k, p *= b) {
      cases.push_back({double(b), double(k), double(p)});
      cases.push_back({double(-b), double(k), (k & 1) ? -double(p) : double(p)});
    }
  expect_exact_cases("pow (exact powers)", pow_entry, cases);

  std::vector<double> x, y;
  for (int k = -340; k <= 340; ++k)
    for (const double b : {10.0, -10.0, 0.1, 3.0, 7.0, 1.5}) x.push_back(b), y.push_back(k);
  expect_pow("pow (integer powers)", x, y, kBound);
}

TEST(SimdPow, ExceptionalValues) {
  const double min_sub = 0x1p-1074, odd = 0x1.fffffffffffffp+52;  // 2^53 - 1, the largest odd integer
  expect_exact_cases(
      "pow", pow_entry,
      {// pow(x, +-0) = 1 for any x, even NaN.
       {0.0, 0.0, 1}, {-0.0, -0.0, 1}, {nan, 0.0, 1}, {nan, -0.0, 1}, {inf, 0.0, 1}, {-inf, -0.0, 1}, {-3.5, 0.0, 1},
       // pow(1, y) = 1 for any y, even NaN.
       {1.0, nan, 1}, {1.0, inf, 1}, {1.0, -inf, 1}, {1.0, max, 1}, {1.0, -0.5, 1},
       // pow(-1, +-inf) = 1.
       {-1.0, inf, 1}, {-1.0, -inf, 1},
       // pow(+-0, y < 0 odd integer) = +-inf; y < 0 not an odd integer or -inf: +inf.
       {0.0, -1.0, inf}, {-0.0, -1.0, -inf}, {-0.0, -3.0, -inf}, {-0.0, -odd, -inf}, {0.0, -odd, inf},
       {-0.0, -2.0, inf}, {-0.0, -0.5, inf}, {-0.0, -0x1p53, inf}, {-0.0, -max, inf}, {-0.0, -inf, inf},
       {0.0, -inf, inf}, {-0.0, -min_sub, inf},
       // pow(+-0, y > 0 odd integer) = +-0; y > 0 not an odd integer or +inf: +0.
       {0.0, 1.0, 0.0}, {-0.0, 1.0, -0.0}, {-0.0, 3.0, -0.0}, {-0.0, odd, -0.0}, {-0.0, 2.0, 0.0},
       {-0.0, 0.5, 0.0}, {-0.0, 0x1p53, 0.0}, {-0.0, max, 0.0}, {-0.0, inf, 0.0}, {-0.0, min_sub, 0.0},
       // pow(x < 0 finite, y finite non-integer) = NaN.
       {-1.0, 0.5, nan}, {-2.0, -1.5, nan}, {-max, 0.5, nan}, {-min_sub, -0.5, nan}, {-1.0, min_sub, nan},
       // pow(x, -inf): +inf for |x| < 1, +0 for |x| > 1.
       {0.5, -inf, inf}, {-0.5, -inf, inf}, {min_sub, -inf, inf}, {1.5, -inf, 0.0}, {-1.5, -inf, 0.0},
       {max, -inf, 0.0}, {inf, -inf, 0.0}, {-inf, -inf, 0.0},
       // pow(x, +inf): +0 for |x| < 1, +inf for |x| > 1.
       {0.5, inf, 0.0}, {-0.5, inf, 0.0}, {0x1.fffffffffffffp-1, inf, 0.0}, {1.5, inf, inf}, {-1.5, inf, inf},
       {0x1.0000000000001p+0, inf, inf}, {inf, inf, inf}, {-inf, inf, inf},
       // pow(-inf, y): -0 for y < 0 odd, +0 for other y < 0, -inf for y > 0 odd, +inf for other y > 0.
       {-inf, -1.0, -0.0}, {-inf, -3.0, -0.0}, {-inf, -2.0, 0.0}, {-inf, -0.5, 0.0}, {-inf, -max, 0.0},
       {-inf, 1.0, -inf}, {-inf, odd, -inf}, {-inf, 2.0, inf}, {-inf, 0.5, inf}, {-inf, 0x1p53, inf},
       // pow(+inf, y): +0 for y < 0, +inf for y > 0.
       {inf, -1.0, 0.0}, {inf, -0.5, 0.0}, {inf, -min_sub, 0.0}, {inf, 1.0, inf}, {inf, min_sub, inf},
       // NaN otherwise propagates.
       {nan, 1.0, nan}, {nan, -1.0, nan}, {nan, inf, nan}, {2.0, nan, nan}, {-1.0, nan, nan}, {0.0, nan, nan},
       {inf, nan, nan}, {nan, nan, nan},
       // Negative bases with integer exponents: the sign by parity; |y| >= 2^53 is even.
       {-2.0, 3.0, -8.0}, {-2.0, 2.0, 4.0}, {-2.0, -1.0, -0.5}, {-0.5, -3.0, -8.0}, {-1.0, odd, -1.0},
       {-1.0, 0x1p53, 1.0}, {-1.0, max, 1.0}, {-1.0, -max, 1.0}, {-1.0, -odd, -1.0},
       // Overflow and underflow, with the sign of an odd power.
       {10.0, 309.0, inf}, {-10.0, 309.0, -inf}, {-10.0, 310.0, inf}, {2.0, 1024.0, inf}, {max, 2.0, inf},
       {10.0, -324.0, 0.0}, {-10.0, -325.0, -0.0}, {2.0, -1075.0, 0.0}, {-2.0, -1075.0, -0.0},
       {2.0, -1076.0, 0.0}, {min_sub, 2.0, 0.0}, {0x1.0000000000001p+0, 0x1p64, inf},
       {0x1.fffffffffffffp-1, 0x1p64, 0.0}, {0x1.0000000000001p+0, -max, 0.0}, {0x1.fffffffffffffp-1, max, 0.0},
       {1.5, max, inf}, {0.5, max, 0.0}, {1.5, -max, 0.0}, {0.5, -max, inf}, {-1.5, max, inf},
       {-0.5, -max, inf}, {max, max, inf}, {min_sub, max, 0.0}, {max, -max, 0.0}, {min_sub, -max, inf},
       // Edges of the range and of the subnormals, exact.
       {2.0, 1023.0, 0x1p1023}, {2.0, -1074.0, min_sub}, {0.5, 1074.0, min_sub}, {min_sub, 1.0, min_sub},
       {min_sub, -0.5, 0x1p537}, {min_sub, 0.5, 0x1p-537}, {max, 1.0, max}, {max, -1.0, 0x1p-1024},
       {4.0, 0.5, 2.0}, {0x1p-1022, -1.0, 0x1p1022}, {2.0, min_sub, 1.0}, {2.0, -min_sub, 1.0}});

  // Every pairing of special and edge values: exactly what C99 Annex F (glibc's pow) gives wherever the
  // result is 0, 1, infinite or NaN, or an exact power of 2.
  std::vector<exact_case> grid;
  const double xs[] = {0.0, 1.0, 0.5, 2.0, 1.5, inf, nan, 0x1p-1022, min_sub, max, 0x1.fffffffffffffp-1, 3.0};
  const double ys[] = {0.0, 1.0, 2.0, 3.0, 0.5, 1.5, inf, nan, 0x1p53, odd, 0x1p53 + 2, max, min_sub, 0x1p-1022, 1e10};
  for (const double x : xs)
    for (const double y : ys)
      for (const double sx : {1.0, -1.0})
        for (const double sy : {1.0, -1.0}) {
          const double a = sx * x, b = sy * y, want = std::pow(a, b);
          int e = 0;
          const bool power_of_2 = std::frexp(a, &e) == 0.5 || std::frexp(a, &e) == -0.5;
          if (want == 0 || std::fabs(want) == 1 || std::isinf(want) || std::isnan(want) ||
              (power_of_2 && std::frexp(want, &e) == 0.5 * (want < 0 ? -1 : 1)))
            grid.push_back({a, b, want});
        }
  EXPECT_GT(grid.size(), 500u);
  expect_exact_cases("pow (special grid)", pow_entry, grid);
  // Lanes with special arguments but a finite result (0, 1, a power of 2) raise no exception either.
  std::vector<double> quiet_x, quiet_y;
  for (const exact_case& c : grid)
    if (std::isfinite(c.want) && !std::isnan(c.x) && !std::isnan(c.y)) quiet_x.push_back(c.x), quiet_y.push_back(c.y);
  expect_no_exceptions("pow (special grid)", pow_entry, quiet_x, quiet_y);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
