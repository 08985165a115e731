// Tests of bench/lanes/lane_schedule.hpp, the replay of per-attempt traces through refilled lanes and
// through warps, on hand-made traces whose utilization is worked out here by hand.
#include <gtest/gtest.h>

#include "bench/lanes/lane_schedule.hpp"

namespace lockstep::lanes_model {
namespace {

member_trace attempts(int count, long iterations = 2, long jacobians = 0, long factorizations = 0) {
  return member_trace(std::size_t(count), attempt_work{iterations, jacobians, factorizations});
}

TEST(LaneSchedule, EqualMembersFillEveryLane) {
  const std::vector<member_trace> members(8, attempts(5));
  const utilization u = refilled_lanes(members, 4);
  EXPECT_EQ(u.useful.attempts, 40);
  EXPECT_EQ(u.executed.attempts, 40);  // two rounds of 5 pack attempts, 4 lanes each
  EXPECT_EQ(u.of(&work_totals::iterations), 1.0);
}

TEST(LaneSchedule, RefillTakesTheNextMemberAtOnce) {
  // Lane 0: member 0 (1 attempt), then member 2 (3 attempts); lane 1: member 1 (4 attempts). Pack
  // attempts: 4, both lanes busy throughout: utilization 1.
  const std::vector<member_trace> members = {attempts(1), attempts(4), attempts(3)};
  const utilization u = refilled_lanes(members, 2);
  EXPECT_EQ(u.executed.attempts, 8);
  EXPECT_EQ(u.useful.attempts, 8);
}

TEST(LaneSchedule, TheChunksTailIdles) {
  // One member of 6 attempts and one of 2 in two lanes: 6 pack attempts, 8 useful of 12.
  const utilization u = refilled_lanes({attempts(6), attempts(2)}, 2);
  EXPECT_DOUBLE_EQ(u.of(&work_totals::attempts), 8.0 / 12.0);
}

TEST(LaneSchedule, PhasesRunForTheMostDemandingLane) {
  // Two lanes, one attempt each: 1 and 3 Newton iterations, a Jacobian in one lane only.
  const utilization u = refilled_lanes({attempts(1, 1, 1, 1), attempts(1, 3, 0, 1)}, 2);
  EXPECT_DOUBLE_EQ(u.of(&work_totals::iterations), 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(u.of(&work_totals::jacobians), 1.0 / 2.0);
  EXPECT_DOUBLE_EQ(u.of(&work_totals::factorizations), 1.0);
}

TEST(LaneSchedule, MembersWithoutAttemptsTakeNoLaneTime) {
  const utilization u = refilled_lanes({member_trace{}, attempts(2), member_trace{}, attempts(2)}, 2);
  EXPECT_EQ(u.executed.attempts, 4);
  EXPECT_EQ(u.useful.attempts, 4);
}

TEST(LaneSchedule, WarpsDoNotRefillInsideALaunch) {
  // Warp of 2 threads, K = 4: members of 1 and 4 attempts, then a member of 4 waiting. Launch 1: the
  // warp {0, 1} runs 4 slots (8 thread-attempts, 5 useful); launch 2: {2} alone, 4 slots, 2 threads
  // (8 executed, 4 useful). With refilled lanes the same members take 5 pack attempts (10, 9 useful).
  const std::vector<member_trace> members = {attempts(1), attempts(4), attempts(4)};
  const utilization w = warps(members, 2, 4);
  EXPECT_EQ(w.executed.attempts, 16);
  EXPECT_EQ(w.useful.attempts, 9);
  const utilization l = refilled_lanes(members, 2);
  EXPECT_EQ(l.executed.attempts, 10);
}

TEST(LaneSchedule, AWarpRetiresWhenAllItsThreadsHaveFinished) {
  // K = 32 but both members finish after 3 attempts: 3 slots, not 32.
  const utilization w = warps({attempts(3), attempts(3)}, 2, 32);
  EXPECT_EQ(w.executed.attempts, 6);
}

}  // namespace
}  // namespace lockstep::lanes_model
