// host/scheduler/scheduler.cpp — the host's backends (serial and omp) of solve_ensemble: the chunk loop
// of lockstep/chunks/chunk_driver.hpp run through the engine's kernels (lockstep/engine/engine.hpp),
// with chunk storage in host memory.
//
// The scheduler is the only place that knows about host memory budgets and threads, and it knows
// nothing of the model: it sees one through its engine. Per chunk: the inputs are transposed to SoA,
// `begin` runs once over all members, then `advance` (at most K attempts each) runs over the list of
// active members, which is compacted after every launch. Members never see the chunk they are in, its
// size, or K: a member's result depends on its own inputs only.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/launch.hpp"
#include "lockstep/chunks/chunk_delivery.hpp"
#include "lockstep/chunks/chunk_driver.hpp"
#include "lockstep/detail/split_factor.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/formulation/projection.hpp"

// Weak: present when the program links lockstep::omp (whose link options pull it in).
extern "C" __attribute__((weak)) void lockstep_omp_launch(int threads, const long* active, long count,
                                                          const lockstep::detail::block_task* task);

// Weak: present when the program links lockstep::cuda (kernels/cuda/ensemble_cuda.cu).
extern "C" __attribute__((weak)) int lockstep_cuda_device_count();

namespace lockstep {

bool omp::available() { return &lockstep_omp_launch != nullptr; }

std::size_t bytes_per_member(const engine& model, int save_count, method_kind method) {
  const lockstep_chunk_layout layout = model.chunk_layout(method);
  return sizeof(std::uint64_t) * static_cast<std::size_t>(layout.state_words) +
         sizeof(double) * (static_cast<std::size_t>(model.n_params()) + 2 * static_cast<std::size_t>(model.n()) +
                           static_cast<std::size_t>(save_count) * static_cast<std::size_t>(model.ny())) +
         sizeof(unsigned char) + sizeof(long);
}

std::size_t split_bytes_per_member(const engine& model, method_kind method, bool split, bool split_projections) {
  const lockstep_chunk_layout layout = model.chunk_layout(method);
  return (split ? sizeof(unsigned char) + sizeof(long) : 0) +
         (split_projections ? sizeof(std::uint64_t) * static_cast<std::size_t>(layout.projection_words) : 0);
}

std::size_t run_bytes_per_member(const engine& model, int save_count, bool keep_outputs) {
  const auto n = static_cast<std::size_t>(model.n()), ny = static_cast<std::size_t>(model.ny());
  const std::size_t problem = sizeof(double) * (static_cast<std::size_t>(model.n_params()) + 2 * n);
  const std::size_t solution = sizeof(member_status) + sizeof(member_counters) + sizeof(double) * (1 + ny) +
                               (keep_outputs ? sizeof(double) * static_cast<std::size_t>(save_count) * ny : 0);
  return problem + solution;
}

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
}

