// lockstep/simd/bdf_history_inl.hpp — BDF's history for W members at once, one per lane: the Newton
// form over the past points (lockstep/method/interpolation.hpp), the predictor, the error weights and
// norms (lockstep/method/error_weights_generic.inc, compiled here for packs), the local error estimates
// of the error test and the order choice, the acceptance of a step into the history, and dense output
// (lockstep/method/bdf.hpp's detail functions and bdf_dense_output).
//
// Every function gives each lane exactly the bits the scalar function gives that lane's member alone
// (tests/simd/bdf_history_test.cpp compares them at W = 1, 2, 4, 8 on every instruction set). The
// lanes differ in how many nodes they use — each its own order k, its own number of past points, its
// own confluent node at t0 while t0 is in its window — so a loop of the scalar code over a count runs
// here to the largest count any lane can have (a compile-time bound), and a lane takes part in the
// iterations below its own count only (a mask), doing in each exactly the scalar iteration's operations
// in its order. A count of 0 leaves a lane out altogether. Where a lane does not take part, a
// denominator is replaced by 1, so no discarded value divides by zero; the other operands of a
// discarded value are the lane's own history.
//
// bdf_history_lanes holds what these functions read and write of a member's BDF state (bdf_state of
// method/bdf.hpp) for W members; the counts (past_count, orders) are held exactly in double lanes, as
// in lockstep/simd/step_control_inl.hpp.
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_BDF_HISTORY_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_BDF_HISTORY_INL_HPP_
#undef LOCKSTEP_SIMD_BDF_HISTORY_INL_HPP_
#else
#define LOCKSTEP_SIMD_BDF_HISTORY_INL_HPP_
#endif

#include <limits>

#include "hwy/highway.h"
#include "lockstep/method/bdf.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// BDF's error weights and the weighted RMS norm over a range, compiled for this instruction set's packs
// from the text the one-member code compiles for doubles.
#include "lockstep/method/error_weights_generic.inc"  // IWYU pragma: keep

template <class D, int N>
using pack_vector_of = lockstep::vec<pack<D>, N>;

template <class Model, class D>
using state_lanes = pack_vector_of<D, state_layout<Model>::size>;

template <class Model, class D>
struct bdf_history_lanes {
  static constexpr int max_past = bdf_state<Model>::max_past;
  static constexpr int max_nodes = max_past + 2;  // bdf.hpp's arrays of nodes and coefficients

  pack<D> past_count;
  pack<D> t_past[max_past];
  state_lanes<Model, D> y_newest;
  state_lanes<Model, D> older_differences[max_past];
  mask<D> initial_derivative;
  state_lanes<Model, D> yp0;
  state_lanes<Model, D> y_scale;
};

// prepend_node per lane: levels [first, count) of each lane's own count (at most max_count); `confluent`
// the lanes whose x[1] is a confluent copy of x[0], with derivative_at_x0 their y'(x[0]).
template <class D, int NY>
HWY_INLINE void prepend_node(int first, pack<D> count, int max_count, const pack<D>* x, const pack_vector_of<D, NY>& y0,
                             const pack_vector_of<D, NY>* older, mask<D> confluent,
                             const pack_vector_of<D, NY>& derivative_at_x0, pack_vector_of<D, NY>* dd, int begin = 0,
                             int end = NY) {
  const D d;
  for (int j = first; j < max_count; ++j) {
    const mask<D> active = pack<D>(double(j)) < count;
    if (j == 0) {
      for (int i = begin; i < end; ++i) dd[0][i] = select(active, y0[i], dd[0][i]);
      continue;
    }
    const mask<D> derivative = j == 1 ? hn::And(active, confluent) : hn::FirstN(d, 0);
    const mask<D> general = hn::AndNot(derivative, active);
    const pack<D> inv = 1.0 / select(general, x[j] - x[0], pack<D>(1.0));
    for (int i = begin; i < end; ++i)
      dd[j][i] = select(general, (older[j - 1][i] - dd[j - 1][i]) * inv, select(derivative, derivative_at_x0[i], dd[j][i]));
  }
}

