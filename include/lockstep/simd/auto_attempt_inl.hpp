// lockstep/simd/auto_attempt_inl.hpp — method "auto" (lockstep/method/auto_switch.hpp: dopri5 while a
// member is not stiff, Radau IIA 5 while it is) for W members at once, one per lane, each in its own
// phase: the pack holds both phases' lanes (dopri5_attempt_inl.hpp, radau_attempt_inl.hpp) and a mask
// of the lanes that are stiff. An attempt runs the explicit pair's attempt for the lanes in the explicit
// phase and Radau IIA 5's for the lanes in the implicit one, each masked to its lanes, as a GPU warp
// runs both sides of a branch; a pack whose lanes are all in one phase runs that phase's attempt alone.
// The switches between the phases, rare by construction (method/auto_switch.hpp), and the implicit
// phase's eigenvalue probes, one every 10 or more accepted implicit steps, run lane by lane on the
// member's own double code (auto_switch.hpp's auto_switch_to_implicit and auto_probe), so each lane
// ends every attempt with the state, status, result and counts its member ends auto_attempt with alone
// (tests/simd/member_test.cpp).
//
// Each phase's attempt computes in every lane, its results discarded outside its mask, so a lane must
// hold finite values for the phase it is not in. Its explicit phase always has them: auto starts there,
// and a member in the implicit phase keeps the explicit phase it left, which the masked attempts leave
// as it is. Its implicit phase may never have started (a default radau_state, all zeros), or be the
// phase it left: the member's own waits beside the lanes (`parked`), to come back when the member
// leaves its lane or switches, and its implicit lanes hold the values of a lane no member has entered
// (clear_lanes) at the member's current point. The masked attempt computes there as for a lane whose
// member has left the Newton iteration (radau_attempt_generic.inc): at its stages' start, a step of 1.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_AUTO_ATTEMPT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_AUTO_ATTEMPT_INL_HPP_
#undef LOCKSTEP_SIMD_AUTO_ATTEMPT_INL_HPP_
#else
#define LOCKSTEP_SIMD_AUTO_ATTEMPT_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/auto_switch.hpp"
#include "lockstep/simd/dopri5_attempt_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/radau_attempt_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// auto_state<Model> for W members: both phases in lanes, which phase each lane is in, and the
// switching rule's counts lane by lane (they change once per accepted step at most).
template <class Model, class D>
struct auto_lanes {
  static constexpr size_t max_lanes = hn::MaxLanes(D());
  using explicit_lanes = dopri5_lanes<Model, dopri5_tableau, D>;
  using implicit_lanes = radau_lanes<Model, radau5_tableau, D>;
  mask<D> stiff;
  explicit_lanes explicit_phase;
  implicit_lanes implicit_phase;
  // Lane by lane: auto_state's other members, and the implicit phase of a lane in the explicit one.
  double t1[max_lanes] = {};
  int probe_interval[max_lanes] = {};
  long implicit_steps_since_probe[max_lanes] = {};
  long explicit_steps_in_phase[max_lanes] = {};
  bool returned[max_lanes] = {};
  radau_state<Model, radau5_tableau> parked[max_lanes];
  // A member read out of its lane for a switch.
  auto_state<Model> scratch;
  // The work of the switches' and probes' solves, lane by lane, and the whole: both phases' and theirs
  // (the stepper reports it for every method).
  corrector_work switching, work;
};

template <class Model, class D>
HWY_INLINE void clear_lanes(auto_lanes<Model, D>& S) {
  S.stiff = hn::FirstN(D(), 0);
  clear_lanes(S.explicit_phase);
  clear_lanes(S.implicit_phase);
}

namespace auto_lanes_detail {

// Lane l of the implicit phase's lanes: a lane no member has entered (clear_lanes' values) at the
// point (t, y), where the masked attempts of Radau IIA 5 compute harmlessly (header).
template <class Model, class D>
HWY_INLINE void clear_implicit_lane(radau_lanes<Model, radau5_tableau, D>& S, size_t l, double t,
                                    const state_vector<Model>& y) {
  radau_state<Model, radau5_tableau> cleared{};
  cleared.t = cleared.t0 = t;
  cleared.h = cleared.theta = cleared.err_accepted = 1.0;
  cleared.y = y;
  for (int j = 0; j < state_layout<Model>::size; ++j) cleared.yp[j] = cleared.y_last[j] = 0.0;
  cleared.have_step = cleared.first = cleared.last_rejected = cleared.jacobian_valid = false;
  cleared.factored_h = 0.0;
  load_lane(S, l, cleared);
}

}  // namespace auto_lanes_detail

