// host/io/results_h5.hpp — results.h5, the file `lockstep run` writes.
//
// The writer receives members in contiguous ranges (member_block), in any order, and never holds more
// than one block: a study of 10^6 members that keeps statistics only streams through it chunk by
// chunk. It writes into a temporary beside the final path and renames it into place on commit()
// (output_file.hpp), so a results.h5 under its final name is always complete.
//
// Layout: docs/RESULTS-FORMAT.md, the reference for format version results_format_version (below).
// A change that a reader of the current version would misread (a dataset renamed, removed or reshaped,
// a meaning changed) raises the version and updates that document and both readers' checks
// (check_results_file below, host/cli/lockstep_plot.py); a new dataset or attribute does not.
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

#include <array>
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
#include "lockstep/method/options.hpp"

namespace lockstep::io {

// The results format this lockstep writes and reads: the root attributes format and format_version.
inline constexpr std::string_view results_format = "lockstep-results";
inline constexpr std::int64_t results_format_version = 1;

// Checks that `path` is a lockstep results file this lockstep can read: format = results_format and
// format_version = results_format_version. A file written before the root carried these attributes
// (none of them, but /t and /members/status) has version 1's layout and is accepted as version 1.
// Throws io_error naming the file otherwise: missing, not HDF5, not a lockstep results file, or of
// another version ("results format version 2 ...; this lockstep reads version 1").
void check_results_file(const std::filesystem::path& path);

// The one-value-per-member datasets of /members besides status: the int64 counters and the float64
// values (docs/RESULTS-FORMAT.md). members.csv keeps its coordinate columns apart from these names
// (coordinate_columns, members_csv.hpp), which `lockstep plot --quantity` also takes.
inline constexpr std::array<const char*, 10> member_integer_datasets = {
    "steps", "rejected", "newton_iterations", "newton_failures", "jacobian_evaluations",
    "lu_factorizations", "model_evaluations", "projections", "dropped_rows", "rank_changes"};
inline constexpr std::array<const char*, 9> member_real_datasets = {
    "final_t", "final_h", "max_phi", "max_velocity_residual", "init_q_correction", "init_v_correction",
    "max_projection_q", "max_projection_v", "max_dropped_phi"};
// The int64 counters of a method that takes explicit steps (dopri5, tsit5, auto: takes_explicit_steps), written
// for such runs only.
inline constexpr std::array<const char*, 3> member_explicit_datasets = {"explicit_steps", "method_switches",
                                                                        "stiffness_detections"};

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

// The /events group of a model with event functions (functions empty: none).
struct events_layout {
  struct function {
    std::string name, direction, action, description;
  };
  std::vector<function> functions;  // E
  int capacity = 0;                 // C: records kept per member
  double time_tolerance = 0.0;      // the study's (0: the default)
  int interior_checks = 0;
};

struct results_layout {
  std::string model;              // the model's registry name
  long members = 0;
  int n = 0, m = 0, k = 0;        // model sizes
  std::vector<std::string> coordinate_names;  // [n] the names of q's entries (root attribute)
  bool has_mu = false;            // the formulation has mu (ggl): write /mu and statistics' mu
  bool has_nu = false;            // the model has velocity constraints (k > 0): write /nu
  std::string multipliers = "independent";  // their convention where constraint rows are dropped (root attribute)
  // The model's derived quantities (lockstep/stepper/quantities.hpp): written after the state in every
  // per-value array (trajectories, statistics, exceedance, sensitivity indices) as their part
  // "quantities", and as the root attributes quantity_names and quantity_descriptions.
  std::vector<std::string> quantity_names, quantity_descriptions;  // [Z]
  bool trajectories = true;       // write /q, /v, /lambda (/mu, /nu, /quantities) for every member
  bool explicit_steps = false;    // the method takes explicit steps: write member_explicit_datasets
  std::vector<double> save_times;
  std::vector<std::string> varied_names;
  std::vector<int> grid_dims;     // indices into varied_names of the grid dimensions, in grid order
  std::vector<long> grid_shape;   // their lengths (the last varies fastest over members)
  int gzip_level = 1;             // 0: no compression; 1-9: deflate level (with shuffle)
  lyapunov_layout lyapunov;
  events_layout events;

