// host/model_files/engine_cache.cpp — the cache of compiled model engines (engine_cache.hpp).
#include "host/model_files/engine_cache.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace lockstep::model_files {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

// A name no other process or thread uses: the process id and a per-process counter.
std::string private_suffix() {
  static std::atomic<unsigned long> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

fs::path cache_root() {
  fs::path root;
  if (const char* own = std::getenv("LOCKSTEP_CACHE_DIR"); own && *own) {
    root = own;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg && fs::path(xdg).is_absolute()) {
    // The XDG base-directory specification ignores a relative XDG_CACHE_HOME.
    root = fs::path(xdg) / "lockstep";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    root = fs::path(home) / ".cache" / "lockstep";
  } else {
    throw std::runtime_error("no cache directory for compiled models: set XDG_CACHE_HOME, HOME or LOCKSTEP_CACHE_DIR");
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw std::runtime_error("cannot create the model cache '" + root.string() + "': " + ec.message());
  return root;
}

std::string sha256_hex(std::string_view bytes) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest, &length) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

file_lock::file_lock(const fs::path& path, const std::function<void()>& on_wait) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open the lock file '" + path.string() + "'");
  if (on_wait) {
    int taken;
    while ((taken = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
    }
    if (taken == 0) return;
    if (errno == EWOULDBLOCK) on_wait();
  }
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    fail("cannot lock '" + path.string() + "'");
  }
}

file_lock::~file_lock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

bool make_entry(const fs::path& dir, const std::string& name, const std::function<void(const fs::path&)>& build,
                const fs::path& keep_failed) {
  const fs::path entry = dir / name;
  if (fs::exists(entry)) return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create '" + dir.string() + "': " + ec.message());
  const file_lock lock(dir / (name + ".lock"));
  if (fs::exists(entry)) return false;  // built by the process we waited for
  const fs::path staging = dir / (".build-" + name + "-" + private_suffix());
  fs::remove_all(staging, ec);
  fs::create_directories(staging);
  try {
    build(staging);
    fs::rename(staging, entry);
  } catch (...) {
    if (!keep_failed.empty()) {
      // In place of the last failure kept there. Best effort: the build's own error is what matters.
      fs::create_directories(keep_failed.parent_path(), ec);
      fs::remove_all(keep_failed, ec);
      fs::rename(staging, keep_failed, ec);
    }
    fs::remove_all(staging, ec);
    throw;
  }
  return true;
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  const fs::path temporary = path.string() + ".partial-" + private_suffix();
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(temporary, ec);
      throw std::runtime_error("cannot write '" + temporary.string() + "'");
    }
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw std::runtime_error("cannot write '" + path.string() + "': " + ec.message());
  }
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace lockstep::model_files
