// Tests of lockstep/core/vector_math/sin_cos_inl.hpp, tan_inl.hpp and pi_over_2_reduction.hpp: the same bits
// at W = 1, 2, 4, 8 on every instruction set compiled in (scalar, SSSE3, SSE4, AVX2, AVX-512 where the
// CPU has them), no lane depending on its neighbours, within 1 ulp of the exact value over the whole
// double range (arguments up to 1.8e308 and next to multiples of pi/2 included), and C99 Annex F's
// exceptional values.
//
// The reference is glibc's long double sinl, cosl and tanl, which reduce huge arguments exactly
// (x87 extended precision, 64-bit significand; checked against mpmath at 2000-4000 bits on samples of
// the huge, near-multiple and hard arguments below: their error stays below 2^-9 ulp of a double). The
// exact values below were computed with mpmath at 4000 bits and rounded to the nearest double.
//
// Measured (x86-64, every variant equal): at most 0.84 ulp for sin and cos and 0.86 ulp for tan in every
// argument set below, also with 2^21 arguments per set instead of 2^18; the bounds are 1 ulp. A few
// results are not the nearest double (cos 2^1023, tan 1e22: 0.5 to 0.85 ulp away), so the exact cases
// hold only values that are.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/trig_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/sin_cos_inl.hpp"
#include "lockstep/core/vector_math/tan_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace sm = lockstep::simd::HWY_NAMESPACE;
// sin_cos must agree with sin and cos: x holds the arguments, y selects the half (0: sine, 1: cosine).
struct sin_cos_functor {
  template <class D, class V>
  V operator()(D d, V x, V y) const {
    const auto both = sm::sin_cos(d, x);
    return hwy::HWY_NAMESPACE::IfThenElse(hwy::HWY_NAMESPACE::Eq(y, hwy::HWY_NAMESPACE::Zero(d)), both.sin, both.cos);
  }
};
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Sin, sin)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Cos, cos)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Tan, tan)
LOCKSTEP_SIMD_TEST_ENTRY(SinCos, sin_cos_functor)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <numbers>

#include "lockstep/core/vector_math/pi_over_2_reduction.hpp"
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Sin);
HWY_EXPORT(Cos);
HWY_EXPORT(Tan);
HWY_EXPORT(SinCos);

namespace {

const entry_fn sin_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Sin);
const entry_fn cos_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Cos);
const entry_fn tan_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Tan);
const entry_fn sin_cos_entry = LOCKSTEP_SIMD_TEST_DISPATCH(SinCos);
constexpr double inf = HUGE_VAL;
const double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double max = 0x1.fffffffffffffp+1023;
constexpr size_t kArguments = 1 << 18;
// The double closest to a multiple of pi/2 (Kahan and McDonald; Muller, Elementary Functions, 3rd ed.,
// 2016, section 11.3): x = 6381956970095103 2^797 = 1.7 ... 2^849 lies 4.687e-19 above an odd multiple
// of pi/2, so its cosine is -4.68716592425462761e-19 and its sine rounds to 1.
const double worst_case = std::ldexp(6381956970095103.0, 797);

// Doubles within 4 ulp of k pi/2 for integers k spread evenly over the binades of [1, 2^1020], both
// signs: k pi/2 is formed in long double (relative error below 2^-63), so x is within 4.5 ulp of the
// exact multiple and its reduced argument loses up to about 60 leading bits.
std::vector<double> near_multiples_of_pi_over_2(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> exponent(0, 1020);
  std::vector<double> v(n);
  for (double& x : v) {
    const long double k = std::rint(std::exp2(static_cast<long double>(exponent(g))));
    x = static_cast<double>(k * (std::numbers::pi_v<long double> / 2));
    for (int steps = static_cast<int>(g() % 9) - 4; steps != 0; steps += steps > 0 ? -1 : 1)
      x = std::nextafter(x, steps > 0 ? inf : 0.0);
    if (g() & 1) x = -x;
  }
  return v;
}

