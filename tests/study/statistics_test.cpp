// Ensemble statistics (study/statistics.hpp): moments against a two-pass long double computation on the
// stored values, exact quantiles against numpy's "linear" (Hyndman & Fan type 7) formula applied to the
// sorted values, bitwise independence of chunking and block order, NaN handling, both standard errors,
// and the stated rank-error bound of the quantile sketch checked against the true ranks.
#include "lockstep/study/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using lockstep::study::ensemble_statistics;
using lockstep::study::ensemble_summary;
using lockstep::study::statistics_block;

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t unlimited_budget = std::numeric_limits<std::size_t>::max();

// Member-major values [member][W], one distribution per slice, NaN where a member "failed".
struct ensemble_values {
  long members = 0;
  std::size_t width = 0;
  std::vector<double> data;
  double at(long i, std::size_t c) const { return data[static_cast<std::size_t>(i) * width + c]; }
};

enum class shape { normal, offset_normal, uniform, exponential, lognormal, ties, increasing, all_nan, single };

ensemble_values make_values(long members, const std::vector<shape>& shapes, std::uint64_t seed, bool failures) {
  ensemble_values v{members, shapes.size(), std::vector<double>(static_cast<std::size_t>(members) * shapes.size())};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-5.0, 5.0);
  std::exponential_distribution<double> exponential(2.0);
  std::uniform_int_distribution<int> digit(0, 9);
  for (long i = 0; i < members; ++i) {
    for (std::size_t c = 0; c < shapes.size(); ++c) {
      double x = 0.0;
      switch (shapes[c]) {
        case shape::normal: x = normal(rng); break;
        case shape::offset_normal: x = 1.0e3 + normal(rng); break;
        case shape::uniform: x = uniform(rng); break;
        case shape::exponential: x = exponential(rng); break;
        case shape::lognormal: x = std::exp(2.0 * normal(rng)); break;
        case shape::ties: x = digit(rng); break;
        case shape::increasing: x = 1.0e-3 * static_cast<double>(i); break;
        case shape::all_nan: x = nan_value; break;
        case shape::single: x = i == members / 3 ? 42.5 : nan_value; break;
      }
      // A failed member has NaN from some slice on (the slices stand for later save times).
      if (failures && i % 37 == 5 && c >= shapes.size() / 2) x = nan_value;
      v.data[static_cast<std::size_t>(i) * v.width + c] = x;
    }
  }
  return v;
}

std::vector<double> slice_values(const ensemble_values& v, std::size_t c) {
  std::vector<double> s;
  for (long i = 0; i < v.members; ++i)
    if (!std::isnan(v.at(i, c))) s.push_back(v.at(i, c));
  return s;
}

// Feeds members in consecutive chunks of `chunk` members, in member order.
void feed_in_chunks(ensemble_statistics& stats, const ensemble_values& v, long chunk) {
  for (long first = 0; first < v.members; first += chunk)
    stats.add_range(first, std::min(chunk, v.members - first), v.data.data() + static_cast<std::size_t>(first) * v.width);
}

// Feeds every block's members in order but visits the blocks round-robin, `chunk` members at a time,
// so that all blocks are in progress at once (several workers finishing chunks in turn).
void feed_round_robin(ensemble_statistics& stats, const ensemble_values& v, long chunk) {
  const long blocks = (v.members + statistics_block - 1) / statistics_block;
  for (long offset = 0; offset < statistics_block; offset += chunk)
    for (long b = 0; b < blocks; ++b) {
      const long first = b * statistics_block + offset;
      const long end = std::min({first + chunk, (b + 1) * statistics_block, v.members});
      if (first < end) stats.add_range(first, end - first, v.data.data() + static_cast<std::size_t>(first) * v.width);
    }
}

