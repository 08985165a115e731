// tests/support/monte_carlo_member.hpp — a member of a Monte Carlo study of a built-in model, started as
// the stepper starts it: parameters within 5 % of the defaults (some of them NaN, as a failing member's),
// the default inputs, and consistent positions, velocities, accelerations and multipliers at t0 for its
// own parameters (method/initialize.hpp). For the tests and benchmarks that run members through the
// method in lanes and alone (tests/simd, bench/simd).
#pragma once

#include <limits>
#include <random>

#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::simd_test {

template <class Model>
struct monte_carlo_member {
  double p[Model::n_params > 0 ? Model::n_params : 1];
  initial_values<Model> start;  // a NaN member's stay NaN: it fails at its first Jacobian
};

// The model's initial state (q, v) for parameters p and the default inputs.
template <class Model>
void default_initial_state(const double* p, vec<double, Model::n>& q, vec<double, Model::n>& v) {
  double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int i = 0; i < Model::n_inputs; ++i) inputs[i] = Model::inputs[i].default_value;
  Model::initial_state(p, inputs, q, v);
}

// The consistent start at t0 of a member with parameters p and the default inputs: the default start
// projected onto the member's own constraints however far (init "project": with parameters 5 % off,
// Andrews' moves by more than init "auto" accepts, method/options.hpp).
template <class Model>
initial_values<Model> consistent_start(const double* p, double t0, const solver_options& opt) {
  vec<double, Model::n> q, v;
  default_initial_state<Model>(p, q, v);
  initial_values<Model> start;
  member_counters unused;
  solver_options projecting = opt;
  projecting.init = init_mode::project;
  (void)consistent_initialization<Model>(t0, q, v, p, projecting, start, unused);
  return start;
}

// nan_one_in: one member in that many gets a NaN parameter.
template <class Model>
monte_carlo_member<Model> draw_monte_carlo_member(std::mt19937_64& g, double t0, const solver_options& opt,
                                                  unsigned nan_one_in) {
  std::uniform_real_distribution<double> u(-1, 1);
  monte_carlo_member<Model> m{};
  for (int i = 0; i < Model::n_params; ++i) m.p[i] = Model::params[i].default_value * (1.0 + 0.05 * u(g));
  if (g() % nan_one_in == 0) m.p[g() % Model::n_params] = std::numeric_limits<double>::quiet_NaN();
  m.start = consistent_start<Model>(m.p, t0, opt);
  return m;
}

}  // namespace lockstep::simd_test
