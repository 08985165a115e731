// lockstep/core/vector_math/atan_inl.hpp — the arc tangent atan(x) and the four-quadrant arc tangent
// atan2(y, x) on packs of doubles, within 1 ulp, the same bits on every width and instruction set
// (rules: common_inl.hpp).
//
// atan follows Sun's fdlibm (s_atan.c, 1993), written without branches:
//   1. reduction by the magnitude a = |x| into five ranges with the breakpoints 7/16, 11/16, 19/16 and
//      39/16: atan a = atan(c) + atan(t) with c in {0, 1/2, 1, 3/2, inf} and t = (a - c) / (1 + c a)
//      in the forms (2a - 1) / (2 + a), (a - 1) / (a + 1), (a - 1.5) / (1 + 1.5 a) and -1 / a, so that
//      |t| <= 7/16. The numerator p a - q and the denominator p + q a are blended per lane from
//      constants p in {1, 2, 0}, q in {0, 1, 1.5} so that one division serves every range;
//   2. atan t = t - t (s1 + s2) with t (s1 + s2) = t^3 P(t^2), P of degree 10 with fdlibm's minimax
//      coefficients (aT[] of s_atan.c); s1 and s2 hold its terms of even and of odd coefficient index,
//      two Horner chains in t^4 instead of one in t^2, as fdlibm evaluates them;
//   3. atan a = atan(c)_hi - ((t (s1 + s2) - atan(c)_lo) - t), atan(c) in two parts (atanhi[] and
//      atanlo[] of s_atan.c) so that the constant's rounding error does not reach the result; c = 0
//      makes this step t - t (s1 + s2) exactly, fdlibm's formula for a < 7/16;
//   4. a < 2^-29: atan a = a; a >= 2^66 (infinity included): pi/2 rounded; the sign of x is copied last
//      (every operation above is symmetric under negation, so this equals computing with x itself).
// atan2 follows Sun's fdlibm (e_atan2.c, 1993) with two roundings of its formulas taken out (fdlibm's
// own z = atan(fl(y / x)) and pi - (z - pi_lo) measured up to 1.39 ulp on this library's tests):
//   1. z = atan(|y / x|) counts the quotient's rounding error: q = fl(|y| / |x|) and q_lo = (|y| - q |x|)
//      / |x|, the remainder exact by Dekker's product (on |y| and |x| scaled by one power of 2, so that
//      no partial product under- or overflows), enter atan as q and the correction q_lo / (1 + q^2),
//      added to atan(c)_lo above;
//   2. the result is z (x > 0) or pi - z (x < 0) with y's sign, and pi - z is summed as
//      (pi_hi - z_hi) + (pi_lo + z_tail), pi_hi - z_hi split exactly (Dekker's fast two-sum), rounded
//      once at the end.
// Where the exponents of y and x differ by more than 60 (fdlibm's test on the high words, done per lane
// on the bits), y / x would underflow or overflow: the result is then pi/2 for |y / x| > 2^60 whatever
// the sign of x (as in FreeBSD's msun; fdlibm's pi - (pi/2 - pi_lo) is 1 ulp above), pi for
// |y / x| < 2^-60 and x < 0; for x > 0 a tiny ratio is divided, its rounding into the subnormals being
// the result's (atan q = q there).
// Special values (C99 Annex F.10.1.1 and F.10.1.4): atan(+-0) = +-0, atan(+-inf) = +-pi/2, and
// atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0, atan2(+-0, x < 0) = +-pi, atan2(+-0, x > 0) = +-0,
// atan2(y < 0, +-0) = -pi/2, atan2(y > 0, +-0) = pi/2, atan2(+-y, -inf) = +-pi and atan2(+-y, +inf)
// = +-0 for finite y > 0, atan2(+-inf, x) = +-pi/2 for finite x, atan2(+-inf, -inf) = +-3pi/4,
// atan2(+-inf, +inf) = +-pi/4 (pi, pi/2, pi/4 and 3pi/4 rounded to the nearest double); a NaN argument
// gives NaN.
#if defined(LOCKSTEP_SIMD_MATH_ATAN_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_ATAN_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_ATAN_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_ATAN_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// atan(a + delta) = hi - tail for lanes a >= 0 or +inf (not NaN, not negative: the callers guarantee
// it), delta a correction of at most an ulp of a or so (0 for atan itself); hi is atan(c) rounded and
// tail the rest, so that a caller can add further terms before the last rounding. hi - tail >= +0.
template <class D>
HWY_INLINE double_double<D> atan_parts(D d, vec<D> a, vec<D> delta) {
  // atan(c) = hi + lo for c = 1/2, 1, 3/2, inf: atanhi[] and atanlo[] of Sun's fdlibm s_atan.c, 1993.
  constexpr double atan_half_hi = 4.63647609000806093515e-01, atan_half_lo = 2.26987774529616870924e-17;
  constexpr double atan_one_hi = 7.85398163397448278999e-01, atan_one_lo = 3.06161699786838301793e-17;
  constexpr double atan_three_halves_hi = 9.82793723247329054082e-01;
  constexpr double atan_three_halves_lo = 1.39033110312309984516e-17;
  constexpr double half_pi_hi = 1.57079632679489655800e+00, half_pi_lo = 6.12323399573676603587e-17;

  // Tiny and huge lanes (their results are set below) continue with a = 1.
  const mask<D> tiny = hn::Lt(a, hn::Set(d, 0x1p-29));
  const mask<D> huge = hn::Ge(a, hn::Set(d, 0x1p66));
  const vec<D> ar = hn::IfThenElse(hn::Or(tiny, huge), hn::Set(d, 1.0), a);

  // The range of each lane: fdlibm's breakpoints 7/16, 11/16, 19/16, 39/16 (its high-word tests compare
  // with these exactly, as their low words are zero).
  const mask<D> above_7_16 = hn::Ge(ar, hn::Set(d, 0.4375));
  const mask<D> above_11_16 = hn::Ge(ar, hn::Set(d, 0.6875));
  const mask<D> above_19_16 = hn::Ge(ar, hn::Set(d, 1.1875));
  const mask<D> above_39_16 = hn::Ge(ar, hn::Set(d, 2.4375));
  // Picks the constant of the lane's range: c0 below 7/16, c1 up to 11/16, ..., c4 from 39/16 on.
  const auto by_range = [&](double c0, double c1, double c2, double c3, double c4) {
    return hn::IfThenElse(
        above_39_16, hn::Set(d, c4),
        hn::IfThenElse(above_19_16, hn::Set(d, c3),
                       hn::IfThenElse(above_11_16, hn::Set(d, c2),
                                      hn::IfThenElse(above_7_16, hn::Set(d, c1), hn::Set(d, c0)))));
  };

  // t = (p a - q) / (p + q a): a / 1, (2a - 1) / (2 + a), (a - 1) / (1 + a), (a - 1.5) / (1 + 1.5 a),
  // -1 / a. The products are exact except 1.5 a, which fdlibm rounds the same way.
  const vec<D> p = by_range(1.0, 2.0, 1.0, 1.0, 0.0);
  const vec<D> q = by_range(0.0, 1.0, 1.0, 1.5, 1.0);
  const vec<D> t = hn::Div(hn::Sub(hn::Mul(p, ar), q), hn::Add(p, hn::Mul(q, ar)));

  // Coefficients aT[0..10] of Sun's fdlibm s_atan.c, 1993: odd terms in s1 (z^1, z^3, ...), even in s2.
  const vec<D> z = hn::Mul(t, t);
  const vec<D> w = hn::Mul(z, z);
  const vec<D> s1 = hn::Mul(z, horner(d, w, 3.33333333333329318027e-01, 1.42857142725034663711e-01,
                                      9.09088713343650656196e-02, 6.66107313738753120669e-02,
                                      4.97687799461593236017e-02, 1.62858201153657823623e-02));
  const vec<D> s2 = hn::Mul(w, horner(d, w, -1.99999999998764832476e-01, -1.11111104054623557880e-01,
                                      -7.69187620504482999495e-02, -5.83357013379057348645e-02,
                                      -3.65315727442169155270e-02));

  const vec<D> c_hi = by_range(0.0, atan_half_hi, atan_one_hi, atan_three_halves_hi, half_pi_hi);
  const vec<D> c_lo = hn::Add(by_range(0.0, atan_half_lo, atan_one_lo, atan_three_halves_lo, half_pi_lo), delta);
  const vec<D> tail = hn::Sub(hn::Sub(hn::Mul(t, hn::Add(s1, s2)), c_lo), t);

  // a < 2^-29: atan a = a; a >= 2^66: pi/2_hi + pi/2_lo, which fdlibm returns (rounded: pi/2_hi).
  return {hn::IfThenElse(tiny, a, hn::IfThenElse(huge, hn::Set(d, half_pi_hi), c_hi)),
          hn::IfThenElse(tiny, hn::Zero(d), hn::IfThenElse(huge, hn::Set(d, -half_pi_lo), tail))};
}

