// kernels/cuda/ensemble_cuda.cu — the CUDA backend: the member functors of lockstep/detail, launched
// one thread per active member, with the chunk's storage in device memory.
//
// Per chunk (docs/ARCHITECTURE.md section 1; host/scheduler/scheduler.cpp is the host twin):
//   1. the inputs are scattered to SoA in a pinned host buffer and copied to the device (stream 0);
//   2. begin_member runs on every member, then advance_member (K attempts) on the active list, which
//      thrust::partition compacts on the device after every launch (the number still active is the
//      only value copied back per launch);
//   3. states and outputs are copied into pinned host buffers (two sets, used alternately) on a second
//      stream; the host gathers a chunk once its copy event has completed. The copy of chunk c overlaps
//      the host's scatter of chunk c + 1 and its gathering of chunk c - 1, not the computation of chunk
//      c + 1: the device storage is single, so chunk c + 1 starts once chunk c's results are out
//      (double device storage would overlap them at twice the memory; docs/GPU.md).
// Members whose Newton matrices are larger than split_factorization_threshold (chain<16>) take the split
// path of lockstep/detail/split_factor.hpp: the step kernel suspends attempts at their factorizations,
// and a factor phase (gather, cublasDgetrfBatched / cublasZgetrfBatched, scatter) runs between launches
// (docs/GPU.md section 5). Projections whose metric or Gram matrices exceed split_projection_threshold
// rows (or all, when run_options::split_factorization forces the split path) suspend at their Cholesky
// factorizations likewise, factored by cusolverDnDpotrfBatched in the same phase.
// No GPU has run this code (none is available to the project): it is held to what the compiler
// proves (no host function reachable from device code) and to ptxas's resource figures, which the
// build records in build/ptxas/ensemble_cuda.txt.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/partition.h>
#include <thrust/sequence.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/device_solve.hpp"
#include "kernels/cuda/ensemble_cuda.hpp"
#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/detail/split_factor.hpp"
#include "lockstep/detail/typed_chunks.hpp"
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

// Members that left this kind of factorization pending (split_factor.hpp, pending_factor).
struct is_pending {
  const unsigned char* pending;
  pending_factor kind;
  __host__ __device__ bool operator()(long i) const { return pending[i] == static_cast<unsigned char>(kind); }
};

// ---- the split path's factor phase (lockstep/detail/split_factor.hpp, docs/GPU.md section 5) ----
//
// The pending members' Newton matrices are read from and written back to the SoA state images in place
// (split_offsets), without loading whole states: a member's state is what does not fit a thread.

// Bytes [offset, offset + size) of member i's state image in SoA words (soa.hpp's layout).
__device__ void soa_read_bytes(const std::uint64_t* data, long stride, long i, long offset, void* out, int size) {
  unsigned char* o = static_cast<unsigned char*>(out);
  for (int b = 0; b < size;) {
    const long w = (offset + b) / 8;
    const int in = static_cast<int>((offset + b) % 8), take = 8 - in < size - b ? 8 - in : size - b;
    const std::uint64_t word = data[w * stride + i];
    memcpy(o + b, reinterpret_cast<const unsigned char*>(&word) + in, take);
    b += take;
  }
}

__device__ void soa_write_bytes(std::uint64_t* data, long stride, long i, long offset, const void* in_bytes, int size) {
  const unsigned char* s = static_cast<const unsigned char*>(in_bytes);
  for (int b = 0; b < size;) {
    const long w = (offset + b) / 8;
    const int in = static_cast<int>((offset + b) % 8), take = 8 - in < size - b ? 8 - in : size - b;
    std::uint64_t word = data[w * stride + i];
    memcpy(reinterpret_cast<unsigned char*>(&word) + in, s + b, take);
    data[w * stride + i] = word;
    b += take;
  }
}

