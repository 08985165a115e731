// host/cli/run_study_impl.hpp — the definition of run_study (run_study.hpp), included only by
// run_study.cpp. It sees the model only through its engine (lockstep/engine/engine.hpp).
//
// The flow: members from the sampling plan (study/samplers.hpp) -> ensemble_problem -> solve_ensemble
// with keep_outputs = false: each finished chunk streams into results.h5, members.csv and the
// statistics accumulators and is then dropped, so a study of 10^6 members with statistics only never
// holds its trajectories. Outputs are written under temporary names and renamed only when
// complete (host/io/output_file.hpp).
//
// With a [lyapunov] section every finished chunk's members are also solved by the Lyapunov
// driver (the engine's lyapunov: lyapunov_spectrum, or clone_largest_exponent for method "clone"), in
// parallel over the study's threads, before the chunk is written. The plain solve stays as it is, so
// trajectories, statistics and /members are bitwise what the study gives without the section, and
// the Lyapunov run (whose steps differ: the tangents' error test takes part in step selection) has
// its own status and counters under /lyapunov. The price is one plain solve per member on top of the
// spectrum (a full spectrum costs 2.5-3 plain solves: docs/LYAPUNOV.md, so a third or more). Each
// member's spectrum depends on its inputs only, and each thread writes only its members' slots, so
// the exponents are bitwise the same for any thread count and chunking; a member whose spectrum
// fails keeps its status, NaN exponents and the running estimates it had, and the others go on.
// Checkpointed, resumed and MPI runs (run_study_journaled.hpp) solve them the same way, chunk by
// chunk, and journal the values with the members.
//
// With [derivative_measures] every member is solved once more, with the forward sensitivities of its
// final state by the varied inputs, after the plain solves (derivative_measures_run.hpp); the measures
// go to /derivative_measures.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "host/cli/derivative_measures_run.hpp"
#include "host/cli/phase_progress.hpp"
#include "host/cli/run_study.hpp"
#include "host/io/members_csv.hpp"
#include "host/io/output_file.hpp"
#include "host/io/results_h5.hpp"
#include "lockstep/ensemble.hpp"
#include "host/engine/lyapunov_batch.hpp"
#include "host/engine/member_quantities.hpp"
#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/study/exceedance.hpp"
#include "lockstep/study/first_times.hpp"
#include "lockstep/study/samplers.hpp"
#include "lockstep/study/sensitivity_indices.hpp"
#include "lockstep/study/statistics.hpp"

#ifndef LOCKSTEP_VERSION_STRING
#define LOCKSTEP_VERSION_STRING "unknown"
#endif
#ifndef LOCKSTEP_GIT_REVISION
#define LOCKSTEP_GIT_REVISION "unknown"
#endif

namespace lockstep::cli {

namespace detail {

// Every member's parameters and initial inputs: the model's defaults, then the [model] overrides, then
// the member's sampled values.
struct member_arguments {
  const study::sampling_plan& plan;
  std::vector<double> params, inputs;  // the defaults with the overrides; inputs has at least one entry

  member_arguments(const engine& model, const io::study_spec& spec)
      : plan(spec.plan), params(static_cast<std::size_t>(model.n_params())),
        inputs(static_cast<std::size_t>(std::max(model.n_inputs(), 1)), 0.0) {
    for (int j = 0; j < model.n_params(); ++j) params[j] = model.params()[j].default_value;
    for (const auto& o : spec.params) params[o.index] = o.value;
    for (int j = 0; j < model.n_inputs(); ++j) inputs[j] = model.inputs()[j].default_value;
    for (const auto& o : spec.initial) inputs[o.index] = o.value;
  }
  // Member g's into p [params.size()] and in [inputs.size()]; x [V] receives its sampled values.
  void fill(long g, double* p, double* in, double* x) const {
    std::copy(params.begin(), params.end(), p);
    std::copy(inputs.begin(), inputs.end(), in);
    if (plan.vary.empty()) return;
    study::sample_member(plan, g, x);
    for (std::size_t d = 0; d < plan.vary.size(); ++d) {
      const study::varied_input& v = plan.vary[d];
      (v.is_param ? p : in)[v.index] = x[d];
    }
  }
};

// The ensemble the study describes, or its members [first, end) (numbered from 0 in the ensemble): every
// member's arguments (member_arguments), and the model's initial_state maps its inputs to (q0, v0).
inline ensemble_problem build_ensemble(const engine& model, const io::study_spec& spec, long first, long end) {
  const long members = end - first;
  const int n = model.n(), n_params = model.n_params();
  ensemble_problem e;
  e.members = members;
  e.t0 = spec.t0;
  e.t1 = spec.t1;
  e.save_times = spec.save_times;
  e.options = spec.solver;
  e.event_capacity = spec.events.records;
  e.params.resize(static_cast<std::size_t>(members) * n_params);
  e.q0.resize(static_cast<std::size_t>(members) * n);
  e.v0.resize(e.q0.size());

  const member_arguments arguments(model, spec);
  std::vector<double> x(std::max<std::size_t>(spec.plan.vary.size(), 1));
  std::vector<double> inputs(arguments.inputs.size());
  for (long i = 0; i < members; ++i) {
    double* p = e.params.data() + i * n_params;
    arguments.fill(first + i, p, inputs.data(), x.data());
    model.initial_state(p, inputs.data(), e.q0.data() + i * n, e.v0.data() + i * n);
  }
  return e;
}

// The sensitivity solves of [derivative_measures] (derivative_measures_run.hpp), of the members'
// arguments as build_ensemble gives them.
inline sensitivity_inputs derivative_inputs_of(const engine& model, const io::study_spec& spec) {
  auto arguments = std::make_shared<const member_arguments>(model, spec);
  sensitivity_inputs in;
  in.arguments = [arguments](long g, double* p, double* inputs, double* x) { arguments->fill(g, p, inputs, x); };
  in.varied = varied_arguments_of(spec.plan);
  in.t0 = spec.t0;
  in.t1 = spec.t1;
  in.options = &spec.solver;
  return in;
}

// Refuses, where the study writes its member count, a run whose problem and results for the `held`
// members it keeps at once (every member of a plain run; a rank's share of an MPI run without
// checkpoints; a checkpointed run keeps a piece of a few dozen) would not fit in this machine's
// physical memory: one diagnostic before anything is allocated for them, rather than std::bad_alloc
// or the system's out-of-memory killer once the members are being built.
inline void check_members_fit(const engine& model, const io::study_spec& spec, long members, long held) {
  const std::size_t physical = physical_memory_bytes();
  const std::size_t per_member = run_bytes_per_member(model, static_cast<int>(spec.save_times.size()), false);
  const double needed = static_cast<double>(held) * static_cast<double>(per_member);
  if (physical == 0 || needed <= static_cast<double>(physical)) return;
  const study::sampling_plan& plan = spec.plan;
  std::string count;
  long grid_points = 1;
  bool grids = false;
  for (const study::varied_input& v : plan.vary)
    if (v.dist.kind == study::distribution_kind::grid) {
      grid_points *= static_cast<long>(v.dist.grid.size());
      grids = true;
    }
  if (grids) count = std::to_string(grid_points) + " grid points";
  if (!study::is_pure_grid(plan))
    count += (grids ? " x " : "") + std::string("members = ") + std::to_string(plan.members) +
             " x replicates = " + std::to_string(plan.replicates);
  if (grids && !study::is_pure_grid(plan)) count += " = " + std::to_string(members) + " members";
  if (held != members) count += " (" + std::to_string(held) + " of them on this rank)";
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  char sizes[160];
  std::snprintf(sizes, sizeof sizes, " would need %.3g GiB for the per-member results alone (%zu bytes each",
                needed / GiB, per_member);
  char memory[64];
  std::snprintf(memory, sizeof memory, "; this machine has %.3g GiB", static_cast<double>(physical) / GiB);
  throw io::study_error(spec.path.string(), spec.member_count_line, spec.member_count_column,
                        "[ensemble] " + count + sizes +
                            ", kept to the end of the run: parameters, initial state, status, counters and final "
                            "state)" + memory);
}

// A progress bar on stderr: members done, steps per second, estimated time left.
inline void draw_progress(const progress_report& r) {
  const double fraction = r.members_total > 0 ? double(r.members_finished) / double(r.members_total) : 1.0;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  char bar[width + 1];
  for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  const double rate = r.seconds > 0 ? double(r.steps) / r.seconds : 0.0;
  char eta[32] = "?";
  if (r.members_finished > 0 && fraction < 1.0)
    std::snprintf(eta, sizeof eta, "%.0f s", r.seconds * (1.0 - fraction) / fraction);
  else if (fraction >= 1.0)
    std::snprintf(eta, sizeof eta, "0 s");
  std::fprintf(stderr, "\r[%s] %ld/%ld members  %.3g steps/s  ETA %s   ", bar, r.members_finished, r.members_total,
               rate, eta);
  std::fflush(stderr);
}

// The statistics named in the study, written from the summary: mean, std, min, max, qNN, and always
// mean_stderr. Every array is [save][Y] in state layout order, as the writer expects.
inline void write_statistics(io::results_writer& h5, const io::study_spec& spec, const study::ensemble_summary& s) {
  std::size_t quantile = 0;
  const double no_probability = std::nan("");
  for (const std::string& name : spec.output.statistics) {
    if (name == "mean") {
      h5.write_statistic_state(name, no_probability, s.mean.data(), s.count.data());
    } else if (name == "std") {
      h5.write_statistic_state(name, no_probability, s.std.data(), s.count.data());
    } else if (name == "min") {
      h5.write_statistic_state(name, no_probability, s.min.data(), s.count.data());
    } else if (name == "max") {
      h5.write_statistic_state(name, no_probability, s.max.data(), s.count.data());
    } else {  // qNN: the loader admits nothing else
      h5.write_statistic_state(name, s.quantile_probabilities[quantile], s.quantiles[quantile].data(), s.count.data());
      ++quantile;
    }
  }
  h5.write_statistic_state("mean_stderr", no_probability, s.mean_stderr.data(), s.count.data());
  if (!s.quantiles_exact) h5.set_quantile_rank_error(s.quantile_rank_error);
}

// Removes the directories this run created (OUT_DIR and any parents it had to make), when the run
// could not complete: nothing half-written stays.
struct created_directory {
  explicit created_directory(std::filesystem::path out_dir) : path(std::move(out_dir)) {}
  created_directory(const created_directory&) = delete;
  created_directory& operator=(const created_directory&) = delete;
  std::filesystem::path path;
  bool created = false;
  bool keep = false;
  std::filesystem::path topmost_created;  // the outermost directory this run created
  ~created_directory() {
    if (created && !keep) {
      std::error_code ignored;
      std::filesystem::remove_all(topmost_created.empty() ? path : topmost_created, ignored);
    }
  }
};

// Removes temporaries ("<name>.partial-<pid>[-<n>]", io::output_file) of our outputs that a killed run
// left behind, when their process no longer exists: every run into OUT_DIR starts from a folder without
// them (create_output_directory; a resumed run, which creates nothing, calls it itself). A temporary of
// a process still running (another run into the same folder) and files that are not our outputs' stay.
inline void remove_stale_temporaries(const std::filesystem::path& out_dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t at = name.rfind(".partial-");
    if (at == std::string::npos) continue;
    const std::string base = name.substr(0, at);
    if (base != "results.h5" && base != "members.csv" && base != "study.toml" && !base.starts_with("checkpoint") &&
        !base.starts_with("interrupted-"))
      continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + at + 9, &end, 10);
    if (pid <= 0 || (*end != '\0' && *end != '-')) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
  }
}

