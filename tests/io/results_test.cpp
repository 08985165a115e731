// Tests of host/io/results_h5.hpp and members_csv.hpp: files written through the writers and read back
// with the HDF5 C API (values compared bitwise), output safety (no final file unless committed, no
// temporary left behind), failures reported with the path and the system's reason (injected through
// the fault-injection budget, and real ones from a file-size limit).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "host/io/members_csv.hpp"
#include "host/io/results_h5.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = lockstep::io;
using lockstep::member_counters;
using lockstep::member_status;

// ---- a fresh directory per test -------------------------------------------------------------------
class scratch_dir {
 public:
  scratch_dir() {
    static int counter = 0;
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("lockstep-io-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
                                         (info != nullptr ? info->name() : "x"));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const char* name) const { return path_ / name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

// ---- an ensemble's worth of made-up results --------------------------------------------------------
struct sample {
  io::results_layout layout;
  std::vector<member_status> status;
  std::vector<member_counters> counters;
  std::vector<double> final_t, inputs, y, y_final;

  io::member_block block(long first, long count) const {
    const auto S = static_cast<std::size_t>(layout.save_count()), Y = static_cast<std::size_t>(layout.state_size());
    const auto V = layout.varied_names.size(), f = static_cast<std::size_t>(first);
    io::member_block b;
    b.first = first;
    b.count = count;
    b.status = status.data() + f;
    b.counters = counters.data() + f;
    b.final_t = final_t.data() + f;
    b.inputs = V > 0 ? inputs.data() + f * V : nullptr;
    b.y = layout.trajectories ? y.data() + f * S * Y : nullptr;
    b.y_final = y_final.data() + f * Y;
    return b;
  }
};

// Values with every bit pattern class a writer could mangle: random doubles of all magnitudes, signed
// zero, subnormals, infinities and a NaN with a payload.
double tricky_value(std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  switch (r % 16) {
    case 0: return -0.0;
    case 1: return std::numeric_limits<double>::denorm_min() * static_cast<double>(r % 1000 + 1);
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: {
      const std::uint64_t bits = 0x7ff8000000000000ull | (r >> 20);
      double x;
      std::memcpy(&x, &bits, sizeof x);
      return x;
    }
    default: return std::ldexp(static_cast<double>(r >> 11) * 0x1.0p-53 - 0.5, static_cast<int>(r % 200) - 100);
  }
}

sample make_sample(long members, int n, int m, int k, int saves, bool trajectories, std::vector<std::string> varied = {"params.a", "initial.b"}) {
  sample s;
  s.layout.model = "test_model";
  s.layout.members = members;
  s.layout.n = n;
  s.layout.m = m;
  s.layout.k = k;
  s.layout.has_mu = m > 0;
  s.layout.has_nu = k > 0;
  s.layout.trajectories = trajectories;
  for (int i = 0; i < saves; ++i) s.layout.save_times.push_back(0.25 * (i + 1));
  s.layout.varied_names = std::move(varied);
  std::mt19937_64 rng(12345);
  const auto N = static_cast<std::size_t>(members), S = static_cast<std::size_t>(saves), Y = static_cast<std::size_t>(s.layout.state_size());
  for (std::size_t i = 0; i < N; ++i) {
    s.status.push_back(static_cast<member_status>(i % lockstep::member_status_count));
    member_counters c;
    c.steps = static_cast<long>(100 + i);
    c.rejected_steps = static_cast<long>(i % 7);
    c.newton_iterations = static_cast<long>(3 * i + 1);
    c.newton_failures = static_cast<long>(i % 3);
    c.jacobian_evaluations = static_cast<long>(i / 2);
    c.lu_factorizations = static_cast<long>(i + 5);
    c.model_evaluations = static_cast<long>(1000000000000L + static_cast<long>(i));
    c.last_h = tricky_value(rng);
    c.max_phi = tricky_value(rng);
    c.max_velocity_residual = tricky_value(rng);
    c.init_q_correction = tricky_value(rng);
    c.init_v_correction = tricky_value(rng);
    c.projections = static_cast<long>(3 * i);
    c.max_projection_q = tricky_value(rng);
    c.max_projection_v = tricky_value(rng);
    c.dropped_rows = i % 2 == 0 ? 0L : static_cast<long>(~0UL << (i % 64));  // bit 63 set: a negative int64
    c.rank_changes = static_cast<long>(i % 5);
    c.max_dropped_phi = tricky_value(rng);
    s.counters.push_back(c);
    s.final_t.push_back(tricky_value(rng));
  }
  for (std::size_t i = 0; i < N * s.layout.varied_names.size(); ++i) s.inputs.push_back(tricky_value(rng));
  if (trajectories)
    for (std::size_t i = 0; i < N * S * Y; ++i) s.y.push_back(tricky_value(rng));
  for (std::size_t i = 0; i < N * Y; ++i) s.y_final.push_back(tricky_value(rng));
  return s;
}

// Blocks covering [0, members) in a shuffled order, of uneven sizes so that they straddle chunks.
std::vector<std::pair<long, long>> shuffled_blocks(long members, long typical) {
  std::vector<std::pair<long, long>> blocks;
  std::mt19937 rng(7);
  for (long first = 0; first < members;) {
    const long count = std::min(members - first, 1 + static_cast<long>(rng() % static_cast<unsigned>(2 * typical)));
    blocks.emplace_back(first, count);
    first += count;
  }
  std::shuffle(blocks.begin(), blocks.end(), rng);
  return blocks;
}

void write_sample(const sample& s, const fs::path& path, long typical_block = 6) {
  io::results_writer w(path, s.layout);
  for (const auto& [first, count] : shuffled_blocks(s.layout.members, typical_block)) w.write_members(s.block(first, count));
  w.commit();
}

// ---- reading back with the HDF5 C API --------------------------------------------------------------
struct h5_file {
  explicit h5_file(const fs::path& p) : id(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~h5_file() {
    if (id >= 0) H5Fclose(id);
  }
  h5_file(const h5_file&) = delete;
  h5_file& operator=(const h5_file&) = delete;
  hid_t id;
};

bool exists(hid_t file, const std::string& path) {
  // H5Lexists needs every intermediate link to exist; walk the path.
  std::string prefix;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    prefix += "/" + part;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

std::vector<hsize_t> dims(hid_t file, const std::string& path) {
  const hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << path;
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> out(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, out.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return out;
}

template <class T>
std::vector<T> read_dataset(hid_t file, const std::string& path, hid_t memory_type) {
  std::size_t total = 1;
  for (hsize_t x : dims(file, path)) total *= x;
  std::vector<T> out(total);
  const hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (total > 0) {
    EXPECT_GE(H5Dread(d, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << path;
  }
  H5Dclose(d);
  return out;
}

std::vector<double> read_doubles(hid_t file, const std::string& path) { return read_dataset<double>(file, path, H5T_NATIVE_DOUBLE); }
std::vector<std::int64_t> read_int64s(hid_t file, const std::string& path) { return read_dataset<std::int64_t>(file, path, H5T_NATIVE_INT64); }

hid_t open_attribute(hid_t file, const std::string& object, const std::string& name) {
  const hid_t a = H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(a, 0) << object << "@" << name;
  return a;
}

bool has_attribute(hid_t file, const std::string& object, const std::string& name) {
  return H5Aexists_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> read_strings_attribute(hid_t file, const std::string& object, const std::string& name) {
  const hid_t a = open_attribute(file, object, name);
  const hid_t type = H5Aget_type(a);
  EXPECT_EQ(H5Tget_class(type), H5T_STRING);
  EXPECT_TRUE(H5Tis_variable_str(type) > 0) << object << "@" << name << " should be a variable-length string";
  EXPECT_EQ(H5Tget_cset(type), H5T_CSET_UTF8);
  const hid_t space = H5Aget_space(a);
  const auto count = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<char*> raw(count, nullptr);
  const hid_t memory = H5Tcopy(H5T_C_S1);
  H5Tset_size(memory, H5T_VARIABLE);
  H5Tset_cset(memory, H5T_CSET_UTF8);
  std::vector<std::string> out;
  if (count > 0) {
    EXPECT_GE(H5Aread(a, memory, raw.data()), 0);
    for (char* p : raw) out.emplace_back(p != nullptr ? p : "");
    H5Dvlen_reclaim(memory, space, H5P_DEFAULT, raw.data());
  }
  H5Tclose(memory);
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(a);
  return out;
}

std::string read_string_attribute(hid_t file, const std::string& object, const std::string& name) {
  const auto v = read_strings_attribute(file, object, name);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? std::string() : v.front();
}

template <class T>
std::vector<T> read_number_attribute(hid_t file, const std::string& object, const std::string& name, hid_t memory_type) {
  const hid_t a = open_attribute(file, object, name);
  const hid_t space = H5Aget_space(a);
  std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  if (!out.empty()) {
    EXPECT_GE(H5Aread(a, memory_type, out.data()), 0);
  }
  H5Sclose(space);
  H5Aclose(a);
  return out;
}

double read_double_attribute(hid_t file, const std::string& object, const std::string& name) {
  const auto v = read_number_attribute<double>(file, object, name, H5T_NATIVE_DOUBLE);
  return v.size() == 1 ? v[0] : std::nan("");
}

std::int64_t read_int_attribute(hid_t file, const std::string& object, const std::string& name) {
  const auto v = read_number_attribute<std::int64_t>(file, object, name, H5T_NATIVE_INT64);
  return v.size() == 1 ? v[0] : -999;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// Columns [offset, offset + width) of each row of a [rows][stride] array.
std::vector<double> columns(const std::vector<double>& a, std::size_t stride, std::size_t offset, std::size_t width) {
  std::vector<double> out;
  for (std::size_t r = 0; r < a.size() / stride; ++r)
    for (std::size_t j = 0; j < width; ++j) out.push_back(a[r * stride + offset + j]);
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

// ====================================================================================================
// results.h5
// ====================================================================================================

TEST(ResultsH5, WritesMembersGivenInShuffledChunksAndReadsThemBackBitwise) {
  // Arrange: 37 members of a model with every kind of variable (n = 3, m = 1, k = 1, ggl's mu).
  scratch_dir dir;
  const sample s = make_sample(37, 3, 1, 1, 4, true);
  const fs::path path = dir / "results.h5";

  // Act
  write_sample(s, path);

  // Assert: shapes, then every value bit for bit.
  h5_file f(path);
  ASSERT_GE(f.id, 0);
  const hsize_t N = 37, S = 4;
  EXPECT_EQ(dims(f.id, "/t"), (std::vector<hsize_t>{S}));
  EXPECT_EQ(dims(f.id, "/q"), (std::vector<hsize_t>{N, S, 3}));
  EXPECT_EQ(dims(f.id, "/v"), (std::vector<hsize_t>{N, S, 3}));
  EXPECT_EQ(dims(f.id, "/lambda"), (std::vector<hsize_t>{N, S, 1}));
  EXPECT_EQ(dims(f.id, "/mu"), (std::vector<hsize_t>{N, S, 1}));
  EXPECT_EQ(dims(f.id, "/nu"), (std::vector<hsize_t>{N, S, 1}));
  EXPECT_EQ(dims(f.id, "/members/final_q"), (std::vector<hsize_t>{N, 3}));
  EXPECT_EQ(dims(f.id, "/members/inputs"), (std::vector<hsize_t>{N, 2}));
  for (const char* name : {"status", "steps", "rejected", "newton_iterations", "newton_failures", "jacobian_evaluations",
                           "lu_factorizations", "model_evaluations", "projections", "final_t", "final_h", "max_phi",
                           "max_velocity_residual", "max_projection_q", "max_projection_v", "dropped_rows",
                           "rank_changes", "max_dropped_phi"})
    EXPECT_EQ(dims(f.id, std::string("/members/") + name), (std::vector<hsize_t>{N})) << name;

  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/t"), s.layout.save_times));
  const std::size_t Y = 2 * 3 + 2 * 1 + 1;
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/q"), columns(s.y, Y, 0, 3)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/v"), columns(s.y, Y, 3, 3)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lambda"), columns(s.y, Y, 6, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/mu"), columns(s.y, Y, 7, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/nu"), columns(s.y, Y, 8, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_q"), columns(s.y_final, Y, 0, 3)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_v"), columns(s.y_final, Y, 3, 3)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_t"), s.final_t));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/inputs"), s.inputs));

  const auto status = read_dataset<std::int32_t>(f.id, "/members/status", H5T_NATIVE_INT32);
  ASSERT_EQ(status.size(), N);
  for (std::size_t i = 0; i < N; ++i) EXPECT_EQ(status[i], static_cast<int>(s.status[i])) << i;
  auto integer_column = [&](long member_counters::*field) {
    std::vector<std::int64_t> out;
    for (const auto& c : s.counters) out.push_back(c.*field);
    return out;
  };
  auto real_column = [&](double member_counters::*field) {
    std::vector<double> out;
    for (const auto& c : s.counters) out.push_back(c.*field);
    return out;
  };
  EXPECT_EQ(read_int64s(f.id, "/members/steps"), integer_column(&member_counters::steps));
  EXPECT_EQ(read_int64s(f.id, "/members/rejected"), integer_column(&member_counters::rejected_steps));
  EXPECT_EQ(read_int64s(f.id, "/members/newton_iterations"), integer_column(&member_counters::newton_iterations));
  EXPECT_EQ(read_int64s(f.id, "/members/newton_failures"), integer_column(&member_counters::newton_failures));
  EXPECT_EQ(read_int64s(f.id, "/members/jacobian_evaluations"), integer_column(&member_counters::jacobian_evaluations));
  EXPECT_EQ(read_int64s(f.id, "/members/lu_factorizations"), integer_column(&member_counters::lu_factorizations));
  EXPECT_EQ(read_int64s(f.id, "/members/model_evaluations"), integer_column(&member_counters::model_evaluations));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_h"), real_column(&member_counters::last_h)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/max_phi"), real_column(&member_counters::max_phi)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/max_velocity_residual"), real_column(&member_counters::max_velocity_residual)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/init_q_correction"), real_column(&member_counters::init_q_correction)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/init_v_correction"), real_column(&member_counters::init_v_correction)));
  EXPECT_EQ(read_int64s(f.id, "/members/projections"), integer_column(&member_counters::projections));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/max_projection_q"), real_column(&member_counters::max_projection_q)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/max_projection_v"), real_column(&member_counters::max_projection_v)));
  EXPECT_EQ(read_int64s(f.id, "/members/dropped_rows"), integer_column(&member_counters::dropped_rows));
  EXPECT_EQ(read_int64s(f.id, "/members/rank_changes"), integer_column(&member_counters::rank_changes));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/max_dropped_phi"), real_column(&member_counters::max_dropped_phi)));
}

