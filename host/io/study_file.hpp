// host/io/study_file.hpp — the study file of `lockstep run STUDY.toml`: TOML in, a checked
// study_spec out, or one compiler-style diagnostic naming the file, line, column and key.
//
// The file (every section but [model] name and [time] t1 is optional; defaults in brackets):
//
//   [model]                                  one of name and source is required:
//   name = "double_pendulum"                 a built-in model (model/registry.hpp)
//   source = "crane.hpp"                     or a model file, relative to the study file: a C++ header or
//                                            an equations file (.toml), compiled on first use
//                                            (host/model_files, docs/MODEL-FILES.md); with it, name
//                                            picks one model of a header that defines several
//   params  = { m1 = 1.0, L2 = 0.8 }         overrides of the model's parameter defaults        [none]
//   initial = { theta1 = 2.0 }               overrides of the model's named initial inputs      [none]
//
//   [solver]
//   method = "radau5"        bdf | radau5 | radau3 | euler | rhoinf   (method/methods.hpp)       ["radau5"]
//   formulation = "index3"   index3 | ggl | index1 | projected-invariants                        ["index3"]
//   projection = "none"      none | coordinate | post-stabilization   after every accepted step  ["none"]
//                            (formulation/projection.hpp)
//   metric = "mass"          mass | euclidean        metric of the initial and step projections ["mass"]
//   init = "auto"            auto | project | strict   initial values off the constraints         ["auto"]
//                            (stepper/initialize.hpp): each member's start is projected onto the
//                            constraints. auto refuses a member whose position correction is gross
//                            (status inconsistent_initial): beyond the tolerance below and above 10 %
//                            of the configuration's size max(|q0|, |q|) (max-norms; velocities are
//                            never gross: a driven constraint fixes them). project accepts any
//                            correction; strict refuses one above init_tolerance. The run's summary
//                            warns of corrections beyond the tolerance, |dq| > atol_q + rtol |q0| or
//                            |dv| > atol_v + rtol |v0| (stepper/options.hpp), whatever the mode
//   multipliers = "independent"   independent | minimum-norm: the multipliers reported where the
//                            solver drops dependent constraint rows (stepper/options.hpp)  ["independent"]
//   rtol = 1e-6                                      > 0                                        [1e-6]
//                            the accuracy wanted: about -log10 rtol correct digits of the positions
//                            for every method and formulation (each calibrates its error per step
//                            to it: method/tolerance_calibration.hpp); docs/METHODS.md tabulates
//                            digits and steps against the IVP Test Set
//   atol = 1e-6              a number, or { q = .., v = .., lambda = .. } (> 0; groups left
//                            out keep the default)                                              [1e-6]
//   max_steps, h_initial, h_min, h_max, max_order (bdf only), newton_tol and newton_max_iterations
//   (bdf and rhoinf: the Radau IIA methods take RADAU5's),
//   consistent_multipliers, init_tolerance (init = "strict" only), fixed_h, fixed_order (bdf only,
//   needs fixed_h); h_initial, h_min and h_max are refused with fixed_h (they would have no effect)
//                            as in stepper/options.hpp, with its defaults; fixed_h must divide
//                            [t0, t1] into whole steps (refused otherwise, naming the nearest
//                            fixed_h that does: the k-th step ends at t0 + k h)
//   baumgarte = { alpha, beta }   Baumgarte's gains (>= 0) for formulation index1 [0, 0]; non-zero
//                                 gains with another formulation are refused (0, 0 is no stabilization
//                                 and accepted with any formulation)
//   rho_inf = 0.6                 method rhoinf only: its spectral radius at infinity, in [0, 1];
//                                 1 (no damping) is refused with formulation index3, and needs
//                                 fixed_h with the others                                       [0.6]
//   Radau IIA on index 3 is the default because it is the combination the library accepts with error
//   control on every model (BDF needs ggl, or fixed steps on index3: method/bdf.hpp).
//
//   [time]
//   t0 = 0.0                                                                                    [0]
//   t1 = 10.0                required, finite, > t0
//   save = { every = 0.05 }  or { times = [ ... ] }, exactly one of the two      [every = (t1 - t0) / 100]
//     every: t0, t0 + every, t0 + 2 every, ... below t1, then t1 itself; a point within
//            1e-12 (t1 - t0) of t1 is dropped in favour of t1 (at most 1,000,000 save times).
//     times: each inside [t0, t1]; sorted, duplicates removed, t1 appended if absent (same rule).
//
//   [ensemble]
//   members = 1              >= 1, drawn points per replicate; with nothing varied, that many   [1]
//                            identical members (a throughput measurement)
//   sampler = "random"       random | sobol | lhs | grid (grid: every vary entry a grid)        ["random"]
//   seed = 1                 >= 0                                                               [1]
//   replicates = 1           >= 1                                                               [1]
//   The study has G x members x replicates members (G: the product of the grids' sizes, 1 without
//   grids; G alone for a pure grid), at most 2^53; `lockstep run` refuses, at the largest of these
//   factors, a count whose per-member results would not fit in the machine's physical memory
//   (host/cli/run_study_impl.hpp).
//   A key without effect is refused, as every such key of the file: members, replicates and seed
//   with a pure grid (every vary entry a grid: one member per grid point, nothing drawn); seed and
//   sampler when nothing is varied.
//   [ensemble.vary]          "params.NAME" or "initial.NAME" (quoted, or as a dotted key) =
//     { uniform = [lower, upper] }            lower <= upper
//     { normal = { mean = .., std = .. } }    std >= 0
//     { lognormal = { mu = .., sigma = .. } } sigma >= 0
//     { grid = [v1, v2, ...] }                non-empty
//   The entries keep the order in which they are written (it fixes the member numbering of grids:
//   study/sampling_plan.hpp). A variable may also have a fixed override in [model]; the varied value
//   replaces it.
//
//   [output]
//   trajectories = false     store q, v, lambda of every member at every save time              [false]
//   statistics = [...]       mean | std | min | max | qNN | qNN.N (the NN percent quantile, 0..100)
//                                                            [mean, std, min, max, q05, q50, q95]
//   quantile_memory_mb = 1024  memory budget of the quantile estimators, >= 1; refused when no
//                              qNN statistic is asked for                                     [1024]
//
//   [lyapunov]               optional: Lyapunov exponents of every member (lyapunov/spectrum.hpp)
//   exponents = "all"        p leading exponents: an integer between 1 and d = 2 (n - m) - k (the
//                            dimension of the model's constraint manifold), or "all" (= d)
//                                                                  ["all"; 1 with method "clone"]
//   renormalize = 1.0        time units between re-orthonormalizations, > 0, at most 1,000,000 of
//                            them over [t0, t1]                                                 [1.0]
//   transient = 0.0          time discarded before the averages start, >= 0 and < t1 - t0; some
//                            re-orthonormalization (at t0 + j renormalize, j >= 1) must fall after it
//                            and before t1                                                      [0]
//   method = "qr"            qr | clone   qr: discrete QR on p tangent directions (needs a solver the
//                            tangents support: bdf or radau5/radau3/euler on ggl or index3, no
//                            projection — lyapunov/tangent.hpp; others are refused here, at this key);
//                            clone: the two-trajectory estimate of the largest exponent (any solver;
//                            exponents must then be 1)                                         ["qr"]
//   separation = 1e-6        clone only: the clone's distance from the member, in the metric, > 0 [1e-6]
//   metric = "mass"          mass | euclidean: the inner product on the tangent space        ["mass"]
//   history = true           keep the running estimates at every re-orthonormalization (results.h5
//                            /lyapunov/history); false keeps the final exponents only         [true]
//   Each member is solved twice: once as without [lyapunov] (trajectories, statistics and /members are
//   exactly what they would be without the section) and once by the Lyapunov driver, whose own status
//   and counters go to /lyapunov (host/cli/run_study_impl.hpp). Checkpointed, resumed and MPI runs
//   journal each member's Lyapunov values with its plain ones and give the same results
//   (host/cli/run_study_journaled.hpp); a checkpoint records the settings, and a resume whose study
//   resolves them otherwise is refused.
//
// Types. Every number must be finite (TOML's nan and inf are refused; leave h_max out for "no limit").
// An integer is accepted where a real number is expected. A real number is accepted where an integer
// is expected only when it is integral and at most 2^53 in magnitude (members = 1e4 is fine, 2.5 is
// not). Any key not listed above is an error, in every table.
//
// Errors. One study_error, for the first problem found, whose what() reads like a compiler diagnostic:
//     study.toml:12:9: error: [solver] rtol must be > 0 (got -1)
//     study.toml:7:1: error: unknown key "atoll" in [solver]; did you mean "atol"?
// TOML syntax errors (from toml++) come out the same way; a file that cannot be read reads
//     study.toml: error: cannot open: No such file or directory
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/engine/engine.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/options.hpp"
#include "lockstep/study/sampling_plan.hpp"

