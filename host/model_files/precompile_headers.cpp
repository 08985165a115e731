// host/model_files/precompile_headers.cpp — lockstep_precompile_headers: a build step that precompiles
// lockstep's engine headers for the build tree's own toolchain (model_files::precompile_engine_headers),
// so that the first model file a user compiles reads them precompiled too.
#include <cstdio>
#include <exception>

#include "host/model_files/model_compiler.hpp"

int main() {
  try {
    const std::filesystem::path made = lockstep::model_files::precompile_engine_headers();
    std::printf("%s\n", made.empty() ? "lockstep_precompile_headers: the compiler does not precompile headers"
                                     : made.string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockstep_precompile_headers: %s\n", e.what());
    return 1;
  }
}
