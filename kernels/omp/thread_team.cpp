// kernels/omp/thread_team.cpp — the thread team of kernels/omp/thread_team.hpp.
//
// One loop on a team: the caller publishes the loop (work, item count, a shared counter of the next
// item), opens it under a launch number, hands that number to as many workers as the loop may use
// (each worker has a word of its own to wait on, so no other worker wakes), takes items itself, and
// when none is left closes the loop and waits until no worker is inside it. A worker enters a loop by
// counting itself in `inside` and only then checking that its launch is still the open one, while the
// caller closes before reading `inside` (both sequentially consistent: Dekker's mutual exclusion), so a
// worker that wakes late — after the caller took every item — either is waited for or sees the loop
// closed and never touches it; the caller never waits for a worker that has not started yet.
#include "kernels/omp/thread_team.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace lockstep::detail {
namespace {

// How long a thread that waits for a change spins before it sleeps: covers the gap between two
// launches of a chunk (the scheduler compacts the active list in microseconds) so that back-to-back
// launches wake nobody from the kernel, and costs an idle worker at most this much CPU per launch.
constexpr auto spin_time = std::chrono::microseconds(50);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits until `word` no longer holds `old` and returns what it holds then: a bounded spin, then a
// passive wait (C++20 atomic wait: a futex on Linux). The words waited on are written by sequentially
// consistent operations, which keeps the notifying side's check for sleepers ordered after its store.
template <class T>
T wait_for_change(const std::atomic<T>& word, T old) {
  const auto deadline = std::chrono::steady_clock::now() + spin_time;
  for (unsigned i = 1;; ++i) {
    const T now = word.load(std::memory_order_acquire);
    if (now != old) return now;
    relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  word.wait(old, std::memory_order_acquire);  // returns once the value differs from old
  return word.load(std::memory_order_acquire);
}

// Set on workers for their lifetime and on a caller while its loop runs: a loop started there runs on
// that thread alone.
thread_local bool inside_a_loop = false;

class team {
 public:
  team() = default;
  team(const team&) = delete;
  team& operator=(const team&) = delete;
  // Teams live until the process ends (the pool never frees one), so no worker is ever joined.

  void run(int threads, long items, const team_work& work) {
    const int wanted = static_cast<int>(std::min<long>(threads, items)) - 1;
    const int helpers = std::min(wanted, grow(wanted));
    if (helpers <= 0) {
      run_alone(items, work);
      return;
    }
    work_ = &work;
    items_ = items;
    next_.store(0, std::memory_order_relaxed);
    launch_ = launch_ == UINT32_MAX ? 1 : launch_ + 1;  // 0 means "no loop open"
    open_.store(launch_, std::memory_order_seq_cst);    // publishes work_, items_ and next_
    for (int w = 0; w < helpers; ++w) {
      workers_[static_cast<std::size_t>(w)]->ticket.store(launch_, std::memory_order_seq_cst);
      workers_[static_cast<std::size_t>(w)]->ticket.notify_one();
    }
    inside_a_loop = true;
    take_items(0);
    inside_a_loop = false;
    open_.store(0, std::memory_order_seq_cst);
    // Every item is taken; wait for the workers still running theirs (their stores happen before
    // their leaving, which this acquires).
    for (int n; (n = inside_.load(std::memory_order_seq_cst)) != 0;) wait_for_change(inside_, n);
  }

  static void run_alone(long items, const team_work& work) {
    const bool was_inside = inside_a_loop;
    inside_a_loop = true;
    for (long i = 0; i < items; ++i) work(i, 0);
    inside_a_loop = was_inside;
  }

 private:
  struct alignas(64) worker {
    std::atomic<std::uint32_t> ticket{0};  // the launch this worker is asked to join (latest)
  };

  // Starts workers until there are `wanted` (or the system refuses a thread); returns how many exist.
  // Workers block every signal: process-directed signals (SIGINT, SIGTERM) go to the host's threads,
  // whose handlers the command and the Python module install, never to a thread inside a member.
  int grow(int wanted) {
    if (static_cast<int>(workers_.size()) >= wanted) return static_cast<int>(workers_.size());
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    try {
      workers_.reserve(static_cast<std::size_t>(wanted));
      while (static_cast<int>(workers_.size()) < wanted) {
        workers_.push_back(std::make_unique<worker>());
        const int index = static_cast<int>(workers_.size()) - 1;
        std::thread thread(&team::serve, this, workers_.back().get(), index);
        pthread_setname_np(thread.native_handle(), "lockstep-team");
        thread.detach();
      }
    } catch (const std::system_error&) {
      workers_.pop_back();  // no thread serves it
    } catch (const std::bad_alloc&) {
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return static_cast<int>(workers_.size());
  }

  // A worker's life: wait for a launch number, join that loop if it is still open, repeat.
  void serve(const worker* self, int index) {
    inside_a_loop = true;
    std::uint32_t seen = 0;
    for (;;) {
      seen = wait_for_change(self->ticket, seen);
      inside_.fetch_add(1, std::memory_order_seq_cst);
      if (open_.load(std::memory_order_seq_cst) == seen) take_items(index + 1);
      if (inside_.fetch_sub(1, std::memory_order_seq_cst) == 1) inside_.notify_one();
    }
  }

  void take_items(int thread) {
    const team_work& work = *work_;
    for (long i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < items_;) work(i, thread);
  }

  // Written by the caller only; workers read work_ and items_ only while their loop is open, and each
  // its own `worker` (never the vector, which grows while they run).
  std::vector<std::unique_ptr<worker>> workers_;
  const team_work* work_ = nullptr;
  long items_ = 0;
  std::uint32_t launch_ = 0;
  alignas(64) std::atomic<long> next_{0};           // the next item to hand out
  alignas(64) std::atomic<std::uint32_t> open_{0};  // the launch workers may join; 0: none
  alignas(64) std::atomic<int> inside_{0};          // workers between entering and leaving a loop
};

// Idle teams. Never freed: a team's workers outlive every static destructor (they sleep until the
// process ends), and a loop may run during static destruction.
struct team_pool {
  std::mutex mutex;
  std::vector<team*> idle;
};

std::atomic<team_pool*> current_pool{nullptr};

// The child of a fork() has only the forking thread: the parent's teams have no workers there, and
// their pool's mutex may be held by a thread that does not exist. The child starts a new pool.
void forget_pool_after_fork() { current_pool.store(nullptr, std::memory_order_relaxed); }

team_pool& pool() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, forget_pool_after_fork); });
  team_pool* p = current_pool.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  auto* fresh = new team_pool;
  if (current_pool.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *p;
}

}  // namespace

void run_on_team(int threads, long items, const team_work& work) {
  if (items <= 0) return;
  if (threads <= 1 || items == 1 || inside_a_loop) {
    team::run_alone(items, work);
    return;
  }
  team_pool& p = pool();
  team* t = nullptr;
  {
    const std::lock_guard<std::mutex> lock(p.mutex);
    if (!p.idle.empty()) {
      t = p.idle.back();
      p.idle.pop_back();
    }
  }
  if (t == nullptr) t = new team;
  t->run(threads, items, work);
  const std::lock_guard<std::mutex> lock(p.mutex);
  p.idle.push_back(t);
}

}  // namespace lockstep::detail
