// host/model_files/model_compiler.hpp — a model file (a C++ header, or an equations file) compiled into
// an engine library on first use, cached, and loaded through the engine ABI.
//
//     C++ header (.hpp .h .hh .hxx)    a struct satisfying the model concept
//                                      (include/lockstep/model/concept.hpp), as the built-in models
//     equations file (.toml)           named coordinates, parameters and expressions (docs/EQUATIONS.md),
//                                      turned into such a struct by equations_to_header.py (SymPy)
//
// The engine is compiled with the compiler lockstep was built with, lockstep's headers and the flags
// the engine rules prescribe (docs/ENGINE-ABI.md), into the cache of engine_cache.hpp; a second use
// with the same preprocessed source, compiler, flags and lockstep version loads it without compiling.
// docs/MODEL-FILES.md is the user's guide.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/engine/engine_sources.hpp"
#include "lockstep/engine/abi.h"
#include "lockstep/engine/engine.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::model_files {

// A model file that cannot become an engine: the message is meant for the user as it is (several
// lines where the compiler or the equations generator spoke, each naming the user's file and line).
class model_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How engines are built: the compiler and flags of lockstep's own build, its headers, and the Python
// that runs the equations generator. default_toolchain() reads them from the build (environment:
// LOCKSTEP_CXX, LOCKSTEP_INCLUDE_DIR, LOCKSTEP_PYTHON, LOCKSTEP_EQUATIONS_SCRIPT override them).
struct toolchain {
  std::string compiler;
  std::vector<std::string> flags;
  std::filesystem::path include_dir;
  std::string python;
  std::filesystem::path equations_script;
  // The CUDA backend of a model file (--backend cuda): nvcc and the flags of lockstep's own CUDA build,
  // and the directory whose kernels/cuda the device unit includes (install_layout.hpp: the source tree,
  // or an installation's share/lockstep). nvcc is "" where lockstep was built without the CUDA toolkit
  // (LOCKSTEP_NVCC overrides it; set empty, it forbids device compiles).
  std::string nvcc;
  std::vector<std::string> cuda_flags;
  std::vector<std::string> cuda_libraries;  // after the unit on the command line (cuBLAS, cuSOLVER)
  std::filesystem::path kernels_dir;
  // The x86-64 instruction set a model's host engine is compiled for (docs/MODEL-FILES.md,
  // "Instruction set"): this build's own (LOCKSTEP_INSTRUCTION_SET), or a wider one this CPU has, whose
  // flags (instruction_set_flags) follow `flags` on a host engine's command line. default_toolchain()
  // takes the widest this CPU has where lockstep was built by g++ for x86-64 and LOCKSTEP_CXX names no
  // other compiler, or the one LOCKSTEP_MODEL_INSTRUCTION_SET names. A member's results are the same
  // bits for every set. A device engine is compiled by nvcc with cuda_flags, which name no set.
  std::string instruction_set;
  std::vector<std::string> instruction_set_flags;
  // Why the set LOCKSTEP_MODEL_INSTRUCTION_SET names cannot be had here ("" when it can); load_model_file
  // refuses to compile a host engine with it.
  std::string instruction_set_refusal;
  // The SIMD lanes a host engine runs every method's members in (lockstep/engine/lanes_engine.hpp;
  // docs/SIMD.md):
  // 4 where it is compiled for avx2, 8 for avx512, by the compiler lockstep was built with; 0 for a
  // narrower set, another compiler, or LOCKSTEP_MODEL_LANES=0. The results are the same bits either way.
  // A model whose code does not compile on SIMD packs (a branch on a coordinate's value, a function
  // packs lack) gets an engine without lanes, and load_model_file says so.
  int lanes = 0;
  // g++'s optimization level for a host engine in place of the build's own (LOCKSTEP_MODEL_OPTIMIZATION,
  // docs/MODEL-FILES.md, "Optimization level"): "0", "1", "2", "3", "s" or "g"; "" keeps the build's
  // flags. The results are the same bits at every level; the engine compiles faster and runs slower.
  // optimization_refusal says why the variable's value cannot be used ("" when it can); load_model_file
  // refuses to compile with it.
  std::string optimization;
  std::string optimization_refusal;
};
toolchain default_toolchain();

// True when `argument` names a model file rather than a built-in model: it has a model file's
// extension, or a '/' in it.
bool looks_like_model_file(std::string_view argument);

struct model_request {
  std::filesystem::path source;  // the model file
  std::string name;              // which model of a header that defines several ("" = the only one)
  std::string shown = {};        // what progress lines call the file, where not its path
};

