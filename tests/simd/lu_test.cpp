// Tests of lockstep/simd/lu_inl.hpp: the LU factorization and solve of one matrix per lane must give
// every lane exactly what lockstep::lu_factor and lu_solve give its matrix alone — info and failing
// column always, and for a factored matrix the pivots, every bit of the factors and of the solution —
// at W = 1, 2, 4, 8 in every instruction set's build of the pack tests (tests/simd/CMakeLists.txt: the
// complex entries are lockstep::complex<pack>, a template that takes the instruction set of the unit
// that instantiates it), for real and for complex matrices (Radau IIA's second block). The members of a pack are drawn from a mix of kinds, so that packs hold dense
// and saddle-point matrices (whole zero blocks: interchanges and zero multipliers), singular ones (a
// repeated row, a zero column), ones with a NaN or an infinite entry, badly scaled ones, and
// small-integer ones with signed zeros (ties in the pivot search, -0 entries where a zero multiplier
// must leave the row as it is) side by side; no lane may be changed by its neighbours, and failing
// lanes must not raise floating-point exceptions for the others. Further runs draw the members in
// blocks of eight of one kind, as a study's members are alike, so that packs whose lanes all pivot on
// one row or all have nonzero multipliers (the paths without blends) occur at every width.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/lu_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "lockstep/simd/lu_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// Factors and solves `count` matrices in packs of W lanes; count is a multiple of W. Entries are
// doubles, or (Complex) pairs of doubles re, im; member-major, N x N row-major each. Writes the factors
// over the matrices, the solutions over b, pivots, info, column.
template <bool Complex, int N, size_t W>
HWY_NOINLINE bool factor_and_solve_at_width(double* matrices, double* b, int64_t* pivots, int64_t* info,
                                            int64_t* column, size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using E = std::conditional_t<Complex, complex<P>, P>;
  constexpr int K = Complex ? 2 : 1;  // doubles per entry
  const D d;
  if (hn::Lanes(d) != W) return false;
  HWY_ALIGN double lanes[W];
  // Entry e of every member of the pack, from and to arrays of `stride` doubles per member.
  const auto load = [&](const double* base, size_t first, size_t stride, int e) {
    const auto part = [&](int c) {
      for (size_t l = 0; l < W; ++l) lanes[l] = base[(first + l) * stride + K * e + c];
      return P(hn::Load(d, lanes));
    };
    if constexpr (Complex) return E{part(0), part(1)};
    else return part(0);
  };
  const auto store = [&](double* base, size_t first, size_t stride, int e, const E& x) {
    const auto part = [&](int c, P v) {
      hn::Store(v.v, d, lanes);
      for (size_t l = 0; l < W; ++l) base[(first + l) * stride + K * e + c] = lanes[l];
    };
    if constexpr (Complex) part(0, x.re), part(1, x.im);
    else part(0, x);
  };
  for (size_t first = 0; first < count; first += W) {
    mat<E, N, N> A;
    vec<E, N> x;
    for (int e = 0; e < N * N; ++e) A.a[e] = load(matrices, first, K * N * N, e);
    for (int i = 0; i < N; ++i) x[i] = load(b, first, K * N, i);
    vec<P, N> p;
    const basic_factor_result<P> r = sl::lu_factor(A, p);
    sl::lu_solve(A, p, x);
    // Row indices and info held in double lanes, exact: as integers.
    const auto store_index = [&](int64_t* to, size_t stride, int i, P v) {
      hn::Store(v.v, d, lanes);
      for (size_t l = 0; l < W; ++l) to[(first + l) * stride + i] = static_cast<int64_t>(lanes[l]);
    };
    for (int e = 0; e < N * N; ++e) store(matrices, first, K * N * N, e, A.a[e]);
    for (int i = 0; i < N; ++i) {
      store(b, first, K * N, i, x[i]);
      store_index(pivots, N, i, p[i]);
    }
    store_index(info, 1, 0, r.info);
    store_index(column, 1, 0, r.column);
  }
  return true;
}

