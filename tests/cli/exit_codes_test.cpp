// End-to-end tests of the exit codes of `lockstep run` (host/cli/run_study.hpp):
//   1  some members failed: every result still written, the failures in /members/status;
//   2  a malformed study file or command line: the diagnostic (file:line:col for a study) on stderr,
//      nothing on stdout, and nothing written — no output directory left behind;
//   3  the results could not be written (LOCKSTEP_IO_FAIL_AFTER_BYTES, host/io/output_file.hpp): the
//      message names the path, no results.h5, members.csv, study copy or temporary is left, and the
//      output directory is removed if the run created it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "host/io/study_file.hpp"
#include "in_process.hpp"
#include "lockstep/model/pendulum.hpp"

#ifndef LOCKSTEP_TEST_HAVE_CUDA
#define LOCKSTEP_TEST_HAVE_CUDA 0
#endif

namespace {

using namespace lockstep;
using namespace lockstep::cli_test;

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// ---- exit 1: some members fail ---------------------------------------------------------------------
// A rod of length 0 makes the constraint gradient G = q vanish at the start (q0 = 0): the row is
// dropped there, the bob falls away from the constraint it can no longer impose, and those members
// end with singular_matrix after their first step (stepper/member.hpp, dropped_rows_hold); the others
// are ordinary pendulums.
constexpr const char* failing_study = R"([model]
name = "pendulum"
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
sampler = "grid"
[ensemble.vary]
"params.L" = { grid = [1.0, 0.0, 0.5] }
"initial.theta0" = { grid = [0.5, 1.0] }
[output]
trajectories = true
)";

TEST(LockstepExitCodes, SomeMembersFailingGiveExitOneWithCompleteResults) {
  // Arrange
  using Model = models::pendulum;
  scratch_dir dir;
  const io::study_spec spec = io::parse_study(failing_study, "failing.toml");

  // Act
  const run_result r = run_study(dir, "failing", failing_study, {}, 1);

  // Assert: all outputs, every member's status as solve_member has it
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 6u);
  const auto names = f.string_attributes("/members/status", "names");
  long failed = 0, mismatches = 0;
  for (long i = 0; i < 6; ++i) {
    const auto I = static_cast<std::size_t>(i);
    const bool zero_length = d.inputs[2 * I] == 0.0;
    EXPECT_EQ(d.status[I] != static_cast<int>(member_status::success), zero_length)
        << "member " << i << " (L = " << d.inputs[2 * I] << "): " << names.at(static_cast<std::size_t>(d.status[I]));
    if (zero_length) ++failed;
    const std::vector<double> varied(d.inputs.begin() + 2 * i, d.inputs.begin() + 2 * i + 2);
    mismatches += expect_member_bitwise<Model>(d, i, spec.save_times.size(), solve_in_process<Model>(spec, setup_member<Model>(spec, varied)));
  }
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(mismatches, 0);
  // The summary counts the failures by status name.
  const std::string failed_name = names.at(static_cast<std::size_t>(d.status[2]));
  EXPECT_NE(r.err.find("6 members: 4 succeeded, 2 failed (2 " + failed_name + ")"), std::string::npos) << r.err;
  // members.csv has the same statuses.
  const csv_table csv = read_csv(dir / "out" / "members.csv");
  ASSERT_EQ(csv.rows.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(csv.rows[i].at(3), names.at(static_cast<std::size_t>(d.status[i])));
  // Statistics count only the values that exist, and the mean is theirs.
  const std::vector<std::int64_t> count = f.int64s("/statistics/mean/count");
  const std::vector<double> mean_q = f.doubles("/statistics/mean/q");
  const std::size_t S = spec.save_times.size();
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t c = 0; c < 2; ++c) {
      std::vector<double> values;
      for (std::size_t i = 0; i < 6; ++i)
        if (!std::isnan(d.q[(i * S + s) * 2 + c])) values.push_back(d.q[(i * S + s) * 2 + c]);
      EXPECT_EQ(count[s * 6 + c], static_cast<std::int64_t>(values.size())) << "save " << s << " q" << c;
      // At t0 every member has its point (a bob at its pivot is a consistent start); after it, the two
      // that failed have none.
      EXPECT_EQ(values.size(), s == 0 ? 6u : 4u) << "save " << s << " q" << c;
      double sum = 0.0, scale = 0.0;
      for (double v : values) sum += v, scale = std::max(scale, std::abs(v));
      EXPECT_LE(std::abs(mean_q[s * 2 + c] - sum / static_cast<double>(values.size())), 1e-13 * scale)
          << "save " << s << " q" << c;
    }
}

