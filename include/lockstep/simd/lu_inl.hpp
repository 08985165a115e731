// lockstep/simd/lu_inl.hpp — LU factorization with partial pivoting of W independent matrices at once,
// one per lane of a Highway pack: lane l of every entry belongs to member l. Every lane gets exactly the
// bits of lockstep::lu_factor and lu_solve (lockstep/core/linalg.hpp) on its own matrix — the same info
// and failing column, and for a factored matrix the same pivots, factors and solutions — so a member's
// result does not depend on the pack it shares or on W (docs/SIMD.md; tests/simd/lu_test.cpp compares
// every bit).
//
// What the one-matrix code decides with branches, the lanes decide with masks:
//  - the pivot search keeps, per lane, the first row of largest magnitude (`a > best`, strictly, as the
//    scalar loop does) and its index in an integer lane;
//  - the row interchange moves, per lane, row p into row k and row k into row p by blends: for each
//    candidate row i > k, the lanes whose pivot row is i take row i (a row no lane chose is skipped,
//    which changes no lane; a row every lane chose trades places with row k whole, without blends);
//  - a zero multiplier leaves its row unchanged in the scalar code (docs in linalg.hpp); here the
//    update is computed and discarded for those lanes, which gives the same bits (and where no lane's
//    multiplier is zero, as in most rows of members alike, the update is kept without a blend);
//  - a lane that fails (an entry not finite; a pivot at or below the threshold: the failing column)
//    keeps its info and column, and its matrix is replaced by the identity from then on so that it
//    divides by 1, never by 0, and raises no floating-point exception while the other lanes finish.
//    For a failed lane only info and column are those of the scalar code: its factors and pivots are
//    not defined (the scalar code returns with a partial factorization, and the pivot row of the
//    failing column, which its caller discards; here that pivot is k and the rest is the identity).
// Real matrices (vec<D> entries) and complex ones (complex_pack<D>: Radau IIA's second block), with
// complex arithmetic exactly that of lockstep/core/complex.hpp.
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
#include <type_traits>
#include <utility>

#include "hwy/highway.h"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/vector_math/common_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// W complex numbers, one per lane: Radau IIA's second Newton block.
template <class D>
struct complex_pack {
  vec<D> re, im;
};

// The element arithmetic the factorization needs, on real lanes (vec<D>) and on complex lanes
// (complex_pack<D>), each operation exactly the one lockstep/core/complex.hpp performs on a complex
// double: products and sums in its order, Smith's division with its branch taken per lane.
template <class D>
struct real_lanes {
  using element = vec<D>;
  static HWY_INLINE element set(D d, double x) { return hn::Set(d, x); }
  static HWY_INLINE element select(mask<D> m, element a, element b) { return hn::IfThenElse(m, a, b); }
  static HWY_INLINE element sub(element a, element b) { return hn::Sub(a, b); }
  static HWY_INLINE element mul(element a, element b) { return hn::Mul(a, b); }
  static HWY_INLINE element div(D /*d*/, element a, element b) { return hn::Div(a, b); }
  static HWY_INLINE vec<D> abs1(element a) { return hn::Abs(a); }
};
template <class D>
struct complex_lanes {
  using element = complex_pack<D>;
  static HWY_INLINE element set(D d, double x) { return {hn::Set(d, x), hn::Zero(d)}; }
  static HWY_INLINE element select(mask<D> m, element a, element b) {
    return {hn::IfThenElse(m, a.re, b.re), hn::IfThenElse(m, a.im, b.im)};
  }
  static HWY_INLINE element sub(element a, element b) { return {hn::Sub(a.re, b.re), hn::Sub(a.im, b.im)}; }
  static HWY_INLINE element mul(element a, element b) {
    return {hn::Sub(hn::Mul(a.re, b.re), hn::Mul(a.im, b.im)), hn::Add(hn::Mul(a.re, b.im), hn::Mul(a.im, b.re))};
  }
  // Smith's algorithm (complex.hpp): where |b.im| <= |b.re|, r = b.im / b.re, den = b.re + b.im r,
  // ((a.re + a.im r) / den, (a.im - a.re r) / den); elsewhere r = b.re / b.im, den = b.im + b.re r,
  // ((a.re r + a.im) / den, (a.im r - a.re) / den). One division for r per lane, by the larger part, so
  // that no lane divides by zero for the branch it does not take.
  static HWY_INLINE element div(D /*d*/, element a, element b) {
    const mask<D> first = hn::Le(hn::Abs(b.im), hn::Abs(b.re));
    const vec<D> larger = hn::IfThenElse(first, b.re, b.im), smaller = hn::IfThenElse(first, b.im, b.re);
    const vec<D> r = hn::Div(smaller, larger);
    const vec<D> den = hn::Add(larger, hn::Mul(smaller, r));
    const vec<D> re = hn::IfThenElse(first, hn::Add(a.re, hn::Mul(a.im, r)), hn::Add(hn::Mul(a.re, r), a.im));
    const vec<D> im = hn::IfThenElse(first, hn::Sub(a.im, hn::Mul(a.re, r)), hn::Sub(hn::Mul(a.im, r), a.re));
    return {hn::Div(re, den), hn::Div(im, den)};
  }
  static HWY_INLINE vec<D> abs1(element a) { return hn::Add(hn::Abs(a.re), hn::Abs(a.im)); }
};

