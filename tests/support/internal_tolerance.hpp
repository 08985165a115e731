// tests/support/internal_tolerance.hpp — the user tolerance at which a method works at a given internal
// tolerance (method/tolerance_calibration.hpp).
//
// Tests of an error estimate, of the Newton test or of drift are about what a method does at a
// tolerance per step, not about what rtol means: they pick the internal tolerance they were designed at
// and ask for the rtol that gives it, so that the calibration's constants can be refitted without
// moving them.
#pragma once

#include <cmath>

#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::test {

// rtol (= atol) of `opt`'s method and formulation whose internal tolerance is `internal`, by bisection
// on log10 rtol over [-16, 0] (the internal tolerance grows monotonically with rtol); `internal` must be
// inside the calibration's clamp.
inline double rtol_for_internal_tolerance(solver_options opt, double internal) {
  double lo = -16.0, hi = 0.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    opt.rtol = std::pow(10.0, mid);
    if (internal_tolerance_factor(opt) * opt.rtol < internal)
      lo = mid;
    else
      hi = mid;
  }
  return std::pow(10.0, hi);
}

// `opt` with rtol and every atol set so that its method works internally at `internal`.
inline solver_options at_internal_tolerance(solver_options opt, double internal) {
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = rtol_for_internal_tolerance(opt, internal);
  return opt;
}

}  // namespace lockstep::test
