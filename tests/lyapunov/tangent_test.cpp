// tests/lyapunov/tangent_test.cpp — forward sensitivities (lyapunov/tangent.hpp, sensitivity.hpp):
// the tangents stay in the tangent space of the constraint manifold, and they are the derivatives of
// the member's solution (against central finite differences of two member solves), for directions in
// the initial state and for parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/lyapunov/sensitivity.hpp"
#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/model/linear_oscillator.hpp"
#include "lyapunov_test_support.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace lockstep::test {
namespace {

// Fixed steps: both finite-difference solves take exactly the member's steps, so they differentiate the
// same discrete map as the tangents; rtol only sets the Newton tolerance (tight: 1e-13 absolute).
// With fixed steps rtol is only the Newton tolerance (method/tolerance_calibration.hpp): 2e-13, near the
// round-off floor of adaptive runs.
solver_options fixed_steps(double h, int order) {
  solver_options opt = bdf_ggl(2e-13);
  opt.fixed_h = h;
  opt.fixed_order = order;
  return opt;
}

// max over the (q, v) parts of |a - b| / max(1, |b|_inf over those parts).
template <class Model>
double relative_phase_difference(const state_vector<Model>& a, const state_vector<Model>& b) {
  using L = state_layout<Model>;
  double scale = 1.0, diff = 0.0;
  for (int j = L::q; j < L::lambda; ++j) {
    scale = std::max(scale, std::abs(b[j]));
    diff = std::max(diff, std::abs(a[j] - b[j]));
  }
  return diff / scale;
}

// Central differences of the member's point at t1 along a phase direction and/or a parameter.
template <class Model>
state_vector<Model> finite_difference(std::vector<double> p, const vec<double, Model::n>& q0,
                                      const vec<double, Model::n>& v0, double t1, const solver_options& opt,
                                      const phase_vector<Model>* direction, int parameter, double eps) {
  state_vector<Model> out;
  state_vector<Model> ends[2];
  for (int side = 0; side < 2; ++side) {
    const double e = side == 0 ? eps : -eps;
    std::vector<double> ps = p;
    vec<double, Model::n> q = q0, v = v0;
    if (direction)
      for (int i = 0; i < Model::n; ++i) {
        q[i] += e * (*direction)[i];
        v[i] += e * (*direction)[Model::n + i];
      }
    if (parameter >= 0) ps[parameter] += e;
    solver_options o = opt;
    o.consistent_multipliers = false;  // the method's own point, as the sensitivities
    const auto r = solve_member<Model>(ps.data(), q, v, 0.0, t1, o, {});
    EXPECT_EQ(r.status, member_status::success);
    ends[side] = r.y_final;
  }
  for (int j = 0; j < state_layout<Model>::size; ++j) out[j] = (ends[0][j] - ends[1][j]) / (2.0 * eps);
  return out;
}

// ---- the tangent space --------------------------------------------------------------------------------

TEST(TangentSpaceBasis, IsOrthonormalInTheMassMetricAndSatisfiesTheLinearizedConstraints) {
  using Model = models::double_pendulum;
  const std::vector<double> p = default_params<Model>();
  vec<double, Model::n> q0, v0;
  const double in[4] = {2.0, 2.5, 0.7, -1.3};
  Model::initial_state(p.data(), in, q0, v0);
  constexpr int d = manifold_dimension<Model>();
  static_assert(d == 4);
  phase_vector<Model> basis[d];
  ASSERT_EQ(tangent_space_basis<Model>(0.0, q0, v0, p.data(), tangent_metric::mass, basis), member_status::success);
  const auto M = Model::mass<double, double>(q0, p.data());
  for (int a = 0; a < d; ++a) {
    vec<double, Model::n> dq, dv;
    for (int i = 0; i < Model::n; ++i) {
      dq[i] = basis[a][i];
      dv[i] = basis[a][Model::n + i];
    }
    EXPECT_LT(linearized_constraints<Model>(0.0, q0, v0, dq, dv, p.data()).max_abs(), 1e-14);
    for (int b = 0; b < d; ++b) {
      double ip = 0.0;
      for (int i = 0; i < Model::n; ++i)
        for (int j = 0; j < Model::n; ++j)
          ip += M(i, j) * (basis[a][i] * basis[b][j] + basis[a][Model::n + i] * basis[b][Model::n + j]);
      EXPECT_NEAR(ip, a == b ? 1.0 : 0.0, 1e-14);
    }
  }
}

// The tangent basis of the double pendulum's default start, and the largest relative difference between
// the tangents along it and central differences of two member solves at t1 (printed per direction).
struct pendulum_directions {
  using Model = models::double_pendulum;
  static constexpr int d = manifold_dimension<Model>();
  start_point<Model> member;
  std::vector<phase_vector<Model>> basis;

