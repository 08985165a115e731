// lockstep/lyapunov/tangent_radau.hpp — tangents (forward sensitivities) of a Radau IIA member
// (method/radau.hpp: s = 3, 2, 1 stages) on the index3 and ggl formulations, by the staggered direct
// method of lyapunov/tangent.hpp applied to the stage equations.
//
// A Radau IIA step is the map y_n -> y_{n+1} = Y_s defined by the s stage equations
//     F(t_n + c_i h, Y_i, h^-1 sum_l (A^-1)_il (Y_l - y_n)) = 0,   i = 1..s
// (Hairer & Wanner IV.8 (8.2) in collocation form; stiffly accurate, c_s = 1). With the step size held,
// its derivative along s_n solves the linearized stage system for the stage tangents U_i = dY_i:
//     F_y(i) U_i + F_y'(i) h^-1 sum_l (A^-1)_il (U_l - s_n) = -F_p(i) e_j,                           (R1)
// F_y(i), F_y'(i) the exact Jacobians at the converged stage (t_i, Y_i, Y'_i) (tangent.hpp's
// evaluate_tangent_jacobian), and s_{n+1} = U_s. The member's simplified Newton iteration uses one
// Jacobian at (t_n, y_n) for all stages and transforms A^-1 to block-diagonal form; the tangents need
// the exact derivative, with a different Jacobian at each stage, so (R1) is solved in full:
// s (2n + 2m + k) unknowns (36 for the double pendulum with s = 3), equilibrated (rows, then columns,
// scaled to unit largest entry, as LAPACK's dgeequ: the blocks scale like h^-1 and, on index3, the
// multipliers' columns like h^-2) and factored once per accepted step by the pivoted LU. The stage
// equations contain Phi(Y_i) = 0 (and on ggl G v + Phi_t = 0, and A v + a = 0), so every stage tangent,
// and s_{n+1} = U_s, satisfies the linearized constraints to rounding, as for BDF.
//
// Error control of the tangents (why: tangent.hpp). Radau's estimate (radau.hpp header, Hairer & Wanner
// IV.8 (8.19)-(8.20)), linearized: the state's err solves J(g / h) err = -F(t_n, y_n, -h^-1 sum d_i Z_i),
// so a direction's err_s solves J(g / h) err_s = -dF, dF = F_y(n) s_n + F_y'(n) (-h^-1 sum d_i (U_i - s_n))
// (+ F_p(n) e_j) at (t_n, y_n, -h^-1 sum d_i Z_i), filtered by the member's own factored block (the
// Jacobian of this step). Its norm over the (q, v) parts, with the weighting of tangent.hpp and
// RADAU5's index scaling (v on index3 counts h times), must be <= 1, else the step is rejected after
// all (state restored) with RADAU5's step-size quotient; an accepted step caps the next step by the
// same quotient. The second application of the filter RADAU5 uses after rejections is not repeated
// for the tangents.
#pragma once

#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/method/radau.hpp"

