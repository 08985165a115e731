// lockstep/method/bdf.hpp — variable-order (1-5), variable-step BDF for one member.
//
// Form. Variable-coefficient BDF written through its predictor (Brenan, Campbell & Petzold 1996,
// sections 3.1 and 5.2; Jackson & Sacks-Davis 1980 show the variable-coefficient form is the most
// stable under step changes). With past nodes tau_1 > tau_2 > ... (newest first) and order k:
//   predictor   P_pred  = the polynomial through tau_1 .. tau_{k+1}, y_pred = P_pred(t_n), y'_pred = P_pred'(t_n);
//   corrector   P_corr  = P_pred + (y_n - y_pred) w(t),  w(t) = prod_{j<=k} (t - tau_j) / (t_n - tau_j),
//               which interpolates y_n and tau_1 .. tau_k; BDF asks F(t_n, y_n, P_corr'(t_n)) = 0, i.e.
//               y'_n = y'_pred + c (y_n - y_pred),   c = w'(t_n) = sum_{j<=k} 1 / (t_n - tau_j).
// This is IDA's fixed-leading-coefficient corrector equation (Hindmarsh et al. 2005, eq. 3) with the
// exact variable coefficient c in place of alpha_s / h.
//
// Error estimate. Let D = y(t_n) - y_pred be the predictor's error on the exact solution and E =
// y_n - y(t_n) the step's local error. Comparing the interpolation errors of P_pred and of the exact
// solution's BDF polynomial gives, to leading order, D = c (t_n - tau_{k+1}) E (Brenan, Campbell &
// Petzold 1996, 5.2; at k = 1 with constant steps D = h^2 y'' and E = h^2 y'' / 2). The step computes
// y_n, not y(t_n), and y_n - y_pred = E + D = (1 + c (t_n - tau_{k+1})) E, so the local error of order k is
//   LTE_k = (y_n - y_pred) / (1 + c (t_n - tau_{k+1}))
// (for constant steps (y_n - y_pred) / 3 at k = 1 and 2 (y_n - y_pred) / 11 at k = 2, IDA's
// 1 / (alpha_k + 1) weighting of the predictor difference, Hindmarsh et al. 2005, section 3; dividing
// by c (t_n - tau_{k+1}) alone, the estimate of D, overstated it by 3/2 at order 1, 11/9 at 2, 1.14 at 3,
// (k + 1) terms that fall with the order and biased the order choice upwards).
// For the neighbouring orders p = k - 1 and k + 1 the order-k point y_n stands in for y(t_n) (for
// p = k - 1 it is an order more accurate), so their estimates are D / (c_p (t_n - tau_{p+1})):
//   LTE_p = y[t_n, tau_1 .. tau_{p+1}] prod_{j<=p} (t_n - tau_j) / c_p,   c_p = sum_{j<=p} 1 / (t_n - tau_j).
// The norm is the weighted RMS norm over the differential variables q and v only: for index-2 (ggl)
// multipliers the divided-difference estimate does not vanish as h -> 0 and would reject forever, while
// they are accurate anyway (Ascher & Petzold 1998, ch. 10, "Error estimation for index-2 DAEs"; Brenan et al. 5.4.1).
// They stay in the Newton convergence test.
//
// Step and order selection follow IDA (Hindmarsh et al. 2005, section 3): the largest admissible
// step among the orders k - 1, k, k + 1 after acceptance, an escalating cut after error-test failures;
// method/bdf_step_control.hpp states the rules and holds them for this method and its tangents.
//
// Newton (method/corrector.hpp, shared with the rho_inf method). Simplified Newton on the reduced
// saddle-point system of formulation/euler_lagrange.hpp, with the Jacobian evaluated at a predicted
// point and kept across steps while the contraction rate stays below 0.1; the matrix is refactored
// (without re-evaluating the Jacobian) when c leaves IDA's band [0.6, 5/3] around the shift it was
// factored for, and within it each increment is scaled by 2 / (1 + c / c_old) (corrector.hpp); a Newton
// failure with an old Jacobian re-evaluates it before the step is cut by 4. Convergence follows IDA
// (at most 4 iterations, rate / (1 - rate) ||Delta|| <= newton_tol, Hindmarsh et al. 2005) with three
// changes: newton_tol is 0.1, not 0.33 (method/options.hpp says why); the rate is always measured in
// this step (never carried over); and divergence (rate > 0.9) is judged from the second correction on;
// see newton_norm for how multipliers are weighted.
//
// Tolerances. The error test and the Newton test use the internal tolerances of
// method/tolerance_calibration.hpp (rtol' = c rtol^1.25 for BDF), so that the global error follows the
// user's tolerance; see bdf_error_weights.
//
// index3. Variable-step BDF on the index-3 form gives O(1) errors in the multipliers after every step
// change (Petzold 1982; Brenan, Campbell & Petzold 3.2.2), and its Newton matrix is ill-conditioned as
// h^-3 (Ascher & Petzold 1998, ch. 10). BDF on index3 is therefore allowed with fixed steps only (bdf_check_options).
//
// Everything here is LOCKSTEP_HD, allocation-free and exception-free: a member's state is plain data
// and each call is one step attempt (docs/ARCHITECTURE.md section 1).
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/corrector.hpp"
#include "lockstep/method/error_weights.hpp"
#include "lockstep/method/interpolation.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

