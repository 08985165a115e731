// Radau IIA (3 stages, order 5; method/radau.hpp): global orders against the theory, agreement with BDF
// on the hard problems, and success at every tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>


#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

// Hairer, Lubich & Roche (1989), LNM 1409; Hairer & Wanner VII.4, Table 4.1: Radau IIA with s stages
// has global orders 2s - 1, s, s - 1 for (q, v, lambda) on the index-3 form and 2s - 1, 2s - 1, s on the
// index-2 (ggl) form. s = 3. Multipliers of consistent output are recomputed from (q, v) (option
// consistent_multipliers), so the fixed-step order of lambda is measured with that option off
// (method_test_support.hpp). 20 to 160 steps per unit time: asymptotic for theta0 = 1 (omega <= 3.1)
// and above round-off (the q error at 160 steps is ~2e-11).
TEST(Radau5, ReachesOrdersFiveThreeTwoOnTheIndex3Pendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau5, formulation::index3), {20, 40, 80, 160}, 5, 3, 2);
}

TEST(Radau5, ReachesOrdersFiveFiveThreeOnTheGglPendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau5, formulation::ggl), {20, 40, 80, 160}, 5, 5, 3);
}

// Two different methods on two different formulations at rtol = atol = 1e-12 (the agreement asked for: at least 7
// significant digits in common).
template <class Model>
void expect_radau_index3_and_bdf_ggl_agree(double t1) {
  const auto radau = final_positions<Model>(method_kind::radau5, formulation::index3, t1, 1e-12);
  const auto bdf = final_positions<Model>(method_kind::bdf, formulation::ggl, t1, 1e-12);
  EXPECT_GE(scd(radau, bdf), 7.0) << Model::name;
}

TEST(Radau5, AgreesWithBdfOnAndrewsToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::andrews>(0.03); }
TEST(Radau5, AgreesWithBdfOnCarAxisToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::car_axis>(3.0); }
TEST(Radau5, AgreesWithBdfOnSliderCrankToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::slider_crank>(1.0); }

TEST(Radau5, SolvesAndrewsAndCarAxisOnIndex3AtEveryToleranceAndGainsDigits) {
  expect_index3_hard_problems_gain_digits(method_kind::radau5, {1e-4, 1e-6, 1e-8, 1e-10});
}

// RADAU5 keeps h_new / h within [WORK(8), WORK(9)] = [0.2, 8] (Hairer & Wanner 1996, IV.8; radau5.f clamps
// QUOT = HOLD / HNEW to [1/8, 5]). One step from the exact pendulum with an error far below the
// tolerance proposes the largest growth, 8; one with an error far above it (not the first step, which
// RADAU5 cuts by 10 instead) the largest cut, 0.2. With the bounds reversed they were 5 and 1/8.
radau_state<models::pendulum> pendulum_step_state(double h) {
  const exact_point now = pendulum_exact(0.5);
  radau_state<models::pendulum> s;
  s.t = 0.5;
  s.h = h;
  s.y = now.y;
  s.yp = now.yp;
  s.first = false;
  s.h_accepted = h;  // Gustafsson's controller sees a previous step like this one
  s.err_accepted = 0.5;
  // A previous step on the exact solution, so that the stages start from its extrapolation (accurate
  // to O(h^4)) and Newton converges even at tight tolerances.
  s.have_step = true;
  s.h_last = h;
  s.y_last = pendulum_exact(0.5 - h).y;
  for (int i = 0; i < 3; ++i) s.Z[i] = pendulum_exact(0.5 - h + radau5_tableau::c(i) * h).y - s.y_last;
  return s;
}

TEST(Radau5, StepRatioStaysWithinRadau5Bounds) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81};
  const double h = 1e-3;
  {
    solver_options opt;
    opt.form = formulation::index3;
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-2;  // err ~ 1e-10: the bound decides
    radau_state<Model> s = pendulum_step_state(h);
    member_counters counters;
    member_status status = member_status::running;
    ASSERT_EQ(radau_attempt<Model>(s, 1.0, p, opt, counters, status), attempt_result::accepted);
    EXPECT_DOUBLE_EQ(s.h / h, 8.0) << "err " << s.error;
  }
  {
    solver_options opt;
    opt.form = formulation::index3;
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-12;
    radau_state<Model> s = pendulum_step_state(0.01);  // err ~ 6e3
    member_counters counters;
    member_status status = member_status::running;
    ASSERT_EQ(radau_attempt<Model>(s, 1.0, p, opt, counters, status), attempt_result::rejected);
    EXPECT_EQ(status, member_status::running);
    EXPECT_GT(s.error, 1e3);
    EXPECT_DOUBLE_EQ(s.h / 0.01, 0.2) << "err " << s.error;
  }
}

