// lockstep/formulation/euler_lagrange.hpp — the index-3, stabilized index-2 (GGL), index-1 and
// projected-invariants formulations of
//
//     M(q) q'' + G^T lambda + A^T nu = Q(t, q, v),   Phi(t, q) = 0,   A(t, q) v + a(t, q) = 0
//
// as first-order DAEs in y = (q, v, lambda, mu, nu), with residuals and the Newton matrix in reduced,
// scaled saddle-point form. A method (BDF, Radau) only asks for residuals F(t, y, y') and for the
// factored Newton matrix at a shift c (y' ~ c y + known terms); it never sees mechanics.
//
//   index3:  F_q = q' - v                     = 0   (n)
//            F_v = M v' + G^T lambda + A^T nu - Q = 0   (n)
//            F_phi = Phi(t, q)                = 0   (m)      lambda: index 3
//            F_a = A v + a                    = 0   (k)      nu: index 2
//   ggl:     F_q = q' - v + G^T mu            = 0   (Gear, Gupta & Leimkuhler 1985; Haug 1989, ch. 7)
//            F_v, F_phi, F_a as above;  F_psi = G v + Phi_t = 0   (m)   lambda, mu: index 2
//   index1:  F_q, F_v as in index3;
//            F_phi = G v' + gamma + 2 alpha (G v + Phi_t) + beta^2 Phi = 0   (Mantegazza & Masarati
//                                                                             2012, eqs. 106-107)
//            F_a   = A v' + gamma_nh + 2 alpha (A v + a)               = 0   lambda, nu: index 1
//            (alpha, beta: Baumgarte's gains, 0 by default; model/derivatives.hpp,
//            acceleration_constraint_rows). The constraints themselves are not imposed: without
//            stabilization or projection (formulation/projection.hpp) Phi drifts (Baumgarte 1972).
//   projected invariants (Ascher & Petzold 1993, eq. 4.14 with D = G^T, the "C^T" projection they
//            recommend for heterogeneous masses in their section 5):
//            F_q = q' - v + G^T mu = 0,  F_v as above,  F_phi = G v' + gamma = 0,
//            F_psi = Phi = 0,  F_a = A v' + gamma_nh = 0        lambda, nu: index 1; mu: index 2
//            lambda is eliminated at acceleration level, so v' = M^-1 (Q - G^T lambda) is an ODE whose
//            invariant Phi = 0 is reimposed through mu. The velocity invariants are not imposed; the
//            member stepper projects v onto them after every step (their section 5).
//
// GGL weighting. We use the original q' = v - G^T mu, not the M^-1 G^T mu of Mantegazza & Masarati 2012, eq. (114a):
// mu vanishes on the exact solution either way, and without M^-1 the kinematic row stays free of the
// inverse mass matrix, so the eliminated Newton matrix below needs no factorization of M and no
// derivative of M^-1. Heterogeneous masses, where the metric matters (Ascher & Petzold 1993, section 5), are served
// by the projected-invariants formulation and mass-weighted projections.
//
// One implementation serves both formulations with a run-time switch (docs/DESIGN-NOTES.md, "Conventions": all
// members of a batch take the same branch); for index3 the mu unknowns stay in the layout, fixed at zero by
// identity rows, so both share one compile-time size.
//
// The Newton matrix. With y' = c y + r (c = a_0 / h for BDF, a complex eigenvalue shift for Radau), the
// linearization of F_q gives Delta v = c Delta q + G^T Delta mu + F_q (the term d(G^T mu)/dq is left out:
// mu = O(tolerance), so this is a simplified-Newton approximation of relative size |mu| / c). Eliminating
// Delta v leaves the unknowns (Delta q, Delta lambda, Delta mu, Delta nu), size n + 2m + k — the velocity
// rows are never factored (the reduced saddle-point form). Scaling (Ascher & Petzold 1998, ch. 10, "Ill-conditioned
// Newton iteration matrix": the condition number grows like h^-index otherwise): the dynamic row is
// divided by c^2, the velocity-level rows by c, and the multipliers are scaled as Delta lambda =
// c^2 Delta lambda~, Delta nu = c^2 Delta nu~, Delta mu = c Delta mu~, so every block is O(1) as h -> 0:
//
//   [ M - D_v / c + K / c^2    G^T    (M - D_v / c) G^T    A^T ] [Delta q       ]
//   [ G                        0      0                    0   ] [Delta lambda~ ]
//   [ G + Psi_q / c            0      G G^T                0   ] [Delta mu~     ]   (ggl rows)
//   [ A + A_q / c              0      A G^T                0   ] [Delta nu~     ]
//
// with D_v = dQ/dv, K = d(M a)/dq + d(G^T lambda)/dq + d(A^T nu)/dq - dQ/dq at a = v', Psi_q =
// d(G v + Phi_t)/dq, A_q = d(A v + a)/dq. Right-hand sides:
//   -(F_v + (c M - D_v) F_q) / c^2,  -F_phi,  -(F_psi + G F_q) / c,  -(F_a + A F_q) / c.
// This is Mantegazza & Masarati 2012, eqs. (124)-(128) (matrix f_y' + c f_y) with the kinematic rows eliminated.
//
// Acceleration-level rows (index1, projected invariants). F_phi = G v' + g(t, q, v) depends on v', so
// with Delta v' = c Delta v its linearization is Acc_q Delta q + (c G + Acc_v) Delta v (Acc_q = dF_phi/dq
// at fixed v and v', Acc_v = dF_phi/dv, stored in Psi_q and Psi_v); the non-holonomic rows likewise with
// A, A_q, A_v. After eliminating Delta v and dividing these rows by c^2 (they are force-like, like the
// dynamic row) every block is again O(1):
//
//   [ M - D_v / c + K / c^2         G^T    (M - D_v / c) G^T      A^T ] [Delta q       ]
//   [ G + Acc_v / c + Acc_q / c^2   0      (G + Acc_v / c) G^T    0   ] [Delta lambda~ ]
//   [ G                             0      0                      0   ] [Delta mu~     ]   (projected invariants)
//   [ A + A_v / c + A_q / c^2       0      (A + A_v / c) G^T      0   ] [Delta nu~     ]
//
// with right-hand sides -(F_v + (c M - D_v) F_q) / c^2, -(F_phi + (c G + Acc_v) F_q) / c^2, -F_psi and
// -(F_a + (c A + A_v) F_q) / c^2. For index1 the mu columns are absent (identity rows, as in index3).
// As c -> infinity the matrix tends to [M G^T; G 0] (index1) or the ggl-like saddle point (projected
// invariants), both nonsingular: no h^-index growth of the condition number.
#pragma once

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/constraint_rank.hpp"
#include "lockstep/model/concept.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep {

