// kernels/cuda/ensemble_cuda_impl.cuh — the CUDA backend's templates: the member functors of
// lockstep/detail, launched one thread per active member, with the chunk's storage in device memory.
// kernels/cuda/ensemble_cuda.cu instantiates them for the built-in models of device_models.hpp; the
// model compiler (host/model_files) for a model file run with --backend cuda, in a unit of its own.
//
// Per chunk (docs/ARCHITECTURE.md section 1; host/scheduler/scheduler.cpp is the host twin):
//   1. the inputs are scattered to SoA in a pinned host buffer and copied to the device (stream 0);
//   2. begin_member runs on every member, then advance_member (K attempts) on the active list, which
//      thrust::partition compacts on the device after every launch (the number still active is the
//      only value copied back per launch);
//   3. states, outputs and event records are copied into pinned host buffers (two sets, used
//      alternately) on a second stream; the host gathers a chunk once its copy event has completed.
//      The copy of chunk c overlaps the host's scatter of chunk c + 1 and its gathering of chunk
//      c - 1, not the computation of chunk c + 1: the device storage is single, so chunk c + 1 starts
//      once chunk c's results are out (double device storage would overlap them at twice the memory;
//      docs/GPU.md).
// Members whose Newton matrices are larger than split_factorization_threshold (chain<16>) take the split
// path of lockstep/detail/split_factor.hpp: the step kernel suspends attempts at their factorizations,
// and a factor phase (gather, cublasDgetrfBatched / cublasZgetrfBatched, scatter: the shared code of
// kernels/cuda/batched_factor.hpp, which the host tests run against LAPACK) runs between launches
// (docs/GPU.md section 5). Projections whose metric or Gram matrices exceed split_projection_threshold
// rows (or all, when run_options::split_factorization forces the split path) suspend at their Cholesky
// factorizations likewise, factored by cusolverDnDpotrfBatched in the same phase.
// The machines that build and test the project have no GPU, so every build holds this code to what
// the compiler proves (no host function reachable from device code) and to ptxas's resource figures,
// which it records in build/ptxas/ensemble_cuda.txt. A GPU is lent now and then: scripts/gpu-check.sh
// then runs the CUDA tests, compute-sanitizer, the benchmark and the profile from a pack of one commit.
// H100s ran this code for the built-in models and for model files' device engines; docs/GPU.md
// sections 7 and 8 record which commits ran, with what result, and what changed after the last run.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/partition.h>
#include <thrust/sequence.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/batched_factor.hpp"
#include "kernels/cuda/device_solve.hpp"
#include "kernels/cuda/ensemble_cuda.hpp"
#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/detail/split_factor.hpp"
#include "lockstep/chunks/chunk_driver.hpp"
#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/engine/abi_support.hpp"
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

void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("lockstep cuda: ") + what + ": " + cublasGetStatusName(e) + " (" +
                             cublasGetStatusString(e) + ")");
}

void check(cusolverStatus_t e, const char* what) {
  if (e != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string("lockstep cuda: ") + what + ": cusolverStatus_t " + std::to_string(static_cast<int>(e)));
}

// Refuses a kernel whose local memory the device cannot provide: a per-thread stack over CUDA's 512 KB
// limit, or the driver's reservation for it (stack x every thread the device can hold, the formula of
// device_check.cu) over the free memory. chain<16>'s step kernels were such until its member state
// moved to a workspace in device memory and its AD passes became separate calls (docs/GPU.md 5.7); a
// device with less free memory than the reservation still refuses them.
template <class Kernel>
void require_local_memory(Kernel kernel, const char* model, std::size_t free_bytes) {
  cudaFuncAttributes attributes{};
  int device = 0, threads_per_sm = 0, sms = 0;
  check(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device), "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const double per_thread = double(attributes.localSizeBytes), reservation = per_thread * threads_per_sm * sms;
  if (per_thread > 512.0 * 1024.0 || reservation > double(free_bytes))
    throw std::invalid_argument(std::string("lockstep: the cuda backend cannot run model ") + model +
                                ": a kernel needs " + std::to_string(attributes.localSizeBytes) +
                                " B of local memory per thread (CUDA allows 512 KB), " + std::to_string(reservation / 1e9) +
                                " GB for the whole device, " + std::to_string(double(free_bytes) / 1e9) +
                                " GB are free (docs/GPU.md section 5.4); use backend omp or serial");
}

