// End-to-end tests of a study's [lyapunov] section through the built `lockstep` binary: the
// exact exponents of the strongly damped linear oscillator read back from results.h5, the layout of
// /lyapunov and the Lyapunov columns of members.csv, the plain solve left untouched by the section,
// exponents bitwise independent of threads, chunking and backend on a chaotic model, the clone
// estimate, refused [lyapunov] input (exit 2, file:line:col and the key), a checkpointed run's
// /lyapunov and members.csv as the plain run's, and `lockstep plot`'s Lyapunov figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

using namespace lockstep::cli_test;

// linear_oscillator with d = 5: both modes over-damped, four distinct exponents, exact to five
// decimals (tests/lyapunov/spectrum_test.cpp computes them
// from the reduced system's eigenvalues and checks these decimals to 6e-6).
const double exact[4] = {-0.34211, -1.07544, -3.92455, -4.65789};

// A 2 x 2 grid of initial positions (the exponents of a linear system do not depend on the start), on
// the library's default study pair Radau IIA 5 / index 3, at the required horizon and bound: 1e-4 at
// t = 300 with a transient of 20 (the run takes about 1 s). The error of the discrete QR estimate on a
// constant-coefficient system comes from the basis' misalignment with the Schur vectors, which decays
// like e^(-g t) with g = 0.73 the smallest gap between exponents (after the transient: e^(-14.6) ~ 5e-7,
// divided by the averaging time 280), plus the solver's error at rtol 1e-8 (measured: 1.1e-6 here).
constexpr const char* oscillator_study = R"(# linear oscillator, strongly damped
[model]
name = "linear_oscillator"
params = { d = 5.0 }

[solver]
method = "radau5"
formulation = "index3"
rtol = 1e-8
atol = 1e-8

[time]
t1 = 300.0
save = { every = 50.0 }

[ensemble]
sampler = "grid"
[ensemble.vary]
"initial.x0" = { grid = [1.0, -0.4] }
"initial.y0" = { grid = [0.0, 0.7] }
)";
constexpr const char* oscillator_lyapunov = R"(
[lyapunov]
exponents = "all"
renormalize = 1.0
transient = 20.0
)";

class OscillatorLyapunovStudy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<scratch_dir>();
    run_study(*dir_, "oscillator", std::string(oscillator_study) + oscillator_lyapunov,
              {"--backend", "omp", "--threads", "2", "--chunk-size", "3", "--quiet"});
    run_study(*dir_, "plain", oscillator_study, {"--backend", "omp", "--threads", "2", "--chunk-size", "3", "--quiet"}, 0,
              "plain-out");
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static fs::path out() { return *dir_ / "out"; }

  static std::unique_ptr<scratch_dir> dir_;
};
std::unique_ptr<scratch_dir> OscillatorLyapunovStudy::dir_;

TEST_F(OscillatorLyapunovStudy, EveryMemberFindsTheExactExponentsInDecreasingOrder) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());

  // Act
  const std::vector<double> exponents = f.doubles("/lyapunov/exponents");
  const std::vector<std::int32_t> status = f.int32s("/lyapunov/status");

  // Assert
  ASSERT_EQ(f.dims("/lyapunov/exponents"), (std::vector<hsize_t>{4, 4}));
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(status[i], 1) << "member " << i;  // member_status::success
    for (std::size_t j = 0; j < 4; ++j) {
      std::printf("[ measured ] member %zu lambda_%zu = %.7f (exact %.5f, error %.1e)\n", i, j + 1, exponents[i * 4 + j],
                  exact[j], exponents[i * 4 + j] - exact[j]);
      EXPECT_NEAR(exponents[i * 4 + j], exact[j], 1e-4) << "member " << i << ", lambda_" << j + 1;
    }
  }
}

