// lockstep/simd/corrector_inl.hpp — the corrector of lockstep/method/corrector.hpp (solve_corrector) for
// W members at once, one per lane, run as the threads of a warp run: each lane keeps its own Jacobian,
// factors, shift and freshness, the Newton loop runs while any lane iterates, and a lane whose verdict
// is in waits masked.
//
// Per lane, the same sequence as solve_corrector for its member alone, so that it ends with the same
// bits, status and counts (tests/simd/corrector_test.cpp):
//  - a Jacobian for the lanes without a valid one, evaluated lane by lane on the double code
//    (evaluate_jacobian, with its finiteness test and rank decision, which branch on values): BDF
//    keeps a Jacobian over many steps, so a pack rarely needs it in more than a few lanes
//    (docs/SIMD.md, "Lane utilization"), and a lane's bits do not depend on the code that computed them;
//  - the Newton matrix refactored for the lanes whose factors are missing or whose shift left IDA's band,
//    assembled and factored in lanes (newton_matrix_inl.hpp), the other lanes keeping their factors;
//  - the simplified Newton iteration in lanes: the residual on packs, the increment (scaled for a stale
//    shift), its norm and the convergence test of newton_control_inl.hpp, the lanes of a round starting
//    together, each stopping at its own verdict;
//  - a lane that did not converge with an old Jacobian retries once with a fresh one, as solve_corrector
//    does, while the others wait.
// The split path of method/attempt.hpp (factors computed outside) is not part of the lanes: a lanes
// engine factors its own matrices.
//
// Lanes outside `lanes` are left exactly as they are; they must hold finite values (a member already
// served, or a copy of one), since the pack's arithmetic runs in them too, with its results discarded.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC): the models and the
// formulation's templates are instantiated on packs here (docs/SIMD.md, "The Newton matrix's assembly
// and solve in lanes, as built"). Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_CORRECTOR_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_CORRECTOR_INL_HPP_
#undef LOCKSTEP_SIMD_CORRECTOR_INL_HPP_
#else
#define LOCKSTEP_SIMD_CORRECTOR_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/corrector.hpp"
#include "lockstep/simd/newton_control_inl.hpp"
#include "lockstep/simd/newton_matrix_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// What solve_corrector computes before it blends it into the lanes that take it: the new Jacobian
// blocks lane by lane, the assembled Newton matrices and their factors. It grows as the square of the
// model's unknowns (a pack of chain16's 64 x 64 Newton matrices is 256 KiB at W = 8), so it lives with
// the lanes' matrices in their workspace, not on the stack (docs/SIMD.md, "How large a model the lanes
// take"), and holds nothing from one call to the next.
template <class Model, class D>
struct corrector_scratch {
  static constexpr size_t lanes_max = hn::MaxLanes(D());
  static constexpr size_t jacobian_entries = sizeof(jacobian_values<Model, double>) / sizeof(double);
  static constexpr int size = newton_matrix_lanes<Model, D>::size;
  HWY_ALIGN double jacobian[jacobian_entries][lanes_max];  // entry e of lane l's new blocks: [e][l]
  mat<pack<D>, size, size> assembled;                      // the Newton matrices before factoring
  newton_matrix_lanes<Model, D> factors;                    // ... and after
};

// The corrector's work in lanes, for its utilization (docs/SIMD.md, "Lane utilization"): the Newton
// iterations and LU factorizations the pack ran, each of which executes every lane, and the lanes among
// them that ran one for their member (the sum of the members' newton_iterations and lu_factorizations).
// The Jacobians need no such count: they are evaluated lane by lane, only for the lanes that need one.
struct corrector_work {
  std::uint64_t pack_iterations = 0, lane_iterations = 0;
  std::uint64_t pack_factorizations = 0, lane_factorizations = 0;
};

// corrector_matrices<Model> per lane, the corrector's scratch, and its count of work.
template <class Model, class D>
struct corrector_lanes {
  jacobian_values<Model, pack<D>> jac;
  dropped_lanes<D> dropped;
  newton_matrix_lanes<Model, D> newton;
  mask<D> jacobian_valid, newton_valid, jacobian_fresh;
  corrector_scratch<Model, D> scratch;
  corrector_work work;
};

