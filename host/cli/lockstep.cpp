// host/cli/lockstep.cpp — the `lockstep` command:
//
//     lockstep run STUDY.toml [-o OUT_DIR] [--backend serial|omp|cuda] [--threads N] [--chunk-size N]
//                  [--checkpoint-every SECONDS] [--quiet]
//     lockstep run --resume OUT_DIR [--backend ...] [--threads N] [--checkpoint-every SECONDS] [--quiet]
//     mpirun -np R lockstep run ...    # the members split across R ranks, the same results
//     lockstep models                  # the built-in models, one line each
//     lockstep describe MODEL [--name NAME]   # sizes, parameters and initial inputs with defaults, events
//     lockstep check MODEL [--name NAME] [--t1 T]   # the model doctor (host/model_files/model_doctor.hpp)
//
// MODEL is a built-in model's name or a model file (a C++ header or an equations file, compiled on
// first use and cached: host/model_files); a study names either in [model].
//     lockstep plot OUT_DIR/results.h5 [-o DIR] [--outputs x2,v.y2,...] [--quantity y2] [--member I]   # PNG figures
//     lockstep reference study-file|cli|results-file [-o FILE]   # the site's references (reference.hpp)
//
// Every option is documented where it is declared below; `lockstep reference cli` prints them all.
//
// Exit codes: 0 every member succeeded; 1 some member failed (results still written); 2 bad study file,
// command line or checkpoint (nothing written); 3 the results could not be written (nothing
// half-written left); 130 / 143 a checkpointed run stopped by SIGINT / SIGTERM (checkpoint written).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/core/instruction_set.hpp"
#include "host/cli/reference.hpp"
#include "host/cli/run_study.hpp"
#include "host/io/output_file.hpp"
#include "host/io/results_h5.hpp"
#include "host/io/study_file.hpp"
#include "host/mpi/communicator.hpp"
#include "host/model_files/install_layout.hpp"
#include "host/model_files/model_compiler.hpp"
#include "host/model_files/model_doctor.hpp"
#include "lockstep/engine/builtin.hpp"
#include "lockstep/model/concept.hpp"


namespace {

using namespace lockstep;

int error(const std::string& message, int code = cli::exit_bad_input) {
  cli::print_error("", message);
  return code;
}

// "did you mean" over the built-in model names.
std::string model_hint(const std::string& name) {
  std::vector<std::string_view> names;
  for (const engine& e : builtin_engines()) names.push_back(e.name());
  const std::string close = io::closest_name(name, names);
  std::string all;
  for (const auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
  return close.empty() ? "; built-in models: " + all : "; did you mean \"" + close + "\"?";
}

// `lockstep reference`'s text, to standard output or to a file.
int write_reference(const std::string& text, const std::string& path) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : cli::exit_output_failed;
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return error(path + ": cannot open for writing: " + std::strerror(errno), cli::exit_output_failed);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written)
    return error(path + ": cannot write: " + std::strerror(errno), cli::exit_output_failed);
  return 0;
}

int list_models() {
  for (const engine& e : builtin_engines())
    std::printf("%-18s n=%-2d m=%-2d k=%d  %s\n", std::string(e.name()).c_str(), e.n(), e.m(), e.k(),
                std::string(e.description()).c_str());
  return 0;
}

// Compile progress ("compiling model ... (N s)") on stderr.
void announce(const std::string& line) {
  std::fprintf(stderr, "lockstep: %s\n", line.c_str());
  std::fflush(stderr);
}

// Whether LOCKSTEP_LANES=0 turns every engine's SIMD lanes off where it runs (lockstep/engine/lanes_engine.hpp).
bool lanes_turned_off() {
  const char* value = std::getenv("LOCKSTEP_LANES");
  return value != nullptr && std::strcmp(value, "0") == 0;
}