enum class formulation : int {
  index3 = 0,  // q' = v, Phi = 0 (with A v + a = 0)
  ggl = 1,     // stabilized index 2: q' = v - G^T mu, Phi = 0, G v + Phi_t = 0 (with A v + a = 0)
  index1 = 2,  // acceleration level: G v' = -gamma (optionally Baumgarte), A v' = -gamma_nh
  projected_invariants = 3,  // q' = v - G^T mu, G v' = -gamma, A v' = -gamma_nh, Phi = 0 (A & P eq. 4.14)
};

// The name used in study files and results.
LOCKSTEP_HD constexpr const char* formulation_name(formulation f) {
  switch (f) {
    case formulation::index3: return "index3";
    case formulation::ggl: return "ggl";
    case formulation::index1: return "index1";
    case formulation::projected_invariants: return "projected-invariants";
  }
  return "unknown";
}

// Whether the multiplier mu of q' = v - G^T mu is an unknown (otherwise it is pinned to zero).
LOCKSTEP_HD constexpr bool uses_mu(formulation f) {
  return f == formulation::ggl || f == formulation::projected_invariants;
}

// Whether the lambda and nu rows are the constraints differentiated to acceleration level.
LOCKSTEP_HD constexpr bool acceleration_level(formulation f) {
  return f == formulation::index1 || f == formulation::projected_invariants;
}

// Baumgarte's gains of the index1 rows (Mantegazza & Masarati 2012, eq. 106b); the other formulations ignore them.
struct baumgarte_gains {
  double alpha = 0.0;
  double beta = 0.0;
};

// Where each variable group lives in y = (q, v, lambda, mu, nu).
template <class Model>
struct state_layout {
  static constexpr int n = Model::n, m = Model::m, k = Model::k;
  static constexpr int size = 2 * n + 2 * m + k;
  static constexpr int q = 0, v = n, lambda = 2 * n, mu = 2 * n + m, nu = 2 * n + 2 * m;
  static constexpr int newton_size = n + 2 * m + k;  // (Delta q, Delta lambda~, Delta mu~, Delta nu~)
};

// The index of variable j in a formulation (Hairer & Wanner VII.1, Hessenberg forms): in index3, q, v
// and lambda are of index 1, 2 and 3; in ggl, q and v are of index 1 and the multipliers of index 2;
// nu (velocity-level constraints) is of index 2 in both. At acceleration level (index1, projected
// invariants) q, v, lambda and nu are of index 1 (lambda and nu solve a nonsingular linear system
// given q, v), and the projected invariants' mu is of index 2 (Hessenberg in (q, mu)). Error tests
// treat the higher-index variables specially (BDF leaves them out, Ascher & Petzold 1998, ch. 10, "Error estimation
// for index-2 DAEs"; Radau scales them by h^(index - 1), Hairer, Lubich & Roche 1989); Newton convergence
// tests keep them all. A pinned mu (index3, index1) is reported as index 1 and weighted zero.
template <class Model>
LOCKSTEP_HD constexpr int variable_index(formulation f, int j) {
  using L = state_layout<Model>;
  if (j < L::v) return 1;
  if (j < L::lambda) return f == formulation::index3 ? 2 : 1;
  if (j < L::mu) return f == formulation::index3 ? 3 : (f == formulation::ggl ? 2 : 1);
  if (j < L::nu) return uses_mu(f) ? 2 : 1;
  return acceleration_level(f) ? 1 : 2;
}

template <class Model>
using state_vector = vec<double, state_layout<Model>::size>;

// Whether device code runs the model's evaluations (a residual, each AD pass of a Jacobian) as separate
// calls (core/hd.hpp, phase): for members whose reduced Newton matrix has more than 32 rows, chain<16>
// among the built-in models, where inlined passes add up to hundreds of KB of local memory per thread
// (docs/GPU.md section 5.7). The same size separates the members whose factorizations the GPU path
// splits out of the step kernel (lockstep/detail/split_factor.hpp, split_factorization_threshold): one
// rule for "too large for one thread", kept in one place.
inline constexpr int large_member_newton_rows = 32;