// Whole blocks, last block first.
void feed_blocks_reversed(ensemble_statistics& stats, const ensemble_values& v) {
  const long blocks = (v.members + statistics_block - 1) / statistics_block;
  for (long b = blocks - 1; b >= 0; --b) {
    const long first = b * statistics_block;
    const long end = std::min(first + statistics_block, v.members);
    stats.add_range(first, end - first, v.data.data() + static_cast<std::size_t>(first) * v.width);
  }
}

// Random chunks of random blocks, each block's members still in order.
void feed_shuffled(ensemble_statistics& stats, const ensemble_values& v, std::uint64_t seed) {
  const long blocks = (v.members + statistics_block - 1) / statistics_block;
  std::vector<long> next(static_cast<std::size_t>(blocks));
  std::vector<long> open;
  for (long b = 0; b < blocks; ++b) {
    next[static_cast<std::size_t>(b)] = b * statistics_block;
    open.push_back(b);
  }
  std::mt19937_64 rng(seed);
  while (!open.empty()) {
    const std::size_t k = std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng);
    const long b = open[k];
    const long end_of_block = std::min((b + 1) * statistics_block, v.members);
    long& first = next[static_cast<std::size_t>(b)];
    const long count = std::min(std::uniform_int_distribution<long>(1, 1500)(rng), end_of_block - first);
    stats.add_range(first, count, v.data.data() + static_cast<std::size_t>(first) * v.width);
    first += count;
    if (first == end_of_block) open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

void expect_bitwise_equal(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], b[i])) << what << "[" << i << "]: " << a[i] << " vs " << b[i];
}

void expect_bitwise_equal(const ensemble_summary& a, const ensemble_summary& b, const std::string& how) {
  EXPECT_EQ(a.count, b.count) << how;
  expect_bitwise_equal(a.mean, b.mean, how + " mean");
  expect_bitwise_equal(a.std, b.std, how + " std");
  expect_bitwise_equal(a.min, b.min, how + " min");
  expect_bitwise_equal(a.max, b.max, how + " max");
  expect_bitwise_equal(a.mean_stderr, b.mean_stderr, how + " mean_stderr");
  ASSERT_EQ(a.quantiles.size(), b.quantiles.size());
  for (std::size_t q = 0; q < a.quantiles.size(); ++q) expect_bitwise_equal(a.quantiles[q], b.quantiles[q], how + " quantile");
  EXPECT_EQ(a.quantiles_exact, b.quantiles_exact);
  EXPECT_TRUE(same_bits(a.quantile_rank_error, b.quantile_rank_error)) << how;
}

// numpy.quantile(x, p, method="linear") on the sorted values: virtual index (n - 1) p, then numpy's
// _lerp with its t >= 0.5 branch.
double numpy_linear_quantile(const std::vector<double>& sorted, double p) {
  const std::size_t n = sorted.size();
  const double h = static_cast<double>(n - 1) * p;
  const double lower = std::floor(h);
  const std::size_t j = static_cast<std::size_t>(lower);
  const double t = h - lower;
  const double a = sorted[j], b = sorted[std::min(j + 1, n - 1)];
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

// Distance, in sorted positions, between the target h = p (n - 1) and the nearest position that value
// v occupies among the sorted values; v must be one of them.
double rank_distance(const std::vector<double>& sorted, double v, double p) {
  const double h = p * static_cast<double>(sorted.size() - 1);
  const auto below = std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
  const auto through = std::upper_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
  EXPECT_LT(below, through) << v << " is not one of the values";
  const double first = static_cast<double>(below), last = static_cast<double>(through - 1);
  if (h < first) return first - h;
  if (h > last) return h - last;
  return 0.0;
}

}  // namespace

TEST(FixedPairwiseTree, CombinesInTheSameShapeWhateverTheLeafOrder) {
  // Arrange: 5 leaves; the shape must be ((0,1),(2,3)) with 4 joining at the top.
  auto combine = [](std::string l, std::string r, int, long) { return "(" + l + "," + r + ")"; };
  const std::vector<std::vector<long>> orders = {{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 0, 3, 1}, {1, 0, 4, 2, 3}};
  for (const auto& order : orders) {
    lockstep::study::statistics_detail::fixed_pairwise_tree<std::string> tree(5);
    // Act
    for (const long leaf : order) tree.insert_leaf(leaf, std::to_string(leaf), combine);
    // Assert
    ASSERT_TRUE(tree.complete());
    EXPECT_EQ(tree.root(), "(((0,1),(2,3)),4)");
  }
}

