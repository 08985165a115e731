// lockstep/method/attempt.hpp — what one step attempt of any method reports.
#pragma once

namespace lockstep {

// accepted: the member advanced (its dense output covers the step); rejected: retry with the new step
// size the method chose; failed: the member has finished with the status the method returned.
enum class attempt_result : int { accepted = 0, rejected = 1, failed = 2 };

}  // namespace lockstep
