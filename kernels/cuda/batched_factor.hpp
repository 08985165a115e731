// kernels/cuda/batched_factor.hpp — the split path's batched factor phase, apart from the library
// calls: the copies of the pending members' matrices into the column-major batch buffers and back,
// LAPACK's 1-based pivots as lu_factor's 0-based ones, getrf's and potrf's `info` and the singularity
// test as member statuses, the Cholesky write-back, and the order of the phase (docs/GPU.md section 5).
//
// The CUDA backend (kernels/cuda/ensemble_cuda.cu) runs this code with cublasDgetrfBatched,
// cublasZgetrfBatched and cusolverDnDpotrfBatched as the factorizations and a kernel launch per step;
// host_factor_phase below runs the very same functors and order on the CPU with host_getrf_batched and
// host_potrf_batched, which follow those libraries' layout and conventions (column-major, lda = n,
// 1-based pivots, info = k > 0 for the first exactly zero pivot or the first minor that is not
// positive definite, multipliers by a reciprocal). tests/backend/batched_factor_test.cpp holds both,
// the batched factorizations included, to Debian's reference LAPACK (dgetrf, zgetrf, dpotrf) on the
// matrices the split path assembles. What only a GPU can test is then the cuBLAS / cuSOLVER calls
// themselves and the device memory they run on.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "lockstep/detail/split_factor.hpp"

namespace lockstep::batched {

// ---- bytes of a member's SoA image (soa.hpp's layout: word w of member i at data[w * stride + i]) ----
//
// The factor phase reads and writes the matrices in place, without loading whole states: a member's
// state is what does not fit one thread.

LOCKSTEP_HD void soa_read_bytes(const std::uint64_t* data, long stride, long i, long offset, void* out, int size) {
  unsigned char* o = static_cast<unsigned char*>(out);
  for (int b = 0; b < size;) {
    const long w = (offset + b) / 8;
    const int in = static_cast<int>((offset + b) % 8), take = 8 - in < size - b ? 8 - in : size - b;
    const std::uint64_t word = data[w * stride + i];
    memcpy(o + b, reinterpret_cast<const unsigned char*>(&word) + in, take);
    b += take;
  }
}

LOCKSTEP_HD void soa_write_bytes(std::uint64_t* data, long stride, long i, long offset, const void* in_bytes, int size) {
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

// ---- layout and conventions ----

// Entry (r, c) of an n x n column-major matrix with lda = n: the layout of every Aarray[j] of the batched
// calls (cuBLAS Library User Guide, "cublas<t>getrfBatched()"; cuSOLVER Library documentation,
// "cusolverDn<t>potrfBatched()"). lockstep's mat<E, N, N> is row-major (core/linalg.hpp).
LOCKSTEP_HD long column_major_index(int n, int r, int c) { return static_cast<long>(c) * n + r; }

// getrf's ipiv[k] (1-based: row k + 1 was interchanged with row ipiv[k] at step k + 1; Anderson et al.,
// LAPACK Users' Guide, 3rd ed., 1999, and the cuBLAS guide's getrfBatched) as lu_factor's pivot[k]
// (0-based, the same meaning).
LOCKSTEP_HD int pivot_from_getrf(int ipiv) { return ipiv - 1; }

// lu_factor's singularity test on a pivot u_kk, and cholesky_factor's on d_j = l_jj^2 (core/linalg.hpp):
// above n eps max |a_ij| of the unfactored matrix.
struct lu_pivot_ok {
  template <class E>
  LOCKSTEP_HD bool operator()(const E& u, double threshold) const {
    return abs1(u) > threshold;
  }
};
struct cholesky_pivot_ok {
  LOCKSTEP_HD bool operator()(double l, double threshold) const { return l * l > threshold; }
};

// The status the CPU factorization gives a matrix that the batched call factored into A (column-major):
// model_not_finite when an entry was not finite before factoring (scale is NaN then), singular_matrix
// when the library reports a failure (info > 0: an exactly zero pivot, or a leading minor that is not
// positive definite, after which the factor is incomplete and its diagonal means nothing) or when a
// diagonal entry fails the pivot test, success otherwise.
template <class E, class PivotOk>
LOCKSTEP_HD member_status factored_status(int n, double scale, int info, const E* A, PivotOk pivot_ok) {
  if (!is_finite(scale)) return member_status::model_not_finite;
  if (info != 0) return member_status::singular_matrix;
  const double threshold = n * std::numeric_limits<double>::epsilon() * scale;
  for (int k = 0; k < n; ++k)
    if (!pivot_ok(A[column_major_index(n, k, k)], threshold)) return member_status::singular_matrix;
  return member_status::success;
}

// ---- the per-member steps of the phase (one call per batch member j; a thread each on the GPU) ----

// One batch of pending members, batch[j] = member index in the chunk. E: double (BDF, Radau's real
// block, the projections' Cholesky factors) or complex<double> (Radau's complex block;
// layout-compatible with cuDoubleComplex: two doubles, real part first).
template <class E>
struct factor_batch {
  std::uint64_t* states;
  long stride;
  const long* batch;
  int n;                // the matrix size
  long lu_offset, pivot_offset;
  E* matrices;          // n x n column-major per member, contiguous (lda = n)
  E** pointers;         // matrices + j n^2: the Aarray of the batched calls
  int* pivots;          // n per member: LAPACK's 1-based ipiv (nullptr for Cholesky)
  int* info;            // per member
  double* scale;        // max |a_ij| (|re| + |im|) of the unfactored matrix; NaN when an entry is not finite
};

// Gather: member batch[j]'s row-major matrix to column-major, and lu_factor's singularity scale.
template <class E>
struct gather_matrix {
  factor_batch<E> f;
  LOCKSTEP_HD void operator()(long j) const {
    const long i = f.batch[j];
    E* A = f.matrices + j * f.n * f.n;
    f.pointers[j] = A;
    double scale = 0.0;
    bool finite = true;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c < f.n; ++c) {
        E a;
        soa_read_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(E)) * (r * f.n + c), &a, sizeof(E));
        A[column_major_index(f.n, r, c)] = a;
        const double m = abs1(a);
        finite = finite && is_finite(m);
        scale = max(scale, m);
      }
    f.scale[j] = finite ? scale : std::numeric_limits<double>::quiet_NaN();
  }
};

