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
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// The orders the method runs at are 1 .. bdf_max_order (BDF is zero-stable only up to order 6, and
// IDA and DASSL stop at 5).
inline constexpr int bdf_max_order = 5;

}  // namespace lockstep

namespace lockstep::detail {

// x^e for a small positive integer e, by repeated multiplication.
LOCKSTEP_HD double integer_power(double x, int e) {
  double r = x;
  for (int i = 1; i < e; ++i) r *= x;
  return r;
}

// Which neighbouring orders an accepted step of order k may choose: k - 1 when k > 1, and k + 1 when
// the step is the (k + 1)-th in a row at order k (IDA's rule), max_order allows it and the history
// holds the k + 2 past nodes its estimate reads. planned_order and steps_at_order are the member's
// before the step (k may be below the planned order while the history is short); steps_at_order
// comes back counting this step.
struct order_candidates {
  int steps_at_order = 0;
  bool lower = false;
  bool higher = false;
};
LOCKSTEP_HD order_candidates bdf_order_candidates(int k, int planned_order, int steps_at_order, int max_order,
                                                  int available_past) {
  order_candidates c;
  c.steps_at_order = (k == planned_order) ? steps_at_order + 1 : 1;
  c.lower = k > 1;
  c.higher = k < max_order && c.steps_at_order >= k + 1 && available_past >= k + 2;
  return c;
}

// The next order and step ratio after an accepted step of order k (the header's rules): the order
// among k - 1 (when lower), k and k + 1 (when higher) whose admissible step ratio
// r_p = (2 LTE_p + 1e-4)^(-1/(p+1)) is largest (ties favour k - 1 over k, and k over k + 1), then the
// ratio 2 when r >= 2, 1 when 1 < r < 2, max(0.5, min(0.9, r)) when r <= 1. With a_p = 2 LTE_p + 1e-4
// and e_p = p + 1, r_i >= r_j exactly when a_i^(e_j) <= a_j^(e_i), r >= 2 when a <= 2^-e and r <= 1
// when a >= 1 (in exact arithmetic: the two roundings can disagree only at near-ties, which
// tests/method BdfOrderSelection leaves out of its comparison with the pow rule), so pow is needed
// only for a step that shrinks (it was three pow calls per step, 7 % of
// car_axis' BDF time). A non-finite estimate never wins a comparison, as pow's NaN or 0 never did.
struct order_choice {
  int order = 1;
  double ratio = 1.0;
  bool shrinks = false;  // r < 1: h shrinks (or would without the clamp); the error-failure count stays
};
LOCKSTEP_HD order_choice choose_order(int k, double lte_k, bool lower, double lte_lower, bool higher,
                                      double lte_higher) {
  double a = 2.0 * lte_k + 1e-4;
  int e = k + 1;
  order_choice choice;
  choice.order = k;
  if (lower) {
    const double a_low = 2.0 * lte_lower + 1e-4;
    if (integer_power(a_low, e) <= integer_power(a, k)) {  // r_{k-1} >= r_k
      a = a_low;
      e = k;
      choice.order = k - 1;
    }
  }
  if (higher) {
    const double a_high = 2.0 * lte_higher + 1e-4;
    if (integer_power(a_high, e) < integer_power(a, k + 2)) {  // r_{k+1} > r_best
      a = a_high;
      e = k + 2;
      choice.order = k + 1;
    }
  }
  choice.shrinks = a > 1.0;
  if (a >= 1.0) {
    choice.ratio = max(0.5, min(0.9, pow(a, -1.0 / e)));
  } else if (a <= ldexp(1.0, -e)) {
    choice.ratio = 2.0;
  } else {
    choice.ratio = 1.0;
  }
  return choice;
}

// After an accepted step of order k and size h, with the order choice `next` (fixed steps: next is
// the default choice, order k, no shrink): the member's next order, step size, steps at that order
// and error-failure count.
//
// An accepted step that shrinks h is no sign of recovery, so it does not clear the failure count
// (IDA and DASSL clear it on every acceptance). Without this, a member can alternate "accept and
// shrink by 0.9" with "reject" at order 5 while the estimate stays near 1 whatever h is — the
// history's rounding, amplified by divided differences over ever closer nodes, not truncation
// error — down to h = 1e-16: 2.5 % of the perturbed andrews members of bench/peers at rtol 1e-8
// ended so. Counted across such steps, the third failure drops to order 1 (bdf_after_error_failure)
// and the step recovers.
LOCKSTEP_HD void bdf_after_acceptance(const order_choice& next, int k, double h, const solver_options& opt,
                                      int& order, double& h_next, int& steps_at_order, int& error_failures) {
  if (!next.shrinks) error_failures = 0;
  if (opt.fixed_h > 0.0) {
    h_next = opt.fixed_h;
    return;
  }
  if (next.order != k) steps_at_order = 0;
  order = next.order;
  h_next = min(next.ratio * h, opt.h_max);
}

// After an error-test failure of an attempt of order k and size h with estimate err_k (> 1, or not a
// number): counts the failure and sets the next order and step size by the header's escalation (the
// first failure: ratio 0.9 (2 err_k + 1e-4)^(-1/(k+1)) within [0.25, 0.9] and order k - 1 when
// lower_estimate(), LTE_{k-1}, is no larger than err_k, asked for only then; the second: 0.25; the
// third and later: order 1 and 0.25, as IDA and DASSL do). Returns true when the new step is below h_min: the member then fails with
// step_size_too_small.
template <class LowerEstimate>
LOCKSTEP_HD bool bdf_after_error_failure(int k, double err_k, double h, double h_min, const LowerEstimate& lower_estimate,
                                         int& error_failures, int& order, double& h_next) {
  ++error_failures;
  double ratio;
  int new_order = k;
  if (error_failures == 1) {
    if (k > 1 && lower_estimate() <= err_k) new_order = k - 1;
    ratio = 0.9 * pow(2.0 * err_k + 1e-4, -1.0 / (k + 1));
    ratio = max(0.25, min(0.9, ratio));
  } else if (error_failures == 2) {
    ratio = 0.25;
  } else {
    new_order = 1;
    ratio = 0.25;
  }
  order = new_order;
  h_next = ratio * h;
  return h_next < h_min;
}

}  // namespace lockstep::detail