  pendulum_directions() : basis(d) {
    EXPECT_EQ(tangent_space_basis<Model>(0.0, member.q0, member.v0, member.p.data(), tangent_metric::mass,
                                         basis.data()),
              member_status::success);
  }

  // eps: the central differences' step along each direction.
  double worst_difference_from_finite_differences(const solver_options& opt, double t1, const char* label,
                                                  double eps = 1e-5) const {
    const auto r = solve_member_with_sensitivities<Model>(member.p.data(), member.q0, member.v0, 0.0, t1, opt, basis, {});
    EXPECT_EQ(r.status, member_status::success) << r.message;
    double worst = 0.0;
    for (int c = 0; c < d && r.status == member_status::success; ++c) {
      const auto fd = finite_difference<Model>(member.p, member.q0, member.v0, t1, opt, &basis[c], -1, eps);
      const double e = relative_phase_difference<Model>(r.sensitivities[c], fd);
      std::printf("[ measured ] %s, direction %d: |tangent - FD| / |FD| = %.3g\n", label, c, e);
      worst = std::max(worst, e);
    }
    return worst;
  }
};

// ---- the tangents stay on the tangent space ---------------------------------------------------------------

TEST(Tangents, SatisfyTheLinearizedConstraintsAtEveryStepToRounding) {
  using Model = models::double_pendulum;
  const pendulum_directions dirs;
  const auto& [p, q0, v0] = dirs.member;
  const std::vector<phase_vector<Model>>& directions = dirs.basis;
  // g enters only the force: its sensitivity satisfies the homogeneous linearized constraints. L1 enters
  // Phi1 = (x1^2 + y1^2 - L1^2) / 2: its sensitivity satisfies G s_q = (L1, 0), Psi_q s_q + G s_v = 0.
  const int g = 4, L1 = 2;
  double worst = 0.0, worst_L1 = 0.0, largest = 0.0;
  long steps = 0;
  auto check = [&](double t, const state_vector<Model>& y, const state_vector<Model>* s, int count) {
    using L = state_layout<Model>;
    vec<double, Model::n> q, v;
    for (int i = 0; i < Model::n; ++i) {
      q[i] = y[L::q + i];
      v[i] = y[L::v + i];
    }
    for (int c = 0; c < count; ++c) {
      vec<double, Model::n> dq, dv;
      double size = 0.0;
      for (int i = 0; i < Model::n; ++i) {
        dq[i] = s[c][L::q + i];
        dv[i] = s[c][L::v + i];
        size = std::max({size, std::abs(dq[i]), std::abs(dv[i])});
      }
      largest = std::max(largest, size);
      auto r = linearized_constraints<Model>(t, q, v, dq, dv, p.data());
      if (c == count - 1) {  // L1
        r.position[0] -= p[L1];
        worst_L1 = std::max(worst_L1, r.max_abs() / std::max(1.0, size));
      } else {
        worst = std::max(worst, r.max_abs() / std::max(1.0, size));
      }
    }
    ++steps;
  };
  const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 5.0, bdf_ggl(1e-8), directions,
                                                        {g, L1}, check);
  ASSERT_EQ(r.status, member_status::success) << r.message;
  std::printf("[ measured ] %ld steps, tangents up to %.3g: max |linearized constraints| / max(1, |s|) = %.3g "
              "(state and g directions), %.3g (L1)\n",
              steps, largest, worst, worst_L1);
  EXPECT_GT(largest, 10.0);  // chaotic: the tangents grow, so the check is relative to their size
  EXPECT_LT(worst, 1e-12);
  EXPECT_LT(worst_L1, 1e-12);
}

// ---- the tangents are the derivatives -----------------------------------------------------------------

// With fixed steps the two perturbed solves take exactly the member's steps: central differences then
// differentiate the same discrete map, with error C eps^2 + delta / eps, delta the Newton iterates' error
// (tolerance 2e-13, but one perturbed solve may stop an iteration earlier than the other at some step).
// eps = 1e-4 balances the two: at 1e-5 the second term reached 3.9e-7 (BDF4, one direction), at 1e-4
// every direction of BDF2-4 is within 1.8e-8.
constexpr double fixed_step_eps = 1e-4;
TEST(Tangents, EqualFiniteDifferencesOfTheDiscreteMapWithFixedSteps) {
  const pendulum_directions dirs;
  for (const int order : {2, 4}) {
    const std::string label = "BDF" + std::to_string(order) + " fixed h = 1e-3";
    const solver_options opt = fixed_steps(1e-3, order);
    EXPECT_LT(dirs.worst_difference_from_finite_differences(opt, 1.0, label.c_str(), fixed_step_eps), 1e-7);
  }
}

