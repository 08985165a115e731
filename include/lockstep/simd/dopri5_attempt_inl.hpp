// lockstep/simd/dopri5_attempt_inl.hpp — one step attempt of an explicit pair (Dormand & Prince's or
// Tsitouras') on the index-1 equations (lockstep/method/dopri5.hpp, dopri5_attempt) for W members at
// once, one per lane, each with its own time, step and stages: the one text of
// lockstep/method/dopri5_attempt_generic.inc, which the one-member code compiles for doubles, compiled
// here for packs, with each stage's saddle-point system (method/accelerations_generic.inc) assembled
// from the model on packs and solved by the Schur complement of M or the LU in lanes
// (lu_inl.hpp), the step plan (step_control_inl.hpp) and the error weights (bdf_history_inl.hpp). Each
// lane ends the attempt with exactly the state, status, result and counts its member ends dopri5_attempt
// with alone (tests/simd/member_test.cpp), so a member's integration does not depend on its lane, its
// pack or W.
//
// dopri5_lanes holds dopri5_state<Model> for W members of the pair T (its tableau, which selects the
// attempt), under its names; load_lane and store_lane move one member between its dopri5_state and a
// lane, bit for bit.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_DOPRI5_ATTEMPT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_DOPRI5_ATTEMPT_INL_HPP_
#undef LOCKSTEP_SIMD_DOPRI5_ATTEMPT_INL_HPP_
#else
#define LOCKSTEP_SIMD_DOPRI5_ATTEMPT_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/dopri5.hpp"
#include "lockstep/simd/bdf_history_inl.hpp"
#include "lockstep/simd/corrector_inl.hpp"
#include "lockstep/simd/lu_inl.hpp"
#include "lockstep/simd/newton_matrix_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// dopri5_state<Model> per lane, under its names, as the one text of the attempt reads them: the small
// integers in double lanes, the flags as masks. `work` is the corrector's count of work, which an
// explicit method has none of (the stepper reports it for every method).
template <class Model, class T, class D>
struct dopri5_lanes {
  static constexpr int d = 2 * Model::n;
  using Y = lockstep::vec<pack<D>, state_layout<Model>::size>;
  using X = lockstep::vec<pack<D>, d>;
  struct stiffness_lanes {
    pack<D> stiff_steps, nonstiff_steps;
  };
  struct rows_lanes {
    dropped_lanes<D> dropped;
    lockstep::mat<pack<D>, Model::m, Model::n> G;
  };
  pack<D> t, t0, h;
  Y y;
  X f;
  pack<D> h_last;
  Y y_last;
  X dense[5];
  pack<D> log_error_accepted;
  mask<D> last_rejected;
  pack<D> consecutive_cuts, error;
  stiffness_lanes stiffness;
  mask<D> turned_stiff;
  rows_lanes rows;
  corrector_work work;
};

// S without a member: every value finite (the pack's arithmetic runs in every lane, also in a lane no
// member has entered yet).
template <class Model, class T, class D>
HWY_INLINE void clear_lanes(dopri5_lanes<Model, T, D>& S) {
  const pack<D> zero(0.0), one(1.0);
  const hn::RebindToSigned<D> di;
  S.t = S.t0 = S.h_last = S.consecutive_cuts = S.error = zero;
  S.h = one;
  S.log_error_accepted = zero;
  for (int j = 0; j < state_layout<Model>::size; ++j) S.y[j] = S.y_last[j] = zero;
  for (int c = 0; c < dopri5_lanes<Model, T, D>::d; ++c) {
    S.f[c] = zero;
    for (auto& r : S.dense) r[c] = zero;
  }
  S.last_rejected = S.turned_stiff = hn::FirstN(D(), 0);
  S.stiffness.stiff_steps = S.stiffness.nonstiff_steps = zero;
  S.rows.dropped.bits = hn::Zero(di);
  for (auto& g : S.rows.G.a) g = zero;
}

// The member in lane l of S, without its constraint rows' G, into s: what its dense output reads.
template <class Model, class T, class D>
HWY_INLINE void store_history_lane(const dopri5_lanes<Model, T, D>& S, size_t l, dopri5_state<Model>& s) {
  s.t = lane_of(S.t, l), s.t0 = lane_of(S.t0, l), s.h = lane_of(S.h, l), s.h_last = lane_of(S.h_last, l);
  for (int j = 0; j < state_layout<Model>::size; ++j) s.y[j] = lane_of(S.y[j], l), s.y_last[j] = lane_of(S.y_last[j], l);
  for (int c = 0; c < dopri5_lanes<Model, T, D>::d; ++c) {
    s.f[c] = lane_of(S.f[c], l);
    for (int r = 0; r < 5; ++r) s.dense[r][c] = lane_of(S.dense[r][c], l);
  }
  s.log_error_accepted = lane_of(S.log_error_accepted, l);
  s.last_rejected = mask_lane_of<D>(S.last_rejected, l);
  s.consecutive_cuts = int(lane_of(S.consecutive_cuts, l)), s.error = lane_of(S.error, l);
  s.stiffness.stiff_steps = int(lane_of(S.stiffness.stiff_steps, l));
  s.stiffness.nonstiff_steps = int(lane_of(S.stiffness.nonstiff_steps, l));
  s.turned_stiff = mask_lane_of<D>(S.turned_stiff, l);
  s.rows.dropped = static_cast<std::uint64_t>(hn::ExtractLane(S.rows.dropped.bits, l));
}

