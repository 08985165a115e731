// End-to-end tests of the statistics `lockstep run` writes, against a direct computation over the
// trajectories the same run stored (/q, /v, /lambda, /mu), and of determinism: the same study on
// different backends, thread counts and chunk sizes gives bitwise identical datasets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

using namespace lockstep::cli_test;

// The stored trajectory groups and their widths for a model with n coordinates and m constraints.
struct group_info {
  std::string name;
  std::size_t width;
  std::size_t state_offset;  // first column in the state layout (q, v, lambda, mu, nu): /statistics/*/count
};

std::vector<group_info> groups_of(const h5_file& f) {
  const auto n = static_cast<std::size_t>(f.int64_attribute("/", "n"));
  const auto m = static_cast<std::size_t>(f.int64_attribute("/", "m"));
  std::vector<group_info> g = {{"q", n, 0}, {"v", n, n}, {"lambda", m, 2 * n}};
  if (f.exists("/mu")) g.push_back({"mu", m, 2 * n + m});
  return g;
}

// The non-NaN values of component c at save s over all members, from a stored [N][S][width] array.
std::vector<double> slice(const std::vector<double>& data, std::size_t N, std::size_t S, std::size_t width,
                          std::size_t s, std::size_t c, std::size_t first = 0, std::size_t count = std::size_t(-1)) {
  std::vector<double> out;
  const std::size_t last = std::min(N, count == std::size_t(-1) ? N : first + count);
  for (std::size_t i = first; i < last; ++i) {
    const double x = data[(i * S + s) * width + c];
    if (!std::isnan(x)) out.push_back(x);
  }
  return out;
}

double max_abs(const std::vector<double>& x) {
  double a = 0.0;
  for (double v : x) a = std::max(a, std::abs(v));
  return a;
}

// ---- one random-sampling study, trajectories stored, every kind of statistic ----------------------
// 60 pendulums on BDF + GGL (so mu has statistics too), uncertain start angle and rod length.
constexpr const char* random_study = R"([model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "ggl"
[time]
t1 = 1.0
save = { every = 0.2 }
[ensemble]
members = 60
seed = 5
[ensemble.vary]
"initial.theta0" = { uniform = [0.3, 1.2] }
"params.L" = { normal = { mean = 1.0, std = 0.1 } }
[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q12.5", "q50", "q95", "q100"]
)";

class RandomStudyStatistics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<scratch_dir>();
    result_ = std::make_unique<run_result>(run_study(*dir_, "random", random_study));
  }
  static void TearDownTestSuite() {
    dir_.reset();
    result_.reset();
  }
  static fs::path results() { return *dir_ / "out" / "results.h5"; }

  static std::unique_ptr<scratch_dir> dir_;
  static std::unique_ptr<run_result> result_;
};
std::unique_ptr<scratch_dir> RandomStudyStatistics::dir_;
std::unique_ptr<run_result> RandomStudyStatistics::result_;

// A statistic compared with a direct computation over every (group, save, component) slice.
template <class Direct, class Check>
void for_every_slice(const h5_file& f, const std::string& statistic, Direct direct, Check check) {
  const std::size_t N = static_cast<std::size_t>(f.int64_attribute("/", "members"));
  const std::size_t S = f.doubles("/t").size();
  for (const group_info& g : groups_of(f)) {
    const std::vector<double> stored = f.doubles("/" + g.name);
    const std::vector<double> written = f.doubles("/statistics/" + statistic + "/" + g.name);
    ASSERT_EQ(written.size(), S * g.width) << statistic << "/" << g.name;
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < g.width; ++c) {
        const std::vector<double> values = slice(stored, N, S, g.width, s, c);
        check(written[s * g.width + c], direct(values), values,
              statistic + "/" + g.name + "[" + std::to_string(s) + "][" + std::to_string(c) + "]");
      }
  }
}

