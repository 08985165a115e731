// tests/lyapunov/lyapunov_test_support.hpp — what the Lyapunov and sensitivity tests share: a model's
// default start (with parameter overrides) and the BDF-on-ggl options with one tolerance.
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "lockstep/method/options.hpp"
#include "../model/model_test_support.hpp"

namespace lockstep::test {

// Parameters (defaults, with overrides {index, value}) and the consistent start of the default inputs.
template <class Model>
struct start_point {
  std::vector<double> p = default_params<Model>();
  vec<double, Model::n> q0, v0;

  explicit start_point(std::initializer_list<std::pair<int, double>> overrides = {}) {
    for (const auto& [i, x] : overrides) p[i] = x;
    const std::vector<double> in = default_inputs<Model>();
    Model::initial_state(p.data(), in.data(), q0, v0);
  }
};

// BDF on ggl (the C++ default) with rtol = atol = tol.
inline solver_options bdf_ggl(double tol) {
  solver_options opt;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  return opt;
}

}  // namespace lockstep::test
