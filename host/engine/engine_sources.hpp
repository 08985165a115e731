// host/engine/engine_sources.hpp — the one generator of engine tables: the C++ source that builds a
// model's engine table (lockstep/engine/abi.h) from the pieces lockstep/engine/model_engine.hpp and
// lanes_engine.hpp define, for the built-in models (a unit per model, written at build time by
// make_engine_source, host/engine/CMakeLists.txt) and for model files (a unit per part, compiled and
// cached one by one, and a unit that links them: host/model_files/model_compiler.cpp, docs/MODEL-FILES.md
// "What is compiled").
//
// An engine is a list of parts, each one call on the table (the model's tables first; a method's chunk
// functions, its split path, each of its tangents; the methods in SIMD lanes last, whose advance
// replaces the one-member advance). The same list is written as one unit (whole_unit: a built-in
// engine, a model file's CUDA engine) or as a unit per part with a hook each and an entry unit that calls the hooks in
// the list's order (part_unit, entry_unit): the same calls in the same order, so the same table.
#pragma once

#include <string>
#include <vector>

#include "lockstep/engine/abi.h"
#include "lockstep/method/options.hpp"

namespace lockstep {

// What an engine holds (docs/MODEL-FILES.md, "What is compiled"). Each mask has bit (1 << method_kind)
// for a method. An engine always holds the model's tables and evaluations (describe, check's
// evaluations, initial states); each method adds its chunk functions, and on request its split path
// (run_options::split_factorization), the projection after its steps in SIMD lanes and each of its
// tangents: Lyapunov exponents by the discrete QR method, by the clone method, forward sensitivities. A
// model file compiles each as a part of its own, cached on its own, so a study compiles what it needs in
// a few seconds, and a later study with another method compiles that method alone.
struct engine_contents {
  unsigned methods = 0;         // begin, advance and finish of a chunk of members (in SIMD lanes too where
                                // the engine has them)
  unsigned split = 0;           // the split path, of methods also in `methods`
  unsigned projection = 0;      // the projection after steps (projects_after_steps) in SIMD lanes, of
                                // methods also in `methods`: one part for all of them
  unsigned lyapunov = 0;        // Lyapunov exponents by the discrete QR method
  unsigned lyapunov_clone = 0;  // the largest Lyapunov exponent by the clone method
  unsigned sensitivities = 0;   // forward sensitivities
  // Every method with its split path, projection and tangents: what a built-in engine holds.
  static engine_contents everything() { return {all(), all(), all(), all(), all(), all()}; }
  engine_contents& with_method(method_kind m) { methods |= bit(m); return *this; }
  engine_contents& with_split(method_kind m) { methods |= bit(m); split |= bit(m); return *this; }
  // The method, and where `projects` (projects_after_steps of the run's options) its projection.
  engine_contents& with_method(method_kind m, bool projects) {
    methods |= bit(m);
    if (projects) projection |= bit(m);
    return *this;
  }
  // Lyapunov exponents by `lyapunov_method`: 0, discrete QR; 1, clone (lockstep_lyapunov_request).
  engine_contents& with_lyapunov(method_kind m, int lyapunov_method) {
    (lyapunov_method == 1 ? lyapunov_clone : lyapunov) |= bit(m);
    return *this;
  }
  engine_contents& with_sensitivities(method_kind m) { sensitivities |= bit(m); return *this; }
  // Whether an engine compiled for `this` holds all of `other`.
  bool covers(const engine_contents& other) const {
    return (other.methods & ~methods) == 0 && (other.split & ~split) == 0 && (other.projection & ~projection) == 0 &&
           (other.lyapunov & ~lyapunov) == 0 && (other.lyapunov_clone & ~lyapunov_clone) == 0 &&
           (other.sensitivities & ~sensitivities) == 0;
  }
  engine_contents operator|(const engine_contents& o) const {
    return {methods | o.methods, split | o.split, projection | o.projection, lyapunov | o.lyapunov,
            lyapunov_clone | o.lyapunov_clone, sensitivities | o.sensitivities};
  }
  static constexpr unsigned bit(method_kind m) { return 1u << static_cast<int>(m); }
  static constexpr unsigned all() { return (1u << LOCKSTEP_METHOD_COUNT) - 1u; }
};

namespace engine_sources {

// What a part of an engine compiled in parts does with the functions its parts share, compiled once
// (lockstep/engine/one_member_instances.hpp and tangent_instances.hpp): the model's part uses none,
// "one member" and "tangents" compile their set, and every part but the model's declares the sets it
// calls and does not compile.
enum class shared_functions {
  none,
  compiles_one_member,
  compiles_tangents,  // and calls the one-member set
  calls_one_member,
  calls_both,  // a tangent part: the one-member set and the tangents'
};

// One part of an engine: one call on the table `*t`.
struct engine_part {
  std::string name;   // "model", "bdf", "bdf split path", "bdf lyapunov", "radau5 in SIMD lanes", ...
  std::string hook;   // its hook's name in a unit of its own: lockstep_part_model, lockstep_part_method_bdf, ...
  std::string call;   // the call
  // How long it compiles, relative to the others (measured on g++ 12 at -O3 for Andrews' squeezer, the
  // headers precompiled: the model's part 1.5 s of CPU, a method's 2.4 s (its begin and finish alone,
  // beside its lanes, 0.7 s), its QR tangents 2.4 s, the tangents' shared part 2.9 s, the lanes 2.8 s,
  // "one member" 4.0 s): a model file's parts start the longest first.
  int cost = 0;
  bool lanes = false;  // a method in lanes: a model whose code does not run on SIMD packs goes without it
  shared_functions shared = shared_functions::calls_one_member;
};

// Where a method runs in lanes, whether its part compiles the one-member advance too: a built-in engine
// does, for LOCKSTEP_LANES=0 to turn the lanes off at run time; a model file's engine, compiled for the
// run at hand, leaves the advance to the lanes' part (model_engine.hpp, add_method_around_lanes), which
// saves most of the method part's compile time.
enum class advance_beside_lanes { compiled, left_to_lanes };

// The parts of an engine of the model `type` (its C++ type) holding `wanted`, in the order their calls
// run (the model's tables first; the lanes of each method that runs in them, where `lanes` > 0, last,
// and where the advance is left to them and a method projects after steps, the projection in lanes).
// An engine with any method holds "one member", one with any tangents "tangents".
std::vector<engine_part> parts_of(const engine_contents& wanted, int lanes, const std::string& type,
                                  advance_beside_lanes advance = advance_beside_lanes::compiled);

// The unit of one part compiled on its own: it includes first_header(part), then `header` (the
// model's), and defines the part's hook, a hidden C function that makes the part's call. A lanes part
// refuses, at its first line of code, a model too large for the lanes (lanes_engine.hpp, fits_in_lanes).
std::string part_unit(const engine_part& part, const std::string& header, const std::string& type);

// The header a part's unit includes first, before the model's: lockstep/engine/model_engine.hpp, or
// lanes_engine.hpp (which includes it) for a method in lanes. A model file's compiler reads it
// precompiled.
std::string first_header(const engine_part& part);

// The unit that links separately compiled parts into an engine library: the C entry point
// (LOCKSTEP_ENGINE_ENTRY, docs/ENGINE-ABI.md) fills the table by calling each part's hook in order.
std::string entry_unit(const std::vector<engine_part>& parts, const std::string& type);

// An engine in one unit: lockstep/engine/model_engine.hpp (and lanes_engine.hpp where a part runs a
// method in lanes), `includes` (each an #include's name), `preamble` (code), then `entry` (the
// declaration of a function of no arguments that returns the table, without its body; in the
// namespace `within`, or in none), whose table is made by the parts' calls in order, then by `after` (lines of C++ on the
// table `*t`).
struct whole_engine {
  std::string comment;  // what the unit is, a line
  std::vector<std::string> includes;
  std::string preamble;
  std::vector<engine_part> parts;
  std::vector<std::string> after;
  std::string within;
  std::string entry;
};
std::string whole_unit(const whole_engine& engine);

// The C entry point's declaration, as whole_unit's `entry` of an engine library.
std::string library_entry();

}  // namespace engine_sources
}  // namespace lockstep
