// Tests of lockstep/core/linalg.hpp against Eigen on the host.
//
// The fixed-size kernels are our own because Eigen's decompositions cannot run in device code
// (docs/ARCHITECTURE.md section 2); Eigen (dynamic-size, so that one instantiation serves every size) is the
// reference they must agree with. Every matrix comes from a fixed-seed std::mt19937_64.
//
// Agreement criteria, used throughout:
//   * backward error: the normwise (Rigal-Gaches) backward error of a computed solution,
//         ||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf),
//     must be below kBackwardTol = 1e-13. A backward-stable solver achieves O(N eps growth) for
//     N <= 32 (every case below measures <= 1e-15); 1e-13 leaves room for growth and for the rounding
//     of the residual itself, and is ten orders of magnitude below what a wrong pivot or a wrong
//     substitution gives (the unpivoted LU below: >= 3e-4).
//   * forward agreement with Eigen: both solutions have backward errors of O(eps), so by perturbation
//     theory they differ by at most ~ cond(A) times that. We require
//         ||x - x_eigen||_inf / ||x_eigen||_inf <= kForwardTol * cond_1(A),   kForwardTol = 1e-13,
//     with cond_1 = 1 / rcond from Eigen's condition estimator (the 1-norm estimate is within a factor
//     N of the inf-norm condition number, which the 1e-13 absorbs; measured: <= 1e-15 * cond_1).
//   * products: each entry of A B computed in any summation order is within gamma_K (|A||B|)_ij of the
//     exact product (Higham, Accuracy and Stability, (3.13)), so ours and Eigen's differ by at most
//     2 gamma_K (|A||B|)_ij with gamma_K = K eps / (1 - K eps).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/linalg.hpp"

namespace {

namespace ls = lockstep;
using cplx = ls::complex<double>;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kBackwardTol = 1e-13;
constexpr double kForwardTol = 1e-13;
constexpr double kMaxGrowth = 1e3;

// ---- conversions between our fixed-size types and Eigen's dynamic ones ----

template <class E>
struct eigen_scalar {
  using type = double;
};
template <>
struct eigen_scalar<cplx> {
  using type = std::complex<double>;
};
template <class E>
using eigen_scalar_t = typename eigen_scalar<E>::type;
template <class E>
using EMat = Eigen::Matrix<eigen_scalar_t<E>, Eigen::Dynamic, Eigen::Dynamic>;
template <class E>
using EVec = Eigen::Matrix<eigen_scalar_t<E>, Eigen::Dynamic, 1>;

double to_std(double x) { return x; }
std::complex<double> to_std(const cplx& x) { return {x.re, x.im}; }
template <class E>
E from_std(const eigen_scalar_t<E>& x) {
  if constexpr (std::is_same_v<E, cplx>) {
    return cplx(x.real(), x.imag());
  } else {
    return x;
  }
}

template <class E, int R, int C>
EMat<E> to_eigen(const ls::mat<E, R, C>& A) {
  EMat<E> r(R, C);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) r(i, j) = to_std(A(i, j));
  return r;
}
template <class E, int N>
EVec<E> to_eigen(const ls::vec<E, N>& x) {
  EVec<E> r(N);
  for (int i = 0; i < N; ++i) r(i) = to_std(x[i]);
  return r;
}

// ---- random data ----

class random_source {
 public:
  explicit random_source(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return unit_(rng_); }
  template <class E>
  E next() {
    if constexpr (std::is_same_v<E, cplx>) {
      const double re = uniform();
      return cplx(re, uniform());
    } else {
      return uniform();
    }
  }
  template <class E, int R, int C>
  ls::mat<E, R, C> matrix() {
    ls::mat<E, R, C> A;
    for (int i = 0; i < R * C; ++i) A.a[i] = next<E>();
    return A;
  }
  template <class E, int N>
  ls::vec<E, N> vector() {
    ls::vec<E, N> x;
    for (int i = 0; i < N; ++i) x[i] = next<E>();
    return x;
  }

 private:
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{-1.0, 1.0};
};

// Calls f(std::integral_constant<int, N>{}) for N = 1 .. sizeof...(I).
template <class F, int... I>
void for_each_size(std::integer_sequence<int, I...>, F&& f) {
  (f(std::integral_constant<int, I + 1>{}), ...);
}

template <int M, int N>
struct saddle_size {
  static constexpr int m = M;  // constraints: rows of G, size of the zero block
  static constexpr int n = N;  // coordinates: columns of G, size of K
};
// Constraint counts m = 1..6 with n = 2..16 coordinates, and two cases filling the largest size, 32.
template <class F>
void for_each_saddle_size(F&& f) {
  f(saddle_size<1, 2>{});
  f(saddle_size<1, 9>{});
  f(saddle_size<2, 2>{});
  f(saddle_size<2, 5>{});
  f(saddle_size<3, 3>{});
  f(saddle_size<3, 10>{});
  f(saddle_size<4, 8>{});
  f(saddle_size<4, 16>{});
  f(saddle_size<5, 12>{});
  f(saddle_size<6, 6>{});
  f(saddle_size<6, 16>{});
  f(saddle_size<6, 26>{});
  f(saddle_size<2, 30>{});
}

// ---- the kernels under test, each compiled once per element type and size ----
// Inlining them into every caller at -O3 multiplies this file's compile time; the wrappers only call
// the library functions.

template <class E, int N>
[[gnu::noinline]] ls::factor_result factor_lu(ls::mat<E, N, N>& A, ls::vec<int, N>& pivot) {
  return ls::lu_factor(A, pivot);
}
template <class E, int N>
[[gnu::noinline]] void solve_lu(const ls::mat<E, N, N>& LU, const ls::vec<int, N>& pivot, ls::vec<E, N>& b) {
  ls::lu_solve(LU, pivot, b);
}
template <class E, int N, int R>
[[gnu::noinline]] void solve_lu(const ls::mat<E, N, N>& LU, const ls::vec<int, N>& pivot, ls::mat<E, N, R>& B) {
  ls::lu_solve(LU, pivot, B);
}
template <int N>
[[gnu::noinline]] ls::factor_result factor_cholesky(ls::mat<double, N, N>& A) {
  return ls::cholesky_factor(A);
}
template <int N>
[[gnu::noinline]] void solve_cholesky(const ls::mat<double, N, N>& L, ls::vec<double, N>& b) {
  ls::cholesky_solve(L, b);
}

// ---- norms and error measures ----

template <class Derived>
double norm_inf(const Eigen::MatrixBase<Derived>& A) {
  if (A.size() == 0) return 0.0;
  return A.cwiseAbs().rowwise().sum().maxCoeff();
}

template <class E>
double backward_error(const EMat<E>& A, const EVec<E>& x, const EVec<E>& b) {
  const EVec<E> r = A * x - b;
  return norm_inf(r) / (norm_inf(A) * norm_inf(x) + norm_inf(b));
}

template <class E>
double relative_difference(const EVec<E>& x, const EVec<E>& ref) {
  return norm_inf(x - ref) / norm_inf(ref);
}

// max |u_ij| over the upper triangle of the factored matrix / max |a_ij|, with |.| the pivoting
// magnitude abs1 (|re| + |im| for complex entries).
template <class E, int N>
double growth_factor(const ls::mat<E, N, N>& A, const ls::mat<E, N, N>& LU) {
  double max_a = 0.0;
  double max_u = 0.0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      max_a = std::max(max_a, ls::abs1(A(i, j)));
      if (j >= i) max_u = std::max(max_u, ls::abs1(LU(i, j)));
    }
  return max_u / max_a;
}

// ---- the check every nonsingular LU case goes through ----

struct lu_outcome {
  int info = -1;
  double growth = 0.0;
};

