// lockstep/simd/lu_inl.hpp — LU factorization with partial pivoting of W independent matrices at once,
// one per lane of a Highway pack: lane l of every entry belongs to member l. Every lane gets exactly the
// bits of lockstep::lu_factor and lu_solve (lockstep/core/linalg.hpp) on its own matrix — the same
// pivots, the same info and failing column, the same factors and solutions — so a member's result does
// not depend on the pack it shares or on W (docs/SIMD.md; tests/simd/lu_test.cpp compares every bit).
//
// What the one-matrix code decides with branches, the lanes decide with masks:
//  - the pivot search keeps, per lane, the first row of largest magnitude (`a > best`, strictly, as the
//    scalar loop does) and its index in an integer lane;
//  - the row interchange moves, per lane, row p into row k and row k into row p by blends: for each
//    candidate row i > k, the lanes whose pivot row is i take row i (a row no lane chose is skipped,
//    which changes no lane);
//  - a zero multiplier leaves its row unchanged in the scalar code (docs in linalg.hpp); here the
//    update is computed and discarded for those lanes, which gives the same bits;
//  - a lane that fails (an entry not finite: nothing factored; a pivot at or below the threshold: the
//    failing column) keeps its info and column, and its matrix is replaced by the identity from then on
//    so that it divides by 1, never by 0, and raises no floating-point exception while the other lanes
//    finish. A failed lane's factors are not defined (as in the scalar code, whose caller discards them).
// Real matrices only; Radau's complex stage block needs a complex pack and is not here yet.
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_LU_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_LU_INL_HPP_
#undef LOCKSTEP_SIMD_LU_INL_HPP_
#else
#define LOCKSTEP_SIMD_LU_INL_HPP_
#endif

#include <limits>

#include "hwy/highway.h"
#include "lockstep/core/linalg.hpp"
#include "lockstep/simd/math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// N x N matrices, one per lane, row-major like lockstep::mat.
template <class D, int N>
struct pack_matrix {
  vec<D> a[N > 0 ? N * N : 1];
  HWY_INLINE vec<D>& operator()(int i, int j) { return a[i * N + j]; }
  HWY_INLINE const vec<D>& operator()(int i, int j) const { return a[i * N + j]; }
};
// Vectors of N entries, one per lane.
template <class D, int N>
struct pack_vector {
  vec<D> a[N > 0 ? N : 1];
  HWY_INLINE vec<D>& operator[](int i) { return a[i]; }
  HWY_INLINE const vec<D>& operator[](int i) const { return a[i]; }
};
// pivot[k]: per lane, the row interchanged with row k at step k.
template <class D, int N>
struct pack_pivots {
  int_vec<D> a[N > 0 ? N : 1];
  HWY_INLINE int_vec<D>& operator[](int i) { return a[i]; }
  HWY_INLINE const int_vec<D>& operator[](int i) const { return a[i]; }
};
// Per lane: lu_info (lu_ok, lu_singular, lu_not_finite) and the failing column (-1 unless singular).
template <class D>
struct pack_factor_result {
  int_vec<D> info, column;
};

namespace lu_detail {
// Lanes in `failed` get the identity in rows and columns k ... N-1 (the part still to be eliminated).
template <class D, int N>
HWY_INLINE void make_identity(D d, pack_matrix<D, N>& A, mask<D> failed, int k) {
  for (int i = k; i < N; ++i)
    for (int j = k; j < N; ++j)
      A(i, j) = hn::IfThenElse(failed, hn::Set(d, i == j ? 1.0 : 0.0), A(i, j));
}
}  // namespace lu_detail

