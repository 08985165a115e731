// End to end: `lockstep run` that cannot write exits 3 with the path and the system's reason and leaves
// no results.h5 (nor any temporary) behind (output safety). Permission denied is real: the run
// is switched to the unprivileged user nobody with setpriv (root is never denied). A full disk is the
// fault-injection seam LOCKSTEP_IO_FAIL_AFTER_BYTES (host/io/output_file.hpp); a checkpointed run that
// fails this way keeps its last checkpoint and is resumed, once there is room, to the results of an
// uninterrupted run. (tests/cli covers the disk-full exit of runs without checkpoints.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "reliability_support.hpp"

namespace {

using namespace lockstep::reliability_test;

constexpr const char* study_text = R"([model]
name = "pendulum"
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
members = 3000
sampler = "random"
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.5] }
[output]
trajectories = true
)";

constexpr const char* setpriv = "/usr/bin/setpriv";
const std::vector<std::string> as_nobody = {"--reuid=65534", "--regid=65534", "--clear-groups", LOCKSTEP_CLI_BINARY};

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(OutputFailure, PermissionDeniedExitsThreeWithThePathAndReasonAndWritesNothing) {
  // Arrange: a directory only root may write to, a study nobody may read, a binary nobody may run.
  if (::geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  if (::access(setpriv, X_OK) != 0) GTEST_SKIP() << setpriv << " is not installed (util-linux)";
  scratch_dir dir;
  write_text(dir / "s.toml", study_text);
  fs::create_directories(dir / "locked");
  ::chmod((dir / "locked").c_str(), 0755);
  const run_result probe = run_program(dir, setpriv, joined(as_nobody, {"models"}));
  if (probe.exit_code != 0)
    GTEST_SKIP() << "nobody cannot run " << LOCKSTEP_CLI_BINARY << " (a directory on its path is closed): " << probe.err;

  const struct {
    const char* name;
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {"a new output directory", {"run", "s.toml", "-o", "locked/out"},
       "cannot create the output directory 'locked/out': Permission denied"},
      {"an existing output directory", {"run", "s.toml", "-o", "locked"}, "'locked/results.h5': Permission denied"},
      {"a checkpointed run", {"run", "s.toml", "-o", "locked", "--checkpoint-every", "1"},
       "cannot create checkpoint journal 'locked/checkpoint.journal': Permission denied"},
  };
  for (const auto& c : cases) {
    // Act
    const run_result r = run_program(dir, setpriv, joined(as_nobody, c.args));

    // Assert
    EXPECT_EQ(r.exit_code, 3) << c.name << ": " << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.name << ": " << r.err;
    EXPECT_TRUE(dir.entries("locked").empty()) << c.name << " left files";
  }
}

TEST(OutputFailure, AFullDiskInACheckpointedRunExitsThreeKeepsTheCheckpointAndResumesToTheSameResults) {
  // Arrange: a checkpointed run whose disk fills up after about 200 kB (the journal alone needs some
  // 2 MB).
  scratch_dir dir;
  write_text(dir / "s.toml", study_text);

  // Act
  const run_result full = run_lockstep(dir, {"run", "s.toml", "-o", "out", "--checkpoint-every", "0.05", "--threads", "1"},
                                       {"LOCKSTEP_IO_FAIL_AFTER_BYTES=200000"});
  const std::vector<std::string> left = dir.entries("out");
  const run_result resumed = run_lockstep(dir, {"run", "--resume", "out", "-q"});

  // Assert
  EXPECT_EQ(full.exit_code, 3) << full.err;
  EXPECT_TRUE(contains(full.err, "No space left on device")) << full.err;
  EXPECT_TRUE(contains(full.err, "'out/checkpoint")) << "the message names the file: " << full.err;
  EXPECT_EQ(left, (std::vector<std::string>{"checkpoint", "checkpoint.journal", "study.toml"}))
      << "results, members or temporaries were left, or the checkpoint was lost";
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  expect_same_results(reference_results(study_text), dir / "out");
}

// A killed run leaves its temporaries ("results.h5.partial-PID", ...); the next run into the same folder,
// plain or checkpointed, removes those of processes that no longer exist, and keeps a live process's
// temporary and files that are not lockstep's outputs.
TEST(OutputFailure, ANewRunRemovesTheTemporariesAKilledRunLeftAndKeepsOthers) {
  scratch_dir dir;
  write_text(dir / "s.toml", R"([model]
name = "pendulum"
[time]
t1 = 0.1
[ensemble]
members = 4
)");
  // A process id that no longer exists: a child that has exited and been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string dead = std::to_string(child), live = std::to_string(::getpid());
  // A plain run, and a checkpointed one (a separate path through the command), each into its own folder.
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--checkpoint-every", "10"}}) {
    const std::string folder = extra.empty() ? "plain" : "checkpointed";
    SCOPED_TRACE(folder);
    const fs::path out = dir / folder;
    fs::create_directories(out);
    const std::vector<std::string> stale = {"results.h5.partial-" + dead, "members.csv.partial-" + dead + "-1",
                                            "study.toml.partial-" + dead};
    const std::vector<std::string> kept = {"results.h5.partial-" + live, "notes.txt.partial-" + dead};
    for (const std::string& name : stale) write_text(out / name, "left by a killed run");
    for (const std::string& name : kept) write_text(out / name, "not ours to remove");
    std::vector<std::string> args = {"run", "s.toml", "-o", folder, "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const run_result r = run_lockstep(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& name : stale) EXPECT_FALSE(fs::exists(out / name)) << name << " was left";
    for (const std::string& name : kept) EXPECT_TRUE(fs::exists(out / name)) << name << " was removed";
    EXPECT_TRUE(fs::exists(out / "results.h5"));
  }
}

}  // namespace
