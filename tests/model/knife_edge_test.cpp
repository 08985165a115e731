// The knife edge's exact solution (tau = 0, theta0 = u0 = x0 = y0 = 0):
//     theta = w t,  x = G / (2 w^2) sin(w t)^2,  y = G / (2 w^2) (w t - sin(w t) cos(w t)),
// G = g sin(alpha), w = omega0, checked against the model: it starts where initial_state starts, it
// never violates the non-holonomic constraint, and it satisfies the equations of motion with some
// multiplier nu. Its velocities and accelerations come from nested dual numbers in t: exact to
// round-off, no hand-written derivative.
#include <gtest/gtest.h>

#include <cmath>

#include "lockstep/core/dual.hpp"
#include "lockstep/model/derivatives.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

using Model = models::knife_edge;

template <class S>
vec<S, 3> exact_position(const S& t, double G, double w) {
  const S s = sin(w * t), c = cos(w * t);
  const double scale = G / (2.0 * w * w);
  vec<S, 3> q;
  q[0] = scale * s * s;
  q[1] = scale * (w * t - s * c);
  q[2] = w * t;
  return q;
}

struct exact_motion {
  vec<double, 3> q, v, a;
};

// t as a nested dual with first and second derivative parts 1: the value part of the result is q(t),
// the two first-order parts q'(t), the mixed part q''(t).
exact_motion exact(double t, const std::vector<double>& p, double omega0) {
  using S1 = dual<double, 1>;
  using S2 = dual<S1, 1>;
  S2 ts;
  ts.v = S1(t);
  ts.v.d[0] = 1.0;
  ts.d[0] = S1(1.0);
  const double G = p[2] * std::sin(p[3]);
  const vec<S2, 3> q = exact_position(ts, G, omega0);
  exact_motion out;
  for (int i = 0; i < 3; ++i) {
    out.q[i] = q[i].v.v;
    out.v[i] = q[i].v.d[0];
    out.a[i] = q[i].d[0].d[0];
  }
  return out;
}

TEST(KnifeEdge, DefaultInitialStateIsTheExactSolutionAtTimeZero) {
  const auto p = default_params<Model>();
  const auto in = default_inputs<Model>();
  vec<double, 3> q0, v0;
  Model::initial_state(p.data(), in.data(), q0, v0);
  const exact_motion e = exact(0.0, p, in[0]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(q0[i], e.q[i], 1e-15) << "q_" << i;
    EXPECT_NEAR(v0[i], e.v[i], 1e-15) << "v_" << i;
  }
}

TEST(KnifeEdge, ExactSolutionSatisfiesTheNonholonomicConstraint) {
  const auto p = default_params<Model>();
  for (const double omega0 : {2.0, 0.7, -3.0})
    for (int step = 0; step <= 100; ++step) {
      const double t = 0.1 * step;
      const exact_motion e = exact(t, p, omega0);
      const auto residual = Model::nonholonomic<double, double>(t, e.q, e.v, p.data());
      EXPECT_LE(std::abs(residual[0]), 1e-14 * std::max(1.0, norm_inf(e.v))) << "t = " << t << ", w = " << omega0;
    }
}

// M q'' + A^T nu = Q for some nu: Q - M q'' must lie along A^T, and A q'' = -gamma_nh.
TEST(KnifeEdge, ExactSolutionSatisfiesTheEquationsOfMotion) {
  const auto p = default_params<Model>();
  for (const double omega0 : {2.0, 0.7, -3.0})
    for (int step = 0; step <= 100; ++step) {
      const double t = 0.1 * step;
      const exact_motion e = exact(t, p, omega0);
      const auto M = Model::mass<double, double>(e.q, p.data());
      const auto Q = Model::force<double, double>(t, e.q, e.v, p.data());
      const auto A = nonholonomic_linearize<Model>(t, e.q, p.data()).A;
      const vec<double, 3> r = Q - M * e.a;
      vec<double, 3> a_row;
      for (int j = 0; j < 3; ++j) a_row[j] = A(0, j);
      const double nu = dot(a_row, r) / dot(a_row, a_row);
      const vec<double, 3> off_constraint = r - nu * a_row;
      const double scale = std::max(norm_inf(Q), norm_inf(M * e.a));
      EXPECT_LE(norm_inf(off_constraint), 1e-13 * scale) << "t = " << t << ", w = " << omega0;

      const auto gamma = nonholonomic_gamma<Model>(t, e.q, e.v, p.data());
      EXPECT_LE(std::abs(dot(a_row, e.a) + gamma[0]), 1e-13 * std::max(1.0, norm_inf(e.a)))
          << "A q'' + gamma_nh, t = " << t << ", w = " << omega0;
    }
}

}  // namespace
}  // namespace lockstep::test
