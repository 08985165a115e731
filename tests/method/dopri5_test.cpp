// Dormand & Prince's explicit pair on the index-1 equations with projection (method/dopri5.hpp): its
// coefficients against the Runge-Kutta order conditions, its orders against the independent pendulum
// and double-pendulum solutions (tests/support/reference.hpp), its dense output's order, the constraint
// drift with and without the projection, what it refuses, and its stages' solve of the acceleration
// system (by the Schur complement of M) against published and closed-form accelerations and multipliers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lockstep/lyapunov/tangent_member_common.hpp"
#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

using T = dopri5_tableau;

// sum_j a_ij w_j over the stages before i.
double row_times(int i, const double* w) {
  double s = 0.0;
  for (int j = 0; j < i; ++j) s += T::a[i][j] * w[j];
  return s;
}

// The Runge-Kutta order conditions up to order 5 (Hairer, Norsett & Wanner 1993, II.2: one per rooted
// tree, 17 up to order 5) for the weights b: the residual of each, sum_i b_i Phi_i(tree) -
// theta^order(tree) / gamma(tree), 0 when it holds. theta = 1 gives the conditions of a method's weights;
// a continuous extension's weights b(theta) satisfy them with theta (Hairer, Norsett & Wanner 1993, II.6).
std::vector<double> order_condition_residuals(const double (&b)[T::stages], int order, double theta = 1.0) {
  double c2[T::stages], c3[T::stages], c4[T::stages], cac[T::stages];
  double ac[T::stages], ac2[T::stages], ac3[T::stages], aac[T::stages], acac[T::stages], aac2[T::stages],
      aaac[T::stages];
  for (int i = 0; i < T::stages; ++i) {
    c2[i] = T::c[i] * T::c[i];
    c3[i] = c2[i] * T::c[i];
    c4[i] = c3[i] * T::c[i];
  }
  for (int i = 0; i < T::stages; ++i) {
    ac[i] = row_times(i, T::c);
    ac2[i] = row_times(i, c2);
    ac3[i] = row_times(i, c3);
  }
  for (int i = 0; i < T::stages; ++i) cac[i] = T::c[i] * ac[i];
  for (int i = 0; i < T::stages; ++i) {
    aac[i] = row_times(i, ac);
    acac[i] = row_times(i, cac);
    aac2[i] = row_times(i, ac2);
  }
  for (int i = 0; i < T::stages; ++i) aaac[i] = row_times(i, aac);
  std::vector<double> r;
  // One condition: sum_i b_i phi(i) = theta^rho / gamma.
  auto condition = [&](int rho, double gamma, auto phi) {
    if (rho > order) return;
    double s = 0.0;
    for (int i = 0; i < T::stages; ++i) s += b[i] * phi(i);
    r.push_back(s - std::pow(theta, rho) / gamma);
  };
  condition(1, 1, [](int) { return 1.0; });
  condition(2, 2, [](int i) { return T::c[i]; });
  condition(3, 3, [&](int i) { return c2[i]; });
  condition(3, 6, [&](int i) { return ac[i]; });
  condition(4, 4, [&](int i) { return c3[i]; });
  condition(4, 8, [&](int i) { return cac[i]; });
  condition(4, 12, [&](int i) { return ac2[i]; });
  condition(4, 24, [&](int i) { return aac[i]; });
  condition(5, 5, [&](int i) { return c4[i]; });
  condition(5, 10, [&](int i) { return c2[i] * ac[i]; });
  condition(5, 15, [&](int i) { return T::c[i] * ac2[i]; });
  condition(5, 30, [&](int i) { return T::c[i] * aac[i]; });
  condition(5, 20, [&](int i) { return ac[i] * ac[i]; });
  condition(5, 20, [&](int i) { return ac3[i]; });
  condition(5, 40, [&](int i) { return acac[i]; });
  condition(5, 60, [&](int i) { return aac2[i]; });
  condition(5, 120, [&](int i) { return aaac[i]; });
  return r;
}

