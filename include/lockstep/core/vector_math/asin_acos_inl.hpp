// lockstep/core/vector_math/asin_acos_inl.hpp — the arc sine asin(x) and the arc cosine acos(x) on packs of
// doubles, within 1 ulp, the same bits on every width and instruction set (rules: common_inl.hpp).
//
// The methods are those of Sun's fdlibm (e_asin.c and e_acos.c, 1993), written without branches. Both
// rest on asin u = u + u^3 R(u^2), R(t) = P(t) / Q(t) the rational minimax approximation of fdlibm
// (pS0..pS5, qS1..qS4 of e_asin.c; P of degree 6 with P(0) = 0, Q of degree 4), and on one argument t
// per lane, so that a single R(t) serves every range:
//   |x| < 1/2:  t = x^2;            asin x = x + x R(t),  acos x = pi/2 - (x - (pi/2_lo - x R(t)));
//   |x| >= 1/2: t = (1 - |x|) / 2, s = sqrt(t), and by asin |x| = pi/2 - 2 asin s:
//     asin, |x| >= 0.975: pi/2_hi - (2 (s + s R(t)) - pi/2_lo);
//     asin, |x| < 0.975:  pi/4_hi - ((2 s R(t) - (pi/2_lo - 2 c)) - (pi/4_hi - 2 w)), where w is s with
//                         its low 32 significand bits cleared (so w^2 is exact) and c = (t - w^2) / (s + w)
//                         the rest, s = w + c to about twice the precision of s alone;
//     acos, x <= -1/2:    pi - 2 (s + (s R(t) - pi/2_lo));
//     acos, x >= 1/2:     2 (w + (s R(t) + c)) with w and c as above.
// Every candidate is computed in every lane and selected by the lane's range; 1 + x for x < 0 equals
// 1 - |x|, so acos's t is asin's. Lanes where s = 0 (t = 0) divide by 1 instead of s + w = 0.
// Special values (C99 Annex F.10.1.1 and F.10.1.2): asin(+-0) = +-0, asin(+-1) = +-pi/2 rounded,
// acos(1) = +0, acos(-1) = pi rounded, NaN for |x| > 1 (infinities included) and for NaN.
#if defined(LOCKSTEP_SIMD_MATH_ASIN_ACOS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_ASIN_ACOS_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_ASIN_ACOS_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_ASIN_ACOS_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// R(t) = P(t) / Q(t), with the coefficients pS0..pS5 and qS1..qS4 of Sun's fdlibm e_asin.c, 1993.
template <class D>
HWY_INLINE vec<D> asin_rational(D d, vec<D> t) {
  const vec<D> p = hn::Mul(t, horner(d, t, 1.66666666666666657415e-01, -3.25565818622400915405e-01,
                                     2.01212532134862925881e-01, -4.00555345006794114027e-02,
                                     7.91534994289814532176e-04, 3.47933107596021167570e-05));
  const vec<D> q = horner(d, t, 1.0, -2.40339491173441421878e+00, 2.02094576023350569471e+00,
                          -6.88283971605453293030e-01, 7.70381505559019352791e-02);
  return hn::Div(p, q);
}

// s = sqrt(t) = w + c with w the high half of s (low 32 significand bits cleared, so that w^2 and 2 w
// are exact) and c = (t - w^2) / (s + w); lanes with s = 0 get w = c = 0 without dividing by zero.
template <class D>
HWY_INLINE double_double<D> asin_split_sqrt(D d, vec<D> t, vec<D> s) {
  const int_tag<D> di;
  const vec<D> w = from_bits(d, hn::And(bits_of(d, s), hn::Set(di, ~int64_t{0xffffffff})));
  const vec<D> sum = hn::Add(s, w);
  const vec<D> denominator = hn::IfThenElse(hn::Eq(sum, hn::Zero(d)), hn::Set(d, 1.0), sum);
  return {w, hn::Div(hn::Sub(t, hn::Mul(w, w)), denominator)};
}

