// lockstep/formulation/projection.hpp — projections onto the constraint manifold: after an accepted
// step of any method (stepper/member.hpp), and for consistent initial values (stepper/initialize.hpp).
//
// Every correction is of minimal norm in a metric W (seed 001 eq. 121: W = K for positions, D M^-1 for
// velocities): W = M(q) (kinetic energy, the default) or W = I. For constraints B x = -r (to first
// order) the correction is dx = -W^-1 B^T (B W^-1 B^T)^-1 r; its Gram matrix B W^-1 B^T is SPD when the
// constraints are independent and is factored by Cholesky, which reports a singular one.
//
// Coordinate projection (seed 000 section 10.2.1, "co-ordinate projection"):
//   q: the point of Phi(t, q) = 0 nearest to the step's q~ in the metric, by Gauss-Newton
//          q <- q - W^-1 G^T (G W^-1 G^T)^-1 Phi(q),   G at the current iterate, W = W(q~) fixed,
//      until the correction is at round-off. Every correction lies in W^-1 range(G^T): the optimality
//      condition W (q - q~) = G^T lambda* of min ||q - q~||_W subject to Phi = 0, to first order.
//   v: the minimal-W-norm correction onto the velocity constraints C v + c = 0, C = [G; A],
//      c = [Phi_t; a], at the projected q: holonomic and non-holonomic rows together. The problem is
//      linear; the solve is repeated once so the residual is at round-off even for a poorly
//      conditioned Gram matrix.
// Post-stabilization (seed 000 section 10.2.2, the multibody algorithm, Example 3): with the
//   invariants h(q, v) = (Phi, C v + c),
//       (q, v) <- (q, v) - F h(q, v),   F = diag(B (G B)^-1, B_C (C B_C)^-1),  B = W^-1 G^T, B_C = W^-1 C^T,
//   applied twice with F, and its factorizations, kept from the first application: by note 2,
//   H F = [I 0; L I] with L = d(G v)/dq B (G B)^-1, so (I - H F)^2 = 0 and the second application
//   removes what the first leaves in the velocity invariant; by note 3 it costs one evaluation of h.
//   W = M is the seed's B = M^-1 G^T; W = I is its note 5's F = G^T (G G^T)^-1. The non-holonomic rows
//   join the velocity part (note 6: they would need one application only; the second is harmless).
//   Since G F_q = I, one application leaves |Phi| = O(h^(2(p+1))) after a method of order p (the seed's
//   bound with rho = 0); after the second, with F frozen at the first point, |G v + Phi_t| is
//   O(h^(2(p+1))) and |Phi| O(h^(3(p+1))) (measured after backward Euler: slopes 4.0 and 6.0,
//   tests/formulation/index1_test.cpp).
// Projected invariants (Ascher & Petzold 1993, end of section 4 and recommendation 5 of section 5):
//   that formulation keeps Phi = 0 but not the velocity constraints, so its steps are followed by the
//   velocity part of the coordinate projection, at the step's q, whatever `projection` says.
//
// None of this changes a step-size decision: the stepper applies it after acceptance and records the
// size of the corrections. Everything here is LOCKSTEP_HD, allocation-free and returns a status.
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
  post_stabilization = 2,  // (q, v) -= F h(q, v), twice, F = B (G B)^-1 kept (seed 000, Example 3)
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

// Returns success, singular_matrix (M not SPD) or model_not_finite.
template <class Model>
LOCKSTEP_HD member_status factor_metric(projection_metric metric, const vec<double, Model::n>& q, const double* p,
                                        metric_factor<Model>& W) {
  W.metric = metric;
  W.M_chol = Model::template mass<double, double>(q, p);
  const factor_result fr = cholesky_factor(W.M_chol);
  if (fr.info == lu_not_finite) return member_status::model_not_finite;
  if (fr.info != lu_ok) return member_status::singular_matrix;
  return member_status::success;
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
};

// Returns success, singular_matrix (dependent rows: the Gram matrix is not positive definite) or
// model_not_finite.
template <class Model, int R>
LOCKSTEP_HD member_status factor_projector(const metric_factor<Model>& W, const mat<double, R, Model::n>& B,
                                           minimal_norm_projector<Model, R>& P) {
  P.WinvBt = apply_inverse_metric<Model, R>(W, transpose(B));
  P.gram = B * P.WinvBt;
  const factor_result fr = cholesky_factor(P.gram);
  if (fr.info == lu_not_finite) return member_status::model_not_finite;
  if (fr.info != lu_ok) return member_status::singular_matrix;
  return member_status::success;
}

