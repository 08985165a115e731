// Tests of lockstep/study/samplers.hpp: member numbering, order independence, the Sobol sequence
// against Boost and scipy's printout, the randomizations' structure (nets, strata), distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/random/sobol.hpp>

#include "lockstep/study/samplers.hpp"

namespace {

using namespace lockstep::study;

distribution uniform(double lower, double upper) { return {distribution_kind::uniform, lower, upper, {}}; }
distribution normal(double mean, double std) { return {distribution_kind::normal, mean, std, {}}; }
distribution lognormal(double mu, double sigma) { return {distribution_kind::lognormal, mu, sigma, {}}; }
distribution grid(std::vector<double> values) { return {distribution_kind::grid, 0.0, 0.0, std::move(values)}; }

sampling_plan make_plan(sampler_kind sampler, std::uint64_t seed, long members, int replicates,
                        const std::vector<distribution>& dists) {
  sampling_plan plan;
  plan.sampler = sampler;
  plan.seed = seed;
  plan.members = members;
  plan.replicates = replicates;
  for (std::size_t k = 0; k < dists.size(); ++k) {
    std::string name = "x";  // not "x" + to_string(k): GCC 12 false -Wrestrict (GCC bug 105329)
    name += std::to_string(k);
    plan.vary.push_back({name, true, static_cast<int>(k), dists[k]});
  }
  return plan;
}

// All members' values, member-major: out[i * dims + k], computed in the given order.
std::vector<double> samples_in_order(const sampling_plan& plan, const std::vector<long>& order) {
  const std::size_t dims = plan.vary.size();
  std::vector<double> out(static_cast<std::size_t>(member_count(plan)) * dims);
  for (long i : order) sample_member(plan, i, out.data() + static_cast<std::size_t>(i) * dims);
  return out;
}

std::vector<long> forward_order(const sampling_plan& plan) {
  std::vector<long> order(static_cast<std::size_t>(member_count(plan)));
  std::iota(order.begin(), order.end(), 0L);
  return order;
}

std::vector<double> all_samples(const sampling_plan& plan) { return samples_in_order(plan, forward_order(plan)); }

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// One column (dimension k) of a member-major sample array.
std::vector<double> column(const std::vector<double>& samples, std::size_t dims, std::size_t k) {
  std::vector<double> out;
  for (std::size_t i = k; i < samples.size(); i += dims) out.push_back(samples[i]);
  return out;
}

// Kolmogorov-Smirnov statistic D_n = sup |F_n - F| of the samples against the CDF.
template <class Cdf>
double ks_statistic(std::vector<double> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return d;
}

// 1% critical value of D_n for large n (Kolmogorov's limit distribution: P(sqrt(n) D_n > 1.628) = 0.01).
double ks_critical_1_percent(std::size_t n) { return 1.63 / std::sqrt(static_cast<double>(n)); }

// L2-star discrepancy by Warnock's formula (Warnock 1972):
// D^2 = 3^-d - 2^(1-d)/N sum_i prod_k (1 - x_ik^2) + 1/N^2 sum_ij prod_k (1 - max(x_ik, x_jk)).
double l2_star_discrepancy(const std::vector<double>& x, std::size_t dims) {
  const std::size_t n = x.size() / dims;
  double single = 0.0;
  double pairs = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double p = 1.0;
    for (std::size_t k = 0; k < dims; ++k) p *= 1.0 - x[i * dims + k] * x[i * dims + k];
    single += p;
    for (std::size_t j = 0; j < n; ++j) {
      double q = 1.0;
      for (std::size_t k = 0; k < dims; ++k) q *= 1.0 - std::max(x[i * dims + k], x[j * dims + k]);
      pairs += q;
    }
  }
  const double nd = static_cast<double>(n);
  const double d2 = std::pow(3.0, -static_cast<double>(dims)) -
                    std::pow(2.0, 1.0 - static_cast<double>(dims)) / nd * single + pairs / (nd * nd);
  return std::sqrt(std::max(d2, 0.0));
}

const std::vector<sampler_kind> drawing_samplers = {sampler_kind::random, sampler_kind::sobol, sampler_kind::lhs};

// ---- order, chunking, seeds -------------------------------------------------------------------------