// Stands in for split_factor_phase where the model is fused.
struct no_split_phase {};

}  // namespace

// Outside the anonymous namespace so that ptxas reports carry readable names. The bound's second
// argument, at least one block per multiprocessor, lets ptxas take up to 255 registers rather than
// spill for occupancy: without it ptxas held the pendulum's BDF step kernel at 128 registers with 96 B
// of spills and the double pendulum's split BDF kernel at 168 with 380 B; with it they take 164 and
// 242 and spill nothing (sm_90, docs/GPU.md section 2.2).
template <class Functor>
__global__ void __launch_bounds__(threads_per_block, 1) for_each_active_member(const long* active, long count, Functor f) {
  const long a = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a < count) f(active[a]);
}

template <class Functor>
__global__ void __launch_bounds__(threads_per_block) for_each_index(long count, Functor f) {
  const long j = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < count) f(j);
}

namespace {

// The split path's device storage and the factor phase over the members an advance launch left
// pending: the order, the gather and scatter and the statuses are kernels/cuda/batched_factor.hpp's
// factor_phase (tested on the host against LAPACK with host_backend); this backend gives it kernels,
// thrust's copy_if and the cuBLAS / cuSOLVER batched calls.
struct cuda_backend {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  cusolverDnHandle_t solver = nullptr;

  template <class Functor>
  void over(long count, const Functor& f) const {
    const long blocks = (count + threads_per_block - 1) / threads_per_block;
    for_each_index<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(count, f);
    check(cudaGetLastError(), "kernel launch");
  }
  long list_pending(const long* active, long n_active, batched::is_pending pred, long* out) const {
    const long* end = thrust::copy_if(thrust::cuda::par.on(stream), active, active + n_active, out, pred);
    return static_cast<long>(end - out);
  }
  // cuBLAS getrfBatched: LU with partial pivoting of each A[j] (n x n, column-major, lda = n), pivots
  // in P[j n .. j n + n - 1] (1-based) and info[j] (k > 0: U(k, k) is exactly zero); cuBLAS Library
  // User Guide, "cublas<t>getrfBatched()". The pivot row maximizes |re| + |im| as in LAPACK's izamax,
  // the rule lu_factor follows (core/linalg.hpp), so the status test of batched::factored_status is
  // lu_factor's.
  void getrf(int n, double** A, int* ipiv, int* info, int batch) const {
    check(cublasDgetrfBatched(handle, n, A, n, ipiv, info, batch), "cublasDgetrfBatched");
  }
  void getrf(int n, complex<double>** A, int* ipiv, int* info, int batch) const {
    check(cublasZgetrfBatched(handle, n, reinterpret_cast<cuDoubleComplex* const*>(A), n, ipiv, info, batch),
          "cublasZgetrfBatched");
  }
  // cusolverDnDpotrfBatched (cuSOLVER Library documentation, "cusolverDn<t>potrfBatched()"): the
  // Cholesky factorization of each Aarray[j], n x n column-major with lda = n; with
  // CUBLAS_FILL_MODE_LOWER only the lower triangle is read and replaced by L (the other triangle may
  // be used as workspace, so only L is scattered back); infoArray[j] = k > 0 when the leading minor of
  // order k is not positive definite. The gather transposes our row-major matrix to column-major, so
  // the lower triangle it passes is the one cholesky_factor reads.
  void potrf(int n, double** A, int* info, int batch) const {
    check(cusolverDnDpotrfBatched(solver, CUBLAS_FILL_MODE_LOWER, n, A, n, info, batch), "cusolverDnDpotrfBatched");
  }
};

template <class Model, class Method>
struct split_factor_phase {
  using shape_type = batched::phase_shape<Model, Method>;
  shape_type shape;
  bool projections;  // whether projections split (their projection_work is in device memory)
  cuda_backend backend;
  device_buffer<unsigned char> pending;
  device_buffer<long> batch;
  device_buffer<double> real, scale, gram;
  device_buffer<complex<double>> cplx;
  device_buffer<double*> real_ptr;
  device_buffer<complex<double>*> cplx_ptr;
  device_buffer<int> pivots, info;
  device_buffer<member_status> status;