TEST_F(RandomStudyStatistics, MeanAndStdEqualADirectComputationToRoundOff) {
  // Arrange
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  h5_file f(results());
  ASSERT_TRUE(f.is_open());
  double worst_mean = 0.0, worst_std = 0.0;

  // Act + Assert: |written - direct| <= 1e-13 max|x| over the slice (Welford in blocks against a
  // plain sum and two passes: both are within a few ulps of the scale of the data).
  for_every_slice(
      f, "mean",
      [](const std::vector<double>& x) {
        double sum = 0.0;
        for (double v : x) sum += v;
        return sum / static_cast<double>(x.size());
      },
      [&](double written, double direct, const std::vector<double>& x, const std::string& where) {
        ASSERT_EQ(x.size(), 60u) << where;
        const double e = std::abs(written - direct);
        worst_mean = std::max(worst_mean, max_abs(x) > 0 ? e / max_abs(x) : e);
        EXPECT_LE(e, 1e-13 * max_abs(x)) << where << ": " << written << " vs " << direct;
      });
  for_every_slice(f, "std", two_pass_std, [&](double written, double direct, const std::vector<double>& x, const std::string& where) {
    const double e = std::abs(written - direct);
    worst_std = std::max(worst_std, max_abs(x) > 0 ? e / max_abs(x) : e);
    EXPECT_LE(e, 1e-13 * max_abs(x)) << where << ": " << written << " vs " << direct;
  });
  std::printf("[ measured ] max |mean - direct| / max|x| = %.2e, max |std - direct| / max|x| = %.2e\n", worst_mean, worst_std);
}

TEST_F(RandomStudyStatistics, MinAndMaxEqualTheExtremesOfTheStoredValuesExactly) {
  // Arrange
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  h5_file f(results());
  ASSERT_TRUE(f.is_open());
  auto expect_same = [](double written, double direct, const std::vector<double>&, const std::string& where) {
    EXPECT_TRUE(same_value(written, direct)) << where << ": " << written << " vs " << direct;
  };

  // Act + Assert
  for_every_slice(f, "min", [](const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); }, expect_same);
  for_every_slice(f, "max", [](const std::vector<double>& x) { return *std::max_element(x.begin(), x.end()); }, expect_same);
}

TEST_F(RandomStudyStatistics, QuantilesEqualHyndmanFanType7OfTheStoredValuesExactly) {
  // Arrange
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  h5_file f(results());
  ASSERT_TRUE(f.is_open());
  const std::map<std::string, double> quantiles = {{"q05", 0.05}, {"q12.5", 0.125}, {"q50", 0.5}, {"q95", 0.95}, {"q100", 1.0}};

  // Act + Assert
  EXPECT_FALSE(f.has_attribute("/statistics", "quantile_rank_error")) << "60 members fit the quantile budget: exact";
  for (const auto& [name, p] : quantiles) {
    EXPECT_EQ(f.double_attribute("/statistics/" + name, "probability"), p) << name;
    for_every_slice(
        f, name,
        [p = p](std::vector<double> x) {
          std::sort(x.begin(), x.end());
          return numpy_linear_quantile(x, p);
        },
        [](double written, double direct, const std::vector<double>&, const std::string& where) {
          EXPECT_TRUE(same_value(written, direct)) << where << ": " << written << " vs " << direct;
        });
  }
}

TEST_F(RandomStudyStatistics, MeanStderrIsStdOverSqrtNAndCountIsTheMembers) {
  // Arrange
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  h5_file f(results());
  ASSERT_TRUE(f.is_open());

  // Act + Assert
  EXPECT_EQ(f.string_attribute("/", "mean_stderr_method"), "std/sqrt(n)");
  for_every_slice(
      f, "mean_stderr", [](const std::vector<double>& x) { return two_pass_std(x) / std::sqrt(static_cast<double>(x.size())); },
      [](double written, double direct, const std::vector<double>& x, const std::string& where) {
        EXPECT_LE(std::abs(written - direct), 1e-13 * max_abs(x)) << where << ": " << written << " vs " << direct;
      });
  const std::vector<std::int64_t> count = f.int64s("/statistics/mean/count");
  ASSERT_EQ(count.size(), f.doubles("/t").size() * 6);  // S x Y, Y = 2n + 2m + k = 6 (mu included)
  for (std::size_t k = 0; k < count.size(); ++k) EXPECT_EQ(count[k], 60) << "column " << k % 6 << " of save " << k / 6;
}

