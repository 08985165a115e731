// host/engine/member_batch.hpp — the loop every batch of one-member engine calls runs (the Lyapunov
// driver's, host/engine/lyapunov_batch.hpp, and the forward sensitivities', sensitivity_batch.hpp): the
// members on the CPU cores' thread team, a progress callback and a stop test on the calling thread, and
// a member whose call throws failing alone.
//
// Members are independent (dynamic schedule: their costs differ widely between regular and chaotic
// starts), and each writes only its own slots, so the results are the same for any thread count. Include
// this only in programs that link lockstep::omp (kernels/omp/thread_team.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>

#include "kernels/omp/thread_team.hpp"

namespace lockstep {

// solve(i) for i in [0, count) on at most `threads` threads of the team (at least one; the calling thread
// among them). on_done(finished) and stop() are called on the calling thread only, after each of its
// members (a progress display; on_done needs no lock); once stop() returns true no further member
// starts. A member whose solve throws (out of memory) is handed to failed(i, what) instead: nothing may
// leave a team's item by an exception.
template <class Solve, class Failed>
void run_member_batch(long count, int threads, const std::function<void(long finished)>& on_done,
                      const std::function<bool()>& stop, const Solve& solve, const Failed& failed) {
  std::atomic<long> done{0};
  std::atomic<bool> stopped{false};
  detail::for_each_on_team(std::max(threads, 1), count, [&](long i, int thread) noexcept {
    if (stopped.load(std::memory_order_relaxed)) return;
    try {
      solve(i);
    } catch (const std::exception& ex) {
      failed(i, ex.what());
    }
    const long finished = ++done;
    if (thread == 0) {
      if (on_done) on_done(finished);
      if (stop && stop()) stopped.store(true, std::memory_order_relaxed);
    }
  });
}

}  // namespace lockstep
