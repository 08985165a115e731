// Radau IIA with 2 stages, order 3 (Mantegazza & Masarati 2012, eq. 79; method/radau.hpp with radau3_tableau): the
// tableaus of the Radau family, global orders against the theory, adaptive runs on the pendulum and
// on the hard problems, and the failure statuses.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

// Every tableau of method/radau.hpp against its Butcher matrix A (Hairer & Wanner IV.5, Table 5.6 for
// s = 3; Mantegazza & Masarati 2012, eq. 79 for s = 2; A = 1 for backward Euler): A^-1 is the inverse of A, c its row
// sums, T Lambda T^-1 = A^-1 with Lambda built from gamma and (alpha, beta) as radau_attempt uses them,
// and the error weights d are those of an embedded formula of order s: u^T = d^T A satisfies
// sum_i u_i c_i^k = -[k = 0] for k < s (radau.hpp's header comment).
template <class RT>
void expect_consistent_tableau(const std::vector<std::vector<double>>& A) {
  constexpr int s = RT::stages;
  double Lambda[3][3] = {};
  int next = 0;
  if (RT::has_real_eigenvalue) Lambda[next][next] = RT::gamma, ++next;
  if (RT::has_complex_pair) {
    Lambda[next][next] = Lambda[next + 1][next + 1] = RT::alpha;
    Lambda[next][next + 1] = RT::beta;
    Lambda[next + 1][next] = -RT::beta;
    next += 2;
  }
  ASSERT_EQ(next, s);
  for (int i = 0; i < s; ++i) {
    double row_sum = 0.0;
    for (int j = 0; j < s; ++j) {
      row_sum += A[i][j];
      double inverse = 0.0, similar = 0.0, identity = 0.0;
      for (int k = 0; k < s; ++k) {
        inverse += RT::Ainv(i, k) * A[k][j];
        identity += RT::T(i, k) * RT::Ti(k, j);
        for (int l = 0; l < s; ++l) similar += RT::T(i, k) * Lambda[k][l] * RT::Ti(l, j);
      }
      EXPECT_NEAR(inverse, i == j ? 1.0 : 0.0, 1e-14) << "A^-1 A at " << i << ", " << j;
      EXPECT_NEAR(identity, i == j ? 1.0 : 0.0, 1e-14) << "T T^-1 at " << i << ", " << j;
      EXPECT_NEAR(similar, RT::Ainv(i, j), 1e-13) << "T Lambda T^-1 at " << i << ", " << j;
    }
    EXPECT_NEAR(row_sum, RT::c(i), 1e-15) << "c at " << i;
  }
  for (int k = 0; k < s; ++k) {
    double moment = 0.0;
    for (int j = 0; j < s; ++j) {
      double u = 0.0;
      for (int i = 0; i < s; ++i) u += RT::d(i) * A[i][j];
      moment += u * std::pow(RT::c(j), k);
    }
    EXPECT_NEAR(moment, k == 0 ? -1.0 : 0.0, 1e-13) << "embedded condition k = " << k;
  }
}

TEST(RadauTableaus, EveryTableauInvertsItsButcherMatrixAndCarriesAnEmbeddedFormulaOfOrderS) {
  const double r6 = std::sqrt(6.0);
  expect_consistent_tableau<radau5_tableau>({{(88 - 7 * r6) / 360, (296 - 169 * r6) / 1800, (-2 + 3 * r6) / 225},
                                             {(296 + 169 * r6) / 1800, (88 + 7 * r6) / 360, (-2 - 3 * r6) / 225},
                                             {(16 - r6) / 36, (16 + r6) / 36, 1.0 / 9}});
  expect_consistent_tableau<radau3_tableau>({{5.0 / 12, -1.0 / 12}, {3.0 / 4, 1.0 / 4}});
  expect_consistent_tableau<euler_tableau>({{1.0}});
}

// Hairer, Lubich & Roche (1989), LNM 1409; Hairer & Wanner VII.4, Table 4.1: Radau IIA with s stages
// has global orders 2s - 1, s, s - 1 for (q, v, lambda) on the index-3 form and 2s - 1, 2s - 1, s on the
// index-2 (ggl) form; s = 2. N = 40..320 steps per unit time: asymptotic for theta0 = 1 (the pairwise
// slopes from N = 20 are within 0.1 of their limits from N = 40 on, except lambda on index3: 1.22, 1.13,
// 1.07, 1.04), and above Newton's tolerance (at N = 2560 the q error on index3 stalls near 1e-9).
TEST(Radau3, ReachesOrdersThreeTwoOneOnTheIndex3Pendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau3, formulation::index3), {40, 80, 160, 320}, 3, 2, 1);
}

TEST(Radau3, ReachesOrdersThreeThreeTwoOnTheGglPendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau3, formulation::ggl), {40, 80, 160, 320}, 3, 3, 2);
}

// radau.hpp's estimate for s = 2 (complex filter, header comment) is the filtered error of an embedded
// order-2 formula: O(h^3), so halving h divides it by 8. On these index-2/3 problems the true local
// error of the order-3 step is O(h^3) too (Hairer, Lubich & Roche: the local errors of y and z are
// O(h^(s+1)) and O(h^s)), and the estimate stays a fixed fraction of it (measured: 0.33 on index3, 0.12
// on ggl, for h = 0.01-0.02).
TEST(Radau3, ErrorEstimateIsThirdOrderInTheStepSize) {
  for (formulation form : {formulation::index3, formulation::ggl}) {
    const estimate_and_truth coarse = radau_step_error<radau3_tableau>(form, 0.02);
    const estimate_and_truth fine = radau_step_error<radau3_tableau>(form, 0.01);
    std::printf("[ measured ] radau3/%s: estimate %.3e (h 0.02), %.3e (h 0.01); over the true local error %.3f, %.3f\n",
                formulation_name(form), coarse.estimate, fine.estimate, coarse.estimate / coarse.truth,
                fine.estimate / fine.truth);
    EXPECT_NEAR(std::log2(coarse.estimate / fine.estimate), 3.0, 0.3) << formulation_name(form);
  }
}

// The step size follows the embedded order-2 estimate, err = O(h^3): the global error of the order-3
// solution scales about like the tolerance (measured gains 20-100 per factor 100); asserted: 10.
TEST(Radau3, AdaptiveRunsSucceedAndGainAccuracyWithTheToleranceOnBothFormulations) {
  for (formulation form : {formulation::index3, formulation::ggl})
    expect_adaptive_accuracy_gains(method_options(method_kind::radau3, form), 3.0, 10.0);
}

// Andrews' squeezer and the car axis on index3: every tolerance succeeds and gains digits against
// Radau IIA (s = 3) at 1e-12.
TEST(Radau3, SolvesAndrewsAndCarAxisOnIndex3AtEveryToleranceAndGainsDigits) {
  expect_index3_hard_problems_gain_digits(method_kind::radau3, {1e-4, 1e-6, 1e-8});
}

TEST(Radau3Status, ReportsEveryFailureStatusOnBothFormulations) {
  for (formulation form : {formulation::index3, formulation::ggl}) expect_failure_statuses(method_options(method_kind::radau3, form));
}

}  // namespace
}  // namespace lockstep::test
