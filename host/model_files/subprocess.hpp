// host/model_files/subprocess.hpp — running the compiler and the equations generator as child processes.
#pragma once

#include <string>
#include <vector>

namespace lockstep::model_files {

struct process_result {
  int exit_code = -1;    // the child's exit status; 128 + N when it was killed by signal N
  std::string output;    // what it wrote on stdout (or, with merge_stderr, on both)
  std::string errors;    // what it wrote on stderr (empty with merge_stderr)
};

// Runs argv[0] (searched on PATH when it has no '/') with the given arguments and standard input, and
// waits for it. Both output streams are read while the child runs, so a chatty compiler never blocks
// on a full pipe. Throws std::runtime_error when the program cannot be started at all.
process_result run_process(const std::vector<std::string>& argv, const std::string& input = {},
                           bool merge_stderr = false);

// The command line as a shell would show it, for messages ("c++ -std=c++20 ...").
std::string command_line(const std::vector<std::string>& argv);

}  // namespace lockstep::model_files
