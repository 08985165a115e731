// lockstep/core/vector_math/sqrt_inl.hpp — the square root on packs of doubles: IEEE 754's correctly rounded
// square root (sqrtpd, or the scalar sqrtsd), so the same bits as std::sqrt on every width and
// instruction set; named here so that models call sqrt on packs as they do on doubles.
// Special values (C99 Annex F.10.4.5): sqrt(+-0) = +-0, sqrt(+inf) = +inf, sqrt(x < 0) = NaN.
#if defined(LOCKSTEP_SIMD_MATH_SQRT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MATH_SQRT_INL_HPP_
#undef LOCKSTEP_SIMD_MATH_SQRT_INL_HPP_
#else
#define LOCKSTEP_SIMD_MATH_SQRT_INL_HPP_
#endif

#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

template <class D>
HWY_INLINE vec<D> sqrt(D /*d*/, vec<D> x) {
  return hn::Sqrt(x);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
