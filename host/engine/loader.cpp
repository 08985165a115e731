// host/engine/loader.cpp — load_engine_library (lockstep/engine/loader.hpp).
#include "lockstep/engine/loader.hpp"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "lockstep/version.hpp"

namespace lockstep {

engine load_engine_library(const std::filesystem::path& library) {
  // One table per library path, for the program's lifetime (libraries are never closed).
  static std::mutex mutex;
  static std::map<std::string, const lockstep_engine*> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(library, ec).string();
  if (auto it = loaded.find(key); it != loaded.end()) return engine(it->second);

  auto fail = [&](const std::string& why) -> engine {
    throw std::invalid_argument("cannot load the engine library '" + library.string() + "': " + why);
  };
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(why != nullptr ? why : "dlopen failed");
  }
  dlerror();
  void* symbol = dlsym(handle, LOCKSTEP_ENGINE_ENTRY_POINT);
  if (symbol == nullptr)
    return fail(std::string("no entry point ") + LOCKSTEP_ENGINE_ENTRY_POINT +
                " (not an engine library, or one built for another engine ABI version than " +
                std::to_string(LOCKSTEP_ENGINE_ABI_VERSION) + ")");
  lockstep_engine_entry entry = nullptr;
  static_assert(sizeof entry == sizeof symbol);
  std::memcpy(&entry, &symbol, sizeof entry);
  const lockstep_engine* table = entry();
  if (table == nullptr) return fail("its entry point returned no table");
  if (table->header.abi_version == LOCKSTEP_ENGINE_ABI_VERSION &&
      (table->header.build_id == nullptr || std::strcmp(table->header.build_id, LOCKSTEP_BUILD_ID) != 0))
    return fail(std::string("it was built by '") + (table->header.build_id ? table->header.build_id : "?") +
                "', this program is '" + LOCKSTEP_BUILD_ID + "': rebuild it");
  try {
    engine e(table);  // checks the ABI version and size
    loaded.emplace(key, table);
    return e;
  } catch (const std::invalid_argument& refused) {
    return fail(refused.what());
  }
}

}  // namespace lockstep