TEST(Dopri5Tableau, TheNodesAreTheRowSumsAndTheLastRowIsTheFifthOrderWeights) {
  double b[T::stages];
  for (int j = 0; j < T::stages; ++j) b[j] = j < T::stages - 1 ? T::a[T::stages - 1][j] : 0.0;
  const std::vector<double> ones(T::stages, 1.0);
  for (int i = 1; i < T::stages; ++i) EXPECT_NEAR(row_times(i, ones.data()), T::c[i], 1e-15) << i;
  const std::vector<double> fifth = order_condition_residuals(b, 5);
  EXPECT_EQ(fifth.size(), 17u);
  for (double r : fifth) EXPECT_NEAR(r, 0.0, 1e-14);
  // The embedded weights b^ = b - e are of order 4 and not of order 5 (else the estimate would vanish).
  double embedded[T::stages];
  for (int j = 0; j < T::stages; ++j) embedded[j] = b[j] - T::e[j];
  for (double r : order_condition_residuals(embedded, 4)) EXPECT_NEAR(r, 0.0, 1e-14);
  double worst = 0.0;
  for (double r : order_condition_residuals(embedded, 5)) worst = std::max(worst, std::abs(r));
  EXPECT_GT(worst, 1e-4);
}

// The dense output's weights b_i(theta) (the header's r0 ... r4 written per stage) satisfy the order
// conditions up to order 4 at every theta, and not those of order 5.
TEST(Dopri5Tableau, TheDenseOutputIsOfOrderFourAtEveryTheta) {
  for (double theta : {0.1, 0.25, 0.5, 0.8}) {
    double b[T::stages];
    for (int j = 0; j < T::stages; ++j) {
      const double fifth = j < T::stages - 1 ? T::a[T::stages - 1][j] : 0.0;
      const double first = j == 0 ? 1.0 : 0.0, last = j == T::stages - 1 ? 1.0 : 0.0;
      const double r1 = fifth, r2 = first - r1, r3 = r1 - last - r2, r4 = T::d[j];
      b[j] = theta * (r1 + (1 - theta) * (r2 + theta * (r3 + (1 - theta) * r4)));
    }
    for (double r : order_condition_residuals(b, 4, theta)) EXPECT_NEAR(r, 0.0, 1e-14) << theta;
    double worst = 0.0;
    for (double r : order_condition_residuals(b, 5, theta)) worst = std::max(worst, std::abs(r));
    EXPECT_GT(worst, 1e-5) << theta;
  }
}

solver_options dopri5_options(projection_kind projection = projection_kind::coordinate) {
  solver_options opt = method_options(method_kind::dopri5, formulation::index1);
  opt.projection = projection;
  return opt;
}

// Fixed steps against the pendulum's independent solution: order 5 in q, v and the multiplier of the
// acceleration system, with the projection after every step and without it.
TEST(Dopri5, FixedStepsAreOfOrderFiveWithAndWithoutTheProjection) {
  const std::vector<int> steps = {16, 23, 32, 45, 64};
  expect_fixed_step_orders(dopri5_options(), steps, 5.0, 5.0, 5.0);
  expect_fixed_step_orders(dopri5_options(projection_kind::none), steps, 5.0, 5.0, 5.0);
}

// The dense output between the step points: saved at the middle of every fixed step, the error against
// the reference falls with order 5 (the continuous extension's local error, O(h^5)).
TEST(Dopri5, DenseOutputBetweenStepsIsOfOrderFive) {
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.0};
  vec<double, 2> q0, v0;
  Model::initial_state(p, in, q0, v0);
  const std::vector<int> steps = {16, 23, 32, 45, 64};
  std::vector<double> errors;
  for (int n : steps) {
    solver_options opt = dopri5_options();
    opt.fixed_h = 1.0 / n;
    std::vector<double> times;
    for (int i = 0; i < n; ++i) times.push_back((i + 0.5) / n);
    const auto r = solve_member<Model>(p, q0, v0, 0.0, 1.0, opt, times);
    ASSERT_EQ(r.status, member_status::success);
    const auto refs = reference::pendulum({}, 1.0, 0.0, times);
    double e = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i)
      for (int j = 0; j < 2; ++j) e = std::max(e, std::abs(r.q(i, j) - refs[i].q[j]));
    std::printf("[ measured ] dopri5 N = %d: dense output err q %.3e\n", n, e);
    errors.push_back(e);
  }
  const double slope = fitted_order(steps, errors);
  std::printf("[ measured ] dopri5 dense output slope %.3f\n", slope);
  EXPECT_NEAR(slope, 5.0, 0.4);
}

