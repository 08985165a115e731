// host/core/loaded_object.cpp — object_holding (loaded_object.hpp).
#include "host/core/loaded_object.hpp"

#include <dlfcn.h>

#include <system_error>

namespace lockstep::host {

std::optional<std::filesystem::path> object_holding(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return std::nullopt;
  std::error_code ec;
  // A program started by a relative path is reported by that path: /proc/self/exe names it.
  std::filesystem::path object =
      info.dli_fname[0] == '/' ? std::filesystem::path(info.dli_fname) : std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  object = std::filesystem::weakly_canonical(object, ec);
  if (ec) return std::nullopt;
  return object;
}

}  // namespace lockstep::host