template <bool Complex, int N>
bool factor_and_solve(double* matrices, double* b, int64_t* pivots, int64_t* info, int64_t* column, size_t count,
                      size_t lanes) {
  switch (lanes) {
    case 1: return factor_and_solve_at_width<Complex, N, 1>(matrices, b, pivots, info, column, count);
    case 2: return factor_and_solve_at_width<Complex, N, 2>(matrices, b, pivots, info, column, count);
    case 4: return factor_and_solve_at_width<Complex, N, 4>(matrices, b, pivots, info, column, count);
    case 8: return factor_and_solve_at_width<Complex, N, 8>(matrices, b, pivots, info, column, count);
    default: return false;
  }
}
#define LOCKSTEP_LU_TEST_ENTRY(NAME, COMPLEX, N)                                                   \
  bool NAME(double* a, double* b, int64_t* p, int64_t* i, int64_t* c, size_t n, size_t w) {        \
    return factor_and_solve<COMPLEX, N>(a, b, p, i, c, n, w);                                      \
  }
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolve1, false, 1)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolve3, false, 3)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolve6, false, 6)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolve13, false, 13)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolve26, false, 26)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolveComplex1, true, 1)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolveComplex3, true, 3)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolveComplex6, true, 6)
LOCKSTEP_LU_TEST_ENTRY(FactorAndSolveComplex13, true, 13)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "lockstep/core/complex.hpp"
#include "lockstep/core/linalg.hpp"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(FactorAndSolve1);
HWY_EXPORT(FactorAndSolve3);
HWY_EXPORT(FactorAndSolve6);
HWY_EXPORT(FactorAndSolve13);
HWY_EXPORT(FactorAndSolve26);
HWY_EXPORT(FactorAndSolveComplex1);
HWY_EXPORT(FactorAndSolveComplex3);
HWY_EXPORT(FactorAndSolveComplex6);
HWY_EXPORT(FactorAndSolveComplex13);

namespace {

using entry = std::function<bool(double*, double*, int64_t*, int64_t*, int64_t*, size_t, size_t)>;

// The kinds of matrix below.
constexpr int matrix_kinds = 9;

// One member's matrix of the given kind, or of one chosen at random (kind < 0): the mix every pack is
// drawn from.
template <int N>
void fill_member(std::mt19937_64& g, double* a, double* b, int kind = -1) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int e = 0; e < N * N; ++e) a[e] = u(g);
  for (int i = 0; i < N; ++i) b[i] = u(g);
  if (kind < 0) kind = int(g() % matrix_kinds);
  const int half = N / 2;
  switch (kind) {
    case 0: case 1: break;  // dense
    case 2:  // saddle point [[M, G^T], [G, 0]]: a zero block, pivots from below
      for (int i = half; i < N; ++i)
        for (int j = half; j < N; ++j) a[i * N + j] = 0.0;
      for (int i = 0; i < half; ++i)
        for (int j = 0; j < half; ++j) a[i * N + j] = (i == j ? 2.0 : 0.0);
      break;
    case 3:  // a repeated row: singular (exactly, multipliers by division)
      if (N > 1) for (int j = 0; j < N; ++j) a[(N - 1) * N + j] = a[j];
      else a[0] = 0.0;
      break;
    case 4:  // a zero column
      for (int i = 0; i < N; ++i) a[i * N + int(g() % N)] = 0.0;
      for (int i = 0; i < N; ++i) a[i * N + (N - 1) / 2] = 0.0;
      break;
    case 5: a[g() % (N * N)] = (g() & 1) ? std::numeric_limits<double>::quiet_NaN() : -HUGE_VAL; break;
    case 6:  // entries of very different scales, 2^-1000 ... 2^900 (no overflow in the elimination)
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) a[i * N + j] *= std::ldexp(1.0, int(g() % 1900) - 1000);
      break;
    case 7:  // sparse: most multipliers zero
      for (int e = 0; e < N * N; ++e)
        if (g() % 3) a[e] = 0.0;
      for (int i = 0; i < N; ++i) a[i * N + (i + 1) % N] = 1.0 + u(g);
      break;
    case 8: {  // small integers and signed zeros: ties in the pivot search, -0 entries under zero multipliers
      const double values[] = {-2.0, -1.0, -0.0, 0.0, 0.0, -0.0, 1.0, 2.0};
      for (int e = 0; e < N * N; ++e) a[e] = values[g() % 8];
      break;
    }
  }
}

using simd_test::same_bits;
bool same_bits(const complex<double>& x, const complex<double>& y) {
  return same_bits(x.re, y.re) && same_bits(x.im, y.im);
}

