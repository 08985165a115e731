// lockstep/simd/bdf_history_inl.hpp — BDF's history for W members at once, one per lane: the history's
// functions (lockstep/method/bdf_history_generic.inc: the Newton form over the past points, the
// predictor, the local error estimates of the error test and the order choice, the acceptance of a step
// into the history, and dense output), with the Newton form (method/newton_form_generic.inc) and the
// error weights and norms (method/error_weights_generic.inc) they build on, compiled for packs from the
// texts the one-member code compiles for doubles.
//
// Every function gives each lane exactly the bits the one-member function gives that lane's member
// alone (tests/simd/bdf_history_test.cpp compares them at W = 1, 2, 4, 8 on every instruction set): each
// lane has its own order k, its own number of past points and its own confluent node at t0 while t0 is
// in its window, and takes part in the iterations of a loop below its own count only (the texts'
// headers say how).
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

  pack<D> past_count;
  pack<D> t_past[max_past];
  state_lanes<Model, D> y_newest;
  state_lanes<Model, D> older_differences[max_past];
  mask<D> initial_derivative;
  state_lanes<Model, D> yp0;
  state_lanes<Model, D> y_scale;
};

// The Newton form and BDF's history functions (prepend_node, evaluate_newton_form, past_newton_form,
// bdf_predict, error_estimate, lte_from_newton_form, order_estimates, accept_into_history,
// bdf_dense_output), compiled for this instruction set's packs from the texts the one-member code
// compiles.
#include "lockstep/method/newton_form_generic.inc"  // IWYU pragma: keep
#include "lockstep/method/bdf_history_generic.inc"  // IWYU pragma: keep

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