// The size-independent half of the check, compiled once per element type (not once per size: that
// keeps this file's compile time reasonable). x solves A x = b; the columns of X solve A X = B.
template <class E>
[[gnu::noinline]] void expect_solutions_agree_with_eigen(const EMat<E>& A, const EVec<E>& b, const EVec<E>& x,
                                                         const EMat<E>& B, const EMat<E>& X) {
  const Eigen::PartialPivLU<EMat<E>> reference(A);
  const double cond = 1.0 / reference.rcond();
  const auto N = A.rows();
  EXPECT_LE(backward_error<E>(A, x, b), kBackwardTol) << "N = " << N << ", cond_1 ~ " << cond;
  EXPECT_LE(relative_difference<E>(x, reference.solve(b)), kForwardTol * cond) << "N = " << N << ", cond_1 ~ " << cond;
  for (Eigen::Index c = 0; c < B.cols(); ++c) {
    const EVec<E> xc = X.col(c);
    const EVec<E> bc = B.col(c);
    EXPECT_LE(backward_error<E>(A, xc, bc), kBackwardTol) << "N = " << N << ", column " << c;
    EXPECT_LE(relative_difference<E>(xc, reference.solve(bc)), kForwardTol * cond) << "N = " << N << ", column " << c;
  }
}

// The textbook substitutions, row by row (each b[i] one dependent chain: over j in increasing order in
// the forward substitution, in decreasing order in the back substitution, which multiplies by the
// pivot's reciprocal): lu_solve runs both by columns for speed and claims the bitwise same result.
template <class E, int N>
[[gnu::noinline]] ls::vec<E, N> row_oriented_solve(const ls::mat<E, N, N>& LU, const ls::vec<int, N>& pivot,
                                                  ls::vec<E, N> b) {
  for (int k = 0; k < N; ++k) std::swap(b[k], b[pivot[k]]);
  for (int i = 1; i < N; ++i) {
    E s = b[i];
    for (int j = 0; j < i; ++j) s = s - LU(i, j) * b[j];
    b[i] = s;
  }
  for (int i = N - 1; i >= 0; --i) {
    E s = b[i];
    for (int j = N - 1; j > i; --j) s = s - LU(i, j) * b[j];
    b[i] = s * (E(1.0) / LU(i, i));
  }
  return b;
}

// Factors A with lu_factor, solves for b and for a block of three right-hand sides, and compares
// both with Eigen's PartialPivLU. Returns the factorization's info and growth factor.
template <class E, int N>
lu_outcome expect_lu_agrees_with_eigen(const ls::mat<E, N, N>& A, random_source& random) {
  lu_outcome outcome;
  const ls::vec<E, N> b = random.template vector<E, N>();
  const ls::mat<E, N, 3> B = random.template matrix<E, N, 3>();

  ls::mat<E, N, N> LU = A;
  ls::vec<int, N> pivot;
  const ls::factor_result r = factor_lu(LU, pivot);
  outcome.info = r.info;
  EXPECT_EQ(r.info, ls::lu_ok) << "N = " << N;
  EXPECT_EQ(r.column, -1) << "N = " << N;
  if (r.info != ls::lu_ok) return outcome;
  outcome.growth = growth_factor(A, LU);

  ls::vec<E, N> x = b;
  solve_lu(LU, pivot, x);
  const ls::vec<E, N> x_rows = row_oriented_solve(LU, pivot, b);
  bool rows_match = true;
  for (int i = 0; i < N; ++i) rows_match = rows_match && to_std(x[i]) == to_std(x_rows[i]);
  EXPECT_TRUE(rows_match) << "N = " << N << ": the column-oriented forward substitution differs from the row loop";

  // Several right-hand sides: each column must be exactly what the vector solve gives.
  ls::mat<E, N, 3> X = B;
  solve_lu(LU, pivot, X);
  bool columns_match = true;
  for (int c = 0; c < 3; ++c) {
    ls::vec<E, N> column;
    for (int i = 0; i < N; ++i) column[i] = B(i, c);
    solve_lu(LU, pivot, column);
    for (int i = 0; i < N; ++i) columns_match = columns_match && to_std(X(i, c)) == to_std(column[i]);
  }
  EXPECT_TRUE(columns_match) << "N = " << N << ": the block solve differs from column-by-column solves";
  // Only the first `count` columns are solved; the others are left exactly as they were.
  ls::mat<E, N, 3> X2 = B;
  ls::lu_solve(LU, pivot, X2, 2);
  bool partial_match = true;
  for (int i = 0; i < N; ++i) {
    for (int c = 0; c < 2; ++c) partial_match = partial_match && to_std(X2(i, c)) == to_std(X(i, c));
    partial_match = partial_match && to_std(X2(i, 2)) == to_std(B(i, 2));
  }
  EXPECT_TRUE(partial_match) << "N = " << N << ": lu_solve with count = 2 of 3 columns";

  expect_solutions_agree_with_eigen<E>(to_eigen(A), to_eigen(b), to_eigen(x), to_eigen(B), to_eigen(X));
  return outcome;
}

// Eigen's permutationP() * A must be exactly our P A (a permutation of exact entries: compared
// bitwise), and the factors must agree (L strictly below the diagonal, U on and above it, stored
// as Eigen stores them) to within conditioning.
[[gnu::noinline]] void expect_same_pivots_and_factors_as_eigen(const Eigen::MatrixXd& A, const Eigen::MatrixXd& PA,
                                                              const Eigen::MatrixXd& LU) {
  const Eigen::PartialPivLU<Eigen::MatrixXd> reference(A);
  const Eigen::MatrixXd eigen_PA = reference.permutationP() * A;
  EXPECT_TRUE(PA == eigen_PA) << "N = " << A.rows();
  const double diff = (LU - reference.matrixLU()).cwiseAbs().maxCoeff();
  EXPECT_LE(diff, kForwardTol / reference.rcond()) << "N = " << A.rows();
}

// The Cholesky factor is unique, so ours (the lower triangle of L) matches Eigen's to within the
// factor's conditioning, at most cond(A) (Higham, Accuracy and Stability, Theorem 10.8); the
// solution x of A x = b passes the backward and forward criteria.
[[gnu::noinline]] void expect_cholesky_agrees_with_eigen(const Eigen::MatrixXd& A, const Eigen::MatrixXd& L,
                                                        const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  const Eigen::LLT<Eigen::MatrixXd> reference(A);
  ASSERT_EQ(reference.info(), Eigen::Success);
  const double cond = 1.0 / reference.rcond();
  const Eigen::MatrixXd Le = reference.matrixL();
  const Eigen::MatrixXd ours = L.triangularView<Eigen::Lower>();
  EXPECT_LE((ours - Le).cwiseAbs().maxCoeff() / Le.cwiseAbs().maxCoeff(), kForwardTol * cond)
      << "N = " << A.rows();
  EXPECT_LE(backward_error<double>(A, x, b), kBackwardTol) << "N = " << A.rows();
  EXPECT_LE(relative_difference<double>(x, reference.solve(b)), kForwardTol * cond) << "N = " << A.rows();
}

// ---- a deliberately unpivoted LU: what KokkosKernels' SerialLU does and docs/ARCHITECTURE.md section 2 forbids.
// It exists only to show that the saddle-point matrices below defeat it.

template <class E, int N>
struct unpivoted_outcome {
  bool zero_pivot = false;
  double growth = 0.0;
  ls::vec<E, N> x;
};

template <class E, int N>
unpivoted_outcome<E, N> unpivoted_lu_solve(ls::mat<E, N, N> A, ls::vec<E, N> b) {
  unpivoted_outcome<E, N> out;
  const ls::mat<E, N, N> original = A;
  for (int k = 0; k < N; ++k) {
    if (ls::abs1(A(k, k)) == 0.0) {
      out.zero_pivot = true;
      return out;
    }
    for (int i = k + 1; i < N; ++i) {
      const E l = A(i, k) / A(k, k);
      A(i, k) = l;
      for (int j = k + 1; j < N; ++j) A(i, j) = A(i, j) - l * A(k, j);
    }
  }
  out.growth = growth_factor(original, A);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < i; ++j) b[i] = b[i] - A(i, j) * b[j];
  for (int i = N - 1; i >= 0; --i) {
    for (int j = i + 1; j < N; ++j) b[i] = b[i] - A(i, j) * b[j];
    b[i] = b[i] / A(i, i);
  }
  out.x = b;
  return out;
}

