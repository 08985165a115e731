// host/model_files/model_compiler.cpp — load_model_file (model_compiler.hpp): header or equations file ->
// the translation unit of its engine -> cache key -> compile (once) -> load.
#include "host/model_files/model_compiler.hpp"


#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "host/core/instruction_set.hpp"
#include "host/core/quoted.hpp"
#include "host/engine/engine_sources.hpp"
#include "host/model_files/engine_cache.hpp"
#include "host/model_files/header_models.hpp"
#include "host/model_files/install_layout.hpp"
#include "host/model_files/subprocess.hpp"
#include "lockstep/engine/loader.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/version.hpp"

// Set by host/model_files/CMakeLists.txt from lockstep's own build.
#ifndef LOCKSTEP_MODEL_CXX
#error "LOCKSTEP_MODEL_CXX: the compiler lockstep is built with"
#endif

namespace lockstep::model_files {

namespace fs = std::filesystem;

namespace {

// Bumped when the translation unit below or the cache layout changes meaning.
constexpr const char* cache_format = "lockstep engine cache 2";

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::vector<std::string> split(std::string_view list, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(separator, start), list.size());
    if (end > start) parts.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string first_lines(const std::string& text, int max_lines) {
  std::istringstream in(text);
  std::string line, out;
  int count = 0;
  while (std::getline(in, line)) {
    if (++count > max_lines) {
      out += "... (" + std::to_string(max_lines) + " lines shown)\n";
      break;
    }
    out += line + "\n";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool has_extension(const fs::path& p, std::initializer_list<std::string_view> extensions) {
  const std::string e = p.extension().string();
  for (std::string_view x : extensions)
    if (e == x) return true;
  return false;
}

bool is_equations_file(const fs::path& p) { return has_extension(p, {".toml"}); }
bool is_header_file(const fs::path& p) { return has_extension(p, {".hpp", ".h", ".hh", ".hxx", ".h++"}); }

// A file's path as a message shows it: relative to the working directory where the file lies below it
// (a study's [model] source is resolved to an absolute path, but its user named it from here), else as
// it is.
std::string shown_path(const fs::path& path) {
  std::error_code ec;
  const fs::path here = fs::current_path(ec);
  if (ec || !path.is_absolute()) return path.string();
  const fs::path relative = path.lexically_relative(here);
  if (relative.empty() || *relative.begin() == "..") return path.string();
  return relative.string();
}

// The equations generator's text, which every header it writes is keyed by: the entry script and the
// packages beside it (equations/*.py for equations files and study events, mechanism/*.py for mechanism
// files).
std::string generator_text(const toolchain& tools) {
  std::string script;
  try {
    script = read_file(tools.equations_script);
    std::vector<fs::path> modules;
    for (const char* package : {"equations", "mechanism"}) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(tools.equations_script.parent_path() / package, ec))
        if (entry.path().extension() == ".py") modules.push_back(entry.path());
    }
    std::sort(modules.begin(), modules.end());
    for (const fs::path& module : modules)
      script += "\n# " + module.parent_path().filename().string() + "/" + module.filename().string() + "\n" +
                read_file(module);
  } catch (const std::runtime_error&) {
    throw model_file_error("cannot find the equations generator '" + tools.equations_script.string() +
                           "' (set LOCKSTEP_EQUATIONS_SCRIPT)");
  }
  return script;
}

// The generator's messages, which begin "FILE:LINE:COLUMN: error:" with the path it was given, as the
// user names it.
std::string generator_messages(const process_result& r, const std::string& given, const std::string& shown) {
  std::string said = first_lines(r.errors + r.output, 60);
  if (said.empty()) said = "the equations generator failed (exit " + std::to_string(r.exit_code) + ")";
  const std::string from = given + ":", to = shown + ":";
  for (std::size_t at = said.find(from); from != to && at != std::string::npos; at = said.find(from, at + to.size()))
    said.replace(at, from.size(), to);
  return said;
}

// The C++ header an equations file stands for, generated once per file content (and generator) into
// the cache: equations/KEY.hpp.
fs::path equations_header(const fs::path& source, const toolchain& tools) {
  const std::string text = read_file(source);
  const std::string script = generator_text(tools);
  // The absolute path counts: the header's #line directives name it.
  const std::string key =
      sha256_hex(std::string("lockstep equations 1\n") + tools.python + "\n" + source.string() + "\n" + script + "\n" + text);
  const fs::path dir = cache_root() / "equations";
  const fs::path header = dir / (key + ".hpp");
  if (fs::exists(header)) return header;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const process_result r = run_process({tools.python, tools.equations_script.string(), source.string(), "-o", header.string()});
  if (r.exit_code != 0) throw model_file_error(generator_messages(r, source.string(), shown_path(source)));
  if (!fs::exists(header)) throw model_file_error("the equations generator wrote no header for '" + source.string() + "'");
  return header;
}

// The unit of an engine with the CUDA backend: the whole host table, and the device solve of
// kernels/cuda/ensemble_cuda_impl.cuh instantiated for the model, as the built-in engines attach it
// (host/engine/make_engine_source.cpp).
std::string device_engine_source(const fs::path& header, const std::string& type) {
  if (header.string().find_first_of("\"\n") != std::string::npos)
    throw model_file_error("the model file's path '" + header.string() + "' holds a quote or a line break, which an "
                           "#include cannot name: move or rename it");
  engine_sources::whole_engine engine;
  engine.comment = "The engine of model " + type + " with its CUDA backend, generated by lockstep (docs/MODEL-FILES.md).";
  engine.includes = {"kernels/cuda/ensemble_cuda_impl.cuh", header.string()};
  engine.preamble = "namespace lockstep::cuda {\ntemplate lockstep_result solve_on_device<::" + type +
                    ">(lockstep_device_run*, lockstep_error*);\n}\n";
  engine.parts = engine_sources::parts_of(engine_contents::everything(), 0, type);
  engine.after = {"t->solve_on_device = &lockstep::cuda::solve_on_device<::" + type + ">;", "t->device_built = 1;"};
  engine.entry = engine_sources::library_entry();
  return engine_sources::whole_unit(engine);
}

// One separately compiled part of a host engine (docs/MODEL-FILES.md, "What is compiled";
// engine_sources.hpp: a translation unit that defines one hidden C function, its hook, which makes its
// call on the engine's table). The parts of one engine are compiled in parallel and cached one by one,
// and linked with a small unit that calls their hooks in order.
struct engine_part : engine_sources::engine_part {
  // Set when the part is made:
  std::string key;
  std::filesystem::path object;  // its object file in the cache
  std::string failure;           // lanes only: why it does not compile (the compiler's first lines)
  bool compiled = false;         // by this call