// evaluate_newton_form per lane (count nodes of each lane, at most max_count): P(t) and, when asked,
// P'(t), by Horner's rule with the product rule started at each lane's own highest coefficient.
template <class D, int NY>
HWY_INLINE void evaluate_newton_form(pack<D> count, int max_count, const pack<D>* x, const pack_vector_of<D, NY>* dd,
                                     pack<D> t, pack_vector_of<D, NY>& value, pack_vector_of<D, NY>* derivative) {
  pack_vector_of<D, NY> dvalue{};
  value = pack_vector_of<D, NY>{};
  const pack<D> top = count - 1.0;
  for (int i = max_count - 1; i >= 0; --i) {
    const pack<D> level = pack<D>(double(i));
    const mask<D> start = level == top;  // the lane's Horner starts at its highest coefficient
    const mask<D> step = level < top;
    const pack<D> w = t - x[i];
    for (int j = 0; j < NY; ++j) {
      if (derivative) dvalue[j] = select(step, dvalue[j] * w + value[j], dvalue[j]);
      value[j] = select(step, value[j] * w + dd[i][j], select(start, dd[i][j], value[j]));
    }
  }
  if (derivative) *derivative = dvalue;
}

// t_past[i] of each lane, for a per-lane index i (one of 0 .. max_past - 1).
template <class Model, class D>
HWY_INLINE pack<D> past_time_at(const bdf_history_lanes<Model, D>& s, pack<D> i) {
  pack<D> r = s.t_past[0];
  for (int j = 1; j < bdf_history_lanes<Model, D>::max_past; ++j) r = select(i == pack<D>(double(j)), s.t_past[j], r);
  return r;
}

// detail::available_past per lane.
template <class Model, class D>
HWY_INLINE pack<D> available_past(const bdf_history_lanes<Model, D>& s) {
  return select(s.initial_derivative, s.past_count + 1.0, s.past_count);
}

// detail::past_newton_form per lane: the coefficients of levels [first, count), and the nodes of
// levels [first, max_nodes) (a node depends on its level alone, so the nodes beyond a lane's count are
// those a later extension of its form would write).
template <class Model, class D>
HWY_INLINE void past_newton_form(const bdf_history_lanes<Model, D>& s, int first, pack<D> count, pack<D>* x,
                                 state_lanes<Model, D>* dd) {
  using H = bdf_history_lanes<Model, D>;
  const pack<D> oldest = past_time_at(s, s.past_count - 1.0);
  for (int j = first; j < H::max_nodes; ++j)
    x[j] = j < H::max_past ? select(pack<D>(double(j)) < s.past_count, s.t_past[j], oldest) : oldest;
  const mask<D> confluent_next = s.past_count == pack<D>(1.0);
  prepend_node(first, count, H::max_nodes, x, s.y_newest, s.older_differences, confluent_next, s.yp0, dd);
}

// detail::bdf_predict per lane (orders k of at most bdf_max_order): the predictor y_pred, y'_pred at
// t_new and the leading coefficient c, returned.
template <class Model, class D>
HWY_INLINE pack<D> bdf_predict(const bdf_history_lanes<Model, D>& s, pack<D> k, pack<D> t_new, pack<D>* x,
                               state_lanes<Model, D>* dd, state_lanes<Model, D>& y_pred, state_lanes<Model, D>& yp_pred) {
  constexpr int max_count = bdf_max_order + 1;
  past_newton_form(s, 0, k + 1.0, x, dd);
  evaluate_newton_form(k + 1.0, max_count, x, dd, t_new, y_pred, &yp_pred);
  pack<D> c(0.0);
  for (int j = 0; j < bdf_max_order; ++j) {
    const mask<D> active = pack<D>(double(j)) < k;
    c = select(active, c + 1.0 / select(active, t_new - x[j], pack<D>(1.0)), c);
  }
  return c;
}

