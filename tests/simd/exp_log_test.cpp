// Tests of lockstep/core/vector_math/exp_inl.hpp and log_inl.hpp: the same bits at W = 1, 2, 4, 8 on every
// instruction set compiled in (scalar, SSSE3, SSE4, AVX2, AVX-512 where the CPU has them), no lane
// depending on its neighbours, within 1 ulp of the exact value over the whole range (subnormal results
// and arguments included), and C99 Annex F's exceptional values.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/exp_log_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/core/vector_math/exp_inl.hpp"
#include "lockstep/core/vector_math/log_inl.hpp"
#include "tests/simd/math_harness_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Exp, exp)
LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Log, log)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tests/simd/math_harness.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Exp);
HWY_EXPORT(Log);

namespace {

const entry_fn exp_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Exp);
const entry_fn log_entry = LOCKSTEP_SIMD_TEST_DISPATCH(Log);
constexpr double inf = HUGE_VAL;
const double nan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kArguments = 1 << 18;

TEST(SimdExp, WholeRangeIsDeterministicAndWithinOneUlp) {
  // The whole finite range (subnormal results below -708.4, overflow above 709.78), the range models
  // use, and the neighbourhood of 0 where e^x = 1 + x.
  const std::vector<double> x = concat({uniform(-746, 710, kArguments, 1), uniform(-50, 50, kArguments, 2),
                                        log_uniform(0x1p-60, 1, kArguments / 4, 3, true)});
  const std::vector<double> got = expect_deterministic("exp", exp_entry, x, {});
  expect_accurate("exp", x, {}, got, [](double a, double) { return std::exp(static_cast<long double>(a)); }, 1.0);
  expect_no_exceptions("exp", exp_entry, uniform(-700, 700, kArguments, 8), {});
}

TEST(SimdExp, ExceptionalValues) {
  const double max = 0x1.fffffffffffffp+1023;
  expect_exact_cases("exp", exp_entry,
                     {{0.0, 1, 1.0}, {-0.0, 1, 1.0}, {inf, 1, inf}, {-inf, 1, 0.0}, {nan, 1, nan},
                      {709.79, 1, inf}, {max, 1, inf}, {-745.2, 1, 0.0}, {-max, 1, 0.0}, {-745.1, 1, 0x1p-1074}});
}

TEST(SimdLog, WholeRangeIsDeterministicAndWithinOneUlp) {
  // Every positive finite bit pattern (subnormals included), the range near 1 where log x ~ x - 1, and
  // the range models use.
  const std::vector<double> x =
      concat({bit_patterns(0x1p-1074, 0x1.fffffffffffffp+1023, kArguments, 4), uniform(0.5, 2, kArguments, 5),
              uniform(1e-3, 1e3, kArguments, 6), bit_patterns(0x1p-1074, 0x1p-1022, kArguments / 8, 7)});
  const std::vector<double> got = expect_deterministic("log", log_entry, x, {});
  expect_accurate("log", x, {}, got, [](double a, double) { return std::log(static_cast<long double>(a)); }, 1.0);
  expect_no_exceptions("log", log_entry, x, {});
}

TEST(SimdLog, ExceptionalValues) {
  expect_exact_cases("log", log_entry,
                     {{1.0, 1, 0.0}, {0.0, 1, -inf}, {-0.0, 1, -inf}, {-1.0, 1, nan}, {-inf, 1, nan},
                      {inf, 1, inf}, {nan, 1, nan}, {2.0, 1, 0x1.62e42fefa39efp-1},
                      {0.5, 1, -0x1.62e42fefa39efp-1}});
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
