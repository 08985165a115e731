// lockstep/method/attempt.hpp — what one step attempt of any method reports, and what it may carry
// along besides the member's state.
#pragma once

#include <type_traits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/status.hpp"

namespace lockstep {

// accepted: the member advanced (its dense output covers the step); rejected: retry with the new step
// size the method chose; failed: the member has finished with the status the method returned;
// suspended: the attempt stopped at a factorization that is done outside it (the split path below) and
// is to be replayed from its start once the factors are ready. A suspended attempt changed nothing of
// the step's state (t, h, order, history) and counted only the work it did (a Jacobian evaluation, and
// Newton iterations of an earlier round), which the replay does not repeat.
enum class attempt_result : int { accepted = 0, rejected = 1, failed = 2, suspended = 3 };

// The split path (docs/GPU.md section 5; lockstep/detail/split_factor.hpp): with `enabled`, an attempt
// that reaches a factorization does not factor. If the factors of exactly this request are `ready`
// (the same Jacobian, `key` the same shift: BDF's c, Radau's h), it takes them; otherwise it assembles
// the matrices into the method state's Newton-matrix storage, sets `pending` and returns `suspended`.
// A batch phase then factors every pending member's matrices with lu_factor (CPU) or
// cublas<t>getrfBatched (CUDA), sets `status` and `ready`, and the next launch replays the attempt:
// an attempt is a deterministic function of the member state, so it arrives at the same request, and
// takes the factors. `resuming` tells the replay that the attempt has started before, so that a
// Jacobian evaluated in it still counts as fresh (`fresh`: the Radau attempt keeps that flag in a
// local; BDF keeps it in corrector_matrices::jacobian_fresh). Factors are consumed when taken (`ready`
// cleared), so a later request always assembles anew. Disabled (the fused path), none of this runs.
struct external_factors {
  bool enabled = false;
  bool pending = false;
  bool ready = false;
  bool resuming = false;
  bool fresh = false;
  member_status status = member_status::success;
  double key = 0.0;
};

// A step's companion: what an attempt carries along besides the member's state, solved once the state's
// step has converged, with a local error estimate of its own that the step must also satisfy (the
// forward sensitivities and Lyapunov tangents of lockstep/lyapunov/: tangent_bdf.hpp, tangent_radau.hpp).
// Within one attempt the method calls
//   solve(step)      once the state has converged and passed its own error test (with fixed steps,
//                    once it has converged), before anything of the member changes: the companion's
//                    step from the method's description of the converged step (bdf_converged_step,
//                    radau_converged_step). A status other than success fails the member with it.
//   estimate(order)  the companion's error estimate for the state's estimate of that order (BDF's k - 1,
//                    k, k + 1; Radau has one: estimate()), 0 when it has none. The method's step
//                    controller decides once, on max(state's, companion's) at every order it reads:
//                    one decision, never redone or undone.
//   rejected()       the combined estimate failed the error test that the state's alone passed.
//   accept()         the step is accepted: the companion takes its new values.
// no_companion, the plain member's, does nothing, and max(estimate, 0) is the estimate bit for bit
// (estimates are never negative; a NaN stays NaN), so a plain attempt is the one it was without.
struct no_companion {
  template <class Step>
  LOCKSTEP_HD member_status solve(const Step&) {
    return member_status::success;
  }
  template <class... Order>
  LOCKSTEP_HD double estimate(Order...) const {
    return 0.0;
  }
  LOCKSTEP_HD void rejected() {}
  LOCKSTEP_HD void accept() {}
};

// Whether an attempt carries a companion (one member's only: a pack of members' attempt has none).
template <class Companion>
inline constexpr bool carries_companion = !std::is_same_v<std::remove_cvref_t<Companion>, no_companion>;

}  // namespace lockstep
