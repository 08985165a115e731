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
// Backends: serial (the reference), omp (OpenMP; the translation unit must be compiled with -fopenmp,
// which the lockstep::omp CMake target adds) and cuda (built where nvcc exists; kernels/cuda).
// serial and omp give bitwise identical results for any thread count, chunk size and K.
#pragma once

#include <stdexcept>
#include <string>

#include "host/scheduler/scheduler.hpp"
#include "kernels/omp/launch.hpp"
#include "kernels/serial/launch.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"

#if defined(LOCKSTEP_WITH_CUDA)
#include "kernels/cuda/ensemble_cuda.hpp"
#endif

namespace lockstep {

template <class Model>
ensemble_result<Model> solve_ensemble(const ensemble<Model>& e, const run_options& run) {
  static_assert(lockstep_check_model<Model>());
  switch (run.where) {
    case backend::serial:
      return visit_method(e.options.method, [&]<class Method>() {
        return run_chunked<Model, Method>(e, run, [](const auto& f, const long* active, long count) {
          serial::for_each_member(active, count, f);
        });
      });
    case backend::omp:
      if (!omp::available())
        throw std::invalid_argument("lockstep: backend omp requested but this program was built without OpenMP");
      return visit_method(e.options.method, [&]<class Method>() {
        return run_chunked<Model, Method>(e, run, [threads = run.threads](const auto& f, const long* active, long count) {
          omp::for_each_member(active, count, f, threads);
        });
      });
    case backend::cuda:
#if defined(LOCKSTEP_WITH_CUDA)
      if constexpr (cuda::built_for<Model>) {
        return cuda::solve_ensemble(e, run);
      } else {
        throw std::invalid_argument(std::string("lockstep: the cuda backend is not built for model ") + Model::name +
                                    " (kernels/cuda/ensemble_cuda.cu lists the models it instantiates)");
      }
#else
      throw std::invalid_argument("lockstep: the cuda backend is not available in this build (no nvcc, or "
                                  "the program does not link lockstep::cuda)");
#endif
  }
  throw std::invalid_argument("lockstep: unknown backend");
}

}  // namespace lockstep