// And for the smallest members (Newton matrix of at most 8 rows: the pendulum, 4, and the double
// pendulum, 8): there the inlined evaluations push the step kernels past 255 registers, and ptxas
// spills 0.6-3.4 KB of registers per kernel; as calls, five of their eight step kernels spill nothing,
// and all eight with the step kernels' launch bound and separate_newton_phases below (sm_90 ptxas,
// docs/GPU.md section 2.2). Andrews (19 rows) stays inlined: as calls its frames shrink
// but its spills grow. Device code only: on the host a phase is an inline call, so results cannot differ.
inline constexpr int small_member_newton_rows = 8;

template <class Model>
inline constexpr bool separate_device_phases = state_layout<Model>::newton_size > large_member_newton_rows ||
                                               state_layout<Model>::newton_size <= small_member_newton_rows;

// And the Newton solve's own parts as calls too (the matrix's assembly, its factorization, a block's
// solve; the Radau IIA attempt's starting values and error estimate, method/radau.hpp) for the small
// members above 4 rows, the double pendulum among the built-in models: with only the evaluations as
// calls its Radau IIA step kernels still spilled 692-696 B at 255 registers; with these parts as calls
// too they spill nothing. The pendulum's step kernels (4 rows) spill nothing without them, which would
// only grow their frames by 0.7-0.8 KB (sm_90 ptxas, docs/GPU.md section 2.2).
inline constexpr int smallest_member_newton_rows = 4;

template <class Model>
inline constexpr bool separate_newton_phases = state_layout<Model>::newton_size > smallest_member_newton_rows &&
                                               state_layout<Model>::newton_size <= small_member_newton_rows;

// Residual of the formulation at (t, y, y'); only the q' and v' parts of y' enter. For index1 and
// projected invariants, F_phi holds the acceleration rows and (projected invariants) F_psi holds Phi.
// S: the scalar, double for one member, a pack of lanes for several (lockstep/simd/pack_inl.hpp).
template <class Model, class S = double>
struct residual_parts {
  vec<S, Model::n> Fq, Fv;
  vec<S, Model::m> Fphi, Fpsi;
  vec<S, Model::k> Fa;
};

template <class Model>
LOCKSTEP_HD bool all_finite(const residual_parts<Model>& r) {
  bool ok = true;
  for (int i = 0; i < Model::n; ++i) ok = ok && is_finite(r.Fq[i]) && is_finite(r.Fv[i]);
  for (int i = 0; i < Model::m; ++i) ok = ok && is_finite(r.Fphi[i]) && is_finite(r.Fpsi[i]);
  for (int i = 0; i < Model::k; ++i) ok = ok && is_finite(r.Fa[i]);
  return ok;
}

namespace detail {
// On scalars S (double, or a pack of lanes with P its parameters' scalar): every line is the same
// operation for each, so a lane of a pack gets the bits of its member alone.
template <class Model, class S, class P>
LOCKSTEP_HD residual_parts<Model, S> formulation_residual(formulation f, const S& t,
                                                          const vec<S, state_layout<Model>::size>& y,
                                                          const vec<S, Model::n>& qdot, const vec<S, Model::n>& vdot,
                                                          const P* p, baumgarte_gains gains) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  vec<S, n> q, v;
  vec<S, m> lambda, mu;
  vec<S, k> nu;
  for (int i = 0; i < n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  for (int i = 0; i < m; ++i) {
    lambda[i] = y[L::lambda + i];
    mu[i] = y[L::mu + i];
  }
  for (int i = 0; i < k; ++i) nu[i] = y[L::nu + i];

  residual_parts<Model, S> r;
  const auto con = constraint_linearize<Model>(t, q, p);
  const auto [M, Q] = mass_and_force<Model>(t, q, v, p);
  const auto Mvdot = M * vdot;
  const auto Gtl = transpose_times(con.G, lambda);
  for (int i = 0; i < n; ++i) {
    r.Fq[i] = qdot[i] - v[i];
    r.Fv[i] = Mvdot[i] + Gtl[i] - Q[i];
  }
  r.Fphi = con.phi;
  if (uses_mu(f)) {
    const auto Gtm = transpose_times(con.G, mu);
    for (int i = 0; i < n; ++i) r.Fq[i] = r.Fq[i] + Gtm[i];
  }
  if (f == formulation::ggl) {
    const auto Gv = con.G * v;
    for (int i = 0; i < m; ++i) r.Fpsi[i] = Gv[i] + con.phi_t[i];
  }
  if (f == formulation::projected_invariants) r.Fpsi = con.phi;
  if constexpr (k > 0) {
    const auto nh = nonholonomic_linearize<Model>(t, q, p);
    const auto Atn = transpose_times(nh.A, nu);
    for (int i = 0; i < n; ++i) r.Fv[i] = r.Fv[i] + Atn[i];
    const auto Av = nh.A * v;
    for (int i = 0; i < k; ++i) r.Fa[i] = Av[i] + nh.a[i];
  }
  if (acceleration_level(f)) {
    const baumgarte_gains g = f == formulation::index1 ? gains : baumgarte_gains{};
    const auto rows = acceleration_constraint_rows<Model>(t, q, v, vdot, g.alpha, g.beta, p);
    for (int i = 0; i < m; ++i) r.Fphi[i] = rows[i];
    for (int i = 0; i < k; ++i) r.Fa[i] = rows[m + i];
  }
  return r;
}
}  // namespace detail