namespace {

void check_problem(const engine& model, const ensemble_problem& e, const run_options& ro) {
  detail::run_shape shape;
  shape.members = e.members;
  shape.params = e.params.size();
  shape.q0 = e.q0.size();
  shape.v0 = e.v0.size();
  shape.n_params = model.n_params();
  shape.n = model.n();
  shape.t0 = e.t0;
  shape.t1 = e.t1;
  shape.save_times = &e.save_times;
  shape.n_events = model.n_events();
  shape.event_capacity = e.event_capacity;
  detail::check_run(shape, ro, model.refusal(e.options));
}

// An empty result of the right shape: statuses running, outputs NaN.
ensemble_solution empty_solution(const engine& model, const ensemble_problem& e, const run_options& ro) {
  ensemble_solution r;
  r.members = e.members;
  r.save_count = static_cast<int>(e.save_times.size());
  r.n = model.n();
  r.m = model.m();
  r.k = model.k();
  r.ny = model.ny();
  const auto n = static_cast<std::size_t>(e.members);
  r.status.assign(n, member_status::running);
  r.counters.assign(n, member_counters{});
  if (ro.keep_outputs)
    r.outputs.assign(n * static_cast<std::size_t>(r.save_count) * static_cast<std::size_t>(r.ny),
                     std::numeric_limits<double>::quiet_NaN());
  r.t_final.assign(n, e.t0);
  r.y_final.assign(n * static_cast<std::size_t>(r.ny), 0.0);
  detail::size_event_results(r, model.n_events(), e.event_capacity, ro.keep_outputs);
  return r;
}

// A quarter of the host's available physical memory, at least 64 MiB and at most 256 MiB. The cap:
// CPU cores gain nothing from chunks beyond a few thousand members each (256 MiB holds 10^4 to 10^5
// members of every built-in model), while a chunk's outputs exist twice while it is gathered, so an
// uncapped quarter of RAM let a statistics-only study of 10^6 pendulums (101 save times) hold 80 % of
// its trajectories at once (10.9 GB resident, measured); streaming needs chunks well below the ensemble.
std::size_t host_memory_budget() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t available = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : std::size_t(1) << 30;
  return std::clamp<std::size_t>(available / 4, std::size_t(64) << 20, std::size_t(256) << 20);
}

// Members per chunk: the explicit chunk size, else what fits the memory budget.
long choose_chunk(const engine& model, const ensemble_problem& e, const run_options& ro, std::size_t budget,
                  std::size_t split_extra) {
  return detail::members_per_chunk(
      e.members, ro, budget, bytes_per_member(model, static_cast<int>(e.save_times.size()), e.options.method) + split_extra);
}

// One launch's engine call on each block, with the first failure kept for after the launch.
// A block is skipped once the run is asked to stop: the launch then ends after the blocks already
// running, and the launcher throws run_stopped.
template <class Call>
struct engine_task final : detail::block_task {
  engine_task(Call c, const std::function<bool()>* stop) : call(std::move(c)), stop_requested(stop) {}
  Call call;
  const std::function<bool()>* stop_requested;
  mutable std::mutex mutex;
  mutable std::exception_ptr failure;
  void operator()(const long* members, long count) const override {
    try {
      if (*stop_requested && (*stop_requested)()) throw run_stopped();
      call(members, count);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  }
};

class launcher {
 public:
  // threads <= 0 resolves to omp::default_threads() here, once per run rather than per launch.
  launcher(backend where, int threads, const std::function<bool()>& stop_requested)
      : where_(where),
        threads_(where == backend::omp && threads <= 0 ? omp::default_threads() : threads),
        stop_requested_(stop_requested) {}
  template <class Call>
  void operator()(const long* active, long count, Call call) const {
    engine_task<Call> task(std::move(call), &stop_requested_);
    if (where_ == backend::omp)
      lockstep_omp_launch(threads_, active, count, &task);
    else
      task(active, count);
    if (task.failure) std::rethrow_exception(task.failure);
    if (stop_requested_ && stop_requested_()) throw run_stopped();
  }

