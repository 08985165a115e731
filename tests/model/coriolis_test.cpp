// The velocity-quadratic part of every model's force is the one its mass matrix implies.
//
// Lagrange's equations with kinetic energy T = v^T M(q) v / 2 give
//     M q'' + M'(q)[v] v - (1/2) d/dq (v^T M v) = applied forces,
// so a model that folds the gyroscopic terms into Q (andrews does) must have, as the part of Q
// quadratic in v,
//     (Q(q, v) + Q(q, -v)) / 2 - Q(q, 0) = -(M'(q)[v] v - (1/2) d/dq (v^T M v)).
// The even part removes terms linear in v (damping), so any damping parameters may stay on. The right
// side is computed from M alone by dual numbers: M'(q)[v] is the directional derivative of M along v,
// d/dq (v^T M v) a gradient, one direction at a time. For constant-M models this asserts that Q has no
// quadratic part; andrews is the real check of its published Q against its published M.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "lockstep/core/dual.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

template <class Model>
class Coriolis : public ::testing::Test {};
TYPED_TEST_SUITE(Coriolis, all_models, model_names);

// M(q + s d) on a dual number: the derivative part is M'(q)[d].
template <class Model>
mat<double, Model::n, Model::n> mass_derivative(const vec<double, Model::n>& q, const vec<double, Model::n>& d,
                                                const double* p) {
  using S = dual<double, 1>;
  vec<S, Model::n> qs;
  for (int i = 0; i < Model::n; ++i) {
    qs[i] = S(q[i]);
    qs[i].d[0] = d[i];
  }
  const auto Ms = Model::template mass<S, double>(qs, p);
  mat<double, Model::n, Model::n> out;
  for (int i = 0; i < Model::n * Model::n; ++i) out.a[i] = Ms.a[i].d[0];
  return out;
}

TYPED_TEST(Coriolis, QuadraticPartOfForceMatchesTheMassMatrix) {
  using Model = TypeParam;
  constexpr int n = Model::n;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const double* p = s.p.data();

    const auto q_plus = Model::template force<double, double>(s.t, s.q, s.v, p);
    const auto q_minus = Model::template force<double, double>(s.t, s.q, -s.v, p);
    const auto q_zero = Model::template force<double, double>(s.t, s.q, vec<double, n>{}, p);

    const vec<double, n> mdot_v = mass_derivative<Model>(s.q, s.v, p) * s.v;
    vec<double, n> half_gradient;
    for (int j = 0; j < n; ++j) {
      vec<double, n> e{};
      e[j] = 1.0;
      half_gradient[j] = 0.5 * dot(s.v, mass_derivative<Model>(s.q, e, p) * s.v);
    }

    for (int i = 0; i < n; ++i) {
      const double quadratic = 0.5 * (q_plus[i] + q_minus[i]) - q_zero[i];
      const double expected = -(mdot_v[i] - half_gradient[i]);
      // Relative to the size of everything that went into either side, so that a zero quadratic part
      // next to a large constant force is judged at the force's round-off.
      const double scale = std::max({std::abs(q_plus[i]), std::abs(q_minus[i]), std::abs(q_zero[i]),
                                     std::abs(mdot_v[i]), std::abs(half_gradient[i])});
      EXPECT_LE(std::abs(quadratic - expected), 1e-10 * scale)
          << "component " << i << ", state " << r << ": quadratic part of Q = " << quadratic
          << ", from M: " << expected;
    }
  }
}

}  // namespace
}  // namespace lockstep::test