TEST(FixedPairwiseTree, KeepsOneNodePerLevelWhenLeavesArriveInOrder) {
  auto combine = [](long l, long r, int, long) { return l + r; };
  lockstep::study::statistics_detail::fixed_pairwise_tree<long> tree(245);
  std::size_t most_pending = 0;
  for (long leaf = 0; leaf < 245; ++leaf) {
    tree.insert_leaf(leaf, 1, combine);
    most_pending = std::max(most_pending, tree.pending_nodes());
  }
  EXPECT_TRUE(tree.complete());
  EXPECT_EQ(tree.root(), 245);
  EXPECT_LE(most_pending, 9u);  // ceil(log2 245) + 1
}

TEST(EnsembleStatistics, MomentsMatchATwoPassLongDoubleComputation) {
  // Arrange: 20011 members (4 full blocks and a partial one), failures in half the slices.
  const std::vector<shape> shapes = {shape::normal, shape::offset_normal, shape::uniform,
                                     shape::exponential, shape::lognormal, shape::ties};
  const ensemble_values v = make_values(20011, shapes, 11, true);
  ensemble_statistics stats(v.members, v.width, {}, 0, unlimited_budget);
  // Act
  feed_in_chunks(stats, v, 1000);
  const ensemble_summary r = stats.finish();
  // Assert
  for (std::size_t c = 0; c < v.width; ++c) {
    const std::vector<double> x = slice_values(v, c);
    long double sum = 0.0L;
    for (const double xi : x) sum += xi;
    const long double mean = sum / static_cast<long double>(x.size());
    long double squares = 0.0L;
    for (const double xi : x) squares += (xi - mean) * (xi - mean);
    const double std_dev = static_cast<double>(std::sqrt(squares / static_cast<long double>(x.size() - 1)));
    EXPECT_EQ(r.count[c], static_cast<std::int64_t>(x.size()));
    // Relative to the spread as well as the size of the mean: no summation order does better than
    // eps |mean| on the offset slice.
    EXPECT_NEAR(r.mean[c], static_cast<double>(mean), 1e-14 * (std::fabs(static_cast<double>(mean)) + std_dev)) << "slice " << c;
    // Welford's M2 loses about eps |mean| / std relative (5.5e-15 on the offset slice, mean / std = 1000).
    EXPECT_NEAR(r.std[c], std_dev, 2e-14 * std_dev) << "slice " << c;
    EXPECT_EQ(r.min[c], *std::min_element(x.begin(), x.end()));
    EXPECT_EQ(r.max[c], *std::max_element(x.begin(), x.end()));
  }
}

TEST(EnsembleStatistics, ExactQuantilesEqualNumpysLinearMethodBitForBit) {
  // Arrange: values with ties and NaN; probabilities unsorted, with repeats and both ends.
  const std::vector<shape> shapes = {shape::normal, shape::ties, shape::lognormal, shape::exponential};
  const ensemble_values v = make_values(10007, shapes, 12, true);
  const std::vector<double> p = {0.95, 0.05, 0.5, 0.0, 1.0, 1.0 / 3.0, 0.25, 0.999, 0.5};
  ensemble_statistics stats(v.members, v.width, p, 0, unlimited_budget);
  ASSERT_TRUE(stats.quantiles_exact());
  // Act
  feed_in_chunks(stats, v, 777);
  const ensemble_summary r = stats.finish();
  // Assert
  EXPECT_TRUE(r.quantiles_exact);
  EXPECT_EQ(r.quantile_rank_error, 0.0);
  for (std::size_t c = 0; c < v.width; ++c) {
    std::vector<double> x = slice_values(v, c);
    std::sort(x.begin(), x.end());
    for (std::size_t q = 0; q < p.size(); ++q)
      EXPECT_TRUE(same_bits(r.quantiles[q][c], numpy_linear_quantile(x, p[q])))
          << "slice " << c << " p " << p[q] << ": " << r.quantiles[q][c] << " vs " << numpy_linear_quantile(x, p[q]);
  }
}