// Complex members: the real matrix of a kind above times (1 + i c), which keeps its structure (zero
// blocks, repeated rows, zero columns, NaN), except the dense kinds, whose imaginary parts are drawn
// independently, so that pivots are decided by both parts and Smith's division takes both branches.
template <int N>
void fill_complex_member(std::mt19937_64& g, complex<double>* a, complex<double>* b, int kind = -1) {
  double re[N * N], rhs[N];
  fill_member<N>(g, re, rhs, kind);
  std::uniform_real_distribution<double> u(-1, 1);
  // c = +-1 for a third of the members: |re| = |im| in every entry, the tie of Smith's branch test.
  const double c = g() % 3 == 0 ? ((g() & 1) ? 1.0 : -1.0) : u(g);
  const bool dense = g() % 3 == 0;
  for (int e = 0; e < N * N; ++e) a[e] = {re[e], dense ? u(g) : c * re[e]};
  for (int i = 0; i < N; ++i) b[i] = {rhs[i], u(g)};
  // One member in 16: an entry whose parts are finite but whose magnitude |re| + |im| overflows, which
  // the one-matrix code reports as not finite.
  if (g() % 16 == 0) a[g() % (N * N)] = {1.5e308, -1.5e308};
}

// alike: the members in blocks of eight of one kind, as a study's members are alike, so that the packs
// of every width also hold lanes that all pivot on one row or all have nonzero multipliers (the
// factorization's paths without blends) beside lanes that do not; otherwise every member of a kind of
// its own.
template <bool Complex, int N>
void expect_lanes_equal_one_matrix_code(const entry& run, uint64_t seed, bool alike = false) {
  using scalar = std::conditional_t<Complex, complex<double>, double>;
  constexpr int K = Complex ? 2 : 1;
  constexpr size_t count = 8 * 64;
  std::mt19937_64 g(seed);
  std::vector<scalar> matrices(count * N * N), b(count * N);
  int block_kind = -1;
  for (size_t m = 0; m < count; ++m) {
    if (alike && m % 8 == 0) block_kind = int(g() % matrix_kinds);
    if constexpr (Complex) fill_complex_member<N>(g, &matrices[m * N * N], &b[m * N], block_kind);
    else fill_member<N>(g, &matrices[m * N * N], &b[m * N], block_kind);
  }

  // The one-matrix code, member by member.
  std::vector<mat<scalar, N, N>> factors(count);
  std::vector<vec<scalar, N>> solutions(count);
  std::vector<vec<int, N>> pivots(count);
  std::vector<factor_result> results(count);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) {
    for (int e = 0; e < N * N; ++e) factors[m].a[e] = matrices[m * N * N + e];
    for (int i = 0; i < N; ++i) solutions[m][i] = b[m * N + i];
    results[m] = lu_factor(factors[m], pivots[m]);
    if (results[m].info == lu_ok) lu_solve(factors[m], pivots[m], solutions[m]);
  }
  // The lanes may raise only what the one-matrix code raises on the same members (it overflows in
  // |re| + |im| of the complex entries made to overflow, and nowhere else).
  const int raised_by_one_matrix_code = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW);
  if (!Complex) {
    EXPECT_EQ(raised_by_one_matrix_code, 0) << "the test's real matrices should not overflow";
  }
  size_t ok = 0, singular = 0, not_finite = 0;
  for (const factor_result& r : results) (r.info == lu_ok ? ok : r.info == lu_singular ? singular : not_finite)++;
  EXPECT_GT(ok, 0u);
  EXPECT_GT(singular, 0u);
  EXPECT_GT(not_finite, 0u);

  // The same members as doubles (re, im interleaved for complex), the layout the entry points take.
  const auto flatten = [](const std::vector<scalar>& v) {
    std::vector<double> flat;
    for (const scalar& x : v)
      if constexpr (Complex) flat.push_back(x.re), flat.push_back(x.im);
      else flat.push_back(x);
    return flat;
  };
  const auto unflatten = [](const std::vector<double>& flat) {
    std::vector<scalar> v(flat.size() / K);
    for (size_t i = 0; i < v.size(); ++i)
      if constexpr (Complex) v[i] = {flat[2 * i], flat[2 * i + 1]};
      else v[i] = flat[i];
    return v;
  };
  const std::vector<double> flat_matrices = flatten(matrices), flat_b = flatten(b);

  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  size_t variants = 0;
  const std::string kind = std::string(Complex ? "complex" : "real") + (alike ? ", alike in eights" : "");
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    for (const size_t lanes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      std::vector<double> flat_a = flat_matrices, flat_x = flat_b;
      std::vector<int64_t> p(count * N), info(count), column(count);
      std::feclearexcept(FE_ALL_EXCEPT);
      if (!run(flat_a.data(), flat_x.data(), p.data(), info.data(), column.data(), count, lanes)) continue;
      const int raised = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW);
      ++variants;
      const std::string variant = std::string(hwy::TargetName(target)) + " W=" + std::to_string(lanes);
      EXPECT_EQ(raised & ~raised_by_one_matrix_code, 0)
          << kind << " N = " << N << ", " << variant << " raised division by zero or overflow";
      const std::vector<scalar> a = unflatten(flat_a), x = unflatten(flat_x);
      size_t differ = 0;
      for (size_t m = 0; m < count; ++m) {
        bool same = info[m] == results[m].info && column[m] == results[m].column;
        if (same && results[m].info == lu_ok) {
          for (int e = 0; e < N * N; ++e) same = same && same_bits(a[m * N * N + e], factors[m].a[e]);
          for (int i = 0; i < N; ++i)
            same = same && p[m * N + i] == pivots[m][i] && same_bits(x[m * N + i], solutions[m][i]);
        }
        if (!same && differ++ == 0)
          ADD_FAILURE() << kind << " N = " << N << ", " << variant << ": member " << m
                        << " differs from the one-matrix code (info " << info[m] << " vs " << results[m].info
                        << ", column " << column[m] << " vs " << results[m].column << ")";
      }
      EXPECT_EQ(differ, 0u) << kind << " N = " << N << ", " << variant;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(variants, 1u);  // the baseline build's target (Highway's scalar one) has one lane
  std::printf("[ lu ] %s N = %d: %zu members (%zu factored, %zu singular, %zu not finite), %zu variants equal\n",
              kind.c_str(), N, count, ok, singular, not_finite, variants);
}