TEST_F(OscillatorLyapunovStudy, ResultsHoldTheHistoryAndTheSettingsAsAttributes) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());
  const long H = 300 / 1 + 2;  // io::lyapunov_history_length: floor((t1 - t0) / renormalize) + 2

  // Act
  const std::vector<double> exponents = f.doubles("/lyapunov/exponents");
  const std::vector<double> history = f.doubles("/lyapunov/history");
  const std::vector<double> history_t = f.doubles("/lyapunov/history_t");
  const std::vector<double> t_start = f.doubles("/lyapunov/t_start");

  // Assert
  EXPECT_EQ(f.string_attribute("/lyapunov", "method"), "qr");
  EXPECT_EQ(f.string_attribute("/lyapunov", "metric"), "mass");
  EXPECT_EQ(f.double_attribute("/lyapunov", "renormalize"), 1.0);
  EXPECT_EQ(f.double_attribute("/lyapunov", "transient"), 20.0);
  EXPECT_EQ(f.int64_attribute("/lyapunov", "dimension"), 4);
  EXPECT_EQ(f.int64_attribute("/lyapunov", "exponents"), 4);
  EXPECT_EQ(f.int64_attribute("/lyapunov", "history_length"), H);
  EXPECT_FALSE(f.has_attribute("/lyapunov", "separation"));
  ASSERT_EQ(f.dims("/lyapunov/history_t"), (std::vector<hsize_t>{4, static_cast<hsize_t>(H)}));
  ASSERT_EQ(f.dims("/lyapunov/history"), (std::vector<hsize_t>{4, static_cast<hsize_t>(H), 4}));
  for (std::size_t i = 0; i < 4; ++i) {
    // The averages start at the first re-orthonormalization at or after t0 + transient.
    EXPECT_GE(t_start[i], 20.0);
    EXPECT_LT(t_start[i], 21.0);
    long rows = 0;
    double previous = t_start[i];
    for (long r = 0; r < H; ++r) {
      const double t = history_t[i * H + r];
      if (std::isnan(t)) {
        for (std::size_t j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(history[(i * H + r) * 4 + j]));  // padding
        continue;
      }
      EXPECT_EQ(rows, r) << "padding only after the last estimate";
      EXPECT_GT(t, previous);
      previous = t;
      ++rows;
    }
    // About one estimate per time unit after the transient, the last one at t1 and equal to the result.
    EXPECT_GE(rows, 278);
    EXPECT_LE(rows, H);
    EXPECT_EQ(history_t[i * H + rows - 1], 300.0);
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_TRUE(same_value(history[(i * H + rows - 1) * 4 + j], exponents[i * 4 + j])) << "member " << i;
  }
}

TEST_F(OscillatorLyapunovStudy, MembersCsvHasTheExponentsBitForBit) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());
  const std::vector<double> exponents = f.doubles("/lyapunov/exponents");

  // Act
  const csv_table csv = read_csv(out() / "members.csv");

  // Assert
  ASSERT_EQ(csv.rows.size(), 4u);
  const int status = csv.column("lyapunov_status");
  ASSERT_GE(status, 0);
  EXPECT_EQ(csv.column("lambda_5"), -1);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(csv.rows[i][static_cast<std::size_t>(status)], "success");
    for (std::size_t j = 0; j < 4; ++j) {
      const int c = csv.column("lambda_" + std::to_string(j + 1));
      ASSERT_GE(c, 0);
      EXPECT_TRUE(same_value(parse_double(csv.rows[i][static_cast<std::size_t>(c)]), exponents[i * 4 + j]));
    }
  }
}

// The Lyapunov run comes on top of the plain solve, which stays exactly as without the section.
TEST_F(OscillatorLyapunovStudy, ThePlainSolveIsBitwiseWhatItIsWithoutTheSection) {
  h5_file with(out() / "results.h5"), without(*dir_ / "plain-out" / "results.h5");
  ASSERT_TRUE(with.is_open());
  ASSERT_TRUE(without.is_open());
  EXPECT_FALSE(without.exists("/lyapunov"));
  for (const char* d : {"/members/final_q", "/members/final_v", "/members/final_t", "/statistics/mean/q", "/statistics/q95/v"})
    EXPECT_EQ(count_mismatches(with.doubles(d), without.doubles(d)), 0) << d;
  EXPECT_EQ(with.int64s("/members/steps"), without.int64s("/members/steps"));
}

