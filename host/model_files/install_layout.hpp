// host/model_files/install_layout.hpp — where a lockstep finds the files it uses besides its own code:
// its public headers (model files compile against them), the equations generator, the plot script and
// the `lockstep` command (which the Python module's run_study starts).
//
// An installed lockstep looks for them relative to itself, never where it was configured to go: the
// same files serve `cmake --install` to any prefix (or DESTDIR), and a wheel (`pip install .`), whose
// prefix is the environment's root with the Python package in site-packages below it. The prefix is
// the nearest directory above the object holding this code (the program, or the Python module) with
// the installed headers and generator in it:
//
//     PREFIX/bin/lockstep                                the command
//     PREFIX/include/lockstep/...                        the headers
//     PREFIX/share/lockstep/equations_to_header.py       the equations generator (and equations/)
//     PREFIX/share/lockstep/lockstep_plot.py             the plot script
//     PREFIX/share/lockstep/kernels/cuda/...             the CUDA kernels' headers (a build with CUDA),
//                                                        which a model file's device engine includes
//     PREFIX/lib/python3.X/site-packages/lockstep/       the Python package (dist-packages on Debian)
//
// A build tree is not installed: it uses the source tree it was configured from.
#pragma once

#include <filesystem>
#include <optional>

namespace lockstep::model_files {

struct install_layout {
  // The install prefix of the running lockstep; empty in a build tree.
  std::optional<std::filesystem::path> prefix;
  std::filesystem::path include_dir;       // -I for model engines
  std::filesystem::path equations_script;  // equations_to_header.py
  std::filesystem::path plot_script;       // lockstep_plot.py
  // The directory holding kernels/cuda, the CUDA kernels' headers a model file's device engine includes
  // (-I for nvcc): PREFIX/share/lockstep installed, the source tree in a build tree.
  std::filesystem::path kernels_dir;
  // The `lockstep` command of an installation (PREFIX/bin/lockstep); empty in a build tree, whose
  // command the caller knows from its own build.
  std::filesystem::path command;
};

// The layout of the lockstep this code belongs to (computed once).
const install_layout& this_install_layout();

// The installed prefix at or above `directory` (at most six levels up), if there is one: the directory
// whose include/lockstep/version.hpp and share/lockstep/equations_to_header.py exist.
std::optional<std::filesystem::path> find_install_prefix(const std::filesystem::path& directory);

}  // namespace lockstep::model_files
