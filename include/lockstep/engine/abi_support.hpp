// lockstep/engine/abi_support.hpp — what every engine function does at the C ABI: catch every
// exception and return it as a status and a message, check the header of a struct the caller built,
// and convert the solver options to and from their C struct. Used by model_engine.hpp and by the CUDA
// backend's device solve (kernels/cuda), which must not pull in the host drivers.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "lockstep/engine/abi.h"
#include "lockstep/method/options.hpp"
#include "lockstep/version.hpp"

namespace lockstep {

// The header of an ABI struct T as this build fills it in.
template <class T>
constexpr lockstep_abi_header abi_header_for() {
  return {LOCKSTEP_ENGINE_ABI_VERSION, static_cast<std::uint32_t>(sizeof(T)), LOCKSTEP_BUILD_ID};
}

namespace engine_detail {

// Whether LOCKSTEP_ENGINE_ENTRY_POINT is "lockstep_engine_v" followed by LOCKSTEP_ENGINE_ABI_VERSION.
constexpr bool entry_point_names_abi_version() {
  constexpr const char* name = LOCKSTEP_ENGINE_ENTRY_POINT;
  constexpr const char* prefix = "lockstep_engine_v";
  int i = 0;
  for (; prefix[i] != '\0'; ++i)
    if (name[i] != prefix[i]) return false;
  unsigned long long version = 0;
  if (name[i] == '\0') return false;
  for (; name[i] != '\0'; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    version = version * 10 + static_cast<unsigned long long>(name[i] - '0');
  }
  return version == LOCKSTEP_ENGINE_ABI_VERSION;
}
static_assert(entry_point_names_abi_version(),
              "LOCKSTEP_ENGINE_ENTRY_POINT must name LOCKSTEP_ENGINE_ABI_VERSION (lockstep/engine/abi.h)");

inline void set_message(lockstep_error* error, const char* text) {
  if (error == nullptr) return;
  std::snprintf(error->message, sizeof error->message, "%s", text);
}

// f() inside a net that turns every exception into a status and a message.
template <class F>
lockstep_result guarded(lockstep_error* error, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_message(error, "out of memory");
    return LOCKSTEP_OUT_OF_MEMORY;
  } catch (const std::invalid_argument& e) {
    set_message(error, e.what());
    return LOCKSTEP_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    set_message(error, e.what());
    return LOCKSTEP_INTERNAL_ERROR;
  } catch (...) {
    set_message(error, "unknown exception inside the engine");
    return LOCKSTEP_INTERNAL_ERROR;
  }
}


// The caller's struct was built against this ABI (version and size), or std::invalid_argument.
template <class T>
void check_header(const T* s, const char* what) {
  if (s == nullptr) throw std::invalid_argument(std::string(what) + " is null");
  if (s->header.abi_version != LOCKSTEP_ENGINE_ABI_VERSION || s->header.struct_size != sizeof(T))
    throw std::invalid_argument(std::string(what) + " comes from another engine ABI (version " +
                                std::to_string(s->header.abi_version) + ", " + std::to_string(s->header.struct_size) +
                                " bytes; this engine: version " + std::to_string(LOCKSTEP_ENGINE_ABI_VERSION) + ", " +
                                std::to_string(sizeof(T)) + " bytes)");
}

// An enum's value as the C struct carries it, refused (std::invalid_argument naming the field) outside
// [0, last].
template <class Enum>
Enum enum_of(int value, Enum last, const char* field) {
  if (value < 0 || value > static_cast<int>(last))
    throw std::invalid_argument(std::string("solver options: ") + field + " = " + std::to_string(value) +
                                " is not a value this engine knows (0 to " + std::to_string(static_cast<int>(last)) + ")");
  return static_cast<Enum>(value);
}

// The solver options a caller passed (header checked, each enum in its range), or std::invalid_argument.
inline solver_options options_of(const lockstep_solver_options* options) {
  check_header(options, "the solver options struct");
  const lockstep_solver_options& c = *options;
  solver_options o;
  o.method = enum_of(c.method, method_kind::tsit5, "method");
  o.form = enum_of(c.formulation, formulation::projected_invariants, "formulation");
  o.rtol = c.rtol;
  o.atol_q = c.atol_q;
  o.atol_v = c.atol_v;
  o.atol_lambda = c.atol_lambda;
  o.h_initial = c.h_initial;
  o.h_min = c.h_min;
  o.h_max = c.h_max;
  o.max_steps = c.max_steps;
  o.max_order = c.max_order;
  o.fixed_h = c.fixed_h;
  o.fixed_order = c.fixed_order;
  o.rho_inf = c.rho_inf;
  o.newton_tol = c.newton_tol;
  o.newton_max_iterations = c.newton_max_iterations;
  if (c.consistent_multipliers != 0 && c.consistent_multipliers != 1)
    throw std::invalid_argument("solver options: consistent_multipliers = " + std::to_string(c.consistent_multipliers) +
                                " is neither 0 nor 1");
  o.consistent_multipliers = c.consistent_multipliers == 1;
  o.multipliers = enum_of(c.multipliers, multiplier_convention::minimum_norm, "multipliers");
  o.init = enum_of(c.init, init_mode::automatic, "init");
  o.metric = enum_of(c.metric, projection_metric::euclidean, "metric");
  o.init_tolerance = c.init_tolerance;
  o.projection = enum_of(c.projection, projection_kind::post_stabilization, "projection");
  o.baumgarte_alpha = c.baumgarte_alpha;
  o.baumgarte_beta = c.baumgarte_beta;
  if (!(c.event_time_tolerance >= 0.0))
    throw std::invalid_argument("solver options: event_time_tolerance = " + std::to_string(c.event_time_tolerance) +
                                " is not >= 0");
  o.event_time_tolerance = c.event_time_tolerance;
  if (c.event_interior_checks < 0)
    throw std::invalid_argument("solver options: event_interior_checks = " + std::to_string(c.event_interior_checks) +
                                " is negative");
  o.event_interior_checks = c.event_interior_checks;
  return o;
}

}  // namespace engine_detail

