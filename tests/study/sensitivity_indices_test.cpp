// Tests of lockstep/study/sensitivity_indices.hpp and the saltelli sampler (study/samplers.hpp): the
// design's structure, the indices of functions whose variance decomposes in closed form, failed rows,
// and the intervals' coverage of the exact indices at their stated rate (SALib's analysis of the same
// outputs: sensitivity_vs_salib.py); and of lockstep/study/derivative_measures.hpp against closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "lockstep/study/derivative_measures.hpp"
#include "lockstep/study/samplers.hpp"
#include "lockstep/study/sensitivity_indices.hpp"

namespace {

using namespace lockstep::study;

constexpr double pi = std::numbers::pi;

distribution uniform(double lower, double upper) { return {distribution_kind::uniform, lower, upper, {}}; }

sampling_plan saltelli_plan(std::uint64_t seed, long rows, int replicates, const std::vector<distribution>& inputs,
                            bool second_order = false) {
  sampling_plan plan;
  plan.sampler = sampler_kind::saltelli;
  plan.seed = seed;
  plan.second_order = second_order;
  plan.members = rows * saltelli_design{static_cast<int>(inputs.size()), second_order}.slots();
  plan.replicates = replicates;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    std::string name = "x";
    name += std::to_string(k);
    plan.vary.push_back({name, true, static_cast<int>(k), inputs[k]});
  }
  return plan;
}

// f at every member of the plan, in member order: the design's rows, replicate after replicate.
template <class F>
std::vector<double> outputs(const sampling_plan& plan, F f) {
  std::vector<double> x(plan.vary.size());
  std::vector<double> y(static_cast<std::size_t>(member_count(plan)));
  for (long i = 0; i < member_count(plan); ++i) {
    sample_member(plan, i, x.data());
    y[static_cast<std::size_t>(i)] = f(x);
  }
  return y;
}

// The Ishigami function (Ishigami & Homma 1990) with a = 7, b = 0.1 on [-pi, pi]^3, and its exact
// indices from its variance decomposition (Sobol' & Levitan 1999; Saltelli et al. 2008, "Global
// Sensitivity Analysis. The Primer", section 2.8): V = a^2/8 + b pi^4/5 + b^2 pi^8/18 + 1/2,
// V1 = (1 + b pi^4/5)^2 / 2, V2 = a^2/8, V3 = 0, V13 = 8 b^2 pi^8 / 225, no other term.
struct ishigami {
  static constexpr double a = 7.0, b = 0.1;
  static double f(const std::vector<double>& x) {
    return std::sin(x[0]) + a * std::sin(x[1]) * std::sin(x[1]) + b * std::pow(x[2], 4) * std::sin(x[0]);
  }
  static double variance() {
    return a * a / 8.0 + b * std::pow(pi, 4) / 5.0 + b * b * std::pow(pi, 8) / 18.0 + 0.5;
  }
  static double v1() { return 0.5 * (1.0 + b * std::pow(pi, 4) / 5.0) * (1.0 + b * std::pow(pi, 4) / 5.0); }
  static double v2() { return a * a / 8.0; }
  static double v13() { return 8.0 * b * b * std::pow(pi, 8) / 225.0; }
  static std::vector<double> first() { return {v1() / variance(), v2() / variance(), 0.0}; }
  static std::vector<double> total() { return {(v1() + v13()) / variance(), v2() / variance(), v13() / variance()}; }
};

// A mechanism's output with an interaction: the position x0 cos(omega t) of a harmonic oscillator
// released from x0 at rest, x0 uniform on [1, 2] and omega on [1, 3], independent, at t = 2. With
// g = cos(omega t): V = E[x0^2] E[g^2] - E[x0]^2 E[g]^2, V_x0 = Var(x0) E[g]^2,
// V_omega = E[x0]^2 Var(g), and the interaction Var(x0) Var(g) makes S_T > S_1 for both.
struct oscillator {
  static constexpr double t = 2.0;
  static double f(const std::vector<double>& x) { return x[0] * std::cos(x[1] * t); }
  static double mean_g() { return (std::sin(3.0 * t) - std::sin(1.0 * t)) / (2.0 * t); }
  static double mean_g2() { return 0.5 + (std::sin(6.0 * t) - std::sin(2.0 * t)) / (8.0 * t); }
  static double variance() { return (1.0 / 12.0 + 2.25) * mean_g2() - 2.25 * mean_g() * mean_g(); }
  static double v_x0() { return mean_g() * mean_g() / 12.0; }
  static double v_omega() { return 2.25 * (mean_g2() - mean_g() * mean_g()); }
  static std::vector<double> first() { return {v_x0() / variance(), v_omega() / variance()}; }
  static std::vector<double> total() { return {1.0 - v_omega() / variance(), 1.0 - v_x0() / variance()}; }
};

