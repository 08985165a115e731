// host/engine/make_engine_source.cpp — writes the translation unit of a built-in model's engine at build
// time (host/engine/CMakeLists.txt), with the generator that writes a model file's
// (host/engine/engine_sources.hpp): every method with its split path and tangents, the methods in SIMD
// lanes in a build for avx2 or avx512, and the device solve where the CUDA backend is built.
//
//   make_engine_source OUTPUT STEM TYPE LANES DEVICE
//
// STEM names the engine's function (lockstep::builtin::engine_STEM, builtin_engines.cpp), TYPE is the
// model's C++ type, LANES and DEVICE are 0 or 1. OUTPUT is rewritten only when its text changes, so
// that a reconfigure does not recompile the engines.
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
  const bool lanes = std::string(argv[4]) == "1", device = std::string(argv[5]) == "1";
  using namespace lockstep::engine_sources;
  whole_engine engine;
  engine.comment = "The engine of the built-in model " + type + ", written by make_engine_source (host/engine/"
                   "engine_sources.hpp) in its own translation unit, so that the models compile in parallel.";
  engine.includes = {"lockstep/model/registry.hpp"};
  engine.parts = parts_of(lockstep::engine_contents::everything(), lanes ? 1 : 0, type);
  if (device) {
    engine.includes.push_back("kernels/cuda/device_solve.hpp");
    engine.after = {"if constexpr (lockstep::cuda::built_for<::" + type + ">) {",
                    "  t->solve_on_device = &lockstep::cuda::solve_on_device<::" + type + ">;",
                    "  t->device_built = 1;", "}"};
  }
  engine.within = "lockstep::builtin";
  engine.entry = "const lockstep_engine* engine_" + stem + "()";
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