TEST(Sampler, SameSeedGivesBitwiseSameSamplesInAnyMemberOrder) {
  for (sampler_kind sampler : drawing_samplers) {
    const sampling_plan plan =
        make_plan(sampler, 42, 37, 3, {normal(1.0, 0.1), grid({1.0, 2.0, 3.0}), lognormal(0.0, 0.5), uniform(-1, 1)});
    std::vector<long> reverse = forward_order(plan);
    std::reverse(reverse.begin(), reverse.end());
    std::vector<long> shuffled = forward_order(plan);
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));

    const std::vector<double> forward = all_samples(plan);

    EXPECT_TRUE(bitwise_equal(forward, samples_in_order(plan, reverse))) << static_cast<int>(sampler);
    EXPECT_TRUE(bitwise_equal(forward, samples_in_order(plan, shuffled))) << static_cast<int>(sampler);
  }
}

TEST(Sampler, ChunkingAndThreadsDoNotChangeSamples) {
  for (sampler_kind sampler : drawing_samplers) {
    const sampling_plan plan = make_plan(sampler, 9, 100, 2, {uniform(0, 1), normal(0, 1), grid({5.0, 6.0})});
    const std::size_t dims = plan.vary.size();
    const long n = member_count(plan);
    const std::vector<double> reference = all_samples(plan);

    for (long chunk : {1L, 7L, 64L, n}) {
      std::vector<double> chunked(reference.size());
      for (long begin = 0; begin < n; begin += chunk) {
        const long end = std::min(n, begin + chunk);
        for (long i = end - 1; i >= begin; --i) sample_member(plan, i, chunked.data() + static_cast<std::size_t>(i) * dims);
      }
      EXPECT_TRUE(bitwise_equal(reference, chunked)) << "chunk " << chunk;
    }
    std::vector<double> threaded(reference.size());
    std::vector<std::thread> threads;
    for (long t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (long i = t; i < n; i += 4) sample_member(plan, i, threaded.data() + static_cast<std::size_t>(i) * dims);
      });
    for (std::thread& t : threads) t.join();
    EXPECT_TRUE(bitwise_equal(reference, threaded));
  }
}

TEST(Sampler, DifferentSeedsGiveDifferentPointsInEveryCoordinate) {
  for (sampler_kind sampler : drawing_samplers) {
    const std::vector<distribution> dists = {uniform(0, 1), normal(0, 1), lognormal(0, 1)};
    const std::vector<double> a = all_samples(make_plan(sampler, 1, 64, 2, dists));
    const std::vector<double> b = all_samples(make_plan(sampler, 2, 64, 2, dists));

    long equal = 0;
    for (std::size_t k = 0; k < a.size(); ++k) equal += a[k] == b[k];

    EXPECT_EQ(equal, 0) << static_cast<int>(sampler);
  }
}

TEST(Sampler, ReplicatesAreDifferentRandomizationsOfTheSamePointSet) {
  for (sampler_kind sampler : drawing_samplers) {
    const sampling_plan plan = make_plan(sampler, 3, 32, 2, {uniform(0, 1), uniform(0, 1)});
    const std::vector<double> x = all_samples(plan);

    const std::vector<double> first(x.begin(), x.begin() + 64);
    const std::vector<double> second(x.begin() + 64, x.end());

    EXPECT_NE(first, second) << static_cast<int>(sampler);
  }
}

TEST(Sampler, ZeroStandardDeviationGivesTheLocationExactly) {
  for (sampler_kind sampler : drawing_samplers) {
    const sampling_plan plan = make_plan(sampler, 5, 50, 2, {normal(0.123456789, 0.0), lognormal(-0.7, 0.0), uniform(2.5, 2.5)});
    const std::vector<double> x = all_samples(plan);

    for (std::size_t i = 0; i < x.size(); i += 3) {
      EXPECT_EQ(x[i], 0.123456789);
      EXPECT_EQ(x[i + 1], std::exp(-0.7));
      EXPECT_EQ(x[i + 2], 2.5);
    }
  }
}

TEST(Random, UnitMappingIsOpenWithHalfCellOffsets) {
  EXPECT_EQ(unit_open(0), 0x1p-53);
  EXPECT_EQ(unit_open(~std::uint64_t{0}), 1.0 - 0x1p-53);
  EXPECT_EQ(unit_open(std::uint64_t{1} << 63), 0.5 + 0x1p-53);
  EXPECT_EQ(unit_open(0xfff), 0x1p-53);  // the low 12 bits are dropped
}

