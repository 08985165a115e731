// host/cli/reference.hpp — `lockstep reference WHAT`: the references of the documentation site, printed
// from the tables the program itself reads, so that the site cannot list a key, an option or an
// object the program does not know, nor miss one it does (docs/reference/, scripts/docs.sh):
//
//   study-file     every key of a study file (host/io/study_file_keys.hpp, the table the reader
//                  takes its keys from)
//   cli            every command and option (the command line's own parser, walked)
//   results-file   every group, dataset and attribute of results.h5 (host/io/results_file_layout.hpp,
//                  checked against written files by tests/io/results_file_layout_check.py)
//
// Each is MyST Markdown: a page includes it as it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace lockstep::cli {

// The names `lockstep reference` accepts, in the order of its help.
inline const std::vector<std::string> reference_names = {"study-file", "cli", "results-file"};

std::string study_file_reference();
std::string cli_reference(const CLI::App& app);
std::string results_file_reference();

}  // namespace lockstep::cli
