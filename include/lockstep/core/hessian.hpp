// lockstep/core/hessian.hpp — second-order forward AD that forms one half of a symmetric Hessian.
//
// A hessian_dual<T, N> carries, for a scalar f of N seeded inputs, the value f, the gradient f_i and
// the second derivatives f_ij for i <= j only: the upper triangle, packed row by row. Every operation
// propagates these three orders exactly (to round-off), so evaluating lambda . Phi(t, q) on it yields the
// Hessian d(G^T lambda)/dq in one pass over a chunk of directions (model/derivatives.hpp).
//
// Why not nested duals: dual<dual<T, N>, N> carries the same information in N^2 + 2N + 1 parts, forming
// f_ij and f_ji separately (and, as derivatives.hpp used it, a column for t nobody reads); this type
// carries 1 + N + N (N + 1) / 2 parts — 45 instead of 81 for N = 8 — and so does about half the work per
// operation. This is the direct multivariate propagation of second-order (tensor) coefficients in
// forward mode: Griewank & Walther, Evaluating Derivatives, 2nd ed. (SIAM 2008), ch. 13 (Taylor and
// tensor coefficients), which also discusses obtaining the same coefficients from univariate Taylor
// propagations along directions; for the chunk sizes used here the direct form is simpler and exact.
//
// The rules (a, b the arguments with parts v, g_i, h_ij):
//   a * b:   h_ij = a_ij b + a b_ij + a_i b_j + a_j b_i
//   a / b:   r = a / b,  r_i = (a_i - r b_i) / b,  r_ij = (a_ij - r b_ij - r_i b_j - r_j b_i) / b
//            (from a = r b differentiated twice)
//   f(a):    r_i = f'(a) a_i,  r_ij = f'(a) a_ij + f''(a) a_i a_j      (detail::chain2, every unary f)
//   f(a, b): r_ij = f_a a_ij + f_b b_ij + f_aa a_i a_j + f_ab (a_i b_j + a_j b_i) + f_bb b_i b_j
//                                                                      (detail::chain2, atan2 and pow)
//
// Like dual<T, N>: plain data, no allocation, no exceptions, no recursion, host and device (LOCKSTEP_HD);
// comparisons and branches follow the value, as the primal program would.
#pragma once

#include <type_traits>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep {

template <class T, int N>
struct hessian_dual;

template <class T, int N>
struct is_ad_number<hessian_dual<T, N>> : std::true_type {};

// The compound assignments, the mixed forms with constants and the comparisons are shared with dual
// (ad_number_arithmetic, dual.hpp).
template <class T, int N>
struct hessian_dual : ad_number_arithmetic<hessian_dual<T, N>, T> {
  static_assert(N >= 1, "a hessian_dual needs at least one direction");
  using value_type = T;
  static constexpr int directions = N;
  static constexpr int packed = N * (N + 1) / 2;  // entries of the upper triangle, diagonal included

  T v{};          // the value
  T g[N]{};       // g[i] = df / dx_i
  T h[packed]{};  // h[packed_index(i, j)] = d^2 f / dx_i dx_j for i <= j

  // Row-major upper triangle: row i starts after the N + (N - 1) + ... + (N - i + 1) entries above it.
  LOCKSTEP_HD static constexpr int packed_index(int i, int j) { return i * N - i * (i - 1) / 2 + (j - i); }

  hessian_dual() = default;
  LOCKSTEP_HD hessian_dual(const T& value) : v(value) {}  // NOLINT: a constant converts implicitly
  template <class S>
    requires(is_plain_number_v<S> && !std::is_same_v<S, T>)
  LOCKSTEP_HD hessian_dual(S value) : v(T(value)) {}  // NOLINT

  // A variable: value x, gradient the unit vector along `direction`, second derivatives 0.
  LOCKSTEP_HD static hessian_dual variable(const T& x, int direction) {
    hessian_dual r(x);
    r.g[direction] = T(1.0);
    return r;
  }

  // d^2 f / dx_i dx_j for any i, j (the stored half serves both).
  LOCKSTEP_HD const T& second(int i, int j) const { return i <= j ? h[packed_index(i, j)] : h[packed_index(j, i)]; }

  LOCKSTEP_HD friend hessian_dual operator-(const hessian_dual& a) {
    hessian_dual r;
    r.v = -a.v;
    for (int i = 0; i < N; ++i) r.g[i] = -a.g[i];
    for (int k = 0; k < packed; ++k) r.h[k] = -a.h[k];
    return r;
  }

