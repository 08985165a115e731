// lockstep/lyapunov/tangent_bdf.hpp — a BDF member with tangents: its data, its start and one step attempt of
// the member and its tangents (lyapunov/tangent.hpp describes the method).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/initial_tangents.hpp"
#include "lockstep/lyapunov/tangent_bdf_system.hpp"
#include "lockstep/lyapunov/tangent_error_control.hpp"
#include "lockstep/lyapunov/tangent_member_common.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/interpolation.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// One member and up to Capacity tangent directions, as plain data (like member_state). parameter[d] is
// -1 for a direction in the initial state and j for the sensitivity to parameter j.
template <class Model, int Capacity = 2 * Model::n>
struct tangent_member {
  using model = Model;
  static constexpr int capacity = Capacity;
  static constexpr int max_past = bdf_state<Model>::max_past;
  bdf_state<Model> method;
  member_counters counters;
  member_status status = member_status::running;
  long attempts = 0;
  int directions = 0;
  int parameter[Capacity] = {};
  state_vector<Model> past[max_past][Capacity];  // tangents of the past points at method.t_past[j]
  state_vector<Model> derivative0[Capacity];     // tangents of method.yp0 (the confluent node)
  long tangent_factorizations = 0;
  bool error_control = true;   // the tangents' local error limits the steps (lyapunov/tangent.hpp header)
  long tangent_rejections = 0;  // steps the state accepted and the tangents' error test rejected
};

// Consistent initialization, BDF's start and the initial tangents (begin_member_with_tangents).
template <class Model, int Capacity>
LOCKSTEP_HD void tangent_member_begin(tangent_member<Model, Capacity>& tm, double t0, double t1,
                                      const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                                      const double* p, const solver_options& opt,
                                      const phase_vector<Model>* directions, int state_directions,
                                      const int* parameters, int parameter_directions, bool error_control = true) {
  begin_member_with_tangents<Model>(
      tm, t0, t1, q0, v0, p, opt, directions, state_directions, parameters, parameter_directions, error_control,
      [&](const initial_values<Model>& init) { bdf_start(tm.method, t0, t1, init, opt); },
      [&](int d, const state_vector<Model>& s0, const state_vector<Model>& sp0) {
        tm.past[0][d] = s0;
        tm.derivative0[d] = sp0;
      });
}

namespace detail {

// Which stored past point node j of the predictor reads: the j-th newest, or the oldest again once j
// reaches past_count (the confluent node at t0, whose first divided difference is the derivative).
template <class Model>
LOCKSTEP_HD int past_source(const bdf_state<Model>& before, int j) {
  return j < before.past_count ? j : before.past_count - 1;
}

// The BDF predictor of bdf_attempt as weights, for applying it to many directions (the tangents' past
// values): the predictor is linear in the past values and the confluent derivative,
// value = sum_j value_weight[j] values(source[j]) + value_weight[k + 1] derivative0 (the same with
// derivative_weight), j over the k + 1 nodes. The weights are the divided-difference predictor over
// the same nodes applied to the unit vectors, all at once, so a direction costs 2 (k + 2) multiply-adds
// per component instead of a divided-difference table, and the result is the same linear map up to
// rounding.
template <class Model>
struct predictor_weights {
  static constexpr int max_nodes = bdf_state<Model>::max_past + 2;
  int nodes = 0;
  bool confluent = false;  // the oldest node is the confluent one: derivative0 takes part
  int source[max_nodes] = {};
  double value_weight[max_nodes + 1] = {};
  double derivative_weight[max_nodes + 1] = {};

