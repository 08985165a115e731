// lockstep/chunks/typed_chunks.hpp — the chunk loop's checks, sizes and results for a model known at
// compile time: what the CUDA backend (kernels/cuda), an executor of lockstep/chunks/chunk_driver.hpp
// built per model, needs besides the driver. The model-agnostic scheduler (host/scheduler) does the same
// through the engine. Not API.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/chunks/chunk_delivery.hpp"
#include "lockstep/chunks/chunk_driver.hpp"
#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/detail/soa.hpp"
#include "lockstep/detail/split_factor.hpp"
#include "lockstep/stepper/member.hpp"
#include "lockstep/typed_ensemble.hpp"

namespace lockstep {

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
  run_shape shape;
  shape.members = e.members;
  shape.params = e.params.size();
  shape.q0 = e.q0.size();
  shape.v0 = e.v0.size();
  shape.n_params = Model::n_params;
  shape.n = Model::n;
  shape.t0 = e.t0;
  shape.t1 = e.t1;
  shape.save_times = &e.save_times;
  shape.n_events = event_count<Model>;
  shape.event_capacity = e.event_capacity;
  check_run(shape, ro, check_method_options(e.options));
}

// Member-major inputs of members [first, first + count) to SoA arrays of stride `chunk`.
template <class Model>
void scatter_inputs(const ensemble<Model>& e, long first, long count, long chunk, double* params, double* q0,
                    double* v0) {
  scatter_inputs(e.params.data(), e.q0.data(), e.v0.data(), Model::n_params, Model::n, first, count, chunk, params,
                 q0, v0);
}

// The view of a chunk of `stride` members of `e` over its storage (host or device memory): every input
// and output of the member functors but the split path's projections and the event records, which the
// runs that keep them set.
template <class Model>
chunk_view<Model> chunk_view_of(const ensemble<Model>& e, long stride, std::uint64_t* states, const double* params,
                                const double* q0, const double* v0, double* outputs, unsigned char* finished,
                                const double* save_times) {
  chunk_view<Model> view;
  view.stride = stride;
  view.states = states;
  view.params = params;
  view.q0 = q0;
  view.v0 = v0;
  view.outputs = outputs;
  view.finished = finished;
  view.save_times = save_times;
  view.save_count = static_cast<int>(e.save_times.size());
  view.t0 = e.t0;
  view.t1 = e.t1;
  view.options = e.options;
  return view;
}

// A finished chunk's SoA states and outputs (and event records: null for a model without events) into
// the member-major result (outputs and records only when kept), then handed to on_chunk; returns the
// chunk's accepted steps. `member_outputs` and `member_event_records` are scratch, reused from chunk
// to chunk.
template <class Model, class Method>
long gather_results(const ensemble<Model>& e, const run_options& ro, long first, long count, long chunk,
                    const std::uint64_t* states, const double* outputs, std::vector<double>& member_outputs,
                    ensemble_result<Model>& r, const double* event_records,
                    std::vector<double>& member_event_records) {
  constexpr int ny = state_layout<Model>::size;
  constexpr int E = event_count<Model>;
  long steps = 0;
  for (long i = 0; i < count; ++i) {
    const long g = first + i;
    member_state<Model, Method> ms;
    soa_load(states, chunk, i, ms);
    r.status[g] = ms.status;
    r.counters[g] = ms.counters;
    r.t_final[g] = member_final_time<Model>(ms);
    const state_vector<Model> y = member_final_state<Model>(ms, e.params_of(g), e.options);
    for (int j = 0; j < ny; ++j) r.y_final[g * ny + j] = y[j];
    if constexpr (E > 0)
      member_event_results_of<Model>(ms.events, r.event_counts.data() + g * E, r.event_first_times.data() + g * E,
                                     r.event_records_made.data() + g, r.stop_event.data() + g);
    steps += ms.counters.steps;
  }
  outputs_to_member_major(outputs, chunk, count, r.save_count, ny, member_outputs);
  // The kept event records are outputs of as many "save points" as the capacity, 2 + ny values each.
  if (E > 0 && event_records != nullptr)
    outputs_to_member_major(event_records, chunk, count, r.event_capacity, 2 + ny, member_event_records);
  deliver_chunk(r, ro, first, count, member_outputs.data(),
                E > 0 && event_records != nullptr ? member_event_records.data() : nullptr);
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
  size_event_results(r, event_count<Model>, e.event_capacity, ro.keep_outputs);
  return r;
}

// Members per chunk: the explicit chunk size, else what fits the memory budget (split_extra: what the
// split path adds per member, split_bytes_per_member).
template <class Model>
long choose_chunk(const ensemble<Model>& e, const run_options& ro, std::size_t budget, std::size_t split_extra = 0) {
  return members_per_chunk(
      e.members, ro, budget,
      bytes_per_member<Model>(static_cast<int>(e.save_times.size()), e.options.method) + split_extra +
          event_bytes_per_member(event_count<Model>, e.event_capacity, state_layout<Model>::size));
}

}  // namespace detail

}  // namespace lockstep
