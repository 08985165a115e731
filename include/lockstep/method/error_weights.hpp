// lockstep/method/error_weights.hpp — the weights and weighted RMS norms of the error tests, from rtol
// and atol: written once for every method, on one member's doubles and on SIMD packs alike.
//
// A component y_j of the state is weighted by
//
//     w_j = 1 / (f rtol |y_j| + floor_j),
//
// f = rtol' / rtol the method's internal tolerance factor (method/tolerance_calibration.hpp) and floor_j
// what the test asks of the component where y_j passes through zero: f atol_j for the Radau IIA methods
// and rho_inf (Hairer & Wanner II, IV.8: RADAU5's SCAL), and for BDF no less than 1000 ulps of the
// component's size (bdf_error_weights). atol_j is the tolerance of the component's
// group (absolute_tolerance). An error e is then judged by a weighted RMS norm: over a range of
// components (BDF: the positions and velocities) or over the components that have a weight (the
// Radau IIA methods and rho_inf, whose weights are zero for the multipliers a formulation lacks).
//
// On scalars S: double for one member, or a pack of SIMD lanes (lockstep/simd/pack_inl.hpp), whose
// operations are each the double's in every lane, so that a lane gets its member's bits; the functions
// on S are one text, method/error_weights_generic.inc, compiled for each.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"

namespace lockstep::detail {

// The absolute tolerance of state component j: atol_q for the positions, atol_v for the velocities,
// atol_lambda for the multipliers (lambda, mu and nu).
template <class Model>
LOCKSTEP_HD constexpr double absolute_tolerance(const solver_options& opt, int j) {
  using L = state_layout<Model>;
  return j < L::v ? opt.atol_q : (j < L::lambda ? opt.atol_v : opt.atol_lambda);
}

// tolerance_weight, weighted_rms over a range and over the weighted components, and bdf_error_weights,
// on doubles (a text compiled also for SIMD packs: see its header).
#include "lockstep/method/error_weights_generic.inc"

}  // namespace lockstep::detail
