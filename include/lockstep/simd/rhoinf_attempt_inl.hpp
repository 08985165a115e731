// lockstep/simd/rhoinf_attempt_inl.hpp — one step attempt of the rho_inf method (lockstep/method/rhoinf.hpp,
// rhoinf_attempt) for W members at once, one per lane, each with its own time, step, past points,
// Jacobian and factors: the one text of lockstep/method/rhoinf_attempt_generic.inc, which the one-member
// code compiles for doubles, compiled here for packs on the lanes' parts: the step plan
// (step_control_inl.hpp), the corrector with its Jacobians lane by lane and its factors in lanes
// (corrector_inl.hpp), the Newton form of the error estimate's quadratic (bdf_history_inl.hpp), RADAU5's
// weights and block solve (radau_attempt_inl.hpp) and rho_inf's controller, whose text is compiled here.
// Each lane ends the attempt with exactly the state, status, result and counts its member ends
// rhoinf_attempt with alone (tests/simd/member_test.cpp), so a member's integration does not depend on
// its lane, its pack or W.
//
// rhoinf_lanes holds rhoinf_state<Model> for W members, under its names; load_lane and store_lane move
// one member between its rhoinf_state and a lane, bit for bit.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_RHOINF_ATTEMPT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_RHOINF_ATTEMPT_INL_HPP_
#undef LOCKSTEP_SIMD_RHOINF_ATTEMPT_INL_HPP_
#else
#define LOCKSTEP_SIMD_RHOINF_ATTEMPT_INL_HPP_
#endif

#include <cstddef>

#include "hwy/highway.h"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/rhoinf.hpp"
#include "lockstep/simd/bdf_history_inl.hpp"
#include "lockstep/simd/corrector_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/radau_attempt_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// rhoinf_state<Model> per lane, under its names, as the one text of the attempt reads them: the small
// integers in double lanes, the flags as masks.
template <class Model, class D>
struct rhoinf_lanes {
  using Y = lockstep::vec<pack<D>, state_layout<Model>::size>;
  pack<D> t, t0, h;
  Y y, yp;
  pack<D> h_last;
  Y y_last, yp_last;
  pack<D> h_last2;
  Y y_last2;
  mask<D> last_rejected;
  pack<D> newton_cuts, error;
  corrector_lanes<Model, D> corrector;
};

// S without a member: every value finite, the matrices the identity (the pack's arithmetic runs in
// every lane, also in a lane no member has entered yet). In place: the corrector's lanes of a large
// model are megabytes.
template <class Model, class D>
HWY_INLINE void clear_lanes(rhoinf_lanes<Model, D>& S) {
  const pack<D> zero(0.0), one(1.0);
  S.t = S.t0 = S.h_last = S.h_last2 = S.newton_cuts = S.error = zero;
  S.h = one;
  for (int j = 0; j < state_layout<Model>::size; ++j)
    S.y[j] = S.yp[j] = S.y_last[j] = S.yp_last[j] = S.y_last2[j] = zero;
  S.last_rejected = hn::FirstN(D(), 0);
  clear_matrices(S.corrector);
}

// Lane l of S becomes the member s. S's other lanes are not read: a pack can be filled lane by lane.
template <class Model, class D>
HWY_INLINE void load_lane(rhoinf_lanes<Model, D>& S, size_t l, const rhoinf_state<Model>& s) {
  set_lane(S.t, l, s.t), set_lane(S.t0, l, s.t0), set_lane(S.h, l, s.h);
  set_lane(S.h_last, l, s.h_last), set_lane(S.h_last2, l, s.h_last2);
  for (int j = 0; j < state_layout<Model>::size; ++j) {
    set_lane(S.y[j], l, s.y[j]), set_lane(S.yp[j], l, s.yp[j]);
    set_lane(S.y_last[j], l, s.y_last[j]), set_lane(S.yp_last[j], l, s.yp_last[j]);
    set_lane(S.y_last2[j], l, s.y_last2[j]);
  }
  set_mask_lane<D>(S.last_rejected, l, s.last_rejected);
  set_lane(S.newton_cuts, l, double(s.newton_cuts)), set_lane(S.error, l, s.error);
  load_corrector_lane(S.corrector, l, s.corrector);
}

// The member in lane l of S, without its Jacobian and factors, into s: what its dense output reads.
template <class Model, class D>
HWY_INLINE void store_history_lane(const rhoinf_lanes<Model, D>& S, size_t l, rhoinf_state<Model>& s) {
  s.t = lane_of(S.t, l), s.t0 = lane_of(S.t0, l), s.h = lane_of(S.h, l);
  s.h_last = lane_of(S.h_last, l), s.h_last2 = lane_of(S.h_last2, l);
  for (int j = 0; j < state_layout<Model>::size; ++j) {
    s.y[j] = lane_of(S.y[j], l), s.yp[j] = lane_of(S.yp[j], l);
    s.y_last[j] = lane_of(S.y_last[j], l), s.yp_last[j] = lane_of(S.yp_last[j], l);
    s.y_last2[j] = lane_of(S.y_last2[j], l);
  }
  s.last_rejected = mask_lane_of<D>(S.last_rejected, l);
  s.newton_cuts = int(lane_of(S.newton_cuts, l)), s.error = lane_of(S.error, l);
}

// The member in lane l of S, into s (the inverse of load_lane).
template <class Model, class D>
HWY_INLINE void store_lane(const rhoinf_lanes<Model, D>& S, size_t l, rhoinf_state<Model>& s) {
  store_history_lane(S, l, s);
  store_corrector_lane(S.corrector, l, s.corrector);
}

// The attempt's hook (rhoinf_attempt_generic.inc's header): the lanes' dropped constraint rows.
template <class Model, class D>
HWY_INLINE const dropped_lanes<D>& rhoinf_dropped(const rhoinf_lanes<Model, D>& s) {
  return s.corrector.dropped;
}

// rho_inf's controller and the attempt, compiled for this instruction set's packs from the texts the
// one-member code compiles.
#include "lockstep/method/rhoinf_step_control_generic.inc"  // IWYU pragma: keep
#include "lockstep/method/rhoinf_attempt_generic.inc"        // IWYU pragma: keep

// rhoinf_attempt for the lanes of `lanes` (p[i]: parameter i of every lane). Returns each lane's
// attempt_result as a double (the other lanes: -1); sets status where a lane fails. (Named apart from
// the text's rhoinf_attempt, which takes the same arguments.)
template <class Model, class D>
HWY_NOINLINE pack<D> rhoinf_attempt_in_lanes(mask<D> lanes, rhoinf_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                             const solver_options& opt, attempt_counters_lanes<D>& counters,
                                             pack<D>& status) {
  return rhoinf_attempt<Model>(lanes, s, t_end, p, opt, counters, status);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
