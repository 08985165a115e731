// Consistent initialization (Mantegazza & Masarati 2012, eqs. 120-123): projection of a start off the constraints,
// and the published consistent accelerations and multipliers of Andrews' squeezer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lockstep/method/methods.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/stepper/member.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;

TEST(ConsistentInitialization, ProjectsPendulumStartOntoCircleAlongConstraintNormal) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q, v;
  Model::initial_state(p, in, q, v);
  // Move the start 1e-3 off the circle, in a direction with a tangential part, so a correction that
  // is not along G^T = (x, y) would show.
  vec<double, 2> q_off = q;
  q_off[0] += 1e-3;
  q_off[1] += 0.4e-3;
  solver_options opt;
  initial_values<Model> init;
  member_counters counters;
  ASSERT_EQ(consistent_initialization<Model>(0.0, q_off, v, p, opt, init, counters), member_status::success);

  EXPECT_LE(std::abs(Model::constraint<double, double>(0.0, init.q, p)[0]), 1e-14);
  // Minimal-norm correction: dq parallel to the constraint normal at the solution (G^T = q), i.e.
  // dq x q = 0 up to round-off.
  const double dq_x = init.q[0] - q_off[0], dq_y = init.q[1] - q_off[1];
  EXPECT_LE(std::abs(dq_x * init.q[1] - dq_y * init.q[0]), 1e-15);
  EXPECT_GT(counters.init_q_correction, 5e-4);  // it did move, and reports how far
}

// The pendulum (L = 1) started at angle 1 with its bob moved radially by `off`: the projection moves
// it back along the rod by |off|, a correction of max-norm |off| max(|sin 1|, |cos 1|) = 0.84 |off|.
member_status start_moved_along_the_rod(double off, init_mode mode, member_counters& counters) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q, v;
  Model::initial_state(p, in, q, v);
  q[0] *= 1.0 + off;
  q[1] *= 1.0 + off;
  solver_options opt;
  opt.init = mode;
  initial_values<Model> init;
  return consistent_initialization<Model>(0.0, q, v, p, opt, init, counters);
}

TEST(ConsistentInitialization, AutoModeIsTheDefault) {
  EXPECT_EQ(solver_options{}.init, init_mode::automatic);
}

TEST(ConsistentInitialization, AutoModeRefusesAPositionCorrectionAboveTenPercentOfTheConfiguration) {
  // Arrange, Act: a rod 34 % too long (a start 0.34 m off on a 1 m rod), 20 % and 5 % too long.
  member_counters far, near, close;
  const member_status s_far = start_moved_along_the_rod(0.34, init_mode::automatic, far);
  const member_status s_near = start_moved_along_the_rod(0.2, init_mode::automatic, near);
  const member_status s_close = start_moved_along_the_rod(0.05, init_mode::automatic, close);

  // Assert: refused above 10 % of the configuration's size (max |q| = 0.84 m), with the correction kept
  // for the report; projected below it.
  EXPECT_EQ(s_far, member_status::inconsistent_initial);
  EXPECT_NEAR(far.init_q_correction, 0.34 * std::sin(1.0), 1e-12);
  EXPECT_EQ(s_near, member_status::inconsistent_initial);
  EXPECT_EQ(s_close, member_status::success);
  EXPECT_NEAR(close.init_q_correction, 0.05 * std::sin(1.0), 1e-12);
}

TEST(ConsistentInitialization, ProjectModeAcceptsAGrossCorrection) {
  member_counters counters;
  EXPECT_EQ(start_moved_along_the_rod(0.34, init_mode::project, counters), member_status::success);
  EXPECT_NEAR(counters.init_q_correction, 0.34 * std::sin(1.0), 1e-12);
}

TEST(ConsistentInitialization, AutoModeAcceptsARoundOffCorrectionOfAStartAtTheOrigin) {
  // Arrange: the particle on the plane z = a x + b y, started 1e-12 above it at the origin. The
  // correction is all of the configuration's size, but far inside the tolerance (atol 1e-6): round-off,
  // not a wrong start.
  using Model = models::linear_oscillator;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  vec<double, 3> q, v;
  q[2] = 1e-12;
  solver_options opt;
  initial_values<Model> init;
  member_counters counters;

  // Act
  const member_status s = consistent_initialization<Model>(0.0, q, v, p, opt, init, counters);

  // Assert
  EXPECT_EQ(s, member_status::success);
  EXPECT_GT(counters.init_q_correction, 0.5e-12);
}

