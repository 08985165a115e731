// Radau IIA (3 stages, order 5; method/radau.hpp): global orders against the theory, agreement with BDF
// on the hard problems, and success at every tolerance.
#include <gtest/gtest.h>


#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

// Hairer, Lubich & Roche (1989), LNM 1409; Hairer & Wanner VII.4, Table 4.1: Radau IIA with s stages
// has global orders 2s - 1, s, s - 1 for (q, v, lambda) on the index-3 form and 2s - 1, 2s - 1, s on the
// index-2 (ggl) form. s = 3. Multipliers of consistent output are recomputed from (q, v) (option
// consistent_multipliers), so the fixed-step order of lambda is measured with that option off
// (method_test_support.hpp). 20 to 160 steps per unit time: asymptotic for theta0 = 1 (omega <= 3.1)
// and above round-off (the q error at 160 steps is ~2e-11).
TEST(Radau5, ReachesOrdersFiveThreeTwoOnTheIndex3Pendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau5, formulation::index3), {20, 40, 80, 160}, 5, 3, 2);
}

TEST(Radau5, ReachesOrdersFiveFiveThreeOnTheGglPendulum) {
  expect_fixed_step_orders(method_options(method_kind::radau5, formulation::ggl), {20, 40, 80, 160}, 5, 5, 3);
}

// Two different methods on two different formulations at rtol = atol = 1e-12 (the agreement asked for: at least 7
// significant digits in common).
template <class Model>
void expect_radau_index3_and_bdf_ggl_agree(double t1) {
  const auto radau = final_positions<Model>(method_kind::radau5, formulation::index3, t1, 1e-12);
  const auto bdf = final_positions<Model>(method_kind::bdf, formulation::ggl, t1, 1e-12);
  EXPECT_GE(scd(radau, bdf), 7.0) << Model::name;
}

TEST(Radau5, AgreesWithBdfOnAndrewsToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::andrews>(0.03); }
TEST(Radau5, AgreesWithBdfOnCarAxisToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::car_axis>(3.0); }
TEST(Radau5, AgreesWithBdfOnSliderCrankToSevenDigits) { expect_radau_index3_and_bdf_ggl_agree<models::slider_crank>(1.0); }

TEST(Radau5, SolvesAndrewsAndCarAxisOnIndex3AtEveryToleranceAndGainsDigits) {
  expect_index3_hard_problems_gain_digits(method_kind::radau5, {1e-4, 1e-6, 1e-8, 1e-10});
}

}  // namespace
}  // namespace lockstep::test
