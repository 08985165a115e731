// lockstep/lyapunov/initial_tangents.hpp — the initial tangents: the derivative of consistent initialization
// (method/initialize.hpp) along a phase direction or a parameter, and BDF's full starting tangent.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/lyapunov/parameter_duals.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

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

// The derivative of consistent initialization (method/initialize.hpp) at a consistent point (q, v):
// along a change (dq0, dv0) of the given initial values and, when parameter >= 0, of that parameter
// (with (q0, v0) held). Differentiating the minimal-norm projections of Mantegazza & Masarati 2012, eq. (121) at a
// point where their corrections vanish (the correction's own derivative multiplies a zero multiplier) gives
//     dq = dq0 - W^-1 G^T (G W^-1 G^T)^-1 (G dq0 + Phi_p),
//     dv = dv0 - W^-1 C^T (C W^-1 C^T)^-1 (C dv0 + C_q dq + (C v + c)_p),   C = [G; A],
// W the initialization metric (opt.metric: M(q0) or I). On the tangent space (parameter < 0 and
// (dq0, dv0) satisfying the linearized constraints) this is the identity.
template <class Model>
LOCKSTEP_HD_SHARED member_status initial_phase_tangent(double t, const vec<double, Model::n>& q,
                                                       const vec<double, Model::n>& v, const double* p,
                                                       projection_metric metric, const vec<double, Model::n>& dq0,
                                                       const vec<double, Model::n>& dv0, int parameter,
                                                       vec<double, Model::n>& dq, vec<double, Model::n>& dv) {
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
LOCKSTEP_HD_SHARED member_status initial_full_tangent(double t, const initial_values<Model>& init, const double* p,
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

}  // namespace lockstep
