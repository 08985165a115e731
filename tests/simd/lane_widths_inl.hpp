// tests/simd/lane_widths_inl.hpp — the widths the lanes tests run at (a test's entry point takes the
// width as a number and calls its per-width template with it), and how they put members into lanes.
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_TESTS_SIMD_LANE_WIDTHS_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_TESTS_SIMD_LANE_WIDTHS_INL_HPP_
#undef LOCKSTEP_TESTS_SIMD_LANE_WIDTHS_INL_HPP_
#else
#define LOCKSTEP_TESTS_SIMD_LANE_WIDTHS_INL_HPP_
#endif

#include <cstddef>
#include <type_traits>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {

// run(std::integral_constant<size_t, W>{}) for W = lanes, one of 1, 2, 4 and 8; false for another.
template <class Run>
HWY_INLINE bool at_lane_width(size_t lanes, const Run& run) {
  switch (lanes) {
    case 1: return run(std::integral_constant<size_t, 1>{});
    case 2: return run(std::integral_constant<size_t, 2>{});
    case 4: return run(std::integral_constant<size_t, 4>{});
    case 8: return run(std::integral_constant<size_t, 8>{});
    default: return false;
  }
}

// The vector whose lane l is get(members[l]), for the Lanes(d) members from `members` on.
template <class D, class Member, class Get>
HWY_INLINE hwy::HWY_NAMESPACE::Vec<D> gather_lanes(D d, const Member* members, const Get& get) {
  HWY_ALIGN double lanes[hwy::HWY_NAMESPACE::MaxLanes(d)];
  for (size_t l = 0; l < hwy::HWY_NAMESPACE::Lanes(d); ++l) lanes[l] = get(members[l]);
  return hwy::HWY_NAMESPACE::Load(d, lanes);
}

}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