// A strongly damped oscillator (d = 2000: a decay rate of 2000 per second) is stiff: the explicit
// method's steps stay at its stability limit and the member runs out of max_steps, and the summary says
// what that may mean; the lightly damped member finishes, and Radau IIA finishes both, as auto does.
constexpr const char* stiff_member_study = R"([model]
name = "linear_oscillator"
[solver]
method = "{method}"
max_steps = 2000
[time]
t1 = 10.0
[ensemble]
sampler = "grid"
[ensemble.vary]
"params.d" = { grid = [0.2, 2000.0] }
)";

TEST(LockstepExitCodes, TheExplicitMethodsMembersThatRunOutOfStepsGetAHint) {
  scratch_dir dir;
  const auto study = [](const std::string& method) {
    std::string text = stiff_member_study;
    return text.replace(text.find("{method}"), 8, method);
  };
  const run_result explicit_run = run_study(dir, "dopri5", study("dopri5"), {}, 1, "explicit");
  EXPECT_NE(explicit_run.err.find("2 members: 1 succeeded, 1 failed (1 max_steps)"), std::string::npos) << explicit_run.err;
  EXPECT_NE(explicit_run.err.find("1 member of the explicit method dopri5 ran out of steps"), std::string::npos)
      << explicit_run.err;
  EXPECT_NE(explicit_run.err.find("run them with radau5 or bdf"), std::string::npos) << explicit_run.err;
  EXPECT_NE(explicit_run.err.find("1 member of the explicit method dopri5 turned stiff"), std::string::npos)
      << explicit_run.err;
  const run_result implicit_run = run_study(dir, "radau5", study("radau5"), {}, 0, "implicit");
  EXPECT_EQ(implicit_run.err.find("ran out of steps"), std::string::npos) << implicit_run.err;
  // Auto switches the stiff member to Radau IIA 5, and both finish.
  const run_result auto_run = run_study(dir, "auto", study("auto"), {}, 0, "auto");
  EXPECT_NE(auto_run.err.find("2 members: 2 succeeded"), std::string::npos) << auto_run.err;
  EXPECT_NE(auto_run.err.find("method auto: 1 of 2 members switched between dopri5 and Radau IIA 5 (1 switch)"),
            std::string::npos)
      << auto_run.err;
}

TEST(LockstepExitCodes, EveryMemberFailingStillWritesAllResultsAndExitsOne) {
  // Arrange: a step budget far too small for t1 = 2.
  const char* text = R"([model]
name = "pendulum"
[solver]
max_steps = 3
[time]
t1 = 2.0
save = { every = 0.5 }
[ensemble]
members = 5
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.0] }
[output]
trajectories = true
statistics = ["mean", "std", "q50"]
)";
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "starved", text, {}, 1);

  // Assert
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(d.status[i], static_cast<int>(member_status::max_steps)) << "member " << i;
    EXPECT_LT(d.final_t[i], 2.0) << "member " << i;
    EXPECT_EQ(d.steps[i], 3) << "member " << i;
  }
  EXPECT_NE(r.err.find("5 members: 0 succeeded, 5 failed (5 max_steps)"), std::string::npos) << r.err;
  EXPECT_EQ(read_csv(dir / "out" / "members.csv").rows.size(), 5u);
  // Every slice: count = the values present; mean and q50 NaN exactly where there is none.
  const std::size_t S = f.doubles("/t").size();
  const std::vector<std::int64_t> count = f.int64s("/statistics/mean/count");
  const std::vector<double> mean_q = f.doubles("/statistics/mean/q"), median_q = f.doubles("/statistics/q50/q");
  long empty_slices = 0;
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t c = 0; c < 2; ++c) {
      std::int64_t present = 0;
      for (std::size_t i = 0; i < 5; ++i) present += std::isnan(d.q[(i * S + s) * 2 + c]) ? 0 : 1;
      EXPECT_EQ(count[s * 6 + c], present) << "save " << s;
      EXPECT_EQ(std::isnan(mean_q[s * 2 + c]), present == 0) << "save " << s;
      EXPECT_EQ(std::isnan(median_q[s * 2 + c]), present == 0) << "save " << s;
      if (present == 0) ++empty_slices;
    }
  EXPECT_EQ(count[0], 5) << "every member has its initial values (t = t0 is a save time)";
  EXPECT_GT(empty_slices, 0) << "3 steps should not reach t1 = 2";
}