// ---- saddle-point matrices of constrained mechanics ----

// Symmetric and indefinite by construction: K(0,0) < 0 < K(1,1) (a symmetric matrix with diagonal
// entries of both signs has eigenvalues of both signs).
template <int N>
ls::mat<double, N, N> random_symmetric_indefinite(random_source& random) {
  static_assert(N >= 2);
  ls::mat<double, N, N> K;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) K(i, j) = K(j, i) = random.uniform();
  K(0, 0) = -0.5 - 0.5 * std::abs(K(0, 0));
  K(1, 1) = 0.5 + 0.5 * std::abs(K(1, 1));
  return K;
}

template <int N>
ls::mat<double, N, N> random_spd(random_source& random) {
  const auto B = random.template matrix<double, N, N>();
  ls::mat<double, N, N> M = B * ls::transpose(B);
  for (int i = 0; i < N; ++i) M(i, i) = M(i, i) + 0.1 * N;
  return M;
}

bool is_symmetric_indefinite(const Eigen::MatrixXd& K) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
  return eig.eigenvalues().minCoeff() < 0.0 && eig.eigenvalues().maxCoeff() > 0.0;
}

// [[0, G], [G^T, S]]: the zero block FIRST, as when the multipliers are ordered before the
// coordinates. Column 0 is zero in the first m rows, so elimination without interchanges meets
// an exact zero pivot at once.
template <class E, int M, int N>
ls::mat<E, M + N, M + N> saddle_zero_first(const ls::mat<double, M, N>& G, const ls::mat<E, N, N>& S) {
  ls::mat<E, M + N, M + N> A;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      A(i, M + j) = E(G(i, j));
      A(M + j, i) = E(G(i, j));
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) A(M + i, M + j) = S(i, j);
  return A;
}

// [[S, G^T], [G, 0]]: the coordinates first; hard for an unpivoted LU when S(0,0) is zero or tiny.
template <class E, int M, int N>
ls::mat<E, M + N, M + N> saddle_block_first(const ls::mat<double, M, N>& G, const ls::mat<E, N, N>& S) {
  ls::mat<E, M + N, M + N> A;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) A(i, j) = S(i, j);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      A(N + i, j) = E(G(i, j));
      A(j, N + i) = E(G(i, j));
    }
  return A;
}

template <class E, int N>
ls::mat<E, N, N> to_element(const ls::mat<double, N, N>& A) {
  ls::mat<E, N, N> r;
  for (int i = 0; i < N * N; ++i) r.a[i] = E(A.a[i]);
  return r;
}

template <class E>
[[gnu::noinline]] void expect_wrong_solution(const EMat<E>& A, const EVec<E>& b, const EVec<E>& x) {
  const EVec<E> reference = Eigen::PartialPivLU<EMat<E>>(A).solve(b);
  EXPECT_GT(backward_error<E>(A, x, b), 1e5 * kBackwardTol)
      << "N = " << A.rows() << ", forward error " << relative_difference<E>(x, reference);
}

// Asserts the unpivoted LU breaks down on A: a zero pivot or, for a tiny pivot, element growth above
// 1e10 and a backward error 1e5 times what we accept from a stable solver. (With the seeds below the
// unpivoted LU shows growth >= 6e12 and backward errors >= 3e-4; ours, growth <= 10 and backward
// errors <= 1e-15.)
template <class E, int N>
void expect_unpivoted_lu_fails(const ls::mat<E, N, N>& A, random_source& random, bool expect_zero_pivot) {
  const ls::vec<E, N> b = random.template vector<E, N>();
  const unpivoted_outcome<E, N> u = unpivoted_lu_solve(A, b);
  if (expect_zero_pivot) {
    EXPECT_TRUE(u.zero_pivot) << "N = " << N;
    return;
  }
  ASSERT_FALSE(u.zero_pivot);
  EXPECT_GT(u.growth, 1e10) << "N = " << N;
  expect_wrong_solution<E>(to_eigen(A), to_eigen(b), to_eigen(u.x));
}

// Radau IIA (3 stages): the complex eigenvalue pair alpha +- i beta of the inverse of its Butcher
// matrix (Hairer & Wanner IV.8, (8.16)); with step h the second Newton block is
// ((alpha + i beta) / h) M + K for a first-order system.
constexpr double kRadauAlpha = 2.6810828736277521;
constexpr double kRadauBeta = 3.0504301992474105;

// ---- matrices that must be reported singular ----

template <int N>
ls::mat<double, N, N> with_repeated_row(ls::mat<double, N, N> A, int from, int to) {
  for (int j = 0; j < N; ++j) A(to, j) = A(from, j);
  return A;
}

}  // namespace

// =====================================================================================================
// LU with partial pivoting
// =====================================================================================================

TEST(LuFactor, FactorsASmallMatrixExactlyAsByHand) {
  // Arrange: dyadic entries, so every step below is exact. Column 0's largest entry is in row 2.
  ls::mat<double, 3, 3> A;
  const double entries[9] = {1.0, 2.0, 1.0,   //
                             0.0, 1.0, 3.0,   //
                             2.0, 2.0, 4.0};
  for (int i = 0; i < 9; ++i) A.a[i] = entries[i];
  ls::vec<int, 3> pivot;

  // Act
  const ls::factor_result r = factor_lu(A, pivot);

  // Assert, by hand: step 0 swaps rows 0 and 2, giving multipliers 0 (row "0 1 3") and 1/2 (row
  // "1 2 1" - 1/2 "2 2 4" = "0 1 -1"); step 1 sees a tie |1| = |1| and keeps row 1 (the first
  // maximum, as LAPACK's idamax); step 2 leaves -1 - 1 * 3 = -4.
  ASSERT_EQ(r.info, ls::lu_ok);
  EXPECT_EQ(pivot[0], 2);
  EXPECT_EQ(pivot[1], 1);
  EXPECT_EQ(pivot[2], 2);
  const double expected[9] = {2.0, 2.0, 4.0,    //
                              0.0, 1.0, 3.0,    //
                              0.5, 1.0, -4.0};  // row "0 1 -1" minus 1 * "0 1 3"
  for (int i = 0; i < 9; ++i) EXPECT_EQ(A.a[i], expected[i]) << "entry " << i;
}

TEST(LuFactor, AgreesWithEigenOnRandomMatricesOfEverySizeUpTo32) {
  random_source random(20240601);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 3; ++trial) {
      const auto A = random.template matrix<double, N, N>();
      const lu_outcome out = expect_lu_agrees_with_eigen(A, random);
      EXPECT_LT(out.growth, kMaxGrowth) << "N = " << N;
    }
  });
}

TEST(LuFactor, ChoosesTheSamePivotRowsAsEigenOnRandomMatrices) {
  random_source random(7);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    const auto A = random.template matrix<double, N, N>();
    ls::mat<double, N, N> LU = A;
    ls::vec<int, N> pivot;
    ASSERT_EQ(factor_lu(LU, pivot).info, ls::lu_ok);

    // Our interchanges applied in order give P A.
    ls::mat<double, N, N> PA = A;
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < N; ++j) std::swap(PA(k, j), PA(pivot[k], j));
    expect_same_pivots_and_factors_as_eigen(to_eigen(A), to_eigen(PA), to_eigen(LU));
  });
}

TEST(LuFactor, AcceptsTheEmptyMatrix) {
  ls::mat<double, 0, 0> A;
  ls::vec<int, 0> pivot;
  const ls::factor_result r = factor_lu(A, pivot);
  EXPECT_EQ(r.info, ls::lu_ok);
  ls::vec<double, 0> b;
  solve_lu(A, pivot, b);  // nothing to do, and nothing out of bounds
}