TEST(ConsistentInitialization, AutoModeAcceptsAnyVelocityCorrection) {
  // Arrange: the car axle at rest at its published position, where the road drives its left wheel
  // upwards at r w = 1 (a rheonomic constraint, Phi_t != 0): the drive fixes the velocity, and the
  // correction from v0 = 0 is as large as the velocities themselves.
  using Model = models::car_axis;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  vec<double, Model::n> q, v;
  Model::initial_state(p, nullptr, q, v);
  for (int i = 0; i < Model::n; ++i) v[i] = 0.0;
  solver_options opt;
  initial_values<Model> init;
  member_counters counters;

  // Act
  const member_status s = consistent_initialization<Model>(0.0, q, v, p, opt, init, counters);

  // Assert
  EXPECT_EQ(s, member_status::success);
  EXPECT_GT(counters.init_v_correction, 0.1);
  EXPECT_LE(counters.init_q_correction, 1e-15);
}

TEST(ConsistentInitialization, StrictModeRefusesStartOffTheConstraints) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q, v;
  Model::initial_state(p, in, q, v);
  q[0] += 1e-3;
  solver_options opt;
  opt.init = init_mode::strict;
  initial_values<Model> init;
  member_counters counters;
  EXPECT_EQ(consistent_initialization<Model>(0.0, q, v, p, opt, init, counters), member_status::inconsistent_initial);
}

TEST(ConsistentInitialization, StrictModeAcceptsConsistentStart) {
  using Model = models::double_pendulum;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  const double in[4] = {2.0, 2.5, 0.3, -0.7};
  vec<double, 4> q, v;
  Model::initial_state(p, in, q, v);
  solver_options opt;
  opt.init = init_mode::strict;
  initial_values<Model> init;
  member_counters counters;
  EXPECT_EQ(consistent_initialization<Model>(0.0, q, v, p, opt, init, counters), member_status::success);
}

TEST(ConsistentInitialization, VelocityProjectionSatisfiesVelocityConstraints) {
  using Model = models::slider_crank;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  const double in[2] = {0.7, 150.0};
  vec<double, Model::n> q, v;
  Model::initial_state(p, in, q, v);
  for (int i = 0; i < Model::n; ++i) v[i] += 0.5 * ((i % 3) - 1);  // break the velocity constraints
  solver_options opt;
  initial_values<Model> init;
  member_counters counters;
  ASSERT_EQ(consistent_initialization<Model>(0.0, q, v, p, opt, init, counters), member_status::success);
  EXPECT_LE(norm_inf(velocity_constraint<Model>(0.0, init.q, init.v, p)), 1e-12 * 150.0);
  EXPECT_GT(counters.init_v_correction, 0.1);
}

// ---- a member that never starts ----
// It reports where it stands: final_t = t0 and the (q0, v0) it was given, as given (docs/RESULTS-FORMAT.md),
// with NaN multipliers (none were computed); not t = 0 and zeros.

// Expects y to be (q0, v0) as given, with every multiplier NaN.
template <class Model>
void expect_given_point(const state_vector<Model>& y, const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                        const char* what) {
  using L = state_layout<Model>;
  for (int i = 0; i < Model::n; ++i) {
    EXPECT_EQ(y[L::q + i], q0[i]) << what << ": q" << i;
    EXPECT_EQ(y[L::v + i], v0[i]) << what << ": v" << i;
  }
  for (int i = L::lambda; i < L::size; ++i) EXPECT_TRUE(std::isnan(y[i])) << what << ": multiplier entry " << i;
}