 private:
  backend where_;
  int threads_;
  const std::function<bool()>& stop_requested_;
};

// The host's executor of the chunk driver (lockstep/chunks/chunk_driver.hpp): the chunk's storage in
// host memory, reused from chunk to chunk, and the engine's kernels launched over the active list.
class host_executor {
 public:
  host_executor(const engine& model, const ensemble_problem& e, const run_options& ro, const launcher& launch,
                long chunk, bool split, bool split_projections, ensemble_solution& r)
      : model_(model), e_(e), ro_(ro), launch_(launch), r_(r), chunk_(chunk), split_projections_(split_projections) {
    const lockstep_chunk_layout layout = model.chunk_layout(e.options.method);
    const auto C = static_cast<std::size_t>(chunk);
    states_.resize(static_cast<std::size_t>(layout.state_words) * C);
    params_.resize(static_cast<std::size_t>(model.n_params()) * C);
    q0_.resize(static_cast<std::size_t>(model.n()) * C);
    v0_.resize(q0_.size());
    outputs_.resize(e.save_times.size() * static_cast<std::size_t>(model.ny()) * C);
    if (model.n_events() > 0)
      event_records_.resize(static_cast<std::size_t>(e.event_capacity) * static_cast<std::size_t>(2 + model.ny()) * C);
    finished_.resize(C);
    active_.resize(C);
    pending_.resize(split ? C : 0);
    projections_.resize(split_projections ? static_cast<std::size_t>(layout.projection_words) * C : 0);
    status_codes_.resize(C);

    view_.header = abi_header_for<lockstep_chunk>();
    view_.stride = chunk;
    view_.states = states_.data();
    view_.params = params_.data();
    view_.q0 = q0_.data();
    view_.v0 = v0_.data();
    view_.outputs = outputs_.data();
    view_.finished = finished_.data();
    view_.projections = split_projections ? projections_.data() : nullptr;
    view_.pending = split ? pending_.data() : nullptr;
    view_.save_times = e.save_times.data();
    view_.save_count = static_cast<int>(e.save_times.size());
    view_.method = static_cast<int>(e.options.method);
    view_.t0 = e.t0;
    view_.t1 = e.t1;
    options_ = abi_options(e.options);
    view_.options = &options_;
    view_.event_records = event_records_.empty() ? nullptr : event_records_.data();
    view_.event_capacity = model.n_events() > 0 ? e.event_capacity : 0;
  }
  host_executor(const host_executor&) = delete;
  host_executor& operator=(const host_executor&) = delete;

