// host/mpi/decomposition.hpp — which members each MPI rank solves.
//
// Statistics are accumulated in fixed blocks of statistics_block members, in member order inside a
// block (study/statistics.hpp). A block split between two ranks would be summed in another order, so
// ranks own whole blocks: with B blocks and R ranks, rank r owns blocks [floor(r B / R), floor((r + 1) B / R)),
// contiguous and in rank order, so that the ranks' members, concatenated in rank order, are the members
// in order (members.csv is written that way). With fewer blocks than ranks some ranks own nothing.
#pragma once

#include <algorithm>

#include "lockstep/study/statistics.hpp"

namespace lockstep::mpi {

struct member_range {
  long first = 0;
  long end = 0;  // one past the last
  long size() const { return end - first; }
};

inline member_range rank_members(long members, int rank, int ranks) {
  const long blocks = (members + study::statistics_block - 1) / study::statistics_block;
  auto block_start = [&](long r) {
    // r * blocks fits a long for any ensemble that fits in memory (blocks < 2^40, ranks < 2^20).
    return std::min(members, (r * blocks / ranks) * study::statistics_block);
  };
  return {block_start(rank), block_start(static_cast<long>(rank) + 1)};
}

// How many of `ranks` own no member (fewer blocks than ranks).
inline int ranks_without_members(long members, int ranks) {
  int idle = 0;
  for (int r = 0; r < ranks; ++r) idle += rank_members(members, r, ranks).size() == 0 ? 1 : 0;
  return idle;
}

}  // namespace lockstep::mpi