// =====================================================================================================
// Saddle-point matrices
// =====================================================================================================

TEST(LuFactor, SolvesSaddlePointMatricesWithTheZeroBlockFirstThatDefeatUnpivotedLu) {
  random_source random(42);
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    SCOPED_TRACE("m = " + std::to_string(M) + ", n = " + std::to_string(N));
    for (int trial = 0; trial < 3; ++trial) {
      // Arrange: G random (full rank with probability 1), K symmetric indefinite.
      const auto G = random.template matrix<double, M, N>();
      const auto K = random_symmetric_indefinite<N>(random);
      ASSERT_TRUE(is_symmetric_indefinite(to_eigen(K)));
      const auto A = saddle_zero_first<double>(G, K);

      // Assert: the unpivoted LU meets a zero pivot at once; ours pivots and agrees with Eigen.
      expect_unpivoted_lu_fails(A, random, /*expect_zero_pivot=*/true);
      const lu_outcome out = expect_lu_agrees_with_eigen(A, random);
      EXPECT_LT(out.growth, kMaxGrowth);
    }
  });
}

// The textbook right-looking elimination with partial pivoting, without lu_factor's skip of zero
// multipliers (for the bitwise comparisons below; finite, nonsingular input only).
template <class E, int N>
[[gnu::noinline]] void textbook_lu(ls::mat<E, N, N>& A, ls::vec<int, N>& pivot) {
  // The pivot's magnitude as LAPACK's i<t>amax measures it: |x| for a real, |re| + |im| for a complex.
  const auto magnitude = [](const E& x) {
    if constexpr (std::is_same_v<E, double>)
      return std::abs(x);
    else
      return std::abs(x.re) + std::abs(x.im);
  };
  for (int k = 0; k < N; ++k) {
    int p = k;
    for (int i = k + 1; i < N; ++i)
      if (magnitude(A(i, k)) > magnitude(A(p, k))) p = i;
    pivot[k] = p;
    for (int j = 0; j < N; ++j) std::swap(A(k, j), A(p, j));
    for (int i = k + 1; i < N; ++i) {
      const E l = A(i, k) / A(k, k);
      A(i, k) = l;
      for (int j = k + 1; j < N; ++j) A(i, j) = A(i, j) - l * A(k, j);
    }
  }
}

// lu_factor skips the row update of a zero multiplier: on matrices with zero blocks (where it skips
// most), the factors and pivots must equal the textbook elimination's (== : the sign of a zero is the
// one difference the skip allows).
TEST(LuFactor, SkippingZeroMultipliersLeavesTheFactorsBitwiseAsTheTextbookElimination) {
  random_source random(47);
  int skipped_somewhere = 0;
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    for (int trial = 0; trial < 3; ++trial) {
      const auto G = random.template matrix<double, M, N>();
      const auto K = random_symmetric_indefinite<N>(random);
      for (const auto& A : {saddle_zero_first<double>(G, K), saddle_block_first<double>(G, K)}) {
        auto ours = A, theirs = A;
        ls::vec<int, M + N> p_ours, p_theirs;
        ASSERT_EQ(factor_lu(ours, p_ours).info, ls::lu_ok);
        textbook_lu(theirs, p_theirs);
        bool same = true;
        for (int i = 0; i < (M + N) * (M + N); ++i) same = same && ours.a[i] == theirs.a[i];
        for (int i = 0; i < M + N; ++i) same = same && p_ours[i] == p_theirs[i];
        EXPECT_TRUE(same) << "m = " << M << ", n = " << N;
        for (int i = 0; i < (M + N) * (M + N); ++i) skipped_somewhere += (i % (M + N) < i / (M + N)) && ours.a[i] == 0.0;
      }
    }
  });
  EXPECT_GT(skipped_somewhere, 0) << "no zero multiplier occurred: the test would not see the skip";
}

// The same for dense random matrices of every size, real and complex, bit pattern for bit pattern:
// lu_factor must perform the textbook elimination's operations in its order on dense matrices too.
template <class E>
void expect_bitwise_textbook_factors_on_every_size(std::uint64_t seed) {
  random_source random(seed);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 3; ++trial) {
      const auto A = random.template matrix<E, N, N>();
      auto ours = A, theirs = A;
      ls::vec<int, N> p_ours, p_theirs;
      ASSERT_EQ(factor_lu(ours, p_ours).info, ls::lu_ok) << "N = " << N;
      textbook_lu(theirs, p_theirs);
      EXPECT_EQ(std::memcmp(ours.a, theirs.a, sizeof ours.a), 0) << "N = " << N << ": factors differ";
      EXPECT_EQ(std::memcmp(p_ours.a, p_theirs.a, sizeof p_ours.a), 0) << "N = " << N << ": pivots differ";
    }
  });
}

TEST(LuFactor, IsBitwiseTheTextbookEliminationOnRandomMatricesOfEverySizeUpTo32) {
  expect_bitwise_textbook_factors_on_every_size<double>(11);
}

TEST(LuFactorComplex, IsBitwiseTheTextbookEliminationOnRandomMatricesOfEverySizeUpTo32) {
  expect_bitwise_textbook_factors_on_every_size<ls::complex<double>>(13);
}

TEST(LuFactor, SolvesSaddlePointMatricesWhoseLeadingEntryIsZeroOrTiny) {
  random_source random(43);
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    SCOPED_TRACE("m = " + std::to_string(M) + ", n = " + std::to_string(N));
    for (const double leading : {0.0, 1e-14, -1e-14}) {
      SCOPED_TRACE(testing::Message() << "K(0,0) = " << leading);
      // Arrange: K symmetric indefinite with K(0,0) zero or at rounding level, in both orderings.
      const auto G = random.template matrix<double, M, N>();
      auto K = random_symmetric_indefinite<N>(random);
      K(0, 0) = leading;
      ASSERT_TRUE(is_symmetric_indefinite(to_eigen(K)));
      const auto zero_first = saddle_zero_first<double>(G, K);
      const auto block_first = saddle_block_first<double>(G, K);

      // Assert: unpivoted elimination fails on both orderings (a zero pivot, or a 1e-14 pivot whose
      // multipliers of 1e14 destroy the trailing block); ours succeeds with small growth.
      expect_unpivoted_lu_fails(zero_first, random, true);
      expect_unpivoted_lu_fails(block_first, random, leading == 0.0);
      const lu_outcome a = expect_lu_agrees_with_eigen(zero_first, random);
      const lu_outcome b = expect_lu_agrees_with_eigen(block_first, random);
      EXPECT_LT(a.growth, kMaxGrowth);
      EXPECT_LT(b.growth, kMaxGrowth);
    }
  });
}

// =====================================================================================================
// Complex LU (Radau's second block)
// =====================================================================================================

TEST(LuFactorComplex, AgreesWithEigenOnRandomComplexMatricesOfEverySizeUpTo32) {
  random_source random(99);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 2; ++trial) {
      const auto A = random.template matrix<cplx, N, N>();
      const lu_outcome out = expect_lu_agrees_with_eigen(A, random);
      EXPECT_LT(out.growth, kMaxGrowth) << "N = " << N;
    }
  });
}

TEST(LuFactorComplex, SolvesRadauSecondBlockSaddlePointMatricesWithAComplexShift) {
  random_source random(314);
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    SCOPED_TRACE("m = " + std::to_string(M) + ", n = " + std::to_string(N));
    for (const double h : {1.0, 1e-3}) {
      // Arrange: leading block (alpha + i beta)/h M + K, M symmetric positive definite, K symmetric
      // indefinite, bordered by a real G with the zero block first and, separately, last.
      const auto G = random.template matrix<double, M, N>();
      const auto Mass = random_spd<N>(random);
      const auto K = random_symmetric_indefinite<N>(random);
      const cplx shift(kRadauAlpha / h, kRadauBeta / h);
      const ls::mat<cplx, N, N> S = shift * to_element<cplx>(Mass) + to_element<cplx>(K);
      const auto zero_first = saddle_zero_first<cplx>(G, S);
      const auto block_first = saddle_block_first<cplx>(G, S);

      // Assert
      expect_unpivoted_lu_fails(zero_first, random, true);
      const lu_outcome a = expect_lu_agrees_with_eigen(zero_first, random);
      const lu_outcome b = expect_lu_agrees_with_eigen(block_first, random);
      EXPECT_LT(a.growth, kMaxGrowth);
      EXPECT_LT(b.growth, kMaxGrowth);
    }
  });
}

