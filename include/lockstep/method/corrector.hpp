// lockstep/method/corrector.hpp — the corrector of the methods that solve one implicit equation per
// step, BDF (method/bdf.hpp) and the rho_inf two-step method (method/rhoinf.hpp):
//
//     F(t_new, y, y'_pred + c (y - y_pred)) = 0,
//
// where the method supplies the predictor (y_pred, y'_pred) and the shift c (y' = c y + known terms:
// the leading coefficient over h; Mantegazza & Masarati 2012, eqs. 124-128). Simplified Newton on the reduced
// saddle-point matrix J(c) = F_y + c F_y' of formulation/euler_lagrange.hpp, with the Jacobian evaluated at the
// predicted point and kept across steps while the contraction rate stays below 0.1; the matrix is
// refactored (without re-evaluating the Jacobian) when c leaves the band around the shift it was factored
// for that IDA allows (stale_shift_ratio_ok), and within the band each increment is scaled for the stale
// shift; a failure with an old Jacobian re-evaluates it once. Convergence follows IDA
// (rate / (1 - rate) ||Delta|| <= newton_tol, at most newton_max_iterations iterations,
// Hindmarsh et al. 2005) with the changes bdf.hpp's banner lists.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// The Jacobian and the factored Newton matrix a member keeps between steps.
template <class Model>
struct corrector_matrices {
  jacobian_blocks<Model> jac;
  newton_matrix<Model, double> newton;
  bool jacobian_valid = false;
  bool newton_valid = false;
  bool jacobian_fresh = false;  // evaluated during the current step attempt
  external_factors external;    // the split path (method/attempt.hpp)
};

namespace detail {

// The iteration's measures and decisions (newton_norm, stale_shift_ratio_ok, stale_shift_scale,
// judge_newton_increment: their rules and sources are stated there), one text for one member here and
// for SIMD packs in lockstep/simd/newton_control_inl.hpp.
#include "lockstep/method/newton_control_generic.inc"

// newton_norm of one member's increment, with the constraint Jacobian and dropped rows of J.
template <class Model>
LOCKSTEP_HD double newton_norm(formulation f, const state_vector<Model>& delta, const state_vector<Model>& w,
                               const jacobian_blocks<Model>& J, double c) {
  return newton_norm<Model>(f, delta, w, J.G, [&](int row) { return row_dropped(J.dropped, row); }, c);
}

// What the simplified Newton iteration does after its increment number `it` (from 0) with the norm
// dnorm (finite): iterate again, stop converged, or stop without converging.
enum class newton_verdict : int { iterate = 0, converged = 1, stopped = 2 };
using newton_progress = newton_progress_of<double>;

// judge_newton_increment for one member.
LOCKSTEP_HD newton_verdict judge_newton_increment(int it, double dnorm, bool jacobian_fresh, double newton_tol,
                                                  newton_progress& progress) {
  const newton_verdicts_of<bool> v = judge_newton_increment(true, it, dnorm, jacobian_fresh, newton_tol, progress);
  if (v.converged) return newton_verdict::converged;
  return v.stopped ? newton_verdict::stopped : newton_verdict::iterate;
}

}  // namespace detail

// How a corrector solve ended: converged (y holds the solution), or not, and why (success: plain
// non-convergence, else a singular or non-finite Newton system or model), after the retry with a
// fresh Jacobian.
struct corrector_outcome {
  bool converged = false;
  member_status reason = member_status::success;
  bool suspended = false;  // the split path: stopped at a factorization done outside (method/attempt.hpp)
};

