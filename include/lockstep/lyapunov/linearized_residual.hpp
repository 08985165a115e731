// lockstep/lyapunov/linearized_residual.hpp — the exact linearization of a formulation's residual at a
// converged point: the Jacobian blocks, dF/dp_j and F_y s + F_y' s' along a tangent (lyapunov/tangent.hpp,
// (T1)).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/parameter_duals.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep {

// dF/dp_j of the corrector residual at a fixed point (t, y, y'), in the row layout of tangent (T1):
// the F_q rows in the q slots, F_v in the v slots, Phi in the lambda slots, the ggl rows G v + Phi_t in
// the mu slots (index3: mu = 0, no parameter), A v + a in the nu slots.
template <class Model>
LOCKSTEP_HD_SHARED state_vector<Model> residual_parameter_derivative(formulation f, double t,
                                                                     const state_vector<Model>& y,
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
LOCKSTEP_HD_SHARED state_vector<Model> linearized_residual(formulation f, const exact_jacobian<Model>& X,
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

}  // namespace lockstep