template <class Model>
LOCKSTEP_HD residual_parts<Model> evaluate_residual(formulation f, double t, const state_vector<Model>& y,
                                                    const vec<double, Model::n>& qdot,
                                                    const vec<double, Model::n>& vdot, const double* p,
                                                    baumgarte_gains gains = {}) {
  residual_parts<Model> r;
  phase<separate_device_phases<Model>>([&] { r = detail::formulation_residual<Model>(f, t, y, qdot, vdot, p, gains); });
  return r;
}

// The values of the Jacobian blocks at one point (t, y, v'), on scalars S: double for one member, a
// pack of lanes for several (lockstep/simd/pack_inl.hpp).
template <class Model, class S = double>
struct jacobian_values {
  static constexpr int n = Model::n, m = Model::m, k = Model::k;
  mat<S, n, n> M;       // mass matrix
  mat<S, n, n> dQ_dv;   // D_v
  mat<S, n, n> K;       // d(M a)/dq + d(G^T lambda)/dq + d(A^T nu)/dq - dQ/dq
  mat<S, m, n> G;
  mat<S, m, n> Psi_q;   // ggl: d(G v + Phi_t)/dq; acceleration level: Acc_q = dF_phi/dq
  mat<S, m, n> Psi_v;   // acceleration level only: Acc_v = dF_phi/dv
  mat<S, k, n> A;
  mat<S, k, n> A_q;     // index3, ggl: d(A v + a)/dq; acceleration level: dF_a/dq
  mat<S, k, n> A_v;     // acceleration level only: dF_a/dv
};

// Every block of jacobian_values, for code that treats each alike (X(M) X(dQ_dv) ...): the lanes backend
// moves them between a member and its lane block by block (lockstep/simd/).
#define LOCKSTEP_EACH_JACOBIAN_BLOCK(X) X(M) X(dQ_dv) X(K) X(G) X(Psi_q) X(Psi_v) X(A) X(A_q) X(A_v)

// The Jacobian blocks of one member: evaluated by automatic differentiation, kept while simplified
// Newton reuses them, and refactored for a new shift without re-evaluation (RADAU5 keeps the Jacobian
// across steps in the same way; Hairer & Wanner IV.8).
template <class Model>
struct jacobian_blocks : jacobian_values<Model> {
  // The constraint rows the solver leaves out (formulation/constraint_rank.hpp on [G; A]: bit a < m is
  // holonomic row a, bit m + a non-holonomic row a). Kept with the blocks across evaluations: each
  // evaluation decides again with this mask as the previous decision (the hysteresis).
  std::uint64_t dropped = 0;
};

// Whether the solver decides the rank of [G; A]: at most 64 rows (the mask); above, every row is kept
// and dependent rows give a singular Newton matrix as before.
template <class Model>
inline constexpr bool decides_constraint_rank =
    Model::m + Model::k > 0 && Model::m + Model::k <= constraint_rank_max_rows;

// The rank decision on [G; A] at one point, with `previous` as the last decision (constraint_rank.hpp).
template <class Model>
LOCKSTEP_HD std::uint64_t dependent_constraint_rows(const mat<double, Model::m, Model::n>& G,
                                                    const mat<double, Model::k, Model::n>& A, std::uint64_t previous) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  if constexpr (decides_constraint_rank<Model>) {
    mat<double, m + k, n> GA;
    for (int j = 0; j < n; ++j) {
      for (int a = 0; a < m; ++a) GA(a, j) = G(a, j);
      for (int a = 0; a < k; ++a) GA(m + a, j) = A(a, j);
    }
    return constraint_rank<m + k, n>(GA, nullptr, constraint_rank_tolerances{}, previous).dependent;
  } else {
    (void)G, (void)A, (void)previous;
    return 0;
  }
}

// Whether bit `row` of a dropped-row mask is set (rows beyond the mask's 64 are never dropped).
LOCKSTEP_HD constexpr bool row_dropped(std::uint64_t dropped, int row) {
  return row < constraint_rank_max_rows && ((dropped >> row) & 1u) != 0;
}

// What the Newton matrix and its right-hand side do with dropped rows (fill_newton_matrix below), for one
// member's mask. The lanes backend overloads the three on its per-lane masks (lockstep/simd/
// newton_matrix_inl.hpp), found by argument-dependent lookup from the generic code below.
LOCKSTEP_HD constexpr bool any_row_dropped(std::uint64_t dropped) { return dropped != 0; }

// Makes unknown u of the Newton matrix N an identity row and column if constraint row `row` is dropped.
template <class E, int S>
LOCKSTEP_HD void pin_if_dropped(std::uint64_t dropped, int row, mat<E, S, S>& N, int u) {
  if (!row_dropped(dropped, row)) return;
  for (int j = 0; j < S; ++j) N(u, j) = N(j, u) = E{};
  N(u, u) = E(1.0);
}

// Zeroes the right-hand side's entry b of an identity row (pin_if_dropped).
template <class E>
LOCKSTEP_HD void zero_if_dropped(std::uint64_t dropped, int row, E& b) {
  if (row_dropped(dropped, row)) b = E{};
}