  LOCKSTEP_HD friend hessian_dual operator+(const hessian_dual& a, const hessian_dual& b) {
    hessian_dual r;
    r.v = a.v + b.v;
    for (int i = 0; i < N; ++i) r.g[i] = a.g[i] + b.g[i];
    for (int k = 0; k < packed; ++k) r.h[k] = a.h[k] + b.h[k];
    return r;
  }
  LOCKSTEP_HD friend hessian_dual operator-(const hessian_dual& a, const hessian_dual& b) {
    hessian_dual r;
    r.v = a.v - b.v;
    for (int i = 0; i < N; ++i) r.g[i] = a.g[i] - b.g[i];
    for (int k = 0; k < packed; ++k) r.h[k] = a.h[k] - b.h[k];
    return r;
  }
  LOCKSTEP_HD friend hessian_dual operator*(const hessian_dual& a, const hessian_dual& b) {
    hessian_dual r;
    r.v = a.v * b.v;
    for (int i = 0; i < N; ++i) r.g[i] = a.g[i] * b.v + a.v * b.g[i];
    int k = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j, ++k)
        r.h[k] = a.h[k] * b.v + a.v * b.h[k] + (a.g[i] * b.g[j] + a.g[j] * b.g[i]);
    return r;
  }
  LOCKSTEP_HD friend hessian_dual operator/(const hessian_dual& a, const hessian_dual& b) {
    hessian_dual r;
    r.v = a.v / b.v;
    for (int i = 0; i < N; ++i) r.g[i] = (a.g[i] - r.v * b.g[i]) / b.v;
    int k = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j, ++k)
        r.h[k] = (a.h[k] - r.v * b.h[k] - (r.g[i] * b.g[j] + r.g[j] * b.g[i])) / b.v;
    return r;
  }

  // Scaled by the value type T (the other mixed forms: ad_number_arithmetic).
  LOCKSTEP_HD friend hessian_dual operator*(const hessian_dual& a, const T& b) {
    hessian_dual r;
    r.v = a.v * b;
    for (int i = 0; i < N; ++i) r.g[i] = a.g[i] * b;
    for (int k = 0; k < packed; ++k) r.h[k] = a.h[k] * b;
    return r;
  }
  LOCKSTEP_HD friend hessian_dual operator/(const hessian_dual& a, const T& b) {
    hessian_dual r;
    r.v = a.v / b;
    for (int i = 0; i < N; ++i) r.g[i] = a.g[i] / b;
    for (int k = 0; k < packed; ++k) r.h[k] = a.h[k] / b;
    return r;
  }
};

// ---- value extraction (comparisons follow the value too: dual.hpp) ----

template <class T, int N>
LOCKSTEP_HD double value_of(const hessian_dual<T, N>& a) {
  return value_of(a.v);
}

// Comparisons: dual.hpp's, for every is_ad_number.

// Finite when the value and every first and second derivative part are.
template <class T, int N>
LOCKSTEP_HD bool is_finite(const hessian_dual<T, N>& a) {
  bool ok = is_finite(a.v);
  for (int i = 0; i < N; ++i) ok = ok && is_finite(a.g[i]);
  for (int k = 0; k < hessian_dual<T, N>::packed; ++k) ok = ok && is_finite(a.h[k]);
  return ok;
}

// ---- the second-order chain rule, written once ----

namespace detail {

// f(a) from f(a.v), f'(a.v), f''(a.v): r_i = f' a_i, r_ij = f' a_ij + f'' a_i a_j. Every unary function
// below supplies only its three Taylor coefficients.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> chain2(const hessian_dual<T, N>& a, const T& f, const T& f1, const T& f2) {
  hessian_dual<T, N> r;
  r.v = f;
  for (int i = 0; i < N; ++i) r.g[i] = f1 * a.g[i];
  int k = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j, ++k) r.h[k] = f1 * a.h[k] + f2 * (a.g[i] * a.g[j]);
  return r;
}

// The partial derivatives of a function of two arguments at (a.v, b.v).
template <class T>
struct partials2 {
  T f, fa, fb, faa, fab, fbb;
};

// f(a, b): r_i = f_a a_i + f_b b_i,
//          r_ij = f_a a_ij + f_b b_ij + f_aa a_i a_j + f_ab (a_i b_j + a_j b_i) + f_bb b_i b_j.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> chain2(const hessian_dual<T, N>& a, const hessian_dual<T, N>& b, const partials2<T>& d) {
  hessian_dual<T, N> r;
  r.v = d.f;
  for (int i = 0; i < N; ++i) r.g[i] = d.fa * a.g[i] + d.fb * b.g[i];
  int k = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j, ++k)
      r.h[k] = d.fa * a.h[k] + d.fb * b.h[k] + d.faa * (a.g[i] * a.g[j]) +
               d.fab * (a.g[i] * b.g[j] + a.g[j] * b.g[i]) + d.fbb * (b.g[i] * b.g[j]);
  return r;
}

}  // namespace detail

// ---- elementary functions: f, f', f'' at the value ----

