// lockstep/core/dual.hpp — forward-mode automatic differentiation with dual numbers.
//
// A dual<T, N> carries a value and N directional derivatives: x = v + sum_i d_i eps_i with eps_i eps_j = 0.
// Every operation applies the chain rule to the derivative parts, so evaluating a model written for a
// generic scalar on duals seeded with unit directions yields exact (to round-off) Jacobian columns; this
// is how the library derives every Jacobian from a model (docs/ARCHITECTURE.md section 1: models never hand-code a
// derivative). T may itself be a dual: dual<dual<double, 1>, 1> carries second directional derivatives
// (the acceleration term gamma = d^2/ds^2 Phi(t + s, q + s v)).
//
// Directions are a compile-time count; Jacobians are taken in chunks of a few directions
// (model/derivatives.hpp), never n directions nested n deep (docs/DESIGN-NOTES.md, "Conventions").
#pragma once

#include <type_traits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep {

template <class T, int N>
struct dual;

// The tag of the constructor that leaves a dual's parts unset (dual below): `dual r{uninitialized_t{}}`.
struct uninitialized_t {
  explicit uninitialized_t() = default;
};

template <class T>
struct is_dual : std::false_type {};
template <class T, int N>
struct is_dual<dual<T, N>> : std::true_type {};
template <class T>
inline constexpr bool is_dual_v = is_dual<T>::value;

// The scalars a forward-AD number mixes with as constants besides its value type: the arithmetic
// types, and the scalar types that declare themselves so. lockstep/simd/pack_inl.hpp declares its packs,
// so that nested duals over packs take pack parameters exactly as nested duals over doubles take double
// ones (the same operations: the constant promoted with zero derivatives, then the value type's).
template <class S>
struct is_plain_number : std::is_arithmetic<S> {};
template <class S>
inline constexpr bool is_plain_number_v = is_plain_number<S>::value;

// A forward-AD number: dual here, hessian_dual (core/hessian.hpp) specializes it too. Comparisons with
// one compare values (below).
template <class T>
struct is_ad_number : is_dual<T> {};
template <class T>
inline constexpr bool is_ad_number_v = is_ad_number<T>::value;

// What every forward-AD number Self over the value type T shares, whatever derivative parts it carries:
// compound assignment, unary plus, addition and subtraction of a constant (only the value changes),
// the mixed forms that reduce to Self's own operators, and the mixed forms with plain numbers. Self
// supplies its member `v`, unary minus, + - * / with itself and * / with T. An empty base: it adds no
// storage and keeps Self plain data.
template <class Self, class T>
struct ad_number_arithmetic {
  LOCKSTEP_HD Self& operator+=(const Self& b) { return self() = self() + b; }
  LOCKSTEP_HD Self& operator-=(const Self& b) { return self() = self() - b; }
  LOCKSTEP_HD Self& operator*=(const Self& b) { return self() = self() * b; }
  LOCKSTEP_HD Self& operator/=(const Self& b) { return self() = self() / b; }

  LOCKSTEP_HD friend Self operator+(const Self& a) { return a; }

  // Mixed with the value type T (cheaper than promoting T to Self).
  LOCKSTEP_HD friend Self operator+(const Self& a, const T& b) {
    Self r = a;
    r.v = a.v + b;
    return r;
  }
  LOCKSTEP_HD friend Self operator+(const T& a, const Self& b) { return b + a; }
  LOCKSTEP_HD friend Self operator-(const Self& a, const T& b) {
    Self r = a;
    r.v = a.v - b;
    return r;
  }
  LOCKSTEP_HD friend Self operator-(const T& a, const Self& b) {
    Self r = -b;
    r.v = a - b.v;
    return r;
  }
  LOCKSTEP_HD friend Self operator*(const T& a, const Self& b) { return b * a; }
  LOCKSTEP_HD friend Self operator/(const T& a, const Self& b) { return Self(a) / b; }