// MODEL on the command line: a model file (compiled for `contents`, or found in the cache), else a
// built-in model's name. Throws model_file_error or std::invalid_argument with the message for the user.
// lanes_line, when given, is set to describe's line on how the engine runs its members (in SIMD lanes
// or one at a time), saying which engine it is about (a model file's lanes are its own, the built-in
// models' the build's: --version has a line for each).
engine model_of_argument(const std::string& argument, const std::string& pick, const model_files::engine_contents& contents,
                         bool quiet = false, std::string* lanes_line = nullptr) {
  auto in_lanes = [](int lanes) {
    return "SIMD lanes: members in " + std::to_string(lanes) + " lanes per core with every method";
  };
  const std::string none = "SIMD lanes: none, members one at a time";
  if (model_files::looks_like_model_file(argument)) {
    model_files::compile_settings settings;
    settings.contents = contents;
    if (!quiet) settings.progress = announce;
    model_files::loaded_model loaded = model_files::load_model_file({argument, pick}, settings);
    if (lanes_line != nullptr) {
      const std::string set = settings.tools.instruction_set;
      if (loaded.lanes > 0 && !lanes_turned_off())
        *lanes_line = in_lanes(loaded.lanes) + " (this model file's engine, compiled for " + set + ")";
      else if (loaded.lanes > 0)
        *lanes_line = none + " (this model file's engine has SIMD lanes; LOCKSTEP_LANES=0 turns them off)";
      else
        *lanes_line = none + " (this model file's engine, compiled for " + set +
                      " without SIMD lanes: lockstep --version says when model files get them)";
    }
    return loaded.model;
  }
  if (!pick.empty()) throw std::invalid_argument("--name picks a model of a model file; \"" + argument + "\" is a built-in model");
  const engine* model = find_builtin_engine(argument);
  if (!model)
    throw std::invalid_argument("unknown model \"" + argument + "\"" + model_hint(argument) +
                                " (a model file: a path ending in .hpp, .h or .toml)");
  if (lanes_line != nullptr) {
    const builtin_lanes_choice& choice = builtin_lanes_in_use();
    if (const int lanes = model->lanes(); lanes > 0)
      *lanes_line = in_lanes(lanes) + " (the built-in engine, " + std::string(model->instruction_set()) + ")";
    else if (choice.lanes == 0)
      *lanes_line = none + " (the built-in engines: " + choice.why_none + ")";
    else
      *lanes_line = none + " (the built-in engine: the model is too large for SIMD lanes)";
  }
  return *model;
}

// A model that cannot be used. The compiler's or the equations generator's own diagnostics
// ("FILE:LINE:COLUMN: error: ...") are shown as they are, with one line of ours after them.
int model_error(const std::string& argument, const std::string& message) {
  static const std::regex diagnostic(R"(^\S+:\d+:\d+: error: )", std::regex::multiline);
  if (!std::regex_search(message, diagnostic)) return error(message);
  std::fprintf(stderr, "%s\n", message.c_str());
  return error("the model file '" + argument + "' cannot be used (see above)");
}

int describe_model(const std::string& name, const std::string& pick) {
  std::optional<engine> found;
  std::string lanes_line;
  try {
    found.emplace(model_of_argument(name, pick, model_files::engine_contents{}, false, &lanes_line));  // the tables alone
  } catch (const std::exception& e) {
    return model_error(name, e.what());
  }
  const engine* model = &*found;
  std::printf("%s — %s\n", std::string(model->name()).c_str(), std::string(model->description()).c_str());
  std::printf("sizes: n = %d coordinates, m = %d holonomic constraints, k = %d velocity constraints, %d degrees "
              "of freedom\n",
              model->n(), model->m(), model->k(), model->n() - model->m() - model->k());
  std::string coordinates;
  for (const char* c : model->coordinate_names()) coordinates += (coordinates.empty() ? "" : ", ") + std::string(c);
  std::printf("coordinates: q = (%s)\n", coordinates.c_str());
  std::printf("%s\n", lanes_line.c_str());
  std::printf("parameters ([model] params, [ensemble.vary] \"params.NAME\"):\n");
  for (const auto& p : model->params())
    std::printf("  %-10s = %-12.6g %s\n", p.name, p.default_value, p.description);
  if (model->inputs().empty()) {
    std::printf("initial inputs: none (the model's initial state is fixed by its parameters)\n");
  } else {
    std::printf("initial inputs ([model] initial, [ensemble.vary] \"initial.NAME\"):\n");
    for (const auto& p : model->inputs()) std::printf("  %-10s = %-12.6g %s\n", p.name, p.default_value, p.description);
  }
  if (model->n_events() > 0) {
    std::printf("events (results.h5 /events, docs/how-to/events.md):\n");
    for (const lockstep_event_info& e : model->events())
      std::printf("  %-10s %-7s %-6s %s\n", e.name, event_direction_name(event_direction(e.direction)),
                  event_action_name(event_action(e.action)), e.description);
  }
  if (model->n_quantities() > 0) {
    std::printf("quantities, evaluated at the save times (results.h5 /quantities, [output] exceedance by name):\n");
    for (const lockstep_quantity_info& x : model->quantities()) std::printf("  %-16s %s\n", x.name, x.description);
  }
  return 0;
}