  template <class Values>
  LOCKSTEP_HD void apply(const Values& values, const state_vector<Model>& derivative0, state_vector<Model>& value,
                         state_vector<Model>& derivative) const {
    constexpr int ny = state_layout<Model>::size;
    // Without the confluent node derivative0 is not read at all, as in bdf_attempt: once t0 has
    // left the window it is stale, and the Lyapunov re-orthonormalizations keep recombining it with
    // R^-1 until it overflows (measured on the damped oscillator: 0 * inf poisoned every direction).
    for (int i = 0; i < ny; ++i) {
      value[i] = confluent ? value_weight[nodes] * derivative0[i] : 0.0;
      derivative[i] = confluent ? derivative_weight[nodes] * derivative0[i] : 0.0;
    }
    for (int j = 0; j < nodes; ++j) {
      const state_vector<Model>& x = values(source[j]);
      const double a = value_weight[j], b = derivative_weight[j];
      for (int i = 0; i < ny; ++i) {
        value[i] += a * x[i];
        derivative[i] += b * x[i];
      }
    }
  }
};

template <class Model>
LOCKSTEP_HD predictor_weights<Model> bdf_predictor_weights(const bdf_state<Model>& before, int k, double t_new) {
  constexpr int max_nodes = predictor_weights<Model>::max_nodes;
  predictor_weights<Model> pw;
  pw.nodes = k + 1;
  double x[max_nodes];
  vec<double, max_nodes + 1> dd[max_nodes], derivative0{};
  bool confluent = false;
  for (int j = 0; j < k + 1; ++j) {
    pw.source[j] = past_source(before, j);
    confluent = confluent || j >= before.past_count;
    x[j] = before.t_past[pw.source[j]];
    dd[j] = vec<double, max_nodes + 1>{};
    dd[j][j] = 1.0;
  }
  derivative0[k + 1] = 1.0;
  pw.confluent = confluent;
  divided_differences(k + 1, x, dd, confluent, derivative0);
  vec<double, max_nodes + 1> value, derivative;
  evaluate_newton_form(k + 1, x, dd, t_new, value, &derivative);
  for (int j = 0; j < k + 1; ++j) {
    pw.value_weight[j] = value[j];
    pw.derivative_weight[j] = derivative[j];
  }
  pw.value_weight[k + 1] = value[k + 1];
  pw.derivative_weight[k + 1] = derivative[k + 1];
  return pw;
}

// A direction's local error estimate at order p, as detail::lte_estimate (method/bdf.hpp) forms the
// state's: the divided difference over (t_new, tau_1 .. tau_{p+1}) of the direction's new value and
// its history.
template <class Model, class Values>
LOCKSTEP_HD double tangent_lte(const bdf_state<Model>& before, int p, double t_new, const state_vector<Model>& s_new,
                               const Values& values, const state_vector<Model>& derivative0,
                               const tangent_weighting& wt) {
  constexpr int max_nodes = bdf_state<Model>::max_past + 2;
  double x[max_nodes];
  state_vector<Model> dd[max_nodes];
  x[0] = t_new;
  dd[0] = s_new;
  bool confluent = false;
  for (int j = 0; j < p + 1; ++j) {
    const int src = past_source(before, j);
    confluent = confluent || j >= before.past_count;
    x[j + 1] = before.t_past[src];
    dd[j + 1] = values(src);
  }
  divided_differences(p + 2, x, dd, confluent, derivative0);
  const lte_factors f = lte_factors_of(x, t_new, p);
  return tangent_error_norm<Model>(dd[p + 1], s_new, wt) * abs(f.prod) / f.cp;
}

}  // namespace detail

