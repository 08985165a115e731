// The omp backend's thread team (kernels/omp/thread_team.hpp) and its launch (kernels/omp/launch.cpp):
// a launch uses no more threads than it has blocks of 8 members, idle workers sleep instead of spinning,
// every item of a loop runs exactly once whatever the thread count, concurrent and nested loops,
// fork(), the default thread count, and the Lyapunov batch's progress on the calling thread.
//
// Idle cost is measured as CPU time, not wall time: a thread that spins consumes CPU time whether or
// not other processes load the machine, and one that sleeps consumes none, so the bounds below hold on
// a busy 2-core machine as on an idle one. Each test runs in a process of its own (ctest), so the
// first launch of a test is its process's first.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/engine/lyapunov_batch.hpp"
#include "kernels/launch.hpp"
#include "kernels/omp/thread_team.hpp"
#include "lockstep/engine/builtin.hpp"
#include "lockstep/ensemble.hpp"

namespace {

using namespace lockstep;
using namespace std::chrono_literals;

// Threads of this process, from the kernel's count (/proc/self/status).
int process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A launch's block task that records which thread ran each member; blocks can hold until `hold_until`
// threads have run one (at most 5 s), so a test knows the team's workers took part.
struct recording_task final : detail::block_task {
  explicit recording_task(long members, std::size_t hold_until = 0)
      : ran_on(static_cast<std::size_t>(members)), runs(static_cast<std::size_t>(members), 0), hold_until(hold_until) {}
  mutable std::vector<std::thread::id> ran_on;
  mutable std::vector<int> runs;
  mutable std::mutex mutex;
  mutable std::set<std::thread::id> threads;
  std::size_t hold_until;

  void operator()(const long* members, long count) const override {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    for (;;) {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (threads.size() >= hold_until || std::chrono::steady_clock::now() > deadline) break;
      }
      std::this_thread::yield();
    }
    for (long a = 0; a < count; ++a) {
      ran_on[static_cast<std::size_t>(members[a])] = std::this_thread::get_id();
      ++runs[static_cast<std::size_t>(members[a])];
    }
  }
};

std::vector<long> all_members(long count) {
  std::vector<long> active(static_cast<std::size_t>(count));
  std::iota(active.begin(), active.end(), 0L);
  return active;
}

TEST(ThreadTeam, LaunchOfAtMostEightActiveMembersRunsOnTheCallingThreadAndStartsNoThread) {
  // Arrange: a 4-thread backend, and launches of 1 to 8 active members (one member's study, the tail
  // of a chunk), the first launches of this process.
  const int threads_before = process_threads();
  // Act
  std::vector<std::unique_ptr<recording_task>> tasks;
  for (long count = 1; count <= 8; ++count) {
    const std::vector<long> active = all_members(count);
    tasks.push_back(std::make_unique<recording_task>(count));
    lockstep_omp_launch(4, active.data(), count, tasks.back().get());
  }
  // Assert: every member ran once, on this thread; no worker was started (nor woken).
  for (const auto& task : tasks)
    for (std::size_t i = 0; i < task->ran_on.size(); ++i) {
      EXPECT_EQ(task->runs[i], 1) << "member " << i << " of a launch of " << task->ran_on.size();
      EXPECT_EQ(task->ran_on[i], std::this_thread::get_id()) << "member " << i << " of " << task->ran_on.size();
    }
  EXPECT_EQ(process_threads(), threads_before) << "threads started for launches of at most 8 members";
}

TEST(ThreadTeam, IdleWorkersConsumeNoCpuTimeBetweenLaunches) {
  // Arrange: a 2-thread backend (at most the CPUs of any machine this runs on: OpenMP runtimes spin
  // less when they have more threads than CPUs); launches of 512 members whose blocks wait until both
  // threads have run one, so the worker takes part in every launch.
  constexpr int threads = 2, launches = 4;
  constexpr auto idle = 200ms;
  const std::vector<long> active = all_members(512);
  double idle_cpu = 0.0;
  std::size_t fewest_threads = threads;
  // Act: after each launch, the process's CPU time while the calling thread sleeps.
  for (int l = 0; l < launches; ++l) {
    recording_task task(512, threads);
    lockstep_omp_launch(threads, active.data(), 512, &task);
    fewest_threads = std::min(fewest_threads, task.threads.size());
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(idle);
    idle_cpu += process_cpu_seconds() - before;
  }
  // Assert: the worker took part, and while idle it used under 1 ms of CPU per launch (a worker spins
  // at most 50 µs before it sleeps; libgomp's spinning workers use milliseconds: 5.5 ms measured on a
  // 2.3 GHz Xeon).
  EXPECT_EQ(fewest_threads, std::size_t(threads)) << "the worker did not take part in every launch";
  EXPECT_LT(idle_cpu, launches * (threads - 1) * 1e-3)
      << "CPU seconds used by idle workers after " << launches << " launches on " << threads << " threads";
}

