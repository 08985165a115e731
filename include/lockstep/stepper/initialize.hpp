// lockstep/stepper/initialize.hpp — consistent initial values for the index-3 system.
//
// A user gives (q0, v0) that may violate Phi = 0 and the velocity constraints. Following seed 001
// eqs. (120)-(123):
//   1. q0 is corrected to the nearest point of Phi(t0, q) = 0 in the metric W (M(q0) or I), by
//      Gauss-Newton on the minimal-norm problem  min ||q - q0||_W  s.t.  Phi(q) = 0  (eq. 121a):
//      q <- q - W^-1 G^T (G W^-1 G^T)^-1 Phi(q);
//   2. v0 is corrected to the velocity constraints B v + b = 0, B = [G; A], b = [Phi_t; a] (eq. 121b),
//      a linear minimal-norm projection;
//   3. q''(0), lambda(0), nu(0) solve the index-1 system (eqs. 122-123)
//          [ M  G^T  A^T ] [ q''    ]   [ Q        ]
//          [ G   0    0  ] [ lambda ] = [ -gamma   ]
//          [ A   0    0  ] [ nu     ]   [ -gamma_nh ]
//      by the pivoted LU (the matrix is indefinite).
// In strict mode a correction larger than init_tolerance is refused instead of applied.
#pragma once

#include <limits>

#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep {

template <class Model>
struct initial_values {
  vec<double, Model::n> q, v, a;  // a = q''(t0)
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
};

namespace detail {

// W^-1 X for the metric of the options (W = M by its Cholesky factor, or I), column by column.
template <class Model, int C>
LOCKSTEP_HD mat<double, Model::n, C> apply_inverse_metric(const mat<double, Model::n, Model::n>& M_chol,
                                                          projection_metric metric,
                                                          const mat<double, Model::n, C>& X) {
  if (metric == projection_metric::euclidean) return X;
  mat<double, Model::n, C> R;
  for (int c = 0; c < C; ++c) {
    vec<double, Model::n> x;
    for (int i = 0; i < Model::n; ++i) x[i] = X(i, c);
    cholesky_solve(M_chol, x);
    for (int i = 0; i < Model::n; ++i) R(i, c) = x[i];
  }
  return R;
}

// The minimal-W-norm correction dx = -W^-1 B^T (B W^-1 B^T)^-1 r for constraints B dx = -r.
template <class Model, int R>
LOCKSTEP_HD member_status minimal_norm_correction(const mat<double, Model::n, Model::n>& M_chol,
                                                  projection_metric metric, const mat<double, R, Model::n>& B,
                                                  const vec<double, R>& r, vec<double, Model::n>& dx) {
  const auto WinvBt = apply_inverse_metric<Model, R>(M_chol, metric, transpose(B));
  auto S = B * WinvBt;
  const factor_result fr = cholesky_factor(S);
  if (fr.info == lu_not_finite) return member_status::model_not_finite;
  if (fr.info != lu_ok) return member_status::singular_matrix;
  vec<double, R> y = r;
  cholesky_solve(S, y);
  dx = -(WinvBt * y);
  return member_status::success;
}

}  // namespace detail

// q'', lambda and nu of the state (t, q, v) from the index-1 system (seed 001 eqs. 122-123)
//     [ M  G^T  A^T ] [ q''    ]   [ Q         ]
//     [ G   0    0  ] [ lambda ] = [ -gamma    ]
//     [ A   0    0  ] [ nu     ]   [ -gamma_nh ]
// solved by the pivoted LU (the matrix is indefinite). Used for consistent initial values and for
// the multipliers reported at output times (stepper/solve_member.hpp).
template <class Model>
LOCKSTEP_HD member_status accelerations_and_multipliers(double t, const vec<double, Model::n>& q,
                                                        const vec<double, Model::n>& v, const double* p,
                                                        vec<double, Model::n>& a, vec<double, Model::m>& lambda,
                                                        vec<double, Model::k>& nu) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int N = n + m + k;
  mat<double, N, N> S;
  vec<double, N> rhs;
  const auto M = Model::template mass<double, double>(q, p);
  const auto Q = Model::template force<double, double>(t, q, v, p);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) S(i, j) = M(i, j);
    rhs[i] = Q[i];
  }
  if constexpr (m > 0) {
    const auto G = constraint_jacobian<Model>(t, q, p);
    const auto gamma = constraint_gamma<Model>(t, q, v, p);
    for (int c = 0; c < m; ++c) {
      for (int j = 0; j < n; ++j) S(n + c, j) = S(j, n + c) = G(c, j);
      rhs[n + c] = -gamma[c];
    }
  }
  if constexpr (k > 0) {
    const auto A = nonholonomic_linearize<Model>(t, q, p).A;
    const auto gamma_nh = nonholonomic_gamma<Model>(t, q, v, p);
    for (int c = 0; c < k; ++c) {
      for (int j = 0; j < n; ++j) S(n + m + c, j) = S(j, n + m + c) = A(c, j);
      rhs[n + m + c] = -gamma_nh[c];
    }
  }
  vec<int, N> pivot;
  const factor_result fr = lu_factor(S, pivot);
  if (fr.info == lu_not_finite) return member_status::model_not_finite;
  if (fr.info != lu_ok) return member_status::singular_matrix;
  lu_solve(S, pivot, rhs);
  for (int i = 0; i < N; ++i)
    if (!is_finite(rhs[i])) return member_status::model_not_finite;
  for (int i = 0; i < n; ++i) a[i] = rhs[i];
  for (int c = 0; c < m; ++c) lambda[c] = rhs[n + c];
  for (int c = 0; c < k; ++c) nu[c] = rhs[n + m + c];
  return member_status::success;
}

