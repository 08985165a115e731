// kernels/omp/launch.cpp — the CPU production backend: OpenMP over the active members of a launch.
//
// Compiled once, with OpenMP, into the lockstep::omp library; the scheduler calls it through
// lockstep_omp_launch (host/scheduler/launch.hpp), so no header's meaning depends on -fopenmp.
// Members are independent and each writes only its own SoA slots, so the schedule (dynamic: members
// take very different numbers of steps) cannot change any result; serial and omp agree bitwise.
#include <omp.h>

#include <algorithm>

#include "host/scheduler/launch.hpp"

extern "C" void lockstep_omp_launch(int threads, const long* active, long count,
                                    const lockstep::detail::block_task* task) {
  const int team = threads > 0 ? threads : omp_get_max_threads();
  // Blocks of up to 64 members: with SoA storage one 64-byte cache line holds one variable of 8
  // neighbouring members, so small blocks make the threads write the same lines on every load and
  // store (false sharing: measured 1.60-1.63x on 2 threads for the pendulum with blocks of 4, 1.91x
  // with 64; bench/RESULTS.md). But a fixed 64 leaves all threads but one idle whenever at most 64
  // members are active — small ensembles, and the tail of every launch sequence, where the members
  // with the most steps finish alone — so the block shrinks with the active count to about 8 blocks
  // per thread, never below one cache line's 8 members.
  const long grain = std::max(8L, std::min(64L, (count / (8L * team)) / 8 * 8));
  const long blocks = (count + grain - 1) / grain;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (long b = 0; b < blocks; ++b) {
    const long first = b * grain;
    (*task)(active + first, std::min(grain, count - first));
  }
}
