// tests/simd/math_harness_inl.hpp — the per-target half of the vector math tests: evaluates one
// function of lockstep/core/vector_math over an array at a chosen pack width W (1, 2, 4 or 8) with the
// instruction set of the target being compiled. Re-included once per target (foreach_target); the
// target-independent half, which runs every variant and compares them, is math_harness.hpp.
//
// A test file defines, per function, an exported entry point: LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(Name, f)
// or LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(Name, f) for a function f of lockstep/core/vector_math, or, for anything
// else, a functor with `template <class D> vec<D> operator()(D, vec<D> x, vec<D> y) const` and
// LOCKSTEP_SIMD_TEST_ENTRY(Name, functor).
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

// NAME applying lockstep/core/vector_math's F to x (y unused), or to (x, y): pow(x, y), and atan2(x, y), whose
// first argument, the harness's x, is the ordinate. HWY_NAMESPACE expands where the macro is used, so
// each target's entry calls that target's F.
#ifndef LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY
#define LOCKSTEP_SIMD_ONE_ARGUMENT_ENTRY(NAME, F)                                                \
  struct NAME##_functor {                                                                        \
    template <class D, class V>                                                                  \
    V operator()(D d, V x, V) const { return lockstep::simd::HWY_NAMESPACE::F(d, x); }           \
  };                                                                                             \
  LOCKSTEP_SIMD_TEST_ENTRY(NAME, NAME##_functor)
#define LOCKSTEP_SIMD_TWO_ARGUMENT_ENTRY(NAME, F)                                                \
  struct NAME##_functor {                                                                        \
    template <class D, class V>                                                                  \
    V operator()(D d, V x, V y) const { return lockstep::simd::HWY_NAMESPACE::F(d, x, y); }      \
  };                                                                                             \
  LOCKSTEP_SIMD_TEST_ENTRY(NAME, NAME##_functor)
#endif
