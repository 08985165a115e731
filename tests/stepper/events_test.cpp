// Events (stepper/events.hpp) of one member: crossing times against the pendulum's closed form, the
// directions and actions, a stop that discards the rest of its step, interior checks that find a
// grazing pair of crossings, and a trajectory that events never change.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "lockstep/model/pendulum.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;
using L = state_layout<models::pendulum>;

// The pendulum with one event: g = x - offset L (x the bob's horizontal position, L the rod).
template <event_direction Direction, event_action Action, int Offset = 0>  // in units of L / 10000
struct pendulum_x final : models::pendulum {
  static constexpr const char* name = "pendulum_x";
  static constexpr int n_events = 1;
  static constexpr event_declaration events[n_events] = {{"x", Direction, Action, "the bob's x, less an offset"}};
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const P* p) {
    vec<T, n_events> g;
    g[0] = q[0] - T(Offset / 10000.0 * p[1]);
    return g;
  }
};

// Two events that occur at once (x = 0, counted and recorded) and a stopping one that never occurs.
struct pendulum_two final : models::pendulum {
  static constexpr const char* name = "pendulum_two";
  static constexpr int n_events = 3;
  static constexpr event_declaration events[n_events] = {
      {"x_counted", event_direction::both, event_action::count, "x, counted"},
      {"x_recorded", event_direction::both, event_action::record, "x, recorded"},
      {"far_below", event_direction::falling, event_action::stop, "y + 10 L: never, the bob stays above -L"}};
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const P* p) {
    vec<T, n_events> g;
    g[0] = q[0];
    g[1] = q[0];
    g[2] = q[1] + T(10.0 * p[1]);  // never: the bob stays above y = -L
    return g;
  }
};

// An event of the multipliers: the rod's tension T = lambda L (Phi = (x^2 + y^2 - L^2) / 2, whose force
// -G^T lambda = -(x, y) lambda pulls the bob towards the pivot) less twice the bob's weight.
template <event_direction Direction, event_action Action>
struct pendulum_tension final : models::pendulum {
  static constexpr const char* name = "pendulum_tension";
  static constexpr int n_events = 1;
  static constexpr event_declaration events[n_events] = {{"tension", Direction, Action, "the rod's tension less 2 m g"}};
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>&, const vec<T, n>&, const vec<T, n>&,
                                            const vec<T, m>& lambda, const vec<T, k>&, const P* p) {
    vec<T, n_events> g;
    g[0] = lambda[0] * p[1] - T(2.0 * p[0] * p[2]);
    return g;
  }
};

// Both forms of the event function at once: refused, since which one runs would be a guess.
struct pendulum_both_event_forms final : models::pendulum {
  static constexpr const char* name = "pendulum_both_event_forms";
  static constexpr int n_events = 1;
  static constexpr event_declaration events[n_events] = {{"x", event_direction::both, event_action::record, ""}};
  template <class T, class P>
  static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const P*) {
    return vec<T, n_events>::filled(q[0]);
  }
  template <class T, class P>
  static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const vec<T, n>&, const vec<T, m>&,
                                const vec<T, k>&, const P*) {
    return vec<T, n_events>::filled(q[0]);
  }
};

static_assert(!events_of_multipliers<pendulum_x<event_direction::both, event_action::record>>);
static_assert(events_of_multipliers<pendulum_tension<event_direction::both, event_action::record>>);
static_assert(Model<pendulum_tension<event_direction::both, event_action::record>>);
static_assert(!model_requirements::event_function_fits<pendulum_both_event_forms>());

constexpr double p[3] = {1.0, 1.0, 9.81};

// The pendulum released at rest from the horizontal (theta0 = pi/2): x = L sin(theta) is zero at odd
// multiples of the quarter period T/4 = K(sin(theta0 / 2)) sqrt(L / g) (the complete elliptic integral
// of the first kind; Whittaker & Watson 1927, 22.735; std::comp_ellint_1 computes it).
double quarter_period() { return std::comp_ellint_1(std::sin(std::numbers::pi / 4.0)) * std::sqrt(p[1] / p[2]); }

