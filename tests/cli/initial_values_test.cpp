// End-to-end tests of what `lockstep run` does with initial values off the constraints
// (method/initialize.hpp, method/options.hpp): a start grossly off them is refused under the default
// init = "auto" and said so in the summary, with how far off and how to accept it; init = "project"
// accepts it; corrections beyond the tolerance are a warning in the summary, with the member count,
// the largest correction and its member; and a member that never starts reports t0 and the start it
// was given in results.h5 and members.csv.
//
// The model is the car axle (lockstep/model/car_axis.hpp), whose start is the published one whatever
// its parameters: with an axle length L other than 1 it is off the constraint |x_l - x_r| = L by
// |L - 1|, and the projection moves the wheels by up to that much.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "in_process.hpp"
#include "lockstep/core/status.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::cli_test;

// The car axle over a short time with the axle lengths `lengths` (a grid) and extra [solver] lines.
std::string car_axis_study(const std::string& lengths, const std::string& solver = "", double t0 = 0.0) {
  char time[96];
  std::snprintf(time, sizeof time, "t0 = %.17g\nt1 = %.17g\nsave = { every = 0.005 }\n", t0, t0 + 0.01);
  return "[model]\nname = \"car_axis\"\n[solver]\n" + solver + "[time]\n" + time +
         "[ensemble]\nsampler = \"grid\"\n[ensemble.vary]\n\"params.L\" = { grid = [" + lengths + "] }\n";
}

// The summary's number as print_summary writes it (%.3g).
std::string three_digits(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(LockstepInitialValues, RefusesAStartGrosslyOffTheConstraintsByDefaultAndSaysHowToAcceptIt) {
  // Arrange: member 1's axle is 25 % longer than its wheels are apart.
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "gross", car_axis_study("1.0, 1.25"), {}, 1);

  // Assert: member 1 refused, with the correction it would have needed; member 0 runs.
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 2u);
  EXPECT_EQ(d.status[0], static_cast<int>(member_status::success));
  EXPECT_EQ(d.status[1], static_cast<int>(member_status::inconsistent_initial));
  EXPECT_GT(d.init_q_correction[1], 0.2) << "the right wheel must move 0.25 away from the left";
  EXPECT_TRUE(contains(r.err, "1 member refused (inconsistent_initial): initial positions off the constraints by up to " +
                                  three_digits(d.init_q_correction[1]) + " (member 1), more than 10 % of the configuration's size"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "set init = \"project\" in [solver]")) << r.err;
}

TEST(LockstepInitialValues, InitProjectStartsAGrossStartFromItsProjectionWithAWarning) {
  // Arrange
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "project", car_axis_study("1.0, 1.25", "init = \"project\"\n"));

  // Assert: both run; the summary still says that member 1 was moved, and how far.
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 2u);
  EXPECT_EQ(d.status[0], static_cast<int>(member_status::success));
  EXPECT_EQ(d.status[1], static_cast<int>(member_status::success));
  EXPECT_TRUE(contains(r.err, "lockstep: warning: the initial positions of 1 member violated the constraints by more than "
                              "the tolerance (atol_q + rtol |q0|, max-norms) and were projected onto them: corrections up "
                              "to " + three_digits(d.init_q_correction[1]) + " (member 1)"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "refused")) << r.err;
}

TEST(LockstepInitialValues, SummaryCountsTheMembersCorrectedBeyondTheToleranceWithTheLargest) {
  // Arrange: members 1 and 2 are 1 and 3 mm off (beyond atol = rtol = 1e-6, below 10 % of the
  // configuration); member 0 starts on the constraints.
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "slightly", car_axis_study("1.0, 1.001, 1.003"));

  // Assert
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(d.status[i], static_cast<int>(member_status::success)) << "member " << i;
  EXPECT_LE(d.init_q_correction[0], 1e-12);
  EXPECT_GT(d.init_q_correction[2], 0.003 / 4);
  EXPECT_LE(d.init_q_correction[2], 0.0031);
  EXPECT_TRUE(contains(r.err, "the initial positions of 2 members violated the constraints by more than the tolerance")) << r.err;
  EXPECT_TRUE(contains(r.err, "corrections up to " + three_digits(d.init_q_correction[2]) + " (member 2)")) << r.err;
}

