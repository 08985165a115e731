// lockstep/model/derivatives.hpp — every derivative a formulation needs, from the model alone.
//
// Users never write a derivative (DESIGN.md section 1). Each quantity below is obtained by evaluating
// the model's own functions on dual numbers:
//
//   G = Phi_q and Phi_t               one pass over the n + 1 inputs (q, t), in chunks of directions
//   G v + Phi_t                       = d/ds Phi(t + s, q + s v) at s = 0: a single direction
//   gamma (G q'' = -gamma)            = d^2/ds^2 Phi(t + s, q + s v) at s = 0: a nested dual. Expanding,
//                                     Phi_qq[v, v] + 2 Phi_qt v + Phi_tt, exactly d/dt (G v + Phi_t)
//                                     with the G q'' term removed, time terms of rheonomic
//                                     constraints included (seed 001 eq. 106; seed 003)
//   d(G v + Phi_t)/dq, dQ/dq, dQ/dv, d(M a)/dq                      Jacobians in chunks
//   d(G^T lambda)/dq                  the Hessian of lambda . Phi in q: one half, in blocks
//   A, a, d(A^T nu)/dq, d(A v + a)/dq, gamma_nh (A q'' = -gamma_nh)  the non-holonomic analogues
//   the acceleration-level rows G a + gamma (+ Baumgarte terms) and A a + gamma_nh, with their
//   Jacobians in (q, v)                                              for index1, projected invariants
//
// All functions are generic in the base scalar T, so they nest. d(G^T lambda)/dq, the Hessian of
// lambda . Phi, is formed one symmetric half at a time on second-order duals (core/hessian.hpp,
// ad::hessians). Jacobians and Hessians are taken in chunks of at most `max_chunk` directions (never
// n directions nested n deep: DESIGN.md section 5).
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/hessian.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep {

namespace ad {

inline constexpr int max_chunk = 8;

constexpr int chunk_for(int inputs) { return inputs < 1 ? 1 : (inputs < max_chunk ? inputs : max_chunk); }

// x with directions j0 .. j0 + C - 1 seeded: the dual input for one chunk of Jacobian columns.
template <int C, class T, int N>
LOCKSTEP_HD vec<dual<T, C>, N> seed(const vec<T, N>& x, int j0) {
  vec<dual<T, C>, N> r;
  for (int i = 0; i < N; ++i) {
    r[i] = dual<T, C>(x[i]);
    if (i >= j0 && i < j0 + C) r[i].d[i - j0] = T(1.0);
  }
  return r;
}

template <class T, int M, int N>
struct value_and_jacobian {
  vec<T, M> value;
  mat<T, M, N> jacobian;  // jacobian(i, j) = d value_i / d x_j
};

// f(x) and its Jacobian for f : vec<S, N> -> vec<S, M>, S = dual<T, C>; f must accept duals.
template <class T, int N, class F>
LOCKSTEP_HD auto evaluate_with_jacobian(const F& f, const vec<T, N>& x) {
  constexpr int C = chunk_for(N);
  using Result = decltype(f(vec<dual<T, C>, N>{}));
  constexpr int M = Result::size;
  value_and_jacobian<T, M, N> out;
  for (int j0 = 0; j0 < N; j0 += C) {
    const Result y = f(seed<C>(x, j0));
    for (int i = 0; i < M; ++i) {
      if (j0 == 0) out.value[i] = y[i].v;
      for (int c = 0; c < C && j0 + c < N; ++c) out.jacobian(i, j0 + c) = y[i].d[c];
    }
  }
  if constexpr (N == 0) out.value = decltype(out.value){};
  return out;
}

template <class T, int N, class F>
LOCKSTEP_HD auto jacobian(const F& f, const vec<T, N>& x) {
  return evaluate_with_jacobian(f, x).jacobian;
}

template <class T, int M, int N>
struct value_and_state_jacobians {
  vec<T, M> value;
  mat<T, M, N> d_dq;  // at fixed v
  mat<T, M, N> d_dv;  // at fixed q
};

// f(q, v) and its Jacobians in q and in v for f : (vec<S, N>, vec<S, N>) -> vec<S, M>: one
// differentiated evaluation over the 2N inputs (q, v), in chunks.
template <class T, int N, class F>
LOCKSTEP_HD auto evaluate_with_state_jacobians(const F& f, const vec<T, N>& q, const vec<T, N>& v) {
  vec<T, 2 * N> x;
  for (int i = 0; i < N; ++i) {
    x[i] = q[i];
    x[N + i] = v[i];
  }
  const auto vj = evaluate_with_jacobian(
      [&](const auto& xs) {
        using S = typename std::remove_cvref_t<decltype(xs)>::value_type;
        vec<S, N> qs, vs;
        for (int i = 0; i < N; ++i) {
          qs[i] = xs[i];
          vs[i] = xs[N + i];
        }
        return f(qs, vs);
      },
      x);
  constexpr int M = decltype(vj.value)::size;
  value_and_state_jacobians<T, M, N> out;
  out.value = vj.value;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      out.d_dq(i, j) = vj.jacobian(i, j);
      out.d_dv(i, j) = vj.jacobian(i, N + j);
    }
  return out;
}

// A scalar s as a dual with first (and, nested, second) derivative 1: t + s and q + s v along it.
template <class T>
LOCKSTEP_HD dual<T, 1> line_parameter(const T& base) {
  return dual<T, 1>::variable(base, 0);
}

// ---- Hessians: one half of a symmetric second-derivative matrix ----
//
// The N inputs are split into the fewest blocks of at most max_chunk directions, of nearly equal
// size B (n = 9: 5 + 4, not 8 + 1, whose second block would carry 7 unseeded directions). A diagonal
// block (I, I) comes from one evaluation on hessian_dual<T, B> (core/hessian.hpp), which forms only
// its upper triangle; an off-diagonal block (I, J), I < J, from one evaluation on dual<dual<T, B>, B>
// with the inner directions seeded over block I and the outer ones over block J: that nested dual is
// exactly the value, the two gradients and the B x B mixed block. Blocks J < I are never formed but
// mirrored, and t is never a direction. With b blocks that is b evaluations of (B + 1)(B + 2) / 2
// parts per scalar and b (b - 1) / 2 of (B + 1)^2, where a Jacobian (chunks of 8) of the Jacobian
// over (q, t) takes ceil(N / 8) ceil((N + 1) / 8) evaluations of 81 parts: chain<16> (N = 32)
// 4 x 45 + 6 x 81 parts instead of 20 x 81, slider_crank (N = 9) 2 x 21 + 36 instead of 4 x 81.
// The largest temporary, the input vector, is vec<dual<dual<T, 8>, 8>, N> at most, smaller than the
// nested pass's N + 1 inputs (nvcc 13, sm_80, a kernel calling both functions below: stack frame
// 304 KB -> 123 KB for chain<16>, 32 KB -> 5.5 KB for slider_crank, 552 B -> 40 B for andrews).

constexpr int hessian_block_count(int inputs) { return inputs < 1 ? 1 : (inputs + max_chunk - 1) / max_chunk; }
constexpr int hessian_block_size(int inputs) {
  return inputs < 1 ? 1 : (inputs + hessian_block_count(inputs) - 1) / hessian_block_count(inputs);
}

// K symmetric N x N matrices: of[c](i, j) = d^2 y_c / dx_i dx_j.
template <class T, int N, int K>
struct hessian_set {
  mat<T, N, N> of[K];
};

namespace detail {

// The diagonal block of the inputs i0 .. i0 + B - 1 (those below N) of every output, both halves.
template <int B, class T, int N, int K, class F>
LOCKSTEP_HD void hessian_diagonal_block(const F& f, const vec<T, N>& x, int i0, hessian_set<T, N, K>& out) {
  using S = hessian_dual<T, B>;
  vec<S, N> xs;
  for (int i = 0; i < N; ++i) {
    xs[i] = S(x[i]);
    if (i >= i0 && i < i0 + B) xs[i].g[i - i0] = T(1.0);
  }
  const vec<S, K> y = f(xs);
  for (int c = 0; c < K; ++c) {
    int k = 0;
    for (int a = 0; a < B; ++a)
      for (int b = a; b < B; ++b, ++k)
        if (i0 + b < N) {
          out.of[c](i0 + a, i0 + b) = y[c].h[k];
          out.of[c](i0 + b, i0 + a) = y[c].h[k];
        }
  }
}

// The block rows i0 .. i0 + B - 1, columns j0 .. j0 + B - 1 (i0 < j0, disjoint) and its mirror image.
template <int B, class T, int N, int K, class F>
LOCKSTEP_HD void hessian_mixed_block(const F& f, const vec<T, N>& x, int i0, int j0, hessian_set<T, N, K>& out) {
  using S1 = dual<T, B>;
  using S = dual<S1, B>;
  vec<S, N> xs;
  for (int i = 0; i < N; ++i) {
    xs[i].v = S1(x[i]);
    if (i >= i0 && i < i0 + B) xs[i].v.d[i - i0] = T(1.0);
    if (i >= j0 && i < j0 + B) xs[i].d[i - j0] = S1(T(1.0));
  }
  const vec<S, K> y = f(xs);
  for (int c = 0; c < K; ++c)
    for (int a = 0; a < B && i0 + a < N; ++a)
      for (int b = 0; b < B && j0 + b < N; ++b) {
        out.of[c](i0 + a, j0 + b) = y[c].d[b].d[a];
        out.of[c](j0 + b, i0 + a) = y[c].d[b].d[a];
      }
}

}  // namespace detail

// The Hessians of f : vec<S, N> -> vec<S, K> at x; f must accept hessian_dual<T, B> and
// dual<dual<T, B>, B> inputs. Every entry is written once per half: the result is exactly symmetric.
template <class T, int N, class F>
LOCKSTEP_HD auto hessians(const F& f, const vec<T, N>& x) {
  constexpr int B = hessian_block_size(N);
  constexpr int K = decltype(f(vec<hessian_dual<T, B>, N>{}))::size;
  hessian_set<T, N, K> out;
  for (int i0 = 0; i0 < N; i0 += B) {
    detail::hessian_diagonal_block<B>(f, x, i0, out);
    if constexpr (N > B)
      for (int j0 = i0 + B; j0 < N; j0 += B) detail::hessian_mixed_block<B>(f, x, i0, j0, out);
  }
  return out;
}

}  // namespace ad

