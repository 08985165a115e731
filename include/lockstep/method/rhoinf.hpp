// lockstep/method/rhoinf.hpp — the two-step method with tunable spectral radius at infinity (Mantegazza & Masarati
// 2012, eqs. 74-77; Masarati's multistep method, MBDyn's workhorse) for one member, fixed-step and adaptive.
//
// The method (Mantegazza & Masarati 2012, eq. 76), for y' = f and, in the same way, for F(t, y, y') = 0:
//     y_{k+1} = a1 y_k + a2 y_{k-1} + h b0 (y'_{k+1} + e1 y'_k + e2 y'_{k-1}),   a1 + a2 = 1,
// second order for every rho = rho_inf in [0, 1]. With constant steps eq. 77 gives
// a2 = beta = (3 rho - 1) / (3 - rho), b0 = 1/2 + delta = 2 / ((1 + rho) (3 - rho)), e1 = 2 rho,
// e2 = rho^2: eq. 77 makes the two roots of b0 (z^2 + e1 z + e2), the amplification at h lambda -> -inf,
// coincide at -rho. rho = 0 is BDF2 (L-stable), rho = 1 the two-step trapezoidal rule (no damping).
//
// Variable steps. With omega = h_{k} / h_{k+1} (previous over current step) we keep e1 = 2 rho and
// e2 = rho^2, so that the damping at infinity is rho after any step change, and solve the two order
// conditions (exactness for t and t^2) for a2 and b0 (our derivation; it reduces to eq. 77 at omega = 1):
//     b0 = (1 + omega) / (2 + omega s),   a2 = (rho^2 + 2 rho - 1 + 2 rho^2 omega) / (omega (2 + omega s)),
//     s = 1 + 2 rho - rho^2.
// At rho = 0 this is variable-step BDF2 (a2 = -1 / (omega (2 + omega))). omega is kept in [1/2, 2]:
//   - steps grow by at most 2 per step (omega >= 1/2). Zero-stability: y' = 0 leaves the parasitic root
//     -a2. For omega in [1, 2] (shrinking steps) |a2| <= 1 for every rho; for omega in [1/2, 1] |a2| <= 1
//     for rho <= 0.72 (at rho = 0 this is Grigorieff's bound 1 + sqrt 2 on the step ratio of BDF2), and
//     for rho >= sqrt 2 - 1 a growing step has omega a2(omega) <= a2(1) < 1, so the parasitic mode
//     measured relative to the step size, (y_k - y_{k-1}) / h_k, still contracts at least as fast as
//     with constant steps (checked on a grid by tests/method/rhoinf_test.cpp);
//   - when the step shrinks by more than 2 (omega > 2: after rejections, or to land on t_end), the past
//     point (y_{k-1}, y'_{k-1}) of q and v is replaced by the cubic Hermite interpolant of the last step
//     at t_k - 2 h and omega = 2. Without this the truncation error grows like omega^2 h^3 = h h_k^2
//     (the formula reaches back over the long step) and does not vanish as the rejected step shrinks;
//     the interpolant's own error, O(h_k^4), is one order above the accepted step's local error.
//
// First step. Only y_0 and y'_0 are known; the limit omega -> 0 of the formula with y'_{-1} = y'_0 is the
// trapezoidal rule (a1 = 1, a2 = 0, b0 = 1/2, e1 = 1, e2 = 0), which is the first step.
//
// DAEs. y'_{k+1} = c y_{k+1} + r with c = 1 / (h b0): the corrector F(t, y, c y + r) = 0 is solved by
// method/corrector.hpp, as for BDF. Only q' and v' enter F: the multipliers' past values and
// derivatives play no part (the "direct approach" for multistep methods, Hairer & Wanner VII.3).
// Convergence theory for such methods on index-3 problems (Hairer & Wanner VII.3; for the related
// generalized-alpha method, Arnold & Bruls 2007) asks the roots of b0 (z^2 + e1 z + e2) to lie strictly
// inside the unit circle: they are -rho (double), so rho = 1 is refused on index3 (rhoinf_check_options;
// tests/method/rhoinf_test.cpp shows the multipliers diverging as h -> 0 with rho = 1 and a Newton test
// at tolerance 1e-6). Elsewhere rho = 1 runs with fixed steps only: see "Step changes" below.
//
// Error estimate. With exact past values the local error is (linearization; Hairer, Norsett & Wanner
// III.2 for the truncation error of multistep methods)
//     LE = -(I - h b0 J)^-1 tau,   tau = C3 h^3 y''' + O(h^4),
//     C3 = a1 / 6 + a2 (1 + omega)^3 / 6 - b0 (e1 / 2 + e2 (1 + omega)^2 / 2)   (tau of y = t^3 / 6),
// and for the DAE the same linearization gives LE = -J(c)^-1 c F_y' tau. h^3 y''' comes from the values
// alone, as in BDF: P, the quadratic through y_k, y_{k-1}, y_{k-2}, misses y_{k+1} by
//     y_{k+1} - P(t_{k+1}) = LE + y''' (t_{k+1} - t_k)(t_{k+1} - t_{k-1})(t_{k+1} - t_{k-2}) / 6
//                         = (kappa - C3) h^3 y''' + O(h^4),   kappa = (1 + w1)(1 + w1 + w2) / 6,
// w1 = h_k / h, w2 = h_{k-1} / h, so tau = C3 / (kappa - C3) (y_{k+1} - P(t_{k+1})) (Milne's device;
// kappa > 0 > C3 for omega in [1/2, 2], so the factor is never singular: -0.18 to -0.12 at constant
// steps). Values only, on
// purpose: the derivatives y'_k carry the parasitic mode of the roots -rho at infinity (the multipliers'
// oscillation, undamped as rho -> 1), which the corrector's combination y'_{k+1} + e1 y'_k + e2 y'_{k-1}
// annihilates but any derivative-based predictor picks up (a Hermite predictor did: with rho = 0.99 its
// estimate stalled the step size on the ggl pendulum). The filter -J(c)^-1 keeps stiff components
// bounded (as RADAU5's, Hairer & Wanner IV.8 (8.20)) and produces the multiplier components of LE.
//
// c F_y' tau is assembled from the blocks of the very Jacobian J(c) = F_y + c F_y' that the filter
// factors (the corrector's, method/corrector.hpp, which keeps it across steps while Newton contracts).
// F is affine in y' in every formulation (euler_lagrange.hpp): F_y' tau = (tau_q, M tau_v, G tau_v, 0,
// A tau_v), the G and A rows only at acceleration level (index1, projected invariants: G v' + gamma = 0,
// Mantegazza & Masarati 2012, eqs. 106-107, Ascher & Petzold 1993, eq. 4.14); on index3 and ggl the constraint rows hold no
// y'. With the same blocks on both sides the identity behind the filter holds exactly,
//     LE = -J(c)^-1 c F_y' tau = -tau + J(c)^-1 F_y tau,
// so LE is O(tau) = O(h^3) in every component (the multipliers' part is J(c)^-1 F_y tau: tau has no
// multiplier components), also when J(c) is some steps old: its age perturbs J(c)^-1 F_y tau
// relatively, not by a multiple of c tau. Two earlier shortcuts broke this on the acceleration-level
// formulations, where the multipliers lambda (and nu) are index-1 variables weighted in full by
// radau_weights (not times h^2 as on index3, not times h as on ggl):
//   - c F_y' tau was taken from a fresh residual, F(t, y_{k+1}, y'_{k+1} + c tau): its constraint rows
//     G(q_{k+1}) c tau_v against the kept G of J(c) leave J(c)^-1 c (G_new - G_old) tau_v in lambda,
//     O(|G_new - G_old| tau / h): the velocity's large tangential truncation error leaks into the normal
//     acceleration, which lambda answers to at full weight;
//   - that residual also contained the converged Newton residual F(t, y_{k+1}, y'_{k+1}), whose image
//     under J(c)^-1 is the next Newton correction: bounded by the Newton test, not by h^3. The Newton
//     test judges its rate from the first correction, which on these formulations is dominated by the
//     multipliers' predictor (lambda_k for lambda_{k+1}, off by lambda' h at full weight), so a slowly
//     contracting remainder in lambda (kept G again) passes it.
// Neither vanishes with h, and both held the weighted estimate near 0.7-1.8 whatever the step: on the
// pendulum at rtol 1e-6, 20,882 steps on index1 and 14,970 on projected invariants against 205 on ggl,
// with the same accuracy (docs/METHODS.md, "Adaptive steps"); now 225 and 244 (ggl 202).
// tests/method/rhoinf_test.cpp checks the estimate against the true local error with kept Jacobians on
// every formulation and the adaptive step counts against ggl.
//
// Norm: the weighted RMS norm with RADAU5's index scaling (method/radau.hpp, radau_weights: index-2
// components times h, index-3 times h^2). At the second step P interpolates y'_0 at the confluent node
// t_0 (interpolation.hpp); at the first (trapezoidal) step no quadratic exists, and LE is replaced by
// y_1 - (y_0 + h y'_0) ~ h^2 y'' / 2, an overestimate (the initial step size keeps it near 0.1 anyway).
//
// Step control: method/rhoinf_step_control.hpp (h_new = h min(2, max(0.2, 0.9 err^(-1/3))), LE =
// O(h^3); h kept when the ratio lies in [1, 1.2], so the factorization is reused: at omega = 1 the
// coefficients repeat). Dense output: the cubic Hermite interpolant of (y_k, y'_k), (y_{k+1}, y'_{k+1}) for q and v,
// linear interpolation for the multipliers (which have no derivative here).
//
// Step changes on index3. The derivative history y'_k, y'_{k-1} was produced by the formula at the old
// step size, and carries its O(h^2) offset from y'(t); at a new step size the offsets no longer cancel
// and the multipliers, which answer to second differences of the positions (h^-2), take an O(h) error
// (measured on the pendulum: it halves with h, for a halving or a doubling of the step), which the
// double root -rho at infinity then damps like j rho^j (for BDF1 the same mechanism gives O(1): Brenan,
// Campbell & Petzold 3.2). q and v keep order 2, and output multipliers are recomputed from (q, v) by
// default (consistent_multipliers). The closer rho is to 1, the longer these perturbations live (the
// response j rho^j peaks near j = 1 / (1 - rho) at about 0.37 / (1 - rho) times the kick), and frequent
// step changes pile them up: measured on the pendulum over t = 10, the method's own index3 multipliers
// are off by 1e-3 to 4 for rho <= 0.9, by up to 200 at rho = 0.95-0.99 and tolerance 1e-4, and rho = 0.99
// at 1e-4 once diverged; on ggl every rho < 1 ran clean. With rho = 1 nothing damps them, on any
// formulation (ggl: step_size_too_small at tolerances 1e-4 and 1e-8), so rho = 1 needs fixed steps.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/corrector.hpp"
#include "lockstep/method/interpolation.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/rhoinf_step_control.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

