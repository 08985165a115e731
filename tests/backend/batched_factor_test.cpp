// The CUDA backend's batched factor phase on the host (kernels/cuda/batched_factor.hpp): the gather
// into column-major batch buffers, the batched LU and Cholesky with cuBLAS's and cuSOLVER's layout and
// conventions (host_getrf_batched, host_potrf_batched), the 1-based pivots, `info` and the singularity
// test as statuses, the write-back, and the phase between advance launches, held to Debian's reference
// LAPACK (dgetrf, zgetrf, dpotrf; Anderson et al., LAPACK Users' Guide, 3rd ed., 1999) on the matrices
// the split path assembles: the Newton matrices of BDF and Radau IIA (its real and complex blocks) and
// the projections' metric and Gram matrices, for every device model, and singular, redundant and NaN
// variants of them.
//
// What is exact: pivots, info and the column-major layout (LAPACK's dgetrf2 and the column loop of
// host_getrf_batched choose the same rows unless two candidates tie to rounding, which these matrices
// never do). What is within a tolerance: the factors, which the two compute in different orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cuda/batched_factor.hpp"
#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"

extern "C" {
// Reference LAPACK (Fortran calling convention; the trailing length is gfortran's hidden argument of
// a CHARACTER dummy).
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_length);
}

namespace {

using namespace lockstep;
using batched::column_major_index;

// ---- LAPACK on one column-major matrix ----

void lapack_getrf(int n, double* a, int* ipiv, int* info) { dgetrf_(&n, &n, a, &n, ipiv, info); }
void lapack_getrf(int n, complex<double>* a, int* ipiv, int* info) {
  static_assert(sizeof(complex<double>) == sizeof(std::complex<double>));
  zgetrf_(&n, &n, reinterpret_cast<std::complex<double>*>(a), &n, ipiv, info);
}
void lapack_potrf(int n, double* a, int* info) { dpotrf_("L", &n, a, &n, info, 1); }

// One batched call the split path made: its inputs (column-major, before factoring) and its outputs.
template <class E>
struct recorded_batch {
  int n = 0;
  std::vector<std::vector<E>> input, output;
  std::vector<std::vector<int>> pivots;  // empty for Cholesky
  std::vector<int> info;
};

struct recordings {
  std::vector<recorded_batch<double>> real, cholesky;
  std::vector<recorded_batch<complex<double>>> complex_blocks;
};

// host_backend, recording every batched factorization's inputs and outputs.
struct recording_backend : batched::host_backend {
  recordings* out = nullptr;
  template <class E>
  static recorded_batch<E> before(int n, E** A, int count) {
    recorded_batch<E> r;
    r.n = n;
    for (int j = 0; j < count; ++j) r.input.emplace_back(A[j], A[j] + n * n);
    return r;
  }
  template <class E>
  static void after(recorded_batch<E>& r, E** A, const int* ipiv, const int* info, int count) {
    for (int j = 0; j < count; ++j) {
      r.output.emplace_back(A[j], A[j] + r.n * r.n);
      if (ipiv != nullptr) r.pivots.emplace_back(ipiv + j * r.n, ipiv + (j + 1) * r.n);
      r.info.push_back(info[j]);
    }
  }
  template <class E>
  void getrf(int n, E** A, int* ipiv, int* info, int count) const {
    auto r = before(n, A, count);
    host_backend::getrf(n, A, ipiv, info, count);
    after(r, A, ipiv, info, count);
    if constexpr (std::is_same_v<E, double>) out->real.push_back(std::move(r));
    else out->complex_blocks.push_back(std::move(r));
  }
  void potrf(int n, double** A, int* info, int count) const {
    auto r = before(n, A, count);
    host_backend::potrf(n, A, info, count);
    after(r, A, nullptr, info, count);
    out->cholesky.push_back(std::move(r));
  }
};

// The split path with the CUDA backend's factor phase: the scheduler's chunk loop with the split
// emulation (host/scheduler/scheduler.cpp, run_chunked: per synchronization the advance launch, which
// replays the attempts that suspended, the compaction, then the factor phase over the members still
// active, the order of kernels/cuda/ensemble_cuda.cu), driven here with the member functors, whose
// per-member factor_member is replaced by batched::factor_phase over the same pending list, recording
// every batched call.
template <class Model, class Method>
ensemble_result<Model> solve_split_batched(const ensemble<Model>& e, run_options ro, recordings* rec) {
  constexpr int ny = state_layout<Model>::size;
  constexpr int words = soa_image<member_state<Model, Method>>::words;
  constexpr int projection_words = soa_image<projection_work<Model>>::words;
  ro.split_factorization = true;
  ro.keep_outputs = true;
  recording_backend backend;
  backend.out = rec;
  const long chunk = ro.chunk_size > 0 ? std::min(ro.chunk_size, std::max(1L, e.members)) : std::max(1L, e.members);
  const int save_count = static_cast<int>(e.save_times.size());
  const bool split_projections = projects_after_steps(e.options.projection, e.options.form);
  std::vector<std::uint64_t> states(static_cast<std::size_t>(words) * chunk);
  std::vector<double> params(static_cast<std::size_t>(Model::n_params) * chunk), q0(Model::n * chunk), v0(Model::n * chunk);
  std::vector<double> outputs(static_cast<std::size_t>(save_count) * ny * chunk), member_outputs, member_records;
  std::vector<unsigned char> finished(chunk), pending(chunk);
  std::vector<std::uint64_t> projections(split_projections ? static_cast<std::size_t>(projection_words) * chunk : 0);
  std::vector<long> active(chunk);
  ensemble_result<Model> r = detail::empty_result(e, ro);
  r.chunk_size = chunk;
  batched::host_factor_phase<Model, Method, recording_backend> phase(chunk, split_projections, backend);
  for (long first = 0; first < e.members; first += chunk) {
    const long count = std::min(chunk, e.members - first);
    detail::scatter_inputs(e, first, count, chunk, params.data(), q0.data(), v0.data());
    std::fill(outputs.begin(), outputs.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(finished.begin(), finished.end(), 0);
    std::fill(projections.begin(), projections.end(), 0);
    chunk_view<Model> view = detail::chunk_view_of(e, chunk, states.data(), params.data(), q0.data(), v0.data(),
                                                   outputs.data(), finished.data(), e.save_times.data());
    view.projections = split_projections ? projections.data() : nullptr;
    std::iota(active.begin(), active.begin() + count, 0L);
    long n_active = count;
    auto compact = [&] {
      n_active = std::partition(active.begin(), active.begin() + n_active, [&](long i) { return finished[i] == 0; }) -
                 active.begin();
    };
    const begin_member<Model, Method> begin{view};
    for (long a = 0; a < n_active; ++a) begin(active[a]);
    compact();
    const advance_member_split<Model, Method> advance{view, ro.attempts_per_sync, pending.data(), projection_split_above(true)};
    while (n_active > 0) {
      for (long a = 0; a < n_active; ++a) advance(active[a]);
      compact();
      batched::phase_storage st = phase.storage();
      st.pending = pending.data();  // the chunk's list; the phase only reads it
      batched::factor_phase(phase.backend, phase.shape, st, phase.projections, view.states, view.projections, view.stride,
                            active.data(), n_active);
    }
    detail::gather_results<Model, Method>(e, ro, first, count, chunk, states.data(), outputs.data(), member_outputs, r,
                                          nullptr, member_records);
  }
  return r;
}

template <class Model>
ensemble<Model> varied_ensemble(long members, double t1, method_kind method, formulation form,
                                projection_kind projection = projection_kind::none) {
  auto e = ensemble<Model>::with_defaults(members);
  for (long i = 0; i < members; ++i) e.params_of(i)[0] *= 1.0 + 0.01 * std::sin(1.7 * static_cast<double>(i));
  e.t1 = t1;
  e.save_times = {0.5 * t1, t1};
  e.options.method = method;
  e.options.form = form;
  e.options.projection = projection;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-7;
  e.options.max_steps = 20000;
  return e;
}

// The split path with the batched phase against the fused serial solve: statuses equal, saved positions
// within 10 (atol + rtol |q|), the CUDA tests' contract (the factors differ by rounding). Returns what
// the phase factored.
template <class Model>
recordings expect_batched_split_agrees_with_fused(const ensemble<Model>& e) {
  run_options ro;
  ro.chunk_size = 5;
  ro.attempts_per_sync = 3;
  recordings rec;
  const auto batched = e.options.method == method_kind::bdf ? solve_split_batched<Model, bdf_method>(e, ro, &rec)
                                                            : solve_split_batched<Model, radau5_method>(e, ro, &rec);
  const auto reference = solve_ensemble(e, run_options{});
  for (long i = 0; i < e.members; ++i) {
    EXPECT_EQ(batched.status[i], reference.status[i]) << "member " << i;
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < Model::n; ++j) {
        const double y = reference.q(i, s, j);
        if (std::isnan(y)) continue;
        EXPECT_NEAR(batched.q(i, s, j), y, 10.0 * (e.options.atol_q + e.options.rtol * std::abs(y)))
            << "member " << i << " save " << s << " q" << j;
      }
  }
  return rec;
}

// ---- comparisons with LAPACK ----

double max_abs(const auto& v) {
  double m = 0.0;
  for (const auto& x : v) m = std::max(m, abs1(x));
  return m;
}

// Factors agree when every entry is within 1e-12 of the largest entry of its row of U (for U) or within
// 1e-12 (for L, whose entries are at most 1): the rounding of an elimination in another order.
template <class E>
::testing::AssertionResult factors_close(int n, const std::vector<E>& a, const std::vector<E>& b, bool lower_only) {
  for (int r = 0; r < n; ++r) {
    double row = 0.0;
    for (int c = r; c < n; ++c) row = std::max(row, abs1(b[column_major_index(n, r, c)]));
    for (int c = 0; c < (lower_only ? r + 1 : n); ++c) {
      const double x = abs1(a[column_major_index(n, r, c)] - b[column_major_index(n, r, c)]);
      const double bound = 1e-12 * (c < r && !lower_only ? 1.0 : std::max(row, 1e-300));
      if (!(x <= bound))
        return ::testing::AssertionFailure() << "entry (" << r << ", " << c << ") of " << n << " x " << n << " differs by " << x
                                             << " (bound " << bound << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Every matrix of every recorded getrf batch through LAPACK: pivots and info exactly, factors close.
template <class E>
long expect_getrf_batches_match_lapack(const std::vector<recorded_batch<E>>& batches) {
  long matrices = 0;
  for (const auto& b : batches)
    for (std::size_t j = 0; j < b.input.size(); ++j, ++matrices) {
      std::vector<E> a = b.input[j];
      std::vector<int> ipiv(b.n);
      int info = -1;
      lapack_getrf(b.n, a.data(), ipiv.data(), &info);
      EXPECT_EQ(b.info[j], info) << "matrix " << matrices;
      EXPECT_EQ(b.pivots[j], ipiv) << "matrix " << matrices;
      EXPECT_TRUE(factors_close(b.n, b.output[j], a, false)) << "matrix " << matrices;
    }
  return matrices;
}

long expect_potrf_batches_match_lapack(const std::vector<recorded_batch<double>>& batches) {
  long matrices = 0;
  for (const auto& b : batches)
    for (std::size_t j = 0; j < b.input.size(); ++j, ++matrices) {
      std::vector<double> a = b.input[j];
      int info = -1;
      lapack_potrf(b.n, a.data(), &info);
      EXPECT_EQ(b.info[j], info) << "matrix " << matrices;
      if (info == 0) {
        EXPECT_TRUE(factors_close(b.n, b.output[j], a, true)) << "matrix " << matrices;
      }
    }
  return matrices;
}

TEST(BatchedFactor, GetrfBatchedMatchesLapackDgetrfOnBdfNewtonMatricesOfEveryDeviceModel) {
  long matrices = 0;
  auto pendulum = expect_batched_split_agrees_with_fused(varied_ensemble<models::pendulum>(12, 1.0, method_kind::bdf, formulation::ggl));
  matrices += expect_getrf_batches_match_lapack(pendulum.real);
  auto dp = expect_batched_split_agrees_with_fused(varied_ensemble<models::double_pendulum>(8, 0.3, method_kind::bdf, formulation::ggl));
  matrices += expect_getrf_batches_match_lapack(dp.real);
  // Member 2 with a NaN parameter: its status must be the fused path's. It stops before any
  // factorization (not_finite_matrices is 0), so the phase's NaN matrices are those of
  // SingularRedundantAndNaNNewtonMatricesGetLapacksInfoAndLuFactorsStatus.
  auto with_nan = varied_ensemble<models::andrews>(8, 0.003, method_kind::bdf, formulation::ggl);
  with_nan.params_of(2)[0] = std::numeric_limits<double>::quiet_NaN();
  auto andrews = expect_batched_split_agrees_with_fused(with_nan);
  matrices += expect_getrf_batches_match_lapack(andrews.real);
  long not_finite = 0;
  for (const auto& b : andrews.real)
    for (const auto& a : b.input) not_finite += !std::all_of(a.begin(), a.end(), [](double x) { return std::isfinite(x); });
  RecordProperty("not_finite_matrices", std::to_string(not_finite));
  EXPECT_TRUE(pendulum.complex_blocks.empty() && andrews.cholesky.empty());
  EXPECT_GT(matrices, 300);
  RecordProperty("matrices", std::to_string(matrices));
}

TEST(BatchedFactor, GetrfBatchedMatchesLapackDgetrfAndZgetrfOnRadauRealAndComplexBlocks) {
  long real = 0, cplx = 0;
  for (formulation form : {formulation::index3, formulation::ggl}) {
    auto andrews = expect_batched_split_agrees_with_fused(varied_ensemble<models::andrews>(8, 0.003, method_kind::radau5, form));
    real += expect_getrf_batches_match_lapack(andrews.real);
    cplx += expect_getrf_batches_match_lapack(andrews.complex_blocks);
  }
  auto dp = expect_batched_split_agrees_with_fused(varied_ensemble<models::double_pendulum>(8, 0.3, method_kind::radau5, formulation::ggl));
  real += expect_getrf_batches_match_lapack(dp.real);
  cplx += expect_getrf_batches_match_lapack(dp.complex_blocks);
  EXPECT_GT(real, 50);
  EXPECT_EQ(real, cplx);  // the complex block of every member whose real block factored
}

TEST(BatchedFactor, PotrfBatchedMatchesLapackDpotrfOnProjectionMatrices) {
  long matrices = 0;
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization}) {
    auto bdf = expect_batched_split_agrees_with_fused(
        varied_ensemble<models::andrews>(6, 0.003, method_kind::bdf, formulation::ggl, kind));
    matrices += expect_potrf_batches_match_lapack(bdf.cholesky);
    auto radau = expect_batched_split_agrees_with_fused(
        varied_ensemble<models::double_pendulum>(6, 0.3, method_kind::radau5, formulation::index3, kind));
    matrices += expect_potrf_batches_match_lapack(radau.cholesky);
  }
  EXPECT_GT(matrices, 100);
}

// ---- the glue on single matrices: the factor phase on a one-member chunk against lu_factor ----

// Member state with `A` as its pending Newton matrix (the real block; for Radau IIA `C` as the complex
// one), factored by the batched phase on a one-member SoA image; returns the state it writes back.
template <class Model, class Method>
std::unique_ptr<member_state<Model, Method>> factor_by_phase(const member_state<Model, Method>& in) {
  constexpr int words = soa_image<member_state<Model, Method>>::words;
  std::vector<std::uint64_t> image(words);
  soa_store(image.data(), 1, 0, in);
  batched::host_factor_phase<Model, Method> phase(1, false);
  phase.pending[0] = static_cast<unsigned char>(pending_factor::newton);
  const long active = 0;
  phase.run(image.data(), nullptr, 1, &active, 1);
  auto out = std::make_unique<member_state<Model, Method>>();
  soa_load(image.data(), 1, 0, *out);
  return out;
}

template <class E, int N>
mat<E, N, N> row_major(const std::vector<E>& column_major) {
  mat<E, N, N> A;
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) A(r, c) = column_major[column_major_index(N, r, c)];
  return A;
}

// The phase's result on A against lu_factor's (the CPU factorization the fused path runs): status,
// pivots exactly, factors within rounding (entries compared after transposing lu_factor's row-major
// result into the same column-major order).
template <class Model, class Method, class E>
void expect_phase_is_lu_factor(const mat<E, state_layout<Model>::newton_size, state_layout<Model>::newton_size>& A,
                               member_status expected) {
  constexpr int n = state_layout<Model>::newton_size;
  auto in = std::make_unique<member_state<Model, Method>>();
  external_of(in->method).enabled = true;
  external_of(in->method).pending = true;
  newton_matrix<Model, E>* slot;
  if constexpr (std::is_same_v<E, double>) slot = real_matrix_of(in->method);
  else slot = complex_matrix_of(in->method);
  slot->lu = A;
  // Radau IIA's other block gets the identity: the complex block is factored only after the real one
  // succeeded, and a member's status is that of both.
  if constexpr (std::is_same_v<E, double>) {
    if (auto* C = complex_matrix_of(in->method))
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) C->lu(r, c) = r == c ? 1.0 : 0.0;
  } else {
    auto* R = real_matrix_of(in->method);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) R->lu(r, c) = r == c ? 1.0 : 0.0;
  }
  const auto out = factor_by_phase<Model, Method>(*in);
  mat<E, n, n> reference = A;
  vec<int, n> pivot;
  const member_status cpu = factorization_status(lu_factor(reference, pivot));
  const external_factors& x = external_of(out->method);
  EXPECT_FALSE(x.pending);
  EXPECT_TRUE(x.ready);
  EXPECT_EQ(std::string(status_name(x.status)), status_name(cpu));
  EXPECT_EQ(std::string(status_name(x.status)), status_name(expected));
  if (cpu != member_status::success || x.status != member_status::success) return;
  const newton_matrix<Model, E>* got;
  if constexpr (std::is_same_v<E, double>) got = real_matrix_of(out->method);
  else got = complex_matrix_of(out->method);
  for (int k = 0; k < n; ++k) EXPECT_EQ(got->pivot[k], pivot[k]) << "pivot " << k;
  std::vector<E> g(n * n), w(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      g[column_major_index(n, r, c)] = got->lu(r, c);
      w[column_major_index(n, r, c)] = reference(r, c);
    }
  EXPECT_TRUE(factors_close(n, g, w, false));
}

