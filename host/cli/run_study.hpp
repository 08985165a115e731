// host/cli/run_study.hpp — `lockstep run`: one checked study, solved for one model's engine, its
// results written to OUT_DIR (results.h5, members.csv, the study file).
//
// run_study is defined in run_study_impl.hpp (checkpointed, resumed and MPI runs in
// run_study_journaled.hpp), compiled once in run_study.cpp: it knows the model only through its engine.
#pragma once

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/io/output_file.hpp"
#include "host/io/study_file.hpp"
#include "host/mpi/communicator.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/study/statistics.hpp"

namespace lockstep::cli {

struct run_settings {
  std::filesystem::path out_dir;  // created if missing; removed again on failure if it was created
  backend where = backend::omp;
  int threads = 0;         // omp: 0 = omp::default_threads() (OMP_NUM_THREADS, else the CPUs we may use)
  long chunk_size = 0;     // 0: from the memory budget
  bool quiet = false;      // only errors on stderr
  bool progress = false;   // a progress bar on stderr (when stderr is a terminal and not quiet)

  // Checkpoints and MPI. checkpoint_every > 0: write OUT_DIR/checkpoint (and its journal) at least every that many
  // seconds, and on SIGINT/SIGTERM. resume: continue the run this checkpoint describes (out_dir is
  // its directory; the study is the checkpoint's copy). Under mpirun the members are split across
  // the ranks (host/mpi). Without any of these, run_study runs exactly as without them.
  double checkpoint_every = 0.0;
  const checkpoint::checkpoint_state* resume = nullptr;
};

// Exit codes of `lockstep run` (3 for output failures).
inline constexpr int exit_success = 0;         // every member succeeded
inline constexpr int exit_members_failed = 1;  // some member failed; all results written
inline constexpr int exit_bad_input = 2;       // bad study file, command line or checkpoint; nothing written
inline constexpr int exit_output_failed = 3;   // results could not be written; nothing left half-written
// A checkpointed run stopped by SIGINT or SIGTERM exits with 128 + the signal's number (130, 143), the
// shell's convention for "ended by a signal", after writing its checkpoint.
inline constexpr int exit_interrupted_base = 128;

// "lockstep: error: " then `who` and `message` on stderr. The library's own messages start with
// "lockstep: " already; it is said once.
inline void print_error(std::string_view who, std::string_view message) {
  if (message.starts_with("lockstep: ")) message.remove_prefix(10);
  std::fprintf(stderr, "lockstep: error: %.*s%.*s\n", static_cast<int>(who.size()), who.data(),
               static_cast<int>(message.size()), message.data());
}

// Reports the exception being handled (call inside a catch block) on stderr as `lockstep run` does and
// returns its exit code: study_error as its own diagnostic (2); a damaged or unusable checkpoint (2);
// the library refusing the ensemble or backend (2); io_error (3); anything else "unexpected" (3).
// Under MPI a rank other than 0 names itself, and stays silent for study errors, which every rank
// finds alike.
inline int report_current_exception(const mpi::communicator& comm = mpi::communicator::world()) {
  const std::string who = comm.size() > 1 ? "rank " + std::to_string(comm.rank()) + ": " : "";
  auto say = [&](const std::string& message, int code) {
    print_error(who, message);
    return code;
  };
  try {
    throw;
  } catch (const io::study_error& e) {
    if (comm.rank() == 0) std::fprintf(stderr, "%s\n", e.what());
    return exit_bad_input;
  } catch (const checkpoint::checkpoint_error& e) {
    return say(e.what(), exit_bad_input);
  } catch (const io::io_error& e) {
    return say(e.what(), exit_output_failed);
  } catch (const std::invalid_argument& e) {  // the library refuses the ensemble or backend
    return say(e.what(), exit_bad_input);
  } catch (const std::exception& e) {
    return say(std::string("unexpected failure: ") + e.what(), exit_output_failed);
  }
}

// Solves the study and writes its results; returns one of the exit codes above. Throws
// io::study_error for a study the model or backend refuses (exit 2), io::io_error when writing fails.
int run_study(const engine& model, const io::study_spec& spec, const run_settings& settings);

}  // namespace lockstep::cli