  split_factor_phase(long chunk, bool split_projections, cudaStream_t stream)
      : projections(split_projections), pending(chunk), batch(chunk), real(shape.real_size()),
        scale(shape_type::batch_capacity), gram(shape.gram_size(split_projections)), cplx(shape.complex_size()),
        real_ptr(shape_type::batch_capacity), cplx_ptr(shape_type::batch_capacity),
        pivots(shape_type::batch_capacity * shape_type::n), info(shape_type::batch_capacity),
        status(shape_type::batch_capacity) {
    backend.stream = stream;
    check(cublasCreate(&backend.handle), "cublasCreate");
    check(cublasSetStream(backend.handle, stream), "cublasSetStream");
    if (projections) {
      check(cusolverDnCreate(&backend.solver), "cusolverDnCreate");
      check(cusolverDnSetStream(backend.solver, stream), "cusolverDnSetStream");
    }
  }
  ~split_factor_phase() {
    if (backend.solver != nullptr) cusolverDnDestroy(backend.solver);
    cublasDestroy(backend.handle);
  }
  split_factor_phase(const split_factor_phase&) = delete;
  split_factor_phase& operator=(const split_factor_phase&) = delete;

  // Factors every pending matrix of the n_active members of `active`, in batches: the Newton matrices
  // in `states`, then the projections' in `projection_states` (one kind, thus one size, per batch).
  void run(std::uint64_t* states, std::uint64_t* projection_states, long stride, const long* active, long n_active) {
    const batched::phase_storage s{pending.p, batch.p, real.p, scale.p, gram.p, cplx.p, real_ptr.p,
                                   cplx_ptr.p, pivots.p, info.p, status.p};
    batched::factor_phase(backend, shape, s, projections, states, projection_states, stride, active, n_active);
  }
};

}  // namespace

// Inline so that every unit including this file (ensemble_cuda.cu, a model file's CUDA engine) has
// it; the out-of-line lockstep::cuda::device_count of ensemble_cuda.hpp is defined in
// ensemble_cuda.cu from this one.
inline int count_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

// The CUDA backend's executor of the chunk driver (lockstep/chunks/chunk_driver.hpp): the chunk's storage
// in device memory, reused from chunk to chunk; the member functors launched one thread per active
// member and the active list compacted by thrust::partition on the device (the number still active is
// the only value copied back per launch); the results copied out on a second stream into two sets of
// pinned host buffers, used alternately, and gathered once their copy has completed (the header
// comment says what overlaps what).
template <class Model, class Method>
class device_executor {
 public:
  static constexpr int ny = state_layout<Model>::size;
  static constexpr int n_events = event_count<Model>;
  static constexpr int words = soa_image<member_state<Model, Method>>::words;
  static constexpr int projection_words = soa_image<projection_work<Model>>::words;
  // Large members run in a workspace in device memory, not in the threads' local memory
  // (member_kernels.hpp, member_workspace; docs/GPU.md section 5.7).
  static constexpr bool in_workspace = uses_member_workspace<Model>;
  using workspace_type = member_workspace<Model, Method>;
  static constexpr bool can_split = has_split_factorization<Method>;
  // A model that always splits never launches the fused kernel: it is not compiled (for chain<16> it
  // would be another ptxas run of minutes for a kernel that cannot run; docs/GPU.md section 5.6).
  static constexpr bool always_split = can_split && uses_split_factorization<Model>;
  using factor_phase = std::conditional_t<can_split, split_factor_phase<Model, Method>, no_split_phase>;

