// lockstep/lyapunov/tangent.hpp — forward sensitivities (tangents) of one member's solution with
// respect to its initial state and its parameters, integrated with the member's own steps.
//
// What is differentiated. A member's numerical solution is a map from (q0, v0, p) to the sequence of
// accepted BDF points y_n = (q, v, lambda, mu, nu)_n. With the step sizes and orders held at the values
// the member chose (they are piecewise constant in the inputs), every step is the smooth map defined by
// the BDF corrector equation (method/bdf.hpp)
//
//     F(t_n, y_n, y'_pred + c (y_n - y_pred)) = 0,     (y_pred, y'_pred) = linear in the past points,
//
// so its derivative along a direction s solves the linearized corrector equation
//
//     (F_y + c F_y') s_n = -F_y' (s'_pred - c s_pred) - F_p e_j,                                  (T1)
//
// where (s_pred, s'_pred) is the same predictor applied to the past tangents, and F_p e_j appears only
// for the sensitivity to parameter j. This is the "staggered direct" method of Caracotsios & Stewart
// (1985, Comput. Chem. Eng. 9) as used in DASPK3.0 and IDAS (Maly & Petzold 1996, Appl. Numer. Math.
// 20; Feehery, Tolsma & Barton 1997, Appl. Numer. Math. 25; the IDAS guide's forward sensitivity
// chapter): after the state's Newton iteration has converged, (T1) is solved once per
// direction, with the EXACT Jacobian evaluated at the converged point (not the corrector's simplified,
// possibly stale Newton matrix: that would make the tangents depend on when the Jacobian was last
// refreshed, and be wrong by O(h) at every step). The tangent history is kept in the representation the
// state history uses (past values at the BDF nodes, plus the confluent initial derivative while t0 is in
// the window: method/interpolation.hpp), and the predictor applies the same divided differences to it,
// so the tangents are the exact derivatives of the discrete solution, not of the exact flow: they agree
// with finite differences of two member solves (with the same step sequence) to the finite-difference
// error, and with the exact variational equation to the method's global error.
//
// Constraints. The rows Phi(q_n) = 0 (lambda slot), G v + Phi_t = 0 (mu slot, ggl) and A v + a = 0
// (nu slot) are part of F, so (T1) contains their linearizations
//     G s_q = -Phi_p e_j,   Psi_q s_q + G s_v = -Psi_p e_j,   A_q s_q + A s_v = -(A v + a)_p e_j
// at every accepted point: the tangents stay in the tangent space of the constraint manifold by
// construction, to the rounding of one linear solve, and no projection of the tangents is needed
// (tests/lyapunov/tangent_test.cpp checks |G s_q| and |Psi_q s_q + G s_v| at every step). The initial
// tangents are put in that space by the exact derivative of consistent initialization (stepper/
// initialize.hpp) at a consistent point: the minimal-norm projector of Mantegazza & Masarati 2012, eq. (121), see
// initial_phase_tangent and initial_full_tangent below.
//
// Error control of the tangents (IDAS's IDASetSensErrCon; Maly & Petzold 1996). The state's error
// test does not see the tangents: where the state decays below its absolute tolerance (an attracting
// equilibrium, as for the damped linear oscillator) the steps grow without bound while the tangents,
// renormalized to size 1 by the Lyapunov QR, still need to be resolved (measured: steps of 10 time
// units and exponents wrong by 0.2-4.4 on the oscillator with d = 5). So, unless switched off, each
// direction's local error is estimated like the state's (method/bdf.hpp, LTE_k = -(s - s_pred) /
// (c (t_n - tau_{k+1}))), in the weighted RMS norm over its (q, v) parts with weights
// 1 / (rtol' (|s_j| + max_i |s_i|)) for directions in the initial state — relative to the direction's
// own size, since they have no natural absolute scale — and IDAS's parameter-scaled weights for
// parameters (detail::tangent_weighting), with BDF's internal rtol'. After a step the state accepted,
// BDF's order and step selection (method/bdf_step_control.hpp: orders k - 1, k, k + 1 after acceptance,
// the escalating cut after error-test failures) is redone on the larger of the state's and the
// tangents' estimates at each order; a step whose tangents fail the test is rejected after all (the
// state and the tangent history are restored) and counts as an error-test failure. With the state's
// estimates alone, a state decayed below its tolerance makes every order look equally good, the tie
// goes to the lowest order, and the tangents then need order-1 steps (measured: 5e5 steps for
// t = 300). Each combined estimate is at least the state's, so the state keeps its own accuracy; with
// error control off the decision is the state's alone, bitwise the plain member's.
//
// Scope. BDF on the ggl formulation (adaptive) and on index3 (fixed steps, as BDF allows), here; the
// Radau IIA methods on index3 and ggl in lyapunov/tangent_radau.hpp; no projection after steps (a
// projection is a further map the tangents would have to follow). tangent_check_options refuses every
// other combination (rho_inf, index1, projected invariants, projections) with a sentence.
//
// The linear system. (T1) is the Newton system of the corrector with the exact Jacobian at the
// converged point, so it is solved the way the corrector solves its own (formulation/euler_lagrange.hpp,
// "The Newton matrix"): the kinematic rows F_q = q' - v + G^T mu are eliminated, leaving n + 2m + k
// unknowns (not 2n + 2m + k) in a matrix scaled to a nonsingular limit as h -> 0 (Ascher & Petzold 1998, ch. 10,
// "Ill-conditioned Newton iteration matrix"). Two differences from the corrector's matrix: the blocks
// are evaluated at the converged point every accepted step, and on ggl the kinematic rows keep the term
// H = d(G^T mu)/dq that the simplified Newton matrix leaves out, so the elimination reads
// s_v = (c I + H) s_q + G^T s_mu + ..., which adds (c M - D_v) H, G H and A H to the blocks K, Psi_q and
// A_q (factor_tangent_step_matrix). The unknown is the correction to the predicted tangent,
// s = s_pred + delta, whose right-hand side is the linearized residual at the predictor: solving for s
// itself, the recovery of s_v would cancel terms of size c |s| (solve_tangent_steps). The matrix is
// factored once per accepted step by the pivoted LU and the directions are solved together
// (euler_lagrange.hpp's solve_newton_columns). Measured cost of a full spectrum: docs/LYAPUNOV.md.
#pragma once

#include <type_traits>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/stepper/initialize.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep {

