// The member stepper never allocates (docs/ARCHITECTURE.md section 1), so neither does the stepping loop: once a
// chunk's storage exists, any number of `advance_member` launches runs without touching the heap.
//
// This binary replaces every global operator new and delete (plain, array, sized, aligned, nothrow)
// with versions that count calls. Two kinds of check:
//   - the member kernels themselves: a chunk is set up beforehand exactly as run_chunked does, then
//     begin_member and hundreds of advance_member launches (K = 1, with the in-place compaction of
//     the active list between them) run while the counters must not move;
//   - a whole solve_ensemble: its allocation count is the same for t1 = 1 and t1 = 10 (same members,
//     chunk size and K; several times more steps and launches), so everything it allocates is set-up
//     and results, none of it per step or per launch.
// Both run on the serial and the omp backend. The omp backend's thread team allocates when it starts
// its workers (std::thread's state, through operator new), so the omp checks first warm the team up
// with a loop of the same thread count and only then count. Allocations through malloc itself are not
// counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <numeric>
#include <vector>

#include "kernels/omp/thread_team.hpp"
#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"

// ---- counting replacements of the global allocation functions --------------------------------------

namespace {

std::atomic<long> allocations{0};
std::atomic<long> deallocations{0};

void* counted_allocate(std::size_t size) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size > 0 ? size : 1);  // new(0) must return a distinct non-null pointer
}

void* counted_allocate_aligned(std::size_t size, std::align_val_t align) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t a = static_cast<std::size_t>(align);
  const std::size_t rounded = (size > 0 ? (size + a - 1) / a : 1) * a;  // aligned_alloc wants a multiple
  return std::aligned_alloc(a, rounded);
}

void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  deallocations.fetch_add(1, std::memory_order_relaxed);
  std::free(p);
}

