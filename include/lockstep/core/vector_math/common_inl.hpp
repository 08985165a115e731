// lockstep/core/vector_math/common_inl.hpp — building blocks of lockstep's vector math: exact IEEE operations
// on Highway packs of doubles, and nothing else.
//
// Every function of lockstep/core/vector_math is a template over a Highway descriptor `D` of doubles
// (hn::CappedTag<double, W> for W = 1, 2, 4, 8, or hn::ScalableTag<double>) and is compiled once per
// instruction set by Highway's foreach_target mechanism. A lane's result must be the same bits for every
// W and every instruction set (docs/SIMD.md), which this layer guarantees by construction:
//
//  - arithmetic is Add, Sub, Mul, Div and Sqrt only, each one correctly rounded IEEE operation; never
//    MulAdd, NegMulAdd or MulSub (fused on AVX2 and AVX-512, not on SSE4 or the scalar target), and the
//    translation units are compiled with -ffp-contract=off;
//  - conversions, shifts, bitwise operations, comparisons and IfThenElse only move bits; but never
//    hn::Ne on doubles: Highway 1.0.3 implements it as an ordered comparison on AVX2 and AVX-512
//    (_CMP_NEQ_OQ: false when an operand is NaN) and as C's != elsewhere (true), so NaN lanes would
//    take different paths on different instruction sets. NaN is tested with hn::IsNaN, and every other
//    comparison (Eq, Lt, Le, Gt, Ge) is false for NaN on every target;
//  - no code path is chosen by AllTrue/AllFalse over the lanes, except to skip work whose result every
//    lane would discard (then skipping it changes no lane's bits);
//  - a lane that takes a special-case result still computes the general formula, on an argument
//    replaced by a harmless one first, so no lane raises FP exceptions or stalls on subnormals for the
//    sake of a value that is discarded.
//
// Two target differences of Highway 1.0.3 that the rules above make harmless, noted for whoever extends
// this code: Round on SSSE3 adds and subtracts 2^52, so a negative value that rounds to zero gives +0
// there and -0 elsewhere (every use here absorbs the zero's sign: never depend on it); and Lt, Le, Gt
// and Ge are signaling comparisons on SSE4 and 128/256-bit AVX2 but quiet on AVX-512, so a quiet NaN
// argument may raise the invalid flag on some targets and not on others. The result bits are the same
// on every target; the flags are guaranteed only for arguments with finite results (tests/simd checks
// those).
//
// This file is re-included once per target (the include guard toggles with HWY_TARGET_TOGGLE, the
// Highway convention for "-inl" headers): include it after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_MATH_COMMON_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_COMMON_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_COMMON_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_COMMON_INL_HPP_
#endif

#include <cmath>
#include <cstdint>
#include <limits>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
using vec = hn::Vec<D>;
template <class D>
using mask = hn::Mask<D>;
template <class D>
using int_tag = hn::RebindToSigned<D>;  // 64-bit signed integer lanes beside the doubles
template <class D>
using int_vec = hn::Vec<int_tag<D>>;

// p(x) = c0 + x (c1 + x (c2 + ...)) by Horner's rule, one rounded multiply and one rounded add per
// coefficient. Coefficients are given lowest degree first.
template <class D>
HWY_INLINE vec<D> horner(D d, vec<D> /*x*/, double c0) {
  return hn::Set(d, c0);
}
template <class D, class... C>
HWY_INLINE vec<D> horner(D d, vec<D> x, double c0, C... rest) {
  return hn::Add(hn::Set(d, c0), hn::Mul(x, horner(d, x, rest...)));
}

// The bits of a double as a signed 64-bit integer, and back.
template <class D>
HWY_INLINE int_vec<D> bits_of(D /*d*/, vec<D> x) {
  return hn::BitCast(int_tag<D>(), x);
}
template <class D>
HWY_INLINE vec<D> from_bits(D d, int_vec<D> i) {
  return hn::BitCast(d, i);
}

