// d(G^T lambda)/dq by one symmetric half (ad::hessians on core/hessian.hpp) against the nested-dual
// Jacobian of the AD Jacobian it replaced, for every built-in model at random states (q, lambda, mu, t,
// parameters), against closed forms for the pendulum, the chain (block tridiagonal, every block path up
// to chain<16>: four blocks of 8) and the slider crank (blocks of 5 + 4), and ad::hessians on a dense
// function of 20 inputs (three blocks of 7, 7, 6, every off-diagonal block nonzero).
//
// The nested-dual computation lives only here, as the independent check: ad::jacobian over q of
// G(t, q)^T lambda, G itself from constraint_jacobian's chunked dual pass over (q, t). It forms both
// halves separately, so agreement to 1e-13 of the matrix norm checks the mirrored half as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

#include "lockstep/model/derivatives.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

template <class Model>
class ConstraintHessian : public ::testing::Test {};
TYPED_TEST_SUITE(ConstraintHessian, all_models, model_names);

// The reference: the Jacobian (dual chunks over q) of G^T lambda, G from a dual pass over (q, t).
template <class Model>
mat<double, Model::n, Model::n> nested_dual_force_jacobian(double t, const vec<double, Model::n>& q,
                                                           const vec<double, Model::m>& lambda, const double* p) {
  return ad::jacobian(
      [&](const auto& qs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        vec<S, Model::m> ls;
        for (int i = 0; i < Model::m; ++i) ls[i] = S(lambda[i]);
        return transpose_times(constraint_jacobian<Model>(S(t), qs, p), ls);
      },
      q);
}

template <int N>
double max_abs(const mat<double, N, N>& A) {
  double s = 0.0;
  for (int i = 0; i < N * N; ++i) s = std::max(s, std::abs(A.a[i]));
  return s;
}

// |A - B|_max <= rel |B|_max (exact equality when B is zero).
template <int N>
::testing::AssertionResult agree_in_norm(const mat<double, N, N>& A, const mat<double, N, N>& B, double rel) {
  double err = 0.0;
  int wi = 0, wj = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      if (std::abs(A(i, j) - B(i, j)) > err) {
        err = std::abs(A(i, j) - B(i, j));
        wi = i;
        wj = j;
      }
  const double scale = max_abs(B);
  if (err <= rel * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |A - B| = " << err << " at (" << wi << ", " << wj << "): " << A(wi, wj)
                                       << " vs " << B(wi, wj) << "; rel * |B| = " << rel * scale;
}

template <int N>
::testing::AssertionResult exactly_symmetric(const mat<double, N, N>& A) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < i; ++j)
      if (!(A(i, j) == A(j, i)))
        return ::testing::AssertionFailure() << "(" << i << ", " << j << ") = " << A(i, j) << " but (" << j << ", "
                                             << i << ") = " << A(j, i);
  return ::testing::AssertionSuccess();
}

template <int N>
bool bitwise_equal(const mat<double, N, N>& A, const mat<double, N, N>& B) {
  for (int i = 0; i < N * N; ++i)
    if (!(A.a[i] == B.a[i])) return false;
  return true;
}

// Models whose lambda . Phi is curved in q; the others (no holonomic constraint, or a linear one) must
// give an exactly zero Hessian.
template <class Model>
constexpr bool curved_constraints() {
  return Model::m > 0 && !std::is_same_v<Model, models::linear_oscillator>;
}

constexpr double kRel = 1e-13;
constexpr int kStates = 8;