template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> sqrt(const hessian_dual<T, N>& a) {
  const T s = sqrt(a.v);
  const T f1 = T(0.5) / s;                   // 1 / (2 sqrt x)
  return detail::chain2(a, s, f1, -(f1 * f1) / s);  // -1 / (4 x^(3/2))
}
// sin and cos need both of the value: one sin_cos, as for dual numbers (core/dual.hpp says why).
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> sin(const hessian_dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return detail::chain2(a, v.sine, v.cosine, -v.sine);
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> cos(const hessian_dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return detail::chain2(a, v.cosine, -v.sine, -v.cosine);
}
// Both at once: the results of sin(a) and cos(a) above, bitwise.
template <class T, int N>
LOCKSTEP_HD sine_cosine<hessian_dual<T, N>> sin_cos(const hessian_dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return {detail::chain2(a, v.sine, v.cosine, -v.sine), detail::chain2(a, v.cosine, -v.sine, -v.cosine)};
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> tan(const hessian_dual<T, N>& a) {
  const T t = tan(a.v);
  const T f1 = T(1.0) + t * t;                            // sec^2 x
  return detail::chain2(a, t, f1, T(2.0) * t * f1);       // 2 tan x sec^2 x
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> asin(const hessian_dual<T, N>& a) {
  const T f1 = T(1.0) / sqrt(T(1.0) - a.v * a.v);        // (1 - x^2)^(-1/2)
  return detail::chain2(a, asin(a.v), f1, a.v * f1 * f1 * f1);  // x (1 - x^2)^(-3/2)
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> acos(const hessian_dual<T, N>& a) {
  const T f1 = T(1.0) / sqrt(T(1.0) - a.v * a.v);
  return detail::chain2(a, acos(a.v), -f1, -(a.v * f1 * f1 * f1));
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> atan(const hessian_dual<T, N>& a) {
  const T f1 = T(1.0) / (T(1.0) + a.v * a.v);                // 1 / (1 + x^2)
  return detail::chain2(a, atan(a.v), f1, T(-2.0) * a.v * f1 * f1);  // -2x / (1 + x^2)^2
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> exp(const hessian_dual<T, N>& a) {
  const T e = exp(a.v);
  return detail::chain2(a, e, e, e);
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> log(const hessian_dual<T, N>& a) {
  const T f1 = T(1.0) / a.v;
  return detail::chain2(a, log(a.v), f1, -(f1 * f1));
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> abs(const hessian_dual<T, N>& a) {
  return a.v < T(0.0) ? -a : a;
}

// x^p with a constant exponent: f' = p x^(p-1), f'' = p (p-1) x^(p-2). The derivative whose coefficient
// vanishes identically (p = 0: both; p = 1: the second) is 0 exactly, so x^1 and x^0 stay finite at x = 0
// where x^(p-1) or x^(p-2) is infinite (dual.hpp's pow is finite at 0 for p >= 1 in the same way).
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> pow(const hessian_dual<T, N>& a, double p) {
  const T f1 = p == 0.0 ? T(0.0) : T(p) * pow(a.v, p - 1.0);
  const T f2 = (p == 0.0 || p == 1.0) ? T(0.0) : T(p * (p - 1.0)) * pow(a.v, p - 2.0);
  return detail::chain2(a, pow(a.v, p), f1, f2);
}
// x^y = exp(y log x), for x > 0 as the real function: with f = x^y and L = log x,
//   f_x = y f / x, f_y = f L, f_xx = y (y - 1) f / x^2, f_xy = f (1 + y L) / x, f_yy = f L^2.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> pow(const hessian_dual<T, N>& a, const hessian_dual<T, N>& b) {
  const T f = pow(a.v, b.v);
  const T L = log(a.v);
  const T x = a.v, y = b.v;
  const detail::partials2<T> d{f,
                               y * f / x,
                               f * L,
                               y * (y - T(1.0)) * f / (x * x),
                               f * (T(1.0) + y * L) / x,
                               f * L * L};
  return detail::chain2(a, b, d);
}
// c^y with a constant base c > 0: f' = c^y log c, f'' = c^y (log c)^2.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> pow(double c, const hessian_dual<T, N>& b) {
  const T f = pow(T(c), b.v);
  const T L = T(log(c));
  return detail::chain2(b, f, f * L, f * L * L);
}

// atan2(y, x) with r2 = x^2 + y^2: f_y = x / r2, f_x = -y / r2, f_yy = -2xy / r2^2, f_xx = 2xy / r2^2,
// f_yx = (y^2 - x^2) / r2^2.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> atan2(const hessian_dual<T, N>& y, const hessian_dual<T, N>& x) {
  const T r2 = x.v * x.v + y.v * y.v;
  const T r4 = r2 * r2;
  const T xy2 = T(2.0) * x.v * y.v;
  const detail::partials2<T> d{atan2(y.v, x.v), x.v / r2, -y.v / r2, -xy2 / r4, (y.v * y.v - x.v * x.v) / r4, xy2 / r4};
  return detail::chain2(y, x, d);
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> atan2(const hessian_dual<T, N>& y, double x) {
  return atan2(y, hessian_dual<T, N>(x));
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> atan2(double y, const hessian_dual<T, N>& x) {
  return atan2(hessian_dual<T, N>(y), x);
}

// min and max follow the value, as the primal program would branch.
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> min(const hessian_dual<T, N>& a, const hessian_dual<T, N>& b) {
  return b.v < a.v ? b : a;
}
template <class T, int N>
LOCKSTEP_HD hessian_dual<T, N> max(const hessian_dual<T, N>& a, const hessian_dual<T, N>& b) {
  return a.v < b.v ? b : a;
}

}  // namespace lockstep