// Why tangents cannot be propagated with these options ("" when they can).
LOCKSTEP_HD constexpr const char* tangent_check_options(const solver_options& opt) {
  if (opt.method == method_kind::rhoinf)
    return "tangent propagation (sensitivities, Lyapunov spectra) is implemented for bdf and the Radau IIA "
           "methods (radau5, radau3, euler), not for rhoinf: it would need its own linearized step "
           "equations, which are not implemented";
  if (opt.form != formulation::ggl && opt.form != formulation::index3)
    return "tangent propagation supports the formulations ggl and index3 only (bdf: index3 with fixed steps)";
  if (opt.projection != projection_kind::none)
    return "tangent propagation needs projection = none: a projection after the steps is a further map "
           "whose derivative the tangents do not follow";
  return opt.method == method_kind::bdf ? bdf_check_options(opt) : radau_check_options(opt);
}

// A direction in the phase space (q, v) of a member: dq then dv.
template <class Model>
using phase_vector = vec<double, 2 * Model::n>;

namespace detail {

// x as the scalar T when T is P or a dual nested over P (or over double when P is double): the
// parameter enters at the innermost level, where its derivative direction lives.
template <class T, class P>
LOCKSTEP_HD T lift_parameter(const P& x) {
  if constexpr (std::is_same_v<T, P>) {
    return x;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return T(x);
  } else {
    return T(lift_parameter<typename T::value_type>(x));
  }
}

// The model with its parameters converted to the evaluation scalar before each call. Parameter
// derivatives seed the parameters with a dual direction; the library's derivative functions nest duals
// over the state scalar, and the core dual type mixes only with its own value type, so a parameter
// of type dual<double, 1> meeting a state of type dual<dual<dual<double, 1>, 1>, 1> (the acceleration
// rows) would not compile. Lifting the parameters to the state scalar makes every operation one of a
// single type, and its derivative part along the parameter is exact (forward-mode AD, core/dual.hpp).
template <class Model>
struct parameters_lifted : Model {
  static constexpr int parameter_storage = Model::n_params > 0 ? Model::n_params : 1;

  template <class T, class P>
  LOCKSTEP_HD static void lift_all(const P* p, T* out) {
    for (int i = 0; i < Model::n_params; ++i) out[i] = lift_parameter<T>(p[i]);
  }
  template <class T, class P>
  LOCKSTEP_HD static mat<T, Model::n, Model::n> mass(const vec<T, Model::n>& q, const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template mass<T, T>(q, lp);
  }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, Model::n> force(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v,
                                            const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template force<T, T>(t, q, v, lp);
  }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, Model::m> constraint(const T& t, const vec<T, Model::n>& q, const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template constraint<T, T>(t, q, lp);
  }
  template <class T, class P>
    requires(Model::k > 0)
  LOCKSTEP_HD static vec<T, Model::k> nonholonomic(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v,
                                                   const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template nonholonomic<T, T>(t, q, v, lp);
  }
};

using parameter_dual = dual<double, 1>;

// The parameters as duals with direction 1 on parameter j.
template <class Model>
LOCKSTEP_HD void seed_parameter(const double* p, int j, parameter_dual* out) {
  for (int i = 0; i < Model::n_params; ++i) out[i] = parameter_dual(p[i]);
  out[j].d[0] = 1.0;
}

template <class T, int N>
LOCKSTEP_HD vec<T, N> constant_duals(const vec<double, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = T(x[i]);
  return r;
}

}  // namespace detail

// dF/dp_j of the corrector residual at a fixed point (t, y, y'), in the row layout of tangent (T1):
// the F_q rows in the q slots, F_v in the v slots, Phi in the lambda slots, the ggl rows G v + Phi_t in
// the mu slots (index3: mu = 0, no parameter), A v + a in the nu slots.
template <class Model>
LOCKSTEP_HD state_vector<Model> residual_parameter_derivative(formulation f, double t, const state_vector<Model>& y,
                                                              const vec<double, Model::n>& vdot, const double* p,
                                                              int j) {
  using L = state_layout<Model>;
  using B = detail::parameter_dual;
  using LM = detail::parameters_lifted<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  B pb[LM::parameter_storage];
  detail::seed_parameter<Model>(p, j, pb);
  vec<B, n> q, v, a;
  for (int i = 0; i < n; ++i) {
    q[i] = B(y[L::q + i]);
    v[i] = B(y[L::v + i]);
    a[i] = B(vdot[i]);
  }
  const B tb(t);
  state_vector<Model> out{};
  const auto M = LM::template mass<B, B>(q, pb);
  const auto Q = LM::template force<B, B>(tb, q, v, pb);
  vec<B, n> Fv = M * a - Q;
  if constexpr (m > 0) {
    const auto con = constraint_linearize<LM>(tb, q, pb);
    vec<B, m> lambda, mu;
    for (int i = 0; i < m; ++i) {
      lambda[i] = B(y[L::lambda + i]);
      mu[i] = B(y[L::mu + i]);
    }
    Fv = Fv + transpose_times(con.G, lambda);
    if (uses_mu(f)) {
      const auto Gtm = transpose_times(con.G, mu);
      for (int i = 0; i < n; ++i) out[L::q + i] = Gtm[i].d[0];
    }
    const auto Gv = con.G * v;
    for (int i = 0; i < m; ++i) {
      out[L::lambda + i] = con.phi[i].d[0];
      if (f == formulation::ggl) out[L::mu + i] = (Gv[i] + con.phi_t[i]).d[0];
    }
  }
  if constexpr (k > 0) {
    const auto nh = nonholonomic_linearize<LM>(tb, q, pb);
    vec<B, k> nu;
    for (int i = 0; i < k; ++i) nu[i] = B(y[L::nu + i]);
    Fv = Fv + transpose_times(nh.A, nu);
    const auto Av = nh.A * v;
    for (int i = 0; i < k; ++i) out[L::nu + i] = (Av[i] + nh.a[i]).d[0];
  }
  for (int i = 0; i < n; ++i) out[L::v + i] = Fv[i].d[0];
  return out;
}

// The exact linearization of the residual at (t, y, y'): the AD Jacobian blocks of
// formulation/euler_lagrange.hpp (K, D_v = dQ/dv, G, Psi_q, A, A_q and M, which is F_y' on the v' columns
// of the F_v rows; F_y' is I on the q' columns of the F_q rows) and the term H = d(G^T mu)/dq of the
// kinematic rows (ggl; zero on index3) that the simplified Newton matrix leaves out.
template <class Model>
struct exact_jacobian {
  jacobian_blocks<Model> jac;
  mat<double, Model::n, Model::n> H;
};

