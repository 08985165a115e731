// lockstep/method/radau.hpp — the Radau IIA family for one member, in the way of Hairer's RADAU5
// (Hairer & Wanner, Solving ODEs II, IV.8; the code radau5.f), on the formulations of
// formulation/euler_lagrange.hpp: s = 3 stages (order 5, RADAU5 itself), s = 2 (order 3, Mantegazza & Masarati 2012,
// eq. 79) and s = 1 (backward Euler). One implementation, templated on the tableau; its step attempt
// is one text for one member and for SIMD lanes (method/radau_attempt_generic.inc), compiled here for
// one member's doubles.
//
// Stage equations. With Z_i = Y_i - y_n and Y'_i = h^-1 (A^-1 Z)_i (collocation), the stages solve
// F(t_n + c_i h, y_n + Z_i, Y'_i) = 0, i = 1..s. Simplified Newton with the Jacobian frozen at (t_n, y_n):
// (h^-1 A^-1 (x) F_y' + I (x) F_y) Delta Z = -F(Z). With A^-1 T = T Lambda and W = T^-1 Z this splits
// into systems of the formulation's size (IV.8 (8.15)-(8.17)): one real system J(g / h) Delta W = -G per
// real eigenvalue g of A^-1 and one complex system J((a - i b) / h) (Delta W' + i Delta W'') =
// -(G' + i G'') per complex pair a +- i b (Lambda holds [[a, b], [-b, a]] for it), G = T^-1 F(Z). s = 3
// has one of each, s = 2 one complex pair (A^-1 = [[3/2, 1/2], [-9/2, 5/2]], eigenvalues 2 +- i sqrt 2),
// s = 1 the real eigenvalue 1. J(c) = F_y + c F_y' is the reduced, scaled saddle-point matrix of
// euler_lagrange.hpp (the q' = v rows eliminated, as RADAU5's M1/M2 structure does): never the full
// s (2n + m) system.
//
// Error estimate (IV.8 (8.19)-(8.20), RADAU5's ESTRAD). An embedded formula y^ = y_n + h (gamma0
// f(y_n) + sum b^_i f(Y_i)) of order s has y^ - y_{n+1} = gamma0 (h f(y_n) + sum d_i Z_i) with d
// independent of gamma0 (d^T = u^T A^-1, sum u_i c_i^k = -[k = 0] for k < s); filtered by
// (I - h gamma0 J)^-1 so that stiff components stay bounded, it reads
//     err = J(g / h)^-1 [F_y' h^-1 sum d_i Z_i + f(y_n)],   g = 1 / gamma0,
// repeated once with f(y_n + err) after a rejection or at the first step (the second application of
// the filter). RADAU5 takes g the real eigenvalue of A^-1, whose matrix is factored already:
//   s = 3: d = RADAU5's DD1..DD3, g = gamma; err = O(h^4).
//   s = 2: d = (-9/2, 1/2). A^-1 has no real eigenvalue, and a real g would cost a third factorization
//          per Jacobian; we take g = a - i b, the complex block's shift. gamma0 = 1 / (a - i b) is then
//          complex: err is complex, and both its real and imaginary parts are filtered O(h^3) local
//          errors of real order-2 formulas (for non-stiff components err -> gamma0 (h f(y_n) + sum d_i Z_i),
//          of modulus |gamma0| = 1/sqrt 6 times the real formula's). The norm is that of (Re, Im).
//   s = 1: d = -1, g = 1: y^ is explicit Euler, and y^ - y_{n+1} = -h^2 y'' + O(h^3) is twice backward
//          Euler's local error (Milne's device: the error constants are +1/2 and -1/2), so err is halved
//          in the index-1 components. Index-2 components (v on index3, the multipliers on ggl) have a
//          first-order local error that the filtered err matches without the factor: one step from the
//          exact pendulum, err / true local error = 1.00 for them and 0.91 for q (index-3 lambda is
//          left to the h^2 scaling below).
// err = O(h^(s+1)) drives the step size with exponent 1 / (s + 1). Index-2 components of err are
// multiplied by h and index-3 components by h^2 before the weighted RMS norm (RADAU5 with its
// NIND2/NIND3 index hints; Hairer, Lubich & Roche 1989), the same scaling in the Newton norm.
//
// Step control: RADAU5's, h_new / h within [0.2, 8], with Gustafsson's predictive controller
// (Gustafsson 1994); method/radau_step_control.hpp states the rules and holds them for this method and
// its tangents.
// Dense output: the collocation polynomial through (t_n, y_n) and (t_n + c_i h, y_n + Z_i).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/corrector.hpp"
#include "lockstep/method/error_weights.hpp"
#include "lockstep/method/interpolation.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// A tableau: the number of stages, the nodes c, A^-1 and its real Schur-like decomposition
// A^-1 = T Lambda T^-1 (Lambda: the real eigenvalue gamma first when there is one, then the block
// [[alpha, beta], [-beta, alpha]] of a complex pair), the error-estimate weights d and the factor that
// makes err an estimate of the local error (header comment).
//
// Radau IIA (s = 3) coefficients: d = RADAU5's DD1..DD3 = -(13 + 7 sqrt 6) / 3, (-13 + 7 sqrt 6) / 3, -1/3.
// T, T^-1 and Lambda were computed from A^-1 (eigenvector of the real eigenvalue scaled to a last entry
// of 1; real and imaginary parts of a complex eigenvector); any such T serves.
struct radau5_tableau {
  static constexpr int stages = 3;
  static constexpr bool has_real_eigenvalue = true;
  static constexpr bool has_complex_pair = true;
  static constexpr double error_scale = 1.0;
  // Coefficient arrays are function-local statics of LOCKSTEP_HD functions: a static constexpr array
  // member has host storage only and cannot be indexed in device code, while a function-local static
  // is a __device__ array there. Static, not automatic: GCC builds an automatic constant array on the
  // stack at every call whose index it cannot fold (a zeroing `rep stos` and a store per entry),
  // once per stage where the explicit pairs' stage loop is not unrolled; a static one is read-only
  // data, and an index known at compile time still folds to the constant.
  LOCKSTEP_HD static double c(int i) {
    static constexpr double v[3] = {0.15505102572168222, 0.6449489742783178, 1.0};  // (4 -+ sqrt 6) / 10, 1
    return v[i];
  }
  static constexpr double gamma = 3.637834252744496;
  static constexpr double alpha = 2.681082873627754;
  static constexpr double beta = 3.0504301992474123;
  LOCKSTEP_HD static double T(int i, int j) {
    static constexpr double v[3][3] = {{0.09443876248897537, 0.12845806217830086, -0.0273086547513214},
                                       {0.2502131229653336, -0.18563595103095717, 0.3482489043965752},
                                       {1.0, -0.909403517646862, 0.0}};
    return v[i][j];
  }
  LOCKSTEP_HD static double Ti(int i, int j) {
    static constexpr double v[3][3] = {{4.178718591551905, 0.3276828207610616, 0.523376445499449},
                                       {4.59501036719607, 0.36032719733585505, -0.5241056860367596},
                                       {-0.5529697490581569, 2.8281471315512685, -0.6554177471960014}};
    return v[i][j];
  }
  // A^-1 (for the stage derivatives Y' = h^-1 A^-1 Z).
  LOCKSTEP_HD static double Ainv(int i, int j) {
    static constexpr double v[3][3] = {{3.2247448713915885, 1.1678400846904056, -0.253197264742181},
                                       {-3.5678400846904053, 0.7752551286084111, 1.053197264742181},
                                       {5.531972647421811, -7.531972647421809, 5.0}};
    return v[i][j];
  }
  LOCKSTEP_HD static double d(int i) {
    static constexpr double v[3] = {-10.048809399827414, 1.382142733160748, -0.3333333333333333};
    return v[i];
  }
};

