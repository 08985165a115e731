// tests/simd/refilled_lanes_inl.hpp — a study's members through the W lanes of one workspace
// (member_lanes, lockstep/simd/member_inl.hpp), each finished lane refilled at once with the next
// member: how the lanes tests and bench/simd/member_speed.cpp run whole members in lanes, for members
// the caller holds (advance_in_lanes does the same for a chunk's storage).
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h and
// lockstep/simd/member_inl.hpp, inside no namespace.
#if defined(LOCKSTEP_TESTS_SIMD_REFILLED_LANES_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_TESTS_SIMD_REFILLED_LANES_INL_HPP_
#undef LOCKSTEP_TESTS_SIMD_REFILLED_LANES_INL_HPP_
#else
#define LOCKSTEP_TESTS_SIMD_REFILLED_LANES_INL_HPP_
#endif

#include <cstddef>

#include "hwy/highway.h"
#include "lockstep/simd/member_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {

// Members 0 .. count-1 in the lanes of `lanes`, towards t1: begin(m, ms, sink) starts member m into ms
// (member_begin, handing its save points to sink); params(m) is its parameters; a member that cannot
// start has finished. end(m, ms) receives every member's member_state once it has finished (one that
// could not start as member_begin left it), save(m, index, t, y) every save point of member m, in order.
template <class Model, class Method, class D, class Begin, class Params, class End, class Save>
HWY_INLINE void run_in_refilled_lanes(lockstep::simd::HWY_NAMESPACE::member_lanes<Model, Method, D>& lanes,
                                      size_t count, double t1, const solver_options& opt, const double* save_times,
                                      int save_count, const Begin& begin, const Params& params, const End& end,
                                      const Save& save) {
  namespace hn = hwy::HWY_NAMESPACE;
  namespace sl = lockstep::simd::HWY_NAMESPACE;
  const D d;
  constexpr size_t max_lanes = sl::member_lanes<Model, Method, D>::max_lanes;
  size_t lane_member[max_lanes] = {};
  sl::mask<D> busy = hn::FirstN(d, 0);
  size_t next = 0;
  const auto sink = [&](size_t l, int index, double t, const state_vector<Model>& y) {
    save(lane_member[l], index, t, y);
  };
  member_state<Model, Method>& ms = lanes.incoming;
  // The next member that starts into lane l, or the lane idles.
  const auto fill = [&](size_t l) {
    for (; next < count; ++next) {
      const size_t m = next;
      begin(m, ms, [&](int index, double t, const state_vector<Model>& y) { save(m, index, t, y); });
      if (ms.status != member_status::running) {
        end(m, ms);
        continue;
      }
      sl::load_member(lanes, l, ms, params(m));
      lane_member[l] = m;
      sl::set_mask_lane<D>(busy, l, true);
      ++next;
      return;
    }
    sl::set_mask_lane<D>(busy, l, false);
  };
  for (size_t l = 0; l < hn::Lanes(d); ++l) fill(l);
  sl::fill_idle_lanes(lanes, busy);
  while (!hn::AllFalse(d, busy)) {
    const sl::mask<D> finished = sl::member_advance<Model>(busy, lanes, t1, opt, save_times, save_count, sink);
    const uint64_t leaving = sl::mask_bits<D>(hn::And(busy, finished));
    for (size_t l = 0; l < hn::Lanes(d); ++l) {
      if (!(leaving >> l & 1)) continue;
      sl::store_member(lanes, l, ms);
      end(lane_member[l], ms);
      fill(l);
    }
  }
}

}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
