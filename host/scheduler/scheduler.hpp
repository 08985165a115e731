// host/scheduler/scheduler.hpp — splits an ensemble into chunks, launches the member kernels until
// every member has finished, and gathers the results.
//
// The scheduler is the only place that knows about memory budgets, chunk sizes and progress
// (docs/ARCHITECTURE.md section 1). Per chunk: the inputs are transposed to SoA, `begin_member` runs once over all
// members, then `advance_member` (at most K attempts each) runs over the list of active members, which
// is compacted after every launch (std::partition; on the device, thrust::partition). Members
// never see the chunk they are in, its size, or K: a member's result depends on its own inputs only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "kernels/common/member_kernels.hpp"
#include "kernels/common/soa.hpp"
#include "kernels/common/split_factor.hpp"
#include "lockstep/stepper/member.hpp"

namespace lockstep {

enum class backend : int { serial = 0, omp = 1, cuda = 2 };

inline const char* backend_name(backend b) {
  return b == backend::serial ? "serial" : (b == backend::omp ? "omp" : "cuda");
}

struct progress_report {
  long members_total = 0;
  long members_finished = 0;
  long steps = 0;          // accepted steps of finished members so far
  double seconds = 0.0;    // wall time since the run started
};

struct run_options {
  backend where = backend::serial;
  int threads = 0;                        // omp: 0 = the OpenMP default
  long chunk_size = 0;                    // members per chunk; 0 = from memory_budget
  std::size_t memory_budget = 0;          // bytes of chunk storage when chunk_size = 0; 0 = a quarter
                                          // of the backend's free memory (host: available RAM, capped
                                          // at 256 MiB: detail::host_memory_budget)
  int attempts_per_sync = 32;             // K: step attempts per member per launch
  // serial and omp: run the split path of kernels/common/split_factor.hpp (factorizations in a phase
  // between launches, by lu_factor) instead of the fused step: the CPU emulation of the CUDA backend's
  // path for large members, with results bitwise those of the fused path (tests/backend/split_factor_test).
  // Methods without a split path (rhoinf) run fused. cuda: members above split_factorization_threshold
  // always take the split path; this option sends every model there (cuBLAS factor phase).
  bool split_factorization = false;
  std::function<void(const progress_report&)> on_progress;  // called after every launch

  // Streaming: when keep_outputs is false, ensemble_result::outputs stays empty and a chunk's
  // trajectories exist only while on_chunk runs, so a study of 10^6 members that keeps statistics
  // only never holds all trajectories. Statuses, counters and final states are always kept.
  bool keep_outputs = true;
  std::function<void(const struct chunk_results&)> on_chunk;  // called once per finished chunk, in
                                                              // increasing member order
};

// One finished chunk, members [first, first + count), member-major. Valid during on_chunk only.
struct chunk_results {
  long first = 0, count = 0;
  int save_count = 0, ny = 0;
  const double* outputs = nullptr;        // [count][save][ny]: (q, v, lambda, mu, nu); NaN where never reached
  const member_status* status = nullptr;  // [count]
  const member_counters* counters = nullptr;
  const double* t_final = nullptr;        // [count]
  const double* y_final = nullptr;        // [count][ny]
};

// One model's ensemble: per-member parameters and initial state, shared times and options.
template <class Model>
struct ensemble {
  long members = 0;
  std::vector<double> params;  // members x n_params, member-major
  std::vector<double> q0, v0;  // members x n, member-major
  double t0 = 0.0, t1 = 1.0;
  std::vector<double> save_times;  // sorted, within [t0, t1]
  solver_options options;

  // `count` members with the model's default parameters and initial inputs.
  static ensemble with_defaults(long count) {
    ensemble e;
    e.members = count;
    e.params.resize(static_cast<std::size_t>(count) * Model::n_params);
    e.q0.resize(static_cast<std::size_t>(count) * Model::n);
    e.v0.resize(static_cast<std::size_t>(count) * Model::n);
    double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
    if constexpr (Model::n_inputs > 0)
      for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
    for (long i = 0; i < count; ++i) {
      for (int j = 0; j < Model::n_params; ++j) e.params[i * Model::n_params + j] = Model::params[j].default_value;
      e.set_initial_inputs(i, inputs);
    }
    return e;
  }

  double* params_of(long i) { return params.data() + i * Model::n_params; }
  const double* params_of(long i) const { return params.data() + i * Model::n_params; }