template <class D, int N>
HWY_INLINE pack_factor_result<D> lu_factor(D d, pack_matrix<D, N>& A, pack_pivots<D, N>& pivot) {
  const int_tag<D> di;
  pack_factor_result<D> result{hn::Set(di, int64_t{lu_ok}), hn::Set(di, int64_t{-1})};

  // Not finite anywhere: lu_not_finite, nothing factored (the scalar code returns before touching A).
  mask<D> not_finite = hn::Not(hn::IsFinite(A.a[0]));
  vec<D> scale = hn::Abs(A.a[0]);
  for (int i = 1; i < N * N; ++i) {
    not_finite = hn::Or(not_finite, hn::Not(hn::IsFinite(A.a[i])));
    scale = hn::Max(scale, hn::Abs(A.a[i]));
  }
  result.info = hn::IfThenElse(hn::RebindMask(di, not_finite), hn::Set(di, int64_t{lu_not_finite}), result.info);
  mask<D> failed = not_finite;
  if (!hn::AllFalse(d, failed)) lu_detail::make_identity(d, A, failed, 0);
  const vec<D> threshold =
      hn::Mul(hn::Set(d, (N > 0 ? N : 1) * std::numeric_limits<double>::epsilon()), scale);

  for (int k = 0; k < N; ++k) {
    int_vec<D> p = hn::Set(di, int64_t{k});
    vec<D> best = hn::Abs(A(k, k));
    for (int i = k + 1; i < N; ++i) {
      const vec<D> a = hn::Abs(A(i, k));
      const mask<D> larger = hn::Gt(a, best);
      best = hn::IfThenElse(larger, a, best);
      p = hn::IfThenElse(hn::RebindMask(di, larger), hn::Set(di, int64_t{i}), p);
    }
    pivot[k] = hn::IfThenElse(hn::RebindMask(di, failed), hn::Set(di, int64_t{k}), p);
    const mask<D> singular = hn::AndNot(failed, hn::Not(hn::Gt(best, threshold)));
    if (!hn::AllFalse(d, singular)) {
      result.info = hn::IfThenElse(hn::RebindMask(di, singular), hn::Set(di, int64_t{lu_singular}), result.info);
      result.column = hn::IfThenElse(hn::RebindMask(di, singular), hn::Set(di, int64_t{k}), result.column);
      failed = hn::Or(failed, singular);
      lu_detail::make_identity(d, A, failed, k);
      pivot[k] = hn::IfThenElse(hn::RebindMask(di, failed), hn::Set(di, int64_t{k}), pivot[k]);
    }
    // Row interchange by lane masks: lanes whose pivot row is i swap rows k and i.
    for (int i = k + 1; i < N; ++i) {
      const mask<D> swap = hn::RebindMask(d, hn::Eq(pivot[k], hn::Set(di, int64_t{i})));
      if (hn::AllFalse(d, swap)) continue;  // no lane takes row i: swapping nothing changes no lane
      for (int j = 0; j < N; ++j) {
        const vec<D> row_k = A(k, j);
        A(k, j) = hn::IfThenElse(swap, A(i, j), row_k);
        A(i, j) = hn::IfThenElse(swap, row_k, A(i, j));
      }
    }
    // Elimination, multipliers by division (linalg.hpp says why); a zero multiplier keeps its row.
    for (int i = k + 1; i < N; ++i) {
      const vec<D> l = hn::Div(A(i, k), A(k, k));
      A(i, k) = l;
      const mask<D> keep = hn::Eq(l, hn::Zero(d));
      if (hn::AllTrue(d, keep)) continue;  // every lane keeps the row as it is
      for (int j = k + 1; j < N; ++j) A(i, j) = hn::IfThenElse(keep, A(i, j), hn::Sub(A(i, j), hn::Mul(l, A(k, j))));
    }
  }
  return result;
}

// Solves A x = b in place per lane with the factors of lu_factor, bitwise as lockstep::lu_solve: the
// interchanges, then the forward substitution by columns and the back substitution by columns with
// the reciprocals of the pivots (linalg.hpp shows that its blocked sweeps give the same bits as these).
template <class D, int N>
HWY_INLINE void lu_solve(D d, const pack_matrix<D, N>& LU, const pack_pivots<D, N>& pivot, pack_vector<D, N>& b) {
  const int_tag<D> di;
  for (int k = 0; k < N; ++k)
    for (int i = k + 1; i < N; ++i) {
      const mask<D> swap = hn::RebindMask(d, hn::Eq(pivot[k], hn::Set(di, int64_t{i})));
      if (hn::AllFalse(d, swap)) continue;
      const vec<D> bk = b[k];
      b[k] = hn::IfThenElse(swap, b[i], bk);
      b[i] = hn::IfThenElse(swap, bk, b[i]);
    }
  for (int j = 0; j < N; ++j)
    for (int i = j + 1; i < N; ++i) b[i] = hn::Sub(b[i], hn::Mul(LU(i, j), b[j]));
  for (int i = N - 1; i >= 0; --i) {
    const vec<D> xi = hn::Mul(b[i], hn::Div(hn::Set(d, 1.0), LU(i, i)));
    b[i] = xi;
    for (int r = 0; r < i; ++r) b[r] = hn::Sub(b[r], hn::Mul(LU(r, i), xi));
  }
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
