// lockstep/core/lane_primitives.hpp — what code written once for one member's doubles and for SIMD packs
// of members needs beyond arithmetic and lockstep/core/math.hpp: a choice per lane and the logic of the
// masks that choose.
//
// Where the one-member code branches on a member's value, code written once computes both sides and
// selects: on a pack each lane takes its own side, and on doubles, a pack of one lane, a mask is a bool.
// These are the forms for one member (doubles, and ints for its small integers); the packs' forms are in
// lockstep/simd/pack_inl.hpp (mask_and, mask_or, mask_and_not, any_lane) and
// lockstep/simd/step_control_inl.hpp (select), under the same names, so that one text compiles for
// both (docs/explanation/lanes.md, "Code written once for doubles and packs").
#pragma once

#include "lockstep/core/hd.hpp"

namespace lockstep {

// a where m holds, else b (both are computed, as in a lane).
LOCKSTEP_HD constexpr double select(bool m, double a, double b) { return m ? a : b; }
LOCKSTEP_HD constexpr int select(bool m, int a, int b) { return m ? a : b; }

LOCKSTEP_HD constexpr bool mask_and(bool a, bool b) { return a && b; }
LOCKSTEP_HD constexpr bool mask_or(bool a, bool b) { return a || b; }
LOCKSTEP_HD constexpr bool mask_and_not(bool a, bool b) { return a && !b; }  // a and not b

// Whether any lane of the lane type S holds m: code written once skips work that no lane needs (a
// pow whose result every lane discards), as the one-member code skips its branch.
template <class S>
LOCKSTEP_HD constexpr bool any_lane(bool m) {
  return m;
}

}  // namespace lockstep
