// lockstep/formulation/projection.hpp — projections onto the constraint manifold: after an accepted
// step of any method (stepper/member.hpp), and for consistent initial values (method/initialize.hpp).
//
// Every correction is of minimal norm in a metric W (Mantegazza & Masarati 2012, eq. 121: W = K for positions, D M^-1
// for velocities): W = M(q) (kinetic energy, the default) or W = I. For constraints B x = -r (to first
// order) the correction is dx = -W^-1 B^T (B W^-1 B^T)^-1 r; its Gram matrix B W^-1 B^T is SPD when the
// constraints are independent and is factored by Cholesky, which reports a singular one.
//
// Coordinate projection (Ascher & Petzold 1998, section 10.2.1, "co-ordinate projection"):
//   q: the point of Phi(t, q) = 0 nearest to the step's q~ in the metric, by Gauss-Newton
//          q <- q - W^-1 G^T (G W^-1 G^T)^-1 Phi(q),   G at the current iterate, W = W(q~) fixed,
//      until the correction is at round-off. Every correction lies in W^-1 range(G^T): the optimality
//      condition W (q - q~) = G^T lambda* of min ||q - q~||_W subject to Phi = 0, to first order.
//   v: the minimal-W-norm correction onto the velocity constraints C v + c = 0, C = [G; A],
//      c = [Phi_t; a], at the projected q: holonomic and non-holonomic rows together. The problem is
//      linear; the solve is repeated once so the residual is at round-off even for a poorly
//      conditioned Gram matrix.
// Post-stabilization (Ascher & Petzold 1998, section 10.2.2, the algorithm for multibody systems): with the
//   invariants h(q, v) = (Phi, C v + c),
//       (q, v) <- (q, v) - F h(q, v),   F = diag(B (G B)^-1, B_C (C B_C)^-1),  B = W^-1 G^T, B_C = W^-1 C^T,
//   applied twice with F, and its factorizations, kept from the first application: as they note,
//   H F = [I 0; L I] with L = d(G v)/dq B (G B)^-1, so (I - H F)^2 = 0 and the second application
//   removes what the first leaves in the velocity invariant; with its factorizations kept it costs one
//   evaluation of h.
//   W = M is their B = M^-1 G^T; W = I is their alternative F = G^T (G G^T)^-1. The non-holonomic rows
//   join the velocity part (they note these would need one application only; the second is harmless).
//   Since G F_q = I, one application leaves |Phi| = O(h^(2(p+1))) after a method of order p (their section
//   10.2.1 bound with rho = 0); after the second, with F frozen at the first point, |G v + Phi_t| is
//   O(h^(2(p+1))) and |Phi| O(h^(3(p+1))) (measured after backward Euler: slopes 4.0 and 6.0,
//   tests/formulation/index1_test.cpp).
// Projected invariants (Ascher & Petzold 1993, end of section 4 and recommendation 5 of section 5):
//   that formulation keeps Phi = 0 but not the velocity constraints, so its steps are followed by the
//   velocity part of the coordinate projection, at the step's q, whatever `projection` says.
//
// Dependent constraint rows (formulation/constraint_rank.hpp, the mask of jacobian_blocks::dropped):
//   every projector takes the member's mask and corrects with the independent rows alone. A dropped
//   row's column of W^-1 B^T is zero and its Gram row and column are those of an identity, so the
//   Cholesky factorization sees the independent rows' Gram matrix (SPD) instead of a singular one; the
//   correction satisfies the dropped rows to first order because they are combinations of the others.
//
// None of this changes a step-size decision: the stepper applies it after acceptance and records the
// size of the corrections. Everything here is LOCKSTEP_HD, allocation-free and returns a status.
// project_state also exists as a computation resumable at its Cholesky factorizations (run_projection,
// at the end), for the split path's batched factor phase.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep {

// The metric of minimal-norm corrections: || dq ||_M = sqrt(dq^T M dq) (kinetic energy, the default)
// or the Euclidean norm.
enum class projection_metric : int { mass = 0, euclidean = 1 };

// What follows every accepted step.
enum class projection_kind : int {
  none = 0,
  coordinate = 1,          // q onto Phi = 0 by Gauss-Newton, then v onto C v + c = 0
  post_stabilization = 2,  // (q, v) -= F h(q, v), twice, F = B (G B)^-1 kept (Ascher & Petzold 1998, 10.2.2)
};

