// bench/simd/math_functions_inl.hpp — the functions bench/simd/math_speed.cpp times: their names,
// glibc counterparts and argument ranges (target-independent, once), and evaluate(function, d, x, y)
// dispatching to lockstep/core/vector_math (per target).
#ifndef LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_TABLE_
#define LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_TABLE_
#include <cmath>

namespace lockstep::simd_bench {
struct function_info {
  const char* name;
  double (*libm)(double, double);
  double x_lo, x_hi, y_lo, y_hi;  // argument ranges of the kind models use
};
enum function_id { exp_id, log_id, sin_id, cos_id, tan_id, atan_id, atan2_id, asin_id, acos_id, pow_id, sqrt_id,
                   function_count };
inline const function_info functions[function_count] = {
    {"exp", [](double x, double) { return std::exp(x); }, -50, 50, 0, 0},
    {"log", [](double x, double) { return std::log(x); }, 1e-3, 1e3, 0, 0},
    {"sin", [](double x, double) { return std::sin(x); }, -100, 100, 0, 0},
    {"cos", [](double x, double) { return std::cos(x); }, -100, 100, 0, 0},
    {"tan", [](double x, double) { return std::tan(x); }, -1.5, 1.5, 0, 0},
    {"atan", [](double x, double) { return std::atan(x); }, -10, 10, 0, 0},
    {"atan2", [](double y, double x) { return std::atan2(y, x); }, -10, 10, -10, 10},
    {"asin", [](double x, double) { return std::asin(x); }, -1, 1, 0, 0},
    {"acos", [](double x, double) { return std::acos(x); }, -1, 1, 0, 0},
    {"pow", [](double x, double y) { return std::pow(x, y); }, 0.01, 10, -10, 10},
    {"sqrt", [](double x, double) { return std::sqrt(x); }, 0, 100, 0, 0},
};
}  // namespace lockstep::simd_bench
#endif

#if defined(LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_INL_HPP_
#undef LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_INL_HPP_
#else
#define LOCKSTEP_BENCH_SIMD_MATH_FUNCTIONS_INL_HPP_
#endif

#include "hwy/highway.h"
#include "lockstep/core/vector_math/math_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_bench::HWY_NAMESPACE {
namespace sm = lockstep::simd::HWY_NAMESPACE;
template <class D, class V>
HWY_INLINE V evaluate(int function, D d, V x, V y) {
  switch (function) {
    case exp_id: return sm::exp(d, x);
    case log_id: return sm::log(d, x);
    case sin_id: return sm::sin(d, x);
    case cos_id: return sm::cos(d, x);
    case tan_id: return sm::tan(d, x);
    case atan_id: return sm::atan(d, x);
    case atan2_id: return sm::atan2(d, x, y);
    case asin_id: return sm::asin(d, x);
    case acos_id: return sm::acos(d, x);
    case pow_id: return sm::pow(d, x, y);
    case sqrt_id: return sm::sqrt(d, x);
    default: return x;
  }
}
}  // namespace lockstep::simd_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