TEST(ThreadTeam, LaunchUsesNoMoreThreadsThanAskedForOrThanBlocksOfEightMembers) {
  // Arrange: 24 members are 3 blocks of 8; 4000 members are many blocks.
  const std::vector<long> few = all_members(24), many = all_members(4000);
  recording_task three_blocks(24, 3), two_threads(4000, 2);
  // Act
  lockstep_omp_launch(8, few.data(), 24, &three_blocks);
  lockstep_omp_launch(2, many.data(), 4000, &two_threads);
  // Assert: at most 3 threads for 3 blocks (of 8 asked for), at most the 2 asked for; every member once.
  EXPECT_LE(three_blocks.threads.size(), 3u);
  EXPECT_LE(two_threads.threads.size(), 2u);
  EXPECT_EQ(std::count(three_blocks.runs.begin(), three_blocks.runs.end(), 1), 24);
  EXPECT_EQ(std::count(two_threads.runs.begin(), two_threads.runs.end(), 1), 4000);
}

// Runs a loop of `items` on `threads` and returns how often each item ran and the highest thread number.
struct loop_record {
  std::vector<int> runs;
  int highest_thread = -1;
};
loop_record record_loop(int threads, long items) {
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(items));
  std::atomic<int> highest{-1};
  detail::for_each_on_team(threads, items, [&](long i, int thread) noexcept {
    runs[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    int h = highest.load();
    while (thread > h && !highest.compare_exchange_weak(h, thread)) {
    }
  });
  loop_record r;
  for (const auto& n : runs) r.runs.push_back(n.load());
  r.highest_thread = highest.load();
  return r;
}

TEST(ThreadTeam, RunsEveryItemExactlyOnceOnThreadsNumberedBelowTheCountUsed) {
  for (int threads = 0; threads <= 5; ++threads)
    for (long items : {0L, 1L, 2L, 3L, 7L, 64L, 65L, 1000L}) {
      // Act
      const loop_record r = record_loop(threads, items);
      // Assert
      EXPECT_EQ(std::count(r.runs.begin(), r.runs.end(), 1), items) << threads << " threads, " << items << " items";
      EXPECT_LT(r.highest_thread, std::max<long>(1, std::min<long>(threads, items)))
          << threads << " threads, " << items << " items";
    }
}

TEST(ThreadTeam, LoopsStartedFromSeveralHostThreadsAtOnceEachRunEveryItemOnce) {
  // Arrange: 4 host threads, each running 300 loops of 37 items on 3 threads.
  std::atomic<long> wrong{0};
  // Act
  std::vector<std::thread> hosts;
  for (int h = 0; h < 4; ++h)
    hosts.emplace_back([&wrong] {
      for (int l = 0; l < 300; ++l) {
        const loop_record r = record_loop(3, 37);
        if (std::count(r.runs.begin(), r.runs.end(), 1) != 37 || r.highest_thread > 2) ++wrong;
      }
    });
  for (std::thread& t : hosts) t.join();
  // Assert
  EXPECT_EQ(wrong.load(), 0) << "loops with an item run other than once, or on a thread numbered 3 or more";
}

TEST(ThreadTeam, LoopStartedInsideAnItemRunsOnThatItemsThreadAlone) {
  // Arrange: 8 items on 2 threads, each starting a loop of 16 items on 4 threads.
  std::atomic<long> inner_elsewhere{0}, inner_runs{0};
  // Act
  detail::for_each_on_team(2, 8, [&](long, int) noexcept {
    const std::thread::id outer = std::this_thread::get_id();
    detail::for_each_on_team(4, 16, [&](long, int thread) noexcept {
      ++inner_runs;
      if (thread != 0 || std::this_thread::get_id() != outer) ++inner_elsewhere;
    });
  });
  // Assert
  EXPECT_EQ(inner_runs.load(), 8 * 16);
  EXPECT_EQ(inner_elsewhere.load(), 0);
}

