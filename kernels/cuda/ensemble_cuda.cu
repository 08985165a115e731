// kernels/cuda/ensemble_cuda.cu — the CUDA backend: the member functors of kernels/common, launched
// one thread per active member, with the chunk's storage in device memory.
//
// Per chunk (DESIGN.md section 1; host/scheduler/scheduler.hpp is the host twin):
//   1. the inputs are scattered to SoA in a pinned host buffer and copied to the device (stream 0);
//   2. begin_member runs on every member, then advance_member (K attempts) on the active list, which
//      thrust::partition compacts on the device after every launch (the number still active is the
//      only value copied back per launch);
//   3. states and outputs are copied into pinned host buffers (two sets, used alternately) on a second
//      stream; the host gathers a chunk once its copy event has completed. The copy of chunk c overlaps
//      the host's scatter of chunk c + 1 and its gathering of chunk c - 1, not the computation of chunk
//      c + 1: the device storage is single, so chunk c + 1 starts once chunk c's results are out
//      (double device storage would overlap them at twice the memory; docs/GPU.md).
// No GPU has run this code (none is available to the project): it is held to what the compiler
// proves (no host function reachable from device code) and to ptxas's resource figures, which the
// build records in build/ptxas/ensemble_cuda.txt.
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/partition.h>
#include <thrust/sequence.h>

#include <stdexcept>
#include <string>

#include "ensemble_cuda.hpp"
#include "kernels/common/member_kernels.hpp"
#include "lockstep/model/registry.hpp"

