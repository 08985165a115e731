// lockstep/core/linalg.hpp — fixed-size dense vectors, matrices and factorizations, host and device.
//
// Sizes are compile-time constants, storage is a plain array (row-major for matrices), nothing
// allocates: a member's Newton matrix lives in registers or local memory of one thread (docs/ARCHITECTURE.md
// sections 2-3). Eigen's decompositions cannot be called from device code, so the factorizations are
// ours and are tested against Eigen on the host (tests/core/linalg_test.cpp).
//
// Zero sizes are legal (a model without holonomic constraints has m = 0): such objects keep one unused
// slot because C++ forbids zero-length arrays, and every loop runs zero times.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep {

template <class T, int N>
struct vec {
  static_assert(N >= 0, "vector size must be non-negative");
  using value_type = T;
  static constexpr int size = N;
  T a[N > 0 ? N : 1]{};

  LOCKSTEP_HD T& operator[](int i) { return a[i]; }
  LOCKSTEP_HD const T& operator[](int i) const { return a[i]; }

  LOCKSTEP_HD static vec zero() { return vec{}; }
  LOCKSTEP_HD static vec filled(const T& x) {
    vec r;
    for (int i = 0; i < N; ++i) r[i] = x;
    return r;
  }
};

template <class T, int R, int C>
struct mat {
  static_assert(R >= 0 && C >= 0, "matrix sizes must be non-negative");
  using value_type = T;
  static constexpr int rows = R;
  static constexpr int cols = C;
  T a[R * C > 0 ? R * C : 1]{};

  LOCKSTEP_HD T& operator()(int i, int j) { return a[i * C + j]; }
  LOCKSTEP_HD const T& operator()(int i, int j) const { return a[i * C + j]; }

  LOCKSTEP_HD static mat zero() { return mat{}; }
  LOCKSTEP_HD static mat identity() {
    static_assert(R == C, "identity is square");
    mat r;
    for (int i = 0; i < R; ++i) r(i, i) = T(1.0);
    return r;
  }
};

// ---- vector arithmetic ----

template <class T, int N>
LOCKSTEP_HD vec<T, N> operator+(const vec<T, N>& x, const vec<T, N>& y) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = x[i] + y[i];
  return r;
}
template <class T, int N>
LOCKSTEP_HD vec<T, N> operator-(const vec<T, N>& x, const vec<T, N>& y) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = x[i] - y[i];
  return r;
}
template <class T, int N>
LOCKSTEP_HD vec<T, N> operator-(const vec<T, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = -x[i];
  return r;
}
template <class T, int N, class S>
LOCKSTEP_HD vec<T, N> operator*(const S& s, const vec<T, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = s * x[i];
  return r;
}
template <class T, int N>
LOCKSTEP_HD T dot(const vec<T, N>& x, const vec<T, N>& y) {
  T s(0.0);
  for (int i = 0; i < N; ++i) s = s + x[i] * y[i];
  return s;
}
template <int N>
LOCKSTEP_HD double norm_inf(const vec<double, N>& x) {
  double s = 0.0;
  for (int i = 0; i < N; ++i) s = max(s, abs(x[i]));
  return s;
}

// ---- matrix arithmetic ----

template <class T, int R, int K, int C>
LOCKSTEP_HD mat<T, R, C> operator*(const mat<T, R, K>& A, const mat<T, K, C>& B) {
  mat<T, R, C> r;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      T s(0.0);
      for (int k = 0; k < K; ++k) s = s + A(i, k) * B(k, j);
      r(i, j) = s;
    }
  return r;
}
template <class T, int R, int C>
LOCKSTEP_HD vec<T, R> operator*(const mat<T, R, C>& A, const vec<T, C>& x) {
  vec<T, R> r;
  for (int i = 0; i < R; ++i) {
    T s(0.0);
    for (int j = 0; j < C; ++j) s = s + A(i, j) * x[j];
    r[i] = s;
  }
  return r;
}
// A^T x without forming the transpose.
template <class T, int R, int C>
LOCKSTEP_HD vec<T, C> transpose_times(const mat<T, R, C>& A, const vec<T, R>& x) {
  vec<T, C> r;
  for (int j = 0; j < C; ++j) {
    T s(0.0);
    for (int i = 0; i < R; ++i) s = s + A(i, j) * x[i];
    r[j] = s;
  }
  return r;
}
template <class T, int R, int C>
LOCKSTEP_HD mat<T, C, R> transpose(const mat<T, R, C>& A) {
  mat<T, C, R> r;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) r(j, i) = A(i, j);
  return r;
}
template <class T, int R, int C>
LOCKSTEP_HD mat<T, R, C> operator+(const mat<T, R, C>& A, const mat<T, R, C>& B) {
  mat<T, R, C> r;
  for (int i = 0; i < R * C; ++i) r.a[i] = A.a[i] + B.a[i];
  return r;
}
template <class T, int R, int C>
LOCKSTEP_HD mat<T, R, C> operator-(const mat<T, R, C>& A, const mat<T, R, C>& B) {
  mat<T, R, C> r;
  for (int i = 0; i < R * C; ++i) r.a[i] = A.a[i] - B.a[i];
  return r;
}
template <class T, int R, int C, class S>
LOCKSTEP_HD mat<T, R, C> operator*(const S& s, const mat<T, R, C>& A) {
  mat<T, R, C> r;
  for (int i = 0; i < R * C; ++i) r.a[i] = s * A.a[i];
  return r;
}