// The C struct of options o, as a host passes them to an engine (engine_detail::options_of reads them
// back: the same options, field for field).
inline lockstep_solver_options abi_options(const solver_options& o) {
  lockstep_solver_options c{};
  c.header = abi_header_for<lockstep_solver_options>();
  c.method = static_cast<int>(o.method);
  c.formulation = static_cast<int>(o.form);
  c.rtol = o.rtol;
  c.atol_q = o.atol_q;
  c.atol_v = o.atol_v;
  c.atol_lambda = o.atol_lambda;
  c.h_initial = o.h_initial;
  c.h_min = o.h_min;
  c.h_max = o.h_max;
  c.max_steps = o.max_steps;
  c.max_order = o.max_order;
  c.fixed_h = o.fixed_h;
  c.fixed_order = o.fixed_order;
  c.rho_inf = o.rho_inf;
  c.newton_tol = o.newton_tol;
  c.newton_max_iterations = o.newton_max_iterations;
  c.consistent_multipliers = o.consistent_multipliers ? 1 : 0;
  c.multipliers = static_cast<int>(o.multipliers);
  c.init = static_cast<int>(o.init);
  c.metric = static_cast<int>(o.metric);
  c.init_tolerance = o.init_tolerance;
  c.projection = static_cast<int>(o.projection);
  c.baumgarte_alpha = o.baumgarte_alpha;
  c.baumgarte_beta = o.baumgarte_beta;
  c.event_time_tolerance = o.event_time_tolerance;
  c.event_interior_checks = o.event_interior_checks;
  return c;
}

// A tripwire for a field added to solver_options without its place in the C struct: it changes the
// struct's size unless it fits into padding (the round-trip test, tests/engine, sets every field it
// knows). On a change, update both conversions above, the struct in abi.h and
// LOCKSTEP_ENGINE_ABI_VERSION, then this size.
static_assert(sizeof(solver_options) == 184, "solver_options changed: carry the change through lockstep_solver_options");

}  // namespace lockstep
