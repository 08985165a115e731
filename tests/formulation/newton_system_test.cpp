// The reduced, scaled saddle-point Newton system of formulation/euler_lagrange.hpp must give the same
// increment as Newton on the full first-order system y = (q, v, lambda, mu, nu), whose Jacobian we form
// here independently by central differences of the residual and solve with Eigen.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/model/registry.hpp"

namespace {

using namespace lockstep;

template <class Model>
struct NewtonSystem : ::testing::Test {};

using Models = ::testing::Types<models::pendulum, models::double_pendulum, models::andrews, models::car_axis,
                                models::knife_edge, models::slider_crank, models::chain<4>>;
TYPED_TEST_SUITE(NewtonSystem, Models);

template <class Model>
void check_reduced_increment_equals_full_increment(formulation form, double c, baumgarte_gains gains = {}) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, ny = L::size;
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int i = 0; i < Model::n_inputs; ++i) inputs[i] = Model::inputs[i].default_value;
  vec<double, n> q0, v0;
  Model::initial_state(p, inputs, q0, v0);

  for (int trial = 0; trial < 3; ++trial) {
    const double t = 0.1 * trial;
    // A point near the start, off the constraints, with mu = 0 (the only term the reduced matrix drops
    // is d(G^T mu)/dq, which then vanishes) and random multipliers and predictor data.
    state_vector<Model> y, y_pred, yp_pred;
    for (int i = 0; i < n; ++i) {
      y[L::q + i] = q0[i] + 1e-2 * u(rng);
      y[L::v + i] = v0[i] + 1e-1 * u(rng);
    }
    for (int a = 0; a < Model::m; ++a) y[L::lambda + a] = u(rng);
    for (int a = 0; a < Model::k; ++a) y[L::nu + a] = u(rng);
    for (int j = 0; j < ny; ++j) {
      y_pred[j] = y[j] + 1e-3 * u(rng);
      yp_pred[j] = u(rng);
    }
    if (!uses_mu(form))
      for (int a = 0; a < Model::m; ++a) y[L::mu + a] = 0.0;

    // F(y) with q' = qp_pred + c (q - q_pred), v' likewise, flattened in the order of y (mu rows hold
    // F_psi for ggl and projected invariants; for index3 and index1 the mu rows are the identity, i.e.
    // F = mu).
    auto residual = [&](const state_vector<Model>& yy) {
      vec<double, n> qdot, vdot;
      for (int i = 0; i < n; ++i) {
        qdot[i] = yp_pred[L::q + i] + c * (yy[L::q + i] - y_pred[L::q + i]);
        vdot[i] = yp_pred[L::v + i] + c * (yy[L::v + i] - y_pred[L::v + i]);
      }
      const auto r = evaluate_residual<Model>(form, t, yy, qdot, vdot, p, gains);
      Eigen::VectorXd F(ny);
      for (int i = 0; i < n; ++i) {
        F(L::q + i) = r.Fq[i];
        F(L::v + i) = r.Fv[i];
      }
      for (int a = 0; a < Model::m; ++a) {
        F(L::lambda + a) = r.Fphi[a];
        F(L::mu + a) = uses_mu(form) ? r.Fpsi[a] : yy[L::mu + a];
      }
      for (int a = 0; a < Model::k; ++a) F(L::nu + a) = r.Fa[a];
      return F;
    };
    Eigen::MatrixXd Jfull(ny, ny);
    for (int j = 0; j < ny; ++j) {
      const double step = 1e-6 * (1.0 + std::abs(y[j]));
      state_vector<Model> yp = y, ym = y;
      yp[j] += step;
      ym[j] -= step;
      Jfull.col(j) = (residual(yp) - residual(ym)) / (2.0 * step);
    }
    const Eigen::VectorXd F = residual(y);
    const Eigen::VectorXd full_step = Jfull.partialPivLu().solve(-F);

    vec<double, n> vdot;
    for (int i = 0; i < n; ++i) vdot[i] = yp_pred[L::v + i] + c * (y[L::v + i] - y_pred[L::v + i]);
    jacobian_blocks<Model> J;
    ASSERT_EQ(evaluate_jacobian<Model>(form, t, y, vdot, p, J, gains), member_status::success);
    newton_matrix<Model, double> N;
    ASSERT_EQ((factor_newton_matrix<Model, double>(form, J, c, N)), member_status::success);
    vec<double, n> qdot;
    for (int i = 0; i < n; ++i) {
      qdot[i] = yp_pred[L::q + i] + c * (y[L::q + i] - y_pred[L::q + i]);
    }
    const auto r = evaluate_residual<Model>(form, t, y, qdot, vdot, p, gains);
    vec<double, n> dq, dv;
    vec<double, Model::m> dl, dm;
    vec<double, Model::k> dn;
    solve_newton<Model, double>(form, J, N, r.Fq, r.Fv, r.Fphi, r.Fpsi, r.Fa, dq, dv, dl, dm, dn);
    Eigen::VectorXd reduced(ny);
    for (int i = 0; i < n; ++i) {
      reduced(L::q + i) = dq[i];
      reduced(L::v + i) = dv[i];
    }
    for (int a = 0; a < Model::m; ++a) {
      reduced(L::lambda + a) = dl[a];
      reduced(L::mu + a) = dm[a];
    }
    for (int a = 0; a < Model::k; ++a) reduced(L::nu + a) = dn[a];

    // solve_newton_columns (several residuals, one pass over the factors): each column bitwise what
    // solve_newton gives for that residual alone.
    residual_parts<Model> several[3] = {r, r, r};
    for (int i = 0; i < n; ++i) {
      several[1].Fq[i] = several[1].Fq[i] * -0.5 + 1e-3 * u(rng);
      several[2].Fv[i] += u(rng);
    }
    for (int a = 0; a < Model::m; ++a) several[2].Fphi[a] += u(rng);
    state_vector<Model> columns[3];
    solve_newton_columns<Model, 3>(form, J, N, several, 3, columns);
    for (int col = 0; col < 3; ++col) {
      const residual_parts<Model>& rc = several[col];
      vec<double, n> cq, cv;
      vec<double, Model::m> cl, cm;
      vec<double, Model::k> cn;
      solve_newton<Model, double>(form, J, N, rc.Fq, rc.Fv, rc.Fphi, rc.Fpsi, rc.Fa, cq, cv, cl, cm, cn);
      bool same = true;
      for (int i = 0; i < n; ++i) same = same && columns[col][L::q + i] == cq[i] && columns[col][L::v + i] == cv[i];
      for (int a = 0; a < Model::m; ++a)
        same = same && columns[col][L::lambda + a] == cl[a] && columns[col][L::mu + a] == cm[a];
      for (int a = 0; a < Model::k; ++a) same = same && columns[col][L::nu + a] == cn[a];
      EXPECT_TRUE(same) << Model::name << ", column " << col << " of solve_newton_columns, c = " << c;
    }

    // Group-wise relative agreement; the finite-difference Jacobian limits it to about 1e-7.
    auto group_error = [&](int begin, int end) {
      if (end == begin) return 0.0;
      const double scale = std::max(full_step.segment(begin, end - begin).lpNorm<Eigen::Infinity>(), 1e-12);
      return (reduced - full_step).segment(begin, end - begin).lpNorm<Eigen::Infinity>() / scale;
    };
    EXPECT_LT(group_error(L::q, L::v), 1e-5) << Model::name << " q, c = " << c;
    EXPECT_LT(group_error(L::v, L::lambda), 1e-5) << Model::name << " v, c = " << c;
    EXPECT_LT(group_error(L::lambda, L::mu), 1e-5) << Model::name << " lambda, c = " << c;
    if (uses_mu(form)) {
      EXPECT_LT(group_error(L::mu, L::nu), 1e-5) << Model::name << " mu, c = " << c;
    }
    EXPECT_LT(group_error(L::nu, ny), 1e-5) << Model::name << " nu, c = " << c;
  }
}

