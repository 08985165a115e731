// lockstep/simd/step_control_inl.hpp — the step-size and order decisions of the methods for W members
// at once, one per lane: the lanes versions of lockstep/method/step_control.hpp (plan_step,
// step_too_small, cut_after_newton_failure), method/bdf_step_control.hpp (IDA's order and step rules)
// and method/radau_step_control.hpp (RADAU5's controller).
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

// ---- BDF (method/bdf_step_control.hpp) ----

// detail::integer_power per lane, for exponents 1 .. MaxExponent: x^e by e - 1 rounded products in the
// scalar order; a lane's products beyond its exponent multiply by 1 and are discarded.
template <int MaxExponent, class D>
HWY_INLINE pack<D> integer_power(pack<D> x, pack<D> e) {
  pack<D> r = x;
  for (int i = 1; i < MaxExponent; ++i) {
    const mask<D> more = pack<D>(double(i)) < e;
    r = select(more, r * select(more, x, pack<D>(1.0)), r);
  }
  return r;
}

// 2^-e per lane for integral e in 0 .. MaxExponent, exactly (ldexp(1, -e)).
template <int MaxExponent, class D>
HWY_INLINE pack<D> two_to_minus(pack<D> e) {
  pack<D> r(1.0);
  for (int i = 1; i <= MaxExponent; ++i) r = select(pack<D>(double(i)) <= e, r * 0.5, r);
  return r;
}

template <class D>
struct order_candidates_lanes {
  pack<D> steps_at_order;
  mask<D> lower;
  mask<D> higher;
};

// detail::bdf_order_candidates per lane.
template <class D>
HWY_INLINE order_candidates_lanes<D> bdf_order_candidates(pack<D> k, pack<D> planned_order, pack<D> steps_at_order,
                                                          int max_order, pack<D> available_past) {
  order_candidates_lanes<D> c;
  c.steps_at_order = select(k == planned_order, steps_at_order + 1.0, pack<D>(1.0));
  c.lower = k > 1.0;
  c.higher = hn::And(hn::And(k < pack<D>(double(max_order)), c.steps_at_order >= k + 1.0), available_past >= k + 2.0);
  return c;
}

template <class D>
struct order_choice_lanes {
  pack<D> order;
  pack<D> ratio;
  mask<D> shrinks;
};

// detail::choose_order per lane. A lane without the lower (higher) candidate compares powers of 1 and
// of an estimate of 0 (no overflow the scalar code would not have) and never takes it.
template <class D>
HWY_INLINE order_choice_lanes<D> choose_order(pack<D> k, pack<D> lte_k, mask<D> lower, pack<D> lte_lower,
                                              mask<D> higher, pack<D> lte_higher) {
  constexpr int max_exponent = bdf_max_order + 2;
  const pack<D> zero(0.0), one(1.0);
  pack<D> a = 2.0 * lte_k + 1e-4;
  pack<D> e = k + 1.0;
  order_choice_lanes<D> choice;
  choice.order = k;

  const pack<D> a_low = 2.0 * select(lower, lte_lower, zero) + 1e-4;
  const pack<D> k_power = integer_power<max_exponent>(select(lower, a, one), k);
  const mask<D> take_low = hn::And(lower, integer_power<max_exponent>(a_low, e) <= k_power);  // r_{k-1} >= r_k
  a = select(take_low, a_low, a);
  e = select(take_low, k, e);
  choice.order = select(take_low, k - 1.0, choice.order);

  const pack<D> a_high = 2.0 * select(higher, lte_higher, zero) + 1e-4;
  const pack<D> best_power = integer_power<max_exponent>(select(higher, a, one), k + 2.0);
  const mask<D> take_high = hn::And(higher, integer_power<max_exponent>(a_high, e) < best_power);  // r_{k+1} > r_best
  a = select(take_high, a_high, a);
  e = select(take_high, k + 2.0, e);
  choice.order = select(take_high, k + 1.0, choice.order);

  choice.shrinks = a > one;
  const mask<D> at_least_one = a >= one;
  const pack<D> shrunk = max(pack<D>(0.5), min(pack<D>(0.9), pow(select(at_least_one, a, one), pack<D>(-1.0) / e)));
  const pack<D> kept_or_doubled = select(a <= two_to_minus<max_exponent>(e), pack<D>(2.0), one);
  choice.ratio = select(at_least_one, shrunk, kept_or_doubled);
  return choice;
}

// detail::bdf_after_acceptance per lane, for the lanes of `lanes` whose attempt was accepted.
template <class D>
HWY_INLINE void bdf_after_acceptance(mask<D> lanes, const order_choice_lanes<D>& next, pack<D> k, pack<D> h,
                                     const solver_options& opt, pack<D>& order, pack<D>& h_next,
                                     pack<D>& steps_at_order, pack<D>& error_failures) {
  error_failures = select(hn::AndNot(next.shrinks, lanes), pack<D>(0.0), error_failures);
  if (opt.fixed_h > 0.0) {
    h_next = select(lanes, pack<D>(opt.fixed_h), h_next);
    return;
  }
  steps_at_order = select(hn::AndNot(next.order == k, lanes), pack<D>(0.0), steps_at_order);
  order = select(lanes, next.order, order);
  h_next = select(lanes, min(next.ratio * h, pack<D>(opt.h_max)), h_next);
}

// detail::bdf_after_error_failure per lane, for the lanes of `lanes` whose error test failed. The
// estimate LTE_{k-1} is asked for, as lower_estimate(ask) with ask the lanes that need it, only where
// the scalar code asks (a first failure above order 1), and not at all when no lane does; its other
// lanes are not read. Returns the lanes of `lanes` whose new step is below h_min.
template <class D, class LowerEstimate>
HWY_INLINE mask<D> bdf_after_error_failure(mask<D> lanes, pack<D> k, pack<D> err_k, pack<D> h, pack<D> h_min,
                                           const LowerEstimate& lower_estimate, pack<D>& error_failures,
                                           pack<D>& order, pack<D>& h_next) {
  const D d;
  const pack<D> one(1.0);
  error_failures = select(lanes, error_failures + 1.0, error_failures);
  const mask<D> first = hn::And(lanes, error_failures == one);
  const mask<D> second = hn::And(lanes, error_failures == pack<D>(2.0));
  const mask<D> later = hn::AndNot(hn::Or(first, second), lanes);

  const mask<D> ask = hn::And(first, k > one);
  mask<D> lower_order = hn::FirstN(d, 0);
  if (!hn::AllFalse(d, ask)) lower_order = hn::And(ask, lower_estimate(ask) <= err_k);

  const pack<D> k_first = select(first, k, one);
  pack<D> ratio = 0.9 * pow(2.0 * select(first, err_k, pack<D>(0.0)) + 1e-4, pack<D>(-1.0) / (k_first + 1.0));
  ratio = max(pack<D>(0.25), min(pack<D>(0.9), ratio));
  ratio = select(first, ratio, pack<D>(0.25));

  order = select(lanes, select(later, one, select(lower_order, k - 1.0, k)), order);
  h_next = select(lanes, ratio * h, h_next);
  return hn::And(lanes, h_next < h_min);
}

// ---- Radau IIA: RADAU5's controller, compiled for this instruction set's packs from the text the
// one-member code compiles for doubles (method/radau_step_control.hpp) ----
#include "lockstep/method/radau_step_control_generic.inc"  // IWYU pragma: keep

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