// Radau IIA (s = 2, order 3; Mantegazza & Masarati 2012, eq. 79: A = [[5/12, -1/12], [3/4, 1/4]], c = (1/3, 1)).
// A^-1 = [[3/2, 1/2], [-9/2, 5/2]] has the eigenvalues 2 +- i sqrt 2; t1 - i t2 = (1, 1 - 2 sqrt 2 i) is
// an eigenvector of 2 - i sqrt 2, so T = [t1 t2] = [[1, 0], [1, 2 sqrt 2]] gives A^-1 T = T Lambda.
// d = (-9/2, 1/2): u = (-3/2, 1/2) solves u1 + u2 = -1, u1 / 3 + u2 = 0, and d^T = u^T A^-1.
struct radau3_tableau {
  static constexpr int stages = 2;
  static constexpr bool has_real_eigenvalue = false;
  static constexpr bool has_complex_pair = true;
  static constexpr double error_scale = 1.0;
  LOCKSTEP_HD static double c(int i) {
    static constexpr double v[2] = {1.0 / 3.0, 1.0};
    return v[i];
  }
  static constexpr double gamma = 0.0;  // no real eigenvalue
  static constexpr double alpha = 2.0;
  static constexpr double beta = 1.4142135623730951;  // sqrt 2
  LOCKSTEP_HD static double T(int i, int j) {
    static constexpr double v[2][2] = {{1.0, 0.0}, {1.0, 2.8284271247461903}};
    return v[i][j];
  }
  LOCKSTEP_HD static double Ti(int i, int j) {
    static constexpr double v[2][2] = {{1.0, 0.0}, {-0.35355339059327373, 0.35355339059327373}};  // 1 / (2 sqrt 2)
    return v[i][j];
  }
  LOCKSTEP_HD static double Ainv(int i, int j) {
    static constexpr double v[2][2] = {{1.5, 0.5}, {-4.5, 2.5}};
    return v[i][j];
  }
  LOCKSTEP_HD static double d(int i) {
    static constexpr double v[2] = {-4.5, 0.5};
    return v[i];
  }
};