void* allocate_or_throw(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return allocate_or_throw(counted_allocate(size)); }
void* operator new[](std::size_t size) { return allocate_or_throw(counted_allocate(size)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_allocate(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  return allocate_or_throw(counted_allocate_aligned(size, align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return allocate_or_throw(counted_allocate_aligned(size, align));
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_allocate_aligned(size, align);
}

void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }

// ---- tests -----------------------------------------------------------------------------------------

namespace {

using namespace lockstep;
using Model = models::double_pendulum;

constexpr int omp_threads = 2;  // explicit, so there is a real team even on one CPU or OMP_NUM_THREADS=1

struct heap_counts {
  long allocations, deallocations;
};

heap_counts heap_now() {
  return {allocations.load(std::memory_order_relaxed), deallocations.load(std::memory_order_relaxed)};
}

// Members that differ in theta1, so they take different numbers of steps and finish at different
// launches (the active list really shrinks).
ensemble<Model> make_ensemble(long members, double t1) {
  auto e = ensemble<Model>::with_defaults(members);
  for (long i = 0; i < members; ++i) {
    double inputs[Model::n_inputs];
    for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
    inputs[0] = 1.9 + 0.2 * static_cast<double>(i) / static_cast<double>(members);
    e.set_initial_inputs(i, inputs);
  }
  e.t1 = t1;
  e.save_times = {0.25, 0.5, 1.0};
  return e;
}

// The member kernels over the active members: a plain loop (as the serial backend runs them), and
// blocks of 8 on the thread team with a dynamic schedule (as the omp backend runs its blocks).
template <class Functor>
void serial_launch(const long* active, long count, const Functor& f) {
  for (long a = 0; a < count; ++a) f(active[a]);
}
template <class Functor>
void omp_launch(const long* active, long count, const Functor& f) {
  detail::for_each_on_team(omp_threads, (count + 7) / 8, [&](long block, int) noexcept {
    for (long a = 8 * block; a < std::min(count, 8 * block + 8); ++a) f(active[a]);
  });
}

// Runs a first loop on the team (which starts its worker) before anything is counted.
void warm_up_team() {
  std::vector<long> members(64);
  std::iota(members.begin(), members.end(), 0L);
  std::atomic<long> visited{0};
  omp_launch(members.data(), 64, [&](long) { visited.fetch_add(1, std::memory_order_relaxed); });
  ASSERT_EQ(visited.load(), 64);
}

// One chunk driven by hand, as run_chunked drives it: all storage is allocated here, before counting.
struct chunk_storage {
  static constexpr int ny = state_layout<Model>::size;
  static constexpr int words = soa_image<member_state<Model, bdf_method>>::words;
  long count;
  std::vector<double> save_times;
  std::vector<std::uint64_t> states;
  std::vector<double> params, q0, v0, outputs;
  std::vector<unsigned char> finished;
  std::vector<long> active;

  explicit chunk_storage(const ensemble<Model>& e)
      : count(e.members),
        save_times(e.save_times),
        states(static_cast<std::size_t>(words) * count),
        params(static_cast<std::size_t>(Model::n_params) * count),
        q0(static_cast<std::size_t>(Model::n) * count),
        v0(q0.size()),
        outputs(save_times.size() * ny * count, std::nan("")),
        finished(static_cast<std::size_t>(count), 0),
        active(static_cast<std::size_t>(count)) {
    detail::scatter_inputs(e, 0, count, count, params.data(), q0.data(), v0.data());
  }

  chunk_view<Model> view(const ensemble<Model>& e) {
    chunk_view<Model> c;
    c.stride = count;
    c.states = states.data();
    c.params = params.data();
    c.q0 = q0.data();
    c.v0 = v0.data();
    c.outputs = outputs.data();
    c.finished = finished.data();
    c.save_times = save_times.data();
    c.save_count = static_cast<int>(save_times.size());
    c.t0 = e.t0;
    c.t1 = e.t1;
    c.options = e.options;
    return c;
  }
};

struct kernel_run {
  heap_counts before, after;
  long advance_launches = 0;
  long succeeded = 0;
};

// begin_member once, then advance_member with K = 1 until every member has finished, compacting the
// active list in place between launches; the heap is sampled just before and just after.
template <class Launch>
kernel_run run_member_kernels(const ensemble<Model>& e, Launch&& launch) {
  chunk_storage chunk(e);
  const chunk_view<Model> view = chunk.view(e);
  std::iota(chunk.active.begin(), chunk.active.end(), 0L);
  long n_active = chunk.count;
  long launches = 0;
  auto compact = [&] {
    const auto end = std::partition(chunk.active.begin(), chunk.active.begin() + n_active,
                                    [&](long i) { return chunk.finished[static_cast<std::size_t>(i)] == 0; });
    n_active = static_cast<long>(end - chunk.active.begin());
  };

  kernel_run run;
  run.before = heap_now();
  launch(begin_member<Model, bdf_method>{view}, chunk.active.data(), n_active);
  compact();
  while (n_active > 0 && launches < 1000000) {
    launch(advance_member<Model, bdf_method>{view, 1}, chunk.active.data(), n_active);
    ++launches;
    compact();
  }
  run.after = heap_now();

  run.advance_launches = launches;
  for (long i = 0; i < chunk.count; ++i) {
    member_state<Model, bdf_method> ms;
    soa_load(chunk.states.data(), chunk.count, i, ms);
    run.succeeded += ms.status == member_status::success;
  }
  return run;
}

void expect_member_kernels_do_not_allocate(const kernel_run& run, long members) {
  EXPECT_EQ(run.succeeded, members);
  EXPECT_GT(run.advance_launches, 100) << "too few launches to show anything";
  EXPECT_EQ(run.after.allocations - run.before.allocations, 0)
      << "allocations during begin_member and " << run.advance_launches << " advance_member launches";
  EXPECT_EQ(run.after.deallocations - run.before.deallocations, 0);
}

TEST(BackendAllocation, SerialMemberKernelsNeverAllocateAcrossHundredsOfAdvanceLaunches) {
  const auto e = make_ensemble(40, 1.0);
  const kernel_run run = run_member_kernels(e, [](const auto& f, const long* active, long count) {
    serial_launch(active, count, f);
  });
  expect_member_kernels_do_not_allocate(run, e.members);
}

TEST(BackendAllocation, OmpMemberKernelsNeverAllocateAcrossHundredsOfAdvanceLaunchesAfterWarmUp) {
  ASSERT_TRUE(omp::available());
  warm_up_team();
  const auto e = make_ensemble(40, 1.0);
  const kernel_run run = run_member_kernels(e, [](const auto& f, const long* active, long count) {
    omp_launch(active, count, f);
  });
  expect_member_kernels_do_not_allocate(run, e.members);
}

struct solve_run {
  long allocations = 0;
  long launches = 0;  // advance launches, counted by the progress callback
  long steps = 0;
  long succeeded = 0;
};

solve_run solve_and_count(const ensemble<Model>& e, backend where) {
  long launches = 0;
  run_options run;
  run.where = where;
  run.threads = omp_threads;
  run.chunk_size = 16;  // 48 members: three chunks
  run.attempts_per_sync = 4;
  run.on_progress = [&launches](const progress_report&) { ++launches; };  // small: stored in place

  const heap_counts before = heap_now();
  const auto r = solve_ensemble(e, run);
  const heap_counts after = heap_now();

  solve_run s;
  s.allocations = after.allocations - before.allocations;
  s.launches = launches;
  for (long i = 0; i < r.members; ++i) {
    s.steps += r.counters[i].steps;
    s.succeeded += r.status[i] == member_status::success;
  }
  return s;
}

// Same members, chunk size (16) and K (4); t1 = 10 takes several times the steps and launches of
// t1 = 1, yet the allocation count is identical: the scheduler allocates per solve, never per launch.
void expect_allocations_independent_of_steps(backend where) {
  const auto short_run = solve_and_count(make_ensemble(48, 1.0), where);
  const auto long_run = solve_and_count(make_ensemble(48, 10.0), where);
  EXPECT_EQ(short_run.succeeded, 48);
  EXPECT_EQ(long_run.succeeded, 48);
  EXPECT_GT(long_run.steps, 4 * short_run.steps);
  EXPECT_GT(long_run.launches, 4 * short_run.launches);
  EXPECT_GT(short_run.allocations, 0) << "the counting operator new is not in use";
  EXPECT_EQ(long_run.allocations, short_run.allocations)
      << "t1 = 1: " << short_run.steps << " steps, " << short_run.launches << " launches; t1 = 10: "
      << long_run.steps << " steps, " << long_run.launches << " launches";
}

TEST(BackendAllocation, SerialSolveAllocatesTheSameForTenTimesTheIntegrationInterval) {
  expect_allocations_independent_of_steps(backend::serial);
}

TEST(BackendAllocation, OmpSolveAllocatesTheSameForTenTimesTheIntegrationIntervalAfterWarmUp) {
  ASSERT_TRUE(omp::available());
  warm_up_team();
  expect_allocations_independent_of_steps(backend::omp);
}

}  // namespace