namespace lockstep::io {

class study_error : public std::runtime_error {
 public:
  // line = 0: the error has no position in the file (it could not be read).
  study_error(std::string source, int line, int column, std::string message);

  const std::string& source() const noexcept { return source_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  const std::string& message() const noexcept { return message_; }  // without "file:line:col: error: "

 private:
  std::string source_;
  int line_;
  int column_;
  std::string message_;
};

// A parameter or initial input set in [model], by its index in the model's params or inputs table.
struct indexed_value {
  int index = 0;
  double value = 0.0;
  friend bool operator==(const indexed_value&, const indexed_value&) = default;
};

struct output_spec {
  bool trajectories = false;
  // As written in the file (so "q5" stays "q5"), in the file's order.
  std::vector<std::string> statistics = {"mean", "std", "min", "max", "q05", "q50", "q95"};
  // The probability in [0, 1] of each quantile entry of `statistics`, in the same order ("q05" ->
  // 0.05); the non-quantile entries have none.
  std::vector<double> quantiles = {0.05, 0.50, 0.95};
  long quantile_memory_mb = 1024;
};

// The [lyapunov] section (see the top of this file); enabled = false when the file has none.
enum class lyapunov_method : int { qr = 0, clone = 1 };
enum class lyapunov_metric : int { mass = 0, euclidean = 1 };

struct lyapunov_spec {
  bool enabled = false;
  int exponents = 0;  // p, resolved: "all" is the manifold dimension d
  int dimension = 0;  // d = 2 (n - m) - k of the model
  double renormalize = 1.0;
  double transient = 0.0;
  lyapunov_method method = lyapunov_method::qr;
  double separation = 1e-6;  // clone only
  lyapunov_metric metric = lyapunov_metric::mass;
  bool history = true;
  int line = 0, column = 0;  // where [lyapunov] is written, for diagnostics at run time
};

inline const char* lyapunov_method_name(lyapunov_method m) { return m == lyapunov_method::qr ? "qr" : "clone"; }
inline const char* lyapunov_metric_name(lyapunov_metric m) { return m == lyapunov_metric::mass ? "mass" : "euclidean"; }

// The most re-orthonormalizations (and so running estimates) a member of the study can have: the
// drivers re-orthonormalize at the first accepted step at or after each t0 + j renormalize (j >= 1)
// and once more at t1 (QR), or at t0 + j renormalize < t1 and t1 (clone): at most
// floor((t1 - t0) / renormalize) + 1; one more absorbs the rounding of the drivers' running sums.
long lyapunov_history_length(const lyapunov_spec& l, double t0, double t1);

// The method of a study whose [solver] names none: what the study runs and what a
// model file's engine is compiled for (model_reference) before the [solver] table is read.
inline constexpr method_kind study_default_method = method_kind::radau5;

struct study_spec {
  std::filesystem::path path;  // as given to load_study_file (parse_study: its source_name)
  std::string name;            // the file's stem: "study" for "runs/study.toml"
  std::string text;            // the whole file, for the record the results keep