// The index-3 formulation (BDF allows it with fixed steps): the same, with mu pinned and the positions'
// constraint the only holonomic row.
TEST(Tangents, EqualFiniteDifferencesOnTheIndexThreeFormulationWithFixedSteps) {
  const pendulum_directions dirs;
  solver_options opt = fixed_steps(1e-3, 3);
  opt.form = formulation::index3;
  EXPECT_LT(dirs.worst_difference_from_finite_differences(opt, 1.0, "index3 BDF3 fixed h = 1e-3", fixed_step_eps),
            1e-7);
}

// Radau IIA (lyapunov/tangent_radau.hpp): the linearized stage system, against the discrete map (fixed
// steps) on both formulations and for every stage count, and against two adaptive solves. With fixed
// steps the finite differences carry the Newton iteration's error over eps: RADAU5's FNEWT (2e-3
// weighted units at rtol 1e-12) in q, and on index3 the velocities' iteration error grows like 1/h
// (measured: <= 3.5e-8 on index3, <= 3.2e-10 on ggl); bound 1e-6.
TEST(Tangents, EqualFiniteDifferencesOfRadauSteps) {
  const pendulum_directions dirs;
  const method_kind methods[3] = {method_kind::radau5, method_kind::radau3, method_kind::euler};
  for (method_kind method : methods)
    for (formulation form : {formulation::index3, formulation::ggl}) {
      solver_options opt = fixed_steps(1e-3, 1);
      opt.method = method;
      opt.form = form;
      char label[96];
      std::snprintf(label, sizeof label, "%s on %s, fixed h = 1e-3", method_name(method), formulation_name(form));
      EXPECT_LT(dirs.worst_difference_from_finite_differences(opt, 0.5, label), 1e-6) << label;
    }
  // Adaptive: the finite difference of two adaptive solves carries the variation of their step sequences
  // over eps, which shrinks with the tolerance (measured with RADAU5's step ratios in [0.2, 8]: worst
  // direction 6.9e-2 at rtol 1e-8, 9.2e-3 at 1e-9, 8.4e-4 at 1e-10, 2.6e-4 at 1e-11, 2.8e-5 at 1e-12).
  solver_options opt = bdf_ggl(1e-12);
  opt.method = method_kind::radau5;
  opt.form = formulation::index3;
  EXPECT_LT(dirs.worst_difference_from_finite_differences(opt, 1.0, "radau5 on index3, adaptive rtol 1e-12"), 1e-4);
}

// Adaptive steps: the perturbed solves may choose other steps, so the difference is bounded by the
// global error's variation over eps (rtol 1e-10 / eps 1e-5 ~ 1e-5) plus O(eps^2).
TEST(Tangents, AgreeWithFiniteDifferencesOfTwoAdaptiveSolves) {
  const pendulum_directions dirs;
  EXPECT_LT(dirs.worst_difference_from_finite_differences(bdf_ggl(1e-10), 1.0, "adaptive rtol 1e-10"), 1e-4);
}

// Without the tangents' error control the member takes exactly solve_member's steps (the tangents never
// change the state); with it, the tangents may only add steps.
TEST(Tangents, LeaveTheStepsAloneWithoutErrorControlAndOnlyAddStepsWithIt) {
  using Model = models::double_pendulum;
  const pendulum_directions dirs;
  const auto& [p, q0, v0] = dirs.member;
  const std::vector<phase_vector<Model>>& directions = dirs.basis;
  const solver_options opt = bdf_ggl(1e-8);
  solver_options plain_opt = opt;
  plain_opt.consistent_multipliers = false;
  const auto plain = solve_member<Model>(p.data(), q0, v0, 0.0, 3.0, plain_opt, {});
  const auto off = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 3.0, opt, directions, {},
                                                          ignore_tangent_steps{}, false);
  const auto on = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 3.0, opt, directions, {});
  ASSERT_EQ(off.status, member_status::success);
  ASSERT_EQ(on.status, member_status::success);
  EXPECT_EQ(off.counters.steps, plain.counters.steps);
  EXPECT_EQ(off.counters.rejected_steps, plain.counters.rejected_steps);
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(off.y_final[j], plain.y_final[j]);
  std::printf("[ measured ] double pendulum t = 3, rtol 1e-8: %ld steps plain and without control, %ld with the "
              "tangents' error control\n",
              plain.counters.steps, on.counters.steps);
  EXPECT_GE(on.counters.steps, plain.counters.steps * 9 / 10);
}