template <class D>
HWY_INLINE vec<D> atan(D d, vec<D> x) {
  // NaN lanes continue with 0 and return x itself.
  const mask<D> nan = is_nan(d, x);
  const double_double<D> parts = atan_parts(d, hn::IfThenElseZero(hn::Not(nan), hn::Abs(x)), hn::Zero(d));
  return hn::IfThenElse(nan, x, hn::Xor(hn::Sub(parts.hi, parts.lo), sign_bit(d, x)));
}

template <class D>
HWY_INLINE vec<D> atan2(D d, vec<D> y, vec<D> x) {
  const int_tag<D> di;
  constexpr double pi = 0x1.921fb54442d18p+1;         // 3.14159265358979311600e+00 (pi rounded)
  constexpr double pi_lo = 0x1.1a62633145c07p-53;     // 1.2246467991473531772e-16 (pi - pi rounded)
  constexpr double half_pi = 0x1.921fb54442d18p+0;    // pi/2 rounded
  constexpr double quarter_pi = 0x1.921fb54442d18p-1;  // pi/4 rounded
  constexpr double three_quarters_pi = 0x1.2d97c7f3321d2p+1;  // 3 pi/4 rounded

  const vec<D> ay = hn::Abs(y), ax = hn::Abs(x);
  const mask<D> nan = hn::Or(is_nan(d, x), is_nan(d, y));
  const mask<D> y_zero = hn::Eq(y, hn::Zero(d));
  const mask<D> x_zero = hn::Eq(x, hn::Zero(d));
  const mask<D> y_inf = is_inf(d, y);
  const mask<D> x_inf = is_inf(d, x);
  const mask<D> x_negative = hn::RebindMask(d, hn::Lt(bits_of(d, x), hn::Zero(di)));  // sign bit, -0 too
  const mask<D> special = hn::Or(hn::Or(nan, hn::Or(y_zero, x_zero)), hn::Or(y_inf, x_inf));

  // fdlibm's exponent difference k = (high word of |y| - high word of |x|) >> 20, from the bits.
  const int_vec<D> high_mask = hn::Set(di, int64_t{0x7fffffff});
  const int_vec<D> y_high = hn::And(hn::ShiftRight<32>(bits_of(d, y)), high_mask);
  const int_vec<D> x_high = hn::And(hn::ShiftRight<32>(bits_of(d, x)), high_mask);
  const int_vec<D> k = hn::ShiftRight<20>(hn::Sub(y_high, x_high));  // arithmetic shift
  const mask<D> ratio_huge = hn::RebindMask(d, hn::Gt(k, hn::Set(di, int64_t{60})));
  const mask<D> ratio_tiny_x_negative =
      hn::And(x_negative, hn::RebindMask(d, hn::Lt(k, hn::Set(di, int64_t{-60}))));

  // q = |y / x| where it is needed (the other lanes divide 1 by 1), and the rounding error of the
  // division, q_lo = (|y| - q |x|) / |x| with the remainder exact: Dekker's product of q and |x|, on
  // both scaled by the power of 2 that brings |x| into [2^-52, 2), so that no partial product under- or
  // overflows where |k| <= 60 (for x > 0 and k < -60, q < 2^-59 and atan q = q uses no q_lo).
  const mask<D> divide = hn::Not(hn::Or(special, hn::Or(ratio_huge, ratio_tiny_x_negative)));
  const vec<D> one = hn::Set(d, 1.0);
  const vec<D> ys = hn::IfThenElse(divide, ay, one), xs = hn::IfThenElse(divide, ax, one);
  const vec<D> q = hn::Div(ys, xs);
  const int_vec<D> n = hn::Sub(hn::Set(di, int64_t{1023}), hn::ShiftRight<52>(bits_of(d, xs)));
  const vec<D> ys_scaled = scale_by_pow2(d, ys, n), xs_scaled = scale_by_pow2(d, xs, n);
  const double_double<D> q_xs = two_product(d, q, xs_scaled);
  const vec<D> q_lo = hn::Div(hn::Sub(hn::Sub(ys_scaled, q_xs.hi), q_xs.lo), xs_scaled);
  // atan(q + q_lo) = atan q + q_lo / (1 + q^2) to far below an ulp.
  const double_double<D> z = atan_parts(d, q, hn::Div(q_lo, hn::Add(one, hn::Mul(q, q))));

  // x > 0: z_hi - z_tail; x < 0: pi - z = (difference.hi + difference.lo) + (pi_lo + z_tail), rounded
  // once at the end, where pi - z_hi = difference.hi + difference.lo exactly (Dekker's fast two-sum:
  // pi >= z_hi).
  const double_double<D> difference = fast_two_sum(d, hn::Set(d, pi), hn::Neg(z.hi));
  const vec<D> reflected = hn::Add(difference.hi, hn::Add(difference.lo, hn::Add(hn::Set(d, pi_lo), z.lo)));
  const vec<D> divided = hn::IfThenElse(x_negative, reflected, hn::Sub(z.hi, z.lo));
  // |y / x| > 2^60: pi/2 for either sign of x (the exact value is within 2^-59 of pi/2); |y / x| < 2^-60
  // with x < 0: pi.
  const vec<D> general = hn::IfThenElse(
      ratio_huge, hn::Set(d, half_pi), hn::IfThenElse(ratio_tiny_x_negative, hn::Set(d, pi), divided));

  // The magnitude of the result in the special lanes, by priority: y = 0, then x = 0, then x infinite,
  // then y infinite.
  const vec<D> x_infinite_result =
      hn::IfThenElse(y_inf, hn::IfThenElse(x_negative, hn::Set(d, three_quarters_pi), hn::Set(d, quarter_pi)),
                     hn::IfThenElseZero(x_negative, hn::Set(d, pi)));
  const vec<D> special_result = hn::IfThenElse(
      y_zero, hn::IfThenElseZero(x_negative, hn::Set(d, pi)),
      hn::IfThenElse(x_zero, hn::Set(d, half_pi), hn::IfThenElse(x_inf, x_infinite_result, hn::Set(d, half_pi))));

  // Every magnitude is >= +0; the sign is y's (fdlibm's results for y < 0 are the negations of those
  // for y > 0).
  const vec<D> result = hn::Xor(hn::IfThenElse(special, special_result, general), sign_bit(d, y));
  // A NaN argument comes back as it is (y's where both are): selected, not summed, so that the other
  // lanes' x + y (inf - inf where atan2 is +-pi/4 or +-3pi/4) raises nothing.
  return hn::IfThenElse(nan, hn::IfThenElse(is_nan(d, y), y, x), result);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