template <class Model>
LOCKSTEP_HD member_status evaluate_exact_jacobian(formulation f, double t, const state_vector<Model>& y,
                                                  const vec<double, Model::n>& vdot, const double* p,
                                                  exact_jacobian<Model>& out) {
  constexpr int n = Model::n, m = Model::m;
  out.H = mat<double, n, n>{};
  const bool curvature = m > 0 && uses_mu(f);
  const member_status js = evaluate_jacobian<Model>(f, t, y, vdot, p, out.jac, {}, curvature ? &out.H : nullptr);
  if (js != member_status::success) return js;
  for (int i = 0; i < n * n; ++i)
    if (!is_finite(out.H.a[i])) return member_status::model_not_finite;
  return member_status::success;
}

// The linearized residual F_y s + F_y' s' (+ F_p e_j) at the point X was evaluated at, in the layout of y
// (rows as residual_parameter_derivative).
template <class Model>
LOCKSTEP_HD state_vector<Model> linearized_residual(formulation f, const exact_jacobian<Model>& X,
                                                    const state_vector<Model>& s, const state_vector<Model>& sp,
                                                    const state_vector<Model>* dFdp) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  const jacobian_blocks<Model>& J = X.jac;
  state_vector<Model> R;
  for (int i = 0; i < n; ++i) {
    double rq = sp[L::q + i] - s[L::v + i], rv = 0.0;  // F_q = q' - v + G^T mu; F_v = M v' + ... - Q
    for (int j = 0; j < n; ++j) {
      rq += X.H(i, j) * s[L::q + j];
      rv += J.M(i, j) * sp[L::v + j] + J.K(i, j) * s[L::q + j] - J.dQ_dv(i, j) * s[L::v + j];
    }
    for (int a = 0; a < m; ++a) {
      if (uses_mu(f)) rq += J.G(a, i) * s[L::mu + a];
      rv += J.G(a, i) * s[L::lambda + a];
    }
    for (int a = 0; a < k; ++a) rv += J.A(a, i) * s[L::nu + a];
    R[L::q + i] = rq;
    R[L::v + i] = rv;
  }
  for (int a = 0; a < m; ++a) {
    double phi = 0.0, psi = 0.0;
    for (int j = 0; j < n; ++j) {
      phi += J.G(a, j) * s[L::q + j];
      psi += J.Psi_q(a, j) * s[L::q + j] + J.G(a, j) * s[L::v + j];
    }
    R[L::lambda + a] = phi;
    R[L::mu + a] = f == formulation::ggl ? psi : s[L::mu + a];  // index3: mu is pinned to zero
  }
  for (int a = 0; a < k; ++a) {
    double r = 0.0;
    for (int j = 0; j < n; ++j) r += J.A_q(a, j) * s[L::q + j] + J.A(a, j) * s[L::v + j];
    R[L::nu + a] = r;
  }
  if (dFdp)
    for (int j = 0; j < L::size; ++j) R[j] += (*dFdp)[j];
  return R;
}

// The factored matrix of (T1) at one converged point: the reduced, scaled Newton matrix of
// formulation/euler_lagrange.hpp built from the exact Jacobian, with H folded in (header comment, "The
// linear system").
template <class Model>
struct tangent_step_matrix {
  exact_jacobian<Model> exact;
  newton_matrix<Model, double> newton;
};

// Evaluates and factors the matrix of (T1) at (t, y, y' = (qdot, vdot)) for the shift c.
template <class Model>
LOCKSTEP_HD member_status factor_tangent_step_matrix(formulation f, double t, const state_vector<Model>& y,
                                                     const vec<double, Model::n>& vdot, double c, const double* p,
                                                     tangent_step_matrix<Model>& T) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  const member_status js = evaluate_exact_jacobian<Model>(f, t, y, vdot, p, T.exact);
  if (js != member_status::success) return js;
  if (!uses_mu(f)) return factor_newton_matrix<Model, double>(f, T.exact.jac, c, T.newton);
  // Eliminating s_v = (c I + H) s_q + G^T s_mu + F_q instead of c s_q + ... adds (c M - D_v) H to the
  // dynamic rows' K, G H to the velocity constraints' Psi_q and A H to the non-holonomic A_q; the
  // right-hand sides are unchanged (euler_lagrange.hpp, "The Newton matrix").
  const jacobian_blocks<Model>& J = T.exact.jac;
  const mat<double, n, n>& H = T.exact.H;
  jacobian_blocks<Model> folded = J;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int l = 0; l < n; ++l) s += (c * J.M(i, l) - J.dQ_dv(i, l)) * H(l, j);
      folded.K(i, j) += s;
    }
  for (int a = 0; a < m; ++a)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int l = 0; l < n; ++l) s += J.G(a, l) * H(l, j);
      folded.Psi_q(a, j) += s;
    }
  for (int a = 0; a < k; ++a)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int l = 0; l < n; ++l) s += J.A(a, l) * H(l, j);
      folded.A_q(a, j) += s;
    }
  return factor_newton_matrix<Model, double>(f, folded, c, T.newton);
}

// Solves (T1) for `count` directions from their predictors (s_pred[d], s'_pred[d]); dFdp[d] = F_p e_j, or
// nullptr for a direction in the initial state. Written as s = s_pred + delta, (T1) is
// (F_y + c F_y') delta = -R, R the linearized residual at the predictor, which is small (the predictor
// nearly satisfies the linearized equations) where F_y' (s'_pred - c s_pred) is of size c |s|: solving
// for s itself, the recovery s_v = c s_q + ... of the reduced system would cancel terms of size c |s| and
// lose eps c |s| in s_v (measured: the tangents' error test then rejects steps of 1e-7 at rtol 1e-8).
// delta is the Newton solve's increment for the residual R, plus the H delta_q that its recovery of
// delta_v leaves out.
template <class Model, int Capacity>
LOCKSTEP_HD void solve_tangent_steps(formulation f, const tangent_step_matrix<Model>& T,
                                     const state_vector<Model>* s_pred, const state_vector<Model>* sp_pred,
                                     const state_vector<Model>* const* dFdp, int count, state_vector<Model>* out) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  residual_parts<Model> R[Capacity];
  for (int d = 0; d < count; ++d)
    R[d] = detail::unflatten<Model>(linearized_residual<Model>(f, T.exact, s_pred[d], sp_pred[d], dFdp[d]));
  solve_newton_columns<Model, Capacity>(f, T.exact.jac, T.newton, R, count, out);
  for (int d = 0; d < count; ++d) {
    for (int i = 0; i < n; ++i) {  // the H delta_q of the kinematic rows (ggl)
      double Hq = 0.0;
      for (int j = 0; j < n; ++j) Hq += T.exact.H(i, j) * out[d][L::q + j];
      out[d][L::v + i] += Hq;
    }
    for (int j = 0; j < L::size; ++j) out[d][j] = s_pred[d][j] + out[d][j];
  }
}

