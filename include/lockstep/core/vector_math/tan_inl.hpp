// lockstep/core/vector_math/tan_inl.hpp — the tangent on packs of doubles over the whole double range, within
// 1 ulp, the same bits on every width and instruction set (rules: common_inl.hpp).
//
// The method is the one of Sun's fdlibm (s_tan.c, k_tan.c, 1993), written without branches:
//   1. reduction x = k pi/2 + r, |r| <= pi/4 (about), r = hi + lo a double-double, as for the sine
//      (sin_cos_inl.hpp: Cody and Waite below 2^20 pi/2, Payne and Hanek above);
//   2. for |r| >= 0.6744 the argument becomes pi/4 - |r| (in double-double with pi/4's low part), so
//      that the polynomial only sees |r| < 0.6744 (tan(pi/4 - u) = (1 - tan u) / (1 + tan u));
//   3. tan r = r + r^3 (T0 + r^2 T(r^2)) with fdlibm's degree-27 odd minimax polynomial, split in two
//      halves of even and odd powers of r^4, the low part lo of r entering as a first-order correction;
//   4. for odd k the result is -1/tan r, computed as t + a (1 + t z + t v) where a = -1/w, t and z are
//      a and w with the low 32 bits of their significands cleared (so t z is exact) and v the part of
//      tan r that z leaves out: the quotient is corrected to well below 1 ulp. fdlibm returns r itself
//      (or -1/r) below 2^-28; here the general forms serve every |r| >= 2^-62 (no smaller r comes out
//      of the reduction of a double other than 0, and the caller handles |x| < 2^-27 itself), which
//      keeps lo in -1/(hi + lo) where it matters.
// Every form is computed in every lane and selected per lane. Special values (C99 Annex F.10.1.7):
// tan(+-0) = +-0, and tan x = x for |x| < 2^-27; tan(+-inf) = NaN; NaN stays NaN.
#if defined(LOCKSTEP_SIMD_MATH_TAN_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_TAN_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_TAN_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_TAN_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"
#include "lockstep/core/vector_math/sin_cos_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// tan(x + y) (odd = false) or -1/tan(x + y) (odd = true) for |x| <= pi/4 about, |y| <= ulp(x) / 2 and
// x != 0 where odd (the caller substitutes a harmless x for lanes it discards).
template <class D>
HWY_INLINE vec<D> tan_kernel(D d, vec<D> x, vec<D> y, mask<D> odd) {
  const int_tag<D> di;
  // pi/4 = pio4 + pio4lo, and the coefficients T0 ... T12: Sun's fdlibm k_tan.c, 1993.
  constexpr double pio4 = 7.85398163397448278999e-01;
  constexpr double pio4lo = 3.06161699786838301793e-17;
  constexpr double t0 = 3.33333333333334091986e-01;

  // |x| >= 0.6744 (high word 0x3fe59428): x + y becomes pi/4 - |x + y|, in double-double.
  const int_vec<D> high = hn::ShiftRight<32>(bits_of(d, hn::Abs(x)));
  const mask<D> big = hn::RebindMask(d, hn::Gt(high, hn::Set(di, int64_t{0x3fe59427})));
  const mask<D> negative = hn::Lt(x, hn::Zero(d));
  const vec<D> xa = hn::IfThenElse(negative, hn::Neg(x), x);
  const vec<D> ya = hn::IfThenElse(negative, hn::Neg(y), y);
  const vec<D> folded = hn::Add(hn::Sub(hn::Set(d, pio4), xa), hn::Sub(hn::Set(d, pio4lo), ya));
  x = hn::IfThenElse(big, folded, x);
  y = hn::IfThenElseZero(hn::Not(big), y);

  const vec<D> z = hn::Mul(x, x);
  const vec<D> w = hn::Mul(z, z);
  const vec<D> odd_terms = horner(d, w, 1.33333333333201242699e-01, 2.18694882948595424599e-02,
                                  3.59207910759131235356e-03, 5.88041240820264096874e-04,
                                  7.81794442939557092300e-05, -1.85586374855275456654e-05);
  const vec<D> even_terms = hn::Mul(z, horner(d, w, 5.39682539762260521377e-02, 8.86323982359930005737e-03,
                                              1.45620945432529025516e-03, 2.46463134818469906812e-04,
                                              7.14072491382608190305e-05, 2.59073051863633712884e-05));
  const vec<D> s = hn::Mul(z, x);
  vec<D> r = hn::Add(y, hn::Mul(z, hn::Add(hn::Mul(s, hn::Add(odd_terms, even_terms)), y)));
  r = hn::Add(r, hn::Mul(hn::Set(d, t0), s));
  const vec<D> tan_xy = hn::Add(x, r);

  // big: (sign of the original x) (v - 2 (x - (w^2 / (w + v) - r))) with v = 1 for tan, -1 for -1/tan.
  const vec<D> v = hn::IfThenElse(odd, hn::Set(d, -1.0), hn::Set(d, 1.0));
  const vec<D> quotient = hn::Div(hn::Mul(tan_xy, tan_xy), hn::Add(tan_xy, v));
  vec<D> folded_result = hn::Sub(v, hn::Mul(hn::Set(d, 2.0), hn::Sub(x, hn::Sub(quotient, r))));
  folded_result = hn::IfThenElse(negative, hn::Neg(folded_result), folded_result);

  // odd, not big: -1/(x + r) with a corrected quotient; big lanes divide 1 here (harmless).
  const int_vec<D> high_bits = hn::Set(di, int64_t{-0x100000000});  // 0xffffffff00000000
  const vec<D> w_safe = hn::IfThenElse(big, hn::Set(d, 1.0), tan_xy);
  const vec<D> zh = from_bits(d, hn::And(bits_of(d, w_safe), high_bits));
  const vec<D> vl = hn::Sub(r, hn::Sub(zh, x));
  const vec<D> a = hn::Div(hn::Set(d, -1.0), w_safe);
  const vec<D> t = from_bits(d, hn::And(bits_of(d, a), high_bits));
  const vec<D> e = hn::Add(hn::Set(d, 1.0), hn::Mul(t, zh));
  const vec<D> reciprocal = hn::Add(t, hn::Mul(a, hn::Add(e, hn::Mul(t, vl))));

  return hn::IfThenElse(big, folded_result, hn::IfThenElse(odd, reciprocal, tan_xy));
}

template <class D>
HWY_INLINE vec<D> tan(D d, vec<D> x) {
  const int_tag<D> di;
  const reduced_argument<D> r = reduce_pi_over_2(d, x);
  const mask<D> odd =
      hn::RebindMask(d, hn::Eq(hn::And(r.quadrant, hn::Set(di, int64_t{1})), hn::Set(di, int64_t{1})));
  // Lanes whose reduction is 0 (tiny, infinite or NaN x) are discarded below; they compute on pi/8.
  const mask<D> regular = hn::And(hn::Ge(hn::Abs(x), hn::Set(d, tiny_argument)), is_finite(d, x));
  const vec<D> hi = hn::IfThenElse(regular, r.hi, hn::Set(d, 0.39269908169872414));
  const vec<D> lo = hn::IfThenElseZero(regular, r.lo);
  const vec<D> result = tan_kernel(d, hi, lo, odd);

  // Tiny x: tan x = x (the sign of zero kept); infinite x: NaN; NaN x: x.
  const vec<D> special = hn::IfThenElse(
      hn::Lt(hn::Abs(x), hn::Set(d, tiny_argument)), x,
      hn::IfThenElse(is_nan(d, x), x, hn::Set(d, std::numeric_limits<double>::quiet_NaN())));
  return hn::IfThenElse(regular, result, special);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