  int state_size() const { return 2 * n + 2 * m + k; }  // Y: (q, v, lambda, mu, nu), state_layout
  int quantity_count() const { return static_cast<int>(quantity_names.size()); }  // Z
  // The values per member and save time: the state, then the quantities (Y + Z).
  int value_size() const { return state_size() + quantity_count(); }
  int save_count() const { return static_cast<int>(save_times.size()); }
};

// The Lyapunov results of members [first, first + count), member-major (p, H from the layout).
struct lyapunov_values {
  const member_status* status = nullptr;           // [count]
  const double* exponents = nullptr;               // [count][p]
  const double* t_start = nullptr;                 // [count]
  const double* t_end = nullptr;                   // [count] where the run stopped (t1 unless it failed or ran out of steps)
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
  const double* y = nullptr;                  // [count][S][Y + Z]; needed only when trajectories are stored
  const double* y_final = nullptr;            // [count][Y]; final_q and final_v are its q and v parts
  const lyapunov_values* lyapunov = nullptr;  // required when layout.lyapunov.exponents > 0
  // Required when the layout has events (E functions, capacity C; lockstep/ensemble.hpp, chunk_results):
  const long* event_counts = nullptr;          // [count][E]
  const double* event_first_times = nullptr;   // [count][E]
  const long* event_records_made = nullptr;    // [count]
  const int* stop_event = nullptr;             // [count]
  const double* event_records = nullptr;       // [count][C][2 + Y]: (t, event, y)
};

// One statistic across members at every save time. Each array is [S][components]; a null pointer
// leaves that dataset out (mu and nu are written only when the layout has them).
struct statistic_values {
  const double* q = nullptr;       // [S][n]
  const double* v = nullptr;       // [S][n]
  const double* lambda = nullptr;  // [S][m]
  const double* mu = nullptr;      // [S][m]
  const double* nu = nullptr;      // [S][k]
  const std::int64_t* count = nullptr;  // [S][Y + Z] members that entered each value (value order)
  const double* quantities = nullptr;   // [S][Z]
};

// The probability that each value exceeds its threshold ([output] exceedance), in the value order (the
// state layout, then the quantities): threshold [Y + Z] (NaN: none), the others [S][Y + Z] (NaN where the
// value has no threshold).
struct exceedance_values {
  std::vector<double> threshold;
  std::vector<double> probability, low, high;
  const std::int64_t* above = nullptr;  // [S][Y + Z] the members above the threshold
  const std::int64_t* count = nullptr;  // [S][Y + Z] the members whose value entered
  int replicates = 0;  // the replicates the intervals come from (Sobol', LHS); 0: Wilson's intervals
};

// The sensitivity indices of every value at every save time over the P varied inputs
// (study/sensitivity_indices.hpp), in the value order: each index array [S][Y + Z][P], second-order ones
// [S][Y + Z][P][P] (null without them).
struct sensitivity_values {
  std::vector<std::string> inputs;         // the P varied inputs' names
  const double* first = nullptr;           // S_i
  const double* first_conf = nullptr;      // the half-widths of their intervals
  const double* total = nullptr;           // S_Ti
  const double* total_conf = nullptr;
  const double* second = nullptr;          // S_ij at [i][j], i < j; NaN elsewhere
  const double* second_conf = nullptr;
  const std::int64_t* rows_used = nullptr;  // [S][Y + Z] the design rows that entered each value's indices
  // With [lyapunov], the indices of the p exponents: [p][P], and rows_used [p].
  int exponents = 0;
  const double* lyapunov_first = nullptr;
  const double* lyapunov_first_conf = nullptr;
  const double* lyapunov_total = nullptr;
  const double* lyapunov_total_conf = nullptr;
  const std::int64_t* lyapunov_rows_used = nullptr;
  std::int64_t base = 0;                   // N, the design's rows per replicate
  std::int64_t replicates = 1;
  double confidence = 0.95;
  std::string intervals;                   // "replicates" or "bootstrap"
  std::int64_t resamples = 0;              // the bootstrap's; 0 with replicates
  double max_failed = 0.0;
};

// The derivative-based measures of every value of the final state over the P varied inputs
// (study/derivative_measures.hpp), in the state layout: each measure [Y][P], variance and members_used [Y].
struct derivative_measure_values {
  std::vector<std::string> inputs;  // the P varied inputs' names
  double t = 0.0;                   // the time of the final state, t1
  std::int64_t members = 0;
  double max_failed = 0.0;
  std::string refused;              // why there are none (all NaN), or ""
  const double* nu = nullptr;       // E[(dy/dx_i)^2] (E[(x_i dy/dx_i)^2] for a lognormal input)
  const double* nu_stderr = nullptr;
  const double* total_bound = nullptr;  // C_i nu_i / V, an upper bound on S_Ti
  const double* variance = nullptr;     // V
  const std::int64_t* members_used = nullptr;
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
  // The same from arrays in the value order: y [S][Y + Z] (its q, v, lambda, mu, nu and quantities parts
  // are written).
  void write_statistic_state(std::string_view name, double probability, const double* y, const std::int64_t* count);

  // /exceedance: threshold, probability, low, high, above and count, with the interval's attributes.
  void write_exceedance(const exceedance_values& values);

  // The distribution of each event's first time in /events (study/first_times.hpp): fraction,
  // fraction_low, fraction_high [S][E], first_time_quantiles [P][E] of the probabilities `quantiles`;
  // `replicates` > 0: the intervals come from the spread over that many replicates where they differ
  // (study::replicate_interval), else they are Wilson's.
  void write_event_distribution(const std::vector<double>& fraction, const std::vector<double>& low,
                                const std::vector<double>& high, const std::vector<double>& quantiles,
                                const std::vector<double>& probabilities, int replicates = 0);

  // /sensitivity: its attributes, a group per index (first, first_conf, total, total_conf) with the
  // q, v, lambda, mu, nu (and quantities) parts, the datasets second and second_conf where given, and rows_used.
  void write_sensitivity(const sensitivity_values& values);

  // /derivative_measures: its attributes, a group per measure (nu, nu_stderr, total_bound) with the q, v,
  // lambda, mu, nu parts [part][input], and the datasets variance and members_used [state].
  void write_derivative_measures(const derivative_measure_values& values);

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