namespace detail {
// The blocks' values at (t, y, v') by automatic differentiation, on scalars S with parameters P (double,
// or packs: every line is the same operation for each, so a lane gets the bits of its member alone);
// evaluate_jacobian below adds the finiteness test and the rank decision. With mu_curvature, also
// H = d(G^T mu)/dq at y's mu (the term the Newton matrix leaves out, which the exact tangent step needs:
// lyapunov/tangent.hpp), at little more than the cost of K's d(G^T lambda)/dq. Chunk: the directions per
// AD pass (model/derivatives.hpp, ad::default_chunk); the blocks are the same bits for every Chunk.
template <class Model, int Chunk, class S, class P>
LOCKSTEP_HD void jacobian_block_values(formulation f, const S& t, const vec<S, state_layout<Model>::size>& y,
                                       const vec<S, Model::n>& vdot, const P* p, jacobian_values<Model, S>& J,
                                       baumgarte_gains gains, mat<S, Model::n, Model::n>* mu_curvature) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  vec<S, n> q, v;
  vec<S, m> lambda;
  vec<S, k> nu;
  for (int i = 0; i < n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  for (int i = 0; i < m; ++i) lambda[i] = y[L::lambda + i];
  for (int i = 0; i < k; ++i) nu[i] = y[L::nu + i];

  // Each evaluation is a phase (core/hd.hpp): on the device, for large members, a separate call whose
  // AD temporaries are gone when it returns. dQ/dq waits in J.K until d(M a)/dq is formed, so K is
  // d(M a)/dq - dQ/dq entry by entry as in one expression.
  constexpr bool separate = separate_device_phases<Model>;
  phase<separate>([&] { J.M = Model::template mass<S, P>(q, p); });
  phase<separate>([&] {
    force_entries<Model, Chunk>(
        t, q, v, p, [](int, const S&) {}, [&](int i, int j, const S& d) { J.K(i, j) = d; },
        [&](int i, int j, const S& d) { J.dQ_dv(i, j) = d; });
  });
  phase<separate>([&] {
    inertia_jacobian_entries<Model, Chunk>(q, vdot, p, [&](int i, int j, const S& d) { J.K(i, j) = d - J.K(i, j); });
  });
  if constexpr (m > 0) {
    phase<separate>([&] { J.G = constraint_jacobian<Model, Chunk>(t, q, p); });
    if (mu_curvature) {  // d(G^T mu)/dq as well, from the same differentiated G (tangents, ggl)
      phase<separate>([&] {
        vec<S, m> mu;
        for (int i = 0; i < m; ++i) mu[i] = y[L::mu + i];
        const auto both = constraint_force_jacobians<Model, Chunk>(t, q, lambda, mu, p);
        J.K = J.K + both.lambda;
        *mu_curvature = both.mu;
      });
    } else {
      // Added into K where formed (each entry once, its mirror too): K + d(G^T lambda)/dq entry by entry.
      phase<separate>([&] {
        constraint_force_jacobian_entries<Model, Chunk>(t, q, lambda, p, [&](int i, int j, const S& h) {
          J.K(i, j) = J.K(i, j) + h;
          if (i != j) J.K(j, i) = J.K(j, i) + h;
        });
      });
    }
    if (f == formulation::ggl)
      phase<separate>([&] { J.Psi_q = velocity_constraint_jacobian<Model, Chunk>(t, q, v, p); });
  }
  if constexpr (k > 0) {
    phase<separate>([&] { J.A = nonholonomic_linearize<Model, Chunk>(t, q, p).A; });
    phase<separate>([&] { J.K = J.K + nonholonomic_force_jacobian<Model, Chunk>(t, q, nu, p); });
    if (!acceleration_level(f)) phase<separate>([&] { J.A_q = nonholonomic_jacobian_q<Model, Chunk>(t, q, v, p); });
  }
  if (acceleration_level(f)) {
    phase<separate>([&] {
      const baumgarte_gains g = f == formulation::index1 ? gains : baumgarte_gains{};
      const auto acc = acceleration_rows_linearize<Model, Chunk>(t, q, v, vdot, g.alpha, g.beta, p);
      for (int j = 0; j < n; ++j) {
        for (int a = 0; a < m; ++a) {
          J.Psi_q(a, j) = acc.d_dq(a, j);
          J.Psi_v(a, j) = acc.d_dv(a, j);
        }
        for (int a = 0; a < k; ++a) {
          J.A_q(a, j) = acc.d_dq(m + a, j);
          J.A_v(a, j) = acc.d_dv(m + a, j);
        }
      }
    });
  }
}
}  // namespace detail

