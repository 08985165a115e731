// lockstep/simd/newton_control_inl.hpp — the simplified Newton iteration's measures and decisions for
// W members at once, one per lane: the increment's norm (newton_norm), the stale-shift rules
// (stale_shift_ratio_ok, stale_shift_scale) and the convergence test after each increment
// (judge_newton_increment), compiled for packs from the one text method/newton_control_generic.inc
// that lockstep/method/corrector.hpp compiles for one member. A member's dropped constraint rows
// (jacobian_blocks::dropped, formulation/constraint_rank.hpp) are its lane of a 64-bit integer vector
// (row_dropped). tests/simd/newton_control_test.cpp compares every lane with its member alone at
// W = 1, 2, 4, 8 on every instruction set.
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#undef LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#else
#define LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/corrector.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// row_dropped per lane: whether bit `row` of each lane's dropped-row mask is set.
template <class D>
HWY_INLINE mask<D> row_dropped(int_vec<D> dropped, int row) {
  const D d;
  if (row >= constraint_rank_max_rows) return hn::FirstN(d, 0);
  const int_tag<D> di;
  return hn::RebindMask(d, hn::TestBit(dropped, hn::Set(di, static_cast<int64_t>(uint64_t{1} << row))));
}

// The iteration's measures and decisions, compiled for this instruction set's packs from the text the
// one-member code compiles (method/corrector.hpp).
#include "lockstep/method/newton_control_generic.inc"  // IWYU pragma: keep

template <class D>
using newton_progress_lanes = newton_progress_of<pack<D>>;
template <class D>
using newton_verdict_lanes = newton_verdicts_of<mask<D>>;

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
