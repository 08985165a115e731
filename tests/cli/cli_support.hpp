// tests/cli/cli_support.hpp — what the end-to-end tests of `lockstep run` share: a fresh directory per
// case, running the built binary (exit code, stdout, stderr), and reading results.h5 (HDF5 C API) and
// members.csv back.
//
// The binary's path and the source tree come from CMake (LOCKSTEP_CLI_BINARY, LOCKSTEP_SOURCE_DIR).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::cli_test {

namespace fs = std::filesystem;

// ---- a fresh directory per case ---------------------------------------------------------------------
// <tmp>/lockstep-cli-<pid>-<n>-<test>/{work, capture}: `work` is the binary's working directory (it
// holds the study file and whatever the run writes), `capture` receives its stdout and stderr, so that
// `work` can be checked for leftovers. Removed with everything in it on destruction.
class scratch_dir {
 public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  const fs::path& root() const { return root_; }
  fs::path work() const { return root_ / "work"; }
  fs::path capture() const { return root_ / "capture"; }
  fs::path operator/(const std::string& name) const { return work() / name; }

  // Names of the entries of work()/relative (recursively, relative to it, sorted): what a run left.
  std::vector<std::string> entries(const std::string& relative = "") const;

 private:
  fs::path root_;
};

void write_text(const fs::path& path, const std::string& text);
std::string read_text(const fs::path& path);

// ---- running the binary ---------------------------------------------------------------------------
struct run_result {
  int exit_code = -1;  // the exit status; 128 + signal if it was killed
  std::string out, err;
};

// Runs `program args...` in dir.work() with the test's environment (minus LOCKSTEP_IO_FAIL_AFTER_BYTES)
// plus `env` ("NAME=value"); stdin is /dev/null.
run_result run_program(const scratch_dir& dir, const std::string& program, const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {});

// Runs `lockstep args...` in dir.work() with the test's environment (minus LOCKSTEP_IO_FAIL_AFTER_BYTES)
// plus `env` ("NAME=value").
run_result run_lockstep(const scratch_dir& dir, const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {});

// Writes `text` to dir / "<stem>.toml" and runs `lockstep run <stem>.toml -o out extra...`; expects
// `expected_exit` (a gtest failure otherwise, with stderr) and returns the result.
run_result run_study(const scratch_dir& dir, const std::string& stem, const std::string& text,
                     const std::vector<std::string>& extra = {}, int expected_exit = 0, const std::string& out = "out");

// `text` with the value of every line `key = ...` (leading blanks allowed, any table) replaced by
// `value`; the rest of such a line (a comment) is dropped. For shrinking example studies.
std::string replace_key_value(const std::string& text, const std::string& key, const std::string& value);

// ---- reading results.h5 -----------------------------------------------------------------------------
class h5_file {
 public:
  explicit h5_file(const fs::path& path);
  ~h5_file();
  h5_file(const h5_file&) = delete;
  h5_file& operator=(const h5_file&) = delete;

  bool is_open() const { return id_ >= 0; }
  hid_t id() const { return id_; }

  bool exists(const std::string& path) const;  // any link (group or dataset), intermediate links checked
  std::vector<hsize_t> dims(const std::string& dataset) const;
  std::vector<double> doubles(const std::string& dataset) const;
  std::vector<std::int64_t> int64s(const std::string& dataset) const;
  std::vector<std::int32_t> int32s(const std::string& dataset) const;
  std::vector<std::string> datasets() const;  // every dataset's path, sorted ("/members/status", ...)
  bool is_integer(const std::string& dataset) const;  // an integer datatype (status, counters, count)

  bool has_attribute(const std::string& object, const std::string& name) const;
  std::vector<std::string> string_attributes(const std::string& object, const std::string& name) const;
  std::string string_attribute(const std::string& object, const std::string& name) const;
  std::vector<double> double_attributes(const std::string& object, const std::string& name) const;
  double double_attribute(const std::string& object, const std::string& name) const;
  std::vector<std::int64_t> int64_attributes(const std::string& object, const std::string& name) const;
  std::int64_t int64_attribute(const std::string& object, const std::string& name) const;

 private:
  hid_t id_ = -1;
};

// ---- members.csv ------------------------------------------------------------------------------------
struct csv_table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const;  // -1 if absent
};
csv_table read_csv(const fs::path& path);  // no quoted fields expected in these tests
double parse_double(const std::string& field);  // strtod of the whole field; "nan", "inf" included

// ---- comparisons ------------------------------------------------------------------------------------
inline std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
// Same bits, or both NaN (one NaN spelling in a file is as good as another).
inline bool same_value(double a, double b) { return bits_of(a) == bits_of(b) || (a != a && b != b); }

// Count of mismatches between two arrays by same_value (sizes must match, else the count is -1), and
// the first mismatch's index in *first.
long count_mismatches(const std::vector<double>& a, const std::vector<double>& b, std::size_t* first = nullptr);

// Statistical sample standard deviation in two passes (mean first), the textbook definition.
double two_pass_std(const std::vector<double>& x);

// Hyndman & Fan type 7 (numpy.quantile's default "linear") of sorted, NaN-free values, evaluated as
// numpy 1.24 does: h = (n - 1) p, j = floor(h), g = h - j, then numpy's _lerp.
double numpy_linear_quantile(const std::vector<double>& sorted, double p);

}  // namespace lockstep::cli_test
