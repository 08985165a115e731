// lockstep/engine/builtin.hpp — the built-in models as engines (the lockstep::builtin_models library).
//
// Each built-in model (lockstep/model/registry.hpp) is compiled once into this library as an engine,
// through the same table (lockstep/engine/model_engine.hpp) as an engine library loaded at run time, so
// every test of a built-in model exercises the boundary. Where the CUDA backend is built for a model
// (lockstep/detail/device_models.hpp), its engine can also solve on the device.
#pragma once

#include <span>
#include <string_view>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

// Every built-in engine, in the registry's order.
std::span<const engine> builtin_engines();

// The built-in engine called `name`, or nullptr.
const engine* find_builtin_engine(std::string_view name);

// The SIMD lanes the built-in engines run every method's members in (lockstep/engine/lanes_engine.hpp):
// the vector width of the build's instruction set in a build for avx2 or avx512, unless
// LOCKSTEP_LANES=0; 0 where they run one member at a time.
// The results are the same either way.
int builtin_lanes();

// The SIMD lanes the built-in engine called `model` runs members in: builtin_lanes(), or 0
// for a model too large for them (lockstep/engine/lanes_engine.hpp, fits_in_lanes) or no such model.
int builtin_lanes(std::string_view model);

}  // namespace lockstep