// The error test's estimate LTE_k of bdf_attempt: ||y - y_pred|| over q and v, divided by
// 1 + c (t_new - tau_{k+1}) (x[k] of each lane).
template <class Model, class D>
HWY_INLINE pack<D> error_estimate(const state_lanes<Model, D>& y, const state_lanes<Model, D>& y_pred,
                                  const state_lanes<Model, D>& w, pack<D> c, pack<D> t_new, const pack<D>* x,
                                  pack<D> k) {
  using L = state_layout<Model>;
  state_lanes<Model, D> e;
  for (int j = 0; j < L::size; ++j) e[j] = y[j] - y_pred[j];
  pack<D> x_k = x[0];
  for (int j = 1; j <= bdf_max_order; ++j) x_k = select(k == pack<D>(double(j)), x[j], x_k);
  return weighted_rms(e, w, L::q, L::lambda) / (1.0 + c * (t_new - x_k));
}

// LTE_p of each lane of `wanted` from the Newton coefficients e over (t_new, tau_1, ...) (levels up to
// p + 1) and the nodes x (x[0] = t_new): detail::lte_factors_of and the norm of lte_from_newton_form;
// 0 in the other lanes.
template <class Model, class D>
HWY_INLINE pack<D> estimate_of_order(mask<D> wanted, pack<D> p, const pack<D>* x, pack<D> t_new,
                                     const state_lanes<Model, D>* e, const state_lanes<Model, D>& w) {
  using L = state_layout<Model>;
  constexpr int max_nodes = bdf_history_lanes<Model, D>::max_nodes;
  pack<D> prod(1.0), cp(0.0);
  for (int j = 1; j < max_nodes - 1; ++j) {
    const mask<D> active = hn::And(wanted, pack<D>(double(j)) <= p);
    const pack<D> gap = select(active, t_new - x[j], pack<D>(1.0));
    prod = select(active, prod * gap, prod);
    cp = select(active, cp + 1.0 / gap, cp);
  }
  state_lanes<Model, D> top;
  for (int i = L::q; i < L::lambda; ++i) top[i] = e[0][i];
  for (int j = 1; j < max_nodes; ++j) {
    const mask<D> at = pack<D>(double(j)) == p + 1.0;
    for (int i = L::q; i < L::lambda; ++i) top[i] = select(at, e[j][i], top[i]);
  }
  const pack<D> estimate = weighted_rms(top, w, L::q, L::lambda) * abs(prod) / select(wanted, cp, pack<D>(1.0));
  return select(wanted, estimate, pack<D>(0.0));
}

// detail::lte_from_newton_form per lane, for the lanes of `wanted` (0 in the others): LTE_p from the
// past Newton form (past_x, past_dd: levels 0 .. p at least).
template <class Model, class D>
HWY_INLINE pack<D> lte_from_newton_form(mask<D> wanted, pack<D> p, const pack<D>* past_x,
                                        const state_lanes<Model, D>* past_dd, pack<D> t_new,
                                        const state_lanes<Model, D>& y_new, const state_lanes<Model, D>& w) {
  using L = state_layout<Model>;
  constexpr int max_nodes = bdf_history_lanes<Model, D>::max_nodes;
  const D d;
  pack<D> x[max_nodes];
  state_lanes<Model, D> e[max_nodes];
  x[0] = t_new;
  for (int j = 0; j + 1 < max_nodes; ++j) x[j + 1] = past_x[j];
  const pack<D> count = select(wanted, p + 2.0, pack<D>(0.0));
  prepend_node(0, count, max_nodes, x, y_new, past_dd, hn::FirstN(d, 0), y_new, e, L::q, L::lambda);
  return estimate_of_order<Model>(wanted, p, x, t_new, e, w);
}

