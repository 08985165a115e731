// Fixed steps (method/step_control.hpp): the k-th step ends at t0 + k h for every method, the last one
// on t1, and an interval that is not a whole number of steps is refused rather than ended with a
// shorter step (a change of step size, which on index 3 costs the multipliers an O(1) error).
#include <gtest/gtest.h>

#include <string>

#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;
using Model = models::pendulum;

solver_options fixed_options(method_kind method, double h) {
  solver_options opt;
  opt.method = method;
  opt.form = formulation::index3;
  opt.fixed_h = h;
  opt.fixed_order = 2;
  return opt;
}

TEST(FixedSteps, EndEveryStepOnTheGridT0PlusKH) {
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  // 0.01 is not a binary fraction: a running sum t + h drifts off t0 + k h (0.01 added ten times is
  // 0.09999999999999999, 10 * 0.01 is 0.1).
  const double t0 = 0.0, t1 = 1.0, h = 0.01;
  const int n = 100;
  for (method_kind method : {method_kind::bdf, method_kind::radau5, method_kind::rhoinf}) {
    const solver_options opt = fixed_options(method, h);
    visit_method(method, [&]<class Method>() {
      member_state<Model, Method> ms;
      auto sink = [](int, double, const state_vector<Model>&) {};
      member_begin<Model>(ms, t0, t1, q0, v0, p, opt, nullptr, 0, sink);
      ASSERT_EQ(ms.status, member_status::running) << method_name(method);
      for (int k = 1; k <= n; ++k) {
        member_advance<Model>(ms, 1, t1, p, opt, nullptr, 0, sink);
        if (k < n) {
          ASSERT_EQ(ms.status, member_status::running) << method_name(method) << " step " << k;
        }
        const double expected = k == n ? t1 : t0 + k * h;
        EXPECT_EQ(Method::time(ms.method), expected) << method_name(method) << " step " << k;
      }
      EXPECT_EQ(ms.status, member_status::success) << method_name(method);
      EXPECT_EQ(ms.counters.steps, n) << method_name(method);
    });
  }
}

TEST(FixedSteps, RefuseAnIntervalThatIsNotAWholeNumberOfSteps) {
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  for (method_kind method : {method_kind::bdf, method_kind::radau5, method_kind::rhoinf}) {
    // 1 / 0.3 = 3.33 steps: refused, with the nearest valid step 1/3 in the message.
    const auto refused = solve_member<Model>(p, q0, v0, 0.0, 1.0, fixed_options(method, 0.3), {1.0});
    EXPECT_EQ(refused.status, member_status::invalid_input) << method_name(method);
    EXPECT_NE(refused.message.find("0.333333"), std::string::npos) << refused.message;
    EXPECT_EQ(refused.counters.steps, 0) << method_name(method);
    // The batch path (member_begin) refuses it too.
    visit_method(method, [&]<class Method>() {
      member_state<Model, Method> ms;
      auto sink = [](int, double, const state_vector<Model>&) {};
      member_begin<Model>(ms, 0.0, 1.0, q0, v0, p, fixed_options(method, 0.3), nullptr, 0, sink);
      EXPECT_EQ(ms.status, member_status::invalid_input) << method_name(method);
    });
    // 3 / 0.01 is 300 up to the rounding of 0.01: accepted, and t1 is reached in 300 steps.
    const auto accepted = solve_member<Model>(p, q0, v0, 0.0, 3.0, fixed_options(method, 0.01), {3.0});
    EXPECT_EQ(accepted.status, member_status::success) << method_name(method);
    EXPECT_EQ(accepted.counters.steps, 300) << method_name(method);
    EXPECT_EQ(accepted.t_final, 3.0) << method_name(method);
  }
}

}  // namespace