// The Jacobian blocks of one member at (t, y, v') (detail::jacobian_block_values), refused when an entry
// is not finite, with the rank decision on [G; A] (J.dropped).
template <class Model, int Chunk = ad::default_chunk>
LOCKSTEP_HD_SHARED member_status evaluate_jacobian(formulation f, double t, const state_vector<Model>& y,
                                                   const vec<double, Model::n>& vdot, const double* p,
                                                   jacobian_blocks<Model>& J, baumgarte_gains gains = {},
                                                   mat<double, Model::n, Model::n>* mu_curvature = nullptr) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  detail::jacobian_block_values<Model, Chunk>(f, t, y, vdot, p, J, gains, mu_curvature);
  bool finite = true;
  for (int i = 0; i < n * n; ++i) finite = finite && is_finite(J.M.a[i]) && is_finite(J.dQ_dv.a[i]) && is_finite(J.K.a[i]);
  for (int i = 0; i < m * n; ++i)
    finite = finite && is_finite(J.G.a[i]) && is_finite(J.Psi_q.a[i]) && is_finite(J.Psi_v.a[i]);
  for (int i = 0; i < k * n; ++i)
    finite = finite && is_finite(J.A.a[i]) && is_finite(J.A_q.a[i]) && is_finite(J.A_v.a[i]);
  if (!finite) return member_status::model_not_finite;
  // Always a separate call on the device: its Gram-Schmidt workspace ((m + k) x n twice) would
  // otherwise join the inlined frame of every step kernel (docs/GPU.md, the ptxas table).
  if constexpr (decides_constraint_rank<Model>)
    phase<true>([&] { J.dropped = dependent_constraint_rows<Model>(J.G, J.A, J.dropped); });
  return member_status::success;
}

// The scaled reduced Newton matrix at shift c, factored by the pivoted LU. E is double for BDF and
// Radau's real block, complex<double> for Radau's complex block; on a pack (SIMD lanes), one matrix
// per lane (lockstep/simd/newton_matrix_inl.hpp).
template <class Model, class E = double>
struct newton_matrix {
  static constexpr int size = state_layout<Model>::newton_size;
  mat<E, size, size> lu;
  vec<lane_index_t<E>, size> pivot;
  E c{};  // the shift it was factored for
};

namespace detail {
// The entries of the matrix of the header comment at shift c, from Jacobian blocks of scalar S and the
// dropped-row mask `dropped`: for one member (S double, E double or complex<double>, a 64-bit mask) or
// for W members in lanes (S and E packs, a mask per lane; lockstep/simd/newton_matrix_inl.hpp). Each
// lane's entries are then the bits its member's own are (tests/simd/newton_matrix_test.cpp).
template <class Model, class E, class S, class Dropped>
LOCKSTEP_HD void newton_matrix_entries(formulation f, const jacobian_values<Model, S>& J, const Dropped& dropped, E c,
                                       mat<E, state_layout<Model>::newton_size, state_layout<Model>::newton_size>& lu) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int il = n, imu = n + m, inu = n + 2 * m;  // block offsets in the Newton unknowns
  const E inv_c = E(1.0) / c;
  const E inv_c2 = inv_c * inv_c;
  lu = mat<E, state_layout<Model>::newton_size, state_layout<Model>::newton_size>{};
  // (M - D_v / c) appears twice: in the leading block and, times G^T, in the mu columns. One row of it
  // at a time serves both (each entry is the same sum either way), so no n x n temporary is held: on
  // the GPU it would sit in the thread's local memory (8 KB, 16 KB complex, for chain<16>).
  for (int i = 0; i < n; ++i) {
    vec<E, n> Mc;
    for (int j = 0; j < n; ++j) {
      Mc[j] = E(J.M(i, j)) - E(J.dQ_dv(i, j)) * inv_c;
      lu(i, j) = Mc[j] + E(J.K(i, j)) * inv_c2;
    }
    if (uses_mu(f))
      for (int b = 0; b < m; ++b) {
        E s{};
        for (int j = 0; j < n; ++j) s = s + Mc[j] * E(J.G(b, j));
        lu(i, imu + b) = s;
      }
  }
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < m; ++a) {
      lu(i, il + a) = E(J.G(a, i));
      lu(il + a, i) = E(J.G(a, i));
    }
  const bool accel = acceleration_level(f);
  for (int a = 0; a < k; ++a)
    for (int j = 0; j < n; ++j) {
      lu(j, inu + a) = E(J.A(a, j));
      lu(inu + a, j) = accel ? E(J.A(a, j)) + E(J.A_v(a, j)) * inv_c + E(J.A_q(a, j)) * inv_c2
                             : E(J.A(a, j)) + E(J.A_q(a, j)) * inv_c;
    }
  if (accel)  // the lambda rows are the acceleration rows (header comment), not G
    for (int a = 0; a < m; ++a)
      for (int j = 0; j < n; ++j) lu(il + a, j) = E(J.G(a, j)) + E(J.Psi_v(a, j)) * inv_c + E(J.Psi_q(a, j)) * inv_c2;
  if (uses_mu(f)) {
    for (int a = 0; a < m; ++a)
      for (int j = 0; j < n; ++j)
        lu(imu + a, j) = f == formulation::ggl ? E(J.G(a, j)) + E(J.Psi_q(a, j)) * inv_c : E(J.G(a, j));
    // The rows that see v (velocity-level rows in ggl, acceleration rows in projected invariants)
    // see Delta v's G^T Delta mu term, through G (and A) or through G + Acc_v / c (and A + A_v / c).
    for (int b = 0; b < m; ++b) {
      if (f == formulation::ggl) {
        for (int a = 0; a < m; ++a) {
          S s{};  // G G^T is real: summed in S, not in E
          for (int j = 0; j < n; ++j) s = s + J.G(a, j) * J.G(b, j);
          lu(imu + a, imu + b) = E(s);
        }
      } else {
        for (int a = 0; a < m; ++a) {
          E s{};
          for (int j = 0; j < n; ++j) s = s + (E(J.G(a, j)) + E(J.Psi_v(a, j)) * inv_c) * E(J.G(b, j));
          lu(il + a, imu + b) = s;
        }
      }
      for (int a = 0; a < k; ++a) {
        E s{};
        for (int j = 0; j < n; ++j) s = s + (accel ? E(J.A(a, j)) + E(J.A_v(a, j)) * inv_c : E(J.A(a, j))) * E(J.G(b, j));
        lu(inu + a, imu + b) = s;
      }
    }
  } else {
    for (int a = 0; a < m; ++a) lu(imu + a, imu + a) = E(1.0);  // mu is absent: Delta mu = 0
  }
  // A dropped constraint row keeps its multipliers where they are: its rows and columns become those
  // of an identity (Delta lambda_a = Delta mu_a = 0, Delta nu_a = 0), as index3 pins mu. The remaining
  // matrix is that of the independent rows alone, nonsingular where theirs is.
  if (any_row_dropped(dropped)) {
    for (int a = 0; a < m; ++a) {
      pin_if_dropped(dropped, a, lu, il + a);
      pin_if_dropped(dropped, a, lu, imu + a);
    }
    for (int a = 0; a < k; ++a) pin_if_dropped(dropped, m + a, lu, inu + a);
  }
}