// ---------------------------------------------------------------------------------------------------
// Holonomic constraints
// ---------------------------------------------------------------------------------------------------

template <class T, int M, int N>
struct constraint_linearization {
  vec<T, M> phi;       // Phi(t, q)
  mat<T, M, N> G;      // Phi_q
  vec<T, M> phi_t;     // Phi_t
};

// Phi, G = Phi_q and Phi_t in one differentiated evaluation over (q, t).
template <class Model, class T, class P>
LOCKSTEP_HD constraint_linearization<T, Model::m, Model::n> constraint_linearize(const T& t,
                                                                               const vec<T, Model::n>& q,
                                                                               const P* p) {
  constexpr int n = Model::n;
  vec<T, n + 1> x;
  for (int i = 0; i < n; ++i) x[i] = q[i];
  x[n] = t;
  const auto vj = ad::evaluate_with_jacobian(
      [p](const auto& xs) {
        using S = typename std::remove_cvref_t<decltype(xs)>::value_type;
        vec<S, n> qs;
        for (int i = 0; i < n; ++i) qs[i] = xs[i];
        return Model::template constraint<S, P>(xs[n], qs, p);
      },
      x);
  constraint_linearization<T, Model::m, n> out;
  out.phi = vj.value;
  for (int i = 0; i < Model::m; ++i) {
    for (int j = 0; j < n; ++j) out.G(i, j) = vj.jacobian(i, j);
    out.phi_t[i] = vj.jacobian(i, n);
  }
  return out;
}