// One step attempt of the member (bdf_attempt) and, when it is accepted, the tangents' step (T1).
// Returns what bdf_attempt returned; a failure of the tangent step sets status and returns failed.
template <class Model, int Capacity>
LOCKSTEP_HD attempt_result tangent_member_attempt(tangent_member<Model, Capacity>& tm, double t_end, const double* p,
                                                  const solver_options& opt) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  const bdf_state<Model> before = tm.method;  // the nodes and values the predictor uses
  const long steps_before = tm.counters.steps;
  const attempt_result r = detail::run_member_attempt(tm, [&](member_status& why) {
    return bdf_attempt<Model>(tm.method, t_end, p, opt, tm.counters, why);
  });
  if (r != attempt_result::accepted) return r;

  const bdf_state<Model>& s = tm.method;
  const int k = s.last_order;
  const double t_new = s.t;
  // c and y' exactly as bdf_attempt formed them (the same function on the state before the step).
  state_vector<Model> y_pred, yp_pred;
  double c;
  {
    constexpr int max_nodes = bdf_state<Model>::max_past + 2;
    double x[max_nodes];
    state_vector<Model> dd[max_nodes];
    c = detail::bdf_predict(before, k, t_new, x, dd, y_pred, yp_pred);
  }
  const state_vector<Model>& y = s.y_newest;
  vec<double, n> vdot;
  for (int i = 0; i < n; ++i) vdot[i] = yp_pred[L::v + i] + c * (y[L::v + i] - y_pred[L::v + i]);

  tangent_step_matrix<Model> T;
  const member_status fs = factor_tangent_step_matrix<Model>(opt.form, t_new, y, vdot, c, p, T);
  ++tm.tangent_factorizations;
  if (fs != member_status::success) {
    tm.status = fs;
    return attempt_result::failed;
  }
  state_vector<Model> fresh[Capacity], predicted[Capacity], derivative_predicted[Capacity], dFdp[Capacity];
  const state_vector<Model>* dFdp_of[Capacity] = {};  // g++ -Wmaybe-uninitialized: null past directions
  const detail::predictor_weights<Model> pw = detail::bdf_predictor_weights<Model>(before, k, t_new);
  for (int d = 0; d < tm.directions; ++d) {
    pw.apply([&](int j) -> const state_vector<Model>& { return tm.past[j][d]; }, tm.derivative0[d], predicted[d],
             derivative_predicted[d]);
    dFdp_of[d] = nullptr;
    if (tm.parameter[d] >= 0) {
      dFdp[d] = residual_parameter_derivative<Model>(opt.form, t_new, y, vdot, p, tm.parameter[d]);
      dFdp_of[d] = &dFdp[d];
    }
  }
  solve_tangent_steps<Model, Capacity>(opt.form, T, predicted, derivative_predicted, dFdp_of, tm.directions, fresh);
  // BDF's order and step selection (method/bdf_step_control.hpp), redone on the larger of the state's
  // and the tangents' estimates at each order (lyapunov/tangent.hpp header), adaptive steps only. Without the
  // tangents' error control the estimates are the state's alone and the decision is bitwise
  // bdf_attempt's; with it, the tangents' error test may reject the step after all.
  if (!(opt.fixed_h > 0.0)) {
    const step_plan plan = plan_step(before.t, before.h, t_end, opt, before.t0);  // bdf_attempt's h and h_min
    const double h = plan.h;
    const state_vector<Model> w = detail::bdf_error_weights<Model>(before.y_newest, before.y_scale, opt);
    const double x_k = before.t_past[detail::past_source(before, k)];
    // Order k: the state's estimate as bdf_attempt formed it, and the same for each direction.
    double err_k = s.error;
    if (tm.error_control)
      for (int d = 0; d < tm.directions; ++d) {
        state_vector<Model> e;
        for (int j = 0; j < L::size; ++j) e[j] = fresh[d][j] - predicted[d][j];
        const detail::tangent_weighting wt = detail::weighting_for(tm.parameter[d], p, opt);
        err_k = max(err_k, detail::tangent_error_norm<Model>(e, fresh[d], wt) / (1.0 + c * (t_new - x_k)));
      }
    // Orders k - 1 and k + 1, where bdf_attempt considers them.
    const detail::order_candidates can = detail::bdf_order_candidates(k, before.order, before.steps_at_order,
                                                                       opt.max_order, detail::available_past(before));
    auto combined_lte = [&](int order) {
      double err = detail::lte_estimate(before, order, t_new, y, w);
      if (tm.error_control)
        for (int d = 0; d < tm.directions; ++d)
          err = max(err, detail::tangent_lte<Model>(before, order, t_new, fresh[d],
                                                    [&](int j) { return tm.past[j][d]; }, tm.derivative0[d],
                                                    detail::weighting_for(tm.parameter[d], p, opt)));
      return err;
    };
    const double err_km1 = can.lower ? combined_lte(k - 1) : 0.0;
    if (!(err_k <= 1.0)) {  // only the tangents can fail the test here: the state passed it
      detail::undo_accepted_step(tm, before, steps_before);
      bdf_state<Model>& m = tm.method;
      if (detail::bdf_after_error_failure(k, err_k, h, plan.h_min, [&] { return err_km1; }, m.error_failures, m.order,
                                          m.h)) {
        tm.status = member_status::step_size_too_small;
        return attempt_result::failed;
      }
      return attempt_result::rejected;
    }
    const detail::order_choice next =
        detail::choose_order(k, err_k, can.lower, err_km1, can.higher, can.higher ? combined_lte(k + 1) : 0.0);
    bdf_state<Model>& m = tm.method;
    m.steps_at_order = can.steps_at_order;
    m.error_failures = before.error_failures;
    detail::bdf_after_acceptance(next, k, h, opt, m.order, m.h, m.steps_at_order, m.error_failures);
  }
  // Shift the tangent history exactly as bdf_attempt shifted the state's.
  for (int j = tangent_member<Model, Capacity>::max_past - 1; j > 0; --j)
    for (int d = 0; d < tm.directions; ++d) tm.past[j][d] = tm.past[j - 1][d];
  for (int d = 0; d < tm.directions; ++d) tm.past[0][d] = fresh[d];
  return r;
}

// Replaces every tangent direction d by sum_e X(e, d) direction e, at every past node and in the
// confluent derivative: the tangent history is linear in the initial directions, so this is exactly
// the history the member would have had from the initial directions combined by X (the discrete QR
// re-orthonormalization uses it with X = R^-1).
template <class Model, int Capacity>
LOCKSTEP_HD void recombine_tangents(tangent_member<Model, Capacity>& tm, const double (*X)[Capacity], int count) {
  for (int j = 0; j < tangent_member<Model, Capacity>::max_past; ++j)
    detail::recombine_slot<Model, Capacity>(tm.past[j], X, count);
  detail::recombine_slot<Model, Capacity>(tm.derivative0, X, count);
}

// The member's time, current point and current tangents (one interface for the BDF and Radau members).
template <class Model, int Capacity>
LOCKSTEP_HD double member_time(const tangent_member<Model, Capacity>& tm) {
  return tm.method.t;
}
template <class Model, int Capacity>
LOCKSTEP_HD const state_vector<Model>& member_point(const tangent_member<Model, Capacity>& tm) {
  return tm.method.y_newest;
}
template <class Model, int Capacity>
LOCKSTEP_HD state_vector<Model>* current_tangents(tangent_member<Model, Capacity>& tm) {
  return tm.past[0];
}

}  // namespace lockstep