// ---- LU factorization with partial (row) pivoting ----
//
// Newton matrices of constrained systems are saddle-point matrices: indefinite, with zero or tiny
// leading pivots depending on how the unknowns are ordered, and complex for Radau's second block. An
// unpivoted LU (KokkosKernels' SerialLU) breaks down on them, so rows are always interchanged to bring
// the entry of largest magnitude into the pivot position (Golub & Van Loan, Algorithm 3.4.1; for
// complex entries the magnitude is |re| + |im| as in LAPACK's zgetrf).
//
// The factorization overwrites A with L (unit lower, below the diagonal) and U; pivot[k] is the row
// interchanged with row k at step k.

enum lu_info : int {
  lu_ok = 0,
  lu_singular = 1,     // a pivot at or below the singularity threshold: the matrix is singular to
                       // working precision
  lu_not_finite = 2,   // an entry was infinite or NaN: nothing was factored (the matrix is replaced by
                       // the identity)
};

// What a factorization reports, in the lane index type I (lockstep/core/lane_primitives.hpp): int for
// one matrix, one value per lane for a pack of matrices. A pack's has no default member initializers: its
// constructor would be a function outside the instruction set's target region, which cannot call a
// pack's operations (docs/explanation/lanes.md, "Code written once for doubles and packs").
template <class I>
struct basic_factor_result {
  I info;    // lu_info
  I column;  // the column whose pivot failed, when info == lu_singular
};
template <>
struct basic_factor_result<int> {
  int info = lu_ok;
  int column = -1;
};
using factor_result = basic_factor_result<int>;