  explicit engine_part(engine_sources::engine_part what) : engine_sources::engine_part(std::move(what)) {}
};

// The parts an engine with `wanted` needs, in the order their hooks run (engine_sources::parts_of): a
// method that runs in lanes leaves its advance to them, as this engine is compiled only where the lanes
// are on (default_toolchain).
std::vector<engine_part> parts_of(const engine_contents& wanted, int lanes, const std::string& type) {
  std::vector<engine_part> parts;
  for (engine_sources::engine_part& part :
       engine_sources::parts_of(wanted, lanes, type, engine_sources::advance_beside_lanes::left_to_lanes))
    parts.emplace_back(std::move(part));
  return parts;
}

// The translation unit of a part. `header` is the #include of the model file: its path, or a stand-in
// for the cache key (which the preprocessed model counts instead, so that moving the file does not).
std::string part_source(const engine_part& part, const std::string& header, const std::string& type) {
  return engine_sources::part_unit(part, header, type);
}

// The unit that links the parts into an engine library.
std::string entry_source(const std::vector<engine_part>& parts, const std::string& type) {
  return engine_sources::entry_unit({parts.begin(), parts.end()}, type);
}

// The host compiler with the build's flags, and the instruction set's for a host engine (a device
// engine's host unit is preprocessed for its cache key with the build's flags alone: nvcc never sees
// the set's).
std::vector<std::string> host_compiler_command(const toolchain& tools, bool with_instruction_set) {
  std::vector<std::string> cmd{tools.compiler};
  cmd.insert(cmd.end(), tools.flags.begin(), tools.flags.end());
  if (with_instruction_set)
    cmd.insert(cmd.end(), tools.instruction_set_flags.begin(), tools.instruction_set_flags.end());
  cmd.push_back("-I" + tools.include_dir.string());
  return cmd;
}

std::vector<std::string> compiler_command(const toolchain& tools, bool device) {
  if (!device) return host_compiler_command(tools, true);
  std::vector<std::string> cmd{tools.nvcc};
  cmd.insert(cmd.end(), tools.cuda_flags.begin(), tools.cuda_flags.end());
  cmd.push_back("-ccbin=" + tools.compiler);
  cmd.push_back("-I" + tools.include_dir.string());
  cmd.push_back("-I" + tools.kernels_dir.string());
  return cmd;
}

// The instruction sets wider than the baseline that model engines can be compiled for, narrowest first:
// CMake's "name:cpu features:flags|..." (host/model_files/CMakeLists.txt; empty where lockstep was not
// built by g++ for x86-64).
struct model_instruction_set {
  std::string name;
  std::string cpu_features;  // space-separated, the names host::this_cpu_has knows
  std::vector<std::string> flags;
};

std::vector<model_instruction_set> model_instruction_sets() {
  std::vector<model_instruction_set> sets;
  for (const std::string& entry : split(LOCKSTEP_MODEL_INSTRUCTION_SETS, '|')) {
    const std::vector<std::string> parts = split(entry, ':');
    if (parts.size() == 3) sets.push_back({parts[0], parts[1], split(parts[2], ' ')});
  }
  return sets;
}

// Widths in order; -1 for a name that is no set.
int instruction_set_rank(std::string_view name) {
  constexpr std::string_view order[] = {"baseline", "sse4", "avx2", "avx512"};
  for (int i = 0; i < 4; ++i)
    if (name == order[i]) return i;
  return -1;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
  return text;
}

// Whether `compiler` is the one lockstep was built with: the flags that keep a member's bits on wider
// instruction sets are g++'s, and LOCKSTEP_CXX may name another.
bool is_builds_compiler(const std::string& compiler) {
  std::error_code ec;
  return compiler == LOCKSTEP_MODEL_CXX || fs::equivalent(compiler, LOCKSTEP_MODEL_CXX, ec);
}

// Sets t.instruction_set and its flags, or t.instruction_set_refusal.
void choose_instruction_set(toolchain& t) {
  const std::string built(host::built_instruction_set().name);
  t.instruction_set = built;
  const std::string wanted = environment("LOCKSTEP_MODEL_INSTRUCTION_SET");
  const std::vector<model_instruction_set> sets = model_instruction_sets();
  const auto use = [&](const model_instruction_set& set) {
    t.instruction_set = set.name;
    t.instruction_set_flags = set.flags;
  };
  const auto cpu_lacks = [](const model_instruction_set& set) {
    return host::missing_cpu_features(set.cpu_features, [](std::string_view f) { return host::this_cpu_has(f); });
  };
  if (wanted.empty() || wanted == "widest") {
    if (!is_builds_compiler(t.compiler)) return;
    for (auto set = sets.rbegin(); set != sets.rend(); ++set)
      if (instruction_set_rank(set->name) > instruction_set_rank(built) && cpu_lacks(*set).empty()) return use(*set);
    return;
  }
  const std::string said = "LOCKSTEP_MODEL_INSTRUCTION_SET = '" + wanted + "': ";
  if (instruction_set_rank(wanted) < 0) {
    t.instruction_set_refusal = said + "expected widest (the default), baseline, sse4, avx2 or avx512";
  } else if (instruction_set_rank(wanted) < instruction_set_rank(built)) {
    t.instruction_set_refusal = said + "this lockstep is built for " + built +
                                " and compiles model files for it or a wider set: name one of those, or unset the "
                                "variable";
  } else if (wanted != built) {
    const auto set = std::find_if(sets.begin(), sets.end(), [&](const auto& s) { return s.name == wanted; });
    if (set == sets.end())
      t.instruction_set_refusal = said + "this lockstep compiles model files for its own instruction set (" + built +
                                  ") only (wider ones need a build by g++ for x86-64): name " + built +
                                  ", or unset the variable";
    else if (const std::vector<std::string> missing = cpu_lacks(*set); !missing.empty())
      t.instruction_set_refusal = said + "this CPU lacks " + joined(missing) +
                                  ": unset the variable (the widest set this CPU has), or name a narrower set";
    else
      use(*set);
  }
}

// Sets t.optimization and puts its -O flag in place of the build's, or sets t.optimization_refusal. No
// level changes a result: the flags that keep the bits (-ffp-contract=off, no -ffast-math) stay, and
// -Ofast, which would add -ffast-math, is not offered.
void choose_optimization(toolchain& t) {
  const std::string wanted = environment("LOCKSTEP_MODEL_OPTIMIZATION");
  if (wanted.empty()) return;
  constexpr std::string_view levels[] = {"0", "1", "2", "3", "s", "g"};
  if (std::find(std::begin(levels), std::end(levels), wanted) == std::end(levels)) {
    t.optimization_refusal = "LOCKSTEP_MODEL_OPTIMIZATION = '" + wanted +
                             "': expected 0, 1, 2, 3, s or g (the compiler's -O level), or unset for the build's own";
    return;
  }
  t.optimization = wanted;
  // In place of the build's -O flag, so that naming the build's own level gives its cache entry.
  bool replaced = false;
  for (std::string& f : t.flags)
    if (f.rfind("-O", 0) == 0) {
      f = "-O" + wanted;
      replaced = true;
    }
  if (!replaced) t.flags.push_back("-O" + wanted);
}

// The compiler's messages, with each of the model concept's own (lockstep_check_model: "lockstep model:
// ...") said first at the user's line, HEADER:LINE:COLUMN: error: MESSAGE (HEADER as the compiler names
// it: the path the engine's unit includes), where the model's struct
// declares the function or member the message names (else at the struct), as a compiler points at the
// code it rejects; the compiler's own messages follow unchanged.
std::string at_the_models_lines(const std::string& output, const fs::path& header, const header_model& model) {
  constexpr std::string_view marker = "lockstep model: ";
  // What the concept's messages can be about, as the model spells it; a message is about the one it
  // names first.
  constexpr std::string_view members[] = {"mass",   "force",    "constraint", "nonholonomic", "initial_state",
                                          "coordinate_names", "params", "inputs", "n_params", "name",
                                          "n_events", "events", "event"};
  auto named_at = [](std::string_view message, std::string_view word) {
    auto part_of_word = [&](std::size_t i) {
      return i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '_');
    };
    for (std::size_t p = message.find(word); p != std::string_view::npos; p = message.find(word, p + 1))
      if (!part_of_word(p - 1) && !part_of_word(p + word.size())) return p;
    return std::string_view::npos;
  };
  std::string ours, text;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t at = line.find(marker);
    if (at == std::string::npos || line.find("error: ") == std::string::npos) continue;
    const std::string message = line.substr(at);
    std::string_view member;
    std::size_t first = std::string_view::npos;
    for (std::string_view m : members)
      if (const std::size_t p = named_at(std::string_view(message).substr(marker.size()), m); p < first) {
        first = p;
        member = m;
      }
    if (text.empty()) text = read_file(header);
    const header_position where =
        member.empty() ? header_position{model.line, model.column} : member_position(text, model, member);
    const std::string said = header.string() + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                             ": error: " + message + "\n";
    if (ours.find(said) == std::string::npos) ours += said;
  }
  return ours + output;
}

}  // namespace