// Scatter of an LU factor: L and U back into row-major storage, the pivots as lu_factor's, and the
// status. `status` is the member's status so far: the complex block is factored only when the real one
// succeeded, as in radau_attempt. A failed factorization is not written back (the attempt reads only its
// status then).
template <class E>
struct scatter_matrix {
  factor_batch<E> f;
  member_status* status;
  LOCKSTEP_HD void operator()(long j) const {
    if (status[j] != member_status::success) return;
    const long i = f.batch[j];
    const E* A = f.matrices + j * f.n * f.n;
    status[j] = factored_status(f.n, f.scale[j], f.info[j], A, lu_pivot_ok{});
    if (status[j] != member_status::success) return;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c < f.n; ++c)
        soa_write_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(E)) * (r * f.n + c),
                        &A[column_major_index(f.n, r, c)], sizeof(E));
    for (int k = 0; k < f.n; ++k) {
      const int p = pivot_from_getrf(f.pivots[j * f.n + k]);
      soa_write_bytes(f.states, f.stride, i, f.pivot_offset + static_cast<long>(sizeof(int)) * k, &p, sizeof(int));
    }
  }
};

// Scatter of a Cholesky factor: the lower triangle back into the row-major matrix (the upper one stays
// as assembled, as cholesky_factor leaves it; potrf may use it as workspace), and the status.
struct scatter_cholesky {
  factor_batch<double> f;
  member_status* status;
  LOCKSTEP_HD void operator()(long j) const {
    const long i = f.batch[j];
    const double* L = f.matrices + j * f.n * f.n;
    status[j] = factored_status(f.n, f.scale[j], f.info[j], L, cholesky_pivot_ok{});
    if (status[j] != member_status::success) return;
    for (int r = 0; r < f.n; ++r)
      for (int c = 0; c <= r; ++c)
        soa_write_bytes(f.states, f.stride, i, f.lu_offset + static_cast<long>(sizeof(double)) * (r * f.n + c),
                        &L[column_major_index(f.n, r, c)], sizeof(double));
  }
};

