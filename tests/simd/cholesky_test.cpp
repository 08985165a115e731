// Tests of the Cholesky factorization in lanes (lockstep/core/cholesky_generic.inc, compiled for packs by
// lockstep/simd/lu_inl.hpp): one symmetric matrix per lane must give every lane exactly what
// lockstep::cholesky_factor and cholesky_solve give its matrix alone — info and failing column always,
// and for a factored matrix every bit of the factor and of the solution — at W = 1, 2, 4, 8 in every
// instruction set's build of the pack tests. The packs mix the matrices the projections meet: Gram
// matrices G M^-1 G^T (SPD, some badly scaled), a repeated constraint row (singular at a column of its
// own), an indefinite or zero matrix, and a NaN or infinite entry, side by side, so that lanes fail at
// different columns while their neighbours factor; failing lanes must not raise floating-point
// exceptions for the others.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/cholesky_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/simd/lu_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// Factors and solves `count` matrices (member-major, N x N row-major each) in packs of W lanes; count is
// a multiple of W. Writes the factors over the matrices, the solutions over b, info and column.
template <int N, size_t W>
HWY_NOINLINE bool cholesky_at_width(double* matrices, double* b, int64_t* info, int64_t* column, size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  HWY_ALIGN double lanes[W];
  const auto load = [&](const double* base, size_t first, size_t stride, int e) {
    for (size_t l = 0; l < W; ++l) lanes[l] = base[(first + l) * stride + e];
    return P(hn::Load(d, lanes));
  };
  const auto store = [&](double* base, size_t first, size_t stride, int e, P x) {
    hn::Store(x.v, d, lanes);
    for (size_t l = 0; l < W; ++l) base[(first + l) * stride + e] = lanes[l];
  };
  for (size_t first = 0; first < count; first += W) {
    mat<P, N, N> A;
    vec<P, N> x;
    for (int e = 0; e < N * N; ++e) A.a[e] = load(matrices, first, N * N, e);
    for (int i = 0; i < N; ++i) x[i] = load(b, first, N, i);
    const auto r = sl::cholesky_factor(A);
    // Every lane, where any factored, as the projections solve: a lane that failed beside one that did
    // not was given the identity (its result is not compared); where every lane failed, the
    // factorization stopped, as one matrix's does, and its caller does not solve.
    if (!hn::AllFalse(d, hn::Eq(r.info.v, hn::Set(d, double(lu_ok))))) cholesky_solve(A, x);
    for (int e = 0; e < N * N; ++e) store(matrices, first, N * N, e, A.a[e]);
    for (int i = 0; i < N; ++i) store(b, first, N, i, x[i]);
    HWY_ALIGN double values[W];
    hn::Store(r.info.v, d, values);
    for (size_t l = 0; l < W; ++l) info[first + l] = int64_t(values[l]);
    hn::Store(r.column.v, d, values);
    for (size_t l = 0; l < W; ++l) column[first + l] = int64_t(values[l]);
  }
  return true;
}

template <int N>
bool cholesky_in_lanes(double* a, double* b, int64_t* info, int64_t* column, size_t count, size_t lanes) {
  switch (lanes) {
    case 1: return cholesky_at_width<N, 1>(a, b, info, column, count);
    case 2: return cholesky_at_width<N, 2>(a, b, info, column, count);
    case 4: return cholesky_at_width<N, 4>(a, b, info, column, count);
    case 8: return cholesky_at_width<N, 8>(a, b, info, column, count);
    default: return false;
  }
}
bool Cholesky1(double* a, double* b, int64_t* i, int64_t* c, size_t n, size_t w) { return cholesky_in_lanes<1>(a, b, i, c, n, w); }
bool Cholesky3(double* a, double* b, int64_t* i, int64_t* c, size_t n, size_t w) { return cholesky_in_lanes<3>(a, b, i, c, n, w); }
bool Cholesky6(double* a, double* b, int64_t* i, int64_t* c, size_t n, size_t w) { return cholesky_in_lanes<6>(a, b, i, c, n, w); }
bool Cholesky13(double* a, double* b, int64_t* i, int64_t* c, size_t n, size_t w) { return cholesky_in_lanes<13>(a, b, i, c, n, w); }
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "lockstep/core/linalg.hpp"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Cholesky1);
HWY_EXPORT(Cholesky3);
HWY_EXPORT(Cholesky6);
HWY_EXPORT(Cholesky13);

