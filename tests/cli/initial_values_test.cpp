// End-to-end tests of what `lockstep run` does with initial values off the constraints
// (stepper/initialize.hpp): a member that never starts reports t0 and the start it was given in
// results.h5 and members.csv.
//
// The model is the car axle (lockstep/model/car_axis.hpp), whose start is the published one whatever
// its parameters: with an axle length L other than 1 it is off the constraint |x_l - x_r| = L by
// |L - 1|, and the projection moves the wheels by up to that much.
#include <gtest/gtest.h>

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
  const int final_t = csv.column("final_t"), first_q = csv.column("q0");
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
}

}  // namespace
