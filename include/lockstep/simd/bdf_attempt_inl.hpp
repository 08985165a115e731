// lockstep/simd/bdf_attempt_inl.hpp — one BDF step attempt (lockstep/method/bdf.hpp, bdf_attempt) for W
// members at once, one per lane, each with its own time, step, order, history, Jacobian and factors:
// the step plan, the predictor, the corrector, the error test, the order choice and the acceptance
// into the history, assembled from the lanes parts of step_control_inl.hpp, bdf_history_inl.hpp and
// corrector_inl.hpp in bdf_attempt's order. Each lane ends the attempt with exactly the state, status,
// result and counts its member ends bdf_attempt with alone (tests/simd/bdf_attempt_test.cpp), so a
// member's integration does not depend on its lane, its pack or W.
//
// bdf_lanes holds bdf_state<Model> for W members; load_lane and store_lane move one member between its
// bdf_state and a lane (how a finished lane is refilled with the next member, and how a member is read
// out), bit for bit. The split path (factors computed outside the attempt) is not part of the lanes.
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

// bdf_state<Model> per lane; the small integers in double lanes (step_control_inl.hpp).
template <class Model, class D>
struct bdf_lanes {
  bdf_history_lanes<Model, D> history;
  pack<D> t, t0, h, order, last_order, steps_at_order, error_failures, newton_cuts, error;
  corrector_lanes<Model, D> corrector;
};

// The member_counters a BDF attempt changes, per lane.
template <class D>
struct bdf_counters_lanes {
  pack<D> steps{}, last_h{};
  step_counters_lanes<D> step{};      // rejected steps, Newton failures
  corrector_counts<D> corrector{};    // Jacobians, factorizations, model evaluations, Newton iterations
};

// Lane l of c takes the counts of `from` that an attempt changes, and gives them back into `to`.
template <class D>
HWY_INLINE void load_counters_lane(bdf_counters_lanes<D>& c, size_t l, const member_counters& from) {
  set_lane(c.steps, l, double(from.steps)), set_lane(c.last_h, l, from.last_h);
  set_lane(c.step.rejected_steps, l, double(from.rejected_steps));
  set_lane(c.step.newton_failures, l, double(from.newton_failures));
  set_lane(c.corrector.jacobian_evaluations, l, double(from.jacobian_evaluations));
  set_lane(c.corrector.lu_factorizations, l, double(from.lu_factorizations));
  set_lane(c.corrector.model_evaluations, l, double(from.model_evaluations));
  set_lane(c.corrector.newton_iterations, l, double(from.newton_iterations));
}
template <class D>
HWY_INLINE void store_counters_lane(const bdf_counters_lanes<D>& c, size_t l, member_counters& to) {
  to.steps = long(lane_of(c.steps, l)), to.last_h = lane_of(c.last_h, l);
  to.rejected_steps = long(lane_of(c.step.rejected_steps, l));
  to.newton_failures = long(lane_of(c.step.newton_failures, l));
  to.jacobian_evaluations = long(lane_of(c.corrector.jacobian_evaluations, l));
  to.lu_factorizations = long(lane_of(c.corrector.lu_factorizations, l));
  to.model_evaluations = long(lane_of(c.corrector.model_evaluations, l));
  to.newton_iterations = long(lane_of(c.corrector.newton_iterations, l));
}

// Lane l of S becomes the member s (its split-path state, unused by lanes, is not carried). S's other
// lanes are not read: a pack can be filled lane by lane.
template <class Model, class D>
HWY_INLINE void load_lane(bdf_lanes<Model, D>& S, size_t l, const bdf_state<Model>& s) {
  using L = state_layout<Model>;
  constexpr int size = state_layout<Model>::newton_size;
  bdf_history_lanes<Model, D>& H = S.history;
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

  // The Jacobian and the factors where valid; elsewhere the finite values of clear_matrices (a member's
  // invalid ones may be a failed evaluation's, or never written), which nothing reads as the member's.
  corrector_lanes<Model, D>& C = S.corrector;
  const corrector_matrices<Model>& c = s.corrector;
#define LOCKSTEP_SIMD_LOAD_BLOCK(B) \
  for (size_t e = 0; e < std::size(c.jac.B.a); ++e) set_lane(C.jac.B.a[e], l, c.jacobian_valid ? c.jac.B.a[e] : 0.0);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_LOAD_BLOCK)