// Creates OUT_DIR and its parents, and removes a killed run's temporaries from it; io_error naming it
// and the system's reason when that fails. The guard remembers the outermost directory this run created.
inline void create_output_directory(created_directory& guard) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(guard.path, ec);
  std::filesystem::path topmost;
  for (std::filesystem::path p = absolute; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    topmost = p;
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(guard.path, ec);
  if (ec) throw io::io_error(guard.path, ec.value(), "cannot create the output directory '" + guard.path.string() + "': " + ec.message());
  guard.created = !topmost.empty();
  guard.topmost_created = topmost;
  remove_stale_temporaries(guard.path);
}

// Commits the study copy, members.csv and results.h5, in that order (results.h5 last: its presence
// means the run completed); when any step fails, the ones already committed by this run are removed
// again, so a failed run never leaves results that look complete, even in an existing directory.
inline void commit_outputs(const std::filesystem::path& out_dir, const io::study_spec& spec, io::results_writer& h5,
                           io::members_csv_writer& csv);

// Copies the study file into OUT_DIR through a temporary and a rename, like every output.
inline void write_study_copy(const std::filesystem::path& out_dir, const io::study_spec& spec) {
  io::output_file copy(out_dir / "study.toml", "study file copy");
  copy.write(spec.text);
  copy.commit();
}

inline void commit_outputs(const std::filesystem::path& out_dir, const io::study_spec& spec, io::results_writer& h5,
                           io::members_csv_writer& csv) {
  std::vector<std::filesystem::path> committed;
  try {
    write_study_copy(out_dir, spec);
    committed.push_back(out_dir / "study.toml");
    csv.commit();
    committed.push_back(csv.final_path());
    h5.commit();
  } catch (...) {
    std::error_code ignored;
    for (const auto& path : committed) std::filesystem::remove(path, ignored);
    throw;
  }
}

// What results.h5 and members.csv hold for this study.
inline io::results_layout results_layout_for(const engine& model, const io::study_spec& spec, long members) {
  const study::sampling_plan& plan = spec.plan;
  io::results_layout out;
  out.model = std::string(model.name());
  out.members = members;
  out.n = model.n();
  out.m = model.m();
  out.k = model.k();
  for (const char* name : model.coordinate_names()) out.coordinate_names.emplace_back(name);
  for (const lockstep_quantity_info& quantity : model.quantities()) {
    out.quantity_names.emplace_back(quantity.name);
    out.quantity_descriptions.emplace_back(quantity.description);
  }
  out.has_mu = uses_mu(spec.solver.form) && model.m() > 0;
  out.has_nu = model.k() > 0;
  out.multipliers = multiplier_convention_name(spec.solver.multipliers);
  out.trajectories = spec.output.trajectories;
  out.explicit_steps = takes_explicit_steps(spec.solver.method);
  out.save_times = spec.save_times;
  for (const lockstep_event_info& event : model.events())
    out.events.functions.push_back({event.name, event_direction_name(event_direction(event.direction)),
                                    event_action_name(event_action(event.action)), event.description});
  out.events.capacity = spec.events.records;
  out.events.time_tolerance = spec.solver.event_time_tolerance;
  out.events.interior_checks = spec.solver.event_interior_checks;
  if (const io::lyapunov_spec& l = spec.lyapunov; l.enabled) {
    out.lyapunov.exponents = l.exponents;
    out.lyapunov.dimension = l.dimension;
    out.lyapunov.history = io::lyapunov_history_length(l, spec.t0, spec.t1);
    out.lyapunov.method = io::lyapunov_method_name(l.method);
    out.lyapunov.metric = io::lyapunov_metric_name(l.metric);
    out.lyapunov.renormalize = l.renormalize;
    out.lyapunov.transient = l.transient;
    if (l.method == io::lyapunov_method::clone) out.lyapunov.separation = l.separation;
  }
  for (std::size_t d = 0; d < plan.vary.size(); ++d) {
    out.varied_names.push_back(plan.vary[d].name);
    if (plan.vary[d].dist.kind == study::distribution_kind::grid) {
      out.grid_dims.push_back(static_cast<int>(d));
      out.grid_shape.push_back(static_cast<long>(plan.vary[d].dist.grid.size()));
    }
  }
  return out;
}