// The phase's last word to the member: pending cleared, factors ready, their status. External:
// external_factors (Newton matrices, in the member state) or external_cholesky (a projection's matrix,
// in its projection_work).
template <class External>
struct mark_ready {
  std::uint64_t* states;
  long stride;
  const long* batch;
  long external_offset;
  const member_status* status;
  LOCKSTEP_HD void operator()(long j) const {
    const long i = batch[j];
    External x;
    soa_read_bytes(states, stride, i, external_offset, &x, sizeof(x));
    x.pending = false;
    x.ready = true;
    x.status = status[j];
    soa_write_bytes(states, stride, i, external_offset, &x, sizeof(x));
  }
};

struct set_status {
  member_status* status;
  LOCKSTEP_HD void operator()(long j) const { status[j] = member_status::success; }
};

// Members that left this kind of factorization pending (split_factor.hpp, pending_factor).
struct is_pending {
  const unsigned char* pending;
  pending_factor kind;
  LOCKSTEP_HD bool operator()(long i) const { return pending[i] == static_cast<unsigned char>(kind); }
};

// ---- where the matrices are, and the phase's storage ----

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

// Sizes of the phase's buffers. Batches of at most `batch_capacity` members bound them: per member n^2
// doubles and n^2 complex doubles (96 KB for chain<16>, n = 64) whatever the chunk size, and with split
// projections max(n_q, m + k)^2 doubles for their Cholesky factorizations.
template <class Model, class Method>
struct phase_shape {
  static constexpr int n = state_layout<Model>::newton_size;
  static constexpr int projection_rows = Model::n > Model::m + Model::k ? Model::n : Model::m + Model::k;
  static constexpr long batch_capacity = 1024;
  split_offsets off = split_offsets_of<Model, Method>();
  projection_offsets projection_off = projection_offsets_of<Model>();
  long real_size() const { return off.real_lu >= 0 ? batch_capacity * n * n : 0; }
  long complex_size() const { return off.complex_lu >= 0 ? batch_capacity * n * n : 0; }
  long gram_size(bool projections) const { return projections ? batch_capacity * projection_rows * projection_rows : 0; }
};

// The phase's working storage (device memory on the GPU), sized by phase_shape.
struct phase_storage {
  unsigned char* pending;  // per chunk member: pending_factor
  long* batch;             // per chunk member: the pending members of one kind
  double* real;
  double* scale;
  double* gram;
  complex<double>* cplx;
  double** real_ptr;
  complex<double>** cplx_ptr;
  int* pivots;
  int* info;
  member_status* status;
};

