// kernels/omp/launch.cpp — the CPU production backend: the active members of a launch in blocks, on the
// CPU cores' thread team (kernels/omp/thread_team.hpp).
//
// Compiled once into the lockstep::omp library (the backend keeps the name omp, which the command's
// --backend and the results files use); the scheduler calls it through lockstep_omp_launch
// (kernels/launch.hpp). Members are independent and each writes only its own SoA slots, so the
// schedule (dynamic: members take very different numbers of steps) cannot change any result; serial
// and omp agree bitwise.
#include <algorithm>

#include "kernels/launch.hpp"
#include "kernels/omp/thread_team.hpp"
#include "lockstep/ensemble.hpp"

extern "C" void lockstep_omp_launch(int threads, const long* active, long count,
                                    const lockstep::detail::block_task* task) {
  const int team = threads > 0 ? threads : lockstep::omp::default_threads();
  // Blocks of up to 64 members: with SoA storage one 64-byte cache line holds one variable of 8
  // neighbouring members, so small blocks make the threads write the same lines on every load and
  // store (false sharing: measured 1.60-1.63x on 2 threads for the pendulum with blocks of 4, 1.91x
  // with 64; bench/RESULTS.md). But a fixed 64 leaves all threads but one idle whenever at most 64
  // members are active — small ensembles, and the tail of every launch sequence, where the members
  // with the most steps finish alone — so the block shrinks with the active count to about 8 blocks
  // per thread, never below one cache line's 8 members.
  const long grain = std::max(8L, std::min(64L, (count / (8L * team)) / 8 * 8));
  const long blocks = (count + grain - 1) / grain;
  // No more threads than blocks: a launch of at most 8 active members (one member's study, the tail of
  // every chunk) runs on the calling thread and wakes nobody.
  lockstep::detail::for_each_on_team(static_cast<int>(std::min<long>(team, blocks)), blocks,
                                     [&](long b, int) {
                                       const long first = b * grain;
                                       (*task)(active + first, std::min(grain, count - first));
                                     });
}
