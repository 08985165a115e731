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
// evaluate_exact_jacobian), and s_{n+1} = U_s. The member's simplified Newton iteration uses one
// Jacobian at (t_n, y_n) for all stages and transforms A^-1 to block-diagonal form; the tangents need
// the exact derivative, with a different Jacobian at each stage, so (R1) is solved in full. It is
// solved for the stage increments W_i = U_i - s_n (the right-hand side is then the linearized residual
// at W = 0, of the size of s, not of h^-1 |s|), and the velocity rows are eliminated as the Newton
// matrix of formulation/euler_lagrange.hpp eliminates them: the kinematic rows of stage i give
//     W_v,i = sum_l (A^-1)_il / h W_q,l + H_i W_q,i + G_i^T W_mu,i + R_q,i
// (H_i = d(G^T mu)/dq on ggl, R_i the linearized residual at W = 0), which leaves s (n + 2m + k)
// unknowns (W_q, W_lambda, W_mu, W_nu per stage; 24 for the double pendulum with s = 3 against 36 with
// the velocities, a third of the factorization's work), coupled across stages through (A^-1)^2 / h^2 in
// the dynamic rows; on index3, where mu is pinned (W_mu = -s_mu), s (n + m + k) (18: an eighth of the
// work). The blocks scale like h^-2 (dynamic rows), h^-1 and 1, so the matrix is equilibrated
// (rows, then columns, scaled to unit largest entry, as LAPACK's dgeequ) and factored once per accepted
// step by the pivoted LU; the directions are solved together. The stage equations contain
// Phi(Y_i) = 0 (and on ggl G v + Phi_t = 0, and A v + a = 0), so every stage tangent, and
// s_{n+1} = U_s, satisfies the linearized constraints to rounding, as for BDF.
//
// Error control of the tangents (why: tangent.hpp). Radau's estimate (radau.hpp header, Hairer & Wanner
// IV.8 (8.19)-(8.20)), linearized: the state's err solves J(g / h) err = -F(t_n, y_n, -h^-1 sum d_i Z_i),
// so a direction's err_s solves J(g / h) err_s = -dF, dF = F_y(n) s_n + F_y'(n) (-h^-1 sum d_i (U_i - s_n))
// (+ F_p(n) e_j) at (t_n, y_n, -h^-1 sum d_i Z_i), filtered by the member's own factored block (the
// Jacobian of this step). Its norm over the (q, v) parts, with the weighting of tangent.hpp and
// RADAU5's index scaling (v on index3 counts h times), joins the state's: the tangents are the companion
// of the member's step (method/attempt.hpp), and RADAU5's one controller (method/radau_step_control.hpp:
// the Newton-effort safety factor, Gustafsson's prediction, the [0.2, 8] bounds, the first-step cut)
// decides on the larger of the state's and the tangents' errors, rejects the step when it is not < 1,
// and remembers it as the accepted error otherwise. The second application of the filter RADAU5 uses
// after rejections is not repeated for the tangents.
#pragma once

#include <type_traits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/linearized_residual.hpp"
#include "lockstep/lyapunov/tangent_bdf.hpp"
#include "lockstep/lyapunov/tangent_error_control.hpp"
#include "lockstep/lyapunov/tangent_member_common.hpp"
#include "lockstep/method/methods.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

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

// The linearized stage system (R1) in the stage increments with the velocities eliminated (header
// comment), equilibrated and factored. Unknowns (and their rows): per stage (W_q, W_lambda, W_nu) with
// the dynamic, position-constraint and non-holonomic rows, then W_mu of every stage with the velocity-
// constraint rows. On index3 W_mu is pinned to zero, so only the leading stages * (n + m + k) block is
// factored (`reduced`; 18 unknowns instead of 24 for the double pendulum with s = 3).
template <int Size>
struct equilibrated_lu {
  mat<double, Size, Size> lu;
  vec<int, Size> pivot;
  double row_scale[Size];
  double column_scale[Size];
};

template <class Model, int Stages>
struct radau_tangent_system {
  static constexpr int per_stage = Model::n + Model::m + Model::k;  // without W_mu
  static constexpr int reduced_size = Stages * per_stage;
  static constexpr int size = reduced_size + Stages * Model::m;
  mat<double, size, size> matrix;
  equilibrated_lu<size> full;             // ggl
  equilibrated_lu<reduced_size> reduced;  // index3
};

