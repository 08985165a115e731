// tests/simd/math_harness_inl.hpp — the per-target half of the vector math tests: evaluates one
// function of lockstep/simd/math over an array at a chosen pack width W (1, 2, 4 or 8) with the
// instruction set of the target being compiled. Re-included once per target (foreach_target); the
// target-independent half, which runs every variant and compares them, is math_harness.hpp.
//
// A test file defines, per function, a functor with `template <class D> vec<D> operator()(D, vec<D> x,
// vec<D> y) const` and an exported entry point made by LOCKSTEP_SIMD_TEST_ENTRY(name, functor).
#if defined(LOCKSTEP_TESTS_SIMD_MATH_HARNESS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_TESTS_SIMD_MATH_HARNESS_INL_HPP_
#undef LOCKSTEP_TESTS_SIMD_MATH_HARNESS_INL_HPP_
#else
#define LOCKSTEP_TESTS_SIMD_MATH_HARNESS_INL_HPP_
#endif

#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = f(x[i], y[i]) in packs of exactly W lanes; false when this target has fewer than W lanes.
// n must be a multiple of 8.
template <size_t W, class F>
HWY_NOINLINE bool apply_at_width(F f, const double* x, const double* y, double* out, size_t n) {
  const hn::CappedTag<double, W> d;
  if (hn::Lanes(d) != W) return false;
  for (size_t i = 0; i < n; i += W) hn::StoreU(f(d, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, out + i);
  return true;
}
template <class F>
HWY_INLINE bool apply(F f, const double* x, const double* y, double* out, size_t n, size_t lanes) {
  switch (lanes) {
    case 1: return apply_at_width<1>(f, x, y, out, n);
    case 2: return apply_at_width<2>(f, x, y, out, n);
    case 4: return apply_at_width<4>(f, x, y, out, n);
    case 8: return apply_at_width<8>(f, x, y, out, n);
    default: return false;
  }
}

}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard

// Defines lockstep::simd_test::HWY_NAMESPACE::NAME(x, y, out, n, lanes) applying FUNCTOR; use inside
// HWY_BEFORE_NAMESPACE / namespace lockstep::simd_test::HWY_NAMESPACE, then HWY_EXPORT(NAME) once.
#ifndef LOCKSTEP_SIMD_TEST_ENTRY
#define LOCKSTEP_SIMD_TEST_ENTRY(NAME, FUNCTOR)                                                 \
  bool NAME(const double* x, const double* y, double* out, size_t n, size_t lanes) {            \
    return apply(FUNCTOR{}, x, y, out, n, lanes);                                               \
  }
#endif