// ---- exit 2: malformed study files --------------------------------------------------------------------
struct malformed_case {
  const char* what;      // the mistake
  const char* text;      // bad.toml
  const char* location;  // "line:column" of the diagnostic
  const char* fragment;  // a distinctive part of its message
};

// Lines 1-4 of most cases; the mistake follows on line 5 or later.
#define BASE "[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n"

const malformed_case malformed_cases[] = {
    {"TOML syntax error, two values on one line", BASE "[solver]\nrtol = 1e-6 1e-7\n", "6:13", "invalid TOML"},
    {"TOML syntax error, table defined twice", BASE "[time]\nt0 = 0.0\n", "5:1", "invalid TOML"},
    {"empty file", "", "1:1", "missing [model]"},
    {"comments only", "# nothing here\n", "1:1", "missing [model]"},
    {"model given as a string", "model = \"pendulum\"\n[time]\nt1 = 1\n", "1:9", "\"model\" must be a table, written [model]"},
    {"model without a name", "[model]\nparams = { L = 2.0 }\n[time]\nt1 = 1\n", "1:1", "[model] needs name = a built-in model"},
    {"unknown model close to a known one", "[model]\nname = \"pendulun\"\n[time]\nt1 = 1\n", "2:8",
     "unknown model \"pendulun\"; did you mean \"pendulum\"?"},
    {"unknown model close to nothing", "[model]\nname = \"spaceship\"\n[time]\nt1 = 1\n", "2:8",
     "unknown model \"spaceship\"; built-in models: pendulum, double_pendulum"},
    {"model name not a string", "[model]\nname = [\"pendulum\"]\n[time]\nt1 = 1\n", "2:8", "[model] name must be a string"},
    {"unknown parameter", "[model]\nname = \"pendulum\"\nparams = { length = 2.0 }\n[time]\nt1 = 1\n", "3:12",
     "unknown parameter \"length\" of model \"pendulum\""},
    {"parameter not a number", "[model]\nname = \"pendulum\"\nparams = { L = true }\n[time]\nt1 = 1\n", "3:16",
     "[model.params] L must be a number"},
    {"unknown initial input", "[model]\nname = \"pendulum\"\ninitial = { theta = 0.5 }\n[time]\nt1 = 1\n", "3:13",
     "unknown initial input \"theta\" of model \"pendulum\"; did you mean \"theta0\"?"},
    {"misspelt top-level table", BASE "[sovler]\n", "5:2", "unknown key \"sovler\" at the top level; did you mean \"solver\"?"},
    {"unknown key in [solver]", BASE "[solver]\nreltol = 1e-6\n", "6:1", "unknown key \"reltol\" in [solver]"},
    {"negative rtol", BASE "[solver]\nrtol = -1e-6\n", "6:8", "[solver] rtol must be > 0"},
    {"rtol a string", BASE "[solver]\nrtol = \"tight\"\n", "6:8", "[solver] rtol must be a number (got a string \"tight\")"},
    {"infinite atol", BASE "[solver]\natol = inf\n", "6:8", "[solver] atol must be a finite number (got inf)"},
    {"unknown method", BASE "[solver]\nmethod = \"rk45\"\n", "6:10", "[solver] unknown method \"rk45\""},
    {"method not a string", BASE "[solver]\nmethod = 5\n", "6:10", "[solver] method must be a string (got an integer (5))"},
    {"adaptive BDF on index 3", BASE "[solver]\nmethod = \"bdf\"\n", "6:10", "method \"bdf\" with formulation \"index3\" is refused"},
    {"unknown formulation", BASE "[solver]\nformulation = \"index0\"\n", "6:15", "[solver] unknown formulation \"index0\""},
    {"max_steps = 0", BASE "[solver]\nmax_steps = 0\n", "6:13", "max_steps must be"},
    {"iteration count not integral", BASE "[solver]\nnewton_max_iterations = 2.5\n", "6:25",
     "newton_max_iterations must be an integer (got 2.5)"},
    {"h_min above h_max", BASE "[solver]\nh_max = 0.01\nh_min = 0.1\n", "7:9", "[solver] h_min must be <= h_max"},
    {"[time] missing", "[model]\nname = \"pendulum\"\n", "1:1", "missing [time]"},
    {"t1 missing", "[model]\nname = \"pendulum\"\n[time]\nt0 = 0.5\n", "3:1", "[time] needs t1"},
    {"t1 before t0", "[model]\nname = \"pendulum\"\n[time]\nt0 = 3.0\nt1 = 2.0\n", "5:6", "[time] t1 must be > t0 (got t1 = 2, t0 = 3)"},
    {"t1 a string", "[model]\nname = \"pendulum\"\n[time]\nt1 = \"ten\"\n", "4:6", "[time] t1 must be a number"},
    {"save every = 0", BASE "save = { every = 0 }\n", "5:18", "[time.save] every must be > 0 (got 0)"},
    {"save time after t1", BASE "save = { times = [0.5, 2.0] }\n", "5:24", "times[1] = 2 is outside [t0, t1] = [0, 1]"},
    {"negative members", BASE "[ensemble]\nmembers = -5\n", "6:11", "[ensemble] members must be >= 1 (got -5)"},
    {"identical members beyond 2^53", BASE "[ensemble]\nmembers = 1000000000000000000\n", "6:11",
     "[ensemble] the study has 1e+18 members; at most 2^53 are supported"},
    {"members beyond the machine's memory",
     BASE "[ensemble]\nmembers = 1000000000000000\n[ensemble.vary]\n\"initial.theta0\" = { uniform = [0.1, 0.2] }\n", "6:11",
     "[ensemble] members = 1000000000000000 x replicates = 1 would need "},
    {"replicates beyond the machine's memory",
     BASE "[ensemble]\nmembers = 1000000\nreplicates = 1000000000\nsampler = \"sobol\"\n[ensemble.vary]\n"
          "\"initial.theta0\" = { uniform = [0.1, 0.2] }\n",
     "7:14", "[ensemble] members = 1000000 x replicates = 1000000000 would need "},
    {"unknown sampler", BASE "[ensemble]\nsampler = \"halton\"\n", "6:11", "[ensemble] unknown sampler \"halton\""},
    {"seed not integral", BASE "[ensemble]\nseed = 1.5\n", "6:8", "[ensemble] seed must be an integer (got 1.5)"},
    {"vary of an unknown parameter", BASE "[ensemble.vary]\n\"params.mass\" = { uniform = [1, 2] }\n", "6:1",
     "unknown parameter \"mass\" of model \"pendulum\""},
    {"vary key without prefix", BASE "[ensemble.vary]\n\"theta0\" = { grid = [0.1] }\n", "6:1",
     "\"theta0\" must be \"params.NAME\" or \"initial.NAME\"; did you mean \"initial.theta0\"?"},
    {"uniform bounds reversed", BASE "[ensemble.vary]\n\"initial.theta0\" = { uniform = [2.0, 1.0] }\n", "6:32",
     "uniform lower bound 2 is above the upper bound 1"},
    {"normal with a negative std", BASE "[ensemble.vary]\n\"params.m\" = { normal = { mean = 1.0, std = -0.5 } }\n", "6:45",
     "std must be >= 0 (got -0.5)"},
    {"lognormal without sigma", BASE "[ensemble.vary]\n\"params.g\" = { lognormal = { mu = 0.0 } }\n", "6:28",
     "lognormal needs mu and sigma (sigma is missing)"},
    {"empty grid", BASE "[ensemble.vary]\n\"params.L\" = { grid = [] }\n", "6:23", "\"params.L\" grid is empty"},
    {"grid sampler with a uniform entry",
     BASE "[ensemble]\nsampler = \"grid\"\n[ensemble.vary]\n\"initial.theta0\" = { uniform = [0.1, 0.2] }\n", "8:22",
     "sampler = \"grid\" needs every [ensemble.vary] entry to be a grid"},
    {"variable varied twice", BASE "[ensemble.vary]\n\"initial.theta0\" = { grid = [0.1] }\ninitial.theta0 = { grid = [0.2] }\n",
     "7:9", "\"initial.theta0\" is varied twice"},
    {"unknown statistic", BASE "[output]\nstatistics = [\"mean\", \"variance\"]\n", "6:23", "unknown statistic \"variance\""},
    {"quantile above 100 percent", BASE "[output]\nstatistics = [\"q101\"]\n", "6:15", "quantile \"q101\" is out of range"},
    {"trajectories not a boolean", BASE "[output]\ntrajectories = 1\n", "6:16", "[output] trajectories must be true or false"},
    {"negative quantile memory", BASE "[output]\nquantile_memory_mb = -3\n", "6:22", "quantile_memory_mb must be >= 1 (got -3)"},
    {"unknown key in [output]", BASE "[output]\nstats = [\"mean\"]\n", "6:1", "unknown key \"stats\" in [output]"},
};

