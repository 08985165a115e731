// End to end: a study with [lyapunov] run with checkpoints, killed and resumed, and under
// mpirun with 2 and 3 ranks gives results.h5 (every dataset, /lyapunov included) and members.csv
// bitwise identical to the plain run; the Lyapunov values of members journaled before a SIGKILL are
// the ones the resumed run writes; a run stopped by SIGINT writes the finished members' exponents and
// the others as running; a checkpoint or journal whose [lyapunov] settings are not its study's is
// refused with exit 2, naming the file and the reason (as for checkpoints and ranks without [lyapunov]).
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/checkpoint/member_journal.hpp"
#include "reliability_support.hpp"

#ifndef LOCKSTEP_TEST_MPIRUN
#define LOCKSTEP_TEST_MPIRUN ""
#endif

namespace {

using namespace lockstep::reliability_test;
namespace checkpoint = lockstep::checkpoint;

// 48 chaotic double pendulums over Sobol points, all four exponents with their history, trajectories
// and every kind of statistic: every part of the results. The Lyapunov runs dominate (about 1-2 s of one
// core), long enough to be caught between checkpoints taken every 0.05-0.1 s.
constexpr const char* lyapunov_section = R"(
[lyapunov]
renormalize = 0.25
transient = 0.5
)";
constexpr const char* pendulums = R"([model]
name = "double_pendulum"
[time]
t1 = 8.0
save = { every = 2.0 }
[ensemble]
members = 24
sampler = "sobol"
replicates = 2
seed = 11
[ensemble.vary]
"initial.theta1" = { uniform = [1.5, 2.5] }
"initial.theta2" = { uniform = [1.0, 2.0] }
[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q50", "q95"]
)";
constexpr long pendulum_members = 48;

std::string with_lyapunov() { return std::string(pendulums) + lyapunov_section; }

// One thread, chunks of 4 members and a checkpoint about every 0.05-0.1 s: many chunk boundaries.
const std::vector<std::string> checkpointed = {"--threads", "1", "--chunk-size", "4", "--checkpoint-every", "0.1", "-q"};

class LyapunovResume : public ::testing::Test {
 protected:
  void SetUp() override { write_text(dir / "s.toml", with_lyapunov()); }
  static fs::path reference() { return reference_results(with_lyapunov()); }  // plain: no checkpoints, one process

  std::vector<std::string> run_args() const {
    std::vector<std::string> args = {"run", "s.toml", "-o", "out"};
    args.insert(args.end(), checkpointed.begin(), checkpointed.end());
    return args;
  }
  fs::path out() const { return dir / "out"; }

  // Starts the checkpointed run and kills it (SIGKILL) once its checkpoint holds finished members.
  void kill_after_first_members() {
    started_process p(dir, LOCKSTEP_CLI_BINARY, run_args());
    const bool advanced = wait_until([&] { return checkpointed_members(out() / "checkpoint") > 0 || !p.running(); });
    ASSERT_TRUE(advanced) << "no checkpoint with finished members";
    ASSERT_TRUE(p.running()) << "the run ended before it could be killed (make the study larger)";
    ASSERT_EQ(p.signal_and_wait(SIGKILL).exit_code, 128 + SIGKILL);
  }

  scratch_dir dir;
};

// Asserts that the plain run's results have /lyapunov with finite exponents for most members: the
// comparisons below would be empty otherwise.
void expect_lyapunov_present(const fs::path& results) {
  const h5_file f(results / "results.h5");
  ASSERT_TRUE(f.is_open());
  ASSERT_EQ(f.dims("/lyapunov/exponents"), (std::vector<hsize_t>{static_cast<hsize_t>(pendulum_members), 4}));
  ASSERT_TRUE(f.exists("/lyapunov/history"));
  long finite = 0;
  for (const double x : f.doubles("/lyapunov/exponents")) finite += std::isfinite(x) ? 1 : 0;
  EXPECT_GT(finite, 4 * pendulum_members / 2);
  EXPECT_GE(read_csv(results / "members.csv").column("lambda_4"), 0);
}