// Replicate-based standard errors, and intervals of the events' fractions, for randomized QMC with
// R > 1 replicates (each replicate a contiguous block of members: study/sampling_plan.hpp); std /
// sqrt(N) and Wilson's interval otherwise — for a single QMC replicate they overestimate the error,
// and the file says which one it holds.
inline bool uses_replicate_errors(const study::sampling_plan& plan) {
  const bool qmc = plan.sampler == study::sampler_kind::sobol || plan.sampler == study::sampler_kind::lhs;
  return qmc && plan.replicates > 1 && !study::is_pure_grid(plan);
}

// ---- exceedance probabilities ([output] exceedance; study/exceedance.hpp) ----

// The index in the value order (q, v, lambda, mu, nu, then the model's quantities) of an output named
// as `lockstep plot` names it: a coordinate's column name in members.csv (io::coordinate_columns: the
// model's name where it gives one) for its position, v.NAME for its velocity, q<j>, v<j>, lambda<j>,
// mu<j>, nu<j>, or a derived quantity's name; refused at its key in the study file, with the closest
// name, when the model has no such output.
inline int exceedance_output(const engine& model, const io::study_spec& spec,
                             const io::output_spec::exceedance_entry& e) {
  const int n = model.n(), m = model.m(), k = model.k();
  std::vector<std::pair<std::string, int>> names;
  const std::vector<std::string> columns = io::coordinate_columns(results_layout_for(model, spec, 1));
  // Appended rather than "literal" + string: GCC 12's false -Wrestrict (GCC bug 105329).
  const auto named = [](const char* prefix, const std::string& rest) {
    std::string name = prefix;
    name += rest;
    return name;
  };
  for (int j = 0; j < n; ++j) {
    names.push_back({columns[static_cast<std::size_t>(j)], j});
    names.push_back({named("v.", columns[static_cast<std::size_t>(j)]), n + j});
    names.push_back({named("q", std::to_string(j)), j});
    names.push_back({named("v", std::to_string(j)), n + j});
  }
  for (int j = 0; j < m; ++j) {
    names.push_back({named("lambda", std::to_string(j)), 2 * n + j});
    if (uses_mu(spec.solver.form)) names.push_back({named("mu", std::to_string(j)), 2 * n + m + j});
  }
  for (int j = 0; j < k; ++j) names.push_back({named("nu", std::to_string(j)), 2 * n + 2 * m + j});
  int value = model.ny();
  for (const lockstep_quantity_info& quantity : model.quantities()) names.push_back({quantity.name, value++});
  for (const auto& [name, index] : names)
    if (name == e.output) return index;
  std::vector<std::string_view> candidates;
  for (const auto& [name, index] : names) candidates.push_back(name);
  const std::string closest = io::closest_name(e.output, candidates);
  throw io::study_error(spec.path.string(), e.line, e.column,
                        "[output.exceedance] model " + io::in_quotes(spec.model) + " has no output " +
                            io::in_quotes(e.output) +
                            (closest.empty() ? "; name a coordinate (its position), v.NAME (its velocity), q<j>, "
                                               "v<j>, lambda<j>, or a quantity of the model"
                                             : "; did you mean " + io::in_quotes(closest) + "?"));
}

// The state-layout index of each [output] exceedance entry, in the order written; an output named
// twice is refused at its second key.
inline std::vector<std::size_t> exceedance_columns(const engine& model, const io::study_spec& spec) {
  std::vector<std::size_t> columns;
  for (const io::output_spec::exceedance_entry& e : spec.output.exceedance) {
    const std::size_t j = static_cast<std::size_t>(exceedance_output(model, spec, e));
    if (std::find(columns.begin(), columns.end(), j) != columns.end())
      throw io::study_error(spec.path.string(), e.line, e.column,
                            "[output.exceedance] " + io::in_quotes(e.output) +
                                " names an output an earlier entry names too (one threshold per output)");
    columns.push_back(j);
  }
  return columns;
}

// Each value's exceedance threshold over `width` = save times x (Y + Z), NaN where it has none.
inline std::vector<double> exceedance_thresholds(const engine& model, const io::study_spec& spec, std::size_t width) {
  if (spec.output.exceedance.empty()) return {};
  const std::size_t Y = static_cast<std::size_t>(values_per_save(model));
  const std::vector<std::size_t> columns = exceedance_columns(model, spec);
  std::vector<double> per_value(Y, std::nan(""));
  for (std::size_t e = 0; e < columns.size(); ++e) per_value[columns[e]] = spec.output.exceedance[e].threshold;
  std::vector<double> thresholds(width);
  for (std::size_t c = 0; c < width; ++c) thresholds[c] = per_value[c % Y];
  return thresholds;
}

// /exceedance: each value's probability of exceeding its threshold and its interval, from the counts
// the statistics kept: Wilson's, or for Sobol' and LHS replicates Student's from the spread of the
// replicates' own fractions (study/exceedance.hpp); and the summary's lines at t1.
inline void write_exceedance(io::results_writer& h5, const io::study_spec& spec, const engine& model,
                             const study::ensemble_summary& s) {
  if (spec.output.exceedance.empty()) return;
  const std::vector<double> thresholds = exceedance_thresholds(model, spec, s.count.size());
  io::exceedance_values x;
  x.threshold.assign(thresholds.begin(), thresholds.begin() + values_per_save(model));
  x.probability.assign(s.count.size(), std::nan(""));
  x.low = x.probability;
  x.high = x.probability;
  for (std::size_t c = 0; c < s.count.size(); ++c) {
    if (std::isnan(thresholds[c])) continue;
    const study::exceedance_estimate e =
        study::estimate_exceedance(s.above[c], s.count[c], 0.95, s.above_stderr[c], s.above_replicates[c]);
    x.probability[c] = e.probability;
    x.low[c] = e.low;
    x.high[c] = e.high;
  }
  x.above = s.above.data();
  x.count = s.count.data();
  x.replicates = uses_replicate_errors(spec.plan) ? spec.plan.replicates : 0;
  h5.write_exceedance(x);
}

inline void print_exceedance(const io::study_spec& spec, const engine& model, const study::ensemble_summary& s,
                             long members) {
  const std::size_t Y = static_cast<std::size_t>(values_per_save(model));
  const std::size_t last = (spec.save_times.size() - 1) * Y;
  const std::vector<std::size_t> columns = exceedance_columns(model, spec);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const io::output_spec::exceedance_entry& entry = spec.output.exceedance[k];
    const std::size_t c = last + columns[k];
    const study::exceedance_estimate e =
        study::estimate_exceedance(s.above[c], s.count[c], 0.95, s.above_stderr[c], s.above_replicates[c]);
    const std::string from = e.replicates > 0 ? "; the interval from " + std::to_string(e.replicates) + " replicates" : "";
    std::fprintf(stderr, "lockstep: P(%s > %g) at t1 = %g: %.4g, 95 %% interval [%.4g, %.4g] (%lld of %lld members%s%s)\n",
                 entry.output.c_str(), entry.threshold, spec.t1, e.probability, e.low, e.high,
                 static_cast<long long>(s.above[c]), static_cast<long long>(s.count[c]),
                 s.count[c] < members ? "; failed members left out" : "", from.c_str());
    if (e.rare && s.count[c] > 0)
      std::fprintf(stderr, "lockstep: warning: P(%s > %g): only %lld members %s the threshold, too few for plain "
                   "sampling to estimate the probability well; more members, or a rare-event method (importance "
                   "sampling, subset simulation), would\n",
                   entry.output.c_str(), entry.threshold,
                   static_cast<long long>(std::min(s.above[c], s.count[c] - s.above[c])),
                   s.above[c] < s.count[c] - s.above[c] ? "exceed" : "stay below");
  }
}

