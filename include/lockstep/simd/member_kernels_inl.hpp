// lockstep/simd/member_kernels_inl.hpp — an engine's `advance` (lockstep/engine/model_engine.hpp: the
// functor advance_member of lockstep/detail/member_kernels.hpp for each member of a list) for a method
// in lanes (BDF, the Radau IIA family), with the members in W refilled lanes (member_inl.hpp): the
// kernel of the lanes backend.
//
// The list's members enter the lanes in order; each makes at most max_attempts attempts in this call,
// as advance_member allows it, and leaves its lane when it finishes or has made them, its state stored
// back into the chunk, so that the next member of the list takes the lane at once. A member that has
// already finished is only marked so, as member_advance returns at once for it. Since member_advance's
// results do not depend on where it pauses, every member ends the call with the state, counters, status
// and outputs advance_member gives it (tests/simd/member_test.cpp), whatever its lane, W or the
// list's order.
//
// The fused path only: the split path's suspended factorizations and projections are not in lanes.
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_MEMBER_KERNELS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MEMBER_KERNELS_INL_HPP_
#undef LOCKSTEP_SIMD_MEMBER_KERNELS_INL_HPP_
#else
#define LOCKSTEP_SIMD_MEMBER_KERNELS_INL_HPP_
#endif

#include <cstddef>

#include "hwy/highway.h"
#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/detail/soa.hpp"
#include "lockstep/simd/member_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// advance_member<Model, Method>{c, max_attempts} for members[0 .. count) of the chunk c, in the lanes
// of `lanes` (a workspace the caller keeps, so that a call allocates nothing).
template <class Model, class Method, class D>
HWY_NOINLINE void advance_in_lanes(const chunk_view<Model>& c, const long* members, long count, int max_attempts,
                                   member_lanes<Model, Method, D>& lanes) {
  constexpr size_t max_lanes = member_lanes<Model, Method, D>::max_lanes;
  const D d;
  long member_of[max_lanes];
  int attempts_here[max_lanes] = {};
  mask<D> busy = hn::FirstN(d, 0);
  long next = 0;
  // The next member of the list that is still running into lane l, or the lane idles.
  const auto fill = [&](size_t l) {
    for (; next < count; ++next) {
      const long i = members[next];
      member_state<Model, Method>& ms = lanes.incoming;
      soa_load(c.states, c.stride, i, ms);
      if (ms.status != member_status::running) {
        c.finished[i] = 1;
        continue;
      }
      double p[member_lanes<Model, Method, D>::n_params];
      detail::load_params(c, i, p);
      load_member(lanes, l, ms, p);
      member_of[l] = i;
      attempts_here[l] = 0;
      set_mask_lane<D>(busy, l, true);
      ++next;
      return;
    }
    set_mask_lane<D>(busy, l, false);
  };
  // The lanes' sink: lane l's save points and event records go to its member's place in the chunk.
  struct {
    const chunk_view<Model>& c;
    const long* member_of;
    void operator()(size_t l, int save_index, double t, const state_vector<Model>& y) const {
      detail::output_sink_of(c, member_of[l])(save_index, t, y);
    }
    void event(size_t l, long index, int k, double t, const state_vector<Model>& y) const {
      detail::output_sink_of(c, member_of[l]).event(index, k, t, y);
    }
  } sink{c, member_of};

  for (size_t l = 0; l < hn::Lanes(d); ++l) fill(l);
  fill_idle_lanes(lanes, busy);
  while (!hn::AllFalse(d, busy)) {
    const mask<D> finished = member_advance<Model>(busy, lanes, c.t1, c.options, c.save_times, c.save_count, sink);
    const uint64_t working = mask_bits<D>(busy), done_bits = mask_bits<D>(finished);
    for (size_t l = 0; l < hn::Lanes(d); ++l) {
      if (!(working >> l & 1)) continue;
      const bool done = done_bits >> l & 1;
      if (!done && ++attempts_here[l] < max_attempts) continue;
      member_state<Model, Method>& ms = lanes.incoming;
      store_member(lanes, l, ms);
      soa_store(c.states, c.stride, member_of[l], ms);
      c.finished[member_of[l]] = done ? 1 : 0;
      fill(l);
    }
  }
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
