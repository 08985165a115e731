// tests/method/step_companion_test.cpp — the contract of a step's companion (method/attempt.hpp) with BDF
// and Radau IIA 5, through companions that record what the method hands them and answer with chosen
// estimates:
//  - a companion whose estimates are 0 changes nothing: the attempt is bitwise the plain one, solve sees
//    the converged point the plain attempt accepts, and accept is called once;
//  - a companion whose estimate fails the test rejects the step as the state's own failure would: the
//    member's point and history stay as they were, the next step follows the method's rule for an
//    error-test failure (IDA's first-failure ratio for BDF, RADAU5's quotient for Radau), computed
//    here from the published formulas, and accept is not called;
//  - a companion that cannot solve fails the member with its status, and the member stays where it was;
//  - BDF's order choice reads the companion's estimates at k - 1 and k + 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lockstep/method/bdf.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "../model/model_test_support.hpp"

namespace lockstep::test {
namespace {

using Model = models::double_pendulum;

// A companion that records every call and answers estimate(order) from `answer`.
struct recording_companion {
  member_status solve_status = member_status::success;
  double (*answer)(int order, int k) = [](int, int) { return 0.0; };
  int solves = 0, rejections = 0, accepts = 0;
  int k = 0;  // BDF: the order of the step it was handed
  double t_new = 0.0;
  state_vector<Model> y;  // the converged point it was handed

