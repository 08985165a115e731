// lockstep/core/vector_math/sin_cos_inl.hpp — sine and cosine on packs of doubles over the whole double range,
// within 1 ulp, the same bits on every width and instruction set (rules: common_inl.hpp).
//
// The method is the one of Sun's fdlibm (s_sin.c, s_cos.c, k_sin.c, k_cos.c, e_rem_pio2.c, 1993),
// written without branches:
//   1. reduction  x = k pi/2 + r with |r| <= pi/4 (about), r as a double-double hi + lo:
//      - for |x| < 2^20 pi/2, Cody and Waite's method (Cody and Waite, Software Manual for the
//        Elementary Functions, 1980): k = round(x 2/pi) and pi/2 = c1 + c2 + c3 + c4 where c1, c2, c3
//        have at most 33 significant bits (so k c1, k c2, k c3 are exact for |k| <= 2^20) and c4 carries
//        the next 53 bits (about 152 bits of pi/2 in all); x - k c1 is exact (Sterbenz), the other terms
//        are added by error-free two-sums, so r keeps about 70 correct bits even next to a multiple of
//        pi/2;
//      - for larger finite |x|, Payne and Hanek's reduction (pi_over_2_reduction.hpp), lane by lane,
//        only in the lanes that need it; the loop is skipped when no lane does, which changes no bits;
//   2. on [-pi/4, pi/4], fdlibm's kernels: sin r = r + r^3 (S1 + r^2 S(r^2)) with the correction of
//      the low part lo of r, and cos r = 1 - (r^2/2 - (r^2 C(r^2) - r lo)), where for |r| > 0.3 the
//      constant qx (r/4 truncated, or 0.28125 above 0.78125) is split off first so that 1 - qx and
//      r^2/2 - qx are exact; S and C are fdlibm's minimax polynomials (|error| below 2^-58 on
//      [-pi/4, pi/4], by fdlibm's own bounds). Both forms of the cosine are computed in every lane and
//      selected per lane;
//   3. the quadrant k mod 4 chooses sin r, cos r, -sin r or -cos r per lane.
// Special values (C99 Annex F.10.1.6, F.10.1.5): sin(+-0) = +-0, and sin x = x for |x| < 2^-27;
// sin(+-inf) = cos(+-inf) = NaN; NaN stays NaN; cos(+-0) = 1.
#if defined(LOCKSTEP_SIMD_MATH_SIN_COS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_SIN_COS_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_SIN_COS_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_SIN_COS_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>

#include "lockstep/core/vector_math/common_inl.hpp"
#include "lockstep/core/vector_math/pi_over_2_reduction.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// x = quadrant pi/2 + hi + lo (modulo 2 pi), quadrant in 0..3 per lane. Lanes with infinite or NaN x
// carry the reduction of 0 (their results are the callers' business); so do lanes with |x| below
// 2^-27, whose sine, cosine and tangent the callers take from x directly.
template <class D>
struct reduced_argument {
  vec<D> hi, lo;
  int_vec<D> quadrant;
};

// Below this magnitude (2^20 pi/2, rounded down) the Cody-Waite reduction applies: |k| <= 2^20.
inline constexpr double cody_waite_limit = 0x1.921fb54442d18p+20;
// Below this magnitude sin x = tan x = x and cos x = 1 after rounding (fdlibm's threshold).
inline constexpr double tiny_argument = 0x1p-27;