// The study's statistics accumulators over `width` = save times x (Y + Z) values per member. With
// [sensitivity] they keep every member's values, from which the indices are computed at the end; a
// study whose values would exceed [sensitivity] memory_mb is refused there, before it runs.
inline study::ensemble_statistics statistics_for(const engine& model, const io::study_spec& spec, long members,
                                                 std::size_t width) {
  const long per_replicate = uses_replicate_errors(spec.plan) ? members / spec.plan.replicates : 0;
  if (const io::sensitivity_spec& x = spec.sensitivity; x.enabled) {
    const double bytes = static_cast<double>(members) * static_cast<double>(width) * sizeof(double);
    if (bytes > static_cast<double>(x.memory_mb) * 1048576.0) {
      char need[96];
      std::snprintf(need, sizeof need, "%.0f MB", std::ceil(bytes / 1048576.0));
      throw io::study_error(spec.path.string(), x.line, x.column,
                            "[sensitivity] the indices are computed from every member's values at every save time: " +
                                std::to_string(members) + " members x " + std::to_string(width) + " values need " +
                                need + ", more than memory_mb = " + std::to_string(x.memory_mb) +
                                "; raise memory_mb, or save fewer times ([time] save)");
    }
  }
  return study::ensemble_statistics(members, width, spec.output.quantiles, per_replicate,
                                    static_cast<std::size_t>(spec.output.quantile_memory_mb) << 20,
                                    study::default_sketch_items, spec.sensitivity.enabled,
                                    exceedance_thresholds(model, spec, width));
}

// ---- sensitivity indices ([sensitivity]; study/sensitivity_indices.hpp) ----

// The indices of n outputs over the P varied inputs: [n][P] ([n][P][P] for the second order).
struct index_table {
  std::vector<double> first, first_conf, total, total_conf, second, second_conf;
  std::vector<std::int64_t> rows_used;  // [n]
  std::vector<std::string> refused;     // [n]: why an output has no indices, or ""

  index_table(std::size_t n, std::size_t inputs, std::size_t pairs)
      : first(n * inputs), first_conf(n * inputs), total(n * inputs), total_conf(n * inputs), second(n * pairs),
        second_conf(n * pairs), rows_used(n), refused(n) {}

  // Output `at`'s indices and their intervals' half-widths; a refused output's intervals are NaN too,
  // whatever the replicates or resamples gave.
  void place(std::size_t at, const study::sensitivity_indices& s, const study::sensitivity_intervals& h) {
    const auto put = [&](const std::vector<double>& from, std::vector<double>& to, bool interval) {
      const auto out = to.begin() + static_cast<std::ptrdiff_t>(at * from.size());
      if (interval && !s.refused.empty())
        std::fill_n(out, from.size(), std::nan(""));
      else
        std::copy(from.begin(), from.end(), out);
    };
    put(s.first, first, false);
    put(s.total, total, false);
    put(s.second, second, false);
    put(h.first, first_conf, true);
    put(h.total, total_conf, true);
    put(h.second, second_conf, true);
    rows_used[at] = s.rows_used;
    refused[at] = s.refused;
  }
};

// The indices of every value (save time x Y value) over the P varied inputs, and with [lyapunov] of the
// p exponents.
struct sensitivity_results {
  std::size_t width = 0;        // W
  int inputs = 0;               // P
  bool from_replicates = false;  // the intervals: from the replicates' spread, else the bootstrap
  int exponents = 0;            // p
  index_table values{0, 0, 0};    // [W]
  index_table lyapunov{0, 0, 0};  // [p] (their second-order indices are not written)
};

// Every member's Lyapunov exponents, [member][p], gathered from the member blocks the results are
// written from (the exponents are not statistics slices), for their sensitivity indices.
struct member_exponents {
  int exponents = 0;  // p; 0 gathers nothing
  std::vector<double> values;

  member_exponents(const io::study_spec& spec, long members)
      : exponents(spec.sensitivity.enabled && spec.lyapunov.enabled ? spec.lyapunov.exponents : 0),
        values(static_cast<std::size_t>(members) * static_cast<std::size_t>(exponents), std::nan("")) {}
  void add(const io::member_block& b) {
    if (exponents == 0 || b.lyapunov == nullptr) return;
    const std::size_t p = static_cast<std::size_t>(exponents);
    std::copy(b.lyapunov->exponents, b.lyapunov->exponents + static_cast<std::size_t>(b.count) * p,
              values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(b.first) * p));
  }
};

// From the members' values the statistics kept (member-major, W each; the members are the design's
// rows in order, replicate after replicate: study/samplers.hpp, sampler saltelli), the values on
// `threads` threads: each value's indices are a function of its own outputs, written to its own
// place, so the thread count changes no bit.
inline sensitivity_results sensitivity_of(const io::study_spec& spec, const study::ensemble_statistics& stats,
                                          std::size_t width, int threads, const member_exponents& exponents) {
  const io::sensitivity_spec& x = spec.sensitivity;
  const study::sampling_plan& plan = spec.plan;
  const study::saltelli_design design{study::drawn_dimension_count(plan), plan.second_order};
  const std::vector<double>& values = stats.member_values();
  const long members = study::member_count(plan);
  const long rows = members / design.slots();
  const std::size_t P = static_cast<std::size_t>(design.inputs);
  const std::size_t pairs = design.second_order ? P * P : 0;
  const std::size_t p = static_cast<std::size_t>(exponents.exponents);
  sensitivity_results r;
  r.width = width;
  r.inputs = design.inputs;
  r.from_replicates = plan.replicates >= io::sensitivity_replicates_for_intervals;
  r.exponents = exponents.exponents;
  r.values = index_table(width, P, pairs);
  r.lyapunov = index_table(p, P, pairs);
  // Item c < W is value c of the statistics' slices; item W + e is Lyapunov exponent e.
  const auto item = [&](std::size_t c, std::vector<double>& y) {
    const bool exponent = c >= width;
    const std::vector<double>& from = exponent ? exponents.values : values;
    const std::size_t stride = exponent ? p : width, column = exponent ? c - width : c;
    for (long i = 0; i < members; ++i) y[static_cast<std::size_t>(i)] = from[static_cast<std::size_t>(i) * stride + column];
    const study::sensitivity_indices s = study::estimate_sensitivity_indices(design, y.data(), rows, x.max_failed);
    const study::sensitivity_intervals h =
        r.from_replicates
            ? study::replicate_intervals(design, y.data(), rows / plan.replicates, plan.replicates, x.confidence,
                                         x.max_failed)
            : study::bootstrap_intervals(design, y.data(), rows, x.resamples, plan.seed, x.confidence);
    (exponent ? r.lyapunov : r.values).place(column, s, h);
  };
  std::atomic<std::size_t> next{0};
  const std::size_t items = width + p;
  const auto work = [&] {
    std::vector<double> y(static_cast<std::size_t>(members));
    for (std::size_t c = next++; c < items; c = next++) item(c, y);
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(items)); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  return r;
}

inline void write_sensitivity(io::results_writer& h5, const io::study_spec& spec, const sensitivity_results& r) {
  io::sensitivity_values v;
  for (const study::varied_input& input : spec.plan.vary) v.inputs.push_back(input.name);
  v.first = r.values.first.data();
  v.first_conf = r.values.first_conf.data();
  v.total = r.values.total.data();
  v.total_conf = r.values.total_conf.data();
  if (spec.plan.second_order) {
    v.second = r.values.second.data();
    v.second_conf = r.values.second_conf.data();
  }
  v.rows_used = r.values.rows_used.data();
  if (r.exponents > 0) {
    v.exponents = r.exponents;
    v.lyapunov_first = r.lyapunov.first.data();
    v.lyapunov_first_conf = r.lyapunov.first_conf.data();
    v.lyapunov_total = r.lyapunov.total.data();
    v.lyapunov_total_conf = r.lyapunov.total_conf.data();
    v.lyapunov_rows_used = r.lyapunov.rows_used.data();
  }
  v.base = spec.sensitivity.base;
  v.replicates = spec.plan.replicates;
  v.confidence = spec.sensitivity.confidence;
  v.intervals = r.from_replicates ? "replicates" : "bootstrap";
  v.resamples = r.from_replicates ? 0 : spec.sensitivity.resamples;
  v.max_failed = spec.sensitivity.max_failed;
  h5.write_sensitivity(v);
}