#undef LOCKSTEP_SIMD_LOAD_BLOCK
  C.dropped.bits = with_lane(C.dropped.bits, l, static_cast<int64_t>(c.jac.dropped));
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j)
      C.newton.lu(i, j) = with_lane(C.newton.lu(i, j), l, c.newton_valid ? c.newton.lu(i, j) : i == j ? 1.0 : 0.0);
    C.newton.pivot[i] = with_lane(C.newton.pivot[i], l, int64_t{c.newton_valid ? c.newton.pivot[i] : i});
  }
  set_lane(C.newton.c, l, c.newton_valid ? c.newton.c : 1.0);
  set_mask_lane<D>(C.jacobian_valid, l, c.jacobian_valid);
  set_mask_lane<D>(C.newton_valid, l, c.newton_valid);
  set_mask_lane<D>(C.jacobian_fresh, l, c.jacobian_fresh);
}

// The member in lane l of S, without its Jacobian and factors, into s: what its dense output reads.
template <class Model, class D>
HWY_INLINE void store_history_lane(const bdf_lanes<Model, D>& S, size_t l, bdf_state<Model>& s) {
  using L = state_layout<Model>;
  const bdf_history_lanes<Model, D>& H = S.history;
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
  constexpr int size = state_layout<Model>::newton_size;
  store_history_lane(S, l, s);
  const corrector_lanes<Model, D>& C = S.corrector;
  corrector_matrices<Model>& c = s.corrector;
#define LOCKSTEP_SIMD_STORE_BLOCK(B) \
  for (size_t e = 0; e < std::size(c.jac.B.a); ++e) c.jac.B.a[e] = lane_of(C.jac.B.a[e], l);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_STORE_BLOCK)
#undef LOCKSTEP_SIMD_STORE_BLOCK
  c.jac.dropped = static_cast<std::uint64_t>(hn::ExtractLane(C.dropped.bits, l));
  for (int e = 0; e < size * size; ++e) c.newton.lu.a[e] = hn::ExtractLane(C.newton.lu.a[e], l);
  for (int i = 0; i < size; ++i) c.newton.pivot[i] = int(hn::ExtractLane(C.newton.pivot[i], l));
  c.newton.c = lane_of(C.newton.c, l);
  c.jacobian_valid = mask_lane_of<D>(C.jacobian_valid, l);
  c.newton_valid = mask_lane_of<D>(C.newton_valid, l);
  c.jacobian_fresh = mask_lane_of<D>(C.jacobian_fresh, l);
}