// The LU below is written once for one matrix (entries double or complex<double>, pivots int) and for
// a pack of W matrices, one per SIMD lane (entries pack<D> or complex<pack<D>>, pivots pack<D>: each
// lane's row indices, exact in doubles; lockstep/simd/pack_inl.hpp). What one matrix decides with a
// branch, a pack decides per lane by masks (lockstep/core/lane_primitives.hpp), and every lane gets the
// bits of its matrix factored alone: the same info and failing column and, for a factored matrix, the
// same pivots, factors and solutions (tests/simd/lu_test.cpp, at W = 1, 2, 4, 8). In particular:
//  - the pivot search keeps, per lane, the first row of largest magnitude (`a > best`, strictly);
//  - rows k and pivot[k] trade places per lane (interchange_rows: a row every lane pivots on trades
//    places whole, a row no lane pivots on is left alone);
//  - a zero multiplier leaves its row as it is; where only some lanes' multipliers are zero, the update
//    is computed in all lanes and discarded in those, which gives the same bits;
//  - a lane that fails (an entry not finite; a pivot at or below the threshold) keeps its info and
//    column, and its matrix becomes the identity from then on (from the failing column; all of it for
//    an entry not finite), so that it divides by 1, never by 0, and raises no floating-point exception
//    while the other lanes finish, and a solve with a failed matrix is finite too. Once every lane has
//    failed (one matrix: at once) the factorization returns, with the pivots the identity's elimination
//    would choose. Of a failed matrix only info and column mean anything.
//
// A pivot is declared zero when |u_kk| <= N * eps * max_ij |a_ij|: below that, the computed pivot is
// indistinguishable from rounding noise of the elimination (Higham, Accuracy and Stability, 9.3) and
// the solve would return garbage rather than NaN — we report it instead.
//
// lu_solve solves A x = b in place (b becomes x) with the factors of lu_factor. in place (b becomes x) with the factors of lu_factor.
//
// The forward substitution runs by columns (b[i] -= L(i, j) b[j] for all i > j, then the next j): every
// b[i] receives exactly the subtractions of the row-oriented loop b[i] - L(i,0) b[0] - L(i,1) b[1] - ...
// in the same order, so the result is bitwise that of the textbook loop, but the N - 1 - j updates of
// one column are independent and overlap in the pipeline, where the row loop is one dependent chain per
// row (measured: the chain was a fifth of andrews' BDF time, docs/PERFORMANCE.md). The back
// substitution runs by columns too (x[i] = b[i] (1 / U(i,i)), then b[r] -= U(r,i) x[i] for all r < i),
// so every x[i] is b[i] - U(i,N-1) x[N-1] - U(i,N-2) x[N-2] - ... - U(i,i+1) x[i+1]: the
// row-oriented loop with its subtractions in decreasing j, times 1 / U(i,i). Its critical path is one
// subtraction and one multiplication per unknown (the reciprocals do not depend on b, so their
// divisions overlap the forward substitution), where the row loop in increasing j waits for x[i+1]
// before it can start row i's chain of N - 1 - i dependent subtractions and a division: O(N) latency
// instead of O(N^2) (perf annotate, car_axis with BDF: that chain, its store-to-load forwarding and
// the divisions were a third of solve_corrector's samples).
//
// From N = substitution_block_min_size on, both substitutions take four columns per sweep: the four
// unknowns of the block first (the triangle among them, in the column loop's order), then every
// remaining b[r] receives the block's four subtractions one after the other, in the order the column
// loop would apply them, so again every b[i] sees the textbook loop's operations in its order and
// the result is bitwise the same (tests/core/linalg_test.cpp compares bit patterns with the row loop
// for N = 1 ... 32). The point is memory traffic: by single columns, each b[r] is loaded and stored
// once per column, and the compiler's two-wide loads straddle the previous column's two-wide stores
// (their pairs start one element later), so store-to-load forwarding fails on every one (perf annotate,
// andrews with BDF at rtol 1e-4: a tenth of solve_corrector's samples on the instruction after that
// load). By four columns, b is loaded and stored a quarter as often and L is read four entries of a
// row at a time. Below N = 12 the sweeps are short and the block's triangle costs more than it saves
// (measured: docs/PERFORMANCE.md item 14).
inline constexpr int substitution_block_min_size = 12;

namespace detail {
#include "lockstep/core/lu_generic.inc"  // IWYU pragma: keep
}  // namespace detail

// One matrix: lu_factor and lu_solve of lu_generic.inc on entries double or complex<double>, and the
// member status of a factorization (factorization_status).
LOCKSTEP_HD member_status factorization_status(const factor_result& fr) { return detail::factorization_status(fr); }
template <class E, int N>
LOCKSTEP_HD factor_result lu_factor(mat<E, N, N>& A, vec<int, N>& pivot) {
  return detail::lu_factor(A, pivot);
}
template <class E, int N>
LOCKSTEP_HD void lu_solve(const mat<E, N, N>& LU, const vec<int, N>& pivot, vec<E, N>& b) {
  detail::lu_solve(LU, pivot, b);
}
template <class E, int N, int R>
LOCKSTEP_HD void lu_solve(const mat<E, N, N>& LU, const vec<int, N>& pivot, mat<E, N, R>& B, int count = R) {
  detail::lu_solve(LU, pivot, B, count);
}

// ---- Cholesky factorization A = L L^T of a symmetric positive definite matrix ----
//
// Used for the Gram matrices G M^-1 G^T of projections and consistent initialization (Ascher & Petzold 1998,
// section 10.2), which are SPD when the constraints are independent. Overwrites the lower triangle
// with L; returns lu_singular (with the column) when a diagonal is not safely positive, which is how a
// redundant constraint or a singular configuration shows. Written once for one matrix and for a pack
// of them (cholesky_generic.inc), as the LU above.
namespace detail {
#include "lockstep/core/cholesky_generic.inc"  // IWYU pragma: keep
}  // namespace detail

template <int N>
LOCKSTEP_HD factor_result cholesky_factor(mat<double, N, N>& A) {
  return detail::cholesky_factor(A);
}