// The summary's table: the first-order and total indices of the positions and velocities at t1, with
// their intervals' half-widths, and why any value has none.
inline void print_sensitivity(const io::study_spec& spec, const io::results_layout& layout,
                              const sensitivity_results& r) {
  const std::size_t P = static_cast<std::size_t>(r.inputs);
  const std::size_t Y = static_cast<std::size_t>(layout.value_size());
  const std::size_t last = (layout.save_times.size() - 1) * Y;
  const study::sampling_plan& plan = spec.plan;
  const int slots = study::saltelli_design{r.inputs, plan.second_order}.slots();
  std::fprintf(stderr, "lockstep: Saltelli's design: %ld rows x (%d + %d) = %ld members%s%s\n", spec.sensitivity.base,
               r.inputs, slots - r.inputs, spec.sensitivity.base * slots,
               plan.replicates > 1 ? " per replicate, " : "",
               plan.replicates > 1 ? (std::to_string(plan.replicates) + " replicates").c_str() : "");
  std::fprintf(stderr, "lockstep: sensitivity indices at t1 = %g (first order S and total ST, +- the %g %% interval "
               "from %s; all in results.h5 /sensitivity):\n",
               spec.t1, 100.0 * spec.sensitivity.confidence, r.from_replicates ? "the replicates" : "the bootstrap");
  std::fprintf(stderr, "  %-14s", "value");
  for (const study::varied_input& input : spec.plan.vary) std::fprintf(stderr, " %26.26s", input.name.c_str());
  std::fprintf(stderr, "\n");
  const auto row = [&](const std::string& name, const index_table& t, std::size_t at) {
    std::fprintf(stderr, "  %-14.14s", name.c_str());
    if (!t.refused[at].empty()) {
      std::fprintf(stderr, " no indices: %s\n", t.refused[at].c_str());
      return;
    }
    for (std::size_t i = 0; i < P; ++i)
      std::fprintf(stderr, "  S %5.3f+-%5.3f ST %5.3f+-%5.3f", t.first[at * P + i], t.first_conf[at * P + i],
                   t.total[at * P + i], t.total_conf[at * P + i]);
    std::fprintf(stderr, "\n");
  };
  // The positions and velocities, named as members.csv and `lockstep plot` name them.
  const std::vector<std::string> columns = io::coordinate_columns(layout);
  const std::size_t n = static_cast<std::size_t>(layout.n);
  for (std::size_t j = 0; j < 2 * n; ++j) {
    std::string name = j < n ? "q." : "v.";  // appended: GCC 12's false -Wrestrict on "literal" + string
    name += columns[j % n];
    row(name, r.values, last + j);
  }
  for (std::size_t e = 0; e < static_cast<std::size_t>(r.exponents); ++e)
    row("lambda_" + std::to_string(e + 1), r.lyapunov, e);
}

// The varied inputs of members [first, first + count), [count][V], into `inputs`; null when V = 0.
inline const double* sample_inputs(const study::sampling_plan& plan, long first, long count, std::vector<double>& inputs) {
  const std::size_t varied = plan.vary.size();
  if (varied == 0) return nullptr;
  inputs.assign(static_cast<std::size_t>(count) * varied, 0.0);
  for (long i = 0; i < count; ++i) study::sample_member(plan, first + i, &inputs[static_cast<std::size_t>(i) * varied]);
  return inputs.data();
}

// The values of a finished chunk's members (host/engine/member_quantities.hpp): its outputs themselves
// for a model without quantities, else the outputs and the quantities, computed into `values`. The
// chunk's members are those of `e` from `first` (e's member `first` is the chunk's first).
inline const double* values_of(const engine& model, const ensemble_problem& e, const chunk_results& c, long first,
                               int threads, std::vector<double>& values) {
  if (model.n_quantities() == 0) return c.outputs;
  member_values(model, e.save_times, c.count, c.outputs,
                e.params.data() + static_cast<std::size_t>(first) * static_cast<std::size_t>(model.n_params()), threads,
                values);
  return values.data();
}

// The writers' view of a finished scheduler chunk whose members are numbered from `offset`.
inline io::member_block member_block_of(const chunk_results& c, long offset, const double* inputs) {
  io::member_block block;
  block.first = offset + c.first;
  block.count = c.count;
  block.status = c.status;
  block.counters = c.counters;
  block.final_t = c.t_final;
  block.inputs = inputs;
  block.y = c.outputs;
  block.y_final = c.y_final;
  block.event_counts = c.event_counts;
  block.event_first_times = c.event_first_times;
  block.event_records_made = c.event_records_made;
  block.stop_event = c.stop_event;
  block.event_records = c.event_records;
  return block;
}

inline int thread_count(const run_settings& settings) {
  return settings.where == backend::omp ? (settings.threads > 0 ? settings.threads : omp::default_threads()) : 1;
}

// The root attributes that describe the run: the study, version, backend, what advanced the members
// on the host (the engine's instruction set, and its SIMD lanes where the study's method runs in them on
// a host backend: a property of the run, not of one session's work, so that a run resumed after its
// last member finished records what the uninterrupted run records), method and error method.
inline void set_run_attributes(io::results_writer& h5, const io::study_spec& spec, const run_settings& settings,
                               double wall_seconds, const engine& model) {
  io::run_info info;
  info.study_text = spec.text;
  info.lockstep_version = LOCKSTEP_VERSION_STRING;
  info.git_revision = LOCKSTEP_GIT_REVISION;
  info.backend = backend_name(settings.where);
  info.threads = thread_count(settings);
  info.wall_time_seconds = wall_seconds;
  h5.set_run_info(info);
  h5.set_attribute("study_name", spec.name);
  h5.set_attribute("instruction_set", model.instruction_set());
  const bool in_lanes = settings.where != backend::cuda;
  h5.set_attribute("simd_lanes", static_cast<std::int64_t>(in_lanes ? model.lanes() : 0));
  h5.set_attribute("method", method_name(spec.solver.method));
  if (spec.solver.method == method_kind::rhoinf) h5.set_attribute("rho_inf", spec.solver.rho_inf);
  h5.set_attribute("formulation", formulation_name(spec.solver.form));
  h5.set_attribute("projection", projection_name(spec.solver.projection));
  h5.set_attribute("mean_stderr_method", uses_replicate_errors(spec.plan) ? "replicates" : "std/sqrt(n)");
}

// ---- Lyapunov exponents of a chunk's members ----

// One chunk's Lyapunov results (host/engine/lyapunov_batch.hpp), as the writers see them.
struct lyapunov_buffers : lyapunov_batch {
  io::lyapunov_values values() const {
    io::lyapunov_values v;
    v.status = status.data();
    v.exponents = exponents.data();
    v.t_start = t_start.data();
    v.t_end = t_end.data();
    v.renormalizations = renormalizations.data();
    v.steps = steps.data();
    v.history_t = history_t.empty() ? nullptr : history_t.data();
    v.history = history.empty() ? nullptr : history.data();
    return v;
  }
};

// The engine's request for the study's [lyapunov] section, with room for `history_length` estimates.
inline lockstep_lyapunov_request lyapunov_request_of(const io::lyapunov_spec& l, long history_length) {
  return lyapunov_request(l.method == io::lyapunov_method::clone ? 1 : 0, l.exponents, l.renormalize, l.transient,
                          l.metric == io::lyapunov_metric::mass ? 0 : 1, l.separation, history_length);
}

