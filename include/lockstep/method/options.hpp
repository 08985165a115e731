// lockstep/method/options.hpp — what a user sets for one member's integration, and what a member
// reports back besides its trajectory.
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/formulation/projection.hpp"

namespace lockstep {

// How initial (q0, v0) that violate the constraints are treated (Mantegazza & Masarati 2012, eqs. 120-123).
enum class init_mode : int {
  project = 0,    // correct them by a minimal-norm projection, however far, and report the size of the correction
  strict = 1,     // refuse them (status inconsistent_initial) when a correction above init_tolerance is needed
  automatic = 2,  // "auto", the default: project, but refuse (status inconsistent_initial) a start whose
                  // position correction is gross (init_q_correction_is_gross below)
};

// The name used in study files and results.
LOCKSTEP_HD constexpr const char* init_mode_name(init_mode m) {
  switch (m) {
    case init_mode::project: return "project";
    case init_mode::strict: return "strict";
    case init_mode::automatic: return "auto";
  }
  return "unknown";
}

// projection_metric (the metric of minimal-norm corrections) and projection_kind (what follows every
// accepted step) live with the projections in formulation/projection.hpp.

// The integration method (method/bdf.hpp, method/radau.hpp, method/rhoinf.hpp, method/dopri5.hpp,
// method/auto_switch.hpp).
enum class method_kind : int {
  bdf = 0,     // variable-order variable-step BDF 1-5 (ggl; index3 with fixed steps only)
  radau5 = 1,  // Radau IIA, 3 stages, order 5 (index3 and ggl)
  radau3 = 2,  // Radau IIA, 2 stages, order 3 (Mantegazza & Masarati 2012, eq. 79; index3 and ggl)
  euler = 3,   // backward Euler, Radau IIA with 1 stage (index3 and ggl)
  rhoinf = 4,  // the two-step method of Mantegazza & Masarati 2012, eqs. 74-77 with spectral radius rho_inf at infinity
  dopri5 = 5,  // Dormand & Prince's explicit pair 5(4) on index1, projected after each step (method/dopri5.hpp)
  automatic = 6,  // "auto": dopri5 while the member is not stiff, Radau IIA 5 while it is (method/auto_switch.hpp)
  tsit5 = 7,      // Tsitouras' explicit pair 5(4), as dopri5 in everything but its coefficients (method/dopri5.hpp)
};

// The name used in study files and results.
LOCKSTEP_HD constexpr const char* method_name(method_kind m) {
  switch (m) {
    case method_kind::bdf: return "bdf";
    case method_kind::radau5: return "radau5";
    case method_kind::radau3: return "radau3";
    case method_kind::euler: return "euler";
    case method_kind::rhoinf: return "rhoinf";
    case method_kind::dopri5: return "dopri5";
    case method_kind::automatic: return "auto";
    case method_kind::tsit5: return "tsit5";
  }
  return "unknown";
}

// Whether a method is one of the explicit pairs (method/dopri5.hpp): dopri5 and tsit5, which integrate
// the index-1 equations and project after every step.
LOCKSTEP_HD constexpr bool is_explicit_pair(method_kind m) {
  return m == method_kind::dopri5 || m == method_kind::tsit5;
}

// Whether a method takes explicit steps: the explicit pairs, and auto while its member is not stiff.
// Their members report explicit_steps, method_switches and stiffness_detections (member_counters).
LOCKSTEP_HD constexpr bool takes_explicit_steps(method_kind m) {
  return is_explicit_pair(m) || m == method_kind::automatic;
}

// Which multipliers a member with redundant constraints reports (formulation/minimum_norm_multipliers.hpp).
// Its positions and velocities are unique; its constraint forces G^T lambda + A^T nu are too, but not
// the multipliers that give them.
enum class multiplier_convention : int {
  independent = 0,   // those of the independent rows the solver keeps; 0 on the dropped rows
  minimum_norm = 1,  // the smallest |(lambda, nu)| with the same constraint force
};

// The name used in study files and results.
LOCKSTEP_HD constexpr const char* multiplier_convention_name(multiplier_convention c) {
  switch (c) {
    case multiplier_convention::independent: return "independent";
    case multiplier_convention::minimum_norm: return "minimum-norm";
  }
  return "unknown";
}

struct solver_options {
  method_kind method = method_kind::bdf;
  formulation form = formulation::ggl;

