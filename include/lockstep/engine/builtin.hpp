// lockstep/engine/builtin.hpp — the built-in models as engines (the lockstep::builtin_models library).
//
// Each built-in model (lockstep/model/registry.hpp) is compiled once into this library as an engine,
// through the same table (lockstep/engine/model_engine.hpp) as an engine library loaded at run time, so
// every test of a built-in model exercises the boundary. Where the CUDA backend is built for a model
// (lockstep/detail/device_models.hpp), its engine can also solve on the device.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

// Every built-in engine, in the registry's order.
std::span<const engine> builtin_engines();

// The built-in engine called `name`, or nullptr.
const engine* find_builtin_engine(std::string_view name);

// How the built-in engines advance their members on the host (docs/SIMD.md, "The built-in models in
// the lanes of the CPU at hand"): in the SIMD lanes of the widest instruction set the CPU has, from
// engine libraries a default build makes for avx2 and avx512 (or, in a build for avx2 or avx512, in
// that set's lanes compiled in); otherwise one member at a time. LOCKSTEP_LANES=0 turns the lanes off,
// LOCKSTEP_BUILTIN_INSTRUCTION_SET names a set ("auto", the build's own, or a library's). The results
// are the same bits either way. Decided at the first use of a built-in engine; an impossible request
// (an unknown set, one the CPU lacks, libraries that do not load) is std::invalid_argument there.
struct builtin_lanes_choice {
  std::string instruction_set;  // of the code that advances the members
  int lanes = 0;                // members per SIMD pack (4 for avx2, 8 for avx512); 0: one at a time
  std::string libraries;        // the directory of the libraries of lanes in use; empty if none is
  std::string why_none;         // with lanes == 0: why the members run one at a time
};
const builtin_lanes_choice& builtin_lanes_in_use();

// builtin_lanes_in_use().lanes.
int builtin_lanes();

// The SIMD lanes the built-in engine called `model` runs members in: builtin_lanes(), or 0
// for a model too large for them (lockstep/engine/lanes_engine.hpp, fits_in_lanes) or no such model.
int builtin_lanes(std::string_view model);

}  // namespace lockstep