namespace lockstep {

namespace detail {

// The linearized stage system (R1), equilibrated and factored.
template <class Model, int Stages>
struct radau_tangent_system {
  static constexpr int ny = state_layout<Model>::size;
  static constexpr int size = Stages * ny;
  mat<double, size, size> lu;
  vec<int, size> pivot;
  double row_scale[size];
  double column_scale[size];
};

}  // namespace detail

template <class Model, class Tableau, int Capacity = 2 * Model::n>
struct radau_tangent_member {
  using model = Model;
  static constexpr int capacity = Capacity;
  radau_state<Model, Tableau> method;
  member_counters counters;
  member_status status = member_status::running;
  long attempts = 0;
  int directions = 0;
  int parameter[Capacity] = {};
  state_vector<Model> current[Capacity];  // tangents of method.y
  long tangent_factorizations = 0;
  bool error_control = true;
  long tangent_rejections = 0;
  detail::radau_tangent_system<Model, Tableau::stages> system;  // workspace of (R1)
};

template <class Model, class Tableau, int Capacity>
LOCKSTEP_HD void tangent_member_begin(radau_tangent_member<Model, Tableau, Capacity>& tm, double t0, double t1,
                                      const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                                      const double* p, const solver_options& opt,
                                      const phase_vector<Model>* directions, int state_directions,
                                      const int* parameters, int parameter_directions, bool error_control = true) {
  begin_member_with_tangents<Model>(
      tm, t0, t1, q0, v0, p, opt, directions, state_directions, parameters, parameter_directions, error_control,
      [&](const initial_values<Model>& init) { radau_start(tm.method, t0, t1, init, opt); },
      [&](int d, const state_vector<Model>& s0, const state_vector<Model>&) { tm.current[d] = s0; });
}

namespace detail {

// Rows, then columns, scaled to a largest entry of 1 (dgeequ's idea, without its powers of 2).
template <int N>
LOCKSTEP_HD void equilibrate(mat<double, N, N>& A, double* row_scale, double* column_scale) {
  for (int r = 0; r < N; ++r) {
    double big = 0.0;
    for (int c = 0; c < N; ++c) big = max(big, abs(A(r, c)));
    row_scale[r] = big > 0.0 ? 1.0 / big : 1.0;
    for (int c = 0; c < N; ++c) A(r, c) *= row_scale[r];
  }
  for (int c = 0; c < N; ++c) {
    double big = 0.0;
    for (int r = 0; r < N; ++r) big = max(big, abs(A(r, c)));
    column_scale[c] = big > 0.0 ? 1.0 / big : 1.0;
    for (int r = 0; r < N; ++r) A(r, c) *= column_scale[c];
  }
}

// F_y' x for the layout of y: x's q' part on the F_q rows, M x's v' part on the F_v rows.
template <class Model>
LOCKSTEP_HD state_vector<Model> apply_derivative_jacobian(const tangent_jacobian<Model>& J, const state_vector<Model>& x) {
  using L = state_layout<Model>;
  state_vector<Model> out{};
  for (int i = 0; i < Model::n; ++i) {
    out[L::q + i] = x[L::q + i];
    double s = 0.0;
    for (int j = 0; j < Model::n; ++j) s += J.M(i, j) * x[L::v + j];
    out[L::v + i] = s;
  }
  return out;
}

}  // namespace detail

// One step attempt of the member (radau_attempt) and, when it is accepted, the tangents' step (R1)
// with their error test (header comment).
template <class Model, class RT, int Capacity>
LOCKSTEP_HD attempt_result tangent_member_attempt(radau_tangent_member<Model, RT, Capacity>& tm, double t_end,
                                                  const double* p, const solver_options& opt) {
  using L = state_layout<Model>;
  constexpr int ny = L::size, ns = RT::stages, N = ns * ny;
  const radau_state<Model, RT> before = tm.method;
  const long steps_before = tm.counters.steps;
  const attempt_result r = detail::run_member_attempt(tm, [&](member_status& why) {
    return radau_attempt<Model>(tm.method, t_end, p, opt, tm.counters, why);
  });
  if (r != attempt_result::accepted) return r;

  const radau_state<Model, RT>& s = tm.method;
  const double h = s.h_last, t_n = s.t - h;
  const state_vector<Model>& y_n = s.y_last;
  auto fail = [&](member_status st) {
    tm.status = st;
    return attempt_result::failed;
  };

  // ---- (R1): the stage Jacobians and the coupled system ----
  tangent_jacobian<Model> J[ns];
  state_vector<Model> Y[ns];
  for (int i = 0; i < ns; ++i) {
    vec<double, Model::n> vdot;
    for (int j = 0; j < Model::n; ++j) vdot[j] = detail::stage_sum<ns>([i](int l) { return RT::Ainv(i, l); }, s.Z, L::v + j) / h;
    Y[i] = y_n + s.Z[i];
    const member_status js = evaluate_tangent_jacobian<Model>(opt.form, t_n + RT::c(i) * h, Y[i], vdot, p, J[i]);
    if (js != member_status::success) return fail(js);
  }
  auto& S = tm.system;
  S.lu = mat<double, N, N>{};
  for (int i = 0; i < ns; ++i)
    for (int l = 0; l < ns; ++l) {
      const double a = RT::Ainv(i, l) / h;
      for (int r = 0; r < ny; ++r)
        for (int c = 0; c < ny; ++c) S.lu(i * ny + r, l * ny + c) = i == l ? J[i].Fy(r, c) : 0.0;
      for (int k = 0; k < Model::n; ++k) {
        S.lu(i * ny + L::q + k, l * ny + L::q + k) += a;
        for (int j = 0; j < Model::n; ++j) S.lu(i * ny + L::v + k, l * ny + L::v + j) += a * J[i].M(k, j);
      }
    }
  detail::equilibrate<N>(S.lu, S.row_scale, S.column_scale);
  const factor_result fr = lu_factor(S.lu, S.pivot);
  ++tm.tangent_factorizations;
  if (fr.info == lu_not_finite) return fail(member_status::model_not_finite);
  if (fr.info != lu_ok) return fail(member_status::singular_matrix);

  state_vector<Model> fresh[Capacity], increments[Capacity];  // s_{n+1}, and sum d_i (U_i - s_n)
  for (int d = 0; d < tm.directions; ++d) {
    const state_vector<Model>& sn = tm.current[d];
    vec<double, N> b;
    for (int i = 0; i < ns; ++i) {
      double row_sum = 0.0;
      for (int l = 0; l < ns; ++l) row_sum += RT::Ainv(i, l);
      state_vector<Model> rhs = detail::apply_derivative_jacobian<Model>(J[i], sn);
      for (int j = 0; j < ny; ++j) rhs[j] *= row_sum / h;
      if (tm.parameter[d] >= 0) {
        vec<double, Model::n> vdot;
        for (int j = 0; j < Model::n; ++j)
          vdot[j] = detail::stage_sum<ns>([i](int l) { return RT::Ainv(i, l); }, s.Z, L::v + j) / h;
        const state_vector<Model> dFdp =
            residual_parameter_derivative<Model>(opt.form, t_n + RT::c(i) * h, Y[i], vdot, p, tm.parameter[d]);
        for (int j = 0; j < ny; ++j) rhs[j] -= dFdp[j];
      }
      for (int j = 0; j < ny; ++j) b[i * ny + j] = rhs[j] * S.row_scale[i * ny + j];
    }
    lu_solve(S.lu, S.pivot, b);
    for (int q = 0; q < N; ++q) b[q] *= S.column_scale[q];
    increments[d] = state_vector<Model>{};
    for (int i = 0; i < ns; ++i)
      for (int j = 0; j < ny; ++j) increments[d][j] += RT::d(i) * (b[i * ny + j] - sn[j]);
    for (int j = 0; j < ny; ++j) fresh[d][j] = b[(ns - 1) * ny + j];
  }

  // ---- the tangents' error test (adaptive steps only) ----
  if (tm.error_control && !(opt.fixed_h > 0.0)) {
    state_vector<Model> ypt;  // the state's -h^-1 sum d_i Z_i, as radau_attempt formed it
    for (int j = 0; j < ny; ++j) ypt[j] = -detail::stage_sum<ns>([](int l) { return RT::d(l); }, s.Z, j) / h;
    vec<double, Model::n> vdot0;
    for (int j = 0; j < Model::n; ++j) vdot0[j] = ypt[L::v + j];
    tangent_jacobian<Model> J0;
    const member_status js = evaluate_tangent_jacobian<Model>(opt.form, t_n, y_n, vdot0, p, J0);
    if (js != member_status::success) return fail(js);
    double err = 0.0;
    for (int d = 0; d < tm.directions; ++d) {
      const state_vector<Model>& sn = tm.current[d];
      state_vector<Model> shifted;
      for (int j = 0; j < ny; ++j) shifted[j] = -increments[d][j] / h;
      state_vector<Model> dF = J0.Fy * sn + detail::apply_derivative_jacobian<Model>(J0, shifted);
      if (tm.parameter[d] >= 0) {
        const state_vector<Model> dFdp = residual_parameter_derivative<Model>(opt.form, t_n, y_n, vdot0, p, tm.parameter[d]);
        for (int j = 0; j < ny; ++j) dF[j] += dFdp[j];
      }
      const residual_parts<Model> parts = detail::unflatten<Model>(dF);
      state_vector<Model> e, e_im;
      detail::filter_error(opt.form, s, parts, e, e_im);
      // Index-1 components take the Milne factor of the state's estimate; v on index3 counts h times.
      const detail::tangent_weighting wt = detail::weighting_for(tm.parameter[d], p, opt, 1.0);
      const double index_factor = variable_index<Model>(opt.form, L::v) == 2 ? min(h, 1.0) : RT::error_scale;
      for (int j = 0; j < ny; ++j) {
        const double factor = j < L::v ? RT::error_scale : (j < L::lambda ? index_factor : 0.0);
        e[j] *= factor;
        e_im[j] *= factor;
      }
      const double re = detail::tangent_error_norm<Model>(e, fresh[d], wt);
      const double im = detail::tangent_error_norm<Model>(e_im, fresh[d], wt);
      err = max(err, sqrt(re * re + im * im));
    }
    constexpr double exponent = 1.0 / (ns + 1);
    const double quot = max(0.2, min(8.0, pow(max(err, 1e-10), exponent) / 0.9));
    if (!(err < 1.0)) {
      detail::undo_accepted_step(tm, before, steps_before);
      tm.method.h = h / quot;
      tm.method.last_rejected = true;
      return attempt_result::rejected;
    }
    tm.method.h = min(tm.method.h, h / quot);
  }
  for (int d = 0; d < tm.directions; ++d) tm.current[d] = fresh[d];
  return r;
}

template <class Model, class RT, int Capacity>
LOCKSTEP_HD void recombine_tangents(radau_tangent_member<Model, RT, Capacity>& tm, const double (*X)[Capacity],
                                    int count) {
  detail::recombine_slot<Model, Capacity>(tm.current, X, count);
}

template <class Model, class RT, int Capacity>
LOCKSTEP_HD double member_time(const radau_tangent_member<Model, RT, Capacity>& tm) {
  return tm.method.t;
}
template <class Model, class RT, int Capacity>
LOCKSTEP_HD const state_vector<Model>& member_point(const radau_tangent_member<Model, RT, Capacity>& tm) {
  return tm.method.y;
}
template <class Model, class RT, int Capacity>
LOCKSTEP_HD state_vector<Model>* current_tangents(radau_tangent_member<Model, RT, Capacity>& tm) {
  return tm.current;
}

// Calls f.template operator()<Member>() with the tangent member of the method the options name (BDF
// or Radau IIA with 3, 2, 1 stages; tangent_check_options refuses the others before this is reached).
template <class Model, int Capacity, class F>
decltype(auto) visit_tangent_member(method_kind kind, F&& f) {
  switch (kind) {
    case method_kind::radau5: return f.template operator()<radau_tangent_member<Model, radau5_tableau, Capacity>>();
    case method_kind::radau3: return f.template operator()<radau_tangent_member<Model, radau3_tableau, Capacity>>();
    case method_kind::euler: return f.template operator()<radau_tangent_member<Model, euler_tableau, Capacity>>();
    default: break;
  }
  return f.template operator()<tangent_member<Model, Capacity>>();
}

}  // namespace lockstep