TEST(EnsembleStatistics, QuantilesAreExactOnlyWhenTheValuesFitTheBudget) {
  const long members = 10000;
  const std::size_t width = 3, needed = static_cast<std::size_t>(members) * width * sizeof(double);
  EXPECT_TRUE(ensemble_statistics(members, width, {0.5}, 0, needed).quantiles_exact());
  EXPECT_FALSE(ensemble_statistics(members, width, {0.5}, 0, needed - 1).quantiles_exact());
}

TEST(EnsembleStatistics, ResultsAreBitwiseIdenticalForAnyChunkingAndBlockOrder) {
  // Arrange: 30000 members = 7 full blocks and one of 1328; QMC replicates of 3000 members, so
  // replicate boundaries fall inside blocks; exact quantiles and a small sketch that compacts.
  const std::vector<shape> shapes = {shape::normal, shape::offset_normal, shape::exponential, shape::ties};
  const ensemble_values v = make_values(30000, shapes, 13, true);
  const std::vector<double> p = {0.05, 0.5, 0.95};
  for (const std::size_t budget : {unlimited_budget, std::size_t{0}}) {
    auto make = [&] { return ensemble_statistics(v.members, v.width, p, 3000, budget, 64); };
    ensemble_statistics reference = make();
    feed_in_chunks(reference, v, v.members);
    const ensemble_summary expected = reference.finish();
    ASSERT_EQ(expected.quantiles_exact, budget != 0);
    // Act and assert
    for (const long chunk : {1L, 7L, 4096L, 5000L}) {
      ensemble_statistics s = make();
      feed_in_chunks(s, v, chunk);
      expect_bitwise_equal(s.finish(), expected, "chunks of " + std::to_string(chunk));
      ensemble_statistics interleaved = make();
      feed_round_robin(interleaved, v, chunk);
      expect_bitwise_equal(interleaved.finish(), expected, "blocks round-robin in chunks of " + std::to_string(chunk));
    }
    ensemble_statistics reversed = make();
    feed_blocks_reversed(reversed, v);
    expect_bitwise_equal(reversed.finish(), expected, "blocks in reverse order");
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      ensemble_statistics shuffled = make();
      feed_shuffled(shuffled, v, seed);
      expect_bitwise_equal(shuffled.finish(), expected, "shuffled blocks, seed " + std::to_string(seed));
    }
  }
}