// detail::order_estimates per lane: LTE_{k-1} in the lanes of `lower`, LTE_{k+1} in those of `higher`
// (0 in the others), from one Newton form over t_new and the past nodes.
template <class Model, class D>
HWY_INLINE void order_estimates(pack<D> k, mask<D> lower, mask<D> higher, const pack<D>* past_x,
                                const state_lanes<Model, D>* past_dd, pack<D> t_new, const state_lanes<Model, D>& y_new,
                                const state_lanes<Model, D>& w, pack<D>& lte_lower, pack<D>& lte_higher) {
  using L = state_layout<Model>;
  constexpr int max_nodes = bdf_history_lanes<Model, D>::max_nodes;
  const D d;
  const mask<D> either = hn::Or(lower, higher);
  const pack<D> p_max = select(higher, k + 1.0, k - 1.0);
  pack<D> x[max_nodes];
  state_lanes<Model, D> e[max_nodes];
  x[0] = t_new;
  for (int j = 0; j + 1 < max_nodes; ++j) x[j + 1] = past_x[j];
  prepend_node(0, select(either, p_max + 2.0, pack<D>(0.0)), max_nodes, x, y_new, past_dd, hn::FirstN(d, 0), y_new, e,
               L::q, L::lambda);
  lte_lower = select(lower, estimate_of_order<Model>(lower, k - 1.0, x, t_new, e, w), lte_lower);
  lte_higher = select(higher, estimate_of_order<Model>(higher, k + 1.0, x, t_new, e, w), lte_higher);
}

// bdf_attempt's acceptance, for the lanes of `accepted`: (t_new, y) becomes the newest point, the past
// Newton form dd (over every available node) the older differences, y widens the round-off scale.
template <class Model, class D>
HWY_INLINE void accept_into_history(mask<D> accepted, pack<D> t_new, const state_lanes<Model, D>& y,
                                    const state_lanes<Model, D>* dd, bdf_history_lanes<Model, D>& s) {
  using H = bdf_history_lanes<Model, D>;
  using L = state_layout<Model>;
  for (int j = H::max_past - 1; j > 0; --j) s.t_past[j] = select(accepted, s.t_past[j - 1], s.t_past[j]);
  s.t_past[0] = select(accepted, t_new, s.t_past[0]);
  const mask<D> grows = hn::And(accepted, s.past_count < pack<D>(double(H::max_past)));
  s.past_count = select(grows, s.past_count + 1.0, s.past_count);
  s.initial_derivative = hn::AndNot(hn::AndNot(grows, accepted), s.initial_derivative);  // t0 left the window
  const pack<D> older = available_past(s) - 1.0;
  for (int j = 0; j < H::max_past; ++j) {
    const mask<D> take = hn::And(accepted, pack<D>(double(j)) < older);
    for (int i = 0; i < L::size; ++i) s.older_differences[j][i] = select(take, dd[j][i], s.older_differences[j][i]);
  }
  for (int i = 0; i < L::size; ++i) {
    s.y_newest[i] = select(accepted, y[i], s.y_newest[i]);
    s.y_scale[i] = select(accepted, max(s.y_scale[i], abs(y[i])), s.y_scale[i]);
  }
}

// bdf_dense_output per lane: the polynomial of each lane's last accepted step (order last_order) at t.
template <class Model, class D>
HWY_INLINE void bdf_dense_output(const bdf_history_lanes<Model, D>& s, pack<D> last_order, pack<D> t,
                                 state_lanes<Model, D>& y) {
  using H = bdf_history_lanes<Model, D>;
  pack<D> x[H::max_nodes];
  state_lanes<Model, D> dd[H::max_nodes];
  const pack<D> count = min(last_order + 1.0, s.past_count);
  past_newton_form(s, 0, count, x, dd);
  evaluate_newton_form<D, state_layout<Model>::size>(count, H::max_past, x, dd, t, y, nullptr);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
