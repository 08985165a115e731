// kernels/cuda/ensemble_cuda.hpp — the CUDA backend of solve_ensemble, as seen from host code.
//
// Defined in ensemble_cuda.cu (compiled by nvcc, explicitly instantiated for the models of
// device_models.hpp) and linked through the lockstep::cuda target, which also defines
// LOCKSTEP_WITH_CUDA so that lockstep.hpp and the built-in engines route backend::cuda here.
#pragma once

#include "lockstep/detail/device_models.hpp"
#include "lockstep/typed_ensemble.hpp"

namespace lockstep::cuda {

// Number of CUDA devices usable by this process (0 without a GPU or driver).
int device_count();

// The same chunked algorithm as the host scheduler (host/scheduler/scheduler.cpp) with chunk storage
// in device memory: the member functors run one thread per member, the active list is compacted with
// thrust::partition, outputs come back through pinned host buffers on a second stream while the next
// chunk computes. Throws std::runtime_error naming the CUDA call that failed, and
// std::invalid_argument for a method other than bdf, radau5, dopri5, tsit5 and auto (the ones compiled
// for the device)
// or when the machine has no CUDA device.
template <class Model>
ensemble_result<Model> solve_ensemble(const ensemble<Model>& e, const run_options& run);

}  // namespace lockstep::cuda
