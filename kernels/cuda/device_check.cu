// kernels/cuda/device_check.cu — every built-in model, its AD-derived Jacobians and the dense
// factorizations, compiled as device code (see device_check.hpp for why).
//
// One __global__ template, instantiated once per model of lockstep::builtin_models (the registry is
// the single list: a model added there is checked here without touching this file). One thread per
// member, structure-of-arrays in and out, as the batch kernels will be.
#include <cuda_runtime.h>

#include <string>

#include "device_check.hpp"
#include "lockstep/model/registry.hpp"

namespace lockstep::device_check {

inline constexpr int threads_per_block = 128;

// Outside the anonymous namespace so that ptxas reports carry a readable name.
template <class Model>
__global__ void __launch_bounds__(threads_per_block)
    check_kernel(const double* __restrict__ d_in, double* __restrict__ d_out, int members) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= members) return;
  check_member<Model>(soa_view<const double>{d_in, members, i}, soa_view<double>{d_out, members, i});
}

namespace {

std::string cuda_error(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

// The local memory the driver reserves to launch `kernel` (per-thread local size times every thread
// the device can hold), or 0 when it cannot be told.
template <class Kernel>
double local_memory_reservation(Kernel kernel) {
  cudaFuncAttributes attributes{};
  int device = 0, threads_per_sm = 0, sms = 0;
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0.0;
  }
  return double(attributes.localSizeBytes) * threads_per_sm * sms;
}

template <class Model>
run_result run_model(const double* h_in, double* h_out, int members) {
  using L = layout<Model>;
  const size_t in_bytes = sizeof(double) * size_t(L::in_size) * size_t(members);
  const size_t out_bytes = sizeof(double) * size_t(L::out_size) * size_t(members);
  run_result result;
  auto fail = [&](const char* what, cudaError_t e) {
    result.status = run_result::failed;
    result.message = cuda_error(what, e);
  };

  size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes); e != cudaSuccess) {
    fail("cudaMemGetInfo", e);
    return result;
  }
  const double reservation = local_memory_reservation(check_kernel<Model>);
  if (reservation + double(in_bytes + out_bytes) > 0.9 * double(free_bytes)) {
    result.status = run_result::does_not_fit;
    result.message = std::string(Model::name) + ": the kernel's local memory for a full device, " +
                     std::to_string(reservation / 1e9) + " GB, exceeds the free " +
                     std::to_string(double(free_bytes) / 1e9) + " GB";
    return result;
  }

  double* d_in = nullptr;
  double* d_out = nullptr;
  cudaError_t e = cudaMalloc(&d_in, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&d_out, out_bytes);
  if (e != cudaSuccess) fail("cudaMalloc", e);
  if (result.status == run_result::ok && (e = cudaMemcpy(d_in, h_in, in_bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
    fail("cudaMemcpy to device", e);
  if (result.status == run_result::ok && (e = cudaMemset(d_out, 0, out_bytes)) != cudaSuccess) fail("cudaMemset", e);
  if (result.status == run_result::ok) {
    const int blocks = (members + threads_per_block - 1) / threads_per_block;
    check_kernel<Model><<<blocks, threads_per_block>>>(d_in, d_out, members);
    if ((e = cudaGetLastError()) != cudaSuccess) fail("kernel launch", e);
  }
  if (result.status == run_result::ok && (e = cudaDeviceSynchronize()) != cudaSuccess) fail("kernel", e);
  if (result.status == run_result::ok && (e = cudaMemcpy(h_out, d_out, out_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    fail("cudaMemcpy to host", e);
  cudaFree(d_in);
  cudaFree(d_out);
  return result;
}

}  // namespace

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the "no device / no driver" error
    return 0;
  }
  return count;
}

run_result run(int model_index, const double* h_in, double* h_out, int members) {
  run_result result{run_result::failed, "no built-in model number " + std::to_string(model_index)};
  if (members <= 0) return {};
  int index = 0;
  builtin_models::for_each([&]<class Model>() {
    if (index++ == model_index) result = run_model<Model>(h_in, h_out, members);
  });
  return result;
}

}  // namespace lockstep::device_check