  // Mixed with plain numbers (is_plain_number). Templates so that, for nested duals, `x * 2.0` is an
  // exact match here instead of an ambiguous choice between two user-defined conversions.
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator+(const Self& a, S b) { return a + T(b); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator+(S a, const Self& b) { return b + T(a); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator-(const Self& a, S b) { return a - T(b); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator-(S a, const Self& b) { return T(a) - b; }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator*(const Self& a, S b) { return a * T(b); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator*(S a, const Self& b) { return b * T(a); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator/(const Self& a, S b) { return a / T(b); }
  template <class S>
    requires is_plain_number_v<S>
  LOCKSTEP_HD friend Self operator/(S a, const Self& b) { return T(a) / b; }

 private:
  LOCKSTEP_HD Self& self() { return static_cast<Self&>(*this); }
};

template <class T, int N>
struct dual : ad_number_arithmetic<dual<T, N>, T> {
  static_assert(N >= 1, "a dual number needs at least one direction");
  using value_type = T;
  static constexpr int directions = N;

  T v;     // the value
  T d[N];  // d[i]: derivative along direction i

  // A default dual is zero in every part, as a value-initialized scalar is.
  LOCKSTEP_HD dual() : v(), d() {}
  // Parts left unset, for the operations below, which write all of them: zeroing first is dead work
  // that the compiler removes for doubles in registers, but not always for SIMD packs (lockstep/simd/
  // pack_inl.hpp), where a dual of eight directions is nine 64-byte vectors in memory (docs/SIMD.md,
  // "Where the time would go": a fifth of the car axis's evaluation at eight lanes).
  LOCKSTEP_HD explicit dual(uninitialized_t) {}
  LOCKSTEP_HD dual(const T& value) : v(value), d() {}  // NOLINT: a constant converts implicitly
  template <class S>
    requires(is_plain_number_v<S> && !std::is_same_v<S, T>)
  LOCKSTEP_HD dual(S value) : v(T(value)), d() {}  // NOLINT

  // A variable: value x with derivative 1 along `direction`, 0 along the others.
  LOCKSTEP_HD static dual variable(const T& x, int direction) {
    dual r(x);
    r.d[direction] = T(1.0);
    return r;
  }

  LOCKSTEP_HD friend dual operator-(const dual& a) {
    dual r{uninitialized_t{}};
    r.v = -a.v;
    for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
    return r;
  }

  LOCKSTEP_HD friend dual operator+(const dual& a, const dual& b) {
    dual r{uninitialized_t{}};
    r.v = a.v + b.v;
    for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
    return r;
  }
  LOCKSTEP_HD friend dual operator-(const dual& a, const dual& b) {
    dual r{uninitialized_t{}};
    r.v = a.v - b.v;
    for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
    return r;
  }
  LOCKSTEP_HD friend dual operator*(const dual& a, const dual& b) {
    dual r{uninitialized_t{}};
    r.v = a.v * b.v;
    for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
    return r;
  }
  LOCKSTEP_HD friend dual operator/(const dual& a, const dual& b) {
    dual r{uninitialized_t{}};
    r.v = a.v / b.v;
    for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) / b.v;
    return r;
  }

  // Scaled by the value type T (the other mixed forms: ad_number_arithmetic).
  LOCKSTEP_HD friend dual operator*(const dual& a, const T& b) {
    dual r{uninitialized_t{}};
    r.v = a.v * b;
    for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b;
    return r;
  }
  LOCKSTEP_HD friend dual operator/(const dual& a, const T& b) {
    dual r{uninitialized_t{}};
    r.v = a.v / b;
    for (int i = 0; i < N; ++i) r.d[i] = a.d[i] / b;
    return r;
  }
};

// ---- value extraction and comparisons (on values only: branches follow the primal computation) ----

template <class T, int N>
LOCKSTEP_HD double value_of(const dual<T, N>& a) {
  return value_of(a.v);
}

template <class A, class B>
  requires(is_ad_number_v<A> || is_ad_number_v<B>)
LOCKSTEP_HD bool operator<(const A& a, const B& b) {
  return value_of(a) < value_of(b);
}
template <class A, class B>
  requires(is_ad_number_v<A> || is_ad_number_v<B>)
LOCKSTEP_HD bool operator>(const A& a, const B& b) {
  return value_of(a) > value_of(b);
}
template <class A, class B>
  requires(is_ad_number_v<A> || is_ad_number_v<B>)
LOCKSTEP_HD bool operator<=(const A& a, const B& b) {
  return value_of(a) <= value_of(b);
}
template <class A, class B>
  requires(is_ad_number_v<A> || is_ad_number_v<B>)
LOCKSTEP_HD bool operator>=(const A& a, const B& b) {
  return value_of(a) >= value_of(b);
}

// A dual is finite when its value and every derivative part are.
template <class T, int N>
LOCKSTEP_HD bool is_finite(const dual<T, N>& a) {
  bool ok = is_finite(a.v);
  for (int i = 0; i < N; ++i) ok = ok && is_finite(a.d[i]);
  return ok;
}

// ---- elementary functions: value f(v), derivative parts f'(v) * d_i ----

namespace detail {
template <class T, int N>
LOCKSTEP_HD dual<T, N> chain(const dual<T, N>& a, const T& f, const T& fprime) {
  dual<T, N> r{uninitialized_t{}};
  r.v = f;
  for (int i = 0; i < N; ++i) r.d[i] = fprime * a.d[i];
  return r;
}
}  // namespace detail

template <class T, int N>
LOCKSTEP_HD dual<T, N> sqrt(const dual<T, N>& a) {
  const T s = sqrt(a.v);
  return detail::chain(a, s, T(0.5) / s);
}
// sin and cos of a dual need both of the value: one sin_cos (math.hpp) reduces the argument once. It
// gives the bits of sin and cos called apart (tests/simd/scalar_path_test.cpp), at less cost: the
// reduction is most of an elementary function's time, and a pack's sin computes both kernels anyway
// (docs/SIMD.md, "Where the time would go").
template <class T, int N>
LOCKSTEP_HD dual<T, N> sin(const dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return detail::chain(a, v.sine, v.cosine);
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> cos(const dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return detail::chain(a, v.cosine, -v.sine);
}
// Both at once: the values and derivative parts of sin(a) and cos(a) above, bitwise.
template <class T, int N>
LOCKSTEP_HD sine_cosine<dual<T, N>> sin_cos(const dual<T, N>& a) {
  const sine_cosine<T> v = sin_cos(a.v);
  return {detail::chain(a, v.sine, v.cosine), detail::chain(a, v.cosine, -v.sine)};
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> tan(const dual<T, N>& a) {
  const T t = tan(a.v);
  return detail::chain(a, t, T(1.0) + t * t);
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> asin(const dual<T, N>& a) {
  return detail::chain(a, asin(a.v), T(1.0) / sqrt(T(1.0) - a.v * a.v));
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> acos(const dual<T, N>& a) {
  return detail::chain(a, acos(a.v), T(-1.0) / sqrt(T(1.0) - a.v * a.v));
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> atan(const dual<T, N>& a) {
  return detail::chain(a, atan(a.v), T(1.0) / (T(1.0) + a.v * a.v));
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> exp(const dual<T, N>& a) {
  const T e = exp(a.v);
  return detail::chain(a, e, e);
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> log(const dual<T, N>& a) {
  return detail::chain(a, log(a.v), T(1.0) / a.v);
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> abs(const dual<T, N>& a) {
  return a.v < T(0.0) ? -a : a;
}

// x^p with a constant exponent: d(x^p) = p x^(p-1) dx (finite at x = 0 for p >= 1).
template <class T, int N>
LOCKSTEP_HD dual<T, N> pow(const dual<T, N>& a, double p) {
  return detail::chain(a, pow(a.v, p), T(p) * pow(a.v, p - 1.0));
}
// x^y = exp(y log x): d = x^y (dy log x + y dx / x); defined for x > 0 as the real function is.
template <class T, int N>
LOCKSTEP_HD dual<T, N> pow(const dual<T, N>& a, const dual<T, N>& b) {
  dual<T, N> r{uninitialized_t{}};
  r.v = pow(a.v, b.v);
  const T log_a = log(a.v);
  for (int i = 0; i < N; ++i) r.d[i] = r.v * (b.d[i] * log_a + b.v * a.d[i] / a.v);
  return r;
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> pow(double a, const dual<T, N>& b) {
  const T r = pow(T(a), b.v);
  return detail::chain(b, r, r * log(a));
}

// atan2(y, x): d = (x dy - y dx) / (x^2 + y^2).
template <class T, int N>
LOCKSTEP_HD dual<T, N> atan2(const dual<T, N>& y, const dual<T, N>& x) {
  dual<T, N> r{uninitialized_t{}};
  r.v = atan2(y.v, x.v);
  const T r2 = x.v * x.v + y.v * y.v;
  for (int i = 0; i < N; ++i) r.d[i] = (x.v * y.d[i] - y.v * x.d[i]) / r2;
  return r;
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> atan2(const dual<T, N>& y, double x) {
  return atan2(y, dual<T, N>(x));
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> atan2(double y, const dual<T, N>& x) {
  return atan2(dual<T, N>(y), x);
}

// min and max follow the value, as the primal program would branch.
template <class T, int N>
LOCKSTEP_HD dual<T, N> min(const dual<T, N>& a, const dual<T, N>& b) {
  return b.v < a.v ? b : a;
}
template <class T, int N>
LOCKSTEP_HD dual<T, N> max(const dual<T, N>& a, const dual<T, N>& b) {
  return a.v < b.v ? b : a;
}

}  // namespace lockstep