TEST(SaltelliDesign, EachRowIsTwoPointsAndTheirColumnExchanges) {
  for (const bool second_order : {false, true}) {
    const int k = 3;
    const sampling_plan plan = saltelli_plan(7, 16, 2, std::vector<distribution>(k, uniform(0.0, 1.0)), second_order);
    ASSERT_EQ(check_plan(plan), "");
    const saltelli_design design{k, second_order};
    const int slots = design.slots();
    ASSERT_EQ(slots, second_order ? 2 * k + 2 : k + 2);
    std::vector<double> x(static_cast<std::size_t>(member_count(plan)) * k);
    for (long i = 0; i < member_count(plan); ++i) sample_member(plan, i, x.data() + i * k);
    const auto at = [&](long row, int slot, int input) { return x[(row * slots + slot) * k + input]; };
    for (long row = 0; row < 32; ++row) {
      for (int input = 0; input < k; ++input) ASSERT_NE(at(row, 0, input), at(row, slots - 1, input));
      for (int slot = 1; slot < slots - 1; ++slot)
        for (int input = 0; input < k; ++input) {
          const bool b = slot <= k ? input == slot - 1 : input != slot - 1 - k;
          EXPECT_EQ(at(row, slot, input), b ? at(row, slots - 1, input) : at(row, 0, input))
              << "row " << row << " slot " << slot << " input " << input;
        }
    }
    // Within a replicate, each column of A and of B is a one-dimensional projection of the first 16
    // points of a digitally shifted Sobol' sequence: one point in each sixteenth of [0, 1].
    for (int replicate = 0; replicate < 2; ++replicate)
      for (const int slot : {0, slots - 1})
        for (int input = 0; input < k; ++input) {
          std::vector<int> cells(16, 0);
          for (long row = 0; row < 16; ++row) ++cells[static_cast<std::size_t>(at(replicate * 16 + row, slot, input) * 16.0)];
          for (int c = 0; c < 16; ++c) EXPECT_EQ(cells[c], 1) << "replicate " << replicate << " slot " << slot;
        }
  }
}

TEST(SaltelliDesign, CheckPlanRefusesRowsThatAreNotAPowerOfTwo) {
  sampling_plan plan = saltelli_plan(1, 16, 1, {uniform(0.0, 1.0), uniform(0.0, 1.0)});
  EXPECT_EQ(check_plan(plan), "");
  plan.members = 12 * 4;
  EXPECT_NE(check_plan(plan).find("power of two"), std::string::npos) << check_plan(plan);
  plan.members = 16 * 4 + 1;
  EXPECT_NE(check_plan(plan).find("N x 4"), std::string::npos) << check_plan(plan);
}

TEST(SensitivityIndices, IshigamiMatchesItsVarianceDecomposition) {
  const sampling_plan plan = saltelli_plan(3, 1L << 14, 1, std::vector<distribution>(3, uniform(-pi, pi)), true);
  const std::vector<double> y = outputs(plan, ishigami::f);
  const sensitivity_indices s = estimate_sensitivity_indices({3, true}, y.data(), 1L << 14);
  ASSERT_EQ(s.refused, "");
  EXPECT_EQ(s.rows_used, 1L << 14);
  EXPECT_NEAR(s.variance, ishigami::variance(), 0.01 * ishigami::variance());
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(s.first[i], ishigami::first()[i], 0.01) << "S_" << i + 1;
    EXPECT_NEAR(s.total[i], ishigami::total()[i], 0.01) << "S_T" << i + 1;
  }
  EXPECT_NEAR(s.second[0 * 3 + 2], ishigami::v13() / ishigami::variance(), 0.02) << "S_13";
  EXPECT_NEAR(s.second[0 * 3 + 1], 0.0, 0.02) << "S_12";
  EXPECT_NEAR(s.second[1 * 3 + 2], 0.0, 0.02) << "S_23";
  EXPECT_TRUE(std::isnan(s.second[1 * 3 + 0])) << "only i < j is an index";
}