// Whether A's strict lower triangle is +0.0 throughout: a diagonal matrix, or the factor of one
// (cholesky_generic.inc says why +0.0 exactly).
template <int N>
LOCKSTEP_HD bool strictly_lower_zero(const mat<double, N, N>& A) {
  return detail::strictly_lower_zero(A);
}

// Solves A X = B in place for every column of X with the factor of cholesky_factor (L Y = B, then
// L^T X = Y): the reciprocals of L's diagonal are formed once and the substitutions multiply by them,
// N divisions for all the columns, none of which waits for the right-hand side, where dividing would
// put 2 N divisions in a row into every column's chain of dependent operations (a projection's
// corrections, each solved with the factored Gram matrix, are such chains: divisions take several times
// a multiplication's latency). Each row subtracts its sum of products formed from +0.0, as
// ldlt_forward_solve's do: where L is a diagonal matrix's factor (strictly_lower_zero), that sum is
// exactly +0.0 and leaves a finite entry as it is, so the sums are skipped there (every lane's L
// diagonal, for a pack) with the same bits.
template <class T, int N, int C>
LOCKSTEP_HD void cholesky_solve_columns(const mat<T, N, N>& L, mat<T, N, C>& X) {
  vec<T, N> reciprocal;
  for (int i = 0; i < N; ++i) reciprocal[i] = T(1.0) / L(i, i);
  const bool diagonal = strictly_lower_zero(L);
  for (int c = 0; c < C; ++c) {
    for (int i = 0; i < N; ++i) {
      T s(0.0);
      if (!diagonal)
        for (int k = 0; k < i; ++k) s = s + L(i, k) * X(k, c);
      X(i, c) = (X(i, c) - s) * reciprocal[i];
    }
    for (int i = N - 1; i >= 0; --i) {
      T s(0.0);
      if (!diagonal)
        for (int k = i + 1; k < N; ++k) s = s + L(k, i) * X(k, c);
      X(i, c) = (X(i, c) - s) * reciprocal[i];
    }
  }
}

// Solves A x = b in place with the factor of cholesky_factor: cholesky_solve_columns for one column.
template <class T, int N>
LOCKSTEP_HD void cholesky_solve(const mat<T, N, N>& L, vec<T, N>& b) {
  mat<T, N, 1> x;
  for (int i = 0; i < N; ++i) x(i, 0) = b[i];
  cholesky_solve_columns(L, x);
  for (int i = 0; i < N; ++i) b[i] = x(i, 0);
}

// ---- The factorization A = L D L^T of a symmetric positive definite matrix ----
//
// Cholesky's without square roots and with one division per column (cholesky_generic.inc says what
// ldlt_factor keeps): for systems solved many times per step, where the divisions of the triangular
// solves would set the pace (the explicit pairs' stages, method/accelerations_generic.inc).
template <int N>
LOCKSTEP_HD factor_result ldlt_factor(mat<double, N, N>& A, vec<double, N>& dinv) {
  return detail::ldlt_factor(A, dinv);
}

// The halves of a solve with ldlt_factor's L, in place: L y = b (forward) and L^T x = y (backward),
// L's unit diagonal implied; between them the solve multiplies by D^-1. Each row subtracts its sum of
// products formed from +0, so that where L's row is zero (a diagonal matrix's factor) it subtracts
// exactly +0 and leaves b as it was, whatever the signs of L's zeros and of b's: a caller that knows L
// is the identity may skip the solve and get its bits (for a finite b).
template <class T, int N>
LOCKSTEP_HD void ldlt_forward_solve(const mat<T, N, N>& L, vec<T, N>& b) {
  for (int i = 1; i < N; ++i) {
    T s(0.0);
    for (int k = 0; k < i; ++k) s = s + L(i, k) * b[k];
    b[i] = b[i] - s;
  }
}
template <class T, int N>
LOCKSTEP_HD void ldlt_backward_solve(const mat<T, N, N>& L, vec<T, N>& b) {
  for (int i = N - 2; i >= 0; --i) {
    T s(0.0);
    for (int k = i + 1; k < N; ++k) s = s + L(k, i) * b[k];
    b[i] = b[i] - s;
  }
}

// Solves A x = b in place with the factors of ldlt_factor.
template <class T, int N>
LOCKSTEP_HD void ldlt_solve(const mat<T, N, N>& L, const vec<T, N>& dinv, vec<T, N>& b) {
  ldlt_forward_solve(L, b);
  for (int i = 0; i < N; ++i) b[i] = b[i] * dinv[i];
  ldlt_backward_solve(L, b);
}

}  // namespace lockstep