TEST(EnsembleStatistics, CountsTheValuesAboveEachThresholdWhateverTheOrder) {
  // Arrange: 30000 members in 8 blocks, NaN in one slice (failed members), ties at the threshold in
  // another (a value equal to the threshold is not above it), and a slice without a threshold.
  const std::vector<shape> shapes = {shape::normal, shape::ties, shape::lognormal, shape::normal};
  ensemble_values v = make_values(30000, shapes, 29, true);
  for (long i = 0; i < v.members; i += 7) v.data[static_cast<std::size_t>(i) * v.width + 3] = std::nan("");
  const std::vector<double> thresholds = {0.5, v.at(17, 1), std::nan(""), -0.25};
  std::vector<std::int64_t> brute(v.width, 0), entered(v.width, 0);
  for (long i = 0; i < v.members; ++i)
    for (std::size_t c = 0; c < v.width; ++c) {
      entered[c] += !std::isnan(v.at(i, c));
      brute[c] += v.at(i, c) > thresholds[c];
    }
  auto make = [&] { return ensemble_statistics(v.members, v.width, {}, 0, 0, lockstep::study::default_sketch_items, false, thresholds); };

  // Act
  ensemble_statistics in_order = make();
  feed_in_chunks(in_order, v, 1000);
  ensemble_statistics shuffled = make();
  feed_shuffled(shuffled, v, 5);
  // Half the blocks here, half in a second object whose saved state is merged in (a checkpoint, a rank).
  ensemble_statistics first = make();
  ensemble_statistics second = make();
  for (long b = 0; b * statistics_block < v.members; ++b) {
    const long from = b * statistics_block, count = std::min(statistics_block, v.members - from);
    (b % 2 ? second : first).add_range(from, count, v.data.data() + static_cast<std::size_t>(from) * v.width);
  }
  first.merge_serialized(second.serialize());

  // Assert
  const ensemble_summary a = in_order.finish(), b = shuffled.finish(), c = first.finish();
  for (std::size_t s = 0; s < v.width; ++s) {
    EXPECT_EQ(a.above[s], brute[s]) << "slice " << s;
    EXPECT_EQ(a.count[s], entered[s]) << "slice " << s;
    EXPECT_EQ(b.above[s], brute[s]) << "slice " << s;
    EXPECT_EQ(c.above[s], brute[s]) << "slice " << s;
  }
  EXPECT_EQ(a.above[2], 0) << "no threshold, nothing counted";
  EXPECT_GT(a.above[1], 0);
  // A state made for other thresholds is refused.
  ensemble_statistics other(v.members, v.width, {}, 0, 0, lockstep::study::default_sketch_items, false,
                            {0.5, 0.0, 0.0, -0.25});
  EXPECT_THROW(other.merge_serialized(second.serialize()), lockstep::study::state_error);
}

TEST(EnsembleStatistics, TheReplicatesCountTheirOwnValuesAboveTheThresholds) {
  // Arrange: 30000 members as 12 replicates of 2500 (boundaries inside blocks), NaN in one slice, a
  // slice without a threshold, and a slice whose threshold no value reaches (every replicate agrees).
  const std::vector<shape> shapes = {shape::normal, shape::lognormal, shape::uniform, shape::normal};
  ensemble_values v = make_values(30000, shapes, 31, true);
  for (long i = 0; i < v.members; i += 5) v.data[static_cast<std::size_t>(i) * v.width + 3] = std::nan("");
  const std::vector<double> thresholds = {0.25, std::nan(""), 1e9, 0.0};
  const long per_replicate = 2500, replicates = v.members / per_replicate;
  auto make = [&] {
    return ensemble_statistics(v.members, v.width, {}, per_replicate, 0, lockstep::study::default_sketch_items, false,
                               thresholds);
  };

  // Act: in order; and half the blocks in a second object whose saved state is merged in.
  ensemble_statistics in_order = make();
  feed_in_chunks(in_order, v, 777);
  ensemble_statistics first = make(), second = make();
  for (long b = 0; b * statistics_block < v.members; ++b) {
    const long from = b * statistics_block, count = std::min(statistics_block, v.members - from);
    (b % 2 ? second : first).add_range(from, count, v.data.data() + static_cast<std::size_t>(from) * v.width);
  }
  first.merge_serialized(second.serialize());
  const ensemble_summary a = in_order.finish(), c = first.finish();

  // Assert: s_R / sqrt(R) of the replicates' fractions above, counted here member by member.
  for (std::size_t s = 0; s < v.width; ++s) {
    std::vector<double> fractions;
    for (long r = 0; r < replicates; ++r) {
      long above = 0, entered = 0;
      for (long i = r * per_replicate; i < (r + 1) * per_replicate; ++i) {
        entered += !std::isnan(v.at(i, s));
        above += v.at(i, s) > thresholds[s];
      }
      fractions.push_back(static_cast<double>(above) / static_cast<double>(entered));
    }
    double mean = 0.0, squares = 0.0;
    for (const double f : fractions) mean += f / static_cast<double>(replicates);
    for (const double f : fractions) squares += (f - mean) * (f - mean);
    const double expected = std::sqrt(squares / static_cast<double>(replicates - 1)) / std::sqrt(static_cast<double>(replicates));
    if (std::isnan(thresholds[s])) {
      EXPECT_TRUE(std::isnan(a.above_stderr[s])) << "no threshold, slice " << s;
      EXPECT_EQ(a.above_replicates[s], 0);
    } else {
      EXPECT_NEAR(a.above_stderr[s], expected, 1e-15) << "slice " << s;
      EXPECT_EQ(a.above_replicates[s], replicates);
    }
    EXPECT_EQ(std::memcmp(&a.above_stderr[s], &c.above_stderr[s], sizeof(double)), 0) << "merged state, slice " << s;
  }
  EXPECT_GT(a.above_stderr[0], 0.0);
  EXPECT_EQ(a.above_stderr[2], 0.0) << "no value above: every replicate's fraction is 0";
}