template <class Model>
struct rhoinf_state {
  double t = 0.0;                       // t_k
  double t0 = 0.0;                      // start of the fixed-step grid (step_control.hpp, plan_step)
  double h = 0.0;                       // step size of the next attempt
  state_vector<Model> y, yp;            // y_k, y'_k (y' of the multipliers is not kept: zero)
  double h_last = 0.0;                  // t_k - t_{k-1}; 0 before the first step
  state_vector<Model> y_last, yp_last;  // y_{k-1}, y'_{k-1}
  double h_last2 = 0.0;                 // t_{k-1} - t_{k-2}; 0 before the second step
  state_vector<Model> y_last2;          // y_{k-2} (the error estimate's quadratic)
  bool last_rejected = false;
  int newton_cuts = 0;
  double error = 0.0;                   // the weighted error estimate of the last adaptive attempt
  corrector_matrices<Model> corrector;  // Jacobian and factored Newton matrix (method/corrector.hpp)
};

LOCKSTEP_HD constexpr const char* rhoinf_check_options(const solver_options& opt) {
  if (!(opt.rho_inf >= 0.0 && opt.rho_inf <= 1.0)) return "rho_inf must lie in [0, 1]";
  if (opt.form == formulation::index3 && opt.rho_inf >= 1.0)
    return "rho_inf = 1 is refused on the index-3 formulation: the roots -rho_inf at infinity must lie "
           "strictly inside the unit circle, otherwise the constraint modes are not damped and the "
           "multipliers do not converge (Hairer & Wanner VII.3); use rho_inf < 1, or formulation ggl";
  if (opt.rho_inf >= 1.0 && !(opt.fixed_h > 0.0))
    return "rho_inf = 1 needs fixed steps (fixed_h > 0): every step-size change perturbs the multipliers, "
           "and the double root -1 at infinity never damps the perturbations (measured on the ggl "
           "pendulum: step_size_too_small at tolerances 1e-4 and 1e-8); use rho_inf < 1";
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

template <class Model>
LOCKSTEP_HD void rhoinf_start(rhoinf_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                              const solver_options& opt) {
  s = rhoinf_state<Model>{};
  s.t = t0;
  s.t0 = t0;
  initial_point(init, s.y, s.yp);
  s.h = initial_step_size<Model>(t0, t1, init, opt);
}

namespace detail {

// The dropped constraint rows of the member's Jacobian (rhoinf_attempt_generic.inc's hook).
template <class Model>
LOCKSTEP_HD std::uint64_t rhoinf_dropped(const rhoinf_state<Model>& s) {
  return s.corrector.jac.dropped;
}

// The attempt and its parts (hermite, hermite_derivative, rhoinf_coefficients_for), one text written
// for one member and SIMD packs alike.
#include "lockstep/method/rhoinf_attempt_generic.inc"

}  // namespace detail

// The coefficients of one step (header comment): y_{k+1} = a1 y_k + a2 y_{k-1} +
// h b0 (y'_{k+1} + e1 y'_k + e2 y'_{k-1}), and C3 of the truncation error tau = C3 h^3 y''' + O(h^4).
using rhoinf_coefficients = detail::rhoinf_coefficients_of<double>;

// omega = h_k / h_{k+1}; first: no past step (the trapezoidal rule).
LOCKSTEP_HD rhoinf_coefficients rhoinf_coefficients_for(double rho, double omega, bool first) {
  return detail::rhoinf_coefficients_for(rho, omega, first);
}

// One step attempt (same contract as bdf_attempt).
template <class Model>
LOCKSTEP_HD attempt_result rhoinf_attempt(rhoinf_state<Model>& s, double t_end, const double* p,
                                          const solver_options& opt, member_counters& counters, member_status& status) {
  const double r = detail::rhoinf_attempt<Model>(true, s, t_end, p, opt, counters, status);
  return static_cast<attempt_result>(static_cast<int>(r));
}

// Dense output over the last step [t - h_last, t] (header comment).
template <class Model>
LOCKSTEP_HD void rhoinf_dense_output(const rhoinf_state<Model>& s, double t, state_vector<Model>& y) {
  using L = state_layout<Model>;
  const double theta = (t - (s.t - s.h_last)) / s.h_last;
  for (int j = 0; j < L::size; ++j)
    y[j] = j < L::lambda ? detail::hermite(theta, s.h_last, s.y_last, s.yp_last, s.y, s.yp, j)
                         : (1.0 - theta) * s.y_last[j] + theta * s.y[j];
}

}  // namespace lockstep
