// lockstep/method/tolerance_calibration.hpp — what rtol means: the relative accuracy a run should deliver,
// the same for every method and formulation.
//
// Every method controls an estimate of its error per step, and what that buys at the end of a run
// depends on the method's order, on how its estimate weighs the index-2 and index-3 components and on
// the formulation: at one and the same per-step tolerance, Radau IIA 5 on ggl ended three digits more
// accurate than on index3, and rho_inf two digits less (docs/METHODS.md, "What rtol means"). So
// lockstep does what RADAU5 does (rtol' = 0.1 rtol^(2/3) before it starts, Hairer & Wanner II, IV.8) and
// what its BDF always did, for every method: the user's rtol and atol name the accuracy wanted at the
// end, and each method controls its error per step at
//
//     rtol' = c rtol^e,   atol' = atol rtol' / rtol,
//     clamped to 1000 eps <= rtol' <= max(rtol, 1e-3),
//
// e from the method's order and c per method and formulation, fitted so that the significant correct
// digits of the positions, -log10 max_i |q_i - ref_i| / (1 + |ref_i|), come out near -log10 rtol on the
// two mechanical problems of the IVP Test Set with published reference solutions (Andrews' squeezer at
// t = 0.03 and the car axis at t = 3; Mazzia & Magherini, release 2.4, 2008).
//
// The exponent. Per-step control at tolerance tau gives a global error ~ tau^(p/(p+1)) when the
// estimate is of the method's order p (Hairer, Norsett & Wanner I, II.4, "tolerance proportionality"):
// e = (p + 1) / p makes it ~ rtol, except where the method proceeds with the higher-order solution of
// an embedded pair (dopri5 and tsit5: local extrapolation, whose global error is ~ tau already: e = 1,
// c = 1 measured right on the two problems). Measured slopes of digits against -log10 tau: BDF 0.80 (orders 4-5
// dominate: e = 1.25), rho_inf 0.60-0.66 (order 2: e = 1.5), backward Euler 0.41-0.47 (order 1:
// e = 2; 0.23 on index3); the Radau IIA methods 0.95-1.10, because their estimates are of lower order
// than the solution and RADAU5's index scaling leaves the velocities and multipliers partly out of
// them, so e = 1. Each e is a whole number of quarters, so rtol' is exact arithmetic and square roots
// only — the same bits on every backend and in every SIMD lane.
//
// A fit on two problems: elsewhere the digits land further off. On the pendulum of the multibody
// benchmark library (A01, docs/MBS-BENCHMARKS.md) over five periods at rtol 1e-8, the position error
// is 6 times rtol with BDF on ggl and 44 times with Radau IIA 5 on ggl.
//
// The clamp. The floor keeps rtol' above round-off; the ceiling keeps the fit from being extrapolated
// more than a decade beyond the loosest tolerance it was measured at (1e-4): where it bites (Radau IIA 5
// on the projected invariants above rtol ~ 6e-6, on ggl above ~ 2e-5) the internal tolerance stays at
// 1e-3.
//
// The Newton tests and the initial step size (method/step_control.hpp) use the same internal
// tolerances. Fixed steps have no error test: there rtol and atol set only the Newton tolerance, as given.
//
// The fit: `build/bench/method_orders --test-set` prints digits and steps per rtol, method and
// formulation (docs/METHODS.md), and tests/method/test_set_reference_test.cpp asserts that each case
// lands within 1.5 digits of -log10 rtol.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// rtol' = c rtol^(1 + extra_quarters / 4).
struct tolerance_calibration {
  double c;
  int extra_quarters;
};

LOCKSTEP_HD constexpr tolerance_calibration calibration_for(method_kind method, formulation form) {
  // Rows: index3, ggl, index1, projected_invariants; c from the least-squares fit above over
  // rtol = 1e-4 ... 1e-10 (1e-2 ... 1e-4 for euler), rounded to two digits.
  constexpr double bdf[4] = {1.0, 2.0, 0.37, 1.8};  // index3: fixed steps only
  constexpr double radau5[4] = {0.33, 56.0, 80.0, 160.0};
  constexpr double radau3[4] = {0.0097, 0.56, 0.89, 1.4};
  constexpr double euler[4] = {9.3e-5, 0.098, 0.40, 0.30};
  constexpr double rhoinf[4] = {0.017, 1.6, 0.14, 4.3};
  constexpr double explicit_pair_c = 1.0;  // index1 only; 1 lands on -log10 rtol (see "The exponent")
  const int f = static_cast<int>(form);
  switch (method) {
    case method_kind::bdf: return {bdf[f], 1};
    case method_kind::radau5: return {radau5[f], 0};
    case method_kind::radau3: return {radau3[f], 0};
    case method_kind::euler: return {euler[f], 4};
    case method_kind::rhoinf: return {rhoinf[f], 2};
    case method_kind::dopri5:
    case method_kind::tsit5: return {explicit_pair_c, 0};
    case method_kind::automatic: break;  // each phase with its own method's (method/auto_switch.hpp)
  }
  return {1.0, 0};
}

// rtol' / rtol (= atol' / atol) for these options; 1 with fixed steps.
LOCKSTEP_HD double internal_tolerance_factor(const solver_options& opt) {
  if (opt.fixed_h > 0.0) return 1.0;
  const tolerance_calibration cal = calibration_for(opt.method, opt.form);
  const double r = opt.rtol;
  double power = r;  // r^(1 + q / 4), q in {0, 1, 2, 4}
  if (cal.extra_quarters == 1) power = r * sqrt(sqrt(r));
  if (cal.extra_quarters == 2) power = r * sqrt(r);
  if (cal.extra_quarters == 4) power = r * r;
  constexpr double floor = 1000.0 * std::numeric_limits<double>::epsilon();
  const double ceiling = max(r, 1e-3);
  const double reshaped = min(max(cal.c * power, floor), ceiling);
  return reshaped / r;
}

}  // namespace lockstep