TEST(EnsembleStatistics, SkipsNanAndGivesNanWhereAStatisticIsUndefined) {
  // Arrange: an all-NaN slice, a slice with one value, a slice with a failure pattern.
  const std::vector<shape> shapes = {shape::all_nan, shape::single, shape::normal, shape::uniform};
  const ensemble_values v = make_values(9000, shapes, 14, true);
  for (const std::size_t budget : {unlimited_budget, std::size_t{0}}) {
    for (const long replicate : {0L, 900L}) {
      ensemble_statistics stats(v.members, v.width, {0.0, 0.5, 1.0}, replicate, budget);
      // Act
      feed_in_chunks(stats, v, 333);
      const ensemble_summary r = stats.finish();
      // Assert: all NaN
      EXPECT_EQ(r.count[0], 0);
      for (const double x : {r.mean[0], r.std[0], r.min[0], r.max[0], r.mean_stderr[0], r.quantiles[0][0], r.quantiles[1][0], r.quantiles[2][0]})
        EXPECT_TRUE(std::isnan(x));
      // one value: the value, but no spread
      EXPECT_EQ(r.count[1], 1);
      EXPECT_EQ(r.mean[1], 42.5);
      EXPECT_EQ(r.min[1], 42.5);
      EXPECT_EQ(r.max[1], 42.5);
      EXPECT_TRUE(std::isnan(r.std[1]));
      EXPECT_TRUE(std::isnan(r.mean_stderr[1]));
      for (std::size_t q = 0; q < 3; ++q) EXPECT_EQ(r.quantiles[q][1], 42.5);
      // failures: counted out, and min/median/max taken over the values that are there
      for (std::size_t c = 2; c < 4; ++c) {
        std::vector<double> x = slice_values(v, c);
        std::sort(x.begin(), x.end());
        EXPECT_EQ(r.count[c], static_cast<std::int64_t>(x.size()));
        EXPECT_LT(r.count[c], v.members);
        EXPECT_EQ(r.quantiles[0][c], x.front());
        EXPECT_EQ(r.quantiles[2][c], x.back());
        EXPECT_FALSE(std::isnan(r.quantiles[1][c]));
        EXPECT_FALSE(std::isnan(r.mean_stderr[c]));
      }
    }
  }
}

