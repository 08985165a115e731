// lockstep/detail/member_kernels.hpp — the per-member functors every backend launches.
//
// One algorithm, one declaration (Ginkgo's batch solvers are the model): `begin_member` initializes
// member i of a chunk, `advance_member` performs at most K step attempts of member i and writes the
// outputs it passes. Both load the member's state from SoA storage into locals and store it back, and
// run stepper/member.hpp, the code the single-member driver runs, so the backends differ only in how
// they iterate over i (the serial launch in host/scheduler/scheduler.cpp, kernels/omp, kernels/cuda).
#pragma once

#include <cstdint>

#include "lockstep/detail/soa.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/stepper/member.hpp"

namespace lockstep {

// Pointers into one chunk's storage (host or device memory); plain data, copied into kernels.
template <class Model>
struct chunk_view {
  using layout = state_layout<Model>;
  long stride = 0;                  // members in the chunk (SoA stride)
  std::uint64_t* states = nullptr;  // soa_image<member_state<Model, Method>>::words x stride
  const double* params = nullptr;   // Model::n_params x stride
  const double* q0 = nullptr;       // n x stride
  const double* v0 = nullptr;       // n x stride
  double* outputs = nullptr;        // (save_count * layout::size) x stride; NaN until written
  unsigned char* finished = nullptr;  // 1 once the member has finished (success or failure)
  // The split path's resumable projections (lockstep/detail/split_factor.hpp): soa_image<
  // projection_work<Model>>::words x stride, or null where projections run in the thread.
  std::uint64_t* projections = nullptr;
  const double* save_times = nullptr;
  int save_count = 0;
  double t0 = 0.0, t1 = 0.0;
  solver_options options;
  // The event records (stepper/events.hpp) of a model with events: record r of member i is (t, k, y)
  // at [(r * (2 + layout::size) + j) * stride + i] for r < event_capacity; those beyond it are counted
  // in the member's state, not kept. Null (capacity 0): none kept.
  double* event_records = nullptr;
  int event_capacity = 0;
};

namespace detail {

template <class Model>
struct soa_output_sink {
  double* outputs;
  long stride, i;
  double* event_records = nullptr;  // chunk_view's
  int event_capacity = 0;
  LOCKSTEP_HD void operator()(int save_index, double, const state_vector<Model>& y) const {
    constexpr int ny = state_layout<Model>::size;
    for (int j = 0; j < ny; ++j) outputs[(static_cast<long>(save_index) * ny + j) * stride + i] = y[j];
  }
  // Record `index` of the member: event k at t with state y (chunk_view, event_records).
  LOCKSTEP_HD void event(long index, int k, double t, const state_vector<Model>& y) const {
    constexpr int ny = state_layout<Model>::size;
    if (event_records == nullptr || index >= event_capacity) return;
    double* r = event_records + index * (2 + ny) * stride + i;
    r[0] = t;
    r[stride] = double(k);
    for (int j = 0; j < ny; ++j) r[(2 + j) * stride] = y[j];
  }
};

template <class Model>
LOCKSTEP_HD soa_output_sink<Model> output_sink_of(const chunk_view<Model>& c, long i) {
  return {c.outputs, c.stride, i, c.event_records, c.event_capacity};
}

// Parameters of member i as a contiguous local array (models take const double*).
template <class Model>
LOCKSTEP_HD void load_params(const chunk_view<Model>& c, long i, double (&p)[Model::n_params]) {
  for (int j = 0; j < Model::n_params; ++j) p[j] = c.params[j * c.stride + i];
}

}  // namespace detail

// Where a kernel keeps the member it works on when the member is too large for one thread's local
// memory: a slot in memory the backend allocates (device global memory on CUDA), one per member of the
// chunk. By default (InWorkspace = false) the functors keep it in locals, loaded from and stored to the
// SoA chunk. Why a workspace: a GPU reserves a kernel's local memory for every thread the device can
// hold (CUDA Programming Guide, "Device Memory Accesses", local memory; docs/GPU.md sections 1 and 5.7), so
// chain<16>'s 77-141 KB state in locals costs its size x 270k threads on an H100, while a workspace
// costs its size x the members of the chunk, and is counted in the chunk's memory budget. The
// functions run on the slot by reference, the same code on the same values: results cannot differ.
template <class Model, class Method>
struct member_workspace {
  member_state<Model, Method> state;
  projection_work<Model> projection;  // advance_member_split's resumable projection
};

template <class Model, class Method, bool InWorkspace = false>
struct begin_member {
  chunk_view<Model> c;
  member_workspace<Model, Method>* workspace = nullptr;  // InWorkspace: slot i serves member i
  LOCKSTEP_HD void operator()(long i) const {
    if constexpr (InWorkspace) {
      run(i, workspace[i].state);
    } else {
      member_state<Model, Method> ms;
      run(i, ms);
    }
  }
  LOCKSTEP_HD void run(long i, member_state<Model, Method>& ms) const {
    double p[Model::n_params];
    detail::load_params(c, i, p);
    vec<double, Model::n> q0, v0;
    for (int j = 0; j < Model::n; ++j) {
      q0[j] = c.q0[j * c.stride + i];
      v0[j] = c.v0[j * c.stride + i];
    }
    const detail::soa_output_sink<Model> sink = detail::output_sink_of(c, i);
    member_begin<Model>(ms, c.t0, c.t1, q0, v0, p, c.options, c.save_times, c.save_count, sink);
    c.finished[i] = ms.status != member_status::running;
    soa_store(c.states, c.stride, i, ms);
  }
};

template <class Model, class Method>
struct advance_member {
  chunk_view<Model> c;
  int max_attempts;
  LOCKSTEP_HD void operator()(long i) const {
    double p[Model::n_params];
    detail::load_params(c, i, p);
    member_state<Model, Method> ms;
    soa_load(c.states, c.stride, i, ms);
    const detail::soa_output_sink<Model> sink = detail::output_sink_of(c, i);
    c.finished[i] = member_advance<Model>(ms, max_attempts, c.t1, p, c.options, c.save_times, c.save_count, sink);
    soa_store(c.states, c.stride, i, ms);
  }
};

}  // namespace lockstep
