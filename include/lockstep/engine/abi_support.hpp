// lockstep/engine/abi_support.hpp — what every engine function does at the C ABI: catch every
// exception and return it as a status and a message, check the header of a struct the caller built,
// and read the solver options passed by pointer and size. Used by model_engine.hpp and by the CUDA
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

inline const solver_options& options_of(const void* options, std::size_t size) {
  if (options == nullptr || size != sizeof(solver_options))
    throw std::invalid_argument("solver options of another size than this engine's (another lockstep build?)");
  return *static_cast<const solver_options*>(options);
}

}  // namespace engine_detail

}  // namespace lockstep