// Radau IIA (s = 1) is backward Euler: A = A^-1 = T = 1, c = 1; d = -1 and the factor 1/2 of Milne's
// device (header comment).
struct euler_tableau {
  static constexpr int stages = 1;
  static constexpr bool has_real_eigenvalue = true;
  static constexpr bool has_complex_pair = false;
  static constexpr double error_scale = 0.5;  // of the index-1 components
  LOCKSTEP_HD static constexpr double c(int) { return 1.0; }
  static constexpr double gamma = 1.0;
  static constexpr double alpha = 0.0;  // no complex pair
  static constexpr double beta = 0.0;
  LOCKSTEP_HD static constexpr double T(int, int) { return 1.0; }
  LOCKSTEP_HD static constexpr double Ti(int, int) { return 1.0; }
  LOCKSTEP_HD static constexpr double Ainv(int, int) { return 1.0; }
  LOCKSTEP_HD static constexpr double d(int) { return -1.0; }
};

// Stands in for the Newton matrix of an eigenvalue kind the tableau does not have.
struct absent_newton_matrix {};

template <class Model, class Tableau = radau5_tableau>
struct radau_state {
  using layout = state_layout<Model>;
  double t = 0.0;
  double t0 = 0.0;            // start of the fixed-step grid (step_control.hpp, plan_step)
  double h = 0.0;             // step size of the next attempt
  state_vector<Model> y;      // y_n
  state_vector<Model> yp;     // y'_n (accelerations for the Jacobian's d(M a)/dq)
  // The last accepted step, for dense output over [t - h_last, t] and to predict the next stages.
  double h_last = 0.0;
  state_vector<Model> y_last;          // y at t - h_last
  state_vector<Model> Z[Tableau::stages];  // its stage increments
  bool have_step = false;
  // Controller memory (Gustafsson): previous accepted step and error.
  double h_accepted = 0.0, err_accepted = 0.0;
  bool first = true, last_rejected = false;
  int newton_cuts = 0;
  int newton_iterations = 0;   // of the last attempt that converged (the step-size proposal's safety factor)
  double theta = 1.0;          // last Newton contraction rate (RADAU5's THETA)
  double error = 0.0;          // the scaled error estimate of the last adaptive attempt (RADAU5's ERR)
  // Newton matrices at (t, y): the Jacobian is re-evaluated after every accepted step unless the
  // contraction was fast (theta <= radau_jacobian_reuse_theta; RADAU5's THET).
  jacobian_blocks<Model> jac;
  std::conditional_t<Tableau::has_real_eigenvalue, newton_matrix<Model, double>, absent_newton_matrix> real_block;
  std::conditional_t<Tableau::has_complex_pair, newton_matrix<Model, complex<double>>, absent_newton_matrix>
      complex_block;
  bool jacobian_valid = false;
  double factored_h = 0.0;
  external_factors external;  // the split path (method/attempt.hpp)
};

