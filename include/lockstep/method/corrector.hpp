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

// The norm of a Newton increment. All variables count (Ascher & Petzold 1998, ch. 10: algebraic variables stay in the
// Newton test), with the scaling RADAU5 applies to higher-index components (Hairer & Wanner IV.8 and
// VII.4): an index-2 multiplier counts h times (h^2 for index 3), because its round-off in the Newton
// iteration grows like 1/h (1/h^2): the corrector's q' and v' carry eps |q| c and eps |v| c. Without it,
// at tight tolerances and small steps the multipliers' corrections stall at round-off above the
// tolerance and Newton "fails" (measured: Andrews' squeezer at rtol 1e-12, steps ~1e-7). The GGL
// multiplier mu is measured by what it does: q' = v - G^T mu, so Delta mu moves q by G^T Delta mu / c,
// compared with the position weights. The mean is over the terms that exist: index3 and index1 pin mu
// (no mu slots, no G^T Delta mu terms), ggl and projected invariants have both. The multipliers of
// dropped constraint rows (jacobian_blocks::dropped) are held, not solved for: they do not count.
template <class Model>
LOCKSTEP_HD double newton_norm(formulation f, const state_vector<Model>& delta, const state_vector<Model>& w,
                               const jacobian_blocks<Model>& J, double c) {
  using L = state_layout<Model>;
  const double h_scale = min(1.0, 1.0 / c);  // ~ h / a_0: the step's time scale, at most 1
  double s = 0.0;
  int held = 0;
  for (int j = 0; j < L::size; ++j) {
    if (j >= L::mu && j < L::nu) continue;
    const bool dropped = (j >= L::lambda && j < L::mu && row_dropped(J.dropped, j - L::lambda)) ||
                         (j >= L::nu && row_dropped(J.dropped, Model::m + j - L::nu));
    if (dropped) {
      ++held;
      continue;
    }
    double e = delta[j] * w[j];
    const int index = variable_index<Model>(f, j);
    if (j >= L::lambda && index >= 2) {  // the multipliers of index1 and projected invariants have index 1
      e *= h_scale;
      if (index == 3) e *= h_scale;
    }
    s += e * e;
  }
  if (!uses_mu(f)) return sqrt(s / (L::size - Model::m - held));
  for (int i = 0; i < Model::n; ++i) {
    double dq = 0.0;
    for (int a = 0; a < Model::m; ++a) dq += J.G(a, i) * delta[L::mu + a];
    const double e = dq / c * w[L::q + i];
    s += e * e;
  }
  return sqrt(s / (L::size - Model::m + Model::n - held));
}

// Whether a Newton matrix factored for the shift c_old may serve the shift c (IDA, Hindmarsh et al.
// 2005, section 3, and SUNDIALS' ida.c: lsetup is called when cj / cj_old leaves
// [(1 - XRATE) / (1 + XRATE), (1 + XRATE) / (1 - XRATE)] = [0.6, 5/3], XRATE = 0.25). The
// variable-coefficient c of bdf.hpp moves at every step for k steps after any change of h, so refactoring
// at every change of c would factor on ~70 % of the steps of Andrews' squeezer at rtol 1e-4; within the
// band, the scaled increment (stale_shift_scale) keeps the contraction and the accuracy (measured:
// docs/PERFORMANCE.md, "What would close the gaps").
LOCKSTEP_HD bool stale_shift_ratio_ok(double c, double c_old) {
  constexpr double xrate = 0.25;
  const double ratio = c / c_old;
  return ratio >= (1.0 - xrate) / (1.0 + xrate) && ratio <= (1.0 + xrate) / (1.0 - xrate);
}

// The factor an increment computed with J(c_old) is multiplied by when the step asks for J(c):
// 2 / (1 + c / c_old) (IDA's idaLsSolve, "scalesol"). For a differential component with y' ~ c y the
// exact increment is (c_old / c) times the computed one, for a stiff or algebraic component 1 times; the
// harmonic compromise errs by at most |1 - r| / (1 + r) <= 0.25 on either (r = c / c_old in the band), so
// in this decoupled picture the stale shift alone costs a contraction rate of at most 0.25.
LOCKSTEP_HD double stale_shift_scale(double c, double c_old) { return 2.0 / (1.0 + c / c_old); }

// What the simplified Newton iteration does after its increment number `it` (from 0) with the norm
// dnorm (finite): iterate again, stop converged, or stop without converging.
enum class newton_verdict : int { iterate = 0, converged = 1, stopped = 2 };

// What the verdicts remember: the first increment's norm and the last measured contraction rate.
struct newton_progress {
  double delta0 = 0.0;
  double rate = 0.0;
};

// IDA's convergence test with the changes of bdf.hpp's banner. Convergence is judged from a measured
// contraction rate, never from the previous step's: a rate carried over from a step with a fresher
// Jacobian lets an unconverged first iterate through, and the multipliers' iteration error then
// accumulates through the predictor. The exception is IDA's first-iteration test with a Jacobian
// evaluated at this very predictor (jacobian_fresh), where the conservative factor 20 stands in for the
// unknown rate (Hindmarsh et al. 2005): it also accepts a predictor that is exact to round-off, which a
// rate test (rate ~ 1 between two increments of pure noise) would reject forever.
LOCKSTEP_HD newton_verdict judge_newton_increment(int it, double dnorm, bool jacobian_fresh, double newton_tol,
                                                  newton_progress& progress) {
  if (it == 0) {
    progress.delta0 = dnorm;
    if (dnorm <= 1e-4 * newton_tol || (jacobian_fresh && 20.0 * dnorm <= newton_tol)) return newton_verdict::converged;
    return newton_verdict::iterate;
  }
  // pow(x, 1) is x: skip the call
  progress.rate = it == 1 ? dnorm / progress.delta0 : pow(dnorm / progress.delta0, 1.0 / it);
  // The first correction may overshoot before the contraction sets in (the index-3 multipliers move by
  // O(lambda) in the first steps from consistent values): divergence is judged from the second
  // correction on.
  if (progress.rate > 0.9) {
    // Stalled below the tolerance: the corrections are round-off (at tight tolerances the multipliers'
    // round-off, ~eps c^2 |M q|, reaches the error weights); accept.
    if (dnorm <= newton_tol) return newton_verdict::converged;
    if (it >= 2) return newton_verdict::stopped;  // diverging or too slow
    return newton_verdict::iterate;
  }
  if (progress.rate / (1.0 - progress.rate) * dnorm <= newton_tol) return newton_verdict::converged;
  return newton_verdict::iterate;
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