TEST(ResultsH5, WritesALargeEnsembleWhoseBlocksStraddleCompressedChunks) {
  // Arrange: enough members for several chunks along the member axis (about 512 KiB each), written
  // in blocks of a few hundred that start and end inside chunks, in a shuffled order.
  scratch_dir dir;
  const sample s = make_sample(30000, 2, 1, 0, 3, true, {"params.a"});
  const fs::path path = dir / "results.h5";

  // Act
  write_sample(s, path, 700);

  // Assert
  h5_file f(path);
  ASSERT_GE(f.id, 0);
  const std::size_t Y = 2 * 2 + 2 * 1;
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/q"), columns(s.y, Y, 0, 2)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lambda"), columns(s.y, Y, 4, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_q"), columns(s.y_final, Y, 0, 2)));
  EXPECT_FALSE(exists(f.id, "/nu"));
  // The member datasets are chunked along the member axis (so ranges can be written independently).
  const hid_t d = H5Dopen2(f.id, "/q", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t chunk[3] = {};
  EXPECT_EQ(H5Pget_chunk(dcpl, 3, chunk), 3);
  EXPECT_LT(chunk[0], 30000u);
  EXPECT_EQ(chunk[2], 2u);
  H5Pclose(dcpl);
  H5Dclose(d);
}

TEST(ResultsH5, LeavesTrajectoriesOutWhenTheStudyKeepsStatisticsOnly) {
  // Arrange: no trajectories, so blocks carry no y at all.
  scratch_dir dir;
  const sample s = make_sample(10, 2, 1, 0, 5, false);
  const fs::path path = dir / "results.h5";

  // Act
  write_sample(s, path);

  // Assert
  h5_file f(path);
  ASSERT_GE(f.id, 0);
  for (const char* name : {"/q", "/v", "/lambda", "/mu", "/nu"}) EXPECT_FALSE(exists(f.id, name)) << name;
  EXPECT_EQ(read_int_attribute(f.id, "/", "trajectories"), 0);
  EXPECT_EQ(dims(f.id, "/t"), (std::vector<hsize_t>{5}));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/final_q"), columns(s.y_final, 6, 0, 2)));
}

// /lyapunov: member rows in two blocks out of order, read back bitwise (NaN padding of the history
// included), the settings as attributes; a block without the Lyapunov values is refused.
TEST(ResultsH5, WritesTheLyapunovGroupFromMemberBlocks) {
  // Arrange: 5 members, p = 2 exponents, H = 3 running estimates.
  scratch_dir dir;
  sample s = make_sample(5, 2, 1, 0, 2, false);
  s.layout.lyapunov.exponents = 2;
  s.layout.lyapunov.dimension = 2;
  s.layout.lyapunov.history = 3;
  s.layout.lyapunov.method = "clone";
  s.layout.lyapunov.renormalize = 0.5;
  s.layout.lyapunov.transient = 2.0;
  s.layout.lyapunov.separation = 1e-7;
  std::mt19937_64 rng(7);
  std::vector<member_status> status = {member_status::success, member_status::max_steps, member_status::success,
                                       member_status::success, member_status::newton_failure};
  std::vector<double> exponents(10), t_start(5), t_end(5), history_t(15), history(30);
  for (double& x : exponents) x = tricky_value(rng);
  for (double& x : t_start) x = tricky_value(rng);
  for (double& x : t_end) x = tricky_value(rng);
  for (double& x : history_t) x = tricky_value(rng);
  for (double& x : history) x = tricky_value(rng);
  std::vector<std::int64_t> renormalizations = {3, 1, 3, 2, 0}, steps = {10, 20, -1, 40, 50};
  auto values_of = [&](long first) {
    const auto f = static_cast<std::size_t>(first);
    io::lyapunov_values v;
    v.status = status.data() + f;
    v.exponents = exponents.data() + 2 * f;
    v.t_start = t_start.data() + f;
    v.t_end = t_end.data() + f;
    v.renormalizations = renormalizations.data() + f;
    v.steps = steps.data() + f;
    v.history_t = history_t.data() + 3 * f;
    v.history = history.data() + 6 * f;
    return v;
  };
  const fs::path path = dir / "results.h5";

  // Act
  {
    io::results_writer w(path, s.layout);
    io::member_block missing = s.block(0, 2);
    EXPECT_THROW(w.write_members(missing), std::invalid_argument);
    const io::lyapunov_values late = values_of(2), early = values_of(0);
    io::member_block b = s.block(2, 3);
    b.lyapunov = &late;
    w.write_members(b);
    b = s.block(0, 2);
    b.lyapunov = &early;
    w.write_members(b);
    w.commit();
  }

  // Assert
  h5_file f(path);
  ASSERT_GE(f.id, 0);
  EXPECT_EQ(dims(f.id, "/lyapunov/exponents"), (std::vector<hsize_t>{5, 2}));
  EXPECT_EQ(dims(f.id, "/lyapunov/history"), (std::vector<hsize_t>{5, 3, 2}));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lyapunov/exponents"), exponents));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lyapunov/t_start"), t_start));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lyapunov/t_end"), t_end));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lyapunov/history_t"), history_t));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/lyapunov/history"), history));
  EXPECT_EQ(read_int64s(f.id, "/lyapunov/renormalizations"), renormalizations);
  EXPECT_EQ(read_int64s(f.id, "/lyapunov/steps"), steps);
  const auto codes = read_dataset<std::int32_t>(f.id, "/lyapunov/status", H5T_NATIVE_INT32);
  ASSERT_EQ(codes.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(codes[i], static_cast<std::int32_t>(status[i]));
  EXPECT_EQ(read_string_attribute(f.id, "/lyapunov", "method"), "clone");
  EXPECT_EQ(read_string_attribute(f.id, "/lyapunov", "metric"), "mass");
  EXPECT_EQ(read_double_attribute(f.id, "/lyapunov", "renormalize"), 0.5);
  EXPECT_EQ(read_double_attribute(f.id, "/lyapunov", "transient"), 2.0);
  EXPECT_EQ(read_double_attribute(f.id, "/lyapunov", "separation"), 1e-7);
  EXPECT_EQ(read_int_attribute(f.id, "/lyapunov", "dimension"), 2);
  EXPECT_EQ(read_int_attribute(f.id, "/lyapunov", "exponents"), 2);
  EXPECT_EQ(read_int_attribute(f.id, "/lyapunov", "history_length"), 3);
}

