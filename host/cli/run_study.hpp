// host/cli/run_study.hpp — `lockstep run`: one checked study, solved for one built-in model, its results
// written to OUT_DIR (results.h5, members.csv, the study file).
//
// run_study<Model> is defined in run_study_impl.hpp and instantiated once per built-in model, each in
// its own translation unit (CMake generates them from the model list), so the models compile in
// parallel and lockstep.cpp instantiates none.
#pragma once

#include <filesystem>
#include <string>

#include "host/io/study_file.hpp"
#include "host/scheduler/scheduler.hpp"

namespace lockstep::cli {

struct run_settings {
  std::filesystem::path out_dir;  // created if missing; removed again on failure if it was created
  backend where = backend::omp;
  int threads = 0;         // omp: 0 = OpenMP's default
  long chunk_size = 0;     // 0: from the memory budget
  bool quiet = false;      // only errors on stderr
  bool progress = false;   // a progress bar on stderr (when stderr is a terminal and not quiet)
};

// Exit codes of `lockstep run` (issue 6; issue 9 adds 3 for output failures).
inline constexpr int exit_success = 0;         // every member succeeded
inline constexpr int exit_members_failed = 1;  // some member failed; all results written
inline constexpr int exit_bad_input = 2;       // bad study file or command line; nothing written
inline constexpr int exit_output_failed = 3;   // results could not be written; nothing left half-written

// Solves the study and writes its results; returns one of the exit codes above. Throws
// io::study_error for a study the model or backend refuses (exit 2), io::io_error when writing fails.
template <class Model>
int run_study(const io::study_spec& spec, const run_settings& settings);

}  // namespace lockstep::cli
