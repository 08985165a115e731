// tests/cli/cli_support.cpp — see cli_support.hpp.
#include "cli_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#ifndef LOCKSTEP_CLI_BINARY
#error "LOCKSTEP_CLI_BINARY must name the lockstep binary (tests/cli/CMakeLists.txt)"
#endif

extern char** environ;

namespace lockstep::cli_test {

// ---- scratch_dir ------------------------------------------------------------------------------------

scratch_dir::scratch_dir() {
  static int counter = 0;
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr ? info->name() : "suite";
  for (char& c : name)
    if (c == '/') c = '_';
  root_ = fs::temp_directory_path() /
          ("lockstep-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name);
  fs::remove_all(root_);
  fs::create_directories(work());
  fs::create_directories(capture());
}

scratch_dir::~scratch_dir() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

std::vector<std::string> scratch_dir::entries(const std::string& relative) const {
  std::vector<std::string> names;
  const fs::path base = relative.empty() ? work() : work() / relative;
  if (!fs::exists(base)) return names;
  for (const auto& e : fs::recursive_directory_iterator(base)) names.push_back(fs::relative(e.path(), base).string());
  std::sort(names.begin(), names.end());
  return names;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) ADD_FAILURE() << "cannot write " << path;
}

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// ---- running the binary ------------------------------------------------------------------------------

run_result run_lockstep(const scratch_dir& dir, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_program(dir, LOCKSTEP_CLI_BINARY, args, env);
}

run_result run_program(const scratch_dir& dir, const std::string& program, const std::vector<std::string>& args,
                       const std::vector<std::string>& env) {
  // Everything the child needs is prepared before fork: between fork and exec it calls only
  // async-signal-safe functions (the test process may have thread-team workers).
  std::vector<std::string> argv_s = {program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "LOCKSTEP_IO_FAIL_AFTER_BYTES=", 29) != 0) env_s.emplace_back(*e);
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  const std::string out_path = (dir.capture() / "stdout").string(), err_path = (dir.capture() / "stderr").string();
  const std::string work = dir.work().string();

  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed: " << std::strerror(errno);
    return {};
  }
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || null < 0 || ::chdir(work.c_str()) != 0) ::_exit(126);
    ::dup2(null, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

run_result run_study(const scratch_dir& dir, const std::string& stem, const std::string& text,
                     const std::vector<std::string>& extra, int expected_exit, const std::string& out) {
  write_text(dir / (stem + ".toml"), text);
  std::vector<std::string> args = {"run", stem + ".toml", "-o", out};
  args.insert(args.end(), extra.begin(), extra.end());
  run_result r = run_lockstep(dir, args);
  EXPECT_EQ(r.exit_code, expected_exit) << "lockstep run " << stem << ".toml: stderr:\n" << r.err;
  return r;
}

std::string replace_key_value(const std::string& text, const std::string& key, const std::string& value) {
  std::istringstream in(text);
  std::string result;
  for (std::string line; std::getline(in, line);) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line.compare(start, key.size(), key) == 0) {
      const std::size_t after = line.find_first_not_of(" \t", start + key.size());
      if (after != std::string::npos && line[after] == '=') line = line.substr(0, start) + key + " = " + value;
    }
    result += line + "\n";
  }
  return result;
}

// ---- h5_file -----------------------------------------------------------------------------------------

h5_file::h5_file(const fs::path& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // a missing file or object is a test failure, not a printout
  id_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
}

h5_file::~h5_file() {
  if (id_ >= 0) H5Fclose(id_);
}