// dx = -W^-1 B^T (B W^-1 B^T)^-1 r: the minimal-W-norm dx with B dx = -r.
template <class Model, int R>
LOCKSTEP_HD vec<double, Model::n> minimal_norm_correction(const minimal_norm_projector<Model, R>& P,
                                                          const vec<double, R>& r) {
  vec<double, R> y = r;
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

// Gauss-Newton onto Phi(t, q) = 0 in the metric W (see the header). Converged when the correction is
// at round-off: below 4 eps (1 + |q|), or no longer contracting (at least half the previous one) while
// below sqrt(eps) (1 + |q|), where a contracting iteration would be quadratically close to the
// solution. The second test matters for ill-conditioned Gram matrices (masses differing by 1e6 give
// cond(G M^-1 G^T) ~ 1e6), whose round-off floor lies above 4 eps. Returns success, singular_matrix,
// model_not_finite, or projection_failed when not converged after max_iterations.
template <class Model>
LOCKSTEP_HD member_status project_positions(double t, vec<double, Model::n>& q, const double* p,
                                            const metric_factor<Model>& W, int max_iterations) {
  constexpr int m = Model::m;
  if constexpr (m > 0) {
    constexpr double eps = std::numeric_limits<double>::epsilon();
    double previous = 0.0;
    for (int iter = 0; iter < max_iterations; ++iter) {
      const auto con = constraint_linearize<Model>(t, q, p);
      minimal_norm_projector<Model, m> P;
      const member_status s = factor_projector<Model, m>(W, con.G, P);
      if (s != member_status::success) return s;
      const vec<double, Model::n> dq = minimal_norm_correction<Model, m>(P, con.phi);
      q = q + dq;
      const double size = norm_inf(dq), scale = 1.0 + norm_inf(q);
      if (size <= 4.0 * eps * scale) return member_status::success;
      if (iter > 0 && size >= 0.5 * previous && size <= sqrt(eps) * scale) return member_status::success;
      previous = size;
    }
    return member_status::projection_failed;
  } else {
    (void)t, (void)q, (void)p, (void)W, (void)max_iterations;
    return member_status::success;
  }
}

// v onto C v + c = 0 at (t, q), minimal in the metric W (two passes with one factorization).
template <class Model>
LOCKSTEP_HD member_status project_velocities(double t, const vec<double, Model::n>& q, vec<double, Model::n>& v,
                                             const double* p, const metric_factor<Model>& W) {
  constexpr int r = Model::m + Model::k;
  if constexpr (r > 0) {
    const velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t, q, p);
    minimal_norm_projector<Model, r> P;
    const member_status s = factor_projector<Model, r>(W, rows.C, P);
    if (s != member_status::success) return s;
    for (int pass = 0; pass < 2; ++pass) v = v + minimal_norm_correction<Model, r>(P, rows.C * v + rows.c);
  } else {
    (void)t, (void)q, (void)v, (void)p, (void)W;
  }
  return member_status::success;
}

// Post-stabilization of (q, v) at t (see the header): `applications` times F h(q, v), with F and its
// factorizations from the first point. The seed's algorithm is applications = 2; 1 is its one-step
// bound, kept callable for the tests that measure it.
template <class Model>
LOCKSTEP_HD member_status post_stabilize(double t, vec<double, Model::n>& q, vec<double, Model::n>& v, const double* p,
                                         projection_metric metric, int applications = 2) {
  constexpr int n = Model::n, m = Model::m, r = Model::m + Model::k;
  metric_factor<Model> W;
  member_status s = factor_metric<Model>(metric, q, p, W);
  if (s != member_status::success) return s;
  velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t, q, p);
  minimal_norm_projector<Model, m> Pq;
  minimal_norm_projector<Model, r> Pv;
  if constexpr (m > 0) {
    mat<double, m, n> G;
    for (int a = 0; a < m; ++a)
      for (int j = 0; j < n; ++j) G(a, j) = rows.C(a, j);
    s = factor_projector<Model, m>(W, G, Pq);
    if (s != member_status::success) return s;
  }
  if constexpr (r > 0) {
    s = factor_projector<Model, r>(W, rows.C, Pv);
    if (s != member_status::success) return s;
  }
  for (int application = 0; application < applications; ++application) {
    if (application > 0) rows = velocity_constraints_at<Model>(t, q, p);  // h at the new point, F kept
    const vec<double, r> w = rows.C * v + rows.c;
    if constexpr (m > 0) q = q + minimal_norm_correction<Model, m>(Pq, rows.phi);
    if constexpr (r > 0) v = v + minimal_norm_correction<Model, r>(Pv, w);
  }
  return member_status::success;
}

// Max-norms of the corrections one projection made.
struct projection_sizes {
  double q = 0.0;
  double v = 0.0;
};

// The projection after an accepted step at (t, y): `kind`, plus the projected-invariants formulation's
// own velocity projection. Only q and v change; the multipliers are the method's (they are
// recomputed from (q, v) at save times when consistent_multipliers is on). Returns success,
// projection_failed (singular Gram matrix, no convergence) or model_not_finite; y is unchanged then.
template <class Model>
LOCKSTEP_HD member_status project_state(projection_kind kind, formulation f, projection_metric metric, double t,
                                        state_vector<Model>& y, const double* p, projection_sizes& sizes) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  constexpr int max_gauss_newton_iterations = 10;  // from a step's end point: quadratic, 2-3 suffice
  vec<double, n> q0, v0;
  for (int i = 0; i < n; ++i) {
    q0[i] = y[L::q + i];
    v0[i] = y[L::v + i];
  }
  vec<double, n> q = q0, v = v0;
  member_status s = member_status::success;
  if (kind == projection_kind::post_stabilization) {
    s = post_stabilize<Model>(t, q, v, p, metric);
  } else if (projects_after_steps(kind, f)) {
    metric_factor<Model> W;
    s = factor_metric<Model>(metric, q, p, W);
    if (s == member_status::success && kind == projection_kind::coordinate)
      s = project_positions<Model>(t, q, p, W, max_gauss_newton_iterations);
    if (s == member_status::success) s = project_velocities<Model>(t, q, v, p, W);
  }
  if (s == member_status::success)
    for (int i = 0; i < n; ++i)
      if (!is_finite(q[i]) || !is_finite(v[i])) s = member_status::model_not_finite;
  if (s == member_status::singular_matrix) s = member_status::projection_failed;
  if (s != member_status::success) return s;
  sizes.q = norm_inf(q - q0);
  sizes.v = norm_inf(v - v0);
  for (int i = 0; i < n; ++i) {
    y[L::q + i] = q[i];
    y[L::v + i] = v[i];
  }
  return member_status::success;
}

}  // namespace lockstep