toolchain default_toolchain() {
  toolchain t;
  t.compiler = environment("LOCKSTEP_CXX");
  if (t.compiler.empty()) t.compiler = LOCKSTEP_MODEL_CXX;
  t.flags = split(LOCKSTEP_MODEL_CXX_FLAGS, '|');
  choose_optimization(t);
  // An installed lockstep compiles models against its installed headers, a build tree against the
  // source tree's (install_layout.hpp).
  const install_layout& layout = this_install_layout();
  if (const std::string dir = environment("LOCKSTEP_INCLUDE_DIR"); !dir.empty()) t.include_dir = dir;
  else t.include_dir = layout.include_dir;
#if defined(LOCKSTEP_MODEL_NVCC)
  t.nvcc = LOCKSTEP_MODEL_NVCC;
  t.cuda_flags = split(LOCKSTEP_MODEL_CUDA_FLAGS, '|');
  t.cuda_libraries = split(LOCKSTEP_MODEL_CUDA_LIBRARIES, '|');
#endif
  t.kernels_dir = layout.kernels_dir;
  if (const char* nvcc = std::getenv("LOCKSTEP_NVCC")) t.nvcc = nvcc;
  t.python = environment("LOCKSTEP_PYTHON");
  // The interpreter lockstep was configured with (Debian's /usr/bin/python3 with python3-sympy, or the
  // environment a wheel was built for).
  if (t.python.empty()) t.python = LOCKSTEP_GENERATOR_PYTHON;
  if (const std::string script = environment("LOCKSTEP_EQUATIONS_SCRIPT"); !script.empty()) t.equations_script = script;
  else t.equations_script = layout.equations_script;
  choose_instruction_set(t);
  // Highway's widest static target under the set's flags: AVX3 (8 doubles) for avx512, AVX2 (4) for avx2.
  // LOCKSTEP_LANES=0, which turns the lanes off at run time, compiles an engine without them: its
  // methods' parts then hold the one-member advance the lanes' parts would replace (parts_of).
  if (t.instruction_set_refusal.empty() && is_builds_compiler(t.compiler) && environment("LOCKSTEP_MODEL_LANES") != "0" &&
      environment("LOCKSTEP_LANES") != "0")
    t.lanes = t.instruction_set == "avx512" ? 8 : t.instruction_set == "avx2" ? 4 : 0;
  return t;
}

std::string device_compile_hint(std::string_view nvcc_output) {
  if (nvcc_output.find("calling a __host__ function") == std::string_view::npos) return "";
  return "a model compiled for --backend cuda runs on the device: mark its functions, and every function of "
         "its own they call, LOCKSTEP_HD (from lockstep/core/hd.hpp: __host__ __device__ under nvcc, inline "
         "otherwise), as the built-in models and the equations generator's headers do";
}

bool looks_like_model_file(std::string_view argument) {
  const fs::path p(argument);
  return argument.find('/') != std::string_view::npos || is_header_file(p) || is_equations_file(p);
}