TEST(LuFactorComplex, SolvesComplexSaddlePointMatricesWithAZeroOrTinyLeadingEntry) {
  random_source random(2718);
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    SCOPED_TRACE("m = " + std::to_string(M) + ", n = " + std::to_string(N));
    for (const cplx leading : {cplx(0.0), cplx(1e-14, -1e-14)}) {
      const auto G = random.template matrix<double, M, N>();
      const auto Mass = random_spd<N>(random);
      const auto K = random_symmetric_indefinite<N>(random);
      ls::mat<cplx, N, N> S = cplx(kRadauAlpha, kRadauBeta) * to_element<cplx>(Mass) + to_element<cplx>(K);
      S(0, 0) = leading;
      const auto block_first = saddle_block_first<cplx>(G, S);

      expect_unpivoted_lu_fails(block_first, random, leading.re == 0.0);
      const lu_outcome out = expect_lu_agrees_with_eigen(block_first, random);
      EXPECT_LT(out.growth, kMaxGrowth);
    }
  });
}

// =====================================================================================================
// Singular and non-finite matrices
// =====================================================================================================

TEST(LuFactor, ReportsTheColumnOfAHandCheckableSingularMatrix) {
  // [[1, 2], [2, 4]]: row 1 is pivot (|2| > |1|), multiplier 1/2, then 2 - (1/2) 4 = 0 exactly.
  ls::mat<double, 2, 2> A;
  A(0, 0) = 1.0;
  A(0, 1) = 2.0;
  A(1, 0) = 2.0;
  A(1, 1) = 4.0;
  ls::vec<int, 2> pivot;
  const ls::factor_result r = factor_lu(A, pivot);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 1);
}

TEST(LuFactor, ReportsAZeroColumnAsSingularAtThatColumn) {
  // Elimination only ever subtracts multiples of pivot-row entries, which are zero in a zero column,
  // so the column stays exactly zero until its own step.
  random_source random(11);
  for_each_size(std::integer_sequence<int, 0, 3, 7, 15, 31>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int zero_column = 0; zero_column < N; zero_column += (N > 4 ? 3 : 1)) {
      auto A = random.template matrix<double, N, N>();
      for (int i = 0; i < N; ++i) A(i, zero_column) = 0.0;
      ls::vec<int, N> pivot;
      const ls::factor_result r = factor_lu(A, pivot);
      EXPECT_EQ(r.info, ls::lu_singular) << "N = " << N << ", zero column " << zero_column;
      EXPECT_EQ(r.column, zero_column) << "N = " << N;
    }
  });
}

TEST(LuFactor, ReportsARepeatedRowAsSingular) {
  // Two equal rows receive identical updates until one becomes a pivot row; the other's multiplier is
  // then x / x = 1 exactly, it is eliminated to exact zeros and is left for the last column.
  random_source random(12);
  for_each_size(std::integer_sequence<int, 1, 2, 4, 8, 15, 23, 31>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 4; ++trial) {
      const int from = trial % N;
      const int to = (trial * 5 + 1) % N;
      if (from == to) continue;
      auto A = with_repeated_row(random.template matrix<double, N, N>(), from, to);
      ls::vec<int, N> pivot;
      const ls::factor_result r = factor_lu(A, pivot);
      EXPECT_EQ(r.info, ls::lu_singular) << "N = " << N << ", row " << from << " copied to " << to;
      EXPECT_EQ(r.column, N - 1) << "N = " << N;
    }
  });
}

TEST(LuFactor, ReportsASaddlePointMatrixWithRedundantConstraintsAsSingular) {
  random_source random(13);
  for_each_saddle_size([&](auto size) {
    constexpr int M = decltype(size)::m;
    constexpr int N = decltype(size)::n;
    if constexpr (M >= 2) {
      SCOPED_TRACE("m = " + std::to_string(M) + ", n = " + std::to_string(N));
      // Arrange: constraint row m-1 repeats row 0 (the same joint imposed twice), in both orderings.
      auto G = random.template matrix<double, M, N>();
      for (int j = 0; j < N; ++j) G(M - 1, j) = G(0, j);
      const auto K = random_symmetric_indefinite<N>(random);
      auto zero_first = saddle_zero_first<double>(G, K);
      auto block_first = saddle_block_first<double>(G, K);
      ls::vec<int, M + N> pivot;

      // Act, Assert
      const ls::factor_result a = factor_lu(zero_first, pivot);
      EXPECT_EQ(a.info, ls::lu_singular);
      EXPECT_GE(a.column, 0);
      EXPECT_LT(a.column, M + N);
      const ls::factor_result b = factor_lu(block_first, pivot);
      EXPECT_EQ(b.info, ls::lu_singular);
      EXPECT_GE(b.column, 0);
      EXPECT_LT(b.column, M + N);
    }
  });
}

TEST(LuFactorComplex, ReportsRepeatedRowsAndZeroColumnsAsSingular) {
  // Smith's x / x has real part exactly 1 but an imaginary part at rounding level, so unlike the real
  // case the repeated row is eliminated to rounding noise, not to zeros: below the threshold here
  // (and in all but ~1e-4 of random cases).
  random_source random(14);
  auto A = random.template matrix<cplx, 9, 9>();
  for (int j = 0; j < 9; ++j) A(6, j) = A(2, j);
  ls::vec<int, 9> pivot;
  const ls::factor_result r = factor_lu(A, pivot);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 8);

  auto B = random.template matrix<cplx, 9, 9>();
  for (int i = 0; i < 9; ++i) B(i, 4) = cplx(0.0);
  const ls::factor_result s = factor_lu(B, pivot);
  EXPECT_EQ(s.info, ls::lu_singular);
  EXPECT_EQ(s.column, 4);
}

// Nothing is factored: the matrix becomes the identity with pivots that interchange nothing, so that a
// solve with it (which a caller may run before it reads the status: the lanes do) is finite.
TEST(LuFactor, ReportsNanAndInfiniteEntriesAndLeavesTheIdentity) {
  random_source random(15);
  const double bad_values[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
  for (const double bad : bad_values) {
    for (const int position : {0, 17, 63}) {
      auto A = random.template matrix<double, 8, 8>();
      A.a[position] = bad;
      ls::vec<int, 8> pivot;
      const ls::factor_result r = factor_lu(A, pivot);
      EXPECT_EQ(r.info, ls::lu_not_finite) << bad << " at " << position;
      EXPECT_EQ(r.column, -1);
      for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(pivot[i], i);
        for (int j = 0; j < 8; ++j) EXPECT_EQ(A(i, j), i == j ? 1.0 : 0.0) << "(" << i << ", " << j << ")";
      }
      auto b = random.template vector<double, 8>();
      const auto rhs = b;
      ls::lu_solve(A, pivot, b);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], rhs[i]);
    }
  }
}

