// tests/method/method_test_support.hpp — what the method tests share: fixed-step errors of the pendulum
// against the independent reference (tests/support/reference.hpp) and fitted orders, adaptive runs,
// agreement in significant digits, and the failure statuses every method must report.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"
#include "../support/doubled_pendulum.hpp"
#include "../support/internal_tolerance.hpp"
#include "../support/method_orders.hpp"
#include "../support/reference.hpp"

namespace lockstep::test {

// Least-squares slope of log(error) against log(h), h = 1 / steps (shared with docs/METHODS.md's table).
using orders::fitted_order;

// The options of a method on a formulation (rho_inf for rhoinf; the explicit pairs project), defaults
// otherwise.
inline solver_options method_options(method_kind method, formulation form, double rho_inf = 0.6) {
  solver_options opt;
  opt.method = method;
  opt.form = form;
  opt.rho_inf = rho_inf;
  // The explicit pairs keep the constraints by projection (their default in a study file).
  if (is_explicit_pair(method)) opt.projection = projection_kind::coordinate;
  return opt;
}

// "method/formulation" (and rho_inf for rhoinf), for messages.
inline std::string describe(const solver_options& opt) {
  std::string s = std::string(method_name(opt.method)) + "/" + formulation_name(opt.form);
  if (opt.method == method_kind::rhoinf) {
    char rho[32];
    std::snprintf(rho, sizeof rho, " rho_inf %g", opt.rho_inf);
    s += rho;
  }
  return s;
}

// The pendulum (theta0 = 1, m = L = 1, g = 9.81) at t from the reference, as a state vector y =
// (q, v, lambda, mu = 0) and its derivative y' = (v, a), a = -q lambda + (0, -g): the exact point a
// single step starts from when the error estimates are compared with true local errors.
struct exact_point {
  state_vector<models::pendulum> y, yp;
};

inline exact_point pendulum_exact(double t) {
  using L = state_layout<models::pendulum>;
  const auto pt = reference::pendulum({}, 1.0, 0.0, {t}).back();
  exact_point e;
  for (int j = 0; j < 2; ++j) {
    e.y[L::q + j] = pt.q[j];
    e.y[L::v + j] = pt.v[j];
    e.yp[L::q + j] = pt.v[j];
    e.yp[L::v + j] = -pt.q[j] * pt.lambda - (j == 1 ? 9.81 : 0.0);
  }
  e.y[L::lambda] = pt.lambda;
  return e;
}

// One adaptive step of a Radau IIA method (tableau RT) of size h from the exact pendulum at t = 0.5:
// the method's scaled error estimate, and the true local error y_1 - y(0.5 + h) in the same norm
// (radau_weights at y_0; the step must pass the error test at tolerance 1e-2).
struct estimate_and_truth {
  double estimate = 0, truth = 0;
};

// The options of one step on `form` with rtol = atol = tol.
inline solver_options step_options(formulation form, double tol) {
  solver_options opt;
  opt.form = form;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  return opt;
}

template <class RT>
estimate_and_truth radau_step_error(formulation form, double h) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81};
  const solver_options opt = step_options(form, 1e-2);
  const exact_point now = pendulum_exact(0.5), next = pendulum_exact(0.5 + h);
  radau_state<Model, RT> s;
  s.t = 0.5;
  s.h = h;
  s.y = now.y;
  s.yp = now.yp;
  s.first = false;  // no extra filter application: the estimate as it is at every later step
  member_counters counters;
  member_status status = member_status::running;
  EXPECT_EQ(radau_attempt<Model>(s, 1.0, p, opt, counters, status), attempt_result::accepted) << "h " << h;
  return {s.error, detail::weighted_rms(s.y - next.y, detail::radau_weights<Model>(form, now.y, h, opt))};
}

struct fixed_step_errors {
  double q = 0, v = 0, lambda = 0;
};

// Max errors at t = 1 of the pendulum (theta0 = 1, omega <= 3.1) with fixed steps h = 1 / steps and
// the method, formulation (and rho_inf) of `opt`. Newton is converged far below the discretization
// error (tolerances 1e-12; newton_tol 1e-4 and up to 30 iterations for the one-equation corrector of
// BDF and rhoinf), and lambda is the method's own: consistent output multipliers would be recomputed
// from (q, v).
inline fixed_step_errors pendulum_fixed_step_errors(solver_options opt, int steps) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  opt.fixed_h = 1.0 / steps;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-12;
  opt.newton_tol = 1e-4;
  opt.newton_max_iterations = 30;
  opt.consistent_multipliers = false;
  const auto r = solve_member<Model>(p, q0, v0, 0.0, 1.0, opt, {1.0});
  EXPECT_EQ(r.status, member_status::success) << steps << " steps: " << status_name(r.status);
  fixed_step_errors e;
  if (r.y.size() != 1) return e;
  const auto ref = reference::pendulum({}, 1.0, 0.0, {1.0}).back();
  for (int j = 0; j < 2; ++j) {
    e.q = std::max(e.q, std::abs(r.q(0, j) - ref.q[j]));
    e.v = std::max(e.v, std::abs(r.v(0, j) - ref.v[j]));
  }
  e.lambda = std::abs(r.lambda(0, 0) - ref.lambda);
  return e;
}