// Members [first, first + count) of e through the engine's Lyapunov driver on `threads` threads of the
// CPU cores' team (on the host whatever the backend: one thread for serial and cuda;
// run_lyapunov_batch). With `progress`, the calling thread redraws "Lyapunov exponents: k/N members"
// (phase_progress; the plain solve's bar stops at 100 % before this phase of a chunk starts).
inline void solve_lyapunov_chunk(const engine& model, const ensemble_problem& e, const io::lyapunov_spec& l,
                                 long history_length, long first, long count, int threads, bool progress,
                                 lyapunov_buffers& b) {
  const std::function<void(long)> draw =
      progress ? phase_progress("Lyapunov exponents", "members of this chunk", count) : nullptr;
  const lyapunov_inputs in{e.params.data(), e.q0.data(), e.v0.data(), e.t0, e.t1, &e.options};
  run_lyapunov_batch(model, in, lyapunov_request_of(l, history_length), first, count, threads, b, draw);
}

// The first reason a member of the chunk gave for its failed Lyapunov run ("" when none did): the
// summary names it, and journals keep it per record for the summary of a resumed or MPI run.
inline std::string first_lyapunov_message(const lyapunov_buffers& b) {
  for (std::size_t i = 0; i < b.status.size(); ++i)
    if (b.status[i] != member_status::success && !b.messages[i].empty()) return b.messages[i];
  return std::string();
}

// The consistent initialization's corrections of the members written, for the summary's warnings
// (method/options.hpp): the members whose start was projected by more than the tolerance, in q and in
// v, and those refused for their start (status inconsistent_initial), each with the largest correction
// and whose it was. Members are numbered as in members.csv.
struct initial_corrections {
  struct largest {
    long members = 0;
    double correction = 0.0;
    long member = -1;
    void add(long i, double c) {
      ++members;
      if (member < 0 || c > correction) {
        correction = c;
        member = i;
      }
    }
  };
  largest q, v;                // projected beyond the tolerance
  largest refused_q, refused_v;  // refused: their corrections (v: strict mode only, auto refuses on q)

  // The members of `block`, whose given starts are q0[i * n + j], v0[i * n + j].
  void add(const io::member_block& block, const double* q0, const double* v0, int n, const solver_options& opt) {
    const auto norm = [n](const double* x) {
      double largest = 0.0;
      for (int j = 0; j < n; ++j) largest = std::max(largest, std::abs(x[j]));
      return largest;
    };
    for (long i = 0; i < block.count; ++i) {
      const member_counters& c = block.counters[i];
      const long member = block.first + i;
      if (block.status[i] == member_status::inconsistent_initial) {
        refused_q.add(member, c.init_q_correction);
        refused_v.add(member, c.init_v_correction);
        continue;
      }
      if (init_correction_beyond_tolerance(c.init_q_correction, norm(q0 + i * n), opt.atol_q, opt.rtol))
        q.add(member, c.init_q_correction);
      if (init_correction_beyond_tolerance(c.init_v_correction, norm(v0 + i * n), opt.atol_v, opt.rtol))
        v.add(member, c.init_v_correction);
    }
  }
};

// The summary's lines on initial corrections (initial_corrections), each ending in a newline; "" when
// every member started within the tolerance.
inline std::string initial_correction_lines(const initial_corrections& c, const solver_options& opt) {
  char line[640];
  std::string out;
  const auto plural = [](long count) { return count == 1 ? "" : "s"; };
  for (const auto& [x, what, tolerance] : {std::tuple{&c.q, "positions", "atol_q + rtol |q0|"},
                                           std::tuple{&c.v, "velocities", "atol_v + rtol |v0|"}}) {
    if (x->members == 0) continue;
    std::snprintf(line, sizeof line,
                  "lockstep: warning: the initial %s of %ld member%s violated the constraints by more than the "
                  "tolerance (%s, max-norms) and were projected onto them: corrections up to %.3g (member %ld)\n",
                  what, x->members, plural(x->members), tolerance, x->correction, x->member);
    out += line;
  }
  if (c.refused_q.members == 0) return out;
  const long refused = c.refused_q.members;
  if (opt.init == init_mode::strict) {
    std::snprintf(line, sizeof line,
                  "lockstep: %ld member%s refused (inconsistent_initial): initial values that need corrections above "
                  "init_tolerance = %.3g, up to %.3g in q (member %ld) and %.3g in v (member %ld)\n",
                  refused, plural(refused), opt.init_tolerance, c.refused_q.correction, c.refused_q.member,
                  c.refused_v.correction, c.refused_v.member);
  } else {
    std::snprintf(line, sizeof line,
                  "lockstep: %ld member%s refused (inconsistent_initial): initial positions off the constraints by up "
                  "to %.3g (member %ld), more than %g %% of the configuration's size (init = \"auto\"); "
                  "correct the initial values, or set init = \"project\" in [solver] to start from the projection "
                  "onto the constraints\n",
                  refused, plural(refused), c.refused_q.correction, c.refused_q.member, 100.0 * init_gross_fraction);
  }
  return out + line;
}

// Statuses and steps of the members written, for the closing summary and the exit code.
struct member_tally {
  long members = 0;
  long succeeded = 0;  // reached t1, or a stopping event ended them
  long steps = 0;
  // Events (a model with event functions): the members a stopping event ended, and each event's
  // occurrences over all members.
  long stopped_by_event = 0;
  std::vector<std::string> event_names;
  std::vector<long> event_occurrences;
  std::vector<long> event_members;  // the members in which each event occurred
  std::vector<study::exceedance_estimate> event_by_t1;  // each event's fraction by t1, once estimated

  explicit member_tally(const engine& model) {
    for (const lockstep_event_info& e : model.events()) event_names.emplace_back(e.name);
    event_occurrences.assign(event_names.size(), 0);
    event_members.assign(event_names.size(), 0);
  }
  std::map<std::string, long> failed;
  long lyapunov_failed = 0;
  std::string lyapunov_message;  // the first reason a member's Lyapunov options were refused
  long derivative_failed = 0;    // members whose [derivative_measures] sensitivity solve failed
  initial_corrections initial;
  // The explicit method's work (dopri5, tsit5, auto: member_counters): its accepted steps, the members that
  // turned stiff (a stiffness detection), those that switched methods, and the switches.
  long explicit_steps = 0;
  long stiff_members = 0;
  long switched_members = 0;
  long method_switches = 0;

  // Members' Lyapunov statuses and the first reason their runs gave (first_lyapunov_message).
  void add_lyapunov(const member_status* status, long count, const std::string& first_message) {
    for (long i = 0; i < count; ++i)
      if (status[i] != member_status::success) ++lyapunov_failed;
    if (lyapunov_message.empty()) lyapunov_message = first_message;
  }
  void add_lyapunov(const lyapunov_buffers& b) {
    add_lyapunov(b.status.data(), static_cast<long>(b.status.size()), first_lyapunov_message(b));
  }

  // The members of `block` and their given starts (initial_corrections::add).
  void add(const io::member_block& block, const double* q0, const double* v0, int n, const solver_options& opt) {
    initial.add(block, q0, v0, n, opt);
    for (long i = 0; i < block.count; ++i) {
      const member_counters& c = block.counters[i];
      ++members;
      steps += c.steps;
      explicit_steps += c.explicit_steps;
      stiff_members += c.stiffness_detections > 0;
      switched_members += c.method_switches > 0;
      method_switches += c.method_switches;
      if (ended_normally(block.status[i]))
        ++succeeded;
      else
        ++failed[status_name(block.status[i])];
      if (block.status[i] == member_status::stopped_by_event) ++stopped_by_event;
      for (std::size_t k = 0; k < event_names.size(); ++k) {
        const long occurred = block.event_counts[static_cast<std::size_t>(i) * event_names.size() + k];
        event_occurrences[k] += occurred;
        event_members[k] += occurred > 0;
      }
    }
  }
  int exit_code() const {
    return succeeded == members && lyapunov_failed == 0 && derivative_failed == 0 ? exit_success : exit_members_failed;
  }
};

