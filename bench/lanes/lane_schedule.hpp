// bench/lanes/lane_schedule.hpp — how many lane-attempts W lanes (the CPU lanes backend) or 32-thread
// warps (the CUDA backend) execute for an ensemble, replayed from per-attempt traces of its members.
//
// Why a replay is exact: a member's attempts do not depend on its lane, its pack or W (that is the
// determinism rule the lanes must keep: docs/SIMD.md), so the sequence of attempts the one-member
// stepper records for it is the sequence any lane would execute for it. What the schedule adds is who
// waits for whom:
//  - a pack attempt runs one attempt in every lane that holds a member; inside it, each phase runs as
//    often as its most demanding lane needs (the Newton loop while any lane iterates, a Jacobian
//    evaluation or factorization when any lane needs one), the others waiting masked;
//  - lanes (refill): a lane whose member has finished takes the next member of the chunk before the
//    next pack attempt, so lanes idle only at the chunk's end;
//  - warps (no refill inside a launch): the active members in order, 32 per warp, each thread runs up to
//    K attempts per launch and a warp lasts as long as its longest thread; between launches the
//    finished members leave the active list and the warps regroup (kernels/cuda's launch structure).
// Utilization = useful work / (lanes x executed work), per kind of work: lane-attempts, Newton
// iterations, Jacobian evaluations, LU factorizations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace lockstep::lanes_model {

// One attempt of one member: its Newton iterations, Jacobian evaluations and LU factorizations.
struct attempt_work {
  long iterations = 0, jacobians = 0, factorizations = 0;
};
using member_trace = std::vector<attempt_work>;  // all attempts of one member, in order

struct work_totals {
  double attempts = 0, iterations = 0, jacobians = 0, factorizations = 0;
};

struct utilization {
  work_totals useful;    // summed over members
  work_totals executed;  // summed over pack attempts, times the lanes of a pack
  double of(double work_totals::*kind) const { return executed.*kind > 0 ? useful.*kind / (executed.*kind) : 1.0; }
};

namespace detail {
// One pack attempt over the given lanes' attempts (nullptr: idle lane): adds the lanes x the phases'
// maxima to executed and the attempts' own work to useful.
inline void pack_attempt(const std::vector<const attempt_work*>& lanes, utilization& u) {
  attempt_work most;
  bool any = false;
  for (const attempt_work* a : lanes) {
    if (a == nullptr) continue;
    any = true;
    most.iterations = std::max(most.iterations, a->iterations);
    most.jacobians = std::max(most.jacobians, a->jacobians);
    most.factorizations = std::max(most.factorizations, a->factorizations);
    u.useful.attempts += 1;
    u.useful.iterations += double(a->iterations);
    u.useful.jacobians += double(a->jacobians);
    u.useful.factorizations += double(a->factorizations);
  }
  if (!any) return;
  const double w = double(lanes.size());
  u.executed.attempts += w;
  u.executed.iterations += w * double(most.iterations);
  u.executed.jacobians += w * double(most.jacobians);
  u.executed.factorizations += w * double(most.factorizations);
}
}  // namespace detail

// W lanes refilled from the members in order.
inline utilization refilled_lanes(const std::vector<member_trace>& members, std::size_t W) {
  utilization u;
  std::vector<std::size_t> member(W), next_attempt(W);
  std::vector<bool> busy(W, false);
  std::size_t queue = 0;
  const auto refill = [&](std::size_t l) {
    busy[l] = false;
    while (queue < members.size()) {
      const std::size_t m = queue++;
      if (members[m].empty()) continue;  // a member that fails before its first attempt takes no lane time
      member[l] = m, next_attempt[l] = 0, busy[l] = true;
      return;
    }
  };
  for (std::size_t l = 0; l < W; ++l) refill(l);
  std::vector<const attempt_work*> lanes(W);
  while (std::any_of(busy.begin(), busy.end(), [](bool b) { return b; })) {
    for (std::size_t l = 0; l < W; ++l) lanes[l] = busy[l] ? &members[member[l]][next_attempt[l]] : nullptr;
    detail::pack_attempt(lanes, u);
    for (std::size_t l = 0; l < W; ++l)
      if (busy[l] && ++next_attempt[l] == members[member[l]].size()) refill(l);
  }
  return u;
}

// Warps of `width` threads over the active members, K attempts per launch, regrouped between launches.
inline utilization warps(const std::vector<member_trace>& members, std::size_t width, std::size_t K) {
  utilization u;
  std::vector<std::size_t> active, done(members.size(), 0);
  for (std::size_t m = 0; m < members.size(); ++m)
    if (!members[m].empty()) active.push_back(m);
  std::vector<const attempt_work*> lanes(width);
  while (!active.empty()) {
    for (std::size_t first = 0; first < active.size(); first += width)
      for (std::size_t slot = 0; slot < K; ++slot) {
        bool any = false;
        for (std::size_t l = 0; l < width; ++l) {
          lanes[l] = nullptr;
          if (first + l >= active.size()) continue;
          const std::size_t m = active[first + l];
          if (done[m] < members[m].size()) lanes[l] = &members[m][done[m]], any = true;
        }
        if (!any) break;  // every thread of the warp has finished: the warp retires early
        detail::pack_attempt(lanes, u);
        for (std::size_t l = 0; l < width; ++l)
          if (lanes[l] != nullptr) ++done[active[first + l]];
      }
    std::erase_if(active, [&](std::size_t m) { return done[m] == members[m].size(); });
  }
  return u;
}

}  // namespace lockstep::lanes_model
