// The projections of formulation/projection.hpp, alone and after the steps of every method
// (stepper/member.hpp): constraint residuals at round-off after a projection, corrections in the
// metric's minimal-norm direction, post-stabilization's two applications (Ascher & Petzold 1998, section
// 10.2.2), non-holonomic rows, failure statuses, and independence of the save times.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "lockstep/formulation/projection.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"
#include "../model/model_test_support.hpp"

namespace lockstep::test {
namespace {

template <class Model>
void default_start(const double* p, vec<double, Model::n>& q, vec<double, Model::n>& v) {
  Model::initial_state(p, default_inputs<Model>().data(), q, v);
}

template <class Model>
vec<double, Model::n> perturbed(const vec<double, Model::n>& x, double size, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  vec<double, Model::n> y = x;
  for (int i = 0; i < Model::n; ++i) y[i] += size * u(rng);
  return y;
}

template <class Model>
Eigen::MatrixXd to_eigen(const mat<double, Model::m, Model::n>& G) {
  Eigen::MatrixXd E(Model::m, Model::n);
  for (int a = 0; a < Model::m; ++a)
    for (int j = 0; j < Model::n; ++j) E(a, j) = G(a, j);
  return E;
}

// The part of x outside range(B^T), relative to |x|: zero when x = B^T y for some y.
double outside_row_space(const Eigen::MatrixXd& B, const Eigen::VectorXd& x) {
  const Eigen::VectorXd y = (B * B.transpose()).ldlt().solve(B * x);
  return (x - B.transpose() * y).norm() / x.norm();
}

template <class Model>
struct CoordinateProjection : ::testing::Test {};

using HolonomicModels = ::testing::Types<models::pendulum, models::double_pendulum, models::andrews, models::car_axis,
                                         models::slider_crank, models::chain<4>>;
TYPED_TEST_SUITE(CoordinateProjection, HolonomicModels);

// Arrange: a consistent start moved 1e-4 off the constraints, in q and in v. Act: the coordinate
// projection. Assert: Phi and the velocity constraints at round-off, and M dq in range(G^T) (the
// optimality condition of min ||dq||_M subject to Phi = 0), to the first
// order Ascher & Petzold 1998 (10.2.1) promise.
TYPED_TEST(CoordinateProjection, PutsThePointOnTheManifoldAlongTheMassWeightedNormal) {
  using Model = TypeParam;
  using L = state_layout<Model>;
  const auto p = default_params<Model>();
  vec<double, Model::n> q, v;
  default_start<Model>(p.data(), q, v);
  std::mt19937_64 rng(7);
  const double t = 0.1, off = 1e-4;
  const auto q_off = perturbed<Model>(q, off, rng), v_off = perturbed<Model>(v, off, rng);
  state_vector<Model> y;
  for (int i = 0; i < Model::n; ++i) {
    y[L::q + i] = q_off[i];
    y[L::v + i] = v_off[i];
  }
  projection_sizes sizes;
  ASSERT_EQ(project_state<Model>(projection_kind::coordinate, formulation::ggl, projection_metric::mass, t, y, p.data(), sizes),
            member_status::success);
  vec<double, Model::n> qp, vp;
  for (int i = 0; i < Model::n; ++i) {
    qp[i] = y[L::q + i];
    vp[i] = y[L::v + i];
  }
  const double q_scale = 1.0 + norm_inf(qp), v_scale = 1.0 + norm_inf(vp);
  EXPECT_LE(norm_inf(Model::template constraint<double, double>(t, qp, p.data())), 8e-16 * q_scale * q_scale) << Model::name;
  EXPECT_LE(norm_inf(velocity_constraint<Model>(t, qp, vp, p.data())), 1e-14 * q_scale * v_scale) << Model::name;
  EXPECT_GT(sizes.q, 0.0);
  EXPECT_GT(sizes.v, 0.0);

  const auto M = Model::template mass<double, double>(qp, p.data());
  const Eigen::MatrixXd G = to_eigen<Model>(constraint_jacobian<Model>(t, qp, p.data()));
  Eigen::VectorXd Mdq(Model::n);
  const auto Mq = M * (qp - q_off);
  for (int i = 0; i < Model::n; ++i) Mdq(i) = Mq[i];
  // Gauss-Newton's later iterations use G at later iterates: second order in the correction.
  EXPECT_LE(outside_row_space(G, Mdq), 100.0 * sizes.q) << Model::name;
}

// The Euclidean metric corrects along G^T itself, the mass metric along M^-1 G^T: with masses 1 and
// 1e-3 and only the second rod violated (bob 2 moved), the Euclidean correction moves both bobs
// alike while the kinetic-energy one moves almost only the light bob; each is the minimal-norm
// correction of its own metric.
TEST(CoordinateProjection, EachMetricCorrectsAlongItsOwnNormal) {
  using Model = models::double_pendulum;
  using L = state_layout<Model>;
  const double p[5] = {1.0, 1e-3, 1.0, 1.0, 9.81}, in[4] = {0.7, 1.9, 0.3, -0.4};
  vec<double, 4> q, v;
  Model::initial_state(p, in, q, v);
  vec<double, 4> q_off = q;
  q_off[2] += 0.8e-5;  // bob 2 away from bob 1: the second rod is too long
  q_off[3] -= 0.6e-5;
  double bob1_share[2];
  for (projection_metric metric : {projection_metric::mass, projection_metric::euclidean}) {
    state_vector<Model> y;
    for (int i = 0; i < 4; ++i) {
      y[L::q + i] = q_off[i];
      y[L::v + i] = v[i];
    }
    projection_sizes sizes;
    ASSERT_EQ(project_state<Model>(projection_kind::coordinate, formulation::index1, metric, 0.0, y, p, sizes),
              member_status::success);
    vec<double, 4> qp;
    for (int i = 0; i < 4; ++i) qp[i] = y[L::q + i];
    const auto W = metric == projection_metric::mass ? Model::mass<double, double>(qp, p) : mat<double, 4, 4>::identity();
    const auto Wdq = W * (qp - q_off);
    Eigen::VectorXd x(4);
    for (int i = 0; i < 4; ++i) x(i) = Wdq[i];
    EXPECT_LE(outside_row_space(to_eigen<Model>(constraint_jacobian<Model>(0.0, qp, p)), x), 100.0 * sizes.q)
        << (metric == projection_metric::mass ? "mass" : "euclidean");
    const auto dq = qp - q_off;
    bob1_share[static_cast<int>(metric)] = std::hypot(dq[0], dq[1]) / std::hypot(std::hypot(dq[0], dq[1]), std::hypot(dq[2], dq[3]));
  }
  EXPECT_LT(bob1_share[static_cast<int>(projection_metric::mass)], 0.01);
  EXPECT_GT(bob1_share[static_cast<int>(projection_metric::euclidean)], 0.3);
}

// Non-holonomic rows join the velocity projection: the knife edge's A v + a = 0 at round-off, with the
// correction M dv in range(A^T) exactly (the problem is linear).
TEST(VelocityProjection, SatisfiesTheKnifeEdgeNonholonomicConstraint) {
  using Model = models::knife_edge;
  const auto p = default_params<Model>();
  const vec<double, 3> q{{0.1, -0.2, 0.8}};
  const vec<double, 3> v0{{1.0, 0.5, 2.0}};  // moves sideways: A v0 != 0
  metric_factor<Model> W;
  ASSERT_EQ(factor_metric<Model>(projection_metric::mass, q, p.data(), W), member_status::success);
  vec<double, 3> v = v0;
  ASSERT_EQ(project_velocities<Model>(0.0, q, v, p.data(), W), member_status::success);
  EXPECT_GT(std::abs(Model::nonholonomic<double, double>(0.0, q, v0, p.data())[0]), 0.1);
  EXPECT_LE(std::abs(Model::nonholonomic<double, double>(0.0, q, v, p.data())[0]), 1e-15);
  const auto Mdv = Model::mass<double, double>(q, p.data()) * (v - v0);
  const auto A = nonholonomic_linearize<Model>(0.0, q, p.data()).A;
  Eigen::MatrixXd B(1, 3);
  Eigen::VectorXd x(3);
  for (int j = 0; j < 3; ++j) {
    B(0, j) = A(0, j);
    x(j) = Mdv[j];
  }
  EXPECT_LE(outside_row_space(B, x), 1e-14);
  EXPECT_EQ(v[2], v0[2]);  // theta' is not constrained: untouched
}

// Ascher & Petzold 1998, 10.2.2: H F = [I 0; L I], so one application leaves O(delta) in the velocity
// invariant (through L) and O(delta^2) in Phi; the second application, with F kept, removes the rest
// to O(delta^2) or better (measured on slider_crank at delta = 1e-4, 1e-5: Phi 7.8e-5, 7.8e-6 before,
// 9.6e-9, 9.6e-11 after one application, 6e-16, 4e-22 after two; the velocity invariant 6.0e-4,
// 6.0e-5 before, 7.0e-3, 7.0e-4 after one (L is large at 150 rad/s), 6.8e-10, 6.8e-13 after two).
TEST(PostStabilization, SecondApplicationRemovesWhatTheFirstLeavesInTheVelocityInvariant) {
  using Model = models::slider_crank;
  const auto p = default_params<Model>();
  vec<double, Model::n> q, v;
  default_start<Model>(p.data(), q, v);
  std::mt19937_64 rng(3);
  const double delta = 1e-5;
  const auto q_off = perturbed<Model>(q, delta, rng);
  const auto v_off = perturbed<Model>(v, delta, rng);
  double phi[3], w[3];
  for (int applications = 0; applications <= 2; ++applications) {
    vec<double, Model::n> qq = q_off, vv = v_off;
    if (applications > 0) {
      ASSERT_EQ(post_stabilize<Model>(0.0, qq, vv, p.data(), projection_metric::mass, applications), member_status::success);
    }
    phi[applications] = norm_inf(Model::constraint<double, double>(0.0, qq, p.data()));
    w[applications] = norm_inf(velocity_constraint<Model>(0.0, qq, vv, p.data()));
  }
  EXPECT_GT(phi[0], 1e-6);
  EXPECT_LE(phi[1], 10.0 * delta * delta);
  EXPECT_GT(w[1], 10.0 * delta);          // the L block leaves a first-order velocity residual
  EXPECT_LE(w[2], 100.0 * delta * delta);  // ... which the second application removes
  EXPECT_LE(phi[2], phi[1]);
}

// ---- statuses ----------------------------------------------------------------------------------------

// The double pendulum with both bobs at the pivot has G = 0: the Gram matrix is singular. The
// projection reports it and leaves the point alone; it never crashes.
TEST(ProjectionStatus, SingularGramMatrixGivesProjectionFailedAndLeavesThePoint) {
  using Model = models::double_pendulum;
  using L = state_layout<Model>;
  const auto p = default_params<Model>();
  state_vector<Model> y;
  for (int i = 0; i < 4; ++i) y[L::v + i] = 0.3 * i;
  const state_vector<Model> before = y;
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization}) {
    projection_sizes sizes;
    EXPECT_EQ(project_state<Model>(kind, formulation::index1, projection_metric::mass, 0.0, y, p.data(), sizes),
              member_status::projection_failed)
        << projection_name(kind);
    for (int j = 0; j < L::size; ++j) EXPECT_EQ(y[j], before[j]);
  }
}