// ---- determinism on a chaotic model ------------------------------------------------------------------

// A 3 x 2 grid of double pendulum releases, all four exponents, t = 10: chaotic members amplify any
// difference in rounding, so equal bits mean the same arithmetic.
constexpr const char* pendulum_study = R"([model]
name = "double_pendulum"

[time]
t1 = 10.0
save = { every = 5.0 }

[ensemble]
sampler = "grid"
[ensemble.vary]
"initial.theta1" = { grid = [1.5, 2.0, 2.5] }
"initial.theta2" = { grid = [2.0, 2.5] }

[lyapunov]
renormalize = 0.5
transient = 1.0
)";

TEST(LyapunovStudy, ExponentsAreBitwiseTheSameForAnyThreadCountChunkingAndBackend) {
  // Arrange
  scratch_dir dir;
  const std::vector<std::vector<std::string>> runs = {
      {"--backend", "omp", "--threads", "1"},
      {"--backend", "omp", "--threads", "2", "--chunk-size", "4"},
      {"--backend", "serial", "--chunk-size", "5"},
  };

  // Act
  std::vector<std::vector<double>> exponents, history;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::string> extra = runs[r];
    extra.push_back("--quiet");
    run_study(dir, "pendulum", pendulum_study, extra, 0, "out" + std::to_string(r));
    h5_file f(dir / ("out" + std::to_string(r)) / "results.h5");
    ASSERT_TRUE(f.is_open());
    exponents.push_back(f.doubles("/lyapunov/exponents"));
    history.push_back(f.doubles("/lyapunov/history"));
  }

  // Assert
  ASSERT_EQ(exponents[0].size(), 6u * 4u);
  for (double x : exponents[0]) EXPECT_TRUE(std::isfinite(x));
  std::printf("[ measured ] double pendulum theta = (1.5, 2.0), t = 10: %.5f %.5f %.5f %.5f\n", exponents[0][0],
              exponents[0][1], exponents[0][2], exponents[0][3]);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    EXPECT_EQ(count_mismatches(exponents[r], exponents[0]), 0) << "run " << r;
    EXPECT_EQ(count_mismatches(history[r], history[0]), 0) << "run " << r;
  }
}

// ---- a member whose spectrum fails --------------------------------------------------------------------

// Three oscillators with damping 0.2, 5 and 1 on the default Radau IIA / index 3 at rtol 1e-8: their
// Lyapunov runs take 2858, 3546 and 2747 accepted steps (the tangents' error test keeps the steps small
// after the state has decayed), their plain solves at most 1189. A step budget of 3200 therefore stops
// the second member's Lyapunov run only (status max_steps), while every plain solve succeeds.
constexpr const char* damping_study = R"([model]
name = "linear_oscillator"

[solver]
rtol = 1e-8
atol = 1e-8

[time]
t1 = 50.0
save = { every = 10.0 }

[ensemble]
sampler = "grid"
[ensemble.vary]
"params.d" = { grid = [0.2, 5.0, 1.0] }

[lyapunov]
transient = 5.0
)";