#undef BASE

void PrintTo(const malformed_case& c, std::ostream* os) { *os << c.what; }

class MalformedStudy : public ::testing::TestWithParam<malformed_case> {};

TEST_P(MalformedStudy, ExitsTwoWithOneDiagnosticAtTheMistakeAndWritesNothing) {
  // Arrange
  const malformed_case& c = GetParam();
  scratch_dir dir;
  write_text(dir / "bad.toml", c.text);
  const std::string expected_prefix = std::string("bad.toml:") + c.location + ": error: ";

  // Act: the default output directory (lockstep-out/bad) would be created in the working directory.
  const run_result r = run_lockstep(dir, {"run", "bad.toml"});

  // Assert
  EXPECT_EQ(r.exit_code, 2) << c.what << ": " << r.err;
  EXPECT_EQ(r.err.rfind(expected_prefix, 0), 0u) << c.what << ": " << r.err;
  EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.what << ": " << r.err;
  EXPECT_EQ(occurrences(r.err, "error:"), 1u) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"bad.toml"}) << c.what << ": the run left files behind";
}

std::string case_name(const ::testing::TestParamInfo<malformed_case>& info) {
  std::string name;
  for (const char* p = info.param.what; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return std::to_string(info.index) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(LockstepExitCodes, MalformedStudy, ::testing::ValuesIn(malformed_cases), case_name);

TEST(LockstepExitCodes, MalformedStudyCasesNumberAtLeastThirty) { EXPECT_GE(std::size(malformed_cases), 30u); }

TEST(LockstepExitCodes, MemberCountBeyondTheMachinesMemoryIsRefusedWithWhatItNeedsAndWhatThereIs) {
  // Arrange: 10^15 pendulums; their parameters, initial states, statuses, counters and final states
  // alone are hundreds of bytes each, beyond any machine's memory.
  scratch_dir dir;
  write_text(dir / "huge.toml", "[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n[ensemble]\nmembers = 1000000000000000\n"
                                "[ensemble.vary]\n\"params.L\" = { grid = [1.0, 2.0] }\n"
                                "\"initial.theta0\" = { uniform = [0.1, 0.2] }\n");

  // Act
  const run_result r = run_lockstep(dir, {"run", "huge.toml", "-o", "out"});

  // Assert: at the members key, the count as a product, the bytes needed, then the machine's memory.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::regex said(R"(^huge\.toml:6:11: error: \[ensemble\] 2 grid points x members = 1000000000000000 x )"
                        R"(replicates = 1 = 2000000000000000 members would need ([0-9.e+]+) GiB for the per-member )"
                        R"(results alone \(([0-9]+) bytes each, [^)]*\); this machine has ([0-9.e+]+) GiB\n$)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.err, m, said)) << r.err;
  const double needed = std::stod(m[1]), per_member = std::stod(m[2]), has = std::stod(m[3]);
  EXPECT_GT(per_member, 8.0 * 4) << "at least the pendulum's q0 and v0 (n = 2) and its final state";
  EXPECT_NEAR(needed, 2e15 * per_member / (1024.0 * 1024.0 * 1024.0), 0.01 * needed);
  EXPECT_GT(has, 0.0);
  EXPECT_LT(has, needed);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"huge.toml"}) << "nothing is written";
}

