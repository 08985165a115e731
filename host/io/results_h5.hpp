// host/io/results_h5.hpp — results.h5, the file `lockstep run` writes.
//
// The writer receives members in contiguous ranges (member_block), in any order, and never holds more
// than one block: a study of 10^6 members that keeps statistics only streams through it chunk by
// chunk. It writes into a temporary beside the final path and renames it into place on commit()
// (output_file.hpp), so a results.h5 under its final name is always complete.
//
// Layout (N = members, S = save times, n/m/k = model sizes, V = varied inputs, Y = 2n + 2m + k):
//
//   /                     attributes: format = "lockstep-results", format_version = 1, model, n, m, k,
//                         members, trajectories (0/1); from set_run_info: study (the study file's
//                         text), lockstep_version, git_revision, backend, threads, wall_time_seconds;
//                         any others from set_attribute
//   /t                    float64 [S]                    save times
//   /q, /v                float64 [N, S, n]              only when layout.trajectories
//   /lambda               float64 [N, S, m]              only when layout.trajectories
//   /mu                   float64 [N, S, m]              only when trajectories and layout.has_mu (ggl,
//                                                        projected invariants)
//   /nu                   float64 [N, S, k]              only when trajectories and layout.has_nu
//   /members/status       int32 [N]                      member_status codes; attribute names (string
//                                                        [member_status_count], names[code])
//   /members/steps, rejected, newton_iterations, newton_failures, jacobian_evaluations,
//            lu_factorizations, model_evaluations, projections   int64 [N]
//   /members/final_t, final_h, max_phi, max_velocity_residual,
//            init_q_correction, init_v_correction,
//            max_projection_q, max_projection_v                  float64 [N]
//   /members/final_q, final_v   float64 [N, n]           the state at final_t (t1 for successful members)
//   /members/inputs       float64 [N, V]                 attributes names (string [V]), grid_shape
//                                                        (int64 [G], lengths of the grid dimensions in
//                                                        order), grid_dims (int32 [G], their indices
//                                                        among names); G = 0 gives empty arrays
//   /statistics           group; attribute quantile_rank_error (float64) when set
//   /statistics/<stat>/q, v     float64 [S, n]
//   /statistics/<stat>/lambda   float64 [S, m]
//   /statistics/<stat>/mu       float64 [S, m]           when has_mu; /nu float64 [S, k] when has_nu
//   /statistics/<stat>/count    int64 [S, Y]             members that entered each value, columns in the
//                                                        state layout (q, v, lambda, mu, nu), when given
//                         attribute probability (float64) on quantile groups only
//
// With layout.lyapunov.exponents = p > 0 (a study's [lyapunov] section; H =
// layout.lyapunov.history, the most running estimates a member can have):
//
//   /lyapunov             group; attributes method ("qr" | "clone"), metric ("mass" | "euclidean"),
//                         renormalize, transient, separation (clone only) (float64), dimension (d =
//                         2 (n - m) - k), exponents (p), history_length (H) (int64)
//   /lyapunov/exponents   float64 [N, p]                 the p leading exponents in the QR order
//                                                        (decreasing, up to the finite-time error of
//                                                        nearly equal ones); NaN for a member whose
//                                                        Lyapunov run failed
//   /lyapunov/status      int32 [N]                      member_status of the Lyapunov run (names as
//                                                        /members/status)
//   /lyapunov/t_start     float64 [N]                    where the averages started (after the transient)
//   /lyapunov/renormalizations  int64 [N]                re-orthonormalizations (clone: intervals) done
//   /lyapunov/steps       int64 [N]                      accepted steps of the Lyapunov run (-1: clone,
//                                                        which solves the member once per interval)
//   /lyapunov/history_t   float64 [N, H]                 times of the running estimates (H > 0 only),
//   /lyapunov/history     float64 [N, H, p]              and the estimates; NaN past a member's last
//
// Strings are variable-length UTF-8 (h5py reads them as str). Member datasets are chunked along the
// member axis and, when layout.gzip_level > 0, shuffled and deflated. The file uses the HDF5 1.8
// format (readable by every HDF5 since 1.8 and by h5py).
//
// Failures. Every failure to write becomes io_error naming the final path, the temporary and the
// system's reason ("No space left on device"); HDF5's automatic error printing is off while a writer
// works. The file is written through a small POSIX file driver of our own (results_h5.cpp) because
// HDF5 1.10 cannot close a file after a failed write (it crashes at exit): the driver records the
// first failed write and drops the rest, the writer reports it, and the abandoned file closes cleanly
// and is removed. After an io_error a writer can only be destroyed (commit throws std::logic_error).
//
// Not thread-safe: one thread owns a writer.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/io/output_file.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/stepper/options.hpp"

namespace lockstep::io {

// The /lyapunov group (exponents = 0: none).
struct lyapunov_layout {
  int exponents = 0;         // p
  int dimension = 0;         // d
  long history = 0;          // H: running estimates kept per member (0: no history datasets)
  std::string method = "qr";
  std::string metric = "mass";
  double renormalize = 1.0;
  double transient = 0.0;
  double separation = std::numeric_limits<double>::quiet_NaN();  // written only when not NaN
};

struct results_layout {
  std::string model;              // the model's registry name
  long members = 0;
  int n = 0, m = 0, k = 0;        // model sizes
  bool has_mu = false;            // the formulation has mu (ggl): write /mu and statistics' mu
  bool has_nu = false;            // the model has velocity constraints (k > 0): write /nu
  bool trajectories = true;       // write /q, /v, /lambda (/mu, /nu) for every member
  std::vector<double> save_times;
  std::vector<std::string> varied_names;
  std::vector<int> grid_dims;     // indices into varied_names of the grid dimensions, in grid order
  std::vector<long> grid_shape;   // their lengths (the last varies fastest over members)
  int gzip_level = 1;             // 0: no compression; 1-9: deflate level (with shuffle)
  lyapunov_layout lyapunov;

