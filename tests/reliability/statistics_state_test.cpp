// Saving, restoring and merging ensemble statistics (study/statistics.hpp, serialize/merge_serialized):
// a state saved at any member and restored into a fresh object continues bit for bit (checkpoints), and
// states of whole-block ranges merged in any order give the single-process summary bit for bit (MPI
// ranks), in every mode — moments only, exact quantiles, the sketch, replicate standard errors whose
// replicates straddle block and rank boundaries. Damaged, overlapping or foreign states are refused and
// leave the object unchanged.
#include "lockstep/study/statistics.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using lockstep::study::ensemble_statistics;
using lockstep::study::ensemble_summary;
using lockstep::study::state_error;
using lockstep::study::statistics_block;

constexpr std::size_t width = 5;
constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

// Member-major values with some NaN (failed members) and a heavy tail.
std::vector<double> make_values(long members, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(members) * width);
  for (long i = 0; i < members; ++i)
    for (std::size_t c = 0; c < width; ++c) {
      double x = c == 4 ? std::exp(2.0 * normal(rng)) : 10.0 * static_cast<double>(c) + normal(rng);
      if (i % 41 == 7 && c >= 2) x = std::numeric_limits<double>::quiet_NaN();
      v[static_cast<std::size_t>(i) * width + c] = x;
    }
  return v;
}

struct mode {
  const char* name;
  std::vector<double> probabilities;
  long members_per_replicate;
  std::size_t quantile_budget;
};

// 5 replicates of 3,000 members: replicate boundaries fall inside blocks and rank boundaries.
constexpr long members = 15000;
const mode modes[] = {
    {"moments", {}, 0, unlimited},
    {"exact_quantiles", {0.05, 0.5, 0.95}, 0, unlimited},
    {"sketch", {0.05, 0.5, 0.95}, 0, 1024},
    {"replicates_with_sketch", {0.1, 0.9}, 3000, 1024},
    {"replicates_exact", {0.5}, 3000, unlimited},
};

ensemble_statistics make(const mode& m) {
  return ensemble_statistics(members, width, m.probabilities, m.members_per_replicate, m.quantile_budget, 64);
}

void add(ensemble_statistics& s, const std::vector<double>& v, long first, long end) {
  if (end > first) s.add_range(first, end - first, v.data() + static_cast<std::size_t>(first) * width);
}

// Bitwise equality of two summaries (NaN compared by bit pattern).
void expect_identical(const ensemble_summary& a, const ensemble_summary& b) {
  auto same = [](const std::vector<double>& x, const std::vector<double>& y, const char* what) {
    ASSERT_EQ(x.size(), y.size()) << what;
    for (std::size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(x[i]), std::bit_cast<std::uint64_t>(y[i])) << what << "[" << i << "]";
  };
  EXPECT_EQ(a.count, b.count);
  same(a.mean, b.mean, "mean");
  same(a.std, b.std, "std");
  same(a.min, b.min, "min");
  same(a.max, b.max, "max");
  same(a.mean_stderr, b.mean_stderr, "mean_stderr");
  ASSERT_EQ(a.quantiles.size(), b.quantiles.size());
  for (std::size_t q = 0; q < a.quantiles.size(); ++q) same(a.quantiles[q], b.quantiles[q], "quantile");
  EXPECT_EQ(a.quantiles_exact, b.quantiles_exact);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.quantile_rank_error), std::bit_cast<std::uint64_t>(b.quantile_rank_error));
}

class StatisticsState : public ::testing::TestWithParam<mode> {};

TEST_P(StatisticsState, RestoredAtAnyMemberAndContinuedGivesTheUninterruptedSummaryBitwise) {
  const std::vector<double> v = make_values(members, 11);
  ensemble_statistics whole = make(GetParam());
  add(whole, v, 0, members);
  const ensemble_summary expected = whole.finish();

  // Stops inside a block, at a block boundary, inside a replicate and near the end.
  for (const long stop : {1L, 777L, statistics_block, statistics_block + 1, 9001L, members - 1}) {
    ensemble_statistics before = make(GetParam());
    add(before, v, 0, stop);
    const std::string saved = before.serialize();
    ensemble_statistics resumed = make(GetParam());
    resumed.merge_serialized(saved);
    EXPECT_EQ(resumed.members_added(), stop);
    EXPECT_EQ(resumed.serialize(), saved) << "a restored state saves to the same bytes";
    add(resumed, v, stop, members);
    expect_identical(resumed.finish(), expected);
  }
}