  // Maps named initial inputs (Model::inputs order) of member i to its (q0, v0) with its parameters.
  void set_initial_inputs(long i, const double* inputs) {
    vec<double, Model::n> q, v;
    Model::initial_state(params_of(i), inputs, q, v);
    for (int j = 0; j < Model::n; ++j) {
      q0[i * Model::n + j] = q[j];
      v0[i * Model::n + j] = v[j];
    }
  }
};

template <class Model>
struct ensemble_result {
  using layout = state_layout<Model>;
  static constexpr int ny = layout::size;
  long members = 0;
  int save_count = 0;
  std::vector<member_status> status;
  std::vector<member_counters> counters;
  std::vector<double> outputs;  // [member][save][ny]: (q, v, lambda, mu, nu); NaN where never reached
  std::vector<double> t_final;
  std::vector<double> y_final;  // [member][ny]
  long chunk_size = 0;          // what the scheduler used
  double seconds = 0.0;

  double y(long i, int s, int j) const { return outputs[(static_cast<std::size_t>(i) * save_count + s) * ny + j]; }
  double q(long i, int s, int j) const { return y(i, s, layout::q + j); }
  double v(long i, int s, int j) const { return y(i, s, layout::v + j); }
  double lambda(long i, int s, int j) const { return y(i, s, layout::lambda + j); }
};

// Bytes of chunk storage one member needs: its state, parameters, initial state, outputs, flag.
template <class Model, class Method>
constexpr std::size_t bytes_per_member_with(int save_count) {
  return sizeof(std::uint64_t) * soa_image<member_state<Model, Method>>::words +
         sizeof(double) * (Model::n_params + 2 * Model::n + static_cast<std::size_t>(save_count) * state_layout<Model>::size) +
         sizeof(unsigned char) + sizeof(long);
}

template <class Model>
constexpr std::size_t bytes_per_member(int save_count, method_kind method = method_kind::bdf) {
  return visit_method(method, [save_count]<class Method>() { return bytes_per_member_with<Model, Method>(save_count); });
}

// Bytes the split path (docs/GPU.md section 5) adds to a member's chunk storage: its pending flag and
// batch index, and its resumable projection when projections split.
template <class Model>
constexpr std::size_t split_bytes_per_member(bool split, bool split_projections) {
  return (split ? sizeof(unsigned char) + sizeof(long) : 0) +
         (split_projections ? sizeof(std::uint64_t) * soa_image<projection_work<Model>>::words : 0);
}

namespace detail {

template <class Model>
void check_ensemble(const ensemble<Model>& e, const run_options& ro) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("lockstep ensemble: " + why); };
  if (e.members < 0) fail("members must be non-negative");
  const auto n = static_cast<std::size_t>(e.members);
  if (e.params.size() != n * Model::n_params) fail("params must hold members x n_params values");
  if (e.q0.size() != n * Model::n || e.v0.size() != n * Model::n) fail("q0 and v0 must hold members x n values");
  if (!(e.t1 > e.t0)) fail("t1 must be greater than t0");
  for (std::size_t s = 0; s < e.save_times.size(); ++s) {
    if (!(e.save_times[s] >= e.t0 && e.save_times[s] <= e.t1)) fail("save time " + std::to_string(e.save_times[s]) + " outside [t0, t1]");
    if (s > 0 && !(e.save_times[s] > e.save_times[s - 1])) fail("save times must be strictly increasing");
  }
  if (const char* why = check_method_options(e.options); why[0] != '\0') fail(why);
  if (ro.attempts_per_sync < 1) fail("attempts_per_sync must be at least 1");
  if (ro.chunk_size < 0) fail("chunk_size must be non-negative");
}

// Member-major inputs of members [first, first + count) to SoA arrays of stride `chunk`.
template <class Model>
void scatter_inputs(const ensemble<Model>& e, long first, long count, long chunk, double* params, double* q0,
                    double* v0) {
  for (long i = 0; i < count; ++i) {
    for (int j = 0; j < Model::n_params; ++j) params[j * chunk + i] = e.params[(first + i) * Model::n_params + j];
    for (int j = 0; j < Model::n; ++j) {
      q0[j * chunk + i] = e.q0[(first + i) * Model::n + j];
      v0[j * chunk + i] = e.v0[(first + i) * Model::n + j];
    }
  }
}

