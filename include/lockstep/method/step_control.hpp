// lockstep/method/step_control.hpp — the start and the step-size rules shared by the methods.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/stepper/initialize.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep {

// The consistent initial point (stepper/initialize.hpp) as y0 = (q0, v0, lambda0, mu0 = 0, nu0) and its
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
  double s2 = 0.0;
  for (int i = 0; i < Model::n; ++i) {
    const double wi = init.a[i] / (opt.rtol * abs(init.q[i]) + opt.atol_q);
    s2 += wi * wi;
  }
  const double anorm = sqrt(s2 / Model::n);
  if (anorm * h * h > 0.2) h = sqrt(0.2 / anorm);
  return min(h, opt.h_max);
}

// The step of the next attempt from t: the proposed h limited by h_max, and stretched or shortened
// to land exactly on t_end when it would end within 0.01% of it (never beyond). h_min is the larger
// of the option and 16 eps |t|, below which t + h == t in floating point for all practical purposes.
struct step_plan {
  double h;
  double h_min;
  bool too_small;  // adaptive steps only: h < h_min before reaching t_end
};

LOCKSTEP_HD step_plan plan_step(double t, double h_proposed, double t_end, const solver_options& opt) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const bool fixed = opt.fixed_h > 0.0;
  step_plan plan;
  plan.h = fixed ? h_proposed : min(h_proposed, opt.h_max);
  if (t + 1.0001 * plan.h >= t_end) plan.h = t_end - t;
  plan.h_min = max(opt.h_min, 16.0 * eps * max(abs(t), abs(t_end)));
  plan.too_small = !fixed && plan.h < plan.h_min && t + plan.h < t_end;
  return plan;
}

// True, with status step_size_too_small, when the plan leaves no usable step (the attempt then fails).
LOCKSTEP_HD bool step_too_small(const step_plan& plan, member_status& status) {
  if (plan.too_small) status = member_status::step_size_too_small;
  return plan.too_small;
}

// After a Newton failure (or a singular or non-finite Newton system) with a Jacobian evaluated at this
// step: cut the step by `cut`, or finish the member when the steps are fixed, after more than 10
// consecutive cuts, or below h_min. `reason` success means plain non-convergence.
LOCKSTEP_HD attempt_result cut_after_newton_failure(member_status reason, bool fixed, int& consecutive_cuts, double h,
                                                    double cut, double h_min, double& h_next,
                                                    member_counters& counters, member_status& status) {
  ++counters.rejected_steps;
  ++counters.newton_failures;
  ++consecutive_cuts;
  if (fixed || consecutive_cuts > 10) {
    status = reason == member_status::success ? member_status::newton_failure : reason;
    return attempt_result::failed;
  }
  h_next = cut * h;
  if (h_next < h_min) {
    status = reason == member_status::success ? member_status::step_size_too_small : reason;
    return attempt_result::failed;
  }
  return attempt_result::rejected;
}

}  // namespace lockstep