// ---------------------------------------------------------------------------------------------------
// Initial tangents
// ---------------------------------------------------------------------------------------------------

// The linearized constraints of a phase direction at (t, q, v): G dq, Psi_q dq + G dv and
// A_q dq + A dv (m, m and k rows; zero on the tangent space of the manifold).
template <class Model>
struct linearized_constraint_residuals {
  vec<double, Model::m> position;
  vec<double, Model::m> velocity;
  vec<double, Model::k> nonholonomic;
  double max_abs() const {
    double r = 0.0;
    for (int i = 0; i < Model::m; ++i) r = max(r, max(abs(position[i]), abs(velocity[i])));
    for (int i = 0; i < Model::k; ++i) r = max(r, abs(nonholonomic[i]));
    return r;
  }
};

template <class Model>
LOCKSTEP_HD linearized_constraint_residuals<Model> linearized_constraints(double t, const vec<double, Model::n>& q,
                                                                         const vec<double, Model::n>& v,
                                                                         const vec<double, Model::n>& dq,
                                                                         const vec<double, Model::n>& dv,
                                                                         const double* p) {
  linearized_constraint_residuals<Model> r{};
  if constexpr (Model::m > 0) {
    const auto G = constraint_jacobian<Model>(t, q, p);
    const auto Psi_q = velocity_constraint_jacobian<Model>(t, q, v, p);
    r.position = G * dq;
    r.velocity = Psi_q * dq + G * dv;
  }
  if constexpr (Model::k > 0) {
    const auto A = nonholonomic_linearize<Model>(t, q, p).A;
    const auto A_q = nonholonomic_jacobian_q<Model>(t, q, v, p);
    r.nonholonomic = A_q * dq + A * dv;
  }
  return r;
}

// The derivative of consistent initialization (stepper/initialize.hpp) at a consistent point (q, v):
// along a change (dq0, dv0) of the given initial values and, when parameter >= 0, of that parameter
// (with (q0, v0) held). Differentiating the minimal-norm projections of Mantegazza & Masarati 2012, eq. (121) at a
// point where their corrections vanish (the correction's own derivative multiplies a zero multiplier) gives
//     dq = dq0 - W^-1 G^T (G W^-1 G^T)^-1 (G dq0 + Phi_p),
//     dv = dv0 - W^-1 C^T (C W^-1 C^T)^-1 (C dv0 + C_q dq + (C v + c)_p),   C = [G; A],
// W the initialization metric (opt.metric: M(q0) or I). On the tangent space (parameter < 0 and
// (dq0, dv0) satisfying the linearized constraints) this is the identity.
template <class Model>
LOCKSTEP_HD member_status initial_phase_tangent(double t, const vec<double, Model::n>& q, const vec<double, Model::n>& v,
                                                const double* p, projection_metric metric,
                                                const vec<double, Model::n>& dq0, const vec<double, Model::n>& dv0,
                                                int parameter, vec<double, Model::n>& dq, vec<double, Model::n>& dv) {
  constexpr int m = Model::m, k = Model::k;
  using B = detail::parameter_dual;
  using LM = detail::parameters_lifted<Model>;
  dq = dq0;
  dv = dv0;
  metric_factor<Model> W;
  member_status s = factor_metric<Model>(metric, q, p, W);
  if (s != member_status::success) return s;
  B pb[LM::parameter_storage];
  if (parameter >= 0) detail::seed_parameter<Model>(p, parameter, pb);
  const auto qb = detail::constant_duals<B>(q);
  const auto vb = detail::constant_duals<B>(v);
  if constexpr (m > 0) {
    const auto G = constraint_jacobian<Model>(t, q, p);
    vec<double, m> r = G * dq0;
    if (parameter >= 0) {
      const auto phi = LM::template constraint<B, B>(B(t), qb, pb);
      for (int a = 0; a < m; ++a) r[a] += phi[a].d[0];
    }
    minimal_norm_projector<Model, m> P;
    s = factor_projector<Model, m>(W, G, P);
    if (s != member_status::success) return s;
    dq = dq + minimal_norm_correction<Model, m>(P, r);
  }
  constexpr int rows = m + k;
  if constexpr (rows > 0) {
    const velocity_constraint_rows<Model> C = velocity_constraints_at<Model>(t, q, p);
    const auto lin = linearized_constraints<Model>(t, q, v, dq, dv0, p);
    vec<double, rows> r;
    for (int a = 0; a < m; ++a) r[a] = lin.velocity[a];
    for (int a = 0; a < k; ++a) r[m + a] = lin.nonholonomic[a];
    if (parameter >= 0) {
      if constexpr (m > 0) {
        const auto psi = velocity_constraint<LM>(B(t), qb, vb, pb);
        for (int a = 0; a < m; ++a) r[a] += psi[a].d[0];
      }
      if constexpr (k > 0) {
        const auto w = LM::template nonholonomic<B, B>(B(t), qb, vb, pb);
        for (int a = 0; a < k; ++a) r[m + a] += w[a].d[0];
      }
    }
    minimal_norm_projector<Model, rows> P;
    s = factor_projector<Model, rows>(W, C.C, P);
    if (s != member_status::success) return s;
    dv = dv0 + minimal_norm_correction<Model, rows>(P, r);
  }
  return member_status::success;
}

