// kernels/omp/thread_team.hpp — the CPU cores' thread team: parallel loops over independent items on
// persistent worker threads that wait passively while there is no work.
//
// The omp backend's launches (kernels/omp/launch.cpp) and the host's Lyapunov batches
// (host/engine/lyapunov_batch.hpp) run on it; it is defined in the lockstep::omp library.
//
// Why not OpenMP: the scheduler alternates short launches with host work on the calling thread, and
// an OpenMP runtime's idle threads spin between parallel regions (libgomp: about 300,000 iterations,
// some milliseconds, after every region) on the cores the calling thread and other processes need.
// libgomp reads its wait policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT) once, when it is loaded, and has no
// call to change it, so a library cannot choose it for its users. Here a worker that runs out of work
// spins for at most 50 µs of wall time (long enough to be there for the next launch of a chunk, which
// follows within microseconds) and then sleeps in the kernel until it is given work again.
//
// Concurrent callers: each parallel loop holds a team of its own for its duration, taken from a pool
// of idle teams (a new one is made when every team is busy), so loops started from different host
// threads run side by side and never wait for each other — a Lyapunov batch can hold its team for
// minutes — and the process keeps only as many teams as loops ever ran at once. A loop started from
// inside an item of another runs on its calling thread alone (nested parallelism, as OpenMP's default
// has it, would only oversubscribe the cores).
//
// After fork() the child starts a new pool: the parent's workers do not exist there.
#pragma once

namespace lockstep::detail {

// One item of a parallel loop. `thread` numbers the thread it runs on: 0 is the loop's calling thread,
// 1 .. threads - 1 the team's workers. It is noexcept: an exception that reaches it ends the program
// (std::terminate) on whichever thread it runs, so callers catch per item (the scheduler's block task
// keeps the first failure for after the launch).
struct team_work {
  virtual void operator()(long item, int thread) const noexcept = 0;

 protected:
  ~team_work() = default;
};

// Calls work(i, thread) exactly once for every i in [0, items), on at most `threads` threads (the
// calling thread among them, and never more threads than items; threads <= 1: all on the calling
// thread, with no other thread woken). Items are handed out in increasing order, one at a time, to
// whichever thread asks next (a dynamic schedule: items may cost very different times). Returns when
// every call has returned, and their effects are then visible to the caller. A caller that loops
// alone allocates nothing once its team has the workers (its first loops with that many threads start
// them); callers on several threads at once get a team each, made on first need.
void run_on_team(int threads, long items, const team_work& work);

// run_on_team with a callable f(long item, int thread) (noexcept: see team_work).
template <class F>
void for_each_on_team(int threads, long items, const F& f) {
  struct adapter final : team_work {
    explicit adapter(const F& g) : f(g) {}
    const F& f;
    void operator()(long item, int thread) const noexcept override { f(item, thread); }
  };
  run_on_team(threads, items, adapter(f));
}

}  // namespace lockstep::detail
