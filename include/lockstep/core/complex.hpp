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
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
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
    const T den = larger + smaller * r;
    const T re = select(first, a.re + a.im * r, a.re * r + a.im);
    const T im = select(first, a.im - a.re * r, a.im * r - a.re);
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
LOCKSTEP_HD double abs1(double a) { return abs(a); }
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
