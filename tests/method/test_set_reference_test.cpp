// Every method and formulation against the published reference solutions of the IVP Test Set, at the
// digits each reaches: Andrews' squeezer at t = 0.03 and the car axis at t = 3, from their defaults.
// The other method tests compare lockstep with itself (tight-tolerance runs); these do not.
//
// Source: F. Mazzia and C. Magherini, "Test Set for Initial Value Problem Solvers", release 2.4,
// Department of Mathematics, University of Bari and INdAM, February 2008, the problems' reference
// routines (andrews.f, subroutine SOLN: "computed at Cray C90, using Cray double precision: Solving
// Andrews' squeezing mechanism using PSIDE", rtol = atol = 1e-14; caraxis.f, subroutine carsoln).
// Components y(1..7) of andrews are q = (beta, Theta, gamma, Phi, delta, Omega, epsilon), y(1..4) of the
// car axis q = (xl, yl, xr, yr), in the order of models/andrews.hpp and models/car_axis.hpp.
//
// Digits: scd = -log10 max_i |q_i - ref_i| / (1 + |ref_i|) (the Test Set's mixed error measure, over
// the positions). Each case asserts two things:
// - what rtol means (method/tolerance_calibration.hpp), for every method and formulation alike: on each
//   problem at least -log10 rtol - 1.5 digits, and averaged over the two problems at most
//   -log10 rtol + 1.5. The upper bound is on the average because one end point can be accidentally exact:
//   the global error changes sign along the trajectory, and a change in the last bits of the arithmetic
//   moves where (BDF on ggl at rtol 1e-8 reached 8.96 digits on andrews with the C library's sin and cos,
//   10.47 with lockstep's own, and 7.54 on the car axis with both). The calibration is fitted to the two
//   problems together in the same way;
// - the digits measured when it was written less 0.5 (the comment gives the measurement): a change that
//   costs accuracy fails here, and one that changes results on purpose updates the table.
// Adaptive BDF on index3 is refused; the explicit pairs run on index1 only, projected after every step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "method_test_support.hpp"