TEST(ResultsH5, NamesEveryStatusCodeInTheStatusAttribute) {
  // Arrange
  scratch_dir dir;
  const sample s = make_sample(3, 1, 0, 0, 1, false);
  write_sample(s, dir / "results.h5");

  // Act
  h5_file f(dir / "results.h5");
  const auto names = read_strings_attribute(f.id, "/members/status", "names");

  // Assert: names[code] is status_name(code) for every code.
  ASSERT_EQ(names.size(), static_cast<std::size_t>(lockstep::member_status_count));
  for (int c = 0; c < lockstep::member_status_count; ++c) EXPECT_EQ(names[static_cast<std::size_t>(c)], lockstep::status_name(static_cast<member_status>(c)));
  EXPECT_EQ(names[1], "success");
}

TEST(ResultsH5, DescribesVariedInputsWithNamesGridShapeAndGridDims) {
  // Arrange: three varied inputs, the first and third a 3 x 2 grid, times 2 draws of the second.
  scratch_dir dir;
  sample s = make_sample(12, 1, 0, 0, 2, false, {"params.L", "initial.theta", "params.c"});
  s.layout.grid_dims = {0, 2};
  s.layout.grid_shape = {3, 2};

  // Act
  write_sample(s, dir / "results.h5");

  // Assert
  h5_file f(dir / "results.h5");
  EXPECT_EQ(read_strings_attribute(f.id, "/members/inputs", "names"), (std::vector<std::string>{"params.L", "initial.theta", "params.c"}));
  EXPECT_EQ(read_number_attribute<std::int64_t>(f.id, "/members/inputs", "grid_shape", H5T_NATIVE_INT64), (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(read_number_attribute<std::int32_t>(f.id, "/members/inputs", "grid_dims", H5T_NATIVE_INT32), (std::vector<std::int32_t>{0, 2}));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/members/inputs"), s.inputs));
}

TEST(ResultsH5, WritesEmptyGridAttributesWhenNothingIsAGrid) {
  scratch_dir dir;
  write_sample(make_sample(4, 1, 0, 0, 1, false), dir / "results.h5");

  h5_file f(dir / "results.h5");
  EXPECT_TRUE(read_number_attribute<std::int64_t>(f.id, "/members/inputs", "grid_shape", H5T_NATIVE_INT64).empty());
  EXPECT_TRUE(read_number_attribute<std::int32_t>(f.id, "/members/inputs", "grid_dims", H5T_NATIVE_INT32).empty());
}

TEST(ResultsH5, WritesStatisticsGroupsWithProbabilitiesAndCounts) {
  // Arrange: n = 2, m = 1, k = 1 with mu; statistics over 3 save times.
  scratch_dir dir;
  sample s = make_sample(6, 2, 1, 1, 3, false);
  const std::size_t S = 3, Y = 2 * 2 + 2 + 1;
  std::vector<double> mean_state(S * Y), q05_state(S * Y);
  std::iota(mean_state.begin(), mean_state.end(), 0.5);
  std::iota(q05_state.begin(), q05_state.end(), -10.25);
  std::vector<std::int64_t> count(S * Y, 6);
  count[4] = 5;
  const std::vector<double> stderr_q{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, stderr_v{1, 2, 3, 4, 5, 6};

  // Act
  {
    io::results_writer w(dir / "results.h5", s.layout);
    w.write_members(s.block(0, 6));
    w.write_statistic_state("mean", std::nan(""), mean_state.data(), count.data());
    w.write_statistic_state("q05", 0.05, q05_state.data(), nullptr);
    w.write_statistic("mean_stderr", std::nan(""), stderr_q.data(), stderr_v.data(), nullptr, nullptr, nullptr, nullptr);
    w.set_quantile_rank_error(0.001);
    w.commit();
  }

  // Assert
  h5_file f(dir / "results.h5");
  EXPECT_EQ(dims(f.id, "/statistics/mean/q"), (std::vector<hsize_t>{S, 2}));
  EXPECT_EQ(dims(f.id, "/statistics/mean/lambda"), (std::vector<hsize_t>{S, 1}));
  EXPECT_EQ(dims(f.id, "/statistics/mean/count"), (std::vector<hsize_t>{S, Y}));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean/q"), columns(mean_state, Y, 0, 2)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean/v"), columns(mean_state, Y, 2, 2)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean/lambda"), columns(mean_state, Y, 4, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean/mu"), columns(mean_state, Y, 5, 1)));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean/nu"), columns(mean_state, Y, 6, 1)));
  EXPECT_EQ(read_int64s(f.id, "/statistics/mean/count"), count);
  EXPECT_FALSE(has_attribute(f.id, "/statistics/mean", "probability"));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/q05/q"), columns(q05_state, Y, 0, 2)));
  EXPECT_EQ(read_double_attribute(f.id, "/statistics/q05", "probability"), 0.05);
  EXPECT_FALSE(exists(f.id, "/statistics/q05/count"));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean_stderr/q"), stderr_q));
  EXPECT_TRUE(bitwise_equal(read_doubles(f.id, "/statistics/mean_stderr/v"), stderr_v));
  EXPECT_FALSE(exists(f.id, "/statistics/mean_stderr/lambda"));
  EXPECT_EQ(read_double_attribute(f.id, "/statistics", "quantile_rank_error"), 0.001);
}

