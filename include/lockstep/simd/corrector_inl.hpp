// lockstep/simd/corrector_inl.hpp — the corrector of lockstep/method/corrector.hpp (solve_corrector) for
// W members at once, one per lane: the one text of lockstep/method/corrector_generic.inc, which the
// one-member code compiles for doubles, compiled here for packs, with the dense work of a pack of
// members (that text's header lists it):
//  - the Jacobian of the lanes without a valid one (lanes_jacobians): lane by lane on the double code
//    (evaluate_jacobian, with its finiteness test and rank decision, which branch on values) where few
//    lanes need one, as with BDF, which keeps a Jacobian over many steps (docs/SIMD.md, "Lane
//    utilization"), on the pack where nearly all do; a lane's bits do not depend on the code that computed them;
//  - the Newton matrix of the lanes whose factors are missing or whose shift left IDA's band, assembled
//    and factored in lanes (newton_matrix_inl.hpp), the other lanes keeping their factors;
//  - the residual on packs, the solve with each lane's factors, and the increment's norm.
// Each lane ends with the bits, status and counts its member ends solve_corrector with alone
// (tests/simd/corrector_test.cpp). The split path of method/attempt.hpp (factors computed outside) is
// not part of the lanes: a lanes engine factors its own matrices.
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

// The new Jacobian blocks before they are blended into the lanes that take them, in the layout of
// either way of evaluating them (lanes_jacobians).
template <class Model, class D>
struct jacobian_scratch {
  static constexpr size_t lanes_max = hn::MaxLanes(D());
  static constexpr size_t entries = sizeof(jacobian_values<Model, double>) / sizeof(double);
  HWY_ALIGN double by_lane[entries][lanes_max];  // entry e of lane l's new blocks: [e][l]
  jacobian_values<Model, pack<D>> on_pack;       // the blocks of every lane, evaluated on the pack
};

// What solve_corrector computes before it blends it into the lanes that take it: the new Jacobian
// blocks, the Newton matrices assembled and factored. It grows as the square of the model's unknowns
// (a pack of chain16's 64 x 64 Newton matrices is 256 KiB at W = 8), so it lives with the lanes'
// matrices in their workspace, not on the stack (docs/SIMD.md, "How large a model the lanes take"),
// and holds nothing from one call to the next.
template <class Model, class D>
struct corrector_scratch {
  static constexpr int size = newton_matrix_lanes<Model, D>::size;
  jacobian_scratch<Model, D> jacobian;
  newton_matrix_lanes<Model, D> factors;
};

// The corrector's work in lanes, for its utilization (docs/SIMD.md, "Lane utilization"): the Newton
// iterations and LU factorizations the pack ran, each of which executes every lane, and the lanes among
// them that ran one for their member (the sum of the members' newton_iterations and lu_factorizations).
// The Jacobians are not counted here: the members' jacobian_evaluations count those they need, and a
// pack evaluates W of them only where nearly all of its lanes need one (lanes_jacobians).
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
    for (int j = 0; j < size; ++j) cm.newton.lu(i, j) = pack<D>(i == j ? 1.0 : 0.0);
    cm.newton.pivot[i] = pack<D>(double(i));
  }
  cm.newton.c = pack<D>(1.0);
  cm.jacobian_valid = cm.newton_valid = cm.jacobian_fresh = hn::FirstN(d, 0);
}

// Lane l of cm becomes the member's corrector_matrices c: the Jacobian and the factors where valid;
// elsewhere the finite values of clear_matrices (a member's invalid ones may be a failed evaluation's,
// or never written), which nothing reads as the member's. cm's other lanes are not read.
template <class Model, class D>
HWY_INLINE void load_corrector_lane(corrector_lanes<Model, D>& cm, size_t l, const corrector_matrices<Model>& c) {
  constexpr int size = newton_matrix_lanes<Model, D>::size;
#define LOCKSTEP_SIMD_LOAD_BLOCK(B) \
  for (size_t e = 0; e < std::size(c.jac.B.a); ++e) set_lane(cm.jac.B.a[e], l, c.jacobian_valid ? c.jac.B.a[e] : 0.0);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_LOAD_BLOCK)