TEST_F(LyapunovResume, AnUninterruptedCheckpointedRunEqualsThePlainRunBitwise) {
  // Act
  const run_result r = run_lockstep(dir, run_args());

  // Assert
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_lyapunov_present(reference());
  expect_same_results(reference(), out());
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

TEST_F(LyapunovResume, KilledAfterItsFirstCheckpointAndResumedKeepsTheJournaledExponentsAndEqualsThePlainRun) {
  // Arrange: killed with members journaled; their Lyapunov values as the journal holds them.
  ASSERT_NO_FATAL_FAILURE(kill_after_first_members());
  const checkpoint::checkpoint_state saved = checkpoint::read_checkpoint(out() / "checkpoint");
  ASSERT_GT(saved.members_done, 0);
  ASSERT_LT(saved.members_done, pendulum_members);
  EXPECT_FALSE(saved.lyapunov.empty()) << "the checkpoint records the [lyapunov] settings";
  std::vector<double> journaled_exponents, journaled_history;
  std::vector<int> journaled_status;
  {
    std::ifstream in(out() / "checkpoint.journal", std::ios::binary);
    checkpoint::journal_reader reader(in, "checkpoint.journal", saved.run_id, 0, saved.journal_bytes);
    checkpoint::journal_chunk chunk;
    while (reader.next(chunk)) {
      ASSERT_EQ(chunk.lyapunov_exponents, 4);
      journaled_exponents.insert(journaled_exponents.end(), chunk.exponents.begin(), chunk.exponents.end());
      journaled_history.insert(journaled_history.end(), chunk.history.begin(), chunk.history.end());
      for (const auto s : chunk.lyapunov_status) journaled_status.push_back(static_cast<int>(s));
    }
    ASSERT_EQ(reader.next_member(), saved.members_done);
  }

  // Act
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out"});

  // Assert: the whole results as the plain run's, and the journaled members' values unchanged.
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming s from its checkpoint: " + std::to_string(saved.members_done) + " of 48 members"),
            std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("Lyapunov exponents (qr): 0 of 48 members failed"), std::string::npos) << resumed.err;
  expect_same_results(reference(), out());
  const h5_file f(out() / "results.h5");
  const std::vector<double> exponents = f.doubles("/lyapunov/exponents"), history = f.doubles("/lyapunov/history");
  const std::vector<std::int32_t> status = f.int32s("/lyapunov/status");
  const auto done = static_cast<std::size_t>(saved.members_done);
  EXPECT_EQ(count_mismatches(std::vector<double>(exponents.begin(), exponents.begin() + static_cast<long>(done * 4)),
                             journaled_exponents),
            0);
  const std::size_t per_member = history.size() / pendulum_members;
  EXPECT_EQ(count_mismatches(std::vector<double>(history.begin(), history.begin() + static_cast<long>(done * per_member)),
                             journaled_history),
            0);
  EXPECT_EQ(std::vector<int>(status.begin(), status.begin() + static_cast<long>(done)), journaled_status);
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
}

