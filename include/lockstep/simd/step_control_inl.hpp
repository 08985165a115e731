// lockstep/simd/step_control_inl.hpp — the step-size and order decisions of the methods for W members
// at once, one per lane: the one texts of lockstep/method/step_control.hpp (plan_step, step_too_small,
// cut_after_newton_failure), method/bdf_step_control.hpp (IDA's order and step rules) and
// method/radau_step_control.hpp (RADAU5's controller) compiled for packs.
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

// ---- shared by the methods (method/step_control.hpp): plan_step, step_too_small,
// cut_after_newton_failure, compiled for this instruction set's packs from the text the one-member code
// compiles ----
#include "lockstep/method/step_control_generic.inc"  // IWYU pragma: keep

template <class D>
using step_plan_lanes = step_plan_of<pack<D>, mask<D>>;

// The member counters a step decision changes, one lane per member.
template <class D>
struct step_counters_lanes {
  pack<D> rejected_steps;
  pack<D> newton_failures;
};

// The member_counters a step attempt changes (the implicit methods', the explicit pairs', auto's), per
// lane, under member_counters' names.
template <class D>
struct attempt_counters_lanes {
  pack<D> steps{}, last_h{}, rejected_steps{}, newton_failures{};
  pack<D> jacobian_evaluations{}, lu_factorizations{}, model_evaluations{}, newton_iterations{};
  pack<D> explicit_steps{}, stiffness_detections{}, method_switches{};
};

// Lane l of c takes the counts of `from` that an attempt changes, and gives them back into `to`.
template <class D>
HWY_INLINE void load_counters_lane(attempt_counters_lanes<D>& c, size_t l, const member_counters& from) {
  set_lane(c.steps, l, double(from.steps)), set_lane(c.last_h, l, from.last_h);
  set_lane(c.rejected_steps, l, double(from.rejected_steps));
  set_lane(c.newton_failures, l, double(from.newton_failures));
  set_lane(c.jacobian_evaluations, l, double(from.jacobian_evaluations));
  set_lane(c.lu_factorizations, l, double(from.lu_factorizations));
  set_lane(c.model_evaluations, l, double(from.model_evaluations));
  set_lane(c.newton_iterations, l, double(from.newton_iterations));
  set_lane(c.explicit_steps, l, double(from.explicit_steps));
  set_lane(c.stiffness_detections, l, double(from.stiffness_detections));
  set_lane(c.method_switches, l, double(from.method_switches));
}
template <class D>
HWY_INLINE void store_counters_lane(const attempt_counters_lanes<D>& c, size_t l, member_counters& to) {
  to.steps = long(lane_of(c.steps, l)), to.last_h = lane_of(c.last_h, l);
  to.rejected_steps = long(lane_of(c.rejected_steps, l));
  to.newton_failures = long(lane_of(c.newton_failures, l));
  to.jacobian_evaluations = long(lane_of(c.jacobian_evaluations, l));
  to.lu_factorizations = long(lane_of(c.lu_factorizations, l));
  to.model_evaluations = long(lane_of(c.model_evaluations, l));
  to.newton_iterations = long(lane_of(c.newton_iterations, l));
  to.explicit_steps = long(lane_of(c.explicit_steps, l));
  to.stiffness_detections = long(lane_of(c.stiffness_detections, l));
  to.method_switches = long(lane_of(c.method_switches, l));
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