// Doubles next to a multiple of pi/2 in every 16th binade from 2^0 to 2^1023: x = m 2^e with m = c q,
// q the largest continued-fraction denominator of 2^e 2/pi (mod 1) below 2^53 that a small c brings
// into [2^52, 2^53); x 2/pi lies within 1.2e-15 of an integer (2.6e-18 at best), so the reduction
// cancels 49 to 58 leading bits.
// Generated with mpmath at 4000 bits; the reference sinl, cosl and tanl are checked there as above.
const std::vector<double> hard_cases = {
    0x1.921fb54442d18p+0, 0x1.67e57cdd4dc54p+16, 0x1.5c9508c58aafap+32, 0x1.7512069b7430dp+48,
    0x1.a7f3bc5a7ed9ep+64, 0x1.99caa5236feeap+80, 0x1.c3dc1a597f202p+96, 0x1.0a68eca9141aap+112,
    0x1.12155b2d3a126p+128, 0x1.5ad5a62cb1cc9p+144, 0x1.17e1e60c52f2ep+160, 0x1.d28d5c4c5e73bp+176,
    0x1.84a40a64ab4cap+192, 0x1.b6ae968f21762p+208, 0x1.33322fd48b212p+224, 0x1.5af9bf37155efp+240,
    0x1.b2196364d750bp+256, 0x1.16e59932ab3bcp+272, 0x1.3e51cbf3b4ecap+288, 0x1.1a73ee3fd4ba9p+304,
    0x1.870a967710516p+320, 0x1.3671f965e06e3p+336, 0x1.325723c7dde0bp+352, 0x1.51098ddc858fep+368,
    0x1.715b33a0d143ep+384, 0x1.82f9a53010eefp+400, 0x1.11bb9a5a2006dp+416, 0x1.372ec0e7828ecp+432,
    0x1.2e28b9339bd65p+448, 0x1.f7af940f11670p+464, 0x1.fe85261f02860p+480, 0x1.7833fa59d0dfdp+496,
    0x1.776ae889d49fcp+512, 0x1.2aa88328eba84p+528, 0x1.3b4801fd74c7ep+544, 0x1.6bf5d7abaf7c8p+560,
    0x1.29fd89961d61ep+576, 0x1.518acd4fe45e6p+592, 0x1.5157705a306a2p+608, 0x1.163d65b8ff666p+624,
    0x1.668db30162b3dp+640, 0x1.145cd42d21510p+656, 0x1.97e359bb79bb4p+672, 0x1.3ecb76de9e4bep+688,
    0x1.f0c9d98414062p+704, 0x1.87172196d5822p+720, 0x1.21143c12c9dfbp+736, 0x1.1b21e01142fb4p+752,
    0x1.afeb41302d02ap+768, 0x1.4e0debbe0b022p+784, 0x1.52f4fe34c0e00p+800, 0x1.5a9417258933ap+816,
    0x1.6fb0d0ab996fap+832, 0x1.359a70fac764ep+848, 0x1.cfe482285f8edp+864, 0x1.2e8123c7c9834p+880,
    0x1.58588f8cda276p+896, 0x1.0332fe835389ap+912, 0x1.fce36f3ebfe43p+928, 0x1.4117573397d42p+944,
    0x1.ea17c46d23a3cp+960, 0x1.408e81423ea13p+976, 0x1.e009c53148be1p+992, 0x1.36bf9a50c0440p+1008,
    0x1.61a3db8c8d129p+1023};

// Every argument set of the accuracy tests, with its name.
std::vector<argument_set> argument_sets() {
  return {
      {"[-100, 100]", uniform(-100, 100, kArguments, 1)},
      {"[-pi/4, pi/4]", uniform(-0.7853981633974483, 0.7853981633974483, kArguments, 2)},
      {"|x| in [2^-30, 2^21 pi/2]", log_uniform(0x1p-30, 0x1.921fb54442d18p+21, kArguments, 3, true)},
      {"|x| in [1.6e6, 1.7e6] (both reductions)", concat({uniform(1.6e6, 1.7e6, kArguments / 2, 4),
                                                          uniform(-1.7e6, -1.6e6, kArguments / 2, 5)})},
      {"|x| in [2^21, 1.8e308]", log_uniform(0x1p21, max, kArguments, 6, true)},
      {"within 4 ulp of k pi/2", near_multiples_of_pi_over_2(kArguments, 7)},
      {"famous cases", {worst_case, -worst_case, 1e22, max, -max, 0x1p1023, 0x1.921fb54442d18p+20,
                        0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1, 0x1.921fb54442d18p-1, 1e6, 1e15}},
      {"hard cases next to k pi/2", hard_cases},
  };
}