TEST(LyapunovStudy, ASpectrumStoppedByMaxStepsGivesItsStatusAndItsEstimateAndLeavesTheOtherMembersBitwiseAlone) {
  // Arrange
  scratch_dir dir;
  const std::string limited = replace_key_value(damping_study, "atol", "1e-8\nmax_steps = 3200");

  // Act
  run_study(dir, "unlimited", damping_study, {"--quiet"}, 0, "unlimited");
  const run_result r = run_study(dir, "limited", limited, {"--threads", "2"}, 1, "limited");
  h5_file all(dir / "unlimited" / "results.h5"), some(dir / "limited" / "results.h5");
  ASSERT_TRUE(all.is_open());
  ASSERT_TRUE(some.is_open());

  // Assert: exit 1 (results written), the failure counted in the summary, the plain solves untouched.
  EXPECT_NE(r.err.find("Lyapunov exponents (qr): 1 of 3 members failed"), std::string::npos) << r.err;
  EXPECT_EQ(some.int32s("/members/status"), (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_EQ(some.int32s("/lyapunov/status"), (std::vector<std::int32_t>{1, 2, 1}));  // success, max_steps, success
  const std::vector<double> e_all = all.doubles("/lyapunov/exponents"), e_some = some.doubles("/lyapunov/exponents");
  ASSERT_EQ(e_some.size(), 12u);
  // The stopped member keeps its running estimates and reports the last one as its exponents (not NaN);
  // the summary's reason says over which time it averages and how to raise max_steps.
  const long H = some.int64_attribute("/lyapunov", "history_length");
  const std::vector<double> history_t = some.doubles("/lyapunov/history_t"), history = some.doubles("/lyapunov/history");
  EXPECT_TRUE(std::isfinite(history_t[static_cast<std::size_t>(H)]));
  long last = -1;  // the stopped member's last estimate (the history is NaN-padded)
  for (long row = 0; row < H; ++row)
    if (std::isfinite(history_t[static_cast<std::size_t>(H + row)])) last = row;
  ASSERT_GE(last, 0);
  for (std::size_t j = 0; j < 4; ++j) {
    EXPECT_TRUE(same_value(e_some[4 + j], history[static_cast<std::size_t>((H + last) * 4) + j]))
        << "lambda_" << j + 1 << " of the stopped member";
    EXPECT_TRUE(same_value(e_some[j], e_all[j])) << "member 0, lambda_" << j + 1;
    EXPECT_TRUE(same_value(e_some[8 + j], e_all[8 + j])) << "member 2, lambda_" << j + 1;
  }
  EXPECT_NE(r.err.find("raise max_steps"), std::string::npos) << r.err;
  const csv_table csv = read_csv(dir / "limited" / "members.csv");
  ASSERT_EQ(csv.rows.size(), 3u);
  EXPECT_EQ(csv.rows[1][static_cast<std::size_t>(csv.column("lyapunov_status"))], "max_steps");
  EXPECT_NE(csv.rows[1][static_cast<std::size_t>(csv.column("lambda_1"))], "nan");
  // Where each run stopped: t1 for the finished ones; for the stopped one, before t1 and at or after
  // its last estimate — the estimate covers [t_start, t_end] (results.h5 and members.csv alike).
  const std::vector<double> t_end = some.doubles("/lyapunov/t_end"), t_start = some.doubles("/lyapunov/t_start");
  ASSERT_EQ(t_end.size(), 3u);
  EXPECT_EQ(t_end[0], t_end[2]);
  EXPECT_GT(t_end[0], t_end[1]);
  EXPECT_GE(t_end[1], history_t[static_cast<std::size_t>(H + last)]);
  EXPECT_GT(t_end[1], t_start[1]);
  EXPECT_EQ(std::stod(csv.rows[1][static_cast<std::size_t>(csv.column("lyapunov_t_end"))]), t_end[1]);
  EXPECT_EQ(std::stod(csv.rows[1][static_cast<std::size_t>(csv.column("lyapunov_t_start"))]), t_start[1]);
}

// ---- the clone estimate ------------------------------------------------------------------------------

// On the linear oscillator the clone's separation evolves exactly linearly, so it finds l1 = -0.34211
// up to its nonlinearity-free errors: alignment (as for QR) and the solver's error over the separation
// (rtol 1e-10 / 1e-6 per interval); the bound of tests/lyapunov, 1e-3 at t = 300.
TEST(LyapunovStudy, CloneMethodFindsTheLargestExponentOfTheOscillator) {
  // Arrange
  scratch_dir dir;
  const std::string text = R"([model]
name = "linear_oscillator"
params = { d = 5.0 }

[solver]
rtol = 1e-10
atol = 1e-10

[time]
t1 = 300.0

[lyapunov]
method = "clone"
separation = 1e-6
transient = 20.0
)";

  // Act
  run_study(dir, "clone", text, {"--quiet"});
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const csv_table csv = read_csv(dir / "out" / "members.csv");

  // Assert
  ASSERT_EQ(f.dims("/lyapunov/exponents"), (std::vector<hsize_t>{1, 1}));
  const double l1 = f.doubles("/lyapunov/exponents")[0];
  std::printf("[ measured ] clone l1 = %.6f (exact -0.34211)\n", l1);
  EXPECT_NEAR(l1, exact[0], 1e-3);
  EXPECT_EQ(f.string_attribute("/lyapunov", "method"), "clone");
  EXPECT_EQ(f.double_attribute("/lyapunov", "separation"), 1e-6);
  EXPECT_EQ(f.int64s("/lyapunov/steps"), (std::vector<std::int64_t>{-1}));
  EXPECT_EQ(f.doubles("/lyapunov/t_start"), (std::vector<double>{20.0}));
  EXPECT_GE(csv.column("lambda_1"), 0);
  EXPECT_EQ(csv.column("lambda_2"), -1);
}

// ---- refused input ---------------------------------------------------------------------------------

struct bad_case {
  std::string solver;    // extra [solver] lines
  std::string lyapunov;  // the [lyapunov] lines; the offending one is line `line` of them (1-based)
  int line;
  int column;
  std::string message;   // a part of the diagnostic after "error: "
};

TEST(LyapunovStudy, BadLyapunovInputExitsWithTwoNamingFileLineColumnAndKey) {
  const std::vector<bad_case> cases = {
      {"", "renormalise = 0.5", 1, 1, "unknown key \"renormalise\" in [lyapunov]; did you mean \"renormalize\"?"},
      {"", "exponents = 5", 1, 13, "[lyapunov] exponents must be an integer between 1 and 4"},
      {"", "exponents = \"some\"", 1, 13, "[lyapunov] exponents must be an integer between 1 and 4"},
      {"", "exponents = 2.5", 1, 13, "[lyapunov] exponents must be an integer (got 2.5)"},
      {"", "exponents = 0", 1, 13, "(got 0)"},
      {"", "renormalize = 0", 1, 15, "[lyapunov] renormalize must be > 0 (got 0)"},
      {"", "renormalize = \"1\"", 1, 15, "[lyapunov] renormalize must be a number"},
      {"", "renormalize = 1e-6", 1, 1, "[lyapunov] renormalize = 1e-06 gives more than 1000000 re-orthonormalizations"},
      {"", "transient = 1\nrenormalize = 1e-300", 2, 1, "[lyapunov] renormalize = 1e-300 gives more than 1000000"},
      {"", "transient = -1", 1, 13, "[lyapunov] transient must be >= 0 (got -1)"},
      {"", "transient = 10", 1, 13, "[lyapunov] transient must be < t1 - t0 = 10 (got 10)"},
      {"", "renormalize = 1\ntransient = 9.5", 2, 13, "leaves no re-orthonormalization to average over"},
      {"", "method = \"qrr\"", 1, 10, "[lyapunov] unknown Lyapunov method \"qrr\"; did you mean \"qr\"?"},
      {"", "metric = \"mas\"", 1, 10, "[lyapunov] unknown metric \"mas\"; did you mean \"mass\"?"},
      {"", "history = 1", 1, 11, "[lyapunov] history must be true or false"},
      {"", "separation = 1e-6", 1, 1, "[lyapunov] separation applies to method \"clone\" only"},
      {"", "method = \"clone\"\nexponents = 2", 2, 13, "exponents must be 1 (got 2)"},
      {"", "method = \"clone\"\nseparation = 0", 2, 14, "[lyapunov] separation must be > 0 (got 0)"},
      {"method = \"rhoinf\"\n", "method = \"qr\"", 1, 10, "[lyapunov] method = \"qr\" propagates tangents, which [solver] method \"rhoinf\""},
      {"projection = \"coordinate\"\n", "exponents = 2", 0, 1, "tangent propagation needs projection = none"},
  };
  scratch_dir dir;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const bad_case& k = cases[c];
    SCOPED_TRACE(k.lyapunov);
    // Arrange: [lyapunov] is the last table; its header is on line `header`.
    const std::string head = "[model]\nname = \"double_pendulum\"\n[solver]\n" + k.solver + "[time]\nt1 = 10.0\n";
    const int header = static_cast<int>(std::count(head.begin(), head.end(), '\n')) + 1;
    const std::string text = head + "[lyapunov]\n" + k.lyapunov + "\n";
    const std::string stem = "bad" + std::to_string(c);

    // Act
    const run_result r = run_study(dir, stem, text, {}, 2, "out" + std::to_string(c));

    // Assert: the diagnostic's position is the key's or value's (line 0: the [lyapunov] header).
    const int line = k.line == 0 ? header : header + k.line;
    const std::string where = stem + ".toml:" + std::to_string(line) + ":" + std::to_string(k.column) + ": error: ";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected " << where << " in:\n" << r.err;
    EXPECT_NE(r.err.find(k.message), std::string::npos) << "expected '" << k.message << "' in:\n" << r.err;
    EXPECT_FALSE(fs::exists(dir / ("out" + std::to_string(c)))) << "nothing is written";
  }
}

