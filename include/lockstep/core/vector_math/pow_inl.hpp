// lockstep/core/vector_math/pow_inl.hpp — x^y on packs of doubles, within 1 ulp (at most 0.85 ulp measured), the
// same bits on every width and instruction set (rules: common_inl.hpp).
//
// The method is the one of Sun's fdlibm (e_pow.c, 1993), written without branches:
//   1. log2|x| as a double-double l_hi + l_lo (relative error about 2^-64): |x| = 2^e m with m in
//      [sqrt(3)/2, sqrt(3)) read from the bits (subnormal x first multiplied by 2^53), m taken around
//      b = 1 or b = 1.5 (log2 1.5 = dp_hi + dp_lo); s = (m - b) / (m + b) carried as s_hi + s_lo, and
//      log(m / b) = log((1 + s) / (1 - s)) = 2 s + 2/3 s^3 + s^4 L(s^2), L the degree-5 minimax
//      polynomial of fdlibm; the leading terms are kept in double-double by halves whose low 32 bits are
//      zero, so that their products are exact;
//   2. y log2|x| = p_hi + p_lo, with y split the same way (y_hi y low 32 bits zero, so y_hi l_hi is exact);
//   3. p = n + r with n the nearest integer and |r| <= 1/2 (p_hi - n is exact), then 2^r = e^(r ln 2) by
//      the exponential's rational form (exp_inl.hpp, same coefficients) with the low part's first-order
//      correction, and x^y = 2^n 2^r scaled in two exact steps so that subnormal results round once.
// Where fdlibm branches on the size of x, y and y log2|x|, every lane computes the general formula and
// the results are selected per lane. |y| is clamped to 2^64 first: for every finite x > 0 other than 1,
// |log2 x| >= 2^-53, so y log2 x stays beyond the overflow and underflow thresholds with its sign.
// Special values (C99 Annex F.10.4.4): pow(x, +-0) = 1 and pow(1, y) = 1 for every x and y, NaN included;
// pow(-1, +-inf) = 1; pow(+-0, y) = +-inf for y < 0 an odd integer, +inf for other y < 0 (y = -inf
// included), +-0 for y > 0 an odd integer, +0 for other y > 0; pow(x, y) = NaN for finite x < 0 and
// finite non-integer y; pow(x, -inf) = +inf for |x| < 1 and +0 for |x| > 1; pow(x, +inf) = +0 for |x| < 1
// and +inf for |x| > 1; pow(-inf, y) = -0, +0, -inf, +inf for y < 0 odd, y < 0 not odd, y > 0 odd, y > 0
// not odd; pow(+inf, y) = +0 for y < 0 and +inf for y > 0; otherwise NaN propagates. For x < 0 and
// integer y the sign follows y's parity (every |y| >= 2^53 is even). Overflow gives +-inf, underflow
// +-0 or a subnormal rounded once.
#if defined(LOCKSTEP_SIMD_MATH_POW_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_POW_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_POW_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_POW_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {
namespace pow_detail {

// x with the low 32 bits of its significand cleared: at most 21 significant bits, so the product of two
// such halves is exact.
template <class D>
HWY_INLINE vec<D> high_half(D d, vec<D> x) {
  const int_tag<D> di;
  return from_bits(d, hn::And(bits_of(d, x), hn::Set(di, static_cast<int64_t>(0xffffffff00000000ull))));
}

// log2 x = hi + lo for finite x > 0; hi has its low 32 bits zero.
template <class D>
HWY_INLINE double_double<D> log2_double_double(D d, vec<D> x) {
  const int_tag<D> di;
  // fdlibm's e_pow.c constants: log2(1.5) = dp_hi + dp_lo, 2 / (3 ln 2) = cp = cp_hi + cp_lo.
  constexpr double dp_hi = 0x1.2b80340000000p-1;   // 5.84962487220764160156e-01
  constexpr double dp_lo = 0x1.cfdeb43cfd006p-27;  // 1.35003920212974897128e-08
  constexpr double cp = 0x1.ec709dc3a03fdp-1;      // 9.61796693925975554329e-01
  constexpr double cp_hi = 0x1.ec709e0000000p-1;   // 9.61796700954437255859e-01
  constexpr double cp_lo = -0x1.e2fe0145b01f5p-28; // -7.02846165095275826516e-09

  // x = 2^e m, m in [1, 2); subnormal x is scaled into the normal range first (exactly).
  const mask<D> subnormal = hn::Lt(x, hn::Set(d, 0x1p-1022));
  const vec<D> xs = hn::Mul(x, hn::IfThenElse(subnormal, hn::Set(d, 0x1p53), hn::Set(d, 1.0)));  // no overflow
  const int_vec<D> bits = bits_of(d, xs);
  int_vec<D> e = hn::IfThenElseZero(hn::RebindMask(di, subnormal), hn::Set(di, int64_t{-53}));
  e = hn::Add(e, hn::Sub(hn::ShiftRight<52>(bits), hn::Set(di, int64_t{1023})));
  vec<D> m = from_bits(d, hn::Or(hn::And(bits, hn::Set(di, int64_t{0x000fffffffffffff})),
                                 hn::Set(di, int64_t{0x3ff0000000000000})));

  // m below sqrt(3/2): around 1; below sqrt(3): around 1.5; otherwise m / 2 around 1 and e + 1.
  const mask<D> below_sqrt3 = hn::Lt(m, hn::Set(d, 0x1.bb67ae8584caap+0));
  const mask<D> around_three_halves = hn::AndNot(hn::Lt(m, hn::Set(d, 0x1.3988e1409212ep+0)), below_sqrt3);
  m = hn::IfThenElse(below_sqrt3, m, hn::Mul(m, hn::Set(d, 0.5)));
  e = hn::Add(e, hn::IfThenZeroElse(hn::RebindMask(di, below_sqrt3), hn::Set(di, int64_t{1})));
  const vec<D> b = hn::IfThenElse(around_three_halves, hn::Set(d, 1.5), hn::Set(d, 1.0));
  const vec<D> log2_b_hi = hn::IfThenElseZero(around_three_halves, hn::Set(d, dp_hi));
  const vec<D> log2_b_lo = hn::IfThenElseZero(around_three_halves, hn::Set(d, dp_lo));

  // s = (m - b) / (m + b) = s_hi + s_lo; m - b is exact (Sterbenz), m + b = sum_hi + sum_lo exactly.
  const vec<D> num = hn::Sub(m, b);
  const vec<D> inv_den = hn::Div(hn::Set(d, 1.0), hn::Add(m, b));
  const vec<D> s = hn::Mul(num, inv_den);
  const vec<D> s_hi = high_half(d, s);
  const vec<D> sum_hi = high_half(d, hn::Add(m, b));
  const vec<D> sum_lo = hn::Sub(m, hn::Sub(sum_hi, b));
  const vec<D> s_lo = hn::Mul(inv_den, hn::Sub(hn::Sub(num, hn::Mul(s_hi, sum_hi)), hn::Mul(s_hi, sum_lo)));

  // log(m / b) = 2 s + 2/3 s^3 + s^4 L(s^2) = 2/3 s (3 + s^2 + 3/2 s^3 L(s^2)): the factor in
  // parentheses as q_hi + q_lo, with s^2 taken as s_hi^2 (exact) plus the correction s_lo (s_hi + s).
  const vec<D> s2 = hn::Mul(s, s);
  const vec<D> poly = hn::Mul(hn::Mul(s2, s2),
                              horner(d, s2, 5.99999999999994648725e-01, 4.28571428578550184252e-01,
                                     3.33333329818377432918e-01, 2.72728123808534006489e-01,
                                     2.30660745775561754067e-01, 2.06975017800338417784e-01));
  const vec<D> rest = hn::Add(poly, hn::Mul(s_lo, hn::Add(s_hi, s)));
  const vec<D> s_hi2 = hn::Mul(s_hi, s_hi);
  const vec<D> three = hn::Set(d, 3.0);
  const vec<D> q_hi = high_half(d, hn::Add(hn::Add(three, s_hi2), rest));
  const vec<D> q_lo = hn::Sub(rest, hn::Sub(hn::Sub(q_hi, three), s_hi2));
  // s (q_hi + q_lo) = u + v with u exact, then rounded to a high half p_hi and the rest p_lo.
  const vec<D> u = hn::Mul(s_hi, q_hi);
  const vec<D> v = hn::Add(hn::Mul(s_lo, q_hi), hn::Mul(q_lo, s));
  const vec<D> p_hi = high_half(d, hn::Add(u, v));
  const vec<D> p_lo = hn::Sub(v, hn::Sub(p_hi, u));
  // Times 2 / (3 ln 2), plus log2 b and e.
  const vec<D> z_hi = hn::Mul(hn::Set(d, cp_hi), p_hi);  // exact
  const vec<D> z_lo =
      hn::Add(hn::Add(hn::Mul(hn::Set(d, cp_lo), p_hi), hn::Mul(p_lo, hn::Set(d, cp))), log2_b_lo);
  const vec<D> ed = hn::ConvertTo(d, e);
  const vec<D> hi = high_half(d, hn::Add(hn::Add(hn::Add(z_hi, z_lo), log2_b_hi), ed));
  const vec<D> lo = hn::Sub(z_lo, hn::Sub(hn::Sub(hn::Sub(hi, ed), log2_b_hi), z_hi));
  return {hi, lo};
}

// 2^(hi + lo) for |hi + lo| <= 1100, where hi has at most 42 significant bits and |lo| < 2^-9 (a product
// split in halves, as below), so that hi minus the nearest integer of hi + lo is exact.
template <class D>
HWY_INLINE vec<D> exp2_double_double(D d, vec<D> hi, vec<D> lo) {
  // fdlibm's e_pow.c constants: ln 2 = lg2_hi + lg2_lo with lg2_hi of 21 significant bits.
  constexpr double lg2 = 0x1.62e42fefa39efp-1;       // 6.93147180559945286227e-01
  constexpr double lg2_hi = 0x1.62e4300000000p-1;    // 6.93147182464599609375e-01
  constexpr double lg2_lo = -0x1.05c610ca86c39p-29;  // -1.90465429995776804525e-09

  const vec<D> n = hn::Round(hn::Add(hi, lo));
  const vec<D> r_hi = hn::Sub(hi, n);  // exact
  // r ln 2 = z + w: t, of 21 bits, times lg2_hi is exact.
  const vec<D> t = high_half(d, hn::Add(lo, r_hi));
  const vec<D> u = hn::Mul(t, hn::Set(d, lg2_hi));
  const vec<D> v = hn::Add(hn::Mul(hn::Sub(lo, hn::Sub(t, r_hi)), hn::Set(d, lg2)), hn::Mul(t, hn::Set(d, lg2_lo)));
  const vec<D> z = hn::Add(u, v);
  const vec<D> w = hn::Sub(v, hn::Sub(z, u));
  // e^(z + w) = 1 + z + z c / (2 - c) + w (1 + z) to first order in w; c as in exp_inl.hpp.
  const vec<D> z2 = hn::Mul(z, z);
  const vec<D> c = hn::Sub(z, hn::Mul(z2, horner(d, z2, 1.66666666666666019037e-01, -2.77777777770155933842e-03,
                                                 6.61375632143793436117e-05, -1.65339022054652515390e-06,
                                                 4.13813679705723846039e-08)));
  const vec<D> rc = hn::Sub(hn::Div(hn::Mul(z, c), hn::Sub(c, hn::Set(d, 2.0))), hn::Add(w, hn::Mul(z, w)));
  const vec<D> e = hn::Sub(hn::Set(d, 1.0), hn::Sub(rc, z));
  return scale_by_pow2(d, e, nearest_int(d, n));
}

}  // namespace pow_detail