template <class Model>
member_result<Model> released_from_horizontal(solver_options opt, double t1, std::vector<double> saves = {}) {
  const double in[2] = {std::numbers::pi / 2.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  return solve_member<Model>(p, q0, v0, 0.0, t1, opt, saves);
}

struct method_case {
  method_kind method;
  formulation form;
  projection_kind projection;
};

solver_options options_of(const method_case& c, double rtol) {
  solver_options opt;
  opt.method = c.method;
  opt.form = c.form;
  opt.projection = c.projection;
  opt.rtol = rtol;
  opt.atol_q = opt.atol_v = opt.atol_lambda = rtol;
  return opt;
}

const method_case methods[] = {
    {method_kind::radau5, formulation::index3, projection_kind::none},
    {method_kind::bdf, formulation::ggl, projection_kind::none},
    {method_kind::radau3, formulation::index3, projection_kind::none},
    {method_kind::dopri5, formulation::index1, projection_kind::coordinate},
    {method_kind::tsit5, formulation::index1, projection_kind::coordinate},
};

TEST(Events, StopAtTheQuarterPeriodOfThePendulum) {
  const double expected = quarter_period();
  using Model = pendulum_x<event_direction::falling, event_action::stop>;
  for (const method_case& c : methods) {
    SCOPED_TRACE(method_name(c.method));
    const std::vector<double> saves = {0.1, 0.2, 0.3, 0.5, 0.6, 1.0};  // T/4 = 0.5320
    const auto r = released_from_horizontal<Model>(options_of(c, 1e-9), 1.0, saves);
    ASSERT_EQ(r.status, member_status::stopped_by_event);
    EXPECT_EQ(r.stop_event, 0);
    EXPECT_NEAR(r.t_final, expected, 1e-7);
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].t, r.t_final);
    EXPECT_EQ(r.events[0].event, 0);
    // The step beyond t* is discarded: the save points after it are not written.
    ASSERT_EQ(r.t.size(), 4u);
    EXPECT_EQ(r.t.back(), 0.5);
    // The state at t*: on the constraint (projected), at the bottom, moving left at the speed energy
    // gives, with the multiplier of the acceleration-level system (the rod's tension 3 m g at the
    // bottom for a release from the horizontal: lambda = T / L with Phi = (x^2 + y^2 - L^2) / 2, whose
    // force -G^T lambda = -(x, y) lambda points from the bob to the pivot).
    const auto& y = r.y_final;
    EXPECT_NEAR(y[L::q + 0], 0.0, 1e-7);
    EXPECT_NEAR(y[L::q + 0] * y[L::q + 0] + y[L::q + 1] * y[L::q + 1], 1.0, 1e-12);
    EXPECT_NEAR(y[L::v + 0], -std::sqrt(2.0 * p[2] * p[1]), 1e-6);
    EXPECT_NEAR(y[L::lambda], 3.0 * p[0] * p[2] / p[1], 1e-5);
    EXPECT_EQ(r.event_counts, std::vector<long>{1});
    EXPECT_EQ(r.event_first_times, std::vector<double>{r.t_final});
  }
}

// Crossings of x = 0 by direction: falling at T/4, 5T/4, ...; rising at 3T/4, 7T/4, ...; both, all.
TEST(Events, RecordEveryCrossingInItsDirection) {
  const double quarter = quarter_period(), t1 = 8.5 * quarter;  // crossings at 1, 3, 5, 7 quarters
  const auto check = [&](const auto& r, std::vector<int> quarters) {
    ASSERT_EQ(r.status, member_status::success);
    ASSERT_EQ(r.events.size(), quarters.size());
    for (std::size_t i = 0; i < quarters.size(); ++i) {
      EXPECT_NEAR(r.events[i].t, quarters[i] * quarter, 2e-6) << "record " << i;
      EXPECT_NEAR(r.events[i].y[L::q + 0], 0.0, 1e-6) << "record " << i;
    }
    EXPECT_EQ(r.event_counts, std::vector<long>{long(quarters.size())});
  };
  for (const method_case& c : methods) {
    SCOPED_TRACE(method_name(c.method));
    const solver_options opt = options_of(c, 1e-9);
    check(released_from_horizontal<pendulum_x<event_direction::falling, event_action::record>>(opt, t1), {1, 5});
    check(released_from_horizontal<pendulum_x<event_direction::rising, event_action::record>>(opt, t1), {3, 7});
    check(released_from_horizontal<pendulum_x<event_direction::both, event_action::record>>(opt, t1), {1, 3, 5, 7});
  }
}

