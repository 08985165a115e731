// host/cli/lockstep.cpp — the `lockstep` command (issue 6):
//
//     lockstep run STUDY.toml [-o OUT_DIR] [--backend serial|omp|cuda] [--threads N] [--quiet]
//     lockstep models                  # the built-in models, one line each
//     lockstep describe MODEL          # sizes, parameters with defaults, initial inputs with defaults
//     lockstep plot OUT_DIR/results.h5 [-o DIR] [--outputs q0,v1,...] [--quantity q3]   # PNG figures
//
// Exit codes: 0 every member succeeded; 1 some member failed (results still written); 2 bad study file
// or command line (nothing written); 3 the results could not be written (nothing half-written left).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/run_study.hpp"
#include "host/io/output_file.hpp"
#include "host/io/study_file.hpp"
#include "lockstep/model/registry.hpp"

#ifndef LOCKSTEP_PLOT_SCRIPT_BUILD
#define LOCKSTEP_PLOT_SCRIPT_BUILD ""
#endif
#ifndef LOCKSTEP_PLOT_SCRIPT_INSTALLED
#define LOCKSTEP_PLOT_SCRIPT_INSTALLED ""
#endif

namespace {

using namespace lockstep;

int error(const std::string& message, int code = cli::exit_bad_input) {
  std::fprintf(stderr, "lockstep: error: %s\n", message.c_str());
  return code;
}

// "did you mean" over the built-in model names.
std::string model_hint(const std::string& name) {
  std::vector<std::string_view> names;
  for (const auto& info : builtin_model_table) names.push_back(info.name);
  const std::string close = io::closest_name(name, names);
  std::string all;
  for (const auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
  return close.empty() ? "; built-in models: " + all : "; did you mean \"" + close + "\"?";
}

int list_models() {
  for (const auto& info : builtin_model_table)
    std::printf("%-18s n=%-2d m=%-2d k=%d  %s\n", std::string(info.name).c_str(), info.n, info.m, info.k,
                std::string(info.description).c_str());
  return 0;
}

int describe_model(const std::string& name) {
  const model_info* info = find_model(name);
  if (!info) return error("unknown model \"" + name + "\"" + model_hint(name));
  std::printf("%s — %s\n", std::string(info->name).c_str(), std::string(info->description).c_str());
  std::printf("sizes: n = %d coordinates, m = %d holonomic constraints, k = %d velocity constraints, %d degrees "
              "of freedom\n",
              info->n, info->m, info->k, info->n - info->m - info->k);
  std::printf("parameters ([model] params, [ensemble.vary] \"params.NAME\"):\n");
  for (const auto& p : info->params)
    std::printf("  %-10s = %-12.6g %s\n", std::string(p.name).c_str(), p.default_value, std::string(p.description).c_str());
  if (info->inputs.empty()) {
    std::printf("initial inputs: none (the model's initial state is fixed by its parameters)\n");
  } else {
    std::printf("initial inputs ([model] initial, [ensemble.vary] \"initial.NAME\"):\n");
    for (const auto& p : info->inputs)
      std::printf("  %-10s = %-12.6g %s\n", std::string(p.name).c_str(), p.default_value,
                  std::string(p.description).c_str());
  }
  return 0;
}

// The plot script: $LOCKSTEP_PLOT_SCRIPT, else the source tree's (a build tree), else the installed one.
std::string plot_script() {
  if (const char* env = std::getenv("LOCKSTEP_PLOT_SCRIPT"); env && *env) return env;
  for (const char* candidate : {LOCKSTEP_PLOT_SCRIPT_BUILD, LOCKSTEP_PLOT_SCRIPT_INSTALLED})
    if (*candidate && std::filesystem::exists(candidate)) return candidate;
  return "";
}

int plot(const std::string& results, const std::string& out_dir, const std::string& outputs, const std::string& quantity) {
  const std::string script = plot_script();
  if (script.empty()) return error("cannot find lockstep_plot.py (set LOCKSTEP_PLOT_SCRIPT)");
  // Debian's interpreter has numpy, h5py and matplotlib; the python3 first on PATH may not.
  const char* env_python = std::getenv("LOCKSTEP_PYTHON");
  const std::string python = env_python && *env_python ? env_python : "/usr/bin/python3";
  std::vector<std::string> args = {python, script, results};
  if (!out_dir.empty()) args.insert(args.end(), {"-o", out_dir});
  if (!outputs.empty()) args.insert(args.end(), {"--outputs", outputs});
  if (!quantity.empty()) args.insert(args.end(), {"--quantity", quantity});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execv(python.c_str(), argv.data());
  return error("cannot run " + python + ": " + std::strerror(errno));
}

int run(const std::string& study_path, const std::string& out, const std::string& where, int threads, long chunk,
        bool quiet) {
  try {
    const io::study_spec spec = io::load_study_file(study_path);
    cli::run_settings settings;
    settings.out_dir = out.empty() ? std::filesystem::path("lockstep-out") / spec.name : std::filesystem::path(out);
    settings.where = where == "serial" ? backend::serial : (where == "cuda" ? backend::cuda : backend::omp);
    settings.threads = threads;
    settings.chunk_size = chunk;
    settings.quiet = quiet;
    settings.progress = isatty(STDERR_FILENO) != 0;
    int code = cli::exit_bad_input;
    const bool known = visit_model(spec.model, [&]<class Model>() { code = cli::run_study<Model>(spec, settings); });
    if (!known) return error("unknown model \"" + spec.model + "\"" + model_hint(spec.model));
    return code;
  } catch (const io::study_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return cli::exit_bad_input;
  } catch (const io::io_error& e) {
    return error(e.what(), cli::exit_output_failed);
  } catch (const std::invalid_argument& e) {  // the library refuses the ensemble or backend
    return error(e.what(), cli::exit_bad_input);
  } catch (const std::exception& e) {
    return error(std::string("unexpected failure: ") + e.what(), cli::exit_output_failed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lockstep — ensembles of constrained mechanical systems (index-3 DAEs) on CPU cores and GPUs"};
  app.require_subcommand(1);

  std::string study_path, out, where = "omp", results, plot_dir, plot_outputs, plot_quantity, model_name;
  int threads = 0;
  long chunk = 0;
  bool quiet = false;

  CLI::App* run_cmd = app.add_subcommand("run", "solve the ensemble a study file describes and write its results");
  run_cmd->add_option("study", study_path, "the study file (TOML)")->required();
  run_cmd->add_option("-o,--output", out, "output directory (default: ./lockstep-out/<study name>)");
  run_cmd->add_option("--backend", where, "serial | omp | cuda (default omp)")
      ->check(CLI::IsMember({"serial", "omp", "cuda"}));
  run_cmd->add_option("--threads", threads, "OpenMP threads (default: OpenMP's default)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--chunk-size", chunk, "members per chunk (default: from the memory budget)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("-q,--quiet", quiet, "print only errors");

  CLI::App* models_cmd = app.add_subcommand("models", "list the built-in models, one line each");
  CLI::App* describe_cmd = app.add_subcommand("describe", "a model's sizes, parameters and initial inputs");
  describe_cmd->add_option("model", model_name, "a built-in model")->required();
  CLI::App* plot_cmd = app.add_subcommand("plot", "PNG figures of a results file (matplotlib)");
  plot_cmd->add_option("results", results, "OUT_DIR/results.h5")->required();
  plot_cmd->add_option("-o,--output", plot_dir, "directory for the figures (default: beside the results)");
  plot_cmd->add_option("--outputs", plot_outputs, "outputs to draw over time, e.g. q0,v1,lambda0 (default: q0..q3)");
  plot_cmd->add_option("--quantity", plot_quantity, "the final quantity of a 2-D grid's heat map, e.g. q3, v0, steps");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : cli::exit_bad_input;
  }

  if (run_cmd->parsed()) return run(study_path, out, where, threads, chunk, quiet);
  if (models_cmd->parsed()) return list_models();
  if (describe_cmd->parsed()) return describe_model(model_name);
  if (plot_cmd->parsed()) return plot(results, plot_dir, plot_outputs, plot_quantity);
  return cli::exit_bad_input;
}