TEST(SensitivityIndices, AnInteractionMakesTheTotalIndexExceedTheFirstOrder) {
  const sampling_plan plan = saltelli_plan(5, 1L << 14, 1, {uniform(1.0, 2.0), uniform(1.0, 3.0)});
  const std::vector<double> y = outputs(plan, oscillator::f);
  const sensitivity_indices s = estimate_sensitivity_indices({2, false}, y.data(), 1L << 14);
  ASSERT_EQ(s.refused, "");
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(s.first[i], oscillator::first()[i], 0.005) << "S_" << i + 1;
    EXPECT_NEAR(s.total[i], oscillator::total()[i], 0.005) << "S_T" << i + 1;
    EXPECT_GT(s.total[i], s.first[i] + 0.02) << "the interaction x0 x omega, input " << i + 1;
  }
  EXPECT_TRUE(s.second.empty());
}

TEST(SensitivityIndices, AFailedMemberLeavesItsRowOutAndTooManyAreRefused) {
  const long rows = 1L << 10;
  const sampling_plan plan = saltelli_plan(9, rows, 1, {uniform(1.0, 2.0), uniform(1.0, 3.0)});
  std::vector<double> y = outputs(plan, oscillator::f);
  // The same rows without the failed ones: the indices must be those of the rows that are left.
  std::vector<double> kept;
  const int slots = 4;
  for (long row = 0; row < rows; ++row) {
    if (row % 100 == 7) {
      y[static_cast<std::size_t>(row * slots + 1 + row % 3)] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    kept.insert(kept.end(), y.begin() + row * slots, y.begin() + (row + 1) * slots);
  }
  const sensitivity_indices with_failures = estimate_sensitivity_indices({2, false}, y.data(), rows);
  const sensitivity_indices without = estimate_sensitivity_indices({2, false}, kept.data(), rows - 11);
  ASSERT_EQ(with_failures.refused, "");
  EXPECT_EQ(with_failures.rows_used, rows - 11);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(with_failures.first[i], without.first[i]);
    EXPECT_EQ(with_failures.total[i], without.total[i]);
  }
  // 11 of 1024 rows is 1.07 %: refused at 1 %, with the counts in the message.
  const sensitivity_indices refused = estimate_sensitivity_indices({2, false}, y.data(), rows, 0.01);
  EXPECT_NE(refused.refused.find("11 of 1024 design rows"), std::string::npos) << refused.refused;
  EXPECT_NE(refused.refused.find("1 % allowed"), std::string::npos) << refused.refused;
  EXPECT_TRUE(std::isnan(refused.first[0]) && std::isnan(refused.total[1]));
  // An output that does not vary has no indices.
  const std::vector<double> constant(static_cast<std::size_t>(rows) * slots, 2.5);
  const sensitivity_indices flat = estimate_sensitivity_indices({2, false}, constant.data(), rows);
  EXPECT_NE(flat.refused.find("does not vary"), std::string::npos) << flat.refused;
  EXPECT_TRUE(std::isnan(flat.first[0]));
}

// The binomial acceptance band of a coverage count: `trials` independent intervals of confidence
// `level` cover the exact value a Binomial(trials, level) number of times; the band holds that number
// with probability 0.999 (normal approximation, +-3.29 standard deviations), so the test neither fails
// by chance (once in a thousand runs of a fixed seed set it would; these seeds are fixed) nor passes
// intervals whose true coverage is off by more than about 2.5 points at 400 trials.
void expect_coverage(int covered, int trials, double level, const std::string& what) {
  std::printf("%s: %d of %d intervals of confidence %g cover the exact index\n", what.c_str(), covered, trials, level);
  const double mean = level * trials;
  const double sd = std::sqrt(trials * level * (1.0 - level));
  EXPECT_GE(covered, mean - 3.29 * sd) << what << ": " << covered << " of " << trials << " intervals cover";
  EXPECT_LE(covered, mean + 3.29 * sd) << what << ": " << covered << " of " << trials << " intervals cover";
}

// How often the intervals of the oscillator's four indices cover the exact ones, over trials.
struct oscillator_coverage {
  int trials = 0;
  std::vector<int> covered = std::vector<int>(4, 0);  // S_x0, S_omega, S_T,x0, S_T,omega

  void add(const sensitivity_indices& s, const sensitivity_intervals& h) {
    ++trials;
    for (int i = 0; i < 2; ++i) {
      covered[i] += std::abs(s.first[i] - oscillator::first()[i]) <= h.first[i];
      covered[2 + i] += std::abs(s.total[i] - oscillator::total()[i]) <= h.total[i];
    }
  }
  void expect_rate(double level) const {
    const char* names[] = {"S_x0", "S_omega", "S_T,x0", "S_T,omega"};
    for (int i = 0; i < 4; ++i) expect_coverage(covered[i], trials, level, names[i]);
  }
};