// A finished chunk's SoA states and outputs into the member-major result (outputs only when kept),
// then handed to on_chunk; returns the chunk's accepted steps. `member_outputs` is scratch of
// count x save x ny doubles, reused from chunk to chunk.
template <class Model, class Method>
long gather_results(const ensemble<Model>& e, const run_options& ro, long first, long count, long chunk,
                    const std::uint64_t* states, const double* outputs, std::vector<double>& member_outputs,
                    ensemble_result<Model>& r) {
  constexpr int ny = state_layout<Model>::size;
  const int save_count = r.save_count;
  const std::size_t per_member = static_cast<std::size_t>(save_count) * ny;
  member_outputs.resize(per_member * static_cast<std::size_t>(count));
  long steps = 0;
  for (long i = 0; i < count; ++i) {
    const long g = first + i;
    for (int s = 0; s < save_count; ++s)
      for (int j = 0; j < ny; ++j)
        member_outputs[static_cast<std::size_t>(i) * per_member + static_cast<std::size_t>(s) * ny + j] =
            outputs[(static_cast<std::size_t>(s) * ny + j) * chunk + i];
    member_state<Model, Method> ms;
    soa_load(states, chunk, i, ms);
    r.status[g] = ms.status;
    r.counters[g] = ms.counters;
    r.t_final[g] = Method::time(ms.method);
    const state_vector<Model> y = member_final_state<Model>(ms, e.params_of(g), e.options);
    for (int j = 0; j < ny; ++j) r.y_final[g * ny + j] = y[j];
    steps += ms.counters.steps;
  }
  if (!r.outputs.empty())
    std::copy(member_outputs.begin(), member_outputs.end(),
              r.outputs.begin() + static_cast<std::ptrdiff_t>(per_member * static_cast<std::size_t>(first)));
  if (ro.on_chunk) {
    chunk_results c;
    c.first = first;
    c.count = count;
    c.save_count = save_count;
    c.ny = ny;
    c.outputs = member_outputs.data();
    c.status = r.status.data() + first;
    c.counters = r.counters.data() + first;
    c.t_final = r.t_final.data() + first;
    c.y_final = r.y_final.data() + first * ny;
    ro.on_chunk(c);
  }
  return steps;
}

// An empty result of the right shape: statuses running, outputs NaN.
template <class Model>
ensemble_result<Model> empty_result(const ensemble<Model>& e, const run_options& ro) {
  constexpr int ny = state_layout<Model>::size;
  ensemble_result<Model> r;
  r.members = e.members;
  r.save_count = static_cast<int>(e.save_times.size());
  const auto n = static_cast<std::size_t>(e.members);
  r.status.assign(n, member_status::running);
  r.counters.assign(n, member_counters{});
  if (ro.keep_outputs) r.outputs.assign(n * r.save_count * ny, std::numeric_limits<double>::quiet_NaN());
  r.t_final.assign(n, e.t0);
  r.y_final.assign(n * ny, 0.0);
  return r;
}

// A quarter of the host's available physical memory, at least 64 MiB and at most 256 MiB. The cap:
// CPU cores gain nothing from chunks beyond a few thousand members each (256 MiB holds 10^4 to 10^5
// members of every built-in model), while a chunk's outputs exist twice while it is gathered, so an
// uncapped quarter of RAM let a statistics-only study of 10^6 pendulums (101 save times) hold 80 % of
// its trajectories at once (10.9 GB resident, measured); streaming needs chunks well below the ensemble.
inline std::size_t host_memory_budget() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t available = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t(1) << 30;
  return std::clamp<std::size_t>(available / 4, std::size_t(64) << 20, std::size_t(256) << 20);
}

// Members per chunk: the explicit chunk size, else what fits the memory budget (split_extra: what the
// split path adds per member, split_bytes_per_member).
template <class Model>
long choose_chunk(const ensemble<Model>& e, const run_options& ro, std::size_t budget, std::size_t split_extra = 0) {
  const std::size_t per_member =
      bytes_per_member<Model>(static_cast<int>(e.save_times.size()), e.options.method) + split_extra;
  const long fit = static_cast<long>(std::max<std::size_t>(1, budget / per_member));
  const long chunk = ro.chunk_size > 0 ? ro.chunk_size : fit;
  return std::max(1L, std::min(chunk, std::max(1L, e.members)));
}

}  // namespace detail