int check_model(const std::string& name, const std::string& pick, double t1) {
  std::optional<engine> found;
  try {
    // The doctor's short solve runs Radau IIA 5 (model_doctor.hpp).
    found.emplace(model_of_argument(name, pick, model_files::engine_contents{}.with_method(method_kind::radau5)));
  } catch (const std::exception& e) {
    return model_error(name, e.what());
  }
  const engine& model = *found;
  std::printf("checking %s (n = %d, m = %d, k = %d) at its default parameters and initial inputs\n",
              std::string(model.name()).c_str(), model.n(), model.m(), model.k());
  model_files::doctor_settings settings;
  settings.t1 = t1;
  if (model_files::looks_like_model_file(name)) {
    // An equations file names its rows, a mechanism file its joints' rows and its mobility count.
    model_files::model_file_rows rows = model_files::describe_model_file_rows(name);
    settings.row_names = std::move(rows.names);
    settings.mobility_count = rows.mobility_count;
    settings.driven_rows = rows.drives;
  }
  model_files::doctor_report report;
  try {
    report = model_files::examine_model(model, settings);
  } catch (const std::exception& e) {
    return error(std::string("the model failed while being examined: ") + e.what(), cli::exit_members_failed);
  }
  for (const auto& f : report.findings)
    std::printf("  %-6s %-12s %s\n",
                f.kind == model_files::finding_kind::defect    ? "DEFECT"
                : f.kind == model_files::finding_kind::warning ? "WARN"
                : f.kind == model_files::finding_kind::ok      ? "ok"
                                                               : "skip",
                f.topic.c_str(), f.sentence.c_str());
  const int defects = report.defects(), warnings = report.warnings();
  const std::string warned = warnings == 0 ? "" : " (" + std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s") + ")";
  if (defects == 0) std::printf("no defects found%s\n", warned.c_str());
  else std::printf("%d defect%s found%s\n", defects, defects == 1 ? "" : "s", warned.c_str());
  return defects == 0 ? cli::exit_success : cli::exit_members_failed;
}

// The plot script: $LOCKSTEP_PLOT_SCRIPT, else the installation's, or in a build tree the source
// tree's (host/model_files/install_layout.hpp).
std::string plot_script() {
  if (const char* env = std::getenv("LOCKSTEP_PLOT_SCRIPT"); env && *env) return env;
  const std::filesystem::path script = model_files::this_install_layout().plot_script;
  return std::filesystem::exists(script) ? script.string() : "";
}

int plot(const std::string& results, const std::string& out_dir, const std::string& outputs, const std::string& quantity,
         const std::string& member) {
  // A file of another results format is refused here, before Python starts (the script checks it too).
  try {
    io::check_results_file(results);
  } catch (const io::io_error& e) {
    return error(e.what());
  }
  const std::string script = plot_script();
  if (script.empty()) return error("cannot find lockstep_plot.py (set LOCKSTEP_PLOT_SCRIPT)");
  // Debian's interpreter has numpy, h5py and matplotlib; the python3 first on PATH may not.
  const char* env_python = std::getenv("LOCKSTEP_PYTHON");
  const std::string python = env_python && *env_python ? env_python : "/usr/bin/python3";
  std::vector<std::string> args = {python, script, results};
  if (!out_dir.empty()) args.insert(args.end(), {"-o", out_dir});
  if (!outputs.empty()) args.insert(args.end(), {"--outputs", outputs});
  if (!quantity.empty()) args.insert(args.end(), {"--quantity", quantity});
  if (!member.empty()) args.insert(args.end(), {"--member", member});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execv(python.c_str(), argv.data());
  return error("cannot run " + python + ": " + std::strerror(errno));
}