TEST(ThreadTeam, ChildOfForkRunsLoopsOnThreadsOfItsOwn) {
  // Arrange: the parent's team has started its workers.
  const loop_record parent = record_loop(3, 100);
  ASSERT_EQ(std::count(parent.runs.begin(), parent.runs.end(), 1), 100);
  // Act: the child runs a loop on 3 threads (and is killed after 20 s if that hangs).
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(20);
    const loop_record r = record_loop(3, 100);
    _exit(std::count(r.runs.begin(), r.runs.end(), 1) == 100 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(child, &status, 0) == -1 && errno == EINTR) {
  }
  // Assert
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << "; SIGALRM: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Sets an environment variable for a test's duration.
class scoped_environment {
 public:
  scoped_environment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~scoped_environment() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int cpus_of_affinity_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

TEST(OmpDefaultThreads, FollowsOmpNumThreadsSetAfterStartUpElseTheCpusThisProcessMayRunOn) {
  // Arrange, act, assert: OMP_NUM_THREADS's first entry when it is a positive integer, read at the
  // call; else the affinity mask's CPU count.
  {
    const scoped_environment env("OMP_NUM_THREADS", "3");
    EXPECT_EQ(omp::default_threads(), 3);
  }
  {
    const scoped_environment env("OMP_NUM_THREADS", "5,2");
    EXPECT_EQ(omp::default_threads(), 5);
  }
  for (const char* ignored : {"0", "-2", "many", "", "4x"}) {
    const scoped_environment env("OMP_NUM_THREADS", ignored);
    EXPECT_EQ(omp::default_threads(), cpus_of_affinity_mask()) << "OMP_NUM_THREADS=" << ignored;
  }
  const scoped_environment env("OMP_NUM_THREADS", nullptr);
  EXPECT_EQ(omp::default_threads(), cpus_of_affinity_mask());
}

TEST(LyapunovBatch, ReportsProgressOnTheCallingThreadOnlyAndStartsNoMemberOnceStopped) {
  // Arrange: 300 double pendulums' largest exponents on 3 threads; stop after the calling thread's
  // third finished member.
  const engine& model = *find_builtin_engine("double_pendulum");
  constexpr long members = 300;
  std::vector<double> params(members * model.n_params()), q0(members * model.n()), v0(q0.size()), inputs;
  for (const lockstep_value_info& in : model.inputs()) inputs.push_back(in.default_value);
  for (long i = 0; i < members; ++i) {
    for (int j = 0; j < model.n_params(); ++j) params[i * model.n_params() + j] = model.params()[j].default_value;
    inputs[0] = 1.5 + 0.5 * static_cast<double>(i) / members;
    model.initial_state(&params[i * model.n_params()], inputs.data(), &q0[i * model.n()], &v0[i * model.n()]);
  }
  solver_options options;
  options.method = method_kind::bdf;
  options.form = formulation::ggl;
  const lyapunov_inputs in{params.data(), q0.data(), v0.data(), 0.0, 2.0, &options};
  const lockstep_lyapunov_request request = lyapunov_request(0, 1, 0.1, 0.0, 0, 1e-8, 0);
  std::mutex mutex;
  std::vector<std::thread::id> reported_on;
  long stop_calls = 0;
  lyapunov_batch b;
  // Act
  run_lyapunov_batch(
      model, in, request, 0, members, 3, b,
      [&](long) {
        const std::lock_guard<std::mutex> lock(mutex);
        reported_on.push_back(std::this_thread::get_id());
      },
      [&] {
        const std::lock_guard<std::mutex> lock(mutex);
        return ++stop_calls >= 3;
      });
  // Assert: progress came from this thread only; members started before the stop finished, the rest
  // never started (status running).
  EXPECT_EQ(reported_on.size(), 3u);
  for (const std::thread::id& id : reported_on) EXPECT_EQ(id, std::this_thread::get_id());
  const long finished = std::count(b.status.begin(), b.status.end(), member_status::success);
  const long never_started = std::count(b.status.begin(), b.status.end(), member_status::running);
  EXPECT_GE(finished, 3);
  EXPECT_GT(never_started, 0);
  EXPECT_EQ(finished + never_started, members) << "a member failed";
}

}  // namespace
