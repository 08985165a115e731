// Redundant constraints in the solver: a double pendulum with its first rod stated twice (once as
// (x1^2 + y1^2 - L1^2) / 2, once as sqrt(x1^2 + y1^2) - L1, rows with parallel gradients everywhere)
// must move exactly as the plain double pendulum, in every method, formulation and projection: the
// solver drops the second statement (formulation/constraint_rank.hpp: of a redundant set the rows
// listed last are dropped), reports it, and solves with the independent rows.
//
// Why bitwise. A dropped row's unknowns become identity rows and columns of the Newton matrix, the
// projections' Gram matrices and the index-1 system of the multipliers, decoupled from the rest; the
// pivoted LU, Cholesky and triangular solves then perform on the other rows exactly the operations
// they perform without the row (its entries enter only as + 0), and the norms leave its multipliers
// out of their sums and counts. So q, v and the multipliers of the kept rows are the same bits, which
// is what the test asserts; any leak of the redundant row into a step decision would change them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/formulation/minimum_norm_multipliers.hpp"
#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace lockstep {
namespace {

// The double pendulum with a second statement of its first rod as row 1 (between the two rods).
struct restated_rod_pendulum : models::double_pendulum {
  static constexpr const char* name = "restated_rod_pendulum";
  static constexpr int m = 3;

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T& t, const vec<T, n>& q, const P* p) {
    const vec<T, 2> rods = models::double_pendulum::constraint<T, P>(t, q, p);
    vec<T, m> phi;
    phi[0] = rods[0];
    phi[1] = sqrt(q[0] * q[0] + q[1] * q[1]) - p[2];
    phi[2] = rods[1];
    return phi;
  }
};

using plain = models::double_pendulum;
using restated = restated_rod_pendulum;

struct pair_of_runs {
  member_result<plain> plain_run;
  member_result<restated> restated_run;
};

std::vector<double> save_times() {
  std::vector<double> t;
  for (int i = 0; i <= 20; ++i) t.push_back(0.1 * i);
  return t;
}

// The double pendulum's default parameters and initial state.
struct default_member {
  std::vector<double> p;
  vec<double, plain::n> q0, v0;
  default_member() {
    for (const auto& v : plain::params) p.push_back(v.default_value);
    double inputs[plain::n_inputs];
    for (int i = 0; i < plain::n_inputs; ++i) inputs[i] = plain::inputs[i].default_value;
    plain::initial_state(p.data(), inputs, q0, v0);
  }
};

pair_of_runs run_both(const solver_options& opt) {
  const default_member d;
  return {solve_member<plain>(d.p.data(), d.q0, d.v0, 0.0, 2.0, opt, save_times()),
          solve_member<restated>(d.p.data(), d.q0, d.v0, 0.0, 2.0, opt, save_times())};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a == 0.0 && b == 0.0); }

struct configuration {
  method_kind method;
  formulation form;
  projection_kind projection;
  double fixed_h;
};

std::string describe(const configuration& c) {
  return std::string(method_name(c.method)) + "/" + formulation_name(c.form) + "/" + projection_name(c.projection) +
         (c.fixed_h > 0.0 ? "/fixed" : "");
}

solver_options options_of(const configuration& c) {
  solver_options opt;
  opt.method = c.method;
  opt.form = c.form;
  opt.projection = c.projection;
  opt.fixed_h = c.fixed_h;
  // backward Euler at a tolerance where it is practical (docs/METHODS.md, "What rtol means")
  const double tol = c.method == method_kind::euler ? 1e-2 : 1e-7;
  opt.rtol = tol;
  opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  return opt;
}