// numpy itself, through Debian's Python (the one with numpy and h5py; not the python3 first on PATH):
// statistics.hpp promises numpy.quantile(..., method="linear") bit for bit.
TEST_F(RandomStudyStatistics, QuantilesEqualNumpyQuantileBitForBit) {
  // Arrange
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const char* python = "/usr/bin/python3";
  if (!fs::exists(python)) GTEST_SKIP() << python << " not found";
  scratch_dir dir;
  write_text(dir / "check.py", R"(import sys
try:
    import h5py, numpy as np
except ImportError:
    sys.exit(77)
if tuple(int(x) for x in np.__version__.split(".")[:2]) < (1, 22):
    sys.exit(77)  # no method= argument before numpy 1.22
f = h5py.File(sys.argv[1], "r")
bad = 0
checked = 0
for name in ["q05", "q12.5", "q50", "q95", "q100"]:
    p = float(f["statistics"][name].attrs["probability"])
    for g in ["q", "v", "lambda", "mu"]:
        data = f[g][:]                     # [N, S, width]
        expected = np.quantile(data, p, axis=0, method="linear")
        written = f["statistics"][name][g][:]
        checked += written.size
        mism = np.count_nonzero(expected.view(np.uint64) != written.view(np.uint64))
        if mism:
            print(name, g, mism, "mismatches; first", expected.ravel()[0], written.ravel()[0])
        bad += mism
print("checked", checked, "values,", bad, "mismatches")
sys.exit(1 if bad else 0)
)");

  // Act
  const run_result r = run_program(dir, python, {"check.py", results().string()});

  // Assert
  if (r.exit_code == 77) GTEST_SKIP() << python << " has no numpy >= 1.22 or no h5py";
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::printf("[ numpy    ] %s", r.out.c_str());
}

// ---- randomized QMC: replicate-based standard errors ------------------------------------------------
TEST(LockstepStatistics, SobolMeanStderrIsTheSpreadOfTheFourReplicateMeans) {
  // Arrange: 4 replicates of 16 Sobol points; replicate r is members [16 r, 16 r + 16).
  const char* text = R"([model]
name = "pendulum"
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
sampler = "sobol"
members = 16
replicates = 4
seed = 9
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.5] }
"initial.omega0" = { uniform = [-1.0, 1.0] }
[output]
trajectories = true
statistics = ["mean"]
)";
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "sobol", text);

  // Assert
  ASSERT_EQ(r.exit_code, 0);
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  EXPECT_EQ(f.string_attribute("/", "mean_stderr_method"), "replicates");
  EXPECT_EQ(f.int64_attribute("/", "members"), 64);
  const std::size_t N = 64, S = f.doubles("/t").size();
  double worst = 0.0;
  for (const group_info& g : groups_of(f)) {
    const std::vector<double> stored = f.doubles("/" + g.name);
    const std::vector<double> stderr_written = f.doubles("/statistics/mean_stderr/" + g.name);
    const std::vector<double> mean_written = f.doubles("/statistics/mean/" + g.name);
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < g.width; ++c) {
        std::vector<double> replicate_means;
        for (std::size_t rep = 0; rep < 4; ++rep) {
          const std::vector<double> x = slice(stored, N, S, g.width, s, c, 16 * rep, 16);
          ASSERT_EQ(x.size(), 16u);
          double sum = 0.0;
          for (double v : x) sum += v;
          replicate_means.push_back(sum / 16.0);
        }
        const std::vector<double> all = slice(stored, N, S, g.width, s, c);
        const double scale = max_abs(all);
        const double expected = two_pass_std(replicate_means) / 2.0;  // sqrt(4) replicates
        const double e = std::abs(stderr_written[s * g.width + c] - expected);
        worst = std::max(worst, scale > 0 ? e / scale : e);
        const std::string where = g.name + "[" + std::to_string(s) + "][" + std::to_string(c) + "]";
        EXPECT_LE(e, 1e-13 * scale) << where << ": " << stderr_written[s * g.width + c] << " vs " << expected;
        // Not std / sqrt(64) (unless the two happen to coincide, which they do not here).
        const double naive = two_pass_std(all) / 8.0;
        if (scale > 0 && naive > 1e-9 * scale) {
          EXPECT_GT(std::abs(stderr_written[s * g.width + c] - naive), 1e-9 * scale) << where;
        }
        double sum = 0.0;
        for (double v : all) sum += v;
        EXPECT_LE(std::abs(mean_written[s * g.width + c] - sum / 64.0), 1e-13 * scale) << where;
      }
  }
  std::printf("[ measured ] max |mean_stderr - direct| / max|x| = %.2e\n", worst);
}

