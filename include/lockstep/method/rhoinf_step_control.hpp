// lockstep/method/rhoinf_step_control.hpp — the step-size controller of the rho_inf method
// (method/rhoinf.hpp), after an error-test failure and after an accepted step.
//
// The estimate err is the weighted RMS norm of the local error LE = O(h^3) (method/rhoinf.hpp, "Error
// estimate"), so the step that would just pass is h err^(-1/3); the controller proposes it with the
// safety factor 0.9 (Hairer, Norsett & Wanner I, II.4, eq. (4.13) with order 2):
//   rejection   h_new = h max(0.2, min(0.9, 0.9 err^(-1/3))), between 0.2 h and 0.9 h;
//   acceptance  h_new = h min(2, max(0.2, 0.9 err^(-1/3))), at most twice h (the variable-step formula
//               keeps omega = h_k / h_{k+1} >= 1/2, method/rhoinf.hpp, "Variable steps"); no growth
//               right after a rejection; h kept when the ratio lies in [1, 1.2], so that the Newton
//               matrix and the coefficients of the constant-step formula are reused.
// The decision depends on err alone, so a caller that has a larger estimate (tangents) passes that.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep::detail {

#include "lockstep/method/rhoinf_step_control_generic.inc"

}  // namespace lockstep::detail