  std::string model;                   // the model's name (a built-in one, or a model file's)
  std::string model_source;            // the model file, absolute ("" for a built-in model)
  std::string model_identity;          // what a resumed run must find again: "" for a built-in model,
                                       // the engine's cache key for a model file
  std::vector<indexed_value> params;   // overrides of the parameter defaults, by increasing index
  std::vector<indexed_value> initial;  // overrides of the initial-input defaults, by increasing index

  solver_options solver = [] {
    solver_options defaults;
    defaults.method = study_default_method;
    defaults.form = formulation::index3;
    return defaults;
  }();

  double t0 = 0.0;
  double t1 = 0.0;
  std::vector<double> save_times;  // sorted, strictly increasing, in [t0, t1], ending with t1

  study::sampling_plan plan;
  // Where the member count is written, for the run's diagnostics: the value of its largest factor
  // (members, replicates or a grid entry), else [ensemble], else 1:1.
  int member_count_line = 1, member_count_column = 1;
  output_spec output;
  lyapunov_spec lyapunov;
};

// [model] source = FILE: the model file (path resolved against the study file's directory) and the
// name that picks one of its models ("" when not given). A resolver returns the model's tables and
// identity, or throws std::exception with a sentence for the user (the reader places it at the
// source key).
struct model_reference {
  std::string name;
  std::string written;          // as in the study file
  std::filesystem::path path;   // resolved
  // What the study will run the model with, as far as it names it ([solver] method, the default when
  // it names none or none that exists: the reader refuses that later, at the key; whether it has
  // [lyapunov]): a model file's engine is compiled for these (model_files::engine_contents).
  method_kind method = study_default_method;
  bool tangents = false;
};
struct resolved_model {
  model_info info;              // its spans must outlive the study (an engine's tables do)
  std::string identity;         // study_spec::model_identity
};
using model_file_resolver = std::function<resolved_model(const model_reference&)>;

// The tables of an engine, for a resolver (kept as long as the program, like the engine).
model_info model_info_of(const engine& model);

// Reads and checks a study file. Throws study_error. Without a resolver, [model] source is refused
// (the built-in models need none).
study_spec load_study_file(const std::filesystem::path& path, const model_file_resolver& resolve = {});

// Checks a study given as text; source_name names it in diagnostics and gives spec.path and
// spec.name. Throws study_error.
study_spec parse_study(std::string_view text, std::string_view source_name, const model_file_resolver& resolve = {});

// The candidate closest to `word` by edit distance (optimal string alignment: insertions, deletions,
// substitutions and swaps of neighbours, ignoring case), if it is within max(2, |word| / 3) edits and
// shares something with the word; "" otherwise. Ties go to the earlier candidate. For "did you mean"
// hints.
std::string closest_name(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace lockstep::io