// The name used in study files and results.
LOCKSTEP_HD constexpr const char* projection_name(projection_kind k) {
  switch (k) {
    case projection_kind::none: return "none";
    case projection_kind::coordinate: return "coordinate";
    case projection_kind::post_stabilization: return "post-stabilization";
  }
  return "unknown";
}

// Whether accepted steps are followed by a projection: the option, or the projected-invariants
// formulation's own velocity projection.
LOCKSTEP_HD constexpr bool projects_after_steps(projection_kind kind, formulation f) {
  return kind != projection_kind::none || f == formulation::projected_invariants;
}

// The metric, with M's Cholesky factor. M is factored for both metrics: a mass matrix that is not SPD
// is refused either way.
template <class Model>
struct metric_factor {
  projection_metric metric = projection_metric::mass;
  mat<double, Model::n, Model::n> M_chol;
};

// M(q) into W.M_chol, unfactored: the first half of factor_metric (the split path factors it later).
template <class Model>
LOCKSTEP_HD void assemble_metric(projection_metric metric, const vec<double, Model::n>& q, const double* p,
                                 metric_factor<Model>& W) {
  W.metric = metric;
  W.M_chol = Model::template mass<double, double>(q, p);
}

// Returns success, singular_matrix (M not SPD) or model_not_finite.
template <class Model>
LOCKSTEP_HD member_status factor_metric(projection_metric metric, const vec<double, Model::n>& q, const double* p,
                                        metric_factor<Model>& W) {
  assemble_metric<Model>(metric, q, p, W);
  return factorization_status(cholesky_factor(W.M_chol));
}

// W^-1 X, column by column.
template <class Model, int C>
LOCKSTEP_HD mat<double, Model::n, C> apply_inverse_metric(const metric_factor<Model>& W,
                                                          const mat<double, Model::n, C>& X) {
  if (W.metric == projection_metric::euclidean) return X;
  mat<double, Model::n, C> R;
  for (int c = 0; c < C; ++c) {
    vec<double, Model::n> x;
    for (int i = 0; i < Model::n; ++i) x[i] = X(i, c);
    cholesky_solve(W.M_chol, x);
    for (int i = 0; i < Model::n; ++i) R(i, c) = x[i];
  }
  return R;
}

// The factored minimal-norm correction for R constraint rows B: kept so that it can be applied again
// (post-stabilization's second application, the velocity projection's second pass).
template <class Model, int R>
struct minimal_norm_projector {
  mat<double, Model::n, R> WinvBt;  // W^-1 B^T
  mat<double, R, R> gram;           // Cholesky factor of B W^-1 B^T
  std::uint64_t dropped = 0;        // the rows left out (see the header)
};

// W^-1 B^T and the Gram matrix B W^-1 B^T, unfactored: the first half of factor_projector. The rows
// of B set in `dropped` are left out (see the header).
template <class Model, int R>
LOCKSTEP_HD void assemble_projector(const metric_factor<Model>& W, const mat<double, R, Model::n>& B,
                                    minimal_norm_projector<Model, R>& P, std::uint64_t dropped = 0) {
  P.dropped = dropped;
  P.WinvBt = apply_inverse_metric<Model, R>(W, transpose(B));
  if (dropped != 0)  // W^-1 applies column by column: a dropped row's column is zeroed after it, no copy of B
    for (int a = 0; a < R; ++a)
      if (row_dropped(dropped, a))
        for (int j = 0; j < Model::n; ++j) P.WinvBt(j, a) = 0.0;
  P.gram = B * P.WinvBt;
  if (dropped != 0)  // the dropped rows of the Gram matrix: those of an identity
    for (int a = 0; a < R; ++a)
      if (row_dropped(dropped, a)) {
        for (int b = 0; b < R; ++b) P.gram(a, b) = 0.0;
        P.gram(a, a) = 1.0;
      }
}

// Returns success, singular_matrix (dependent rows: the Gram matrix is not positive definite) or
// model_not_finite.
template <class Model, int R>
LOCKSTEP_HD member_status factor_projector(const metric_factor<Model>& W, const mat<double, R, Model::n>& B,
                                           minimal_norm_projector<Model, R>& P, std::uint64_t dropped = 0) {
  assemble_projector<Model, R>(W, B, P, dropped);
  return factorization_status(cholesky_factor(P.gram));
}