TEST(SimdSin, WholeRangeIsDeterministicAndWithinOneUlp) {
  expect_accurate_by_set(
      "sin", sin_entry, argument_sets(), [](double a, double) { return sinl(static_cast<long double>(a)); }, 1.0);
}

TEST(SimdCos, WholeRangeIsDeterministicAndWithinOneUlp) {
  expect_accurate_by_set(
      "cos", cos_entry, argument_sets(), [](double a, double) { return cosl(static_cast<long double>(a)); }, 1.0);
}

TEST(SimdTan, WholeRangeIsDeterministicAndWithinOneUlp) {
  expect_accurate_by_set(
      "tan", tan_entry, argument_sets(), [](double a, double) { return tanl(static_cast<long double>(a)); }, 1.0);
}

TEST(SimdSinCos, AgreesWithSinAndCos) {
  std::vector<double> x =
      concat({uniform(-100, 100, kArguments / 4, 8), log_uniform(0x1p-30, max, kArguments / 4, 9, true),
              near_multiples_of_pi_over_2(kArguments / 4, 10), hard_cases, {0.0, -0.0, inf, -inf, nan}});
  const size_t n = x.size();
  std::vector<double> y(n, 0.0);
  x.insert(x.end(), x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
  y.resize(2 * n, 1.0);
  const std::vector<double> got = expect_deterministic("sin_cos", sin_cos_entry, x, y);
  const std::vector<double> first_half(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<double> sin_x = expect_deterministic("sin (for sin_cos)", sin_entry, first_half, {});
  const std::vector<double> cos_x = expect_deterministic("cos (for sin_cos)", cos_entry, first_half, {});
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += !same_bits(got[i], sin_x[i]) + !same_bits(got[n + i], cos_x[i]);
  EXPECT_EQ(differ, 0u);
}

TEST(SimdSin, ExceptionalValues) {
  expect_exact_cases("sin", sin_entry,
                     {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {inf, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {0x1p-1074, 1, 0x1p-1074}, {-0x1p-1022, 1, -0x1p-1022},
                      {-0x1.fffffffffffffp-28, 1, -0x1.fffffffffffffp-28},
                      {worst_case, 1, 1.0}, {-worst_case, 1, -1.0}, {1e22, 1, -0x1.b453ab76bf397p-1},
                      {max, 1, 0x1.452fc98b34e97p-8}, {-max, 1, -0x1.452fc98b34e97p-8},
                      {0x1p1023, 1, 0x1.205248cbdb760p-1}, {0x1.921fb54442d18p+20, 1, -0x1.1a62633145c07p-34},
                      {0x1.921fb54442d18p+1, 1, 0x1.1a62633145c07p-53}, {0x1.921fb54442d18p+0, 1, 1.0}});
}

TEST(SimdCos, ExceptionalValues) {
  expect_exact_cases("cos", cos_entry,
                     {{0.0, 1, 1.0}, {-0.0, 1, 1.0}, {inf, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {0x1p-1074, 1, 1.0},
                      {worst_case, 1, -0x1.14ae72e6ba22fp-61}, {-worst_case, 1, -0x1.14ae72e6ba22fp-61},
                      {1e22, 1, 0x1.0be2cef01c8f4p-1}, {max, 1, -0x1.fffe62ecfab75p-1},
                      {-max, 1, -0x1.fffe62ecfab75p-1},
                      {0x1.921fb54442d18p+20, 1, 1.0},
                      {0x1.921fb54442d18p+0, 1, 0x1.1a62633145c07p-54}, {0x1.921fb54442d18p+1, 1, -1.0}});
}

TEST(SimdTan, ExceptionalValues) {
  expect_exact_cases("tan", tan_entry,
                     {{0.0, 1, 0.0}, {-0.0, 1, -0.0}, {inf, 1, nan}, {-inf, 1, nan}, {nan, 1, nan},
                      {0x1p-1074, 1, 0x1p-1074}, {-0x1p-1022, 1, -0x1p-1022},
                      {worst_case, 1, -0x1.d9ba9a7975636p+60}, {-worst_case, 1, 0x1.d9ba9a7975636p+60},
                      {max, 1, -0x1.4530cfe729484p-8}, {-max, 1, 0x1.4530cfe729484p-8},
                      {0x1p1023, 1, -0x1.5ce6b4c0d02a3p-1}, {0x1.921fb54442d18p+20, 1, -0x1.1a62633145c07p-34},
                      {0x1.921fb54442d18p+0, 1, 0x1.d02967c31cdb5p+53},
                      {0x1.921fb54442d18p+1, 1, -0x1.1a62633145c07p-53}});
}

// The scalar Payne-Hanek reduction on its own. Its table's first word against the C++ library's long
// double 1/pi (correctly rounded to 64 bits, so 2/pi 2^64 rounded is within 1 of the truncated word).
TEST(PiOver2Reduction, TableStartsWithTheBitsOfTwoOverPi) {
  const long double scaled = std::ldexp(2 * std::numbers::inv_pi_v<long double>, 64);  // exact: an integer
  const uint64_t rounded = static_cast<uint64_t>(scaled);
  const uint64_t word = simd::pi_over_2_detail::two_over_pi_bits[1];
  EXPECT_EQ(simd::pi_over_2_detail::two_over_pi_bits[0], 0u);
  EXPECT_TRUE(rounded == word || rounded == word + 1) << std::hex << rounded << " against " << word;
}

// Exact reductions from mpmath (4000 bits): x = (4 j + q) pi/2 + r, r rounded to a double hi and the
// rest rounded to lo. hi must be exact and hi + lo within 2^-70 |hi| of r (r keeps 70 bits or more,
// by the argument of pi_over_2_reduction.hpp).
TEST(PiOver2Reduction, MatchesMpmath) {
  struct reference {
    double x;
    int quadrant;
    double hi, lo;
  };
  const reference cases[] = {
      {worst_case, 1, 0x1.14ae72e6ba22fp-61, -0x1.73eef1477d90ep-118},
      {-worst_case, 3, -0x1.14ae72e6ba22fp-61, 0x1.73eef1477d90ep-118},
      {1e22, 3, 0x1.19eab99633cd8p-1, -0x1.269e0fc062c98p-57},
      {max, 2, -0x1.453020ff06b39p-8, -0x1.afad1027849e8p-62},
      {-max, 2, 0x1.453020ff06b39p-8, 0x1.afad1027849e8p-62},
      {0x1p1023, 2, -0x1.3242cd2724ccep-1, 0x1.02166f75542a7p-59},
      {0x1.921fb54442d18p+20, 0, -0x1.1a62633145c07p-34, 0x1.f1976b7ed8fbcp-90},
      {1e6, 0, -0x1.6e254d0f6b398p-2, -0x1.d69e1a79085e8p-56},
      {0x1.921fb54442d18p+0, 1, -0x1.1a62633145c07p-54, 0x1.f1976b7ed8fbcp-110},
      {0x1.921fb54442d18p+1, 2, -0x1.1a62633145c07p-53, 0x1.f1976b7ed8fbcp-109},
      {0x1p-10, 0, 0x1p-10, 0.0},
  };
  for (const reference& c : cases) {
    const simd::pi_over_2_reduced r = simd::reduce_pi_over_2(c.x);
    EXPECT_EQ(r.quadrant, c.quadrant) << std::hexfloat << c.x;
    EXPECT_EQ(r.hi, c.hi) << std::hexfloat << c.x;
    EXPECT_LE(std::fabs(r.lo - c.lo), std::ldexp(std::fabs(c.hi), -70)) << std::hexfloat << c.x << ": lo " << r.lo;
  }
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