// ---- approximate quantiles beyond the memory budget --------------------------------------------------
// 5000 members x 5 saves x 6 values x 8 bytes = 1.2 MB of values > quantile_memory_mb = 1: the sketch
// (two blocks of 4096 and 904 members, the first compacted to 2048 items). Each reported quantile must
// be one of the slice's values whose sorted position lies within the reported rank error of
// h = p (n - 1) (statistics.hpp: |j - p (n - 1)| <= E + 1, quantile_rank_error = max (E + 1) / n).
TEST(LockstepStatistics, QuantilesBeyondTheMemoryBudgetStayWithinTheReportedRankError) {
  // Arrange
  const char* text = R"([model]
name = "pendulum"
[solver]
rtol = 1e-4
atol = 1e-4
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
members = 5000
seed = 2
[ensemble.vary]
"initial.theta0" = { uniform = [0.2, 1.4] }
"initial.omega0" = { normal = { mean = 0.0, std = 0.5 } }
[output]
trajectories = true
statistics = ["min", "max", "q05", "q50", "q95"]
quantile_memory_mb = 1
)";
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "sketch", text);

  // Assert
  ASSERT_EQ(r.exit_code, 0);
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  ASSERT_TRUE(f.has_attribute("/statistics", "quantile_rank_error")) << "the quantiles should be approximate";
  const double rank_error = f.double_attribute("/statistics", "quantile_rank_error");
  const double n_members = 5000.0;
  EXPECT_GT(rank_error, 0.0);
  EXPECT_LT(rank_error, 2.0 / 2048 + 1.0 / n_members) << "the a priori bound (ceil(log2 B) + 1) / k + 1 / n, B = 2";
  std::printf("[ measured ] quantile_rank_error %.3e (%.1f ranks of %g)\n", rank_error, rank_error * n_members, n_members);
  const std::size_t N = 5000, S = f.doubles("/t").size();
  long checked = 0, inexact = 0;
  for (const group_info& g : groups_of(f)) {
    const std::vector<double> stored = f.doubles("/" + g.name);
    for (const auto& [name, p] : std::map<std::string, double>{{"q05", 0.05}, {"q50", 0.5}, {"q95", 0.95}}) {
      const std::vector<double> written = f.doubles("/statistics/" + name + "/" + g.name);
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t c = 0; c < g.width; ++c) {
          std::vector<double> x = slice(stored, N, S, g.width, s, c);
          ASSERT_EQ(x.size(), N);
          std::sort(x.begin(), x.end());
          const double v = written[s * g.width + c];
          const auto lo = std::lower_bound(x.begin(), x.end(), v), hi = std::upper_bound(x.begin(), x.end(), v);
          const std::string where = name + "/" + g.name + "[" + std::to_string(s) + "][" + std::to_string(c) + "]";
          ASSERT_NE(lo, hi) << where << ": " << v << " is not one of the slice's values";
          const double first = static_cast<double>(lo - x.begin()), last = static_cast<double>(hi - x.begin() - 1);
          const double h = p * (n_members - 1);
          const double distance = h < first ? first - h : (h > last ? h - last : 0.0);
          EXPECT_LE(distance, rank_error * n_members + 1e-9) << where << ": positions [" << first << ", " << last
                                                             << "], h = " << h;
          ++checked;
          if (!same_value(v, numpy_linear_quantile(x, p))) ++inexact;
        }
    }
  }
  std::printf("[ measured ] %ld approximate quantiles checked, %ld differ from the exact type-7 value\n", checked, inexact);
  // min and max stay exact beyond the budget.
  for (const group_info& g : groups_of(f)) {
    const std::vector<double> stored = f.doubles("/" + g.name);
    const std::vector<double> mn = f.doubles("/statistics/min/" + g.name), mx = f.doubles("/statistics/max/" + g.name);
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t c = 0; c < g.width; ++c) {
        const std::vector<double> x = slice(stored, N, S, g.width, s, c);
        EXPECT_TRUE(same_value(mn[s * g.width + c], *std::min_element(x.begin(), x.end()))) << g.name;
        EXPECT_TRUE(same_value(mx[s * g.width + c], *std::max_element(x.begin(), x.end()))) << g.name;
      }
  }
}