// Adaptive runs gain accuracy with the tolerance, and the projection keeps |Phi| at round-off while
// the unprojected index-1 solution drifts from the constraints (Hairer & Wanner 1996, VII.2).
TEST(Dopri5, AdaptiveRunsGainAccuracyAndTheProjectionHoldsTheConstraints) {
  expect_adaptive_accuracy_gains(dopri5_options(), 5.0, 10.0);
  using Model = models::double_pendulum;
  const double p[5] = {1.0, 1.0, 1.0, 1.0, 9.81}, in[4] = {0.5, 0.3, 0.0, 0.0};
  vec<double, Model::n> q0, v0;
  Model::initial_state(p, in, q0, v0);
  for (const projection_kind projection : {projection_kind::coordinate, projection_kind::none}) {
    solver_options opt = dopri5_options(projection);
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-6;
    const auto r = solve_member<Model>(p, q0, v0, 0.0, 20.0, opt, {20.0});
    ASSERT_EQ(r.status, member_status::success);
    std::printf("[ measured ] dopri5 projection %s: max |Phi| %.3e, max |G v| %.3e, %ld steps\n",
                projection_name(projection), r.counters.max_phi, r.counters.max_velocity_residual, r.counters.steps);
    if (projection == projection_kind::coordinate) {
      EXPECT_LT(r.counters.max_phi, 1e-12);
      EXPECT_LT(r.counters.max_velocity_residual, 1e-12);
      EXPECT_EQ(r.counters.projections, r.counters.steps);
    } else {
      EXPECT_GT(r.counters.max_phi, 1e-9);  // the drift a projection removes
    }
  }
}

// The double pendulum against its independent solution (the minimal-coordinate ODE of
// tests/support/reference.hpp), released from the angles (0.5, 0.3): the bobs' positions at t = 10 to
// about -log10 rtol digits.
TEST(Dopri5, TheDoublePendulumAgreesWithItsIndependentSolution) {
  using Model = models::double_pendulum;
  const double p[5] = {1.0, 1.0, 1.0, 1.0, 9.81}, in[4] = {0.5, 0.3, 0.0, 0.0};
  vec<double, Model::n> q0, v0;
  Model::initial_state(p, in, q0, v0);
  const auto ref = reference::double_pendulum({}, 0.5, 0.3, 0.0, 0.0, {10.0}).back();
  for (double tol : {1e-6, 1e-9}) {
    solver_options opt = dopri5_options();
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
    const auto r = solve_member<Model>(p, q0, v0, 0.0, 10.0, opt, {10.0});
    ASSERT_EQ(r.status, member_status::success);
    double e = 0.0;
    for (int j = 0; j < Model::n; ++j) e = std::max(e, std::abs(r.q(0, j) - ref.q[j]) / (1.0 + std::abs(ref.q[j])));
    std::printf("[ measured ] dopri5 tol %.0e: double pendulum %.2f digits, %ld steps, %ld rejected\n", tol,
                -std::log10(e), r.counters.steps, r.counters.rejected_steps);
    EXPECT_GT(-std::log10(e), -std::log10(tol) - 1.5);
  }
}

TEST(Dopri5, RefusesTheImplicitFormulationsBaumgarteAndTangents) {
  for (const formulation form : {formulation::index3, formulation::ggl, formulation::projected_invariants}) {
    const std::string why = check_method_options(method_options(method_kind::dopri5, form));
    EXPECT_NE(why.find("index-1 equations"), std::string::npos) << why;
  }
  solver_options opt = dopri5_options();
  EXPECT_STREQ(check_method_options(opt), "");
  opt.baumgarte_alpha = 1.0;
  EXPECT_NE(std::string(check_method_options(opt)).find("Baumgarte"), std::string::npos);
  EXPECT_NE(std::string(tangent_check_options(dopri5_options())).find("not for dopri5"), std::string::npos);
  // A refused member never starts: it reports invalid_input and the point it was given.
  using Model = models::pendulum;
  const double p[3] = {1.0, 1.0, 9.81};
  const auto r = solve_member<Model>(p, vec<double, 2>{1.0, 0.0}, vec<double, 2>{0.0, 0.0}, 0.0, 1.0,
                                     method_options(method_kind::dopri5, formulation::ggl), {});
  EXPECT_EQ(r.status, member_status::invalid_input);
}