template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::m, Model::n> constraint_jacobian(const T& t, const vec<T, Model::n>& q, const P* p) {
  return constraint_linearize<Model>(t, q, p).G;
}

// Phi and G v + Phi_t = d/ds Phi(t + s, q + s v) at s = 0, from one evaluation along the line: the
// dual's value is computed by the same operations as a plain evaluation, so phi is bitwise
// Model::constraint(t, q).
template <class T, int M>
struct constraint_and_rate {
  vec<T, M> phi;
  vec<T, M> rate;  // G v + Phi_t
};

template <class Model, class T, class P>
LOCKSTEP_HD constraint_and_rate<T, Model::m> constraint_along(const T& t, const vec<T, Model::n>& q,
                                                              const vec<T, Model::n>& v, const P* p) {
  using S = dual<T, 1>;
  vec<S, Model::n> qs;
  for (int i = 0; i < Model::n; ++i) {
    qs[i] = S(q[i]);
    qs[i].d[0] = v[i];
  }
  const vec<S, Model::m> phi = Model::template constraint<S, P>(ad::line_parameter(t), qs, p);
  constraint_and_rate<T, Model::m> out;
  for (int i = 0; i < Model::m; ++i) {
    out.phi[i] = phi[i].v;
    out.rate[i] = phi[i].d[0];
  }
  return out;
}

