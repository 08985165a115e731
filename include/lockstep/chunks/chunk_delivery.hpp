// lockstep/chunks/chunk_delivery.hpp — what every backend does with a finished chunk: its SoA outputs
// turned member-major, kept in the result when the run keeps outputs, and handed to on_chunk with the
// members' statuses, counters and final states. The host scheduler (host/scheduler/scheduler.cpp) and
// the backends that run their own chunking (kernels/cuda, through lockstep/chunks/typed_chunks.hpp)
// share it. Not API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "lockstep/ensemble.hpp"

namespace lockstep::detail {

// Outputs of members [0, count) of a chunk of stride `stride`, SoA ([save][ny] x stride), into
// member_major ([count][save][ny]).
inline void outputs_to_member_major(const double* soa, long stride, long count, int save_count, int ny,
                                    std::vector<double>& member_major) {
  const std::size_t per_member = static_cast<std::size_t>(save_count) * static_cast<std::size_t>(ny);
  member_major.resize(per_member * static_cast<std::size_t>(count));
  for (long i = 0; i < count; ++i)
    for (int s = 0; s < save_count; ++s)
      for (int j = 0; j < ny; ++j)
        member_major[static_cast<std::size_t>(i) * per_member + static_cast<std::size_t>(s) * ny + j] =
            soa[(static_cast<std::size_t>(s) * ny + j) * static_cast<std::size_t>(stride) + i];
}

// What a model's events add to a member's chunk storage: its kept records, twice (the host holds a
// chunk's records and their member-major copy while it gathers them; a device's memory holds them
// once, which this overstates), and its counts and first times.
inline std::size_t event_bytes_per_member(int n_events, int event_capacity, int ny) {
  if (n_events <= 0) return 0;
  return 2 * sizeof(double) * static_cast<std::size_t>(event_capacity) * static_cast<std::size_t>(2 + ny) +
         (sizeof(long) + sizeof(double)) * static_cast<std::size_t>(n_events) + sizeof(long) + sizeof(int);
}

// The event arrays of an empty result for a model with n_events > 0 (r.members and r.ny set): no
// occurrence, no first time (NaN), no record, no stop; the records kept only with the outputs.
inline void size_event_results(ensemble_solution& r, int n_events, int event_capacity, bool keep_outputs) {
  if (n_events <= 0) return;
  const auto n = static_cast<std::size_t>(r.members);
  const auto E = static_cast<std::size_t>(n_events);
  r.n_events = n_events;
  r.event_capacity = event_capacity;
  r.event_counts.assign(n * E, 0);
  r.event_first_times.assign(n * E, std::numeric_limits<double>::quiet_NaN());
  r.event_records_made.assign(n, 0);
  r.stop_event.assign(n, -1);
  if (keep_outputs)
    r.event_records.assign(n * static_cast<std::size_t>(event_capacity) * static_cast<std::size_t>(2 + r.ny),
                           std::numeric_limits<double>::quiet_NaN());
}

// Members [first, first + count), whose statuses, counters, final states and event counts r already
// holds: their member-major outputs (and event records, for a model with events) into r (when it keeps
// outputs), then the chunk to ro.on_chunk.
inline void deliver_chunk(ensemble_solution& r, const run_options& ro, long first, long count,
                          const double* member_outputs, const double* member_event_records = nullptr) {
  const std::size_t per_member = static_cast<std::size_t>(r.save_count) * static_cast<std::size_t>(r.ny);
  if (!r.outputs.empty())
    std::copy(member_outputs, member_outputs + per_member * static_cast<std::size_t>(count),
              r.outputs.begin() + static_cast<std::ptrdiff_t>(per_member * static_cast<std::size_t>(first)));
  const std::size_t records_per_member = static_cast<std::size_t>(r.event_capacity) * static_cast<std::size_t>(2 + r.ny);
  if (!r.event_records.empty() && member_event_records != nullptr)
    std::copy(member_event_records, member_event_records + records_per_member * static_cast<std::size_t>(count),
              r.event_records.begin() + static_cast<std::ptrdiff_t>(records_per_member * static_cast<std::size_t>(first)));
  if (!ro.on_chunk) return;
  chunk_results c;
  c.first = first;
  c.count = count;
  c.save_count = r.save_count;
  c.ny = r.ny;
  c.outputs = member_outputs;
  c.status = r.status.data() + first;
  c.counters = r.counters.data() + first;
  c.t_final = r.t_final.data() + first;
  c.y_final = r.y_final.data() + first * r.ny;
  if (r.n_events > 0) {
    const auto E = static_cast<std::size_t>(r.n_events);
    c.n_events = r.n_events;
    c.event_capacity = r.event_capacity;
    c.event_counts = r.event_counts.data() + static_cast<std::size_t>(first) * E;
    c.event_first_times = r.event_first_times.data() + static_cast<std::size_t>(first) * E;
    c.event_records_made = r.event_records_made.data() + first;
    c.stop_event = r.stop_event.data() + first;
    c.event_records = member_event_records;
  }
  ro.on_chunk(c);
}

}  // namespace lockstep::detail