// What members of the explicit method that ran out of steps may say: an explicit method is held to its
// stability limit on a stiff member (method/dopri5.hpp), which then ends with step_size_too_small or
// max_steps however loose the tolerance. A line for the summary, or "" for other methods and endings.
inline std::string explicit_method_hint(method_kind method, const std::map<std::string, long>& failed) {
  if (!is_explicit_pair(method)) return "";
  long stalled = 0;
  for (const member_status s : {member_status::step_size_too_small, member_status::max_steps})
    if (const auto it = failed.find(status_name(s)); it != failed.end()) stalled += it->second;
  if (stalled == 0) return "";
  return "lockstep: " + std::to_string(stalled) + " member" + (stalled == 1 ? "" : "s") +
         " of the explicit method " + method_name(method) + " ran out of steps (max_steps or step_size_too_small): on a stiff member "
         "(a stiff spring, a small mass) an explicit method's steps stay at its stability limit; if these "
         "members are stiff, run them with radau5 or bdf, or with auto, which switches a member that turns "
         "stiff to Radau IIA 5\n";
}

// What the members of a method that takes explicit steps did (method/auto_switch.hpp): with auto, how
// many turned stiff and switched, and whose steps the run's were; with an explicit pair, the members
// its stiffness test found stiff. Lines for the summary, or "" for the other methods.
inline std::string explicit_steps_lines(method_kind method, const member_tally& t) {
  const auto plural = [](long count) { return count == 1 ? "" : "s"; };
  char line[512];
  if (method == method_kind::automatic) {
    std::snprintf(line, sizeof line,
                  "lockstep: method auto: %ld of %ld member%s switched between dopri5 and Radau IIA 5 (%ld switch%s); "
                  "%ld of the %ld accepted steps were dopri5's, %ld Radau IIA 5's\n",
                  t.switched_members, t.members, plural(t.members), t.method_switches,
                  t.method_switches == 1 ? "" : "es", t.explicit_steps, t.steps, t.steps - t.explicit_steps);
    return line;
  }
  if (!is_explicit_pair(method) || t.stiff_members == 0) return "";
  std::snprintf(line, sizeof line,
                "lockstep: %ld member%s of the explicit method %s turned stiff (its stiffness test: 15 steps held "
                "by its stability limit, /members/stiffness_detections); method \"auto\" switches such members to "
                "Radau IIA 5\n",
                t.stiff_members, plural(t.stiff_members), method_name(method));
  return line;
}

// The summary's lines on events: each event's occurrences and the members it occurred in, the fraction
// of members with it by t1 and its 95 % interval (/events/fraction), and the members a stopping event
// ended; "" for a model without events.
inline std::string event_lines(const member_tally& t) {
  if (t.event_names.empty()) return "";
  std::string out = "lockstep: events:";
  for (std::size_t k = 0; k < t.event_names.size(); ++k) {
    out += (k == 0 ? " " : "; ") + t.event_names[k] + " " + std::to_string(t.event_occurrences[k]) + " time" +
           (t.event_occurrences[k] == 1 ? "" : "s") + " in " + std::to_string(t.event_members[k]) + " member" +
           (t.event_members[k] == 1 ? "" : "s");
    if (k < t.event_by_t1.size()) {
      char fraction[96];
      const study::exceedance_estimate& e = t.event_by_t1[k];
      std::snprintf(fraction, sizeof fraction, ", by t1 %.4g [%.4g, %.4g]", e.probability, e.low, e.high);
      out += fraction;
    }
  }
  if (t.stopped_by_event > 0)
    out += "; " + std::to_string(t.stopped_by_event) + " member" + (t.stopped_by_event == 1 ? "" : "s") +
           " stopped by an event (counted as succeeded; /events/stop_event)";
  return out + "\n";
}

// `lanes`: what the engine's SIMD lanes executed in the run (engine::lanes_work), on this process.
inline void print_summary(const io::study_spec& spec, const member_tally& tally, double wall_seconds,
                          const run_settings& settings, const lanes_work_counts& lanes, int ranks = 1) {
  std::string failures;
  for (const auto& [name, count] : tally.failed) failures += (failures.empty() ? " (" : ", ") + std::to_string(count) + " " + name;
  if (!failures.empty()) failures += ")";
  const int threads = thread_count(settings);
  const std::string per_rank = ranks > 1 ? " per rank, " + std::to_string(ranks) + " MPI ranks" : "";
  std::fprintf(stderr,
               "lockstep: %s, %ld member%s: %ld succeeded, %ld failed%s; %ld accepted steps; wall time %.2f s "
               "(%s, %d thread%s%s)\nlockstep: results in %s\n",
               spec.name.c_str(), tally.members, tally.members == 1 ? "" : "s", tally.succeeded, tally.members - tally.succeeded, failures.c_str(),
               tally.steps, wall_seconds, backend_name(settings.where), threads, threads == 1 ? "" : "s",
               per_rank.c_str(), settings.out_dir.string().c_str());
  std::fputs(initial_correction_lines(tally.initial, spec.solver).c_str(), stderr);
  std::fputs(explicit_method_hint(spec.solver.method, tally.failed).c_str(), stderr);
  std::fputs(explicit_steps_lines(spec.solver.method, tally).c_str(), stderr);
  std::fputs(event_lines(tally).c_str(), stderr);
  const auto count = [](std::uint64_t n) { return static_cast<unsigned long long>(n); };
  if (lanes.attempts.executed > 0) {
    const char* rank = ranks > 1 ? " (rank 0)" : "";
    std::fprintf(stderr, "lockstep: SIMD lanes%s: %llu of %llu lane-attempts advanced a member (utilization %.3f)\n",
                 rank, count(lanes.attempts.of_members), count(lanes.attempts.executed), lanes.attempts.utilization());
    if (lanes.newton_iterations.executed > 0)
      std::fprintf(stderr,
                   "lockstep: SIMD lanes%s, the corrector: %llu of %llu lane-iterations of Newton's method were a "
                   "member's (utilization %.3f), %llu of %llu lane-factorizations (utilization %.3f)\n",
                   rank, count(lanes.newton_iterations.of_members), count(lanes.newton_iterations.executed),
                   lanes.newton_iterations.utilization(), count(lanes.factorizations.of_members),
                   count(lanes.factorizations.executed), lanes.factorizations.utilization());
    else if (lanes.factorizations.executed > 0)  // an explicit method: its stages' systems, no Newton iteration
      std::fprintf(stderr,
                   "lockstep: SIMD lanes%s, the stages' saddle-point systems: %llu of %llu lane-factorizations were "
                   "a member's (utilization %.3f)\n",
                   rank, count(lanes.factorizations.of_members), count(lanes.factorizations.executed),
                   lanes.factorizations.utilization());
  }
  if (spec.lyapunov.enabled)
    std::fprintf(stderr, "lockstep: Lyapunov exponents (%s): %ld of %ld members failed%s%s\n",
                 io::lyapunov_method_name(spec.lyapunov.method), tally.lyapunov_failed, tally.members,
                 tally.lyapunov_message.empty() ? "" : "; first reason: ", tally.lyapunov_message.c_str());
}