  int state_size() const { return 2 * n + 2 * m + k; }  // Y: (q, v, lambda, mu, nu), state_layout
  int save_count() const { return static_cast<int>(save_times.size()); }
};

// The Lyapunov results of members [first, first + count), member-major (p, H from the layout).
struct lyapunov_values {
  const member_status* status = nullptr;           // [count]
  const double* exponents = nullptr;               // [count][p]
  const double* t_start = nullptr;                 // [count]
  const std::int64_t* renormalizations = nullptr;  // [count]
  const std::int64_t* steps = nullptr;             // [count]
  const double* history_t = nullptr;               // [count][H], when H > 0
  const double* history = nullptr;                 // [count][H][p], when H > 0
};

// Members [first, first + count), member-major arrays (as ensemble_result holds them, offset by first).
struct member_block {
  long first = 0;
  long count = 0;
  const member_status* status = nullptr;      // [count]
  const member_counters* counters = nullptr;  // [count]
  const double* final_t = nullptr;            // [count]
  const double* inputs = nullptr;             // [count][V]; may be null when V = 0
  const double* y = nullptr;                  // [count][S][Y]; needed only when trajectories are stored
  const double* y_final = nullptr;            // [count][Y]; final_q and final_v are its q and v parts
  const lyapunov_values* lyapunov = nullptr;  // required when layout.lyapunov.exponents > 0
};

// One statistic across members at every save time. Each array is [S][components]; a null pointer
// leaves that dataset out (mu and nu are written only when the layout has them).
struct statistic_values {
  const double* q = nullptr;       // [S][n]
  const double* v = nullptr;       // [S][n]
  const double* lambda = nullptr;  // [S][m]
  const double* mu = nullptr;      // [S][m]
  const double* nu = nullptr;      // [S][k]
  const std::int64_t* count = nullptr;  // [S][Y] members that entered each value (state layout order)
};

// What the root attributes record about the run.
struct run_info {
  std::string study_text;        // the study file, verbatim
  std::string lockstep_version;  // e.g. "0.1.0"
  std::string git_revision;      // e.g. the output of `git describe --always --dirty`, or "unknown"
  std::string backend;           // serial | omp | cuda
  long threads = 0;
  double wall_time_seconds = 0.0;
};

class results_writer {
 public:
  // Creates the temporary beside final_path and writes /t, the root attributes from the layout and
  // the (empty) datasets. Throws io_error (missing directory, no permission, ...) naming final_path,
  // std::invalid_argument for an inconsistent layout.
  results_writer(std::filesystem::path final_path, results_layout layout);
  ~results_writer();  // not committed: closes and removes the temporary; never throws
  results_writer(const results_writer&) = delete;
  results_writer& operator=(const results_writer&) = delete;

  const results_layout& layout() const;
  const std::filesystem::path& final_path() const;
  const std::filesystem::path& temporary_path() const;

  // Any contiguous range inside [0, members), in any order; a range written twice keeps the last
  // values. Throws std::invalid_argument for a range outside the ensemble or a missing array,
  // io_error when the write fails (after which the writer can only be destroyed).
  void write_members(const member_block& block);

  // /statistics/<name>: name is a single HDF5 path component ("mean", "q05", "mean_stderr", ...).
  // probability: the quantile's probability, NaN for statistics that are not quantiles. Writing the
  // same name twice is std::logic_error.
  void write_statistic(std::string_view name, double probability, const statistic_values& values);
  void write_statistic(std::string_view name, double probability, const double* q, const double* v,
                       const double* lambda, const double* mu, const double* nu, const std::int64_t* count) {
    write_statistic(name, probability, statistic_values{q, v, lambda, mu, nu, count});
  }
  // The same from arrays in the state layout: y [S][Y] (its q, v, lambda, mu, nu parts are written).
  void write_statistic_state(std::string_view name, double probability, const double* y, const std::int64_t* count);

  // Attribute /statistics@quantile_rank_error: the bound on the rank error of approximate quantiles
  // (e.g. a sketch's epsilon); leave it unset when the quantiles are exact.
  void set_quantile_rank_error(double epsilon);

  // Root attributes; setting a name again replaces the value.
  void set_attribute(std::string_view name, std::string_view value);
  void set_attribute(std::string_view name, const char* value) { set_attribute(name, std::string_view(value)); }
  void set_attribute(std::string_view name, double value);
  void set_attribute(std::string_view name, std::int64_t value);
  template <std::integral I>
    requires(!std::same_as<I, bool> && !std::same_as<I, std::int64_t>)
  void set_attribute(std::string_view name, I value) {
    set_attribute(name, static_cast<std::int64_t>(value));
  }
  void set_run_info(const run_info& info);

  // Checks that every member was written (std::logic_error naming the first gap otherwise), flushes
  // and closes the file, fsyncs it and renames it over the final path. Throws io_error on failure,
  // leaving the final path untouched.
  void commit();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace lockstep::io
