// lockstep/core/math.hpp — elementary functions on plain doubles, callable on host and device.
//
// Models are written once for a generic scalar and call `sin(x)`, `sqrt(x)`, ... unqualified. Inside
// namespace lockstep those names resolve to the overloads here for double and, by argument-dependent
// lookup, to the dual-number overloads of dual.hpp and the pack overloads of lockstep/simd.
//
// On the host the transcendental ones are lockstep's own (core/elementary.hpp): one lane of the vector
// math the lanes use, so that a member computed alone has the bits it would have in any lane of any
// pack width, with any C library. On a CUDA device they are the C library's global functions, which
// CUDA provides as __device__ functions (so no host-only std:: overload, a source of nvcc diagnostic
// 20014, is reached from device code); the GPU is not bitwise the CPU (docs/DESIGN-NOTES.md,
// "Determinism"). The split is by __CUDA_ARCH__ inside one definition, so every translation unit, CUDA
// or not, holds the same inline function. sqrt, ldexp and floor are exact and stay the C library's.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "lockstep/core/elementary.hpp"
#include "lockstep/core/hd.hpp"

namespace lockstep {

// The function NAME of the C library on a CUDA device, lockstep's own on the host.
#ifdef __CUDA_ARCH__
#define LOCKSTEP_ELEMENTARY(NAME) ::NAME
#else
#define LOCKSTEP_ELEMENTARY(NAME) elementary::NAME
#endif

LOCKSTEP_HD double sqrt(double x) { return ::sqrt(x); }
LOCKSTEP_HD double sin(double x) { return LOCKSTEP_ELEMENTARY(sin)(x); }
LOCKSTEP_HD double cos(double x) { return LOCKSTEP_ELEMENTARY(cos)(x); }
LOCKSTEP_HD double tan(double x) { return LOCKSTEP_ELEMENTARY(tan)(x); }
LOCKSTEP_HD double asin(double x) { return LOCKSTEP_ELEMENTARY(asin)(x); }
LOCKSTEP_HD double acos(double x) { return LOCKSTEP_ELEMENTARY(acos)(x); }
LOCKSTEP_HD double atan(double x) { return LOCKSTEP_ELEMENTARY(atan)(x); }
LOCKSTEP_HD double exp(double x) { return LOCKSTEP_ELEMENTARY(exp)(x); }
LOCKSTEP_HD double log(double x) { return LOCKSTEP_ELEMENTARY(log)(x); }
LOCKSTEP_HD double pow(double x, double y) { return LOCKSTEP_ELEMENTARY(pow)(x, y); }
LOCKSTEP_HD double ldexp(double x, int e) { return ::ldexp(x, e); }
LOCKSTEP_HD double floor(double x) { return ::floor(x); }
LOCKSTEP_HD double atan2(double y, double x) { return LOCKSTEP_ELEMENTARY(atan2)(y, x); }
LOCKSTEP_HD double abs(double x) { return x < 0.0 ? -x : x; }
LOCKSTEP_HD double min(double a, double b) { return b < a ? b : a; }
LOCKSTEP_HD double max(double a, double b) { return a < b ? b : a; }

// True for every value that is neither infinite nor NaN. Written arithmetically (x - x is NaN exactly
// for inf and NaN) because std::isfinite is a host function; valid since we never build with
// -ffinite-math-only.
LOCKSTEP_HD bool is_finite(double x) { return x - x == 0.0; }

// Whether x is +0.0, not -0.0 (x == 0.0 holds for both): its bits are all zero.
LOCKSTEP_HD bool is_positive_zero(double x) {
#ifdef __CUDA_ARCH__
  return __double_as_longlong(x) == 0;
#else
  return std::bit_cast<std::uint64_t>(x) == 0;
#endif
}

// sin x and cos x of one argument, for models that need both. A dual-number argument (dual.hpp) then
// evaluates each once and takes the derivative parts from them (sin' = cos, cos' = -sin), where
// sin(x) and cos(x) called separately would each evaluate both: on Andrews' squeezer the trigonometric
// calls were a tenth of BDF's time (docs/PERFORMANCE.md). The values are bitwise those of sin(x) and
// cos(x): on the host one argument reduction gives both (elementary::sin_cos), on a device the two
// calls. Any other scalar type with sin and cos gets the generic form.
template <class T>
struct sine_cosine {
  T sine, cosine;
};
LOCKSTEP_HD sine_cosine<double> sin_cos(double x) {
#ifdef __CUDA_ARCH__
  return {::sin(x), ::cos(x)};
#else
  sine_cosine<double> both;
  elementary::sin_cos(x, &both.sine, &both.cosine);
  return both;
#endif
}
template <class T>
LOCKSTEP_HD sine_cosine<T> sin_cos(const T& x) {
  return {sin(x), cos(x)};
}

// The value of a plain scalar is the scalar itself; dual.hpp overloads this to strip derivative parts.
LOCKSTEP_HD double value_of(double x) { return x; }

#undef LOCKSTEP_ELEMENTARY

}  // namespace lockstep