#undef LOCKSTEP_SIMD_LOAD_BLOCK
  cm.dropped.bits = with_lane(cm.dropped.bits, l, static_cast<int64_t>(c.jac.dropped));
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j)
      set_lane(cm.newton.lu(i, j), l, c.newton_valid ? c.newton.lu(i, j) : i == j ? 1.0 : 0.0);
    set_lane(cm.newton.pivot[i], l, double(c.newton_valid ? c.newton.pivot[i] : i));
  }
  set_lane(cm.newton.c, l, c.newton_valid ? c.newton.c : 1.0);
  set_mask_lane<D>(cm.jacobian_valid, l, c.jacobian_valid);
  set_mask_lane<D>(cm.newton_valid, l, c.newton_valid);
  set_mask_lane<D>(cm.jacobian_fresh, l, c.jacobian_fresh);
}

// The member in lane l of cm, into c (the inverse of load_corrector_lane).
template <class Model, class D>
HWY_INLINE void store_corrector_lane(const corrector_lanes<Model, D>& cm, size_t l, corrector_matrices<Model>& c) {
  constexpr int size = newton_matrix_lanes<Model, D>::size;
#define LOCKSTEP_SIMD_STORE_BLOCK(B) \
  for (size_t e = 0; e < std::size(c.jac.B.a); ++e) c.jac.B.a[e] = lane_of(cm.jac.B.a[e], l);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_STORE_BLOCK)
#undef LOCKSTEP_SIMD_STORE_BLOCK
  c.jac.dropped = static_cast<std::uint64_t>(hn::ExtractLane(cm.dropped.bits, l));
  for (int e = 0; e < size * size; ++e) c.newton.lu.a[e] = lane_of(cm.newton.lu.a[e], l);
  for (int i = 0; i < size; ++i) c.newton.pivot[i] = int(lane_of(cm.newton.pivot[i], l));
  c.newton.c = lane_of(cm.newton.c, l);
  c.jacobian_valid = mask_lane_of<D>(cm.jacobian_valid, l);
  c.newton_valid = mask_lane_of<D>(cm.newton_valid, l);
  c.jacobian_fresh = mask_lane_of<D>(cm.jacobian_fresh, l);
}

// The counts solve_corrector adds to member_counters, per lane (exact in double lanes).
template <class D>
struct corrector_counts {
  pack<D> jacobian_evaluations{}, lu_factorizations{}, model_evaluations{}, newton_iterations{};
};

// The dense work of the corrector in lanes (lockstep/method/corrector_generic.inc's header says what
// each does), on the lanes' corrector_lanes.

// A step attempt's first call: no lane's Jacobian is fresh.
template <class Model, class D>
HWY_INLINE void corrector_start(mask<D> lanes, corrector_lanes<Model, D>& cm) {
  cm.jacobian_fresh = hn::AndNot(lanes, cm.jacobian_fresh);
}

// The Jacobian blocks J at (t, y, v') of the lanes of `need` (v' the velocity part of yp), lane by lane
// on the double code (evaluate_jacobian, with its finiteness test and rank decision, which branch on
// values), blended into the lanes that evaluated them with their dropped rows; each lane's status (a
// failed lane's blocks stay out of the lanes: only finite values enter). fresh: the work space of the
// new blocks, entry e of lane l at [e][l] (corrector_scratch::jacobian).
template <class Model, class D>
HWY_NOINLINE pack<D> jacobians_lane_by_lane(
    mask<D> need, formulation form, pack<D> t, const lockstep::vec<pack<D>, state_layout<Model>::size>& y,
    const lockstep::vec<pack<D>, state_layout<Model>::size>& yp, const pack<D>* p, const solver_options& opt,
    jacobian_values<Model, pack<D>>& J_lanes, dropped_lanes<D>& dropped_rows,
    double (&fresh)[jacobian_scratch<Model, D>::entries][jacobian_scratch<Model, D>::lanes_max]) {
  using L = state_layout<Model>;
  using P = pack<D>;
  constexpr int ny = L::size, n = Model::n;
  const D d;
  const int_tag<D> di;
  const size_t W = hn::Lanes(d);
  // The lanes' arguments as arrays, and their new blocks entry by entry: written lane by lane here and
  // loaded as whole vectors once all are in, since a vector changed lane by lane would be stored and
  // reloaded at every change (store-to-load forwarding fails on the reload).
  constexpr size_t lanes_max = hn::MaxLanes(d);
#define LOCKSTEP_BLOCK_ENTRIES(B) +sizeof(jacobian_values<Model, double>::B) / sizeof(double)
  constexpr size_t entries = 0 LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_BLOCK_ENTRIES);