  // Error control: weighted RMS norm with weights 1 / (rtol |y_i| + atol_group) (Hairer, Norsett &
  // Wanner I.4; IDA user guide, "error test"). Multipliers are weighted by atol_lambda in the Newton
  // test. BDF's error test leaves them out (Ascher & Petzold 1998, ch. 10); Radau IIA and rho_inf keep
  // them in the error norm with RADAU5's index scaling (method/radau.hpp, radau_weights).
  // What rtol means, for every method and formulation: the relative accuracy wanted at the end, about
  // -log10 rtol significant digits of the positions. Each method controls its error per step at an
  // internal tolerance rtol' = c rtol^e (atol scaled with it), calibrated against the IVP Test Set's
  // published solutions (method/tolerance_calibration.hpp); docs/METHODS.md, "What rtol means",
  // tabulates the digits and steps per rtol, method and formulation. With fixed steps rtol and atol set
  // only the Newton tolerance.
  double rtol = 1e-6;
  double atol_q = 1e-6;
  double atol_v = 1e-6;
  double atol_lambda = 1e-6;

  double h_initial = 0.0;  // 0: chosen from the initial derivatives
  double h_min = 0.0;      // 0: 16 eps max(|t|, |t1 - t0|)... see bdf.hpp
  double h_max = std::numeric_limits<double>::infinity();
  long max_steps = 500000;  // step attempts, accepted or not
  int max_order = 5;        // BDF: 1..5

  // Fixed steps (order studies; BDF on index3): h = fixed_h, no error test, for every method; BDF
  // runs at order fixed_order. fixed_h > 0 turns it on.
  double fixed_h = 0.0;
  int fixed_order = 1;

  // The rhoinf method's spectral radius at infinity (Mantegazza & Masarati 2012, eqs. 76-77), in [0, 1]: 0 is BDF2
  // (L-stable), 1 the undamped two-step trapezoidal rule (A-stable only), refused on index3, where the
  // multipliers converge only while the roots -rho_inf at infinity lie inside the unit circle, and
  // allowed elsewhere with fixed steps only (method/rhoinf.hpp).
  double rho_inf = 0.6;

  // Simplified Newton (BDF and rhoinf): converged when rate / (1 - rate) * ||Delta|| <= newton_tol, in units of
  // the error weights; at most newton_max_iterations per attempt. IDA uses epcon = 0.33; we take 0.1
  // because the iteration error of the past points enters the next error estimate through the
  // predictor, amplified by the sum of its Lagrange coefficients (2^(k+1) - 1 = 63 at order 5): with
  // 0.33, andrews at tol 1e-9 met a noise floor near 1 in its error estimate and collapsed its step
  // size to 1e-16 at t = 0.0114; with 0.1 it runs through for the same number of steps (+0-1%).
  double newton_tol = 0.1;
  int newton_max_iterations = 4;

  // Multipliers reported at save times: true recomputes lambda (and nu) from the saved (q, v) by the
  // index-1 system of method/initialize.hpp, so their error follows that of q and v. The BDF
  // multipliers themselves carry no error control (they are index-2 variables, left out of the error
  // test), and on the pendulum they are 10-30 times less accurate than q (measured: tests/method).
  // false reports the method's own values.
  bool consistent_multipliers = true;

  // The convention of the multipliers reported for a member with dependent constraint rows (above).
  multiplier_convention multipliers = multiplier_convention::independent;

  init_mode init = init_mode::automatic;
  projection_metric metric = projection_metric::mass;  // of the initial projection and of `projection`
  double init_tolerance = 1e-10;  // strict mode: largest admissible correction (max-norm)

  // Applied after every accepted step, never before the step-size decision (stepper/member.hpp).
  projection_kind projection = projection_kind::none;

  // Baumgarte's gains for formulation index1: the acceleration rows enforce
  // Phi'' + 2 alpha Phi' + beta^2 Phi = 0 (Mantegazza & Masarati 2012, eq. 106b; Baumgarte 1972), so a drift decays
  // like the damped oscillator z'' + 2 alpha z' + beta^2 z = 0. 0, 0: the plain index-1 system, which drifts.
  // Large gains make the problem stiff (Baumgarte 1972); the other formulations ignore them.
  double baumgarte_alpha = 0.0;
  double baumgarte_beta = 0.0;