// A direction off the tangent space is taken through the derivative of consistent initialization,
// as the perturbed solves' initializations take the perturbed (inconsistent) inputs.
TEST(Tangents, FollowConsistentInitializationForDirectionsOffTheManifold) {
  using Model = models::double_pendulum;
  const start_point<Model> member;
  const auto& [p, q0, v0] = member;
  phase_vector<Model> off;
  for (int i = 0; i < 2 * Model::n; ++i) off[i] = 0.3 + 0.1 * i;
  const solver_options opt = fixed_steps(1e-3, 3);
  const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 0.5, opt, {off}, {});
  ASSERT_EQ(r.status, member_status::success) << r.message;
  const auto fd = finite_difference<Model>(p, q0, v0, 0.5, opt, &off, -1, 1e-5);
  const double e = relative_phase_difference<Model>(r.sensitivities[0], fd);
  std::printf("[ measured ] direction off the manifold: |tangent - FD| / |FD| = %.3g\n", e);
  EXPECT_LT(e, 1e-7);
}

// A direction that is not finite ends the member with model_not_finite, for BDF and Radau IIA alike: its
// error estimate would be dropped by the max() that combines the estimates, and the member would end
// with success and NaN derivatives.
TEST(Tangents, EndTheMemberWhenTheyAreNotFinite) {
  using Model = models::double_pendulum;
  const start_point<Model> member;
  const auto& [p, q0, v0] = member;
  phase_vector<Model> direction;
  for (int i = 0; i < 2 * Model::n; ++i) direction[i] = i == 0 ? 1.0 : 0.0;
  direction[Model::n] = std::numeric_limits<double>::quiet_NaN();  // the first velocity's
  solver_options radau5 = bdf_ggl(1e-8);
  radau5.method = method_kind::radau5;
  radau5.form = formulation::index3;
  for (const solver_options& opt : {bdf_ggl(1e-8), radau5}) {
    const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 1.0, opt, {direction}, {});
    EXPECT_EQ(r.status, member_status::model_not_finite) << method_name(opt.method) << ": " << status_name(r.status);
    const auto finite = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 1.0, opt, {}, {0});
    EXPECT_EQ(finite.status, member_status::success) << method_name(opt.method);
  }
}

// Parameters: force-only (k1, d), constraint (a: the plane's slope, so the initial state is re-projected)
// for the linear oscillator, and L1, g, m2 for the double pendulum; fixed steps (discrete map) and
// adaptive.
TEST(ParameterSensitivities, EqualFiniteDifferences) {
  {
    using Model = models::linear_oscillator;
    const start_point<Model> member;
    const auto& [p, q0, v0] = member;
    const std::vector<int> params = {1, 4, 5, 6};  // k1, d, a, b
    for (int adaptive_run = 0; adaptive_run < 2; ++adaptive_run) {
      const solver_options opt = adaptive_run ? bdf_ggl(1e-10) : fixed_steps(1e-3, 3);
      const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 2.0, opt, {}, params);
      ASSERT_EQ(r.status, member_status::success) << r.message;
      for (std::size_t c = 0; c < params.size(); ++c) {
        const auto fd = finite_difference<Model>(p, q0, v0, 2.0, opt, nullptr, params[c], 1e-5);
        const double e = relative_phase_difference<Model>(r.sensitivities[c], fd);
        std::printf("[ measured ] linear_oscillator %s, d/d%s: |sensitivity - FD| / max(1, |FD|) = %.3g\n",
                    adaptive_run ? "adaptive rtol 1e-10" : "fixed h = 1e-3", Model::params[params[c]].name, e);
        EXPECT_LT(e, adaptive_run ? 1e-4 : 1e-7);
      }
    }
  }
  {
    using Model = models::double_pendulum;
    const start_point<Model> member;
    const auto& [p, q0, v0] = member;
    const std::vector<int> params = {1, 2, 4};  // m2, L1, g
    const solver_options opt = fixed_steps(1e-3, 3);
    const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 1.0, opt, {}, params);
    ASSERT_EQ(r.status, member_status::success) << r.message;
    for (std::size_t c = 0; c < params.size(); ++c) {
      const auto fd = finite_difference<Model>(p, q0, v0, 1.0, opt, nullptr, params[c], 1e-5);
      const double e = relative_phase_difference<Model>(r.sensitivities[c], fd);
      std::printf("[ measured ] double_pendulum fixed h = 1e-3, d/d%s: |sensitivity - FD| / max(1, |FD|) = %.3g\n",
                  Model::params[params[c]].name, e);
      EXPECT_LT(e, 1e-7);
    }
  }
}