template <class D>
HWY_INLINE reduced_argument<D> reduce_pi_over_2(D d, vec<D> x) {
  const int_tag<D> di;
  // Parts of pi/2 (mpmath: c1, c2, c3 pi/2 rounded to 33 bits one after the other, c4 to 53 bits; the
  // rest is 7.4e-49), and 2/pi rounded.
  constexpr double c1 = 0x1.921fb544p+0;
  constexpr double c2 = 0x1.0b4611a6p-34;
  constexpr double c3 = 0x1.3198a2ep-69;
  constexpr double c4 = 0x1.b839a252049c1p-104;
  constexpr double two_over_pi = 0x1.45f306dc9c883p-1;

  const vec<D> ax = hn::Abs(x);
  const mask<D> medium = hn::And(hn::Lt(ax, hn::Set(d, cody_waite_limit)), hn::Ge(ax, hn::Set(d, tiny_argument)));
  const vec<D> xm = hn::IfThenElseZero(medium, x);
  const vec<D> k = hn::Round(hn::Mul(xm, hn::Set(d, two_over_pi)));
  const vec<D> a = hn::Sub(xm, hn::Mul(k, hn::Set(d, c1)));  // exact
  const double_double<D> s1 = two_sum(d, a, hn::Neg(hn::Mul(k, hn::Set(d, c2))));
  const double_double<D> s2 = two_sum(d, s1.hi, hn::Neg(hn::Mul(k, hn::Set(d, c3))));
  const vec<D> tail = hn::Sub(hn::Add(s1.lo, s2.lo), hn::Mul(k, hn::Set(d, c4)));
  const double_double<D> r = two_sum(d, s2.hi, tail);
  reduced_argument<D> out{r.hi, r.lo, hn::And(nearest_int(d, k), hn::Set(di, int64_t{3}))};

  // Finite lanes beyond the Cody-Waite range: Payne and Hanek, one lane at a time.
  const mask<D> large = hn::And(hn::Not(hn::Lt(ax, hn::Set(d, cody_waite_limit))), is_finite(d, x));
  if (!hn::AllFalse(d, large)) {
    constexpr size_t max_lanes = hn::MaxLanes(D());
    double xs[max_lanes], his[max_lanes], los[max_lanes];
    int64_t flags[max_lanes], quadrants[max_lanes];
    hn::StoreU(x, d, xs);
    hn::StoreU(out.hi, d, his);
    hn::StoreU(out.lo, d, los);
    hn::StoreU(out.quadrant, di, quadrants);
    hn::StoreU(hn::VecFromMask(di, hn::RebindMask(di, large)), di, flags);
    for (size_t i = 0; i < hn::Lanes(d); ++i) {
      if (flags[i] == 0) continue;
      const pi_over_2_reduced lane = lockstep::simd::reduce_pi_over_2(xs[i]);
      his[i] = lane.hi;
      los[i] = lane.lo;
      quadrants[i] = lane.quadrant;
    }
    out.hi = hn::LoadU(d, his);
    out.lo = hn::LoadU(d, los);
    out.quadrant = hn::LoadU(di, quadrants);
  }
  return out;
}

// fdlibm's kernels on the reduced argument (|hi| <= pi/4 about, |lo| <= ulp(hi) / 2).
template <class D>
HWY_INLINE vec<D> sin_kernel(D d, vec<D> x, vec<D> y) {
  // Coefficients of Sun's fdlibm k_sin.c, 1993.
  constexpr double s1 = -1.66666666666666324348e-01;
  const vec<D> z = hn::Mul(x, x);
  const vec<D> v = hn::Mul(z, x);
  const vec<D> r = horner(d, z, 8.33333333332248946124e-03, -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                          -2.50507602534068634195e-08, 1.58969099521155010221e-10);
  // x - ((z (y/2 - v r) - y) - v s1)
  const vec<D> inner = hn::Sub(hn::Mul(z, hn::Sub(hn::Mul(hn::Set(d, 0.5), y), hn::Mul(v, r))), y);
  return hn::Sub(x, hn::Sub(inner, hn::Mul(v, hn::Set(d, s1))));
}