TEST(ResultsH5, RefusesAStatisticWrittenTwiceOrWithAPathForAName) {
  scratch_dir dir;
  const sample s = make_sample(1, 1, 0, 0, 1, false);
  io::results_writer w(dir / "results.h5", s.layout);
  const double x = 1.0;
  w.write_statistic("mean", std::nan(""), &x, &x, nullptr, nullptr, nullptr, nullptr);

  EXPECT_THROW(w.write_statistic("mean", std::nan(""), &x, &x, nullptr, nullptr, nullptr, nullptr), std::logic_error);
  EXPECT_THROW(w.write_statistic("a/b", std::nan(""), &x, &x, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(w.write_statistic("", std::nan(""), &x, &x, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);
}

TEST(ResultsH5, RecordsTheLayoutAndTheRunInRootAttributes) {
  // Arrange
  scratch_dir dir;
  const sample s = make_sample(2, 2, 1, 0, 1, false);
  io::run_info run;
  run.study_text = "[model]\nname = \"double_pendulum\"  # \xc3\xa9t\xc3\xa9\n";
  run.lockstep_version = "0.1.0";
  run.git_revision = "abc1234-dirty";
  run.backend = "omp";
  run.threads = 8;
  run.wall_time_seconds = 12.5;

  // Act
  {
    io::results_writer w(dir / "results.h5", s.layout);
    w.write_members(s.block(0, 2));
    w.set_attribute("wall_time_seconds", 1.0);  // replaced by set_run_info below
    w.set_run_info(run);
    w.set_attribute("seed", 42);
    w.set_attribute("note", "hello");
    w.commit();
  }

  // Assert
  h5_file f(dir / "results.h5");
  EXPECT_EQ(read_string_attribute(f.id, "/", "format"), "lockstep-results");
  EXPECT_EQ(read_int_attribute(f.id, "/", "format_version"), 1);
  EXPECT_EQ(read_string_attribute(f.id, "/", "model"), "test_model");
  EXPECT_EQ(read_int_attribute(f.id, "/", "n"), 2);
  EXPECT_EQ(read_int_attribute(f.id, "/", "m"), 1);
  EXPECT_EQ(read_int_attribute(f.id, "/", "k"), 0);
  EXPECT_EQ(read_int_attribute(f.id, "/", "members"), 2);
  EXPECT_EQ(read_string_attribute(f.id, "/", "study"), run.study_text);
  EXPECT_EQ(read_string_attribute(f.id, "/", "lockstep_version"), "0.1.0");
  EXPECT_EQ(read_string_attribute(f.id, "/", "git_revision"), "abc1234-dirty");
  EXPECT_EQ(read_string_attribute(f.id, "/", "backend"), "omp");
  EXPECT_EQ(read_int_attribute(f.id, "/", "threads"), 8);
  EXPECT_EQ(read_double_attribute(f.id, "/", "wall_time_seconds"), 12.5);
  EXPECT_EQ(read_int_attribute(f.id, "/", "seed"), 42);
  EXPECT_EQ(read_string_attribute(f.id, "/", "note"), "hello");
}

TEST(ResultsH5, WritesModelsWithoutConstraintsAndEnsemblesWithoutMembers) {
  // Arrange: m = 0 (empty lambda) and, separately, zero members: empty datasets, nothing to chunk.
  scratch_dir dir;
  const sample unconstrained = make_sample(5, 2, 0, 0, 2, true);
  const sample empty = make_sample(0, 2, 1, 0, 2, true);

  // Act
  write_sample(unconstrained, dir / "a.h5");
  write_sample(empty, dir / "b.h5");

  // Assert
  h5_file a(dir / "a.h5");
  EXPECT_EQ(dims(a.id, "/lambda"), (std::vector<hsize_t>{5, 2, 0}));
  EXPECT_FALSE(exists(a.id, "/mu"));
  EXPECT_TRUE(bitwise_equal(read_doubles(a.id, "/q"), columns(unconstrained.y, 4, 0, 2)));
  h5_file b(dir / "b.h5");
  EXPECT_EQ(dims(b.id, "/q"), (std::vector<hsize_t>{0, 2, 2}));
  EXPECT_EQ(dims(b.id, "/members/status"), (std::vector<hsize_t>{0}));
}

TEST(ResultsH5, ReplacesAnExistingFileOnlyWhenCommitted) {
  // Arrange: an older results.h5 in the way.
  scratch_dir dir;
  const fs::path path = dir / "results.h5";
  std::ofstream(path) << "older results";
  const sample s = make_sample(4, 1, 0, 0, 1, false);

  // Act / Assert: until commit the old file is untouched; afterwards it is the new one.
  io::results_writer w(path, s.layout);
  w.write_members(s.block(0, 4));
  EXPECT_EQ(read_text(path), "older results");
  EXPECT_EQ(w.temporary_path().parent_path(), path.parent_path());
  w.commit();
  h5_file f(path);
  ASSERT_GE(f.id, 0);
  EXPECT_EQ(read_string_attribute(f.id, "/", "format"), "lockstep-results");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"results.h5"}));
}