  member_status solve(const bdf_converged_step<Model>& step) {
    ++solves;
    k = step.k;
    t_new = step.t_new;
    y = step.y;
    return solve_status;
  }
  template <class RT>
  member_status solve(const radau_converged_step<Model, RT>& step) {
    ++solves;
    t_new = step.s.t + step.h;
    y = step.s.y + step.Z[RT::stages - 1];
    return solve_status;
  }
  double estimate(int order) const { return answer(order, k); }
  double estimate() const { return answer(0, 0); }
  void rejected() { ++rejections; }
  void accept() { ++accepts; }
};

struct started {
  std::vector<double> p = default_params<Model>();
  initial_values<Model> init;
  solver_options opt;
  started() {
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-6;
    const std::vector<double> in = default_inputs<Model>();
    vec<double, Model::n> q0, v0;
    Model::initial_state(p.data(), in.data(), q0, v0);
    member_counters counters;
    EXPECT_EQ(consistent_initialization<Model>(0.0, q0, v0, p.data(), opt, init, counters), member_status::success);
  }
};

constexpr double t_end = 10.0;

// A BDF member after `steps` accepted plain steps, at an order above 1.
bdf_state<Model> bdf_member_in_its_run(const started& st, int steps) {
  bdf_state<Model> s;
  bdf_start(s, 0.0, t_end, st.init, st.opt);
  member_counters counters;
  member_status status = member_status::running;
  for (int accepted = 0; accepted < steps;)
    if (bdf_attempt<Model>(s, t_end, st.p.data(), st.opt, counters, status) == attempt_result::accepted) ++accepted;
  EXPECT_GT(s.order, 1);
  return s;
}

void expect_same_point(const bdf_state<Model>& a, const bdf_state<Model>& b) {
  EXPECT_EQ(a.t, b.t);
  EXPECT_EQ(a.h, b.h);
  EXPECT_EQ(a.order, b.order);
  EXPECT_EQ(a.past_count, b.past_count);
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(a.y_newest[j], b.y_newest[j]) << "component " << j;
  for (int i = 0; i < bdf_state<Model>::max_past; ++i) {
    EXPECT_EQ(a.t_past[i], b.t_past[i]);
    for (int j = 0; j < state_layout<Model>::size; ++j)
      EXPECT_EQ(a.older_differences[i][j], b.older_differences[i][j]);
  }
}

TEST(StepCompanion, BdfWithACompanionOfZeroEstimatesTakesThePlainStepAndHandsItTheConvergedPoint) {
  const started st;
  const bdf_state<Model> before = bdf_member_in_its_run(st, 12);
  bdf_state<Model> plain = before, with = before;
  member_counters c_plain, c_with;
  member_status s_plain = member_status::running, s_with = member_status::running;
  recording_companion companion;
  ASSERT_EQ(bdf_attempt<Model>(plain, t_end, st.p.data(), st.opt, c_plain, s_plain), attempt_result::accepted);
  ASSERT_EQ(bdf_attempt<Model>(with, t_end, st.p.data(), st.opt, c_with, s_with, companion), attempt_result::accepted);
  expect_same_point(with, plain);
  EXPECT_EQ(c_with.steps, c_plain.steps);
  EXPECT_EQ(c_with.newton_iterations, c_plain.newton_iterations);
  EXPECT_EQ(companion.solves, 1);
  EXPECT_EQ(companion.accepts, 1);
  EXPECT_EQ(companion.rejections, 0);
  EXPECT_EQ(companion.t_new, plain.t);
  EXPECT_EQ(companion.k, plain.last_order);
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(companion.y[j], plain.y_newest[j]);
}

TEST(StepCompanion, BdfStepTheCompanionFailsIsRejectedByIdasFirstFailureRule) {
  const started st;
  const bdf_state<Model> before = bdf_member_in_its_run(st, 12);
  ASSERT_EQ(before.error_failures, 0);
  bdf_state<Model> s = before;
  member_counters counters;
  member_status status = member_status::running;
  constexpr double err = 3.0;
  recording_companion companion;
  companion.answer = [](int order, int k) { return order == k ? err : 1e6; };
  ASSERT_EQ(bdf_attempt<Model>(s, t_end, st.p.data(), st.opt, counters, status, companion), attempt_result::rejected);
  EXPECT_EQ(status, member_status::running);
  EXPECT_EQ(companion.solves, 1);
  EXPECT_EQ(companion.rejections, 1);
  EXPECT_EQ(companion.accepts, 0);
  EXPECT_EQ(counters.rejected_steps, 1);
  EXPECT_EQ(counters.steps, 0);
  EXPECT_EQ(s.error_failures, 1);
  // The member has not moved: its point and history are those before the attempt.
  EXPECT_EQ(s.t, before.t);
  EXPECT_EQ(s.past_count, before.past_count);
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(s.y_newest[j], before.y_newest[j]);
  // IDA (Hindmarsh et al. 2005, section 3): after a first failure at order k the step is cut by
  // 0.9 (2 err + 1e-4)^(-1/(k+1)) within [0.25, 0.9], and the order drops to k - 1 only when its
  // estimate is no larger: with the companion's 1e6 there it stays at k.
  const int k = companion.k;
  ASSERT_EQ(k, before.order);
  const double ratio = std::max(0.25, std::min(0.9, 0.9 * std::pow(2.0 * err + 1e-4, -1.0 / (k + 1))));
  EXPECT_GT(ratio, 0.25);
  EXPECT_LT(ratio, 0.9);
  EXPECT_DOUBLE_EQ(s.h, ratio * before.h);
  EXPECT_EQ(s.order, k);
}

TEST(StepCompanion, BdfMemberFailsWithTheStatusOfACompanionThatCannotSolve) {
  const started st;
  const bdf_state<Model> before = bdf_member_in_its_run(st, 12);
  bdf_state<Model> s = before;
  member_counters counters;
  member_status status = member_status::running;
  recording_companion companion;
  companion.solve_status = member_status::singular_matrix;
  EXPECT_EQ(bdf_attempt<Model>(s, t_end, st.p.data(), st.opt, counters, status, companion), attempt_result::failed);
  EXPECT_EQ(status, member_status::singular_matrix);
  EXPECT_EQ(companion.accepts, 0);
  EXPECT_EQ(s.t, before.t);
}

TEST(StepCompanion, BdfOrderChoiceReadsTheCompanionsEstimatesOfTheNeighbouringOrders) {
  const started st;
  // Find a step at which the plain member changes its order; a companion whose estimates of the
  // orders k - 1 and k + 1 are huge must keep it at k there, with the state's own step ratio.
  bdf_state<Model> s;
  bdf_start(s, 0.0, t_end, st.init, st.opt);
  member_counters counters;
  member_status status = member_status::running;
  int changes_seen = 0;
  for (int attempt = 0; attempt < 400 && changes_seen < 3; ++attempt) {
    const bdf_state<Model> before = s;
    bdf_state<Model> kept = before;
    if (bdf_attempt<Model>(s, t_end, st.p.data(), st.opt, counters, status) != attempt_result::accepted) continue;
    if (s.order == s.last_order) continue;
    ++changes_seen;
    member_counters c;
    member_status why = member_status::running;
    recording_companion companion;
    companion.answer = [](int order, int k) { return order == k ? 0.0 : 1e6; };
    ASSERT_EQ(bdf_attempt<Model>(kept, t_end, st.p.data(), st.opt, c, why, companion), attempt_result::accepted);
    EXPECT_EQ(kept.order, s.last_order) << "at t = " << before.t;
    EXPECT_EQ(kept.t, s.t);
  }
  EXPECT_EQ(changes_seen, 3);
}

solver_options radau5_index3(const started& st) {
  solver_options opt = st.opt;
  opt.method = method_kind::radau5;
  opt.form = formulation::index3;
  return opt;
}

// A Radau IIA 5 member after at least `steps` accepted plain steps, where its next plain attempt is
// accepted.
radau_state<Model, radau5_tableau> radau_member_in_its_run(const started& st, int steps) {
  const solver_options opt = radau5_index3(st);
  radau_state<Model, radau5_tableau> s;
  radau_start(s, 0.0, t_end, st.init, opt);
  member_counters counters;
  member_status status = member_status::running;
  for (int accepted = 0;;) {
    if (accepted >= steps) {
      auto next = s;
      if (radau_attempt<Model>(next, t_end, st.p.data(), opt, counters, status) == attempt_result::accepted) return s;
    }
    if (radau_attempt<Model>(s, t_end, st.p.data(), opt, counters, status) == attempt_result::accepted) ++accepted;
  }
}

TEST(StepCompanion, RadauWithACompanionOfZeroEstimatesTakesThePlainStepAndHandsItTheConvergedPoint) {
  const started st;
  const solver_options opt = radau5_index3(st);
  const auto before = radau_member_in_its_run(st, 12);
  auto plain = before, with = before;
  member_counters c_plain, c_with;
  member_status s_plain = member_status::running, s_with = member_status::running;
  recording_companion companion;
  ASSERT_EQ(radau_attempt<Model>(plain, t_end, st.p.data(), opt, c_plain, s_plain), attempt_result::accepted);
  ASSERT_EQ(radau_attempt<Model>(with, t_end, st.p.data(), opt, c_with, s_with, companion), attempt_result::accepted);
  EXPECT_EQ(with.t, plain.t);
  EXPECT_EQ(with.h, plain.h);
  for (int j = 0; j < state_layout<Model>::size; ++j) {
    EXPECT_EQ(with.y[j], plain.y[j]);
    EXPECT_EQ(companion.y[j], plain.y[j]);
  }
  EXPECT_EQ(companion.t_new, plain.t);
  EXPECT_EQ(companion.solves, 1);
  EXPECT_EQ(companion.accepts, 1);
  EXPECT_EQ(companion.rejections, 0);
}

TEST(StepCompanion, RadauStepTheCompanionFailsIsRejectedByRadau5sQuotient) {
  const started st;
  const solver_options opt = radau5_index3(st);
  const auto before = radau_member_in_its_run(st, 12);
  ASSERT_FALSE(before.first);
  auto s = before;
  member_counters counters;
  member_status status = member_status::running;
  constexpr double err = 3.0;
  recording_companion companion;
  companion.answer = [](int, int) { return err; };
  ASSERT_EQ(radau_attempt<Model>(s, t_end, st.p.data(), opt, counters, status, companion), attempt_result::rejected);
  EXPECT_EQ(companion.solves, 1);
  EXPECT_EQ(companion.rejections, 1);
  EXPECT_EQ(companion.accepts, 0);
  EXPECT_EQ(counters.rejected_steps, 1);
  EXPECT_EQ(counters.steps, 0);
  EXPECT_TRUE(s.last_rejected);
  EXPECT_EQ(s.t, before.t);
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(s.y[j], before.y[j]);
  // RADAU5 (Hairer & Wanner 1996, IV.8, and radau5.f): FAC = min(SAFE, CFAC / (NEWT + 2 NIT)) with
  // CFAC = SAFE (1 + 2 NIT), NIT = 7; QUOT = err^(1/4) / FAC within [1/8, 5]; h_new = h / QUOT.
  const double fac = std::min(0.9, 0.9 * (1 + 2 * 7) / (s.newton_iterations + 2.0 * 7));
  const double quot = std::max(1.0 / 8.0, std::min(5.0, std::pow(err, 0.25) / fac));
  EXPECT_DOUBLE_EQ(s.h, before.h / quot);
}

TEST(StepCompanion, RadauMemberFailsWithTheStatusOfACompanionThatCannotSolve) {
  const started st;
  const solver_options opt = radau5_index3(st);
  const auto before = radau_member_in_its_run(st, 12);
  auto s = before;
  member_counters counters;
  member_status status = member_status::running;
  recording_companion companion;
  companion.solve_status = member_status::model_not_finite;
  EXPECT_EQ(radau_attempt<Model>(s, t_end, st.p.data(), opt, counters, status, companion), attempt_result::failed);
  EXPECT_EQ(status, member_status::model_not_finite);
  EXPECT_EQ(companion.accepts, 0);
  EXPECT_EQ(s.t, before.t);
}

}  // namespace
}  // namespace lockstep::test