// bdf_attempt for the lanes of `lanes`, each towards its own t_end with its own parameters (p[i]:
// parameter i of every lane). Returns each lane's attempt_result as a double (the other lanes: -1);
// sets status where a lane fails.
template <class Model, class D>
HWY_NOINLINE pack<D> bdf_attempt(mask<D> lanes, bdf_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                 const solver_options& opt, bdf_counters_lanes<D>& counters, pack<D>& status) {
  using L = state_layout<Model>;
  using P = pack<D>;
  using M = mask<D>;
  using S = state_lanes<Model, D>;
  constexpr int max_nodes = bdf_max_nodes<bdf_history_lanes<Model, D>>;
  const D d;
  const bool fixed = opt.fixed_h > 0.0;
  const formulation form = opt.form;
  const P one(1.0);
  P result(-1.0);
  const auto ended = [&](M m, attempt_result r) { result = select(m, P(double(int(r))), result); };

  // ---- step size and order of this attempt ----
  const step_plan_lanes<D> plan = plan_step(s.t, s.h, t_end, opt, s.t0);
  const M too_small = step_too_small(lanes, plan, status);
  ended(too_small, attempt_result::failed);
  const M attempting = hn::AndNot(too_small, lanes);
  // A lane not attempting (outside `lanes`, or without a usable step) steps by 1 from its last point,
  // so that no discarded value divides by zero (a finished lane's step may be 0).
  const P h = select(attempting, plan.h, one), h_min = plan.h_min;
  P k = fixed ? P(double(opt.fixed_order)) : s.order;
  const P available = available_past(s.history);
  k = select(k > available - 1.0, available - 1.0, k);
  k = select(k < one, one, k);
  const P t_new = fixed ? select(attempting, plan.t_new, s.t + one) : s.t + h;

  // ---- predictor ----
  P x[max_nodes];
  S dd[max_nodes], y_pred, yp_pred;
  const P c = bdf_predict(s.history, k, t_new, x, dd, y_pred, yp_pred);
  const S w = bdf_error_weights<Model>(s.history.y_newest, s.history.y_scale, opt);

  // ---- corrector ----
  S y = y_pred;  // a finite state in every lane (corrector_inl.hpp)
  const corrector_outcome_lanes<D> solved =
      solve_corrector<Model>(attempting, form, t_new, y_pred, yp_pred, c, w, p, opt, s.corrector, counters.corrector, y);
  const M newton_failed = hn::AndNot(solved.converged, attempting);
  if (!hn::AllFalse(d, newton_failed)) {  // IDA: cut by 4 after a Newton failure
    s.order = select(newton_failed, k, s.order);
    const M gives_up = cut_after_newton_failure(newton_failed, solved.reason, fixed, s.newton_cuts, h, 0.25, h_min,
                                                s.h, counters.step, status);
    ended(gives_up, attempt_result::failed);
    ended(hn::AndNot(gives_up, newton_failed), attempt_result::rejected);
  }
  const M converged = hn::And(solved.converged, attempting);
  s.newton_cuts = select(converged, P(0.0), s.newton_cuts);
  // From here on only converged lanes count; the others read their prediction (finite), not a state
  // the corrector left not finite.
  for (int i = 0; i < L::size; ++i) y[i] = select(converged, y[i], y_pred[i]);

  // ---- error test (adaptive only) ----
  M accepted = converged;
  P err_k(0.0);
  if (!fixed) {
    err_k = error_estimate<Model>(y, y_pred, w, c, t_new, x, k);
    s.error = select(converged, err_k, s.error);
    const M error_failed = hn::AndNot(err_k <= 1.0, converged);
    if (!hn::AllFalse(d, error_failed)) {
      counters.step.rejected_steps = select(error_failed, counters.step.rejected_steps + 1.0, counters.step.rejected_steps);
      const auto lower_estimate = [&](M ask) { return lte_from_newton_form<Model>(ask, k - 1.0, x, dd, t_new, y, w); };
      const M stops = bdf_after_error_failure(error_failed, k, err_k, h, h_min, lower_estimate, s.error_failures,
                                              s.order, s.h);
      status = select(stops, P(double(member_status::step_size_too_small)), status);
      ended(stops, attempt_result::failed);
      ended(hn::AndNot(stops, error_failed), attempt_result::rejected);
    }
    accepted = hn::AndNot(error_failed, converged);
  }
  if (hn::AllFalse(d, accepted)) return result;

  // The past Newton form over every available node (levels 0 .. k again, with the same bits, and the
  // rest): the order estimates read up to level k + 1, and it becomes the older differences.
  past_newton_form(s.history, 0, available, x, dd);

  // ---- next order (estimates over t_new and the past nodes, before they shift) ----
  order_choice_lanes<D> next{k, one, hn::FirstN(d, 0)};
  if (!fixed) {
    const order_candidates_lanes<D> can =
        bdf_order_candidates(k, s.order, s.steps_at_order, opt.max_order, available);
    s.steps_at_order = select(accepted, can.steps_at_order, s.steps_at_order);
    const M lower = hn::And(accepted, can.lower), higher = hn::And(accepted, can.higher);
    P lte_lower(0.0), lte_higher(0.0);
    if (!hn::AllFalse(d, hn::Or(lower, higher)))
      order_estimates<Model>(k, lower, higher, x, dd, t_new, y, w, lte_lower, lte_higher);
    next = choose_order(k, err_k, lower, lte_lower, higher, lte_higher);
  }

  // ---- accept: y becomes the newest point, the past Newton form the older differences ----
  accept_into_history(accepted, t_new, y, dd, s.history);
  s.t = select(accepted, t_new, s.t);
  s.last_order = select(accepted, k, s.last_order);
  counters.steps = select(accepted, counters.steps + 1.0, counters.steps);
  counters.last_h = select(accepted, h, counters.last_h);
  bdf_after_acceptance(accepted, next, k, h, opt, s.order, s.h, s.steps_at_order, s.error_failures);
  ended(accepted, attempt_result::accepted);
  return result;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