TEST(EnsembleStatistics, ReplicateStderrEqualsTheDirectFormula) {
  // Replicates of 2500 (boundaries inside blocks), 100 (many replicates per block) and 8192 (two
  // whole blocks each), with failures.
  struct replicate_case {
    long members, per_replicate;
  };
  const std::vector<shape> shapes = {shape::normal, shape::offset_normal, shape::exponential, shape::uniform};
  for (const replicate_case rc : {replicate_case{25000, 2500}, replicate_case{12000, 100}, replicate_case{5 * 8192, 8192}}) {
    // Arrange
    const ensemble_values v = make_values(rc.members, shapes, 15, true);
    ensemble_statistics stats(v.members, v.width, {}, rc.per_replicate, unlimited_budget);
    // Act
    feed_blocks_reversed(stats, v);
    const ensemble_summary r = stats.finish();
    // Assert: std of the replicate means / sqrt(R), in long double
    const long replicates = rc.members / rc.per_replicate;
    for (std::size_t c = 0; c < v.width; ++c) {
      std::vector<long double> means;
      for (long k = 0; k < replicates; ++k) {
        long double sum = 0.0L;
        long n = 0;
        for (long i = k * rc.per_replicate; i < (k + 1) * rc.per_replicate; ++i)
          if (!std::isnan(v.at(i, c))) {
            sum += v.at(i, c);
            ++n;
          }
        means.push_back(sum / static_cast<long double>(n));
      }
      long double mean_of_means = 0.0L;
      for (const long double m : means) mean_of_means += m;
      mean_of_means /= static_cast<long double>(replicates);
      long double squares = 0.0L;
      for (const long double m : means) squares += (m - mean_of_means) * (m - mean_of_means);
      const double expected = static_cast<double>(std::sqrt(squares / static_cast<long double>(replicates - 1)) /
                                                  std::sqrt(static_cast<long double>(replicates)));
      // Each replicate mean carries rounding of order eps |mean|, which the differences between replicate
      // means (of order stderr sqrt(R)) amplify: the offset slice (mean 1000) loses digits that way.
      const double tolerance = 1e-12 * expected + 4.0 * std::numeric_limits<double>::epsilon() * std::fabs(r.mean[c]);
      EXPECT_NEAR(r.mean_stderr[c], expected, tolerance) << "replicates of " << rc.per_replicate << ", slice " << c;
    }
  }
}

TEST(EnsembleStatistics, RandomSamplingStderrIsStdOverSqrtCount) {
  const std::vector<shape> shapes = {shape::normal, shape::exponential, shape::single};
  const ensemble_values v = make_values(7000, shapes, 16, true);
  ensemble_statistics stats(v.members, v.width, {}, 0, unlimited_budget);
  feed_in_chunks(stats, v, 4096);
  const ensemble_summary r = stats.finish();
  for (std::size_t c = 0; c < 2; ++c) EXPECT_EQ(r.mean_stderr[c], r.std[c] / std::sqrt(static_cast<double>(r.count[c])));
  EXPECT_TRUE(std::isnan(r.mean_stderr[2]));
}

TEST(EnsembleStatistics, SketchQuantilesOfAMillionMembersLieWithinTheStatedRankError) {
  // Arrange: 10^6 members, a budget of 0 bytes forces the sketch with its default size.
  const std::vector<shape> shapes = {shape::normal, shape::lognormal, shape::ties, shape::increasing, shape::exponential};
  const ensemble_values v = make_values(1000000, shapes, 17, true);
  const std::vector<double> p = {0.0, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0};
  ensemble_statistics stats(v.members, v.width, p, 0, 0);
  ASSERT_FALSE(stats.quantiles_exact());
  // Act
  feed_in_chunks(stats, v, 65536);
  const ensemble_summary r = stats.finish();
  // Assert: the bound holds, is below the 0.5% the default promises, and below the a priori bound.
  EXPECT_FALSE(r.quantiles_exact);
  EXPECT_GT(r.quantile_rank_error, 0.0);
  EXPECT_LT(r.quantile_rank_error, 0.005);
  EXPECT_LE(r.quantile_rank_error, ensemble_statistics::sketch_rank_error_bound(v.members, lockstep::study::default_sketch_items));
  EXPECT_LT(ensemble_statistics::sketch_rank_error_bound(v.members, lockstep::study::default_sketch_items), 0.005);
  double worst = 0.0;
  for (std::size_t c = 0; c < v.width; ++c) {
    std::vector<double> x = slice_values(v, c);
    std::sort(x.begin(), x.end());
    const double n = static_cast<double>(x.size());
    for (std::size_t q = 0; q < p.size(); ++q) {
      const double d = rank_distance(x, r.quantiles[q][c], p[q]) / n;
      EXPECT_LE(d, r.quantile_rank_error) << "slice " << c << " p " << p[q];
      worst = std::max(worst, d);
    }
  }
  std::cout << "sketch, 10^6 members: stated rank error " << r.quantile_rank_error << ", largest observed " << worst << "\n";
}

