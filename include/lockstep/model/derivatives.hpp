// lockstep/model/derivatives.hpp — every derivative a formulation needs, from the model alone.
//
// Users never write a derivative (docs/ARCHITECTURE.md section 1). Each quantity below is obtained by evaluating
// the model's own functions on dual numbers:
//
//   G = Phi_q and Phi_t               one pass over the n + 1 inputs (q, t), in chunks of directions;
//                                     G alone over the n inputs q
//   G v + Phi_t                       = d/ds Phi(t + s, q + s v) at s = 0: a single direction
//   gamma (G q'' = -gamma)            = d^2/ds^2 Phi(t + s, q + s v) at s = 0: a nested dual. Expanding,
//                                     Phi_qq[v, v] + 2 Phi_qt v + Phi_tt, exactly d/dt (G v + Phi_t)
//                                     with the G q'' term removed, time terms of rheonomic
//                                     constraints included (Mantegazza & Masarati 2012, eq. 106; Haug 1989, ch. 7)
//   d(G v + Phi_t)/dq, dQ/dq, dQ/dv, d(M a)/dq                      Jacobians in chunks
//   d(G^T lambda)/dq                  the Hessian of lambda . Phi in q: one half, in blocks
//   A, a, d(A^T nu)/dq, d(A v + a)/dq, gamma_nh (A q'' = -gamma_nh)  the non-holonomic analogues
//   the acceleration-level rows G a + gamma (+ Baumgarte terms) and A a + gamma_nh, with their
//   Jacobians in (q, v)                                              for index1, projected invariants
//
// All functions are generic in the base scalar T, so they nest. d(G^T lambda)/dq, the Hessian of
// lambda . Phi, is formed one symmetric half at a time on second-order duals (core/hessian.hpp,
// ad::hessians). Jacobians and Hessians are taken in chunks of at most `max_chunk` directions (never
// n directions nested n deep: docs/DESIGN-NOTES.md, "Conventions").
#pragma once

#include <type_traits>
#include <utility>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/hessian.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep {

namespace ad {

inline constexpr int max_chunk = 8;

// The directions per Jacobian pass (and per sub-block of a Hessian's off-diagonal block, below) that
// the functions of this header take by default: max_chunk on the host, device_chunk in device code.
// Why a different width on the device: a pass holds every temporary of the model's functions on
// dual<T, C>, C + 1 doubles per scalar, in one thread's local memory, and d(M a)/dq builds the whole
// n x n mass matrix on them (chain<16>: 32 x 32 x 9 doubles = 74 KB at C = 8, 24 KB at C = 2;
// docs/GPU.md section 5.7). The total work barely changes (chain<16>, n + 1 = 33 inputs: 5 passes of
// 9 parts at C = 8, 17 of 3 at C = 2). The results do not change at all: every dual operation
// (core/dual.hpp) forms derivative part i from the values and the parts i of its operands only, and
// the value from the values only, so a Jacobian column is the same sequence of operations whichever
// chunk carries it (tests/model/derivatives_test.cpp, ChunkWidth, checks it bit for bit).
inline constexpr int device_chunk = 2;
#if defined(__CUDA_ARCH__)
inline constexpr int default_chunk = device_chunk;
#else
inline constexpr int default_chunk = max_chunk;
#endif

constexpr int chunk_for(int inputs, int limit = max_chunk) {
  return inputs < 1 ? 1 : (inputs < limit ? inputs : limit);
}

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

// f : vec<S, N> -> vec<S, M> at x, S = dual<T, C>, C <= Chunk (f must accept duals), handed over as it
// is formed: value(i, f_i) once per output, entry(i, j, d f_i / d x_j) once per Jacobian entry. The
// callers below store them where they are wanted, so no copy of the Jacobian is held in between (on
// the GPU, each copy of chain<16>'s 32 x 64 dQ/d(q, v) is 16 KB of a thread's local memory).
template <int Chunk, class T, int N, class F, class Value, class Entry>
LOCKSTEP_HD void jacobian_entries(const F& f, const vec<T, N>& x, const Value& value, const Entry& entry) {
  constexpr int C = chunk_for(N, Chunk);
  using Result = decltype(f(vec<dual<T, C>, N>{}));
  constexpr int M = Result::size;
  for (int j0 = 0; j0 < N; j0 += C) {
    const Result y = f(seed<C>(x, j0));
    for (int i = 0; i < M; ++i) {
      if (j0 == 0) value(i, y[i].v);
      for (int c = 0; c < C && j0 + c < N; ++c) entry(i, j0 + c, y[i].d[c]);
    }
  }
}

// The output size M of such an f (from the type jacobian_entries evaluates it on).
template <int Chunk, class T, int N, class F>
inline constexpr int output_size = decltype(std::declval<const F&>()(vec<dual<T, chunk_for(N, Chunk)>, N>{}))::size;

// f(x) and its Jacobian for f : vec<S, N> -> vec<S, M>, S = dual<T, C>, C <= Chunk; f must accept
// duals.
template <int Chunk = default_chunk, class T, int N, class F>
LOCKSTEP_HD auto evaluate_with_jacobian(const F& f, const vec<T, N>& x) {
  value_and_jacobian<T, output_size<Chunk, T, N, F>, N> out;
  jacobian_entries<Chunk>(
      f, x, [&](int i, const T& y) { out.value[i] = y; }, [&](int i, int j, const T& d) { out.jacobian(i, j) = d; });
  if constexpr (N == 0) out.value = decltype(out.value){};
  return out;
}

template <int Chunk = default_chunk, class T, int N, class F>
LOCKSTEP_HD auto jacobian(const F& f, const vec<T, N>& x) {
  return evaluate_with_jacobian<Chunk>(f, x).jacobian;
}

template <class T, int M, int N>
struct value_and_state_jacobians {
  vec<T, M> value;
  mat<T, M, N> d_dq;  // at fixed v
  mat<T, M, N> d_dv;  // at fixed q
};

// f(q, v) for f : (vec<S, N>, vec<S, N>) -> vec<S, M> with its Jacobians in q and in v: one
// differentiated evaluation over the 2N inputs (q, v), in chunks, handed over as jacobian_entries
// does: value(i, f_i), dq(i, j, d f_i / d q_j), dv(i, j, d f_i / d v_j).
template <int Chunk, class T, int N, class F, class Value, class Dq, class Dv>
LOCKSTEP_HD void state_jacobian_entries(const F& f, const vec<T, N>& q, const vec<T, N>& v, const Value& value,
                                        const Dq& dq, const Dv& dv) {
  vec<T, 2 * N> x;
  for (int i = 0; i < N; ++i) {
    x[i] = q[i];
    x[N + i] = v[i];
  }
  jacobian_entries<Chunk>(
      [&](const auto& xs) {
        using S = typename std::remove_cvref_t<decltype(xs)>::value_type;
        vec<S, N> qs, vs;
        for (int i = 0; i < N; ++i) {
          qs[i] = xs[i];
          vs[i] = xs[N + i];
        }
        return f(qs, vs);
      },
      x, value, [&](int i, int j, const T& d) {
        if (j < N) dq(i, j, d);
        else dv(i, j - N, d);
      });
}

template <int Chunk = default_chunk, class T, int N, class F>
LOCKSTEP_HD auto evaluate_with_state_jacobians(const F& f, const vec<T, N>& q, const vec<T, N>& v) {
  using S = dual<T, chunk_for(2 * N, Chunk)>;
  constexpr int M = decltype(f(vec<S, N>{}, vec<S, N>{}))::size;
  value_and_state_jacobians<T, M, N> out;
  state_jacobian_entries<Chunk>(
      f, q, v, [&](int i, const T& y) { out.value[i] = y; }, [&](int i, int j, const T& d) { out.d_dq(i, j) = d; },
      [&](int i, int j, const T& d) { out.d_dv(i, j) = d; });
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

// The diagonal block of the inputs i0 .. i0 + B - 1 (those below N) of every output, its upper half:
// entry(c, i, j, d^2 y_c / dx_i dx_j) for i <= j.
template <int B, class T, int N, class F, class Entry>
LOCKSTEP_HD void hessian_diagonal_block(const F& f, const vec<T, N>& x, int i0, const Entry& entry) {
  using S = hessian_dual<T, B>;
  vec<S, N> xs;
  for (int i = 0; i < N; ++i) {
    xs[i] = S(x[i]);
    if (i >= i0 && i < i0 + B) xs[i].g[i - i0] = T(1.0);
  }
  const auto y = f(xs);
  for (int c = 0; c < decltype(y)::size; ++c) {
    int k = 0;
    for (int a = 0; a < B; ++a)
      for (int b = a; b < B; ++b, ++k)
        if (i0 + b < N) entry(c, i0 + a, i0 + b, y[c].h[k]);
  }
}

// The block rows i0 .. i0 + B - 1, columns j0 .. j0 + B - 1 (i0 < j0, disjoint), as entry(c, i, j, .)
// with i < j, its columns Co at a time (Co <= B: the outer directions of one evaluation). Splitting the columns
// changes no bit of the block: the outer dual's operations are componentwise (dual.hpp), so column b
// is the same sequence of inner-dual operations in any evaluation that carries it, while each
// evaluation's inputs shrink from (B + 1)^2 to (B + 1)(Co + 1) doubles per scalar (default_chunk says
// why the device wants that).
template <int B, int Co, class T, int N, class F, class Entry>
LOCKSTEP_HD void hessian_mixed_block(const F& f, const vec<T, N>& x, int i0, int j0, const Entry& entry) {
  using S1 = dual<T, B>;
  using S = dual<S1, Co>;
  for (int c0 = j0; c0 < j0 + B && c0 < N; c0 += Co) {
    vec<S, N> xs;
    for (int i = 0; i < N; ++i) {
      xs[i].v = S1(x[i]);
      if (i >= i0 && i < i0 + B) xs[i].v.d[i - i0] = T(1.0);
      if (i >= c0 && i < c0 + Co && i < j0 + B) xs[i].d[i - c0] = S1(T(1.0));
    }
    const auto y = f(xs);
    for (int c = 0; c < decltype(y)::size; ++c)
      for (int a = 0; a < B && i0 + a < N; ++a)
        for (int b = 0; b < Co && c0 + b < j0 + B && c0 + b < N; ++b) entry(c, i0 + a, c0 + b, y[c].d[b].d[a]);
  }
}

}  // namespace detail

// The Hessians of f : vec<S, N> -> vec<S, K> at x, one half: entry(c, i, j, d^2 y_c / dx_i dx_j) once
// for every i <= j. f must accept hessian_dual<T, B> and dual<dual<T, B>, Co> inputs, B =
// hessian_block_size(N), Co = min(B, Chunk). The blocks themselves never depend on Chunk (a diagonal
// block's entries come from hessian_dual's rules, an off-diagonal one's from the nested dual's, and the
// two round differently), so every Chunk gives the same bits.
template <int Chunk = default_chunk, class T, int N, class F, class Entry>
LOCKSTEP_HD void hessian_entries(const F& f, const vec<T, N>& x, const Entry& entry) {
  constexpr int B = hessian_block_size(N);
  constexpr int Co = B < Chunk ? B : Chunk;
  for (int i0 = 0; i0 < N; i0 += B) {
    detail::hessian_diagonal_block<B>(f, x, i0, entry);
    if constexpr (N > B)
      for (int j0 = i0 + B; j0 < N; j0 += B) detail::hessian_mixed_block<B, Co>(f, x, i0, j0, entry);
  }
}

// The Hessians as matrices, both halves written from the one formed: exactly symmetric.
template <int Chunk = default_chunk, class T, int N, class F>
LOCKSTEP_HD auto hessians(const F& f, const vec<T, N>& x) {
  constexpr int K = decltype(f(vec<hessian_dual<T, hessian_block_size(N)>, N>{}))::size;
  hessian_set<T, N, K> out;
  hessian_entries<Chunk>(f, x, [&](int c, int i, int j, const T& h) {
    out.of[c](i, j) = h;
    out.of[c](j, i) = h;
  });
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
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD constraint_linearization<T, Model::m, Model::n> constraint_linearize(const T& t,
                                                                               const vec<T, Model::n>& q,
                                                                               const P* p) {
  constexpr int n = Model::n;
  vec<T, n + 1> x;
  for (int i = 0; i < n; ++i) x[i] = q[i];
  x[n] = t;
  const auto vj = ad::evaluate_with_jacobian<Chunk>(
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

// G = Phi_q alone, over the n directions of q with t held: the same bits as constraint_linearize's G
// (a direction's part of every dual operation is formed from the values and that direction's parts
// alone), without the time direction that G's users (the Newton matrix, the acceleration system, the
// tangent spaces) do not read: one direction fewer on every evaluation of the constraint.
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::m, Model::n> constraint_jacobian(const T& t, const vec<T, Model::n>& q, const P* p) {
  return ad::jacobian<Chunk>(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        return Model::template constraint<S, P>(S(t), qs, p);
      },
      q);
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
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::m, Model::n> velocity_constraint_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                   const vec<T, Model::n>& v, const P* p) {
  return ad::jacobian<Chunk>(
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
// matrix, one half of it: entry(i, j, h_ij) once for every i <= j (ad::hessian_entries).
template <class Model, int Chunk = ad::default_chunk, class T, class P, class Entry>
LOCKSTEP_HD void constraint_force_jacobian_entries(const T& t, const vec<T, Model::n>& q,
                                                   const vec<T, Model::m>& lambda, const P* p, const Entry& entry) {
  ad::hessian_entries<Chunk>(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        const vec<S, Model::m> phi = Model::template constraint<S, P>(S(t), qs, p);
        vec<S, 1> out;
        out[0] = detail::weighted_sum(lambda, phi);
        return out;
      },
      q, [&](int, int i, int j, const T& h) { entry(i, j, h); });
}

// The whole matrix, the other half mirrored: exactly symmetric.
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> constraint_force_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                const vec<T, Model::m>& lambda, const P* p) {
  mat<T, Model::n, Model::n> out;
  constraint_force_jacobian_entries<Model, Chunk>(t, q, lambda, p, [&](int i, int j, const T& h) {
    out(i, j) = h;
    out(j, i) = h;
  });
  return out;
}

// d(G^T lambda)/dq and d(G^T mu)/dq together: one differentiated evaluation of Phi serves both (the
// tangents of the GGL formulation need the second, lyapunov/tangent.hpp). Each is the same sum as
// constraint_force_jacobian forms.
template <class Model, class T>
struct constraint_force_jacobian_pair {
  mat<T, Model::n, Model::n> lambda, mu;
};

template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD constraint_force_jacobian_pair<Model, T> constraint_force_jacobians(const T& t, const vec<T, Model::n>& q,
                                                                              const vec<T, Model::m>& lambda,
                                                                              const vec<T, Model::m>& mu, const P* p) {
  const auto both = ad::hessians<Chunk>(
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

// d(M(q) a)/dq at fixed a, handed over entry by entry: entry(i, j, d(M a)_i / dq_j) (ad::jacobian_entries).
template <class Model, int Chunk = ad::default_chunk, class T, class P, class Entry>
LOCKSTEP_HD void inertia_jacobian_entries(const vec<T, Model::n>& q, const vec<T, Model::n>& a, const P* p,
                                          const Entry& entry) {
  ad::jacobian_entries<Chunk>(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> as;
        for (int i = 0; i < Model::n; ++i) as[i] = S(a[i]);
        return Model::template mass<S, P>(qs, p) * as;
      },
      q, [](int, const T&) {}, entry);
}

// d(M(q) a)/dq at fixed a.
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> inertia_jacobian(const vec<T, Model::n>& q, const vec<T, Model::n>& a,
                                                       const P* p) {
  mat<T, Model::n, Model::n> out;
  inertia_jacobian_entries<Model, Chunk>(q, a, p, [&](int i, int j, const T& d) { out(i, j) = d; });
  return out;
}

template <class T, int N>
struct force_linearization {
  vec<T, N> Q;
  mat<T, N, N> dQ_dq;
  mat<T, N, N> dQ_dv;
};

// Q with dQ/dq and dQ/dv, differentiating over the 2n inputs (q, v) in chunks, handed over entry by
// entry (ad::state_jacobian_entries).
template <class Model, int Chunk = ad::default_chunk, class T, class P, class Value, class Dq, class Dv>
LOCKSTEP_HD void force_entries(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v, const P* p,
                               const Value& value, const Dq& dq, const Dv& dv) {
  ad::state_jacobian_entries<Chunk>(
      [&](const auto& qs, const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        return Model::template force<S, P>(S(t), qs, vs, p);
      },
      q, v, value, dq, dv);
}

template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD force_linearization<T, Model::n> force_linearize(const T& t, const vec<T, Model::n>& q,
                                                            const vec<T, Model::n>& v, const P* p) {
  force_linearization<T, Model::n> out;
  force_entries<Model, Chunk>(
      t, q, v, p, [&](int i, const T& y) { out.Q[i] = y; }, [&](int i, int j, const T& d) { out.dQ_dq(i, j) = d; },
      [&](int i, int j, const T& d) { out.dQ_dv(i, j) = d; });
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Non-holonomic constraints A(t, q) v + a(t, q) = 0 (only for models with k > 0)
// ---------------------------------------------------------------------------------------------------

template <class T, int K, int N>
struct nonholonomic_linearization {
  mat<T, K, N> A;   // d(A v + a)/dv
  vec<T, K> a;      // the residual at v = 0
};

template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD nonholonomic_linearization<T, Model::k, Model::n> nonholonomic_linearize(const T& t,
                                                                                   const vec<T, Model::n>& q,
                                                                                   const P* p) {
  const auto vj = ad::evaluate_with_jacobian<Chunk>(
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
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::k, Model::n> nonholonomic_jacobian_q(const T& t, const vec<T, Model::n>& q,
                                                              const vec<T, Model::n>& v, const P* p) {
  return ad::jacobian<Chunk>(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> vs;
        for (int i = 0; i < Model::n; ++i) vs[i] = S(v[i]);
        return Model::template nonholonomic<S, P>(S(t), qs, vs, p);
      },
      q);
}

// d(A^T nu)/dq at fixed nu.
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD mat<T, Model::n, Model::n> nonholonomic_force_jacobian(const T& t, const vec<T, Model::n>& q,
                                                                  const vec<T, Model::k>& nu, const P* p) {
  return ad::jacobian<Chunk>(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::k> nus;
        for (int i = 0; i < Model::k; ++i) nus[i] = S(nu[i]);
        return transpose_times(nonholonomic_linearize<Model, Chunk>(S(t), qs, p).A, nus);
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
// Baumgarte's gains (Mantegazza & Masarati 2012, eq. 106b; Baumgarte 1972: z'' + 2 alpha z' + beta^2 z = 0,
// z = Phi):
//     holonomic       Phi'' + 2 alpha Phi' + beta^2 Phi  =  G a + gamma + 2 alpha (G v + Phi_t) + beta^2 Phi
//     non-holonomic   w' + 2 alpha w,   w = A v + a      =  A a + gamma_nh + 2 alpha (A v + a)
// (m rows, then k rows). The non-holonomic rows are first order in time, so only the damping gain
// applies to them: it plays for w the part 2 alpha plays for Phi' (w is a velocity-level quantity).
// alpha = beta = 0 gives the plain index-1 rows G a = -gamma, A a = -gamma_nh (Mantegazza &
// Masarati 2012, eqs. 122-123).
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
template <class Model, int Chunk = ad::default_chunk, class T, class P>
LOCKSTEP_HD ad::value_and_state_jacobians<T, Model::m + Model::k, Model::n> acceleration_rows_linearize(
    const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v, const vec<T, Model::n>& a, double alpha,
    double beta, const P* p) {
  return ad::evaluate_with_state_jacobians<Chunk>(
      [&](const auto& qs, const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::n> as;
        for (int i = 0; i < Model::n; ++i) as[i] = S(a[i]);
        return acceleration_constraint_rows<Model>(S(t), qs, vs, as, alpha, beta, p);
      },
      q, v);
}

}  // namespace lockstep