namespace {

// The compiler's version and the flags of a host or device compile: what, besides the preprocessed
// source, an engine's cache key counts.
std::string toolchain_material(const toolchain& tools, bool device) {
  const process_result version = run_process({tools.compiler, "--version"}, {}, true);
  std::string material = std::string(cache_format) + "\ncompiler " + tools.compiler + "\n" + version.output + "\nflags";
  for (const std::string& f : tools.flags) material += " " + f;
  if (!device)
    for (const std::string& f : tools.instruction_set_flags) material += " " + f;
  if (device) {
    const process_result nvcc_version = run_process({tools.nvcc, "--version"}, {}, true);
    material += "\ndevice " + tools.nvcc + "\n" + nvcc_version.output + "\ncuda flags";
    for (const std::string& f : tools.cuda_flags) material += " " + f;
    for (const std::string& f : tools.cuda_libraries) material += " " + f;
    std::vector<fs::path> kernels;
    std::error_code listing;
    for (const auto& entry : fs::directory_iterator(tools.kernels_dir / "kernels" / "cuda", listing))
      if (entry.is_regular_file()) kernels.push_back(entry.path());
    std::sort(kernels.begin(), kernels.end());
    for (const fs::path& k : kernels) material += "\n# " + k.filename().string() + "\n" + read_file(k);
  }
  return material + "\nbuild " + LOCKSTEP_BUILD_ID;
}

// `unit` preprocessed by the host compiler (-E -P: every #include resolved, no line markers, so moving
// the model file or a header does not count and changing any of them does). nvcc's own preprocessing
// would not do for a device engine, as it writes a module id of the file's path and the time into its
// output: the host compiler preprocesses its host unit without the instruction set's flags.
std::string preprocessed(const toolchain& tools, bool device, const std::string& unit, const model_request& request) {
  std::vector<std::string> preprocess = host_compiler_command(tools, !device);
  preprocess.insert(preprocess.end(), {"-E", "-P", "-x", "c++", "-"});
  const process_result pre = run_process(preprocess, unit);
  if (pre.exit_code != 0)
    throw model_file_error(first_lines(pre.errors, 100) + "\ncannot compile the model in '" + request.source.string() +
                           "' (the preprocessor's messages are above)");
  return pre.output;
}

// What a model is called in progress lines: "model NAME (FILE) for avx512 at -O1".
std::string model_label(const header_model& chosen, const model_request& request, const toolchain& tools, bool device) {
  return std::string(device ? "the CUDA backend of model " : "model ") + (chosen.name.empty() ? chosen.type : chosen.name) +
         " (" + (request.shown.empty() ? request.source.string() : request.shown) + ")" +
         (device || tools.instruction_set == "baseline" ? "" : " for " + tools.instruction_set) +
         (device || tools.optimization.empty() ? "" : " at -O" + tools.optimization);
}

std::string seconds_text(double seconds) {
  char took[64];
  std::snprintf(took, sizeof took, "%.1f", seconds);
  return took;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Where the cache keeps the last failed build of a model (engine_cache.hpp: failed/): one folder per
// model (and per part of an engine), its name made of the model's.
fs::path failed_build_folder(const header_model& chosen, const std::string& what) {
  std::string folder = (chosen.name.empty() ? chosen.type : chosen.name) + (what.empty() ? "" : "-" + what);
  for (char& c : folder)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return cache_root() / "failed" / folder;
}

// The failed build's command as a script beside its unit, and all the compiler said, in the build
// folder (which becomes `failed`, make_entry): the command, run from there, names its files by their
// own names. The user's message: the compiler's first lines, the model concept's at the user's line
// first, and where to find the rest.
model_file_error failed_compile(const process_result& r, const std::vector<std::string>& compile, const fs::path& build,
                                const fs::path& failed, const fs::path& header, const header_model& chosen,
                                const model_request& request, const std::string& hint = {}) {
  std::vector<std::string> again = compile;
  for (std::string& a : again)
    if (a.rfind(build.string() + "/", 0) == 0) a.erase(0, build.string().size() + 1);
  write_file_atomically(build / "compile.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")\" || exit 1\n" + command_line(again) + "\n");
  write_file_atomically(build / "compiler.txt", r.output);
  return model_file_error(first_lines(at_the_models_lines(r.output, header, chosen), 100) +
                          (hint.empty() ? "" : "\n" + hint) + "\ncannot compile the model in '" +
                          request.source.string() + "' (the compiler's messages are above; the unit, the command and " +
                          "all the compiler said are kept in " + failed.string() + ": sh " +
                          (failed / "compile.sh").string() + " runs the command again)");
}

// The engine with the CUDA backend: one unit for nvcc (the host table holds every method), cached
// under its own key.
loaded_model load_device_engine(const model_request& request, const compile_settings& settings, const fs::path& source,
                                const fs::path& header, const header_model& chosen) {
  const toolchain& tools = settings.tools;
  if (tools.nvcc.empty())
    throw model_file_error("--backend cuda: this lockstep has no CUDA toolkit to compile the model file's device "
                           "kernels with (built without nvcc, or LOCKSTEP_NVCC is empty); run it on --backend omp "
                           "or serial");
  if (!fs::exists(tools.kernels_dir / "kernels" / "cuda" / "ensemble_cuda_impl.cuh"))
    throw model_file_error("--backend cuda: this lockstep's CUDA kernels ('" + tools.kernels_dir.string() +
                           "/kernels/cuda') are not there (a lockstep built without CUDA installs none); a model "
                           "file's device kernels are compiled from them");
  const std::string tu = device_engine_source(header, chosen.type);
  // The key counts the host unit of the whole table (every part, no lanes) and the CUDA kernels' sources.
  std::string host_unit = "#include \"lockstep/engine/model_engine.hpp\"\n#include \"lockstep/core/elementary_definitions.hpp\"\n"
                          "#include \"" + header.string() + "\"\n";
  const std::string key = sha256_hex(toolchain_material(tools, true) + "\n" + preprocessed(tools, true, host_unit, request));
  const fs::path library = cache_root() / "engines" / key / "engine.so";
  double seconds = 0.0;
  const fs::path failed = failed_build_folder(chosen, "cuda");
  const bool compiled = make_entry(cache_root() / "engines", key, [&](const fs::path& build) {
    const std::string label = model_label(chosen, request, tools, true);
    if (settings.progress) settings.progress("compiling " + label + " ...");
    const auto start = std::chrono::steady_clock::now();
    const fs::path unit = build / "engine.cu";
    write_file_atomically(unit, tu);
    std::vector<std::string> compile = compiler_command(tools, true);
    compile.insert(compile.end(), {"-o", (build / "engine.so").string(), unit.string()});
    // The device engine's host code needs lockstep's elementary functions too; they are compiled by
    // the host compiler in a unit of their own (nvcc hands a .cpp to it), keeping Highway's headers
    // out of nvcc's own passes.
    const fs::path elementary = build / "elementary.cpp";
    write_file_atomically(elementary, "#include \"lockstep/core/elementary_definitions.hpp\"\n");
    compile.push_back(elementary.string());
    compile.insert(compile.end(), tools.cuda_libraries.begin(), tools.cuda_libraries.end());
    const process_result r = run_process(compile, {}, true);
    if (r.exit_code != 0 || !fs::exists(build / "engine.so"))
      throw failed_compile(r, compile, build, failed, header, chosen, request, device_compile_hint(r.output));
    seconds = seconds_since(start);
    write_file_atomically(build / "model.txt", "model " + chosen.type + "\nname " + chosen.name + "\nsource " +
                                                   source.string() + "\ncompile " + command_line(compile) + "\nseconds " +
                                                   seconds_text(seconds) + "\n");
    if (settings.progress) settings.progress("compiled " + label + " in " + seconds_text(seconds) + " s");
  }, failed);
  try {
    return loaded_model{load_engine_library(library), key, library, source, compiled, seconds, 0};
  } catch (const std::invalid_argument& e) {
    throw model_file_error(e.what());
  }
}

// The compile command of a part, without its files.
std::vector<std::string> part_command(const engine_part& part, const toolchain& tools) {
  std::vector<std::string> compile = host_compiler_command(tools, true);
  // The attempt in lanes stops at its first error (-Wfatal-errors changes no code that compiles): a
  // model too large for them fails the unit's static_assert before any template is instantiated.
  if (part.lanes) compile.insert(compile.begin() + 1, "-Wfatal-errors");
  return compile;
}

// Each part's cache key and object file: the model's key material, the part's command and its unit.
void place_parts(std::vector<engine_part>& parts, const std::string& type, const toolchain& tools,
                 const std::string& material) {
  for (engine_part& part : parts) {
    part.key = sha256_hex(material + "\npart " + part.name + "\n" + command_line(part_command(part, tools)) + "\n" +
                          part_source(part, "MODEL", type));
    part.object = cache_root() / "parts" / part.key / "part.o";
  }
}

// ---- lockstep's headers, precompiled ----
// Every part's unit begins with lockstep/engine/model_engine.hpp, or lanes_engine.hpp, which adds
// Highway (engine_sources::first_header): parsing them is about 0.4 s of each part's compile, 0.9 s of
// the lanes'. g++ reads a header precompiled instead where it finds NAME.gch before NAME on the include
// path, made by the same compiler with the same flags (the GCC manual, "Using Precompiled Headers");
// anything else it ignores, and it reads the header. They are made once per toolchain and serve every
// model: by a build tree for its own (lockstep_precompile_headers), in the cache's headers/KEY/ for any
// other. KEY counts the compiler, the parts' commands, the headers' text, preprocessed, and the bytes
// of every header they include (precompiled_headers_text), so edited headers, comments too, are made
// again. The object code is the same as without them (a part's key does not count them). Only for g++,
// the build's own compiler; a toolchain's take about 55 MB and, with lanes, 95 MB more.
bool precompiles_headers(const toolchain& tools) {
  return LOCKSTEP_MODEL_CXX_IS_GNU && is_builds_compiler(tools.compiler);
}

// The first headers of a toolchain's parts (model_engine.hpp, and lanes_engine.hpp where the toolchain
// has lanes), with the key of their precompiled copies: the compiler, the commands and the headers'
// text, preprocessed.
struct engine_headers {
  struct header {
    engine_sources::engine_part part;  // a part that includes it first
    std::string name;
    std::string text;  // preprocessed
  };
  std::vector<header> headers;
  std::string key;
};

// Runs work(h) for every header at once, and rethrows the first exception.
void for_each_header(engine_headers& set, const std::function<void(engine_headers::header&)>& work) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failures(set.headers.size());
  for (std::size_t i = 0; i < set.headers.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        work(set.headers[i]);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// The key text of precompiled headers: `unit` preprocessed with its line markers, then the bytes of
// every file the markers name, each after its path. g++ uses a precompiled header only with the very
// headers it was made from: for a #pragma once header it keeps the size and checksum of the file, and
// reads a header whose bytes differ as another file, included a second time (redefinitions). The
// preprocessed text alone does not see a comment edited in place, so the bytes count too. One
// preprocessor run, as the text alone took; a file that cannot be read throws (the parts then read
// the headers themselves: precompiled_headers).
std::string precompiled_headers_text(const toolchain& tools, const std::string& unit, const model_request& request) {
  std::vector<std::string> preprocess = host_compiler_command(tools, true);
  preprocess.insert(preprocess.end(), {"-E", "-x", "c++", "-"});
  const process_result pre = run_process(preprocess, unit);
  if (pre.exit_code != 0)
    throw model_file_error(first_lines(pre.errors, 100) + "\ncannot compile the model in '" + request.source.string() +
                           "' (the preprocessor's messages are above)");
  std::string text = pre.output;
  std::vector<std::string> files;
  std::istringstream lines(pre.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) != 0) continue;  // a line marker: # LINE "FILE" FLAGS
    const std::size_t open = line.find('"'), close = line.rfind('"');
    if (open == std::string::npos || close <= open + 1 || line[open + 1] == '<') continue;  // <stdin>, <built-in>
    std::string file = line.substr(open + 1, close - open - 1);
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(std::move(file));
  }
  for (const std::string& file : files) text += "\nfile " + file + "\n" + read_file(file);
  return text;
}

