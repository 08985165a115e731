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
// the positions). Each case asserts the digits measured when it was written less 0.5 (the comment
// gives the measurement): a change that costs accuracy fails here, and one that changes results on
// purpose updates the table. Cases that do not solve a problem to 1 digit (euler on index3 for andrews
// at 1e-4: 0.4) are left out; adaptive BDF on index3 is refused.
#include <gtest/gtest.h>

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

// Measured on this commit (andrews, car axis), asserted less 0.5.
constexpr reference_case cases[] = {
    {method_kind::euler, formulation::index3, 1e-4, 0.0, 1.3},                  // 0.41, 1.86
    {method_kind::euler, formulation::ggl, 1e-4, 0.7, 1.3},                     // 1.25, 1.86
    {method_kind::euler, formulation::index1, 1e-4, 1.3, 1.3},                  // 1.84, 1.86
    {method_kind::euler, formulation::projected_invariants, 1e-4, 1.2, 1.3},    // 1.75, 1.86
    {method_kind::bdf, formulation::ggl, 1e-6, 7.1, 5.4},                       // 7.60, 5.98
    {method_kind::bdf, formulation::index1, 1e-6, 5.1, 5.5},                    // 5.69, 6.07
    {method_kind::bdf, formulation::projected_invariants, 1e-6, 6.8, 5.5},      // 7.33, 6.02
    {method_kind::radau5, formulation::index3, 1e-6, 4.6, 5.0},                 // 5.18, 5.58
    {method_kind::radau5, formulation::ggl, 1e-6, 7.8, 6.8},                    // 8.34, 7.32
    {method_kind::radau5, formulation::index1, 1e-6, 8.5, 6.8},                 // 9.02, 7.36
    {method_kind::radau5, formulation::projected_invariants, 1e-6, 9.1, 6.9},   // 9.60, 7.44
    {method_kind::radau3, formulation::index3, 1e-6, 4.3, 3.5},                 // 4.86, 4.07
    {method_kind::radau3, formulation::ggl, 1e-6, 5.6, 4.9},                    // 6.18, 5.46
    {method_kind::radau3, formulation::index1, 1e-6, 5.8, 5.1},                 // 6.38, 5.60
    {method_kind::radau3, formulation::projected_invariants, 1e-6, 6.3, 5.0},   // 6.88, 5.56
    {method_kind::rhoinf, formulation::index3, 1e-6, 2.4, 2.2},                 // 2.97, 2.77
    {method_kind::rhoinf, formulation::ggl, 1e-6, 4.1, 3.1},                    // 4.65, 3.66
    {method_kind::rhoinf, formulation::index1, 1e-6, 2.9, 3.0},                 // 3.46, 3.50
    {method_kind::rhoinf, formulation::projected_invariants, 1e-6, 4.9, 3.2},   // 5.44, 3.72
    {method_kind::bdf, formulation::ggl, 1e-8, 9.1, 7.5},                       // 9.62, 8.03
    {method_kind::bdf, formulation::index1, 1e-8, 7.5, 7.5},                    // 8.04, 8.00
    {method_kind::bdf, formulation::projected_invariants, 1e-8, 8.5, 7.6},      // 9.03, 8.13
    {method_kind::radau5, formulation::index3, 1e-8, 6.5, 7.4},                 // 7.04, 7.99
    {method_kind::radau5, formulation::ggl, 1e-8, 9.5, 9.1},                    // 10.04, 9.66
    {method_kind::radau5, formulation::index1, 1e-8, 9.5, 9.2},                 // 10.08, 9.71
    {method_kind::radau5, formulation::projected_invariants, 1e-8, 9.5, 9.2},   // 10.07, 9.75
    {method_kind::radau3, formulation::index3, 1e-8, 5.9, 5.4},                 // 6.45, 5.94
    {method_kind::radau3, formulation::ggl, 1e-8, 7.7, 6.9},                    // 8.22, 7.41
    {method_kind::radau3, formulation::index1, 1e-8, 7.8, 7.0},                 // 8.39, 7.57
    {method_kind::radau3, formulation::projected_invariants, 1e-8, 8.3, 7.0},   // 8.88, 7.53
    {method_kind::rhoinf, formulation::index3, 1e-8, 4.1, 3.4},                 // 4.62, 3.98
    {method_kind::rhoinf, formulation::ggl, 1e-8, 5.6, 4.4},                    // 6.12, 4.97
    {method_kind::rhoinf, formulation::index1, 1e-8, 4.3, 4.3},                 // 4.80, 4.83
    {method_kind::rhoinf, formulation::projected_invariants, 1e-8, 6.0, 4.5},   // 6.58, 5.04
};

TEST(TestSetReference, EveryMethodAndFormulationReachesItsDigitsOnAndrewsAndTheCarAxis) {
  for (const reference_case& c : cases) {
    const std::string what = std::string(method_name(c.method)) + "/" + formulation_name(c.form);
    if (c.andrews_digits > 0.0) {
      const double a = digits_against<models::andrews>(andrews_reference, c.method, c.form, 0.03, c.tol);
      std::printf("[ measured ] %s tol %.0e: andrews %.2f digits\n", what.c_str(), c.tol, a);
      EXPECT_GE(a, c.andrews_digits) << what << " andrews tol " << c.tol;
    }
    const double car = digits_against<models::car_axis>(car_axis_reference, c.method, c.form, 3.0, c.tol);
    std::printf("[ measured ] %s tol %.0e: car axis %.2f digits\n", what.c_str(), c.tol, car);
    EXPECT_GE(car, c.car_axis_digits) << what << " car axis tol " << c.tol;
  }
}

// The published values themselves, against Radau IIA 5 on ggl at 1e-10 (a check of the transcription
// and of the models' parameters: a wrong digit or parameter shows as a loss of digits).
TEST(TestSetReference, TheReferenceValuesAgreeWithATightRadauRun) {
  EXPECT_GE(digits_against<models::car_axis>(car_axis_reference, method_kind::radau5, formulation::ggl, 3.0, 1e-10), 11.5);
  EXPECT_GE(digits_against<models::andrews>(andrews_reference, method_kind::radau5, formulation::index1, 0.03, 1e-10), 9.5);
}

}  // namespace
}  // namespace lockstep::test