// assemble_newton_matrix's body, a device call for the double pendulum (separate_newton_phases).
template <class Model, class E>
LOCKSTEP_HD void fill_newton_matrix(formulation f, const jacobian_blocks<Model>& J, E c, newton_matrix<Model, E>& N) {
  N.c = c;
  newton_matrix_entries<Model, E>(f, J, J.dropped, c, N.lu);
}
}  // namespace detail

// Assembles the matrix of the header comment from the Jacobian blocks into N.lu (unfactored) and sets
// N.c. factor_newton_matrix is this followed by lu_factor; the split path of lockstep/detail/split_factor.hpp
// stops here and factors the assembled matrices of many members in one batch (docs/GPU.md section 5).
template <class Model, class E>
LOCKSTEP_HD void assemble_newton_matrix(formulation f, const jacobian_blocks<Model>& J, E c,
                                        newton_matrix<Model, E>& N) {
  phase<separate_newton_phases<Model>>([&] { detail::fill_newton_matrix<Model, E>(f, J, c, N); });
}

// Assembles the matrix of the header comment from the Jacobian blocks and factors it. Returns
// success, singular_matrix or model_not_finite.
template <class Model, class E>
LOCKSTEP_HD member_status factor_newton_matrix(formulation f, const jacobian_blocks<Model>& J, E c,
                                               newton_matrix<Model, E>& N) {
  assemble_newton_matrix<Model, E>(f, J, c, N);
  member_status status = member_status::success;
  phase<separate_newton_phases<Model>>([&] { status = factorization_status(lu_factor(N.lu, N.pivot)); });
  return status;
}

// The Newton solve in three parts, so that several right-hand sides can share one pass over the factors
// (solve_newton_columns): the scaled right-hand side of the header comment, the triangular solves, and
// the recovery of the unscaled increments and of Delta v.
// Generic in the blocks' scalar S and the dropped-row mask as newton_matrix_entries is.
template <class Model, class E, class S, class Dropped>
LOCKSTEP_HD void newton_right_side(formulation f, const jacobian_values<Model, S>& J, const Dropped& dropped,
                                   const E& c, const vec<E, Model::n>& Fq, const vec<E, Model::n>& Fv,
                                   const vec<E, Model::m>& Fphi, const vec<E, Model::m>& Fpsi,
                                   const vec<E, Model::k>& Fa, vec<E, state_layout<Model>::newton_size>& b) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int il = n, imu = n + m, inu = n + 2 * m;
  const E inv_c = E(1.0) / c;
  const E inv_c2 = inv_c * inv_c;
  for (int i = 0; i < n; ++i) {
    E CvFq{};
    for (int j = 0; j < n; ++j) CvFq = CvFq + (c * E(J.M(i, j)) - E(J.dQ_dv(i, j))) * Fq[j];
    b[i] = -(Fv[i] + CvFq) * inv_c2;
  }
  const bool accel = acceleration_level(f);
  for (int a = 0; a < m; ++a) {
    if (accel) {
      E CFq{};
      for (int j = 0; j < n; ++j) CFq = CFq + (c * E(J.G(a, j)) + E(J.Psi_v(a, j))) * Fq[j];
      b[il + a] = -(Fphi[a] + CFq) * inv_c2;
    } else {
      b[il + a] = -Fphi[a];
    }
    if (f == formulation::ggl) {
      E GFq{};
      for (int j = 0; j < n; ++j) GFq = GFq + E(J.G(a, j)) * Fq[j];
      b[imu + a] = -(Fpsi[a] + GFq) * inv_c;
    } else if (f == formulation::projected_invariants) {
      b[imu + a] = -Fpsi[a];
    } else {
      b[imu + a] = E{};
    }
  }
  for (int a = 0; a < k; ++a) {
    if (accel) {
      E CFq{};
      for (int j = 0; j < n; ++j) CFq = CFq + (c * E(J.A(a, j)) + E(J.A_v(a, j))) * Fq[j];
      b[inu + a] = -(Fa[a] + CFq) * inv_c2;
    } else {
      E AFq{};
      for (int j = 0; j < n; ++j) AFq = AFq + E(J.A(a, j)) * Fq[j];
      b[inu + a] = -(Fa[a] + AFq) * inv_c;
    }
  }
  if (any_row_dropped(dropped)) {  // the identity rows of dropped constraints (newton_matrix_entries)
    for (int a = 0; a < m; ++a) {
      zero_if_dropped(dropped, a, b[il + a]);
      zero_if_dropped(dropped, a, b[imu + a]);
    }
    for (int a = 0; a < k; ++a) zero_if_dropped(dropped, m + a, b[inu + a]);
  }
}