engine_headers engine_headers_of(const toolchain& tools, const std::string& toolchain_text, const model_request& request) {
  engine_headers set;
  for (const bool lanes : {false, true})
    if (!lanes || tools.lanes > 0) {
      engine_sources::engine_part part;
      part.lanes = lanes;
      set.headers.push_back({part, engine_sources::first_header(part), {}});
    }
  for_each_header(set, [&](engine_headers::header& h) {
    h.text = precompiled_headers_text(tools, "#include \"" + h.name + "\"\n", request);
  });
  std::string material = toolchain_text;
  for (const engine_headers::header& h : set.headers)
    material += "\nprecompiled " + h.name + "\n" + command_line(part_command(engine_part(h.part), tools)) + "\n" + h.text;
  set.key = sha256_hex(material);
  return set;
}

// The entry root/KEY of the precompiled headers, made where it is missing.
void make_engine_headers(engine_headers& set, const toolchain& tools, const fs::path& root,
                         const std::function<void()>& on_build) {
  make_entry(root, set.key, [&](const fs::path& build) {
    on_build();
    for_each_header(set, [&](engine_headers::header& h) {
      const fs::path gch = build / (h.name + ".gch");
      fs::create_directories(gch.parent_path());
      std::vector<std::string> compile = part_command(engine_part(h.part), tools);
      compile.insert(compile.end(), {"-x", "c++-header", (tools.include_dir / h.name).string(), "-o", gch.string()});
      const process_result r = run_process(compile, {}, true);
      if (r.exit_code != 0 || !fs::exists(gch)) throw std::runtime_error(first_lines(r.output, 20));
    });
  });
}

// Where a build tree keeps the precompiled headers it made for its own toolchain
// (lockstep_precompile_headers, host/model_files/CMakeLists.txt); nothing for an installed lockstep.
fs::path build_tree_engine_headers() {
  return this_install_layout().prefix ? fs::path() : fs::path(LOCKSTEP_BUILD_TREE_ENGINE_HEADERS);
}

// The directory that holds the precompiled headers of a toolchain's parts: the build tree's where it
// made them for this toolchain, else the cache's, made there where it lacks them (one entry, so that one
// process makes it while the others wait). Empty where they cannot be made: the parts then read the
// headers, and any error in them is theirs to report.
fs::path precompiled_headers(const toolchain& tools, const std::string& toolchain_text, const model_request& request,
                             const std::function<void()>& on_build) {
  if (!precompiles_headers(tools)) return {};
  try {
    engine_headers set = engine_headers_of(tools, toolchain_text, request);
    if (const fs::path built = build_tree_engine_headers(); !built.empty())
      if (std::error_code ec; fs::is_directory(built / set.key, ec)) return built / set.key;
    make_engine_headers(set, tools, cache_root() / "headers", on_build);
    return cache_root() / "headers" / set.key;
  } catch (...) {
    return {};
  }
}

// `compile` with the precompiled headers' directory before lockstep's include directory.
std::vector<std::string> with_precompiled_headers(std::vector<std::string> compile, const fs::path& headers,
                                                  const toolchain& tools) {
  if (headers.empty()) return compile;
  const auto lockstep_include = std::find(compile.begin(), compile.end(), "-I" + tools.include_dir.string());
  compile.insert(lockstep_include, "-I" + headers.string());
  return compile;
}

