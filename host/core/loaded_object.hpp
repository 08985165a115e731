// host/core/loaded_object.hpp — the file a piece of code was loaded from: the program, or the shared
// object (the Python module) that holds it; not the running executable, which for the module is the
// interpreter. What an installation finds its other files relative to (host/model_files/install_layout.cpp,
// host/engine/builtin_engines.cpp).
#pragma once

#include <filesystem>
#include <optional>

namespace lockstep::host {

// The canonical path of the object holding the code at `address` (a function of it); none where the
// dynamic loader cannot say.
std::optional<std::filesystem::path> object_holding(const void* address);

}  // namespace lockstep::host