// Lane l of S becomes the member s (its implicit phase parked where the member is not in it).
template <class Model, class D>
HWY_INLINE void load_lane(auto_lanes<Model, D>& S, size_t l, const auto_state<Model>& s) {
  set_mask_lane<D>(S.stiff, l, s.stiff);
  load_lane(S.explicit_phase, l, s.explicit_phase);
  if (s.stiff) {
    load_lane(S.implicit_phase, l, s.implicit_phase);
  } else {
    S.parked[l] = s.implicit_phase;
    auto_lanes_detail::clear_implicit_lane<Model>(S.implicit_phase, l, s.explicit_phase.t, s.explicit_phase.y);
  }
  S.t1[l] = s.t1;
  S.probe_interval[l] = s.probe_interval;
  S.implicit_steps_since_probe[l] = s.implicit_steps_since_probe;
  S.explicit_steps_in_phase[l] = s.explicit_steps_in_phase;
  S.returned[l] = s.returned;
}

// The member in lane l of S, into s (the inverse of load_lane).
template <class Model, class D>
HWY_INLINE void store_lane(const auto_lanes<Model, D>& S, size_t l, auto_state<Model>& s) {
  s.stiff = mask_lane_of<D>(S.stiff, l);
  store_lane(S.explicit_phase, l, s.explicit_phase);
  if (s.stiff) store_lane(S.implicit_phase, l, s.implicit_phase);
  else s.implicit_phase = S.parked[l];
  s.t1 = S.t1[l];
  s.probe_interval = S.probe_interval[l];
  s.implicit_steps_since_probe = S.implicit_steps_since_probe[l];
  s.explicit_steps_in_phase = S.explicit_steps_in_phase[l];
  s.returned = S.returned[l];
}

// What the member in lane l needs for its dense output (auto_dense_output): which phase it is in, and
// that phase's last step.
template <class Model, class D>
HWY_INLINE void store_history_lane(const auto_lanes<Model, D>& S, size_t l, auto_state<Model>& s) {
  s.stiff = mask_lane_of<D>(S.stiff, l);
  if (s.stiff) store_history_lane(S.implicit_phase, l, s.implicit_phase);
  else store_history_lane(S.explicit_phase, l, s.explicit_phase);
}

// The current time and point of each lane: its phase's (auto_method::time, auto_method::current).
template <class Model, class D>
HWY_INLINE pack<D> auto_time(const auto_lanes<Model, D>& S) {
  return select(S.stiff, S.implicit_phase.t, S.explicit_phase.t);
}
template <class Model, class D>
HWY_INLINE lockstep::vec<pack<D>, state_layout<Model>::size> auto_current(const auto_lanes<Model, D>& S) {
  lockstep::vec<pack<D>, state_layout<Model>::size> y;
  for (int j = 0; j < state_layout<Model>::size; ++j) y[j] = select(S.stiff, S.implicit_phase.y[j], S.explicit_phase.y[j]);
  return y;
}

// auto_method::replace_current for the lanes of `lanes`: the explicit phase's moves its dense output's
// end too (dopri5_replace_current).
template <class Model, class D, class Y>
HWY_INLINE void auto_replace_current(mask<D> lanes, auto_lanes<Model, D>& S, const Y& y) {
  const mask<D> implicit = hn::And(lanes, S.stiff), explicit_ = hn::AndNot(S.stiff, lanes);
  if (!hn::AllFalse(D(), explicit_)) dopri5_replace_current<Model>(explicit_, S.explicit_phase, y);
  for (int j = 0; j < state_layout<Model>::size; ++j)
    S.implicit_phase.y[j] = select(implicit, y[j], S.implicit_phase.y[j]);
}