// ---- exit 2: command lines ---------------------------------------------------------------------------
struct command_line_case {
  const char* name;
  std::vector<std::string> args;       // run in a directory holding a valid study s.toml
  std::vector<std::string> fragments;  // each must appear on stderr
};

void PrintTo(const command_line_case& c, std::ostream* os) { *os << c.name; }

const command_line_case command_line_cases[] = {
    {"NoSubcommand", {}, {"subcommand"}},
    {"UnknownSubcommand", {"simulate", "s.toml"}, {"subcommand"}},
    {"RunWithoutStudy", {"run"}, {"study is required"}},
    {"UnknownOption", {"run", "s.toml", "--frobnicate"}, {"--frobnicate"}},
    {"SecondStudy", {"run", "s.toml", "t.toml"}, {"t.toml"}},
    {"UnknownBackend", {"run", "s.toml", "--backend", "foo"}, {"--backend", "foo"}},
    {"NegativeThreads", {"run", "s.toml", "--threads", "-1"}, {"--threads", "-1"}},
    {"ThreadsNotANumber", {"run", "s.toml", "--threads", "many"}, {"--threads", "many"}},
    {"FractionalChunkSize", {"run", "s.toml", "--chunk-size", "1.5"}, {"--chunk-size", "1.5"}},
    {"NegativeChunkSize", {"run", "s.toml", "--chunk-size", "-3"}, {"--chunk-size", "-3"}},
    {"OutputWithoutDirectory", {"run", "s.toml", "-o"}, {"--output"}},
    {"MissingStudyFile", {"run", "absent.toml"}, {"absent.toml: error: cannot open: No such file or directory"}},
    {"StudyIsADirectory", {"run", "."}, {".: error: cannot open"}},
    {"DescribeUnknownModel", {"describe", "pendulm"}, {"unknown model \"pendulm\"; did you mean \"pendulum\"?"}},
    {"CudaBackendInABuildWithoutCuda", {"run", "s.toml", "--backend", "cuda", "-o", "out"}, {"cuda backend is not available"}},
    {"CudaBackendOnAMachineWithoutAGpu", {"run", "s.toml", "--backend", "cuda", "-o", "out"}, {"needs a CUDA device"}},
};