// The right-hand side for one member's blocks.
template <class Model, class E>
LOCKSTEP_HD void newton_right_side(formulation f, const jacobian_blocks<Model>& J, const E& c,
                                   const vec<E, Model::n>& Fq, const vec<E, Model::n>& Fv,
                                   const vec<E, Model::m>& Fphi, const vec<E, Model::m>& Fpsi,
                                   const vec<E, Model::k>& Fa, vec<E, state_layout<Model>::newton_size>& b) {
  newton_right_side<Model, E>(f, J, J.dropped, c, Fq, Fv, Fphi, Fpsi, Fa, b);
}

template <class Model, class E, class S>
LOCKSTEP_HD void newton_recover(formulation f, const jacobian_values<Model, S>& J, const E& c,
                                const vec<E, state_layout<Model>::newton_size>& b, const vec<E, Model::n>& Fq,
                                vec<E, Model::n>& dq, vec<E, Model::n>& dv, vec<E, Model::m>& dlambda,
                                vec<E, Model::m>& dmu, vec<E, Model::k>& dnu) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int il = n, imu = n + m, inu = n + 2 * m;
  const E c2 = c * c;
  for (int i = 0; i < n; ++i) dq[i] = b[i];
  for (int a = 0; a < m; ++a) {
    dlambda[a] = c2 * b[il + a];
    dmu[a] = uses_mu(f) ? c * b[imu + a] : E{};
  }
  for (int a = 0; a < k; ++a) dnu[a] = c2 * b[inu + a];
  for (int i = 0; i < n; ++i) {
    E s = c * dq[i] + Fq[i];
    for (int a = 0; a < m; ++a) s = s + E(J.G(a, i)) * dmu[a];
    dv[i] = s;
  }
}

// The Newton increment Delta y for the residual r (Delta y solves J Delta y = -F), unscaled, in the
// layout of y. E = double here; Radau's complex block uses its own transformation on top of this one.
template <class Model, class E>
LOCKSTEP_HD void solve_newton(formulation f, const jacobian_blocks<Model>& J, const newton_matrix<Model, E>& N,
                              const vec<E, Model::n>& Fq,
                              const vec<E, Model::n>& Fv, const vec<E, Model::m>& Fphi,
                              const vec<E, Model::m>& Fpsi, const vec<E, Model::k>& Fa, vec<E, Model::n>& dq,
                              vec<E, Model::n>& dv, vec<E, Model::m>& dlambda, vec<E, Model::m>& dmu,
                              vec<E, Model::k>& dnu) {
  vec<E, state_layout<Model>::newton_size> b;
  newton_right_side<Model, E>(f, J, N.c, Fq, Fv, Fphi, Fpsi, Fa, b);
  lu_solve(N.lu, N.pivot, b);
  newton_recover<Model, E>(f, J, N.c, b, Fq, dq, dv, dlambda, dmu, dnu);
}

// solve_newton for the residuals r[0 .. count - 1] (count <= R), each increment (in the layout of y)
// bitwise what solve_newton gives for it alone: the same operations, with the triangular solves of all
// columns done in one pass (lu_solve's interleaved columns).
template <class Model, int R>
LOCKSTEP_HD void solve_newton_columns(formulation f, const jacobian_blocks<Model>& J,
                                      const newton_matrix<Model, double>& N, const residual_parts<Model>* r,
                                      int count, state_vector<Model>* increments) {
  using L = state_layout<Model>;
  constexpr int size = L::newton_size, n = Model::n, m = Model::m, k = Model::k;
  mat<double, size, R> B;
  for (int col = 0; col < count; ++col) {
    vec<double, size> b;
    newton_right_side<Model, double>(f, J, N.c, r[col].Fq, r[col].Fv, r[col].Fphi, r[col].Fpsi, r[col].Fa, b);
    for (int i = 0; i < size; ++i) B(i, col) = b[i];
  }
  lu_solve(N.lu, N.pivot, B, count);
  for (int col = 0; col < count; ++col) {
    vec<double, size> b;
    for (int i = 0; i < size; ++i) b[i] = B(i, col);
    vec<double, n> dq, dv;
    vec<double, m> dl, dm;
    vec<double, k> dn;
    newton_recover<Model, double>(f, J, N.c, b, r[col].Fq, dq, dv, dl, dm, dn);
    state_vector<Model>& d = increments[col];
    for (int i = 0; i < n; ++i) {
      d[L::q + i] = dq[i];
      d[L::v + i] = dv[i];
    }
    for (int a = 0; a < m; ++a) {
      d[L::lambda + a] = dl[a];
      d[L::mu + a] = dm[a];
    }
    for (int a = 0; a < k; ++a) d[L::nu + a] = dn[a];
  }
}

}  // namespace lockstep