  device_executor(const ensemble<Model>& e, const run_options& run, long chunk, bool split, bool split_projections,
                  ensemble_result<Model>& r)
      : e_(e), run_(run), r_(r), chunk_(chunk), split_projections_(split_projections),
        save_count_(static_cast<int>(e.save_times.size())),
        record_values_(n_events > 0 ? std::size_t(e.event_capacity) * (2 + ny) * chunk : 0),
        d_states(std::size_t(words) * chunk), d_params(std::size_t(Model::n_params) * chunk),
        d_q0(std::size_t(Model::n) * chunk), d_v0(std::size_t(Model::n) * chunk),
        d_outputs(std::size_t(save_count_) * ny * chunk), d_save_times(std::size_t(save_count_)), d_finished(chunk),
        d_active(chunk), d_workspace(in_workspace ? chunk : 0),
        d_projections(split_projections ? std::size_t(projection_words) * chunk : 0),
        d_event_records(record_values_),
        h_params(std::size_t(Model::n_params) * chunk), h_q0(std::size_t(Model::n) * chunk),
        h_v0(std::size_t(Model::n) * chunk),
        h_states{pinned_buffer<std::uint64_t>(std::size_t(words) * chunk),
                 pinned_buffer<std::uint64_t>(std::size_t(words) * chunk)},
        h_outputs{pinned_buffer<double>(std::size_t(save_count_) * ny * chunk),
                  pinned_buffer<double>(std::size_t(save_count_) * ny * chunk)},
        h_event_records{pinned_buffer<double>(record_values_), pinned_buffer<double>(record_values_)} {
    check(cudaStreamCreate(&compute_), "cudaStreamCreate");
    check(cudaStreamCreate(&copy_), "cudaStreamCreate");
    if constexpr (can_split)
      if (split) factors_ = std::make_unique<factor_phase>(chunk, split_projections, compute_);
    for (int b = 0; b < 2; ++b) {
      check(cudaEventCreateWithFlags(&computed_[b], cudaEventDisableTiming), "cudaEventCreate");
      check(cudaEventCreateWithFlags(&copied_[b], cudaEventDisableTiming), "cudaEventCreate");
    }
    if (save_count_ > 0)
      check(cudaMemcpy(d_save_times.p, e.save_times.data(), sizeof(double) * save_count_, cudaMemcpyHostToDevice),
            "cudaMemcpy save times");
    view_ = detail::chunk_view_of(e, chunk, d_states.p, d_params.p, d_q0.p, d_v0.p, d_outputs.p, d_finished.p,
                                  d_save_times.p);
    if (split_projections) view_.projections = d_projections.p;
    // A model's event records (stepper/events.hpp): kept up to the capacity, counted beyond it.
    view_.event_records = record_values_ > 0 ? d_event_records.p : nullptr;
    view_.event_capacity = record_values_ > 0 ? e.event_capacity : 0;
  }
  ~device_executor() {
    for (int b = 0; b < 2; ++b) {
      cudaEventDestroy(computed_[b]);
      cudaEventDestroy(copied_[b]);
    }
    cudaStreamDestroy(compute_);
    cudaStreamDestroy(copy_);
  }
  device_executor(const device_executor&) = delete;
  device_executor& operator=(const device_executor&) = delete;

