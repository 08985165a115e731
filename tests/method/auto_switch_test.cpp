// Method auto (method/auto_switch.hpp) and the explicit method's stiffness test (method/dopri5.hpp),
// against exact solutions: a member whose damping falls from 10^4 to 1 switches to Radau IIA 5 and back
// and ends on its exact trajectory; a member that is never stiff never switches and is bitwise dopri5's
// member; the stiffness test flags the damped-stiff oscillator and not the lightly damped one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/lyapunov/tangent_member_common.hpp"
#include "method_test_support.hpp"
#include "tests/support/fading_damper.hpp"

namespace lockstep::test {
namespace {

using fading_damper = fading_damper_model<false>;

solver_options auto_options(double rtol) {
  solver_options opt;
  opt.method = method_kind::automatic;
  opt.form = formulation::index3;
  opt.projection = projection_kind::coordinate;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = rtol;
  return opt;
}

solver_options explicit_options(double rtol) {
  solver_options opt = auto_options(rtol);
  opt.method = method_kind::dopri5;
  opt.form = formulation::index1;
  return opt;
}

member_result<fading_damper> solve_fading(double C, const solver_options& opt, double t1) {
  const double p[1] = {C};
  vec<double, 2> q0, v0;
  fading_damper::initial_state(p, nullptr, q0, v0);
  return solve_member<fading_damper>(p, q0, v0, 0.0, t1, opt, {t1});
}

// The largest deviation of the end point from g(t1) = (sin t1, sin(t1) / 2), in q and v.
double deviation(const member_result<fading_damper>& r, double t1) {
  const double along[2] = {1.0, 0.5};
  double e = 0.0;
  for (int i = 0; i < 2; ++i) {
    e = std::max(e, std::abs(r.q(0, i) - along[i] * std::sin(t1)));
    e = std::max(e, std::abs(r.v(0, i) - along[i] * std::cos(t1)));
  }
  return e;
}

TEST(AutoSwitch, AStiffPhaseRunsImplicitAndTheMemberSwitchesBackWhenItEnds) {
  const double t1 = 4.0;
  for (double rtol : {1e-5, 1e-6, 1e-8}) {
    const auto r = solve_fading(1e4, auto_options(rtol), t1);
    const auto alone = solve_fading(1e4, explicit_options(rtol), t1);
    ASSERT_EQ(r.status, member_status::success) << rtol;
    ASSERT_EQ(alone.status, member_status::success) << rtol;
    const member_counters& c = r.counters;
    std::printf("[ measured ] auto rtol %.0e: %ld steps (%ld explicit), %ld switches, %ld detections, deviation "
                "%.2e; dopri5 alone %ld steps, deviation %.2e\n",
                rtol, c.steps, c.explicit_steps, c.method_switches, c.stiffness_detections, deviation(r, t1),
                alone.counters.steps, deviation(alone, t1));
    // To Radau IIA 5 once the test has seen 15 stiff steps, and back once the damping has faded.
    EXPECT_EQ(c.stiffness_detections, 1) << rtol;
    EXPECT_EQ(c.method_switches, 2) << rtol;
    EXPECT_GT(c.explicit_steps, 15) << rtol;
    EXPECT_GT(c.steps - c.explicit_steps, 0) << rtol;
    // dopri5 alone is held to h ~ 3.3 / 10^4 while the damping lasts: about 3,000 steps for t < 1.
    EXPECT_GT(alone.counters.steps, 2500) << rtol;
    EXPECT_LT(c.steps * 5, alone.counters.steps) << rtol;
    // Both end on the exact trajectory to the accuracy asked for.
    EXPECT_LT(deviation(r, t1), 20.0 * rtol) << rtol;
    EXPECT_LT(deviation(alone, t1), 20.0 * rtol) << rtol;
    EXPECT_LT(std::abs(r.lambda(0, 0)), 20.0 * rtol) << rtol;  // lambda = 0 on the exact trajectory
  }
}

// The same member with its constraint stated twice: a row is dropped from the start, both phases leave
// it out, and the motion is the one constraint's (to the tolerance: the phases' systems differ in the
// dropped row's place).
TEST(AutoSwitch, ADroppedConstraintRowStaysDroppedAcrossTheSwitches) {
  using restated = fading_damper_model<true>;
  const double t1 = 4.0, rtol = 1e-6, p[1] = {1e4};
  vec<double, 2> q0, v0;
  restated::initial_state(p, nullptr, q0, v0);
  const auto r = solve_member<restated>(p, q0, v0, 0.0, t1, auto_options(rtol), {t1});
  const auto once = solve_fading(1e4, auto_options(rtol), t1);
  ASSERT_EQ(r.status, member_status::success);
  EXPECT_EQ(r.counters.method_switches, 2);
  EXPECT_NE(r.counters.dropped_rows, 0);
  EXPECT_EQ(r.counters.rank_changes, 0);
  EXPECT_LT(r.counters.max_dropped_phi, 1e-12);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(r.q(0, i), once.q(0, i), 20.0 * rtol) << i;
}

TEST(AutoSwitch, AMemberThatIsNeverStiffIsBitwiseTheExplicitMethodsMember) {
  const double t1 = 4.0;
  const auto r = solve_fading(0.0, auto_options(1e-7), t1);
  const auto alone = solve_fading(0.0, explicit_options(1e-7), t1);
  ASSERT_EQ(r.status, member_status::success);
  EXPECT_EQ(r.counters.method_switches, 0);
  EXPECT_EQ(r.counters.stiffness_detections, 0);
  EXPECT_EQ(r.counters.explicit_steps, r.counters.steps);
  EXPECT_EQ(r.counters.steps, alone.counters.steps);
  for (int j = 0; j < state_layout<fading_damper>::size; ++j)
    EXPECT_EQ(std::memcmp(&r.y_final[j], &alone.y_final[j], sizeof(double)), 0) << j;
  EXPECT_LT(deviation(r, t1), 20.0 * 1e-7);
}

// The stiffness test alone (method/dopri5.hpp), with either explicit pair: the linear oscillator with
// damping d = 2000 (an eigenvalue near -2000) is flagged, once; with d = 0.2 it is not, nor the chaotic
// double pendulum.
TEST(AutoSwitch, TheExplicitMethodsStiffnessTestFlagsTheStiffMemberOnly) {
  using M = models::linear_oscillator;
  const auto oscillator = [](double d, const solver_options& o) {
    double p[M::n_params];
    for (int i = 0; i < M::n_params; ++i) p[i] = M::params[i].default_value;
    p[4] = d;
    return solve_from_defaults<M>(o, 2.0, p);
  };
  long dopri5_stiff_steps = 0;
  for (const method_kind method : {method_kind::dopri5, method_kind::tsit5}) {
    SCOPED_TRACE(method_name(method));
    solver_options opt = explicit_options(1e-6);
    opt.method = method;
    opt.max_steps = 100000;
    const auto stiff = oscillator(2000.0, opt), mild = oscillator(0.2, opt);
    ASSERT_EQ(stiff.status, member_status::success);
    ASSERT_EQ(mild.status, member_status::success);
    EXPECT_EQ(stiff.counters.stiffness_detections, 1);
    EXPECT_EQ(mild.counters.stiffness_detections, 0);
    EXPECT_EQ(stiff.counters.method_switches, 0);  // the explicit pair alone goes on
    EXPECT_EQ(stiff.counters.explicit_steps, stiff.counters.steps);
    const auto chaotic = solve_from_defaults<models::double_pendulum>(opt, 10.0);
    ASSERT_EQ(chaotic.status, member_status::success);
    EXPECT_EQ(chaotic.counters.stiffness_detections, 0);
    if (method == method_kind::dopri5) dopri5_stiff_steps = stiff.counters.steps;
  }

  // Auto on the damped-stiff oscillator: one switch, to Radau IIA 5, which finishes it.
  const auto switched = oscillator(2000.0, auto_options(1e-6));
  ASSERT_EQ(switched.status, member_status::success);
  EXPECT_EQ(switched.counters.method_switches, 1);
  EXPECT_LT(switched.counters.steps * 10, dopri5_stiff_steps);
}

TEST(AutoSwitch, RefusesWhatItCannotRun) {
  const auto refusal = [](solver_options opt) { return std::string(check_method_options(opt)); };
  solver_options opt = auto_options(1e-6);
  EXPECT_EQ(refusal(opt), "");
  opt.form = formulation::ggl;
  EXPECT_EQ(refusal(opt), "");
  opt.form = formulation::index1;
  EXPECT_NE(refusal(opt).find("ggl or index3"), std::string::npos);
  opt = auto_options(1e-6);
  opt.projection = projection_kind::none;
  EXPECT_NE(refusal(opt).find("needs a projection"), std::string::npos);
  opt = auto_options(1e-6);
  opt.fixed_h = 0.01;
  EXPECT_NE(refusal(opt).find("fixed steps"), std::string::npos);
  EXPECT_NE(std::string(tangent_check_options(auto_options(1e-6))).find("not for auto"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::test