// G v + Phi_t.
template <class Model, class T, class P>
LOCKSTEP_HD vec<T, Model::m> velocity_constraint(const T& t, const vec<T, Model::n>& q,
                                                 const vec<T, Model::n>& v, const P* p) {
  return constraint_along<Model>(t, q, v, p).rate;
}

// gamma with G q'' = -gamma: d^2/ds^2 Phi(t + s, q + s v) at s = 0 (nested duals, exact).
template <class Model, class T, class P>
LOCKSTEP_HD vec<T, Model::m> constraint_gamma(const T& t, const vec<T, Model::n>& q,
                                              const vec<T, Model::n>& v, const P* p) {
  using S1 = dual<T, 1>;
  using S2 = dual<S1, 1>;
  auto along_line = [](const T& base, const T& slope) {
    S2 x;
    x.v = S1(base);
    x.v.d[0] = slope;
    x.d[0] = S1(slope);
    return x;
  };
  vec<S2, Model::n> qs;
  for (int i = 0; i < Model::n; ++i) qs[i] = along_line(q[i], v[i]);
  const vec<S2, Model::m> phi = Model::template constraint<S2, P>(along_line(t, T(1.0)), qs, p);
  vec<T, Model::m> out;
  for (int i = 0; i < Model::m; ++i) out[i] = phi[i].d[0].d[0];
  return out;
}

// d(G v + Phi_t)/dq at fixed v.
template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::m, Model::n> velocity_constraint_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                   const vec<T, Model::n>& v, const P* p) {
  return ad::jacobian(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> vs;
        for (int i = 0; i < Model::n; ++i) vs[i] = S(v[i]);
        return velocity_constraint<Model>(S(t), qs, vs, p);
      },
      q);
}

namespace detail {
// sum_i w_i phi_i for plain weights w and differentiated phi (w . Phi, whose q-Hessian is d(G^T w)/dq).
template <class T, int M, class S>
LOCKSTEP_HD S weighted_sum(const vec<T, M>& w, const vec<S, M>& phi) {
  S s(T(0.0));
  for (int i = 0; i < M; ++i) s = s + w[i] * phi[i];
  return s;
}
}  // namespace detail

// d(G^T lambda)/dq at fixed lambda: the Hessian of lambda . Phi in q (t held), which enters every Newton
// matrix. One half of it is formed (ad::hessians), the other mirrored: the result is exactly symmetric.
template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> constraint_force_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                const vec<T, Model::m>& lambda, const P* p) {
  return ad::hessians(
             [&](const auto& qs) {
               using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
               const vec<S, Model::m> phi = Model::template constraint<S, P>(S(t), qs, p);
               vec<S, 1> out;
               out[0] = detail::weighted_sum(lambda, phi);
               return out;
             },
             q)
      .of[0];
}

// d(G^T lambda)/dq and d(G^T mu)/dq together: one differentiated evaluation of Phi serves both (the
// tangents of the GGL formulation need the second, lyapunov/tangent.hpp). Each is the same sum as
// constraint_force_jacobian forms.
template <class Model, class T>
struct constraint_force_jacobian_pair {
  mat<T, Model::n, Model::n> lambda, mu;
};