// cm without matrices: nothing evaluated, nothing factored. The pack's arithmetic runs in every lane,
// so the blocks start at zero and the factors as the identity without interchanges (finite, no
// division by zero), the shifts at 1; none of it is read as a member's value before it is computed.
// In place: a corrector_lanes of a large model is megabytes, which a value returned would put on the
// stack.
template <class Model, class D>
HWY_INLINE void clear_matrices(corrector_lanes<Model, D>& cm) {
  const D d;
  const int_tag<D> di;
  constexpr int size = newton_matrix_lanes<Model, D>::size;
#define LOCKSTEP_SIMD_ZERO_BLOCK(B) \
  for (pack<D> & x : cm.jac.B.a) x = pack<D>(0.0);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_ZERO_BLOCK)
#undef LOCKSTEP_SIMD_ZERO_BLOCK
  cm.dropped.bits = hn::Zero(di);
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) cm.newton.lu(i, j) = hn::Set(d, i == j ? 1.0 : 0.0);
    cm.newton.pivot[i] = hn::Set(di, int64_t{i});
  }
  cm.newton.c = pack<D>(1.0);
  cm.jacobian_valid = cm.newton_valid = cm.jacobian_fresh = hn::FirstN(d, 0);
}

// The counts solve_corrector adds to member_counters, per lane (exact in double lanes).
template <class D>
struct corrector_counts {
  pack<D> jacobian_evaluations{}, lu_factorizations{}, model_evaluations{}, newton_iterations{};
};

// corrector_outcome per lane: converged, and otherwise the member status that stopped the lane
// (member_status::success where it ran out of rounds without converging, as solve_corrector reports).
template <class D>
struct corrector_outcome_lanes {
  mask<D> converged;
  pack<D> reason;  // a member_status, as a double
};

namespace corrector_detail {
template <class D>
HWY_INLINE pack<D> count_where(mask<D> m, pack<D> count) {
  return select(m, count + 1.0, count);
}
template <class D>
HWY_INLINE mask<D> none() {
  return hn::FirstN(D(), 0);
}
}  // namespace corrector_detail