TYPED_TEST(ConstraintHessian, EqualsNestedDualJacobianOfTheJacobianAtRandomStates) {
  using Model = TypeParam;
  constexpr int n = Model::n;
  std::mt19937_64 rng(rng_seed + 17);
  for (int r = 0; r < kStates; ++r) {
    const auto s = random_state<Model>(rng);
    vec<double, Model::m> mu;
    for (int i = 0; i < Model::m; ++i) mu[i] = uniform(rng, -2.0, 2.0);
    const double* p = s.p.data();

    const auto H = constraint_force_jacobian<Model>(s.t, s.q, s.lambda, p);
    const auto reference = nested_dual_force_jacobian<Model>(s.t, s.q, s.lambda, p);
    EXPECT_TRUE(agree_in_norm(H, reference, kRel)) << "lambda, state " << r;
    EXPECT_TRUE(exactly_symmetric(H)) << "state " << r;
    if constexpr (curved_constraints<Model>()) EXPECT_GT(max_abs(H), 0.0) << "state " << r;
    else EXPECT_EQ(max_abs(H), 0.0) << "state " << r;

    // The pair: one evaluation for both multipliers, each the same sum the single function forms.
    const auto both = constraint_force_jacobians<Model>(s.t, s.q, s.lambda, mu, p);
    EXPECT_TRUE(bitwise_equal(both.lambda, H)) << "state " << r;
    EXPECT_TRUE(bitwise_equal(both.mu, constraint_force_jacobian<Model>(s.t, s.q, mu, p))) << "state " << r;
    EXPECT_TRUE(agree_in_norm(both.mu, nested_dual_force_jacobian<Model>(s.t, s.q, mu, p), kRel)) << "mu, state " << r;
    EXPECT_TRUE(exactly_symmetric(both.mu)) << "state " << r;
    static_assert(std::is_same_v<decltype(H), const mat<double, n, n>>);
  }
}

// lambda . Phi = lambda (x^2 + y^2 - L^2) / 2: the Hessian is lambda I, exactly.
TEST(ConstraintHessianClosedForm, PendulumIsLambdaTimesIdentity) {
  using Model = models::pendulum;
  const auto p = default_params<Model>();
  const vec<double, 2> q{{0.6, -0.8}};
  const vec<double, 1> lambda{{-1.75}};
  const auto H = constraint_force_jacobian<Model>(0.4, q, lambda, p.data());
  EXPECT_EQ(H(0, 0), -1.75);
  EXPECT_EQ(H(1, 1), -1.75);
  EXPECT_EQ(H(0, 1), 0.0);
  EXPECT_EQ(H(1, 0), 0.0);
}

// Phi_i = (|p_i - p_(i-1)|^2 - L^2) / 2, p_0 = 0: the Hessian of lambda . Phi has the 2 x 2 blocks
// (lambda_i + lambda_(i+1)) I on the diagonal (lambda_N = 0) and -lambda_(i+1) I next to it, zero
// elsewhere, whatever q.
template <int Links>
void expect_chain_closed_form() {
  using Model = models::chain<Links>;
  constexpr int n = Model::n;
  std::mt19937_64 rng(rng_seed + Links);
  const auto p = default_params<Model>();
  vec<double, n> q;
  for (int i = 0; i < n; ++i) q[i] = uniform(rng, -2.0, 2.0);
  vec<double, Links> lambda;
  for (int i = 0; i < Links; ++i) lambda[i] = uniform(rng, -1.0, 1.0);
  const auto H = constraint_force_jacobian<Model>(0.0, q, lambda, p.data());
  mat<double, n, n> want;
  for (int i = 0; i < Links; ++i) {
    const double next = i + 1 < Links ? lambda[i + 1] : 0.0;
    for (int c = 0; c < 2; ++c) {
      want(2 * i + c, 2 * i + c) = lambda[i] + next;
      if (i + 1 < Links) {
        want(2 * i + c, 2 * (i + 1) + c) = -next;
        want(2 * (i + 1) + c, 2 * i + c) = -next;
      }
    }
  }
  EXPECT_TRUE(agree_in_norm(H, want, 1e-15)) << "chain" << Links;
}

TEST(ConstraintHessianClosedForm, ChainIsBlockTridiagonalInEveryBlockLayout) {
  expect_chain_closed_form<1>();
  expect_chain_closed_form<2>();
  expect_chain_closed_form<4>();   // n = 8: one block
  expect_chain_closed_form<5>();   // n = 10: two blocks of 5
  expect_chain_closed_form<8>();   // n = 16: two blocks of 8
  expect_chain_closed_form<12>();  // n = 24: three blocks of 8
  expect_chain_closed_form<16>();  // n = 32: four blocks of 8
}