  void start_chunk(long first, long count) {
    detail::scatter_inputs(e_, first, count, chunk_, h_params.p, h_q0.p, h_v0.p);
    check(cudaMemcpyAsync(d_params.p, h_params.p, sizeof(double) * Model::n_params * chunk_, cudaMemcpyHostToDevice, compute_), "cudaMemcpyAsync params");
    check(cudaMemcpyAsync(d_q0.p, h_q0.p, sizeof(double) * Model::n * chunk_, cudaMemcpyHostToDevice, compute_), "cudaMemcpyAsync q0");
    check(cudaMemcpyAsync(d_v0.p, h_v0.p, sizeof(double) * Model::n * chunk_, cudaMemcpyHostToDevice, compute_), "cudaMemcpyAsync v0");
    // The previous chunk's results are still being copied from d_states/d_outputs on `copy`: wait for
    // that copy before this chunk overwrites them.
    if (pending_first_[set_ ^ 1] >= 0) check(cudaStreamWaitEvent(compute_, copied_[set_ ^ 1], 0), "cudaStreamWaitEvent");
    check(cudaMemsetAsync(d_finished.p, 0, chunk_, compute_), "cudaMemsetAsync");
    if (split_projections_)  // zero bytes: no projection under way
      check(cudaMemsetAsync(d_projections.p, 0, sizeof(std::uint64_t) * projection_words * chunk_, compute_), "cudaMemsetAsync");
    // NaN outputs until written (0xFF bytes are a NaN double).
    check(cudaMemsetAsync(d_outputs.p, 0xFF, sizeof(double) * save_count_ * ny * chunk_, compute_), "cudaMemsetAsync");
    if (record_values_ > 0)  // NaN past each member's records
      check(cudaMemsetAsync(d_event_records.p, 0xFF, sizeof(double) * record_values_, compute_), "cudaMemsetAsync");
    thrust::sequence(thrust::cuda::par.on(compute_), d_active.p, d_active.p + count, 0L);
  }
  long begin(long n_active) { return launch(n_active, begin_member<Model, Method, in_workspace>{view_, d_workspace.p}); }
  long advance(long n_active) {
    if constexpr (!always_split) return launch(n_active, advance_member<Model, Method>{view_, run_.attempts_per_sync});
    throw std::logic_error("lockstep cuda: the fused step of a model that always splits");
  }
  long advance_split(long n_active) {
    if constexpr (can_split)  // lockstep/detail/split_factor.hpp: advance, then factor what is pending
      return launch(n_active, advance_member_split<Model, Method, in_workspace>{
                                  view_, run_.attempts_per_sync, factors_->pending.p,
                                  projection_split_above(run_.split_factorization), d_workspace.p});
    throw std::logic_error("lockstep cuda: the split step of a method without one");
  }
  void factor(long n_active) {
    if constexpr (can_split) factors_->run(d_states.p, d_projections.p, chunk_, d_active.p, n_active);
  }
  // The chunk's results into this buffer set, once the set's previous chunk (two chunks ago) is gathered;
  // returns that chunk's accepted steps.
  long finish_chunk(long first, long count) {
    check(cudaEventRecord(computed_[set_], compute_), "cudaEventRecord");
    const long steps = gather(set_);  // complete by now
    check(cudaStreamWaitEvent(copy_, computed_[set_], 0), "cudaStreamWaitEvent");
    check(cudaMemcpyAsync(h_states[set_].p, d_states.p, sizeof(std::uint64_t) * words * chunk_, cudaMemcpyDeviceToHost, copy_), "cudaMemcpyAsync states");
    check(cudaMemcpyAsync(h_outputs[set_].p, d_outputs.p, sizeof(double) * save_count_ * ny * chunk_, cudaMemcpyDeviceToHost, copy_), "cudaMemcpyAsync outputs");
    if (record_values_ > 0)
      check(cudaMemcpyAsync(h_event_records[set_].p, d_event_records.p, sizeof(double) * record_values_,
                            cudaMemcpyDeviceToHost, copy_), "cudaMemcpyAsync event records");
    check(cudaEventRecord(copied_[set_], copy_), "cudaEventRecord");
    pending_first_[set_] = first;
    pending_count_[set_] = count;
    set_ ^= 1;
    return steps;
  }
  long drain() { return gather(set_) + gather(set_ ^ 1); }  // in the order the chunks were copied