LOCKSTEP_HD constexpr const char* radau_check_options(const solver_options& opt) {
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

namespace detail {

// The Newton contraction rate below which an accepted step keeps its Jacobian for the next: RADAU5's
// THET = WORK(3) default, 0.001, kept by measurement. On andrews, the car axis, the slider crank and the
// double pendulum at rtol 1e-5, 1e-7, 1e-9 (Radau IIA 5 on index3, one core, minimum of 7 timings) 0.01
// took 0.89-1.02 of the time (car axis at 1e-9: 455 Jacobians instead of 1753, 7 % more Newton
// iterations) at the same digits there, but at rtol 1e-12 it cost the slider crank a digit (6.96 instead
// of 7.91 against BDF at 1e-13); 0.1 took 0.93-1.33 of the time (the slower contraction costs more
// iterations and steps than the Jacobians it saves). docs/METHODS.md has the counts.
constexpr double radau_jacobian_reuse_theta = 0.001;

// The Newton iterations an attempt may take (RADAU5's NIT = 7; fixed steps allow more, since they
// cannot cut the step instead). The step-size proposal's safety factor reads it
// (radau_step_control.hpp, radau_safety_factor).
LOCKSTEP_HD int radau_newton_iteration_limit(bool fixed) { return fixed ? 20 : 7; }

}  // namespace detail

template <class Model, class RT>
LOCKSTEP_HD void radau_start(radau_state<Model, RT>& s, double t0, double t1, const initial_values<Model>& init,
                             const solver_options& opt) {
  s = radau_state<Model, RT>{};
  s.t = t0;
  s.t0 = t0;
  initial_point(init, s.y, s.yp);
  s.h = initial_step_size<Model>(t0, t1, init, opt);
}

// An attempt's converged step as its companion sees it (method/attempt.hpp), before the member's state
// changes: the step h from (s.t, s.y), the stage increments Z_i = Y_i - y_n, and the state whose
// factored blocks filter the error estimate (filter_error).
template <class Model, class RT>
struct radau_converged_step {
  double h;
  const state_vector<Model>* Z;
  const radau_state<Model, RT>& s;
};

namespace detail {

// The dense work of the attempt for one member (radau_attempt_generic.inc's header says what each does).

template <class Model, class RT>
LOCKSTEP_HD std::uint64_t radau_dropped(const radau_state<Model, RT>& s) {
  return s.jac.dropped;
}

template <class Model, class RT>
LOCKSTEP_HD bool radau_resumed_fresh(radau_state<Model, RT>& s) {
  const bool resumed_fresh = s.external.resuming && s.external.fresh;
  s.external.resuming = false;
  return resumed_fresh;
}

template <class Model, class RT>
LOCKSTEP_HD member_status radau_jacobian(bool /*need: this member*/, formulation form, radau_state<Model, RT>& s,
                                         const double* p, const solver_options& opt) {
  vec<double, Model::n> vdot;
  for (int i = 0; i < Model::n; ++i) vdot[i] = s.yp[state_layout<Model>::v + i];
  return evaluate_jacobian<Model>(form, s.t, s.y, vdot, p, s.jac, baumgarte_of(opt));
}

template <class Model, class RT>
LOCKSTEP_HD void radau_newton_iteration(bool /*iterating: this member*/, radau_state<Model, RT>&) {}

// The real block at gamma / h and the complex block at (alpha - i beta) / h, factored here, or on the
// split path (method/attempt.hpp) taken from outside: assembled and suspended for until they are ready.
template <class Model, class RT>
LOCKSTEP_HD member_status radau_factor(bool /*need: this member*/, formulation form, double h, bool fresh,
                                       radau_state<Model, RT>& s, bool& suspended) {
  if (s.external.enabled) {
    if (!(s.external.ready && s.external.key == h)) {
      if constexpr (RT::has_real_eigenvalue) assemble_newton_matrix<Model, double>(form, s.jac, RT::gamma / h, s.real_block);
      if constexpr (RT::has_complex_pair)
        assemble_newton_matrix<Model, complex<double>>(form, s.jac, complex<double>(RT::alpha / h, -RT::beta / h),
                                                       s.complex_block);
      s.external = external_factors{true, true, false, true, fresh, member_status::success, h};
      suspended = true;
      return member_status::success;
    }
    s.external.ready = false;
    return s.external.status;
  }
  member_status fs = member_status::success;
  if constexpr (RT::has_real_eigenvalue) fs = factor_newton_matrix<Model, double>(form, s.jac, RT::gamma / h, s.real_block);
  if constexpr (RT::has_complex_pair)
    if (fs == member_status::success)
      fs = factor_newton_matrix<Model, complex<double>>(form, s.jac, complex<double>(RT::alpha / h, -RT::beta / h),
                                                          s.complex_block);
  return fs;
}

// The attempt and its parts (radau_weights, residual_at, flatten, unflatten, stage_sum, solve_block,
// collocation_polynomial, filter_error, error_norm), one text for one member here and for SIMD packs in
// lockstep/simd/radau_attempt_inl.hpp.
#include "lockstep/method/radau_attempt_generic.inc"

// radau_weights for a Jacobian without dropped rows.
template <class Model>
LOCKSTEP_HD state_vector<Model> radau_weights(formulation f, const state_vector<Model>& y, double h,
                                              const solver_options& opt) {
  return radau_weights<Model>(f, y, h, opt, std::uint64_t{0});
}

}  // namespace detail

// One step attempt (same contract as bdf_attempt, with the step's companion).
template <class Model, class RT, class Companion = no_companion>
LOCKSTEP_HD attempt_result radau_attempt(radau_state<Model, RT>& s, double t_end, const double* p,
                                         const solver_options& opt, member_counters& counters, member_status& status,
                                         Companion&& companion = Companion{}) {
  const double r = detail::radau_attempt<Model, RT>(true, s, t_end, p, opt, counters, status, companion);
  return static_cast<attempt_result>(static_cast<int>(r));
}

// Dense output: the collocation polynomial of the last accepted step, at t in [t - h_last, t].
template <class Model, class RT>
LOCKSTEP_HD void radau_dense_output(const radau_state<Model, RT>& s, double t, state_vector<Model>& y) {
  constexpr int ns = RT::stages;
  double x[ns + 1];
  state_vector<Model> dd[ns + 1];
  detail::collocation_polynomial<Model, RT>(s, x, dd);
  detail::evaluate_newton_form(ns + 1, ns + 1, x, dd, t, y, nullptr);
}

}  // namespace lockstep