// The threshold below which a pivot is singular is N eps times the largest magnitude of the matrix's
// entries, whichever their signs (the real matrix's scan reads it from the entries' bits), and a matrix
// of zeros of either sign is singular at its first column.
TEST(LuFactor, ScalesItsSingularityThresholdByTheLargestMagnitudeOfEitherSign) {
  const double threshold = 3 * std::numeric_limits<double>::epsilon() * 1e10;
  for (const double pivot_11 : {2.0 * threshold, 0.5 * threshold, -2.0 * threshold, -0.5 * threshold}) {
    ls::mat<double, 3, 3> A;
    A(0, 0) = -1e10;
    A(1, 1) = pivot_11;
    A(2, 2) = 1.0;
    A(2, 0) = -0.0;
    ls::vec<int, 3> pivot;
    const ls::factor_result r = factor_lu(A, pivot);
    if (std::abs(pivot_11) > threshold) {
      EXPECT_EQ(r.info, ls::lu_ok) << pivot_11;
    } else {
      EXPECT_EQ(r.info, ls::lu_singular) << pivot_11;
      EXPECT_EQ(r.column, 1) << pivot_11;
    }
  }
  for (const double zero : {0.0, -0.0}) {
    ls::mat<double, 4, 4> Z;
    for (double& z : Z.a) z = zero;
    ls::vec<int, 4> pivot;
    const ls::factor_result r = factor_lu(Z, pivot);
    EXPECT_EQ(r.info, ls::lu_singular) << zero;
    EXPECT_EQ(r.column, 0) << zero;
  }
}

TEST(LuFactorComplex, ReportsANanOrInfiniteRealOrImaginaryPart) {
  random_source random(16);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const cplx bad : {cplx(nan, 0.0), cplx(0.0, nan), cplx(inf, 1.0), cplx(1.0, -inf)}) {
    auto A = random.template matrix<cplx, 5, 5>();
    A(3, 1) = bad;
    ls::vec<int, 5> pivot;
    EXPECT_EQ(factor_lu(A, pivot).info, ls::lu_not_finite);
  }
}

// =====================================================================================================
// Cholesky
// =====================================================================================================

namespace {

// B B^T + 0.01 I with B random: SPD, with condition numbers up to ~1e5 (random_spd's shift is 0.1 N).
template <int N>
ls::mat<double, N, N> random_spd_small_shift(random_source& random) {
  const auto B = random.template matrix<double, N, N>();
  ls::mat<double, N, N> A = B * ls::transpose(B);
  for (int i = 0; i < N; ++i) A(i, i) = A(i, i) + 0.01;
  return A;
}

}  // namespace

TEST(CholeskyFactor, AgreesWithEigenOnRandomSpdMatricesOfEverySizeUpTo32) {
  random_source random(17);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 2; ++trial) {
      // Arrange
      const ls::mat<double, N, N> A = random_spd_small_shift<N>(random);
      const auto b = random.template vector<double, N>();

      // Act
      ls::mat<double, N, N> L = A;
      const ls::factor_result r = factor_cholesky(L);
      ASSERT_EQ(r.info, ls::lu_ok) << "N = " << N;
      ls::vec<double, N> x = b;
      solve_cholesky(L, x);

      // Assert
      expect_cholesky_agrees_with_eigen(to_eigen(A), to_eigen(L), to_eigen(b), to_eigen(x));
    }
  });
}

TEST(CholeskySolveColumns, SolvesEveryColumnAsEigenDoes) {
  random_source random(43);
  for_each_size(std::integer_sequence<int, 1, 2, 4, 7, 16>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    // Arrange: an SPD matrix and three right-hand sides.
    const ls::mat<double, N, N> A = random_spd_small_shift<N>(random);
    const auto B = random.template matrix<double, N, 3>();
    ls::mat<double, N, N> L = A;
    ASSERT_EQ(factor_cholesky(L).info, ls::lu_ok) << "N = " << N;

    // Act
    ls::mat<double, N, 3> X = B;
    ls::cholesky_solve_columns(L, X);

    // Assert: each column is A^-1 times B's, as Eigen solves it.
    const Eigen::LLT<Eigen::MatrixXd> reference(to_eigen(A));
    const double cond = 1.0 / reference.rcond();
    const Eigen::MatrixXd Xe = to_eigen(X), Be = to_eigen(B);
    for (int c = 0; c < 3; ++c) {
      EXPECT_LE(backward_error<double>(to_eigen(A), Eigen::VectorXd(Xe.col(c)), Eigen::VectorXd(Be.col(c))),
                kBackwardTol)
          << "N = " << N << ", column " << c;
      EXPECT_LE(relative_difference<double>(Eigen::VectorXd(Xe.col(c)), reference.solve(Eigen::VectorXd(Be.col(c)))),
                kForwardTol * cond)
          << "N = " << N << ", column " << c;
    }
  });
}

TEST(CholeskyFactor, ReportsTheFirstNonPositivePivotOfIndefiniteMatrices) {
  // diag(1, 2, -1, 3): the third pivot is negative.
  ls::mat<double, 4, 4> D;
  D(0, 0) = 1.0;
  D(1, 1) = 2.0;
  D(2, 2) = -1.0;
  D(3, 3) = 3.0;
  ls::factor_result r = factor_cholesky(D);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 2);

  // [[1, 2], [2, 1]]: d_1 = 1 - 2 * 2 = -3.
  ls::mat<double, 2, 2> A;
  A(0, 0) = 1.0;
  A(0, 1) = A(1, 0) = 2.0;
  A(1, 1) = 1.0;
  r = factor_cholesky(A);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 1);

  // Random symmetric indefinite matrices with K(0,0) < 0 fail at the first column.
  random_source random(18);
  for_each_size(std::integer_sequence<int, 1, 4, 11, 31>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    auto K = random_symmetric_indefinite<N>(random);
    const ls::factor_result s = factor_cholesky(K);
    EXPECT_EQ(s.info, ls::lu_singular) << "N = " << N;
    EXPECT_EQ(s.column, 0) << "N = " << N;
  });
}

TEST(CholeskyFactor, ReportsSingularGramMatricesOfRedundantConstraints) {
  // [[1, 1], [1, 1]]: d_1 = 1 - 1 * 1 = 0 exactly.
  ls::mat<double, 2, 2> A;
  A(0, 0) = A(0, 1) = A(1, 0) = A(1, 1) = 1.0;
  ls::factor_result r = factor_cholesky(A);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 1);

  // G G^T with G's last row a repeat of its first: positive semidefinite and singular.
  random_source random(19);
  auto G = random.template matrix<double, 5, 12>();
  for (int j = 0; j < 12; ++j) G(4, j) = G(0, j);
  ls::mat<double, 5, 5> gram = G * ls::transpose(G);
  r = factor_cholesky(gram);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 4);

  // The zero matrix fails at once.
  ls::mat<double, 3, 3> Z;
  r = factor_cholesky(Z);
  EXPECT_EQ(r.info, ls::lu_singular);
  EXPECT_EQ(r.column, 0);
}

TEST(CholeskyFactor, ReportsNanAndInfiniteEntries) {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    ls::mat<double, 3, 3> A = ls::mat<double, 3, 3>::identity();
    A(2, 1) = bad;
    EXPECT_EQ(factor_cholesky(A).info, ls::lu_not_finite);
  }
}

// =====================================================================================================
// L D L^T
// =====================================================================================================

namespace {

template <int N>
[[gnu::noinline]] ls::factor_result factor_ldlt(ls::mat<double, N, N>& A, ls::vec<double, N>& dinv) {
  return ls::ldlt_factor(A, dinv);
}

// What cholesky_factor says of a copy of A: L D L^T is to say the same (info, column) of every matrix.
template <int N>
void expect_ldlt_reports_as_cholesky(const ls::mat<double, N, N>& A) {
  ls::mat<double, N, N> L = A, LD = A;
  ls::vec<double, N> dinv;
  const ls::factor_result chol = factor_cholesky(L), ldlt = factor_ldlt(LD, dinv);
  EXPECT_EQ(ldlt.info, chol.info) << "N = " << N;
  EXPECT_EQ(ldlt.column, chol.column) << "N = " << N;
}

}  // namespace