// The stages' solve (solve_stage_accelerations, the Schur complement of M) at Andrews' consistent start
// against the published accelerations and multipliers: F. Mazzia and C. Magherini, "Test Set for Initial
// Value Problem Solvers", release 2.4, 2008, andrews.f, subroutine INIT (y(15..21) = q''(0), y(22..27) =
// lambda(0)), the values tests/stepper/initialize_test.cpp holds the LU's solve to.
TEST(Dopri5StageSolve, ReproducesAndrewsPublishedAccelerationsAndMultipliers) {
  using Model = models::andrews;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  vec<double, 7> q, v, a;
  vec<double, 6> lambda;
  vec<double, 0> nu;
  Model::initial_state(p, nullptr, q, v);
  ASSERT_EQ(detail::solve_stage_accelerations<Model>(0.0, q, v, p, a, lambda, nu, std::uint64_t{0}),
            member_status::success);
  const double a_ref[7] = {14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0};
  const double l_ref[6] = {98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0};
  double da = 0, na = 0, dl = 0, nl = 0;
  for (int i = 0; i < 7; ++i) {
    da += (a[i] - a_ref[i]) * (a[i] - a_ref[i]);
    na += a_ref[i] * a_ref[i];
  }
  for (int i = 0; i < 6; ++i) {
    dl += (lambda[i] - l_ref[i]) * (lambda[i] - l_ref[i]);
    nl += l_ref[i] * l_ref[i];
  }
  EXPECT_LE(std::sqrt(da / na), 1e-10);
  EXPECT_LE(std::sqrt(dl / nl), 1e-10);
}

// A pendulum of mass m and length L at rest at angle theta, its rod stated twice: with the second row
// dropped (the rank decision's mask), the first row's multiplier is the rod's, m g cos(theta) / L for
// Phi = (x^2 + y^2 - L^2) / 2, the dropped one's is 0, and a = (-g sin cos, -g sin^2) (the tangential
// component of gravity); with neither dropped, C M^-1 C^T is singular, and the LU says so.
TEST(Dopri5StageSolve, ADroppedRowHasNoMultiplierAndADependentOneIsSingular) {
  using Model = doubled_pendulum_constraint;
  const double m = 2.0, L = 1.5, g = 9.81, theta = 0.7, p[3] = {m, L, g};
  const vec<double, 2> q{L * std::sin(theta), -L * std::cos(theta)}, v{0.0, 0.0};
  vec<double, 2> a, lambda;
  vec<double, 0> nu;
  ASSERT_EQ(detail::solve_stage_accelerations<Model>(0.0, q, v, p, a, lambda, nu, std::uint64_t{0b10}),
            member_status::success);
  EXPECT_NEAR(lambda[0], m * g * std::cos(theta) / L, 1e-13);
  EXPECT_EQ(lambda[1], 0.0);
  EXPECT_NEAR(a[0], -g * std::sin(theta) * std::cos(theta), 1e-13);
  EXPECT_NEAR(a[1], -g * std::sin(theta) * std::sin(theta), 1e-13);
  EXPECT_EQ(detail::solve_stage_accelerations<Model>(0.0, q, v, p, a, lambda, nu, std::uint64_t{0}),
            member_status::singular_matrix);
}

// A point with mass m in x and none in y, held on the line y = x and pulled down by a weight w on y:
// M = diag(m, 0) is not positive definite, but the saddle-point system is regular, and the stages'
// solve falls back to the LU's: lambda = -w, a = (-w / m, -w / m).
struct massless_coordinate {
  static constexpr const char* name = "massless_coordinate";
  static constexpr const char* description = "a point with mass in x alone, on the line y = x";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 2;
  static constexpr named_value params[n_params] = {{"m", 2.0, ""}, {"w", 3.0, ""}};
  static constexpr int n_inputs = 0;
  template <class T, class P>
  static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    return M;
  }
  template <class T, class P>
  static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    vec<T, n> Q;
    Q[1] = T(-p[1]);
    return Q;
  }
  template <class T, class P>
  static vec<T, m> constraint(const T&, const vec<T, n>& q, const P*) {
    vec<T, m> phi;
    phi[0] = q[1] - q[0];
    return phi;
  }
  static void initial_state(const double*, const double*, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = q0[1] = v0[0] = v0[1] = 0.0;
  }
};

TEST(Dopri5StageSolve, AMassMatrixThatIsNotPositiveDefiniteFallsBackToTheLU) {
  using Model = massless_coordinate;
  const double p[2] = {2.0, 3.0};
  const vec<double, 2> q{0.5, 0.5}, v{1.0, 1.0};
  vec<double, 2> a;
  vec<double, 1> lambda;
  vec<double, 0> nu;
  ASSERT_EQ(detail::solve_stage_accelerations<Model>(0.0, q, v, p, a, lambda, nu, std::uint64_t{0}),
            member_status::success);
  EXPECT_NEAR(lambda[0], -3.0, 1e-15);
  EXPECT_NEAR(a[0], -1.5, 1e-15);
  EXPECT_NEAR(a[1], -1.5, 1e-15);
}

}  // namespace
}  // namespace lockstep::test
