// kernels/cuda/ensemble_cuda.cu — the CUDA backend for the built-in models: the templates of
// kernels/cuda/ensemble_cuda_impl.cuh (how chunks run on the device, the split path, how the code is
// checked with and without a GPU) instantiated for the models of device_models.hpp, and the program's
// sign that it has the backend. The ptxas figures of this unit are in build/ptxas/ensemble_cuda.txt.
#include "kernels/cuda/ensemble_cuda_impl.cuh"

// The scheduler's sign that this program has the CUDA backend (a weak reference there).
extern "C" int lockstep_cuda_device_count() { return lockstep::cuda::count_devices(); }

namespace lockstep::cuda {

int device_count() { return count_devices(); }

// The models of device_models.hpp, the one list of what the CUDA backend is built for.
#define LOCKSTEP_INSTANTIATE_DEVICE_MODEL(type)                                                   \
  template ensemble_result<type> solve_ensemble(const ensemble<type>&, const run_options&);     \
  template lockstep_result solve_on_device<type>(lockstep_device_run*, lockstep_error*);
LOCKSTEP_DEVICE_MODELS(LOCKSTEP_INSTANTIATE_DEVICE_MODEL)
#undef LOCKSTEP_INSTANTIATE_DEVICE_MODEL

}  // namespace lockstep::cuda
