// lockstep/core/vector_math/log_inl.hpp — the natural logarithm on packs of doubles, within 1 ulp, the same
// bits on every width and instruction set (rules: common_inl.hpp).
//
// The method is the one of Sun's fdlibm (e_log.c, 1993), written without branches:
//   1. reduction  x = 2^k (1 + f) with sqrt(2)/2 <= 1 + f < sqrt(2), read from the bits (subnormal x is
//      first multiplied by 2^54);
//   2. log(1 + f) = f - s (f - R) with s = f / (2 + f) and R = s^2 (Lg1 + Lg2 s^2 + ... + Lg7 s^14) the
//      degree-14 minimax approximation of fdlibm (|error| < 2^-58.45), or, for the larger f where it is
//      more accurate, f - (f^2/2 - s (f^2/2 + R)): both are computed in every lane and selected per lane
//      by fdlibm's own criterion on the leading bits of 1 + f;
//   3. log x = k ln2_hi + (log(1 + f) + k ln2_lo), ln2_hi with trailing zeros so that k ln2_hi is exact.
// Special values (C99 Annex F.10.3.7): log(+-0) = -inf, log(1) = +0, log(x < 0) = NaN, log(+inf) = +inf,
// log(NaN) = NaN.
#if defined(LOCKSTEP_SIMD_MATH_LOG_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_LOG_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_LOG_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_LOG_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

template <class D>
HWY_INLINE vec<D> log(D d, vec<D> x) {
  const int_tag<D> di;
  constexpr double ln2_hi = 0x1.62e42feep-1;
  constexpr double ln2_lo = 0x1.a39ef35793c76p-33;

  // Lanes with no finite logarithm (x <= 0, +inf, NaN) continue with x = 1; their results are set below.
  const mask<D> regular = hn::And(hn::Gt(x, hn::Zero(d)), is_finite(d, x));
  vec<D> xr = hn::IfThenElse(regular, x, hn::Set(d, 1.0));
  const mask<D> subnormal = hn::Lt(xr, hn::Set(d, 0x1p-1022));
  xr = hn::Mul(xr, hn::IfThenElse(subnormal, hn::Set(d, 0x1p54), hn::Set(d, 1.0)));  // no overflow elsewhere
  int_vec<D> k = hn::IfThenElseZero(hn::RebindMask(di, subnormal), hn::Set(di, int64_t{-54}));

  // k += exponent; the significand's top 20 bits decide whether 1 + f is taken in [1, 2) or halved.
  const int_vec<D> bits = bits_of(d, xr);
  const int_vec<D> high_mantissa = hn::And(hn::ShiftRight<32>(bits), hn::Set(di, int64_t{0x000fffff}));
  k = hn::Add(k, hn::Sub(hn::ShiftRight<52>(bits), hn::Set(di, int64_t{1023})));
  // i = 0x100000 where the significand is at least sqrt(2) (0x6a09e is its top 20 bits, rounded):
  const int_vec<D> i = hn::And(hn::Add(high_mantissa, hn::Set(di, int64_t{0x95f64})), hn::Set(di, int64_t{0x100000}));
  const int_vec<D> exponent_field = hn::Xor(i, hn::Set(di, int64_t{0x3ff00000}));  // 1 or 1/2
  const vec<D> m = from_bits(d, hn::Or(hn::And(bits, hn::Set(di, int64_t{0x000fffffffffffff})),
                                       hn::ShiftLeft<32>(exponent_field)));
  k = hn::Add(k, hn::ShiftRight<20>(i));
  const vec<D> f = hn::Sub(m, hn::Set(d, 1.0));

  const vec<D> s = hn::Div(f, hn::Add(hn::Set(d, 2.0), f));
  const vec<D> dk = hn::ConvertTo(d, k);
  const vec<D> z = hn::Mul(s, s);
  const vec<D> w = hn::Mul(z, z);
  const vec<D> t1 = hn::Mul(w, horner(d, w, 3.999999999940941908e-01, 2.222219843214978396e-01,
                                      1.531383769920937332e-01));
  const vec<D> t2 = hn::Mul(z, horner(d, w, 6.666666666666735130e-01, 2.857142874366239149e-01,
                                      1.818357216161805012e-01, 1.479819860511658591e-01));
  const vec<D> R = hn::Add(t2, t1);
  const vec<D> k_hi = hn::Mul(dk, hn::Set(d, ln2_hi));
  const vec<D> k_lo = hn::Mul(dk, hn::Set(d, ln2_lo));

  // fdlibm's choice: the f^2/2 form where the top bits of the significand lie in (0x6147a, 0x6b851).
  const mask<D> large_f = hn::RebindMask(d, hn::And(hn::Gt(high_mantissa, hn::Set(di, int64_t{0x6147a})),
                                                    hn::Lt(high_mantissa, hn::Set(di, int64_t{0x6b851}))));
  const vec<D> half_f2 = hn::Mul(hn::Mul(hn::Set(d, 0.5), f), f);
  const vec<D> with_half_f2 =
      hn::Sub(k_hi, hn::Sub(hn::Sub(half_f2, hn::Add(hn::Mul(s, hn::Add(half_f2, R)), k_lo)), f));
  const vec<D> without = hn::Sub(k_hi, hn::Sub(hn::Sub(hn::Mul(s, hn::Sub(f, R)), k_lo), f));
  const vec<D> result = hn::IfThenElse(large_f, with_half_f2, without);

  // x = +-0: -inf; x < 0 or NaN: NaN; +inf: +inf.
  const vec<D> nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  const vec<D> special = hn::IfThenElse(
      hn::Eq(x, hn::Zero(d)), hn::Set(d, -HUGE_VAL),
      hn::IfThenElse(hn::Eq(x, hn::Set(d, HUGE_VAL)), x, hn::IfThenElse(is_nan(d, x), x, nan)));
  return hn::IfThenElse(regular, result, special);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