namespace lockstep::cuda {

namespace {

inline constexpr int threads_per_block = 64;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("lockstep cuda: ") + what + ": " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

template <class T>
struct device_buffer {
  T* p = nullptr;
  explicit device_buffer(std::size_t count) {
    if (count > 0) check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
  }
  ~device_buffer() { cudaFree(p); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

template <class T>
struct pinned_buffer {
  T* p = nullptr;
  explicit pinned_buffer(std::size_t count) {
    if (count > 0) check(cudaMallocHost(&p, count * sizeof(T)), "cudaMallocHost");
  }
  ~pinned_buffer() { cudaFreeHost(p); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
};

struct not_finished {
  const unsigned char* finished;
  __host__ __device__ bool operator()(long i) const { return finished[i] == 0; }
};

}  // namespace

// Outside the anonymous namespace so that ptxas reports carry readable names.
template <class Functor>
__global__ void __launch_bounds__(threads_per_block) for_each_active_member(const long* active, long count, Functor f) {
  const long a = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a < count) f(active[a]);
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

template <class Model, class Method>
ensemble_result<Model> solve_with(const ensemble<Model>& e, const run_options& run) {
  detail::check_ensemble(e, run);
  // invalid_argument: like a method the device path lacks, a request this machine cannot serve (the
  // command line exits 2 and names the other backends).
  if (device_count() == 0)
    throw std::invalid_argument("lockstep: the cuda backend needs a CUDA device and this machine has none; use backend omp or serial");
  constexpr int ny = state_layout<Model>::size;
  constexpr int words = soa_image<member_state<Model, Method>>::words;
  const auto start = std::chrono::steady_clock::now();
  const int save_count = static_cast<int>(e.save_times.size());

  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  ensemble_result<Model> r = detail::empty_result(e, run);
  std::vector<double> member_outputs;
  const long chunk = detail::choose_chunk(e, run, run.memory_budget > 0 ? run.memory_budget : free_bytes / 4);
  r.chunk_size = chunk;

  // Device storage for one chunk, reused.
  device_buffer<std::uint64_t> d_states(std::size_t(words) * chunk);
  device_buffer<double> d_params(std::size_t(Model::n_params) * chunk), d_q0(std::size_t(Model::n) * chunk),
      d_v0(std::size_t(Model::n) * chunk), d_outputs(std::size_t(save_count) * ny * chunk),
      d_save_times{std::size_t(save_count)};
  device_buffer<unsigned char> d_finished(chunk);
  device_buffer<long> d_active(chunk);
  // Pinned host buffers: inputs (one set) and results (two sets, for overlap).
  pinned_buffer<double> h_params(std::size_t(Model::n_params) * chunk), h_q0(std::size_t(Model::n) * chunk),
      h_v0(std::size_t(Model::n) * chunk);
  pinned_buffer<std::uint64_t> h_states[2] = {pinned_buffer<std::uint64_t>(std::size_t(words) * chunk),
                                              pinned_buffer<std::uint64_t>(std::size_t(words) * chunk)};
  pinned_buffer<double> h_outputs[2] = {pinned_buffer<double>(std::size_t(save_count) * ny * chunk),
                                        pinned_buffer<double>(std::size_t(save_count) * ny * chunk)};
  cudaStream_t compute = nullptr, copy = nullptr;
  check(cudaStreamCreate(&compute), "cudaStreamCreate");
  check(cudaStreamCreate(&copy), "cudaStreamCreate");
  cudaEvent_t computed[2], copied[2];
  for (int b = 0; b < 2; ++b) {
    check(cudaEventCreateWithFlags(&computed[b], cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming), "cudaEventCreate");
  }
  if (save_count > 0)
    check(cudaMemcpy(d_save_times.p, e.save_times.data(), sizeof(double) * save_count, cudaMemcpyHostToDevice),
          "cudaMemcpy save times");

  progress_report report;
  report.members_total = e.members;
  long pending_first[2] = {-1, -1}, pending_count[2] = {0, 0};
  auto gather = [&](int b) {  // results of the chunk in buffer set b, once its copy has completed
    if (pending_first[b] < 0) return;
    check(cudaEventSynchronize(copied[b]), "cudaEventSynchronize");
    report.steps += detail::gather_results<Model, Method>(e, run, pending_first[b], pending_count[b], chunk,
                                                          h_states[b].p, h_outputs[b].p, member_outputs, r);
    pending_first[b] = -1;
  };

  int set = 0;
  for (long first = 0; first < e.members; first += chunk, set ^= 1) {
    const long count = std::min(chunk, e.members - first);
    detail::scatter_inputs(e, first, count, chunk, h_params.p, h_q0.p, h_v0.p);
    check(cudaMemcpyAsync(d_params.p, h_params.p, sizeof(double) * Model::n_params * chunk, cudaMemcpyHostToDevice, compute), "cudaMemcpyAsync params");
    check(cudaMemcpyAsync(d_q0.p, h_q0.p, sizeof(double) * Model::n * chunk, cudaMemcpyHostToDevice, compute), "cudaMemcpyAsync q0");
    check(cudaMemcpyAsync(d_v0.p, h_v0.p, sizeof(double) * Model::n * chunk, cudaMemcpyHostToDevice, compute), "cudaMemcpyAsync v0");
    // The previous chunk's results are still being copied from d_states/d_outputs on `copy`: wait for
    // that copy before this chunk overwrites them.
    if (pending_first[set ^ 1] >= 0) check(cudaStreamWaitEvent(compute, copied[set ^ 1], 0), "cudaStreamWaitEvent");
    check(cudaMemsetAsync(d_finished.p, 0, chunk, compute), "cudaMemsetAsync");
    // NaN outputs until written (0xFF bytes are a NaN double).
    check(cudaMemsetAsync(d_outputs.p, 0xFF, sizeof(double) * save_count * ny * chunk, compute), "cudaMemsetAsync");
    thrust::sequence(thrust::cuda::par.on(compute), d_active.p, d_active.p + count, 0L);

    chunk_view<Model> view;
    view.stride = chunk;
    view.states = d_states.p;
    view.params = d_params.p;
    view.q0 = d_q0.p;
    view.v0 = d_v0.p;
    view.outputs = d_outputs.p;
    view.finished = d_finished.p;
    view.save_times = d_save_times.p;
    view.save_count = save_count;
    view.t0 = e.t0;
    view.t1 = e.t1;
    view.options = e.options;

    long n_active = count;
    auto launch = [&](const auto& f) {
      const long blocks = (n_active + threads_per_block - 1) / threads_per_block;
      for_each_active_member<<<static_cast<unsigned>(blocks), threads_per_block, 0, compute>>>(d_active.p, n_active, f);
      check(cudaGetLastError(), "kernel launch");
      long* end = thrust::partition(thrust::cuda::par.on(compute), d_active.p, d_active.p + n_active,
                                    not_finished{d_finished.p});
      const long still = static_cast<long>(end - d_active.p);
      report.members_finished += n_active - still;
      n_active = still;
    };
    launch(begin_member<Model, Method>{view});
    while (n_active > 0) {
      launch(advance_member<Model, Method>{view, run.attempts_per_sync});
      if (run.on_progress) {
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        run.on_progress(report);
      }
    }
    check(cudaEventRecord(computed[set], compute), "cudaEventRecord");
    gather(set);  // this buffer set's previous chunk (two chunks ago) is complete by now
    check(cudaStreamWaitEvent(copy, computed[set], 0), "cudaStreamWaitEvent");
    check(cudaMemcpyAsync(h_states[set].p, d_states.p, sizeof(std::uint64_t) * words * chunk, cudaMemcpyDeviceToHost, copy), "cudaMemcpyAsync states");
    check(cudaMemcpyAsync(h_outputs[set].p, d_outputs.p, sizeof(double) * save_count * ny * chunk, cudaMemcpyDeviceToHost, copy), "cudaMemcpyAsync outputs");
    check(cudaEventRecord(copied[set], copy), "cudaEventRecord");
    pending_first[set] = first;
    pending_count[set] = count;
  }
  gather(0);
  gather(1);
  for (int b = 0; b < 2; ++b) {
    cudaEventDestroy(computed[b]);
    cudaEventDestroy(copied[b]);
  }
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// Only BDF and Radau IIA (s = 3) are compiled for the device: every method is a template axis of the
// whole member stepper, and each one adds a full device compile per model and architecture (about
// 3 minutes of nvcc for this file on 2 cores with two methods). The other methods run on serial and omp.
template <class Model>
ensemble_result<Model> solve_ensemble(const ensemble<Model>& e, const run_options& run) {
  switch (e.options.method) {
    case method_kind::bdf: return solve_with<Model, bdf_method>(e, run);
    case method_kind::radau5: return solve_with<Model, radau5_method>(e, run);
    default: break;
  }
  throw std::invalid_argument(std::string("lockstep: the cuda backend is built for methods bdf and radau5 only; method ") +
                              method_name(e.options.method) + " runs on the serial and omp backends");
}

// The models the CUDA backend is built for. Each instantiation compiles the whole member stepper as
// device code for sm_80 and sm_90, so the list is kept to models whose state fits a thread
// comfortably; see docs/GPU.md for the figures and for why chain<16> waits for the split-kernel path.
template ensemble_result<models::pendulum> solve_ensemble(const ensemble<models::pendulum>&, const run_options&);
template ensemble_result<models::double_pendulum> solve_ensemble(const ensemble<models::double_pendulum>&, const run_options&);
template ensemble_result<models::andrews> solve_ensemble(const ensemble<models::andrews>&, const run_options&);

}  // namespace lockstep::cuda