// auto_attempt for the lanes of `lanes` (p[i]: parameter i of every lane). Returns each lane's
// attempt_result as a double (the other lanes: -1); sets status where a lane fails.
template <class Model, class D>
HWY_NOINLINE pack<D> auto_attempt_in_lanes(mask<D> lanes, auto_lanes<Model, D>& S, pack<D> t_end, const pack<D>* p,
                                           const solver_options& opt, attempt_counters_lanes<D>& counters,
                                           pack<D>& status) {
  const D d;
  const hn::RebindToSigned<D> di;
  pack<D> result(-1.0);
  // ---- the switches and probes that are due, lane by lane on the member's own code (auto_attempt) ----
  const mask<D> turning = hn::And(hn::AndNot(S.stiff, lanes), S.explicit_phase.turned_stiff);
  mask<D> probing = hn::FirstN(d, 0);
  const uint64_t implicit_bits = mask_bits<D>(hn::And(lanes, S.stiff));
  for (size_t l = 0; l < hn::Lanes(d); ++l)
    if ((implicit_bits >> l & 1) && S.implicit_steps_since_probe[l] >= S.probe_interval[l])
      set_mask_lane<D>(probing, l, true);
  mask<D> active = lanes;
  const uint64_t due = mask_bits<D>(hn::Or(turning, probing));
  for (size_t l = 0; due != 0 && l < hn::Lanes(d); ++l) {
    if (!(due >> l & 1)) continue;
    auto_state<Model>& m = S.scratch;
    store_lane(S, l, m);
    member_counters c{};
    store_counters_lane(counters, l, c);
    const long factorizations_before = c.lu_factorizations;
    double p_lane[Model::n_params > 0 ? Model::n_params : 1];
    for (int i = 0; i < Model::n_params; ++i) p_lane[i] = lane_of(p[i], l);
    if (mask_lane_of<D>(turning, l)) {
      m.explicit_phase.turned_stiff = false;
      member_status why = member_status(int(lane_of(status, l)));
      if (!lockstep::detail::auto_switch_to_implicit<Model>(m, p_lane, opt, c, why)) {
        set_lane(status, l, double(why));
        set_lane(result, l, double(int(attempt_result::failed)));
        set_mask_lane<D>(active, l, false);
      }
    } else {
      lockstep::detail::auto_probe<Model>(m, p_lane, opt, c);
    }
    load_lane(S, l, m);
    load_counters_lane(counters, l, c);
    const auto factored = static_cast<std::uint64_t>(c.lu_factorizations - factorizations_before);
    S.switching.pack_factorizations += factored;  // one lane at a time: each its own
    S.switching.lane_factorizations += factored;
  }

  // ---- each phase's attempt for its lanes ----
  const mask<D> explicit_ = hn::AndNot(S.stiff, active), implicit = hn::And(active, S.stiff);
  if (!hn::AllFalse(d, explicit_)) {
    const pack<D> r = dopri5_attempt_in_lanes<Model, dopri5_tableau>(explicit_, S.explicit_phase, t_end, p,
                                                                     auto_explicit_options(opt), counters, status);
    result = select(explicit_, r, result);
    const uint64_t accepted = mask_bits<D>(hn::And(explicit_, r == pack<D>(double(int(attempt_result::accepted)))));
    for (size_t l = 0; l < hn::Lanes(d); ++l)
      if (accepted >> l & 1) ++S.explicit_steps_in_phase[l];
  }
  if (!hn::AllFalse(d, implicit)) {
    const auto implicit_int = hn::RebindMask(di, implicit);
    S.implicit_phase.dropped.bits = hn::IfThenElse(implicit_int, S.explicit_phase.rows.dropped.bits,
                                                   S.implicit_phase.dropped.bits);
    const pack<D> r = radau_attempt<Model, radau5_tableau>(implicit, S.implicit_phase, t_end, p,
                                                           auto_implicit_options(opt), counters, status);
    result = select(implicit, r, result);
    S.explicit_phase.rows.dropped.bits = hn::IfThenElse(implicit_int, S.implicit_phase.dropped.bits,
                                                        S.explicit_phase.rows.dropped.bits);
    const mask<D> with_rows = hn::And(implicit, hn::RebindMask(d, hn::Ne(S.implicit_phase.dropped.bits, hn::Zero(di))));
    if (!hn::AllFalse(d, with_rows))
      for (int e = 0; e < Model::m * Model::n; ++e)
        S.explicit_phase.rows.G.a[e] = select(with_rows, S.implicit_phase.jac.G.a[e], S.explicit_phase.rows.G.a[e]);
    const uint64_t accepted = mask_bits<D>(hn::And(implicit, r == pack<D>(double(int(attempt_result::accepted)))));
    for (size_t l = 0; l < hn::Lanes(d); ++l)
      if (accepted >> l & 1) ++S.implicit_steps_since_probe[l];
  }
  const corrector_work* parts[] = {&S.explicit_phase.work, &S.implicit_phase.work, &S.switching};
  S.work = {};
  for (const corrector_work* w : parts) {
    S.work.pack_iterations += w->pack_iterations, S.work.lane_iterations += w->lane_iterations;
    S.work.pack_factorizations += w->pack_factorizations, S.work.lane_factorizations += w->lane_factorizations;
  }
  return result;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
