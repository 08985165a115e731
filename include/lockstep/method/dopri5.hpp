// lockstep/method/dopri5.hpp — the explicit Runge-Kutta pairs 5(4) on the index-1 equations, with a
// projection onto the position and velocity constraints after every step: the methods for members
// that are not stiff, which pay no Jacobian and no Newton iteration. Two pairs of one shape (seven
// stages, the seventh at the step's end and equal to the next step's first, the sixth also at c = 1):
// Dormand & Prince's (method dopri5) and Tsitouras' (method tsit5). One state, one attempt and one
// dense output serve both; only the coefficients (dopri5_tableau, tsit5_tableau) differ.
//
// The equations. The index-1 formulation as an ODE in x = (q, v) (the underlying ODE of the
// index-reduced equations of motion: Hairer & Wanner 1996, VII.1; Eich 1993):
//     q' = v,   v' = a(t, q, v),
// where (a, lambda, nu) solve the saddle-point system of the accelerations
//     [ M  G^T A^T ] [ a      ]   [ Q        ]
//     [ G  0   0   ] [ lambda ] = [ -gamma   ]      (method/initialize.hpp, accelerations_and_multipliers)
//     [ A  0   0   ] [ nu     ]   [ -gamma_nh]
// at every stage: the only linear algebra of a step is this (n + m + k) system, once per stage, solved
// by the Schur complement of M (method/accelerations_generic.inc, solve_stage_accelerations: Cholesky
// factorizations of M and of G M^-1 G^T, or the pivoted LU of the whole system where M is not positive
// definite). The multipliers of the current point are those of its system (index 1: no error control
// on them).
//
// The pairs. Dormand & Prince 1980, "A family of embedded Runge-Kutta formulae", J. Comput. Appl. Math.
// 6, 19-26 (RK5(4)7M), and Tsitouras 2011, "Runge-Kutta pairs of order 5(4) satisfying only the first
// column simplifying assumption", Comput. Math. Appl. 62, 770-775 (Table 1). Seven stages, the
// seventh at the step's end and equal to the next step's first ("first same as last", FSAL), so six
// evaluations per step. The solution is the fifth-order one (local extrapolation); the difference to
// the embedded fourth-order one, h sum_i e_i k_i with e = b - b^, is the error estimate, in the weighted
// RMS norm over q and v with the weights 1 / (f rtol max(|x0_j|, |x1_j|) + f atol_j) of Hairer, Norsett
// & Wanner 1993, II.4 (f: the method's internal tolerance factor, method/tolerance_calibration.hpp).
// Tsitouras keeps only the first of the simplifying assumptions that fix most of Dormand & Prince's
// coefficients (the paper's title says so) and spends the freedom on smaller sixth-order error terms:
// on the double pendulum, at one and the same tolerance and about the same steps, its positions come
// out about half a digit more accurate (docs/PERFORMANCE.md, "Non-stiff members"),
// so it needs about a quarter fewer steps for the same digits.
//
// Dense output: a continuous extension of order 4 for q and v (Hairer, Norsett & Wanner 1993, II.6),
// stored in one form for both pairs,
//     x(t + theta h) = r0 + theta (r1 + (1 - theta) (r2 + theta (r3 + (1 - theta) r4))),
//     r0 = x0, r1 = x1 - x0,
// a basis of the polynomials of degree 4 through x0 and x1. Dormand & Prince's (Shampine 1986, "Some
// practical Runge-Kutta formulas", Math. Comp. 46) interpolates x0, x1 and their derivatives k1, k7:
//     r2 = h k1 - r1, r3 = r1 - h k7 - r2, r4 = h sum_i d_i k_i;
// Tsitouras' weights b_i(theta) (the paper's, in factored form) are written in the same basis,
// r2, r3, r4 = h sum_i (beta_i, gamma_i, delta_i) k_i (tsit5_tableau). Linear interpolation for the
// multipliers. tests/method/dopri5_test.cpp checks both against the order conditions through order 4
// at several theta.
//
// Step control: h_new = h / clamp(err^(1/5 - 0.75 beta) / (err_prev^beta 0.9), 1/10, 5), the
// proportional-integral controller with beta = 0.04 (Hairer & Wanner 1996, IV.2, "PI step size control", as
// in Hairer's code DOPRI5; Gustafsson 1991), err_prev the error of the last accepted step floored at 1e-4;
// no growth after a rejection; a rejected step shrinks by err^(1/5 - 0.75 beta) / 0.9, at most to 0.2 h.
// The powers are evaluated as exp((1/5 - 0.75 beta) ln err - beta ln err_prev), and the member keeps ln
// err_prev. A stage whose system is singular or whose values are not finite cuts the step to h / 4 (a
// member that keeps failing ends with the stage's status, as after Newton failures).
//
// Projection. After each accepted step the member stepper projects q onto Phi = 0 and v onto the
// velocity constraints (stepper/member.hpp; projection = "coordinate", the study file's default for
// these methods): the projected point is where the next step starts and where the step's dense output
// ends (replace_current adds the correction to r1, so the polynomial runs from the projected start to
// the projected end). A projection of a method of order p keeps order p (Hairer & Wanner 1996, VII.2;
// Eich 1993); without it the index-1 equations drift from Phi = 0 (Hairer & Wanner 1996, VII.2). The
// next step's first stage k1 stays the derivative at the unprojected end (FSAL): the
// correction is of the size of the local error and enters the next step times h, one order above it.
//
// Stiffness test (Hairer & Wanner 1996, IV.2, "Automatic stiffness detection"; Shampine 1977; as in
// Hairer's code DOPRI5). The seventh and sixth stages are both at c = 1, so
//     h lambda ~ h ||k7 - k6|| / ||x7 - x6||      (Euclidean norms over x = (q, v))
// estimates h times the Jacobian's dominant eigenvalue along the direction the step's errors excite.
// Where it stays near the edge of the method's stability domain on the negative real axis (about 3.3
// for Dormand & Prince's pair, 3.5 for Tsitouras'), the step size is held by stability, not accuracy:
// the member is stiff. One large value is not stiffness (a highly oscillatory member spikes on
// isolated steps), so the rule is DOPRI5's: 15 accepted steps above the threshold before 6 steps below
// it (which start the count afresh). The member then counts a stiffness detection and sets
// `turned_stiff` (method/auto_switch.hpp switches to the implicit method on it; an explicit pair alone
// goes on, and `lockstep run` names such members). The test runs on every accepted step: two norms
// beside the step's six saddle-point solves.
//
// The threshold is 2.5, not DOPRI5's 3.25, by measurement (every accepted step's h lambda, rtol 1e-2 ...
// 1e-10): at tight tolerances the controller holds a stiff member's steps further inside the stability
// domain, at h lambda 3.0-3.1 for a damper of 10^4 at rtol 1e-8 and 2.5-2.8 at 3e-9 (the fading damper
// of tests/method/auto_switch_test.cpp), which 3.25 never flags although the explicit method then
// takes 30 times Radau IIA 5's steps; the largest value on members that are not stiff (pendulum,
// double pendulum, Andrews' squeezer, the lightly damped oscillator) was 2.05 from rtol 1e-4 on, and
// looser tolerances' larger values (6.8 on the double pendulum at 1e-2) came on isolated steps that the
// rule does not count as stiff. The car axis, a stiff problem of the IVP Test Set, is flagged at rtol
// 1e-2 and 1e-3 with either threshold. (Measured with Dormand & Prince's pair, which auto's explicit
// phases use; tests/method/auto_switch_test.cpp holds Tsitouras' to the same stiff and non-stiff
// members.)
//
// Redundant constraints: the rank decision of the initial point (formulation/constraint_rank.hpp)
// holds for the whole run; its dropped rows are left out of every stage's system, and monitored after
// each step (stepper/member.hpp, dropped_rows_hold, from G at the accepted point). A row that becomes
// dependent later makes a stage's system singular, and the member ends with singular_matrix.
#pragma once

