// tests/support/same_member.hpp — bitwise comparison of one member of two ensemble results.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "lockstep/lockstep.hpp"

namespace lockstep::test {

// Member a of ra against member b of rb, bit for bit: status, outputs at the save times, final state
// and time, every counter.
template <class Model>
::testing::AssertionResult same_member(const ensemble_result<Model>& ra, long a, const ensemble_result<Model>& rb,
                                       long b) {
  constexpr int ny = state_layout<Model>::size;
  const std::size_t block = static_cast<std::size_t>(ra.save_count) * ny;
  if (ra.status[a] != rb.status[b]) return ::testing::AssertionFailure() << "status differs";
  if (std::memcmp(&ra.outputs[a * block], &rb.outputs[b * block], block * sizeof(double)) != 0)
    return ::testing::AssertionFailure() << "outputs differ";
  if (std::memcmp(&ra.y_final[a * ny], &rb.y_final[b * ny], ny * sizeof(double)) != 0)
    return ::testing::AssertionFailure() << "final state differs";
  if (std::memcmp(&ra.t_final[a], &rb.t_final[b], sizeof(double)) != 0)
    return ::testing::AssertionFailure() << "final time differs";
  if (std::memcmp(&ra.counters[a], &rb.counters[b], sizeof(member_counters)) != 0)
    return ::testing::AssertionFailure() << "counters differ (" << ra.counters[a].lu_factorizations << " against "
                                         << rb.counters[b].lu_factorizations << " LU factorizations)";
  return ::testing::AssertionSuccess();
}

}  // namespace lockstep::test
