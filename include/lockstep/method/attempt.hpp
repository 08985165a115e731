// lockstep/method/attempt.hpp — what one step attempt of any method reports.
#pragma once

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

}  // namespace lockstep
