// lockstep/method/step_control.hpp — the start and the step-size rules shared by the methods.
//
// Each method's own controller (the next step size and order after an accepted step and after an
// error-test failure) has a file of its own, included here: method/bdf_step_control.hpp and
// method/radau_step_control.hpp. They are separate because each states a different published rule
// set (IDA's; RADAU5's) and is shared between its method and that method's tangents
// (lyapunov/tangent_bdf.hpp, tangent_radau.hpp), not between the methods.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/bdf_step_control.hpp"
#include "lockstep/method/radau_step_control.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// The consistent initial point (method/initialize.hpp) as y0 = (q0, v0, lambda0, mu0 = 0, nu0) and its
// derivative y0' = (v0, a0, 0, 0, 0): the multipliers' derivatives are neither known nor needed.
template <class Model>
LOCKSTEP_HD void initial_point(const initial_values<Model>& init, state_vector<Model>& y, state_vector<Model>& yp) {
  using L = state_layout<Model>;
  y = state_vector<Model>{};
  yp = state_vector<Model>{};
  for (int i = 0; i < Model::n; ++i) {
    y[L::q + i] = init.q[i];
    y[L::v + i] = init.v[i];
    yp[L::q + i] = init.v[i];
    yp[L::v + i] = init.a[i];
  }
  for (int i = 0; i < Model::m; ++i) y[L::lambda + i] = init.lambda[i];
  for (int i = 0; i < Model::k; ++i) y[L::nu + i] = init.nu[i];
}

// The initial step: the order-1 local error h^2 / 2 ||q''|| is aimed at 0.1 in the error-weight norm
// (the idea of Hairer, Norsett & Wanner I.4's starting-step algorithm, with the consistent q''(t0) in
// place of a difference quotient), and at most 0.001 of the interval and h_max. IDA's h ||y'|| <= 0.5
// rule is far smaller for mechanical systems with large accelerations (andrews: h ~ 1e-9 at rtol 1e-4)
// and drives the Newton iteration into round-off, which grows like c^2 in the multipliers.
template <class Model>
LOCKSTEP_HD double initial_step_size(double t0, double t1, const initial_values<Model>& init, const solver_options& opt) {
  if (opt.fixed_h > 0.0) return opt.fixed_h;
  if (opt.h_initial > 0.0) return min(opt.h_initial, opt.h_max);
  double h = 0.001 * abs(t1 - t0);
  const double factor = internal_tolerance_factor(opt);  // the weights of the error test that follows
  double s2 = 0.0;
  for (int i = 0; i < Model::n; ++i) {
    const double wi = init.a[i] / (factor * (opt.rtol * abs(init.q[i]) + opt.atol_q));
    s2 += wi * wi;
  }
  const double anorm = sqrt(s2 / Model::n);
  if (anorm * h * h > 0.2) h = sqrt(0.2 / anorm);
  return min(h, opt.h_max);
}

// Fixed steps keep one step size from t0 to t1: the k-th step ends at t_k = t0 + k h, computed from k
// (never as a running sum), and the last one at t1 itself. A shortened last step would be a change of
// step size, and on index 3 a change of step size costs the multipliers an O(1) error (Petzold 1982;
// Brenan, Campbell & Petzold 1996, 3.2.2), so an interval that is not a whole number of steps is
// refused: fixed_step_count is -1 unless (t1 - t0) / h is within 4 eps n of an integer n >= 1.
LOCKSTEP_HD long fixed_step_count(double t0, double t1, double h) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const double ratio = (t1 - t0) / h;
  const double n = floor(ratio + 0.5);
  if (!(n >= 1.0) || !(n < 1e15) || abs(ratio - n) > 4.0 * eps * n) return -1;
  return static_cast<long>(n);
}

// The fixed step nearest to h that divides [t0, t1] into a whole number of steps.
LOCKSTEP_HD double nearest_fixed_step(double t0, double t1, double h) {
  const double n = max(1.0, floor((t1 - t0) / h + 0.5));
  return (t1 - t0) / n;
}

// The step of the next attempt from t: the proposed h limited by h_max, and stretched or shortened
// to land exactly on t_end when it would end within 0.01% of it (never beyond). h_min is the larger
// of the option and 16 eps |t|, below which t + h == t in floating point for all practical purposes.
// Fixed steps: h = fixed_h, ending at the grid point t0 + (k + 1) h after t = t0 + k h, or at t_end when
// that is the grid's last point (within 4 eps (k + 1)); an end off the grid (which solve_member refuses,
// and which a caller stepping to intermediate times may still ask for) shortens the last step to land
// on it, as adaptive steps do.
//
// After a Newton failure (or a singular or non-finite Newton system) with a Jacobian evaluated at this
// step: cut the step by `cut`, or finish the member when the steps are fixed, after more than 10
// consecutive cuts, or below h_min.
//
// The functions (plan_step, step_too_small, cut_after_newton_failure) are one text for one member
// here and for SIMD packs in lockstep/simd/step_control_inl.hpp.
namespace detail {
#include "lockstep/method/step_control_generic.inc"  // IWYU pragma: keep
}  // namespace detail

// One member's plan: `too_small` (adaptive steps only) when h < h_min before reaching t_end.
using step_plan = detail::step_plan_of<double, bool>;

LOCKSTEP_HD step_plan plan_step(double t, double h_proposed, double t_end, const solver_options& opt, double t0) {
  return detail::plan_step(t, h_proposed, t_end, opt, t0);
}

// True, with status step_size_too_small, when the plan leaves no usable step (the attempt then fails).
LOCKSTEP_HD bool step_too_small(const step_plan& plan, member_status& status) {
  return detail::step_too_small(true, plan, status);
}

// The cut after a Newton failure of one member; `reason` success means plain non-convergence.
LOCKSTEP_HD attempt_result cut_after_newton_failure(member_status reason, bool fixed, int& consecutive_cuts, double h,
                                                    double cut, double h_min, double& h_next,
                                                    member_counters& counters, member_status& status) {
  return detail::cut_after_newton_failure(true, reason, fixed, consecutive_cuts, h, cut, h_min, h_next, counters, status)
             ? attempt_result::failed
             : attempt_result::rejected;
}

}  // namespace lockstep