// radau.hpp's estimate for s = 3 (RADAU5's ESTRAD) is the filtered error of an embedded order-3 formula:
// O(h^4), so halving h divides it by 16. Against the true local error of the step, one step from the
// exact pendulum with its stages started from an exact previous step and Newton converged far below the
// error (rtol 1e-10: the adaptive attempt gives the estimate, a fixed-step attempt of the same h the
// step, both in the same weights): in this norm the true local error is O(h^4) too (the index-2
// components, counted h times, dominate: Hairer, Lubich & Roche 1989), and the estimate stays a fixed
// fraction of it (measured: 0.31 on index3, 0.86 on ggl, at h = 0.01 and 0.005).
estimate_and_truth radau5_converged_step_error(formulation form, double h) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81};
  const solver_options opt = step_options(form, 1e-10);
  member_counters counters;
  member_status status = member_status::running;
  radau_state<Model> adaptive = pendulum_step_state(h);
  const attempt_result r = radau_attempt<Model>(adaptive, 1.0, p, opt, counters, status);
  EXPECT_NE(r, attempt_result::failed) << "h " << h;
  EXPECT_EQ(counters.newton_failures, 0) << "h " << h;
  solver_options fixed = opt;
  fixed.fixed_h = h;
  radau_state<Model> step = pendulum_step_state(h);
  step.t0 = step.t;  // the fixed-step grid starts here
  EXPECT_EQ(radau_attempt<Model>(step, 1.0, p, fixed, counters, status), attempt_result::accepted) << "h " << h;
  const exact_point now = pendulum_exact(0.5), next = pendulum_exact(0.5 + h);
  return {adaptive.error, detail::weighted_rms(step.y - next.y, detail::radau_weights<Model>(form, now.y, h, opt))};
}

TEST(Radau5, ErrorEstimateIsFourthOrderInTheStepSize) {
  for (formulation form : {formulation::index3, formulation::ggl}) {
    const estimate_and_truth coarse = radau5_converged_step_error(form, 0.01);
    const estimate_and_truth fine = radau5_converged_step_error(form, 0.005);
    std::printf("[ measured ] radau5/%s: estimate %.3e (h 0.01), %.3e (h 0.005); over the true local error %.3f, %.3f\n",
                formulation_name(form), coarse.estimate, fine.estimate, coarse.estimate / coarse.truth,
                fine.estimate / fine.truth);
    EXPECT_NEAR(std::log2(coarse.estimate / fine.estimate), 4.0, 0.4) << formulation_name(form);
    EXPECT_NEAR((coarse.estimate / coarse.truth) / (fine.estimate / fine.truth), 1.0, 0.1) << formulation_name(form);
    EXPECT_GT(fine.estimate / fine.truth, 0.2) << formulation_name(form);
    EXPECT_LT(fine.estimate / fine.truth, 1.2) << formulation_name(form);
  }
}

// The error and Newton norms of Radau IIA are RMS norms over the unknowns the formulation has: a vector
// of one weighted unit in every one of them has norm 1, whatever it holds in the mu slots that index3
// pins (their weight is 0). Dividing by the full state size gave sqrt(5/6) on the index-3 pendulum.
TEST(Radau5, ErrorNormIsTheRmsOverTheActiveComponents) {
  using Model = models::pendulum;
  using L = state_layout<Model>;
  const exact_point now = pendulum_exact(0.5);
  for (formulation form : {formulation::index3, formulation::ggl}) {
    const state_vector<Model> w = detail::radau_weights<Model>(form, now.y, 0.01, step_options(form, 1e-6));
    state_vector<Model> x;
    for (int j = 0; j < L::size; ++j) x[j] = w[j] != 0.0 ? 1.0 / w[j] : 123.0;
    EXPECT_DOUBLE_EQ(detail::weighted_rms(x, w), 1.0) << formulation_name(form);
  }
}

}  // namespace
}  // namespace lockstep::test
