// host/model_files/model_compiler.cpp — load_model_file (model_compiler.hpp): header or equations file ->
// the translation unit of its engine -> cache key -> compile (once) -> load.
#include "host/model_files/model_compiler.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "host/core/instruction_set.hpp"
#include "host/model_files/engine_cache.hpp"
#include "host/model_files/header_models.hpp"
#include "host/model_files/install_layout.hpp"
#include "host/model_files/subprocess.hpp"
#include "lockstep/engine/loader.hpp"
#include "lockstep/version.hpp"

// Set by host/model_files/CMakeLists.txt from lockstep's own build.
#ifndef LOCKSTEP_MODEL_CXX
#error "LOCKSTEP_MODEL_CXX: the compiler lockstep is built with"
#endif

namespace lockstep::model_files {

namespace fs = std::filesystem;

namespace {

// Bumped when the translation unit below or the cache layout changes meaning.
constexpr const char* cache_format = "lockstep engine cache 1";

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

// The C++ header an equations file stands for, generated once per file content (and generator) into
// the cache: equations/KEY.hpp.
fs::path equations_header(const fs::path& source, const toolchain& tools) {
  const std::string text = read_file(source);
  // The generator is the entry script and the package beside it (equations/*.py): all of it counts.
  std::string script;
  try {
    script = read_file(tools.equations_script);
    const fs::path package = tools.equations_script.parent_path() / "equations";
    std::vector<fs::path> modules;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(package, ec))
      if (entry.path().extension() == ".py") modules.push_back(entry.path());
    std::sort(modules.begin(), modules.end());
    for (const fs::path& module : modules) script += "\n# " + module.filename().string() + "\n" + read_file(module);
  } catch (const std::runtime_error&) {
    throw model_file_error("cannot find the equations generator '" + tools.equations_script.string() +
                           "' (set LOCKSTEP_EQUATIONS_SCRIPT)");
  }
  // The absolute path counts: the header's #line directives name it.
  const std::string key =
      sha256_hex(std::string("lockstep equations 1\n") + tools.python + "\n" + source.string() + "\n" + script + "\n" + text);
  const fs::path dir = cache_root() / "equations";
  const fs::path header = dir / (key + ".hpp");
  if (fs::exists(header)) return header;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const process_result r = run_process({tools.python, tools.equations_script.string(), source.string(), "-o", header.string()});
  if (r.exit_code != 0) {
    std::string said = first_lines(r.errors + r.output, 60);
    if (said.empty()) said = "the equations generator failed (exit " + std::to_string(r.exit_code) + ")";
    throw model_file_error(said);
  }
  if (!fs::exists(header)) throw model_file_error("the equations generator wrote no header for '" + source.string() + "'");
  return header;
}

// The engine's C entry point (docs/ENGINE-ABI.md): the table of the model's engine, with `changes` (lines of
// C++ on the table `t`) made to it once.
std::string entry_point(const std::string& type, const std::string& changes) {
  std::string tu;
  tu += "extern \"C\" __attribute__((visibility(\"default\"))) const lockstep_engine* lockstep_engine_v1() {\n";
  tu += "  static const lockstep_engine table = [] {\n";
  tu += "    lockstep_engine t = lockstep::engine_detail::make_engine_table<::" + type + ">();\n";
  tu += changes;
  tu += "    return t;\n";
  tu += "  }();\n";
  tu += "  return &table;\n";
  tu += "}\n";
  return tu;
}

// The unit of an engine with the CUDA backend: the host engine of engine_source, and the device solve
// of kernels/cuda/ensemble_cuda_impl.cuh instantiated for the model, as the built-in engines attach it
// (host/engine/builtin_engine.cpp.in).
std::string device_engine_source(const fs::path& header, const std::string& type) {
  if (header.string().find_first_of("\"\n") != std::string::npos)
    throw model_file_error("the model file's path '" + header.string() + "' holds a quote or a line break, which an "
                           "#include cannot name: move or rename it");
  std::string tu;
  tu += "// The engine of model " + type + " with its CUDA backend, generated by lockstep (docs/MODEL-FILES.md).\n";
  tu += "#include \"lockstep/engine/model_engine.hpp\"\n";
  tu += "#include \"kernels/cuda/ensemble_cuda_impl.cuh\"\n";
  tu += "#include \"" + header.string() + "\"\n";
  tu += "namespace lockstep::cuda {\n";
  tu += "template lockstep_result solve_on_device<::" + type + ">(lockstep_device_run*, lockstep_error*);\n";
  tu += "}\n";
  tu += entry_point(type, "    t.solve_on_device = &lockstep::cuda::solve_on_device<::" + type + ">;\n"
                          "    t.device_built = 1;\n");
  return tu;
}

// The translation unit of the engine: the model behind the C entry point (docs/ENGINE-ABI.md); with
// lanes, its BDF runs the members of a call in the SIMD lanes of the unit's instruction set, as the
// built-in engines of a build for avx2 or avx512 do (host/engine/builtin_engine.cpp.in).
std::string engine_source(const fs::path& header, const std::string& type, bool lanes) {
  std::string tu;
  tu += "// The engine of model " + type + ", generated by lockstep (docs/ENGINE-ABI.md).\n";
  tu += "#include \"lockstep/engine/model_engine.hpp\"\n";
  // The engine's own copy of lockstep's elementary functions (lockstep/core/elementary.hpp), the very
  // code of the library's: a model file's results are bitwise its built-in twin's.
  tu += "#include \"lockstep/core/elementary_definitions.hpp\"\n";
  // An #include "..." names its file verbatim: no escapes exist for a quote or a line break in it.
  if (header.string().find_first_of("\"\n") != std::string::npos)
    throw model_file_error("the model file's path '" + header.string() + "' holds a quote or a line break, which an "
                           "#include cannot name: move or rename it");
  tu += "#include \"" + header.string() + "\"\n";
  if (!lanes) {
    tu += "extern \"C\" __attribute__((visibility(\"default\"))) const lockstep_engine* lockstep_engine_v1() {\n";
    tu += "  return lockstep::model_engine<::" + type + ">();\n";
    tu += "}\n";
    return tu;
  }
  tu += "#include \"lockstep/engine/lanes_engine.hpp\"\n";
  // A model too large for the lanes fails here, so that its entry is compiled without them and says so.
  tu += "static_assert(lockstep::engine_detail::fits_in_lanes<::" + type +
        ">(), \"the model is too large for SIMD lanes (lanes_max_jacobian_bytes in lockstep/engine/lanes_engine.hpp)\");\n";
  tu += entry_point(type, "    lockstep::engine_detail::use_lanes<::" + type + ">(t);  // BDF in SIMD lanes\n");
  return tu;
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
  cmd.push_back("-I" + tools.source_dir.string());
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

// The lanes a cache entry's engine runs BDF in, from its model.txt ("lanes N"; 0 where absent).
int entry_lanes(const fs::path& record) {
  std::error_code ec;
  if (!fs::exists(record, ec)) return 0;
  std::istringstream in(read_file(record));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("lanes ", 0) == 0) return std::atoi(line.c_str() + 6);
  return 0;
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
  t.source_dir = LOCKSTEP_SOURCE_DIR;
#endif
  if (const char* nvcc = std::getenv("LOCKSTEP_NVCC")) t.nvcc = nvcc;
  t.python = environment("LOCKSTEP_PYTHON");
  // The interpreter lockstep was configured with (Debian's /usr/bin/python3 with python3-sympy, or the
  // environment a wheel was built for).
  if (t.python.empty()) t.python = LOCKSTEP_GENERATOR_PYTHON;
  if (const std::string script = environment("LOCKSTEP_EQUATIONS_SCRIPT"); !script.empty()) t.equations_script = script;
  else t.equations_script = layout.equations_script;
  choose_instruction_set(t);
  // Highway's widest static target under the set's flags: AVX3 (8 doubles) for avx512, AVX2 (4) for avx2.
  if (t.instruction_set_refusal.empty() && is_builds_compiler(t.compiler) && environment("LOCKSTEP_MODEL_LANES") != "0")
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
    if (settings.device) {
      if (tools.nvcc.empty())
        throw model_file_error("--backend cuda: this lockstep has no CUDA toolkit to compile the model file's device "
                               "kernels with (built without nvcc, or LOCKSTEP_NVCC is empty); run it on --backend omp "
                               "or serial");
      if (!fs::exists(tools.source_dir / "kernels" / "cuda" / "ensemble_cuda_impl.cuh"))
        throw model_file_error("--backend cuda: the CUDA kernels of lockstep's source tree ('" + tools.source_dir.string() +
                               "/kernels/cuda') are not there; a model file's device kernels are compiled from them");
    }
    const bool device = settings.device;
    // BDF in SIMD lanes where the toolchain asks for them (a host engine for avx2 or avx512): the unit
    // that asks is the cache key's, and a model whose code does not compile on packs gets the unit
    // without them in that entry (model.txt says which), so a second use loads what the first made.
    const bool lanes = !device && tools.lanes > 0;
    const std::string tu = device ? device_engine_source(header, chosen.type) : engine_source(header, chosen.type, lanes);

    // The key: everything the library depends on. Its source part is the host unit preprocessed by the
    // host compiler (-E -P: every #include resolved, no line markers, so moving the model file or a
    // header does not count and changing any of them does), for the device engine too; nvcc's own
    // preprocessing would not do, as it writes a module id of the file's path and the time into its
    // output. The device engine adds the CUDA kernels' sources and nvcc's version and flags.
    std::vector<std::string> preprocess = host_compiler_command(tools, !device);
    preprocess.insert(preprocess.end(), {"-E", "-P", "-x", "c++", "-"});
    const process_result pre = run_process(preprocess, engine_source(header, chosen.type, lanes));
    if (pre.exit_code != 0)
      throw model_file_error(first_lines(pre.errors, 100) + "\ncannot compile the model in '" + request.source.string() +
                             "' (the preprocessor's messages are above)");
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
      for (const auto& entry : fs::directory_iterator(tools.source_dir / "kernels" / "cuda", listing))
        if (entry.is_regular_file()) kernels.push_back(entry.path());
      std::sort(kernels.begin(), kernels.end());
      for (const fs::path& k : kernels) material += "\n# " + k.filename().string() + "\n" + read_file(k);
    }
    material += std::string("\nbuild ") + LOCKSTEP_BUILD_ID + "\n" + pre.output;
    const std::string key = sha256_hex(material);

