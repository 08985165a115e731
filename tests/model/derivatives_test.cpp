// Every quantity model/derivatives.hpp derives by automatic differentiation, checked against finite
// differences of the model's own double-valued functions (mass, force, constraint, nonholonomic) at
// random states near each built-in model's start. The comparison rule and the step sizes are stated
// in model_test_support.hpp: row-wise relative error <= 1e-6, Richardson-extrapolated central
// differences with h = 1e-3.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/model/derivatives.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

template <class Model>
class Derivatives : public ::testing::Test {};
TYPED_TEST_SUITE(Derivatives, all_models, model_names);

template <class Model>
class NonholonomicDerivatives : public ::testing::Test {};

template <class Model>
class ChunkWidth : public ::testing::Test {};
TYPED_TEST_SUITE(ChunkWidth, all_models, model_names);
TYPED_TEST_SUITE(NonholonomicDerivatives, nonholonomic_models, model_names);

template <class Model>
vec<double, Model::m> phi_of(const model_state<Model>& s, double t, const vec<double, Model::n>& q) {
  return Model::template constraint<double, double>(t, q, s.p.data());
}

// Phi(t + s, q + s v): the constraint along the motion, whose first and second s-derivatives at 0 are
// G v + Phi_t and gamma.
template <class Model>
auto phi_along_motion(const model_state<Model>& s) {
  return [&s](double h) { return phi_of(s, s.t + h, s.q + h * s.v); };
}

TYPED_TEST(Derivatives, ConstraintValueJacobianAndTimeDerivativeMatchCentralDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);

    const auto lin = constraint_linearize<Model>(s.t, s.q, s.p.data());

    const auto phi = phi_of(s, s.t, s.q);
    for (int i = 0; i < Model::m; ++i) EXPECT_EQ(lin.phi[i], phi[i]) << "Phi, row " << i;
    const auto G_fd = difference_jacobian<Model::m>([&](const auto& q) { return phi_of(s, s.t, q); }, s.q);
    EXPECT_TRUE(rows_agree(lin.G, G_fd, fd_tolerance)) << "G, state " << r;
    const auto phi_t_fd = first_difference([&](double h) { return phi_of(s, s.t + h, s.q); }, fd_step);
    EXPECT_TRUE(rows_agree(lin.phi_t, phi_t_fd, fd_tolerance)) << "Phi_t, state " << r;

    const auto G = constraint_jacobian<Model>(s.t, s.q, s.p.data());
    for (int i = 0; i < Model::m * Model::n; ++i) EXPECT_EQ(G.a[i], lin.G.a[i]);
  }
}

TYPED_TEST(Derivatives, VelocityConstraintMatchesCentralDifferenceAlongTheMotion) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = velocity_constraint<Model>(s.t, s.q, s.v, s.p.data());
    const auto fd = first_difference(phi_along_motion(s), motion_step(s.v));
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "G v + Phi_t, state " << r;
  }
}

// gamma by a second difference of Phi(t + s, q + s v) in s: independent of any first derivative.
TYPED_TEST(Derivatives, ConstraintGammaMatchesSecondDifferenceAlongTheMotion) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = constraint_gamma<Model>(s.t, s.q, s.v, s.p.data());
    const auto fd = second_difference(phi_along_motion(s), motion_step(s.v));
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "gamma, state " << r;
  }
}

TYPED_TEST(Derivatives, VelocityConstraintJacobianMatchesMixedDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = velocity_constraint_jacobian<Model>(s.t, s.q, s.v, s.p.data());
    // d/dq of [d/ds Phi(t + s, q + s v)], both by differences of Phi itself.
    const auto fd = difference_jacobian<Model::m>(
        [&](const vec<double, Model::n>& q) {
          return first_difference([&](double h) { return phi_of(s, s.t + h, q + h * s.v); }, motion_step(s.v));
        },
        s.q);
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "d(G v + Phi_t)/dq, state " << r;
  }
}

TYPED_TEST(Derivatives, ConstraintForceJacobianMatchesSecondDifferencesOfLambdaDotPhi) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = constraint_force_jacobian<Model>(s.t, s.q, s.lambda, s.p.data());
    // G^T lambda is the gradient of lambda . Phi; its q-Jacobian is the Hessian of lambda . Phi.
    const auto lambda_dot_phi = [&](const vec<double, Model::n>& q) {
      vec<double, 1> r1;
      r1[0] = dot(s.lambda, phi_of(s, s.t, q));
      return r1;
    };
    const auto fd = difference_jacobian<Model::n>(
        [&](const vec<double, Model::n>& q) {
          const auto row = difference_jacobian<1>(lambda_dot_phi, q);
          vec<double, Model::n> gradient;
          for (int j = 0; j < Model::n; ++j) gradient[j] = row(0, j);
          return gradient;
        },
        s.q);
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "d(G^T lambda)/dq, state " << r;
  }
}