// Equilibrates and factors the leading Size x Size block of A into F.
template <int Size, int N>
LOCKSTEP_HD factor_result factor_equilibrated(const mat<double, N, N>& A, equilibrated_lu<Size>& F) {
  for (int r = 0; r < Size; ++r)
    for (int c = 0; c < Size; ++c) F.lu(r, c) = A(r, c);
  equilibrate<Size>(F.lu, F.row_scale, F.column_scale);
  return lu_factor(F.lu, F.pivot);
}

// Solves the leading Size rows of the columns of B (count of them) with F, in place.
template <int Size, int N, int R>
LOCKSTEP_HD void solve_equilibrated(const equilibrated_lu<Size>& F, mat<double, N, R>& B, int count) {
  mat<double, Size, R> X;
  for (int r = 0; r < Size; ++r)
    for (int c = 0; c < count; ++c) X(r, c) = B(r, c) * F.row_scale[r];
  lu_solve(F.lu, F.pivot, X, count);
  for (int r = 0; r < Size; ++r)
    for (int c = 0; c < count; ++c) B(r, c) = X(r, c) * F.column_scale[r];
}

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

// The tangents as the companion of the member's Radau IIA step (method/attempt.hpp): once the state's
// stages have converged and passed the error test, (R1) is solved for every direction; with error
// control (adaptive steps), the directions' largest error joins the state's in RADAU5's controller
// (header comment). accept() makes the new tangents the member's.
template <class Model, class RT, int Capacity>
struct radau_tangent_companion {
  radau_tangent_member<Model, RT, Capacity>& tm;
  const double* p;
  const solver_options& opt;
  double err_tangents = 0.0;
  state_vector<Model> fresh[Capacity];  // s_{n+1}

  LOCKSTEP_HD radau_tangent_companion(radau_tangent_member<Model, RT, Capacity>& member, const double* params,
                                      const solver_options& options)
      : tm(member), p(params), opt(options) {}

  LOCKSTEP_HD double estimate() const { return err_tangents; }
  LOCKSTEP_HD void rejected() { ++tm.tangent_rejections; }
  LOCKSTEP_HD void accept() {
    for (int d = 0; d < tm.directions; ++d) tm.current[d] = fresh[d];
  }

