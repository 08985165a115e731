// lockstep/method/radau.hpp — the Radau IIA family for one member, in the way of Hairer's RADAU5
// (Hairer & Wanner, Solving ODEs II, IV.8; the code radau5.f), on the formulations of
// formulation/euler_lagrange.hpp: s = 3 stages (order 5, RADAU5 itself), s = 2 (order 3, Mantegazza & Masarati 2012,
// eq. 79) and s = 1 (backward Euler). One implementation, templated on the tableau.
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

#include <limits>
#include <type_traits>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
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
  // Coefficient arrays live inside LOCKSTEP_HD functions: a static constexpr array member has host
  // storage only and cannot be indexed in device code.
  LOCKSTEP_HD static constexpr double c(int i) {
    constexpr double v[3] = {0.15505102572168222, 0.6449489742783178, 1.0};  // (4 -+ sqrt 6) / 10, 1
    return v[i];
  }
  static constexpr double gamma = 3.637834252744496;
  static constexpr double alpha = 2.681082873627754;
  static constexpr double beta = 3.0504301992474123;
  LOCKSTEP_HD static constexpr double T(int i, int j) {
    constexpr double v[3][3] = {{0.09443876248897537, 0.12845806217830086, -0.0273086547513214},
                                {0.2502131229653336, -0.18563595103095717, 0.3482489043965752},
                                {1.0, -0.909403517646862, 0.0}};
    return v[i][j];
  }
  LOCKSTEP_HD static constexpr double Ti(int i, int j) {
    constexpr double v[3][3] = {{4.178718591551905, 0.3276828207610616, 0.523376445499449},
                                {4.59501036719607, 0.36032719733585505, -0.5241056860367596},
                                {-0.5529697490581569, 2.8281471315512685, -0.6554177471960014}};
    return v[i][j];
  }
  // A^-1 (for the stage derivatives Y' = h^-1 A^-1 Z).
  LOCKSTEP_HD static constexpr double Ainv(int i, int j) {
    constexpr double v[3][3] = {{3.2247448713915885, 1.1678400846904056, -0.253197264742181},
                                {-3.5678400846904053, 0.7752551286084111, 1.053197264742181},
                                {5.531972647421811, -7.531972647421809, 5.0}};
    return v[i][j];
  }
  LOCKSTEP_HD static constexpr double d(int i) {
    constexpr double v[3] = {-10.048809399827414, 1.382142733160748, -0.3333333333333333};
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
  LOCKSTEP_HD static constexpr double c(int i) {
    constexpr double v[2] = {1.0 / 3.0, 1.0};
    return v[i];
  }
  static constexpr double gamma = 0.0;  // no real eigenvalue
  static constexpr double alpha = 2.0;
  static constexpr double beta = 1.4142135623730951;  // sqrt 2
  LOCKSTEP_HD static constexpr double T(int i, int j) {
    constexpr double v[2][2] = {{1.0, 0.0}, {1.0, 2.8284271247461903}};
    return v[i][j];
  }
  LOCKSTEP_HD static constexpr double Ti(int i, int j) {
    constexpr double v[2][2] = {{1.0, 0.0}, {-0.35355339059327373, 0.35355339059327373}};  // 1 / (2 sqrt 2)
    return v[i][j];
  }
  LOCKSTEP_HD static constexpr double Ainv(int i, int j) {
    constexpr double v[2][2] = {{1.5, 0.5}, {-4.5, 2.5}};
    return v[i][j];
  }
  LOCKSTEP_HD static constexpr double d(int i) {
    constexpr double v[2] = {-4.5, 0.5};
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

// Weights with RADAU5's index scaling: index-2 components count h times, index-3 components h^2
// times their raw error (so their larger errors, O(h^{-1}) and O(h^{-2}) relative, do not stall steps),
// at the internal tolerances of method/tolerance_calibration.hpp.
template <class Model>
LOCKSTEP_HD state_vector<Model> radau_weights(formulation f, const state_vector<Model>& y, double h,
                                              const solver_options& opt, std::uint64_t dropped = 0) {
  using L = state_layout<Model>;
  state_vector<Model> w;
  const double hh = min(h, 1.0);
  const double factor = internal_tolerance_factor(opt);
  for (int j = 0; j < L::size; ++j) {
    double wj = tolerance_weight(factor, opt.rtol, y[j], factor * absolute_tolerance<Model>(opt, j));
    const int index = variable_index<Model>(f, j);
    if (index == 2) wj *= hh;
    if (index == 3) wj *= hh * hh;
    if (!uses_mu(f) && j >= L::mu && j < L::nu) wj = 0.0;  // absent in index3 and index1
    w[j] = wj;
  }
  // The multipliers of dropped constraint rows (jacobian_blocks::dropped) are held, not solved for:
  // weight 0, so that they count neither in the norms nor in their means.
  for (int a = 0; dropped != 0 && a < Model::m; ++a)
    if (row_dropped(dropped, a)) w[L::lambda + a] = w[L::mu + a] = 0.0;
  for (int a = 0; dropped != 0 && a < Model::k; ++a)
    if (row_dropped(dropped, Model::m + a)) w[L::nu + a] = 0.0;
  return w;
}

// F(t, y, y') in the layout of y (the residual parts of the formulation).
template <class Model>
LOCKSTEP_HD residual_parts<Model> residual_at(formulation f, double t, const state_vector<Model>& y,
                                              const state_vector<Model>& yp, const double* p,
                                              baumgarte_gains gains = {}) {
  using L = state_layout<Model>;
  vec<double, Model::n> qdot, vdot;
  for (int i = 0; i < Model::n; ++i) {
    qdot[i] = yp[L::q + i];
    vdot[i] = yp[L::v + i];
  }
  return evaluate_residual<Model>(f, t, y, qdot, vdot, p, gains);
}

// One transformed block: J(c) Delta = -(F_re + i F_im) by the reduced Newton solve of
// euler_lagrange.hpp; E = double (real block, F_im absent) or complex<double>. The increment comes back
// split into real and imaginary parts in the layout of y.
template <class Model, class E>
LOCKSTEP_HD void solve_block(formulation f, const jacobian_blocks<Model>& J, const newton_matrix<Model, E>& N,
                             const residual_parts<Model>* parts_re, const residual_parts<Model>* parts_im,
                             state_vector<Model>& out_re, state_vector<Model>* out_im) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  vec<E, n> Fq, Fv;
  vec<E, m> Fphi, Fpsi;
  vec<E, k> Fa;
  auto make = [&](double re, double im) {
    if constexpr (std::is_same_v<E, double>) {
      (void)im;
      return re;
    } else {
      return E(re, im);
    }
  };
  for (int i = 0; i < n; ++i) {
    Fq[i] = make(parts_re->Fq[i], parts_im ? parts_im->Fq[i] : 0.0);
    Fv[i] = make(parts_re->Fv[i], parts_im ? parts_im->Fv[i] : 0.0);
  }
  for (int i = 0; i < m; ++i) {
    Fphi[i] = make(parts_re->Fphi[i], parts_im ? parts_im->Fphi[i] : 0.0);
    Fpsi[i] = make(parts_re->Fpsi[i], parts_im ? parts_im->Fpsi[i] : 0.0);
  }
  for (int i = 0; i < k; ++i) Fa[i] = make(parts_re->Fa[i], parts_im ? parts_im->Fa[i] : 0.0);
  vec<E, n> dq, dv;
  vec<E, m> dl, dm;
  vec<E, k> dn;
  phase<separate_newton_phases<Model>>([&] { solve_newton<Model, E>(f, J, N, Fq, Fv, Fphi, Fpsi, Fa, dq, dv, dl, dm, dn); });
  auto re = [](const E& x) {
    if constexpr (std::is_same_v<E, double>) return x; else return x.re;
  };
  auto im = [](const E& x) {
    if constexpr (std::is_same_v<E, double>) { (void)x; return 0.0; } else return x.im;
  };
  for (int i = 0; i < n; ++i) {
    out_re[L::q + i] = re(dq[i]);
    out_re[L::v + i] = re(dv[i]);
    if (out_im) {
      (*out_im)[L::q + i] = im(dq[i]);
      (*out_im)[L::v + i] = im(dv[i]);
    }
  }
  for (int i = 0; i < m; ++i) {
    out_re[L::lambda + i] = re(dl[i]);
    out_re[L::mu + i] = re(dm[i]);
    if (out_im) {
      (*out_im)[L::lambda + i] = im(dl[i]);
      (*out_im)[L::mu + i] = im(dm[i]);
    }
  }
  for (int i = 0; i < k; ++i) {
    out_re[L::nu + i] = re(dn[i]);
    if (out_im) (*out_im)[L::nu + i] = im(dn[i]);
  }
}

// Residual parts as a flat vector in the layout of y (rows in the order of the unknowns they pin).
template <class Model>
LOCKSTEP_HD state_vector<Model> flatten(const residual_parts<Model>& r) {
  using L = state_layout<Model>;
  state_vector<Model> x;
  for (int i = 0; i < Model::n; ++i) {
    x[L::q + i] = r.Fq[i];
    x[L::v + i] = r.Fv[i];
  }
  for (int i = 0; i < Model::m; ++i) {
    x[L::lambda + i] = r.Fphi[i];
    x[L::mu + i] = r.Fpsi[i];
  }
  for (int i = 0; i < Model::k; ++i) x[L::nu + i] = r.Fa[i];
  return x;
}

template <class Model>
LOCKSTEP_HD residual_parts<Model> unflatten(const state_vector<Model>& x) {
  using L = state_layout<Model>;
  residual_parts<Model> r;
  for (int i = 0; i < Model::n; ++i) {
    r.Fq[i] = x[L::q + i];
    r.Fv[i] = x[L::v + i];
  }
  for (int i = 0; i < Model::m; ++i) {
    r.Fphi[i] = x[L::lambda + i];
    r.Fpsi[i] = x[L::mu + i];
  }
  for (int i = 0; i < Model::k; ++i) r.Fa[i] = x[L::nu + i];
  return r;
}

// sum_l coef(l) X[l][j] over S stages, accumulated from the first term in stage order: bitwise the
// written-out sum coef(0) X[0][j] + coef(1) X[1][j] + ...
template <int S, class Coef, class V>
LOCKSTEP_HD double stage_sum(const Coef& coef, const V* X, int j) {
  double sum = coef(0) * X[0][j];
  for (int l = 1; l < S; ++l) sum += coef(l) * X[l][j];
  return sum;
}

// The collocation polynomial of the last accepted step in Newton form (divided differences), nodes
// newest first: t_n, the interior stages t_{n-1} + c_i h_last for i = s-2 .. 0, then t_{n-1}.
template <class Model, class RT>
LOCKSTEP_HD void collocation_polynomial(const radau_state<Model, RT>& s, double* x, state_vector<Model>* dd) {
  constexpr int ns = RT::stages;
  const double t0 = s.t - s.h_last;
  x[0] = s.t;
  dd[0] = s.y;
  for (int i = 1; i < ns; ++i) {
    x[i] = t0 + RT::c(ns - 1 - i) * s.h_last;
    dd[i] = s.y_last + s.Z[ns - 1 - i];
  }
  x[ns] = t0;
  dd[ns] = s.y_last;
  divided_differences(ns + 1, x, dd, false, s.y);
}

// The filter of the error estimate (header comment): e + i e_im solves J(g / h) (e + i e_im) = -r, with
// the real block when A^-1 has a real eigenvalue (e_im = 0), else with the complex block.
template <class Model, class RT>
LOCKSTEP_HD void filter_error(formulation f, const radau_state<Model, RT>& s, const residual_parts<Model>& r,
                              state_vector<Model>& e, state_vector<Model>& e_im) {
  if constexpr (RT::has_real_eigenvalue) {
    solve_block<Model, double>(f, s.jac, s.real_block, &r, nullptr, e, nullptr);
    e_im = state_vector<Model>{};
  } else {
    solve_block<Model, complex<double>>(f, s.jac, s.complex_block, &r, nullptr, e, &e_im);
  }
}

// The scaled error norm of a filtered estimate (at least 1e-10, as RADAU5).
template <class Model, class RT>
LOCKSTEP_HD double error_norm(const state_vector<Model>& e, const state_vector<Model>& e_im,
                              const state_vector<Model>& w) {
  if constexpr (RT::has_real_eigenvalue) {
    (void)e_im;
    return max(weighted_rms(e, w), 1e-10);
  } else {
    const double re = weighted_rms(e, w), im = weighted_rms(e_im, w);
    return max(sqrt(re * re + im * im), 1e-10);
  }
}

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

// One step attempt (same contract as bdf_attempt, with the step's companion).
template <class Model, class RT, class Companion = no_companion>
LOCKSTEP_HD attempt_result radau_attempt(radau_state<Model, RT>& s, double t_end, const double* p,
                                         const solver_options& opt, member_counters& counters, member_status& status,
                                         Companion&& companion = Companion{}) {
  using L = state_layout<Model>;
  constexpr int ny = L::size;
  constexpr int ns = RT::stages;
  constexpr int pair = RT::has_real_eigenvalue ? 1 : 0;  // where the complex pair sits in W = T^-1 Z
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const bool fixed = opt.fixed_h > 0.0;
  const formulation form = opt.form;

  const step_plan plan = plan_step(s.t, s.h, t_end, opt, s.t0);
  if (step_too_small(plan, status)) return attempt_result::failed;
  const double h = plan.h, h_min = plan.h_min;
  const state_vector<Model> w = detail::radau_weights<Model>(form, s.y, h, opt, s.jac.dropped);

  auto reject_newton = [&](member_status reason) {  // RADAU5: halve the step after a Newton failure
    s.jacobian_valid = false;
    s.last_rejected = true;
    return cut_after_newton_failure(reason, fixed, s.newton_cuts, h, 0.5, h_min, s.h, counters, status);
  };

  // The Newton solve; a second round with a fresh Jacobian when an old one failed to converge.
  state_vector<Model> Z[ns];
  double theta = s.theta;
  int newton_iterations_used = 0;
  const int max_iterations = detail::radau_newton_iteration_limit(fixed);
  // A replay of a suspended attempt (method/attempt.hpp) keeps the freshness of its Jacobian.
  const bool resumed_fresh = s.external.resuming && s.external.fresh;
  s.external.resuming = false;
  for (int round = 0; round < 2; ++round) {
    // ---- Jacobian at (t_n, y_n) and the factorizations for this h ----
    bool fresh = round == 0 && resumed_fresh;
    if (!s.jacobian_valid) {
      vec<double, Model::n> vdot;
      for (int i = 0; i < Model::n; ++i) vdot[i] = s.yp[L::v + i];
      const member_status js = evaluate_jacobian<Model>(form, s.t, s.y, vdot, p, s.jac, baumgarte_of(opt));
      ++counters.jacobian_evaluations;
      if (js != member_status::success) return reject_newton(js);
      s.jacobian_valid = true;
      s.factored_h = 0.0;
      fresh = true;
    }
    if (s.factored_h != h) {
      member_status fs = member_status::success;
      if (s.external.enabled) {  // the split path: take the factors for this h, or suspend for them
        if (!(s.external.ready && s.external.key == h)) {
          if constexpr (RT::has_real_eigenvalue) assemble_newton_matrix<Model, double>(form, s.jac, RT::gamma / h, s.real_block);
          if constexpr (RT::has_complex_pair)
            assemble_newton_matrix<Model, complex<double>>(form, s.jac, complex<double>(RT::alpha / h, -RT::beta / h),
                                                           s.complex_block);
          s.external = external_factors{true, true, false, true, fresh, member_status::success, h};
          return attempt_result::suspended;
        }
        s.external.ready = false;
        fs = s.external.status;
      } else {
        if constexpr (RT::has_real_eigenvalue)
          fs = factor_newton_matrix<Model, double>(form, s.jac, RT::gamma / h, s.real_block);
        if constexpr (RT::has_complex_pair)
          if (fs == member_status::success)
            fs = factor_newton_matrix<Model, complex<double>>(form, s.jac, complex<double>(RT::alpha / h, -RT::beta / h),
                                                                s.complex_block);
      }
      counters.lu_factorizations += (RT::has_real_eigenvalue ? 1 : 0) + (RT::has_complex_pair ? 1 : 0);
      if (fs != member_status::success) {
        s.factored_h = 0.0;
        return reject_newton(fs);
      }
      s.factored_h = h;
    }

    // ---- starting values: extrapolate the last collocation polynomial, else zero ----
    // A phase for the double pendulum's step kernels (separate_newton_phases, formulation/euler_lagrange.hpp).
    for (int i = 0; i < ns; ++i) Z[i] = state_vector<Model>{};
    if (s.have_step && !s.first) phase<separate_newton_phases<Model>>([&] {
      double x[ns + 1];
      state_vector<Model> dd[ns + 1];
      detail::collocation_polynomial(s, x, dd);
      for (int i = 0; i < ns; ++i) {
        state_vector<Model> yi;
        detail::evaluate_newton_form(ns + 1, ns + 1, x, dd, s.t + RT::c(i) * h, yi, nullptr);
        Z[i] = yi - s.y;
      }
    });

    // ---- simplified Newton on the transformed stage system ----
    const double rtol = internal_tolerance_factor(opt) * opt.rtol;
    const double fnewt = max(10.0 * eps / rtol, min(0.03, sqrt(rtol)));  // RADAU5's FNEWT, at its own rtol'

    double dyno_old = 0.0, faccon = 1.0;
    theta = s.theta;
    bool converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      // Stage derivatives and residuals, flattened into the layout of y.
      state_vector<Model> Ff[ns];
      for (int i = 0; i < ns; ++i) {
        state_vector<Model> Yp;
        for (int j = 0; j < ny; ++j) Yp[j] = detail::stage_sum<ns>([i](int l) { return RT::Ainv(i, l); }, Z, j) / h;
        const residual_parts<Model> Fi =
            detail::residual_at<Model>(form, s.t + RT::c(i) * h, s.y + Z[i], Yp, p, baumgarte_of(opt));
        ++counters.model_evaluations;
        if (!all_finite(Fi)) return reject_newton(member_status::model_not_finite);
        Ff[i] = detail::flatten(Fi);
      }
      ++counters.newton_iterations;
      newton_iterations_used = it + 1;
      // G = T^-1 F (per component), then the real and complex solves.
      state_vector<Model> G[ns];
      for (int r = 0; r < ns; ++r)
        for (int j = 0; j < ny; ++j) G[r][j] = detail::stage_sum<ns>([r](int l) { return RT::Ti(r, l); }, Ff, j);
      state_vector<Model> dW[ns];
      if constexpr (RT::has_real_eigenvalue) {
        const residual_parts<Model> g = detail::unflatten<Model>(G[0]);
        detail::solve_block<Model, double>(form, s.jac, s.real_block, &g, nullptr, dW[0], nullptr);
      }
      if constexpr (RT::has_complex_pair) {
        const residual_parts<Model> g_re = detail::unflatten<Model>(G[pair]), g_im = detail::unflatten<Model>(G[pair + 1]);
        detail::solve_block<Model, complex<double>>(form, s.jac, s.complex_block, &g_re, &g_im, dW[pair], &dW[pair + 1]);
      }
      state_vector<Model> dZ[ns];
      for (int i = 0; i < ns; ++i)
        for (int j = 0; j < ny; ++j) {
          dZ[i][j] = detail::stage_sum<ns>([i](int l) { return RT::T(i, l); }, dW, j);
          Z[i][j] = Z[i][j] + dZ[i][j];
        }
      double dyno = 0.0;
      for (int i = 0; i < ns; ++i) {
        const double d = detail::weighted_rms(dZ[i], w);
        dyno += d * d;
      }
      dyno = sqrt(dyno / double(ns));
      if (!is_finite(dyno)) return reject_newton(member_status::model_not_finite);
      if (it >= 1) {
        const double thq = dyno / dyno_old;
        theta = it == 1 ? thq : sqrt(thq * theta);
        // Divergence (RADAU5: unexpected step rejection), judged from the second contraction on: as
        // for BDF, the first correction of index-3 multipliers may overshoot.
        if (theta >= 0.99) {
          if (it >= 2) break;
          dyno_old = max(dyno, eps);
          continue;
        }
        faccon = theta / (1.0 - theta);
      }
      dyno_old = max(dyno, eps);
      if (faccon * dyno <= fnewt || dyno <= 1e-3 * fnewt) {  // RADAU5: FACCON * DYNO <= FNEWT
        converged = true;
        break;
      }
    }
    if (!converged) {
      if (!fresh) {  // retry once with a Jacobian evaluated at this point
        s.jacobian_valid = false;
        continue;
      }
      return reject_newton(member_status::success);
    }
    break;
  }
  s.newton_cuts = 0;
  s.theta = theta;

  // ---- error estimate (adaptive only) ----
  // A phase for the double pendulum's step kernels (separate_newton_phases, formulation/euler_lagrange.hpp).
  double err = 0.0;
  if (!fixed) {
    phase<separate_newton_phases<Model>>([&] {
      // F(y_n, -F1) with F1 = h^-1 sum d_i Z_i: its Newton solve is RADAU5's err = (g/h M - J)^-1 (M F1 + f(y_n)).
      state_vector<Model> ypt;
      for (int j = 0; j < ny; ++j) ypt[j] = -detail::stage_sum<ns>([](int l) { return RT::d(l); }, Z, j) / h;
      residual_parts<Model> r0 = detail::residual_at<Model>(form, s.t, s.y, ypt, p, baumgarte_of(opt));
      ++counters.model_evaluations;
      state_vector<Model> e, e_im, w_error = w;
      for (int j = 0; j < ny; ++j)
        if (variable_index<Model>(form, j) == 1) w_error[j] = w[j] * RT::error_scale;  // the Milne factor
      detail::filter_error(form, s, r0, e, e_im);
      err = detail::error_norm<Model, RT>(e, e_im, w_error);
      if (err >= 1.0 && (s.first || s.last_rejected)) {
        // The second application of the filter, at y_n + Re(err) (err itself for a real g).
        r0 = detail::residual_at<Model>(form, s.t, s.y + e, ypt, p, baumgarte_of(opt));
        ++counters.model_evaluations;
        detail::filter_error(form, s, r0, e, e_im);
        err = detail::error_norm<Model, RT>(e, e_im, w_error);
      }
    });
    if (!is_finite(err)) return reject_newton(member_status::model_not_finite);
    s.error = err;
  }
  // The companion's step, only where the state's passed: a rejection by the state alone costs it nothing.
  const bool state_passed = fixed || err < 1.0;
  if (state_passed) {
    const member_status cs = companion.solve(radau_converged_step<Model, RT>{h, Z, s});
    if (cs != member_status::success) {
      status = cs;
      return attempt_result::failed;
    }
    if (!fixed) err = max(err, companion.estimate());
  }

  // ---- step-size proposal and decision (method/radau_step_control.hpp) ----
  s.newton_iterations = newton_iterations_used;
  const double fac = detail::radau_safety_factor(double(newton_iterations_used), max_iterations);
  double quot = fixed ? 1.0 : detail::radau_error_quotient(err, ns, fac);

  if (!fixed && !(err < 1.0)) {
    ++counters.rejected_steps;
    if (state_passed) companion.rejected();
    if (detail::radau_after_error_failure(true, h, quot, s.first, h_min, s.h, s.last_rejected)) {
      status = member_status::step_size_too_small;
      return attempt_result::failed;
    }
    return attempt_result::rejected;
  }

  // ---- accept ----
  if (!fixed) quot = detail::radau_accepted_quotient(quot, h, err, ns, s.first, s.h_accepted, s.err_accepted);
  detail::radau_remember_accepted(true, h, err, s.h_accepted, s.err_accepted);
  s.y_last = s.y;
  for (int i = 0; i < ns; ++i) s.Z[i] = Z[i];
  s.h_last = h;
  s.have_step = true;
  // y'_{n+1}: the collocation polynomial's derivative at c_s = 1 is h^-1 (A^-1 Z)_s.
  for (int j = 0; j < ny; ++j) s.yp[j] = detail::stage_sum<ns>([](int l) { return RT::Ainv(ns - 1, l); }, Z, j) / h;
  s.y = s.y + Z[ns - 1];
  s.t = fixed ? plan.t_new : s.t + h;
  s.first = false;
  ++counters.steps;
  counters.last_h = h;
  // A new Jacobian at the new point unless Newton contracted fast (RADAU5: THETA <= THET).
  if (theta > detail::radau_jacobian_reuse_theta) s.jacobian_valid = false;
  if (fixed) {
    s.h = opt.fixed_h;
  } else {
    s.h = detail::radau_next_step(h, quot, s.last_rejected, s.jacobian_valid, opt.h_max);
    s.last_rejected = false;
  }
  companion.accept();
  return attempt_result::accepted;
}

// Dense output: the collocation polynomial of the last accepted step, at t in [t - h_last, t].
template <class Model, class RT>
LOCKSTEP_HD void radau_dense_output(const radau_state<Model, RT>& s, double t, state_vector<Model>& y) {
  constexpr int ns = RT::stages;
  double x[ns + 1];
  state_vector<Model> dd[ns + 1];
  detail::collocation_polynomial(s, x, dd);
  detail::evaluate_newton_form(ns + 1, ns + 1, x, dd, t, y, nullptr);
}

}  // namespace lockstep