TEST(LdltFactor, AgreesWithEigenOnRandomSpdMatricesOfEverySizeUpTo32) {
  random_source random(41);
  for_each_size(std::make_integer_sequence<int, 32>{}, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int trial = 0; trial < 2; ++trial) {
      // Arrange
      const ls::mat<double, N, N> A = random_spd_small_shift<N>(random);
      const auto b = random.template vector<double, N>();

      // Act
      ls::mat<double, N, N> LD = A;
      ls::vec<double, N> dinv;
      ASSERT_EQ(factor_ldlt(LD, dinv).info, ls::lu_ok) << "N = " << N;
      ls::vec<double, N> x = b;
      ls::ldlt_solve(LD, dinv, x);

      // Assert: the same solution as Eigen's Cholesky, and L D^(1/2) is its factor L.
      const Eigen::LLT<Eigen::MatrixXd> reference(to_eigen(A));
      const double cond = 1.0 / reference.rcond();
      EXPECT_LE(backward_error<double>(to_eigen(A), to_eigen(x), to_eigen(b)), kBackwardTol) << "N = " << N;
      EXPECT_LE(relative_difference<double>(to_eigen(x), reference.solve(to_eigen(b))), kForwardTol * cond)
          << "N = " << N;
      const Eigen::MatrixXd Le = reference.matrixL();
      for (int j = 0; j < N; ++j) {
        EXPECT_EQ(dinv[j], 1.0 / LD(j, j)) << "N = " << N << ", column " << j;
        const double root = std::sqrt(LD(j, j));
        for (int i = j; i < N; ++i) {
          const double ours = i == j ? root : LD(i, j) * root;
          EXPECT_LE(std::abs(ours - Le(i, j)), kForwardTol * cond * Le.cwiseAbs().maxCoeff())
              << "N = " << N << ", entry " << i << ", " << j;
        }
      }
    }
  });
}

TEST(LdltFactor, ReportsWhatCholeskyReportsOfIndefiniteSingularAndNonFiniteMatrices) {
  ls::mat<double, 4, 4> D;  // diag(1, 2, -1, 3): the third pivot is negative
  D(0, 0) = 1.0;
  D(1, 1) = 2.0;
  D(2, 2) = -1.0;
  D(3, 3) = 3.0;
  expect_ldlt_reports_as_cholesky(D);
  ls::vec<double, 4> dinv;
  ls::mat<double, 4, 4> LD = D;
  EXPECT_EQ(factor_ldlt(LD, dinv).column, 2);

  ls::mat<double, 2, 2> ones;  // [[1, 1], [1, 1]]: d_1 = 0 exactly
  ones(0, 0) = ones(0, 1) = ones(1, 0) = ones(1, 1) = 1.0;
  expect_ldlt_reports_as_cholesky(ones);

  random_source random(42);
  for_each_size(std::integer_sequence<int, 1, 4, 11, 31>{}, [&](auto size) {
    expect_ldlt_reports_as_cholesky(random_symmetric_indefinite<decltype(size)::value>(random));
  });
  auto G = random.template matrix<double, 5, 12>();  // a repeated constraint row
  for (int j = 0; j < 12; ++j) G(4, j) = G(0, j);
  expect_ldlt_reports_as_cholesky(ls::mat<double, 5, 5>(G * ls::transpose(G)));
  expect_ldlt_reports_as_cholesky(ls::mat<double, 3, 3>{});
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    ls::mat<double, 3, 3> A = ls::mat<double, 3, 3>::identity();
    A(2, 1) = bad;
    expect_ldlt_reports_as_cholesky(A);
    ls::vec<double, 3> d3;
    EXPECT_EQ(factor_ldlt(A, d3).info, ls::lu_not_finite);
  }
}

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

// diag(d) with the strict lower triangle's zeros of sign `zero` (+0.0: the factorizations' shortcut;
// -0.0: their general loop) and +0.0 above.
template <int N>
ls::mat<double, N, N> diagonal_matrix(const std::array<double, N>& d, double zero) {
  ls::mat<double, N, N> A;
  for (int i = 0; i < N; ++i) {
    A(i, i) = d[i];
    for (int j = 0; j < i; ++j) A(i, j) = zero;
  }
  return A;
}

}  // namespace

// A diagonal matrix is its own factor, exactly: D = A's diagonal, D^-1 its reciprocals, L = I, and the
// Cholesky factor the square roots; the shortcut for +0.0 below the diagonal and the general loop (a
// -0.0 there) give these bits, and so do both reports of a non-positive diagonal entry.
TEST(LdltFactor, DiagonalMatricesAreTheirOwnFactorsBitForBitOnBothPaths) {
  const std::array<double, 5> d = {3.0, 1e-7, 2.5e6, 0.3, 7.0};
  for (const double zero : {0.0, -0.0}) {
    ls::mat<double, 5, 5> LD = diagonal_matrix<5>(d, zero), L = LD;
    ls::vec<double, 5> dinv;
    ASSERT_EQ(factor_ldlt(LD, dinv).info, ls::lu_ok);
    ASSERT_EQ(factor_cholesky(L).info, ls::lu_ok);
    for (int j = 0; j < 5; ++j) {
      EXPECT_EQ(bits(LD(j, j)), bits(d[j])) << "zero " << zero << ", column " << j;
      EXPECT_EQ(bits(dinv[j]), bits(1.0 / d[j])) << "zero " << zero << ", column " << j;
      EXPECT_EQ(bits(L(j, j)), bits(std::sqrt(d[j]))) << "zero " << zero << ", column " << j;
      for (int i = j + 1; i < 5; ++i) {
        EXPECT_EQ(LD(i, j), 0.0) << "zero " << zero << ", entry " << i << ", " << j;
        EXPECT_EQ(L(i, j), 0.0) << "zero " << zero << ", entry " << i << ", " << j;
      }
    }
  }
  for (const double bad : {-2.0, 0.0, 1e-300}) {  // below N eps max|A| in column 2
    std::array<double, 5> singular = d;
    singular[2] = bad;
    for (const double zero : {0.0, -0.0}) {
      ls::mat<double, 5, 5> LD = diagonal_matrix<5>(singular, zero);
      ls::vec<double, 5> dinv;
      const ls::factor_result r = factor_ldlt(LD, dinv);
      EXPECT_EQ(r.info, ls::lu_singular) << "entry " << bad << ", zero " << zero;
      EXPECT_EQ(r.column, 2) << "entry " << bad << ", zero " << zero;
      expect_ldlt_reports_as_cholesky(diagonal_matrix<5>(singular, zero));
    }
  }
}

// The substitutions with a diagonal matrix's factor leave a finite vector as it is, the signs of its
// zeros included, whatever the signs of the factor's zeros: a caller that knows L is the identity may
// skip them (the explicit pairs' stages, method/accelerations_generic.inc), and cholesky_solve_columns
// skips them where the zeros are +0.0. So the solves scale by the diagonal alone, on either path.
TEST(DiagonalFactors, SolvesScaleByTheDiagonalAloneWhateverTheSignsOfTheZeros) {
  const std::array<double, 6> d = {2.0, 0.5, 4.0, 1e-3, 8.0, 3.0};
  const std::array<double, 6> b = {-0.0, -3.0, 0.0, 2.5, -0.0, -1e300};
  for (const int pattern : {0, 1, 2}) {  // the factor's zeros: all +0.0, all -0.0, or of alternating signs
    ls::mat<double, 6, 6> L = diagonal_matrix<6>(d, pattern == 1 ? -0.0 : 0.0);
    if (pattern == 2)
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < i; ++j) L(i, j) = (i + j) % 2 == 0 ? 0.0 : -0.0;
    ls::vec<double, 6> dinv;
    for (int j = 0; j < 6; ++j) dinv[j] = 1.0 / d[j];
    ls::vec<double, 6> x;
    ls::mat<double, 6, 2> X;
    for (int i = 0; i < 6; ++i) x[i] = X(i, 0) = X(i, 1) = b[i];
    ls::ldlt_solve(L, dinv, x);  // L unit lower triangular, D = diag(d)
    ls::cholesky_solve_columns(L, X);  // L = diag(d) itself: X = diag(d)^-2 b
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(bits(x[i]), bits(b[i] * dinv[i])) << "pattern " << pattern << ", row " << i;
      for (int c = 0; c < 2; ++c)
        EXPECT_EQ(bits(X(i, c)), bits(b[i] * dinv[i] * dinv[i])) << "pattern " << pattern << ", row " << i;
    }
  }
}

