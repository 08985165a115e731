// host/io/output_file.hpp — what every results writer shares: the error it throws, a file that
// becomes visible under its final name only when it is complete, and a fault-injection seam that
// simulates a full disk in tests.
//
// Output safety. A writer never writes to its final path. It creates a new temporary file
// beside it (same directory, so the final rename(2) cannot cross file systems and is atomic), writes,
// fsyncs, renames it over the final path and fsyncs the directory. A reader therefore sees either the
// previous file or the complete new one; a run that fails or is abandoned leaves no file under the
// final name (and its temporary is removed). Temporaries are named "<final>.partial-<pid>[-<n>]" and
// created with O_EXCL, so two writers never share one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockstep::io {

// A results file could not be created, written or committed. what() names the final path (and the
// temporary when the failure happened there) and the reason the system or HDF5 gave, e.g.
//   cannot write results file '/out/results.h5' (temporary '/out/results.h5.partial-4711'): No space left on device
struct io_error : std::runtime_error {
  io_error(std::filesystem::path path, int system_error, const std::string& message)
      : std::runtime_error(message), path(std::move(path)), system_error(system_error) {}
  std::filesystem::path path;  // the final path of the file that failed
  int system_error = 0;        // errno when the system reported one (ENOSPC, ENOENT, ...), else 0
};

// ---- fault injection -------------------------------------------------------------------------------
// A process-wide budget of bytes that the results writers may still hand to the file system. While
// the budget is set, every write charges its size first; the first write that would exceed it fails
// exactly as a full disk fails (io_error with system_error = ENOSPC, "No space left on device
// (injected)"), and so does every later write until the budget is reset. What is counted is the data
// a writer passes down (array bytes of each HDF5 dataset or attribute write, bytes of CSV text), not
// the bytes HDF5 finally puts on disk, so a given budget fails the same write on every machine.
//
// The budget starts from the environment variable LOCKSTEP_IO_FAIL_AFTER_BYTES (a non-negative integer;
// unset or empty: no limit), so a whole `lockstep run` can be made to fail from a shell; tests set it
// with scoped_write_failure. New writers (checkpoints, MPI shards) call charge_write before each write.
namespace fault_injection {
void fail_after_bytes(std::int64_t bytes);  // negative: no limit
std::int64_t remaining_bytes();             // negative: no limit

// Sets the budget for its lifetime and restores the previous one.
class scoped_write_failure {
 public:
  explicit scoped_write_failure(std::int64_t bytes) : previous_(remaining_bytes()) { fail_after_bytes(bytes); }
  ~scoped_write_failure() { fail_after_bytes(previous_); }
  scoped_write_failure(const scoped_write_failure&) = delete;
  scoped_write_failure& operator=(const scoped_write_failure&) = delete;

 private:
  std::int64_t previous_;
};
}  // namespace fault_injection

// Charges `bytes` to the budget; throws io_error (ENOSPC, naming `what_file`) when it is exhausted.
void charge_write(const std::filesystem::path& what_file, std::size_t bytes);

// A new file beside `final_path`, renamed over it by commit(). The descriptor is buffered for text
// writers (write); a writer that uses another library's I/O (HDF5) calls release() to close the
// descriptor after the name is reserved and lets the library open the temporary by name.
class output_file {
 public:
  // `kind` names the file in messages ("results file", "members file"). Throws io_error naming
  // final_path when the temporary cannot be created (missing directory, no permission, ...).
  output_file(std::filesystem::path final_path, std::string kind);
  ~output_file();  // not committed: closes and removes the temporary; never throws
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  const std::filesystem::path& final_path() const { return final_path_; }
  const std::filesystem::path& temporary_path() const { return temporary_path_; }
  const std::string& kind() const { return kind_; }

  void write(std::string_view bytes);  // buffered; charges the fault-injection budget
  void release();                      // flushes and closes the descriptor; the temporary stays

  // Flushes, fsyncs the temporary, renames it over final_path and fsyncs the directory. After a
  // failure the temporary is removed by the destructor and final_path is untouched.
  void commit();
  bool committed() const { return committed_; }

  // Throws io_error "cannot <doing> <kind> '<final>' (temporary '<temp>'): <reason>" and marks the
  // file failed: commit() refuses a file some write of which was lost.
  [[noreturn]] void fail(std::string_view doing, int system_error, std::string_view reason);
  [[noreturn]] void fail_errno(std::string_view doing, int system_error);
  bool failed() const { return failed_; }

 private:
  void flush();

  std::filesystem::path final_path_;
  std::filesystem::path temporary_path_;
  std::string kind_;
  std::string buffer_;
  int fd_ = -1;
  bool committed_ = false;
  bool failed_ = false;
};

}  // namespace lockstep::io