// ---- grid and numbering ---------------------------------------------------------------------------

TEST(Grid, SizeIsTheProductOfGridLengthsAndEveryCombinationOccursOnce) {
  const sampling_plan plan = make_plan(sampler_kind::grid, 1, 1, 1, {grid({1, 2}), grid({10, 20, 30}), grid({100, 200, 300, 400})});

  const std::vector<double> x = all_samples(plan);

  ASSERT_EQ(member_count(plan), 24);
  std::set<std::vector<double>> seen;
  for (std::size_t i = 0; i < x.size(); i += 3) seen.insert({x[i], x[i + 1], x[i + 2]});
  EXPECT_EQ(seen.size(), 24u);
  // Row-major, last dimension fastest.
  EXPECT_EQ((std::vector<double>(x.begin(), x.begin() + 6)), (std::vector<double>{1, 10, 100, 1, 10, 200}));
  EXPECT_EQ((std::vector<double>(x.end() - 3, x.end())), (std::vector<double>{2, 30, 400}));
}

TEST(Grid, PureGridIgnoresMembersAndReplicatesWhateverTheSampler) {
  for (sampler_kind sampler : {sampler_kind::grid, sampler_kind::random, sampler_kind::sobol, sampler_kind::lhs}) {
    const sampling_plan plan = make_plan(sampler, 1, 0, 0, {grid({1, 2, 3}), grid({4, 5})});

    EXPECT_EQ(check_plan(plan), "");
    EXPECT_EQ(member_count(plan), 6);
    EXPECT_EQ(replicate_of(plan, 5), 0);
    EXPECT_EQ(draw_of(plan, 5), 0);
    EXPECT_EQ(grid_point_of(plan, 5), 5);
  }
}

TEST(Grid, DrawnPointsAreCrossedWithEveryGridPoint) {
  for (sampler_kind sampler : drawing_samplers) {
    const sampling_plan plan = make_plan(sampler, 11, 5, 2, {normal(0, 1), grid({7, 8, 9}), uniform(0, 1)});
    const long g = 3;

    const std::vector<double> x = all_samples(plan);

    ASSERT_EQ(member_count(plan), g * 5 * 2);
    for (long i = 0; i < member_count(plan); ++i) {
      const long gp = grid_point_of(plan, i);
      const long draw = draw_of(plan, i);
      const int rep = replicate_of(plan, i);
      EXPECT_EQ(i, (rep * plan.members + draw) * g + gp);
      EXPECT_EQ(x[static_cast<std::size_t>(i) * 3 + 1], 7.0 + static_cast<double>(gp));
      const long first = (rep * plan.members + draw) * g;  // grid point 0 of the same draw
      EXPECT_EQ(x[static_cast<std::size_t>(i) * 3], x[static_cast<std::size_t>(first) * 3]);
      EXPECT_EQ(x[static_cast<std::size_t>(i) * 3 + 2], x[static_cast<std::size_t>(first) * 3 + 2]);
    }
  }
}

// ---- Sobol ------------------------------------------------------------------------------------------

TEST(Sobol, FirstUnrandomizedPointsEqualScipyPrintout) {
  // /usr/bin/python3 -c "from scipy.stats import qmc; print(qmc.Sobol(3, scramble=False).random(6))"
  const double scipy[6][3] = {{0, 0, 0}, {0.5, 0.5, 0.5}, {0.75, 0.25, 0.25},
                              {0.25, 0.75, 0.75}, {0.375, 0.375, 0.625}, {0.875, 0.875, 0.125}};
  for (std::uint64_t k = 0; k < 6; ++k) {
    double point[3];

    sobol_point(k, 3, point);

    for (int s = 0; s < 3; ++s) EXPECT_EQ(point[s], scipy[k][s]) << "point " << k << " dim " << s;
  }
}