TEST(SensitivityIntervals, ReplicateIntervalsCoverTheExactIndicesAtTheirRate) {
  const int trials = 400, replicates = 10;
  const long rows = 1024;
  oscillator_coverage coverage;
  for (int trial = 0; trial < trials; ++trial) {
    const sampling_plan plan =
        saltelli_plan(1000 + static_cast<std::uint64_t>(trial), rows, replicates, {uniform(1.0, 2.0), uniform(1.0, 3.0)});
    const std::vector<double> y = outputs(plan, oscillator::f);
    const sensitivity_indices s = estimate_sensitivity_indices({2, false}, y.data(), rows * replicates);
    const sensitivity_intervals h = replicate_intervals({2, false}, y.data(), rows, replicates);
    ASSERT_EQ(h.replicates, replicates);
    coverage.add(s, h);
  }
  coverage.expect_rate(0.95);
}

TEST(SensitivityIntervals, BootstrapIntervalsOfIndependentRowsCoverAtTheirRate) {
  // Rows of independent uniform points (the bootstrap's assumption), drawn by the standard library's
  // generator: the design is built here, column exchanges and all.
  const int trials = 400, resamples = 200;
  const long rows = 512;
  oscillator_coverage coverage;
  std::mt19937_64 generator(20261204);
  std::uniform_real_distribution<double> x0(1.0, 2.0), omega(1.0, 3.0);
  std::vector<double> y(static_cast<std::size_t>(rows) * 4);
  for (int trial = 0; trial < trials; ++trial) {
    for (long row = 0; row < rows; ++row) {
      const std::vector<double> a{x0(generator), omega(generator)}, b{x0(generator), omega(generator)};
      y[row * 4 + 0] = oscillator::f(a);
      y[row * 4 + 1] = oscillator::f({b[0], a[1]});
      y[row * 4 + 2] = oscillator::f({a[0], b[1]});
      y[row * 4 + 3] = oscillator::f(b);
    }
    const sensitivity_indices s = estimate_sensitivity_indices({2, false}, y.data(), rows);
    const sensitivity_intervals h =
        bootstrap_intervals({2, false}, y.data(), rows, resamples, static_cast<std::uint64_t>(trial));
    ASSERT_EQ(h.resamples, resamples);
    coverage.add(s, h);
  }
  coverage.expect_rate(0.95);
}

TEST(SensitivityIntervals, TheBootstrapIsAFunctionOfItsSeed) {
  const sampling_plan plan = saltelli_plan(4, 64, 1, {uniform(1.0, 2.0), uniform(1.0, 3.0)});
  const std::vector<double> y = outputs(plan, oscillator::f);
  const sensitivity_intervals a = bootstrap_intervals({2, false}, y.data(), 64, 50, 11);
  const sensitivity_intervals b = bootstrap_intervals({2, false}, y.data(), 64, 50, 11);
  const sensitivity_intervals c = bootstrap_intervals({2, false}, y.data(), 64, 50, 12);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.total, b.total);
  EXPECT_NE(a.first, c.first);
}

// The derivative-based measures of f at `members` Sobol' points of the inputs, with f's gradient.
template <class F, class Gradient>
derivative_measures measures_of(const std::vector<distribution>& inputs, long members, F f, Gradient gradient) {
  sampling_plan plan;
  plan.sampler = sampler_kind::sobol;
  plan.seed = 17;
  plan.members = members;
  for (std::size_t k = 0; k < inputs.size(); ++k) plan.vary.push_back({"x", true, static_cast<int>(k), inputs[k]});
  const std::size_t k = inputs.size();
  std::vector<double> x(static_cast<std::size_t>(members) * k), y(static_cast<std::size_t>(members)),
      dy(static_cast<std::size_t>(members) * k);
  for (long m = 0; m < members; ++m) {
    double* xm = x.data() + static_cast<std::size_t>(m) * k;
    sample_member(plan, m, xm);
    const std::vector<double> point(xm, xm + k);
    y[static_cast<std::size_t>(m)] = f(point);
    const std::vector<double> g = gradient(point);
    for (std::size_t i = 0; i < k; ++i) dy[static_cast<std::size_t>(m) * k + i] = g[i];
  }
  return estimate_derivative_measures(inputs, y.data(), x.data(), dy.data(), members);
}