// ---- lockstep's elementary functions, compiled once per toolchain ----
// Every engine holds its own copy of lockstep's elementary functions (lockstep/core/elementary.hpp),
// the very code of the library's (lockstep/core/elementary_definitions.hpp), so that a model file's
// results are bitwise its built-in twin's. They do not depend on the model: one object per toolchain,
// linked into each of its engines, made by a build tree for its own toolchain beside its precompiled
// headers (elementary/KEY/) and in the cache's elementary/KEY/ for any other. KEY counts the
// toolchain, the command and the definitions' text, preprocessed. Compiled with each model's own
// part, they were about half of that part's CPU time.
constexpr const char* elementary_unit = "#include \"lockstep/core/elementary_definitions.hpp\"\n";

struct elementary_functions {
  std::vector<std::string> command;  // without its files
  std::string key;
};

elementary_functions elementary_functions_of(const toolchain& tools, const std::string& toolchain_text,
                                             const model_request& request) {
  elementary_functions e{host_compiler_command(tools, true), {}};
  e.key = sha256_hex(toolchain_text + "\nelementary functions\n" + command_line(e.command) + "\n" +
                     preprocessed(tools, false, elementary_unit, request));
  return e;
}

// The object root/KEY/elementary.o, made where it is missing.
fs::path make_elementary_object(const elementary_functions& e, const fs::path& root) {
  make_entry(root, e.key, [&](const fs::path& build) {
    const fs::path unit = build / "elementary.cpp";
    write_file_atomically(unit, elementary_unit);
    std::vector<std::string> compile = e.command;
    compile.insert(compile.end(), {"-c", "-o", (build / "elementary.o").string(), unit.string()});
    const process_result r = run_process(compile, {}, true);
    if (r.exit_code != 0 || !fs::exists(build / "elementary.o"))
      throw model_file_error(first_lines(r.output, 40) + "\ncannot compile lockstep's elementary functions "
                             "(lockstep/core/elementary_definitions.hpp, which needs Highway's headers) for the "
                             "model files' toolchain; the compiler's messages are above, the command was: " +
                             command_line(compile));
  });
  return root / e.key / "elementary.o";
}

// The toolchain's object of the elementary functions: the build tree's where it made it for this
// toolchain, else the cache's, made there where it is missing.
fs::path elementary_object(const toolchain& tools, const std::string& toolchain_text, const model_request& request) {
  const elementary_functions e = elementary_functions_of(tools, toolchain_text, request);
  if (const fs::path built = build_tree_engine_headers(); !built.empty())
    if (std::error_code ec; fs::exists(built / "elementary" / e.key / "elementary.o", ec))
      return built / "elementary" / e.key / "elementary.o";
  return make_elementary_object(e, cache_root() / "elementary");
}

// Why the lanes' part does not compile (the compiler's first lines): recorded in the cache once every
// other part has compiled, so that a model with an error of its own is not taken for one without lanes.
struct lanes_refused {
  std::string output;
};