// Solves the corrector equation of the header comment from y = y_pred. w: the error weights of the
// Newton test (unscaled; newton_norm scales the multipliers).
template <class Model>
LOCKSTEP_HD corrector_outcome solve_corrector(formulation form, double t_new, const state_vector<Model>& y_pred,
                                              const state_vector<Model>& yp_pred, double c,
                                              const state_vector<Model>& w, const double* p,
                                              const solver_options& opt, corrector_matrices<Model>& cm,
                                              member_counters& counters, state_vector<Model>& y) {
  using L = state_layout<Model>;
  constexpr int ny = L::size;
  auto fail = [&](member_status reason) {
    cm.newton_valid = false;
    cm.jacobian_valid = false;
    return corrector_outcome{false, reason};
  };

  // ---- Newton matrix: reuse, refactor or re-evaluate ----
  // A replay of a suspended attempt keeps the freshness of a Jacobian evaluated before the suspension.
  if (!cm.external.resuming) cm.jacobian_fresh = false;
  cm.external.resuming = false;
  for (int jacobian_round = 0; jacobian_round < 2; ++jacobian_round) {
    if (!cm.jacobian_valid) {
      vec<double, Model::n> vdot;
      for (int i = 0; i < Model::n; ++i) vdot[i] = yp_pred[L::v + i];
      const member_status js = evaluate_jacobian<Model>(form, t_new, y_pred, vdot, p, cm.jac, baumgarte_of(opt));
      ++counters.jacobian_evaluations;
      if (js != member_status::success) return fail(js);
      cm.jacobian_valid = true;
      cm.jacobian_fresh = true;
      cm.newton_valid = false;
    }
    if (!cm.newton_valid || (c != cm.newton.c && !detail::stale_shift_ratio_ok(c, cm.newton.c))) {
      member_status fs;
      if (cm.external.enabled) {  // the split path: take the factors of this request, or suspend for them
        if (!(cm.external.ready && cm.external.key == c)) {
          assemble_newton_matrix<Model, double>(form, cm.jac, c, cm.newton);
          cm.newton_valid = false;
          cm.external = external_factors{true, true, false, true, false, member_status::success, c};
          return corrector_outcome{false, member_status::running, true};
        }
        cm.external.ready = false;
        fs = cm.external.status;
      } else {
        fs = factor_newton_matrix<Model, double>(form, cm.jac, c, cm.newton);
      }
      ++counters.lu_factorizations;
      if (fs != member_status::success) {
        if (!cm.jacobian_fresh) {  // the old Jacobian may be the cause: re-evaluate once
          cm.jacobian_valid = false;
          continue;
        }
        return fail(fs);
      }
      cm.newton_valid = true;
    }

    // ---- simplified Newton iteration ----
    y = y_pred;
    bool converged = false;
    bool not_finite = false;
    detail::newton_progress progress;
    const double increment_scale = c == cm.newton.c ? 1.0 : detail::stale_shift_scale(c, cm.newton.c);
    for (int it = 0; it < opt.newton_max_iterations; ++it) {
      vec<double, Model::n> qdot, vdot;
      for (int i = 0; i < Model::n; ++i) {
        qdot[i] = yp_pred[L::q + i] + c * (y[L::q + i] - y_pred[L::q + i]);
        vdot[i] = yp_pred[L::v + i] + c * (y[L::v + i] - y_pred[L::v + i]);
      }
      const residual_parts<Model> r = evaluate_residual<Model>(form, t_new, y, qdot, vdot, p, baumgarte_of(opt));
      ++counters.model_evaluations;
      ++counters.newton_iterations;
      if (!all_finite(r)) {
        not_finite = true;
        break;
      }
      vec<double, Model::n> dq, dv;
      vec<double, Model::m> dl, dm;
      vec<double, Model::k> dn;
      solve_newton<Model, double>(form, cm.jac, cm.newton, r.Fq, r.Fv, r.Fphi, r.Fpsi, r.Fa, dq, dv, dl, dm, dn);
      state_vector<Model> delta;
      for (int i = 0; i < Model::n; ++i) {
        delta[L::q + i] = dq[i];
        delta[L::v + i] = dv[i];
      }
      for (int i = 0; i < Model::m; ++i) {
        delta[L::lambda + i] = dl[i];
        delta[L::mu + i] = dm[i];
      }
      for (int i = 0; i < Model::k; ++i) delta[L::nu + i] = dn[i];
      if (increment_scale != 1.0)
        for (int j = 0; j < ny; ++j) delta[j] *= increment_scale;
      for (int j = 0; j < ny; ++j) y[j] = y[j] + delta[j];
      const double dnorm = detail::newton_norm<Model>(form, delta, w, cm.jac, c);
      if (!is_finite(dnorm)) {
        not_finite = true;
        break;
      }
      const detail::newton_verdict verdict =
          detail::judge_newton_increment(it, dnorm, cm.jacobian_fresh, opt.newton_tol, progress);
      if (verdict == detail::newton_verdict::iterate) continue;
      converged = verdict == detail::newton_verdict::converged;
      break;
    }
    if (not_finite && cm.jacobian_fresh) return fail(member_status::model_not_finite);
    if (!converged) {
      if (!cm.jacobian_fresh) {  // retry with a Jacobian evaluated now (IDA: "lsetup with fresh J")
        cm.jacobian_valid = false;
        continue;
      }
      return fail(member_status::success);
    }
    // Slow contraction means the Jacobian has drifted from the solution: evaluate a new one for the
    // next step (RADAU5 re-evaluates unless theta <= 0.001; we keep it while the rate stays small).
    if (progress.rate > 0.1) cm.jacobian_valid = false;
    return corrector_outcome{true, member_status::success};
  }
  return fail(member_status::success);
}

}  // namespace lockstep