TEST(ProjectionStatus, NonFiniteStateGivesModelNotFinite) {
  using Model = models::pendulum;
  using L = state_layout<Model>;
  const auto p = default_params<Model>();
  state_vector<Model> y;
  y[L::q] = std::numeric_limits<double>::quiet_NaN();
  y[L::q + 1] = -1.0;
  projection_sizes sizes;
  EXPECT_EQ(project_state<Model>(projection_kind::coordinate, formulation::index1, projection_metric::mass, 0.0, y,
                                 p.data(), sizes),
            member_status::model_not_finite);
}

// Gauss-Newton from far away within too few iterations: a status, not an unconverged point.
TEST(ProjectionStatus, UnconvergedGaussNewtonGivesProjectionFailed) {
  using Model = models::pendulum;
  const auto p = default_params<Model>();
  vec<double, 2> q{{3.0, 1.0}};
  metric_factor<Model> W;
  ASSERT_EQ(factor_metric<Model>(projection_metric::mass, q, p.data(), W), member_status::success);
  EXPECT_EQ(project_positions<Model>(0.0, q, p.data(), W, 2), member_status::projection_failed);
}

// A member whose projection fails after a step ends with that status (and the others are unaffected:
// each member has its own state).
TEST(ProjectionStatus, MemberEndsWithProjectionFailedWhenItsProjectionFails) {
  using Model = models::double_pendulum;
  using Method = bdf_method;
  const auto p = default_params<Model>();
  vec<double, 4> q, v;
  default_start<Model>(p.data(), q, v);
  solver_options opt;
  opt.form = formulation::index1;
  opt.projection = projection_kind::coordinate;
  member_state<Model, Method> ms;
  auto sink = [](int, double, const state_vector<Model>&) {};
  member_begin<Model>(ms, 0.0, 1.0, q, v, p.data(), opt, nullptr, 0, sink);
  ASSERT_EQ(ms.status, member_status::running);
  Method::replace_current(ms.method, state_vector<Model>{});  // both bobs at the pivot: G = 0
  EXPECT_FALSE(detail::project_accepted_point<Model>(ms, p.data(), opt));
  EXPECT_EQ(ms.status, member_status::projection_failed);
}