// One batch of pending members, batch[j] = member index in the chunk. E: double (BDF, Radau's real
// block) or complex<double> (Radau's complex block; layout-compatible with cuDoubleComplex: two doubles,
// real part first).
template <class E>
struct factor_batch {
  std::uint64_t* states;
  long stride;
  const long* batch;
  int n;                // the Newton matrix size N
  long lu_offset, pivot_offset;
  E* matrices;          // n x n column-major per member, contiguous (lda = n)
  E** pointers;         // matrices + j n^2: the Aarray of cublas<t>getrfBatched
  int* pivots;          // n per member: LAPACK's 1-based ipiv
  int* info;            // per member
  double* scale;        // max |a_ij| (|re| + |im|) of the unfactored matrix; NaN when an entry is not finite
};

// Gather: row-major mat<E, n, n> (core/linalg.hpp) to column-major, and lu_factor's singularity scale.
template <class E>
struct gather_matrix {
  factor_batch<E> f;
  __device__ void operator()(long j) const {
    const long i = f.batch[j];
    E* A = f.matrices + j * f.n * f.n;
    f.pointers[j] = A;
    double scale = 0.0;
    bool finite = true;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c < f.n; ++c) {
        E a;
        soa_read_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(E)) * (r * f.n + c), &a, sizeof(E));
        A[c * f.n + r] = a;
        const double m = abs1(a);
        finite = finite && is_finite(m);
        scale = max(scale, m);
      }
    f.scale[j] = finite ? scale : std::numeric_limits<double>::quiet_NaN();
  }
};

// The status the CPU factorization gives the factor A of batch member j: model_not_finite when an
// entry was not finite before factoring, singular_matrix when the library reports a failure (info > 0)
// or when a diagonal entry d of A fails pivot_ok(d, n eps max |a_ij|) (core/linalg.hpp's threshold),
// success otherwise.
template <class E, class PivotOk>
__device__ member_status factored_status(const factor_batch<E>& f, long j, const E* A, PivotOk pivot_ok) {
  if (!is_finite(f.scale[j])) return member_status::model_not_finite;
  const double threshold = f.n * std::numeric_limits<double>::epsilon() * f.scale[j];
  bool singular = f.info[j] != 0;
  for (int k = 0; k < f.n; ++k) singular = singular || !pivot_ok(A[k * f.n + k], threshold);
  return singular ? member_status::singular_matrix : member_status::success;
}

// Scatter: the factors back into row-major storage, LAPACK's pivots (1-based; row k was interchanged
// with row ipiv[k] at step k) as lu_factor's (0-based, the same meaning), and the status lu_factor
// would have given: not finite before factoring, singular when a pivot |u_kk| <= n eps max |a_ij|
// (core/linalg.hpp) or when getrf reports an exactly zero one (info > 0). `status` is the member's
// status so far (the complex block is factored only when the real one succeeded, as in radau_attempt).
template <class E>
struct scatter_matrix {
  factor_batch<E> f;
  member_status* status;
  __device__ void operator()(long j) const {
    if (status[j] != member_status::success) return;
    const long i = f.batch[j];
    const E* A = f.matrices + j * f.n * f.n;
    status[j] = factored_status(f, j, A, [](const E& u, double threshold) { return abs1(u) > threshold; });
    if (status[j] != member_status::success) return;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c < f.n; ++c)
        soa_write_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(E)) * (r * f.n + c), &A[c * f.n + r], sizeof(E));
    for (int k = 0; k < f.n; ++k) {
      const int p = f.pivots[j * f.n + k] - 1;
      soa_write_bytes(f.states, f.stride, i, f.pivot_offset + static_cast<long>(sizeof(int)) * k, &p, sizeof(int));
    }
  }
};

// The factor phase's last word to the member: pending cleared, factors ready, their status. External:
// external_factors (Newton matrices, in the member state) or external_cholesky (a projection's matrix,
// in its projection_work).
template <class External>
struct mark_ready {
  std::uint64_t* states;
  long stride;
  const long* batch;
  long external_offset;
  const member_status* status;
  __device__ void operator()(long j) const {
    const long i = batch[j];
    External x;
    soa_read_bytes(states, stride, i, external_offset, &x, sizeof(x));
    x.pending = false;
    x.ready = true;
    x.status = status[j];
    soa_write_bytes(states, stride, i, external_offset, &x, sizeof(x));
  }
};