// The first times of the model's events over the members, streamed from the chunks: each member's
// first time of each event (NaN: none) and where its run ended (study/first_times.hpp). A study of
// Sobol' points or Latin hypercubes in two replicates or more (uses_replicate_errors) also keeps each
// replicate's, for the interval from their spread (study::replicate_interval); a study of independent
// draws (random) has no use for it, and Wilson's interval is the right one there.
struct event_first_times {
  std::vector<study::first_time_sample> samples;                   // [E]
  std::vector<std::vector<study::first_time_sample>> replicates;  // [E][R], or empty
  const study::sampling_plan& plan;
  event_first_times(const engine& model, const study::sampling_plan& plan)
      : samples(static_cast<std::size_t>(model.n_events())), plan(plan) {
    if (uses_replicate_errors(plan))
      replicates.assign(samples.size(), std::vector<study::first_time_sample>(static_cast<std::size_t>(plan.replicates)));
  }
  void add(const io::member_block& b) {
    const std::size_t E = samples.size();
    for (long i = 0; i < b.count; ++i)
      for (std::size_t k = 0; k < E; ++k) {
        const double first = b.event_first_times[static_cast<std::size_t>(i) * E + k];
        samples[k].add(first, b.final_t[i]);
        if (!replicates.empty())
          replicates[k][static_cast<std::size_t>(study::replicate_of(plan, b.first + i))].add(first, b.final_t[i]);
      }
  }
  // /events' fraction, its interval and the first times' quantiles; each event's fraction by t1 into
  // the tally for the summary.
  void write(io::results_writer& h5, const io::study_spec& spec, member_tally& tally) const {
    const std::size_t E = samples.size(), S = spec.save_times.size(), P = spec.events.quantiles.size();
    if (E == 0) return;
    std::vector<double> fraction(S * E), low(S * E), high(S * E), quantiles(P * E);
    for (std::size_t k = 0; k < E; ++k) {
      study::first_time_distribution d = samples[k].estimate(spec.save_times, spec.events.quantiles);
      if (!replicates.empty()) study::replicate_interval(d, replicates[k], spec.save_times);
      for (std::size_t s = 0; s < S; ++s) {
        fraction[s * E + k] = d.fraction[s];
        low[s * E + k] = d.low[s];
        high[s * E + k] = d.high[s];
      }
      for (std::size_t p = 0; p < P; ++p) quantiles[p * E + k] = d.quantiles[p];
      study::exceedance_estimate at_t1;
      at_t1.probability = d.fraction[S - 1];
      at_t1.low = d.low[S - 1];
      at_t1.high = d.high[S - 1];
      tally.event_by_t1.push_back(at_t1);
    }
    h5.write_event_distribution(fraction, low, high, quantiles, spec.events.quantiles,
                                replicates.empty() ? 0 : plan.replicates);
  }
};

// Checkpointed, resumed and MPI runs: defined in run_study_journaled.hpp, which run_study.cpp
// includes after this file.
int run_journaled(const engine& model, const io::study_spec& spec, const run_settings& settings, long members);

}  // namespace detail

int run_study(const engine& model, const io::study_spec& spec, const run_settings& settings) {
  const int ny = model.ny();
  const auto wall_start = std::chrono::steady_clock::now();
  const lanes_work_counts lanes_before = model.lanes_work();
  const study::sampling_plan& plan = spec.plan;

  // ---- the members ----
  if (const std::string why = study::check_plan(plan); !why.empty())
    throw io::study_error(spec.path.string(), 0, 0, "[ensemble] " + why);
  const long members = study::member_count(plan);
  // The tangent runs of [lyapunov] and [derivative_measures] go to t1 (lyapunov/): a member that a
  // stopping event ends earlier would have its exponents or derivatives from another interval.
  for (const lockstep_event_info& event : model.events())
    if (event_action(event.action) == event_action::stop && (spec.lyapunov.enabled || spec.derivative_measures.enabled))
      throw std::invalid_argument(std::string("model ") + std::string(model.name()) + "'s event " + event.name +
                                  " stops its members, while " + (spec.lyapunov.enabled ? "[lyapunov]" : "[derivative_measures]") +
                                  " runs every member to t1: the two would describe different intervals");
  if (settings.checkpoint_every > 0 || settings.resume != nullptr || mpi::communicator::world().size() > 1)
    return detail::run_journaled(model, spec, settings, members);
  detail::check_members_fit(model, spec, members, members);
  detail::check_derivative_memory(spec, members, ny);
  const ensemble_problem e = detail::build_ensemble(model, spec, 0, members);

  // ---- outputs: OUT_DIR, results.h5, members.csv, statistics ----
  detail::created_directory dir{settings.out_dir};
  detail::create_output_directory(dir);

  const io::results_layout out = detail::results_layout_for(model, spec, members);
  io::results_writer h5(settings.out_dir / "results.h5", out);
  io::members_csv_writer csv(settings.out_dir / "members.csv", out);
  const std::size_t width = spec.save_times.size() * static_cast<std::size_t>(values_per_save(model));
  study::ensemble_statistics stats = detail::statistics_for(model, spec, members, width);
  detail::member_exponents exponents(spec, members);
  detail::event_first_times first_times(model, plan);

  // ---- solve, streaming each finished chunk out ----
  run_options run;
  run.where = settings.where;
  run.threads = settings.threads;
  run.chunk_size = settings.chunk_size;
  run.keep_outputs = false;
  std::vector<double> inputs;
  detail::member_tally tally(model);
  detail::lyapunov_buffers lyapunov;
  io::lyapunov_values lyapunov_values;
  const long history_length = io::lyapunov_history_length(spec.lyapunov, spec.t0, spec.t1);
  std::vector<double> values;
  run.on_chunk = [&](const chunk_results& c) {
    io::member_block block = detail::member_block_of(c, 0, detail::sample_inputs(plan, c.first, c.count, inputs));
    block.y = detail::values_of(model, e, c, c.first, detail::thread_count(settings), values);
    if (spec.lyapunov.enabled) {
      detail::solve_lyapunov_chunk(model, e, spec.lyapunov, history_length, c.first, c.count,
                                          detail::thread_count(settings), settings.progress && !settings.quiet,
                                          lyapunov);
      lyapunov_values = lyapunov.values();
      block.lyapunov = &lyapunov_values;
      tally.add_lyapunov(lyapunov);
    }
    h5.write_members(block);
    csv.write_members(block);
    exponents.add(block);
    first_times.add(block);
    stats.add_range(c.first, c.count, block.y);
    const std::size_t start = static_cast<std::size_t>(c.first) * static_cast<std::size_t>(model.n());
    tally.add(block, e.q0.data() + start, e.v0.data() + start, model.n(), spec.solver);
  };
  auto last_draw = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  if (settings.progress && !settings.quiet)
    run.on_progress = [&](const progress_report& r) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_draw < std::chrono::milliseconds(100) && r.members_finished < r.members_total) return;
      last_draw = now;
      detail::draw_progress(r);
    };

  solve_ensemble(model, e, run);
  if (settings.progress && !settings.quiet) std::fputc('\n', stderr);

  // ---- statistics, exceedance, sensitivity indices, attributes, commit ----
  const study::ensemble_summary summary = stats.finish();
  detail::write_statistics(h5, spec, summary);
  detail::write_exceedance(h5, spec, model, summary);
  first_times.write(h5, spec, tally);
  std::optional<detail::sensitivity_results> sensitivity;
  if (spec.sensitivity.enabled) {
    sensitivity = detail::sensitivity_of(spec, stats, width, detail::thread_count(settings), exponents);
    detail::write_sensitivity(h5, spec, *sensitivity);
  }
  std::optional<detail::derivative_results> derivatives;
  if (spec.derivative_measures.enabled) {
    const detail::member_derivatives d =
        detail::solve_member_derivatives(model, detail::derivative_inputs_of(model, spec), 0, members,
                                         detail::thread_count(settings), settings.progress && !settings.quiet, {});
    derivatives = detail::derivative_measures_of(spec, d);
    detail::write_derivative_measures(h5, spec, *derivatives);
    tally.derivative_failed = derivatives->failed;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  detail::set_run_attributes(h5, spec, settings, wall, model);
  detail::commit_outputs(settings.out_dir, spec, h5, csv);
  dir.keep = true;

  // ---- summary ----
  if (!settings.quiet) detail::print_summary(spec, tally, wall, settings, model.lanes_work() - lanes_before);
  if (!settings.quiet) detail::print_exceedance(spec, model, summary, members);
  if (!settings.quiet && sensitivity) detail::print_sensitivity(spec, out, *sensitivity);
  if (!settings.quiet && derivatives) detail::print_derivative_measures(spec, out, *derivatives);
  return tally.exit_code();
}

}  // namespace lockstep::cli