TYPED_TEST(NewtonSystem, ReducedGglIncrementEqualsFullSystemIncrement) {
  for (double c : {10.0, 1e3}) check_reduced_increment_equals_full_increment<TypeParam>(formulation::ggl, c);
}

TYPED_TEST(NewtonSystem, ReducedIndex3IncrementEqualsFullSystemIncrement) {
  for (double c : {10.0, 1e3}) check_reduced_increment_equals_full_increment<TypeParam>(formulation::index3, c);
}

TYPED_TEST(NewtonSystem, ReducedIndex1IncrementEqualsFullSystemIncrement) {
  for (double c : {10.0, 1e3}) check_reduced_increment_equals_full_increment<TypeParam>(formulation::index1, c);
}

// Baumgarte's gains enter the acceleration rows through Phi' and Phi, i.e. through dF/dq and dF/dv.
TYPED_TEST(NewtonSystem, ReducedIndex1IncrementWithBaumgarteGainsEqualsFullSystemIncrement) {
  for (double c : {10.0, 1e3})
    check_reduced_increment_equals_full_increment<TypeParam>(formulation::index1, c, baumgarte_gains{3.0, 5.0});
}

TYPED_TEST(NewtonSystem, ReducedProjectedInvariantsIncrementEqualsFullSystemIncrement) {
  for (double c : {10.0, 1e3})
    check_reduced_increment_equals_full_increment<TypeParam>(formulation::projected_invariants, c);
}

// The point of the scaling (Ascher & Petzold 1998, ch. 10, "Ill-conditioned Newton iteration matrix"): the reduced
// matrix's condition number stays bounded as h -> 0 instead of growing like h^-3. The acceleration-level
// formulations' matrices tend to nonsingular limits too (with Baumgarte's gains in the rows).
TEST(NewtonSystem, ScaledMatrixConditionStaysBoundedAsStepShrinks) {
  using Model = models::pendulum;
  using L = state_layout<Model>;
  double p[3] = {1.0, 1.0, 9.81}, in[2] = {1.0, 0.5};
  vec<double, 2> q, v;
  Model::initial_state(p, in, q, v);
  state_vector<Model> y;
  for (int i = 0; i < 2; ++i) {
    y[L::q + i] = q[i];
    y[L::v + i] = v[i];
  }
  y[L::lambda] = 5.0;
  for (formulation form : {formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    jacobian_blocks<Model> J;
    ASSERT_EQ(evaluate_jacobian<Model>(form, 0.0, y, vec<double, 2>{{0.3, -0.2}}, p, J, {2.0, 3.0}), member_status::success);
    double condition_at_small_c = 0.0;
    for (double c : {1e1, 1e4, 1e8}) {
      newton_matrix<Model, double> N;
      ASSERT_EQ((factor_newton_matrix<Model, double>(form, J, c, N)), member_status::success);
      // Rebuild the unfactored matrix by solving for the identity's columns: cond = ||A|| ||A^-1||.
      Eigen::MatrixXd inverse(N.size, N.size);
      for (int col = 0; col < N.size; ++col) {
        vec<double, N.size> e{};
        e[col] = 1.0;
        lu_solve(N.lu, N.pivot, e);
        for (int row = 0; row < N.size; ++row) inverse(row, col) = e[row];
      }
      const double condition = inverse.inverse().norm() * inverse.norm();
      if (c == 1e1) condition_at_small_c = condition;
      EXPECT_LT(condition, 100.0 * condition_at_small_c) << formulation_name(form) << " c = " << c;
    }
  }
}

}  // namespace
