// lockstep/stepper/solve_member.hpp — one member from t0 to t1: the single-member driver.
//
// Consistent initialization, then BDF step attempts until t1, with outputs at the requested save times
// served by dense output (no step is ever shortened for a save time: DESIGN.md section 1). This host
// function is the reference the batch kernels are compared with; the stepping itself is the
// LOCKSTEP_HD member stepper of method/bdf.hpp.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "lockstep/method/bdf.hpp"
#include "lockstep/model/concept.hpp"
#include "lockstep/stepper/initialize.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep {

template <class Model>
struct member_result {
  using layout = state_layout<Model>;
  member_status status = member_status::running;
  std::string message;  // why the options were refused (status invalid_input)
  member_counters counters;
  initial_values<Model> initial;        // the consistent initial values actually used
  std::vector<double> t;                // save times reached
  std::vector<state_vector<Model>> y;   // (q, v, lambda, mu, nu) at those times
  double t_final = 0.0;
  state_vector<Model> y_final;

  // Group accessors for saved point i.
  double q(std::size_t i, int j) const { return y[i][layout::q + j]; }
  double v(std::size_t i, int j) const { return y[i][layout::v + j]; }
  double lambda(std::size_t i, int j) const { return y[i][layout::lambda + j]; }
  double mu(std::size_t i, int j) const { return y[i][layout::mu + j]; }
  double nu(std::size_t i, int j) const { return y[i][layout::nu + j]; }
};

namespace detail {

// Tracks max |Phi| and max |G v + Phi_t|, |A v + a| at an accepted point.
template <class Model>
void record_constraint_residuals(double t, const state_vector<Model>& y, const double* p, member_counters& c) {
  using L = state_layout<Model>;
  vec<double, Model::n> q, v;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  if constexpr (Model::m > 0) {
    c.max_phi = std::max(c.max_phi, norm_inf(Model::template constraint<double, double>(t, q, p)));
    c.max_velocity_residual = std::max(c.max_velocity_residual, norm_inf(velocity_constraint<Model>(t, q, v, p)));
  }
  if constexpr (Model::k > 0)
    c.max_velocity_residual =
        std::max(c.max_velocity_residual, norm_inf(Model::template nonholonomic<double, double>(t, q, v, p)));
}

// Replaces lambda and nu of an output point by the multipliers consistent with its (q, v).
template <class Model>
void make_multipliers_consistent(double t, state_vector<Model>& y, const double* p) {
  using L = state_layout<Model>;
  vec<double, Model::n> q, v, a;
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  if (accelerations_and_multipliers<Model>(t, q, v, p, a, lambda, nu) != member_status::success) return;
  for (int i = 0; i < Model::m; ++i) y[L::lambda + i] = lambda[i];
  for (int i = 0; i < Model::k; ++i) y[L::nu + i] = nu[i];
}

}  // namespace detail

// Solves one member. save_times must be sorted and lie in [t0, t1]; t1 is not added implicitly.
template <class Model>
member_result<Model> solve_member(const double* params, const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                                  double t0, double t1, const solver_options& opt,
                                  const std::vector<double>& save_times) {
  static_assert(lockstep_check_model<Model>());
  using L = state_layout<Model>;
  member_result<Model> out;
  if (const char* why = bdf_check_options(opt); why[0] != '\0') {
    out.status = member_status::invalid_input;
    out.message = why;
    return out;
  }
  if (!(t1 > t0)) {
    out.status = member_status::invalid_input;
    out.message = "t1 must be greater than t0";
    return out;
  }

  member_status st = consistent_initialization<Model>(t0, q0, v0, params, opt, out.initial, out.counters);
  if (st != member_status::success) {
    out.status = st;
    return out;
  }
  bdf_state<Model> s;
  bdf_start(s, t0, t1, out.initial, opt);
  detail::record_constraint_residuals<Model>(t0, s.y_past[0], params, out.counters);

  std::size_t next_save = 0;
  while (next_save < save_times.size() && save_times[next_save] <= t0) {
    if (save_times[next_save] == t0) {
      out.t.push_back(t0);
      out.y.push_back(s.y_past[0]);
    }
    ++next_save;
  }

  long attempts = 0;
  st = member_status::running;
  while (s.t < t1) {
    if (attempts++ >= opt.max_steps) {
      st = member_status::max_steps;
      break;
    }
    member_status why = member_status::running;
    const attempt_result r = bdf_attempt<Model>(s, t1, params, opt, out.counters, why);
    if (r == attempt_result::failed) {
      st = why;
      break;
    }
    if (r != attempt_result::accepted) continue;
    detail::record_constraint_residuals<Model>(s.t, s.y_past[0], params, out.counters);
    while (next_save < save_times.size() && save_times[next_save] <= s.t) {
      state_vector<Model> y;
      if (save_times[next_save] == s.t)
        y = s.y_past[0];
      else
        bdf_dense_output(s, save_times[next_save], y);
      if (opt.consistent_multipliers) detail::make_multipliers_consistent<Model>(save_times[next_save], y, params);
      out.t.push_back(save_times[next_save]);
      out.y.push_back(y);
      ++next_save;
    }
  }
  if (st == member_status::running) st = member_status::success;
  out.status = st;
  out.t_final = s.t;
  out.y_final = s.y_past[0];
  if (opt.consistent_multipliers) detail::make_multipliers_consistent<Model>(s.t, out.y_final, params);
  (void)L::size;
  return out;
}

}  // namespace lockstep