// Makes the cache entry of each part that is not there yet, several at once: the parts of one engine
// are independent translation units. on_build is called once, before this process compiles its first
// part. A part that fails throws (the first in the parts' order: the model's own part, whose
// static_asserts name what a malformed model lacks, before the others), but the lanes' part, which
// records why in its entry instead (failed.txt, and no object), when all the others compiled.
void make_parts(std::vector<engine_part>& parts, const fs::path& header, const header_model& chosen,
                const toolchain& tools, const fs::path& headers, const model_request& request,
                const std::function<void()>& on_build) {
  const std::string& type = chosen.type;
  // The longest first, so that the last to finish is a short one.
  std::vector<std::size_t> order(parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parts[a].cost > parts[b].cost; });
  std::vector<std::exception_ptr> failures(parts.size());
  std::vector<std::string> refusals(parts.size());
  std::atomic<std::size_t> next{0};
  std::once_flag announced;
  const auto record = [&](const engine_part& part, const fs::path& build, const std::vector<std::string>& compile,
                          double seconds) {
    write_file_atomically(build / "part.txt", "part " + part.name + "\nmodel " + type + "\nsource " +
                                                  request.source.string() + "\ncompile " + command_line(compile) +
                                                  "\nseconds " + seconds_text(seconds) + "\n");
  };
  const auto work = [&] {
    for (std::size_t n = next++; n < order.size(); n = next++) {
      const std::size_t i = order[n];
      engine_part& part = parts[i];
      // A failed part is kept for the user to read and re-run (the model's part, failed/NAME-model;
      // lanes the compiler refused, failed/NAME-lanes_METHOD).
      const fs::path failed = failed_build_folder(chosen, part.hook.substr(std::string_view("lockstep_part_").size()));
      try {
        part.compiled = make_entry(part.object.parent_path().parent_path(), part.key, [&](const fs::path& build) {
          std::call_once(announced, on_build);
          const auto start = std::chrono::steady_clock::now();
          const fs::path unit = build / "part.cpp";
          write_file_atomically(unit, part_source(part, header.string(), type));
          std::vector<std::string> compile = with_precompiled_headers(part_command(part, tools), headers, tools);
          compile.insert(compile.end(), {"-c", "-o", (build / "part.o").string(), unit.string()});
          const process_result r = run_process(compile, {}, true);
          if (r.exit_code != 0 || !fs::exists(build / "part.o")) {
            // A refusal is cached (below) only where the compiler itself said no: one killed (out of
            // memory, say) or crashing may compile the lanes next time.
            const bool compiler_said_no = r.exit_code < 128 && r.output.find("internal compiler error") == std::string::npos;
            model_file_error error = failed_compile(r, compile, build, failed, header, chosen, request);
            if (part.lanes && compiler_said_no) throw lanes_refused{first_lines(r.output, 4)};
            throw error;
          }
          record(part, build, compile, seconds_since(start));
        }, failed);
        const fs::path refusal = part.object.parent_path() / "failed.txt";
        if (std::error_code ec; fs::exists(refusal, ec)) part.failure = read_file(refusal);
      } catch (const lanes_refused& refused) {
        refusals[i] = refused.output;
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  const int workers = std::min<int>(available_cpus(), static_cast<int>(parts.size()));
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
  // The model compiles, but not on SIMD packs (a branch on a coordinate's value, a function packs
  // lack), or it is too large for them: the engine without lanes computes the same results, one member
  // at a time, and the entry says why, so that a later run does not try again.
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (refusals[i].empty()) continue;
    engine_part& part = parts[i];
    make_entry(part.object.parent_path().parent_path(), part.key, [&](const fs::path& build) {
      write_file_atomically(build / "failed.txt", refusals[i] + "\n");
      record(part, build, part_command(part, tools), 0.0);
    });
    // Another process may have made the entry first, and compiled the lanes where this one could not.
    const fs::path refusal = part.object.parent_path() / "failed.txt";
    if (std::error_code ec; fs::exists(refusal, ec)) part.failure = read_file(refusal);
    part.compiled = true;
  }
}

// The engine of the parts `wanted` needs: each part from the cache or compiled (in parallel), then
// linked (once per set of parts).
loaded_model load_host_engine(const model_request& request, const compile_settings& settings, const fs::path& source,
                              const fs::path& header, const header_model& chosen) {
  const toolchain& tools = settings.tools;
  const auto start = std::chrono::steady_clock::now();
  if (header.string().find_first_of("\"\n") != std::string::npos)
    throw model_file_error("the model file's path '" + header.string() + "' holds a quote or a line break, which an "
                           "#include cannot name: move or rename it");
  // Every part includes what this unit includes, or less: its preprocessed text, with the part's own
  // unit, is each part's key, and alone it is the model's identity (the same whatever parts a study
  // needs). An #include "..." names its file verbatim: no escapes exist for a quote or a line break.
  std::string everything = "#include \"lockstep/engine/model_engine.hpp\"\n#include \"lockstep/core/elementary_definitions.hpp\"\n"
                           "#include \"" + header.string() + "\"\n";
  if (tools.lanes > 0) everything += "#include \"lockstep/engine/lanes_engine.hpp\"\n";
  const std::string toolchain_text = toolchain_material(tools, false);
  const std::string material = toolchain_text + "\n" + preprocessed(tools, false, everything, request);
  const std::string identity = sha256_hex(material);

  std::vector<engine_part> parts = parts_of(settings.contents, tools.lanes, chosen.type);
  place_parts(parts, chosen.type, tools, material);
  const std::string label = model_label(chosen, request, tools, false);
  const auto missing_parts = [&] {
    std::string names;
    for (const engine_part& part : parts)
      if (std::error_code ec; !fs::exists(part.object.parent_path(), ec)) names += (names.empty() ? "" : ", ") + part.name;
    return names;
  };
  std::string missing = missing_parts();
  // One process at a time makes a model's missing pieces (the precompiled headers, then the parts):
  // the others wait, are told so, and find them made. Without this lock, one process could make the
  // headers while another made the parts, and a compile the user asked for once would be told twice.
  std::optional<file_lock> compiling;
  if (!missing.empty()) {
    const fs::path locks = cache_root() / "compiling";
    std::error_code ec;
    fs::create_directories(locks, ec);
    if (ec) throw std::runtime_error("cannot create '" + locks.string() + "': " + ec.message());
    compiling.emplace(locks / (identity + ".lock"), [&] {
      if (settings.progress) settings.progress("waiting for another lockstep process, which compiles " + label);
    });
    missing = missing_parts();
  }
  // Said by the process that compiles.
  bool announced = false;
  std::once_flag announcing;
  const auto announce = [&] {
    std::call_once(announcing, [&] {
      announced = true;
      if (settings.progress) settings.progress("compiling " + label + " ... (" + missing + ")");
    });
  };
  // The elementary functions' object, beside the parts (cached after the toolchain's first model).
  std::future<fs::path> elementary;
  if (!missing.empty())
    elementary = std::async(std::launch::async, [&] { return elementary_object(tools, toolchain_text, request); });
  const fs::path headers = missing.empty() ? fs::path() : precompiled_headers(tools, toolchain_text, request, announce);
  make_parts(parts, header, chosen, tools, headers, request, announce);
  // Without its lanes the engine runs its methods one member at a time: the lanes' parts are left out,
  // and the methods' parts are the ones that hold the one-member advance (compiled now, the first time
  // the lanes are refused; cached after).
  std::string without_lanes;
  if (std::any_of(parts.begin(), parts.end(), [](const engine_part& p) { return !p.failure.empty(); })) {
    for (const engine_part& part : parts)
      if (!part.failure.empty() && part.compiled) without_lanes = part.failure;
    parts = parts_of(settings.contents, 0, chosen.type);
    place_parts(parts, chosen.type, tools, material);
    make_parts(parts, header, chosen, tools, headers, request, announce);
  }
  compiling.reset();
  const int linked_lanes = std::any_of(parts.begin(), parts.end(), [](const engine_part& p) { return p.lanes; }) ? tools.lanes : 0;
  int lanes = linked_lanes;
  if (tools.lanes > 0 && settings.contents.methods == 0) {
    // An engine without a method (the tables alone): the lanes a method will get, unless an earlier
    // compile found that the model's code does not run on packs.
    std::vector<engine_part> in_lanes = parts_of(engine_contents{engine_contents::all()}, tools.lanes, chosen.type);
    place_parts(in_lanes, chosen.type, tools, material);
    lanes = tools.lanes;
    for (const engine_part& part : in_lanes)
      if (std::error_code ec; part.lanes && fs::exists(part.object.parent_path() / "failed.txt", ec)) lanes = 0;
  }

  std::string link_material = material + "\nlink";
  for (const engine_part& part : parts) link_material += " " + part.key;
  const std::string key = sha256_hex(link_material);
  const fs::path library = cache_root() / "engines" / key / "engine.so";
  const bool linked = make_entry(cache_root() / "engines", key, [&](const fs::path& build) {
    const fs::path unit = build / "entry.cpp";
    write_file_atomically(unit, entry_source(parts, chosen.type));
    std::vector<std::string> link = host_compiler_command(tools, true);
    link.insert(link.end(), {"-o", (build / "engine.so").string(), unit.string()});
    for (const engine_part& part : parts) link.push_back(part.object.string());
    link.push_back((elementary.valid() ? elementary.get() : elementary_object(tools, toolchain_text, request)).string());
    const process_result r = run_process(link, {}, true);
    if (r.exit_code != 0 || !fs::exists(build / "engine.so"))
      throw model_file_error(first_lines(r.output, 100) + "\ncannot link the engine of the model in '" +
                             request.source.string() + "' (the linker's messages are above; the command was: " +
                             command_line(link) + ")");
    std::string record = "model " + chosen.type + "\nname " + chosen.name + "\nsource " + source.string() +
                         "\nidentity " + identity + "\ncompile " + command_line(link) + "\nlanes " +
                         std::to_string(linked_lanes) + "\n";
    for (const engine_part& part : parts) record += "part " + part.key + " " + part.name + "\n";
    write_file_atomically(build / "model.txt", record);
  });
  const bool compiled = linked || std::any_of(parts.begin(), parts.end(), [](const engine_part& p) { return p.compiled; });
  const double seconds = compiled ? seconds_since(start) : 0.0;
  if (settings.progress && !without_lanes.empty())
    settings.progress(label + ": its engine cannot run members in SIMD lanes (its code does not compile on SIMD packs, "
                      "or the model is too large for them), so it runs them one at a time (the same results; "
                      "LOCKSTEP_MODEL_LANES=0 skips the attempt). The compiler began:\n" + without_lanes);
  if (settings.progress && announced) settings.progress("compiled " + label + " in " + seconds_text(seconds) + " s");
  try {
    return loaded_model{load_engine_library(library), identity, library, source, compiled, seconds, lanes};
  } catch (const std::invalid_argument& e) {
    throw model_file_error(e.what());
  }
}

}  // namespace

