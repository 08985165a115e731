// host/io/output_file.cpp — temporary-then-rename output files, io_error and the fault-injection
// budget (output_file.hpp).
#include "host/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace lockstep::io {

namespace {

constexpr std::int64_t no_limit = -1;

std::int64_t budget_from_environment() {
  const char* text = std::getenv("LOCKSTEP_IO_FAIL_AFTER_BYTES");
  if (text == nullptr || *text == '\0') return no_limit;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  // A malformed value must not silently disable the failure a test asked for: treat it as "fail at
  // once" rather than "never fail".
  if (errno != 0 || end == text || *end != '\0' || value < 0) return 0;
  return value;
}

std::atomic<std::int64_t>& budget() {
  static std::atomic<std::int64_t> b{budget_from_environment()};
  return b;
}

std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace

namespace fault_injection {
void fail_after_bytes(std::int64_t bytes) { budget().store(bytes < 0 ? no_limit : bytes); }
std::int64_t remaining_bytes() { return budget().load(); }
}  // namespace fault_injection

void charge_write(const std::filesystem::path& what_file, std::size_t bytes) {
  if (bytes == 0) return;
  auto& b = budget();
  std::int64_t left = b.load();
  const auto want = static_cast<std::int64_t>(bytes);
  // Several writers (threads) may charge at once; each charge either fits entirely or fails.
  while (left >= 0) {
    if (left < want) {
      b.store(0);
      throw io_error(what_file, ENOSPC,
                     "cannot write " + quoted(what_file) + ": " + std::strerror(ENOSPC) + " (injected by lockstep::io::fault_injection)");
    }
    if (b.compare_exchange_weak(left, left - want)) return;
  }
}

output_file::output_file(std::filesystem::path final_path, std::string kind)
    : final_path_(std::move(final_path)), kind_(std::move(kind)) {
  if (final_path_.filename().empty()) fail("create", EISDIR, std::strerror(EISDIR));
  const std::string base = final_path_.string() + ".partial-" + std::to_string(static_cast<long>(::getpid()));
  for (int attempt = 0;; ++attempt) {
    temporary_path_ = attempt == 0 ? base : base + "-" + std::to_string(attempt);
    fd_ = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    const int err = errno;
    if (err != EEXIST || attempt >= 1000) {
      // The temporary never existed: name only the file the user asked for.
      temporary_path_.clear();
      fail_errno("create", err);
    }
  }
}

output_file::~output_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_path_.empty()) ::unlink(temporary_path_.c_str());
}

void output_file::fail(std::string_view doing, int system_error, std::string_view reason) {
  failed_ = true;
  std::string message = "cannot " + std::string(doing) + " " + kind_ + " " + quoted(final_path_);
  if (!temporary_path_.empty()) message += " (temporary " + quoted(temporary_path_) + ")";
  message += ": ";
  message += reason;
  throw io_error(final_path_, system_error, message);
}

void output_file::fail_errno(std::string_view doing, int system_error) {
  fail(doing, system_error, std::strerror(system_error));
}

void output_file::write(std::string_view bytes) {
  if (fd_ < 0) fail("write", EBADF, "the file is already closed");
  try {
    charge_write(final_path_, bytes.size());
  } catch (const io_error& e) {
    fail("write", e.system_error, std::string(std::strerror(e.system_error)) + " (injected by lockstep::io::fault_injection)");
  }
  buffer_.append(bytes);
  if (buffer_.size() >= (1u << 20)) flush();
}

void output_file::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      buffer_.clear();
      fail_errno("write", err);
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  buffer_.clear();
}

void output_file::release() {
  if (fd_ < 0) return;
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail_errno("write", errno);
}

void output_file::commit() {
  if (committed_) return;
  if (failed_) fail("commit", EIO, "an earlier write to it failed");
  release();
  // fsync before rename: otherwise a crash soon after could leave the new name pointing at a file
  // whose data never reached the disk — a complete-looking but empty results file.
  const int fd = ::open(temporary_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("reopen", errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail_errno("sync", err);
  }
  ::close(fd);
  if (::rename(temporary_path_.c_str(), final_path_.c_str()) != 0) fail_errno("rename into place", errno);
  committed_ = true;
  // Make the rename itself durable. The file is complete and in place whatever happens here, so a
  // failure to sync the directory is not reported as a failure to write the results.
  const std::filesystem::path dir = final_path_.has_parent_path() ? final_path_.parent_path() : std::filesystem::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace lockstep::io