TEST(DerivativeMeasures, ALinearOutputGivesTheSquaredSlopeAndTheUniformBound) {
  // f = 2 x0 - 3 x1 + x2/2: nu_i = a_i^2 exactly; S_Ti = a_i^2 w_i^2 / 12 / V with V = sum a_i^2 w_i^2 / 12
  // (w the widths), and the bound w_i^2 nu_i / (pi^2 V) is 12 / pi^2 times S_Ti.
  const std::vector<double> a{2.0, -3.0, 0.5}, w{1.0, 2.0, 2.0};
  const std::vector<distribution> inputs{uniform(0.0, 1.0), uniform(1.0, 3.0), uniform(-1.0, 1.0)};
  const derivative_measures d = measures_of(
      inputs, 1L << 14, [&](const std::vector<double>& x) { return a[0] * x[0] + a[1] * x[1] + a[2] * x[2]; },
      [&](const std::vector<double>&) { return a; });
  double v = 0.0;
  for (int i = 0; i < 3; ++i) v += a[i] * a[i] * w[i] * w[i] / 12.0;
  EXPECT_EQ(d.members_used, 1L << 14);
  EXPECT_NEAR(d.variance, v, 1e-3 * v);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.nu[i], a[i] * a[i]);
    EXPECT_EQ(d.nu_stderr[i], 0.0);
    const double total = a[i] * a[i] * w[i] * w[i] / 12.0 / v;
    EXPECT_NEAR(d.total_bound[i], 12.0 / (pi * pi) * total, 1e-3 * total) << "input " << i;
  }
}

TEST(DerivativeMeasures, TheBoundIsTheTotalIndexForALinearOutputOfNormalInputs) {
  // Gaussian inputs: the Poincare inequality is an equality for linear functions.
  const std::vector<double> a{1.5, -0.5};
  const std::vector<distribution> inputs{{distribution_kind::normal, 1.0, 0.3, {}}, {distribution_kind::normal, -2.0, 2.0, {}}};
  const derivative_measures d = measures_of(
      inputs, 1L << 14, [&](const std::vector<double>& x) { return a[0] * x[0] + a[1] * x[1]; },
      [&](const std::vector<double>&) { return a; });
  const double v = a[0] * a[0] * 0.09 + a[1] * a[1] * 4.0;
  EXPECT_NEAR(d.total_bound[0], a[0] * a[0] * 0.09 / v, 0.01);
  EXPECT_NEAR(d.total_bound[1], a[1] * a[1] * 4.0 / v, 0.01);
}

TEST(DerivativeMeasures, ALognormalInputIsBoundedInItsLogarithm) {
  // f = log x with x = exp(z), z normal (0.3, 0.4): x df/dx = 1, so nu = 1 and the bound is
  // sigma^2 / Var(z) = 1 = S_T, the output depending on nothing else.
  const std::vector<distribution> inputs{{distribution_kind::lognormal, 0.3, 0.4, {}}};
  const derivative_measures d = measures_of(
      inputs, 1L << 14, [](const std::vector<double>& x) { return std::log(x[0]); },
      [](const std::vector<double>& x) { return std::vector<double>{1.0 / x[0]}; });
  EXPECT_NEAR(d.nu[0], 1.0, 1e-12);
  EXPECT_NEAR(d.total_bound[0], 1.0, 0.01);
}

TEST(DerivativeMeasures, IshigamisBoundsLieAboveItsTotalIndicesAndFailedMembersAreLeftOut) {
  const std::vector<distribution> inputs(3, uniform(-pi, pi));
  const auto gradient = [](const std::vector<double>& x) {
    const double a = ishigami::a, b = ishigami::b;
    return std::vector<double>{std::cos(x[0]) * (1.0 + b * std::pow(x[2], 4)), 2.0 * a * std::sin(x[1]) * std::cos(x[1]),
                               4.0 * b * std::pow(x[2], 3) * std::sin(x[0])};
  };
  const derivative_measures d = measures_of(inputs, 1L << 14, ishigami::f, gradient);
  for (int i = 0; i < 3; ++i) EXPECT_GE(d.total_bound[i], ishigami::total()[i]) << "input " << i;
  // A member whose derivative is NaN does not enter.
  std::vector<double> x{0.1, 0.2, 0.3, 0.4}, y{1.0, 2.0, 4.0, 8.0}, dy{1.0, std::nan(""), 3.0, 4.0};
  const derivative_measures some = estimate_derivative_measures({uniform(0.0, 1.0)}, y.data(), x.data(), dy.data(), 4);
  EXPECT_EQ(some.members_used, 3);
  EXPECT_DOUBLE_EQ(some.nu[0], (1.0 + 9.0 + 16.0) / 3.0);
}

}  // namespace