TEST_P(StatisticsState, WholeBlockRangesMergedInAnyOrderGiveTheSingleProcessSummaryBitwise) {
  const std::vector<double> v = make_values(members, 12);
  ensemble_statistics whole = make(GetParam());
  add(whole, v, 0, members);
  const ensemble_summary expected = whole.finish();

  // Ranks own whole blocks: [0, 1), [1, 3), [3, 4) blocks of 4096 members (the last one short).
  const long cuts[] = {0, statistics_block, 3 * statistics_block, members};
  std::vector<std::string> states;
  for (int r = 0; r < 3; ++r) {
    ensemble_statistics rank = make(GetParam());
    add(rank, v, cuts[r], cuts[r + 1]);
    states.push_back(rank.serialize());
  }
  for (const auto& order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1}, std::vector<int>{1, 2, 0}}) {
    ensemble_statistics root = make(GetParam());
    for (const int r : order) root.merge_serialized(states[static_cast<std::size_t>(r)]);
    expect_identical(root.finish(), expected);
  }
  // The root may also be a rank that added its own blocks.
  ensemble_statistics rank0 = make(GetParam());
  add(rank0, v, cuts[0], cuts[1]);
  rank0.merge_serialized(states[2]);
  rank0.merge_serialized(states[1]);
  expect_identical(rank0.finish(), expected);
}

TEST_P(StatisticsState, RestoresWithoutTheStudyFromTheConfigurationItCarries) {
  const std::vector<double> v = make_values(members, 16);
  ensemble_statistics before = make(GetParam());
  add(before, v, 0, 5000);
  const std::string saved = before.serialize();

  const ensemble_statistics::configuration c = ensemble_statistics::configuration_of(saved);
  ensemble_statistics restored(c.members_total, c.width, c.probabilities, c.members_per_replicate,
                               c.exact ? unlimited : 0, c.sketch_items, c.keeps_member_values_only(), c.thresholds);
  restored.merge_serialized(saved);

  EXPECT_EQ(restored.serialize(), saved);
  add(restored, v, 5000, members);
  add(before, v, 5000, members);
  expect_identical(restored.finish(), before.finish());
}

INSTANTIATE_TEST_SUITE_P(Modes, StatisticsState, ::testing::ValuesIn(modes),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(StatisticsStateRefusal, OverlappingStatesAreRefusedAndLeaveTheObjectUnchanged) {
  const std::vector<double> v = make_values(members, 13);
  ensemble_statistics a = make(modes[1]);
  add(a, v, 0, 2 * statistics_block);
  ensemble_statistics b = make(modes[1]);
  add(b, v, statistics_block, 2 * statistics_block + 10);  // overlaps a's second block
  const std::string before = a.serialize();
  EXPECT_THROW(a.merge_serialized(b.serialize()), state_error);
  EXPECT_EQ(a.serialize(), before);
  EXPECT_THROW(a.merge_serialized(before), state_error) << "a state merged into itself";
}

TEST(StatisticsStateRefusal, AStateOfOtherStatisticsIsRefusedWithAReason) {
  const std::vector<double> v = make_values(members, 14);
  ensemble_statistics a = make(modes[2]);
  add(a, v, 0, 100);
  ensemble_statistics other = make(modes[1]);
  try {
    other.merge_serialized(a.serialize());
    FAIL() << "a sketch-mode state merged into an exact-mode object";
  } catch (const state_error& e) {
    EXPECT_NE(std::string(e.what()).find("made for other statistics"), std::string::npos) << e.what();
  }
}

TEST(StatisticsStateRefusal, EveryTruncationAndManySingleByteDamagesAreRefusedOrHarmless) {
  const std::vector<double> v = make_values(members, 15);
  ensemble_statistics a = make(modes[3]);
  add(a, v, 0, 5000);  // one full block and one in progress, replicates in both
  const std::string saved = a.serialize();
  for (std::size_t length = 0; length < saved.size(); length += 1 + length / 16) {
    ensemble_statistics fresh = make(modes[3]);
    EXPECT_THROW(fresh.merge_serialized(std::string_view(saved).substr(0, length)), state_error) << "length " << length;
    EXPECT_EQ(fresh.members_added(), 0);
  }
  // A flipped bit either is refused or yields some state a fresh object can carry to the end without
  // failing (the checkpoint file's checksum is what catches damage; this is the defence behind it).
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = saved;
    const std::size_t at = rng() % damaged.size();
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << (rng() % 8)));
    ensemble_statistics fresh = make(modes[3]);
    try {
      fresh.merge_serialized(damaged);
    } catch (const state_error&) {
      continue;
    }
    add(fresh, v, fresh.members_added(), members);
    (void)fresh.finish();
  }
}

}  // namespace
