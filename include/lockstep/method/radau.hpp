// lockstep/method/radau.hpp — Radau IIA with 3 stages (order 5) for one member, in the way of Hairer's
// RADAU5 (Hairer & Wanner, Solving ODEs II, IV.8; the code radau5.f), on the formulations of
// formulation/euler_lagrange.hpp.
//
// Stage equations. With Z_i = Y_i - y_n and Y'_i = h^-1 (A^-1 Z)_i (collocation), the stages solve
// F(t_n + c_i h, y_n + Z_i, Y'_i) = 0, i = 1..3. Simplified Newton with the Jacobian frozen at (t_n, y_n):
// (h^-1 A^-1 (x) F_y' + I (x) F_y) Delta Z = -F(Z). With A^-1 T = T Lambda, Lambda = [[g, 0, 0], [0, a, b],
// [0, -b, a]] and W = T^-1 Z, this splits into one real and one complex system of the formulation's
// size (IV.8 (8.15)-(8.17)):
//     J(g / h) Delta W1 = -G1,      J((a - i b) / h) (Delta W2 + i Delta W3) = -(G2 + i G3),   G = T^-1 F(Z),
// where J(c) = F_y + c F_y' is the reduced, scaled saddle-point matrix of euler_lagrange.hpp (the q' = v
// rows eliminated, as RADAU5's M1/M2 structure does): never the full 3 (2n + m) system.
//
// Error estimate (IV.8 (8.19)-(8.20), RADAU5's ESTRAD): err = J(g / h)^-1 [F_y' h^-1 sum d_i Z_i + f(y_n)],
// repeated once with f(y_n + err) after a rejection or at the first step (the "(gamma0 h)-filter" and
// its extra evaluation). Index-2 components of err are multiplied by h and index-3 components by h^2
// before the weighted RMS norm (RADAU5 with its NIND2/NIND3 index hints; Hairer, Lubich & Roche 1989),
// the same scaling in the Newton norm.
//
// Step control: RADAU5's: h_new = h / quot, quot = err^(1/4) / fac within [1/8, 5] (fac: safety 0.9
// lowered when Newton needed many iterations), combined with Gustafsson's predictive controller
// (Gustafsson 1994), h kept when the change is within [1, 1.2] so the factorizations are reused.
// Dense output: the collocation polynomial through (t_n, y_n) and (t_n + c_i h, y_n + Z_i).
#pragma once

#include <limits>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/interpolation.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/stepper/initialize.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep {

// Radau IIA (s = 3) coefficients: nodes c, A^-1 and its real Schur-like decomposition A^-1 = T Lambda T^-1,
// and the error-estimate weights d (RADAU5's DD1..DD3 = -(13 + 7 sqrt 6) / 3, (-13 + 7 sqrt 6) / 3, -1/3).
// T, T^-1 and Lambda were computed from A^-1 (eigenvector of the real eigenvalue scaled to a last entry
// of 1; real and imaginary parts of a complex eigenvector); any such T serves.
struct radau5_tableau {
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

template <class Model>
struct radau_state {
  using layout = state_layout<Model>;
  double t = 0.0;
  double h = 0.0;             // step size of the next attempt
  state_vector<Model> y;      // y_n
  state_vector<Model> yp;     // y'_n (accelerations for the Jacobian's d(M a)/dq)
  // The last accepted step, for dense output over [t - h_last, t] and to predict the next stages.
  double h_last = 0.0;
  state_vector<Model> y_last;  // y at t - h_last
  state_vector<Model> Z[3];    // its stage increments
  bool have_step = false;
  // Controller memory (Gustafsson): previous accepted step and error.
  double h_accepted = 0.0, err_accepted = 0.0;
  bool first = true, last_rejected = false;
  int newton_cuts = 0;
  double theta = 1.0;          // last Newton contraction rate (RADAU5's THETA)
  // Newton matrices at (t, y): the Jacobian is re-evaluated after every accepted step unless the
  // contraction was very fast (RADAU5: THETA <= THET = 0.001).
  jacobian_blocks<Model> jac;
  newton_matrix<Model, double> real_block;
  newton_matrix<Model, complex<double>> complex_block;
  bool jacobian_valid = false;
  double factored_h = 0.0;
};

LOCKSTEP_HD constexpr const char* radau_check_options(const solver_options& opt) {
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

namespace detail {

// Weights with RADAU5's index scaling: index-2 components count h times, index-3 components h^2
// times their raw error (so their larger errors, O(h^{-1}) and O(h^{-2}) relative, do not stall steps).
template <class Model>
LOCKSTEP_HD state_vector<Model> radau_weights(formulation f, const state_vector<Model>& y, double h,
                                              const solver_options& opt) {
  using L = state_layout<Model>;
  state_vector<Model> w;
  const double hh = min(h, 1.0);
  for (int j = 0; j < L::size; ++j) {
    const double atol = j < L::v ? opt.atol_q : (j < L::lambda ? opt.atol_v : opt.atol_lambda);
    double wj = 1.0 / (opt.rtol * abs(y[j]) + atol);
    const int index = variable_index<Model>(f, j);
    if (index == 2) wj *= hh;
    if (index == 3) wj *= hh * hh;
    if (f == formulation::index3 && j >= L::mu && j < L::nu) wj = 0.0;  // absent in index3
    w[j] = wj;
  }
  return w;
}

template <class Model>
LOCKSTEP_HD double weighted_rms(const state_vector<Model>& x, const state_vector<Model>& w) {
  double s = 0.0;
  for (int j = 0; j < state_layout<Model>::size; ++j) s += (x[j] * w[j]) * (x[j] * w[j]);
  return sqrt(s / state_layout<Model>::size);
}

// F(t, y, y') in the layout of y (the residual parts of the formulation).
template <class Model>
LOCKSTEP_HD residual_parts<Model> residual_at(formulation f, double t, const state_vector<Model>& y,
                                              const state_vector<Model>& yp, const double* p) {
  using L = state_layout<Model>;
  vec<double, Model::n> qdot, vdot;
  for (int i = 0; i < Model::n; ++i) {
    qdot[i] = yp[L::q + i];
    vdot[i] = yp[L::v + i];
  }
  return evaluate_residual<Model>(f, t, y, qdot, vdot, p);
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
  solve_newton<Model, E>(f, J, N, Fq, Fv, Fphi, Fpsi, Fa, dq, dv, dl, dm, dn);
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

}  // namespace detail

template <class Model>
LOCKSTEP_HD void radau_start(radau_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                             const solver_options& opt) {
  using L = state_layout<Model>;
  s = radau_state<Model>{};
  s.t = t0;
  for (int i = 0; i < Model::n; ++i) {
    s.y[L::q + i] = init.q[i];
    s.y[L::v + i] = init.v[i];
    s.yp[L::q + i] = init.v[i];
    s.yp[L::v + i] = init.a[i];
  }
  for (int i = 0; i < Model::m; ++i) s.y[L::lambda + i] = init.lambda[i];
  for (int i = 0; i < Model::k; ++i) s.y[L::nu + i] = init.nu[i];
  s.h = initial_step_size<Model>(t0, t1, init, opt);
}

// One step attempt (same contract as bdf_attempt).
template <class Model>
LOCKSTEP_HD attempt_result radau_attempt(radau_state<Model>& s, double t_end, const double* p,
                                         const solver_options& opt, member_counters& counters, member_status& status) {
  using L = state_layout<Model>;
  using RT = radau5_tableau;
  constexpr int ny = L::size;
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const bool fixed = opt.fixed_h > 0.0;
  const formulation form = opt.form;

  const step_plan plan = plan_step(s.t, s.h, t_end, opt);
  if (plan.too_small) {
    status = member_status::step_size_too_small;
    return attempt_result::failed;
  }
  const double h = plan.h, h_min = plan.h_min;
  const state_vector<Model> w = detail::radau_weights<Model>(form, s.y, h, opt);

  auto reject_newton = [&](member_status reason) {  // RADAU5: halve the step after a Newton failure
    s.jacobian_valid = false;
    s.last_rejected = true;
    return cut_after_newton_failure(reason, fixed, s.newton_cuts, h, 0.5, h_min, s.h, counters, status);
  };

  // The Newton solve; a second round with a fresh Jacobian when an old one failed to converge.
  state_vector<Model> Z[3];
  double theta = s.theta;
  int newton_iterations_used = 0;
  const int max_iterations = fixed ? 20 : 7;
  for (int round = 0; round < 2; ++round) {
    // ---- Jacobian at (t_n, y_n) and the two factorizations for this h ----
    bool fresh = false;
    if (!s.jacobian_valid) {
      vec<double, Model::n> vdot;
      for (int i = 0; i < Model::n; ++i) vdot[i] = s.yp[L::v + i];
      const member_status js = evaluate_jacobian<Model>(form, s.t, s.y, vdot, p, s.jac);
      ++counters.jacobian_evaluations;
      if (js != member_status::success) return reject_newton(js);
      s.jacobian_valid = true;
      s.factored_h = 0.0;
      fresh = true;
    }
    if (s.factored_h != h) {
      member_status fs = factor_newton_matrix<Model, double>(form, s.jac, RT::gamma / h, s.real_block);
      if (fs == member_status::success)
        fs = factor_newton_matrix<Model, complex<double>>(form, s.jac, complex<double>(RT::alpha / h, -RT::beta / h),
                                                            s.complex_block);
      counters.lu_factorizations += 2;
      if (fs != member_status::success) {
        s.factored_h = 0.0;
        return reject_newton(fs);
      }
      s.factored_h = h;
    }

    // ---- starting values: extrapolate the last collocation polynomial, else zero ----
    for (int i = 0; i < 3; ++i) Z[i] = state_vector<Model>{};
    if (s.have_step && !s.first) {
      double x[4] = {s.t, s.t - s.h_last + RT::c(1) * s.h_last, s.t - s.h_last + RT::c(0) * s.h_last, s.t - s.h_last};
      state_vector<Model> dd[4] = {s.y, s.y_last + s.Z[1], s.y_last + s.Z[0], s.y_last};
      divided_differences(4, x, dd, false, s.y);
      for (int i = 0; i < 3; ++i) {
        state_vector<Model> yi;
        evaluate_newton_form<L::size>(4, x, dd, s.t + RT::c(i) * h, yi, nullptr);
        Z[i] = yi - s.y;
      }
    }

    // ---- simplified Newton on the transformed stage system ----
    const double fnewt = max(10.0 * eps / opt.rtol, min(0.03, sqrt(opt.rtol)));  // RADAU5's FNEWT
    double dyno_old = 0.0, faccon = 1.0;
    theta = s.theta;
    bool converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      // Stage derivatives and residuals.
      residual_parts<Model> F[3];
      for (int i = 0; i < 3; ++i) {
        state_vector<Model> Yp;
        for (int j = 0; j < ny; ++j)
          Yp[j] = (RT::Ainv(i, 0) * Z[0][j] + RT::Ainv(i, 1) * Z[1][j] + RT::Ainv(i, 2) * Z[2][j]) / h;
        F[i] = detail::residual_at<Model>(form, s.t + RT::c(i) * h, s.y + Z[i], Yp, p);
        ++counters.model_evaluations;
        if (!all_finite(F[i])) return reject_newton(member_status::model_not_finite);
      }
      ++counters.newton_iterations;
      newton_iterations_used = it + 1;
      // G = T^-1 F (per component), then the real and complex solves.
      state_vector<Model> Ff[3] = {detail::flatten(F[0]), detail::flatten(F[1]), detail::flatten(F[2])};
      state_vector<Model> G[3];
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < ny; ++j) G[r][j] = RT::Ti(r, 0) * Ff[0][j] + RT::Ti(r, 1) * Ff[1][j] + RT::Ti(r, 2) * Ff[2][j];
      const residual_parts<Model> g1 = detail::unflatten<Model>(G[0]), g2 = detail::unflatten<Model>(G[1]), g3 = detail::unflatten<Model>(G[2]);
      state_vector<Model> dW[3];
      detail::solve_block<Model, double>(form, s.jac, s.real_block, &g1, nullptr, dW[0], nullptr);
      detail::solve_block<Model, complex<double>>(form, s.jac, s.complex_block, &g2, &g3, dW[1], &dW[2]);
      state_vector<Model> dZ[3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < ny; ++j) {
          dZ[i][j] = RT::T(i, 0) * dW[0][j] + RT::T(i, 1) * dW[1][j] + RT::T(i, 2) * dW[2][j];
          Z[i][j] = Z[i][j] + dZ[i][j];
        }
      double dyno = 0.0;
      for (int i = 0; i < 3; ++i) {
        const double d = detail::weighted_rms<Model>(dZ[i], w);
        dyno += d * d;
      }
      dyno = sqrt(dyno / 3.0);
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
  double err = 0.0;
  if (!fixed) {
    // F(y_n, -F1) with F1 = h^-1 sum d_i Z_i: its Newton solve is RADAU5's err = (g/h M - J)^-1 (M F1 + f(y_n)).
    state_vector<Model> ypt;
    for (int j = 0; j < ny; ++j) ypt[j] = -(RT::d(0) * Z[0][j] + RT::d(1) * Z[1][j] + RT::d(2) * Z[2][j]) / h;
    residual_parts<Model> r0 = detail::residual_at<Model>(form, s.t, s.y, ypt, p);
    ++counters.model_evaluations;
    state_vector<Model> e;
    detail::solve_block<Model, double>(form, s.jac, s.real_block, &r0, nullptr, e, nullptr);
    err = max(detail::weighted_rms<Model>(e, w), 1e-10);
    if (err >= 1.0 && (s.first || s.last_rejected)) {
      r0 = detail::residual_at<Model>(form, s.t, s.y + e, ypt, p);
      ++counters.model_evaluations;
      detail::solve_block<Model, double>(form, s.jac, s.real_block, &r0, nullptr, e, nullptr);
      err = max(detail::weighted_rms<Model>(e, w), 1e-10);
    }
    if (!is_finite(err)) return reject_newton(member_status::model_not_finite);
  }

  // ---- step-size proposal (RADAU5: safety 0.9 scaled by the Newton effort, quotient in [1/8... 5]) ----
  const double safe = 0.9;
  const double fac = min(safe, safe * (1 + 2 * max_iterations) / (newton_iterations_used + 2.0 * max_iterations));
  double quot = fixed ? 1.0 : max(0.2, min(8.0, pow(err, 0.25) / fac));
  double h_new = h / quot;

  if (!fixed && err >= 1.0) {
    ++counters.rejected_steps;
    s.h = s.first ? 0.1 * h : h_new;
    s.last_rejected = true;
    if (s.h < h_min) {
      status = member_status::step_size_too_small;
      return attempt_result::failed;
    }
    return attempt_result::rejected;
  }

  // ---- accept ----
  if (!fixed && !s.first) {  // Gustafsson's predictive controller (Gustafsson 1994; RADAU5 PRED)
    double facgus = (s.h_accepted / h) * pow(err * err / s.err_accepted, 0.25) / safe;
    facgus = max(0.2, min(8.0, facgus));
    quot = max(quot, facgus);
    h_new = h / quot;
  }
  s.h_accepted = h;
  s.err_accepted = max(1e-2, err);
  s.y_last = s.y;
  for (int i = 0; i < 3; ++i) s.Z[i] = Z[i];
  s.h_last = h;
  s.have_step = true;
  // y'_{n+1}: the collocation polynomial's derivative at c_3 = 1 is h^-1 (A^-1 Z)_3.
  for (int j = 0; j < ny; ++j)
    s.yp[j] = (RT::Ainv(2, 0) * Z[0][j] + RT::Ainv(2, 1) * Z[1][j] + RT::Ainv(2, 2) * Z[2][j]) / h;
  s.y = s.y + Z[2];
  s.t = s.t + h;
  s.first = false;
  ++counters.steps;
  counters.last_h = h;
  // A new Jacobian at the new point unless Newton contracted very fast (RADAU5: THETA <= THET = 0.001).
  if (theta > 0.001) s.jacobian_valid = false;
  if (fixed) {
    s.h = opt.fixed_h;
  } else {
    if (s.last_rejected) h_new = min(h_new, h);  // no growth right after a rejection (RADAU5)
    s.last_rejected = false;
    // Keep h (and the factorizations) when the change would be small (RADAU5: QUOT1 = 1, QUOT2 = 1.2).
    const double q = h_new / h;
    s.h = (s.jacobian_valid && q >= 1.0 && q <= 1.2) ? h : min(h_new, opt.h_max);
  }
  return attempt_result::accepted;
}

// Dense output: the collocation polynomial of the last accepted step, at t in [t - h_last, t].
template <class Model>
LOCKSTEP_HD void radau_dense_output(const radau_state<Model>& s, double t, state_vector<Model>& y) {
  using RT = radau5_tableau;
  const double t0 = s.t - s.h_last;
  double x[4] = {s.t, t0 + RT::c(1) * s.h_last, t0 + RT::c(0) * s.h_last, t0};
  state_vector<Model> dd[4] = {s.y, s.y_last + s.Z[1], s.y_last + s.Z[0], s.y_last};
  divided_differences(4, x, dd, false, s.y);
  evaluate_newton_form<state_layout<Model>::size>(4, x, dd, t, y, nullptr);
}

}  // namespace lockstep