namespace {

using entry = std::function<bool(double*, double*, int64_t*, int64_t*, size_t, size_t)>;

// One member's symmetric matrix, of a kind drawn at random: a Gram matrix G W G^T of a random G and a
// random diagonal W > 0 (SPD; kind 1 with W over twelve decades), the same with a repeated row of G
// (positive semidefinite: singular at that row's column), an indefinite one, the zero matrix, an SPD
// one with a NaN or an infinite entry, and a diagonal one (the factorization's shortcut where every
// lane's is, with +0.0 below the diagonal): W itself, W with a -0.0 below the diagonal (the general
// loop), W with a non-positive entry. `diagonal` draws from the diagonal kinds alone.
template <int N>
void fill_member(std::mt19937_64& g, double* a, double* b, bool diagonal) {
  std::uniform_real_distribution<double> u(-1, 1);
  const int kind = diagonal ? 6 + int(g() % 3) : int(g() % 9);
  double G[N][N + 2], w[N + 2];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N + 2; ++j) G[i][j] = u(g);
  for (int j = 0; j < N + 2; ++j) w[j] = kind == 1 ? log_uniform(g, 1e-6, 1e6) : 0.5 + std::abs(u(g));
  if (kind == 2 && N > 1) {
    const int row = 1 + int(g() % (N - 1));
    for (int j = 0; j < N + 2; ++j) G[row][j] = G[0][j];
  }
  for (int i = 0; i < N; ++i)
    for (int k = 0; k < N; ++k) {
      double s = 0.0;
      for (int j = 0; j < N + 2; ++j) s += G[i][j] * w[j] * G[k][j];
      a[i * N + k] = s;
    }
  if (kind == 3) a[int(g() % N) * (N + 1)] = -1.0;  // a negative diagonal: not positive definite
  if (kind == 4)
    for (int e = 0; e < N * N; ++e) a[e] = 0.0;
  if (kind == 5) a[g() % (N * N)] = (g() & 1) ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  if (kind >= 6) {
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < N; ++k) a[i * N + k] = i == k ? w[i] : 0.0;
    if (kind == 7 && N > 1) {
      const int row = 1 + int(g() % (N - 1)), col = int(g() % row);
      a[row * N + col] = a[col * N + row] = -0.0;
    }
    if (kind == 8) a[int(g() % N) * (N + 1)] = (g() & 1) ? -w[0] : 0.0;
  }
  for (int i = 0; i < N; ++i) b[i] = u(g);
}

template <int N>
void expect_lanes_equal_one_matrix_code(const entry& run, uint64_t seed) {
  constexpr size_t count = 8 * 64;
  std::mt19937_64 g(seed);
  std::vector<double> matrices(count * N * N), b(count * N);
  // The last 64 members diagonal: whole packs of diagonal matrices at every width.
  for (size_t m = 0; m < count; ++m) fill_member<N>(g, &matrices[m * N * N], &b[m * N], m >= count - 64);

  std::vector<mat<double, N, N>> factors(count);
  std::vector<vec<double, N>> solutions(count);
  std::vector<factor_result> results(count);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) {
    for (int e = 0; e < N * N; ++e) factors[m].a[e] = matrices[m * N * N + e];
    for (int i = 0; i < N; ++i) solutions[m][i] = b[m * N + i];
    results[m] = cholesky_factor(factors[m]);
    if (results[m].info == lu_ok) cholesky_solve(factors[m], solutions[m]);
  }
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW);
  size_t ok = 0, singular = 0, not_finite = 0;
  for (const factor_result& r : results) (r.info == lu_ok ? ok : r.info == lu_singular ? singular : not_finite)++;
  EXPECT_GT(ok, 0u);
  EXPECT_GT(singular, 0u);
  EXPECT_GT(not_finite, 0u);

  std::vector<double> a, x;
  std::vector<int64_t> info(count), column(count);
  const auto run_at = [&](size_t lanes) {
    a = matrices;
    x = b;
    return run(a.data(), x.data(), info.data(), column.data(), count, lanes);
  };
  const auto count_differences = [&](const std::string& variant) {
    size_t differ = 0;
    for (size_t m = 0; m < count; ++m) {
      bool same = info[m] == results[m].info && column[m] == results[m].column;
      if (same && results[m].info == lu_ok) {
        for (int e = 0; e < N * N; ++e) same = same && same_bits(a[m * N * N + e], factors[m].a[e]);
        for (int i = 0; i < N; ++i) same = same && same_bits(x[m * N + i], solutions[m][i]);
      }
      if (!same && differ++ == 0)
        ADD_FAILURE() << "N = " << N << ", " << variant << ": member " << m << " differs from the one-matrix code (info "
                      << info[m] << " vs " << results[m].info << ", column " << column[m] << " vs " << results[m].column
                      << ")";
    }
    return differ;
  };
  const size_t variants = expect_every_variant_equal("cholesky N = " + std::to_string(N), FE_DIVBYZERO | FE_OVERFLOW,
                                                     raised_alone, run_at, count_differences, 1);
  std::printf("[ cholesky ] N = %d: %zu members (%zu factored, %zu singular, %zu not finite), %zu variants equal\n", N,
              count, ok, singular, not_finite, variants);
}

#define LOCKSTEP_CHOLESKY_ENTRY(NAME)                                                             \
  [](double* a, double* b, int64_t* i, int64_t* c, size_t n, size_t w) {                         \
    return HWY_DYNAMIC_DISPATCH(NAME)(a, b, i, c, n, w);                                         \
  }

TEST(SimdCholesky, EveryLaneIsTheOneMatrixFactorizationBitForBit) {
  expect_lanes_equal_one_matrix_code<1>(LOCKSTEP_CHOLESKY_ENTRY(Cholesky1), 1);
  expect_lanes_equal_one_matrix_code<3>(LOCKSTEP_CHOLESKY_ENTRY(Cholesky3), 3);
  expect_lanes_equal_one_matrix_code<6>(LOCKSTEP_CHOLESKY_ENTRY(Cholesky6), 6);
  expect_lanes_equal_one_matrix_code<13>(LOCKSTEP_CHOLESKY_ENTRY(Cholesky13), 13);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