// dx = -W^-1 B^T (B W^-1 B^T)^-1 r: the minimal-W-norm dx with B dx = -r.
template <class Model, int R>
LOCKSTEP_HD vec<double, Model::n> minimal_norm_correction(const minimal_norm_projector<Model, R>& P,
                                                          const vec<double, R>& r) {
  vec<double, R> y = r;
  for (int a = 0; P.dropped != 0 && a < R; ++a)
    if (row_dropped(P.dropped, a)) y[a] = 0.0;
  cholesky_solve(P.gram, y);
  return -(P.WinvBt * y);
}

// The velocity constraints C v + c = 0 at (t, q): C = [G; A], c = [Phi_t; a] (m + k rows), with Phi.
template <class Model>
struct velocity_constraint_rows {
  mat<double, Model::m + Model::k, Model::n> C;
  vec<double, Model::m + Model::k> c;
  vec<double, Model::m> phi;
};

template <class Model>
LOCKSTEP_HD velocity_constraint_rows<Model> velocity_constraints_at(double t, const vec<double, Model::n>& q,
                                                                    const double* p) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  velocity_constraint_rows<Model> out;
  if constexpr (m > 0) {
    const auto con = constraint_linearize<Model>(t, q, p);
    out.phi = con.phi;
    for (int a = 0; a < m; ++a) {
      for (int j = 0; j < n; ++j) out.C(a, j) = con.G(a, j);
      out.c[a] = con.phi_t[a];
    }
  }
  if constexpr (k > 0) {
    const auto nh = nonholonomic_linearize<Model>(t, q, p);
    for (int a = 0; a < k; ++a) {
      for (int j = 0; j < n; ++j) out.C(m + a, j) = nh.A(a, j);
      out.c[m + a] = nh.a[a];
    }
  }
  return out;
}

// One Gauss-Newton update q <- q - W^-1 G^T (G W^-1 G^T)^-1 Phi(q) with the factored projector of G at
// q; true when converged (see project_positions). `previous` is the size of the last correction.
template <class Model>
LOCKSTEP_HD bool gauss_newton_update(const minimal_norm_projector<Model, Model::m>& P, const vec<double, Model::m>& phi,
                                     vec<double, Model::n>& q, int iteration, double& previous) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const vec<double, Model::n> dq = minimal_norm_correction<Model, Model::m>(P, phi);
  q = q + dq;
  const double size = norm_inf(dq), scale = 1.0 + norm_inf(q);
  if (size <= 4.0 * eps * scale) return true;
  if (iteration > 0 && size >= 0.5 * previous && size <= sqrt(eps) * scale) return true;
  previous = size;
  return false;
}

// Gauss-Newton onto Phi(t, q) = 0 in the metric W (see the header). Converged when the correction is
// at round-off: below 4 eps (1 + |q|), or no longer contracting (at least half the previous one) while
// below sqrt(eps) (1 + |q|), where a contracting iteration would be quadratically close to the
// solution. The second test matters for ill-conditioned Gram matrices (masses differing by 1e6 give
// cond(G M^-1 G^T) ~ 1e6), whose round-off floor lies above 4 eps. Returns success, singular_matrix,
// model_not_finite, or projection_failed when not converged after max_iterations. The rows of G set in
// `dropped` are left out. Given `decision` (consistent initialization, where no decision exists yet),
// the rank of G is decided at every iterate instead, the first time from `dropped`, then from the
// last decision (the hysteresis of constraint_rank.hpp), and *decision is the last one.
template <class Model>
LOCKSTEP_HD member_status project_positions(double t, vec<double, Model::n>& q, const double* p,
                                            const metric_factor<Model>& W, int max_iterations,
                                            std::uint64_t dropped = 0, std::uint64_t* decision = nullptr) {
  constexpr int m = Model::m;
  if constexpr (m > 0) {
    double previous = 0.0;
    for (int iter = 0; iter < max_iterations; ++iter) {
      const auto con = constraint_linearize<Model>(t, q, p);
      if constexpr (m <= constraint_rank_max_rows) {
        if (decision != nullptr) {
          // A non-finite row would count as dependent and vanish from the projection: refuse it.
          for (int i = 0; i < m * Model::n; ++i)
            if (!is_finite(con.G.a[i])) return member_status::model_not_finite;
          dropped = constraint_rank<m, Model::n>(con.G, nullptr, constraint_rank_tolerances{}, dropped).dependent;
          *decision = dropped;
        }
      }
      minimal_norm_projector<Model, m> P;
      const member_status s = factor_projector<Model, m>(W, con.G, P, dropped);
      if (s != member_status::success) return s;
      if (gauss_newton_update<Model>(P, con.phi, q, iter, previous)) return member_status::success;
    }
    return member_status::projection_failed;
  } else {
    (void)t, (void)q, (void)p, (void)W, (void)max_iterations, (void)dropped, (void)decision;
    return member_status::success;
  }
}

