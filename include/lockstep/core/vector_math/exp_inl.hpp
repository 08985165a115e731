// lockstep/core/vector_math/exp_inl.hpp — e^x on packs of doubles, within 1 ulp, the same bits on every width
// and instruction set (rules: common_inl.hpp).
//
// The method is the one of Sun's fdlibm (e_exp.c, 1993), written without branches:
//   1. reduction  x = k ln2 + r, |r| <= ln2 / 2, with ln2 = ln2_hi + ln2_lo where ln2_hi has 32 trailing
//      zero bits, so k ln2_hi is exact for |k| < 2^20 and r = (x - k ln2_hi) - k ln2_lo loses nothing;
//   2. e^r = 1 + r + r c / (2 - c) with c = r - r^2 P(r^2), where P is the degree-5 minimax polynomial
//      of fdlibm (|error| < 2^-59 on the interval); the form keeps the large terms exact (Tang,
//      "Table-driven implementation of the exponential function", ACM TOMS 15, 1989, discusses the
//      rational form; Muller, Elementary Functions, 3rd ed., 2016, section 11.2);
//   3. e^x = 2^k e^r, scaled in two exact steps so that subnormal results round once.
// Special values (C99 Annex F.10.3.1): exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = +0; overflow to
// +inf above 709.782712893384, underflow to +0 below -745.1332191019411.
#if defined(LOCKSTEP_SIMD_MATH_EXP_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_EXP_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_EXP_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_EXP_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

template <class D>
HWY_INLINE vec<D> exp(D d, vec<D> x) {
  constexpr double overflow_threshold = 0x1.62e42fefa39efp+9;    // largest x with finite e^x
  constexpr double underflow_threshold = -0x1.74910d52d3051p+9;  // smallest x with e^x > 0 (rounded)
  constexpr double ln2_hi = 0x1.62e42feep-1;                     // 6.93147180369123816490e-01
  constexpr double ln2_lo = 0x1.a39ef35793c76p-33;               // 1.90821492927058770002e-10
  constexpr double inv_ln2 = 0x1.71547652b82fep+0;

  // Out-of-range and NaN lanes continue with a harmless argument; their results are replaced below.
  const mask<D> in_range =
      hn::And(hn::Le(x, hn::Set(d, overflow_threshold)), hn::Ge(x, hn::Set(d, underflow_threshold)));
  const vec<D> xr = hn::IfThenElseZero(in_range, x);

  const vec<D> k = hn::Round(hn::Mul(xr, hn::Set(d, inv_ln2)));
  const vec<D> hi = hn::Sub(xr, hn::Mul(k, hn::Set(d, ln2_hi)));  // exact
  const vec<D> lo = hn::Mul(k, hn::Set(d, ln2_lo));
  const vec<D> r = hn::Sub(hi, lo);

  const vec<D> t = hn::Mul(r, r);
  const vec<D> c = hn::Sub(r, hn::Mul(t, horner(d, t, 1.66666666666666019037e-01, -2.77777777770155933842e-03,
                                                6.61375632143793436117e-05, -1.65339022054652515390e-06,
                                                4.13813679705723846039e-08)));
  const vec<D> rc = hn::Div(hn::Mul(r, c), hn::Sub(hn::Set(d, 2.0), c));
  const vec<D> y = hn::Sub(hn::Set(d, 1.0), hn::Sub(hn::Sub(lo, rc), hi));
  const vec<D> result = scale_by_pow2(d, y, nearest_int(d, k));

  // Above the overflow threshold +inf (x = +inf included), below the underflow threshold +0, NaN stays.
  const vec<D> outside = hn::IfThenElse(hn::Gt(x, hn::Zero(d)), hn::Set(d, HUGE_VAL), hn::Zero(d));
  return hn::IfThenElse(in_range, result, hn::IfThenElse(is_nan(d, x), x, outside));
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