  void start_chunk(long first, long count) {
    detail::scatter_inputs(e_.params.data(), e_.q0.data(), e_.v0.data(), model_.n_params(), model_.n(), first, count,
                           chunk_, params_.data(), q0_.data(), v0_.data());
    std::fill(outputs_.begin(), outputs_.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(event_records_.begin(), event_records_.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(finished_.begin(), finished_.end(), 0);
    if (split_projections_) std::fill(projections_.begin(), projections_.end(), 0);  // no projection under way
    std::iota(active_.begin(), active_.begin() + count, 0L);
  }
  long begin(long n_active) {
    launch_(active_.data(), n_active, [&](const long* m, long c) { model_.begin(view_, m, c); });
    return compact(n_active);
  }
  long advance(long n_active) {
    launch_(active_.data(), n_active,
            [&](const long* m, long c) { model_.advance(view_, m, c, ro_.attempts_per_sync); });
    return compact(n_active);
  }
  long advance_split(long n_active) {
    launch_(active_.data(), n_active, [&](const long* m, long c) {
      model_.advance_split(view_, m, c, ro_.attempts_per_sync, projection_split_above(true));
    });
    return compact(n_active);
  }
  void factor(long n_active) {
    launch_(active_.data(), n_active, [&](const long* m, long c) { model_.factor(view_, m, c); });
  }
  // The finished chunk: statuses, counters and final states, then its outputs and on_chunk.
  long finish_chunk(long first, long count) {
    const int ny = model_.ny();
    const auto E = static_cast<std::size_t>(r_.n_events);
    member_event_results events;
    if (E > 0) {
      events.counts = r_.event_counts.data() + static_cast<std::size_t>(first) * E;
      events.first_times = r_.event_first_times.data() + static_cast<std::size_t>(first) * E;
      events.records_made = r_.event_records_made.data() + first;
      events.stop_event = r_.stop_event.data() + first;
    }
    model_.finish(view_, 0, count, status_codes_.data(), r_.counters.data() + first, r_.t_final.data() + first,
                  r_.y_final.data() + first * ny, events);
    long steps = 0;
    for (long i = 0; i < count; ++i) {
      r_.status[first + i] = static_cast<member_status>(status_codes_[i]);
      steps += r_.counters[first + i].steps;
    }
    detail::outputs_to_member_major(outputs_.data(), chunk_, count, view_.save_count, ny, member_outputs_);
    // The kept event records are outputs of as many "save points" as the capacity, 2 + ny values each.
    if (E > 0)
      detail::outputs_to_member_major(event_records_.data(), chunk_, count, view_.event_capacity, 2 + ny,
                                      member_event_records_);
    detail::deliver_chunk(r_, ro_, first, count, member_outputs_.data(), E > 0 ? member_event_records_.data() : nullptr);
    return steps;
  }
  long drain() { return 0; }  // every chunk's results are out when finish_chunk returns

 private:
  // The active list without the members that finished, in place and allocation-free
  // (std::stable_partition may allocate): its order only decides which member a thread takes next,
  // never a member's result. Returns how many remain.
  long compact(long n_active) {
    const auto end = std::partition(active_.begin(), active_.begin() + n_active,
                                    [&](long i) { return finished_[static_cast<std::size_t>(i)] == 0; });
    return static_cast<long>(end - active_.begin());
  }

  const engine& model_;
  const ensemble_problem& e_;
  const run_options& ro_;
  const launcher& launch_;
  ensemble_solution& r_;
  long chunk_;
  bool split_projections_;
  std::vector<std::uint64_t> states_;
  std::vector<double> params_, q0_, v0_, outputs_, member_outputs_;
  std::vector<double> event_records_, member_event_records_;  // SoA in the chunk, member-major for delivery
  std::vector<unsigned char> finished_, pending_;
  std::vector<long> active_;
  std::vector<std::uint64_t> projections_;
  std::vector<int> status_codes_;
  lockstep_solver_options options_{};
  lockstep_chunk view_{};
};

ensemble_solution run_chunked(const engine& model, const ensemble_problem& e, const run_options& ro,
                              const launcher& launch) {
  check_problem(model, e, ro);
  const auto start = std::chrono::steady_clock::now();
  const lockstep_chunk_layout layout = model.chunk_layout(e.options.method);

  ensemble_solution r = empty_solution(model, e, ro);
  const bool split = layout.can_split != 0 && ro.split_factorization;
  // The emulation splits every projection factorization too (projection_split_above(true)); the
  // members' resumable projections live beside their states.
  const bool split_projections = split && projects_after_steps(e.options.projection, e.options.form);
  const long chunk = choose_chunk(model, e, ro, ro.memory_budget > 0 ? ro.memory_budget : host_memory_budget(),
                                  split_bytes_per_member(model, e.options.method, split, split_projections) +
                                      detail::event_bytes_per_member(model.n_events(), e.event_capacity, model.ny()));
  r.chunk_size = chunk;
  host_executor x(model, e, ro, launch, chunk, split, split_projections, r);
  detail::drive_chunks(e.members, chunk, split, ro, x, start);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// The device backend runs its own chunking (kernels/cuda); its chunks come back through on_chunk.
ensemble_solution solve_on_device(const engine& model, const ensemble_problem& e, const run_options& ro) {
  check_problem(model, e, ro);
  if (&lockstep_cuda_device_count == nullptr)
    throw std::invalid_argument("lockstep: the cuda backend is not available in this build (no nvcc, or the program "
                                "does not link lockstep::cuda)");
  if (!model.device_built())
    throw std::invalid_argument(std::string("lockstep: the cuda backend is not built for model ") +
                                std::string(model.name()) +
                                " (lockstep/detail/device_models.hpp lists the models it instantiates)");
  const auto start = std::chrono::steady_clock::now();
  ensemble_solution r = empty_solution(model, e, ro);
  struct context_t {
    ensemble_solution* r;
    const run_options* ro;
    progress_report report;
    std::chrono::steady_clock::time_point start;
    std::exception_ptr failure;
  } context{&r, &ro, {}, start, nullptr};
  context.report.members_total = e.members;
  lockstep_device_run run{};
  run.header = abi_header_for<lockstep_device_run>();
  run.members = e.members;
  run.params = e.params.data();
  run.q0 = e.q0.data();
  run.v0 = e.v0.data();
  run.t0 = e.t0;
  run.t1 = e.t1;
  run.save_times = e.save_times.data();
  run.save_count = static_cast<int>(e.save_times.size());
  const lockstep_solver_options options = abi_options(e.options);
  run.options = &options;
  run.chunk_size = ro.chunk_size;
  run.memory_budget = ro.memory_budget;
  run.attempts_per_sync = ro.attempts_per_sync;
  run.split_factorization = ro.split_factorization ? 1 : 0;
  run.event_capacity = e.event_capacity;
  run.context = &context;
  run.on_chunk = [](void* raw, const lockstep_device_chunk* chunk) {
    auto& cx = *static_cast<context_t*>(raw);
    if (cx.failure) return;
    try {
      engine_detail::check_header(chunk, "a device chunk");
      ensemble_solution& s = *cx.r;
      const long first = chunk->first, count = chunk->count;
      const auto ny = static_cast<std::size_t>(s.ny);
      const auto* c = static_cast<const member_counters*>(chunk->counters);
      for (long i = 0; i < count; ++i) {
        s.status[first + i] = static_cast<member_status>(chunk->status[i]);
        s.counters[first + i] = c[i];
        s.t_final[first + i] = chunk->t_final[i];
      }
      std::copy(chunk->y_final, chunk->y_final + count * ny, s.y_final.begin() + static_cast<std::ptrdiff_t>(first * ny));
      if (s.n_events > 0) {
        if (chunk->n_events != s.n_events || chunk->event_capacity != s.event_capacity)
          throw std::logic_error("lockstep: a device chunk's events do not match the model's");
        const auto E = static_cast<std::size_t>(s.n_events);
        const auto members = static_cast<std::size_t>(count);
        std::copy(chunk->event_counts, chunk->event_counts + members * E,
                  s.event_counts.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * E));
        std::copy(chunk->event_first_times, chunk->event_first_times + members * E,
                  s.event_first_times.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * E));
        std::copy(chunk->event_records_made, chunk->event_records_made + members, s.event_records_made.begin() + first);
        std::copy(chunk->stop_event, chunk->stop_event + members, s.stop_event.begin() + first);
      }
      detail::deliver_chunk(s, *cx.ro, first, count, chunk->outputs, chunk->event_records);
    } catch (...) {
      cx.failure = std::current_exception();
    }
  };
  run.on_progress = [](void* raw, long finished, long steps) {
    auto& cx = *static_cast<context_t*>(raw);
    if (cx.failure) return;
    if (cx.ro->stop_requested && cx.ro->stop_requested()) {
      cx.failure = std::make_exception_ptr(run_stopped());
      return;
    }
    if (!cx.ro->on_progress) return;
    cx.report.members_finished = finished;
    cx.report.steps = steps;
    cx.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cx.start).count();
    try {
      cx.ro->on_progress(cx.report);
    } catch (...) {
      cx.failure = std::current_exception();
    }
  };
  model.solve_on_device(run);
  if (context.failure) std::rethrow_exception(context.failure);
  r.chunk_size = run.chunk_size_used;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

ensemble_solution solve_ensemble(const engine& model, const ensemble_problem& problem, const run_options& run) {
  switch (run.where) {
    case backend::serial: return run_chunked(model, problem, run, launcher(backend::serial, 1, run.stop_requested));
    case backend::omp:
      if (!omp::available())
        throw std::invalid_argument("lockstep: backend omp requested but this program does not link lockstep::omp");
      return run_chunked(model, problem, run, launcher(backend::omp, run.threads, run.stop_requested));
    case backend::cuda: return solve_on_device(model, problem, run);
  }
  throw std::invalid_argument("lockstep: unknown backend");
}

}  // namespace lockstep
