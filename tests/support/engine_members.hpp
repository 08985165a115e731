// tests/support/engine_members.hpp — an ensemble of an engine's members at the model's default
// parameters (each of which a test may change per member) and the initial state those give, as a study
// without [ensemble] draws them: what the tests that solve a loaded engine share.
#pragma once

#include <cstddef>
#include <vector>

#include "lockstep/engine/engine.hpp"
#include "lockstep/ensemble.hpp"

namespace lockstep::tests {

// `members` members of `model`; adjust(i, p) may change member i's parameters p before its initial
// state is computed from them. Times, save times and options are left to the caller.
template <class Adjust>
ensemble_problem members_at_defaults(const engine& model, long members, const Adjust& adjust) {
  const int n = model.n(), np = model.n_params();
  ensemble_problem e;
  e.members = members;
  e.params.resize(std::size_t(members) * np);
  e.q0.resize(std::size_t(members) * n);
  e.v0.resize(std::size_t(members) * n);
  std::vector<double> inputs;
  for (const auto& input : model.inputs()) inputs.push_back(input.default_value);
  for (long i = 0; i < members; ++i) {
    double* p = e.params.data() + i * np;
    for (int j = 0; j < np; ++j) p[j] = model.params()[j].default_value;
    adjust(i, p);
    model.initial_state(p, inputs.data(), e.q0.data() + i * n, e.v0.data() + i * n);
  }
  return e;
}
inline ensemble_problem members_at_defaults(const engine& model, long members) {
  return members_at_defaults(model, members, [](long, double*) {});
}

}  // namespace lockstep::tests