TEST(Sobol, DirectPointsEqualBoostSequentialOutputShiftedByOne) {
  // Boost skips the origin: its n-th output vector (from 0) is our point n + 1.
  for (int dims : {1, 7, 40}) {
    boost::random::sobol_engine<std::uint64_t, sobol_bits> engine(static_cast<std::size_t>(dims));
    for (std::uint64_t k = 1; k <= 4096; ++k)
      for (int s = 0; s < dims; ++s) ASSERT_EQ(sobol_coordinate_bits(k, s), engine()) << "point " << k << " dim " << s;
  }
  boost::random::sobol_engine<std::uint64_t, sobol_bits> widest(sobol_max_dimension);
  for (std::uint64_t k = 1; k <= 64; ++k)
    for (int s = 0; s < sobol_max_dimension; ++s) ASSERT_EQ(sobol_coordinate_bits(k, s), widest()) << "point " << k << " dim " << s;
  for (int s = 0; s < sobol_max_dimension; ++s) EXPECT_EQ(sobol_coordinate_bits(0, s), 0u);
}

TEST(Sobol, LargePointIndicesAgreeWithBoostSeed) {
  // Boost's seed(n) positions the engine on its n-th output, i.e. our point n + 1.
  boost::random::sobol_engine<std::uint64_t, sobol_bits> engine(5);
  for (std::uint64_t k : {std::uint64_t{1} << 20, (std::uint64_t{1} << 40) + 12345, (std::uint64_t{1} << 52) - 1}) {
    engine.seed(k - 1);
    for (int s = 0; s < 5; ++s) EXPECT_EQ(sobol_coordinate_bits(k, s), engine()) << "point " << k << " dim " << s;
  }
}

// Every elementary interval [a 2^-p, (a+1) 2^-p) x [b 2^-q, (b+1) 2^-q) with p + q = m holds exactly one
// of the first 2^m points: Sobol dimensions 1 and 2 form a (0, m, 2)-net, and the digital shift keeps it.
TEST(Sobol, DigitalShiftKeepsTheZeroMTwoNetInTheFirstTwoDimensions) {
  const int m = 8;
  const long n = 1L << m;
  for (std::uint64_t seed : {1u, 2u, 99u}) {
    const sampling_plan plan = make_plan(sampler_kind::sobol, seed, n, 3, {uniform(0, 1), uniform(0, 1)});
    const std::vector<double> x = all_samples(plan);
    for (int rep = 0; rep < 3; ++rep)
      for (int p = 0; p <= m; ++p) {
        std::vector<int> count(static_cast<std::size_t>(n), 0);
        for (long draw = 0; draw < n; ++draw) {
          const std::size_t i = static_cast<std::size_t>(rep * n + draw) * 2;
          const long a = static_cast<long>(std::ldexp(x[i], p));
          const long b = static_cast<long>(std::ldexp(x[i + 1], m - p));
          ++count[static_cast<std::size_t>((a << (m - p)) + b)];
        }
        EXPECT_TRUE(std::all_of(count.begin(), count.end(), [](int c) { return c == 1; }))
            << "seed " << seed << " replicate " << rep << " p " << p;
      }
  }
}

TEST(Sobol, DigitalShiftKeepsOnePointPerDyadicCellInEveryDimension) {
  const int m = 10;
  const long n = 1L << m;
  const int dims = 12;
  const sampling_plan plan = make_plan(sampler_kind::sobol, 5, n, 2, std::vector<distribution>(dims, uniform(0, 1)));
  const std::vector<double> x = all_samples(plan);
  for (int rep = 0; rep < 2; ++rep)
    for (int s = 0; s < dims; ++s) {
      std::vector<int> count(static_cast<std::size_t>(n), 0);
      for (long draw = 0; draw < n; ++draw)
        ++count[static_cast<std::size_t>(std::ldexp(x[static_cast<std::size_t>(rep * n + draw) * dims + s], m))];
      EXPECT_TRUE(std::all_of(count.begin(), count.end(), [](int c) { return c == 1; })) << "replicate " << rep << " dim " << s;
    }
}