// count events are counted and timed but not recorded; records keep time order across events; an
// event that never occurs keeps a NaN first time; a member without a stop runs to t1.
TEST(Events, CountOnlyAndSeveralEventsInTimeOrder) {
  const double quarter = quarter_period();
  const method_case c = methods[0];
  const auto r = released_from_horizontal<pendulum_two>(options_of(c, 1e-9), 4.5 * quarter);
  ASSERT_EQ(r.status, member_status::success);
  EXPECT_EQ(r.event_counts, (std::vector<long>{2, 2, 0}));
  ASSERT_EQ(r.events.size(), 2u);
  for (const auto& e : r.events) EXPECT_EQ(e.event, 1);
  EXPECT_NEAR(r.events[0].t, quarter, 2e-6);
  EXPECT_NEAR(r.events[1].t, 3.0 * quarter, 2e-6);
  EXPECT_EQ(r.event_first_times[0], r.events[0].t);  // the same crossing, located alike
  EXPECT_EQ(r.event_first_times[1], r.events[0].t);
  EXPECT_TRUE(std::isnan(r.event_first_times[2]));
  EXPECT_EQ(r.stop_event, -1);
}

// A grazing approach: x exceeds 0.9999 L only within 0.053 s of each return to the horizontal (at the
// period T = 2.3677 s), inside one fixed step [18 h, 19 h] = [2.304, 2.432] (of dopri5: no Newton
// iteration to fail at such steps); the sign at the step's ends is the same, so that pair of
// crossings is found only by interior checks, and each crossing once.
TEST(Events, InteriorChecksFindTwoCrossingsWithinOneStep) {
  using Model = pendulum_x<event_direction::both, event_action::record, 9999>;
  solver_options opt = options_of(methods[3], 1e-6);
  opt.fixed_h = 0.128;
  const double t1 = 24 * opt.fixed_h;
  const auto plain = released_from_horizontal<Model>(opt, t1);
  ASSERT_EQ(plain.status, member_status::success);
  ASSERT_EQ(plain.events.size(), 1u);  // the first fall below 0.9999 L, within the first step
  EXPECT_LT(plain.events[0].t, opt.fixed_h);
  for (int checks : {1, 4, 9}) {
    SCOPED_TRACE(checks);
    opt.event_interior_checks = checks;
    const auto checked = released_from_horizontal<Model>(opt, t1);
    ASSERT_EQ(checked.status, member_status::success);
    ASSERT_EQ(checked.events.size(), 3u);
    EXPECT_NEAR(checked.events[0].t, plain.events[0].t, 1e-13);  // located from another bracket
    const double period = 4.0 * quarter_period();
    EXPECT_GT(checked.events[1].t, 18 * opt.fixed_h);
    EXPECT_LT(checked.events[1].t, period);
    EXPECT_GT(checked.events[2].t, period);
    EXPECT_LT(checked.events[2].t, 19 * opt.fixed_h);
    // The pair is symmetric about the return to the horizontal, to the accuracy of the fixed steps.
    EXPECT_NEAR(0.5 * (checked.events[1].t + checked.events[2].t), period, 1e-3);
    // The same steps: checks look at the dense output only.
    EXPECT_EQ(checked.counters.steps, plain.counters.steps);
  }
}

// Events never change the trajectory: the member with recorded events takes the same steps and writes
// the same save points, bit for bit, as the pendulum without them.
TEST(Events, LeaveTheTrajectoryUnchanged) {
  const std::vector<double> saves = {0.25, 0.5, 1.0, 1.5, 2.0, 2.5};
  for (const method_case& c : methods) {
    SCOPED_TRACE(method_name(c.method));
    solver_options opt = options_of(c, 1e-7);
    opt.event_interior_checks = 3;
    const auto with = released_from_horizontal<pendulum_x<event_direction::both, event_action::record>>(opt, 2.5, saves);
    const auto without = released_from_horizontal<models::pendulum>(opt, 2.5, saves);
    ASSERT_EQ(with.status, member_status::success);
    EXPECT_EQ(with.events.size(), 2u);  // at 1 and 3 quarter periods
    EXPECT_EQ(with.counters.steps, without.counters.steps);
    EXPECT_EQ(with.counters.rejected_steps, without.counters.rejected_steps);
    ASSERT_EQ(with.y.size(), without.y.size());
    for (std::size_t i = 0; i < with.y.size(); ++i)
      for (int j = 0; j < L::size; ++j) EXPECT_EQ(with.y[i][j], without.y[i][j]) << "save " << i << " entry " << j;
    for (int j = 0; j < L::size; ++j) EXPECT_EQ(with.y_final[j], without.y_final[j]);
  }
}

