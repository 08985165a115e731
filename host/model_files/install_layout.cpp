// host/model_files/install_layout.cpp — this_install_layout (install_layout.hpp).
#include "host/model_files/install_layout.hpp"

#include <system_error>

#include "host/core/loaded_object.hpp"

// Set by host/model_files/CMakeLists.txt: the layout's directories relative to a prefix, and the
// source tree a build tree uses.
#if !defined(LOCKSTEP_LAYOUT_BINDIR) || !defined(LOCKSTEP_LAYOUT_INCLUDEDIR) || !defined(LOCKSTEP_LAYOUT_DATADIR) || \
    !defined(LOCKSTEP_SOURCE_TREE)
#error "the install layout's directories are set by host/model_files/CMakeLists.txt"
#endif

namespace lockstep::model_files {

namespace fs = std::filesystem;

namespace {

fs::path data_dir(const fs::path& prefix) { return prefix / LOCKSTEP_LAYOUT_DATADIR / "lockstep"; }

install_layout compute_layout() {
  install_layout layout;
  if (const auto object = host::object_holding(reinterpret_cast<const void*>(&compute_layout)))
    layout.prefix = find_install_prefix(object->parent_path());
  if (layout.prefix) {
    layout.include_dir = *layout.prefix / LOCKSTEP_LAYOUT_INCLUDEDIR;
    layout.equations_script = data_dir(*layout.prefix) / "equations_to_header.py";
    layout.plot_script = data_dir(*layout.prefix) / "lockstep_plot.py";
    layout.kernels_dir = data_dir(*layout.prefix);
    layout.command = *layout.prefix / LOCKSTEP_LAYOUT_BINDIR / "lockstep";
  } else {
    const fs::path source = LOCKSTEP_SOURCE_TREE;
    layout.include_dir = source / "include";
    layout.equations_script = source / "host/model_files/equations_to_header.py";
    layout.plot_script = source / "host/cli/lockstep_plot.py";
    layout.kernels_dir = source;
  }
  return layout;
}

}  // namespace

std::optional<fs::path> find_install_prefix(const fs::path& directory) {
  std::error_code ec;
  fs::path candidate = directory;
  for (int level = 0; level <= 6 && !candidate.empty(); ++level) {
    if (fs::is_regular_file(candidate / LOCKSTEP_LAYOUT_INCLUDEDIR / "lockstep/version.hpp", ec) &&
        fs::is_regular_file(data_dir(candidate) / "equations_to_header.py", ec))
      return candidate;
    if (candidate == candidate.root_path()) break;
    candidate = candidate.parent_path();
  }
  return std::nullopt;
}

const install_layout& this_install_layout() {
  static const install_layout layout = compute_layout();
  return layout;
}

}  // namespace lockstep::model_files