fs::path precompile_engine_headers() {
  const fs::path root = build_tree_engine_headers();
  if (root.empty()) throw std::runtime_error("an installed lockstep keeps its precompiled headers in the model cache");
  const toolchain tools = default_toolchain();
  const model_request request{"lockstep's engine headers", ""};
  const std::string toolchain_text = toolchain_material(tools, false);
  // Those of earlier headers go: the build tree keeps its own alone.
  const auto keep_only = [](const fs::path& dir, const std::string& key, const std::string& also) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name != key && name != key + ".lock" && name != also) fs::remove_all(entry.path(), ec);
    }
  };
  const elementary_functions elementary = elementary_functions_of(tools, toolchain_text, request);
  make_elementary_object(elementary, root / "elementary");
  keep_only(root / "elementary", elementary.key, "");
  if (!precompiles_headers(tools)) {
    keep_only(root, "elementary", "");
    return {};
  }
  engine_headers set = engine_headers_of(tools, toolchain_text, request);
  make_engine_headers(set, tools, root, [] {});
  keep_only(root, set.key, "elementary");
  return root / set.key;
}

loaded_model load_model_file(const model_request& request, const compile_settings& settings) {
  const toolchain& tools = settings.tools;
  // The instruction set is the host engine's; nvcc compiles a device engine with its own flags.
  if (!settings.device && !tools.instruction_set_refusal.empty()) throw model_file_error(tools.instruction_set_refusal);
  if (!tools.optimization_refusal.empty()) throw model_file_error(tools.optimization_refusal);
  std::error_code ec;
  const fs::path source = fs::absolute(request.source, ec).lexically_normal();
  if (!fs::is_regular_file(source, ec))
    throw model_file_error("cannot read the model file '" + request.source.string() + "': no such file");
  if (!is_header_file(source) && !is_equations_file(source))
    throw model_file_error("'" + request.source.string() +
                           "' is not a model file: a C++ header (.hpp, .h, .hh, .hxx) or an equations file (.toml)");
  try {
    const fs::path header = is_equations_file(source) ? equations_header(source, tools) : source;
    header_model chosen;
    try {
      chosen = choose_header_model(find_header_models(read_file(header)), request.name, request.source.string());
    } catch (const std::invalid_argument& e) {
      throw model_file_error(e.what());
    }
    loaded_model loaded = settings.device ? load_device_engine(request, settings, source, header, chosen)
                                          : load_host_engine(request, settings, source, header, chosen);
    loaded.header = header;
    loaded.type = chosen.type;
    return loaded;
  } catch (const model_file_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw model_file_error(e.what());
  }
}

namespace {

// What equations/study_events.py needs of the model the study's events are added to (its docstring):
// the C++ type and its header, and the names from the model's engine.
std::string study_events_model_json(const engine& model, const std::string& type, const std::string& include) {
  std::string json = "{\"type\": " + host_text::quoted(type) + ", \"name\": " + host_text::quoted(model.name()) +
                     ", \"include\": " + host_text::quoted(include) + ", \"coordinates\": [";
  for (std::size_t i = 0; i < model.coordinate_names().size(); ++i)
    json += (i ? ", " : "") + host_text::quoted(model.coordinate_names()[i]);
  json += "], \"parameters\": [";
  for (std::size_t i = 0; i < model.params().size(); ++i) json += (i ? ", " : "") + host_text::quoted(model.params()[i].name);
  return json + "], \"m\": " + std::to_string(model.m()) + ", \"k\": " + std::to_string(model.k()) +
         ", \"events\": " + std::to_string(model.n_events()) + "}\n";
}

// A C++ identifier made of a model's name: its letters, digits and underscores, others as '_'.
std::string identifier_of(std::string_view name) {
  std::string out;
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "model_" + out;
  return out;
}

}  // namespace

loaded_model load_with_study_events(const study_events_request& request, const compile_settings& settings) {
  const toolchain& tools = settings.tools;
  // The model's engine, for its names, and its type and header.
  std::optional<loaded_model> tables;
  std::string type, include;
  const engine* model = request.builtin;
  if (model != nullptr) {
    type = "lockstep::builtin_model<" + host_text::quoted(model->name()) + ">";
    include = "lockstep/model/registry.hpp";
  } else {
    // Its tables alone (the "model" part), with the header and type the compile chose: a header whose
    // path an #include cannot name was refused there.
    compile_settings tables_only = settings;
    tables_only.contents = engine_contents{};
    tables_only.device = false;
    tables = load_model_file(request.file, tables_only);
    model = &tables->model;
    type = "::" + tables->type;
    include = tables->header.string();
  }
  const std::string json = study_events_model_json(*model, type, include);
  const std::string name = identifier_of(model->name());
  const std::string structure = name + "_with_study_events";
  // The header, once per study text, model and generator: study_events/KEY/NAME.hpp.
  const std::string key = sha256_hex("lockstep study events 1\n" + tools.python + "\n" + request.study_name + "\n" +
                                     json + generator_text(tools) + "\n" + request.study_text);
  const fs::path root = cache_root() / "study_events";
  const fs::path header = root / key / (name + ".hpp");
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw model_file_error("cannot create '" + root.string() + "': " + ec.message());
  make_entry(root, key, [&](const fs::path& build) {
    write_file_atomically(build / "study.toml", request.study_text);
    write_file_atomically(build / "model.json", json);
    const process_result r =
        run_process({tools.python, tools.equations_script.string(), (build / "study.toml").string(), "--study-events",
                     (build / "model.json").string(), "--struct", structure, "--name", request.study_name, "-o",
                     (build / (name + ".hpp")).string()});
    if (r.exit_code != 0) throw model_file_error(generator_messages(r, request.study_name, request.study_name));
  });
  return load_model_file({header, "", "with the event functions of " + request.study_name}, settings);
}

model_file_rows describe_model_file_rows(const fs::path& source, const toolchain& tools) {
  model_file_rows rows;
  if (!is_equations_file(source)) return rows;
  const process_result r = run_process({tools.python, tools.equations_script.string(), source.string(), "--rows"});
  if (r.exit_code != 0) return rows;
  // One line per fact: "count N" and "drives D" (mechanism files), then "row NAME" per row in order.
  std::size_t at = 0;
  while (at < r.output.size()) {
    std::size_t end = r.output.find('\n', at);
    if (end == std::string::npos) end = r.output.size();
    const std::string line = r.output.substr(at, end - at);
    at = end + 1;
    if (line.rfind("row ", 0) == 0) rows.names.push_back(line.substr(4));
    else if (line.rfind("count ", 0) == 0) rows.mobility_count = std::stoi(line.substr(6));
    else if (line.rfind("drives ", 0) == 0) rows.drives = std::stoi(line.substr(7));
  }
  return rows;
}

}  // namespace lockstep::model_files