// ---- the phase ----
//
// Runs after each advance launch (and its compaction) over the members still active, and before the
// next advance launch, which replays the suspended attempts (split_factor.hpp): first every pending
// Newton factorization (the real block, then the complex block of the same members), then the
// projections' Cholesky factorizations, one kind (thus one size) per batch. Backend supplies
//   over(count, f)                                  f(j) for j in [0, count) (a kernel on the GPU)
//   list_pending(active, n_active, is_pending, out) the pending members of one kind into out; their count
//   getrf(n, E** A, int* ipiv, int* info, batch)    getrfBatched, lda = n, for double and complex<double>
//   potrf(n, double** A, int* info, batch)          potrfBatched, lower triangle, lda = n
template <class Model, class Method, class Backend>
void factor_phase(Backend& be, const phase_shape<Model, Method>& shape, const phase_storage& s, bool projections,
                  std::uint64_t* states, std::uint64_t* projection_states, long stride, const long* active, long n_active) {
  constexpr long capacity = phase_shape<Model, Method>::batch_capacity;
  constexpr int n = phase_shape<Model, Method>::n;
  const split_offsets& off = shape.off;
  {
    const long count = be.list_pending(active, n_active, is_pending{s.pending, pending_factor::newton}, s.batch);
    for (long first = 0; first < count; first += capacity) {
      const long b = std::min(capacity, count - first);
      const long* members = s.batch + first;
      be.over(b, set_status{s.status});
      if (off.real_lu >= 0) {
        const factor_batch<double> f{states, stride, members, n, off.real_lu, off.real_pivot, s.real, s.real_ptr, s.pivots, s.info, s.scale};
        be.over(b, gather_matrix<double>{f});
        be.getrf(n, s.real_ptr, s.pivots, s.info, static_cast<int>(b));
        be.over(b, scatter_matrix<double>{f, s.status});
      }
      if (off.complex_lu >= 0) {
        const factor_batch<complex<double>> f{states, stride, members, n, off.complex_lu, off.complex_pivot, s.cplx, s.cplx_ptr, s.pivots, s.info, s.scale};
        be.over(b, gather_matrix<complex<double>>{f});
        be.getrf(n, s.cplx_ptr, s.pivots, s.info, static_cast<int>(b));
        be.over(b, scatter_matrix<complex<double>>{f, s.status});
      }
      be.over(b, mark_ready<external_factors>{states, stride, members, off.external, s.status});
    }
  }
  if (!projections) return;
  const auto cholesky = [&](pending_factor kind, int rows, long offset) {
    const long count = be.list_pending(active, n_active, is_pending{s.pending, kind}, s.batch);
    for (long first = 0; first < count; first += capacity) {
      const long b = std::min(capacity, count - first);
      const long* members = s.batch + first;
      be.over(b, set_status{s.status});
      const factor_batch<double> f{projection_states, stride, members, rows, offset, -1, s.gram, s.real_ptr, nullptr, s.info, s.scale};
      be.over(b, gather_matrix<double>{f});
      be.potrf(rows, s.real_ptr, s.info, static_cast<int>(b));
      be.over(b, scatter_cholesky{f, s.status});
      be.over(b, mark_ready<external_cholesky>{projection_states, stride, members, shape.projection_off.external, s.status});
    }
  };
  cholesky(pending_factor::metric, Model::n, shape.projection_off.metric);
  cholesky(pending_factor::position_gram, Model::m, shape.projection_off.position_gram);
  cholesky(pending_factor::velocity_gram, Model::m + Model::k, shape.projection_off.velocity_gram);
}

// ---- the batched factorizations on the host, with the libraries' layout and conventions ----

// getrfBatched: P A = L U with partial pivoting of each A[j] (n x n, column-major, lda), by columns
// (right-looking, LAPACK's dgetf2 / zgetf2 order). The pivot maximizes |a_ik| (|re| + |im| for complex
// entries: the BLAS's idamax / izamax, whose first maximum wins and which never move past a leading
// NaN); ipiv[j n + k] = its row + 1; info[j] = k + 1 for the first k whose pivot is exactly zero (that
// column is then not scaled, and the elimination goes on, as in LAPACK). The multipliers are formed
// with the pivot's reciprocal, as dgetf2 and dgetrf2 do for pivots above the safe minimum and as
// cuBLAS may: lu_factor divides instead (core/linalg.hpp), so the factors agree to rounding, not bitwise.
template <class E>
void host_getrf_batched(int n, E* const* A, int lda, int* ipiv, int* info, int batch) {
  for (int j = 0; j < batch; ++j) {
    E* a = A[j];
    const auto at = [&](int r, int c) -> E& { return a[static_cast<long>(c) * lda + r]; };
    info[j] = 0;
    for (int k = 0; k < n; ++k) {
      int p = k;
      double best = abs1(at(k, k));
      for (int r = k + 1; r < n; ++r)
        if (abs1(at(r, k)) > best) {
          best = abs1(at(r, k));
          p = r;
        }
      ipiv[j * n + k] = p + 1;
      if (abs1(at(p, k)) != 0.0) {  // LAPACK's A(jp, j) .ne. zero: true for a NaN
        if (p != k)
          for (int c = 0; c < n; ++c) std::swap(at(k, c), at(p, c));
        const E reciprocal = E(1.0) / at(k, k);
        for (int r = k + 1; r < n; ++r) at(r, k) = at(r, k) * reciprocal;
      } else if (info[j] == 0) {
        info[j] = k + 1;
      }
      for (int c = k + 1; c < n; ++c) {  // the rank-1 update
        const E u = at(k, c);
        for (int r = k + 1; r < n; ++r) at(r, c) = at(r, c) - at(r, k) * u;
      }
    }
  }
}