TEST(MemberThatNeverStarts, ReportsT0AndTheStartItWasGivenWithEveryMethod) {
  // Arrange: a pendulum with g = NaN, whose initial accelerations are not finite (model_not_finite),
  // started 1e-3 off its circle (so that the start given differs from its projection) at t0 = 0.5.
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, std::numeric_limits<double>::quiet_NaN()};
  const vec<double, 2> q0{{0.85, -0.54}}, v0{{0.1, 0.2}};
  for (const method_kind method : {method_kind::bdf, method_kind::radau5, method_kind::radau3, method_kind::euler,
                                   method_kind::rhoinf, method_kind::dopri5, method_kind::tsit5,
                                   method_kind::automatic}) {
    solver_options opt;
    opt.method = method;
    // The explicit pairs integrate index1, auto's implicit phases ggl; both project after every step.
    opt.form = is_explicit_pair(method) ? formulation::index1 : formulation::ggl;
    if (takes_explicit_steps(method)) opt.projection = projection_kind::coordinate;

    // Act
    const member_result<Model> r = solve_member<Model>(p, q0, v0, 0.5, 1.5, opt, {0.5, 1.5});

    // Assert
    EXPECT_EQ(r.status, member_status::model_not_finite) << method_name(method);
    EXPECT_EQ(r.t_final, 0.5) << method_name(method);
    expect_given_point<Model>(r.y_final, q0, v0, method_name(method));
  }
}

TEST(MemberThatNeverStarts, ReportsT0AndTheStartItWasGivenWhenItsOptionsAreRefused) {
  // Arrange: adaptive BDF on index3, which BDF refuses (invalid_input), through member_begin (the batch
  // kernels' path) and through solve_member's own checks (t1 <= t0).
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81};
  const vec<double, 2> q0{{0.85, -0.54}}, v0{{0.1, 0.2}};
  solver_options opt;
  opt.method = method_kind::bdf;
  opt.form = formulation::index3;
  member_state<Model, bdf_method> ms;
  const double save_times[1] = {0.5};
  auto sink = [](int, double, const state_vector<Model>&) { ADD_FAILURE() << "a member that never starts saves nothing"; };

  // Act
  member_begin<Model>(ms, 0.5, 1.5, q0, v0, p, opt, save_times, 1, sink);
  opt.form = formulation::ggl;
  const member_result<Model> backwards = solve_member<Model>(p, q0, v0, 0.5, 0.25, opt, {});

  // Assert
  EXPECT_EQ(ms.status, member_status::invalid_input);
  EXPECT_EQ(bdf_method::time(ms.method), 0.5);
  expect_given_point<Model>(member_final_state<Model>(ms, p, opt), q0, v0, "member_begin");
  EXPECT_EQ(backwards.status, member_status::invalid_input);
  EXPECT_EQ(backwards.t_final, 0.5);
  expect_given_point<Model>(backwards.y_final, q0, v0, "solve_member");
}

// Published consistent values: F. Mazzia and C. Magherini, "Test Set for Initial Value Problem Solvers",
// release 2.4, 2008 (docs/BIBLIOGRAPHY.md, "IVP Test Set"), andrews.f, subroutine INIT: y(15..21) =
// q''(0) and y(22..27) = lambda(0); Hairer & Wanner 1996, VII.7, give the same start.
TEST(ConsistentInitialization, ReproducesAndrewsPublishedAccelerationsAndMultipliers) {
  using Model = models::andrews;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  vec<double, 7> q, v;
  Model::initial_state(p, nullptr, q, v);
  solver_options opt;
  initial_values<Model> init;
  member_counters counters;
  ASSERT_EQ(consistent_initialization<Model>(0.0, q, v, p, opt, init, counters), member_status::success);
  const double a_ref[7] = {14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0};
  const double l_ref[6] = {98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0};
  double da = 0, na = 0, dl = 0, nl = 0;
  for (int i = 0; i < 7; ++i) {
    da += (init.a[i] - a_ref[i]) * (init.a[i] - a_ref[i]);
    na += a_ref[i] * a_ref[i];
  }
  for (int i = 0; i < 6; ++i) {
    dl += (init.lambda[i] - l_ref[i]) * (init.lambda[i] - l_ref[i]);
    nl += l_ref[i] * l_ref[i];
  }
  EXPECT_LE(std::sqrt(da / na), 1e-10);
  EXPECT_LE(std::sqrt(dl / nl), 1e-10);
}

}  // namespace
