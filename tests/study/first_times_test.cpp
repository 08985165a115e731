// The distribution of first times (study/first_times.hpp): the Kaplan-Meier estimate and Greenwood's
// standard errors of a published censored sample, the plain share and Wilson interval without
// censoring, and quantiles only where the distribution reaches them; the interval from the spread over
// a quasi-random design's replicates.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lockstep/study/exceedance.hpp"
#include "lockstep/study/first_times.hpp"
#include "lockstep/study/samplers.hpp"

namespace {

using lockstep::study::first_time_sample;

// The 6-MP arm of Freireich et al. (1963), remission times in weeks, + censored: 6 6 6 6+ 7 9+ 10 10+
// 11+ 13 16 17+ 19+ 20+ 22 23 25+ 32+ 32+ 34+ 35+. Kaplan-Meier's S and Greenwood's standard errors as
// Klein & Moeschberger (2003, Survival Analysis, Table 4.1A) publish them, at the seven event times.
TEST(FirstTimes, KaplanMeierAndGreenwoodOfTheSixMpSample) {
  first_time_sample sample;
  for (double t : {6.0, 6.0, 6.0, 7.0, 10.0, 13.0, 16.0, 22.0, 23.0}) sample.add(t, 40.0);
  for (double c : {6.0, 9.0, 10.0, 11.0, 17.0, 19.0, 20.0, 25.0, 32.0, 32.0, 34.0, 35.0})
    sample.add(std::nan(""), c);
  const std::vector<double> times = {6, 7, 10, 13, 16, 22, 23};
  const double survival[] = {0.857, 0.807, 0.753, 0.690, 0.627, 0.538, 0.448};
  const double error[] = {0.076, 0.087, 0.096, 0.107, 0.114, 0.128, 0.135};
  const auto d = sample.estimate(times, {0.25, 0.5, 0.6});
  ASSERT_EQ(d.fraction.size(), times.size());
  EXPECT_EQ(d.members, 21);
  EXPECT_EQ(d.censored, 12);
  for (std::size_t i = 0; i < times.size(); ++i) {
    EXPECT_NEAR(1.0 - d.fraction[i], survival[i], 5e-4) << "t = " << times[i];
    EXPECT_NEAR(std::sqrt(d.variance[i]), error[i], 5e-4) << "t = " << times[i];
    EXPECT_LE(d.low[i], d.fraction[i]);
    EXPECT_GE(d.high[i], d.fraction[i]);
  }
  // Between the event times S is flat; before the first it is 1.
  EXPECT_EQ(sample.estimate({5.9, 8.0}, {}).fraction, (std::vector<double>{0.0, d.fraction[1]}));
  // The quantiles: F first reaches 0.25 at 13 (0.310) and 0.5 at 23 (0.552, the median of the 6-MP
  // arm); it never reaches 0.6, whose quantile is not estimable.
  EXPECT_EQ(d.quantiles[0], 13.0);
  EXPECT_EQ(d.quantiles[1], 23.0);
  EXPECT_TRUE(std::isnan(d.quantiles[2]));
}

// Without censoring before t, F(t) is the share k / n and its interval the exceedance probability's
// Wilson interval of k of n, exactly; members that end without the event at t1 are censored there only.
TEST(FirstTimes, WithoutEarlyCensoringTheShareAndItsWilsonInterval) {
  first_time_sample sample;
  const double t1 = 10.0;
  for (int i = 0; i < 40; ++i) sample.add(0.2 * i, t1);  // first times 0, 0.2, ..., 7.8
  for (int i = 0; i < 60; ++i) sample.add(std::nan(""), t1);
  const std::vector<double> times = {1.0, 5.0, t1};
  const auto d = sample.estimate(times, {0.2, 0.4, 0.41});
  const std::int64_t by[] = {6, 26, 40};
  for (std::size_t i = 0; i < times.size(); ++i) {
    const auto w = lockstep::study::estimate_exceedance(by[i], 100);
    EXPECT_EQ(d.occurred[i], by[i]);
    EXPECT_EQ(d.observed[i], 100);
    EXPECT_DOUBLE_EQ(d.fraction[i], by[i] / 100.0);
    EXPECT_DOUBLE_EQ(d.low[i], w.low);
    EXPECT_DOUBLE_EQ(d.high[i], w.high);
  }
  // The 20th first time, 0.2 * 19, gives F = 0.2; the 40th, 0.2 * 39, F = 0.4; 0.41 is never reached
  // (60 members censored at t1).
  EXPECT_EQ(d.quantiles[0], 0.2 * 19);
  EXPECT_EQ(d.quantiles[1], 0.2 * 39);
  EXPECT_TRUE(std::isnan(d.quantiles[2]));
}

// Members that fail early are censored where they failed: the estimate is Kaplan-Meier's, not the
// share of all members (which would count the failed ones as never having the event).
TEST(FirstTimes, MembersThatFailEarlyAreCensoredWhereTheyFailed) {
  first_time_sample sample;
  for (int i = 0; i < 50; ++i) sample.add(std::nan(""), 1.0);  // failed at t = 1, without the event
  for (int i = 0; i < 25; ++i) sample.add(2.0, 10.0);         // the event at t = 2
  for (int i = 0; i < 25; ++i) sample.add(std::nan(""), 10.0);
  const auto d = sample.estimate({0.5, 3.0}, {0.5});
  EXPECT_EQ(d.fraction[0], 0.0);
  EXPECT_EQ(d.observed[0], 100);
  EXPECT_DOUBLE_EQ(d.fraction[1], 0.5);  // 25 of the 50 still observed at t = 2, not 25 of 100
  EXPECT_EQ(d.observed[1], 50);
  EXPECT_EQ(d.quantiles[0], 2.0);
  // The interval rests on the 50 observed: Wilson's with n' = F (1 - F) / Var F = 50 here.
  const auto w = lockstep::study::estimate_exceedance(25, 50);
  EXPECT_NEAR(d.low[1], w.low, 1e-12);
  EXPECT_NEAR(d.high[1], w.high, 1e-12);
}

// ---- intervals from the spread over replicates (study::replicate_interval) ----

// Four replicates of ten members, with 3, 5, 4 and 6 first times by t = 1: F_r = 0.3, 0.5, 0.4, 0.6,
// their mean 0.45 (the pooled 18 / 40), their standard deviation sqrt(0.05 / 3), and the 95 % interval
// 0.45 +- t_{3, 0.975} s / 2 with Student's quantile 3.182446305284263 (the textbook table value, not
// boost's). Before the first event every replicate says 0: no spread, and Wilson's interval stays.
TEST(ReplicateInterval, IsStudentsIntervalOfTheReplicatesFractions) {
  const double t1 = 2.0;
  const int by_one[] = {3, 5, 4, 6};
  std::vector<first_time_sample> replicates(4);
  first_time_sample pooled;
  for (int r = 0; r < 4; ++r)
    for (int m = 0; m < 10; ++m) {
      const double first = m < by_one[r] ? 0.5 + 0.01 * m : std::nan("");
      replicates[static_cast<std::size_t>(r)].add(first, t1);
      pooled.add(first, t1);
    }
  const std::vector<double> times = {0.25, 1.0};
  auto d = pooled.estimate(times, {});
  const auto wilson_before = lockstep::study::estimate_exceedance(0, 40);
  lockstep::study::replicate_interval(d, replicates, times);
  EXPECT_EQ(d.replicates, 4);
  EXPECT_DOUBLE_EQ(d.fraction[1], 0.45);
  const double half = 3.182446305284263 * std::sqrt(0.05 / 3.0) / 2.0;
  EXPECT_NEAR(d.low[1], 0.45 - half, 1e-12);
  EXPECT_NEAR(d.high[1], 0.45 + half, 1e-12);
  EXPECT_EQ(d.fraction[0], 0.0);
  EXPECT_DOUBLE_EQ(d.low[0], wilson_before.low);
  EXPECT_DOUBLE_EQ(d.high[0], wilson_before.high);
}

// One replicate has no spread to measure: the interval stays Wilson's, and says so.
TEST(ReplicateInterval, OneReplicateKeepsWilsonsInterval) {
  std::vector<first_time_sample> replicates(1);
  first_time_sample pooled;
  for (int m = 0; m < 20; ++m) {
    replicates[0].add(m < 7 ? 0.1 * m : std::nan(""), 1.0);
    pooled.add(m < 7 ? 0.1 * m : std::nan(""), 1.0);
  }
  auto d = pooled.estimate({1.0}, {});
  const auto w = lockstep::study::estimate_exceedance(7, 20);
  lockstep::study::replicate_interval(d, replicates, {1.0});
  EXPECT_EQ(d.replicates, 0);
  EXPECT_DOUBLE_EQ(d.low[0], w.low);
  EXPECT_DOUBLE_EQ(d.high[0], w.high);
}

// Sobol' points in replicates, as a study draws them (study/samplers.hpp): the first time of member
// (u1, u2) is (u1 + u2) / 2, so the exact fraction by t = 0.3 is 2 t^2 = 0.18. Over 400 seeds, 8
// replicates of 64 points each: the interval from the replicates covers 0.18 about as often as it says
// (95 %; at least 88 % leaves room for the t interval's approximation and for 400 trials); the standard
// error it rests on, s / sqrt(R), is on average the spread the pooled estimate really has over the
// seeds (within a quarter); and the binomial standard error sqrt(F (1 - F) / N), which takes the 512
// points as independent draws, overstates that spread by a third or more: what the replicates are for.
TEST(ReplicateInterval, OfSobolReplicatesCoversTheExactFractionWithTheErrorThePointsHave) {
  using namespace lockstep::study;
  sampling_plan plan;
  plan.sampler = sampler_kind::sobol;
  plan.members = 64;
  plan.replicates = 8;
  for (const char* name : {"initial.u1", "initial.u2"}) {
    varied_input v;
    v.name = name;
    v.index = static_cast<int>(plan.vary.size());
    v.dist = {distribution_kind::uniform, 0.0, 1.0, {}};
    plan.vary.push_back(v);
  }
  const double t = 0.3, exact = 2.0 * t * t, student_7 = 2.364624251592785;  // t_{7, 0.975}, from the table
  const int trials = 400;
  int covered = 0, with_spread = 0;
  double standard_error = 0.0, sum = 0.0, sum_of_squares = 0.0;
  for (int seed = 1; seed <= trials; ++seed) {
    plan.seed = static_cast<std::uint64_t>(seed);
    std::vector<first_time_sample> replicates(static_cast<std::size_t>(plan.replicates));
    first_time_sample pooled;
    for (long i = 0; i < member_count(plan); ++i) {
      double u[2];
      sample_member(plan, i, u);
      const double first = 0.5 * (u[0] + u[1]);
      replicates[static_cast<std::size_t>(replicate_of(plan, i))].add(first, 1.0);
      pooled.add(first, 1.0);
    }
    auto d = pooled.estimate({t}, {});
    const double wilson_low = d.low[0];
    replicate_interval(d, replicates, {t});
    ASSERT_EQ(d.replicates, 8);
    covered += d.low[0] <= exact && exact <= d.high[0];
    if (d.low[0] != wilson_low) {
      ++with_spread;
      standard_error += (d.high[0] - d.low[0]) / (2.0 * student_7);  // s / sqrt(R), where [0, 1] did not clip
    }
    sum += d.fraction[0];
    sum_of_squares += d.fraction[0] * d.fraction[0];
  }
  const double mean = sum / trials, spread = std::sqrt((sum_of_squares - trials * mean * mean) / (trials - 1));
  const double binomial = std::sqrt(exact * (1.0 - exact) / static_cast<double>(member_count(plan)));
  EXPECT_GE(covered, static_cast<int>(0.88 * trials)) << covered << " of " << trials;
  ASSERT_GT(with_spread, trials / 2);
  standard_error /= with_spread;
  EXPECT_NEAR(standard_error / spread, 1.0, 0.25) << "standard error " << standard_error << ", spread " << spread;
  EXPECT_GT(binomial, 1.3 * spread) << "binomial " << binomial << ", spread " << spread;
}

}  // namespace
