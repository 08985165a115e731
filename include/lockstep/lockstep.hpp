// lockstep/lockstep.hpp — the C++ API: describe an ensemble, pick a backend, solve, read the results.
//
//     #include "lockstep/lockstep.hpp"
//     using Model = lockstep::models::double_pendulum;
//     auto e = lockstep::ensemble<Model>::with_defaults(10000);     // default parameters and start
//     for (long i = 0; i < e.members; ++i) e.params_of(i)[0] = 1.0 + 1e-3 * i;   // vary m1
//     e.t1 = 3.0; e.save_times = {1.0, 2.0, 3.0};
//     lockstep::run_options run; run.where = lockstep::backend::omp;
//     auto r = lockstep::solve_ensemble(e, run);                    // r.status[i], r.q(i, s, j), ...
//
// solve_ensemble<Model> is a thin template: it builds the engine table of Model
// (lockstep/engine/model_engine.hpp) and hands it to the model-agnostic scheduler, the same code that
// serves the `lockstep` command and engines loaded at run time (lockstep/engine/loader.hpp).
// Backends: serial (the reference), omp (link lockstep::omp) and cuda (link lockstep::cuda, built
// where nvcc exists, for the models of lockstep/detail/device_models.hpp). serial and omp give bitwise
// identical results for any thread count, chunk size and K.
#pragma once

#include <stdexcept>
#include <string>

#include "lockstep/engine/model_engine.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"
#include "lockstep/typed_ensemble.hpp"

#if defined(LOCKSTEP_WITH_CUDA)  // defined by the lockstep::cuda target for everything that links it
#include "lockstep/detail/device_models.hpp"
#include "lockstep/engine/builtin.hpp"
#endif

namespace lockstep {

template <class Model>
ensemble_result<Model> solve_ensemble(const ensemble<Model>& e, const run_options& run) {
  static_assert(lockstep_check_model<Model>());
#if defined(LOCKSTEP_WITH_CUDA)
  // The device kernels exist for the built-in models of device_models.hpp, in their built-in engines.
  if constexpr (cuda::built_for<Model>)
    if (run.where == backend::cuda) return ensemble_result<Model>(solve_ensemble(*find_builtin_engine(Model::name), e, run));
#endif
  return ensemble_result<Model>(solve_ensemble(engine(model_engine<Model>()), e, run));
}

}  // namespace lockstep