TEST(EnsembleStatistics, SketchBoundHoldsWhenTheSketchIsTiny) {
  // Arrange: k = 16 and 50 items per slice and node: compactions at every level with errors of
  // several percent, where a wrong bound would show.
  const std::vector<shape> shapes = {shape::normal, shape::ties, shape::increasing, shape::lognormal};
  const ensemble_values v = make_values(200000, shapes, 18, true);
  std::vector<double> p;
  for (int i = 0; i <= 100; ++i) p.push_back(i / 100.0);
  for (const std::size_t k : {std::size_t{16}, std::size_t{50}}) {
    ensemble_statistics stats(v.members, v.width, p, 0, 0, k);
    // Act
    feed_shuffled(stats, v, 5);
    const ensemble_summary r = stats.finish();
    // Assert
    EXPECT_LE(r.quantile_rank_error, ensemble_statistics::sketch_rank_error_bound(v.members, k));
    double worst = 0.0;
    for (std::size_t c = 0; c < v.width; ++c) {
      std::vector<double> x = slice_values(v, c);
      std::sort(x.begin(), x.end());
      const double n = static_cast<double>(x.size());
      for (std::size_t q = 0; q < p.size(); ++q) {
        const double d = rank_distance(x, r.quantiles[q][c], p[q]) / n;
        EXPECT_LE(d, r.quantile_rank_error) << "k " << k << " slice " << c << " p " << p[q];
        worst = std::max(worst, d);
      }
    }
    std::cout << "sketch k = " << k << ": stated rank error " << r.quantile_rank_error << ", largest observed " << worst << "\n";
  }
}

TEST(EnsembleStatistics, OutOfOrderMemberWithinABlockThrows) {
  ensemble_statistics stats(10000, 1, {0.5}, 0, unlimited_budget);
  const double x = 1.0;
  stats.add(0, &x);
  stats.add(1, &x);
  EXPECT_THROW(stats.add(3, &x), std::logic_error);  // 2 skipped
  EXPECT_THROW(stats.add(1, &x), std::logic_error);  // again
  stats.add(4096, &x);                               // another block may start any time
  stats.add(2, &x);
  EXPECT_THROW(stats.add(10000, &x), std::out_of_range);
}

TEST(EnsembleStatistics, MemberOfAFinishedBlockThrows) {
  ensemble_statistics stats(5000, 1, {}, 0, 0);
  const std::vector<double> x(4096, 1.0);
  stats.add_range(0, 4096, x.data());
  EXPECT_THROW(stats.add(17, x.data()), std::logic_error);
}

TEST(EnsembleStatistics, FinishBeforeEveryMemberArrivedThrows) {
  ensemble_statistics stats(5000, 1, {0.5}, 0, unlimited_budget);
  const std::vector<double> x(5000, 1.0);
  stats.add_range(0, 4999, x.data());
  EXPECT_THROW(stats.finish(), std::logic_error);
  stats.add(4999, x.data());
  EXPECT_EQ(stats.finish().count[0], 5000);
}

TEST(EnsembleStatistics, RejectsInvalidArguments) {
  EXPECT_THROW(ensemble_statistics(0, 1, {}, 0, 0), std::invalid_argument);
  EXPECT_THROW(ensemble_statistics(10, 0, {}, 0, 0), std::invalid_argument);
  EXPECT_THROW(ensemble_statistics(10, 1, {1.5}, 0, 0), std::invalid_argument);
  EXPECT_THROW(ensemble_statistics(10, 1, {nan_value}, 0, 0), std::invalid_argument);
  EXPECT_THROW(ensemble_statistics(10, 1, {}, 3, 0), std::invalid_argument);  // 3 does not divide 10
}