// Fits the orders of q, v and lambda over `steps` (h = 1 / steps) and expects each within 0.3 of the
// theory's (the acceptance band). Prints the errors and the slopes.
inline void expect_fixed_step_orders(const solver_options& opt, const std::vector<int>& steps, double q_order,
                                     double v_order, double lambda_order) {
  std::vector<double> eq, ev, el;
  const std::string what = describe(opt);
  for (int s : steps) {
    const fixed_step_errors e = pendulum_fixed_step_errors(opt, s);
    std::printf("[ measured ] %s N = %4d: err q %.3e  v %.3e  lambda %.3e\n", what.c_str(), s, e.q, e.v, e.lambda);
    eq.push_back(e.q);
    ev.push_back(e.v);
    el.push_back(e.lambda);
  }
  const double sq = fitted_order(steps, eq), sv = fitted_order(steps, ev), sl = fitted_order(steps, el);
  std::printf("[ measured ] %s slopes over N = %d..%d: q %.3f  v %.3f  lambda %.3f\n", what.c_str(), steps.front(),
              steps.back(), sq, sv, sl);
  EXPECT_NEAR(sq, q_order, 0.3) << what << " q";
  EXPECT_NEAR(sv, v_order, 0.3) << what << " v";
  EXPECT_NEAR(sl, lambda_order, 0.3) << what << " lambda";
}

// One adaptive pendulum run (theta0 = 1) over [0, t1] with rtol = atol = tol, saved every 0.1 (not
// step points: dense output is exercised); max errors over the save times against the reference.
// Output multipliers are the consistent ones (the default).
struct adaptive_run {
  member_status status = member_status::running;
  double err_q = 0, err_lambda = 0;
  long steps = 0, rejected = 0;
};

inline adaptive_run adaptive_pendulum(solver_options opt, double tol, double t1) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  std::vector<double> times;
  for (int i = 1; i <= static_cast<int>(std::lround(t1 / 0.1)); ++i) times.push_back(0.1 * i);
  const auto r = solve_member<Model>(p, q0, v0, 0.0, t1, opt, times);
  adaptive_run out;
  out.status = r.status;
  out.steps = r.counters.steps;
  out.rejected = r.counters.rejected_steps;
  if (r.t.size() != times.size()) return out;
  const auto refs = reference::pendulum({}, 1.0, 0.0, times);
  for (std::size_t i = 0; i < times.size(); ++i) {
    for (int j = 0; j < 2; ++j) out.err_q = std::max(out.err_q, std::abs(r.q(i, j) - refs[i].q[j]));
    out.err_lambda = std::max(out.err_lambda, std::abs(r.lambda(i, 0) - refs[i].lambda));
  }
  return out;
}

// Adaptive runs at each of `tols` succeed, and the q and lambda errors shrink with the tolerance, by at
// least `min_gain` from one tolerance to the next (rtol means the accuracy at the end,
// method/tolerance_calibration.hpp: ideally the ratio of the tolerances).
inline void expect_adaptive_accuracy_gains(const solver_options& opt, double t1, double min_gain,
                                           std::initializer_list<double> tols = {1e-4, 1e-6, 1e-8}) {
  double previous_q = 0, previous_lambda = 0;
  bool first = true;
  for (double tol : tols) {
    const adaptive_run r = adaptive_pendulum(opt, tol, t1);
    std::printf("[ measured ] %s tol %.0e: err q %.3e  lambda %.3e  steps %ld  rejected %ld\n", describe(opt).c_str(), tol,
                r.err_q, r.err_lambda, r.steps, r.rejected);
    ASSERT_EQ(r.status, member_status::success) << describe(opt) << " tol " << tol << ": " << status_name(r.status);
    if (!first) {
      EXPECT_LT(r.err_q * min_gain, previous_q) << describe(opt) << " tol " << tol;
      EXPECT_LT(r.err_lambda * min_gain, previous_lambda) << describe(opt) << " tol " << tol;
    }
    first = false;
    previous_q = r.err_q;
    previous_lambda = r.err_lambda;
  }
}

// Significant correct digits as the Test Set counts them: -log10(max_i |q_i - ref_i| / (1 + |ref_i|)).
template <int N>
double scd(const vec<double, N>& q, const vec<double, N>& ref) {
  double worst = 0;
  for (int i = 0; i < N; ++i) worst = std::max(worst, std::abs(q[i] - ref[i]) / (1.0 + std::abs(ref[i])));
  return -std::log10(std::max(worst, 1e-300));
}

// One member of a model from its default parameters and initial inputs over [0, t1], saved at t1;
// `params` replaces the parameters and `q_start` the initial positions when given.
template <class Model>
member_result<Model> solve_from_defaults(const solver_options& opt, double t1, const double* params = nullptr,
                                         const vec<double, Model::n>* q_start = nullptr) {
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = params ? params[i] : Model::params[i].default_value;
  double in[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int i = 0; i < Model::n_inputs; ++i) in[i] = Model::inputs[i].default_value;
  vec<double, Model::n> q0, v0;
  Model::initial_state(p, in, q0, v0);
  if (q_start) q0 = *q_start;
  return solve_member<Model>(p, q0, v0, 0.0, t1, opt, {t1});
}

