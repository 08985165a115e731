// host/model_files/engine_cache.hpp — where compiled model engines are kept between runs, and how an
// entry is made without races.
//
// Layout under the cache root ($XDG_CACHE_HOME/lockstep, default ~/.cache/lockstep; LOCKSTEP_CACHE_DIR
// overrides both):
//
//     parts/KEY/part.o            a part of an engine (model_compiler.cpp: the model's tables, a method,
//                                 its tangents, BDF in SIMD lanes), or failed.txt for lanes that do not
//                                 compile; part.cpp, its unit; part.txt, what it is and its command
//     engines/KEY/engine.so       an engine library linked from parts (entry.cpp puts its table
//                                 together; model.txt says what it is and which parts), or compiled
//                                 whole (engine.cu: a CUDA engine)
//     DIR/KEY.lock                held (flock) by the process that builds DIR/KEY
//     DIR/.build-KEY-PID-N/       a build in progress; renamed to DIR/KEY when complete
//     equations/KEY2.hpp          the header generated from an equations file
//     sympy/KEY3.toml             the equations file Python's Model.from_sympy writes (python/lockstep/_sympy.py)
//     failed/MODEL-PART/          the last build of MODEL's PART that failed to compile: its unit, compile.sh
//                                 (the compiler command, run from that folder) and compiler.txt (all
//                                 the compiler said); replaced by the next failure of that part
//
// KEY is the SHA-256 of everything the entry depends on (the preprocessed source, so every included
// header counts; the compiler and its version; the flags; the lockstep version and engine ABI; a
// part's own unit, an engine's parts).
// An entry appears by rename(2) of a complete directory, so a reader either sees a whole library or
// none; a builder holds KEY.lock, so two processes never compile the same KEY at once (the second one
// waits and then finds the entry). A failed build leaves no entry: its directory is removed, or kept
// under failed/ where the caller asks (make_entry's keep_failed), for the user to read and re-run.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace lockstep::model_files {

// The cache root (created when missing). Throws std::runtime_error when it cannot be created.
std::filesystem::path cache_root();

// Lower-case hexadecimal SHA-256 of the bytes (OpenSSL's EVP interface).
std::string sha256_hex(std::string_view bytes);

// An exclusive advisory lock on a file (flock), held for the object's lifetime. on_wait, where given,
// is called once before waiting when another process holds the lock.
class file_lock {
 public:
  explicit file_lock(const std::filesystem::path& path, const std::function<void()>& on_wait = {});
  ~file_lock();
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

 private:
  int fd_ = -1;
};

// The directory `dir / name`, made by `build` if it does not exist yet: build fills a fresh private
// directory, which is then renamed to dir / name. Concurrent callers for one name build it once
// (the others wait on dir / (name + ".lock")). When build throws, its directory is removed, or with
// keep_failed given moved there (replacing what was there), and the exception propagates. Returns
// true when this call built it.
bool make_entry(const std::filesystem::path& dir, const std::string& name,
                const std::function<void(const std::filesystem::path& build_dir)>& build,
                const std::filesystem::path& keep_failed = {});

// Writes `text` to `path` by way of a temporary file in the same directory and rename(2).
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The whole file, or throws std::runtime_error naming it.
std::string read_file(const std::filesystem::path& path);

}  // namespace lockstep::model_files