// The two passes of the velocity projection with the factored projector P of rows.C.
template <class Model>
LOCKSTEP_HD void correct_velocities(const minimal_norm_projector<Model, Model::m + Model::k>& P,
                                    const velocity_constraint_rows<Model>& rows, vec<double, Model::n>& v) {
  for (int pass = 0; pass < 2; ++pass)
    v = v + minimal_norm_correction<Model, Model::m + Model::k>(P, rows.C * v + rows.c);
}

// v onto C v + c = 0 at (t, q), minimal in the metric W (two passes with one factorization).
template <class Model>
LOCKSTEP_HD member_status project_velocities(double t, const vec<double, Model::n>& q, vec<double, Model::n>& v,
                                             const double* p, const metric_factor<Model>& W, std::uint64_t dropped = 0) {
  constexpr int r = Model::m + Model::k;
  if constexpr (r > 0) {
    const velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t, q, p);
    minimal_norm_projector<Model, r> P;
    const member_status s = factor_projector<Model, r>(W, rows.C, P, dropped);
    if (s != member_status::success) return s;
    correct_velocities<Model>(P, rows, v);
  } else {
    (void)t, (void)q, (void)v, (void)p, (void)W, (void)dropped;
  }
  return member_status::success;
}

// The holonomic rows G of C = [G; A].
template <class Model>
LOCKSTEP_HD mat<double, Model::m, Model::n> holonomic_rows(const velocity_constraint_rows<Model>& rows) {
  mat<double, Model::m, Model::n> G;
  for (int a = 0; a < Model::m; ++a)
    for (int j = 0; j < Model::n; ++j) G(a, j) = rows.C(a, j);
  return G;
}

// Post-stabilization's `applications` of F h(q, v) with the factored Pq, Pv of the first point, whose
// invariants are `rows` (overwritten by those of later points).
template <class Model>
LOCKSTEP_HD void apply_post_stabilization(const minimal_norm_projector<Model, Model::m>& Pq,
                                          const minimal_norm_projector<Model, Model::m + Model::k>& Pv,
                                          velocity_constraint_rows<Model>& rows, double t, vec<double, Model::n>& q,
                                          vec<double, Model::n>& v, const double* p, int applications) {
  constexpr int m = Model::m, r = Model::m + Model::k;
  for (int application = 0; application < applications; ++application) {
    if (application > 0) rows = velocity_constraints_at<Model>(t, q, p);  // h at the new point, F kept
    const vec<double, r> w = rows.C * v + rows.c;
    if constexpr (m > 0) q = q + minimal_norm_correction<Model, m>(Pq, rows.phi);
    if constexpr (r > 0) v = v + minimal_norm_correction<Model, r>(Pv, w);
  }
}

// Post-stabilization of (q, v) at t (see the header): `applications` times F h(q, v), with F and its
// factorizations from the first point. Ascher & Petzold's algorithm is applications = 2; 1 is its one-step
// bound, kept callable for the tests that measure it.
template <class Model>
LOCKSTEP_HD member_status post_stabilize(double t, vec<double, Model::n>& q, vec<double, Model::n>& v, const double* p,
                                         projection_metric metric, int applications = 2, std::uint64_t dropped = 0) {
  constexpr int m = Model::m, r = Model::m + Model::k;
  metric_factor<Model> W;
  member_status s = factor_metric<Model>(metric, q, p, W);
  if (s != member_status::success) return s;
  velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t, q, p);
  minimal_norm_projector<Model, m> Pq;
  minimal_norm_projector<Model, r> Pv;
  if constexpr (m > 0) {
    s = factor_projector<Model, m>(W, holonomic_rows<Model>(rows), Pq, dropped);
    if (s != member_status::success) return s;
  }
  if constexpr (r > 0) {
    s = factor_projector<Model, r>(W, rows.C, Pv, dropped);
    if (s != member_status::success) return s;
  }
  apply_post_stabilization<Model>(Pq, Pv, rows, t, q, v, p, applications);
  return member_status::success;
}