// The checkpoint of this rank in OUT_DIR, or why there is none to resume.
checkpoint::checkpoint_state resume_checkpoint(const std::filesystem::path& dir, const mpi::communicator& comm) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw checkpoint::checkpoint_error("cannot resume '" + dir.string() + "': no such directory");
  const fs::path path = checkpoint::checkpoint_path(dir, comm.rank(), comm.size());
  if (fs::exists(path)) return checkpoint::read_checkpoint(path);
  std::string found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("checkpoint") && !name.ends_with(".journal") && name.find(".partial-") == std::string::npos)
      found += (found.empty() ? "" : ", ") + name;
  }
  if (!found.empty())
    throw checkpoint::checkpoint_error("no checkpoint '" + path.filename().string() + "' in '" + dir.string() + "' (it holds " +
                                       found + "): resume with as many MPI ranks as the run had");
  throw checkpoint::checkpoint_error("no checkpoint in '" + dir.string() + "': nothing to resume" +
                                     (fs::exists(dir / "results.h5") ? " (results.h5 is there: the run completed)"
                                                                     : " (a run writes checkpoints with --checkpoint-every)"));
}

struct run_request {
  std::string study_path, resume_dir, out, where;
  int threads = 0;
  long chunk = 0;
  double checkpoint_every = 0.0;
  bool quiet = false;
};

int run(const run_request& request) {
  const mpi::communicator comm = mpi::communicator::world();
  io::study_spec spec;
  checkpoint::checkpoint_state resumed;
  cli::run_settings settings;
  // A study's model file is compiled by rank 0 first; the other ranks wait, then find it in the cache
  // (or, where ranks do not share the cache directory, compile it themselves). With --backend cuda the
  // engine compiled is the one with the model's CUDA backend (nvcc, its own cache entry), whose host
  // tables serve the study's checks as well.
  std::optional<model_files::loaded_model> user_model;
  const bool announce_compile = comm.rank() == 0 && !request.quiet;
  const io::model_file_resolver resolve = [&](const io::model_reference& reference) {
    model_files::compile_settings compile;
    compile.device = request.where == "cuda";
    // What the study runs: its method (with its projection after steps, where the study projects),
    // with [lyapunov] that method's Lyapunov run, and with [derivative_measures] its forward
    // sensitivities.
    compile.contents = model_files::engine_contents{}.with_method(reference.method, reference.projects);
    if (reference.lyapunov) compile.contents.with_lyapunov(reference.method, static_cast<int>(*reference.lyapunov));
    if (reference.sensitivities) compile.contents.with_sensitivities(reference.method);
    if (announce_compile) compile.progress = announce;
    if (reference.study_events) {
      // The model with the study's event functions ([events.functions]): a built-in one or a model file's,
      // compiled as a model file (with its device engine for --backend cuda).
      model_files::study_events_request events{nullptr, {reference.path, reference.name}, reference.study_text,
                                               reference.study_name};
      if (!reference.builtin.empty() && (events.builtin = find_builtin_engine(reference.builtin)) == nullptr)
        throw std::runtime_error("no built-in engine for model \"" + reference.builtin + "\"");
      user_model = model_files::load_with_study_events(events, compile);
    } else {
      user_model = model_files::load_model_file({reference.path, reference.name}, compile);
    }
    return io::resolved_model{io::model_info_of(user_model->model), user_model->key};
  };
  // Reading the study or checkpoint can fail on one rank only (a missing checkpoint): every rank
  // reports its own failure, and all of them stop together.
  int code = cli::exit_success;
  auto read = [&] {
    try {
      if (!request.resume_dir.empty()) {
        resumed = resume_checkpoint(request.resume_dir, comm);
        spec = io::parse_study(resumed.study_text, resumed.study_source, resolve);
        settings.out_dir = request.resume_dir;
        settings.resume = &resumed;
        settings.checkpoint_every = request.checkpoint_every > 0 ? request.checkpoint_every : resumed.checkpoint_every;
      } else {
        spec = io::load_study_file(request.study_path, resolve);
        settings.out_dir = request.out.empty() ? std::filesystem::path("lockstep-out") / spec.name : std::filesystem::path(request.out);
        settings.checkpoint_every = request.checkpoint_every;
      }
    } catch (...) {
      code = cli::report_current_exception(comm);
    }
  };
  if (comm.rank() == 0) read();
  if ((code = comm.max_over_ranks(code)) != cli::exit_success) return code;
  if (comm.rank() != 0) read();
  if ((code = comm.max_over_ranks(code)) != cli::exit_success) return code;

  try {
    settings.where = request.where == "serial" ? backend::serial : (request.where == "cuda" ? backend::cuda : backend::omp);
    settings.threads = request.threads;
    settings.chunk_size = request.chunk;
    settings.quiet = request.quiet;
    settings.progress = isatty(STDERR_FILENO) != 0 && comm.rank() == 0;
    const engine* model = user_model ? &user_model->model : find_builtin_engine(spec.model);
    if (model == nullptr)
      return comm.rank() == 0 ? error("unknown model \"" + spec.model + "\"" + model_hint(spec.model)) : cli::exit_bad_input;
    return cli::run_study(*model, spec, settings);
  } catch (...) {
    return cli::report_current_exception(comm);
  }
}