// The full initial tangent (s, s') of BDF's starting data from a phase tangent (dq, dv): the
// multipliers' and the acceleration's tangents from the linearized index-1 system (Mantegazza & Masarati 2012, eqs.
// 122-123) at the consistent point,
//     [ M  G^T  A^T ] [ da      ]     [ K dq - D_v dv + (M a + G^T lambda + A^T nu - Q)_p ]
//     [ G   0    0  ] [ dlambda ] = - [ Acc_q dq + Acc_v dv + (G a + gamma)_p            ]
//     [ A   0    0  ] [ dnu     ]     [ A_q dq + A_v dv + (A a + gamma_nh)_p             ]
// (K, Acc_q, Acc_v, A_q, A_v: the index1 formulation's Jacobian blocks at v' = a). BDF's starting
// derivative has q' = v, v' = a and zero multiplier parts (method/step_control.hpp, initial_point),
// so s' = (dv, da, 0, 0, 0); s = (dq, dv, dlambda, 0, dnu).
template <class Model>
LOCKSTEP_HD member_status initial_full_tangent(double t, const initial_values<Model>& init, const double* p,
                                               const vec<double, Model::n>& dq, const vec<double, Model::n>& dv,
                                               int parameter, state_vector<Model>& s, state_vector<Model>& sp) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int N = n + m + k;
  state_vector<Model> y{};
  for (int i = 0; i < n; ++i) {
    y[L::q + i] = init.q[i];
    y[L::v + i] = init.v[i];
  }
  for (int a = 0; a < m; ++a) y[L::lambda + a] = init.lambda[a];
  for (int a = 0; a < k; ++a) y[L::nu + a] = init.nu[a];
  jacobian_blocks<Model> J;
  member_status st = evaluate_jacobian<Model>(formulation::index1, t, y, init.a, p, J);
  if (st != member_status::success) return st;
  mat<double, N, N> S{};
  vec<double, N> rhs{};
  for (int i = 0; i < n; ++i) {
    double r = 0.0;
    for (int j = 0; j < n; ++j) {
      S(i, j) = J.M(i, j);
      r += J.K(i, j) * dq[j] - J.dQ_dv(i, j) * dv[j];
    }
    rhs[i] = -r;
  }
  for (int a = 0; a < m; ++a) {
    double r = 0.0;
    for (int j = 0; j < n; ++j) {
      S(n + a, j) = S(j, n + a) = J.G(a, j);
      r += J.Psi_q(a, j) * dq[j] + J.Psi_v(a, j) * dv[j];
    }
    rhs[n + a] = -r;
  }
  for (int a = 0; a < k; ++a) {
    double r = 0.0;
    for (int j = 0; j < n; ++j) {
      S(n + m + a, j) = S(j, n + m + a) = J.A(a, j);
      r += J.A_q(a, j) * dq[j] + J.A_v(a, j) * dv[j];
    }
    rhs[n + m + a] = -r;
  }
  if (parameter >= 0) {
    using B = detail::parameter_dual;
    using LM = detail::parameters_lifted<Model>;
    B pb[LM::parameter_storage];
    detail::seed_parameter<Model>(p, parameter, pb);
    const auto qb = detail::constant_duals<B>(init.q);
    const auto vb = detail::constant_duals<B>(init.v);
    const auto ab = detail::constant_duals<B>(init.a);
    const B tb(t);
    vec<B, n> dyn = LM::template mass<B, B>(qb, pb) * ab - LM::template force<B, B>(tb, qb, vb, pb);
    if constexpr (m > 0) {
      vec<B, m> lb;
      for (int a = 0; a < m; ++a) lb[a] = B(init.lambda[a]);
      dyn = dyn + transpose_times(constraint_jacobian<LM>(tb, qb, pb), lb);
    }
    if constexpr (k > 0) {
      vec<B, k> nb;
      for (int a = 0; a < k; ++a) nb[a] = B(init.nu[a]);
      dyn = dyn + transpose_times(nonholonomic_linearize<LM>(tb, qb, pb).A, nb);
    }
    for (int i = 0; i < n; ++i) rhs[i] -= dyn[i].d[0];
    if constexpr (m + k > 0) {
      const auto acc = acceleration_constraint_rows<LM>(tb, qb, vb, ab, 0.0, 0.0, pb);
      for (int a = 0; a < m + k; ++a) rhs[n + a] -= acc[a].d[0];
    }
  }
  vec<int, N> pivot;
  const factor_result fr = lu_factor(S, pivot);
  if (fr.info == lu_not_finite) return member_status::model_not_finite;
  if (fr.info != lu_ok) return member_status::singular_matrix;
  lu_solve(S, pivot, rhs);
  s = state_vector<Model>{};
  sp = state_vector<Model>{};
  for (int i = 0; i < n; ++i) {
    s[L::q + i] = dq[i];
    s[L::v + i] = dv[i];
    sp[L::q + i] = dv[i];
    sp[L::v + i] = rhs[i];
  }
  for (int a = 0; a < m; ++a) s[L::lambda + a] = rhs[n + a];
  for (int a = 0; a < k; ++a) s[L::nu + a] = rhs[n + m + a];
  return member_status::success;
}

// ---------------------------------------------------------------------------------------------------
// A BDF member with tangents
// ---------------------------------------------------------------------------------------------------

// One member and up to Capacity tangent directions, as plain data (like member_state). parameter[d] is
// -1 for a direction in the initial state and j for the sensitivity to parameter j.
template <class Model, int Capacity = 2 * Model::n>
struct tangent_member {
  using model = Model;
  static constexpr int capacity = Capacity;
  static constexpr int max_past = bdf_state<Model>::max_past;
  bdf_state<Model> method;
  member_counters counters;
  member_status status = member_status::running;
  long attempts = 0;
  int directions = 0;
  int parameter[Capacity] = {};
  state_vector<Model> past[max_past][Capacity];  // tangents of the past points at method.t_past[j]
  state_vector<Model> derivative0[Capacity];     // tangents of method.yp0 (the confluent node)
  long tangent_factorizations = 0;
  bool error_control = true;   // the tangents' local error limits the steps (header comment)
  long tangent_rejections = 0;  // steps the state accepted and the tangents' error test rejected
};