#undef LOCKSTEP_BLOCK_ENTRIES
  static_assert(entries == jacobian_scratch<Model, D>::entries, "blocks of doubles only");
  HWY_ALIGN double y_lanes[ny][lanes_max], vdot_lanes[n][lanes_max], t_lanes[lanes_max];
  HWY_ALIGN double p_lanes[Model::n_params > 0 ? Model::n_params : 1][lanes_max];
  HWY_ALIGN double status[lanes_max];
  HWY_ALIGN int64_t dropped[lanes_max];
  for (int j = 0; j < ny; ++j) hn::Store(y[j].v, d, y_lanes[j]);
  for (int i = 0; i < n; ++i) hn::Store(yp[L::v + i].v, d, vdot_lanes[i]);
  for (int i = 0; i < Model::n_params; ++i) hn::Store(p[i].v, d, p_lanes[i]);
  hn::Store(t.v, d, t_lanes);
  hn::Store(dropped_rows.bits, di, dropped);
  mask<D> evaluated = hn::FirstN(d, 0);
  for (size_t l = 0; l < W; ++l) {
    status[l] = double(member_status::success);
    if (!mask_lane_of<D>(need, l)) continue;
    state_vector<Model> y_l;
    for (int j = 0; j < ny; ++j) y_l[j] = y_lanes[j][l];
    lockstep::vec<double, n> vdot;
    for (int i = 0; i < n; ++i) vdot[i] = vdot_lanes[i][l];
    double p_l[Model::n_params > 0 ? Model::n_params : 1];
    for (int i = 0; i < Model::n_params; ++i) p_l[i] = p_lanes[i][l];
    jacobian_blocks<Model> J;
    J.dropped = static_cast<std::uint64_t>(dropped[l]);
    const member_status js = evaluate_jacobian<Model>(form, t_lanes[l], y_l, vdot, p_l, J, baumgarte_of(opt));
    if (js != member_status::success) {
      status[l] = double(js);
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
#define LOCKSTEP_LOAD_BLOCK_LANES(B)                                               \
  for (P & x : J_lanes.B.a) {                                                      \
    x = P(hn::IfThenElse(evaluated, hn::MaskedLoad(evaluated, d, fresh[e]), x.v)); \
    ++e;                                                                           \
  }
    LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_LOAD_BLOCK_LANES)
#undef LOCKSTEP_LOAD_BLOCK_LANES
  }
  dropped_rows.bits = hn::Load(di, dropped);
  return P(hn::Load(d, status));
}

// The Jacobian blocks of the lanes of `need`, as jacobians_lane_by_lane, evaluated for every lane at once
// on the pack (the formulation's generic code, detail::jacobian_block_values, gives each lane the bits
// of its member alone: tests/simd/pack_model_test.cpp), then the finiteness test and the rank decision
// lane by lane on each lane's values, as evaluate_jacobian makes them. The lanes outside `need` are
// evaluated at the first needed lane's point, so that the pack's arithmetic meets only values some
// member's own evaluation meets (no floating-point flag its member alone would not raise), and their
// results are discarded.
template <class Model, class D>
HWY_NOINLINE pack<D> jacobians_on_pack(mask<D> need, formulation form, pack<D> t,
                                       const lockstep::vec<pack<D>, state_layout<Model>::size>& y,
                                       const lockstep::vec<pack<D>, state_layout<Model>::size>& yp, const pack<D>* p,
                                       const solver_options& opt, jacobian_values<Model, pack<D>>& J_lanes,
                                       dropped_lanes<D>& dropped_rows, jacobian_values<Model, pack<D>>& fresh) {
  using L = state_layout<Model>;
  using P = pack<D>;
  constexpr int ny = L::size, n = Model::n, m = Model::m, k = Model::k;
  const D d;
  const int_tag<D> di;
  const size_t first = size_t(hn::FindKnownFirstTrue(d, need));
  const auto at_needed = [&](P x) { return P(hn::IfThenElse(need, x.v, hn::Set(d, hn::ExtractLane(x.v, first)))); };
  lockstep::vec<P, ny> y_e;
  for (int j = 0; j < ny; ++j) y_e[j] = at_needed(y[j]);
  lockstep::vec<P, n> vdot;
  for (int i = 0; i < n; ++i) vdot[i] = at_needed(yp[L::v + i]);
  P p_e[Model::n_params > 0 ? Model::n_params : 1];
  for (int i = 0; i < Model::n_params; ++i) p_e[i] = at_needed(p[i]);
  // Blocks the formulation does not form stay zero, as in a member's jacobian_blocks.
#define LOCKSTEP_SIMD_ZERO_BLOCK(B) \
  for (P & x : fresh.B.a) x = P(0.0);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_ZERO_BLOCK)