// Final positions of a model from its defaults, with rtol = atol = tol.
template <class Model>
vec<double, Model::n> final_positions(method_kind method, formulation form, double t1, double tol) {
  solver_options opt = method_options(method, form);
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  const auto r = solve_from_defaults<Model>(opt, t1);
  EXPECT_EQ(r.status, member_status::success) << Model::name << " " << method_name(method) << " tol " << tol;
  vec<double, Model::n> q;
  for (int j = 0; j < Model::n; ++j) q[j] = r.y_final[state_layout<Model>::q + j];
  return q;
}

// Andrews' squeezer (to t = 0.03) and the car axis (to t = 3) on index3: every tolerance succeeds and
// gains significant digits against Radau IIA (s = 3) at 1e-12.
inline void expect_index3_hard_problems_gain_digits(method_kind method, const std::vector<double>& tols) {
  const auto andrews_ref = final_positions<models::andrews>(method_kind::radau5, formulation::index3, 0.03, 1e-12);
  const auto car_ref = final_positions<models::car_axis>(method_kind::radau5, formulation::index3, 3.0, 1e-12);
  double previous_andrews = 0, previous_car = 0;
  for (double tol : tols) {
    const double a = scd(final_positions<models::andrews>(method, formulation::index3, 0.03, tol), andrews_ref);
    const double c = scd(final_positions<models::car_axis>(method, formulation::index3, 3.0, tol), car_ref);
    std::printf("[ measured ] %s/index3 tol %.0e: andrews %.1f digits, car_axis %.1f digits\n", method_name(method), tol, a, c);
    EXPECT_GT(a, previous_andrews) << method_name(method) << " andrews tol " << tol;
    EXPECT_GT(c, previous_car) << method_name(method) << " car_axis tol " << tol;
    previous_andrews = a;
    previous_car = c;
  }
}

// Every failure a member can report, provoked for the method and formulation of `base`:
// max_steps (a budget of 5 attempts), step_size_too_small (h_min above andrews' whole interval),
// newton_failure (fixed steps of 1 on the pendulum), singular_matrix (the bob at its pivot, L = 0:
// G = 0 there, the row is dropped, and the bob's fall leaves the constraint it no longer holds),
// model_not_finite (g = NaN), inconsistent_initial (strict start 1e-3 off the circle) and
// invalid_input (rtol = 0).
inline void expect_failure_statuses(const solver_options& base) {
  using Pendulum = models::pendulum;
  const std::string what = describe(base);
  auto expect_status = [&](const auto& r, member_status expected) {
    EXPECT_EQ(r.status, expected) << what << ": " << status_name(r.status) << " instead of " << status_name(expected);
  };
  {
    solver_options opt = base;
    opt.max_steps = 5;
    const auto r = solve_from_defaults<Pendulum>(opt, 10.0);
    expect_status(r, member_status::max_steps);
    EXPECT_LE(r.counters.steps + r.counters.rejected_steps, 5) << what;
  }
  {
    solver_options opt = base;
    opt.h_min = 0.1;
    expect_status(solve_from_defaults<models::andrews>(opt, 0.03), member_status::step_size_too_small);
  }
  {
    solver_options opt = base;
    opt.fixed_h = 1.0;
    const auto r = solve_from_defaults<Pendulum>(opt, 10.0);
    expect_status(r, member_status::newton_failure);
    EXPECT_EQ(r.counters.steps, 0) << what;
  }
  {
    const double p[3] = {1.0, 0.0, 9.81};  // m, L, g
    expect_status(solve_from_defaults<Pendulum>(base, 1.0, p), member_status::singular_matrix);
  }
  {  // whereas a constraint stated twice is redundant: dropped, reported, and the member succeeds
    const auto r = solve_from_defaults<doubled_pendulum_constraint>(base, 1.0);
    expect_status(r, member_status::success);
    EXPECT_EQ(r.counters.dropped_rows, 0b10) << what;
  }
  {
    const double p[3] = {1.0, 1.0, std::numeric_limits<double>::quiet_NaN()};
    expect_status(solve_from_defaults<Pendulum>(base, 1.0, p), member_status::model_not_finite);
  }
  {
    solver_options opt = base;
    opt.init = init_mode::strict;
    const vec<double, 2> off_circle{std::sin(1.0) * (1.0 + 1e-3), -std::cos(1.0) * (1.0 + 1e-3)};
    expect_status(solve_from_defaults<Pendulum>(opt, 1.0, nullptr, &off_circle), member_status::inconsistent_initial);
  }
  {
    solver_options opt = base;
    opt.rtol = 0.0;
    const auto r = solve_from_defaults<Pendulum>(opt, 1.0);
    expect_status(r, member_status::invalid_input);
    EXPECT_EQ(r.counters.steps, 0) << what;
  }
}

}  // namespace lockstep::test