template <class D>
HWY_INLINE vec<D> cos_kernel(D d, vec<D> x, vec<D> y) {
  const int_tag<D> di;
  const vec<D> z = hn::Mul(x, x);
  // Coefficients of Sun's fdlibm k_cos.c, 1993.
  const vec<D> r = hn::Mul(z, horner(d, z, 4.16666666666666019037e-02, -1.38888888888741095749e-03,
                                     2.48015872894767294178e-05, -2.75573143513906633035e-07,
                                     2.08757232129817482790e-09, -1.13596475577881948265e-11));
  const vec<D> zr_xy = hn::Sub(hn::Mul(z, r), hn::Mul(x, y));
  const vec<D> half_z = hn::Mul(hn::Set(d, 0.5), z);
  const vec<D> small = hn::Sub(hn::Set(d, 1.0), hn::Sub(half_z, zr_xy));

  // |x| >= 0.3 (high word 0x3fd33333): qx is |x| / 4 with the low 32 bits of the significand cleared
  // (high word minus 2 in the exponent), or 0.28125 above 0.78125 (high word 0x3fe90000).
  const int_vec<D> high = hn::ShiftRight<32>(bits_of(d, hn::Abs(x)));
  const mask<D> large = hn::RebindMask(d, hn::Gt(high, hn::Set(di, int64_t{0x3fd33332})));
  const mask<D> above = hn::RebindMask(d, hn::Gt(high, hn::Set(di, int64_t{0x3fe90000})));
  const vec<D> quarter = from_bits(d, hn::ShiftLeft<32>(hn::Sub(high, hn::Set(di, int64_t{0x00200000}))));
  const vec<D> qx = hn::IfThenElse(above, hn::Set(d, 0.28125), quarter);
  const vec<D> hz = hn::Sub(half_z, qx);
  const vec<D> a = hn::Sub(hn::Set(d, 1.0), qx);
  const vec<D> with_qx = hn::Sub(a, hn::Sub(hz, zr_xy));
  return hn::IfThenElse(large, with_qx, small);
}

template <class D>
struct sin_cos_result {
  vec<D> sin, cos;
};

// Both at once: one reduction, both kernels.
template <class D>
HWY_INLINE sin_cos_result<D> sin_cos(D d, vec<D> x) {
  const int_tag<D> di;
  const reduced_argument<D> r = reduce_pi_over_2(d, x);
  const vec<D> s = sin_kernel(d, r.hi, r.lo);
  const vec<D> c = cos_kernel(d, r.hi, r.lo);
  // Quadrant 0: (s, c); 1: (c, -s); 2: (-s, -c); 3: (-c, s).
  const int_vec<D> one = hn::Set(di, int64_t{1}), two = hn::Set(di, int64_t{2});
  const mask<D> odd = hn::RebindMask(d, hn::Eq(hn::And(r.quadrant, one), one));
  const mask<D> q12 = hn::RebindMask(d, hn::Eq(hn::And(hn::Add(r.quadrant, one), two), two));
  const mask<D> q23 = hn::RebindMask(d, hn::Eq(hn::And(r.quadrant, two), two));
  const vec<D> sin_abs = hn::IfThenElse(odd, c, s);
  const vec<D> cos_abs = hn::IfThenElse(odd, s, c);
  vec<D> sin_x = hn::IfThenElse(q23, hn::Neg(sin_abs), sin_abs);
  vec<D> cos_x = hn::IfThenElse(q12, hn::Neg(cos_abs), cos_abs);

  // Tiny x: sin x = x (the sign of zero kept), cos x = 1; infinite x: NaN; NaN x: x.
  const mask<D> tiny = hn::Lt(hn::Abs(x), hn::Set(d, tiny_argument));
  sin_x = hn::IfThenElse(tiny, x, sin_x);
  cos_x = hn::IfThenElse(tiny, hn::Set(d, 1.0), cos_x);
  const mask<D> finite = is_finite(d, x);
  const vec<D> not_finite = hn::IfThenElse(is_nan(d, x), x, hn::Set(d, std::numeric_limits<double>::quiet_NaN()));
  return {hn::IfThenElse(finite, sin_x, not_finite), hn::IfThenElse(finite, cos_x, not_finite)};
}

template <class D>
HWY_INLINE vec<D> sin(D d, vec<D> x) {
  return sin_cos(d, x).sin;
}
template <class D>
HWY_INLINE vec<D> cos(D d, vec<D> x) {
  return sin_cos(d, x).cos;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