// Scatter of a Cholesky factor: the lower triangle back into the row-major matrix (the upper one stays
// as assembled, as cholesky_factor leaves it), and the status factorization_status would give: not finite
// before factoring, or not positive definite: potrfBatched's info > 0 (a leading minor not positive
// definite), or a diagonal l_jj with l_jj^2 <= n eps max |a_ij|, cholesky_factor's test
// (core/linalg.hpp) on d_j = l_jj^2.
struct scatter_cholesky {
  factor_batch<double> f;
  member_status* status;
  __device__ void operator()(long j) const {
    const long i = f.batch[j];
    const double* L = f.matrices + j * f.n * f.n;
    status[j] = factored_status(f, j, L, [](double l, double threshold) { return l * l > threshold; });
    if (status[j] != member_status::success) return;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c <= r; ++c)
        soa_write_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(double)) * (r * f.n + c), &L[c * f.n + r], sizeof(double));
  }
};

struct set_status {
  member_status* status;
  __device__ void operator()(long j) const { status[j] = member_status::success; }
};

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

// Where external_factors and the Newton matrices sit in Method's member state (byte offsets).
template <class Model, class Method>
split_offsets split_offsets_of() {
  auto ms = std::make_unique<member_state<Model, Method>>();
  const auto at = [base = reinterpret_cast<const char*>(ms.get())](const void* p) {
    return static_cast<long>(reinterpret_cast<const char*>(p) - base);
  };
  split_offsets o;
  o.external = at(&external_of(ms->method));
  if (auto* R = real_matrix_of(ms->method)) {
    o.real_lu = at(&R->lu.a[0]);
    o.real_pivot = at(&R->pivot.a[0]);
  }
  if (auto* C = complex_matrix_of(ms->method)) {
    o.complex_lu = at(&C->lu.a[0]);
    o.complex_pivot = at(&C->pivot.a[0]);
  }
  return o;
}

// Where the matrices of a projection_work<Model> are (byte offsets in its image).
template <class Model>
projection_offsets projection_offsets_of() {
  auto w = std::make_unique<projection_work<Model>>();
  const auto at = [base = reinterpret_cast<const char*>(w.get())](const void* p) {
    return static_cast<long>(reinterpret_cast<const char*>(p) - base);
  };
  projection_offsets o;
  o.external = at(&w->external);
  o.metric = at(&w->W.M_chol.a[0]);
  o.position_gram = at(&w->Pq.gram.a[0]);
  o.velocity_gram = at(&w->Pv.gram.a[0]);
  return o;
}

// Stands in for split_factor_phase where the model is fused.
struct no_split_phase {};

}  // namespace