template <class Model, class T, class P>
LOCKSTEP_HD constraint_force_jacobian_pair<Model, T> constraint_force_jacobians(const T& t, const vec<T, Model::n>& q,
                                                                              const vec<T, Model::m>& lambda,
                                                                              const vec<T, Model::m>& mu, const P* p) {
  const auto both = ad::hessians(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        const vec<S, Model::m> phi = Model::template constraint<S, P>(S(t), qs, p);
        vec<S, 2> out;
        out[0] = detail::weighted_sum(lambda, phi);
        out[1] = detail::weighted_sum(mu, phi);
        return out;
      },
      q);
  return {both.of[0], both.of[1]};
}

// ---------------------------------------------------------------------------------------------------
// Mass and applied forces
// ---------------------------------------------------------------------------------------------------

// d(M(q) a)/dq at fixed a.
template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> inertia_jacobian(const vec<T, Model::n>& q, const vec<T, Model::n>& a,
                                                       const P* p) {
  return ad::jacobian(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> as;
        for (int i = 0; i < Model::n; ++i) as[i] = S(a[i]);
        return Model::template mass<S, P>(qs, p) * as;
      },
      q);
}

template <class T, int N>
struct force_linearization {
  vec<T, N> Q;
  mat<T, N, N> dQ_dq;
  mat<T, N, N> dQ_dv;
};

// Q with dQ/dq and dQ/dv, differentiating over the 2n inputs (q, v) in chunks.
template <class Model, class T, class P>
LOCKSTEP_HD force_linearization<T, Model::n> force_linearize(const T& t, const vec<T, Model::n>& q,
                                                            const vec<T, Model::n>& v, const P* p) {
  const auto qv = ad::evaluate_with_state_jacobians(
      [&](const auto& qs, const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        return Model::template force<S, P>(S(t), qs, vs, p);
      },
      q, v);
  return {qv.value, qv.d_dq, qv.d_dv};
}

// ---------------------------------------------------------------------------------------------------
// Non-holonomic constraints A(t, q) v + a(t, q) = 0 (only for models with k > 0)
// ---------------------------------------------------------------------------------------------------

template <class T, int K, int N>
struct nonholonomic_linearization {
  mat<T, K, N> A;   // d(A v + a)/dv
  vec<T, K> a;      // the residual at v = 0
};

template <class Model, class T, class P>
LOCKSTEP_HD nonholonomic_linearization<T, Model::k, Model::n> nonholonomic_linearize(const T& t,
                                                                                   const vec<T, Model::n>& q,
                                                                                   const P* p) {
  const auto vj = ad::evaluate_with_jacobian(
      [&](const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(vs)>::value_type;
        vec<S, Model::n> qs;
        for (int i = 0; i < Model::n; ++i) qs[i] = S(q[i]);
        return Model::template nonholonomic<S, P>(S(t), qs, vs, p);
      },
      vec<T, Model::n>{});
  return {vj.jacobian, vj.value};
}

// d(A v + a)/dq at fixed v.
template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::k, Model::n> nonholonomic_jacobian_q(const T& t, const vec<T, Model::n>& q,
                                                              const vec<T, Model::n>& v, const P* p) {
  return ad::jacobian(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> vs;
        for (int i = 0; i < Model::n; ++i) vs[i] = S(v[i]);
        return Model::template nonholonomic<S, P>(S(t), qs, vs, p);
      },
      q);
}

// d(A^T nu)/dq at fixed nu.
template <class Model, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> nonholonomic_force_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                  const vec<T, Model::k>& nu, const P* p) {
  return ad::jacobian(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::k> nus;
        for (int i = 0; i < Model::k; ++i) nus[i] = S(nu[i]);
        return transpose_times(nonholonomic_linearize<Model>(S(t), qs, p).A, nus);
      },
      q);
}