class CommandLine : public ::testing::TestWithParam<command_line_case> {};

TEST_P(CommandLine, ExitsTwoWithTheReasonAndWritesNothing) {
  // Arrange
  const command_line_case& c = GetParam();
  if (c.name == std::string("CudaBackendInABuildWithoutCuda") && LOCKSTEP_TEST_HAVE_CUDA)
    GTEST_SKIP() << "this build has CUDA";
  if (c.name == std::string("CudaBackendOnAMachineWithoutAGpu")) {
    if (!LOCKSTEP_TEST_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA backend";
    if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  }
  scratch_dir dir;
  write_text(dir / "s.toml", "[model]\nname = \"pendulum\"\n[time]\nt1 = 0.5\n");

  // Act
  const run_result r = run_lockstep(dir, c.args);

  // Assert
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const std::string& fragment : c.fragments) EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"s.toml"}) << "the run left files behind";
}

INSTANTIATE_TEST_SUITE_P(LockstepExitCodes, CommandLine, ::testing::ValuesIn(command_line_cases),
                         [](const ::testing::TestParamInfo<command_line_case>& info) { return info.param.name; });

TEST(LockstepExitCodes, HelpExitsZeroAndListsTheRunOptions) {
  // Arrange
  scratch_dir dir;

  // Act
  const run_result r = run_lockstep(dir, {"run", "--help"});

  // Assert
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"--output", "--backend", "--threads", "--chunk-size", "--quiet"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from:\n" << r.out;
}

// The line of `text` that starts with `prefix`, without it; "" (and a test failure) when none does.
std::string line_after(const std::string& text, const std::string& prefix) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at + prefix.size(), end - at - prefix.size());
    at = end + 1;
  }
  ADD_FAILURE() << "no line starting with \"" << prefix << "\" in:\n" << text;
  return "";
}

TEST(LockstepExitCodes, VersionAndDescribeSayWhichEnginesTheirLanesAreOf) {
  // Arrange
  scratch_dir dir;

  // Act
  const run_result version = run_lockstep(dir, {"--version"});
  const run_result described = run_lockstep(dir, {"describe", "pendulum"});

  // Assert: one line for the built-in models and one for model files, none that could be read as both;
  // describe's line for a built-in model names its engine and agrees with --version's, and both name
  // the methods that run in lanes.
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.find("SIMD lanes: "), std::string::npos) << version.out;
  const std::string builtin = line_after(version.out, "SIMD lanes, built-in models: ");
  EXPECT_FALSE(line_after(version.out, "SIMD lanes, model files: ").empty()) << version.out;
  ASSERT_EQ(described.exit_code, 0) << described.err;
  const std::string lanes_line = line_after(described.out, "SIMD lanes: ");
  EXPECT_NE(lanes_line.find("built-in engine"), std::string::npos) << lanes_line;
  if (builtin.rfind("off", 0) == 0) {
    EXPECT_EQ(lanes_line.rfind("none, members one at a time", 0), 0u) << builtin << "\n" << lanes_line;
  } else {
    const std::string lanes = builtin.substr(0, builtin.find(' '));
    EXPECT_NE(builtin.find("with every method"), std::string::npos) << builtin;
    EXPECT_EQ(lanes_line.rfind("members in " + lanes + " lanes per core with every method", 0), 0u)
        << builtin << "\n" << lanes_line;
  }
}

