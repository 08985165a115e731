// lockstep/lyapunov/tangent_bdf_system.hpp — the linear system (T1) of a BDF tangent step
// (lyapunov/tangent.hpp): the exact Newton matrix at the converged point, factored once per step, and its
// solve for all directions.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/linearized_residual.hpp"
#include "lockstep/method/radau.hpp"  // detail::unflatten

namespace lockstep {

// The factored matrix of (T1) at one converged point: the reduced, scaled Newton matrix of
// formulation/euler_lagrange.hpp built from the exact Jacobian, with H folded in (lyapunov/tangent.hpp header, "The
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

}  // namespace lockstep