// Checkpointed runs journal the Lyapunov values with the members (host/cli/run_study_journaled.hpp);
// tests/reliability/lyapunov_journal_test kills, resumes and splits them across MPI ranks.
TEST(LyapunovStudy, ACheckpointedRunWritesTheSameLyapunovResultsAsThePlainRun) {
  // Arrange
  scratch_dir dir;

  // Act
  run_study(dir, "plain", pendulum_study, {"--quiet"}, 0, "plain");
  run_study(dir, "ckpt", pendulum_study, {"--checkpoint-every", "60", "--chunk-size", "4", "--quiet"}, 0, "ckpt");
  h5_file plain(dir / "plain" / "results.h5"), ckpt(dir / "ckpt" / "results.h5");
  ASSERT_TRUE(plain.is_open());
  ASSERT_TRUE(ckpt.is_open());

  // Assert
  for (const char* d : {"/lyapunov/exponents", "/lyapunov/t_start", "/lyapunov/history_t", "/lyapunov/history"}) {
    ASSERT_FALSE(plain.doubles(d).empty()) << d;
    EXPECT_EQ(count_mismatches(ckpt.doubles(d), plain.doubles(d)), 0) << d;
  }
  for (const char* d : {"/lyapunov/status", "/lyapunov/renormalizations", "/lyapunov/steps"})
    EXPECT_EQ(ckpt.int64s(d), plain.int64s(d)) << d;
  EXPECT_EQ(read_text(dir / "ckpt" / "members.csv"), read_text(dir / "plain" / "members.csv"));
  EXPECT_FALSE(fs::exists(dir / "ckpt" / "checkpoint")) << "a completed run removes its checkpoint";
}