// Outside the anonymous namespace so that ptxas reports carry readable names.
template <class Functor>
__global__ void __launch_bounds__(threads_per_block) for_each_active_member(const long* active, long count, Functor f) {
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
// pending. Batches of at most `batch_capacity` members bound the workspace: per member n^2 doubles and
// n^2 complex doubles (96 KB for chain<16>, n = 64), whatever the chunk size, and with split
// projections max(n_q, m + k)^2 doubles for their Cholesky factorizations.
template <class Model, class Method>
struct split_factor_phase {
  static constexpr int n = state_layout<Model>::newton_size;
  static constexpr int projection_rows = Model::n > Model::m + Model::k ? Model::n : Model::m + Model::k;
  static constexpr long batch_capacity = 1024;
  split_offsets off = split_offsets_of<Model, Method>();
  projection_offsets projection_off = projection_offsets_of<Model>();
  bool projections;  // whether projections split (their projection_work is in device memory)
  cublasHandle_t handle = nullptr;
  cusolverDnHandle_t solver = nullptr;
  device_buffer<unsigned char> pending;
  device_buffer<long> batch;
  device_buffer<double> real, scale, gram;
  device_buffer<complex<double>> cplx;
  device_buffer<double*> real_ptr;
  device_buffer<complex<double>*> cplx_ptr;
  device_buffer<int> pivots, info;
  device_buffer<member_status> status;

  split_factor_phase(long chunk, bool split_projections, cudaStream_t stream)
      : projections(split_projections), pending(chunk), batch(chunk), real(off.real_lu >= 0 ? batch_capacity * n * n : 0),
        scale(batch_capacity), gram(split_projections ? batch_capacity * projection_rows * projection_rows : 0),
        cplx(off.complex_lu >= 0 ? batch_capacity * n * n : 0), real_ptr(batch_capacity), cplx_ptr(batch_capacity),
        pivots(batch_capacity * n), info(batch_capacity), status(batch_capacity) {
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetStream(handle, stream), "cublasSetStream");
    if (projections) {
      check(cusolverDnCreate(&solver), "cusolverDnCreate");
      check(cusolverDnSetStream(solver, stream), "cusolverDnSetStream");
    }
  }
  ~split_factor_phase() {
    if (solver != nullptr) cusolverDnDestroy(solver);
    cublasDestroy(handle);
  }
  split_factor_phase(const split_factor_phase&) = delete;
  split_factor_phase& operator=(const split_factor_phase&) = delete;

  template <class Functor>
  static void over(long count, const Functor& f, cudaStream_t stream) {
    const long blocks = (count + threads_per_block - 1) / threads_per_block;
    for_each_index<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(count, f);
    check(cudaGetLastError(), "kernel launch");
  }

  // The members among the n_active of `active` that left a factorization of this kind pending, listed
  // in `batch`; returns how many.
  long list_pending(const long* active, long n_active, pending_factor kind, cudaStream_t stream) {
    const long* end = thrust::copy_if(thrust::cuda::par.on(stream), active, active + n_active, batch.p, is_pending{pending.p, kind});
    return static_cast<long>(end - batch.p);
  }

  // Factors every pending matrix of the n_active members of `active`, in batches: the Newton matrices
  // in `states`, then the projections' in `projection_states` (one kind, thus one size, per batch).
  void run(std::uint64_t* states, std::uint64_t* projection_states, long stride, const long* active, long n_active,
           cudaStream_t stream) {
    run_newton(states, stride, active, n_active, stream);
    if (!projections) return;
    run_cholesky(projection_states, stride, active, n_active, pending_factor::metric, Model::n, projection_off.metric, stream);
    run_cholesky(projection_states, stride, active, n_active, pending_factor::position_gram, Model::m,
                 projection_off.position_gram, stream);
    run_cholesky(projection_states, stride, active, n_active, pending_factor::velocity_gram, Model::m + Model::k,
                 projection_off.velocity_gram, stream);
  }

  // cusolverDnDpotrfBatched (cuSOLVER Library documentation, "cusolverDn<t>potrfBatched()"): the
  // Cholesky factorization of each Aarray[j], n x n column-major with lda = n; with
  // CUBLAS_FILL_MODE_LOWER only the lower triangle is read and replaced by L (the other triangle may
  // be used as workspace, so only L is scattered back); infoArray[j] = k > 0 when the leading minor of
  // order k is not positive definite. The gather transposes our row-major matrix to column-major, so
  // the lower triangle it passes is the one cholesky_factor reads.
  void run_cholesky(std::uint64_t* projection_states, long stride, const long* active, long n_active, pending_factor kind,
                    int rows, long offset, cudaStream_t stream) {
    const long count = list_pending(active, n_active, kind, stream);
    for (long first = 0; first < count; first += batch_capacity) {
      const long b = std::min(batch_capacity, count - first);
      const long* members = batch.p + first;
      over(b, set_status{status.p}, stream);
      const factor_batch<double> f{projection_states, stride, members, rows, offset, -1, gram.p, real_ptr.p, nullptr, info.p, scale.p};
      over(b, gather_matrix<double>{f}, stream);
      check(cusolverDnDpotrfBatched(solver, CUBLAS_FILL_MODE_LOWER, rows, real_ptr.p, rows, info.p, static_cast<int>(b)),
            "cusolverDnDpotrfBatched");
      over(b, scatter_cholesky{f, status.p}, stream);
      over(b, mark_ready<external_cholesky>{projection_states, stride, members, projection_off.external, status.p}, stream);
    }
  }

  void run_newton(std::uint64_t* states, long stride, const long* active, long n_active, cudaStream_t stream) {
    const long count = list_pending(active, n_active, pending_factor::newton, stream);
    for (long first = 0; first < count; first += batch_capacity) {
      const long b = std::min(batch_capacity, count - first);
      const long* members = batch.p + first;
      over(b, set_status{status.p}, stream);
      // cuBLAS getrfBatched: LU with partial pivoting of each A[j] (n x n, column-major, lda = n), pivots
      // in P[j n .. j n + n - 1] (1-based) and info[j] (k > 0: U(k, k) is exactly zero); cuBLAS Library
      // User Guide, "cublas<t>getrfBatched()". The pivot row maximizes |re| + |im| as in LAPACK's
      // izamax, the rule lu_factor follows (core/linalg.hpp), so the status test below is lu_factor's.
      if (off.real_lu >= 0) {
        const factor_batch<double> f{states, stride, members, n, off.real_lu, off.real_pivot, real.p, real_ptr.p, pivots.p, info.p, scale.p};
        over(b, gather_matrix<double>{f}, stream);
        check(cublasDgetrfBatched(handle, n, real_ptr.p, n, pivots.p, info.p, static_cast<int>(b)), "cublasDgetrfBatched");
        over(b, scatter_matrix<double>{f, status.p}, stream);
      }
      if (off.complex_lu >= 0) {
        const factor_batch<complex<double>> f{states, stride, members, n, off.complex_lu, off.complex_pivot, cplx.p, cplx_ptr.p, pivots.p, info.p, scale.p};
        over(b, gather_matrix<complex<double>>{f}, stream);
        check(cublasZgetrfBatched(handle, n, reinterpret_cast<cuDoubleComplex* const*>(cplx_ptr.p), n, pivots.p, info.p, static_cast<int>(b)),
              "cublasZgetrfBatched");
        over(b, scatter_matrix<complex<double>>{f, status.p}, stream);
      }
      over(b, mark_ready<external_factors>{states, stride, members, off.external, status.p}, stream);
    }
  }
};

}  // namespace

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
  // Large members run in a workspace in device memory, not in the threads' local memory
  // (member_kernels.hpp, member_workspace; docs/GPU.md section 5.7).
  constexpr bool in_workspace = uses_member_workspace<Model>;
  using workspace_type = member_workspace<Model, Method>;
  require_local_memory(for_each_active_member<begin_member<Model, Method, in_workspace>>, Model::name, free_bytes);
  // Fused or split (lockstep/detail/split_factor.hpp, docs/GPU.md section 5): by size, or for every model
  // on request (run_options::split_factorization).
  constexpr bool can_split = has_split_factorization<Method>;
  // A model that always splits never launches the fused kernel: it is not compiled (for chain<16> it
  // would be another ptxas run of minutes for a kernel that cannot run; docs/GPU.md section 5.6).
  constexpr bool always_split = can_split && uses_split_factorization<Model>;
  const bool split = can_split && (uses_split_factorization<Model> || run.split_factorization);
  if (split)
    require_local_memory(for_each_active_member<advance_member_split<Model, Method, in_workspace>>, Model::name, free_bytes);
  if constexpr (!always_split)
    if (!split) require_local_memory(for_each_active_member<advance_member<Model, Method>>, Model::name, free_bytes);
  ensemble_result<Model> r = detail::empty_result(e, run);
  std::vector<double> member_outputs;
  // Split projections (split_factor.hpp, docs/GPU.md 5.3): their projection_work in device memory.
  const bool split_projections = split && projects_after_steps(e.options.projection, e.options.form) &&
                                 (run.split_factorization || uses_split_projection<Model>);
  const long chunk = detail::choose_chunk(e, run, run.memory_budget > 0 ? run.memory_budget : free_bytes / 4,
                                          split_bytes_per_member<Model>(split, split_projections) +
                                              (in_workspace ? sizeof(workspace_type) : 0));
  r.chunk_size = chunk;

  // Device storage for one chunk, reused.
  device_buffer<std::uint64_t> d_states(std::size_t(words) * chunk);
  device_buffer<double> d_params(std::size_t(Model::n_params) * chunk), d_q0(std::size_t(Model::n) * chunk),
      d_v0(std::size_t(Model::n) * chunk), d_outputs(std::size_t(save_count) * ny * chunk),
      d_save_times{std::size_t(save_count)};
  device_buffer<unsigned char> d_finished(chunk);
  device_buffer<long> d_active(chunk);
  device_buffer<workspace_type> d_workspace(in_workspace ? chunk : 0);
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
  constexpr int projection_words = soa_image<projection_work<Model>>::words;
  device_buffer<std::uint64_t> d_projections(split_projections ? std::size_t(projection_words) * chunk : 0);
  using factor_phase = std::conditional_t<can_split, split_factor_phase<Model, Method>, no_split_phase>;
  std::unique_ptr<factor_phase> factors;
  if constexpr (can_split)
    if (split) factors = std::make_unique<factor_phase>(chunk, split_projections, compute);
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
    if (split_projections)  // zero bytes: no projection under way
      check(cudaMemsetAsync(d_projections.p, 0, sizeof(std::uint64_t) * projection_words * chunk, compute), "cudaMemsetAsync");
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
    if (split_projections) view.projections = d_projections.p;
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
    launch(begin_member<Model, Method, in_workspace>{view, d_workspace.p});
    while (n_active > 0) {
      bool advanced = false;
      if constexpr (can_split) {
        if (split) {  // lockstep/detail/split_factor.hpp: advance, then factor what is pending
          launch(advance_member_split<Model, Method, in_workspace>{view, run.attempts_per_sync, factors->pending.p,
                                                                   projection_split_above(run.split_factorization),
                                                                   d_workspace.p});
          factors->run(d_states.p, d_projections.p, chunk, d_active.p, n_active, compute);
          advanced = true;
        }
      }
      if constexpr (!always_split)
        if (!advanced) launch(advance_member<Model, Method>{view, run.attempts_per_sync});
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

}  // namespace lockstep::cuda