template <class Model>
struct bdf_state {
  using layout = state_layout<Model>;
  static constexpr int ny = layout::size;
  // Order k needs k + 1 past points for its predictor and k + 2 for the order-raise estimate (k < 5).
  static constexpr int max_past = bdf_max_order + 1;

  double t = 0.0;      // time of the newest accepted point (= t_past[0])
  double t0 = 0.0;     // start of the fixed-step grid (step_control.hpp, plan_step)
  double h = 0.0;      // step size of the next attempt
  int order = 1;       // order of the next attempt
  int last_order = 1;  // order of the last accepted step (defines the dense-output polynomial)
  int steps_at_order = 0;
  int error_failures = 0;   // error-test failures since the last accepted step that kept or grew h
  int newton_cuts = 0;      // consecutive step cuts after Newton failure
  int past_count = 0;
  double t_past[max_past] = {};
  // The history in Newton form (method/interpolation.hpp), so that a step forms the predictor's
  // coefficients in O(k) state vectors, not O(k^2): y_newest is the solution at t_past[0] (projection
  // may replace it, methods.hpp), older_differences[j] = y[t_past[1] .. t_past[j + 1]] the coefficients
  // over the older nodes (with the confluent node at t0 last while it is in the window), past_count +
  // initial_derivative - 1 of them. Each accepted step prepends its point (detail::past_newton_form).
  state_vector<Model> y_newest;
  state_vector<Model> older_differences[max_past];
  // While t0 is inside the window, it is also a confluent node with the consistent derivative y'(t0).
  bool initial_derivative = false;
  state_vector<Model> yp0;
  // max |y_j| over every accepted point: the round-off scale of component j (bdf_error_weights).
  state_vector<Model> y_scale;
  double error = 0.0;  // LTE_k of the last adaptive attempt in the weighted norm (header comment)

  corrector_matrices<Model> corrector;  // Jacobian and factored Newton matrix (method/corrector.hpp)
};