bool h5_file::exists(const std::string& path) const {
  std::string prefix;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    prefix += "/" + part;
    if (H5Lexists(id_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

std::vector<hsize_t> h5_file::dims(const std::string& dataset) const {
  const hid_t d = H5Dopen2(id_, dataset.c_str(), H5P_DEFAULT);
  if (d < 0) {
    ADD_FAILURE() << "no dataset " << dataset;
    return {};
  }
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> out(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(s))));
  H5Sget_simple_extent_dims(s, out.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return out;
}

namespace {

template <class T>
std::vector<T> read_dataset(hid_t file, const std::string& path, hid_t memory_type) {
  const hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (d < 0) {
    ADD_FAILURE() << "no dataset " << path;
    return {};
  }
  const hid_t s = H5Dget_space(d);
  const auto total = static_cast<std::size_t>(H5Sget_simple_extent_npoints(s));
  H5Sclose(s);
  std::vector<T> out(total);
  if (total > 0 && H5Dread(d, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    ADD_FAILURE() << "cannot read " << path;
  H5Dclose(d);
  return out;
}

template <class T>
std::vector<T> read_attribute(hid_t file, const std::string& object, const std::string& name, hid_t memory_type) {
  const hid_t a = H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) {
    ADD_FAILURE() << "no attribute " << object << "@" << name;
    return {};
  }
  const hid_t space = H5Aget_space(a);
  std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  if (!out.empty() && H5Aread(a, memory_type, out.data()) < 0) ADD_FAILURE() << "cannot read " << object << "@" << name;
  H5Sclose(space);
  H5Aclose(a);
  return out;
}

herr_t collect_dataset(hid_t group, const char* name, const H5L_info_t*, void* data) {
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object >= 0) {
    if (H5Iget_type(object) == H5I_DATASET) static_cast<std::vector<std::string>*>(data)->push_back(std::string("/") + name);
    H5Oclose(object);
  }
  return 0;
}

}  // namespace

std::vector<double> h5_file::doubles(const std::string& dataset) const {
  return read_dataset<double>(id_, dataset, H5T_NATIVE_DOUBLE);
}
std::vector<std::int64_t> h5_file::int64s(const std::string& dataset) const {
  return read_dataset<std::int64_t>(id_, dataset, H5T_NATIVE_INT64);
}
std::vector<std::int32_t> h5_file::int32s(const std::string& dataset) const {
  return read_dataset<std::int32_t>(id_, dataset, H5T_NATIVE_INT32);
}

std::vector<std::string> h5_file::datasets() const {
  std::vector<std::string> names;
  H5Lvisit(id_, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &names);
  std::sort(names.begin(), names.end());
  return names;
}

bool h5_file::is_integer(const std::string& dataset) const {
  const hid_t d = H5Dopen2(id_, dataset.c_str(), H5P_DEFAULT);
  if (d < 0) {
    ADD_FAILURE() << "no dataset " << dataset;
    return false;
  }
  const hid_t type = H5Dget_type(d);
  const bool integer = H5Tget_class(type) == H5T_INTEGER;
  H5Tclose(type);
  H5Dclose(d);
  return integer;
}

bool h5_file::has_attribute(const std::string& object, const std::string& name) const {
  return H5Aexists_by_name(id_, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> h5_file::string_attributes(const std::string& object, const std::string& name) const {
  const hid_t a = H5Aopen_by_name(id_, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) {
    ADD_FAILURE() << "no attribute " << object << "@" << name;
    return {};
  }
  const hid_t type = H5Aget_type(a);
  const hid_t space = H5Aget_space(a);
  const auto count = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<std::string> out;
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) <= 0) {
    ADD_FAILURE() << object << "@" << name << " is not a variable-length string";
  } else if (count > 0) {
    std::vector<char*> raw(count, nullptr);
    const hid_t memory = H5Tcopy(H5T_C_S1);
    H5Tset_size(memory, H5T_VARIABLE);
    H5Tset_cset(memory, H5T_CSET_UTF8);
    if (H5Aread(a, memory, raw.data()) >= 0) {
      for (char* p : raw) out.emplace_back(p != nullptr ? p : "");
      H5Dvlen_reclaim(memory, space, H5P_DEFAULT, raw.data());
    } else {
      ADD_FAILURE() << "cannot read " << object << "@" << name;
    }
    H5Tclose(memory);
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(a);
  return out;
}

std::string h5_file::string_attribute(const std::string& object, const std::string& name) const {
  const auto v = string_attributes(object, name);
  EXPECT_EQ(v.size(), 1u) << object << "@" << name;
  return v.empty() ? std::string() : v.front();
}

std::vector<double> h5_file::double_attributes(const std::string& object, const std::string& name) const {
  return read_attribute<double>(id_, object, name, H5T_NATIVE_DOUBLE);
}
double h5_file::double_attribute(const std::string& object, const std::string& name) const {
  const auto v = double_attributes(object, name);
  EXPECT_EQ(v.size(), 1u) << object << "@" << name;
  return v.empty() ? std::nan("") : v.front();
}
std::vector<std::int64_t> h5_file::int64_attributes(const std::string& object, const std::string& name) const {
  return read_attribute<std::int64_t>(id_, object, name, H5T_NATIVE_INT64);
}
std::int64_t h5_file::int64_attribute(const std::string& object, const std::string& name) const {
  const auto v = int64_attributes(object, name);
  EXPECT_EQ(v.size(), 1u) << object << "@" << name;
  return v.empty() ? -1 : v.front();
}

// ---- members.csv ------------------------------------------------------------------------------------

int csv_table::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

csv_table read_csv(const fs::path& path) {
  csv_table t;
  std::istringstream in(read_text(path));
  bool first = true;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream parts(line);
    for (std::string f; std::getline(parts, f, ',');) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    if (first) {
      t.header = std::move(fields);
      first = false;
    } else {
      t.rows.push_back(std::move(fields));
    }
  }
  return t;
}

double parse_double(const std::string& field) {
  char* end = nullptr;
  const double x = std::strtod(field.c_str(), &end);
  if (field.empty() || end != field.c_str() + field.size()) {
    ADD_FAILURE() << "not a number: \"" << field << "\"";
    return std::nan("");
  }
  return x;
}

// ---- comparisons ------------------------------------------------------------------------------------

long count_mismatches(const std::vector<double>& a, const std::vector<double>& b, std::size_t* first) {
  if (a.size() != b.size()) return -1;
  long count = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i])) {
      if (count == 0 && first != nullptr) *first = i;
      ++count;
    }
  return count;
}

double two_pass_std(const std::vector<double>& x) {
  if (x.size() < 2) return std::nan("");
  double sum = 0.0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double ss = 0.0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double numpy_linear_quantile(const std::vector<double>& sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 0) return std::nan("");
  const double h = static_cast<double>(n - 1) * p;
  if (h >= static_cast<double>(n - 1)) return sorted.back();
  if (h <= 0.0) return sorted.front();
  const double j = std::floor(h);
  const double g = h - j;
  const double a = sorted[static_cast<std::size_t>(j)], b = sorted[static_cast<std::size_t>(j) + 1];
  const double diff = b - a;
  return g >= 0.5 ? b - diff * (1.0 - g) : a + diff * g;
}

}  // namespace lockstep::cli_test