  // Events (stepper/events.hpp): the length of the bracket at which a crossing's location stops (0: 100
  // eps (|t| + |h|), SUNDIALS IDA's default), and the interior points of each step where the event
  // functions are evaluated too, so that two crossings within one step are found (0: the step's ends).
  double event_time_tolerance = 0.0;
  int event_interior_checks = 0;
};

LOCKSTEP_HD constexpr baumgarte_gains baumgarte_of(const solver_options& opt) {
  return {opt.baumgarte_alpha, opt.baumgarte_beta};
}

// How the consistent initialization's corrections (method/initialize.hpp) compare with what the user
// asked for. The counters keep the max-norm of each correction, ||dq||_inf and ||dv||_inf.
//
// Beyond the tolerance: ||dx||_inf > atol + rtol ||x0||_inf (x = q with atol_q, or v with atol_v). It
// implies that some component's correction exceeds atol + rtol |x0_i|, the error weight's own scale
// (method/options.hpp, rtol): the start the member runs from differs from the one given by more than
// the accuracy asked for of the solution. Such a start is still projected (the summary of `lockstep
// run` and the Python solve report it: how many members, the largest correction and whose).
LOCKSTEP_HD constexpr bool init_correction_beyond_tolerance(double correction, double start_norm, double atol, double rtol) {
  return correction > atol + rtol * start_norm;
}

// Gross: a position correction beyond the tolerance and larger than init_gross_fraction (10 %) of the
// configuration's size, max(||q0||_inf, ||q||_inf) with q the projected start. Such a start is a wrong
// start rather than a rounded one (a bob given at 57 degrees on a rod it is 0.34 m off, and started
// from 35): init "auto" refuses it, init "project" accepts it. The size is the larger of the two
// configurations, given and projected, so that a start given as all zeros is measured against the
// configuration the constraints require (its correction is then all of it: gross); the tolerance term
// keeps round-off corrections of a start at the origin (||dq|| ~ 1e-17 against a size of 1e-15) from
// being gross. 10 %, not less: a mechanism amplifies the correction a parameter change needs (a 1 %
// spread of Andrews' parameters around its published start moves the consistent start by up to 7 % of
// its size; a threshold of 1 % refused 93 % of such members), and a study that varies parameters
// around a fixed start projects on purpose, with the tolerance's warning; the wrong start above is
// 40 % of its configuration off.
// Positions only: a velocity correction is legitimate wherever the constraints are driven (Phi_t != 0:
// v0 = 0 given for a rheonomic constraint, whose velocity the drive fixes), and a gross q correction
// already marks the wrong start. The max-norm is not unit-aware: in a model that mixes metres and
// radians the size is the largest coordinate in either, so an angle error is judged against a long
// length (and may stay below the threshold, with the tolerance warning still given).
inline constexpr double init_gross_fraction = 0.1;

LOCKSTEP_HD constexpr bool init_q_correction_is_gross(double correction, double q0_norm, double q_norm,
                                                      const solver_options& opt) {
  const double size = q0_norm > q_norm ? q0_norm : q_norm;
  return init_correction_beyond_tolerance(correction, q0_norm, opt.atol_q, opt.rtol) &&
         correction > init_gross_fraction * size;
}

// Counters every member reports (docs/ARCHITECTURE.md section 3).
struct member_counters {
  long steps = 0;                 // accepted steps
  long rejected_steps = 0;        // error-test failures and Newton-failure step cuts
  long newton_iterations = 0;
  long newton_failures = 0;
  long jacobian_evaluations = 0;
  long lu_factorizations = 0;
  long model_evaluations = 0;     // residual evaluations (each evaluates M, Q, Phi and their kin once)
  double last_h = 0.0;
  double max_phi = 0.0;           // max |Phi| over accepted steps
  double max_velocity_residual = 0.0;  // max |G v + Phi_t| (and |A v + a|) over accepted steps
  double init_q_correction = 0.0;      // max-norm of the initial position correction
  double init_v_correction = 0.0;      // max-norm of the initial velocity correction
  long projections = 0;                // accepted steps followed by a projection (stepper/member.hpp)
  double max_projection_q = 0.0;       // max-norm of the largest position correction of a projection
  double max_projection_v = 0.0;       // max-norm of the largest velocity correction of a projection
  // Redundant constraints (formulation/constraint_rank.hpp): the rows of [G; A] the solver left out at
  // some point of the run, as a bit mask (bit a < m: holonomic row a; bit m + a: non-holonomic row a;
  // bit 63 makes it negative), how often its decision changed after the initial one, and the largest
  // |Phi| of a left-out holonomic row at an accepted point (monitored: it is not imposed directly).
  long dropped_rows = 0;
  long rank_changes = 0;
  double max_dropped_phi = 0.0;
  // The explicit pairs (method/dopri5.hpp) and auto's switching (method/auto_switch.hpp): accepted
  // steps taken by the explicit pair (steps - explicit_steps were implicit), switches between the
  // explicit and the implicit method, and how often the explicit method's stiffness test found its
  // steps held by its stability limit (Hairer's rule: 15 such steps before 6 that are not).
  long explicit_steps = 0;
  long method_switches = 0;
  long stiffness_detections = 0;
};

}  // namespace lockstep
