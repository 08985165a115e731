// lockstep/method/bdf_step_control.hpp — BDF's choice of the next order and step size, after an
// accepted step and after an error-test failure.
//
// bdf_attempt (method/bdf.hpp) calls them once per attempt, on the state's local error estimates,
// or on the larger of the state's and its companion's at each order (method/attempt.hpp; the tangents of
// lyapunov/tangent_bdf.hpp), so that a member with tangents whose estimates never exceed the state's
// takes bitwise the steps and orders of the plain member (tests/lyapunov/tangent_step_control_test.cpp
// checks it).
//
// The rules follow IDA (Hindmarsh et al. 2005, section 3, and the IDA user guide's "Step size and
// order selection"): after acceptance the order with the largest admissible step among k - 1, k and
// k + 1 (k + 1 only after k + 1 steps at order k), step ratio r = (2 LTE + 1e-4)^(-1/(p+1)), doubled
// when r >= 2, kept when 1 < r < 2 (so the Newton matrix can be reused), cut to max(0.5, min(0.9, r))
// when r <= 1; after an error-test failure: ratio 0.9 r in [0.25, 0.9] (with order k - 1 when its
// estimate is no larger), then 0.25, then order 1 and 0.25.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// The orders the method runs at are 1 .. bdf_max_order (BDF is zero-stable only up to order 6, and
// IDA and DASSL stop at 5).
inline constexpr int bdf_max_order = 5;

}  // namespace lockstep

namespace lockstep::detail {

// The controller's functions (integer_power, two_to_minus, bdf_order_candidates, choose_order,
// bdf_after_acceptance, bdf_after_error_failure), one text for one member here and for SIMD packs in
// lockstep/simd/step_control_inl.hpp.
#include "lockstep/method/bdf_step_control_generic.inc"

// One member's candidates and choice: its order and counts are ints, its decisions bools.
using order_candidates = order_candidates_of<int, bool>;
using order_choice = order_choice_of<double, int, bool>;

}  // namespace lockstep::detail