// The scheduler's sign that this program has the CUDA backend (a weak reference there).
extern "C" int lockstep_cuda_device_count() { return lockstep::cuda::device_count(); }

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
    e.options = engine_detail::options_of(run->options, run->options_size);
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
      run->on_chunk(run->context, c.first, c.count, c.outputs, reinterpret_cast<const int*>(c.status), c.counters,
                    c.t_final, c.y_final);
    };
    ro.on_progress = [&](const progress_report& p) { run->on_progress(run->context, p.members_finished, p.steps); };
    const ensemble_result<Model> r = solve_ensemble<Model>(e, ro);
    run->chunk_size_used = r.chunk_size;
    return LOCKSTEP_OK;
  });
}

// The models of device_models.hpp, the one list of what the CUDA backend is built for.
#define LOCKSTEP_INSTANTIATE_DEVICE_MODEL(type)                                                   \
  template ensemble_result<type> solve_ensemble(const ensemble<type>&, const run_options&);     \
  template lockstep_result solve_on_device<type>(lockstep_device_run*, lockstep_error*);
LOCKSTEP_DEVICE_MODELS(LOCKSTEP_INSTANTIATE_DEVICE_MODEL)
#undef LOCKSTEP_INSTANTIATE_DEVICE_MODEL

}  // namespace lockstep::cuda
