// kernels/cuda/device_solve.hpp — the CUDA backend as an engine function (lockstep/engine/abi.h,
// solve_on_device), defined in ensemble_cuda.cu for the models of device_models.hpp.
#pragma once

#include "lockstep/detail/device_models.hpp"
#include "lockstep/engine/abi.h"

namespace lockstep::cuda {

// Solves the run's members on the device (cuda::solve_ensemble), handing every finished chunk and
// every launch's progress to the run's callbacks. Errors come back as a status and a message.
template <class Model>
lockstep_result solve_on_device(lockstep_device_run* run, lockstep_error* error);

}  // namespace lockstep::cuda