// gamma_nh with A q'' = -gamma_nh: d/ds [A(t + s, q + s v) v + a(t + s, q + s v)] at s = 0, v held.
template <class Model, class T, class P>
LOCKSTEP_HD vec<T, Model::k> nonholonomic_gamma(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v,
                                                const P* p) {
  using S = dual<T, 1>;
  vec<S, Model::n> qs, vs;
  for (int i = 0; i < Model::n; ++i) {
    qs[i] = S(q[i]);
    qs[i].d[0] = v[i];
    vs[i] = S(v[i]);
  }
  const vec<S, Model::k> r = Model::template nonholonomic<S, P>(ad::line_parameter(t), qs, vs, p);
  vec<T, Model::k> out;
  for (int i = 0; i < Model::k; ++i) out[i] = r[i].d[0];
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Acceleration-level constraints (formulations index1 and projected invariants)
// ---------------------------------------------------------------------------------------------------

// The constraint rows at acceleration level along a motion with q' = v, q'' = a, stabilized by
// Baumgarte's gains (seed 001 eq. 106b, seed 002: z'' + 2 alpha z' + beta^2 z = 0 for z = Phi):
//     holonomic       Phi'' + 2 alpha Phi' + beta^2 Phi  =  G a + gamma + 2 alpha (G v + Phi_t) + beta^2 Phi
//     non-holonomic   w' + 2 alpha w,   w = A v + a      =  A a + gamma_nh + 2 alpha (A v + a)
// (m rows, then k rows). The non-holonomic rows are first order in time, so only the damping gain
// applies to them: it plays for w the part 2 alpha plays for Phi' (w is a velocity-level quantity).
// alpha = beta = 0 gives the plain index-1 rows G a = -gamma, A a = -gamma_nh (seed 001 eqs. 122-123).
//
// All three derivatives of Phi come from one nested-dual evaluation on the two-parameter curve
// q(s1, s2) = q + (s1 + s2) v + s1 s2 a, t(s1, s2) = t + s1 + s2: its s1 part is Phi' = G v + Phi_t
// and its mixed part Phi_qq[v, v] + 2 Phi_qt v + Phi_tt + G a = Phi'' (cf. constraint_gamma).
template <class Model, class T, class P>
LOCKSTEP_HD vec<T, Model::m + Model::k> acceleration_constraint_rows(const T& t, const vec<T, Model::n>& q,
                                                                     const vec<T, Model::n>& v,
                                                                     const vec<T, Model::n>& a, double alpha,
                                                                     double beta, const P* p) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  vec<T, m + k> out;
  if constexpr (m > 0) {
    using S1 = dual<T, 1>;
    using S2 = dual<S1, 1>;
    auto on_curve = [](const T& base, const T& slope, const T& curvature) {
      S2 x;
      x.v = S1(base);
      x.v.d[0] = slope;
      x.d[0] = S1(slope);
      x.d[0].d[0] = curvature;
      return x;
    };
    vec<S2, n> qs;
    for (int i = 0; i < n; ++i) qs[i] = on_curve(q[i], v[i], a[i]);
    const vec<S2, m> phi = Model::template constraint<S2, P>(on_curve(t, T(1.0), T(0.0)), qs, p);
    for (int i = 0; i < m; ++i)
      out[i] = phi[i].d[0].d[0] + (2.0 * alpha) * phi[i].v.d[0] + (beta * beta) * phi[i].v.v;
  }
  if constexpr (k > 0) {
    using S = dual<T, 1>;
    vec<S, n> qs, vs;
    for (int i = 0; i < n; ++i) {
      qs[i] = S(q[i]);
      qs[i].d[0] = v[i];
      vs[i] = S(v[i]);
      vs[i].d[0] = a[i];
    }
    const vec<S, k> w = Model::template nonholonomic<S, P>(ad::line_parameter(t), qs, vs, p);
    for (int i = 0; i < k; ++i) out[m + i] = w[i].d[0] + (2.0 * alpha) * w[i].v;
  }
  return out;
}

// The acceleration rows (value) with their Jacobians d_dq at fixed v and a, and d_dv at fixed q and a
// (d/da is [G; A]).
template <class Model, class T, class P>
LOCKSTEP_HD ad::value_and_state_jacobians<T, Model::m + Model::k, Model::n> acceleration_rows_linearize(
    const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v, const vec<T, Model::n>& a, double alpha,
    double beta, const P* p) {
  return ad::evaluate_with_state_jacobians(
      [&](const auto& qs, const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> as;
        for (int i = 0; i < Model::n; ++i) as[i] = S(a[i]);
        return acceleration_constraint_rows<Model>(S(t), qs, vs, as, alpha, beta, p);
      },
      q, v);
}

}  // namespace lockstep