template <class Model>
LOCKSTEP_HD member_status consistent_initialization(double t0, const vec<double, Model::n>& q0,
                                                    const vec<double, Model::n>& v0, const double* p,
                                                    const solver_options& opt, initial_values<Model>& out,
                                                    member_counters& counters) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr double eps = std::numeric_limits<double>::epsilon();
  out.q = q0;
  out.v = v0;
  for (int i = 0; i < n; ++i)
    if (!is_finite(q0[i]) || !is_finite(v0[i])) return member_status::model_not_finite;

  auto M_chol = Model::template mass<double, double>(q0, p);
  {
    const factor_result fr = cholesky_factor(M_chol);
    if (fr.info == lu_not_finite) return member_status::model_not_finite;
    if (fr.info != lu_ok) return member_status::singular_matrix;  // M must be SPD
  }

  // 1. positions: Gauss-Newton until the correction is at round-off level.
  if constexpr (m > 0) {
    bool converged = false;
    for (int iter = 0; iter < 30 && !converged; ++iter) {
      const auto con = constraint_linearize<Model>(t0, out.q, p);
      vec<double, n> dq;
      const member_status s = detail::minimal_norm_correction<Model, m>(M_chol, opt.metric, con.G, con.phi, dq);
      if (s != member_status::success) return s;
      out.q = out.q + dq;
      converged = norm_inf(dq) <= 4.0 * eps * (1.0 + norm_inf(out.q));
    }
    if (!converged) return member_status::initialization_failed;
  }
  counters.init_q_correction = norm_inf(out.q - q0);

  // 2. velocities: one linear projection onto [G; A] v + [Phi_t; a] = 0 (repeated once so that the
  // residual is at round-off even when the Gram matrix is poorly conditioned).
  if constexpr (m + k > 0) {
    mat<double, m + k, n> B;
    const auto con = constraint_linearize<Model>(t0, out.q, p);
    for (int a = 0; a < m; ++a)
      for (int j = 0; j < n; ++j) B(a, j) = con.G(a, j);
    vec<double, m + k> b;
    for (int a = 0; a < m; ++a) b[a] = con.phi_t[a];
    if constexpr (k > 0) {
      const auto nh = nonholonomic_linearize<Model>(t0, out.q, p);
      for (int a = 0; a < k; ++a) {
        for (int j = 0; j < n; ++j) B(m + a, j) = nh.A(a, j);
        b[m + a] = nh.a[a];
      }
    }
    for (int pass = 0; pass < 2; ++pass) {
      const vec<double, m + k> r = B * out.v + b;
      vec<double, n> dv;
      const member_status s = detail::minimal_norm_correction<Model, m + k>(M_chol, opt.metric, B, r, dv);
      if (s != member_status::success) return s;
      out.v = out.v + dv;
    }
  }
  counters.init_v_correction = norm_inf(out.v - v0);

  if (opt.init == init_mode::strict &&
      (counters.init_q_correction > opt.init_tolerance || counters.init_v_correction > opt.init_tolerance))
    return member_status::inconsistent_initial;

  // 3. accelerations and multipliers from the index-1 system.
  return accelerations_and_multipliers<Model>(t0, out.q, out.v, p, out.a, out.lambda, out.nu);
}

}  // namespace lockstep