struct loaded_model {
  engine model;                  // loaded; lives as long as the program
  std::string key;               // the model's identity (SHA-256, hexadecimal: its preprocessed source, the
                                 // compiler, the flags; the same whatever parts the engine holds)
  std::filesystem::path library; // the engine library in the cache
  std::filesystem::path source;  // the model file, absolute
  bool compiled = false;         // false: found in the cache (all its parts and their link)
  double compile_seconds = 0.0;  // of this call's compiles and link (0 when cached)
  int lanes = 0;                 // the SIMD lanes its methods run in, or will run in where the engine
                                 // holds none of them (toolchain::lanes, or 0 where the model's code
                                 // does not compile on packs)
  std::filesystem::path header = {};  // the C++ header that defines the model: the file, or an
                                      // equations file's in the cache
  std::string type = {};              // the model's type, qualified (without a leading ::)
};

// What a model file's engine is compiled for (docs/MODEL-FILES.md, "What is compiled";
// host/engine/engine_sources.hpp): each method, its split path and each of its tangents a part of its
// own.
using lockstep::engine_contents;

struct compile_settings {
  toolchain tools = default_toolchain();
  // What the engine holds (the default: everything, as a built-in engine).
  engine_contents contents = engine_contents::everything();
  // Also compile the CUDA backend for the model (nvcc, its own cache entry): the engine can then run
  // --backend cuda. Throws model_file_error naming why not when the toolchain has no nvcc.
  bool device = false;
  // Told "compiling model NAME (FILE) ..." before a compile and "... done (N s)" after, and why an
  // engine runs without SIMD lanes where toolchain::lanes asked for them; not called when the engine is
  // in the cache.
  std::function<void(const std::string&)> progress;
};

// What to add to nvcc's messages when a model file's device engine failed to compile: where nvcc says a
// host function is called from device code (the model's functions are compiled for the device too, and
// one without LOCKSTEP_HD is host-only), a sentence saying how to mark them; "" otherwise.
std::string device_compile_hint(std::string_view nvcc_output);

// A build tree's own precompiled engine headers and object of lockstep's elementary functions
// (docs/MODEL-FILES.md, "What is compiled"), made for default_toolchain() in the build tree, where
// every model compiled with that toolchain finds them; those of earlier headers there are removed.
// Returns the headers' directory (empty where the compiler does not precompile them); throws in an
// installed lockstep, which makes them in the model cache.
std::filesystem::path precompile_engine_headers();

// The engine of the model file with settings.contents, compiled where the cache does not hold its parts
// (a device engine holds everything). Throws model_file_error (the file is missing, holds no such
// model, fails to compile, or is a malformed equations file).
loaded_model load_model_file(const model_request& request, const compile_settings& settings = {});

// The model a study adds event functions to ([events.functions], docs/how-to/events.md): a built-in
// model by name, or a model file.
struct study_events_request {
  const engine* builtin = nullptr;  // a built-in model's engine (find_builtin_engine), or none: the file below
  model_request file;
  std::string study_text;     // the study file's text, which holds [events.functions]
  std::string study_name;     // the study file as the user names it: messages and #line directives name it
};

// The engine of the model with the study's event functions after its own: a header that the equations
// generator writes into the cache (study_events/KEY/, equations/study_events.py), whose struct derives
// from the model, compiled with `settings` as any model file. The model's names (coordinates,
// parameters, constraint rows) come from its engine: a built-in one, or the model file's tables
// (compiled for them alone where the cache lacks them). Throws model_file_error where the event
// functions name what the model lacks or do not compile, each message at the study file's line.
loaded_model load_with_study_events(const study_events_request& request, const compile_settings& settings = {});

// What an equations or mechanism file says of its constraint rows, for `lockstep check`: a name for each
// row of Phi, then of A (an equations file's constraint names; a mechanism file's joint and condition per
// row), and a mechanism file's Grubler-Kutzbach count n - m (docs/reference/mechanism-file.md). Empty
// for a C++ header, whose rows have no names, and where the generator cannot say (it is not run on a
// file it refuses: compiling the model reports that).
struct model_file_rows {
  std::vector<std::string> names;
  std::optional<int> mobility_count;
  int drives = 0;  // rows that prescribe a coordinate as a function of t (a mechanism file's drives)
};
model_file_rows describe_model_file_rows(const std::filesystem::path& source, const toolchain& tools = default_toolchain());

}  // namespace lockstep::model_files
