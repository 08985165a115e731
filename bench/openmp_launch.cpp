// bench/openmp_launch.cpp — the omp backend's launch as an OpenMP loop, for bench/thread_wait.sh only.
//
// The launch lockstep had before its thread team (kernels/omp/thread_team.hpp): the same blocks of
// 8-64 members (kernels/omp/launch.cpp), run by `#pragma omp parallel for schedule(dynamic, 1)` on a
// team of `threads` (default: omp_get_max_threads()) whatever the number of blocks. Linked into
// lockstep_openmp_launch, the command's objects with this definition of lockstep_omp_launch in place
// of lockstep::omp's (an object file's definition keeps the archive's member out of the link), so the
// benchmark compares the two launches on the same studies, everything else alike. Not part of lockstep.
#include <omp.h>

#include <algorithm>

#include "kernels/launch.hpp"

extern "C" void lockstep_omp_launch(int threads, const long* active, long count,
                                    const lockstep::detail::block_task* task) {
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const long grain = std::max(8L, std::min(64L, (count / (8L * team)) / 8 * 8));
  const long blocks = (count + grain - 1) / grain;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (long b = 0; b < blocks; ++b) {
    const long first = b * grain;
    (*task)(active + first, std::min(grain, count - first));
  }
}