namespace lockstep::test {
namespace {

constexpr double andrews_reference[7] = {
    0.1581077119629904e+2,  -0.1575637105984298e+2, 0.4082224013073101e-1, -0.5347301163226948e+0,
    0.5244099658805304e+0,  0.5347301163226948e+0,  0.1048080741042263e+1};
constexpr double car_axis_reference[4] = {0.4934557842755629e-1, 0.4969894602303324e+0, 0.1041742524885400e+1,
                                          0.3739110272652214e+0};

template <class Model, int N>
double digits_against(const double (&reference)[N], method_kind method, formulation form, double t1, double tol) {
  static_assert(N == Model::n);
  vec<double, N> ref;
  for (int i = 0; i < N; ++i) ref[i] = reference[i];
  return scd(final_positions<Model>(method, form, t1, tol), ref);
}

struct reference_case {
  method_kind method;
  formulation form;
  double tol;             // rtol = atol
  double andrews_digits;  // at least; 0: not asserted
  double car_axis_digits;
};

// Measured (andrews, car axis), asserted less 0.5; the floor of BDF on ggl at 1e-8 keeps the measurement
// before its accidentally exact end point. The tolerances are where each method
// is practical: rho_inf on index3 fails with newton_failure beyond 1e-4 on andrews, and backward Euler
// needs 10^5 steps at 1e-3.
constexpr reference_case cases[] = {
    {method_kind::euler, formulation::index3, 1e-2, 1.8, 2.2},                  // 2.30, 2.73
    {method_kind::euler, formulation::ggl, 1e-2, 1.3, 1.5},                     // 1.86, 2.03
    {method_kind::euler, formulation::index1, 1e-2, 1.5, 1.3},                  // 2.07, 1.88
    {method_kind::euler, formulation::projected_invariants, 1e-2, 1.5, 1.4},    // 2.02, 1.90
    {method_kind::rhoinf, formulation::index3, 1e-4, 3.9, 3.3},                 // 4.47, 3.83
    {method_kind::rhoinf, formulation::ggl, 1e-4, 3.9, 3.0},                    // 4.49, 3.53
    {method_kind::rhoinf, formulation::index1, 1e-4, 3.5, 3.5},                 // 4.03, 4.06
    {method_kind::rhoinf, formulation::projected_invariants, 1e-4, 4.5, 2.8},   // 5.07, 3.31
    {method_kind::bdf, formulation::ggl, 1e-6, 6.7, 4.9},                       // 7.24, 5.44
    {method_kind::bdf, formulation::index1, 1e-6, 5.4, 5.5},                    // 5.95, 6.09
    {method_kind::bdf, formulation::projected_invariants, 1e-6, 6.5, 5.0},      // 7.07, 5.54
    {method_kind::radau5, formulation::index3, 1e-6, 5.5, 5.6},                 // 6.00, 6.16
    {method_kind::radau5, formulation::ggl, 1e-6, 5.9, 4.8},                    // 6.45, 5.35
    {method_kind::radau5, formulation::index1, 1e-6, 5.6, 4.6},                 // 6.14, 5.19
    {method_kind::radau5, formulation::projected_invariants, 1e-6, 6.4, 4.4},   // 6.95, 4.94
    {method_kind::radau3, formulation::index3, 1e-6, 5.9, 5.4},                 // 6.43, 5.95
    {method_kind::radau3, formulation::ggl, 1e-6, 5.9, 5.2},                    // 6.45, 5.70
    {method_kind::radau3, formulation::index1, 1e-6, 5.9, 5.1},                 // 6.43, 5.64
    {method_kind::radau3, formulation::projected_invariants, 1e-6, 6.2, 4.9},   // 6.72, 5.42
    {method_kind::rhoinf, formulation::index3, 1e-3, 2.7, 2.4},                 // 3.25, 2.91
    {method_kind::rhoinf, formulation::ggl, 1e-6, 6.0, 5.0},                    // 6.54, 5.50
    {method_kind::rhoinf, formulation::index1, 1e-6, 5.5, 5.4},                 // 6.03, 5.95
    {method_kind::rhoinf, formulation::projected_invariants, 1e-6, 6.3, 4.7},   // 6.84, 5.28
    {method_kind::bdf, formulation::ggl, 1e-8, 8.4, 7.0},                       // 10.47 (8.96: see above), 7.54
    {method_kind::bdf, formulation::index1, 1e-8, 7.4, 7.5},                    // 7.97, 8.08
    {method_kind::bdf, formulation::projected_invariants, 1e-8, 8.3, 7.1},      // 8.81, 7.65
    {method_kind::radau5, formulation::index3, 1e-8, 7.0, 8.0},                 // 7.50, 8.57
    {method_kind::radau5, formulation::ggl, 1e-8, 8.3, 7.1},                    // 8.81, 7.60
    {method_kind::radau5, formulation::index1, 1e-8, 8.6, 6.9},                 // 9.19, 7.44
    {method_kind::radau5, formulation::projected_invariants, 1e-8, 8.7, 6.7},   // 9.29, 7.21
    {method_kind::radau3, formulation::index3, 1e-8, 7.1, 7.3},                 // 7.62, 7.89
    {method_kind::radau3, formulation::ggl, 1e-8, 7.9, 7.1},                    // 8.47, 7.66
    {method_kind::radau3, formulation::index1, 1e-8, 7.9, 7.1},                 // 8.44, 7.62
    {method_kind::radau3, formulation::projected_invariants, 1e-8, 8.2, 6.8},   // 8.75, 7.39
    {method_kind::dopri5, formulation::index1, 1e-4, 4.6, 3.0},                 // 5.10, 3.55
    {method_kind::dopri5, formulation::index1, 1e-6, 6.0, 4.9},                 // 6.54, 5.41
    {method_kind::dopri5, formulation::index1, 1e-8, 8.1, 6.8},                 // 8.64, 7.37
    {method_kind::tsit5, formulation::index1, 1e-4, 3.7, 4.2},                  // 4.20, 4.70
    {method_kind::tsit5, formulation::index1, 1e-6, 6.1, 5.3},                  // 6.60, 5.83
    {method_kind::tsit5, formulation::index1, 1e-8, 9.0, 7.3},                  // 9.57, 7.80
};

TEST(TestSetReference, EveryMethodAndFormulationReachesItsDigitsOnAndrewsAndTheCarAxis) {
  for (const reference_case& c : cases) {
    const std::string what = std::string(method_name(c.method)) + "/" + formulation_name(c.form);
    const double asked = -std::log10(c.tol);
    double sum = 0.0;
    int problems = 0;
    if (c.andrews_digits > 0.0) {
      const double a = digits_against<models::andrews>(andrews_reference, c.method, c.form, 0.03, c.tol);
      std::printf("[ measured ] %s tol %.0e: andrews %.2f digits\n", what.c_str(), c.tol, a);
      EXPECT_GE(a, c.andrews_digits) << what << " andrews tol " << c.tol;
      EXPECT_GE(a, asked - 1.5) << what << " andrews: rtol " << c.tol << " does not mean what it says";
      sum += a;
      ++problems;
    }
    const double car = digits_against<models::car_axis>(car_axis_reference, c.method, c.form, 3.0, c.tol);
    std::printf("[ measured ] %s tol %.0e: car axis %.2f digits\n", what.c_str(), c.tol, car);
    EXPECT_GE(car, c.car_axis_digits) << what << " car axis tol " << c.tol;
    EXPECT_GE(car, asked - 1.5) << what << " car axis: rtol " << c.tol << " does not mean what it says";
    sum += car;
    ++problems;
    EXPECT_LE(sum / problems, asked + 1.5) << what << ": rtol " << c.tol << " buys far more digits than it asks for";
  }
}

// The published values themselves, against tight Radau IIA 5 runs (a check of the transcription and of
// the models' parameters: a wrong digit or parameter shows as a loss of digits).
TEST(TestSetReference, TheReferenceValuesAgreeWithATightRadauRun) {
  EXPECT_GE(digits_against<models::car_axis>(car_axis_reference, method_kind::radau5, formulation::ggl, 3.0, 1e-12), 11.5);
  EXPECT_GE(digits_against<models::andrews>(andrews_reference, method_kind::radau5, formulation::index1, 0.03, 1e-10), 9.5);
}

}  // namespace
}  // namespace lockstep::test