TEST_F(LyapunovResume, StoppedBySigintItWritesTheFinishedMembersExponentsAndTheOthersAsRunning) {
  // Arrange, Act: stopped once a checkpoint holds finished members.
  started_process p(dir, LOCKSTEP_CLI_BINARY, run_args());
  ASSERT_TRUE(wait_until([&] { return checkpointed_members(out() / "checkpoint") > 0 || !p.running(); }));
  ASSERT_TRUE(p.running()) << "the run ended before it could be stopped";
  const run_result stopped = p.signal_and_wait(SIGINT);

  // Assert: the finished members' Lyapunov values as the plain run's, the others running with NaN.
  ASSERT_EQ(stopped.exit_code, 128 + SIGINT) << stopped.err;
  const long finished = checkpointed_members(out() / "checkpoint");
  ASSERT_GT(finished, 0);
  const h5_file partial(out() / "interrupted-results.h5"), whole(reference() / "results.h5");
  ASSERT_TRUE(partial.is_open());
  const std::vector<std::int32_t> status = partial.int32s("/lyapunov/status"), expected = whole.int32s("/lyapunov/status");
  const std::vector<double> exponents = partial.doubles("/lyapunov/exponents"), exact = whole.doubles("/lyapunov/exponents");
  const std::vector<std::int64_t> steps = partial.int64s("/lyapunov/steps");
  ASSERT_EQ(status.size(), static_cast<std::size_t>(pendulum_members));
  for (long i = 0; i < pendulum_members; ++i) {
    const auto m = static_cast<std::size_t>(i);
    if (i < finished) {
      EXPECT_EQ(status[m], expected[m]) << "member " << i;
      for (std::size_t j = 0; j < 4; ++j) EXPECT_TRUE(same_value(exponents[m * 4 + j], exact[m * 4 + j])) << "member " << i;
    } else {
      EXPECT_EQ(status[m], 0) << "member " << i << " is running";
      EXPECT_TRUE(std::isnan(exponents[m * 4])) << "member " << i;
      EXPECT_EQ(steps[m], -1) << "member " << i;
    }
  }
  const csv_table rows = read_csv(out() / "interrupted-members.csv");
  ASSERT_EQ(rows.rows.size(), static_cast<std::size_t>(pendulum_members));
  EXPECT_EQ(rows.rows.back()[static_cast<std::size_t>(rows.column("lyapunov_status"))], "running");

  // Act, Assert: resumed, it ends as the plain run.
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out", "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_same_results(reference(), out());
}

// The killed run's checkpoint rewritten by `edit` into a copy of OUT_DIR named `name`.
fs::path edited_copy(const scratch_dir& dir, const std::string& name, void (*edit)(checkpoint::checkpoint_state&)) {
  fs::copy(dir / "out", dir / name);
  checkpoint::checkpoint_state s = checkpoint::read_checkpoint(dir / name / "checkpoint");
  edit(s);
  checkpoint::write_checkpoint(dir / name / "checkpoint", s);
  return dir / name;
}