// ---- lockstep plot -----------------------------------------------------------------------------------

TEST_F(OscillatorLyapunovStudy, PlotDrawsTheConvergenceAndTheLargestExponentOverTheGrid) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  // Arrange
  const fs::path figures = *dir_ / "figures";

  // Act
  const run_result r = run_lockstep(*dir_, {"plot", (out() / "results.h5").string(), "-o", figures.string(), "--member", "3"});

  // Assert
  if (r.exit_code == 2 && r.err.find("needs numpy, h5py and matplotlib") != std::string::npos)
    GTEST_SKIP() << "matplotlib/h5py missing: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* png : {"lyapunov_convergence.png", "lyapunov_spectrum.png", "heatmap_lambda_1.png"}) {
    EXPECT_TRUE(fs::exists(figures / png)) << png << "\n" << r.out << r.err;
    if (fs::exists(figures / png)) {
      EXPECT_GT(fs::file_size(figures / png), 1000u) << png;
    }
    EXPECT_NE(r.out.find(png), std::string::npos) << "the plot command lists what it wrote";
  }
  // A member outside the ensemble is refused like any other bad argument.
  const run_result bad = run_lockstep(*dir_, {"plot", (out() / "results.h5").string(), "-o", figures.string(), "--member", "4"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--member: 4 is out of range"), std::string::npos) << bad.err;
}

}  // namespace