// Runs the ensemble with Method through `launch(begin_or_advance_functor, active, count)`, chunk by chunk.
template <class Model, class Method, class Launch>
ensemble_result<Model> run_chunked(const ensemble<Model>& e, const run_options& ro, Launch&& launch) {
  detail::check_ensemble(e, ro);
  using layout = state_layout<Model>;
  constexpr int ny = layout::size;
  constexpr int words = soa_image<member_state<Model, Method>>::words;
  const auto start = std::chrono::steady_clock::now();
  const int save_count = static_cast<int>(e.save_times.size());

  ensemble_result<Model> r = detail::empty_result(e, ro);
  constexpr bool can_split = has_split_factorization<Method>;
  const bool split = can_split && ro.split_factorization;
  // The emulation splits every projection factorization too (projection_split_above(true)); the
  // members' resumable projections live beside their states.
  const bool split_projections = split && projects_after_steps(e.options.projection, e.options.form);
  const long chunk = detail::choose_chunk(e, ro, ro.memory_budget > 0 ? ro.memory_budget : detail::host_memory_budget(),
                                          split_bytes_per_member<Model>(split, split_projections));
  r.chunk_size = chunk;

  // Chunk storage, reused from chunk to chunk.
  std::vector<std::uint64_t> states(static_cast<std::size_t>(words) * chunk);
  std::vector<double> params(static_cast<std::size_t>(Model::n_params) * chunk);
  std::vector<double> q0(static_cast<std::size_t>(Model::n) * chunk), v0(q0.size());
  std::vector<double> outputs(static_cast<std::size_t>(save_count) * ny * chunk);
  std::vector<unsigned char> finished(static_cast<std::size_t>(chunk));
  std::vector<long> active(static_cast<std::size_t>(chunk));
  std::vector<double> member_outputs;
  std::vector<unsigned char> pending(split ? static_cast<std::size_t>(chunk) : 0);
  std::vector<std::uint64_t> projections(
      split_projections ? static_cast<std::size_t>(soa_image<projection_work<Model>>::words) * chunk : 0);

  progress_report report;
  report.members_total = e.members;
  for (long first = 0; first < e.members; first += chunk) {
    const long count = std::min(chunk, e.members - first);
    detail::scatter_inputs(e, first, count, chunk, params.data(), q0.data(), v0.data());
    std::fill(outputs.begin(), outputs.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(finished.begin(), finished.end(), 0);

    chunk_view<Model> view;
    view.stride = chunk;
    view.states = states.data();
    view.params = params.data();
    view.q0 = q0.data();
    view.v0 = v0.data();
    view.outputs = outputs.data();
    view.finished = finished.data();
    if (split_projections) {
      std::fill(projections.begin(), projections.end(), 0);  // zero bytes: no projection under way
      view.projections = projections.data();
    }
    view.save_times = e.save_times.data();
    view.save_count = save_count;
    view.t0 = e.t0;
    view.t1 = e.t1;
    view.options = e.options;

    std::iota(active.begin(), active.begin() + count, 0L);
    long n_active = count;
    launch(begin_member<Model, Method>{view}, active.data(), n_active);
    auto compact = [&] {
      // In place and allocation-free (std::stable_partition may allocate): the order of the active
      // list only decides which member a thread takes next, never a member's result.
      const auto end = std::partition(active.begin(), active.begin() + n_active,
                                      [&](long i) { return finished[static_cast<std::size_t>(i)] == 0; });
      const long still = static_cast<long>(end - active.begin());
      report.members_finished += n_active - still;
      n_active = still;
    };
    compact();
    while (n_active > 0) {
      if constexpr (can_split) {
        if (split) {  // kernels/common/split_factor.hpp: advance, then factor what the attempts left pending
          launch(advance_member_split<Model, Method>{view, ro.attempts_per_sync, pending.data(), projection_split_above(true)},
                 active.data(), n_active);
          compact();
          launch(factor_member<Model, Method>{view, pending.data()}, active.data(), n_active);
        }
      }
      if (!split) {
        launch(advance_member<Model, Method>{view, ro.attempts_per_sync}, active.data(), n_active);
        compact();
      }
      if (ro.on_progress) {
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ro.on_progress(report);
      }
    }

    report.steps += detail::gather_results<Model, Method>(e, ro, first, count, chunk, states.data(), outputs.data(),
                                                          member_outputs, r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace lockstep