template <class Model, class Method>
recordings harvest(double t1, formulation form) {
  run_options ro;
  ro.chunk_size = 4;
  ro.attempts_per_sync = 3;
  recordings rec;
  solve_split_batched<Model, Method>(varied_ensemble<Model>(4, t1, Method::kind, form), ro, &rec);
  return rec;
}

TEST(BatchedFactor, PhaseWritesBackLuFactorsPivotsAndStatusesOfTheSplitPathsMatrices) {
  constexpr int n = state_layout<models::andrews>::newton_size;
  const auto rec = harvest<models::andrews, radau5_method>(0.003, formulation::index3);
  ASSERT_FALSE(rec.real.empty());
  ASSERT_FALSE(rec.complex_blocks.empty());
  for (std::size_t b = 0; b < rec.real.size(); b += 7) {
    const auto A = row_major<double, n>(rec.real[b].input[0]);
    expect_phase_is_lu_factor<models::andrews, radau5_method>(A, member_status::success);
    expect_phase_is_lu_factor<models::andrews, bdf_method>(A, member_status::success);
  }
  for (std::size_t b = 0; b < rec.complex_blocks.size(); b += 7)
    expect_phase_is_lu_factor<models::andrews, radau5_method>(row_major<complex<double>, n>(rec.complex_blocks[b].input[0]),
                                                              member_status::success);
}

