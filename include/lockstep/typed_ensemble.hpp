// lockstep/typed_ensemble.hpp — ensemble<Model> and ensemble_result<Model>: the model-agnostic
// ensemble_problem and ensemble_solution (lockstep/ensemble.hpp) with a model's sizes and tables at
// compile time, for C++ programs that compile their model in.
#pragma once

#include <cstddef>
#include <utility>

#include "lockstep/ensemble.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep {

// One model's ensemble: per-member parameters and initial state, shared times and options.
template <class Model>
struct ensemble : ensemble_problem {
  // `count` members with the model's default parameters and initial inputs.
  static ensemble with_defaults(long count) {
    ensemble e;
    e.members = count;
    e.params.resize(static_cast<std::size_t>(count) * Model::n_params);
    e.q0.resize(static_cast<std::size_t>(count) * Model::n);
    e.v0.resize(static_cast<std::size_t>(count) * Model::n);
    double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
    if constexpr (Model::n_inputs > 0)
      for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
    for (long i = 0; i < count; ++i) {
      for (int j = 0; j < Model::n_params; ++j) e.params[i * Model::n_params + j] = Model::params[j].default_value;
      e.set_initial_inputs(i, inputs);
    }
    return e;
  }

  double* params_of(long i) { return params.data() + i * Model::n_params; }
  const double* params_of(long i) const { return params.data() + i * Model::n_params; }

  // Maps named initial inputs (Model::inputs order) of member i to its (q0, v0) with its parameters.
  void set_initial_inputs(long i, const double* inputs) {
    vec<double, Model::n> q, v;
    Model::initial_state(params_of(i), inputs, q, v);
    for (int j = 0; j < Model::n; ++j) {
      q0[i * Model::n + j] = q[j];
      v0[i * Model::n + j] = v[j];
    }
  }
};

template <class Model>
struct ensemble_result : ensemble_solution {
  using layout = state_layout<Model>;
  ensemble_result() {
    n = Model::n;
    m = Model::m;
    k = Model::k;
    ny = layout::size;
  }
  explicit ensemble_result(ensemble_solution&& s) : ensemble_solution(std::move(s)) {}
};

}  // namespace lockstep