#define LOCKSTEP_LU_ENTRY(NAME)                                                                       \
  [](double* a, double* b, int64_t* p, int64_t* i, int64_t* c, size_t n, size_t w) {                  \
    return HWY_DYNAMIC_DISPATCH(NAME)(a, b, p, i, c, n, w);                                           \
  }

TEST(SimdLu, EveryLaneIsTheOneMatrixFactorizationBitForBit) {
  expect_lanes_equal_one_matrix_code<false, 1>(LOCKSTEP_LU_ENTRY(FactorAndSolve1), 1);
  expect_lanes_equal_one_matrix_code<false, 3>(LOCKSTEP_LU_ENTRY(FactorAndSolve3), 3);
  expect_lanes_equal_one_matrix_code<false, 6>(LOCKSTEP_LU_ENTRY(FactorAndSolve6), 6);
  expect_lanes_equal_one_matrix_code<false, 13>(LOCKSTEP_LU_ENTRY(FactorAndSolve13), 13);
  expect_lanes_equal_one_matrix_code<false, 26>(LOCKSTEP_LU_ENTRY(FactorAndSolve26), 26);
  expect_lanes_equal_one_matrix_code<false, 13>(LOCKSTEP_LU_ENTRY(FactorAndSolve13), 213, true);
  expect_lanes_equal_one_matrix_code<false, 26>(LOCKSTEP_LU_ENTRY(FactorAndSolve26), 226, true);
}

TEST(SimdLu, EveryLaneIsTheOneMatrixComplexFactorizationBitForBit) {
  expect_lanes_equal_one_matrix_code<true, 1>(LOCKSTEP_LU_ENTRY(FactorAndSolveComplex1), 101);
  expect_lanes_equal_one_matrix_code<true, 3>(LOCKSTEP_LU_ENTRY(FactorAndSolveComplex3), 103);
  expect_lanes_equal_one_matrix_code<true, 6>(LOCKSTEP_LU_ENTRY(FactorAndSolveComplex6), 106);
  expect_lanes_equal_one_matrix_code<true, 13>(LOCKSTEP_LU_ENTRY(FactorAndSolveComplex13), 113);
  expect_lanes_equal_one_matrix_code<true, 13>(LOCKSTEP_LU_ENTRY(FactorAndSolveComplex13), 313, true);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