#include <cstdint>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/error_weights.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep {

// The coefficients of RK5(4)7M (Dormand & Prince 1980; Hairer, Norsett & Wanner 1993, II.5):
// nodes c, stage coefficients a (row i: the stage i + 1's, over stages 1 .. i), the fifth-order weights
// b (the seventh stage's row: FSAL), the error weights e = b - b^, and d, the dense output's r4
// coefficients (Hairer, Norsett & Wanner 1993, II.6); its r2 and r3 come from the end derivatives
// (header).
struct dopri5_tableau {
  static constexpr int stages = 7;
  static constexpr bool dense_from_end_derivatives = true;
  // The coefficients are function-local statics of LOCKSTEP_HD functions, for device code and for
  // speed (radau5_tableau says why).
  LOCKSTEP_HD static double c(int i) {
    static constexpr double v[stages] = {0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0};
    return v[i];
  }
  LOCKSTEP_HD static double a(int i, int j) {
    static constexpr double v[stages][stages - 1] = {
        {},
        {1.0 / 5.0},
        {3.0 / 40.0, 9.0 / 40.0},
        {44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0},
        {19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0},
        {9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0},
        {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0}};
    return v[i][j];
  }
  LOCKSTEP_HD static double e(int j) {
    static constexpr double v[stages] = {71.0 / 57600.0,      0.0,           -71.0 / 16695.0, 71.0 / 1920.0,
                                         -17253.0 / 339200.0, 22.0 / 525.0, -1.0 / 40.0};
    return v[j];
  }
  LOCKSTEP_HD static double d(int j) {
    static constexpr double v[stages] = {-12715105075.0 / 11282082432.0, 0.0, 87487479700.0 / 32700410799.0,
                                         -10690763975.0 / 1880347072.0, 701980252875.0 / 199316789632.0,
                                         -1453857185.0 / 822651844.0, 69997945.0 / 29380423.0};
    return v[j];
  }
};