    const fs::path engines = cache_root() / "engines";
    const fs::path library = engines / key / "engine.so";
    double seconds = 0.0;
    const bool compiled = make_entry(engines, key, [&](const fs::path& build) {
      const std::string label = std::string(device ? "the CUDA backend of model " : "model ") +
                                (chosen.name.empty() ? chosen.type : chosen.name) + " (" + request.source.string() + ")" +
                                (device || tools.instruction_set == "baseline" ? "" : " for " + tools.instruction_set) +
                                (device || tools.optimization.empty() ? "" : " at -O" + tools.optimization);
      if (settings.progress) settings.progress("compiling " + label + " ...");
      const auto start = std::chrono::steady_clock::now();
      const fs::path unit = build / (device ? "engine.cu" : "engine.cpp");
      write_file_atomically(unit, tu);
      std::vector<std::string> compile = compiler_command(tools, device);
      compile.insert(compile.end(), {"-o", (build / "engine.so").string(), unit.string()});
      if (device) {
        // The device engine's host code needs lockstep's elementary functions too; they are compiled by
        // the host compiler in a unit of their own (nvcc hands a .cpp to it), keeping Highway's headers
        // out of nvcc's own passes.
        const fs::path elementary = build / "elementary.cpp";
        write_file_atomically(elementary, "#include \"lockstep/core/elementary_definitions.hpp\"\n");
        compile.push_back(elementary.string());
        compile.insert(compile.end(), tools.cuda_libraries.begin(), tools.cuda_libraries.end());
      }
      // The attempt with lanes stops at its first error (-Wfatal-errors changes no code that compiles):
      // a model too large for them fails the unit's static_assert before any template is instantiated.
      std::vector<std::string> attempt = compile;
      if (lanes) attempt.insert(attempt.begin() + 1, "-Wfatal-errors");
      process_result r = run_process(attempt, {}, true);
      int built_lanes = lanes ? tools.lanes : 0;
      std::string without_lanes;  // why the engine runs BDF one member at a time after all
      if (lanes && (r.exit_code != 0 || !fs::exists(build / "engine.so"))) {
        // The model's code may not run on SIMD packs (a branch on a coordinate's value, a function packs
        // lack), or the model is too large for them: the engine without lanes computes the same
        // results, one member at a time. Its compiler's messages, not these, are the user's if the
        // model does not compile at all.
        without_lanes = first_lines(r.output, 4);
        write_file_atomically(unit, engine_source(header, chosen.type, false));
        r = run_process(compile, {}, true);
        built_lanes = 0;
      }
      if (r.exit_code != 0 || !fs::exists(build / "engine.so")) {
        const std::string hint = device ? device_compile_hint(r.output) : "";
        throw model_file_error(first_lines(r.output, 100) + (hint.empty() ? "" : "\n" + hint) +
                               "\ncannot compile the model in '" + request.source.string() +
                               "' (the compiler's messages are above; the command was: " + command_line(compile) + ")");
      }
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char took[64];
      std::snprintf(took, sizeof took, "%.1f", seconds);
      write_file_atomically(build / "model.txt", "model " + chosen.type + "\nname " + chosen.name + "\nsource " +
                                                     source.string() + "\ncompile " +
                                                     command_line(built_lanes > 0 ? attempt : compile) +
                                                     "\nseconds " + took + "\nlanes " + std::to_string(built_lanes) +
                                                     "\n");
      if (settings.progress && !without_lanes.empty())
        settings.progress(label + ": its engine cannot run BDF in SIMD lanes (its code does not compile on SIMD "
                          "packs, or the model is too large for them), so it runs BDF one member at a time (the same "
                          "results; LOCKSTEP_MODEL_LANES=0 skips the attempt). The compiler began:\n" + without_lanes);
      if (settings.progress) settings.progress("compiled " + label + " in " + took + " s");
    });
    try {
      return loaded_model{load_engine_library(library), key, library, source, compiled, seconds,
                          lanes ? entry_lanes(library.parent_path() / "model.txt") : 0};
    } catch (const std::invalid_argument& e) {
      throw model_file_error(e.what());
    }
  } catch (const model_file_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw model_file_error(e.what());
  }
}

}  // namespace lockstep::model_files