// The summary's lines about initial values (warnings and refusals), in order.
std::vector<std::string> initial_value_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < err.size()) {
    const std::size_t end = std::min(err.find('\n', at), err.size());
    const std::string line = err.substr(at, end - at);
    if (contains(line, "lockstep: warning: the initial") || contains(line, "refused (inconsistent_initial)")) lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

TEST(LockstepInitialValues, ACheckpointedRunsSummaryReportsTheSameCorrections) {
  // Arrange: member 1 slightly off, member 2 grossly off. With checkpoints the summary is made from
  // the journals (host/cli/run_study_journaled.hpp), which keep no starts.
  scratch_dir dir;
  const std::string study = car_axis_study("1.0, 1.003, 1.25");

  // Act
  const run_result plain = run_study(dir, "plain", study, {}, 1, "plain");
  const run_result journaled = run_study(dir, "journaled", study, {"--checkpoint-every", "1000"}, 1, "journaled");

  // Assert
  const std::vector<std::string> lines = initial_value_lines(plain.err);
  ASSERT_EQ(lines.size(), 3u) << plain.err;  // positions and velocities of member 1, member 2 refused
  EXPECT_TRUE(contains(lines[0], "the initial positions of 1 member") && contains(lines[0], "(member 1)")) << lines[0];
  EXPECT_TRUE(contains(lines[2], "1 member refused") && contains(lines[2], "(member 2)")) << lines[2];
  EXPECT_EQ(initial_value_lines(journaled.err), lines) << journaled.err;
}

TEST(LockstepInitialValues, AStartOnTheConstraintsGivesNoWarning) {
  // Arrange
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "consistent", car_axis_study("1.0"));

  // Assert
  EXPECT_FALSE(contains(r.err, "warning")) << r.err;
  EXPECT_FALSE(contains(r.err, "refused")) << r.err;
}

TEST(LockstepInitialValues, AMemberThatNeverStartsReportsT0AndItsGivenStart) {
  // Arrange: strict initialization refuses both members (inconsistent_initial): at t0 = 0.25 the road
  // has lifted the left wheel off the published start, and member 1's axle is too long besides.
  scratch_dir dir;
  const double q0[4] = {0.0, 0.5, 1.0, 0.5}, v0[4] = {-0.5, 0.0, -0.5, 0.0};  // car_axis.hpp, initial_state

  // Act
  const run_result r = run_study(dir, "strict", car_axis_study("1.0, 1.25", "init = \"strict\"\n", 0.25), {}, 1);

  // Assert: final_t = t0 and final_q, final_v the start as given (not zeros at t = 0), in results.h5
  // and members.csv.
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 2u);
  const csv_table csv = read_csv(dir / "out" / "members.csv");
  ASSERT_EQ(csv.rows.size(), 2u);
  const int final_t = csv.column("final_t"), first_q = csv.column("xl");  // car_axis.hpp, coordinate_names
  ASSERT_GE(final_t, 0);
  ASSERT_GE(first_q, 0);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.status[i], static_cast<int>(member_status::inconsistent_initial)) << "member " << i;
    EXPECT_EQ(d.final_t[i], 0.25) << "member " << i;
    EXPECT_EQ(parse_double(csv.rows[i].at(static_cast<std::size_t>(final_t))), 0.25) << "member " << i;
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(d.final_q[i * 4 + j], q0[j]) << "member " << i << " q" << j;
      EXPECT_EQ(d.final_v[i * 4 + j], v0[j]) << "member " << i << " v" << j;
      EXPECT_EQ(parse_double(csv.rows[i].at(static_cast<std::size_t>(first_q) + j)), q0[j]) << "member " << i << " q" << j;
    }
  }
  EXPECT_TRUE(contains(r.err, "2 members refused (inconsistent_initial): initial values that need corrections above "
                              "init_tolerance = 1e-10"))
      << r.err;
}

}  // namespace