// ---- determinism ---------------------------------------------------------------------------------------
// The chaotic double pendulum (where any difference in rounding grows fast), 40 random members, on
// serial, omp with 1 and 2 threads, and omp with chunks of 7: every dataset bit for bit the same.
TEST(LockstepStatistics, BackendThreadCountAndChunkSizeChangeNoBitOfAnyDataset) {
  // Arrange
  const char* text = R"([model]
name = "double_pendulum"
[time]
t1 = 2.0
save = { every = 0.1 }
[ensemble]
members = 40
seed = 4
[ensemble.vary]
"initial.theta1" = { uniform = [1.8, 2.2] }
"initial.theta2" = { uniform = [2.3, 2.7] }
[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q25", "q50", "q95"]
)";
  const std::vector<std::vector<std::string>> configurations = {
      {"--backend", "serial"},
      {"--backend", "omp", "--threads", "1"},
      {"--backend", "omp", "--threads", "2"},
      {"--backend", "omp", "--threads", "2", "--chunk-size", "7"},
  };
  scratch_dir dir;
  write_text(dir / "chaos.toml", text);

  // Act
  std::vector<std::string> outs;
  for (std::size_t k = 0; k < configurations.size(); ++k) {
    outs.push_back("out" + std::to_string(k));
    std::vector<std::string> args = {"run", "chaos.toml", "-o", outs.back()};
    args.insert(args.end(), configurations[k].begin(), configurations[k].end());
    const run_result r = run_lockstep(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Assert
  h5_file reference(dir / outs[0] / "results.h5");
  ASSERT_TRUE(reference.is_open());
  const std::vector<std::string> names = reference.datasets();
  EXPECT_GE(names.size(), 40u);
  for (const char* expected : {"/q", "/v", "/lambda", "/members/status", "/members/final_q", "/statistics/q25/q",
                               "/statistics/mean_stderr/lambda", "/statistics/std/count"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  const std::string reference_csv = read_text(dir / outs[0] / "members.csv");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    h5_file other(dir / outs[k] / "results.h5");
    ASSERT_TRUE(other.is_open());
    EXPECT_EQ(other.datasets(), names) << outs[k];
    for (const std::string& name : names) {
      if (reference.is_integer(name)) {
        EXPECT_EQ(other.int64s(name), reference.int64s(name)) << name << " differs in configuration " << k;
      } else {
        std::size_t first = 0;
        const long mismatches = count_mismatches(other.doubles(name), reference.doubles(name), &first);
        EXPECT_EQ(mismatches, 0) << name << " differs in configuration " << k << " (first at flat index " << first << ")";
      }
    }
    EXPECT_EQ(read_text(dir / outs[k] / "members.csv"), reference_csv) << outs[k];
  }
  h5_file serial(dir / outs[0] / "results.h5"), one(dir / outs[1] / "results.h5"), two(dir / outs[2] / "results.h5");
  EXPECT_EQ(serial.string_attribute("/", "backend"), "serial");
  EXPECT_EQ(one.string_attribute("/", "backend"), "omp");
  EXPECT_EQ(one.int64_attribute("/", "threads"), 1);
  EXPECT_EQ(two.int64_attribute("/", "threads"), 2);
}

}  // namespace