  LOCKSTEP_HD member_status solve(const radau_converged_step<Model, RT>& step) {
    using L = state_layout<Model>;
    constexpr int ny = L::size, ns = RT::stages;
    const radau_state<Model, RT>& s = step.s;
    const double h = step.h, t_n = s.t;
    const state_vector<Model>& y_n = s.y;
    const state_vector<Model>* Z = step.Z;

    // ---- (R1): the stage Jacobians and the coupled system (header comment) ----
    constexpr int n = Model::n, m = Model::m, k = Model::k;
    using S_t = detail::radau_tangent_system<Model, ns>;
    constexpr int nb = S_t::per_stage, N = S_t::size, Nr = S_t::reduced_size;
    // Positions of the unknowns (and of their rows) in the system (detail::radau_tangent_system).
    auto iq = [](int i, int j) { return i * nb + j; };
    auto il = [](int i, int e) { return i * nb + n + e; };
    auto inu = [](int i, int e) { return i * nb + n + m + e; };
    auto imu = [](int i, int e) { return Nr + i * m + e; };
    const bool ggl = uses_mu(opt.form);
    exact_jacobian<Model> X[ns];
    state_vector<Model> Y[ns];
    vec<double, Model::n> Ydot[ns];
    for (int i = 0; i < ns; ++i) {
      for (int j = 0; j < n; ++j) Ydot[i][j] = detail::stage_sum<ns>([i](int l) { return RT::Ainv(i, l); }, Z, L::v + j) / h;
      Y[i] = y_n + Z[i];
      const member_status js = evaluate_exact_jacobian<Model>(opt.form, t_n + RT::c(i) * h, Y[i], Ydot[i], p, X[i]);
      if (js != member_status::success) return js;
    }
    double a[ns][ns], a2[ns][ns];  // (A^-1) / h and its square
    for (int i = 0; i < ns; ++i)
      for (int l = 0; l < ns; ++l) a[i][l] = RT::Ainv(i, l) / h;
    for (int i = 0; i < ns; ++i)
      for (int l = 0; l < ns; ++l) {
        a2[i][l] = 0.0;
        for (int j = 0; j < ns; ++j) a2[i][l] += a[i][j] * a[j][l];
      }
    auto& S = tm.system;
    auto& A = S.matrix;
    A = mat<double, N, N>{};
    for (int i = 0; i < ns; ++i) {
      const jacobian_blocks<Model>& J = X[i].jac;
      const mat<double, n, n>& H = X[i].H;
      for (int l = 0; l < ns; ++l) {
        const mat<double, n, n>& Hl = X[l].H;
        const auto& Gl = X[l].jac.G;
        // Dynamic rows: M_i sum_j a_ij W_v,j - D_i W_v,i + K_i W_q,i + G_i^T W_lambda,i + A_i^T W_nu,i.
        for (int r = 0; r < n; ++r) {
          for (int c = 0; c < n; ++c) {
            double e = a2[i][l] * J.M(r, c) - a[i][l] * J.dQ_dv(r, c);
            if (i == l) e += J.K(r, c);
            if (ggl) {  // H = 0 on index3
              double MH = 0.0, DH = 0.0;
              for (int j = 0; j < n; ++j) {
                MH += J.M(r, j) * Hl(j, c);
                if (i == l) DH += J.dQ_dv(r, j) * H(j, c);
              }
              e += a[i][l] * MH - DH;
            }
            A(iq(i, r), iq(l, c)) = e;
          }
          if (ggl)
            for (int b = 0; b < m; ++b) {
              double MG = 0.0, DG = 0.0;
              for (int j = 0; j < n; ++j) {
                MG += J.M(r, j) * Gl(b, j);
                if (i == l) DG += J.dQ_dv(r, j) * J.G(b, j);
              }
              A(iq(i, r), imu(l, b)) = a[i][l] * MG - (i == l ? DG : 0.0);
            }
        }
        // Velocity constraints (ggl) and non-holonomic rows see W_v,i: a_il G_i (A_i) on W_q,l.
        for (int c = 0; c < n; ++c) {
          if (ggl)
            for (int b = 0; b < m; ++b) A(imu(i, b), iq(l, c)) = a[i][l] * J.G(b, c);
          for (int b = 0; b < k; ++b) A(inu(i, b), iq(l, c)) = a[i][l] * J.A(b, c);
        }
      }
      // Stage-diagonal blocks.
      for (int r = 0; r < n; ++r) {
        for (int b = 0; b < m; ++b) A(iq(i, r), il(i, b)) = J.G(b, r);
        for (int b = 0; b < k; ++b) A(iq(i, r), inu(i, b)) = J.A(b, r);
      }
      for (int b = 0; b < m; ++b) {
        for (int c = 0; c < n; ++c) A(il(i, b), iq(i, c)) = J.G(b, c);  // Phi
        if (ggl) {
          for (int c = 0; c < n; ++c) {  // Psi_q W_q + G (H W_q + G^T W_mu)
            double GH = 0.0;
            for (int j = 0; j < n; ++j) GH += J.G(b, j) * H(j, c);
            A(imu(i, b), iq(i, c)) += J.Psi_q(b, c) + GH;
          }
          for (int e = 0; e < m; ++e) {
            double GG = 0.0;
            for (int j = 0; j < n; ++j) GG += J.G(b, j) * J.G(e, j);
            A(imu(i, b), imu(i, e)) = GG;
          }
        }
      }
      for (int b = 0; b < k; ++b) {
        for (int c = 0; c < n; ++c) {
          double AH = 0.0;
          if (ggl)
            for (int j = 0; j < n; ++j) AH += J.A(b, j) * H(j, c);
          A(inu(i, b), iq(i, c)) += J.A_q(b, c) + AH;
        }
        if (ggl)
          for (int e = 0; e < m; ++e) {
            double AG = 0.0;
            for (int j = 0; j < n; ++j) AG += J.A(b, j) * J.G(e, j);
            A(inu(i, b), imu(i, e)) = AG;
          }
      }
    }
    const factor_result fr = ggl ? detail::factor_equilibrated<N>(A, S.full)
                                 : detail::factor_equilibrated<Nr>(A, S.reduced);
    ++tm.tangent_factorizations;
    if (fr.info == lu_not_finite) return member_status::model_not_finite;
    if (fr.info != lu_ok) return member_status::singular_matrix;

    // Right-hand sides: the linearized residuals R_i at W = 0, with the eliminated kinematic rows' R_q,i.
    const state_vector<Model> zero{};
    state_vector<Model> R[Capacity][ns];
    mat<double, N, Capacity> B;
    for (int d = 0; d < tm.directions; ++d) {
      const state_vector<Model>& sn = tm.current[d];
      for (int i = 0; i < ns; ++i) {
        state_vector<Model> dFdp;
        if (tm.parameter[d] >= 0)
          dFdp = residual_parameter_derivative<Model>(opt.form, t_n + RT::c(i) * h, Y[i], Ydot[i], p, tm.parameter[d]);
        R[d][i] = linearized_residual<Model>(opt.form, X[i], sn, zero, tm.parameter[d] >= 0 ? &dFdp : nullptr);
      }
      for (int i = 0; i < ns; ++i) {
        const jacobian_blocks<Model>& J = X[i].jac;
        const state_vector<Model>& Ri = R[d][i];
        for (int r = 0; r < n; ++r) {  // -R_v,i - M_i sum_l a_il R_q,l + D_i R_q,i
          double b = -Ri[L::v + r];
          for (int j = 0; j < n; ++j) {
            double aRq = 0.0;
            for (int l = 0; l < ns; ++l) aRq += a[i][l] * R[d][l][L::q + j];
            b += -J.M(r, j) * aRq + J.dQ_dv(r, j) * Ri[L::q + j];
          }
          B(iq(i, r), d) = b;
        }
        for (int e = 0; e < m; ++e) {
          B(il(i, e), d) = -Ri[L::lambda + e];
          double GRq = 0.0;
          for (int j = 0; j < n; ++j) GRq += J.G(e, j) * Ri[L::q + j];
          B(imu(i, e), d) = -Ri[L::mu + e] - GRq;  // ggl only: index3's W_mu is set below
        }
        for (int e = 0; e < k; ++e) {
          double ARq = 0.0;
          for (int j = 0; j < n; ++j) ARq += J.A(e, j) * Ri[L::q + j];
          B(inu(i, e), d) = -Ri[L::nu + e] - ARq;
        }
      }
    }
    if (ggl)
      detail::solve_equilibrated<N>(S.full, B, tm.directions);
    else
      detail::solve_equilibrated<Nr>(S.reduced, B, tm.directions);

    state_vector<Model> increments[Capacity];  // sum d_i (U_i - s_n)
    for (int d = 0; d < tm.directions; ++d) {
      const state_vector<Model>& sn = tm.current[d];
      state_vector<Model> W[ns];
      for (int i = 0; i < ns; ++i) {
        for (int j = 0; j < n; ++j) W[i][L::q + j] = B(iq(i, j), d);
        for (int e = 0; e < m; ++e) {
          W[i][L::lambda + e] = B(il(i, e), d);
          W[i][L::mu + e] = ggl ? B(imu(i, e), d) : -sn[L::mu + e];  // index3: U_mu = 0
        }
        for (int e = 0; e < k; ++e) W[i][L::nu + e] = B(inu(i, e), d);
      }
      for (int i = 0; i < ns; ++i) {  // W_v,i = sum_l a_il W_q,l + H_i W_q,i + G_i^T W_mu,i + R_q,i
        for (int j = 0; j < n; ++j) {
          double v = R[d][i][L::q + j];
          for (int l = 0; l < ns; ++l) v += a[i][l] * W[l][L::q + j];
          if (ggl) {
            for (int c = 0; c < n; ++c) v += X[i].H(j, c) * W[i][L::q + c];
            for (int e = 0; e < m; ++e) v += X[i].jac.G(e, j) * W[i][L::mu + e];
          }
          W[i][L::v + j] = v;
        }
      }
      increments[d] = state_vector<Model>{};
      for (int i = 0; i < ns; ++i)
        for (int j = 0; j < ny; ++j) increments[d][j] += RT::d(i) * W[i][j];
      for (int j = 0; j < ny; ++j) fresh[d][j] = sn[j] + W[ns - 1][j];
    }
    if (!detail::tangents_finite<Model>(fresh, tm.directions)) return member_status::model_not_finite;

    // ---- the directions' error (adaptive steps with error control; header comment) ----
    err_tangents = 0.0;
    if (opt.fixed_h > 0.0 || !tm.error_control) return member_status::success;
    state_vector<Model> ypt;  // the state's -h^-1 sum d_i Z_i, as radau_attempt forms it
    for (int j = 0; j < ny; ++j) ypt[j] = -detail::stage_sum<ns>([](int l) { return RT::d(l); }, Z, j) / h;
    vec<double, Model::n> vdot0;
    for (int j = 0; j < Model::n; ++j) vdot0[j] = ypt[L::v + j];
    exact_jacobian<Model> X0;
    const member_status js = evaluate_exact_jacobian<Model>(opt.form, t_n, y_n, vdot0, p, X0);
    if (js != member_status::success) return js;
    for (int d = 0; d < tm.directions; ++d) {
      const state_vector<Model>& sn = tm.current[d];
      state_vector<Model> shifted;
      for (int j = 0; j < ny; ++j) shifted[j] = -increments[d][j] / h;
      state_vector<Model> dFdp;
      if (tm.parameter[d] >= 0)
        dFdp = residual_parameter_derivative<Model>(opt.form, t_n, y_n, vdot0, p, tm.parameter[d]);
      const state_vector<Model> dF =
          linearized_residual<Model>(opt.form, X0, sn, shifted, tm.parameter[d] >= 0 ? &dFdp : nullptr);
      const residual_parts<Model> parts = detail::unflatten<Model>(dF);
      state_vector<Model> e, e_im;
      detail::filter_error<Model, RT>(opt.form, s, parts, e, e_im);
      // Index-1 components take the Milne factor of the state's estimate; v on index3 counts h times.
      const detail::tangent_weighting wt = detail::weighting_for(tm.parameter[d], p, opt);
      const double index_factor = variable_index<Model>(opt.form, L::v) == 2 ? min(h, 1.0) : RT::error_scale;
      for (int j = 0; j < ny; ++j) {
        const double factor = j < L::v ? RT::error_scale : (j < L::lambda ? index_factor : 0.0);
        e[j] *= factor;
        e_im[j] *= factor;
      }
      const double re = detail::tangent_error_norm<Model>(e, fresh[d], wt);
      const double im = detail::tangent_error_norm<Model>(e_im, fresh[d], wt);
      err_tangents = max(err_tangents, sqrt(re * re + im * im));
    }
    return member_status::success;
  }
};

}  // namespace detail