template <class D>
HWY_INLINE vec<D> pow(D d, vec<D> x, vec<D> y) {
  const vec<D> zero = hn::Zero(d);
  const vec<D> one = hn::Set(d, 1.0);
  const vec<D> inf = hn::Set(d, HUGE_VAL);
  const vec<D> ax = hn::Abs(x);

  // y integer, y odd (an odd integer is below 2^53; y / 2 of an integer is exact).
  const mask<D> y_finite = is_finite(d, y);
  const vec<D> y_or_one = hn::IfThenElse(y_finite, y, one);
  const mask<D> y_integer = hn::And(y_finite, hn::Eq(hn::Round(y_or_one), y_or_one));
  const vec<D> half_y = hn::Mul(hn::IfThenElseZero(y_integer, y), hn::Set(d, 0.5));
  const mask<D> y_odd = hn::AndNot(hn::Eq(hn::Round(half_y), half_y), y_integer);

  // The general formula for finite x != 0 and finite y, on |x|; other lanes compute on x = y = 1.
  const mask<D> regular = hn::And(hn::And(hn::Gt(ax, zero), is_finite(d, x)), y_finite);
  const vec<D> xr = hn::IfThenElse(regular, ax, one);
  const vec<D> y_limit = hn::Set(d, 0x1p64);
  vec<D> yr = hn::IfThenElse(regular, y, one);
  yr = hn::IfThenElse(hn::Gt(hn::Abs(yr), y_limit), hn::CopySignToAbs(y_limit, yr), yr);
  const double_double<D> l = pow_detail::log2_double_double(d, xr);
  // y log2|x| = p_hi + p_lo with y_hi l.hi exact.
  const vec<D> y_hi = pow_detail::high_half(d, yr);
  const vec<D> p_hi = hn::Mul(y_hi, l.hi);
  const vec<D> p_lo = hn::Add(hn::Mul(hn::Sub(yr, y_hi), l.hi), hn::Mul(yr, l.lo));
  const vec<D> p = hn::Add(p_hi, p_lo);
  // Beyond +-1100 the result overflows or underflows whatever the rounding: those lanes take 2^0.
  const vec<D> p_limit = hn::Set(d, 1100.0);
  const mask<D> p_in_range = hn::And(hn::Le(p, p_limit), hn::Ge(p, hn::Neg(p_limit)));
  const vec<D> core = pow_detail::exp2_double_double(d, hn::IfThenElseZero(p_in_range, p_hi),
                                                     hn::IfThenElseZero(p_in_range, p_lo));
  vec<D> magnitude = hn::IfThenElse(p_in_range, core, hn::IfThenElse(hn::Gt(p, zero), inf, zero));

  // x = +-0 or +-inf with finite y: 0 or inf by the sign of y; the sign of x is applied below.
  const mask<D> y_negative = hn::Lt(y, zero);
  magnitude = hn::IfThenElse(hn::Eq(x, zero), hn::IfThenElse(y_negative, inf, zero), magnitude);
  magnitude = hn::IfThenElse(is_inf(d, x), hn::IfThenElse(y_negative, zero, inf), magnitude);
  // Finite x < 0 with finite non-integer y: NaN.
  const vec<D> nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  const mask<D> negative_finite_x = hn::And(hn::Lt(x, zero), is_finite(d, x));
  magnitude = hn::IfThenElse(hn::And(negative_finite_x, hn::AndNot(y_integer, y_finite)), nan, magnitude);
  // y = +-inf: 1 for |x| = 1, inf where |x| > 1 and y > 0 or |x| < 1 and y < 0, 0 otherwise.
  const mask<D> grows = hn::Or(hn::And(hn::Gt(ax, one), hn::Gt(y, zero)), hn::And(hn::Lt(ax, one), y_negative));
  magnitude = hn::IfThenElse(is_inf(d, y), hn::IfThenElse(hn::Eq(ax, one), one, hn::IfThenElse(grows, inf, zero)),
                             magnitude);

  // The sign of x where y is an odd integer; then NaN arguments, then the cases that are 1 even for NaN.
  vec<D> result = hn::Or(magnitude, hn::IfThenElseZero(y_odd, sign_bit(d, x)));
  result = hn::IfThenElse(is_nan(d, y), y, hn::IfThenElse(is_nan(d, x), x, result));
  return hn::IfThenElse(hn::Or(hn::Eq(y, zero), hn::Eq(x, one)), one, result);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
