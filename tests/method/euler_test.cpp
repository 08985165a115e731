// Backward Euler, the Radau IIA method with one stage (method/radau.hpp with euler_tableau): global
// orders against the theory, adaptive runs with its Milne-device error estimate on the pendulum and on
// the hard problems, and the failure statuses.
#include <gtest/gtest.h>

#include <cstdio>

#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

// ggl: Radau IIA with s = 1 on the index-2 form has orders 2s - 1, 2s - 1, s = 1, 1, 1 (Hairer, Lubich &
// Roche 1989; Hairer & Wanner VII.4, Table 4.1). index3: that table gives 1, 1, 0 (lambda does not
// converge under arbitrary step sequences), but with constant steps backward Euler is BDF1, which
// converges with order 1 in every component of a Hessenberg index-3 system after its first steps
// (Lotstedt & Petzold 1986; Brenan, Campbell & Petzold 1996, section 3.2). N = 320..2560 steps per unit
// time: from N = 20 the pairwise slopes climb slowly (v on index3: 0.31, 0.54, 0.73, 0.86, 0.93 up to
// N = 320, then 0.96, 0.98, 0.99).
TEST(Euler, ReachesOrderOneInEveryComponentOnTheIndex3PendulumWithConstantSteps) {
  expect_fixed_step_orders(method_options(method_kind::euler, formulation::index3), {320, 640, 1280, 2560}, 1, 1, 1);
}

TEST(Euler, ReachesOrdersOneOneOneOnTheGglPendulum) {
  expect_fixed_step_orders(method_options(method_kind::euler, formulation::ggl), {320, 640, 1280, 2560}, 1, 1, 1);
}

// radau.hpp's estimate for s = 1: Milne's device halves the explicit-minus-implicit Euler difference in
// the index-1 components; the index-2 ones (v on index3, lambda on ggl) are taken whole. From the exact
// pendulum it is the true local error (measured ratios 0.995-1.006 at h = 0.001-0.004).
TEST(Euler, ErrorEstimateIsTheTrueLocalErrorOnBothFormulations) {
  for (formulation form : {formulation::index3, formulation::ggl})
    for (double h : {0.002, 0.001}) {
      const estimate_and_truth e = radau_step_error<euler_tableau>(form, h);
      std::printf("[ measured ] euler/%s h %.3f: estimate %.3e, true local error %.3e (ratio %.3f)\n", formulation_name(form),
                  h, e.estimate, e.truth, e.estimate / e.truth);
      EXPECT_NEAR(e.estimate / e.truth, 1.0, 0.1) << formulation_name(form) << " h " << h;
    }
}

// rtol asks for the accuracy at the end (method/tolerance_calibration.hpp), which a first-order method
// buys with a per-step tolerance of about rtol^2: at 1e-1 and 1e-2, the tolerances where backward Euler
// is practical, the error is to shrink by at least 3 (ideally 10).
TEST(Euler, AdaptiveRunsSucceedAndGainAccuracyWithTheToleranceOnBothFormulations) {
  for (formulation form : {formulation::index3, formulation::ggl})
    expect_adaptive_accuracy_gains(method_options(method_kind::euler, form), 3.0, 3.0, {1e-1, 1e-2});
}

TEST(Euler, SolvesAndrewsAndCarAxisOnIndex3AtEveryToleranceAndGainsDigits) {
  expect_index3_hard_problems_gain_digits(method_kind::euler, {1e-1, 1e-2});
}

TEST(EulerStatus, ReportsEveryFailureStatusOnBothFormulations) {
  for (formulation form : {formulation::index3, formulation::ggl}) {
    solver_options opt = method_options(method_kind::euler, form);
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-2;
    expect_failure_statuses(opt);
  }
}

}  // namespace
}  // namespace lockstep::test