// The time tolerance is the bracket's length: a loose one gives a coarser t*, within it.
TEST(Events, LocateToTheStatedTimeTolerance) {
  using Model = pendulum_x<event_direction::falling, event_action::stop>;
  solver_options opt = options_of(methods[0], 1e-10);
  const auto tight = released_from_horizontal<Model>(opt, 1.0);
  opt.event_time_tolerance = 1e-3;
  const auto loose = released_from_horizontal<Model>(opt, 1.0);
  ASSERT_EQ(loose.status, member_status::stopped_by_event);
  EXPECT_NEAR(tight.t_final, quarter_period(), 1e-8);
  EXPECT_LE(std::abs(loose.t_final - tight.t_final), 1e-3);
  EXPECT_GE(loose.t_final, tight.t_final);  // t* is the bracket's end past the crossing
}

// An event of the multipliers, against the pendulum's closed form. Released at rest from the horizontal,
// the bob at angle theta from the downward vertical pulls the rod with T = 3 m g cos(theta) (energy:
// L theta'^2 = 2 g cos(theta); radially, T - m g cos(theta) = m L theta'^2). T passes 2 m g at
// cos(theta*) = 2/3, a time tau before and after the bottom (at the quarter period T/4); with sin(theta
// / 2) = k sin(phi), k = sin(pi / 4), the time from the bottom to theta is sqrt(L / g) F(phi, k), the
// incomplete elliptic integral of the first kind (Whittaker & Watson 1927, 22.735; std::ellint_1). On
// Radau IIA's index-3 formulation the method's own lambda is of low order: the event's multiplier is
// the acceleration-level system's, so every method finds the same times.
TEST(Events, TensionOfTheRodCrossesTwiceTheWeightAtTheClosedFormTimes) {
  const double theta = std::acos(2.0 / 3.0), k = std::sin(std::numbers::pi / 4.0);
  const double tau = std::ellint_1(k, std::asin(std::sin(theta / 2.0) / k)) * std::sqrt(p[1] / p[2]);
  const double quarter = quarter_period();
  using Model = pendulum_tension<event_direction::both, event_action::record>;
  for (const method_case& c : methods) {
    SCOPED_TRACE(method_name(c.method));
    const auto r = released_from_horizontal<Model>(options_of(c, 1e-10), 1.8 * quarter);
    ASSERT_EQ(r.status, member_status::success);
    ASSERT_EQ(r.events.size(), 2u);
    EXPECT_NEAR(r.events[0].t, quarter - tau, 1e-7);
    EXPECT_NEAR(r.events[1].t, quarter + tau, 1e-7);
    for (const auto& e : r.events) {
      // The record holds the multiplier the event function saw: the tension is 2 m g there.
      EXPECT_NEAR(e.y[L::lambda] * p[1], 2.0 * p[0] * p[2], 1e-5);
      EXPECT_NEAR(-e.y[L::q + 1] / p[1], 2.0 / 3.0, 1e-7);
    }
  }
}

// A rising tension stops the member on the way down, before the bottom.
TEST(Events, StopWhenTheTensionRises) {
  const double theta = std::acos(2.0 / 3.0), k = std::sin(std::numbers::pi / 4.0);
  const double tau = std::ellint_1(k, std::asin(std::sin(theta / 2.0) / k)) * std::sqrt(p[1] / p[2]);
  using Model = pendulum_tension<event_direction::rising, event_action::stop>;
  for (const method_case& c : methods) {
    SCOPED_TRACE(method_name(c.method));
    const auto r = released_from_horizontal<Model>(options_of(c, 1e-10), 1.0, {0.1, 0.2, 0.5, 0.6});
    ASSERT_EQ(r.status, member_status::stopped_by_event);
    EXPECT_NEAR(r.t_final, quarter_period() - tau, 1e-7);
    EXPECT_EQ(r.t.size(), 2u);  // 0.1 and 0.2 before t* = 0.306
    EXPECT_NEAR(r.y_final[L::lambda] * p[1], 2.0 * p[0] * p[2], 1e-5);
  }
}

}  // namespace