// N x N matrices of element E (vec<D> or complex_pack<D>), one per lane, row-major like lockstep::mat.
template <class E, int N>
struct pack_matrix {
  E a[N > 0 ? N * N : 1];
  HWY_INLINE E& operator()(int i, int j) { return a[i * N + j]; }
  HWY_INLINE const E& operator()(int i, int j) const { return a[i * N + j]; }
};
// Vectors of N entries, one per lane.
template <class E, int N>
struct pack_vector {
  E a[N > 0 ? N : 1];
  HWY_INLINE E& operator[](int i) { return a[i]; }
  HWY_INLINE const E& operator[](int i) const { return a[i]; }
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

// Real or complex lanes, from the element type.
template <class D, class E>
using lanes_of = std::conditional_t<std::is_same_v<E, complex_pack<D>>, complex_lanes<D>, real_lanes<D>>;

namespace lu_detail {
// Lanes in `failed` get the identity in rows and columns k ... N-1 (the part still to be eliminated).
template <class D, class E, int N>
HWY_INLINE void make_identity(D d, pack_matrix<E, N>& A, mask<D> failed, int k) {
  using L = lanes_of<D, E>;
  for (int i = k; i < N; ++i)
    for (int j = k; j < N; ++j) A(i, j) = L::select(failed, L::set(d, i == j ? 1.0 : 0.0), A(i, j));
}
}  // namespace lu_detail

template <class D, class E, int N>
HWY_INLINE pack_factor_result<D> lu_factor(D d, pack_matrix<E, N>& A, pack_pivots<D, N>& pivot) {
  using L = lanes_of<D, E>;
  const int_tag<D> di;
  pack_factor_result<D> result{hn::Set(di, int64_t{lu_ok}), hn::Set(di, int64_t{-1})};

  // An entry's magnitude (|re| + |im| for a complex one) not finite: lu_not_finite, as in the scalar
  // code, which tests the magnitude, so that a complex entry whose parts are finite but whose |re| +
  // |im| overflows fails here too.
  vec<D> magnitude = L::abs1(A.a[0]);
  mask<D> not_finite = hn::Not(hn::IsFinite(magnitude));
  vec<D> scale = magnitude;
  for (int i = 1; i < N * N; ++i) {
    magnitude = L::abs1(A.a[i]);
    not_finite = hn::Or(not_finite, hn::Not(hn::IsFinite(magnitude)));
    scale = hn::Max(scale, magnitude);
  }
  result.info = hn::IfThenElse(hn::RebindMask(di, not_finite), hn::Set(di, int64_t{lu_not_finite}), result.info);
  mask<D> failed = not_finite;
  if (!hn::AllFalse(d, failed)) lu_detail::make_identity(d, A, failed, 0);
  const vec<D> threshold =
      hn::Mul(hn::Set(d, (N > 0 ? N : 1) * std::numeric_limits<double>::epsilon()), scale);

  for (int k = 0; k < N; ++k) {
    int_vec<D> p = hn::Set(di, int64_t{k});
    vec<D> best = L::abs1(A(k, k));
    for (int i = k + 1; i < N; ++i) {
      const vec<D> a = L::abs1(A(i, k));
      const mask<D> larger = hn::Gt(a, best);
      best = hn::IfThenElse(larger, a, best);
      p = hn::IfThenElse(hn::RebindMask(di, larger), hn::Set(di, int64_t{i}), p);
    }
    const mask<D> singular = hn::AndNot(failed, hn::Not(hn::Gt(best, threshold)));
    if (!hn::AllFalse(d, singular)) {
      result.info = hn::IfThenElse(hn::RebindMask(di, singular), hn::Set(di, int64_t{lu_singular}), result.info);
      result.column = hn::IfThenElse(hn::RebindMask(di, singular), hn::Set(di, int64_t{k}), result.column);
      failed = hn::Or(failed, singular);
      lu_detail::make_identity(d, A, failed, k);
    }
    pivot[k] = hn::IfThenElse(hn::RebindMask(di, failed), hn::Set(di, int64_t{k}), p);  // failed lanes: no swap
    // Row interchange by lane masks: lanes whose pivot row is i swap rows k and i.
    for (int i = k + 1; i < N; ++i) {
      const mask<D> swap = hn::RebindMask(d, hn::Eq(pivot[k], hn::Set(di, int64_t{i})));
      if (hn::AllFalse(d, swap)) continue;  // no lane takes row i: swapping nothing changes no lane
      if (hn::AllTrue(d, swap)) {           // every lane takes it: the rows trade places whole
        for (int j = 0; j < N; ++j) std::swap(A(k, j), A(i, j));
        break;                              // and no lane takes another row
      }
      for (int j = 0; j < N; ++j) {
        const E row_k = A(k, j);
        A(k, j) = L::select(swap, A(i, j), row_k);
        A(i, j) = L::select(swap, row_k, A(i, j));
      }
    }
    // Elimination, multipliers by division (linalg.hpp says why); a zero multiplier keeps its row.
    for (int i = k + 1; i < N; ++i) {
      const E l = L::div(d, A(i, k), A(k, k));
      A(i, k) = l;
      const mask<D> keep = hn::Eq(L::abs1(l), hn::Zero(d));
      if (hn::AllTrue(d, keep)) continue;  // every lane keeps the row as it is
      if (hn::AllFalse(d, keep)) {         // no lane keeps it: the update needs no blend
        for (int j = k + 1; j < N; ++j) A(i, j) = L::sub(A(i, j), L::mul(l, A(k, j)));
        continue;
      }
      for (int j = k + 1; j < N; ++j) A(i, j) = L::select(keep, A(i, j), L::sub(A(i, j), L::mul(l, A(k, j))));
    }
  }
  return result;
}

// Solves A x = b in place per lane with the factors of lu_factor, bitwise as lockstep::lu_solve: the
// interchanges, then the forward substitution by columns and the back substitution by columns with
// the reciprocals of the pivots (linalg.hpp shows that its blocked sweeps give the same bits as these).
template <class D, class E, int N>
HWY_INLINE void lu_solve(D d, const pack_matrix<E, N>& LU, const pack_pivots<D, N>& pivot, pack_vector<E, N>& b) {
  using L = lanes_of<D, E>;
  const int_tag<D> di;
  for (int k = 0; k < N; ++k)
    for (int i = k + 1; i < N; ++i) {
      const mask<D> swap = hn::RebindMask(d, hn::Eq(pivot[k], hn::Set(di, int64_t{i})));
      if (hn::AllFalse(d, swap)) continue;
      if (hn::AllTrue(d, swap)) {  // every lane takes row i, and no other
        std::swap(b[k], b[i]);
        break;
      }
      const E bk = b[k];
      b[k] = L::select(swap, b[i], bk);
      b[i] = L::select(swap, bk, b[i]);
    }
  for (int j = 0; j < N; ++j)
    for (int i = j + 1; i < N; ++i) b[i] = L::sub(b[i], L::mul(LU(i, j), b[j]));
  for (int i = N - 1; i >= 0; --i) {
    const E xi = L::mul(b[i], L::div(d, L::set(d, 1.0), LU(i, i)));
    b[i] = xi;
    for (int r = 0; r < i; ++r) b[r] = L::sub(b[r], L::mul(LU(r, i), xi));
  }
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