// =====================================================================================================
// Vector and matrix arithmetic
// =====================================================================================================

namespace {

// Entrywise |C - C_ref| <= 2 gamma_K (|A| |B|): the rounding-error bound of any summation order.
template <class E>
void expect_product_close(const EMat<E>& C, const EMat<E>& Ae, const EMat<E>& Be) {
  ASSERT_EQ(C.rows(), Ae.rows());
  ASSERT_EQ(C.cols(), Be.cols());
  const Eigen::MatrixXd bound = Ae.cwiseAbs() * Be.cwiseAbs();
  const double K = static_cast<double>(Ae.cols());
  // Complex multiplication adds a few rounding errors per term; 4 K eps covers them.
  const double gamma = 4.0 * K * kEps / (1.0 - 4.0 * K * kEps);
  const EMat<E> reference = Ae * Be;
  for (Eigen::Index i = 0; i < C.rows(); ++i)
    for (Eigen::Index j = 0; j < C.cols(); ++j)
      EXPECT_LE(std::abs(C(i, j) - reference(i, j)), 2.0 * gamma * bound(i, j)) << "(" << i << ", " << j << ")";
}

template <class E, int R, int K, int C>
void check_products(random_source& random) {
  SCOPED_TRACE(std::to_string(R) + "x" + std::to_string(K) + " times " + std::to_string(K) + "x" +
               std::to_string(C));
  const auto A = random.template matrix<E, R, K>();
  const auto B = random.template matrix<E, K, C>();
  const auto x = random.template vector<E, K>();
  const auto y = random.template vector<E, R>();
  const EMat<E> Ae = to_eigen(A);

  expect_product_close<E>(to_eigen(A * B), Ae, to_eigen(B));
  expect_product_close<E>(to_eigen(A * x), Ae, to_eigen(x));
  // transpose_times is A^T y (a plain transpose, not the conjugate one).
  expect_product_close<E>(to_eigen(ls::transpose_times(A, y)), Ae.transpose(), to_eigen(y));
  // transpose is a copy: exact.
  EXPECT_TRUE(to_eigen(ls::transpose(A)) == Ae.transpose());
}

}  // namespace

TEST(MatrixProducts, AgreeWithEigenOnRandomRealAndComplexData) {
  random_source random(20);
  check_products<double, 1, 1, 1>(random);
  check_products<double, 3, 5, 2>(random);
  check_products<double, 5, 3, 7>(random);
  check_products<double, 6, 12, 6>(random);
  check_products<double, 32, 32, 32>(random);
  check_products<cplx, 1, 1, 1>(random);
  check_products<cplx, 4, 9, 3>(random);
  check_products<cplx, 16, 16, 16>(random);
}

TEST(MatrixProducts, GiveZerosForZeroSizedOperands) {
  // A model without constraints has m = 0: G is 0 x n, and G^T lambda must be a zero n-vector.
  const ls::mat<double, 0, 3> G;
  const ls::vec<double, 0> lambda;
  const ls::vec<double, 3> r = ls::transpose_times(G, lambda);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r[i], 0.0);

  random_source random(21);
  const auto A = random.template matrix<double, 3, 0>();
  const auto B = random.template matrix<double, 0, 2>();
  const ls::mat<double, 3, 2> C = A * B;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(C.a[i], 0.0);
  const ls::vec<double, 0> Gx = G * random.template vector<double, 3>();
  (void)Gx;
}

TEST(MatrixArithmetic, AgreesWithEigenEntrywiseOnRandomData) {
  random_source random(22);
  const auto A = random.template matrix<double, 4, 7>();
  const auto B = random.template matrix<double, 4, 7>();
  const double s = random.uniform();
  const Eigen::MatrixXd Ae = to_eigen(A);
  const Eigen::MatrixXd Be = to_eigen(B);

  // One IEEE operation per entry: exact agreement.
  EXPECT_TRUE(to_eigen(A + B) == Ae + Be);
  EXPECT_TRUE(to_eigen(A - B) == Ae - Be);
  EXPECT_TRUE(to_eigen(s * A) == s * Ae);
  EXPECT_TRUE(to_eigen(2 * A) == 2.0 * Ae);

  const auto C = random.template matrix<cplx, 3, 3>();
  const auto D = random.template matrix<cplx, 3, 3>();
  const cplx z = random.template next<cplx>();
  const Eigen::MatrixXcd Ce = to_eigen(C);
  const Eigen::MatrixXcd De = to_eigen(D);
  EXPECT_TRUE(to_eigen(C + D) == Ce + De);
  EXPECT_TRUE(to_eigen(C - D) == Ce - De);
  const Eigen::MatrixXcd zC = to_eigen(z * C);
  const Eigen::MatrixXcd zC_ref = to_std(z) * Ce;
  EXPECT_LE((zC - zC_ref).cwiseAbs().maxCoeff(), 4 * kEps * zC_ref.cwiseAbs().maxCoeff());
  EXPECT_TRUE(to_eigen(2.0 * C) == 2.0 * Ce);

  EXPECT_TRUE(to_eigen(ls::mat<double, 5, 5>::identity()) == Eigen::MatrixXd::Identity(5, 5));
  EXPECT_TRUE(to_eigen(ls::mat<double, 2, 3>::zero()) == Eigen::MatrixXd::Zero(2, 3));
}

TEST(VectorArithmetic, AgreesWithEigenOnRandomData) {
  random_source random(23);
  const auto x = random.template vector<double, 13>();
  const auto y = random.template vector<double, 13>();
  const double s = random.uniform();
  const Eigen::VectorXd xe = to_eigen(x);
  const Eigen::VectorXd ye = to_eigen(y);

  EXPECT_TRUE(to_eigen(x + y) == xe + ye);
  EXPECT_TRUE(to_eigen(x - y) == xe - ye);
  EXPECT_TRUE(to_eigen(-x) == -xe);
  EXPECT_TRUE(to_eigen(s * x) == s * xe);
  EXPECT_EQ(ls::norm_inf(x), xe.lpNorm<Eigen::Infinity>());
  // dot: within the summation bound gamma_13 sum |x_i y_i|.
  const double bound = 13 * kEps / (1 - 13 * kEps) * xe.cwiseAbs().dot(ye.cwiseAbs());
  EXPECT_NEAR(ls::dot(x, y), xe.dot(ye), 2 * bound);

  EXPECT_TRUE(to_eigen(ls::vec<double, 4>::filled(2.5)) == Eigen::VectorXd::Constant(4, 2.5));
  EXPECT_TRUE(to_eigen(ls::vec<double, 4>::zero()) == Eigen::VectorXd::Zero(4));
  EXPECT_EQ(ls::norm_inf(ls::vec<double, 0>{}), 0.0);

  // Complex vectors: dot is the bilinear sum x^T y (no conjugation), as Eigen's transpose()*y.
  const auto u = random.template vector<cplx, 6>();
  const auto v = random.template vector<cplx, 6>();
  const Eigen::VectorXcd ue = to_eigen(u);
  const Eigen::VectorXcd ve = to_eigen(v);
  const std::complex<double> ref = (ue.transpose() * ve)(0, 0);
  EXPECT_LE(std::abs(to_std(ls::dot(u, v)) - ref), 2 * 4 * 6 * kEps * ue.cwiseAbs().dot(ve.cwiseAbs()));
  EXPECT_TRUE(to_eigen(u + v) == ue + ve);
  EXPECT_TRUE(to_eigen(-u) == -ue);
}