TYPED_TEST(Derivatives, InertiaJacobianMatchesCentralDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = inertia_jacobian<Model>(s.q, s.a, s.p.data());
    const auto fd = difference_jacobian<Model::n>(
        [&](const vec<double, Model::n>& q) { return Model::template mass<double, double>(q, s.p.data()) * s.a; },
        s.q);
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "d(M a)/dq, state " << r;
  }
}

TYPED_TEST(Derivatives, ForceJacobiansMatchCentralDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto lin = force_linearize<Model>(s.t, s.q, s.v, s.p.data());
    const auto Q = Model::template force<double, double>(s.t, s.q, s.v, s.p.data());
    for (int i = 0; i < Model::n; ++i) EXPECT_EQ(lin.Q[i], Q[i]) << "Q, row " << i;
    const auto dq = difference_jacobian<Model::n>(
        [&](const vec<double, Model::n>& q) { return Model::template force<double, double>(s.t, q, s.v, s.p.data()); },
        s.q);
    EXPECT_TRUE(rows_agree(lin.dQ_dq, dq, fd_tolerance)) << "dQ/dq, state " << r;
    const auto dv = difference_jacobian<Model::n>(
        [&](const vec<double, Model::n>& v) { return Model::template force<double, double>(s.t, s.q, v, s.p.data()); },
        s.v);
    EXPECT_TRUE(rows_agree(lin.dQ_dv, dv, fd_tolerance)) << "dQ/dv, state " << r;
  }
}

// ---- non-holonomic constraints (models with k > 0) -------------------------------------------------

template <class Model>
vec<double, Model::k> residual_of(const model_state<Model>& s, double t, const vec<double, Model::n>& q,
                                  const vec<double, Model::n>& v) {
  return Model::template nonholonomic<double, double>(t, q, v, s.p.data());
}

TYPED_TEST(NonholonomicDerivatives, MatrixAndOffsetMatchTheResidual) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto lin = nonholonomic_linearize<Model>(s.t, s.q, s.p.data());
    const auto A_fd = difference_jacobian<Model::k>(
        [&](const vec<double, Model::n>& v) { return residual_of(s, s.t, s.q, v); }, s.v);
    EXPECT_TRUE(rows_agree(lin.A, A_fd, fd_tolerance)) << "A, state " << r;
    const auto a = residual_of(s, s.t, s.q, vec<double, Model::n>{});
    for (int i = 0; i < Model::k; ++i) EXPECT_EQ(lin.a[i], a[i]) << "a, row " << i;
    // The residual is affine in v: A v + a reproduces it.
    const auto full = residual_of(s, s.t, s.q, s.v);
    EXPECT_TRUE(rows_agree(lin.A * s.v + lin.a, full, 1e-13)) << "A v + a, state " << r;
  }
}

TYPED_TEST(NonholonomicDerivatives, JacobianInQMatchesCentralDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = nonholonomic_jacobian_q<Model>(s.t, s.q, s.v, s.p.data());
    const auto fd = difference_jacobian<Model::k>(
        [&](const vec<double, Model::n>& q) { return residual_of(s, s.t, q, s.v); }, s.q);
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "d(A v + a)/dq, state " << r;
  }
}

TYPED_TEST(NonholonomicDerivatives, ForceJacobianMatchesMixedDifferences) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = nonholonomic_force_jacobian<Model>(s.t, s.q, s.nu, s.p.data());
    // A^T nu is the v-gradient of nu . (A v + a); differentiate that gradient in q.
    const auto fd = difference_jacobian<Model::n>(
        [&](const vec<double, Model::n>& q) {
          const auto row = difference_jacobian<1>(
              [&](const vec<double, Model::n>& v) {
                vec<double, 1> r1;
                r1[0] = dot(s.nu, residual_of(s, s.t, q, v));
                return r1;
              },
              s.v);
          vec<double, Model::n> gradient;
          for (int j = 0; j < Model::n; ++j) gradient[j] = row(0, j);
          return gradient;
        },
        s.q);
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "d(A^T nu)/dq, state " << r;
  }
}

