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
  static constexpr int max_nodes = bdf_max_nodes<bdf_state<Model>>;
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
  detail::evaluate_newton_form(k + 1, k + 1, x, dd, t_new, value, &derivative);
  for (int j = 0; j < k + 1; ++j) {
    pw.value_weight[j] = value[j];
    pw.derivative_weight[j] = derivative[j];
  }
  pw.value_weight[k + 1] = value[k + 1];
  pw.derivative_weight[k + 1] = derivative[k + 1];
  return pw;
}

// A direction's local error estimate at order p, as detail::lte_from_newton_form
// (method/bdf_history_generic.inc) forms the state's: the divided difference over (t_new, tau_1 ..
// tau_{p+1}) of the direction's new value and its history.
template <class Model, class Values>
LOCKSTEP_HD double tangent_lte(const bdf_state<Model>& before, int p, double t_new, const state_vector<Model>& s_new,
                               const Values& values, const state_vector<Model>& derivative0,
                               const tangent_weighting& wt) {
  constexpr int max_nodes = bdf_max_nodes<bdf_state<Model>>;
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
  const lte_factors_of<double> f = lte_factors<max_nodes>(true, p, x, t_new);
  return tangent_error_norm<Model>(dd[p + 1], s_new, wt) * abs(f.prod) / f.cp;
}

}  // namespace detail

namespace detail {

// The tangents as the companion of the member's BDF step (method/attempt.hpp): once the state's
// corrector has converged and passed its error test, (T1) is solved for every direction with the
// predictor the state used; with error control, each direction's estimate at every order the step
// controller reads joins the state's (lyapunov/tangent.hpp header). The member's state is the one
// before the step until accept(), which shifts the tangent history as bdf_attempt shifts the state's.
template <class Model, int Capacity>
struct bdf_tangent_companion {
  tangent_member<Model, Capacity>& tm;
  const double* p;
  const solver_options& opt;
  int k = 1;
  double t_new = 0.0;
  double c = 0.0;
  double tau_k1 = 0.0;
  state_vector<Model> fresh[Capacity];      // s_n, the directions at t_new
  state_vector<Model> predicted[Capacity];  // s_pred

  LOCKSTEP_HD bdf_tangent_companion(tangent_member<Model, Capacity>& member, const double* params,
                                    const solver_options& options)
      : tm(member), p(params), opt(options) {}

  LOCKSTEP_HD member_status solve(const bdf_converged_step<Model>& step) {
    using L = state_layout<Model>;
    constexpr int n = Model::n;
    const bdf_state<Model>& before = tm.method;
    k = step.k;
    t_new = step.t_new;
    c = step.c;
    tau_k1 = step.tau_k1;
    const state_vector<Model>& y = step.y;
    vec<double, n> vdot;  // the corrector's v' at the converged point
    for (int i = 0; i < n; ++i) vdot[i] = step.yp_pred[L::v + i] + c * (y[L::v + i] - step.y_pred[L::v + i]);

    tangent_step_matrix<Model> T;
    const member_status fs = factor_tangent_step_matrix<Model>(opt.form, t_new, y, vdot, c, p, T);
    ++tm.tangent_factorizations;
    if (fs != member_status::success) return fs;
    state_vector<Model> derivative_predicted[Capacity], dFdp[Capacity];
    const state_vector<Model>* dFdp_of[Capacity] = {};  // g++ -Wmaybe-uninitialized: null past directions
    const predictor_weights<Model> pw = bdf_predictor_weights<Model>(before, k, t_new);
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
    if (!detail::tangents_finite<Model>(fresh, tm.directions)) return member_status::model_not_finite;
    return member_status::success;
  }

  // The largest of the directions' estimates of order `order` (0 without error control): at the
  // step's order k from the predictor difference, as bdf_attempt forms the state's, and at k - 1 and
  // k + 1 from the divided differences over the directions' history (tangent_lte).
  LOCKSTEP_HD double estimate(int order) const {
    using L = state_layout<Model>;
    double err = 0.0;
    if (!tm.error_control) return err;
    for (int d = 0; d < tm.directions; ++d) {
      const tangent_weighting wt = weighting_for(tm.parameter[d], p, opt);
      double e_d;
      if (order == k) {
        state_vector<Model> e;
        for (int j = 0; j < L::size; ++j) e[j] = fresh[d][j] - predicted[d][j];
        e_d = tangent_error_norm<Model>(e, fresh[d], wt) / (1.0 + c * (t_new - tau_k1));
      } else {
        e_d = tangent_lte<Model>(tm.method, order, t_new, fresh[d], [&](int j) { return tm.past[j][d]; },
                                 tm.derivative0[d], wt);
      }
      err = max(err, e_d);
    }
    return err;
  }

  LOCKSTEP_HD void rejected() { ++tm.tangent_rejections; }

  LOCKSTEP_HD void accept() {
    for (int j = tangent_member<Model, Capacity>::max_past - 1; j > 0; --j)
      for (int d = 0; d < tm.directions; ++d) tm.past[j][d] = tm.past[j - 1][d];
    for (int d = 0; d < tm.directions; ++d) tm.past[0][d] = fresh[d];
  }
};

}  // namespace detail

// One step attempt of the member and its tangents: bdf_attempt with the tangents as its companion.
// Returns what bdf_attempt returned; a failure sets status.
template <class Model, int Capacity>
LOCKSTEP_HD attempt_result tangent_member_attempt(tangent_member<Model, Capacity>& tm, double t_end, const double* p,
                                                  const solver_options& opt) {
  detail::bdf_tangent_companion<Model, Capacity> tangents(tm, p, opt);
  return detail::run_member_attempt(tm, [&](member_status& why) {
    return bdf_attempt<Model>(tm.method, t_end, p, opt, tm.counters, why, tangents);
  });
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
