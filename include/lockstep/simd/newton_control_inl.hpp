// lockstep/simd/newton_control_inl.hpp — the simplified Newton iteration's measures and decisions for
// W members at once, one per lane: the increment's norm (detail::newton_norm), the stale-shift rules
// (detail::stale_shift_ratio_ok, stale_shift_scale) and the convergence test after each increment
// (detail::judge_newton_increment), all of lockstep/method/corrector.hpp.
//
// Every function gives each lane exactly the bits the scalar function gives that lane's member alone
// (tests/simd/newton_control_test.cpp compares them at W = 1, 2, 4, 8 on every instruction set),
// following lockstep/simd/step_control_inl.hpp's rules: branches become masks, a value the scalar code
// would not compute for a lane is computed on a harmless argument, counts are held exactly in double
// lanes. A member's dropped constraint rows (jacobian_blocks::dropped, formulation/constraint_rank.hpp)
// are its lane of a 64-bit integer vector.
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#undef LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#else
#define LOCKSTEP_SIMD_NEWTON_CONTROL_INL_HPP_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "lockstep/method/corrector.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// row_dropped per lane: whether bit `row` of each lane's dropped-row mask is set.
template <class D>
HWY_INLINE mask<D> row_dropped(int_vec<D> dropped, int row) {
  const D d;
  if (row >= constraint_rank_max_rows) return hn::FirstN(d, 0);
  const int_tag<D> di;
  return hn::RebindMask(d, hn::TestBit(dropped, hn::Set(di, static_cast<int64_t>(uint64_t{1} << row))));
}

// detail::newton_norm per lane, with each lane's G (the Jacobian's block) and dropped-row mask.
template <class Model, class D>
HWY_INLINE pack<D> newton_norm(formulation f, const lockstep::vec<pack<D>, state_layout<Model>::size>& delta,
                               const lockstep::vec<pack<D>, state_layout<Model>::size>& w,
                               const mat<pack<D>, Model::m, Model::n>& G, int_vec<D> dropped, pack<D> c) {
  using L = state_layout<Model>;
  const D d;
  const pack<D> h_scale = min(pack<D>(1.0), 1.0 / c);  // ~ h / a_0: the step's time scale, at most 1
  pack<D> s(0.0), held(0.0);
  for (int j = 0; j < L::size; ++j) {
    if (j >= L::mu && j < L::nu) continue;
    mask<D> is_dropped = hn::FirstN(d, 0);
    if (j >= L::lambda && j < L::mu) is_dropped = row_dropped<D>(dropped, j - L::lambda);
    if (j >= L::nu) is_dropped = row_dropped<D>(dropped, Model::m + j - L::nu);
    pack<D> e = delta[j] * w[j];
    const int index = variable_index<Model>(f, j);
    if (j >= L::lambda && index >= 2) {
      e = e * h_scale;
      if (index == 3) e = e * h_scale;
    }
    s = select(is_dropped, s, s + e * e);
    held = select(is_dropped, held + 1.0, held);
  }
  if (!uses_mu(f)) return sqrt(s / (pack<D>(double(L::size - Model::m)) - held));
  for (int i = 0; i < Model::n; ++i) {
    pack<D> dq(0.0);
    for (int a = 0; a < Model::m; ++a) dq += G(a, i) * delta[L::mu + a];
    const pack<D> e = dq / c * w[L::q + i];
    s += e * e;
  }
  return sqrt(s / (pack<D>(double(L::size - Model::m + Model::n)) - held));
}

// detail::stale_shift_ratio_ok per lane.
template <class D>
HWY_INLINE mask<D> stale_shift_ratio_ok(pack<D> c, pack<D> c_old) {
  constexpr double xrate = 0.25;
  const pack<D> ratio = c / c_old;
  return hn::And(ratio >= (1.0 - xrate) / (1.0 + xrate), ratio <= (1.0 + xrate) / (1.0 - xrate));
}

// detail::stale_shift_scale per lane.
template <class D>
HWY_INLINE pack<D> stale_shift_scale(pack<D> c, pack<D> c_old) {
  return 2.0 / (1.0 + c / c_old);
}

template <class D>
struct newton_progress_lanes {
  pack<D> delta0;
  pack<D> rate;
};

// The verdicts of the lanes judged: converged, stopped without converging, or (neither) iterate again.
template <class D>
struct newton_verdict_lanes {
  mask<D> converged;
  mask<D> stopped;
};

// detail::judge_newton_increment per lane, for the lanes of `lanes`, each at its own increment number
// `it` with its own norm dnorm (finite) and Jacobian freshness.
template <class D>
HWY_INLINE newton_verdict_lanes<D> judge_newton_increment(mask<D> lanes, pack<D> it, pack<D> dnorm,
                                                          mask<D> jacobian_fresh, double newton_tol,
                                                          newton_progress_lanes<D>& progress) {
  const pack<D> one(1.0);
  const mask<D> first = hn::And(lanes, it == pack<D>(0.0));
  progress.delta0 = select(first, dnorm, progress.delta0);
  const mask<D> first_converged =
      hn::And(first, hn::Or(dnorm <= 1e-4 * newton_tol, hn::And(jacobian_fresh, 20.0 * dnorm <= newton_tol)));

  const mask<D> later = hn::AndNot(first, lanes);
  const mask<D> second = hn::And(later, it == one);
  const pack<D> ratio = dnorm / select(later, progress.delta0, one);
  const mask<D> root = hn::AndNot(second, later);  // pow(x, 1 / it) from the third increment on
  const pack<D> rooted = pow(select(root, ratio, one), 1.0 / select(root, it, one));
  progress.rate = select(second, ratio, select(root, rooted, progress.rate));

  const mask<D> slow = hn::And(later, progress.rate > 0.9);
  const mask<D> slow_converged = hn::And(slow, dnorm <= newton_tol);
  const mask<D> stopped = hn::AndNot(slow_converged, hn::And(slow, it >= 2.0));
  const mask<D> contracting = hn::AndNot(slow, later);
  const pack<D> rate = select(contracting, progress.rate, pack<D>(0.0));
  const mask<D> contracting_converged = hn::And(contracting, rate / (1.0 - rate) * dnorm <= newton_tol);
  return {hn::Or(first_converged, hn::Or(slow_converged, contracting_converged)), stopped};
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
