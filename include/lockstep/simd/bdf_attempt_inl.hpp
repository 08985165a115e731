// lockstep/simd/bdf_attempt_inl.hpp — one BDF step attempt (lockstep/method/bdf.hpp, bdf_attempt) for W
// members at once, one per lane, each with its own time, step, order, history, Jacobian and factors:
// the one text of lockstep/method/bdf_attempt_generic.inc, which the one-member code compiles for
// doubles, compiled here for packs on the lanes' parts (step_control_inl.hpp, bdf_history_inl.hpp and
// corrector_inl.hpp). Each lane ends the attempt with exactly the state, status, result and counts its
// member ends bdf_attempt with alone (tests/simd/bdf_attempt_test.cpp), so a member's integration does
// not depend on its lane, its pack or W.
//
// bdf_lanes holds bdf_state<Model> for W members, under its names; load_lane and store_lane move one
// member between its bdf_state and a lane (how a finished lane is refilled with the next member, and
// how a member is read out), bit for bit. The split path (factors computed outside the attempt) and the
// step's companion (the tangents) are not part of the lanes.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_BDF_ATTEMPT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_BDF_ATTEMPT_INL_HPP_
#undef LOCKSTEP_SIMD_BDF_ATTEMPT_INL_HPP_
#else
#define LOCKSTEP_SIMD_BDF_ATTEMPT_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/simd/bdf_history_inl.hpp"
#include "lockstep/simd/corrector_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// bdf_state<Model> per lane: its history (bdf_history_lanes) and the rest, the small integers in double
// lanes (step_control_inl.hpp), under bdf_state's names, as the one text of the attempt reads them.
template <class Model, class D>
struct bdf_lanes : bdf_history_lanes<Model, D> {
  pack<D> t, t0, h, order, last_order, steps_at_order, error_failures, newton_cuts, error;
  corrector_lanes<Model, D> corrector;
};

// S without a member: its matrices the identity (the pack's arithmetic runs in every lane, also in a
// lane no member has entered yet; the member stepper fills the rest, lockstep/simd/member_inl.hpp).
template <class Model, class D>
HWY_INLINE void clear_lanes(bdf_lanes<Model, D>& S) {
  clear_matrices(S.corrector);
}

// Lane l of S becomes the member s (its split-path state, unused by lanes, is not carried). S's other
// lanes are not read: a pack can be filled lane by lane.
template <class Model, class D>
HWY_INLINE void load_lane(bdf_lanes<Model, D>& S, size_t l, const bdf_state<Model>& s) {
  using L = state_layout<Model>;
  bdf_history_lanes<Model, D>& H = S;
  set_lane(H.past_count, l, double(s.past_count));
  for (int j = 0; j < bdf_state<Model>::max_past; ++j) {
    set_lane(H.t_past[j], l, s.t_past[j]);
    for (int i = 0; i < L::size; ++i) set_lane(H.older_differences[j][i], l, s.older_differences[j][i]);
  }
  for (int i = 0; i < L::size; ++i) {
    set_lane(H.y_newest[i], l, s.y_newest[i]);
    set_lane(H.yp0[i], l, s.yp0[i]);
    set_lane(H.y_scale[i], l, s.y_scale[i]);
  }
  set_mask_lane<D>(H.initial_derivative, l, s.initial_derivative);
  set_lane(S.t, l, s.t), set_lane(S.t0, l, s.t0), set_lane(S.h, l, s.h);
  set_lane(S.order, l, double(s.order)), set_lane(S.last_order, l, double(s.last_order));
  set_lane(S.steps_at_order, l, double(s.steps_at_order)), set_lane(S.error_failures, l, double(s.error_failures));
  set_lane(S.newton_cuts, l, double(s.newton_cuts)), set_lane(S.error, l, s.error);
  load_corrector_lane(S.corrector, l, s.corrector);
}

// The member in lane l of S, without its Jacobian and factors, into s: what its dense output reads.
template <class Model, class D>
HWY_INLINE void store_history_lane(const bdf_lanes<Model, D>& S, size_t l, bdf_state<Model>& s) {
  using L = state_layout<Model>;
  const bdf_history_lanes<Model, D>& H = S;
  s.past_count = int(lane_of(H.past_count, l));
  for (int j = 0; j < bdf_state<Model>::max_past; ++j) {
    s.t_past[j] = lane_of(H.t_past[j], l);
    for (int i = 0; i < L::size; ++i) s.older_differences[j][i] = lane_of(H.older_differences[j][i], l);
  }
  for (int i = 0; i < L::size; ++i) {
    s.y_newest[i] = lane_of(H.y_newest[i], l);
    s.yp0[i] = lane_of(H.yp0[i], l);
    s.y_scale[i] = lane_of(H.y_scale[i], l);
  }
  s.initial_derivative = mask_lane_of<D>(H.initial_derivative, l);
  s.t = lane_of(S.t, l), s.t0 = lane_of(S.t0, l), s.h = lane_of(S.h, l);
  s.order = int(lane_of(S.order, l)), s.last_order = int(lane_of(S.last_order, l));
  s.steps_at_order = int(lane_of(S.steps_at_order, l)), s.error_failures = int(lane_of(S.error_failures, l));
  s.newton_cuts = int(lane_of(S.newton_cuts, l)), s.error = lane_of(S.error, l);
}

// The member in lane l of S, into s (the inverse of load_lane).
template <class Model, class D>
HWY_INLINE void store_lane(const bdf_lanes<Model, D>& S, size_t l, bdf_state<Model>& s) {
  store_history_lane(S, l, s);
  store_corrector_lane(S.corrector, l, s.corrector);
}

// The attempt (bdf_attempt of the lanes of `lanes`, each towards its own t_end with its own
// parameters), compiled for this instruction set's packs from the text the one-member code compiles.
#include "lockstep/method/bdf_attempt_generic.inc"  // IWYU pragma: keep

// bdf_attempt for the lanes of `lanes` (p[i]: parameter i of every lane). Returns each lane's
// attempt_result as a double (the other lanes: -1); sets status where a lane fails.
template <class Model, class D>
HWY_NOINLINE pack<D> bdf_attempt(mask<D> lanes, bdf_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                 const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return bdf_attempt<Model>(lanes, s, t_end, p, opt, counters, status, no_companion{});
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