template <class D>
HWY_INLINE vec<D> asin(D d, vec<D> x) {
  constexpr double half_pi_hi = 1.57079632679489655800e+00;     // pio2_hi of e_asin.c
  constexpr double half_pi_lo = 6.12323399573676603587e-17;     // pio2_lo
  constexpr double quarter_pi_hi = 7.85398163397448278999e-01;  // pio4_hi
  constexpr double near_one = 0x1.f3333p-1;  // 0.97499990463256836, fdlibm's high-word test 0x3fef3333

  // Lanes outside [-1, 1] and NaN lanes continue with 0; lanes below 2^-27, whose result is x itself,
  // with t = 0.
  const vec<D> a = hn::Abs(x);
  const mask<D> in_domain = hn::Le(a, hn::Set(d, 1.0));
  const vec<D> ar = hn::IfThenElseZero(in_domain, a);
  const mask<D> small = hn::Lt(ar, hn::Set(d, 0.5));
  const vec<D> as = hn::IfThenElseZero(hn::Ge(ar, hn::Set(d, 0x1p-27)), ar);
  const vec<D> t = hn::IfThenElse(small, hn::Mul(as, as), hn::Mul(hn::Sub(hn::Set(d, 1.0), ar), hn::Set(d, 0.5)));
  const vec<D> r = asin_rational(d, t);
  const vec<D> s = hn::Sqrt(t);

  // |x| < 1/2: fdlibm's x + x w, here with x = |x| (exact: r = 0 below 2^-27).
  const vec<D> small_result = hn::Add(ar, hn::Mul(ar, r));
  // 0.975 <= |x| <= 1 (|x| = 1: s = 0, pi/2_hi + pi/2_lo rounded, fdlibm's x pio2_hi + x pio2_lo).
  const vec<D> two = hn::Set(d, 2.0);
  const vec<D> near_one_result = hn::Sub(
      hn::Set(d, half_pi_hi), hn::Sub(hn::Mul(two, hn::Add(s, hn::Mul(s, r))), hn::Set(d, half_pi_lo)));
  // 1/2 <= |x| < 0.975.
  const double_double<D> wc = asin_split_sqrt(d, t, s);
  const vec<D> p = hn::Sub(hn::Mul(hn::Mul(two, s), r), hn::Sub(hn::Set(d, half_pi_lo), hn::Mul(two, wc.lo)));
  const vec<D> q = hn::Sub(hn::Set(d, quarter_pi_hi), hn::Mul(two, wc.hi));
  const vec<D> middle_result = hn::Sub(hn::Set(d, quarter_pi_hi), hn::Sub(p, q));

  const vec<D> magnitude = hn::IfThenElse(
      small, small_result, hn::IfThenElse(hn::Ge(ar, hn::Set(d, near_one)), near_one_result, middle_result));
  const vec<D> nan = hn::IfThenElse(is_nan(d, x), x, hn::Set(d, std::numeric_limits<double>::quiet_NaN()));
  return hn::IfThenElse(in_domain, hn::Xor(magnitude, sign_bit(d, x)), nan);
}

template <class D>
HWY_INLINE vec<D> acos(D d, vec<D> x) {
  constexpr double pi = 3.14159265358979311600e+00;          // pi of e_acos.c
  constexpr double half_pi_hi = 1.57079632679489655800e+00;  // pio2_hi
  constexpr double half_pi_lo = 6.12323399573676603587e-17;  // pio2_lo

  // Lanes outside [-1, 1] and NaN lanes continue with 0, and so do the lanes below fdlibm's threshold
  // (high word <= 0x3c600000), whose result pi/2_hi + pi/2_lo (rounded: pi/2_hi) is that of x = 0.
  const mask<D> in_domain = hn::Le(hn::Abs(x), hn::Set(d, 1.0));
  const mask<D> not_tiny = hn::Ge(hn::Abs(x), hn::Set(d, 0x1.00001p-57));
  const vec<D> xr = hn::IfThenElseZero(hn::And(in_domain, not_tiny), x);
  const vec<D> ar = hn::Abs(xr);
  const mask<D> small = hn::Lt(ar, hn::Set(d, 0.5));
  const vec<D> t = hn::IfThenElse(small, hn::Mul(xr, xr), hn::Mul(hn::Sub(hn::Set(d, 1.0), ar), hn::Set(d, 0.5)));
  const vec<D> r = asin_rational(d, t);
  const vec<D> s = hn::Sqrt(t);

  // |x| < 1/2.
  const vec<D> small_result =
      hn::Sub(hn::Set(d, half_pi_hi), hn::Sub(xr, hn::Sub(hn::Set(d, half_pi_lo), hn::Mul(xr, r))));
  // -1 <= x <= -1/2 (x = -1: s = 0, fdlibm's pi + 2 pio2_lo, rounded to pi).
  const vec<D> two = hn::Set(d, 2.0);
  const vec<D> negative_result =
      hn::Sub(hn::Set(d, pi), hn::Mul(two, hn::Add(s, hn::Sub(hn::Mul(r, s), hn::Set(d, half_pi_lo)))));
  // 1/2 <= x <= 1 (x = 1: s = w = c = 0, +0).
  const double_double<D> wc = asin_split_sqrt(d, t, s);
  const vec<D> positive_result = hn::Mul(two, hn::Add(wc.hi, hn::Add(hn::Mul(r, s), wc.lo)));

  const vec<D> result = hn::IfThenElse(
      small, small_result, hn::IfThenElse(hn::Lt(xr, hn::Zero(d)), negative_result, positive_result));
  const vec<D> nan = hn::IfThenElse(is_nan(d, x), x, hn::Set(d, std::numeric_limits<double>::quiet_NaN()));
  return hn::IfThenElse(in_domain, result, nan);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
