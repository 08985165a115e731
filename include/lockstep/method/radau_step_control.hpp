// lockstep/method/radau_step_control.hpp — the step-size controller of the Radau IIA methods
// (RADAU5's), after an accepted step and after an error-test failure.
//
// radau_attempt (method/radau.hpp) decides from the state's error estimate; the tangent step
// (lyapunov/tangent_radau.hpp) redoes the decision from the larger of the state's and the tangents'
// estimates. Both call these functions, so that a member with tangents whose estimates never exceed
// the state's takes bitwise the steps of the plain member (tests/lyapunov/tangent_step_control_test.cpp
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
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::detail {

// RADAU5's safety factor SAFE = WORK(2).
inline constexpr double radau_safety = 0.9;

// RADAU5's FAC: the safety factor lowered in proportion to the Newton iterations the step needed
// (CFAC / (NEWT + 2 NIT), CFAC = SAFE (1 + 2 NIT)): a step whose Newton iteration barely converged
// would likely fail to converge at a larger step, so its proposal is more cautious.
LOCKSTEP_HD double radau_safety_factor(int newton_iterations, int max_iterations) {
  return min(radau_safety, radau_safety * (1 + 2 * max_iterations) / (newton_iterations + 2.0 * max_iterations));
}

// RADAU5's step-size quotient quot = h / h_new from a factor x = err^(1/(s+1)) / fac (or Gustafsson's
// predicted one), clamped so that h_new / h stays within [0.2, 8]: RADAU5 reads the bounds as
// WORK(8) = 0.2 <= HNEW / HOLD <= WORK(9) = 8 and clamps QUOT = HOLD / HNEW to [FACR, FACL] =
// [1 / WORK(9), 1 / WORK(8)] = [1/8, 5] (Hairer & Wanner 1996, IV.8, and the code radau5.f).
LOCKSTEP_HD double radau_step_quotient(double x) {
  constexpr double min_quot = 1.0 / 8.0;  // growth by at most 8
  constexpr double max_quot = 5.0;        // shrinking to no less than 0.2
  return max(min_quot, min(max_quot, x));
}

// The quotient of the proposal from the scaled error err of a step with `stages` stages and the
// safety factor fac (radau_safety_factor).
LOCKSTEP_HD double radau_error_quotient(double err, int stages, double fac) {
  const double exponent = 1.0 / (stages + 1);  // err = O(h^(s+1))
  return radau_step_quotient(pow(err, exponent) / fac);
}

// After an error-test failure of a step of size h with the quotient quot of its error: the next step
// (the member's first step cut by 10), marked as following a rejection. Returns true when the new
// step is below h_min: the member then fails with step_size_too_small.
LOCKSTEP_HD bool radau_after_error_failure(double h, double quot, bool first, double h_min, double& h_next,
                                           bool& last_rejected) {
  h_next = first ? 0.1 * h : h / quot;
  last_rejected = true;
  return h_next < h_min;
}

// What the controller remembers of accepted steps: Gustafsson's previous step and its error.
// RADAU5 floors the error at 1e-2 (ERRACC): it divides the next prediction, and a nearly exact step
// would otherwise make that prediction cut the following step hard.
LOCKSTEP_HD void radau_remember_accepted(double h, double err, double& h_accepted, double& err_accepted) {
  h_accepted = h;
  err_accepted = max(1e-2, err);
}

// The quotient after an accepted step of size h and error err: the larger of the error's own quot and
// Gustafsson's prediction (h_accepted / h) (err^2 / err_accepted)^(1/(s+1)) / SAFE from the previous
// accepted step (none for the member's first step, first).
LOCKSTEP_HD double radau_accepted_quotient(double quot, double h, double err, int stages, bool first, double h_accepted,
                                           double err_accepted) {
  if (first) return quot;
  const double exponent = 1.0 / (stages + 1);
  double facgus = (h_accepted / h) * pow(err * err / err_accepted, exponent) / radau_safety;
  facgus = radau_step_quotient(facgus);
  return max(quot, facgus);
}

// The step after an accepted adaptive step of size h with the quotient quot (radau_accepted_quotient):
// no growth right after a rejection (last_rejected), h itself when the change is within [1, 1.2] and
// the Jacobian is kept (jacobian_kept), at most h_max.
LOCKSTEP_HD double radau_next_step(double h, double quot, bool last_rejected, bool jacobian_kept, double h_max) {
  double h_new = h / quot;
  if (last_rejected) h_new = min(h_new, h);
  const double q = h_new / h;
  return (jacobian_kept && q >= 1.0 && q <= 1.2) ? h : min(h_new, h_max);
}

}  // namespace lockstep::detail
