// lockstep/core/elementary_definitions.hpp — the definitions of lockstep/core/elementary.hpp's
// functions: one lane of lockstep/simd/math on the translation unit's static Highway target. Include it
// in exactly one translation unit of an engine library (a program that links lockstep's library has
// them from there: host/core/elementary.cpp), compiled without instruction-set flags (Highway's static
// target is then SCALAR on x86-64, and every target tests/simd checks gives the same bits at every
// width anyway). It needs Highway's headers.
#pragma once

#include "hwy/highway.h"
#include "lockstep/core/elementary.hpp"
#include "lockstep/simd/math/math_inl.hpp"

namespace lockstep::elementary {
namespace one_lane {

namespace hn = hwy::HWY_NAMESPACE;
namespace vm = lockstep::simd::HWY_NAMESPACE;
using tag = hn::CappedTag<double, 1>;

inline hn::Vec<tag> in(double x) { return hn::Set(tag(), x); }
inline double out(hn::Vec<tag> v) { return hn::GetLane(v); }

}  // namespace one_lane

double sin(double x) { return one_lane::out(one_lane::vm::sin(one_lane::tag(), one_lane::in(x))); }
double cos(double x) { return one_lane::out(one_lane::vm::cos(one_lane::tag(), one_lane::in(x))); }
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
