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
// The magnitudes of a pack's lanes as integers, for lu_generic.inc's scan of a real matrix (which says
// why), under the names of one double's there.
template <class D>
HWY_INLINE auto magnitude_bits(pack<D> x) {
  const hn::RebindToSigned<D> di;
  return hn::And(hn::BitCast(di, x.v), hn::Set(di, 0x7fffffffffffffffLL));
}
template <class V>
HWY_INLINE V bits_max(V a, V b) {
  return hn::Max(a, b);
}
template <class V, class D>
HWY_INLINE mask<D> scale_from_bits(V largest, pack<D>& scale) {
  const D d;
  const mask<D> failed = hn::RebindMask(d, hn::Gt(largest, hn::Set(hn::RebindToSigned<D>(), 0x7fefffffffffffffLL)));
  scale = pack<D>(hn::IfThenZeroElse(failed, hn::BitCast(d, largest)));
  return failed;
}
}  // namespace lu_detail

#include "lockstep/core/lu_generic.inc"        // IWYU pragma: keep
#include "lockstep/core/cholesky_generic.inc"  // IWYU pragma: keep

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