const configuration configurations[] = {
    {method_kind::bdf, formulation::ggl, projection_kind::none, 0.0},
    {method_kind::bdf, formulation::ggl, projection_kind::post_stabilization, 0.0},
    {method_kind::bdf, formulation::index3, projection_kind::none, 1e-3},
    {method_kind::radau5, formulation::index3, projection_kind::none, 0.0},
    {method_kind::radau5, formulation::index3, projection_kind::coordinate, 0.0},
    {method_kind::radau5, formulation::ggl, projection_kind::none, 0.0},
    {method_kind::radau5, formulation::index1, projection_kind::coordinate, 0.0},
    {method_kind::radau5, formulation::projected_invariants, projection_kind::none, 0.0},
    {method_kind::radau3, formulation::index3, projection_kind::none, 0.0},
    {method_kind::euler, formulation::ggl, projection_kind::none, 0.0},
    {method_kind::rhoinf, formulation::ggl, projection_kind::none, 1e-3},
};

TEST(RedundantConstraints, ARestatedRodIsDroppedAndTheMotionIsBitwiseThatWithoutIt) {
  int compared = 0;
  for (const configuration& c : configurations) {
    const solver_options opt = options_of(c);
    ASSERT_STREQ(check_method_options(opt), "") << describe(c);
    const pair_of_runs r = run_both(opt);
    const std::string what = describe(c);
    ASSERT_EQ(r.plain_run.status, member_status::success) << what;
    ASSERT_EQ(r.restated_run.status, member_status::success) << what;
    // Which rows were dropped, and that the decision held (exactly redundant rows never come back).
    EXPECT_EQ(r.plain_run.counters.dropped_rows, 0) << what;
    EXPECT_EQ(r.restated_run.counters.dropped_rows, 0b010) << what;
    EXPECT_EQ(r.restated_run.counters.rank_changes, 0) << what;
    // The dropped row is monitored: it holds because the rows it depends on do.
    EXPECT_LT(r.restated_run.counters.max_dropped_phi, 1e-6) << what;
    EXPECT_EQ(r.restated_run.counters.steps, r.plain_run.counters.steps) << what;
    EXPECT_EQ(r.restated_run.counters.rejected_steps, r.plain_run.counters.rejected_steps) << what;
    ASSERT_EQ(r.restated_run.y.size(), r.plain_run.y.size()) << what;
    for (std::size_t s = 0; s < r.plain_run.y.size(); ++s) {
      for (int j = 0; j < plain::n; ++j) {
        EXPECT_PRED2(same_bits, r.restated_run.q(s, j), r.plain_run.q(s, j)) << what << " q" << j << " save " << s;
        EXPECT_PRED2(same_bits, r.restated_run.v(s, j), r.plain_run.v(s, j)) << what << " v" << j << " save " << s;
      }
      // Independent-subset multipliers: the kept rows carry the plain pendulum's, the dropped row 0.
      EXPECT_PRED2(same_bits, r.restated_run.lambda(s, 0), r.plain_run.lambda(s, 0)) << what << " save " << s;
      EXPECT_EQ(r.restated_run.lambda(s, 1), 0.0) << what << " save " << s;
      EXPECT_PRED2(same_bits, r.restated_run.lambda(s, 2), r.plain_run.lambda(s, 1)) << what << " save " << s;
    }
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(configurations)));
}

TEST(RedundantConstraints, MinimumNormMultipliersShareTheForceOfTheRestatedRod) {
  // The rod's two rows have gradients (x1, y1) and (x1, y1) / r with r = |p1| = L1 = 1 on the
  // constraint: the force lambda G_1 is shared as a G_1 + b G_1 / r with a + b / r = lambda and a^2 + b^2
  // smallest, a = lambda / (1 + 1 / r^2), b = a / r: on the manifold, half each.
  solver_options opt = options_of({method_kind::radau5, formulation::index3, projection_kind::coordinate, 0.0});
  opt.multipliers = multiplier_convention::minimum_norm;
  const pair_of_runs r = run_both(opt);
  ASSERT_EQ(r.restated_run.status, member_status::success);
  ASSERT_EQ(r.plain_run.status, member_status::success);
  for (std::size_t s = 0; s < r.plain_run.y.size(); ++s) {
    const double lambda = r.plain_run.lambda(s, 0), scale = std::abs(lambda) + 1.0;
    EXPECT_NEAR(r.restated_run.lambda(s, 0), 0.5 * lambda, 1e-9 * scale) << "save " << s;
    EXPECT_NEAR(r.restated_run.lambda(s, 1), 0.5 * lambda, 1e-9 * scale) << "save " << s;
    EXPECT_NEAR(r.restated_run.lambda(s, 2), r.plain_run.lambda(s, 1), 1e-9 * (std::abs(r.plain_run.lambda(s, 1)) + 1.0))
        << "save " << s;
    // Positions do not depend on the convention.
    for (int j = 0; j < plain::n; ++j) EXPECT_PRED2(same_bits, r.restated_run.q(s, j), r.plain_run.q(s, j));
  }
}

