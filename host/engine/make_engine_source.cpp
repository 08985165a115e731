// host/engine/make_engine_source.cpp — writes the translation unit of a built-in model's engine at build
// time (host/engine/CMakeLists.txt), with the generator that writes a model file's
// (host/engine/engine_sources.hpp): every method with its split path and tangents, the methods in SIMD
// lanes in a build for avx2 or avx512, and the device solve where the CUDA backend is built; or the
// unit of a built-in model's lanes library for a wider instruction set than the build's
// (builtin_engines.cpp, docs/SIMD.md "The built-in models in lanes of the CPU at hand").
//
//   make_engine_source OUTPUT STEM TYPE LANES DEVICE
//
// STEM names the engine's function (lockstep::builtin::engine_STEM, builtin_engines.cpp), TYPE is the
// model's C++ type, DEVICE is 0 or 1, LANES is 0 or 1 (the methods in the lanes of the build's own
// instruction set) or `library`: an engine library (the C entry point, LOCKSTEP_ENGINE_ENTRY) of every
// method's chunk functions in lanes and nothing else, which the program loads where the CPU has the
// library's instruction set and takes those functions from. OUTPUT is rewritten only when its text
// changes, so that a reconfigure does not recompile the engines.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "host/engine/engine_sources.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: make_engine_source OUTPUT STEM TYPE LANES DEVICE\n");
    return 2;
  }
  const std::string output = argv[1], stem = argv[2], type = argv[3];
  const std::string lanes_argument = argv[4];
  const bool library = lanes_argument == "library", lanes = library || lanes_argument == "1",
             device = std::string(argv[5]) == "1";
  using namespace lockstep::engine_sources;
  whole_engine engine;
  engine.includes = {"lockstep/model/registry.hpp"};
  if (library) {
    // The lanes' advance replaces the one-member advance, which the library need not compile.
    engine.comment = "The chunk functions of the built-in model " + type + " in SIMD lanes, an engine library "
                     "written by make_engine_source (host/engine/engine_sources.hpp).";
    lockstep::engine_contents methods;
    methods.methods = lockstep::engine_contents::all();
    engine.parts = parts_of(methods, 1, type, advance_beside_lanes::left_to_lanes);
    engine.entry = library_entry();
  } else {
    engine.comment = "The engine of the built-in model " + type + ", written by make_engine_source (host/engine/"
                     "engine_sources.hpp) in its own translation unit, so that the models compile in parallel.";
    engine.parts = parts_of(lockstep::engine_contents::everything(), lanes ? 1 : 0, type);
    engine.within = "lockstep::builtin";
    engine.entry = "const lockstep_engine* engine_" + stem + "()";
  }
  if (device && !library) {
    engine.includes.push_back("kernels/cuda/device_solve.hpp");
    engine.after = {"if constexpr (lockstep::cuda::built_for<::" + type + ">) {",
                    "  t->solve_on_device = &lockstep::cuda::solve_on_device<::" + type + ">;",
                    "  t->device_built = 1;", "}"};
  }
  const std::string text = whole_unit(engine);
  std::ostringstream current;
  if (std::ifstream in(output); in) current << in.rdbuf();
  if (current.str() == text) return 0;
  std::ofstream out(output, std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "make_engine_source: cannot write %s\n", output.c_str());
    return 1;
  }
  return 0;
}
