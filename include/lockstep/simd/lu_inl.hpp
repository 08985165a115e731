// lockstep/simd/lu_inl.hpp — the LU factorization with partial pivoting and its triangular solves, and
// the Cholesky factorization (lockstep/core/cholesky_generic.inc: the projections' Gram matrices), for W
// independent matrices at once, one per lane of a pack: lane l of every entry belongs to member l. They
// are lockstep/core/lu_generic.inc, the text one matrix's lu_factor and lu_solve compile
// (lockstep/core/linalg.hpp), compiled here on packs: entries pack<D> (real) or complex<pack<D>>
// (Radau IIA's second block, in lockstep/core/complex.hpp's arithmetic), pivots and results one value
// per lane in a pack<D>. Every lane gets exactly the bits of its matrix factored alone — the same info
// and failing column, and for a factored matrix the same pivots, factors and solutions — so a member's
// result depends neither on the pack it shares nor on W (docs/SIMD.md; tests/simd/lu_test.cpp compares
// every bit). lu_generic.inc says what the lanes decide by masks where one matrix branches.
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
#include "lockstep/core/complex.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/simd/pack_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

namespace lu_detail {
// lu_generic.inc's scan of a real matrix's entries for packs, as one double's: the lanes whose matrix
// has an entry not finite, and each lane's largest magnitude, from the entries' bit patterns by an
// integer maximum (with the sign bit cleared, doubles order by magnitude as integers do, and an
// infinity or a NaN has the largest exponent). A failing lane's scale is 0. No floating-point
// exception is raised on a NaN or an infinity, as one matrix, which ends at its scan when it fails,
// raises none: a comparison or maximum of doubles would raise FE_INVALID in such a lane, and so would
// the pivots' comparisons with a NaN scale afterwards.
template <class D, int N>
HWY_INLINE mask<D> scan_magnitudes(const lockstep::mat<pack<D>, N, N>& A, pack<D>& scale) {
  const D d;
  const hn::RebindToSigned<D> di;
  const auto magnitude = hn::Set(di, 0x7fffffffffffffffLL);
  const auto bits = [&](int i) { return hn::And(hn::BitCast(di, A.a[i].v), magnitude); };
  // Four running maxima, so that the maxima's latencies overlap (the maximum of a set is exact in any
  // order).
  auto m0 = hn::Zero(di), m1 = m0, m2 = m0, m3 = m0;
  int i = 0;
  for (; i + 4 <= N * N; i += 4) {
    m0 = hn::Max(m0, bits(i));
    m1 = hn::Max(m1, bits(i + 1));
    m2 = hn::Max(m2, bits(i + 2));
    m3 = hn::Max(m3, bits(i + 3));
  }
  for (; i < N * N; ++i) m0 = hn::Max(m0, bits(i));
  const auto largest = hn::Max(hn::Max(m0, m1), hn::Max(m2, m3));
  const mask<D> failed = hn::RebindMask(d, hn::Gt(largest, hn::Set(di, 0x7fefffffffffffffLL)));  // not finite
  scale = pack<D>(hn::IfThenZeroElse(failed, hn::BitCast(d, largest)));
  return failed;
}
}  // namespace lu_detail

#include "lockstep/core/lu_generic.inc"        // IWYU pragma: keep
#include "lockstep/core/cholesky_generic.inc"  // IWYU pragma: keep

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
