// End to end: `lockstep run --checkpoint-every` killed (SIGKILL) or stopped (SIGINT, SIGTERM) and
// continued with `lockstep run --resume OUT_DIR` gives results.h5 datasets, members.csv and study.toml
// bitwise identical to an uninterrupted run without checkpoints; damaged checkpoints and journals are
// refused with exit 2 and a message naming the file.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "reliability_support.hpp"

namespace {

using namespace lockstep::reliability_test;
namespace checkpoint = lockstep::checkpoint;

// Chaotic double pendulums over Sobol points in 3 replicates, trajectories stored, exact quantiles:
// every part of the results and every kind of statistics state is exercised. About 0.8 s of one core.
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
members = 700
sampler = "sobol"
replicates = 3
seed = 7
[ensemble.vary]
"initial.theta1" = { uniform = [1.5, 2.5] }
"params.L2" = { normal = { mean = 0.8, std = 0.01 } }
[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q50", "q95"]
)";
constexpr long members = 2100;

// Caught between checkpoints even on a fast core: one thread, a checkpoint about every 0.05-0.1 s.
const std::vector<std::string> checkpointed = {"--threads", "1", "--checkpoint-every", "0.1", "-q"};

class Resume : public ::testing::Test {
 protected:
  void SetUp() override { write_text(dir / "s.toml", study_text); }

  // One uninterrupted run without checkpoints.
  static fs::path reference() { return reference_results(study_text); }

  std::vector<std::string> run_args() const {
    std::vector<std::string> args = {"run", "s.toml", "-o", "out"};
    args.insert(args.end(), checkpointed.begin(), checkpointed.end());
    return args;
  }
  fs::path out() const { return dir / "out"; }
  fs::path checkpoint_file() const { return out() / "checkpoint"; }

  // Starts `args`, waits until the checkpoint holds more than `past` finished members, then sends
  // `signal`; returns what the process said. A run that ends first fails the test.
  run_result interrupt_after(const std::vector<std::string>& args, long past, int signal, int times = 1) {
    started_process p(dir, LOCKSTEP_CLI_BINARY, args);
    const bool advanced = wait_until([&] { return checkpointed_members(checkpoint_file()) > past || !p.running(); });
    EXPECT_TRUE(advanced) << "no checkpoint past " << past << " members";
    EXPECT_TRUE(p.running()) << "the run ended before it could be interrupted (make the study larger)";
    return p.signal_and_wait(signal, times);
  }

  scratch_dir dir;
};

TEST_F(Resume, KilledWithSigkillAfterItsFirstCheckpointAndResumedGivesTheUninterruptedResultsBitwise) {
  // Arrange: killed once a checkpoint holds finished members.
  const run_result killed = interrupt_after(run_args(), 0, SIGKILL);
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL);
  const long saved = checkpointed_members(checkpoint_file());
  ASSERT_GT(saved, 0);
  ASSERT_LT(saved, members);
  EXPECT_FALSE(fs::exists(out() / "results.h5"));

  // Act
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out"});

  // Assert
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming s from its checkpoint: " + std::to_string(saved) + " of 2100 members"), std::string::npos)
      << resumed.err;
  expect_same_results(reference(), out());
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}))
      << "the checkpoint, its journal or a killed run's temporaries were left";
}

