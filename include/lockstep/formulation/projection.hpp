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
//      conditioned Gram matrix. Without non-holonomic rows (C = G) and where Gauss-Newton's last
//      correction was at round-off (below 4 eps (1 + |q|)), C, c and the factored Gram matrix are those
//      of its last iterate, equal to the projected q's to round-off: one linearization and one
//      factorization fewer per projection.
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

#include <cstdint>
#include <limits>
#include <type_traits>

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

// Max-norms of the corrections one projection made.
struct projection_sizes {
  double q = 0.0;
  double v = 0.0;
};

// Gauss-Newton iterations of the projection after a step: from a step's end point it converges
// quadratically, 2-3 suffice.
inline constexpr int accepted_point_gauss_newton_iterations = 10;

// The projections are written once for one member and for SIMD lanes (projection_generic.inc), and
// compiled here for one member: the lane type S is double (projection_lane below; the lanes' own
// compile takes packs alone, so that argument-dependent lookup, which finds both, picks one). The
// functions with a name of their own below are one member's forms of the text's mask-taking ones,
// with every lane working (`true`).
template <class S>
concept projection_lane = std::is_same_v<S, double>;
#include "lockstep/formulation/projection_generic.inc"  // IWYU pragma: keep

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
  return project_positions_where<Model>(true, t, q, p, W, max_iterations, dropped, decision);
}

// v onto C v + c = 0 at (t, q), minimal in the metric W (two passes with one factorization).
template <class Model>
LOCKSTEP_HD member_status project_velocities(double t, const vec<double, Model::n>& q, vec<double, Model::n>& v,
                                             const double* p, const metric_factor<Model>& W, std::uint64_t dropped = 0) {
  return project_velocities_where<Model>(t, q, v, p, W, dropped);
}

// Post-stabilization of (q, v) at t (see the header): `applications` times F h(q, v), with F and its
// factorizations from the first point. Ascher & Petzold's algorithm is applications = 2; 1 is its one-step
// bound, kept callable for the tests that measure it.
template <class Model>
LOCKSTEP_HD member_status post_stabilize(double t, vec<double, Model::n>& q, vec<double, Model::n>& v, const double* p,
                                         projection_metric metric, int applications = 2, std::uint64_t dropped = 0) {
  return post_stabilize_where<Model>(t, q, v, p, metric, applications, dropped);
}

// The end of project_state: the status of the projection that took y's (q, v) to (q, v) (a singular
// Gram matrix reported as projection_failed, a non-finite result as model_not_finite); on success, y
// takes (q, v) and `sizes` the corrections.
template <class Model>
LOCKSTEP_HD member_status accept_projection(member_status s, const vec<double, Model::n>& q,
                                            const vec<double, Model::n>& v, state_vector<Model>& y,
                                            projection_sizes& sizes) {
  using L = state_layout<Model>;
  vec<double, Model::n> q0, v0;
  for (int i = 0; i < Model::n; ++i) {
    q0[i] = y[L::q + i];
    v0[i] = y[L::v + i];
  }
  s = accept_projected<Model>(s, q, v, q0, v0, sizes.q, sizes.v);
  if (s == member_status::success)
    for (int i = 0; i < Model::n; ++i) {
      y[L::q + i] = q0[i];
      y[L::v + i] = v0[i];
    }
  return s;
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
  vec<double, Model::n> q, v;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  const member_status s = project_point<Model>(true, kind, f, metric, t, q, v, p, dropped, sizes.q, sizes.v);
  if (s == member_status::success)
    for (int i = 0; i < Model::n; ++i) {
      y[L::q + i] = q[i];
      y[L::v + i] = v[i];
    }
  return s;
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
//                        (without non-holonomic rows, velocities only where the last correction was not
//                        at round-off: project_point's gauss_newton_last_linearization)
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
  velocity_constraint_rows<Model> rows;  // Gauss-Newton keeps its Phi (and, if k = 0, G and Phi_t) here
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
    if constexpr (Model::k == 0) {  // the velocity rows, should this be the last iterate (project_point)
      w.rows.C = con.G;
      w.rows.c = con.phi_t;
    }
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
      if constexpr (Model::m > 0) {
        const auto verdict = gauss_newton_update_where<Model>(true, w.Pq, w.rows.phi, w.q, w.iteration, w.previous);
        if constexpr (Model::k == 0)
          if (verdict.at_round_off) {  // the last linearization serves the velocities (project_point)
            correct_velocities<Model>(w.Pq, w.rows, w.v);
            return end_projection(w, member_status::success);
          }
        if (verdict.converged) return begin_velocity_projection(w, t, p);
      }
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