#undef LOCKSTEP_SIMD_ZERO_BLOCK
  lockstep::detail::jacobian_block_values<Model, ad::default_chunk>(form, at_needed(t), y_e, vdot, p_e, fresh,
                                                                    baumgarte_of(opt),
                                                                    static_cast<mat<P, n, n>*>(nullptr));
  mask<D> finite = need;
#define LOCKSTEP_SIMD_FINITE_BLOCK(B) \
  for (const P& x : fresh.B.a) finite = hn::And(finite, is_finite(x));
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_FINITE_BLOCK)
#undef LOCKSTEP_SIMD_FINITE_BLOCK
  if constexpr (decides_constraint_rank<Model>) {
    constexpr size_t lanes_max = hn::MaxLanes(d);
    HWY_ALIGN double G_lanes[(m > 0 ? m : 1) * n][lanes_max], A_lanes[(k > 0 ? k : 1) * n][lanes_max];
    HWY_ALIGN int64_t dropped[lanes_max];
    for (int e = 0; e < m * n; ++e) hn::Store(fresh.G.a[e].v, d, G_lanes[e]);
    for (int e = 0; e < k * n; ++e) hn::Store(fresh.A.a[e].v, d, A_lanes[e]);
    hn::Store(dropped_rows.bits, di, dropped);
    for (size_t l = 0; l < hn::Lanes(d); ++l) {
      if (!mask_lane_of<D>(finite, l)) continue;
      mat<double, m, n> G;
      mat<double, k, n> A;
      for (int e = 0; e < m * n; ++e) G.a[e] = G_lanes[e][l];
      for (int e = 0; e < k * n; ++e) A.a[e] = A_lanes[e][l];
      dropped[l] = static_cast<int64_t>(dependent_constraint_rows<Model>(G, A, static_cast<std::uint64_t>(dropped[l])));
    }
    dropped_rows.bits = hn::Load(di, dropped);
  }
#define LOCKSTEP_SIMD_BLEND_BLOCK(B)                  \
  for (size_t e = 0; e < std::size(fresh.B.a); ++e) \
    J_lanes.B.a[e] = P(hn::IfThenElse(finite, fresh.B.a[e].v, J_lanes.B.a[e].v));
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_BLEND_BLOCK)
#undef LOCKSTEP_SIMD_BLEND_BLOCK
  return P(hn::IfThenElse(hn::AndNot(finite, need), hn::Set(d, double(member_status::model_not_finite)),
                          hn::Set(d, double(member_status::success))));
}

// Whether Model's Jacobian blocks may be evaluated on a pack: its temporaries on the stack grow as W
// times a member's (d(M a)/dq holds an n x n mass matrix of duals of packs: 147 KB for 16 unknowns at
// W = 8), so larger models keep to the double code, lane by lane.
template <class Model, class D>
inline constexpr bool jacobians_fit_a_pack = sizeof(jacobian_values<Model, pack<D>>) <= (std::size_t{128} << 10);

// The Jacobian blocks of the lanes of `need` (jacobians_lane_by_lane's results, status and dropped rows,
// bit for bit, by either way): on the pack where at least 7/8 of W >= 4 lanes need one (7 of 8, 4 of 4),
// lane by lane elsewhere. A pack's evaluation costs from under two to over six members' evaluations on
// the double code, by model and W (docs/SIMD.md, "Where the time would go"), so only a pack that needs
// nearly all of its lanes' Jacobians gains on every model: Radau IIA's, which need one in nearly every
// attempt, and BDF's where its Jacobians go stale at every step. (Evaluating on the pack wherever more
// than half of the lanes needed one made the slider crank's BDF members slower than lane by lane.)
template <class Model, class D>
HWY_INLINE pack<D> lanes_jacobians(mask<D> need, formulation form, pack<D> t,
                                   const lockstep::vec<pack<D>, state_layout<Model>::size>& y,
                                   const lockstep::vec<pack<D>, state_layout<Model>::size>& yp, const pack<D>* p,
                                   const solver_options& opt, jacobian_values<Model, pack<D>>& J_lanes,
                                   dropped_lanes<D>& dropped_rows, jacobian_scratch<Model, D>& scratch) {
  const D d;
  const size_t W = hn::Lanes(d);
  if constexpr (jacobians_fit_a_pack<Model, D>)
    if (W >= 4 && 8 * size_t(hn::CountTrue(d, need)) >= 7 * W)
      return jacobians_on_pack<Model>(need, form, t, y, yp, p, opt, J_lanes, dropped_rows, scratch.on_pack);
  return jacobians_lane_by_lane<Model>(need, form, t, y, yp, p, opt, J_lanes, dropped_rows, scratch.by_lane);
}