// One step attempt of the member and its tangents: radau_attempt with the tangents as its companion.
// Returns what radau_attempt returned; a failure sets status.
template <class Model, class RT, int Capacity>
LOCKSTEP_HD attempt_result tangent_member_attempt(radau_tangent_member<Model, RT, Capacity>& tm, double t_end,
                                                  const double* p, const solver_options& opt) {
  detail::radau_tangent_companion<Model, RT, Capacity> tangents(tm, p, opt);
  return detail::run_member_attempt(tm, [&](member_status& why) {
    return radau_attempt<Model>(tm.method, t_end, p, opt, tm.counters, why, tangents);
  });
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
// Methods: every_method, or the one method compiled (method/methods.hpp, visit_method_in); f is not
// called for a method without tangents (rho_inf).
template <class Model, int Capacity, class Methods = every_method, class F>
void visit_tangent_member(method_kind kind, F&& f) {
  if constexpr (std::is_same_v<Methods, every_method>) {
    switch (kind) {
      case method_kind::radau5: return f.template operator()<radau_tangent_member<Model, radau5_tableau, Capacity>>();
      case method_kind::radau3: return f.template operator()<radau_tangent_member<Model, radau3_tableau, Capacity>>();
      case method_kind::euler: return f.template operator()<radau_tangent_member<Model, euler_tableau, Capacity>>();
      default: break;
    }
    f.template operator()<tangent_member<Model, Capacity>>();
  } else if constexpr (Methods::kind == method_kind::bdf) {
    f.template operator()<tangent_member<Model, Capacity>>();
  } else if constexpr (Methods::kind == method_kind::radau5) {
    f.template operator()<radau_tangent_member<Model, radau5_tableau, Capacity>>();
  } else if constexpr (Methods::kind == method_kind::radau3) {
    f.template operator()<radau_tangent_member<Model, radau3_tableau, Capacity>>();
  } else if constexpr (Methods::kind == method_kind::euler) {
    f.template operator()<radau_tangent_member<Model, euler_tableau, Capacity>>();
  }
}

}  // namespace lockstep
