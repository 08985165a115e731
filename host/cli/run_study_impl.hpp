// host/cli/run_study_impl.hpp — the definition of run_study<Model> (run_study.hpp), included only by the
// generated per-model translation units.
//
// The flow: members from the sampling plan (study/samplers.hpp) -> ensemble<Model> -> solve_ensemble
// with keep_outputs = false: each finished chunk streams into results.h5, members.csv and the
// statistics accumulators and is then dropped, so a study of 10^6 members with statistics only never
// holds its trajectories (issue 6). Outputs are written under temporary names and renamed only when
// complete (host/io/output_file.hpp).
#pragma once

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "host/cli/run_study.hpp"
#include "host/io/members_csv.hpp"
#include "host/io/output_file.hpp"
#include "host/io/results_h5.hpp"
#include "lockstep/lockstep.hpp"
#include "lockstep/study/samplers.hpp"
#include "lockstep/study/statistics.hpp"

#ifndef LOCKSTEP_VERSION_STRING
#define LOCKSTEP_VERSION_STRING "unknown"
#endif
#ifndef LOCKSTEP_GIT_REVISION
#define LOCKSTEP_GIT_REVISION "unknown"
#endif

namespace lockstep::cli {

namespace detail {

// The ensemble the study describes: every member's parameters and initial inputs are the model's
// defaults, then the [model] overrides, then the member's sampled values.
template <class Model>
ensemble<Model> build_ensemble(const io::study_spec& spec, long members) {
  ensemble<Model> e;
  e.members = members;
  e.t0 = spec.t0;
  e.t1 = spec.t1;
  e.save_times = spec.save_times;
  e.options = spec.solver;
  e.params.resize(static_cast<std::size_t>(members) * Model::n_params);
  e.q0.resize(static_cast<std::size_t>(members) * Model::n);
  e.v0.resize(e.q0.size());

  double base_params[Model::n_params];
  for (int j = 0; j < Model::n_params; ++j) base_params[j] = Model::params[j].default_value;
  for (const auto& o : spec.params) base_params[o.index] = o.value;
  constexpr int n_inputs = Model::n_inputs > 0 ? Model::n_inputs : 1;
  double base_inputs[n_inputs] = {};
  if constexpr (Model::n_inputs > 0)
    for (int j = 0; j < Model::n_inputs; ++j) base_inputs[j] = Model::inputs[j].default_value;
  for (const auto& o : spec.initial) base_inputs[o.index] = o.value;

  const std::size_t varied = spec.plan.vary.size();
  std::vector<double> x(std::max<std::size_t>(varied, 1));
  for (long i = 0; i < members; ++i) {
    double* p = e.params_of(i);
    std::copy(base_params, base_params + Model::n_params, p);
    double inputs[n_inputs];
    std::copy(base_inputs, base_inputs + n_inputs, inputs);
    if (varied > 0) study::sample_member(spec.plan, i, x.data());
    for (std::size_t d = 0; d < varied; ++d) {
      const auto& v = spec.plan.vary[d];
      (v.is_param ? p : inputs)[v.index] = x[d];
    }
    e.set_initial_inputs(i, inputs);
  }
  return e;
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

// Removes a directory this run created, when the run could not complete (nothing half-written stays).
struct created_directory {
  std::filesystem::path path;
  bool created = false;
  bool keep = false;
  ~created_directory() {
    if (created && !keep) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  }
};

// Copies the study file into OUT_DIR through a temporary and a rename, like every output.
inline void write_study_copy(const std::filesystem::path& out_dir, const io::study_spec& spec) {
  io::output_file copy(out_dir / "study.toml", "study file copy");
  copy.write(spec.text);
  copy.commit();
}

}  // namespace detail

template <class Model>
int run_study(const io::study_spec& spec, const run_settings& settings) {
  using layout = state_layout<Model>;
  constexpr int ny = layout::size;
  const auto wall_start = std::chrono::steady_clock::now();
  const study::sampling_plan& plan = spec.plan;

  // ---- the members ----
  if (const std::string why = study::check_plan(plan); !why.empty())
    throw io::study_error(spec.path.string(), 0, 0, "[ensemble] " + why);
  const long members = study::member_count(plan);
  const ensemble<Model> e = detail::build_ensemble<Model>(spec, members);

  // ---- outputs: OUT_DIR, results.h5, members.csv, statistics ----
  detail::created_directory dir{settings.out_dir};
  {
    std::error_code ec;
    const bool existed = std::filesystem::is_directory(settings.out_dir, ec);
    std::filesystem::create_directories(settings.out_dir, ec);
    if (ec) throw io::io_error(settings.out_dir, ec.value(), "cannot create the output directory: " + ec.message());
    dir.created = !existed;
  }

  io::results_layout out;
  out.model = Model::name;
  out.members = members;
  out.n = Model::n;
  out.m = Model::m;
  out.k = Model::k;
  out.has_mu = spec.solver.form == formulation::ggl && Model::m > 0;
  out.has_nu = Model::k > 0;
  out.trajectories = spec.output.trajectories;
  out.save_times = spec.save_times;
  for (std::size_t d = 0; d < plan.vary.size(); ++d) {
    out.varied_names.push_back(plan.vary[d].name);
    if (plan.vary[d].dist.kind == study::distribution_kind::grid) {
      out.grid_dims.push_back(static_cast<int>(d));
      out.grid_shape.push_back(static_cast<long>(plan.vary[d].dist.grid.size()));
    }
  }
  io::results_writer h5(settings.out_dir / "results.h5", out);
  io::members_csv_writer csv(settings.out_dir / "members.csv", out);

  // Replicate-based standard errors for randomized QMC with R > 1 replicates (each replicate a
  // contiguous block of members: study/sampling_plan.hpp); std / sqrt(N) otherwise — for a single
  // QMC replicate that overestimates the error, and the file says which one it holds.
  const bool qmc = plan.sampler == study::sampler_kind::sobol || plan.sampler == study::sampler_kind::lhs;
  const bool replicate_errors = qmc && plan.replicates > 1 && !study::is_pure_grid(plan);
  const long per_replicate = replicate_errors ? members / plan.replicates : 0;
  const std::size_t width = spec.save_times.size() * ny;
  study::ensemble_statistics stats(members, width, spec.output.quantiles, per_replicate,
                                   static_cast<std::size_t>(spec.output.quantile_memory_mb) << 20);

  // ---- solve, streaming each finished chunk out ----
  run_options run;
  run.where = settings.where;
  run.threads = settings.threads;
  run.chunk_size = settings.chunk_size;
  run.keep_outputs = false;
  const std::size_t varied = plan.vary.size();
  std::vector<double> inputs;
  run.on_chunk = [&](const chunk_results& c) {
    inputs.assign(static_cast<std::size_t>(c.count) * varied, 0.0);
    for (long i = 0; i < c.count && varied > 0; ++i) study::sample_member(plan, c.first + i, &inputs[i * varied]);
    io::member_block block;
    block.first = c.first;
    block.count = c.count;
    block.status = c.status;
    block.counters = c.counters;
    block.final_t = c.t_final;
    block.inputs = varied > 0 ? inputs.data() : nullptr;
    block.y = c.outputs;
    block.y_final = c.y_final;
    h5.write_members(block);
    csv.write_members(block);
    stats.add_range(c.first, c.count, c.outputs);
  };
  auto last_draw = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  if (settings.progress && !settings.quiet)
    run.on_progress = [&](const progress_report& r) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_draw < std::chrono::milliseconds(100) && r.members_finished < r.members_total) return;
      last_draw = now;
      detail::draw_progress(r);
    };