 private:
  template <class Functor>
  long launch(long n_active, const Functor& f) {
    const long blocks = (n_active + threads_per_block - 1) / threads_per_block;
    for_each_active_member<<<static_cast<unsigned>(blocks), threads_per_block, 0, compute_>>>(d_active.p, n_active, f);
    check(cudaGetLastError(), "kernel launch");
    long* end = thrust::partition(thrust::cuda::par.on(compute_), d_active.p, d_active.p + n_active,
                                  not_finished{d_finished.p});
    return static_cast<long>(end - d_active.p);
  }
  // The results of the chunk in buffer set b, once its copy has completed; its accepted steps.
  long gather(int b) {
    if (pending_first_[b] < 0) return 0;
    check(cudaEventSynchronize(copied_[b]), "cudaEventSynchronize");
    const long steps = detail::gather_results<Model, Method>(
        e_, run_, pending_first_[b], pending_count_[b], chunk_, h_states[b].p, h_outputs[b].p, member_outputs_, r_,
        record_values_ > 0 ? h_event_records[b].p : nullptr, member_event_records_);
    pending_first_[b] = -1;
    return steps;
  }

  const ensemble<Model>& e_;
  const run_options& run_;
  ensemble_result<Model>& r_;
  long chunk_;
  bool split_projections_;
  int save_count_;
  std::size_t record_values_;  // doubles of the chunk's kept event records (0: the model has no events)
  device_buffer<std::uint64_t> d_states;
  device_buffer<double> d_params, d_q0, d_v0, d_outputs, d_save_times;
  device_buffer<unsigned char> d_finished;
  device_buffer<long> d_active;
  device_buffer<workspace_type> d_workspace;
  device_buffer<std::uint64_t> d_projections;
  device_buffer<double> d_event_records;
  pinned_buffer<double> h_params, h_q0, h_v0;  // inputs: one set
  pinned_buffer<std::uint64_t> h_states[2];    // results: two sets, for overlap
  pinned_buffer<double> h_outputs[2];
  pinned_buffer<double> h_event_records[2];
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  std::unique_ptr<factor_phase> factors_;
  cudaEvent_t computed_[2] = {}, copied_[2] = {};
  chunk_view<Model> view_;
  std::vector<double> member_outputs_, member_event_records_;
  int set_ = 0;
  long pending_first_[2] = {-1, -1}, pending_count_[2] = {0, 0};
};