// Max-norms of the corrections one projection made.
struct projection_sizes {
  double q = 0.0;
  double v = 0.0;
};

// Gauss-Newton iterations of the projection after a step: from a step's end point it converges
// quadratically, 2-3 suffice.
inline constexpr int accepted_point_gauss_newton_iterations = 10;

// The end of project_state: the status of the projection that took y's (q, v) to (q, v) (a singular
// Gram matrix reported as projection_failed, a non-finite result as model_not_finite); on success, y
// takes (q, v) and `sizes` the corrections.
template <class Model>
LOCKSTEP_HD member_status accept_projection(member_status s, const vec<double, Model::n>& q,
                                            const vec<double, Model::n>& v, state_vector<Model>& y,
                                            projection_sizes& sizes) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  if (s == member_status::success)
    for (int i = 0; i < n; ++i)
      if (!is_finite(q[i]) || !is_finite(v[i])) s = member_status::model_not_finite;
  if (s == member_status::singular_matrix) s = member_status::projection_failed;
  if (s != member_status::success) return s;
  vec<double, n> q0, v0;
  for (int i = 0; i < n; ++i) {
    q0[i] = y[L::q + i];
    v0[i] = y[L::v + i];
  }
  sizes.q = norm_inf(q - q0);
  sizes.v = norm_inf(v - v0);
  for (int i = 0; i < n; ++i) {
    y[L::q + i] = q[i];
    y[L::v + i] = v[i];
  }
  return member_status::success;
}

// The projection after an accepted step at (t, y): `kind`, plus the projected-invariants formulation's
// own velocity projection. Only q and v change; the multipliers are the method's (they are
// recomputed from (q, v) at save times when consistent_multipliers is on). Returns success,
// projection_failed (singular Gram matrix, no convergence) or model_not_finite; y is unchanged then.
// `dropped`: the member's dependent constraint rows, left out (see the header).
template <class Model>
LOCKSTEP_HD_SHARED member_status project_state(projection_kind kind, formulation f, projection_metric metric, double t,
                                               state_vector<Model>& y, const double* p, projection_sizes& sizes,
                                               std::uint64_t dropped = 0) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  vec<double, n> q, v;
  for (int i = 0; i < n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  member_status s = member_status::success;
  if (kind == projection_kind::post_stabilization) {
    s = post_stabilize<Model>(t, q, v, p, metric, 2, dropped);
  } else if (projects_after_steps(kind, f)) {
    metric_factor<Model> W;
    s = factor_metric<Model>(metric, q, p, W);
    if (s == member_status::success && kind == projection_kind::coordinate)
      s = project_positions<Model>(t, q, p, W, accepted_point_gauss_newton_iterations, dropped);
    if (s == member_status::success) s = project_velocities<Model>(t, q, v, p, W, dropped);
  }
  return accept_projection<Model>(s, q, v, y, sizes);
}

// ---- project_state, resumable at its Cholesky factorizations (the split path) ----
//
// The split path (lockstep/detail/split_factor.hpp, docs/GPU.md section 5.4) moves the factorizations
// of an accepted point's projection into the batch phase between launches, as it does for the Newton
// matrices. Unlike a step attempt, the projection cannot be replayed from its start: its accepted step
// has already moved the method's t and history. So it stops at each factorization and resumes there:
// its locals are kept in `projection_work` (stored beside the member state, by the split path only:
// the fused path calls project_state, whose locals stay in the thread and cost nothing more), and
// where it stopped is the phase, named by the matrix that awaits its factor. The arithmetic is
// project_state's, through the same functions in the same order, and the factor phase applies the same
// cholesky_factor to the same matrix (on CUDA: cusolverDnDpotrfBatched), so the CPU emulation gives
// bitwise the fused results.
//
//   coordinate:          metric -> positions (once per Gauss-Newton iteration, <= 10) -> velocities
//   projected invariants (kind none): metric -> velocities
//   post-stabilization:  metric -> stabilization_positions -> stabilization_velocities
// (a phase whose matrix has no rows, m = 0 or m + k = 0, is skipped, as project_state skips it).
enum class projection_phase : int {
  idle = 0,                      // no projection under way
  metric = 1,                    // M(q~) in W.M_chol (n x n)
  positions = 2,                 // a Gauss-Newton iteration's G W^-1 G^T in Pq.gram (m x m)
  velocities = 3,                // C W^-1 C^T at the projected q in Pv.gram ((m + k) x (m + k))
  stabilization_positions = 4,   // post-stabilization's G W^-1 G^T in Pq.gram
  stabilization_velocities = 5,  // post-stabilization's C W^-1 C^T in Pv.gram
};

