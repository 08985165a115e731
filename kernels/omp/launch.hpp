// kernels/omp/launch.hpp — the CPU production backend: OpenMP over the active members.
//
// Members are independent and each writes only its own SoA slots, so the schedule (dynamic: members
// take very different numbers of steps) cannot change any result; serial and omp agree bitwise.
#pragma once

#include <algorithm>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace lockstep::omp {

// True when this translation unit was compiled with OpenMP (otherwise the pragma is ignored and the
// loop runs on one thread; the front ends refuse backend "omp" then).
constexpr bool available() {
#if defined(_OPENMP)
  return true;
#else
  return false;
#endif
}

// threads <= 0: OpenMP's default team size.
template <class Functor>
void for_each_member(const long* active, long count, const Functor& f, int threads) {
#if defined(_OPENMP)
  const int team = threads > 0 ? threads : omp_get_max_threads();
  // Grain up to 64: with SoA storage one 64-byte cache line holds one variable of 8 neighbouring
  // members, so small grains make the threads write the same lines on every load and store (false
  // sharing: measured 1.60-1.63x on 2 threads for the pendulum with grain 4, 1.91x with 64;
  // bench/RESULTS.md). But a fixed 64 leaves all threads but one idle whenever at most 64 members are
  // active — small ensembles, and the tail of every launch sequence, where the members with the most
  // steps finish alone — so the grain shrinks with the active count to about 8 blocks per thread,
  // never below one cache line's 8 members.
  const long grain = std::max(8L, std::min(64L, (count / (8L * team)) / 8 * 8));
#pragma omp parallel for schedule(dynamic, grain) num_threads(team)
  for (long a = 0; a < count; ++a) f(active[a]);
#else
  (void)threads;
  for (long a = 0; a < count; ++a) f(active[a]);
#endif
}

}  // namespace lockstep::omp