TEST_F(Resume, KilledAgainWhileResumedAndOnceMoreAfterTheLastCheckpointStillGivesTheSameResults) {
  // Arrange: killed mid-run, killed again mid-resume, killed a third time after the last member's
  // checkpoint (while or before the results are written).
  ASSERT_EQ(interrupt_after(run_args(), 0, SIGKILL).exit_code, 128 + SIGKILL);
  const long first = checkpointed_members(checkpoint_file());
  ASSERT_EQ(interrupt_after({"run", "--resume", "out", "-q"}, first, SIGKILL).exit_code, 128 + SIGKILL);
  const long second = checkpointed_members(checkpoint_file());
  EXPECT_GT(second, first);
  {
    started_process p(dir, LOCKSTEP_CLI_BINARY, {"run", "--resume", "out", "-q"});
    ASSERT_TRUE(wait_until([&] { return checkpointed_members(checkpoint_file()) == members || !p.running(); }));
    p.signal_and_wait(SIGKILL);
  }

  // Act: unless the results were written and the checkpoint removed before the kill landed.
  if (fs::exists(checkpoint_file())) {
    const run_result resumed = run_lockstep(dir, {"run", "--resume", "out", "-q"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  }

  // Assert
  expect_same_results(reference(), out());
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

TEST_F(Resume, AnUninterruptedCheckpointedRunEqualsThePlainRunAndLeavesNoCheckpoint) {
  // Act
  const run_result r = run_lockstep(dir, run_args());

  // Assert
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_results(reference(), out());
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

class Interrupt : public Resume, public ::testing::WithParamInterface<int> {};

TEST_P(Interrupt, WritesACheckpointAndTheMembersSoFarThenExitsWith128PlusTheSignal) {
  // Arrange
  const int signal = GetParam();
  const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  std::vector<std::string> args = run_args();
  args.pop_back();  // not quiet: the message is checked

  // Act
  const run_result stopped = interrupt_after(args, 0, signal);

  // Assert: the message, the checkpoint, and the finished members with their final values.
  ASSERT_EQ(stopped.exit_code, 128 + signal) << stopped.err;
  EXPECT_NE(stopped.err.find("interrupted by " + name + ": checkpoint written with "), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("continue with: lockstep run --resume out"), std::string::npos) << stopped.err;
  const long finished = checkpointed_members(checkpoint_file());
  ASSERT_GT(finished, 0);
  EXPECT_FALSE(fs::exists(out() / "results.h5")) << "an incomplete run must not leave results.h5";
  const h5_file partial(out() / "interrupted-results.h5"), whole(reference() / "results.h5");
  ASSERT_TRUE(partial.is_open());
  EXPECT_EQ(partial.int64_attribute("/", "complete"), 0);
  EXPECT_EQ(partial.int64_attribute("/", "members_finished"), finished);
  const std::vector<std::int64_t> status = partial.int64s("/members/status"), expected = whole.int64s("/members/status");
  ASSERT_EQ(status.size(), static_cast<std::size_t>(members));
  for (long i = 0; i < members; ++i)
    ASSERT_EQ(status[static_cast<std::size_t>(i)], i < finished ? expected[static_cast<std::size_t>(i)] : 0) << "member " << i;
  const std::vector<double> q = partial.doubles("/q"), q_whole = whole.doubles("/q");
  const std::size_t per_member = q.size() / members;
  EXPECT_EQ(count_mismatches(std::vector<double>(q.begin(), q.begin() + static_cast<long>(per_member) * finished),
                             std::vector<double>(q_whole.begin(), q_whole.begin() + static_cast<long>(per_member) * finished)),
            0);
  const csv_table rows = read_csv(out() / "interrupted-members.csv"), rows_whole = read_csv(reference() / "members.csv");
  ASSERT_EQ(rows.rows.size(), static_cast<std::size_t>(members));
  for (long i = 0; i < members; ++i) {
    if (i < finished)
      ASSERT_EQ(rows.rows[static_cast<std::size_t>(i)], rows_whole.rows[static_cast<std::size_t>(i)]) << "row " << i;
    else
      ASSERT_EQ(rows.rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(rows.column("status"))], "running") << "row " << i;
  }

  // Act, Assert: resumed, it ends as if never interrupted, and the interrupted files go.
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out", "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_same_results(reference(), out());
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

TEST_F(Resume, ASignalDeliveredTwiceAtOnceStopsTheRunOnceWithItsCheckpoint) {
  // Arrange: coreutils' timeout sends SIGTERM to the child and then to its process group, so the run
  // gets it twice within microseconds; a batch system may do the same.
  std::vector<std::string> args = run_args();
  args.pop_back();  // not quiet: the message is checked

  // Act
  const run_result stopped = interrupt_after(args, 0, SIGTERM, 2);

  // Assert: stopped as by one signal, not killed by the second.
  ASSERT_EQ(stopped.exit_code, 128 + SIGTERM) << stopped.err;
  EXPECT_NE(stopped.err.find("interrupted by SIGTERM: checkpoint written with "), std::string::npos) << stopped.err;
  EXPECT_TRUE(fs::exists(out() / "interrupted-results.h5"));
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out", "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_same_results(reference(), out());
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupt, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& info) { return std::string(info.param == SIGINT ? "Sigint" : "Sigterm"); });

TEST_F(Resume, ADamagedCheckpointOrJournalIsRefusedWithExitTwoNamingTheFileAndKeepsEverything) {
  // Arrange: a stopped run; a copy whose checkpoint has one flipped bit, one whose journal has.
  ASSERT_EQ(interrupt_after(run_args(), 0, SIGKILL).exit_code, 128 + SIGKILL);
  fs::copy(out(), dir / "bad_checkpoint");
  fs::copy(out(), dir / "bad_journal");
  std::string bytes = read_text(dir / "bad_checkpoint" / "checkpoint");
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x04);
  write_text(dir / "bad_checkpoint" / "checkpoint", bytes);
  bytes = read_text(dir / "bad_journal" / "checkpoint.journal");
  bytes[bytes.size() / 3] = static_cast<char>(bytes[bytes.size() / 3] ^ 0x04);
  write_text(dir / "bad_journal" / "checkpoint.journal", bytes);

  // Act
  const run_result checkpoint_refused = run_lockstep(dir, {"run", "--resume", "bad_checkpoint"});
  const run_result journal_refused = run_lockstep(dir, {"run", "--resume", "bad_journal"});
  const run_result intact = run_lockstep(dir, {"run", "--resume", "out", "-q"});

  // Assert
  EXPECT_EQ(checkpoint_refused.exit_code, 2);
  EXPECT_NE(checkpoint_refused.err.find("checkpoint 'bad_checkpoint/checkpoint' is damaged: CRC-32 mismatch"), std::string::npos)
      << checkpoint_refused.err;
  EXPECT_EQ(journal_refused.exit_code, 2);
  EXPECT_NE(journal_refused.err.find("journal 'bad_journal/checkpoint.journal' is damaged"), std::string::npos)
      << journal_refused.err;
  for (const char* refused : {"bad_checkpoint", "bad_journal"}) {
    EXPECT_TRUE(fs::exists(dir / refused / "checkpoint")) << "a refused resume must not remove the checkpoint";
    EXPECT_FALSE(fs::exists(dir / refused / "results.h5"));
  }
  ASSERT_EQ(intact.exit_code, 0) << intact.err;
  expect_same_results(reference(), out());
}

TEST_F(Resume, NothingToResumeAndConflictingArgumentsExitTwoWithTheReason) {
  // Arrange: a completed run (no checkpoint left) and an empty directory.
  ASSERT_EQ(run_lockstep(dir, {"run", "s.toml", "-o", "done", "-q"}).exit_code, 0);
  fs::create_directories(dir / "empty");

  // Act, Assert
  const struct {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {{"run", "--resume", "done"}, "no checkpoint in 'done': nothing to resume (results.h5 is there: the run completed)"},
      {{"run", "--resume", "empty"}, "no checkpoint in 'empty': nothing to resume"},
      {{"run", "--resume", "absent"}, "cannot resume 'absent': no such directory"},
      {{"run", "s.toml", "--resume", "done"}, "excludes"},
      {{"run", "--resume", "done", "-o", "elsewhere"}, "excludes"},
      {{"run", "s.toml", "--checkpoint-every", "0"}, "--checkpoint-every"},
  };
  for (const auto& c : cases) {
    const run_result r = run_lockstep(dir, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
}

}  // namespace