// A matrix whose pivots need row interchanges at every step (an antidiagonal permutation of a
// diagonally dominant matrix): LAPACK's ipiv and lu_factor's pivot differ by exactly one everywhere.
TEST(BatchedFactor, PivotsFromGetrfAreLuFactorsRowsCountedFromZero) {
  constexpr int n = state_layout<models::pendulum>::newton_size;
  mat<double, n, n> A;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) A(r, c) = (r + c == n - 1 ? 10.0 + r : 0.1 * (r - c));
  std::vector<double> a(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) a[column_major_index(n, r, c)] = A(r, c);
  std::vector<int> ipiv(n);
  int info = -1;
  lapack_getrf(n, a.data(), ipiv.data(), &info);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(ipiv[0], n);  // 1-based: row n was brought up at step 1
  expect_phase_is_lu_factor<models::pendulum, bdf_method>(A, member_status::success);
}

// The statuses of degenerate matrices made from a real Newton matrix: singular (a zero column: getrf's
// info > 0; a repeated row: only the pivot test sees it), not finite (one NaN entry), and the zero
// matrix; against LAPACK's info and ipiv for the same input, and lu_factor's status.
TEST(BatchedFactor, SingularRedundantAndNaNNewtonMatricesGetLapacksInfoAndLuFactorsStatus) {
  constexpr int n = state_layout<models::andrews>::newton_size;
  const auto rec = harvest<models::andrews, bdf_method>(0.003, formulation::ggl);
  ASSERT_FALSE(rec.real.empty());
  const std::vector<double> base = rec.real.back().input[0];
  const auto variant = [&](auto change) {
    std::vector<double> a = base;
    change(a);
    return a;
  };
  struct degenerate {
    std::string what;
    std::vector<double> a;
    member_status status;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<degenerate> cases = {
      {"zero column 5", variant([&](auto& a) { for (int r = 0; r < n; ++r) a[column_major_index(n, r, 5)] = 0.0; }),
       member_status::singular_matrix},
      {"zero last column", variant([&](auto& a) { for (int r = 0; r < n; ++r) a[column_major_index(n, r, n - 1)] = 0.0; }),
       member_status::singular_matrix},
      {"row 9 repeated as row 3", variant([&](auto& a) { for (int c = 0; c < n; ++c) a[column_major_index(n, 3, c)] = a[column_major_index(n, 9, c)]; }),
       member_status::singular_matrix},
      {"NaN at (4, 6)", variant([&](auto& a) { a[column_major_index(n, 4, 6)] = nan; }), member_status::model_not_finite},
      {"zero matrix", std::vector<double>(n * n, 0.0), member_status::singular_matrix},
  };
  for (const auto& d : cases) {
    SCOPED_TRACE(d.what);
    std::vector<double> mine = d.a, lapack = d.a;
    std::vector<int> my_ipiv(n), lapack_ipiv(n);
    int my_info = -1, lapack_info = -1;
    double* p = mine.data();
    batched::host_getrf_batched(n, &p, n, my_ipiv.data(), &my_info, 1);
    lapack_getrf(n, lapack.data(), lapack_ipiv.data(), &lapack_info);
    EXPECT_EQ(my_info, lapack_info);
    EXPECT_EQ(my_ipiv, lapack_ipiv);
    expect_phase_is_lu_factor<models::andrews, bdf_method>(row_major<double, n>(d.a), d.status);
  }
}

// The Cholesky write-back: the lower triangle is cholesky_factor's L, the upper triangle stays as
// assembled, and an indefinite or NaN matrix gets cholesky_factor's status, whatever potrf left on its
// diagonal (an indefinite minor leaves its negative pivot there, whose square passes the pivot test:
// only info tells).
TEST(BatchedFactor, CholeskyWriteBackIsCholeskyFactorsLowerTriangleAndStatus) {
  using Model = models::andrews;
  constexpr int n = Model::n;
  auto e = varied_ensemble<Model>(4, 0.003, method_kind::bdf, formulation::ggl, projection_kind::coordinate);
  recordings proj;
  run_options ro;
  ro.chunk_size = 4;
  solve_split_batched<Model, bdf_method>(e, ro, &proj);
  const recorded_batch<double>* metric = nullptr;
  for (const auto& b : proj.cholesky)
    if (b.n == n) metric = &b;
  ASSERT_NE(metric, nullptr);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> indefinite = metric->input[0], not_finite = metric->input[0];
  indefinite[column_major_index(n, n - 1, n - 1)] = -1.0;
  not_finite[column_major_index(n, 2, 1)] = nan;
  const std::vector<std::pair<std::vector<double>, member_status>> cases = {
      {metric->input[0], member_status::success},
      {indefinite, member_status::singular_matrix},
      {not_finite, member_status::model_not_finite}};
  for (const auto& [a, expected] : cases) {
    const projection_offsets off = batched::projection_offsets_of<Model>();
    auto w = std::make_unique<projection_work<Model>>();
    w->phase = projection_phase::metric;
    w->external.pending = true;
    w->W.M_chol = row_major<double, n>(a);
    constexpr int words = soa_image<projection_work<Model>>::words;
    std::vector<std::uint64_t> image(words);
    soa_store(image.data(), 1, 0, *w);
    batched::host_factor_phase<Model, bdf_method> phase(1, true);
    phase.pending[0] = static_cast<unsigned char>(pending_factor::metric);
    const long active = 0;
    phase.run(nullptr, image.data(), 1, &active, 1);
    ASSERT_GE(off.metric, 0);
    auto out = std::make_unique<projection_work<Model>>();
    soa_load(image.data(), 1, 0, *out);
    mat<double, n, n> reference = row_major<double, n>(a);
    const member_status cpu = factorization_status(cholesky_factor(reference));
    EXPECT_EQ(std::string(status_name(cpu)), status_name(expected));
    EXPECT_EQ(std::string(status_name(out->external.status)), status_name(expected));
    EXPECT_TRUE(out->external.ready);
    EXPECT_FALSE(out->external.pending);
    if (expected != member_status::success) continue;
    std::vector<double> g(n * n), r(n * n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        g[column_major_index(n, i, j)] = out->W.M_chol(i, j);
        r[column_major_index(n, i, j)] = reference(i, j);
        if (j > i) {
          EXPECT_EQ(out->W.M_chol(i, j), a[column_major_index(n, i, j)]) << "upper (" << i << ", " << j << ")";
        }
      }
    EXPECT_TRUE(factors_close(n, g, r, true));
  }
  // and potrf's info for the indefinite matrix is LAPACK's: its last leading minor
  std::vector<double> mine = indefinite, lapack = indefinite;
  int my_info = -1, lapack_info = -1;
  double* p = mine.data();
  batched::host_potrf_batched(n, &p, n, &my_info, 1);
  lapack_potrf(n, lapack.data(), &lapack_info);
  EXPECT_EQ(my_info, n);
  EXPECT_EQ(my_info, lapack_info);
}

}  // namespace