// potrfBatched with the lower triangle: A[j] = L L^T, L over the lower triangle of A[j] (column-major,
// lda), column by column (LAPACK's dpotf2 order); info[j] = k + 1 for the first leading minor that is
// not positive definite (a diagonal d <= 0 or NaN), where the factorization stops and leaves d in place.
inline void host_potrf_batched(int n, double* const* A, int lda, int* info, int batch) {
  for (int j = 0; j < batch; ++j) {
    double* a = A[j];
    const auto at = [&](int r, int c) -> double& { return a[static_cast<long>(c) * lda + r]; };
    info[j] = 0;
    for (int c = 0; c < n; ++c) {
      double d = at(c, c);
      for (int k = 0; k < c; ++k) d -= at(c, k) * at(c, k);
      if (!(d > 0.0)) {
        at(c, c) = d;
        info[j] = c + 1;
        break;
      }
      const double l = std::sqrt(d);
      at(c, c) = l;
      for (int r = c + 1; r < n; ++r) {
        double s = at(r, c);
        for (int k = 0; k < c; ++k) s -= at(r, k) * at(c, k);
        at(r, c) = s / l;
      }
    }
  }
}

// The backend of factor_phase on the host: plain loops and the two functions above.
struct host_backend {
  template <class F>
  void over(long count, const F& f) const {
    for (long j = 0; j < count; ++j) f(j);
  }
  long list_pending(const long* active, long n_active, is_pending pred, long* out) const {
    return static_cast<long>(std::copy_if(active, active + n_active, out, pred) - out);
  }
  template <class E>
  void getrf(int n, E** A, int* ipiv, int* info, int batch) const {
    host_getrf_batched(n, A, n, ipiv, info, batch);
  }
  void potrf(int n, double** A, int* info, int batch) const { host_potrf_batched(n, A, n, info, batch); }
};

// The CUDA factor phase's storage and order on the CPU: a stand-in for factor_member (split_factor.hpp)
// in a chunk driver. Backend: host_backend, or a test's wrapper of it.
template <class Model, class Method, class Backend = host_backend>
struct host_factor_phase {
  using shape_type = phase_shape<Model, Method>;
  shape_type shape;
  bool projections;
  Backend backend;
  std::vector<unsigned char> pending;
  std::vector<long> batch;
  std::vector<double> real, scale, gram;
  std::vector<complex<double>> cplx;
  std::vector<double*> real_ptr;
  std::vector<complex<double>*> cplx_ptr;
  std::vector<int> pivots, info;
  std::vector<member_status> status;

  host_factor_phase(long chunk, bool split_projections, Backend be = {})
      : projections(split_projections), backend(be), pending(chunk), batch(chunk), real(shape.real_size()),
        scale(shape_type::batch_capacity), gram(shape.gram_size(split_projections)), cplx(shape.complex_size()),
        real_ptr(shape_type::batch_capacity), cplx_ptr(shape_type::batch_capacity),
        pivots(shape_type::batch_capacity * shape_type::n), info(shape_type::batch_capacity),
        status(shape_type::batch_capacity) {}

  phase_storage storage() {
    return {pending.data(), batch.data(), real.data(), scale.data(), gram.data(), cplx.data(), real_ptr.data(),
            cplx_ptr.data(), pivots.data(), info.data(), status.data()};
  }

  void run(std::uint64_t* states, std::uint64_t* projection_states, long stride, const long* active, long n_active) {
    factor_phase(backend, shape, storage(), projections, states, projection_states, stride, active, n_active);
  }
};

}  // namespace lockstep::batched
