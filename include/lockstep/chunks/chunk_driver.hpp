// lockstep/chunks/chunk_driver.hpp — the chunk loop every backend runs, written once: the members go
// through the backend's storage a chunk at a time; per chunk, begin runs on every member, then advance
// (at most K attempts each) on the list of active members, which is compacted after every launch, until
// none is active (docs/ARCHITECTURE.md section 1). What a backend supplies is its executor: its chunk
// storage, the copies in and out, the launches over the active list and their compaction. The host
// scheduler (host/scheduler/scheduler.cpp: serial and omp, through a model's engine) and the CUDA
// backend (kernels/cuda/ensemble_cuda_impl.cuh: device memory, two streams) are such executors; the
// members never see the chunk they are in, its size or K, so a member's result depends on its own inputs
// only. Not API.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/ensemble.hpp"

namespace lockstep::detail {

// A run's shape, checked once for every backend before anything is allocated.
struct run_shape {
  long members = 0;
  std::size_t params = 0, q0 = 0, v0 = 0;  // the values given
  int n_params = 0, n = 0;                 // per member
  double t0 = 0.0, t1 = 0.0;
  const std::vector<double>* save_times = nullptr;
  int n_events = 0, event_capacity = 0;    // the model's events, the records kept per member
};

// Throws std::invalid_argument ("lockstep ensemble: ...") for a shape or run option no backend can run;
// `refusal` is the model's or the method options' reason to refuse, empty when none.
inline void check_run(const run_shape& s, const run_options& ro, const std::string& refusal) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("lockstep ensemble: " + why); };
  if (s.members < 0) fail("members must be non-negative");
  const auto members = static_cast<std::size_t>(s.members);
  if (s.params != members * static_cast<std::size_t>(s.n_params)) fail("params must hold members x n_params values");
  if (s.q0 != members * static_cast<std::size_t>(s.n) || s.v0 != members * static_cast<std::size_t>(s.n))
    fail("q0 and v0 must hold members x n values");
  if (!(s.t1 > s.t0)) fail("t1 must be greater than t0");
  if (s.n_events > 0 && s.event_capacity < 0)
    fail("event_capacity = " + std::to_string(s.event_capacity) + " is negative");
  const std::vector<double>& save = *s.save_times;
  for (std::size_t i = 0; i < save.size(); ++i) {
    if (!(save[i] >= s.t0 && save[i] <= s.t1)) fail("save time " + std::to_string(save[i]) + " outside [t0, t1]");
    if (i > 0 && !(save[i] > save[i - 1])) fail("save times must be strictly increasing");
  }
  if (!refusal.empty()) fail(refusal);
  if (ro.attempts_per_sync < 1) fail("attempts_per_sync must be at least 1");
  if (ro.chunk_size < 0) fail("chunk_size must be non-negative");
}

// Members per chunk: the run's chunk size, else as many as `budget` bytes hold at `per_member` bytes each
// (at least one, at most the ensemble).
inline long members_per_chunk(long members, const run_options& ro, std::size_t budget, std::size_t per_member) {
  const long fit = static_cast<long>(std::max<std::size_t>(1, budget / per_member));
  const long chunk = ro.chunk_size > 0 ? ro.chunk_size : fit;
  return std::max(1L, std::min(chunk, std::max(1L, members)));
}

// Member-major inputs of members [first, first + count) (n_params parameters, n positions and n
// velocities each) to SoA arrays of stride `stride`.
inline void scatter_inputs(const double* params_in, const double* q0_in, const double* v0_in, int n_params, int n,
                           long first, long count, long stride, double* params, double* q0, double* v0) {
  for (long i = 0; i < count; ++i) {
    for (int j = 0; j < n_params; ++j) params[j * stride + i] = params_in[(first + i) * n_params + j];
    for (int j = 0; j < n; ++j) {
      q0[j * stride + i] = q0_in[(first + i) * n + j];
      v0[j * stride + i] = v0_in[(first + i) * n + j];
    }
  }
}

// Runs `members` members through `x` in chunks of `chunk`, the split path (advance, then a factor phase
// for what the attempts left pending; lockstep/detail/split_factor.hpp) when `split` holds, reporting
// progress to ro.on_progress after every advance. The executor X provides, each launch running over the
// first n_active entries of its active list and returning how many remain active after its compaction:
//   void start_chunk(long first, long count)   inputs in, outputs NaN, nothing finished, active 0 .. count-1
//   long begin(long n_active)                  begin on each active member
//   long advance(long n_active)                at most K attempts of each (fused path)
//   long advance_split(long n_active)          the same up to each pending factorization (split path)
//   void factor(long n_active)                 the factor phase of the split path
//   long finish_chunk(long first, long count)  results out; the accepted steps of the members gathered
//   long drain()                               the results still pending (a backend whose copies out
//                                              overlap the next chunk); their accepted steps
template <class Executor>
void drive_chunks(long members, long chunk, bool split, const run_options& ro, Executor& x,
                  std::chrono::steady_clock::time_point start) {
  progress_report report;
  report.members_total = members;
  for (long first = 0; first < members; first += chunk) {
    const long count = std::min(chunk, members - first);
    x.start_chunk(first, count);
    long n_active = count;
    const auto compacted = [&](long still) {
      report.members_finished += n_active - still;
      n_active = still;
    };
    compacted(x.begin(n_active));
    while (n_active > 0) {
      if (split) {
        compacted(x.advance_split(n_active));
        x.factor(n_active);
      } else {
        compacted(x.advance(n_active));
      }
      if (ro.on_progress) {
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ro.on_progress(report);
      }
    }
    report.steps += x.finish_chunk(first, count);
  }
  x.drain();  // after the last progress report
}

}  // namespace lockstep::detail
