// lockstep/core/elementary_definitions.hpp — the definitions of lockstep/core/elementary.hpp's
// functions: one lane of lockstep/core/vector_math on the translation unit's static Highway target. Include it
// in exactly one translation unit of an engine library (a program that links lockstep's library has
// them from there: host/core/elementary.cpp), compiled with the build's flags: Highway's static target
// is SCALAR on x86-64 without instruction-set flags and follows LOCKSTEP_INSTRUCTION_SET's otherwise,
// and every target tests/simd checks gives the same bits at every width. It needs Highway's headers.
#pragma once

#include <limits>

#include "hwy/highway.h"
#include "lockstep/core/elementary.hpp"
#include "lockstep/core/vector_math/math_inl.hpp"

namespace lockstep::elementary {
namespace one_lane {

namespace hn = hwy::HWY_NAMESPACE;
namespace vm = lockstep::simd::HWY_NAMESPACE;
using tag = hn::CappedTag<double, 1>;

inline hn::Vec<tag> in(double x) { return hn::Set(tag(), x); }
inline double out(hn::Vec<tag> v) { return hn::GetLane(v); }

}  // namespace one_lane

// sin and cos alone branch where the lanes select (lockstep/core/vector_math/sin_cos_inl.hpp, sin_cos): the
// special arguments first, then the reduction and only the kernel the quadrant asks for, where the
// lanes run both kernels and choose. The operations on the path taken are the lanes' own, so the bits
// are those of every lane (tests/simd/scalar_path_test.cpp compares them with all of them), in 0.83 of
// the branch-free lane's time: the reduction, which both do, is most of it (docs/SIMD.md, "The scalar
// path on the lanes' functions").
namespace one_lane {
// sin (cosine = false) or cos of x.
inline double sine_or_cosine(double x, bool cosine) {
  const tag d;
  const double ax = x < 0.0 ? -x : x;
  if (!(ax <= 0x1.fffffffffffffp+1023)) return x != x ? x : std::numeric_limits<double>::quiet_NaN();
  if (ax < vm::tiny_argument) return cosine ? 1.0 : x;
  const vm::reduced_argument<tag> r = vm::reduce_pi_over_2(d, in(x));
  const auto quadrant = hn::GetLane(r.quadrant);
  // sin: quadrant 0 sin r, 1 cos r, 2 -sin r, 3 -cos r; cos: 0 cos r, 1 -sin r, 2 -cos r, 3 sin r.
  const bool odd = (quadrant & 1) != 0;
  const double value = odd != cosine ? out(vm::cos_kernel(d, r.hi, r.lo)) : out(vm::sin_kernel(d, r.hi, r.lo));
  const bool negative = cosine ? (quadrant == 1 || quadrant == 2) : (quadrant & 2) != 0;
  return negative ? -value : value;
}
}  // namespace one_lane

double sin(double x) { return one_lane::sine_or_cosine(x, false); }
double cos(double x) { return one_lane::sine_or_cosine(x, true); }
void sin_cos(double x, double* sine, double* cosine) {
  const auto both = one_lane::vm::sin_cos(one_lane::tag(), one_lane::in(x));
  *sine = one_lane::out(both.sin);
  *cosine = one_lane::out(both.cos);
}
double tan(double x) { return one_lane::out(one_lane::vm::tan(one_lane::tag(), one_lane::in(x))); }
double asin(double x) { return one_lane::out(one_lane::vm::asin(one_lane::tag(), one_lane::in(x))); }
double acos(double x) { return one_lane::out(one_lane::vm::acos(one_lane::tag(), one_lane::in(x))); }
double atan(double x) { return one_lane::out(one_lane::vm::atan(one_lane::tag(), one_lane::in(x))); }
double atan2(double y, double x) {
  return one_lane::out(one_lane::vm::atan2(one_lane::tag(), one_lane::in(y), one_lane::in(x)));
}
double exp(double x) { return one_lane::out(one_lane::vm::exp(one_lane::tag(), one_lane::in(x))); }
double log(double x) { return one_lane::out(one_lane::vm::log(one_lane::tag(), one_lane::in(x))); }
double pow(double x, double y) {
  return one_lane::out(one_lane::vm::pow(one_lane::tag(), one_lane::in(x), one_lane::in(y)));
}

}  // namespace lockstep::elementary