namespace detail {

// A continuous extension's weight b(theta) = p1 theta + p2 theta^2 + p3 theta^3 + p4 theta^4 written in
// the dense output's basis (header): b(theta) = b(1) theta + beta theta (1 - theta) +
// gamma theta^2 (1 - theta) + delta theta^2 (1 - theta)^2, so delta = p4, gamma = -p3 - 2 p4 and
// beta = gamma + delta - p2.
struct dense_weight {
  double beta, gamma, delta;
};
constexpr dense_weight dense_weight_of(double p2, double p3, double p4) {
  const double gamma = -p3 - 2.0 * p4;
  return {gamma + p4 - p2, gamma, p4};
}
// s theta^2 (theta^2 + u theta + w), the form of Tsitouras' b_2 ... b_7 (p1 = 0).
constexpr dense_weight dense_weight_of_quadratic(double s, double u, double w) {
  return dense_weight_of(s * w, s * u, s);
}
// s theta^2 (theta - r1) (theta - r2).
constexpr dense_weight dense_weight_of_roots(double s, double r1, double r2) {
  return dense_weight_of_quadratic(s, -(r1 + r2), r1 * r2);
}
// s theta (theta - r) (theta^2 + u theta + w), the form of Tsitouras' b_1 (p1 = -s r w = 1: the
// extension's derivative at theta = 0 is k1).
constexpr dense_weight dense_weight_of_cubic(double s, double r, double u, double w) {
  return dense_weight_of(s * (w - r * u), s * (u - r), s);
}

}  // namespace detail