TEST_F(LyapunovResume, ACheckpointOrJournalWithOtherLyapunovSettingsThanItsStudyIsRefusedNamingTheFile) {
  // Arrange: a killed run's checkpoint, edited four ways. The study a resume reads is the checkpoint's
  // copy, so these stand for a study edited between the sessions, or a lockstep resolving it otherwise.
  ASSERT_NO_FATAL_FAILURE(kill_after_first_members());
  // Written with [lyapunov], resumed without it.
  edited_copy(dir, "dropped", [](checkpoint::checkpoint_state& s) { s.study_text = pendulums; });
  // Written without [lyapunov], resumed with it.
  edited_copy(dir, "added", [](checkpoint::checkpoint_state& s) { s.lyapunov.clear(); });
  // Other settings: renormalize 0.5 instead of 0.25.
  edited_copy(dir, "other", [](checkpoint::checkpoint_state& s) {
    s.study_text = std::string(pendulums) + "\n[lyapunov]\nrenormalize = 0.5\ntransient = 0.5\n";
  });
  // A checkpoint that agrees with a study without [lyapunov], beside a journal holding Lyapunov values.
  edited_copy(dir, "journal", [](checkpoint::checkpoint_state& s) {
    s.study_text = pendulums;
    s.lyapunov.clear();
  });

  // Act
  const run_result dropped = run_lockstep(dir, {"run", "--resume", "dropped"});
  const run_result added = run_lockstep(dir, {"run", "--resume", "added"});
  const run_result other = run_lockstep(dir, {"run", "--resume", "other"});
  const run_result journal = run_lockstep(dir, {"run", "--resume", "journal"});

  // Assert: exit 2, the file and the reason, before any member is solved; nothing removed, nothing
  // written.
  const struct {
    const run_result& r;
    std::vector<std::string> parts;
  } cases[] = {
      {dropped,
       {"checkpoint 'dropped/checkpoint' was written with [lyapunov] method = qr, exponents = 4 of 4, renormalize = 0.25",
        "but its study now gives no [lyapunov] section"}},
      {added, {"checkpoint 'added/checkpoint' was written with no [lyapunov] section but its study now gives [lyapunov] method = qr"}},
      {other, {"checkpoint 'other/checkpoint' was written with [lyapunov]", "renormalize = 0.25",
               "but its study now gives [lyapunov] method = qr, exponents = 4 of 4, renormalize = 0.5"}},
      {journal,
       {"journal 'journal/checkpoint.journal' holds members with 4 Lyapunov exponents and 34 running estimates where the "
        "study's [lyapunov] settings give no Lyapunov values"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.r.exit_code, 2) << c.r.err;
    EXPECT_EQ(c.r.err.find("resuming"), std::string::npos) << "refused only after solving:\n" << c.r.err;
    for (const std::string& part : c.parts) EXPECT_NE(c.r.err.find(part), std::string::npos) << "expected '" << part << "' in:\n" << c.r.err;
  }
  for (const char* refused : {"dropped", "added", "other", "journal"}) {
    EXPECT_TRUE(fs::exists(dir / refused / "checkpoint")) << refused << ": a refused resume must not remove the checkpoint";
    EXPECT_FALSE(fs::exists(dir / refused / "results.h5")) << refused;
  }

  // Act, Assert: the unedited run still resumes to the plain run's results.
  const run_result intact = run_lockstep(dir, {"run", "--resume", "out", "-q"});
  ASSERT_EQ(intact.exit_code, 0) << intact.err;
  expect_same_results(reference(), out());
}

// ---- MPI ----------------------------------------------------------------------------------------------

// 8200 pendulums: three statistics blocks (4096, 4096, 8), so with 2 ranks rank 1 solves two of them and
// with 3 ranks every rank solves one (host/mpi/decomposition.hpp). The pendulum's two exponents over a
// short horizon keep the run at a few seconds; /lyapunov/history is there too.
constexpr const char* many_pendulums = R"([model]
name = "pendulum"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble]
members = 8200
seed = 5
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 2.5] }
[output]
statistics = ["mean", "q50"]
[lyapunov]
renormalize = 0.125
)";

class LyapunovMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = mpi_unavailable(); !why.empty()) GTEST_SKIP() << why;  // as mpi_test
    write_text(dir / "s.toml", many_pendulums);
  }
  scratch_dir dir;
};

TEST_F(LyapunovMpi, TwoAndThreeRanksGiveTheSingleProcessResultsWithTheirExponentsBitwise) {
  // Arrange
  const fs::path single = reference_results(many_pendulums);
  const h5_file plain(single / "results.h5");
  ASSERT_TRUE(plain.is_open());
  ASSERT_EQ(plain.dims("/lyapunov/exponents"), (std::vector<hsize_t>{8200, 2}));
  ASSERT_TRUE(plain.exists("/lyapunov/history"));

  for (const int ranks : {2, 3}) {
    // Act
    const std::string out = "ranks" + std::to_string(ranks);
    const run_result r = run_program(dir, LOCKSTEP_TEST_MPIRUN, mpirun_args(ranks, {"run", "s.toml", "-o", out}));

    // Assert
    ASSERT_EQ(r.exit_code, 0) << ranks << " ranks: " << r.err;
    EXPECT_NE(r.err.find("Lyapunov exponents (qr): 0 of 8200 members failed"), std::string::npos) << r.err;
    expect_same_results(single, dir / out);
    EXPECT_EQ(dir.entries(out), (std::vector<std::string>{"members.csv", "results.h5", "study.toml"})) << "shards were left";
    EXPECT_EQ(h5_file(dir / out / "results.h5").int64_attribute("/", "mpi_ranks"), ranks);
  }
}

}  // namespace