// --version's line on the built-in models' lanes (lockstep/engine/builtin.hpp, builtin_lanes_in_use).
std::string builtin_lanes_line() try {
  const lockstep::builtin_lanes_choice& choice = lockstep::builtin_lanes_in_use();
  if (choice.lanes == 0) return "off (" + choice.why_none + ")";
  return std::to_string(choice.lanes) + " per core (" + choice.instruction_set + "), with every method" +
         (choice.libraries.empty() ? std::string() : ", from " + choice.libraries) +
         " (LOCKSTEP_LANES=0 turns them off; lockstep describe MODEL says which models fit them)";
} catch (const std::invalid_argument& refused) {
  return std::string("refused: ") + refused.what();
}

// --version's line on model files' lanes: an engine compiled for avx2 or avx512 runs members in lanes
// (toolchain::lanes), unless LOCKSTEP_LANES=0 turns them off where it runs.
std::string model_file_lanes(const lockstep::model_files::toolchain& tools) {
  if (tools.lanes == 0) return "off (model files compiled for avx2 or avx512 run them)";
  if (lanes_turned_off()) return "off (LOCKSTEP_LANES=0)";
  return std::to_string(tools.lanes) +
         " per core, with every method, where the model's code compiles on SIMD packs (LOCKSTEP_MODEL_LANES=0 "
         "compiles without them)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lockstep — ensembles of constrained mechanical systems (index-3 DAEs) on CPU cores and GPUs"};
  app.require_subcommand(1);
  // The build's instruction set (LOCKSTEP_INSTRUCTION_SET): what it assumes of the CPU; and the one
  // model files are compiled for on this CPU (LOCKSTEP_MODEL_INSTRUCTION_SET, docs/MODEL-FILES.md); and
  // the SIMD lanes the built-in engines and model files run members in (docs/SIMD.md). The results' bits
  // depend on none of them. Computed only when asked for.
  app.set_version_flag("--version", std::function<std::string()>([] {
                         const lockstep::model_files::toolchain tools = lockstep::model_files::default_toolchain();
                         return std::string("lockstep " LOCKSTEP_VERSION_STRING " (") + LOCKSTEP_GIT_REVISION +
                                ")\ninstruction set: " +
                                lockstep::host::describe(lockstep::host::built_instruction_set()) +
                                "\nmodel files compiled for: " +
                                (tools.instruction_set_refusal.empty() ? tools.instruction_set
                                                                       : "none, refused: " + tools.instruction_set_refusal) +
                                "\nSIMD lanes, built-in models: " + builtin_lanes_line() +
                                "\nSIMD lanes, model files: " + model_file_lanes(tools);
                       }));

  std::string results, plot_dir, plot_outputs, plot_quantity, plot_member, model_name;
  run_request request;
  request.where = "omp";

  CLI::App* run_cmd = app.add_subcommand(
      "run", "solve the ensemble a study file describes and write its results (under mpirun: split across the ranks)");
  CLI::Option* study_option = run_cmd->add_option("study", request.study_path, "the study file (TOML)");
  CLI::Option* output_option =
      run_cmd->add_option("-o,--output", request.out, "output directory (default: ./lockstep-out/<study name>)");
  run_cmd->add_option("--backend", request.where, "serial | omp | cuda (default omp)")
      ->check(CLI::IsMember({"serial", "omp", "cuda"}));
  run_cmd->add_option("--threads", request.threads, "threads of the omp backend (default: OMP_NUM_THREADS, else the CPUs this process may run on)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--chunk-size", request.chunk, "members per chunk (default: from the memory budget)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--checkpoint-every", request.checkpoint_every,
                      "write OUT_DIR/checkpoint at least every SECONDS and on SIGINT/SIGTERM, for --resume")
      ->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--resume", request.resume_dir,
                   "continue the checkpointed run in OUT_DIR (its study is the checkpoint's copy) and write its results there")
      ->excludes(study_option)
      ->excludes(output_option);
  run_cmd->add_flag("-q,--quiet", request.quiet, "print only errors");

  CLI::App* models_cmd = app.add_subcommand("models", "list the built-in models, one line each");
  std::string model_pick;
  double check_t1 = 1.0;
  CLI::App* describe_cmd = app.add_subcommand("describe", "a model's sizes, parameters, initial inputs and events");
  describe_cmd->add_option("model", model_name, "a built-in model, or a model file (.hpp, .h, .toml)")->required();
  describe_cmd->add_option("--name", model_pick, "the model to describe, of a header that defines several");
  CLI::App* check_cmd = app.add_subcommand(
      "check", "examine a model before a long study: initialization, mass matrix, constraint rank, derivatives, a short solve");
  check_cmd->add_option("model", model_name, "a built-in model, or a model file (.hpp, .h, .toml)")->required();
  check_cmd->add_option("--name", model_pick, "the model to check, of a header that defines several");
  check_cmd->add_option("--t1", check_t1, "the short solve runs over [0, T] (default 1)")->check(CLI::PositiveNumber);
  CLI::App* plot_cmd = app.add_subcommand("plot", "PNG figures of a results file (matplotlib)");
  plot_cmd->add_option("results", results, "OUT_DIR/results.h5")->required();
  plot_cmd->add_option("-o,--output", plot_dir, "directory for the figures (default: beside the results)");
  plot_cmd->add_option("--outputs", plot_outputs,
                       "outputs to draw over time by the model's coordinate names, e.g. x2,v.y2 (a position, a "
                       "velocity), or by index, e.g. q0,v1,lambda0 (default: the first four positions)");
  plot_cmd->add_option("--quantity", plot_quantity, "the final quantity of a 2-D grid's heat map, e.g. y2, v.x1, steps");
  plot_cmd->add_option("--member", plot_member, "the member whose Lyapunov spectrum is drawn (default: the first that succeeded)")
      ->check(CLI::NonNegativeNumber);
  std::string reference_name, reference_out;
  CLI::App* reference_cmd = app.add_subcommand(
      "reference", "print a reference of the documentation site, generated from the program's own tables (Markdown)");
  reference_cmd->add_option("what", reference_name, "study-file | cli | results-file")
      ->required()
      ->check(CLI::IsMember(cli::reference_names));
  reference_cmd->add_option("-o,--output", reference_out, "write it to this file instead of standard output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : cli::exit_bad_input;
  }

  if (run_cmd->parsed()) {
    if (request.study_path.empty() && request.resume_dir.empty())
      return error("study is required (a study file, or --resume OUT_DIR); run with --help for more information");
    const mpi::session mpi_session(argc, argv);  // MPI_Init only under an MPI launcher
    return run(request);
  }
  if (models_cmd->parsed()) return list_models();
  if (describe_cmd->parsed()) return describe_model(model_name, model_pick);
  if (check_cmd->parsed()) return check_model(model_name, model_pick, check_t1);
  if (plot_cmd->parsed()) return plot(results, plot_dir, plot_outputs, plot_quantity, plot_member);
  if (reference_cmd->parsed()) {
    const std::string text = reference_name == "study-file" ? cli::study_file_reference()
                             : reference_name == "cli"      ? cli::cli_reference(app)
                                                            : cli::results_file_reference();
    return write_reference(text, reference_out);
  }
  return cli::exit_bad_input;
}