// ---- after the steps of every method -------------------------------------------------------------------

struct projected_run {
  formulation form;
  method_kind method;
  projection_kind projection;
};

// Any formulation, any method: after the projection every accepted point and every saved point
// satisfies the constraints at round-off, the counters say how much was corrected, and the final point
// does not depend on the save times (projecting an output never touches the trajectory).
TEST(ProjectionAfterSteps, KeepsEveryMethodOnTheManifoldAndIgnoresSaveTimes) {
  using Model = models::double_pendulum;
  using L = state_layout<Model>;
  const auto p = default_params<Model>();
  const double in[4] = {1.2, 2.0, 0.0, 0.0};
  vec<double, 4> q, v;
  Model::initial_state(p.data(), in, q, v);
  const projected_run runs[] = {{formulation::ggl, method_kind::bdf, projection_kind::coordinate},
                                {formulation::ggl, method_kind::bdf, projection_kind::post_stabilization},
                                {formulation::index3, method_kind::radau5, projection_kind::coordinate},
                                {formulation::index1, method_kind::radau5, projection_kind::post_stabilization},
                                {formulation::index1, method_kind::bdf, projection_kind::coordinate}};
  std::vector<double> many_saves, few_saves = {3.0};
  for (int i = 1; i <= 60; ++i) many_saves.push_back(0.05 * i);
  for (const projected_run& run : runs) {
    solver_options opt;
    opt.form = run.form;
    opt.method = run.method;
    opt.projection = run.projection;
    opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-6;
    const auto r = solve_member<Model>(p.data(), q, v, 0.0, 3.0, opt, many_saves);
    const std::string what = std::string(formulation_name(run.form)) + " " + method_name(run.method) + " " +
                             projection_name(run.projection);
    ASSERT_EQ(r.status, member_status::success) << what;
    EXPECT_LE(r.counters.max_phi, 1e-15) << what;
    EXPECT_LE(r.counters.max_velocity_residual, 1e-13) << what;
    EXPECT_EQ(r.counters.projections, r.counters.steps) << what;
    EXPECT_GT(r.counters.max_projection_q, 0.0) << what;
    EXPECT_GT(r.counters.max_projection_v, 0.0) << what;
    for (std::size_t i = 0; i < r.t.size(); ++i) {
      vec<double, 4> qs;
      for (int j = 0; j < 4; ++j) qs[j] = r.y[i][L::q + j];
      EXPECT_LE(norm_inf(Model::constraint<double, double>(r.t[i], qs, p.data())), 1e-15) << what << " t = " << r.t[i];
    }
    const auto few = solve_member<Model>(p.data(), q, v, 0.0, 3.0, opt, few_saves);
    for (int j = 0; j < L::size; ++j) EXPECT_EQ(few.y_final[j], r.y_final[j]) << what;
    EXPECT_EQ(few.counters.steps, r.counters.steps) << what;
    EXPECT_EQ(few.counters.max_projection_q, r.counters.max_projection_q) << what;
  }
}

// Without projection nothing is projected and the counters say so.
TEST(ProjectionAfterSteps, NoneLeavesCountersAtZero) {
  using Model = models::pendulum;
  const auto p = default_params<Model>();
  vec<double, 2> q, v;
  default_start<Model>(p.data(), q, v);
  const auto r = solve_member<Model>(p.data(), q, v, 0.0, 1.0, solver_options{}, {});
  ASSERT_EQ(r.status, member_status::success);
  EXPECT_EQ(r.counters.projections, 0);
  EXPECT_EQ(r.counters.max_projection_q, 0.0);
  EXPECT_EQ(r.counters.max_projection_v, 0.0);
}

}  // namespace
}  // namespace lockstep::test