// The knife edge (m = 0, k = 1): the non-holonomic row A v + a = 0 is part of the step equations, so its
// linearization A_q s_q + A s_v = 0 holds at every step to rounding, and the tangents are the
// derivatives (fixed steps, BDF on ggl and Radau IIA 5 on index3: the discrete maps).
TEST(Tangents, FollowTheNonholonomicKnifeEdge) {
  using Model = models::knife_edge;
  const start_point<Model> member;
  const auto& [p, q0, v0] = member;
  constexpr int d = manifold_dimension<Model>();
  static_assert(d == 5);
  std::vector<phase_vector<Model>> basis(d);
  ASSERT_EQ(tangent_space_basis<Model>(0.0, q0, v0, p.data(), tangent_metric::mass, basis.data()),
            member_status::success);
  double worst = 0.0;
  auto check = [&](double t, const state_vector<Model>& y, const state_vector<Model>* s, int count) {
    using L = state_layout<Model>;
    vec<double, Model::n> q, v, dq, dv;
    for (int i = 0; i < Model::n; ++i) {
      q[i] = y[L::q + i];
      v[i] = y[L::v + i];
    }
    for (int c = 0; c < count; ++c) {
      double size = 1.0;
      for (int i = 0; i < Model::n; ++i) {
        dq[i] = s[c][L::q + i];
        dv[i] = s[c][L::v + i];
        size = std::max({size, std::abs(dq[i]), std::abs(dv[i])});
      }
      worst = std::max(worst, linearized_constraints<Model>(t, q, v, dq, dv, p.data()).max_abs() / size);
    }
  };
  solver_options radau = fixed_steps(1e-3, 1);
  radau.method = method_kind::radau5;
  radau.form = formulation::index3;
  for (const solver_options& opt : {fixed_steps(1e-3, 3), radau}) {
    worst = 0.0;
    const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 2.0, opt, basis, {3}, check);
    ASSERT_EQ(r.status, member_status::success) << r.message;
    double fd_worst = 0.0;
    for (int c = 0; c < d; ++c) {
      const auto fd = finite_difference<Model>(member.p, q0, v0, 2.0, opt, &basis[c], -1, 1e-5);
      fd_worst = std::max(fd_worst, relative_phase_difference<Model>(r.sensitivities[c], fd));
    }
    const auto fd_alpha = finite_difference<Model>(member.p, q0, v0, 2.0, opt, nullptr, 3, 1e-5);
    const double alpha_error = relative_phase_difference<Model>(r.sensitivities[d], fd_alpha);
    std::printf("[ measured ] knife edge, %s on %s: max |A_q s_q + A s_v| / max(1, |s|) = %.3g; |tangent - FD| / |FD| "
                "<= %.3g (5 directions), %.3g (d/dalpha)\n",
                method_name(opt.method), formulation_name(opt.form), worst, fd_worst, alpha_error);
    EXPECT_LT(worst, 1e-13);
    EXPECT_LT(fd_worst, 1e-6);
    EXPECT_LT(alpha_error, 1e-6);
  }
}

// ---- what is refused ------------------------------------------------------------------------------------

TEST(Tangents, RefuseMethodsAndOptionsTheyDoNotFollow) {
  using Model = models::double_pendulum;
  const start_point<Model> member;
  const auto& [p, q0, v0] = member;
  solver_options rhoinf;
  rhoinf.method = method_kind::rhoinf;
  solver_options projected;
  projected.projection = projection_kind::coordinate;
  solver_options index1;
  index1.form = formulation::index1;
  for (const solver_options& opt : {rhoinf, projected, index1}) {
    const auto r = solve_member_with_sensitivities<Model>(p.data(), q0, v0, 0.0, 1.0, opt, {}, {0});
    EXPECT_EQ(r.status, member_status::invalid_input);
    EXPECT_FALSE(r.message.empty());
    const auto l = lyapunov_spectrum<Model>(p.data(), q0, v0, 0.0, 1.0, opt, lyapunov_options{});
    EXPECT_EQ(l.status, member_status::invalid_input);
    EXPECT_FALSE(l.message.empty());
    EXPECT_TRUE(l.exponents.empty());
  }
}

}  // namespace
}  // namespace lockstep::test
