// lockstep/core/lane_primitives.hpp — what code written once for one member's doubles and for SIMD packs
// of members needs beyond arithmetic and lockstep/core/math.hpp: a choice per lane and the logic of the
// masks that choose.
//
// Where the one-member code branches on a member's value, code written once computes both sides and
// selects: on a pack each lane takes its own side, and on doubles, a pack of one lane, a mask is a bool.
// These are the forms for one member (doubles, and ints for its small integers); the packs' forms are in
// lockstep/simd/pack_inl.hpp (select, mask_and, mask_or, mask_and_not, mask_not, any_lane, all_lanes,
// count_bound, within_count, least_count, pick, interchange_rows, scratch_array, no_lane, lane_status,
// status_value, is_finite, is_positive_zero), under the same names, so that one text compiles for both
// (docs/explanation/lanes.md, "Code written once for doubles and packs").
#pragma once

#include <type_traits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/status.hpp"

namespace lockstep {

// a where m holds, else b (both are computed, as in a lane).
LOCKSTEP_HD constexpr double select(bool m, double a, double b) { return m ? a : b; }
LOCKSTEP_HD constexpr int select(bool m, int a, int b) { return m ? a : b; }
LOCKSTEP_HD constexpr long select(bool m, long a, long b) { return m ? a : b; }
LOCKSTEP_HD constexpr member_status select(bool m, member_status a, member_status b) { return m ? a : b; }

LOCKSTEP_HD constexpr bool mask_and(bool a, bool b) { return a && b; }
LOCKSTEP_HD constexpr bool mask_or(bool a, bool b) { return a || b; }
LOCKSTEP_HD constexpr bool mask_and_not(bool a, bool b) { return a && !b; }  // a and not b
LOCKSTEP_HD constexpr bool mask_not(bool a) { return !a; }

// Whether any lane of the lane type S holds m: code written once skips work that no lane needs (a
// pow whose result every lane discards), as the one-member code skips its branch.
template <class S>
LOCKSTEP_HD constexpr bool any_lane(bool m) {
  return m;
}

// Whether every lane of the lane type S holds m.
template <class S>
LOCKSTEP_HD constexpr bool all_lanes(bool m) {
  return m;
}

// The largest count any lane of the lane type S holds, at most max_count: the bound of a loop over the
// members' counts, whose iterations beyond a member's own count change nothing of it. One member's
// loop runs to its own count (a pack's to max_count).
template <class S>
LOCKSTEP_HD constexpr int count_bound(int count, int max_count) {
  return count < max_count ? count : max_count;
}

// Whether index i of a loop run to count_bound(count, ...) is below each lane's own count: the lanes
// that take part in iteration i. One member's loop runs to its own count, so its every index is.
template <class S>
LOCKSTEP_HD constexpr bool within_count(int /*i*/, int /*count*/) {
  return true;
}

// The smallest count any lane of the lane type S holds, or less: where a loop may start for every lane
// (one member: its own count; a pack: 0).
template <class S>
LOCKSTEP_HD constexpr int least_count(int count) {
  return count;
}

// Entry `index` of an array of `size` entries, for each lane of the lane type S its own: one member
// reads it (a pack selects it in each lane).
template <class S, class T>
LOCKSTEP_HD constexpr const T& pick(const T* array, int index, int /*size*/) {
  return array[index];
}

// Rows k and p of an array of `rows` rows of `stride` entries trade their first `length` entries: an LU's
// row interchange (lockstep/core/lu_generic.inc). One matrix's p is its pivot row, a pack's each lane's
// own. One matrix swaps a single entry unconditionally (a self-swap when p == k: cheaper than a branch
// that goes either way at random on Newton matrices), a longer row only when p != k.
template <class T>
LOCKSTEP_HD void interchange_rows(T* a, int stride, int length, int k, int p, int /*rows*/) {
  if (length > 1 && p == k) return;
  for (int j = 0; j < length; ++j) {
    const T t = a[k * stride + j];
    a[k * stride + j] = a[p * stride + j];
    a[p * stride + j] = t;
  }
}

// The type of small integers (row indices, counts) of the value type S: int for one member's double
// (and complex<double>); a pack holds one per lane, exact in its doubles (lockstep/simd/pack_inl.hpp).
template <class S>
struct lane_index {
  using type = int;
};
template <class S>
using lane_index_t = typename lane_index<S>::type;

// Work space of N values of T (arrays of the lane type S) that the code fills before it reads them: a
// Newton form's levels, written up to a member's count and read below it. One member's is left
// uninitialized on the CPU, since it reads only what it wrote; a pack's is zero
// (lockstep/simd/pack_inl.hpp), since the pack's arithmetic runs in the lanes beyond their counts too,
// and a finite value keeps it fast. On the GPU one member's is zero too: nvcc shares the stack slots of
// such arrays only when they are initialized (uninitialized, BDF's advance_member frame grew by a tenth:
// ptxas, docs/GPU.md section 2.1), and the stack frame is what bounds the GPU.
template <class S, class T, int N>
struct scratch_array {
#ifdef __CUDA_ARCH__
  T a[N]{};
#else
  union {
    T a[N];
  };
  LOCKSTEP_HD scratch_array() {}
#endif
  LOCKSTEP_HD T& operator[](int i) { return a[i]; }
  LOCKSTEP_HD const T& operator[](int i) const { return a[i]; }
  LOCKSTEP_HD operator T*() { return a; }
  LOCKSTEP_HD operator const T*() const { return a; }
};

// The mask that holds in no lane of the lane type S.
template <class S>
LOCKSTEP_HD constexpr bool no_lane() {
  return false;
}

// The type that holds the statuses of the members of the lane type S: member_status for one member (a
// pack holds their values in double lanes: lockstep/simd/pack_inl.hpp).
template <class S>
struct lane_status {
  using type = member_status;
};
template <class S>
using lane_status_t = typename lane_status<S>::type;

// A member's status as the status type St holds it: member_status itself for one member (a pack holds
// its value in double lanes).
template <class St>
  requires std::is_same_v<St, member_status>  // not a pack's, which argument-dependent lookup also finds
LOCKSTEP_HD constexpr St status_value(member_status s) {
  return s;
}

}  // namespace lockstep
