// lockstep/detail/device_models.hpp — the one list of models the CUDA backend is built for.
//
// Each entry compiles the whole member stepper as device code for every CUDA architecture of the
// build, so the list is short (docs/GPU.md has the figures). kernels/cuda/ensemble_cuda.cu instantiates the backend
// for exactly these models, and the built-in engines (host/engine) attach the device solve to them.
#pragma once

#include <type_traits>

#include "lockstep/model/registry.hpp"

// LOCKSTEP_DEVICE_MODELS(X) calls X(type) for every model built for the device.
#if defined(LOCKSTEP_CUDA_CHAIN16)
// chain<16> (Newton matrix 64 x 64) takes the split path, with its member state in a workspace in
// device memory (docs/GPU.md section 5.7); opt-in: minutes of ptxas per kernel and architecture.
#define LOCKSTEP_DEVICE_MODELS(X) \
  X(lockstep::models::pendulum) X(lockstep::models::double_pendulum) X(lockstep::models::andrews) X(lockstep::models::chain<16>)
#else
#define LOCKSTEP_DEVICE_MODELS(X) \
  X(lockstep::models::pendulum) X(lockstep::models::double_pendulum) X(lockstep::models::andrews)
#endif

namespace lockstep::cuda {

#define LOCKSTEP_DEVICE_MODEL_IS(type) || std::is_same_v<Model, type>
template <class Model>
inline constexpr bool built_for = false LOCKSTEP_DEVICE_MODELS(LOCKSTEP_DEVICE_MODEL_IS);
#undef LOCKSTEP_DEVICE_MODEL_IS

}  // namespace lockstep::cuda
