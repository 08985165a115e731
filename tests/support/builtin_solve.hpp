// tests/support/builtin_solve.hpp — solve_ensemble for a built-in model through its engine in
// lockstep::builtin_models (lockstep/engine/builtin.hpp), for programs that link that library.
//
// solve_ensemble<Model> (lockstep/lockstep.hpp) builds Model's engine table in the calling translation
// unit: every method and formulation, instantiated again in each test file that solves the model
// (a test of eleven models took four minutes to compile so). The built-in engine is the same
// templates compiled once; the scheduler, the backends and the member kernels a test exercises are the
// same code either way.
#pragma once

#include <stdexcept>
#include <string>

#include "lockstep/engine/builtin.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/typed_ensemble.hpp"

namespace lockstep::test {

template <class Model>
ensemble_result<Model> solve_builtin(const ensemble<Model>& e, const run_options& run) {
  const engine* built_in = find_builtin_engine(Model::name);
  if (built_in == nullptr) throw std::logic_error(std::string("no built-in engine named ") + Model::name);
  return ensemble_result<Model>(solve_ensemble(*built_in, e, run));
}

}  // namespace lockstep::test
