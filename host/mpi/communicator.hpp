// host/mpi/communicator.hpp — the little of MPI that `lockstep run` needs, behind an interface
// that also exists, as a single process, in builds without MPI.
//
// MPI is started only when the process was launched by an MPI launcher (mpirun, mpiexec, srun: they
// set OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK). A plain `lockstep run` therefore never initializes
// MPI — it runs exactly as in a build without MPI, and needs no MPI runtime (OpenMPI's singleton mode
// would start a helper daemon) — and `mpirun -np 1 lockstep run` is a world of one rank.
//
// Every collective here is also a barrier. A rank that fails must still reach the next collective
// (run_study catches, reports, and passes its exit code to max_over_ranks), or the others wait forever.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::mpi {

// Whether this program was built with MPI (CMake option LOCKSTEP_MPI).
bool built_with_mpi();

// Whether the environment says an MPI launcher started this process.
bool launched_by_mpi_launcher();

// MPI_Init for its lifetime when built with MPI and launched by a launcher; otherwise nothing.
class session {
 public:
  session(int& argc, char**& argv);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

// MPI_COMM_WORLD while a session is active; a world of one rank otherwise.
class communicator {
 public:
  static communicator world();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The largest value over all ranks, on every rank (MPI_Allreduce with MPI_MAX).
  int max_over_ranks(int value) const;
  double max_over_ranks(double value) const;
  // The sum over all ranks, on every rank.
  long sum_over_ranks(long value) const;

  // Rank 0 receives every rank's bytes in rank order (its own first); the other ranks get an empty
  // vector. Sizes beyond MPI's int counts are sent in pieces.
  std::vector<std::string> gather_to_root(const std::string& bytes) const;

  // Ends every rank at once (MPI_Abort), for failures that leave no way to reach a collective.
  [[noreturn]] void abort(int exit_code) const;

 private:
  communicator(int rank, int size, bool active) : rank_(rank), size_(size), active_(active) {}
  int rank_ = 0;
  int size_ = 1;
  bool active_ = false;
};

}  // namespace lockstep::mpi