  const ensemble_result<Model> r = solve_ensemble(e, run);
  if (settings.progress && !settings.quiet) std::fputc('\n', stderr);

  // ---- statistics, attributes, commit ----
  detail::write_statistics(h5, spec, stats.finish());
  const int threads = settings.where == backend::omp ? (settings.threads > 0 ? settings.threads : omp_get_max_threads()) : 1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  io::run_info info;
  info.study_text = spec.text;
  info.lockstep_version = LOCKSTEP_VERSION_STRING;
  info.git_revision = LOCKSTEP_GIT_REVISION;
  info.backend = backend_name(settings.where);
  info.threads = threads;
  info.wall_time_seconds = wall;
  h5.set_run_info(info);
  h5.set_attribute("study_name", spec.name);
  h5.set_attribute("method", method_name(spec.solver.method));
  h5.set_attribute("formulation", spec.solver.form == formulation::ggl ? "ggl" : "index3");
  h5.set_attribute("mean_stderr_method", replicate_errors ? "replicates" : "std/sqrt(n)");
  h5.commit();
  csv.commit();
  detail::write_study_copy(settings.out_dir, spec);
  dir.keep = true;

  // ---- summary ----
  long succeeded = 0;
  std::map<std::string, long> failed;
  long steps = 0;
  for (long i = 0; i < members; ++i) {
    steps += r.counters[i].steps;
    if (r.status[i] == member_status::success)
      ++succeeded;
    else
      ++failed[status_name(r.status[i])];
  }
  if (!settings.quiet) {
    std::string failures;
    for (const auto& [name, count] : failed) failures += (failures.empty() ? " (" : ", ") + std::to_string(count) + " " + name;
    if (!failures.empty()) failures += ")";
    std::fprintf(stderr,
                 "lockstep: %s, %ld members: %ld succeeded, %ld failed%s; %ld accepted steps; wall time %.2f s "
                 "(%s, %d thread%s)\nlockstep: results in %s\n",
                 spec.name.c_str(), members, succeeded, members - succeeded, failures.c_str(), steps, wall,
                 backend_name(settings.where), threads, threads == 1 ? "" : "s", settings.out_dir.string().c_str());
  }
  return succeeded == members ? exit_success : exit_members_failed;
}

}  // namespace lockstep::cli
