// host/cli/derivative_measures_run.hpp — a study's [derivative_measures] (docs/SENSITIVITY.md,
// "Derivative-based measures"): every member's final state and its derivatives by the varied inputs from
// one forward-sensitivity solve (host/engine/sensitivity_batch.hpp), gathered in member order, and from
// them the measures of study/derivative_measures.hpp for every value of the final state, written to
// results.h5 /derivative_measures and summarized on stderr.
//
// The solves depend on the plan alone, not on the plain run's results, so they run after the members'
// plain solves: in a plain run over all members, in a checkpointed or MPI run over each rank's own
// members once they have finished (run_study_journaled.hpp), sent to rank 0 as bytes. A member's values
// are its own, and the estimate runs on rank 0 over all of them in member order, so the measures are
// bitwise the same for any thread count, chunking or rank count. The solves are not journaled: a run
// interrupted while they run solves them again when it is resumed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "host/cli/phase_progress.hpp"
#include "host/engine/sensitivity_batch.hpp"
#include "host/io/members_csv.hpp"
#include "host/io/results_h5.hpp"
#include "host/io/study_file.hpp"
#include "lockstep/study/byte_codec.hpp"
#include "lockstep/study/derivative_measures.hpp"

namespace lockstep::cli::detail {

// Members' final states and derivatives from their sensitivity solves: members [first, first + count).
struct member_derivatives {
  long first = 0, count = 0;
  std::size_t inputs = 0, values = 0;  // P, Y
  std::vector<std::int32_t> status;    // [count] member_status of the sensitivity solve
  std::vector<double> x;               // [count][P] the varied inputs' values
  std::vector<double> y;               // [count][Y] the final state
  std::vector<double> dy;              // [count][P][Y] its derivatives by the inputs
  std::string first_message;           // the first reason a member's solve gave, "" if none

  long failed() const {
    return static_cast<long>(std::count_if(status.begin(), status.end(), [](std::int32_t s) {
      return s != static_cast<std::int32_t>(member_status::success);
    }));
  }

  std::string encode() const {
    study::byte_writer out;
    out.i64(first);
    out.i64(count);
    out.u64(inputs);
    out.u64(values);
    for (const std::int32_t s : status) out.i32(s);
    for (const std::vector<double>* a : {&x, &y, &dy})
      for (const double v : *a) out.f64(v);
    out.text(first_message);
    return out.take();
  }
  static member_derivatives decode(std::string_view bytes) {
    study::byte_reader in(bytes, "derivative measures of a rank");
    member_derivatives d;
    d.first = in.i64();
    d.count = in.i64();
    d.inputs = in.u64();
    d.values = in.u64();
    d.status.resize(static_cast<std::size_t>(d.count));
    for (std::int32_t& s : d.status) s = in.i32();
    d.x.resize(static_cast<std::size_t>(d.count) * d.inputs);
    d.y.resize(static_cast<std::size_t>(d.count) * d.values);
    d.dy.resize(static_cast<std::size_t>(d.count) * d.inputs * d.values);
    for (std::vector<double>* a : {&d.x, &d.y, &d.dy})
      for (double& v : *a) v = in.f64();
    d.first_message = in.text();
    return d;
  }

