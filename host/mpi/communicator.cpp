// host/mpi/communicator.cpp — MPI_COMM_WORLD, or a world of one process when LOCKSTEP_HAVE_MPI is 0
// (communicator.hpp).
#include "host/mpi/communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#if LOCKSTEP_HAVE_MPI
#include <mpi.h>
#endif

namespace lockstep::mpi {

namespace {
#if LOCKSTEP_HAVE_MPI
bool session_active = false;

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}
// Pieces of at most 1 GiB: MPI counts are int.
constexpr std::size_t piece_bytes = std::size_t{1} << 30;
#endif
}  // namespace

bool built_with_mpi() { return LOCKSTEP_HAVE_MPI != 0; }

bool launched_by_mpi_launcher() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* value = std::getenv(variable); value && *value) return true;
  return false;
}

session::session([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#if LOCKSTEP_HAVE_MPI
  if (!launched_by_mpi_launcher()) return;
  int provided = 0;
  // Only the main thread calls MPI (the omp backend's workers never do).
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as return codes (check() turns them into exceptions) instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  active_ = session_active = true;
#endif
}

session::~session() {
#if LOCKSTEP_HAVE_MPI
  if (active_) MPI_Finalize();
  session_active = false;
#endif
}

communicator communicator::world() {
#if LOCKSTEP_HAVE_MPI
  if (session_active) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return communicator(rank, size, true);
  }
#endif
  return communicator(0, 1, false);
}

namespace {
// The reduction of `value` over all ranks with `op`, on every rank; `value` itself without MPI.
template <class T>
T reduce_over_ranks([[maybe_unused]] bool active, T value, [[maybe_unused]] const char* op_name) {
#if LOCKSTEP_HAVE_MPI
  if (active) {
    const MPI_Datatype type = std::is_same_v<T, int> ? MPI_INT : (std::is_same_v<T, long> ? MPI_LONG : MPI_DOUBLE);
    const MPI_Op op = std::string_view(op_name) == "max" ? MPI_MAX : MPI_SUM;
    T result = value;
    check(MPI_Allreduce(&value, &result, 1, type, op, MPI_COMM_WORLD), "MPI_Allreduce");
    return result;
  }
#endif
  return value;
}
}  // namespace

int communicator::max_over_ranks(int value) const { return reduce_over_ranks(active_, value, "max"); }
double communicator::max_over_ranks(double value) const { return reduce_over_ranks(active_, value, "max"); }
long communicator::sum_over_ranks(long value) const { return reduce_over_ranks(active_, value, "sum"); }

std::vector<std::string> communicator::gather_to_root(const std::string& bytes) const {
#if LOCKSTEP_HAVE_MPI
  if (active_ && size_ > 1) {
    const unsigned long long mine = bytes.size();
    std::vector<unsigned long long> sizes(rank_ == 0 ? static_cast<std::size_t>(size_) : 1);
    check(MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD),
          "MPI_Gather");
    if (rank_ != 0) {
      for (std::size_t at = 0; at < bytes.size(); at += piece_bytes) {
        const int n = static_cast<int>(std::min(piece_bytes, bytes.size() - at));
        check(MPI_Send(bytes.data() + at, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD), "MPI_Send");
      }
      return {};
    }
    std::vector<std::string> all(static_cast<std::size_t>(size_));
    all[0] = bytes;
    for (int r = 1; r < size_; ++r) {
      std::string& s = all[static_cast<std::size_t>(r)];
      s.resize(static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]));
      for (std::size_t at = 0; at < s.size(); at += piece_bytes) {
        const int n = static_cast<int>(std::min(piece_bytes, s.size() - at));
        check(MPI_Recv(s.data() + at, n, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      }
    }
    return all;
  }
#endif
  return {bytes};
}

void communicator::abort(int exit_code) const {
#if LOCKSTEP_HAVE_MPI
  if (active_) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

}  // namespace lockstep::mpi