TEST(ResultsH5, LeavesNeitherFinalFileNorTemporaryWhenDestroyedWithoutCommit) {
  // Arrange
  scratch_dir dir;
  const sample s = make_sample(8, 2, 1, 0, 2, true);
  {
    io::results_writer w(dir / "results.h5", s.layout);
    w.write_members(s.block(0, 5));
    EXPECT_TRUE(fs::exists(w.temporary_path()));

    // Act: the writer goes out of scope (an exception elsewhere, say) without commit.
  }

  // Assert
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ResultsH5, RefusesToCommitWhileMembersAreMissing) {
  scratch_dir dir;
  const sample s = make_sample(10, 1, 0, 0, 1, false);
  {
    io::results_writer w(dir / "results.h5", s.layout);
    w.write_members(s.block(0, 4));
    w.write_members(s.block(6, 4));

    try {
      w.commit();
      FAIL() << "commit should refuse a file with members [4, 6) missing";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("[4, 6)"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ResultsH5, RejectsBlocksOutsideTheEnsembleAndInconsistentLayouts) {
  scratch_dir dir;
  const sample s = make_sample(5, 1, 0, 0, 1, false);
  io::results_writer w(dir / "results.h5", s.layout);
  io::member_block b = s.block(0, 5);
  b.first = 1;
  EXPECT_THROW(w.write_members(b), std::invalid_argument);
  b.first = -1;
  EXPECT_THROW(w.write_members(b), std::invalid_argument);

  io::results_layout bad = s.layout;
  bad.grid_dims = {0};
  bad.grid_shape = {3};  // 5 members are not a multiple of 3 grid points
  EXPECT_THROW(io::results_writer(dir / "other.h5", bad), std::invalid_argument);
}

TEST(ResultsH5, InjectedWriteFailureThrowsIoErrorNamingThePathAndLeavesNoFile) {
  // Arrange: a budget that runs out in the middle of the first block's trajectories.
  scratch_dir dir;
  const fs::path path = dir / "results.h5";
  const sample s = make_sample(50, 3, 1, 0, 10, true);
  {
    io::results_writer w(path, s.layout);
    io::fault_injection::scoped_write_failure disk_full(4096);

    // Act
    try {
      w.write_members(s.block(0, 50));
      FAIL() << "the write should have failed";
    } catch (const io::io_error& e) {
      // Assert: the message names the file and the system's reason; the error carries ENOSPC.
      const std::string what = e.what();
      EXPECT_NE(what.find(path.string()), std::string::npos) << what;
      EXPECT_NE(what.find(std::strerror(ENOSPC)), std::string::npos) << what;
      EXPECT_EQ(e.path, path);
      EXPECT_EQ(e.system_error, ENOSPC);
    }
    // A writer that lost a write never commits.
    EXPECT_THROW(w.commit(), std::logic_error);
    EXPECT_FALSE(fs::exists(path));
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_LT(io::fault_injection::remaining_bytes(), 0) << "the scoped budget should be lifted";
}

TEST(ResultsH5, InjectedFailureOnAnAttributeAlsoThrowsIoError) {
  scratch_dir dir;
  const sample s = make_sample(2, 1, 0, 0, 1, false);
  io::results_writer w(dir / "results.h5", s.layout);
  io::fault_injection::scoped_write_failure disk_full(3);

  EXPECT_THROW(w.set_attribute("study", "a study longer than three bytes"), io::io_error);
}

TEST(ResultsH5, RealWriteFailureFromAFileSizeLimitIsReportedWithTheSystemReason) {
  // Arrange: a file-size limit (RLIMIT_FSIZE) far below the file's size makes the kernel refuse the
  // writes with EFBIG, the way a full disk refuses them with ENOSPC. SIGXFSZ is ignored so that the
  // write returns the error instead of killing the process.
  scratch_dir dir;
  const fs::path path = dir / "results.h5";
  const sample s = make_sample(2000, 3, 1, 0, 20, true);
  struct sigaction ignore {}, previous_action {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &previous_action), 0);
  rlimit previous_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &previous_limit), 0);
  std::string message;
  {
    io::results_writer w(path, s.layout);
    rlimit small = previous_limit;
    small.rlim_cur = 64 * 1024;

    // Act: the failure may surface while writing (a chunk evicted from the cache) or at commit
    // (closing the datasets writes the cached chunks).
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    try {
      for (long first = 0; first < 2000; first += 250) w.write_members(s.block(first, 250));
      w.commit();
    } catch (const io::io_error& e) {
      message = e.what();
    }
  }  // abandoned while the limit still holds: closing must not write (or crash)
  setrlimit(RLIMIT_FSIZE, &previous_limit);
  sigaction(SIGXFSZ, &previous_action, nullptr);

  // Assert
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(EFBIG)), std::string::npos) << message;
  EXPECT_TRUE(dir.entries().empty());
}

