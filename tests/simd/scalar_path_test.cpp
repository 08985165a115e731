// The scalar path is the lanes' code at one lane: lockstep's elementary functions on doubles
// (lockstep/core/math.hpp, what the models and the solvers call on the host, routed to
// lockstep/core/elementary.hpp) give the bits of every lane of lockstep/core/vector_math at every pack width on
// every instruction set this CPU runs. This is what lets a member computed alone and the same member in
// any SIMD lane agree bit for bit (docs/SIMD.md). A double path on the C library fails here: glibc's
// sin, exp, log, pow, ... differ from these in the last bit for a share of arguments.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/scalar_path_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/math_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Sin, sin)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Cos, cos)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Tan, tan)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Asin, asin)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Acos, acos)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Atan, atan)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Exp, exp)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Log, log)
LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(Atan2, atan2)  // (y, x), the ordinate first, as atan2 takes them
LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(Pow, pow)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>
#include <functional>

#include "lockstep/core/math.hpp"
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Sin);
HWY_EXPORT(Cos);
HWY_EXPORT(Tan);
HWY_EXPORT(Asin);
HWY_EXPORT(Acos);
HWY_EXPORT(Atan);
HWY_EXPORT(Exp);
HWY_EXPORT(Log);
HWY_EXPORT(Atan2);
HWY_EXPORT(Pow);

namespace {

// Arguments over the whole range of doubles (bit patterns, both signs), the everyday range, and the
// special values.
std::vector<double> wide_arguments(uint64_t seed) {
  const double inf = HUGE_VAL, nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> special = {0.0, -0.0, inf, -inf, nan, 0x1p-1074, -0x1p-1074, 1.0, -1.0, 0.5, -0.5, 2.0,
                                 // x 2/pi rounds to 0.5 - 2^-54, next to the boundary where the
                                 // reduction's k = round(x 2/pi) turns from 0 to 1
                                 0x1.921fb54442d17p-1, -0x1.921fb54442d17p-1};
  std::vector<double> negative = bit_patterns(0x1p-1074, 0x1.fffffffffffffp+1023, 1 << 12, seed);
  for (double& x : negative) x = -x;
  return concat({bit_patterns(0x1p-1074, 0x1.fffffffffffffp+1023, 1 << 12, seed + 1), negative,
                 uniform(-10.0, 10.0, 1 << 12, seed + 2), uniform(-1.0, 1.0, 1 << 12, seed + 3), special});
}

// Every variant's results for x (and y) against the double path's, bit for bit (every NaN equals every
// NaN).
void expect_scalar_path_is_every_lane(const char* function, const entry_fn& entry, const std::vector<double>& x,
                                      const std::vector<double>& y, const std::function<double(size_t)>& scalar) {
  const std::vector<variant_result> variants = run_every_variant(entry, x, y);
  ASSERT_GE(variants.size(), 2u) << "fewer than two variants compiled and supported";
  for (const variant_result& v : variants) {
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_bits(v.out[i], scalar(i)) && differ++ == 0) first = i;
    EXPECT_EQ(differ, 0u) << function << ": the double path differs from " << v.name << " in " << differ << " of "
                          << x.size() << " results; first at x = " << std::hexfloat << x[first] << ": "
                          << scalar(first) << " against " << v.out[first];
  }
  std::printf("[ scalar path ] %s: %zu arguments, the double path equals all %zu variants\n", function, x.size(),
              variants.size());
}

TEST(ScalarPath, EveryElementaryFunctionOnDoublesIsEveryLaneOfTheVectorMath) {
  const std::vector<double> x = wide_arguments(1);
  using one = double (*)(double);
  const struct {
    const char* name;
    entry_fn entry;
    one scalar;
  } functions[] = {
      {"sin", LOCKSTEP_SIMD_TEST_DISPATCH(Sin), static_cast<one>(lockstep::sin)},
      {"cos", LOCKSTEP_SIMD_TEST_DISPATCH(Cos), static_cast<one>(lockstep::cos)},
      {"tan", LOCKSTEP_SIMD_TEST_DISPATCH(Tan), static_cast<one>(lockstep::tan)},
      {"asin", LOCKSTEP_SIMD_TEST_DISPATCH(Asin), static_cast<one>(lockstep::asin)},
      {"acos", LOCKSTEP_SIMD_TEST_DISPATCH(Acos), static_cast<one>(lockstep::acos)},
      {"atan", LOCKSTEP_SIMD_TEST_DISPATCH(Atan), static_cast<one>(lockstep::atan)},
      {"exp", LOCKSTEP_SIMD_TEST_DISPATCH(Exp), static_cast<one>(lockstep::exp)},
      {"log", LOCKSTEP_SIMD_TEST_DISPATCH(Log), static_cast<one>(lockstep::log)},
  };
  for (const auto& f : functions)
    expect_scalar_path_is_every_lane(f.name, f.entry, x, {}, [&](size_t i) { return f.scalar(x[i]); });

  // Two arguments: every pairing of a shuffled copy with the originals.
  std::vector<double> y = wide_arguments(7);
  std::shuffle(y.begin(), y.end(), std::mt19937_64(20261126));
  expect_scalar_path_is_every_lane("atan2", LOCKSTEP_SIMD_TEST_DISPATCH(Atan2), x, y,
                                   [&](size_t i) { return lockstep::atan2(x[i], y[i]); });
  // pow on everyday bases and exponents too, where overflow and underflow do not decide every result.
  const std::vector<double> base = concat({x, uniform(0.0, 4.0, 1 << 12, 5)});
  const std::vector<double> exponent = concat({y, uniform(-30.0, 30.0, 1 << 12, 6)});
  expect_scalar_path_is_every_lane("pow", LOCKSTEP_SIMD_TEST_DISPATCH(Pow), base, exponent,
                                   [&](size_t i) { return lockstep::pow(base[i], exponent[i]); });
}

TEST(ScalarPath, SinCosOnDoublesIsSinAndCos) {
  const std::vector<double> x = wide_arguments(3);
  size_t differ = 0;
  for (const double v : x) {
    const sine_cosine<double> both = lockstep::sin_cos(v);
    differ += !same_bits(both.sine, lockstep::sin(v)) + !same_bits(both.cosine, lockstep::cos(v));
  }
  EXPECT_EQ(differ, 0u);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
