// lockstep/simd/step_control_inl.hpp — the step-size and order decisions of the methods for W members
// at once, one per lane: the lanes versions of lockstep/method/step_control.hpp (plan_step,
// step_too_small, cut_after_newton_failure), and the one texts of method/bdf_step_control.hpp (IDA's
// order and step rules) and method/radau_step_control.hpp (RADAU5's controller) compiled for packs.
//
// Every function gives each lane exactly the bits the scalar function gives that lane's member alone
// (tests/simd/step_control_test.cpp compares every output of every lane at W = 1, 2, 4, 8 on every
// instruction set), so a member's steps and orders do not depend on its lane, its pack or W. The rules
// and their sources are stated once, in the scalar headers; this file says only how the lanes follow
// them:
//  - a branch of the scalar code becomes a mask, and both sides are computed; a value the scalar code
//    would not compute for a lane (an estimate it does not ask for, a power on the other side of a
//    branch) is computed on a harmless argument instead (0 for an estimate, 1 for a base), so that no
//    discarded value raises a floating-point exception or stalls on a subnormal;
//  - the member's small integers (order, steps at that order, error-test failures, consecutive Newton
//    cuts, counters, the member_status value) are held exactly in double lanes, so that one mask type
//    serves every comparison;
//  - the options are the study's, the same for every lane: a branch on them stays a branch;
//  - each function takes the mask of the lanes it decides for (`lanes`: those whose attempt ended
//    that way) and changes nothing in the others;
//  - powers and exponents as the scalar code forms them: x^e by e - 1 rounded products in its order,
//    2^-e exactly, pow from lockstep/core/vector_math (whose one lane is the double path's pow).
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_STEP_CONTROL_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_STEP_CONTROL_INL_HPP_
#undef LOCKSTEP_SIMD_STEP_CONTROL_INL_HPP_
#else
#define LOCKSTEP_SIMD_STEP_CONTROL_INL_HPP_
#endif

#include <limits>

#include "hwy/highway.h"
#include "lockstep/core/status.hpp"
#include "lockstep/method/bdf_step_control.hpp"
#include "lockstep/method/radau_step_control.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/simd/pack_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// Lane l of a where m holds in lane l, else lane l of b.
template <class D>
HWY_INLINE pack<D> select(mask<D> m, pack<D> a, pack<D> b) {
  return pack<D>(hn::IfThenElse(m, a.v, b.v));
}

// ---- shared by the methods (method/step_control.hpp) ----

template <class D>
struct step_plan_lanes {
  pack<D> h;
  pack<D> h_min;
  mask<D> too_small;
  pack<D> t_new;
};

// plan_step per lane: each lane's t, proposed h, end of its interval and start of its fixed-step grid.
template <class D>
HWY_INLINE step_plan_lanes<D> plan_step(pack<D> t, pack<D> h_proposed, pack<D> t_end, const solver_options& opt,
                                        pack<D> t0) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const D d;
  step_plan_lanes<D> plan;
  plan.h_min = max(pack<D>(opt.h_min), 16.0 * eps * max(abs(t), abs(t_end)));
  if (opt.fixed_h > 0.0) {
    const pack<D> h(opt.fixed_h);
    // floor's sign of zero may differ between targets (Highway's emulations); + 1 absorbs it.
    const pack<D> k_next = pack<D>(hn::Floor(((t - t0) / h + 0.5).v)) + 1.0;
    const pack<D> grid_next = t0 + k_next * h;
    const mask<D> on_end = abs(grid_next - t_end) <= 4.0 * eps * k_next * h;
    const mask<D> beyond = hn::AndNot(on_end, grid_next > t_end);
    plan.h = select(beyond, t_end - t, h);
    plan.t_new = select(hn::Or(on_end, beyond), t_end, grid_next);
    plan.too_small = hn::FirstN(d, 0);
    return plan;
  }
  plan.h = min(h_proposed, pack<D>(opt.h_max));
  plan.h = select(t + 1.0001 * plan.h >= t_end, t_end - t, plan.h);
  plan.t_new = t + plan.h;
  plan.too_small = hn::And(plan.h < plan.h_min, t + plan.h < t_end);
  return plan;
}

// step_too_small per lane: the lanes of `lanes` whose plan leaves no usable step, with their status
// set to step_size_too_small.
template <class D>
HWY_INLINE mask<D> step_too_small(mask<D> lanes, const step_plan_lanes<D>& plan, pack<D>& status) {
  const mask<D> fail = hn::And(lanes, plan.too_small);
  status = select(fail, pack<D>(double(member_status::step_size_too_small)), status);
  return fail;
}

// The member counters a step decision changes, one lane per member.
template <class D>
struct step_counters_lanes {
  pack<D> rejected_steps;
  pack<D> newton_failures;
};

// cut_after_newton_failure per lane, for the lanes of `lanes` whose Newton iteration failed with
// `reason` (a member_status value, success for plain non-convergence): returns those that fail, with
// their status set; the others are cut by `cut`.
template <class D>
HWY_INLINE mask<D> cut_after_newton_failure(mask<D> lanes, pack<D> reason, bool fixed, pack<D>& consecutive_cuts,
                                            pack<D> h, double cut, pack<D> h_min, pack<D>& h_next,
                                            step_counters_lanes<D>& counters, pack<D>& status) {
  counters.rejected_steps = select(lanes, counters.rejected_steps + 1.0, counters.rejected_steps);
  counters.newton_failures = select(lanes, counters.newton_failures + 1.0, counters.newton_failures);
  consecutive_cuts = select(lanes, consecutive_cuts + 1.0, consecutive_cuts);
  const pack<D> success(double(member_status::success));
  const mask<D> plain = reason == success;
  const mask<D> give_up = fixed ? lanes : hn::And(lanes, consecutive_cuts > 10.0);
  status = select(give_up, select(plain, pack<D>(double(member_status::newton_failure)), reason), status);
  const mask<D> cut_lanes = hn::AndNot(give_up, lanes);
  h_next = select(cut_lanes, cut * h, h_next);
  const mask<D> too_small = hn::And(cut_lanes, h_next < h_min);
  status = select(too_small, select(plain, pack<D>(double(member_status::step_size_too_small)), reason), status);
  return hn::Or(give_up, too_small);
}

// ---- BDF (method/bdf_step_control.hpp) and Radau IIA (method/radau_step_control.hpp): their
// controllers compiled for this instruction set's packs from the texts the one-member code compiles ----
#include "lockstep/method/bdf_step_control_generic.inc"  // IWYU pragma: keep
#include "lockstep/method/radau_step_control_generic.inc"  // IWYU pragma: keep

// A pack of members' order candidates and order choice: the orders and counts held exactly in doubles.
template <class D>
using order_candidates_lanes = order_candidates_of<pack<D>, mask<D>>;
template <class D>
using order_choice_lanes = order_choice_of<pack<D>, pack<D>, mask<D>>;

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