// What the BDF and the Radau members share at the start: the checks, consistent initialization, the
// method's start (start(init)) and the initial tangents, handed to store(d, s, s') (s' = the tangent of
// the initial derivative BDF starts from). directions[d] (a phase vector, taken through the derivative
// of the initialization, so it need not lie in the tangent space) for d < state_directions, then the
// sensitivities to parameters[0 .. parameter_directions - 1]. status = running, or the reason the
// member cannot start (invalid_input for options the tangents refuse).
template <class Model, class TM, class Start, class Store>
LOCKSTEP_HD void begin_member_with_tangents(TM& tm, double t0, double t1, const vec<double, Model::n>& q0,
                                            const vec<double, Model::n>& v0, const double* p,
                                            const solver_options& opt, const phase_vector<Model>* directions,
                                            int state_directions, const int* parameters, int parameter_directions,
                                            bool error_control, const Start& start, const Store& store) {
  constexpr int n = Model::n;
  tm.status = member_status::running;
  tm.error_control = error_control;
  tm.tangent_rejections = 0;
  tm.counters = member_counters{};
  tm.attempts = 0;
  tm.tangent_factorizations = 0;
  tm.directions = state_directions + parameter_directions;
  if (tangent_check_options(opt)[0] != '\0' || !(t1 > t0) || tm.directions > TM::capacity || state_directions < 0 ||
      parameter_directions < 0) {
    tm.status = member_status::invalid_input;
    return;
  }
  for (int d = 0; d < parameter_directions; ++d)
    if (parameters[d] < 0 || parameters[d] >= Model::n_params) {
      tm.status = member_status::invalid_input;
      return;
    }
  initial_values<Model> init;
  member_status st = consistent_initialization<Model>(t0, q0, v0, p, opt, init, tm.counters);
  if (st != member_status::success) {
    tm.status = st;
    return;
  }
  start(init);
  for (int d = 0; d < tm.directions; ++d) {
    const bool is_state = d < state_directions;
    tm.parameter[d] = is_state ? -1 : parameters[d - state_directions];
    vec<double, n> dq0{}, dv0{}, dq, dv;
    if (is_state)
      for (int i = 0; i < n; ++i) {
        dq0[i] = directions[d][i];
        dv0[i] = directions[d][n + i];
      }
    // The initialization's metric is factored at the given q0 (stepper/initialize.hpp); at a consistent
    // q0 it is the metric at init.q, and elsewhere the difference is of second order.
    st = initial_phase_tangent<Model>(t0, init.q, init.v, p, opt.metric, dq0, dv0, tm.parameter[d], dq, dv);
    state_vector<Model> s0, sp0;
    if (st == member_status::success) st = initial_full_tangent<Model>(t0, init, p, dq, dv, tm.parameter[d], s0, sp0);
    if (st != member_status::success) {
      tm.status = st;
      return;
    }
    store(d, s0, sp0);
  }
}

// Consistent initialization, BDF's start and the initial tangents (begin_member_with_tangents).
template <class Model, int Capacity>
LOCKSTEP_HD void tangent_member_begin(tangent_member<Model, Capacity>& tm, double t0, double t1,
                                      const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                                      const double* p, const solver_options& opt,
                                      const phase_vector<Model>* directions, int state_directions,
                                      const int* parameters, int parameter_directions, bool error_control = true) {
  begin_member_with_tangents<Model>(
      tm, t0, t1, q0, v0, p, opt, directions, state_directions, parameters, parameter_directions, error_control,
      [&](const initial_values<Model>& init) { bdf_start(tm.method, t0, t1, init, opt); },
      [&](int d, const state_vector<Model>& s0, const state_vector<Model>& sp0) {
        tm.past[0][d] = s0;
        tm.derivative0[d] = sp0;
      });
}

namespace detail {

// Which stored past point node j of the predictor reads: the j-th newest, or the oldest again once j
// reaches past_count (the confluent node at t0, whose first divided difference is the derivative).
template <class Model>
LOCKSTEP_HD int past_source(const bdf_state<Model>& before, int j) {
  return j < before.past_count ? j : before.past_count - 1;
}

// The BDF predictor of bdf_attempt as weights, for applying it to many directions (the tangents' past
// values): the predictor is linear in the past values and the confluent derivative,
// value = sum_j value_weight[j] values(source[j]) + value_weight[k + 1] derivative0 (the same with
// derivative_weight), j over the k + 1 nodes. The weights are the divided-difference predictor over
// the same nodes applied to the unit vectors, all at once, so a direction costs 2 (k + 2) multiply-adds
// per component instead of a divided-difference table, and the result is the same linear map up to
// rounding.
template <class Model>
struct predictor_weights {
  static constexpr int max_nodes = bdf_state<Model>::max_past + 2;
  int nodes = 0;
  bool confluent = false;  // the oldest node is the confluent one: derivative0 takes part
  int source[max_nodes] = {};
  double value_weight[max_nodes + 1] = {};
  double derivative_weight[max_nodes + 1] = {};