// ---- exit 3: the results cannot be written -------------------------------------------------------------
constexpr const char* small_study = R"([model]
name = "pendulum"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble]
members = 4
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.0] }
[output]
trajectories = true
)";

std::string budget_env(long bytes) { return "LOCKSTEP_IO_FAIL_AFTER_BYTES=" + std::to_string(bytes); }

TEST(LockstepExitCodes, OutputFailureExitsThreeNamingThePathAndRemovesTheDirectoryItCreated) {
  // Arrange
  scratch_dir dir;
  write_text(dir / "small.toml", small_study);
  const fs::path out = dir / "out";  // absolute: the message must name it

  // Act
  const run_result r = run_lockstep(dir, {"run", "small.toml", "-o", out.string()}, {budget_env(1000)});

  // Assert
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find((out / "results.h5").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"small.toml"}) << "the run left files behind";
}

TEST(LockstepExitCodes, OutputFailureRemovesTheParentDirectoriesItCreated) {
  // Arrange
  scratch_dir dir;
  write_text(dir / "small.toml", small_study);

  // Act
  const run_result r = run_lockstep(dir, {"run", "small.toml", "-o", "new/deeper/out"}, {budget_env(1000)});

  // Assert
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("new/deeper/out/results.h5"), std::string::npos) << r.err;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"small.toml"}) << "the run left directories behind";
}

// The smallest budget with which the study's outputs can be written (found by bisection through the
// binary), so that failures can be placed at every stage, up to the very last write.
long smallest_sufficient_budget(const scratch_dir& dir) {
  long fails = 0, succeeds = 1L << 24;
  {
    const run_result r = run_lockstep(dir, {"run", "small.toml", "-o", "probe", "-q"}, {budget_env(succeeds)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    fs::remove_all(dir / "probe");
  }
  while (succeeds - fails > 1) {
    const long mid = fails + (succeeds - fails) / 2;
    const run_result r = run_lockstep(dir, {"run", "small.toml", "-o", "probe", "-q"}, {budget_env(mid)});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.exit_code << ": " << r.err;
    if (r.exit_code == 0)
      succeeds = mid;
    else
      fails = mid;
    fs::remove_all(dir / "probe");
  }
  return succeeds;
}

TEST(LockstepExitCodes, OutputFailureAtAnyStageLeavesNoResultsInAnExistingDirectory) {
  // Arrange
  scratch_dir dir;
  write_text(dir / "small.toml", small_study);
  const long enough = smallest_sufficient_budget(dir);
  std::printf("[ measured ] the study's outputs charge %ld bytes to the fault-injection budget\n", enough);
  ASSERT_GT(enough, 100);

  for (const long budget : {0L, enough / 4, enough / 2, 3 * enough / 4, enough - 200, enough - 1}) {
    fs::create_directories(dir / "existing");
    write_text(dir / "existing" / "keep.txt", "kept");
    fs::remove_all(dir / "fresh");

    // Act
    const run_result existing = run_lockstep(dir, {"run", "small.toml", "-o", "existing", "-q"}, {budget_env(budget)});
    const run_result fresh = run_lockstep(dir, {"run", "small.toml", "-o", "fresh", "-q"}, {budget_env(budget)});

    // Assert
    EXPECT_EQ(existing.exit_code, 3) << "budget " << budget << ": " << existing.err;
    EXPECT_NE(existing.err.find("existing/"), std::string::npos) << "budget " << budget << ": " << existing.err;
    EXPECT_EQ(dir.entries("existing"), std::vector<std::string>{"keep.txt"})
        << "budget " << budget << " of " << enough << ": " << existing.err;
    EXPECT_EQ(read_text(dir / "existing" / "keep.txt"), "kept");
    EXPECT_EQ(fresh.exit_code, 3) << "budget " << budget << ": " << fresh.err;
    EXPECT_FALSE(fs::exists(dir / "fresh")) << "budget " << budget << " of " << enough << ": " << fresh.err;
    fs::remove_all(dir / "existing");
  }
}

}  // namespace
