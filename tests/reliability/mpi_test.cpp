// End to end under OpenMPI: `mpirun -np R lockstep run` gives the single-process results.h5 datasets and
// members.csv bitwise for R = 1, 2, 3 (ranks own whole statistics blocks; rank 0 writes from every
// rank's journal and merges their statistics at their places in the fixed tree), and a checkpointed
// MPI run stopped by SIGTERM resumes with the same number of ranks to the same results.
// Skipped in builds without MPI or without mpirun.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "reliability_support.hpp"

#ifndef LOCKSTEP_TEST_MPIRUN
#define LOCKSTEP_TEST_MPIRUN ""
#endif

namespace {

using namespace lockstep::reliability_test;

// 9000 members: three statistics blocks (4096, 4096, 808), so each of three ranks has work; replicate
// boundaries (every 3000 members) fall inside blocks and ranks.
constexpr const char* study_text = R"([model]
name = "double_pendulum"
[solver]
method = "radau5"
rtol = 1e-6
atol = 1e-6
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
members = 3000
sampler = "sobol"
replicates = 3
seed = 3
[ensemble.vary]
"initial.theta1" = { uniform = [1.5, 2.5] }
[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q50", "q95"]
)";

class Mpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = mpi_unavailable(); !why.empty()) GTEST_SKIP() << why;
    write_text(dir / "s.toml", study_text);
  }
  static fs::path single() { return reference_results(study_text); }  // one process, no checkpoints
  scratch_dir dir;
};

TEST_F(Mpi, OneTwoAndThreeRanksGiveTheSingleProcessResultsBitwise) {
  for (const int ranks : {1, 2, 3}) {
    // Act
    const std::string out = "ranks" + std::to_string(ranks);
    const run_result r = run_program(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(ranks, {"run", "s.toml", "-o", out, "-q"}));

    // Assert
    ASSERT_EQ(r.exit_code, 0) << ranks << " ranks: " << r.err;
    expect_same_results(single(), dir / out);
    EXPECT_EQ(dir.entries(out), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"})) << "shards were left";
    if (ranks > 1) {
      EXPECT_EQ(h5_file(dir / out / "results.h5").int64_attribute("/", "mpi_ranks"), ranks);
    }
  }
}

// Ranks own whole statistics blocks of 4096 members: a study of fewer blocks than ranks leaves some
// ranks without members, which the run says (and the results are the single process's).
TEST_F(Mpi, RanksWithoutMembersAreNamedWithTheReasonAndTheCountThatKeepsThemBusy) {
  write_text(dir / "small.toml", R"([model]
name = "pendulum"
[time]
t1 = 0.2
[ensemble]
members = 5000
sampler = "random"
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.5] }
)");
  const run_result r = run_program(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(4, {"run", "small.toml", "-o", "out"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("lockstep: 2 of 4 ranks have no members and wait: ranks take whole blocks of 4096 members"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("5000 members make 2 blocks; 12289 members or more keep every rank busy"), std::string::npos)
      << r.err;
}

TEST_F(Mpi, CheckpointedRanksStoppedBySigtermResumeWithTheSameRanksToTheSameResults) {
  // Arrange: three checkpointing ranks, stopped once every rank has checkpointed finished members. The
  // study runs to t1 = 4 (s.toml's 1 would let the ranks finish, in SIMD lanes, before the signal).
  std::string long_study = study_text;
  long_study.replace(long_study.find("t1 = 1.0"), 8, "t1 = 4.0");
  write_text(dir / "long.toml", long_study);
  const std::vector<std::string> run = {"run", "long.toml", "-o", "out", "--checkpoint-every", "0.2", "-q"};
  {
    started_process p(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(3, run));
    const bool every_rank = wait_until([&] {
      for (int r = 0; r < 3; ++r)
        if (checkpointed_members(dir / "out" / ("checkpoint.rank-" + std::to_string(r) + "-of-3")) <= 0) return !p.running();
      return true;
    });
    ASSERT_TRUE(every_rank);
    ASSERT_TRUE(p.running()) << "the run ended before it could be stopped";
    EXPECT_NE(p.signal_and_wait(SIGTERM).exit_code, 0);
  }
  ASSERT_FALSE(fs::exists(dir / "out" / "results.h5"));

  // Act
  const run_result wrong = run_program(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(2, {"run", "--resume", "out"}));
  const run_result resumed = run_program(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(3, {"run", "--resume", "out", "-q"}));

  // Assert
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find("resume with as many MPI ranks as the run had"), std::string::npos) << wrong.err;
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_same_results(reference_results(long_study), dir / "out");
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

}  // namespace