  template <class Values>
  LOCKSTEP_HD void apply(const Values& values, const state_vector<Model>& derivative0, state_vector<Model>& value,
                         state_vector<Model>& derivative) const {
    constexpr int ny = state_layout<Model>::size;
    // Without the confluent node derivative0 is not read at all, as in bdf_attempt: once t0 has
    // left the window it is stale, and the Lyapunov re-orthonormalizations keep recombining it with
    // R^-1 until it overflows (measured on the damped oscillator: 0 * inf poisoned every direction).
    for (int i = 0; i < ny; ++i) {
      value[i] = confluent ? value_weight[nodes] * derivative0[i] : 0.0;
      derivative[i] = confluent ? derivative_weight[nodes] * derivative0[i] : 0.0;
    }
    for (int j = 0; j < nodes; ++j) {
      const state_vector<Model>& x = values(source[j]);
      const double a = value_weight[j], b = derivative_weight[j];
      for (int i = 0; i < ny; ++i) {
        value[i] += a * x[i];
        derivative[i] += b * x[i];
      }
    }
  }
};

template <class Model>
LOCKSTEP_HD predictor_weights<Model> bdf_predictor_weights(const bdf_state<Model>& before, int k, double t_new) {
  constexpr int max_nodes = predictor_weights<Model>::max_nodes;
  predictor_weights<Model> pw;
  pw.nodes = k + 1;
  double x[max_nodes];
  vec<double, max_nodes + 1> dd[max_nodes], derivative0{};
  bool confluent = false;
  for (int j = 0; j < k + 1; ++j) {
    pw.source[j] = past_source(before, j);
    confluent = confluent || j >= before.past_count;
    x[j] = before.t_past[pw.source[j]];
    dd[j] = vec<double, max_nodes + 1>{};
    dd[j][j] = 1.0;
  }
  derivative0[k + 1] = 1.0;
  pw.confluent = confluent;
  divided_differences(k + 1, x, dd, confluent, derivative0);
  vec<double, max_nodes + 1> value, derivative;
  evaluate_newton_form(k + 1, x, dd, t_new, value, &derivative);
  for (int j = 0; j < k + 1; ++j) {
    pw.value_weight[j] = value[j];
    pw.derivative_weight[j] = derivative[j];
  }
  pw.value_weight[k + 1] = value[k + 1];
  pw.derivative_weight[k + 1] = derivative[k + 1];
  return pw;
}

// The method's attempt; a failure sets the member's status.
template <class Member, class Attempt>
LOCKSTEP_HD attempt_result run_member_attempt(Member& tm, const Attempt& attempt) {
  member_status why = member_status::running;
  const attempt_result r = attempt(why);
  if (r == attempt_result::failed) tm.status = why;
  return r;
}

// Puts the member back where it was before an attempt that the state's error test accepted and the
// tangents' rejected (the tangents were not yet updated), counting the rejection.
template <class Member, class State>
LOCKSTEP_HD void undo_accepted_step(Member& tm, const State& before, long steps_before) {
  tm.method = before;
  tm.counters.steps = steps_before;
  ++tm.counters.rejected_steps;
  ++tm.tangent_rejections;
}

// How a direction's error is weighted: for a direction in the initial state relative to its own size,
// weights 1 / (tol (|s_j| + max_i |s_i|)) (lyapunov/tangent.hpp header: such tangents have no natural
// absolute scale, and the Lyapunov QR keeps them of size 1); for the sensitivity to a parameter, which
// starts at zero when the initial state does not depend on it, IDAS's scaling by the parameter's size
// (its pbar, IDASetSensParams): weights 1 / (tol |s_j| + atol'_group / pbar),
// atol' the state's internal absolute tolerance (method/bdf.hpp) and pbar = |p_j| (1 when p_j = 0).
struct tangent_weighting {
  double tol = 0.0;         // BDF's internal rtol'
  double absolute_q = 0.0;  // 0: relative to the direction's size
  double absolute_v = 0.0;
};

template <class Model>
LOCKSTEP_HD double tangent_error_norm(const state_vector<Model>& e, const state_vector<Model>& s,
                                      const tangent_weighting& wt) {
  using L = state_layout<Model>;
  double size = 0.0;
  const bool relative = !(wt.absolute_q > 0.0);
  if (relative) {
    for (int j = L::q; j < L::lambda; ++j) size = max(size, abs(s[j]));
    if (!(size > 0.0)) return 0.0;
  }
  double sum = 0.0;
  for (int j = L::q; j < L::lambda; ++j) {
    const double floor = relative ? wt.tol * size : (j < L::v ? wt.absolute_q : wt.absolute_v);
    const double x = e[j] / (wt.tol * abs(s[j]) + floor);
    sum += x * x;
  }
  return sqrt(sum / (L::lambda - L::q));
}

// The weighting of direction d of a member (see tangent_weighting).
// tolerance_factor: BDF's internal rtol' / rtol (the default), 1 for Radau, which uses rtol itself.
LOCKSTEP_HD tangent_weighting weighting_for(int parameter, const double* p, const solver_options& opt,
                                            double tolerance_factor = 0.0) {
  tangent_weighting wt;
  const double f = tolerance_factor > 0.0 ? tolerance_factor : internal_tolerance_factor(opt.rtol);
  wt.tol = f * opt.rtol;
  if (parameter >= 0) {
    const double pbar = p[parameter] != 0.0 ? abs(p[parameter]) : 1.0;
    wt.absolute_q = f * opt.atol_q / pbar;
    wt.absolute_v = f * opt.atol_v / pbar;
  }
  return wt;
}

// A direction's local error estimate at order p, as detail::lte_estimate (method/bdf.hpp) forms the
// state's: the divided difference over (t_new, tau_1 .. tau_{p+1}) of the direction's new value and
// its history.
template <class Model, class Values>
LOCKSTEP_HD double tangent_lte(const bdf_state<Model>& before, int p, double t_new, const state_vector<Model>& s_new,
                               const Values& values, const state_vector<Model>& derivative0,
                               const tangent_weighting& wt) {
  constexpr int max_nodes = bdf_state<Model>::max_past + 2;
  double x[max_nodes];
  state_vector<Model> dd[max_nodes];
  x[0] = t_new;
  dd[0] = s_new;
  bool confluent = false;
  for (int j = 0; j < p + 1; ++j) {
    const int src = past_source(before, j);
    confluent = confluent || j >= before.past_count;
    x[j + 1] = before.t_past[src];
    dd[j + 1] = values(src);
  }
  divided_differences(p + 2, x, dd, confluent, derivative0);
  const lte_factors f = lte_factors_of(x, t_new, p);
  return tangent_error_norm<Model>(dd[p + 1], s_new, wt) * abs(f.prod) / f.cp;
}

}  // namespace detail