// The coefficients of Tsitouras' pair (Tsitouras 2011, Table 1; the compiler rounds the decimals to
// doubles): nodes c, stage coefficients a, the fifth-order weights b (the seventh stage's row: FSAL),
// the error weights e = b - b^ with the paper's fourth-order weights b^ (b^_7 = 1/66), and the dense
// output's weights b_i(theta), which the paper gives in factored form, in the header's basis.
struct tsit5_tableau {
  static constexpr int stages = 7;
  static constexpr bool dense_from_end_derivatives = false;
  // Function-local statics, as dopri5_tableau's.
  LOCKSTEP_HD static double c(int i) {
    static constexpr double v[stages] = {0.0, 0.161, 0.327, 0.9, 0.98002554090450968572981028628702459549, 1.0, 1.0};
    return v[i];
  }
  LOCKSTEP_HD static double a(int i, int j) {
    static constexpr double v[stages][stages - 1] = {
        {},
        {0.161},
        {-0.0084806554923569885444268742502307746751, 0.33548065549235698854442687425023077468},
        {2.8971530571054934321304325941929387649, -6.3594484899750748431481599123836256260,
         4.3622954328695814110177273181908868610},
        {5.3258648284392566044288779208405113178, -11.748883564062827877747170339785772962,
         7.4955393428898362083046047845643581557, -0.092495066361755249256502079332071916113},
        {5.8614554429464200286592514869826478904, -12.920969317847109291706118681783359395,
         8.1593678985761586431804007945392534852, -0.071584973281400997224530542525829738691,
         -0.028269050394068382909003057212712241467},
        {0.096460766818065229518167313165128763337, 0.01, 0.47988965041449957477524953229059651991,
         1.3790085741037418931922748218568727708, -3.2900695154360806799010475857113638501,
         2.3247105240997739824153559183987657961}};
    return v[i][j];
  }
  LOCKSTEP_HD static double e(int j) {
    static constexpr double v[stages] = {
        0.096460766818065229518167313165128763337 - 0.094680755765839458074788762557589228561,
        0.01 - 0.0091835655403432530967763639366453137598,
        0.47988965041449957477524953229059651991 - 0.48777052842476157078556425996312282415,
        1.3790085741037418931922748218568727708 - 1.2342975669304789856551096738842376540,
        -3.2900695154360806799010475857113638501 + 2.7077123499835254548811099750593216707,
        2.3247105240997739824153559183987657961 - 1.8666284181705870357537193995662114987,
        -1.0 / 66.0};
    return v[j];
  }
  LOCKSTEP_HD static detail::dense_weight dense(int j) {
    static constexpr detail::dense_weight v[stages] = {
        detail::dense_weight_of_cubic(-1.0530884977290216, 1.3299890189751412, -1.4364028541716351,
                                      0.7139816917074209),
        detail::dense_weight_of_quadratic(0.1017, -2.1966568338249754, 1.2949852507374631),
        detail::dense_weight_of_quadratic(2.490627285651252793, -2.38535645472061657, 1.57803468208092486),
        detail::dense_weight_of_roots(-16.54810288924490272, 1.21712927295533244, 0.61620406037800089),
        detail::dense_weight_of_roots(47.37952196281928122, 1.203071208372362603, 0.658047292653547382),
        detail::dense_weight_of_roots(-34.87065786149660974, 1.2, 2.0 / 3.0),
        detail::dense_weight_of_roots(2.5, 1.0, 0.6)};
    return v[j];
  }
};

// What the explicit method keeps of the constraint rows for the member stepper (Method::jacobian): the
// rows the initial rank decision dropped, and G at the last accepted point where there are any
// (stepper/member.hpp, dropped_rows_hold).
template <class Model>
struct explicit_constraint_rows {
  std::uint64_t dropped = 0;
  mat<double, Model::m, Model::n> G;
};

// DOPRI5's stiffness rule (header): the accepted steps with h lambda above the threshold, and those
// below it since the last one above (record_stiffness in dopri5_attempt_generic.inc counts them).
struct stiffness_test {
  static constexpr double threshold = 2.5;  // h lambda (header: measured below DOPRI5's 3.25)
  static constexpr int stiff_after = 15, reset_after = 6;
  int stiff_steps = 0;
  int nonstiff_steps = 0;
};

// ln 1e-4, the floor of the accepted error the controller remembers (header, "Step control").
inline constexpr double dopri5_log_error_floor = -9.210340371976182;

template <class Model>
struct dopri5_state {
  static constexpr int d = 2 * Model::n;  // the ODE's unknowns x = (q, v)
  double t = 0.0;
  double t0 = 0.0;             // start of the fixed-step grid (step_control.hpp, plan_step)
  double h = 0.0;              // step size of the next attempt
  state_vector<Model> y;       // the current point: q, v and the multipliers of its acceleration system
  vec<double, d> f;            // (v, a) at the end of the last step, before its projection (FSAL)
  double h_last = 0.0;         // the last step's size; 0 before the first
  state_vector<Model> y_last;  // the last step's start (the multipliers' interpolation)
  vec<double, d> dense[5];     // r0 ... r4 of the last step's dense output (header)
  double log_error_accepted = dopri5_log_error_floor;  // ln of the controller's err_prev
  bool last_rejected = false;
  int consecutive_cuts = 0;      // stage failures in a row
  double error = 0.0;            // the weighted error estimate of the last adaptive attempt
  stiffness_test stiffness;
  bool turned_stiff = false;     // set by the step that completed a stiff episode (header)
  explicit_constraint_rows<Model> rows;
};

