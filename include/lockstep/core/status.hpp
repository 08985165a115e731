// lockstep/core/status.hpp — how a member's integration ended.
//
// Every member ends with one of these codes (docs/ARCHITECTURE.md section 3). The codes are stable integers:
// they are written to results files with their names as an attribute, so never renumber one.
#pragma once

#include <string_view>

#include "lockstep/core/hd.hpp"

namespace lockstep {

enum class member_status : int {
  running = 0,                 // not finished yet (only seen mid-run, e.g. in a checkpoint)
  success = 1,                 // reached t1
  max_steps = 2,               // the step budget ran out before t1
  step_size_too_small = 3,     // the step size fell below h_min (error test or Newton kept failing)
  newton_failure = 4,          // Newton failed to converge repeatedly, even with fresh Jacobians
  singular_matrix = 5,         // the Newton or Gram matrix is singular (redundant constraints,
                               // singular configuration)
  model_not_finite = 6,        // the model returned an infinite or NaN value
  inconsistent_initial = 7,    // the given state violates the constraints by more than strict
                               // initialization's tolerance, or grossly (init "auto": method/options.hpp)
  initialization_failed = 8,   // projection onto the constraints did not converge
  invalid_input = 9,           // options or inputs rejected before integration (the reason is logged
                               // by the front end)
  projection_failed = 10,      // the projection after an accepted step failed: its Gram matrix
                               // G W^-1 G^T is singular (redundant constraints, a singular
                               // configuration) or Gauss-Newton onto Phi = 0 did not converge
  stopped_by_event = 11,       // a stopping event ended the member before t1 (stepper/events.hpp): a
                               // normal end, at the event's time and state
};

inline constexpr int member_status_count = 12;

// The name of a status as written to results files and messages.
LOCKSTEP_HD constexpr const char* status_name(member_status s) {
  switch (s) {
    case member_status::running: return "running";
    case member_status::success: return "success";
    case member_status::max_steps: return "max_steps";
    case member_status::step_size_too_small: return "step_size_too_small";
    case member_status::newton_failure: return "newton_failure";
    case member_status::singular_matrix: return "singular_matrix";
    case member_status::model_not_finite: return "model_not_finite";
    case member_status::inconsistent_initial: return "inconsistent_initial";
    case member_status::initialization_failed: return "initialization_failed";
    case member_status::invalid_input: return "invalid_input";
    case member_status::projection_failed: return "projection_failed";
    case member_status::stopped_by_event: return "stopped_by_event";
  }
  return "unknown";
}

// Whether a member that ended with s ended normally: it reached t1, or a stopping event ended it.
LOCKSTEP_HD constexpr bool ended_normally(member_status s) {
  return s == member_status::success || s == member_status::stopped_by_event;
}

}  // namespace lockstep