// One step attempt of the member (bdf_attempt) and, when it is accepted, the tangents' step (T1).
// Returns what bdf_attempt returned; a failure of the tangent step sets status and returns failed.
template <class Model, int Capacity>
LOCKSTEP_HD attempt_result tangent_member_attempt(tangent_member<Model, Capacity>& tm, double t_end, const double* p,
                                                  const solver_options& opt) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  const bdf_state<Model> before = tm.method;  // the nodes and values the predictor uses
  const long steps_before = tm.counters.steps;
  const attempt_result r = detail::run_member_attempt(tm, [&](member_status& why) {
    return bdf_attempt<Model>(tm.method, t_end, p, opt, tm.counters, why);
  });
  if (r != attempt_result::accepted) return r;

  const bdf_state<Model>& s = tm.method;
  const int k = s.last_order;
  const double t_new = s.t;
  // c and y' exactly as bdf_attempt formed them (the same function on the state before the step).
  state_vector<Model> y_pred, yp_pred;
  double c;
  {
    constexpr int max_nodes = bdf_state<Model>::max_past + 2;
    double x[max_nodes];
    state_vector<Model> dd[max_nodes];
    c = detail::bdf_predict(before, k, t_new, x, dd, y_pred, yp_pred);
  }
  const state_vector<Model>& y = s.y_newest;
  vec<double, n> vdot;
  for (int i = 0; i < n; ++i) vdot[i] = yp_pred[L::v + i] + c * (y[L::v + i] - y_pred[L::v + i]);

  tangent_step_matrix<Model> T;
  const member_status fs = factor_tangent_step_matrix<Model>(opt.form, t_new, y, vdot, c, p, T);
  ++tm.tangent_factorizations;
  if (fs != member_status::success) {
    tm.status = fs;
    return attempt_result::failed;
  }
  state_vector<Model> fresh[Capacity], predicted[Capacity], derivative_predicted[Capacity], dFdp[Capacity];
  const state_vector<Model>* dFdp_of[Capacity] = {};  // g++ -Wmaybe-uninitialized: null past directions
  const detail::predictor_weights<Model> pw = detail::bdf_predictor_weights<Model>(before, k, t_new);
  for (int d = 0; d < tm.directions; ++d) {
    pw.apply([&](int j) -> const state_vector<Model>& { return tm.past[j][d]; }, tm.derivative0[d], predicted[d],
             derivative_predicted[d]);
    dFdp_of[d] = nullptr;
    if (tm.parameter[d] >= 0) {
      dFdp[d] = residual_parameter_derivative<Model>(opt.form, t_new, y, vdot, p, tm.parameter[d]);
      dFdp_of[d] = &dFdp[d];
    }
  }
  solve_tangent_steps<Model, Capacity>(opt.form, T, predicted, derivative_predicted, dFdp_of, tm.directions, fresh);
  // BDF's order and step selection (method/bdf_step_control.hpp), redone on the larger of the state's
  // and the tangents' estimates at each order (header comment), adaptive steps only. Without the
  // tangents' error control the estimates are the state's alone and the decision is bitwise
  // bdf_attempt's; with it, the tangents' error test may reject the step after all.
  if (!(opt.fixed_h > 0.0)) {
    const step_plan plan = plan_step(before.t, before.h, t_end, opt, before.t0);  // bdf_attempt's h and h_min
    const double h = plan.h;
    const state_vector<Model> w = detail::error_weights<Model>(before, opt);
    const double x_k = before.t_past[detail::past_source(before, k)];
    // Order k: the state's estimate as bdf_attempt formed it, and the same for each direction.
    double err_k = s.error;
    if (tm.error_control)
      for (int d = 0; d < tm.directions; ++d) {
        state_vector<Model> e;
        for (int j = 0; j < L::size; ++j) e[j] = fresh[d][j] - predicted[d][j];
        const detail::tangent_weighting wt = detail::weighting_for(tm.parameter[d], p, opt);
        err_k = max(err_k, detail::tangent_error_norm<Model>(e, fresh[d], wt) / (1.0 + c * (t_new - x_k)));
      }
    // Orders k - 1 and k + 1, where bdf_attempt considers them.
    const detail::order_candidates can = detail::bdf_order_candidates(k, before.order, before.steps_at_order,
                                                                       opt.max_order, detail::available_past(before));
    auto combined_lte = [&](int order) {
      double err = detail::lte_estimate(before, order, t_new, y, w);
      if (tm.error_control)
        for (int d = 0; d < tm.directions; ++d)
          err = max(err, detail::tangent_lte<Model>(before, order, t_new, fresh[d],
                                                    [&](int j) { return tm.past[j][d]; }, tm.derivative0[d],
                                                    detail::weighting_for(tm.parameter[d], p, opt)));
      return err;
    };
    const double err_km1 = can.lower ? combined_lte(k - 1) : 0.0;
    if (!(err_k <= 1.0)) {  // only the tangents can fail the test here: the state passed it
      detail::undo_accepted_step(tm, before, steps_before);
      bdf_state<Model>& m = tm.method;
      if (detail::bdf_after_error_failure(k, err_k, h, plan.h_min, [&] { return err_km1; }, m.error_failures, m.order,
                                          m.h)) {
        tm.status = member_status::step_size_too_small;
        return attempt_result::failed;
      }
      return attempt_result::rejected;
    }
    const detail::order_choice next =
        detail::choose_order(k, err_k, can.lower, err_km1, can.higher, can.higher ? combined_lte(k + 1) : 0.0);
    bdf_state<Model>& m = tm.method;
    m.steps_at_order = can.steps_at_order;
    m.error_failures = before.error_failures;
    detail::bdf_after_acceptance(next, k, h, opt, m.order, m.h, m.steps_at_order, m.error_failures);
  }
  // Shift the tangent history exactly as bdf_attempt shifted the state's.
  for (int j = tangent_member<Model, Capacity>::max_past - 1; j > 0; --j)
    for (int d = 0; d < tm.directions; ++d) tm.past[j][d] = tm.past[j - 1][d];
  for (int d = 0; d < tm.directions; ++d) tm.past[0][d] = fresh[d];
  return r;
}

namespace detail {

// slot[d] <- sum_e X(e, d) slot[e] for d < count.
template <class Model, int Capacity>
LOCKSTEP_HD void recombine_slot(state_vector<Model>* slot, const double (*X)[Capacity], int count) {
  state_vector<Model> out[Capacity];
  for (int d = 0; d < count; ++d) {
    out[d] = state_vector<Model>{};
    for (int e = 0; e < count; ++e)
      if (X[e][d] != 0.0)
        for (int j = 0; j < state_layout<Model>::size; ++j) out[d][j] += X[e][d] * slot[e][j];
  }
  for (int d = 0; d < count; ++d) slot[d] = out[d];
}

}  // namespace detail

// Replaces every tangent direction d by sum_e X(e, d) direction e, at every past node and in the
// confluent derivative: the tangent history is linear in the initial directions, so this is exactly
// the history the member would have had from the initial directions combined by X (the discrete QR
// re-orthonormalization uses it with X = R^-1).
template <class Model, int Capacity>
LOCKSTEP_HD void recombine_tangents(tangent_member<Model, Capacity>& tm, const double (*X)[Capacity], int count) {
  for (int j = 0; j < tangent_member<Model, Capacity>::max_past; ++j)
    detail::recombine_slot<Model, Capacity>(tm.past[j], X, count);
  detail::recombine_slot<Model, Capacity>(tm.derivative0, X, count);
}

// The member's time, current point and current tangents (one interface for the BDF and Radau members).
template <class Model, int Capacity>
LOCKSTEP_HD double member_time(const tangent_member<Model, Capacity>& tm) {
  return tm.method.t;
}
template <class Model, int Capacity>
LOCKSTEP_HD const state_vector<Model>& member_point(const tangent_member<Model, Capacity>& tm) {
  return tm.method.y_newest;
}
template <class Model, int Capacity>
LOCKSTEP_HD state_vector<Model>* current_tangents(tangent_member<Model, Capacity>& tm) {
  return tm.past[0];
}

}  // namespace lockstep
