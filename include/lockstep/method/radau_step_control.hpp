// lockstep/method/radau_step_control.hpp — the step-size controller of the Radau IIA methods
// (RADAU5's), after an accepted step and after an error-test failure.
//
// radau_attempt (method/radau.hpp) calls them once per attempt, on the state's error estimate,
// or on the larger of the state's and its companion's (method/attempt.hpp; the tangents of
// lyapunov/tangent_radau.hpp), so that a member with tangents whose errors never exceed the state's
// takes bitwise the steps of the plain member (tests/lyapunov/tangent_step_control_test.cpp
// checks it).
//
// The rules are RADAU5's (Hairer & Wanner, Solving ODEs II, 1996, IV.8, and the code radau5.f), with
// err = O(h^(s+1)) for s stages:
//   proposal    h_new = h / quot, quot = err^(1/(s+1)) / fac within [1/8, 5] (h_new / h in [0.2, 8]),
//               fac = 0.9 lowered when Newton needed many of its iterations (RADAU5's FAC);
//   rejection   h_new, but the first step of a member is cut by 10 (its estimate has no history);
//   acceptance  Gustafsson's predictive controller (Gustafsson 1994; Hairer & Wanner IV.8 eq. (8.25))
//               takes the larger quotient, h does not grow right after a rejection, and h is kept
//               when h_new / h is within [1, 1.2] and the Jacobian is kept, so the factorizations
//               are reused (RADAU5's QUOT1 = 1, QUOT2 = 1.2).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::detail {

// RADAU5's safety factor SAFE = WORK(2).
inline constexpr double radau_safety = 0.9;

// The controller's functions (radau_safety_factor, radau_step_quotient, radau_error_quotient,
// radau_after_error_failure, radau_remember_accepted, radau_accepted_quotient, radau_next_step), one text
// for doubles here and for SIMD packs in lockstep/simd/step_control_inl.hpp.
#include "lockstep/method/radau_step_control_generic.inc"

}  // namespace lockstep::detail