TEST(Sobol, RandomizedPointsKeepLowDiscrepancyForEverySeed) {
  const long n = 1024;
  const std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5, 6};
  for (int dims = 2; dims <= 5; ++dims) {
    const std::vector<distribution> dists(static_cast<std::size_t>(dims), uniform(0, 1));
    double random_mean = 0.0;
    double sobol_min = 1.0;
    double sobol_max = 0.0;
    for (std::uint64_t seed : seeds) {
      random_mean += l2_star_discrepancy(all_samples(make_plan(sampler_kind::random, seed, n, 1, dists)), static_cast<std::size_t>(dims)) /
                     static_cast<double>(seeds.size());
      const double d = l2_star_discrepancy(all_samples(make_plan(sampler_kind::sobol, seed, n, 1, dists)), static_cast<std::size_t>(dims));
      sobol_min = std::min(sobol_min, d);
      sobol_max = std::max(sobol_max, d);
    }

    EXPECT_LT(sobol_max, random_mean / 3.0) << "d = " << dims;
    EXPECT_LT(sobol_max, 3.0 * sobol_min) << "d = " << dims;
  }
}

// ---- Latin hypercube --------------------------------------------------------------------------------

TEST(Lhs, PermutationIsABijectionForEverySize) {
  for (long n = 1; n <= 300; ++n)
    for (std::uint64_t s = 0; s < 3; ++s) {
      std::vector<int> hit(static_cast<std::size_t>(n), 0);
      for (long k = 0; k < n; ++k) {
        const long image = lhs_permute(k, n, 17, 1, s);
        ASSERT_GE(image, 0);
        ASSERT_LT(image, n);
        ++hit[static_cast<std::size_t>(image)];
      }
      EXPECT_TRUE(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; })) << "n " << n;
    }
}

TEST(Lhs, EveryStratumOfEveryDimensionIsHitOncePerReplicate) {
  for (long members : {1L, 2L, 3L, 7L, 64L, 1000L, 1025L}) {
    const int dims = 3;
    const int replicates = 3;
    const sampling_plan plan = make_plan(sampler_kind::lhs, 23, members, replicates, std::vector<distribution>(dims, uniform(0, 1)));
    const std::vector<double> x = all_samples(plan);
    for (int rep = 0; rep < replicates; ++rep)
      for (int s = 0; s < dims; ++s) {
        std::vector<int> hit(static_cast<std::size_t>(members), 0);
        for (long draw = 0; draw < members; ++draw) {
          const double u = x[static_cast<std::size_t>(rep * members + draw) * dims + s];
          ASSERT_GT(u, 0.0);
          ASSERT_LT(u, 1.0);
          ++hit[static_cast<std::size_t>(std::floor(u * static_cast<double>(members)))];
        }
        EXPECT_TRUE(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; }))
            << "members " << members << " replicate " << rep << " dim " << s;
      }
  }
}

// ---- distributions ----------------------------------------------------------------------------------

TEST(Sampler, SamplesPassKolmogorovSmirnovAgainstTheirDistribution) {
  // 1% level; fixed seeds make the outcome deterministic. Sobol and LHS points are far more even
  // than random ones, so the same bound holds for them a fortiori.
  const long n = 4000;
  const boost::math::normal_distribution<double> nd(1.0, 0.5);
  const boost::math::lognormal_distribution<double> ld(0.2, 0.7);
  for (sampler_kind sampler : drawing_samplers)
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const sampling_plan plan = make_plan(sampler, seed, n, 1, {uniform(2, 5), normal(1.0, 0.5), lognormal(0.2, 0.7)});
      const std::vector<double> x = all_samples(plan);

      const double d_uniform = ks_statistic(column(x, 3, 0), [](double v) { return (v - 2.0) / 3.0; });
      const double d_normal = ks_statistic(column(x, 3, 1), [&](double v) { return boost::math::cdf(nd, v); });
      const double d_lognormal = ks_statistic(column(x, 3, 2), [&](double v) { return boost::math::cdf(ld, v); });

      const double critical = ks_critical_1_percent(static_cast<std::size_t>(n));
      EXPECT_LT(d_uniform, critical) << "sampler " << static_cast<int>(sampler) << " seed " << seed;
      EXPECT_LT(d_normal, critical) << "sampler " << static_cast<int>(sampler) << " seed " << seed;
      EXPECT_LT(d_lognormal, critical) << "sampler " << static_cast<int>(sampler) << " seed " << seed;
    }
}