TYPED_TEST(NonholonomicDerivatives, GammaMatchesCentralDifferenceAlongTheMotion) {
  using Model = TypeParam;
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    const auto ad = nonholonomic_gamma<Model>(s.t, s.q, s.v, s.p.data());
    // d/ds [A(t + s, q + s v) v + a(t + s, q + s v)] with v held: A q'' = -gamma_nh.
    const auto fd = first_difference([&](double h) { return residual_of(s, s.t + h, s.q + h * s.v, s.v); },
                                     motion_step(s.v));
    EXPECT_TRUE(rows_agree(ad, fd, fd_tolerance)) << "gamma_nh, state " << r;
  }
}

// The device takes its AD passes ad::device_chunk directions at a time, the host ad::max_chunk
// (model/derivatives.hpp, default_chunk): the Jacobian blocks, d(G^T lambda)/dq and d(G^T mu)/dq must be
// the same bits at every width, partial last chunks (3) and single directions (1) included, in every
// formulation and with Baumgarte gains. Compared byte for byte (memcmp), so even a changed sign of zero
// fails.
template <class Model, int Chunk>
member_status jacobian_at(formulation f, const model_state<Model>& s, const vec<double, Model::m>& mu,
                          jacobian_blocks<Model>& J, mat<double, Model::n, Model::n>& H) {
  using L = state_layout<Model>;
  state_vector<Model> y;
  for (int i = 0; i < Model::n; ++i) {
    y[L::q + i] = s.q[i];
    y[L::v + i] = s.v[i];
  }
  for (int i = 0; i < Model::m; ++i) {
    y[L::lambda + i] = s.lambda[i];
    y[L::mu + i] = mu[i];
  }
  for (int i = 0; i < Model::k; ++i) y[L::nu + i] = s.nu[i];
  return evaluate_jacobian<Model, Chunk>(f, s.t, y, s.a, s.p.data(), J, baumgarte_gains{0.7, 1.3}, &H);
}

template <class Block>
bool same_bytes(const Block& a, const Block& b) {
  return std::memcmp(&a, &b, sizeof(Block)) == 0;
}

template <class Model, int Chunk>
void expect_same_bits_as_max_chunk(formulation f, const model_state<Model>& s, const vec<double, Model::m>& mu) {
  jacobian_blocks<Model> J, J_max;
  mat<double, Model::n, Model::n> H, H_max;
  const member_status status = jacobian_at<Model, Chunk>(f, s, mu, J, H);
  const member_status status_max = jacobian_at<Model, ad::max_chunk>(f, s, mu, J_max, H_max);
  ASSERT_EQ(status, status_max);
  const char* form = formulation_name(f);
  EXPECT_TRUE(same_bytes(J.M, J_max.M)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.dQ_dv, J_max.dQ_dv)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.K, J_max.K)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.G, J_max.G)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.Psi_q, J_max.Psi_q)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.Psi_v, J_max.Psi_v)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.A, J_max.A)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.A_q, J_max.A_q)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(J.A_v, J_max.A_v)) << form << ", chunk " << Chunk;
  EXPECT_TRUE(same_bytes(H, H_max)) << "d(G^T mu)/dq, " << form << ", chunk " << Chunk;
  // Without the mu curvature, K comes from constraint_force_jacobian alone.
  jacobian_blocks<Model> K_only;
  state_vector<Model> y{};
  evaluate_jacobian<Model, Chunk>(f, s.t, y, s.a, s.p.data(), K_only);
  jacobian_blocks<Model> K_only_max;
  evaluate_jacobian<Model, ad::max_chunk>(f, s.t, y, s.a, s.p.data(), K_only_max);
  EXPECT_TRUE(same_bytes(K_only.K, K_only_max.K)) << form << ", chunk " << Chunk;
}

TYPED_TEST(ChunkWidth, JacobianBlocksAreTheSameBitsAtEveryChunkWidth) {
  using Model = TypeParam;
  static_assert(ad::device_chunk < ad::max_chunk);
  std::mt19937_64 rng(rng_seed);
  for (int r = 0; r < n_random_states; ++r) {
    const auto s = random_state<Model>(rng);
    vec<double, Model::m> mu;
    for (int i = 0; i < Model::m; ++i) mu[i] = uniform(rng, -1.0, 1.0);
    for (formulation f : {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants}) {
      expect_same_bits_as_max_chunk<Model, ad::device_chunk>(f, s, mu);
      expect_same_bits_as_max_chunk<Model, 1>(f, s, mu);
      expect_same_bits_as_max_chunk<Model, 3>(f, s, mu);
    }
  }
}

}  // namespace
}  // namespace lockstep::test
