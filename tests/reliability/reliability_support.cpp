// tests/reliability/reliability_support.cpp — see reliability_support.hpp.
#include "reliability_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "host/checkpoint/checkpoint_file.hpp"

#ifndef LOCKSTEP_TEST_MPIRUN
#define LOCKSTEP_TEST_MPIRUN ""
#endif

extern char** environ;

namespace lockstep::reliability_test {

started_process::started_process(const scratch_dir& dir, const std::string& program, const std::vector<std::string>& args,
                                 const std::vector<std::string>& env)
    : capture_(dir.capture()) {
  std::vector<std::string> words = {program};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> variables;
  for (char** e = environ; *e != nullptr; ++e)
    if (!std::string_view(*e).starts_with("LOCKSTEP_IO_FAIL_AFTER_BYTES=")) variables.emplace_back(*e);
  variables.insert(variables.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, (capture_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (capture_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, dir.work().c_str());
  const int rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << program << ": " << std::strerror(rc);
    pid_ = -1;
    reaped_ = true;
  }
}

started_process::~started_process() {
  if (!reaped_) signal_and_wait(SIGKILL);
}

bool started_process::running() {
  if (reaped_) return false;
  const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

run_result started_process::signal_and_wait(int signal, int times) {
  if (running())
    for (int i = 0; i < times; ++i) ::kill(pid_, signal);
  return wait();
}

run_result started_process::wait() {
  while (!reaped_) {
    if (::waitpid(pid_, &status_, 0) == pid_) reaped_ = true;
    else if (errno != EINTR) break;
  }
  run_result r;
  r.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + (WIFSIGNALED(status_) ? WTERMSIG(status_) : 0);
  r.out = read_text(capture_ / "stdout");
  r.err = read_text(capture_ / "stderr");
  return r;
}

bool wait_until(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

long checkpointed_members(const fs::path& path) {
  try {
    const checkpoint::checkpoint_state s = checkpoint::read_checkpoint(path);
    return s.members_done - s.range_first;
  } catch (const checkpoint::checkpoint_error&) {
    return -1;
  }
}

fs::path reference_results(const std::string& study_text) {
  // The key changes with the study and with every rebuild of the binary.
  const fs::path binary = LOCKSTEP_CLI_BINARY;
  const std::string identity = study_text + "|" + std::to_string(fs::file_size(binary)) + "|" +
                               std::to_string(fs::last_write_time(binary).time_since_epoch().count());
  char key[32];
  std::snprintf(key, sizeof key, "%016zx", std::hash<std::string>{}(identity));
  const fs::path cache = LOCKSTEP_RELIABILITY_CACHE, done = cache / key;
  if (fs::exists(done / "results.h5")) return done;

  scratch_dir dir;
  write_text(dir / "s.toml", study_text);
  const run_result r = run_lockstep(dir, {"run", "s.toml", "-o", "out", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Copied beside its final name, then renamed: a test running in parallel sees all of it or nothing.
  fs::create_directories(cache);
  const fs::path partial = cache / (std::string(key) + ".partial-" + std::to_string(::getpid()));
  fs::remove_all(partial);
  fs::copy(dir / "out", partial, fs::copy_options::recursive);
  std::error_code raced;  // another process may have put the same reference in place meanwhile
  fs::rename(partial, done, raced);
  if (raced) fs::remove_all(partial);
  return done;
}

void expect_same_results(const fs::path& a, const fs::path& b) {
  const h5_file fa(a / "results.h5"), fb(b / "results.h5");
  ASSERT_TRUE(fa.is_open() && fb.is_open()) << a << " or " << b << " has no results.h5";
  const std::vector<std::string> names = fa.datasets();
  ASSERT_EQ(names, fb.datasets());
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    ASSERT_EQ(fa.dims(name), fb.dims(name)) << name;
    if (fa.is_integer(name)) {
      EXPECT_EQ(fa.int64s(name), fb.int64s(name)) << name;
    } else {
      std::size_t first = 0;
      EXPECT_EQ(count_mismatches(fa.doubles(name), fb.doubles(name), &first), 0) << name << ", first at " << first;
    }
  }
  EXPECT_EQ(read_text(a / "members.csv"), read_text(b / "members.csv"));
  EXPECT_EQ(read_text(a / "study.toml"), read_text(b / "study.toml"));
}

std::string mpi_unavailable() {
  if (std::string(LOCKSTEP_TEST_MPIRUN).empty()) return "lockstep was built without MPI";
  if (::access(LOCKSTEP_TEST_MPIRUN, X_OK) != 0) return std::string(LOCKSTEP_TEST_MPIRUN) + " cannot be run";
  return "";
}

std::vector<std::string> mpirun_args(int ranks, const std::vector<std::string>& lockstep_args) {
  std::vector<std::string> args = {"--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks),
                                   "-x", "OMP_NUM_THREADS=1", LOCKSTEP_CLI_BINARY};
  args.insert(args.end(), lockstep_args.begin(), lockstep_args.end());
  return args;
}

}  // namespace lockstep::reliability_test
