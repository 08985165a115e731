// lockstep/core/complex.hpp — a minimal complex number usable in device code.
//
// Radau IIA's transformed Newton system has one complex block (Hairer & Wanner IV.8, (8.16)); the
// dense kernels factor it in complex arithmetic. std::complex's operators are host functions under
// nvcc, hence this plain-data type (docs/DESIGN-NOTES.md, "Conventions").
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep {

// A product, kept a rounded product: g++ 12's vectorizer recognizes the pattern of a complex product
// (a.re b.re - a.im b.im, a.re b.im + a.im b.re, and sums of such) and emits a fused multiply-add
// (vfmaddsub) for it where the instruction set has one, although -ffp-contract=off forbids
// contraction; a fused product rounds once where a * b + c rounds twice, so the one-member code of a
// build or model file for AVX2 or AVX-512 would lose the bits of every other build
// (docs/SIMD.md, "Determinism"). __builtin_assoc_barrier (g++ 12) hides the product from the pattern.
// A pack's products are intrinsics, which nothing fuses; CUDA's device code and nvcc's host front end
// take the plain product (nvcc's host compiler is not the one with the pattern on the default build's
// instruction set, which has no fused multiply-add).
LOCKSTEP_HD double rounded_product(double a, double b) {
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && __GNUC__ >= 12
  return __builtin_assoc_barrier(a * b);
#else
  return a * b;
#endif
}
template <class T>
LOCKSTEP_HD T rounded_product(const T& a, const T& b) {
  return a * b;
}

template <class T>
struct complex {
  T re{};
  T im{};

  complex() = default;
  LOCKSTEP_HD complex(const T& r) : re(r) {}  // NOLINT: a real converts implicitly
  LOCKSTEP_HD complex(const T& r, const T& i) : re(r), im(i) {}

  LOCKSTEP_HD friend complex operator+(const complex& a, const complex& b) { return {a.re + b.re, a.im + b.im}; }
  LOCKSTEP_HD friend complex operator-(const complex& a, const complex& b) { return {a.re - b.re, a.im - b.im}; }
  LOCKSTEP_HD friend complex operator-(const complex& a) { return {-a.re, -a.im}; }
  LOCKSTEP_HD friend complex operator*(const complex& a, const complex& b) {
    return {rounded_product(a.re, b.re) - rounded_product(a.im, b.im),
            rounded_product(a.re, b.im) + rounded_product(a.im, b.re)};
  }
  // Smith's algorithm: divides without forming |b|^2, so it neither overflows nor underflows for
  // operands whose quotient is representable (Smith, CACM 5 (1962) 435). Where |b.im| <= |b.re|,
  // r = b.im / b.re and den = b.re + b.im r give ((a.re + a.im r) / den, (a.im - a.re r) / den); else
  // r = b.re / b.im and den = b.im + b.re r give ((a.re r + a.im) / den, (a.im r - a.re) / den). Both
  // sides by selection (lockstep/core/lane_primitives.hpp), one division for r by the larger part, so
  // that a pack of numbers (complex<pack<D>>) takes each lane's side, and no lane divides by zero for the
  // side it does not take; a double gets the bits of the branch.
  LOCKSTEP_HD friend complex operator/(const complex& a, const complex& b) {
    const auto first = abs(b.im) <= abs(b.re);
    const T larger = select(first, b.re, b.im), smaller = select(first, b.im, b.re);
    const T r = smaller / larger;
    const T den = larger + rounded_product(smaller, r);
    const T re = select(first, a.re + rounded_product(a.im, r), rounded_product(a.re, r) + a.im);
    const T im = select(first, a.im - rounded_product(a.re, r), rounded_product(a.im, r) - a.re);
    return {re / den, im / den};
  }
  LOCKSTEP_HD complex& operator+=(const complex& b) { return *this = *this + b; }
  LOCKSTEP_HD complex& operator-=(const complex& b) { return *this = *this - b; }
  LOCKSTEP_HD complex& operator*=(const complex& b) { return *this = *this * b; }
  LOCKSTEP_HD complex& operator/=(const complex& b) { return *this = *this / b; }
};

template <class T>
LOCKSTEP_HD complex<T> conj(const complex<T>& a) {
  return {a.re, -a.im};
}
// |re| + |im|: the pivot magnitude LAPACK's complex LU uses (its CABS1), cheaper than the modulus
// and equivalent up to a factor sqrt(2).
template <class T>
LOCKSTEP_HD T abs1(const complex<T>& a) {
  return abs(a.re) + abs(a.im);
}
// A real pivot's magnitude by clearing the sign bit (one instruction, as a pack's:
// lockstep/simd/pack_inl.hpp), where abs keeps abs(-0.0) = -0.0 at the price of a comparison and a
// branch: the LU only compares magnitudes, which no sign of a zero changes.
LOCKSTEP_HD double abs1(double a) { return ::fabs(a); }
// The larger of two magnitudes (abs1's), for the LU's scale (a pack's in one instruction:
// lockstep/simd/pack_inl.hpp).
LOCKSTEP_HD double magnitude_max(double a, double b) { return max(a, b); }

// A complex number's small integers are its parts' (lockstep/core/lane_primitives.hpp).
template <class T>
struct lane_index<complex<T>> : lane_index<T> {};

// Per part, where m holds a, else b (a pack's parts per lane).
template <class M, class T>
LOCKSTEP_HD complex<T> select(const M& m, const complex<T>& a, const complex<T>& b) {
  return {select(m, a.re, b.re), select(m, a.im, b.im)};
}

template <class T>
LOCKSTEP_HD bool is_finite(const complex<T>& a) {
  return is_finite(a.re) && is_finite(a.im);
}

}  // namespace lockstep