// Only the two angles q2 (crank) and q5 (rod) enter Phi nonlinearly, through h1 (cos, sin) q2 and
// h2 (cos, sin) q5 (h = half lengths):
//   H(2, 2) = h1 cos q2 (lambda_0 - lambda_2) + h1 sin q2 (lambda_1 - lambda_3)
//   H(5, 5) = -h2 cos q5 (lambda_2 + lambda_4) - h2 sin q5 (lambda_3 + lambda_5), all else 0.
// n = 9 is split into blocks of 5 and 4, so q5 lies in the second, partial block.
TEST(ConstraintHessianClosedForm, SliderCrankHasOnlyTheTwoAngleEntries) {
  using Model = models::slider_crank;
  std::mt19937_64 rng(rng_seed + 9);
  const auto p = default_params<Model>();
  const double h1 = 0.5 * p[0], h2 = 0.5 * p[1];
  for (int r = 0; r < 4; ++r) {
    vec<double, 9> q;
    for (int i = 0; i < 9; ++i) q[i] = uniform(rng, -3.0, 3.0);
    vec<double, 8> l;
    for (int i = 0; i < 8; ++i) l[i] = uniform(rng, -1.0, 1.0);
    const auto H = constraint_force_jacobian<Model>(0.0, q, l, p.data());
    mat<double, 9, 9> want;
    want(2, 2) = h1 * std::cos(q[2]) * (l[0] - l[2]) + h1 * std::sin(q[2]) * (l[1] - l[3]);
    want(5, 5) = -h2 * std::cos(q[5]) * (l[2] + l[4]) - h2 * std::sin(q[5]) * (l[3] + l[5]);
    EXPECT_TRUE(agree_in_norm(H, want, 1e-14)) << "state " << r;
  }
}

TEST(HessianBlocks, BlocksHaveAtMostMaxChunkDirectionsAndCoverTheInputs) {
  static_assert(ad::hessian_block_size(2) == 2);
  static_assert(ad::hessian_block_size(8) == 8);
  static_assert(ad::hessian_block_size(9) == 5);    // slider_crank: 5 + 4, not 8 + 1
  static_assert(ad::hessian_block_size(16) == 8);   // chain<8>
  static_assert(ad::hessian_block_size(20) == 7);   // 7 + 7 + 6
  static_assert(ad::hessian_block_size(32) == 8);   // chain<16>
  for (int n = 1; n <= 100; ++n) {
    const int b = ad::hessian_block_size(n), count = ad::hessian_block_count(n);
    EXPECT_LE(b, ad::max_chunk) << n;
    EXPECT_GE(b * count, n) << n;
    EXPECT_LT(b * (count - 1), n) << n << ": the last block is not empty";
  }
}

// Three outputs of 20 inputs with dense Hessians in closed form:
//   y0 = exp(a . x)          H = exp(a . x) a a^T
//   y1 = (b . x)^3           H = 6 (b . x) b b^T
//   y2 = (a . x) (b . x)     H = a b^T + b a^T   (a product of two different variables: the models'
//                                                constraints never form one, so it is checked here)
TEST(HessianBlocks, DenseFunctionOfTwentyInputsMatchesClosedForm) {
  constexpr int N = 20;
  std::mt19937_64 rng(rng_seed + 20);
  vec<double, N> a, b, x;
  for (int i = 0; i < N; ++i) {
    a[i] = uniform(rng, -0.3, 0.3);
    b[i] = uniform(rng, -1.0, 1.0);
    x[i] = uniform(rng, -1.0, 1.0);
  }
  const auto H = ad::hessians(
      [&](const auto& xs) {
        using S = typename std::remove_cvref_t<decltype(xs)>::value_type;
        S ax(0.0), bx(0.0);
        for (int i = 0; i < N; ++i) {
          ax = ax + a[i] * xs[i];
          bx = bx + b[i] * xs[i];
        }
        vec<S, 3> y;
        y[0] = exp(ax);
        y[1] = bx * bx * bx;
        y[2] = ax * bx;
        return y;
      },
      x);
  const double ax = dot(a, x), bx = dot(b, x);
  mat<double, N, N> want0, want1, want2;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      want0(i, j) = std::exp(ax) * a[i] * a[j];
      want1(i, j) = 6.0 * bx * b[i] * b[j];
      want2(i, j) = a[i] * b[j] + b[i] * a[j];
    }
  EXPECT_TRUE(agree_in_norm(H.of[0], want0, 1e-14));
  EXPECT_TRUE(agree_in_norm(H.of[1], want1, 1e-14));
  EXPECT_TRUE(agree_in_norm(H.of[2], want2, 1e-14));
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(exactly_symmetric(H.of[c])) << "output " << c;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) EXPECT_NE(H.of[0](i, j), 0.0) << i << ", " << j << ": every entry is written";
}

}  // namespace
}  // namespace lockstep::test