// The factor phase's hand-over, like method/attempt.hpp's external_factors: a factorization of more
// than `split_above` rows is left `pending` (the others are made in the thread); the factor phase sets
// `ready` and the status factorization_status would give.
struct external_cholesky {
  int split_above = 0;
  bool pending = false;
  bool ready = false;
  member_status status = member_status::success;
};

template <class Model>
struct projection_work {
  projection_phase phase = projection_phase::idle;
  external_cholesky external;
  int iteration = 0;      // Gauss-Newton's
  double previous = 0.0;  // the size of Gauss-Newton's last correction
  std::uint64_t dropped = 0;  // the member's dependent constraint rows, left out
  vec<double, Model::n> q, v;
  metric_factor<Model> W;
  minimal_norm_projector<Model, Model::m> Pq;
  minimal_norm_projector<Model, Model::m + Model::k> Pv;
  velocity_constraint_rows<Model> rows;  // Gauss-Newton keeps its Phi in rows.phi
};

// The rows of the matrix a phase factors.
template <class Model>
LOCKSTEP_HD constexpr int cholesky_rows(projection_phase phase) {
  switch (phase) {
    case projection_phase::metric: return Model::n;
    case projection_phase::positions:
    case projection_phase::stabilization_positions: return Model::m;
    case projection_phase::velocities:
    case projection_phase::stabilization_velocities: return Model::m + Model::k;
    case projection_phase::idle: break;
  }
  return 0;
}

// cholesky_factor of the matrix the phase assembled, in place.
template <class Model>
LOCKSTEP_HD factor_result factor_phase_matrix(projection_work<Model>& w) {
  switch (w.phase) {
    case projection_phase::metric: return cholesky_factor(w.W.M_chol);
    case projection_phase::positions:
    case projection_phase::stabilization_positions: return cholesky_factor(w.Pq.gram);
    case projection_phase::velocities:
    case projection_phase::stabilization_velocities: return cholesky_factor(w.Pv.gram);
    case projection_phase::idle: break;
  }
  return factor_result{};
}