  // Appends the members of `next`, which must start where these end.
  void append(const member_derivatives& next) {
    if (count == 0) first = next.first;
    count += next.count;
    inputs = next.inputs;
    values = next.values;
    status.insert(status.end(), next.status.begin(), next.status.end());
    x.insert(x.end(), next.x.begin(), next.x.end());
    y.insert(y.end(), next.y.begin(), next.y.end());
    dy.insert(dy.end(), next.dy.begin(), next.dy.end());
    if (first_message.empty()) first_message = next.first_message;
  }
};

// Refuses, at [derivative_measures], a study whose members' final states and derivatives would need
// more than memory_mb.
inline void check_derivative_memory(const io::study_spec& spec, long members, int ny) {
  const io::derivative_measures_spec& d = spec.derivative_measures;
  if (!d.enabled) return;
  const double P = static_cast<double>(spec.plan.vary.size()), Y = static_cast<double>(ny);
  const double bytes = static_cast<double>(members) * ((P + 1.0) * Y + P + 0.5) * sizeof(double);
  if (bytes <= static_cast<double>(d.memory_mb) * 1048576.0) return;
  char need[64];
  std::snprintf(need, sizeof need, "%.0f MB", std::ceil(bytes / 1048576.0));
  throw io::study_error(spec.path.string(), d.line, d.column,
                        "[derivative_measures] the measures are computed from every member's final state and its " +
                            std::to_string(spec.plan.vary.size()) + " derivatives: " + std::to_string(members) +
                            " members need " + need + ", more than memory_mb = " + std::to_string(d.memory_mb) +
                            "; raise memory_mb, or run fewer members");
}

// The difference steps' scales of the varied inputs (sensitivity_batch.hpp): their distributions' spread.
inline std::vector<varied_argument> varied_arguments_of(const study::sampling_plan& plan) {
  std::vector<varied_argument> varied;
  for (const study::varied_input& v : plan.vary) {
    const study::distribution& d = v.dist;
    double scale = d.kind == study::distribution_kind::uniform  ? d.b - d.a
                   : d.kind == study::distribution_kind::normal ? d.b
                                                                : std::exp(d.a) * d.b;
    if (!(scale > 0.0) || !std::isfinite(scale)) scale = 1.0;
    varied.push_back({v.is_param, v.index, scale});
  }
  return varied;
}

// Members [first, first + count) through their sensitivity solves on `threads` threads of the CPU
// cores' team. With `progress`, the calling thread redraws "derivative measures: k/N members"
// (phase_progress); once stop() returns true no further member starts (their status stays running).
inline member_derivatives solve_member_derivatives(const engine& model, const sensitivity_inputs& in, long first,
                                                   long count, int threads, bool progress,
                                                   const std::function<bool()>& stop) {
  const std::function<void(long)> draw = progress ? phase_progress("derivative measures", "members", count) : nullptr;
  sensitivity_batch b;
  run_sensitivity_batch(model, in, first, count, threads, b, draw, stop);
  if (progress) std::fputc('\n', stderr);
  member_derivatives d;
  d.first = first;
  d.count = count;
  d.inputs = in.varied.size();
  d.values = static_cast<std::size_t>(model.ny());
  d.status.resize(b.status.size());
  for (std::size_t i = 0; i < b.status.size(); ++i) {
    d.status[i] = static_cast<std::int32_t>(b.status[i]);
    if (d.first_message.empty() && b.status[i] != member_status::success) d.first_message = b.messages[i];
  }
  d.x = std::move(b.x);
  d.y = std::move(b.y);
  d.dy = std::move(b.dy);
  return d;
}

// The measures of every value Y of the final state over the P inputs.
struct derivative_results {
  std::size_t inputs = 0;                          // P
  std::vector<double> nu, nu_stderr, total_bound;  // [Y][P]
  std::vector<double> variance;                    // [Y]
  std::vector<std::int64_t> members_used;          // [Y]
  long members = 0, failed = 0;
  std::string refused;        // why there are none: too many failed members; "" when estimated
  std::string first_message;  // the first reason a member's solve gave
};

inline derivative_results derivative_measures_of(const io::study_spec& spec, const member_derivatives& d) {
  const std::size_t P = d.inputs, Y = d.values, M = static_cast<std::size_t>(d.count);
  derivative_results r;
  r.inputs = P;
  r.members = d.count;
  r.failed = d.failed();
  r.first_message = d.first_message;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.nu.assign(Y * P, nan);
  r.nu_stderr = r.nu;
  r.total_bound = r.nu;
  r.variance.assign(Y, nan);
  r.members_used.assign(Y, 0);
  const double allowed = spec.derivative_measures.max_failed * static_cast<double>(d.count);
  if (static_cast<double>(r.failed) > allowed) {
    char why[200];
    std::snprintf(why, sizeof why, "%ld of %ld members' sensitivity solves failed, more than max_failed = %g of them",
                  r.failed, d.count, spec.derivative_measures.max_failed);
    r.refused = why;
    return r;
  }
  std::vector<study::distribution> distributions;
  for (const study::varied_input& v : spec.plan.vary) distributions.push_back(v.dist);
  std::vector<double> y(M), dy(M * P);
  for (std::size_t c = 0; c < Y; ++c) {
    for (std::size_t m = 0; m < M; ++m) {
      y[m] = d.y[m * Y + c];
      for (std::size_t i = 0; i < P; ++i) dy[m * P + i] = d.dy[(m * P + i) * Y + c];
    }
    const study::derivative_measures e =
        study::estimate_derivative_measures(distributions, y.data(), d.x.data(), dy.data(), d.count);
    std::copy(e.nu.begin(), e.nu.end(), r.nu.begin() + static_cast<std::ptrdiff_t>(c * P));
    std::copy(e.nu_stderr.begin(), e.nu_stderr.end(), r.nu_stderr.begin() + static_cast<std::ptrdiff_t>(c * P));
    std::copy(e.total_bound.begin(), e.total_bound.end(), r.total_bound.begin() + static_cast<std::ptrdiff_t>(c * P));
    r.variance[c] = e.variance;
    r.members_used[c] = e.members_used;
  }
  return r;
}

inline void write_derivative_measures(io::results_writer& h5, const io::study_spec& spec, const derivative_results& r) {
  io::derivative_measure_values v;
  for (const study::varied_input& input : spec.plan.vary) v.inputs.push_back(input.name);
  v.t = spec.t1;
  v.members = r.members;
  v.max_failed = spec.derivative_measures.max_failed;
  v.refused = r.refused;
  v.nu = r.nu.data();
  v.nu_stderr = r.nu_stderr.data();
  v.total_bound = r.total_bound.data();
  v.variance = r.variance.data();
  v.members_used = r.members_used.data();
  h5.write_derivative_measures(v);
}

// The summary: the members whose solves failed, and the measures of the positions and velocities at t1,
// named as members.csv names them.
inline void print_derivative_measures(const io::study_spec& spec, const io::results_layout& layout,
                                      const derivative_results& r) {
  if (r.failed > 0)
    std::fprintf(stderr, "lockstep: derivative measures: %ld of %ld members' sensitivity solves failed%s%s\n", r.failed,
                 r.members, r.first_message.empty() ? "" : "; first reason: ", r.first_message.c_str());
  if (!r.refused.empty()) {
    std::fprintf(stderr, "lockstep: no derivative measures: %s\n", r.refused.c_str());
    return;
  }
  std::fprintf(stderr,
               "lockstep: derivative measures at t1 = %g from %ld members (nu = E[(dy/dx)^2] +- its standard error, and "
               "the bound C nu / Var y on the total index ST; all in results.h5 /derivative_measures):\n",
               spec.t1, r.members - r.failed);
  std::fprintf(stderr, "  %-14s", "value");
  for (const study::varied_input& input : spec.plan.vary) std::fprintf(stderr, " %36.36s", input.name.c_str());
  std::fprintf(stderr, "\n");
  const std::vector<std::string> columns = io::coordinate_columns(layout);
  const std::size_t n = static_cast<std::size_t>(layout.n), P = r.inputs;
  for (std::size_t j = 0; j < 2 * n; ++j) {
    std::string name = j < n ? "q." : "v.";  // appended: GCC 12's false -Wrestrict on "literal" + string
    name += columns[j % n];
    std::fprintf(stderr, "  %-14.14s", name.c_str());
    for (std::size_t i = 0; i < P; ++i)
      std::fprintf(stderr, "  nu %9.3e+-%8.2e ST<= %7.3g", r.nu[j * P + i], r.nu_stderr[j * P + i],
                   r.total_bound[j * P + i]);
    std::fprintf(stderr, "\n");
  }
}

}  // namespace lockstep::cli::detail
