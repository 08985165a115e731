// Each model's initial_state maps its named initial inputs to a consistent (q0, v0): Phi = 0 and
// G v + Phi_t = 0 (and A v + a = 0 where k > 0) to round-off, for the defaults and for other valid
// inputs and parameters (`lockstep describe MODEL`). andrews and car_axis have no inputs:
// their published start is checked, together with the published accelerations and multipliers.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <random>

#include "lockstep/model/derivatives.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

constexpr double position_tolerance = 1e-13;  // max |Phi|
constexpr double velocity_tolerance = 1e-12;  // max |G v + Phi_t|, max |A v + a|

template <class Model>
::testing::AssertionResult is_consistent(const std::vector<double>& p, const std::vector<double>& in) {
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), in.data(), q0, v0);
  const double t0 = 0.0;
  const auto phi = Model::template constraint<double, double>(t0, q0, p.data());
  const auto velocity = velocity_constraint<Model>(t0, q0, v0, p.data());
  double nonholonomic = 0.0;
  if constexpr (Model::k > 0)
    nonholonomic = norm_inf(Model::template nonholonomic<double, double>(t0, q0, v0, p.data()));
  for (int i = 0; i < Model::n; ++i)
    if (!std::isfinite(q0[i]) || !std::isfinite(v0[i]))
      return ::testing::AssertionFailure() << "q0 or v0 not finite at " << i;
  if (norm_inf(phi) <= position_tolerance && norm_inf(velocity) <= velocity_tolerance &&
      nonholonomic <= velocity_tolerance)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |Phi| = " << norm_inf(phi)
                                       << ", max |G v + Phi_t| = " << norm_inf(velocity)
                                       << ", max |A v + a| = " << nonholonomic;
}

template <class Model>
class InitialState : public ::testing::Test {};
TYPED_TEST_SUITE(InitialState, all_models, model_names);

template <class Model>
class InitialInputs : public ::testing::Test {};
TYPED_TEST_SUITE(InitialInputs, models_with_inputs, model_names);

TYPED_TEST(InitialState, DefaultInputsGiveAConsistentState) {
  using Model = TypeParam;
  EXPECT_TRUE(is_consistent<Model>(default_params<Model>(), default_inputs<Model>()));
}

// Other valid inputs: each default moved by up to 1 (angles, speeds, positions), unset chain link
// angles (NaN) set to a random angle half of the time, and parameters moved by up to 10 %.
TYPED_TEST(InitialInputs, OtherValidInputsAndParametersGiveConsistentStates) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < 8; ++r) {
    std::vector<double> in = default_inputs<Model>();
    for (double& x : in) {
      if (std::isnan(x)) {
        if (uniform(rng, 0.0, 1.0) < 0.5) x = uniform(rng, -3.0, 3.0);
      } else {
        x += uniform(rng, -1.0, 1.0);
      }
    }
    std::vector<double> p = default_params<Model>();
    if (r % 2 == 1)
      for (double& x : p) x *= 1.0 + uniform(rng, -0.1, 0.1);
    EXPECT_TRUE(is_consistent<Model>(p, in)) << "draw " << r;
  }
}

// The chain's inputs: theta_i overrides theta0 for link i only; an unset (NaN) theta_i follows theta0.
TEST(Chain, UnsetLinkAnglesFollowTheta0AndOverridesMoveOnlyTheirLink) {
  using Model = models::chain<4>;
  const std::vector<double> p = default_params<Model>();
  std::vector<double> in = default_inputs<Model>();
  for (int i = 1; i <= 4; ++i) EXPECT_TRUE(std::isnan(in[i])) << "theta_" << i << " defaults to unset";
  in[0] = 0.7;
  in[3] = -1.2;  // theta_3
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), in.data(), q0, v0);

  const double angles[4] = {0.7, 0.7, -1.2, 0.7};
  double x = 0.0, y = 0.0;
  for (int i = 0; i < 4; ++i) {
    x += std::sin(angles[i]);
    y -= std::cos(angles[i]);
    EXPECT_NEAR(q0[2 * i], x, 1e-15) << "x of mass " << i + 1;
    EXPECT_NEAR(q0[2 * i + 1], y, 1e-15) << "y of mass " << i + 1;
    EXPECT_EQ(v0[2 * i], 0.0);
    EXPECT_EQ(v0[2 * i + 1], 0.0);
  }
}

// ---- the published starts: q''(0) and lambda(0) from the saddle-point system ----------------------
//
//     [ M  G^T ] [ q'' ]   [ Q      ]
//     [ G  0   ] [ lam ] = [ -gamma ]
//
// solved densely with Eigen, an independent check of M, Q, G and gamma against the published values:
// F. Mazzia and C. Magherini, "Test Set for Initial Value Problem Solvers", release 2.4, 2008
// (docs/BIBLIOGRAPHY.md, "IVP Test Set"), the consistent initial values of each problem's routine
// INIT.

template <class Model>
Eigen::VectorXd accelerations_and_multipliers() {
  constexpr int n = Model::n, m = Model::m;
  const std::vector<double> p = default_params<Model>();
  const std::vector<double> in = default_inputs<Model>();
  vec<double, n> q0, v0;
  Model::initial_state(p.data(), in.data(), q0, v0);
  const double t0 = 0.0;
  const auto M = Model::template mass<double, double>(q0, p.data());
  const auto Q = Model::template force<double, double>(t0, q0, v0, p.data());
  const auto G = constraint_jacobian<Model>(t0, q0, p.data());
  const auto gamma = constraint_gamma<Model>(t0, q0, v0, p.data());
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n + m, n + m);
  Eigen::VectorXd rhs(n + m);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) K(i, j) = M(i, j);
    rhs[i] = Q[i];
  }
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      K(n + i, j) = G(i, j);
      K(j, n + i) = G(i, j);
    }
    rhs[n + i] = -gamma[i];
  }
  return K.fullPivLu().solve(rhs);
}

TEST(PublishedStart, AndrewsAccelerationsAndMultipliersMatchTheTestSet) {
  const Eigen::VectorXd x = accelerations_and_multipliers<models::andrews>();
  // andrews.f, subroutine INIT: y(15..21) = w(0) = q''(0) and y(22..27) = lambda(0); Hairer & Wanner
  // 1996, VII.7, give the same start.
  const double qdd[7] = {14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0};
  const double lambda[6] = {98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0};
  // Relative to the largest entry of each block: the published zeros come out at round-off of the
  // solve (~1e-12 here), whose condition reflects the 1e5 spread of the problem's scales.
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(x[i], qdd[i], 1e-12 * 14222.4439) << "q''_" << i + 1;
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(x[7 + i], lambda[i], 1e-12 * 98.5668704) << "lambda_" << i + 1;
}

TEST(PublishedStart, CarAxisAccelerationsAndMultipliersMatchTheTestSet) {
  const Eigen::VectorXd x = accelerations_and_multipliers<models::car_axis>();
  // caraxis.f, subroutine INIT: yprime(5..8) = q''(0) = (0, -1, 0, -1) and y(9..10) = lambda(0) = 0 (at
  // the start both springs have their rest length L0, so gravity, g = 1, alone accelerates the wheels).
  const double qdd[4] = {0.0, -1.0, 0.0, -1.0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(x[i], qdd[i], 1e-12) << "q''_" << i + 1;
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(x[4 + i], 0.0, 1e-12) << "lambda_" << i + 1;
}

}  // namespace
}  // namespace lockstep::test