TEST(RedundantConstraints, MinimumNormOfAKnownSplit) {
  // Rows b, 2 b and an independent c: the force lambda_0 b is shared by rows 0 and 1 as
  // (lambda_0 / 5, 2 lambda_0 / 5), the smallest (x, y) with x + 2 y = lambda_0; row 2 keeps its own.
  mat<double, 3, 3> B;
  const double b[3] = {0.3, -1.2, 0.7}, c[3] = {1.0, 0.5, 0.25};
  for (int j = 0; j < 3; ++j) {
    B(0, j) = b[j];
    B(1, j) = 2.0 * b[j];
    B(2, j) = c[j];
  }
  vec<double, 3> mu;
  mu[0] = 3.0;
  mu[1] = 0.0;
  mu[2] = -1.5;
  ASSERT_EQ((make_minimum_norm<3, 3>(B, 0b010, mu)), member_status::success);
  EXPECT_NEAR(mu[0], 0.6, 1e-14);
  EXPECT_NEAR(mu[1], 1.2, 1e-14);
  EXPECT_NEAR(mu[2], -1.5, 1e-14);
  // Nothing dropped: nothing changes.
  vec<double, 3> same = mu;
  ASSERT_EQ((make_minimum_norm<3, 3>(B, 0, same)), member_status::success);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(same[i], mu[i]);
}

TEST(RedundantConstraints, WithoutTheDecisionTheRestatedRodIsSingular) {
  // The control: the same initial state, the restated rod's rows kept, is what the solver refuses.
  const default_member d;
  metric_factor<restated> W;
  ASSERT_EQ(factor_metric<restated>(projection_metric::mass, d.q0, d.p.data(), W), member_status::success);
  vec<double, plain::n> q = d.q0;
  EXPECT_EQ(project_positions<restated>(0.0, q, d.p.data(), W, 5), member_status::singular_matrix);
  q = d.q0;
  EXPECT_EQ(project_positions<restated>(0.0, q, d.p.data(), W, 5, 0b010), member_status::success);
}

TEST(RedundantConstraints, LyapunovExponentsAreRefusedWithTheRowsNamed) {
  // The tangent space's dimension 2 (n - m) - k assumes independent rows: both estimates refuse a
  // member whose solver drops one, and say which, instead of returning exponents of a wrong space.
  const default_member d;
  solver_options opt;
  opt.method = method_kind::bdf;
  opt.form = formulation::ggl;
  lyapunov_options lopt;
  lopt.exponents = 1;
  const lyapunov_result<restated> qr = lyapunov_spectrum<restated>(d.p.data(), d.q0, d.v0, 0.0, 2.0, opt, lopt);
  EXPECT_EQ(qr.status, member_status::invalid_input);
  EXPECT_NE(qr.message.find("drops the redundant rows 1 of [G; A]"), std::string::npos) << qr.message;
  const clone_result clone = clone_largest_exponent<restated>(d.p.data(), d.q0, d.v0, 0.0, 2.0, opt, lopt, 1e-8);
  EXPECT_EQ(clone.status, member_status::invalid_input);
  EXPECT_NE(clone.message.find("drops the redundant rows 1 of [G; A]"), std::string::npos) << clone.message;
  // The plain pendulum is not refused.
  EXPECT_EQ(lyapunov_spectrum<plain>(d.p.data(), d.q0, d.v0, 0.0, 2.0, opt, lopt).status, member_status::success);
}

}  // namespace
}  // namespace lockstep