namespace {

// The descriptor this process holds open on `path`, or -1.
int descriptor_of(const fs::path& path) {
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(entry.path(), ec);
    if (!ec && fs::equivalent(target, path, ec) && !ec) return std::stoi(entry.path().filename().string());
  }
  return -1;
}

}  // namespace

TEST(ResultsH5, DiskFillingUpMidRunFailsWithTheSystemReasonAndAbandoningTheFileIsSafe) {
  // Arrange: after the first block, the descriptor HDF5 writes through is replaced by /dev/full, whose
  // writes fail with ENOSPC: the disk "fills up" under a running writer.
  scratch_dir dir;
  const fs::path path = dir / "results.h5";
  const sample s = make_sample(2000, 3, 1, 0, 20, true);
  std::string message;
  int system_error = 0;
  {
    io::results_writer w(path, s.layout);
    w.write_members(s.block(0, 250));
    const int fd = descriptor_of(w.temporary_path());
    ASSERT_GE(fd, 0);
    const int full = ::open("/dev/full", O_RDWR | O_CLOEXEC);
    ASSERT_GE(full, 0);
    ASSERT_EQ(::dup2(full, fd), fd);
    ::close(full);

    // Act
    try {
      for (long first = 250; first < 2000; first += 250) w.write_members(s.block(first, 250));
      w.commit();
    } catch (const io::io_error& e) {
      message = e.what();
      system_error = e.system_error;
    }
  }  // the writer abandons the file; HDF5 must not be left with a half-closed file (it would crash at exit)

  // Assert
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(ENOSPC)), std::string::npos) << message;
  EXPECT_EQ(system_error, ENOSPC);
  EXPECT_TRUE(dir.entries().empty());
  // HDF5 still works in this process.
  write_sample(make_sample(3, 1, 0, 0, 1, false), dir / "after.h5");
  EXPECT_TRUE(fs::exists(dir / "after.h5"));
}