template <class D>
HWY_INLINE mask<D> is_nan(D /*d*/, vec<D> x) {
  return hn::IsNaN(x);
}
template <class D>
HWY_INLINE mask<D> is_inf(D d, vec<D> x) {
  return hn::Eq(hn::Abs(x), hn::Set(d, HUGE_VAL));
}
// True where x is neither infinite nor NaN (|x| <= DBL_MAX is false for both).
template <class D>
HWY_INLINE mask<D> is_finite(D d, vec<D> x) {
  return hn::Le(hn::Abs(x), hn::Set(d, 0x1.fffffffffffffp+1023));
}
// The sign bit of x (as a double: -0.0 or +0.0), for copying with Xor/Or.
template <class D>
HWY_INLINE vec<D> sign_bit(D d, vec<D> x) {
  return hn::And(x, hn::Set(d, -0.0));
}

// 2^n for integer lanes n in [-1022, 1023], built from its exponent bits.
template <class D>
HWY_INLINE vec<D> pow2_normal(D d, int_vec<D> n) {
  const int_tag<D> di;
  return from_bits(d, hn::ShiftLeft<52>(hn::Add(n, hn::Set(di, int64_t{1023}))));
}

// x 2^n for integer lanes n in [-2044, 2046], rounded once: the product by 2^(n - n/2) is exact while
// x 2^(n/2) stays normal, so only the second product rounds (into the subnormals or to infinity). This
// is ldexp without a branch, for every x whose exponent plus n lands anywhere, overflow included.
template <class D>
HWY_INLINE vec<D> scale_by_pow2(D d, vec<D> x, int_vec<D> n) {
  const int_vec<D> half = hn::ShiftRight<1>(n);  // arithmetic shift: floor(n / 2)
  return hn::Mul(hn::Mul(x, pow2_normal(d, hn::Sub(n, half))), pow2_normal(d, half));
}

// The nearest integer (ties to even) of a double lane as a 64-bit integer; callers bound |x| first.
template <class D>
HWY_INLINE int_vec<D> nearest_int(D /*d*/, vec<D> x) {
  return hn::ConvertTo(int_tag<D>(), hn::Round(x));
}

// Error-free transformations (Knuth, The Art of Computer Programming vol. 2, 1969, Theorem 4.2.2 B;
// Dekker, "A floating-point technique for extending the available precision", 1971): a + b = s + e and
// a b = p + e exactly, with plain rounded operations (no FMA, by the rules above).
template <class D>
struct double_double {
  vec<D> hi, lo;
};
template <class D>
HWY_INLINE double_double<D> two_sum(D /*d*/, vec<D> a, vec<D> b) {
  const vec<D> s = hn::Add(a, b);
  const vec<D> bb = hn::Sub(s, a);
  const vec<D> e = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
  return {s, e};
}
// |a| >= |b| (or a = 0): three operations instead of six.
template <class D>
HWY_INLINE double_double<D> fast_two_sum(D /*d*/, vec<D> a, vec<D> b) {
  const vec<D> s = hn::Add(a, b);
  return {s, hn::Sub(b, hn::Sub(s, a))};
}
// Veltkamp's split a = hi + lo with hi of 26 significant bits, so that products of halves are exact.
// Valid for |a| < 2^996 (the product by 2^27 + 1 must not overflow).
template <class D>
HWY_INLINE double_double<D> split(D d, vec<D> a) {
  const vec<D> c = hn::Mul(hn::Set(d, 134217729.0), a);  // 2^27 + 1
  const vec<D> hi = hn::Sub(c, hn::Sub(c, a));
  return {hi, hn::Sub(a, hi)};
}
template <class D>
HWY_INLINE double_double<D> two_product(D d, vec<D> a, vec<D> b) {
  const vec<D> p = hn::Mul(a, b);
  const double_double<D> as = split(d, a), bs = split(d, b);
  const vec<D> e = hn::Add(
      hn::Add(hn::Add(hn::Sub(hn::Mul(as.hi, bs.hi), p), hn::Mul(as.hi, bs.lo)), hn::Mul(as.lo, bs.hi)),
      hn::Mul(as.lo, bs.lo));
  return {p, e};
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
