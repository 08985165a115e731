// lockstep/method/initialize.hpp — consistent initial values for the index-3 system.
//
// A user gives (q0, v0) that may violate Phi = 0 and the velocity constraints. Following Mantegazza & Masarati 2012,
// eqs. (120)-(123):
//   1. q0 is corrected to the nearest point of Phi(t0, q) = 0 in the metric W (M(q0) or I), by
//      Gauss-Newton on the minimal-norm problem  min ||q - q0||_W  s.t.  Phi(q) = 0  (eq. 121a):
//      q <- q - W^-1 G^T (G W^-1 G^T)^-1 Phi(q);
//   2. v0 is corrected to the velocity constraints B v + b = 0, B = [G; A], b = [Phi_t; a] (eq. 121b),
//      a linear minimal-norm projection;
//   3. q''(0), lambda(0), nu(0) solve the index-1 system (eqs. 122-123)
//          [ M  G^T  A^T ] [ q''    ]   [ Q        ]
//          [ G   0    0  ] [ lambda ] = [ -gamma   ]
//          [ A   0    0  ] [ nu     ]   [ -gamma_nh ]
//      by the pivoted LU (the matrix is indefinite).
// In strict mode a correction larger than init_tolerance is refused instead of applied; in auto mode
// (the default) a gross position correction is, right after step 1 (init_q_correction_is_gross,
// method/options.hpp: beyond the tolerance and above init_gross_fraction of the configuration's size). Either way the
// counters keep the corrections measured, so a refused member reports how far off it was. Steps 1 and 2
// are the coordinate projection of formulation/projection.hpp (with W = M(q0) kept throughout).
//
// Redundant constraints. Here the solver first decides which rows of [G; A] it leaves out
// (formulation/constraint_rank.hpp): for G at every Gauss-Newton iterate of step 1, then for [G; A] at
// the projected q0, where an exactly redundant row lies within round-off of the span of the rows before
// it. Steps 2 and 3 use the independent rows alone; in step 3 a dropped row's multiplier is 0 (the
// independent-subset multipliers: its row and column of the matrix become an identity's). The
// decision is the member's first (jacobian_blocks::dropped); the methods revise it at each Jacobian.
#pragma once

#include <cstdint>

#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

template <class Model>
struct initial_values {
  vec<double, Model::n> q, v, a;  // a = q''(t0)
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
  std::uint64_t dropped = 0;  // the dependent rows of [G; A] at (t0, q): bit a < m holonomic row a, m + a non-holonomic
};

// q'', lambda and nu of the state (t, q, v) from the index-1 system (Mantegazza & Masarati 2012, eqs. 122-123)
//     [ M  G^T  A^T ] [ q''    ]   [ Q         ]
//     [ G   0    0  ] [ lambda ] = [ -gamma    ]
//     [ A   0    0  ] [ nu     ]   [ -gamma_nh ]
// solved by the pivoted LU (the matrix is indefinite). Used for consistent initial values, for
// the multipliers reported at output times (stepper/member.hpp) and at every stage of dopri5, in SIMD
// lanes too (method/accelerations_generic.inc). The rows of [G; A] set in `dropped` are left out,
// their multipliers 0. On failure a, lambda and nu are left as they were.
namespace detail {
// The solve, one text for one member and SIMD packs (solve_accelerations).
#include "lockstep/method/accelerations_generic.inc"  // IWYU pragma: keep
}  // namespace detail

template <class Model>
LOCKSTEP_HD_SHARED member_status accelerations_and_multipliers(double t, const vec<double, Model::n>& q,
                                                               const vec<double, Model::n>& v, const double* p,
                                                               vec<double, Model::n>& a, vec<double, Model::m>& lambda,
                                                               vec<double, Model::k>& nu, std::uint64_t dropped = 0) {
  return detail::solve_accelerations<Model>(t, q, v, p, a, lambda, nu, dropped);
}

template <class Model>
LOCKSTEP_HD_SHARED member_status consistent_initialization(double t0, const vec<double, Model::n>& q0,
                                                           const vec<double, Model::n>& v0, const double* p,
                                                           const solver_options& opt, initial_values<Model>& out,
                                                           member_counters& counters) {
  constexpr int n = Model::n;
  out.q = q0;
  out.v = v0;
  for (int i = 0; i < n; ++i)
    if (!is_finite(q0[i]) || !is_finite(v0[i])) return member_status::model_not_finite;

  // Each step is a phase (core/hd.hpp): for large members, on the device, a separate call whose
  // matrices are gone when it returns.
  constexpr bool separate = separate_device_phases<Model>;
  metric_factor<Model> W;  // M(q0) must be SPD whatever the metric
  member_status s = member_status::success;
  phase<separate>([&] { s = factor_metric<Model>(opt.metric, q0, p, W); });
  if (s != member_status::success) return s;

  // 1. positions: Gauss-Newton until the correction is at round-off level.
  constexpr int max_gauss_newton_iterations = 30;  // from an arbitrary start: generous
  std::uint64_t holonomic = 0;  // the decision for G at the last iterate
  phase<separate>([&] { s = project_positions<Model>(t0, out.q, p, W, max_gauss_newton_iterations, 0, &holonomic); });
  if (s == member_status::projection_failed) return member_status::initialization_failed;
  if (s != member_status::success) return s;
  counters.init_q_correction = norm_inf(out.q - q0);
  if (opt.init == init_mode::automatic &&
      init_q_correction_is_gross(counters.init_q_correction, norm_inf(q0), norm_inf(out.q), opt))
    return member_status::inconsistent_initial;

  // The rank of [G; A] at the projected q0 (see the header).
  if constexpr (decides_constraint_rank<Model>)
    phase<separate>([&] {
      const velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t0, out.q, p);
      for (int i = 0; i < (Model::m + Model::k) * n; ++i)
        if (!is_finite(rows.C.a[i])) s = member_status::model_not_finite;
      out.dropped = constraint_rank<Model::m + Model::k, n>(rows.C, nullptr, constraint_rank_tolerances{}, holonomic).dependent;
    });
  if (s != member_status::success) return s;

  // 2. velocities: one linear projection onto [G; A] v + [Phi_t; a] = 0 (repeated once so that the
  // residual is at round-off even when the Gram matrix is poorly conditioned).
  phase<separate>([&] { s = project_velocities<Model>(t0, out.q, out.v, p, W, out.dropped); });
  if (s != member_status::success) return s;
  counters.init_v_correction = norm_inf(out.v - v0);

  if (opt.init == init_mode::strict &&
      (counters.init_q_correction > opt.init_tolerance || counters.init_v_correction > opt.init_tolerance))
    return member_status::inconsistent_initial;

  // 3. accelerations and multipliers from the index-1 system.
  phase<separate>([&] {
    s = accelerations_and_multipliers<Model>(t0, out.q, out.v, p, out.a, out.lambda, out.nu, out.dropped);
  });
  return s;
}

}  // namespace lockstep