// The member in lane l of S, into s (the inverse of load_lane).
template <class Model, class T, class D>
HWY_INLINE void store_lane(const dopri5_lanes<Model, T, D>& S, size_t l, dopri5_state<Model>& s) {
  store_history_lane(S, l, s);
  for (int e = 0; e < Model::m * Model::n; ++e) s.rows.G.a[e] = lane_of(S.rows.G.a[e], l);
}

// Lane l of S becomes the member s. S's other lanes are not read: a pack can be filled lane by lane.
template <class Model, class T, class D>
HWY_INLINE void load_lane(dopri5_lanes<Model, T, D>& S, size_t l, const dopri5_state<Model>& s) {
  set_lane(S.t, l, s.t), set_lane(S.t0, l, s.t0), set_lane(S.h, l, s.h), set_lane(S.h_last, l, s.h_last);
  for (int j = 0; j < state_layout<Model>::size; ++j) set_lane(S.y[j], l, s.y[j]), set_lane(S.y_last[j], l, s.y_last[j]);
  for (int c = 0; c < dopri5_lanes<Model, T, D>::d; ++c) {
    set_lane(S.f[c], l, s.f[c]);
    for (int r = 0; r < 5; ++r) set_lane(S.dense[r][c], l, s.dense[r][c]);
  }
  set_lane(S.log_error_accepted, l, s.log_error_accepted);
  set_mask_lane<D>(S.last_rejected, l, s.last_rejected);
  set_lane(S.consecutive_cuts, l, double(s.consecutive_cuts)), set_lane(S.error, l, s.error);
  set_lane(S.stiffness.stiff_steps, l, double(s.stiffness.stiff_steps));
  set_lane(S.stiffness.nonstiff_steps, l, double(s.stiffness.nonstiff_steps));
  set_mask_lane<D>(S.turned_stiff, l, s.turned_stiff);
  S.rows.dropped.bits = with_lane(S.rows.dropped.bits, l, static_cast<int64_t>(s.rows.dropped));
  for (int e = 0; e < Model::m * Model::n; ++e) set_lane(S.rows.G.a[e], l, s.rows.G.a[e]);
}

// The attempt's hook (dopri5_attempt_generic.inc's header): the lanes with dropped constraint rows.
template <class Model, class T, class D>
HWY_INLINE mask<D> dopri5_rows_dropped(const dopri5_lanes<Model, T, D>& s) {
  const hn::RebindToSigned<D> di;
  return hn::RebindMask(D(), hn::Ne(s.rows.dropped.bits, hn::Zero(di)));
}

// The stages' saddle-point solve and the attempt, compiled for this instruction set's packs from the
// texts the one-member code compiles.
#include "lockstep/method/accelerations_generic.inc"   // IWYU pragma: keep
#include "lockstep/method/dopri5_attempt_generic.inc"  // IWYU pragma: keep

// dopri5_attempt for the lanes of `lanes` (p[i]: parameter i of every lane). Returns each lane's
// attempt_result as a double (the other lanes: -1); sets status where a lane fails. (Named apart from
// the text's dopri5_attempt, which takes the same arguments.) The stages' factorizations count in
// s.work as the corrector's do: the pack factors a stage's systems while any lane's attempt goes on, so
// it ran as many as the lane that ran the most, and its members ran their own counts' sum.
template <class Model, class T, class D>
HWY_NOINLINE pack<D> dopri5_attempt_in_lanes(mask<D> lanes, dopri5_lanes<Model, T, D>& s, pack<D> t_end, const pack<D>* p,
                                             const solver_options& opt, attempt_counters_lanes<D>& counters,
                                             pack<D>& status) {
  const D d;
  const pack<D> before = counters.lu_factorizations;
  const pack<D> result = dopri5_attempt<Model, T>(lanes, s, t_end, p, opt, counters, status);
  HWY_ALIGN double factored[hn::MaxLanes(D())];
  hn::Store((counters.lu_factorizations - before).v, d, factored);
  std::uint64_t most = 0;
  for (size_t l = 0; l < hn::Lanes(d); ++l) {
    const auto count = static_cast<std::uint64_t>(factored[l]);
    most = count > most ? count : most;
    s.work.lane_factorizations += count;
  }
  s.work.pack_factorizations += most;
  return result;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