namespace detail {

// Each assembles the next phase's matrix and returns running, or ends the projection (phase idle) and
// returns its status.
template <class Model>
LOCKSTEP_HD member_status end_projection(projection_work<Model>& w, member_status s) {
  w.phase = projection_phase::idle;
  return s;
}

template <class Model>
LOCKSTEP_HD member_status begin_velocity_projection(projection_work<Model>& w, double t, const double* p) {
  constexpr int r = Model::m + Model::k;
  if constexpr (r > 0) {
    w.rows = velocity_constraints_at<Model>(t, w.q, p);
    assemble_projector<Model, r>(w.W, w.rows.C, w.Pv, w.dropped);
    w.phase = projection_phase::velocities;
    return member_status::running;
  } else {
    (void)t, (void)p;
    return end_projection(w, member_status::success);
  }
}

template <class Model>
LOCKSTEP_HD member_status begin_gauss_newton_iteration(projection_work<Model>& w, double t, const double* p) {
  if constexpr (Model::m > 0) {
    const auto con = constraint_linearize<Model>(t, w.q, p);
    w.rows.phi = con.phi;
    assemble_projector<Model, Model::m>(w.W, con.G, w.Pq, w.dropped);
    w.phase = projection_phase::positions;
    return member_status::running;
  } else {
    return begin_velocity_projection(w, t, p);
  }
}

template <class Model>
LOCKSTEP_HD member_status begin_stabilization_velocities(projection_work<Model>& w, double t, const double* p) {
  constexpr int r = Model::m + Model::k;
  if constexpr (r > 0) {
    (void)t, (void)p;
    assemble_projector<Model, r>(w.W, w.rows.C, w.Pv, w.dropped);
    w.phase = projection_phase::stabilization_velocities;
    return member_status::running;
  } else {
    apply_post_stabilization<Model>(w.Pq, w.Pv, w.rows, t, w.q, w.v, p, 2);
    return end_projection(w, member_status::success);
  }
}

template <class Model>
LOCKSTEP_HD member_status begin_stabilization(projection_work<Model>& w, double t, const double* p) {
  w.rows = velocity_constraints_at<Model>(t, w.q, p);
  if constexpr (Model::m > 0) {
    assemble_projector<Model, Model::m>(w.W, holonomic_rows<Model>(w.rows), w.Pq, w.dropped);
    w.phase = projection_phase::stabilization_positions;
    return member_status::running;
  } else {
    return begin_stabilization_velocities(w, t, p);
  }
}

// The work after the phase's matrix was factored with status `factored`, up to the next matrix.
template <class Model>
LOCKSTEP_HD member_status continue_projection(projection_work<Model>& w, member_status factored, projection_kind kind,
                                              double t, const double* p) {
  if (factored != member_status::success) return end_projection(w, factored);
  switch (w.phase) {
    case projection_phase::metric:
      if (kind == projection_kind::post_stabilization) return begin_stabilization(w, t, p);
      if (kind == projection_kind::coordinate) return begin_gauss_newton_iteration(w, t, p);
      return begin_velocity_projection(w, t, p);
    case projection_phase::positions:
      if constexpr (Model::m > 0)
        if (gauss_newton_update<Model>(w.Pq, w.rows.phi, w.q, w.iteration, w.previous))
          return begin_velocity_projection(w, t, p);
      if (++w.iteration == accepted_point_gauss_newton_iterations)
        return end_projection(w, member_status::projection_failed);
      return begin_gauss_newton_iteration(w, t, p);
    case projection_phase::velocities:
      correct_velocities<Model>(w.Pv, w.rows, w.v);
      return end_projection(w, member_status::success);
    case projection_phase::stabilization_positions: return begin_stabilization_velocities(w, t, p);
    case projection_phase::stabilization_velocities:
      apply_post_stabilization<Model>(w.Pq, w.Pv, w.rows, t, w.q, w.v, p, 2);
      return end_projection(w, member_status::success);
    case projection_phase::idle: break;
  }
  return end_projection(w, member_status::success);
}

}  // namespace detail

// Starts project_state's computation on y's (q, v): assembles M(q~) (phase metric).
template <class Model>
LOCKSTEP_HD void begin_projection(projection_work<Model>& w, projection_metric metric, const state_vector<Model>& y,
                                  const double* p, std::uint64_t dropped = 0) {
  using L = state_layout<Model>;
  for (int i = 0; i < Model::n; ++i) {
    w.q[i] = y[L::q + i];
    w.v[i] = y[L::v + i];
  }
  w.iteration = 0;
  w.previous = 0.0;
  w.dropped = dropped;
  assemble_metric<Model>(metric, w.q, p, w.W);
  w.phase = projection_phase::metric;
}

// Runs a begun projection until it ends (returns project_state's status before accept_projection,
// phase idle, the result in w.q, w.v) or leaves a factorization pending (returns running).
template <class Model>
LOCKSTEP_HD member_status run_projection(projection_work<Model>& w, projection_kind kind, double t, const double* p) {
  for (;;) {
    member_status factored;
    if (w.external.ready) {
      factored = w.external.status;
      w.external.ready = false;
    } else if (cholesky_rows<Model>(w.phase) > w.external.split_above) {
      w.external.pending = true;
      return member_status::running;
    } else {
      factored = factorization_status(factor_phase_matrix(w));
    }
    const member_status s = detail::continue_projection(w, factored, kind, t, p);
    if (w.phase == projection_phase::idle) return s;
  }
}

// The factor phase of one projection (the CPU emulation): the pending matrix by cholesky_factor.
template <class Model>
LOCKSTEP_HD void factor_pending_projection(projection_work<Model>& w) {
  if (!w.external.pending) return;
  w.external.status = factorization_status(factor_phase_matrix(w));
  w.external.pending = false;
  w.external.ready = true;
}

}  // namespace lockstep