// Refuses option combinations the theory says are unstable or ill-defined; returns an empty string
// when the options are acceptable, else the reason.
LOCKSTEP_HD constexpr const char* bdf_check_options(const solver_options& opt) {
  if (opt.form == formulation::index3 && !(opt.fixed_h > 0.0))
    return "BDF on the index-3 formulation is allowed with fixed steps only: variable-step BDF gives O(1) "
           "multiplier errors after every step-size change on index 3 (Petzold 1982; Brenan, Campbell & "
           "Petzold 3.2); use formulation ggl, or radau5 on index3";
  if (opt.fixed_h > 0.0 && (opt.fixed_order < 1 || opt.fixed_order > bdf_max_order))
    return "fixed_order must be between 1 and 5";
  if (opt.max_order < 1 || opt.max_order > bdf_max_order) return "max_order must be between 1 and 5";
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

namespace detail {

// Error weights (bdf_error_weights, method/error_weights_generic.inc): 1 / (rtol' |y_i| + max(atol'_group,
// 1000 eps scale_i)) at the start of a step, with the internal tolerances of
// method/tolerance_calibration.hpp, from the newest point and scale_i = max |y_i| over every accepted
// point. A component passing through zero (the rod's angular velocity in slider_crank, amplitude
// 75 rad/s) is never asked for an absolute accuracy below 1000 ulps of its size, which round-off in
// the Newton solution cannot deliver — there the error estimate is noise (measured: 60 ulps of the
// amplitude) and the step size collapses (slider_crank at tol 1e-10 did, at t = 2.1, with the window's
// max as the scale: the collapsing steps shrink the window onto the zero crossing).

// BDF's history functions (past_newton_form, bdf_predict, error_estimate, lte_from_newton_form,
// order_estimates, accept_into_history, bdf_dense_output), one text for one member here and for SIMD
// packs in lockstep/simd/bdf_history_inl.hpp.
#include "lockstep/method/bdf_history_generic.inc"

}  // namespace detail

// Starts the method at t0 from consistent initial values (method/initialize.hpp).
template <class Model>
LOCKSTEP_HD void bdf_start(bdf_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                           const solver_options& opt) {
  using L = state_layout<Model>;
  s = bdf_state<Model>{};
  s.t = t0;
  s.t0 = t0;
  s.past_count = 1;
  s.t_past[0] = t0;
  initial_point(init, s.y_newest, s.yp0);
  s.initial_derivative = true;  // nodes t0 and its confluent copy: no older differences yet
  for (int j = 0; j < L::size; ++j) s.y_scale[j] = abs(s.y_newest[j]);

  s.h = initial_step_size<Model>(t0, t1, init, opt);
  s.order = 1;
}

// Starts from given solution points (newest first; e.g. exact values for order studies). Order k needs
// k + 1 points for its predictor, so the first steps run at order min(order, count - 1).
template <class Model>
LOCKSTEP_HD void bdf_start_from_points(bdf_state<Model>& s, int count, const double* t, const state_vector<Model>* y,
                                       double h, int order) {
  s = bdf_state<Model>{};
  s.past_count = count;
  for (int j = 0; j < count; ++j) s.t_past[j] = t[j];
  s.y_newest = y[0];
  for (int j = 1; j < count; ++j) s.older_differences[j - 1] = y[j];
  divided_differences(count - 1, s.t_past + 1, s.older_differences, false, s.yp0);
  s.t = t[0];
  s.t0 = t[0];
  s.h = h;
  s.order = order;
  for (int j = 0; j < count; ++j)
    for (int i = 0; i < state_layout<Model>::size; ++i) s.y_scale[i] = max(s.y_scale[i], abs(y[j][i]));
  s.last_order = order < count ? order : count - 1;
}

// An attempt's converged step as its companion sees it (method/attempt.hpp), before the member's state
// changes: the order k, the time t_new, the predictor y_pred, y'_pred and its leading coefficient c (the
// corrector's y' = y'_pred + c (y - y_pred)), the corrector's solution y, and tau_{k+1}, the oldest
// node of the order-k estimate LTE_k = (y - y_pred) / (1 + c (t_new - tau_{k+1})) (header comment).
template <class Model>
struct bdf_converged_step {
  int k;
  double t_new;
  double c;
  double tau_k1;
  const state_vector<Model>& y;
  const state_vector<Model>& y_pred;
  const state_vector<Model>& yp_pred;
};

namespace detail {

// The attempt (bdf_attempt), one text for one member here and for SIMD packs in
// lockstep/simd/bdf_attempt_inl.hpp.
#include "lockstep/method/bdf_attempt_generic.inc"

}  // namespace detail

// One step attempt from s.t towards t_end (the step is shortened only to land exactly on t_end), with
// the step's companion (method/attempt.hpp: the tangents of lockstep/lyapunov/, or none). On `failed`,
// status says why; on `accepted`, s.t advanced and the dense output covers [t_past[1], t_past[0]].
template <class Model, class Companion = no_companion>
LOCKSTEP_HD attempt_result bdf_attempt(bdf_state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                       member_counters& counters, member_status& status,
                                       Companion&& companion = Companion{}) {
  const double r = detail::bdf_attempt<Model>(true, s, t_end, p, opt, counters, status, companion);
  return static_cast<attempt_result>(static_cast<int>(r));
}

// Dense output: the BDF polynomial of the last accepted step, at t in [t_past[1], t_past[0]]
// (bdf_history_generic.inc).
template <class Model>
LOCKSTEP_HD void bdf_dense_output(const bdf_state<Model>& s, double t, state_vector<Model>& y) {
  detail::bdf_dense_output(s, s.last_order, t, y);
}

}  // namespace lockstep