LOCKSTEP_HD constexpr const char* dopri5_check_options(const solver_options& opt) {
  if (opt.form != formulation::index1)
    return "the explicit pairs (dopri5, tsit5) integrate the index-1 equations (formulation index1: the "
           "accelerations and multipliers of the saddle-point system at every stage) and keep the constraints "
           "by projection after each step; ggl, index3 and projected-invariants are formulations for the "
           "implicit methods";
  if (opt.baumgarte_alpha != 0.0 || opt.baumgarte_beta != 0.0)
    return "the explicit pairs (dopri5, tsit5) do not apply Baumgarte's gains: they keep the constraints by "
           "projection after each step (projection coordinate or post-stabilization)";
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

template <class Model>
LOCKSTEP_HD void dopri5_start(dopri5_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                              const solver_options& opt) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  s = dopri5_state<Model>{};
  s.t = t0;
  s.t0 = t0;
  state_vector<Model> yp;
  initial_point(init, s.y, yp);
  for (int i = 0; i < n; ++i) {
    s.f[i] = yp[L::q + i];
    s.f[n + i] = yp[L::v + i];
  }
  s.h = initial_step_size<Model>(t0, t1, init, opt);
}

namespace detail {

// The members of dopri5_state whose constraint rows the initial rank decision dropped
// (dopri5_attempt_generic.inc's hook).
template <class Model>
LOCKSTEP_HD bool dopri5_rows_dropped(const dopri5_state<Model>& s) {
  return s.rows.dropped != 0;
}

// The attempt and its parts (the stages' derivative, also auto's, the stiffness rule, the controller,
// the cut after a failed stage) and the replacement of the current point: one text written for one
// member and SIMD packs alike.
#include "lockstep/method/dopri5_attempt_generic.inc"  // IWYU pragma: keep

}  // namespace detail

// One step attempt of the pair T (same contract as bdf_attempt): accepted, rejected (retry with s.h) or
// failed (the member's status in `status`).
template <class Model, class T = dopri5_tableau>
LOCKSTEP_HD attempt_result dopri5_attempt(dopri5_state<Model>& s, double t_end, const double* p,
                                          const solver_options& opt, member_counters& counters, member_status& status) {
  const double r = detail::dopri5_attempt<Model, T>(true, s, t_end, p, opt, counters, status);
  return static_cast<attempt_result>(static_cast<int>(r));
}

// Dense output over the last step [t - h_last, t] (header); the current point before the first step.
template <class Model>
LOCKSTEP_HD void dopri5_dense_output(const dopri5_state<Model>& s, double t, state_vector<Model>& y) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  y = s.y;
  if (!(s.h_last > 0.0)) return;
  const double theta = (t - (s.t - s.h_last)) / s.h_last, rest = 1.0 - theta;
  for (int c = 0; c < 2 * n; ++c) {
    const double x = s.dense[0][c] +
                     theta * (s.dense[1][c] +
                              rest * (s.dense[2][c] + theta * (s.dense[3][c] + rest * s.dense[4][c])));
    y[c < n ? L::q + c : L::v + (c - n)] = x;
  }
  for (int j = L::lambda; j < L::size; ++j) y[j] = rest * s.y_last[j] + theta * s.y[j];
}

// The projected point y replaces the current one; the difference is added to r1, so that the dense
// output of the last step ends at y (header).
template <class Model>
LOCKSTEP_HD void dopri5_replace_current(dopri5_state<Model>& s, const state_vector<Model>& y) {
  detail::dopri5_replace_current<Model>(true, s, y);
}

}  // namespace lockstep
