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

// The dense work of the corrector for one member (corrector_generic.inc's header says what each does):
// its Jacobian, the Newton matrix (or the split path's factors, method/attempt.hpp), the residual, the
// solve and the increment's norm, on the member's corrector_matrices.

// A step attempt's first call: the Jacobian is not fresh, except on the replay of a suspended attempt,
// which keeps the freshness of a Jacobian evaluated before the suspension.
template <class Model>
LOCKSTEP_HD void corrector_start(bool, corrector_matrices<Model>& cm) {
  if (!cm.external.resuming) cm.jacobian_fresh = false;
  cm.external.resuming = false;
}

// The Jacobian at the predicted point (its v' is the predicted one).
template <class Model>
LOCKSTEP_HD member_status corrector_jacobians(bool, formulation form, double t_new, const state_vector<Model>& y_pred,
                                              const state_vector<Model>& yp_pred, const double* p,
                                              const solver_options& opt, corrector_matrices<Model>& cm) {
  using L = state_layout<Model>;
  vec<double, Model::n> vdot;
  for (int i = 0; i < Model::n; ++i) vdot[i] = yp_pred[L::v + i];
  return evaluate_jacobian<Model>(form, t_new, y_pred, vdot, p, cm.jac, baumgarte_of(opt));
}

// The Newton matrix at the shift c, factored here, or on the split path by the caller: the factors of
// this request if they are ready, else the matrix assembled for them and the attempt suspended.
template <class Model>
LOCKSTEP_HD member_status corrector_factor(bool, formulation form, double c, corrector_matrices<Model>& cm,
                                           bool& suspended) {
  if (cm.external.enabled) {
    if (!(cm.external.ready && cm.external.key == c)) {
      assemble_newton_matrix<Model, double>(form, cm.jac, c, cm.newton);
      cm.newton_valid = false;
      cm.external = external_factors{true, true, false, true, false, member_status::success, c};
      suspended = true;
      return member_status::running;
    }
    cm.external.ready = false;
    return cm.external.status;
  }
  return factor_newton_matrix<Model, double>(form, cm.jac, c, cm.newton);
}

template <class Model>
LOCKSTEP_HD residual_parts<Model> corrector_residual(bool, formulation form, double t, const state_vector<Model>& y,
                                                     const vec<double, Model::n>& qdot,
                                                     const vec<double, Model::n>& vdot, const double* p,
                                                     const solver_options& opt, const corrector_matrices<Model>&) {
  return evaluate_residual<Model>(form, t, y, qdot, vdot, p, baumgarte_of(opt));
}

template <class Model>
LOCKSTEP_HD void corrector_solve(formulation form, const corrector_matrices<Model>& cm, const residual_parts<Model>& r,
                                 vec<double, Model::n>& dq, vec<double, Model::n>& dv, vec<double, Model::m>& dl,
                                 vec<double, Model::m>& dm, vec<double, Model::k>& dn) {
  solve_newton<Model, double>(form, cm.jac, cm.newton, r.Fq, r.Fv, r.Fphi, r.Fpsi, r.Fa, dq, dv, dl, dm, dn);
}

template <class Model>
LOCKSTEP_HD double corrector_norm(formulation form, const state_vector<Model>& delta, const state_vector<Model>& w,
                                  const corrector_matrices<Model>& cm, double c) {
  return newton_norm<Model>(form, delta, w, cm.jac, c);
}

// The corrector (corrector_outcome_of, solve_corrector), one text for one member here and for SIMD
// packs in lockstep/simd/corrector_inl.hpp.
#include "lockstep/method/corrector_generic.inc"

}  // namespace detail

// How a corrector solve ended: converged (y holds the solution), or not, and why (success: plain
// non-convergence, else a singular or non-finite Newton system or model), after the retry with a
// fresh Jacobian; or suspended, on the split path, at a factorization done outside (method/attempt.hpp).
using corrector_outcome = detail::corrector_outcome_of<bool, member_status>;

// Solves the corrector equation of the header comment from y = y_pred. w: the error weights of the
// Newton test (unscaled; newton_norm scales the multipliers).
template <class Model>
LOCKSTEP_HD corrector_outcome solve_corrector(formulation form, double t_new, const state_vector<Model>& y_pred,
                                              const state_vector<Model>& yp_pred, double c,
                                              const state_vector<Model>& w, const double* p,
                                              const solver_options& opt, corrector_matrices<Model>& cm,
                                              member_counters& counters, state_vector<Model>& y) {
  return detail::solve_corrector<Model>(true, form, t_new, y_pred, yp_pred, c, w, p, opt, cm, counters, y);
}

}  // namespace lockstep