TEST(Random, KolmogorovSmirnovRejectsAWrongDistribution) {
  const long n = 4000;
  const sampling_plan plan = make_plan(sampler_kind::random, 1, n, 1, {normal(0.0, 1.0), lognormal(0.0, 1.0)});
  const std::vector<double> x = all_samples(plan);
  const boost::math::normal_distribution<double> shifted(0.2, 1.0);
  const boost::math::normal_distribution<double> wider(0.0, 1.2);
  const boost::math::lognormal_distribution<double> other_lognormal(0.0, 1.2);

  const double critical = ks_critical_1_percent(static_cast<std::size_t>(n));
  EXPECT_GT(ks_statistic(column(x, 2, 0), [&](double v) { return boost::math::cdf(shifted, v); }), critical);
  EXPECT_GT(ks_statistic(column(x, 2, 0), [&](double v) { return boost::math::cdf(wider, v); }), critical);
  EXPECT_GT(ks_statistic(column(x, 2, 1), [&](double v) { return boost::math::cdf(other_lognormal, v); }), critical);
}

// ---- check_plan -------------------------------------------------------------------------------------

TEST(SamplerCheckPlan, AcceptsValidPlans) {
  for (sampler_kind sampler : drawing_samplers)
    EXPECT_EQ(check_plan(make_plan(sampler, 1, 10, 2, {uniform(0, 1), normal(0, 0), lognormal(1, 2), grid({1, 2})})), "");
  EXPECT_EQ(check_plan(make_plan(sampler_kind::grid, 1, 10, 2, {grid({1, 2}), grid({3})})), "");
  EXPECT_EQ(check_plan(make_plan(sampler_kind::sobol, 1, 10, 1, std::vector<distribution>(sobol_max_dimension, uniform(0, 1)))), "");
}

TEST(SamplerCheckPlan, RejectsEachInvalidCase) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct invalid {
    const char* what;
    sampling_plan plan;
  };
  const std::vector<invalid> cases = {
      {"empty grid", make_plan(sampler_kind::grid, 1, 1, 1, {grid({})})},
      {"non-finite grid value", make_plan(sampler_kind::grid, 1, 1, 1, {grid({1, nan})})},
      {"normal std < 0", make_plan(sampler_kind::random, 1, 1, 1, {normal(0, -1)})},
      {"lognormal sigma < 0", make_plan(sampler_kind::random, 1, 1, 1, {lognormal(0, -0.1)})},
      {"uniform lower > upper", make_plan(sampler_kind::lhs, 1, 1, 1, {uniform(2, 1)})},
      {"grid sampler with a drawn dimension", make_plan(sampler_kind::grid, 1, 1, 1, {grid({1}), uniform(0, 1)})},
      {"members = 0", make_plan(sampler_kind::random, 1, 0, 1, {uniform(0, 1)})},
      {"members < 0", make_plan(sampler_kind::sobol, 1, -3, 1, {uniform(0, 1)})},
      {"replicates = 0", make_plan(sampler_kind::sobol, 1, 8, 0, {uniform(0, 1)})},
      {"too many Sobol dimensions",
       make_plan(sampler_kind::sobol, 1, 8, 1, std::vector<distribution>(sobol_max_dimension + 1, uniform(0, 1)))},
      {"Sobol index beyond 2^52", make_plan(sampler_kind::sobol, 1, (1L << 52) + 1, 1, {uniform(0, 1)})},
      {"member count overflows", make_plan(sampler_kind::random, 1, 1L << 42, 1 << 20, {uniform(0, 1), grid({1, 2, 3, 4})})},
      {"infinite uniform bound", make_plan(sampler_kind::random, 1, 1, 1, {uniform(0, inf)})},
      {"uniform width overflows", make_plan(sampler_kind::random, 1, 1, 1, {uniform(-1e308, 1e308)})},
      {"NaN normal mean", make_plan(sampler_kind::random, 1, 1, 1, {normal(nan, 1)})},
      {"NaN lognormal sigma", make_plan(sampler_kind::random, 1, 1, 1, {lognormal(0, nan)})},
      {"unknown distribution", make_plan(sampler_kind::random, 1, 1, 1, {distribution{static_cast<distribution_kind>(9), 0, 1, {}}})},
      {"unknown sampler", make_plan(static_cast<sampler_kind>(7), 1, 1, 1, {uniform(0, 1)})},
  };
  for (const invalid& c : cases) EXPECT_NE(check_plan(c.plan), "") << c.what;
}

}  // namespace