// solve_corrector for the lanes of `lanes`: from y = y_pred, each lane at its own t_new, shift c, error
// weights w and parameters p (p[i]: parameter i of every lane).
template <class Model, class D>
HWY_NOINLINE corrector_outcome_lanes<D> solve_corrector(
    mask<D> lanes, formulation form, pack<D> t_new, const lockstep::vec<pack<D>, state_layout<Model>::size>& y_pred,
    const lockstep::vec<pack<D>, state_layout<Model>::size>& yp_pred, pack<D> c,
    const lockstep::vec<pack<D>, state_layout<Model>::size>& w, const pack<D>* p, const solver_options& opt,
    corrector_lanes<Model, D>& cm, corrector_counts<D>& counts, lockstep::vec<pack<D>, state_layout<Model>::size>& y) {
  using L = state_layout<Model>;
  using P = pack<D>;
  using M = mask<D>;
  using corrector_detail::count_where;
  constexpr int ny = L::size, n = Model::n;
  const D d;
  const int_tag<D> di;
  const size_t W = hn::Lanes(d);
  const M none = corrector_detail::none<D>();

  corrector_outcome_lanes<D> out{none, P(double(member_status::success))};
  M active = lanes;  // lanes whose outcome is not decided yet
  // A lane that fails forgets its matrices (solve_corrector's fail()).
  const auto fail = [&](M failing, P reason) {
    out.reason = select(failing, reason, out.reason);
    cm.jacobian_valid = hn::AndNot(failing, cm.jacobian_valid);
    cm.newton_valid = hn::AndNot(failing, cm.newton_valid);
    active = hn::AndNot(failing, active);
  };
  cm.jacobian_fresh = hn::AndNot(lanes, cm.jacobian_fresh);

  for (int jacobian_round = 0; jacobian_round < 2 && !hn::AllFalse(d, active); ++jacobian_round) {
    // ---- Jacobian, lane by lane on the double code ----
    const M need_jacobian = hn::AndNot(cm.jacobian_valid, active);
    if (!hn::AllFalse(d, need_jacobian)) {
      // The lanes' arguments as arrays, and their new blocks entry by entry: written lane by lane here
      // and loaded as whole vectors once all are in, since a vector changed lane by lane would be
      // stored and reloaded at every change (store-to-load forwarding fails on the reload).
      constexpr size_t lanes_max = hn::MaxLanes(d);
#define LOCKSTEP_BLOCK_ENTRIES(B) +sizeof(jacobian_values<Model, double>::B) / sizeof(double)
      constexpr size_t entries = 0 LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_BLOCK_ENTRIES);
#undef LOCKSTEP_BLOCK_ENTRIES
      static_assert(entries == corrector_scratch<Model, D>::jacobian_entries, "blocks of doubles only");
      HWY_ALIGN double y_lanes[ny][lanes_max], vdot_lanes[n][lanes_max], t_lanes[lanes_max];
      HWY_ALIGN double p_lanes[Model::n_params > 0 ? Model::n_params : 1][lanes_max];
      double (&fresh)[entries][lanes_max] = cm.scratch.jacobian;
      HWY_ALIGN int64_t dropped[lanes_max];
      for (int j = 0; j < ny; ++j) hn::Store(y_pred[j].v, d, y_lanes[j]);
      for (int i = 0; i < n; ++i) hn::Store(yp_pred[L::v + i].v, d, vdot_lanes[i]);
      for (int i = 0; i < Model::n_params; ++i) hn::Store(p[i].v, d, p_lanes[i]);
      hn::Store(t_new.v, d, t_lanes);
      hn::Store(cm.dropped.bits, di, dropped);
      M evaluated = none;
      for (size_t l = 0; l < W; ++l) {
        if (!mask_lane_of<D>(need_jacobian, l)) continue;
        state_vector<Model> y_l;
        for (int j = 0; j < ny; ++j) y_l[j] = y_lanes[j][l];
        lockstep::vec<double, n> vdot;
        for (int i = 0; i < n; ++i) vdot[i] = vdot_lanes[i][l];
        double p_l[Model::n_params > 0 ? Model::n_params : 1];
        for (int i = 0; i < Model::n_params; ++i) p_l[i] = p_lanes[i][l];
        jacobian_blocks<Model> J;
        J.dropped = static_cast<std::uint64_t>(dropped[l]);
        const member_status js = evaluate_jacobian<Model>(form, t_lanes[l], y_l, vdot, p_l, J, baumgarte_of(opt));
        if (js != member_status::success) {  // its blocks stay out of the lanes: only finite values enter
          fail(lane_mask<D>(l), P(double(js)));
          continue;
        }
        size_t e = 0;
#define LOCKSTEP_WRITE_BLOCK_LANE(B) \
  for (const double x : J.B.a) fresh[e++][l] = x;
        LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_WRITE_BLOCK_LANE)
#undef LOCKSTEP_WRITE_BLOCK_LANE
        dropped[l] = static_cast<int64_t>(J.dropped);
        set_mask_lane<D>(evaluated, l, true);
      }
      if (!hn::AllFalse(d, evaluated)) {
        size_t e = 0;
#define LOCKSTEP_LOAD_BLOCK_LANES(B)                                                        \
  for (P & x : cm.jac.B.a) {                                                                \
    x = P(hn::IfThenElse(evaluated, hn::MaskedLoad(evaluated, d, fresh[e]), x.v));          \
    ++e;                                                                                    \
  }
        LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_LOAD_BLOCK_LANES)
#undef LOCKSTEP_LOAD_BLOCK_LANES
      }
      cm.dropped.bits = hn::Load(di, dropped);
      counts.jacobian_evaluations = count_where(need_jacobian, counts.jacobian_evaluations);
      cm.jacobian_valid = hn::Or(cm.jacobian_valid, evaluated);
      cm.jacobian_fresh = hn::Or(cm.jacobian_fresh, evaluated);
      cm.newton_valid = hn::AndNot(evaluated, cm.newton_valid);
    }

    // ---- Newton matrix: refactored where missing or where the shift left IDA's band ----
    const P c_old = select(cm.newton_valid, cm.newton.c, c);  // c where there are no factors: no division by 0
    const M stale = hn::AndNot(stale_shift_ratio_ok(c, c_old), hn::Not(c == c_old));
    const M need_factors = hn::And(active, hn::Or(hn::Not(cm.newton_valid), stale));
    M retry = none;  // lanes that go to the next round with a fresh Jacobian
    if (!hn::AllFalse(d, need_factors)) {
      newton_matrix_lanes<Model, D>& fresh_factors = cm.scratch.factors;
      const pack_factor_result<D> fr =
          factor_newton_matrix<Model>(form, cm.jac, cm.dropped, c, cm.scratch.assembled, fresh_factors);
      constexpr int size = newton_matrix_lanes<Model, D>::size;
      const hn::Mask<int_tag<D>> take = hn::RebindMask(di, need_factors);
      for (int e = 0; e < size * size; ++e)
        cm.newton.lu.a[e] = hn::IfThenElse(need_factors, fresh_factors.lu.a[e], cm.newton.lu.a[e]);
      for (int i = 0; i < size; ++i) cm.newton.pivot[i] = hn::IfThenElse(take, fresh_factors.pivot[i], cm.newton.pivot[i]);
      cm.newton.c = select(need_factors, c, cm.newton.c);
      counts.lu_factorizations = count_where(need_factors, counts.lu_factorizations);
      ++cm.work.pack_factorizations;
      cm.work.lane_factorizations += static_cast<std::uint64_t>(hn::CountTrue(d, need_factors));
      const M failed = hn::And(need_factors, hn::RebindMask(d, hn::Ne(fr.info, hn::Set(di, int64_t{lu_ok}))));
      if (!hn::AllFalse(d, failed)) {
        // factorization_status per lane: lu_not_finite -> model_not_finite, else singular_matrix.
        const M not_finite = hn::RebindMask(d, hn::Eq(fr.info, hn::Set(di, int64_t{lu_not_finite})));
        const P status = select(not_finite, P(double(member_status::model_not_finite)),
                                P(double(member_status::singular_matrix)));
        retry = hn::AndNot(cm.jacobian_fresh, failed);  // the old Jacobian may be the cause
        cm.jacobian_valid = hn::AndNot(retry, cm.jacobian_valid);
        fail(hn::And(failed, cm.jacobian_fresh), status);
      }
      cm.newton_valid = hn::Or(cm.newton_valid, hn::AndNot(failed, need_factors));
    }

    // ---- simplified Newton iteration, while any lane iterates ----
    const M newton_lanes = hn::AndNot(retry, active);
    for (int j = 0; j < ny; ++j) y[j] = select(newton_lanes, y_pred[j], y[j]);
    M iterating = newton_lanes, converged = none, not_finite = none;
    newton_progress_lanes<D> progress{P(0.0), P(0.0)};
    const P c_factored = select(newton_lanes, cm.newton.c, c);
    const P increment_scale = select(c == c_factored, P(1.0), stale_shift_scale(c, c_factored));
    for (int it = 0; it < opt.newton_max_iterations && !hn::AllFalse(d, iterating); ++it) {
      // Lanes not iterating are evaluated at their prediction (finite), and their results discarded.
      lockstep::vec<P, ny> y_eval;
      for (int j = 0; j < ny; ++j) y_eval[j] = select(iterating, y[j], y_pred[j]);
      lockstep::vec<P, n> qdot, vdot;
      for (int i = 0; i < n; ++i) {
        qdot[i] = yp_pred[L::q + i] + c * (y_eval[L::q + i] - y_pred[L::q + i]);
        vdot[i] = yp_pred[L::v + i] + c * (y_eval[L::v + i] - y_pred[L::v + i]);
      }
      residual_parts<Model, P> r =
          lockstep::detail::formulation_residual<Model, P, P>(form, t_new, y_eval, qdot, vdot, p, baumgarte_of(opt));
      counts.model_evaluations = count_where(iterating, counts.model_evaluations);
      counts.newton_iterations = count_where(iterating, counts.newton_iterations);
      ++cm.work.pack_iterations;
      cm.work.lane_iterations += static_cast<std::uint64_t>(hn::CountTrue(d, iterating));
      M finite = hn::FirstN(d, W);
      const P zero(0.0);
      for (int i = 0; i < n; ++i) finite = hn::And(finite, hn::And(hn::IsFinite(r.Fq[i].v), hn::IsFinite(r.Fv[i].v)));
      for (int i = 0; i < Model::m; ++i) finite = hn::And(finite, hn::And(hn::IsFinite(r.Fphi[i].v), hn::IsFinite(r.Fpsi[i].v)));
      for (int i = 0; i < Model::k; ++i) finite = hn::And(finite, hn::IsFinite(r.Fa[i].v));
      const M residual_not_finite = hn::AndNot(finite, iterating);
      not_finite = hn::Or(not_finite, residual_not_finite);
      iterating = hn::AndNot(residual_not_finite, iterating);
      // The others' residuals are zero for the solve: nothing not finite enters the pack's arithmetic.
      for (int i = 0; i < n; ++i) r.Fq[i] = select(iterating, r.Fq[i], zero), r.Fv[i] = select(iterating, r.Fv[i], zero);
      for (int i = 0; i < Model::m; ++i)
        r.Fphi[i] = select(iterating, r.Fphi[i], zero), r.Fpsi[i] = select(iterating, r.Fpsi[i], zero);
      for (int i = 0; i < Model::k; ++i) r.Fa[i] = select(iterating, r.Fa[i], zero);

      lockstep::vec<P, n> dq, dv;
      lockstep::vec<P, Model::m> dl, dm;
      lockstep::vec<P, Model::k> dn;
      solve_newton<Model>(form, cm.jac, cm.dropped, cm.newton, r, dq, dv, dl, dm, dn);
      lockstep::vec<P, ny> delta;
      for (int i = 0; i < n; ++i) delta[L::q + i] = dq[i], delta[L::v + i] = dv[i];
      for (int i = 0; i < Model::m; ++i) delta[L::lambda + i] = dl[i], delta[L::mu + i] = dm[i];
      for (int i = 0; i < Model::k; ++i) delta[L::nu + i] = dn[i];
      // x * 1 is x: the scale multiplies every lane, as solve_corrector multiplies where it is not 1.
      for (int j = 0; j < ny; ++j) delta[j] = delta[j] * increment_scale;
      for (int j = 0; j < ny; ++j) y[j] = select(iterating, y[j] + delta[j], y[j]);
      const P dnorm = newton_norm<Model>(
          form, delta, w, cm.jac.G, [&](int row) { return row_dropped<D>(cm.dropped.bits, row); }, c);
      const M norm_not_finite = hn::AndNot(hn::IsFinite(dnorm.v), iterating);
      not_finite = hn::Or(not_finite, norm_not_finite);
      iterating = hn::AndNot(norm_not_finite, iterating);
      const newton_verdict_lanes<D> verdict = judge_newton_increment(
          iterating, P(double(it)), select(iterating, dnorm, P(1.0)), cm.jacobian_fresh, opt.newton_tol, progress);
      converged = hn::Or(converged, hn::And(iterating, verdict.converged));
      iterating = hn::AndNot(hn::Or(verdict.converged, verdict.stopped), iterating);
    }

    // ---- each lane's outcome of this round ----
    fail(hn::And(not_finite, cm.jacobian_fresh), P(double(member_status::model_not_finite)));
    const M unconverged = hn::AndNot(converged, hn::And(newton_lanes, active));
    const M retry_unconverged = hn::AndNot(cm.jacobian_fresh, unconverged);  // IDA: "lsetup with fresh J"
    cm.jacobian_valid = hn::AndNot(retry_unconverged, cm.jacobian_valid);
    fail(hn::And(unconverged, cm.jacobian_fresh), P(double(member_status::success)));
    // Slow contraction: a new Jacobian for the next step (solve_corrector's rule).
    cm.jacobian_valid = hn::AndNot(hn::And(converged, progress.rate > 0.1), cm.jacobian_valid);
    out.converged = hn::Or(out.converged, converged);
    active = hn::AndNot(converged, active);
  }
  fail(active, P(double(member_status::success)));  // both rounds used without converging
  return out;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