TEST(ResultsH5, CreatingInAMissingDirectoryFailsNamingThePath) {
  scratch_dir dir;
  const fs::path path = dir.path() / "no" / "such" / "results.h5";
  const sample s = make_sample(1, 1, 0, 0, 1, false);

  try {
    io::results_writer w(path, s.layout);
    FAIL() << "creating " << path << " should fail";
  } catch (const io::io_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find(std::strerror(ENOENT)), std::string::npos) << what;
    EXPECT_EQ(e.system_error, ENOENT);
  }
  EXPECT_TRUE(dir.entries().empty());
}

// ====================================================================================================
// members.csv
// ====================================================================================================

namespace {

sample csv_sample() {
  sample s;
  s.layout.model = "test_model";
  s.layout.members = 3;
  s.layout.n = 2;
  s.layout.m = 1;
  s.layout.trajectories = false;
  s.layout.varied_names = {"params.L", "initial.theta, degrees"};
  s.status = {member_status::success, member_status::newton_failure, member_status::max_steps};
  s.counters.resize(3);
  s.counters[0].steps = 812;
  s.counters[1].steps = 3;
  s.counters[2].steps = 500000;
  s.final_t = {3.0, 0.125, 2.5};
  s.inputs = {1.5, 0.1, 2.0, -0.0, 1e-300, 123456789.0};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // y_final rows: (q0, q1, v0, v1, lambda, mu); only q is written.
  s.y_final = {0.1, -0.25, 9, 9, 9, 9,  //
               nan, inf, 9, 9, 9, 9,    //
               1.0 / 3.0, -inf, 9, 9, 9, 9};
  return s;
}

}  // namespace

TEST(MembersCsv, WritesAHeaderAndOneRowPerMemberInMemberOrder) {
  // Arrange
  scratch_dir dir;
  const sample s = csv_sample();

  // Act: two blocks, in order.
  {
    io::members_csv_writer w(dir / "members.csv", s.layout);
    w.write_members(s.block(0, 2));
    w.write_members(s.block(2, 1));
    w.commit();
  }

  // Assert: shortest round-trip numbers, status names, a quoted name with a comma.
  EXPECT_EQ(read_text(dir / "members.csv"),
            "member,params.L,\"initial.theta, degrees\",status,steps,final_t,q0,q1\n"
            "0,1.5,0.1,success,812,3,0.1,-0.25\n"
            "1,2,-0,newton_failure,3,0.125,nan,inf\n"
            "2,1e-300,123456789,max_steps,500000,2.5,0.3333333333333333,-inf\n");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"members.csv"}));
}

TEST(MembersCsv, NamesTheCoordinateColumnsAsTheModelNamesItsCoordinates) {
  // Arrange
  scratch_dir dir;
  sample s = csv_sample();
  s.layout.coordinate_names = {"xb", "yb"};

  // Act
  {
    io::members_csv_writer w(dir / "members.csv", s.layout);
    w.write_members(s.block(0, 3));
    w.commit();
  }

  // Assert
  const std::string text = read_text(dir / "members.csv");
  EXPECT_EQ(text.substr(0, text.find('\n')), "member,params.L,\"initial.theta, degrees\",status,steps,final_t,xb,yb");
}