template <class Model, class Method>
ensemble_result<Model> solve_with(const ensemble<Model>& e, const run_options& run) {
  detail::check_ensemble(e, run);
  // invalid_argument: like a method the device path lacks, a request this machine cannot serve (the
  // command line exits 2 and names the other backends).
  if (count_devices() == 0)
    throw std::invalid_argument("lockstep: the cuda backend needs a CUDA device and this machine has none; use backend omp or serial");
  using executor = device_executor<Model, Method>;
  const auto start = std::chrono::steady_clock::now();

  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  require_local_memory(for_each_active_member<begin_member<Model, Method, executor::in_workspace>>, Model::name, free_bytes);
  // Fused or split (lockstep/detail/split_factor.hpp, docs/GPU.md section 5): by size, or for every model
  // on request (run_options::split_factorization).
  const bool split = executor::can_split && (uses_split_factorization<Model> || run.split_factorization);
  if constexpr (executor::can_split)
    if (split)
      require_local_memory(for_each_active_member<advance_member_split<Model, Method, executor::in_workspace>>,
                           Model::name, free_bytes);
  if constexpr (!executor::always_split)
    if (!split) require_local_memory(for_each_active_member<advance_member<Model, Method>>, Model::name, free_bytes);
  ensemble_result<Model> r = detail::empty_result(e, run);
  // Split projections (split_factor.hpp, docs/GPU.md 5.3): their projection_work in device memory.
  const bool split_projections = split && projects_after_steps(e.options.projection, e.options.form) &&
                                 (run.split_factorization || uses_split_projection<Model>);
  const long chunk =
      detail::choose_chunk(e, run, run.memory_budget > 0 ? run.memory_budget : free_bytes / 4,
                           split_bytes_per_member<Model>(split, split_projections) +
                               (executor::in_workspace ? sizeof(typename executor::workspace_type) : 0));
  r.chunk_size = chunk;
  {
    executor x(e, run, chunk, split, split_projections, r);
    detail::drive_chunks(e.members, chunk, split, run, x, start);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// BDF, Radau IIA (s = 3), the explicit pairs (dopri5, tsit5) and auto (dopri5 and Radau IIA 5 by
// phases) are compiled for the device: every method is a template axis of the whole member stepper, and
// each one adds a device compile per model and architecture (docs/GPU.md section 1, "models built").
// The explicit pairs are the natural shape for a GPU thread: no Newton matrix, no Jacobian, a frame of
// stages. The other methods (radau3, euler, rhoinf) run on serial and omp.
template <class Model>
ensemble_result<Model> solve_ensemble(const ensemble<Model>& e, const run_options& run) {
  switch (e.options.method) {
    case method_kind::bdf: return solve_with<Model, bdf_method>(e, run);
    case method_kind::radau5: return solve_with<Model, radau5_method>(e, run);
    case method_kind::dopri5: return solve_with<Model, dopri5_method>(e, run);
    case method_kind::tsit5: return solve_with<Model, tsit5_method>(e, run);
    case method_kind::automatic: return solve_with<Model, auto_method>(e, run);
    default: break;
  }
  throw std::invalid_argument(std::string("lockstep: the cuda backend is built for methods bdf, radau5, dopri5, "
                                          "tsit5 and auto; method ") +
                              method_name(e.options.method) + " runs on the serial and omp backends");
}

}  // namespace lockstep::cuda



namespace lockstep::cuda {

template <class Model>
lockstep_result solve_on_device(lockstep_device_run* run, lockstep_error* error) {
  return engine_detail::guarded(error, [&] {
    engine_detail::check_header(run, "device run");
    ensemble<Model> e;
    e.members = run->members;
    const auto members = static_cast<std::size_t>(run->members);
    e.params.assign(run->params, run->params + members * Model::n_params);
    e.q0.assign(run->q0, run->q0 + members * Model::n);
    e.v0.assign(run->v0, run->v0 + members * Model::n);
    e.t0 = run->t0;
    e.t1 = run->t1;
    e.save_times.assign(run->save_times, run->save_times + run->save_count);
    e.options = engine_detail::options_of(run->options);
    e.event_capacity = run->event_capacity;
    run_options ro;
    ro.where = backend::cuda;
    ro.chunk_size = run->chunk_size;
    ro.memory_budget = run->memory_budget;
    ro.attempts_per_sync = run->attempts_per_sync;
    ro.split_factorization = run->split_factorization != 0;
    ro.keep_outputs = false;
    // member_status is an enum with int as its underlying type: its array is an int array.
    static_assert(sizeof(member_status) == sizeof(int));
    ro.on_chunk = [&](const chunk_results& c) {
      lockstep_device_chunk chunk{};
      chunk.header = abi_header_for<lockstep_device_chunk>();
      chunk.first = c.first;
      chunk.count = c.count;
      chunk.outputs = c.outputs;
      chunk.status = reinterpret_cast<const int*>(c.status);
      chunk.counters = c.counters;
      chunk.t_final = c.t_final;
      chunk.y_final = c.y_final;
      chunk.n_events = c.n_events;
      chunk.event_capacity = c.event_capacity;
      chunk.event_counts = c.event_counts;
      chunk.event_first_times = c.event_first_times;
      chunk.event_records_made = c.event_records_made;
      chunk.stop_event = c.stop_event;
      chunk.event_records = c.event_records;
      run->on_chunk(run->context, &chunk);
    };
    ro.on_progress = [&](const progress_report& p) { run->on_progress(run->context, p.members_finished, p.steps); };
    const ensemble_result<Model> r = solve_ensemble<Model>(e, ro);
    run->chunk_size_used = r.chunk_size;
    return LOCKSTEP_OK;
  });
}

}  // namespace lockstep::cuda
