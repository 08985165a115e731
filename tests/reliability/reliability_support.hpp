// tests/reliability/reliability_support.hpp — what the end-to-end tests of checkpoints and MPI add to
// tests/cli/cli_support.hpp: a `lockstep` process that runs while the test watches it and then kills
// or signals it, waiting for a checkpoint to advance, and the bitwise comparison of two runs' results.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace lockstep::reliability_test {

using namespace lockstep::cli_test;

// `program args...` started in dir.work() (stdout and stderr to dir.capture()), with the test's
// environment minus LOCKSTEP_IO_FAIL_AFTER_BYTES, plus `env`. Destroying it kills and reaps a process
// still running.
class started_process {
 public:
  started_process(const scratch_dir& dir, const std::string& program, const std::vector<std::string>& args,
                  const std::vector<std::string>& env = {});
  ~started_process();
  started_process(const started_process&) = delete;
  started_process& operator=(const started_process&) = delete;

  bool running();                          // false once it has exited (then wait() returns at once)
  run_result signal_and_wait(int signal, int times = 1);  // sends `signal` `times` times at once if it still runs, then waits
  run_result wait();

 private:
  fs::path capture_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Polls `condition` every 5 ms for up to `seconds`; whether it came true.
bool wait_until(const std::function<bool()>& condition, double seconds = 300.0);

// Members finished according to the checkpoint at `path` (members_done - range_first); -1 while
// there is none or it cannot be read.
long checkpointed_members(const fs::path& path);

// OUT_DIR of `lockstep run s.toml -q` for `study_text` (no checkpoints, one process): the reference the
// tests compare with. Computed once per study text and lockstep binary and kept in the build tree
// (LOCKSTEP_RELIABILITY_CACHE), since ctest runs every test in a process of its own.
fs::path reference_results(const std::string& study_text);

// Every dataset of a/results.h5 equals b/results.h5's bit for bit (NaN payloads aside), and
// members.csv and study.toml are byte for byte the same.
void expect_same_results(const fs::path& a, const fs::path& b);

// ---- MPI (LOCKSTEP_TEST_MPIRUN: the launcher of the MPI the binary links, empty without MPI) ----

// Why the MPI tests cannot run here ("" when they can): lockstep built without MPI, or no launcher.
std::string mpi_unavailable();

// The launcher's arguments for `lockstep lockstep_args...` on `ranks` ranks of one thread each. Root may
// run mpirun only when it says so; --oversubscribe lets three ranks share two cores.
std::vector<std::string> mpirun_args(int ranks, const std::vector<std::string>& lockstep_args);

}  // namespace lockstep::reliability_test