// The Jacobian of the lanes without a valid one, at their predictions (lanes_jacobians).
template <class Model, class D>
HWY_INLINE pack<D> corrector_jacobians(mask<D> need, formulation form, pack<D> t_new,
                                       const lockstep::vec<pack<D>, state_layout<Model>::size>& y_pred,
                                       const lockstep::vec<pack<D>, state_layout<Model>::size>& yp_pred,
                                       const pack<D>* p, const solver_options& opt, corrector_lanes<Model, D>& cm) {
  return lanes_jacobians<Model>(need, form, t_new, y_pred, yp_pred, p, opt, cm.jac, cm.dropped, cm.scratch.jacobian);
}

// The Newton matrices of the lanes of `need` assembled at their shifts c and factored in lanes
// (newton_matrix_inl.hpp), blended into those lanes; each lane's status (factorization_status: a
// non-finite matrix model_not_finite, else singular_matrix where the factorization failed).
template <class Model, class D>
HWY_INLINE pack<D> corrector_factor(mask<D> need, formulation form, pack<D> c, corrector_lanes<Model, D>& cm,
                                    bool& /*suspended: the split path is not part of the lanes*/) {
  const D d;
  constexpr int size = newton_matrix_lanes<Model, D>::size;
  newton_matrix_lanes<Model, D>& fresh_factors = cm.scratch.factors;
  const lockstep::basic_factor_result<pack<D>> fr = factor_newton_matrix<Model>(form, cm.jac, cm.dropped, c, fresh_factors);
  for (int e = 0; e < size * size; ++e) cm.newton.lu.a[e] = select(need, fresh_factors.lu.a[e], cm.newton.lu.a[e]);
  for (int i = 0; i < size; ++i) cm.newton.pivot[i] = select(need, fresh_factors.pivot[i], cm.newton.pivot[i]);
  cm.newton.c = select(need, c, cm.newton.c);
  ++cm.work.pack_factorizations;
  cm.work.lane_factorizations += static_cast<std::uint64_t>(hn::CountTrue(d, need));
  return factorization_status(fr);
}

// The residual on packs (one pack iteration of the corrector's work, of which the lanes of `iterating`
// are their members').
template <class Model, class D>
HWY_INLINE residual_parts<Model, pack<D>> corrector_residual(
    mask<D> iterating, formulation form, pack<D> t, const lockstep::vec<pack<D>, state_layout<Model>::size>& y,
    const lockstep::vec<pack<D>, Model::n>& qdot, const lockstep::vec<pack<D>, Model::n>& vdot, const pack<D>* p,
    const solver_options& opt, corrector_lanes<Model, D>& cm) {
  ++cm.work.pack_iterations;
  cm.work.lane_iterations += static_cast<std::uint64_t>(hn::CountTrue(D(), iterating));
  return lockstep::detail::formulation_residual<Model, pack<D>, pack<D>>(form, t, y, qdot, vdot, p, baumgarte_of(opt));
}

template <class Model, class D>
HWY_INLINE void corrector_solve(formulation form, const corrector_lanes<Model, D>& cm,
                                const residual_parts<Model, pack<D>>& r, lockstep::vec<pack<D>, Model::n>& dq,
                                lockstep::vec<pack<D>, Model::n>& dv, lockstep::vec<pack<D>, Model::m>& dl,
                                lockstep::vec<pack<D>, Model::m>& dm, lockstep::vec<pack<D>, Model::k>& dn) {
  solve_newton<Model>(form, cm.jac, cm.dropped, cm.newton, r, dq, dv, dl, dm, dn);
}

template <class Model, class D>
HWY_INLINE pack<D> corrector_norm(formulation form, const lockstep::vec<pack<D>, state_layout<Model>::size>& delta,
                                  const lockstep::vec<pack<D>, state_layout<Model>::size>& w,
                                  const corrector_lanes<Model, D>& cm, pack<D> c) {
  return newton_norm<Model>(form, delta, w, cm.jac.G, [&](int row) { return row_dropped<D>(cm.dropped.bits, row); }, c);
}

// The corrector (corrector_outcome_of, solve_corrector), compiled for this instruction set's packs from
// the text the one-member code compiles.
#include "lockstep/method/corrector_generic.inc"  // IWYU pragma: keep

// corrector_outcome per lane: converged, and otherwise the member status that stopped the lane
// (member_status::success where it ran out of rounds without converging, as solve_corrector reports).
template <class D>
using corrector_outcome_lanes = corrector_outcome_of<mask<D>, pack<D>>;

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