TEST(MembersCsv, NamesACoordinateByItsIndexWhereItsNameWouldBeAmbiguous) {
  // Arrange: names of other columns and /members datasets, a duplicate, index names of other entries,
  // a varied input's name, characters the plot's --outputs cannot carry, an empty name.
  io::results_layout layout;
  layout.varied_names = {"gamma"};
  layout.coordinate_names = {"x",  "steps", "final_t", "member", "q0",       "y",   "y",  "lambda_1", "v.w",
                             "q9", "v0",    "mu2",     "gamma",  "rejected", "a b", "",   "q16",      "theta"};
  layout.n = static_cast<int>(layout.coordinate_names.size());

  // Act
  const std::vector<std::string> columns = io::coordinate_columns(layout);

  // Assert: every ambiguous name falls back to q<j>; q16 is coordinate 16's own index name.
  EXPECT_EQ(columns, (std::vector<std::string>{"x", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11",
                                               "q12", "q13", "q14", "q15", "q16", "theta"}));
}

TEST(MembersCsv, NamesCoordinatesByIndexWhenTheModelGivesNoNames) {
  io::results_layout layout;
  layout.n = 3;

  EXPECT_EQ(io::coordinate_columns(layout), (std::vector<std::string>{"q0", "q1", "q2"}));
}

TEST(MembersCsv, RejectsBlocksOutOfMemberOrder) {
  scratch_dir dir;
  const sample s = csv_sample();
  io::members_csv_writer w(dir / "members.csv", s.layout);

  EXPECT_THROW(w.write_members(s.block(1, 2)), std::logic_error);
  w.write_members(s.block(0, 1));
  EXPECT_THROW(w.write_members(s.block(0, 1)), std::logic_error);
  EXPECT_THROW(w.commit(), std::logic_error);  // members 1 and 2 are missing
}

TEST(MembersCsv, InjectedWriteFailureThrowsIoErrorAndLeavesNoFile) {
  scratch_dir dir;
  const sample s = csv_sample();
  {
    io::fault_injection::scoped_write_failure disk_full(70);  // room for the header only
    io::members_csv_writer w(dir / "members.csv", s.layout);

    try {
      w.write_members(s.block(0, 3));
      FAIL() << "the write should have failed";
    } catch (const io::io_error& e) {
      EXPECT_NE(std::string(e.what()).find((dir / "members.csv").string()), std::string::npos) << e.what();
      EXPECT_EQ(e.system_error, ENOSPC);
    }
    EXPECT_THROW(w.commit(), io::io_error);
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(MembersCsv, CreatingInAMissingDirectoryFailsNamingThePath) {
  scratch_dir dir;
  const fs::path path = dir.path() / "missing" / "members.csv";
  try {
    io::members_csv_writer w(path, csv_sample().layout);
    FAIL() << "creating " << path << " should fail";
  } catch (const io::io_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
}

// ---- the reader's format check (check_results_file; docs/RESULTS-FORMAT.md) -------------------------

namespace {

// A small results file from the writer, then its root attribute `name` rewritten (int64) or removed.
fs::path written_results(const scratch_dir& dir) {
  const fs::path path = dir / "results.h5";
  const sample s = make_sample(3, 2, 1, 0, 2, true);
  io::run_info run;
  run.lockstep_version = "9.9.9";
  io::results_writer w(path, s.layout);
  w.write_members(s.block(0, 3));
  w.set_run_info(run);
  w.commit();
  return path;
}

void rewrite_root_attribute(const fs::path& path, const char* name, std::optional<std::int64_t> value) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  ASSERT_GE(H5Adelete(file, name), 0);
  if (value) {
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(file, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(attribute, 0);
    EXPECT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, &*value), 0);
    H5Aclose(attribute);
    H5Sclose(space);
  }
  H5Fclose(file);
}

// The message of the io_error check_results_file throws for `path` ("" when it throws none).
std::string refusal(const fs::path& path) {
  try {
    io::check_results_file(path);
  } catch (const io::io_error& e) {
    EXPECT_EQ(e.path, path);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ResultsFormat, AcceptsTheFilesThisWriterWrites) {
  scratch_dir dir;
  const fs::path path = written_results(dir);
  EXPECT_EQ(io::results_format_version, 1);
  EXPECT_EQ(refusal(path), "");
}

TEST(ResultsFormat, RefusesAnotherVersionNamingTheFileTheVersionFoundAndTheVersionSupported) {
  // Arrange
  scratch_dir dir;
  const fs::path path = written_results(dir);
  rewrite_root_attribute(path, "format_version", 2);

  // Act
  const std::string message = refusal(path);

  // Assert
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("results format version 2 (written by lockstep 9.9.9)"), std::string::npos) << message;
  EXPECT_NE(message.find("this lockstep reads version 1"), std::string::npos) << message;
}

TEST(ResultsFormat, RefusesALockstepFileWhoseVersionIsMissing) {
  scratch_dir dir;
  const fs::path path = written_results(dir);
  rewrite_root_attribute(path, "format_version", std::nullopt);
  EXPECT_NE(refusal(path).find("without a readable integer format_version"), std::string::npos) << refusal(path);
}

TEST(ResultsFormat, ReadsAFileWrittenBeforeTheFormatAttributesAsVersionOne) {
  scratch_dir dir;
  const fs::path path = written_results(dir);
  rewrite_root_attribute(path, "format_version", std::nullopt);
  rewrite_root_attribute(path, "format", std::nullopt);
  EXPECT_EQ(refusal(path), "");
}

TEST(ResultsFormat, RefusesOtherFilesNamingThem) {
  // Arrange: a missing file, a text file, and an HDF5 file that is not a lockstep results file.
  scratch_dir dir;
  const fs::path text = dir / "members.csv";
  std::ofstream(text) << "member,status\n";
  const fs::path foreign = dir / "foreign.h5";
  H5Fclose(H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));

  // Act, Assert
  EXPECT_NE(refusal(dir / "missing.h5").find("no such file"), std::string::npos);
  EXPECT_NE(refusal(text).find(text.string() + "': not an HDF5 file"), std::string::npos) << refusal(text);
  EXPECT_NE(refusal(foreign).find("not a lockstep results file"), std::string::npos) << refusal(foreign);
}
