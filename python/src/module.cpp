// python/src/module.cpp — lockstep._lockstep, the compiled half of the Python package (python/lockstep,
// docs/PYTHON.md).
//
// A thin layer over the engine boundary (docs/ARCHITECTURE.md section 5): model handles are engines
// (built-in, or a model file compiled and cached by host/model_files), and solve() is
// solve_ensemble on member-major NumPy arrays, so a member solved from Python is bitwise the member
// the `lockstep` command solves from the same inputs. lyapunov() runs members through the command's own
// Lyapunov driver (host/engine/lyapunov_batch.hpp) and sensitivities() is the engine's call for
// one member. Names, shapes and "did you mean" hints for the
// user are checked by the Python package; this layer checks again what would otherwise be undefined
// (sizes, option names) and raises ValueError.
//
// The solve runs without the GIL. Ctrl-C, two ways to the same end: (1) a SIGINT handler of this
// module, chained before Python's for the solve's duration, raises a flag that
// run_options::stop_requested reads, so the backend's threads stop taking blocks within one block
// (sigint_watch below); the scheduler throws run_stopped after the launch. (2) The scheduler calls
// run_options::on_progress on the calling thread after every launch, outside any parallel region;
// there this module takes the GIL and lets Python run its signal handlers (PyErr_CheckSignals), and
// when one raised (KeyboardInterrupt) or the progress callback raised, throws a C++ exception. Either
// way solve_ensemble unwinds through its own RAII storage (chunk buffers are std::vector: nothing
// leaks), and once the GIL is held again the Python error (the one saved at the throw, or what
// Python's SIGINT handler raises) comes out of solve().
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host/core/instruction_set.hpp"
#include "host/model_files/install_layout.hpp"
#include "host/model_files/model_compiler.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/engine/builtin.hpp"
#include "host/engine/lyapunov_batch.hpp"
#include "host/engine/member_quantities.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/model/concept.hpp"

namespace py = pybind11;

namespace {

// A model as Python sees it: the engine (alive as long as the program) and where it came from.
// A model's engine. A model file's engine holds what it was loaded for (model_files::engine_contents:
// the model's tables and Radau IIA 5 at first); a solve that needs another method or the tangents
// loads the engine with them too (compiling only the parts the cache lacks), and every copy of the
// handle sees the larger engine from then on. A loaded engine is never changed: a larger one replaces
// it in `current`, and a call that runs without the GIL holds its own `loaded` until it returns, so
// another thread's larger engine cannot change the table under it.
struct model_handle {
  struct loaded {
    lockstep::engine model;
    lockstep::model_files::engine_contents contents;
  };
  struct latest {
    std::shared_ptr<const loaded> engine;  // read and replaced with the GIL held
  };
  std::shared_ptr<latest> current;  // shared by every copy of the handle
  static std::shared_ptr<latest> holding(const lockstep::engine& model,
                                         const lockstep::model_files::engine_contents& contents) {
    return std::make_shared<latest>(latest{std::make_shared<const loaded>(loaded{model, contents})});
  }
  std::string source;     // the model file, absolute; "" for a built-in model
  std::string pick;       // which model of the file
  std::string cache_key;  // the model's identity in the cache; "" for a built-in model
  bool compiled = false;  // its first load compiled it (false: built in, or found in the cache)
  py::object announce;    // the compile progress callback, or None

  const lockstep::engine& model() const { return current->engine->model; }
  // The engine with at least `needed` (a built-in engine holds everything), for the caller to hold
  // while it runs. Called with the GIL held.
  std::shared_ptr<const loaded> with(const lockstep::model_files::engine_contents& needed) const;
};

// A model file's engine compiled for `contents` (a ValueError with the compiler's messages when it
// cannot be).
lockstep::model_files::loaded_model load_engine(const std::string& path, const std::string& name,
                                                const lockstep::model_files::engine_contents& contents,
                                                const py::object& announce) {
  lockstep::model_files::compile_settings settings;
  settings.contents = contents;
  if (!announce.is_none())
    settings.progress = [&announce](const std::string& line) {
      py::gil_scoped_acquire gil;
      announce(line);
    };
  std::optional<lockstep::model_files::loaded_model> loaded;
  std::string failure;
  {
    // A compile takes seconds and runs the compiler as a child process: other Python threads go on.
    py::gil_scoped_release released;
    try {
      loaded = lockstep::model_files::load_model_file({path, name}, settings);
    } catch (const lockstep::model_files::model_file_error& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) throw py::value_error(failure);
  return *loaded;
}

std::shared_ptr<const model_handle::loaded> model_handle::with(
    const lockstep::model_files::engine_contents& needed) const {
  // load_engine lets other threads run while it compiles; one of them may have installed a larger
  // engine meanwhile, so the union is taken again until the engine installed covers both.
  while (!source.empty() && !current->engine->contents.covers(needed)) {
    const lockstep::model_files::engine_contents wanted = current->engine->contents | needed;
    lockstep::engine model = load_engine(source, pick, wanted, announce).model;
    if (wanted.covers(current->engine->contents))
      current->engine = std::make_shared<const loaded>(loaded{std::move(model), wanted});
  }
  return current->engine;
}

using c_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A contiguous double array of exactly `shape`, from any float array in any order; ValueError naming
// `what` and both shapes otherwise.
c_array as_shape(const py::handle& object, const char* what, std::vector<py::ssize_t> shape) {
  c_array a = c_array::ensure(object);
  if (!a) throw py::value_error(std::string(what) + " must be an array of numbers");
  auto describe = [](const std::vector<py::ssize_t>& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
  };
  std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape) throw py::value_error(std::string(what) + " must have shape " + describe(shape) + ", got " + describe(got));
  return a;
}

// A NumPy array that owns `values` (moved, not copied).
template <class T>
py::array owned_array(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* held = new std::vector<T>(std::move(values));
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, held->data(), owner);
}

py::list value_table(std::span<const lockstep_value_info> values) {
  py::list out;
  for (const auto& v : values) out.append(py::make_tuple(v.name, v.default_value, v.description ? v.description : ""));
  return out;
}

// ---- solver options from a dict --------------------------------------------------------------------

template <class Enum, std::size_t N>
Enum choose(const py::handle& value, const char* key, const std::pair<const char*, Enum> (&choices)[N]) {
  const std::string name = py::cast<std::string>(value);
  std::string valid;
  for (const auto& [choice, e] : choices) {
    if (name == choice) return e;
    if (!valid.empty()) valid += ", ";
    valid += choice;
  }
  throw py::value_error(std::string("unknown ") + key + " '" + name + "' (one of " + valid + ")");
}

constexpr std::pair<const char*, lockstep::method_kind> method_choices[] = {
    {"bdf", lockstep::method_kind::bdf},     {"radau5", lockstep::method_kind::radau5},
    {"radau3", lockstep::method_kind::radau3}, {"euler", lockstep::method_kind::euler},
    {"rhoinf", lockstep::method_kind::rhoinf}, {"dopri5", lockstep::method_kind::dopri5},
    {"auto", lockstep::method_kind::automatic}, {"tsit5", lockstep::method_kind::tsit5}};
constexpr std::pair<const char*, lockstep::formulation> formulation_choices[] = {
    {"index3", lockstep::formulation::index3},
    {"ggl", lockstep::formulation::ggl},
    {"index1", lockstep::formulation::index1},
    {"projected-invariants", lockstep::formulation::projected_invariants}};
constexpr std::pair<const char*, lockstep::projection_kind> projection_choices[] = {
    {"none", lockstep::projection_kind::none},
    {"coordinate", lockstep::projection_kind::coordinate},
    {"post-stabilization", lockstep::projection_kind::post_stabilization}};
constexpr std::pair<const char*, lockstep::projection_metric> metric_choices[] = {
    {"mass", lockstep::projection_metric::mass}, {"euclidean", lockstep::projection_metric::euclidean}};
constexpr std::pair<const char*, lockstep::init_mode> init_choices[] = {{"auto", lockstep::init_mode::automatic},
                                                                        {"project", lockstep::init_mode::project},
                                                                        {"strict", lockstep::init_mode::strict}};
constexpr std::pair<const char*, lockstep::multiplier_convention> multiplier_choices[] = {
    {"independent", lockstep::multiplier_convention::independent},
    {"minimum-norm", lockstep::multiplier_convention::minimum_norm}};

// The study files' defaults (radau5 on index3: the combination accepted with error control on every
// model), then the dict's keys, named as the fields of solver_options.
lockstep::solver_options solver_options_of(const py::dict& given) {
  lockstep::solver_options o;
  o.method = lockstep::method_kind::radau5;
  o.form = lockstep::formulation::index3;
  for (const auto& [key_object, value] : given) {
    const std::string key = py::cast<std::string>(key_object);
    if (key == "method") o.method = choose(value, "method", method_choices);
    else if (key == "formulation") o.form = choose(value, "formulation", formulation_choices);
    else if (key == "projection") o.projection = choose(value, "projection", projection_choices);
    else if (key == "metric") o.metric = choose(value, "metric", metric_choices);
    else if (key == "init") o.init = choose(value, "init", init_choices);
    else if (key == "multipliers") o.multipliers = choose(value, "multipliers", multiplier_choices);
    else if (key == "rtol") o.rtol = py::cast<double>(value);
    else if (key == "atol_q") o.atol_q = py::cast<double>(value);
    else if (key == "atol_v") o.atol_v = py::cast<double>(value);
    else if (key == "atol_lambda") o.atol_lambda = py::cast<double>(value);
    else if (key == "h_initial") o.h_initial = py::cast<double>(value);
    else if (key == "h_min") o.h_min = py::cast<double>(value);
    else if (key == "h_max") o.h_max = py::cast<double>(value);
    else if (key == "max_steps") o.max_steps = py::cast<long>(value);
    else if (key == "max_order") o.max_order = py::cast<int>(value);
    else if (key == "fixed_h") o.fixed_h = py::cast<double>(value);
    else if (key == "fixed_order") o.fixed_order = py::cast<int>(value);
    else if (key == "rho_inf") o.rho_inf = py::cast<double>(value);
    else if (key == "newton_tol") o.newton_tol = py::cast<double>(value);
    else if (key == "newton_max_iterations") o.newton_max_iterations = py::cast<int>(value);
    else if (key == "consistent_multipliers") o.consistent_multipliers = py::cast<bool>(value);
    else if (key == "init_tolerance") o.init_tolerance = py::cast<double>(value);
    else if (key == "baumgarte_alpha") o.baumgarte_alpha = py::cast<double>(value);
    else if (key == "baumgarte_beta") o.baumgarte_beta = py::cast<double>(value);
    else if (key == "event_time_tolerance") o.event_time_tolerance = py::cast<double>(value);
    else if (key == "event_interior_checks") o.event_interior_checks = py::cast<int>(value);
    else throw py::value_error("unknown solver option '" + key + "'");
  }
  return o;
}

lockstep::backend backend_of(const std::string& name) {
  if (name == "serial") return lockstep::backend::serial;
  if (name == "omp") return lockstep::backend::omp;
  if (name == "cuda") return lockstep::backend::cuda;
  throw py::value_error("unknown backend '" + name + "' (one of serial, omp, cuda)");
}

// ---- interruption ----------------------------------------------------------------------------------

// SIGINT during a solve. Python's own C handler only marks the signal for the interpreter, which acts on
// it when this thread next holds the GIL (in on_progress, after a whole launch: seconds on large
// chunks). For the solve's duration a handler of ours runs first: it raises a flag that
// run_options::stop_requested reads, so the backend's threads stop taking blocks at once, and then
// calls the handler it replaced, so that Python sees the signal as usual and its SIGINT handler
// (KeyboardInterrupt by default, or the user's) decides what is raised. Installed only on the main
// thread, the one Python runs signal handlers on, and only over Python's handler (a function, not
// SIG_DFL or SIG_IGN): a program that set SIGINT otherwise keeps its choice.
std::atomic<bool> sigint_seen{false};
struct sigaction replaced_sigint {};

extern "C" void on_sigint(int signal, siginfo_t* info, void* context) {
  sigint_seen.store(true, std::memory_order_relaxed);
  if (replaced_sigint.sa_flags & SA_SIGINFO) {
    replaced_sigint.sa_sigaction(signal, info, context);
  } else if (replaced_sigint.sa_handler != SIG_DFL && replaced_sigint.sa_handler != SIG_IGN) {
    replaced_sigint.sa_handler(signal);
  }
}

class sigint_watch {
 public:
  sigint_watch() {
    struct sigaction current {};
    if (PyGILState_Check() == 0 || !is_main_thread() || sigaction(SIGINT, nullptr, &current) != 0) return;
    const bool python_handler = (current.sa_flags & SA_SIGINFO) != 0 ||
                                (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    if (!python_handler) return;
    replaced_sigint = current;
    sigint_seen.store(false);
    struct sigaction ours {};
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = SA_SIGINFO | (current.sa_flags & SA_ONSTACK);
    sigemptyset(&ours.sa_mask);
    installed_ = sigaction(SIGINT, &ours, nullptr) == 0;
  }
  ~sigint_watch() {
    if (installed_) sigaction(SIGINT, &replaced_sigint, nullptr);
  }
  sigint_watch(const sigint_watch&) = delete;
  sigint_watch& operator=(const sigint_watch&) = delete;
  // Only the solve that installed the handler answers it: a solve on another thread goes on (Python
  // raises KeyboardInterrupt in the main thread only).
  bool seen() const { return installed_ && sigint_seen.load(std::memory_order_relaxed); }

 private:
  static bool is_main_thread() {
    return py::module_::import("threading").attr("current_thread")().is(
        py::module_::import("threading").attr("main_thread")());
  }
  bool installed_ = false;
};

// Thrown from on_progress to stop the solve; the Python error it stands for waits in `pending`.
struct python_error_pending {};

// A Python error fetched while the GIL was held, restored later (PyErr_Fetch / PyErr_Restore own
// their references, so nothing is decremented without the GIL).
struct pending_error {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  void fetch() { PyErr_Fetch(&type, &value, &traceback); }
  [[noreturn]] void raise() {
    PyErr_Restore(type, value, traceback);
    type = value = traceback = nullptr;
    throw py::error_already_set();
  }
};

// ---- solve ------------------------------------------------------------------------------------------

py::dict solve(const model_handle& handle, const py::handle& params_in, const py::handle& q0_in,
               const py::handle& v0_in, double t0, double t1, const py::handle& save_in, const py::dict& options,
               const std::string& backend, int threads, long chunk_size, int attempts_per_sync,
               const py::object& progress, double progress_interval, int event_records) {
  const lockstep::solver_options chosen = solver_options_of(options);
  const std::shared_ptr<const model_handle::loaded> held = handle.with(lockstep::model_files::engine_contents{}.with_method(
      chosen.method, lockstep::projects_after_steps(chosen.projection, chosen.form)));
  const lockstep::engine& model = held->model;
  const int n = model.n(), n_params = model.n_params(), ny = model.ny();

  c_array params_array = c_array::ensure(params_in);
  if (!params_array || params_array.ndim() != 2)
    throw py::value_error("params must be a 2-D array [members, n_params]");
  const py::ssize_t members = params_array.shape(0);
  params_array = as_shape(params_array, "params", {members, n_params});
  const c_array q0_array = as_shape(q0_in, "q0", {members, n});
  const c_array v0_array = as_shape(v0_in, "v0", {members, n});
  c_array save_array = c_array::ensure(save_in);
  if (!save_array || save_array.ndim() != 1) throw py::value_error("save_times must be a 1-D array");

  lockstep::ensemble_problem problem;
  problem.members = members;
  problem.params.assign(params_array.data(), params_array.data() + params_array.size());
  problem.q0.assign(q0_array.data(), q0_array.data() + q0_array.size());
  problem.v0.assign(v0_array.data(), v0_array.data() + v0_array.size());
  problem.t0 = t0;
  problem.t1 = t1;
  problem.save_times.assign(save_array.data(), save_array.data() + save_array.size());
  problem.options = chosen;
  problem.event_capacity = event_records;

  lockstep::run_options run;
  run.where = backend_of(backend);
  run.threads = threads;
  run.chunk_size = chunk_size;
  run.attempts_per_sync = attempts_per_sync;
  if (run.threads < 0) throw py::value_error("threads must be >= 0 (0: OMP_NUM_THREADS, else the CPUs this process may run on)");

  pending_error pending;
  sigint_watch watch;  // before the GIL is released: it asks Python which thread this is
  run.stop_requested = [&watch] { return watch.seen(); };
  auto last_report = std::chrono::steady_clock::now() - std::chrono::hours(1);
  run.on_progress = [&](const lockstep::progress_report& r) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      pending.fetch();
      throw python_error_pending{};
    }
    const auto now = std::chrono::steady_clock::now();
    if (!progress.is_none() && std::chrono::duration<double>(now - last_report).count() >= progress_interval) {
      last_report = now;
      try {
        progress(r.members_finished, r.members_total, r.steps, r.seconds);
      } catch (py::error_already_set& e) {
        e.restore();
        pending.fetch();
        throw python_error_pending{};
      }
    }
  };

  lockstep::ensemble_solution s;
  bool interrupted = false, stopped = false;
  const lockstep::lanes_work_counts lanes_before = model.lanes_work();
  {
    py::gil_scoped_release released;
    try {
      s = lockstep::solve_ensemble(model, problem, run);
    } catch (const python_error_pending&) {
      interrupted = true;
    } catch (const lockstep::run_stopped&) {
      stopped = true;
    }
  }
  if (interrupted) pending.raise();
  if (stopped) {
    // Python's SIGINT handler runs now; the solve is abandoned whatever it does, so a handler that
    // raises nothing still ends the call with KeyboardInterrupt.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  // The last report, so that a progress bar ends at 100 %.
  if (!progress.is_none()) {
    long steps = 0;
    for (const auto& c : s.counters) steps += c.steps;
    progress(s.members, s.members, steps, s.seconds);
  }

  const auto N = static_cast<py::ssize_t>(s.members);
  const auto S = static_cast<py::ssize_t>(s.save_count);
  std::vector<int> status(s.status.size());
  std::transform(s.status.begin(), s.status.end(), status.begin(), [](lockstep::member_status x) { return int(x); });

  // Counters under the names of results.h5's /members datasets (docs/RESULTS-FORMAT.md).
  py::dict counters;
  auto integer_counter = [&](const char* name, long lockstep::member_counters::*field) {
    std::vector<long long> v(s.counters.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = s.counters[i].*field;
    counters[name] = owned_array(std::move(v), {N});
  };
  auto real_counter = [&](const char* name, double lockstep::member_counters::*field) {
    std::vector<double> v(s.counters.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = s.counters[i].*field;
    counters[name] = owned_array(std::move(v), {N});
  };
  integer_counter("steps", &lockstep::member_counters::steps);
  integer_counter("rejected", &lockstep::member_counters::rejected_steps);
  integer_counter("newton_iterations", &lockstep::member_counters::newton_iterations);
  integer_counter("newton_failures", &lockstep::member_counters::newton_failures);
  integer_counter("jacobian_evaluations", &lockstep::member_counters::jacobian_evaluations);
  integer_counter("lu_factorizations", &lockstep::member_counters::lu_factorizations);
  integer_counter("model_evaluations", &lockstep::member_counters::model_evaluations);
  integer_counter("projections", &lockstep::member_counters::projections);
  real_counter("final_h", &lockstep::member_counters::last_h);
  real_counter("max_phi", &lockstep::member_counters::max_phi);
  real_counter("max_velocity_residual", &lockstep::member_counters::max_velocity_residual);
  real_counter("init_q_correction", &lockstep::member_counters::init_q_correction);
  real_counter("init_v_correction", &lockstep::member_counters::init_v_correction);
  real_counter("max_projection_q", &lockstep::member_counters::max_projection_q);
  real_counter("max_projection_v", &lockstep::member_counters::max_projection_v);
  integer_counter("dropped_rows", &lockstep::member_counters::dropped_rows);
  integer_counter("rank_changes", &lockstep::member_counters::rank_changes);
  real_counter("max_dropped_phi", &lockstep::member_counters::max_dropped_phi);
  integer_counter("explicit_steps", &lockstep::member_counters::explicit_steps);
  integer_counter("method_switches", &lockstep::member_counters::method_switches);
  integer_counter("stiffness_detections", &lockstep::member_counters::stiffness_detections);

  // A model's derived quantities at the save times [members, S, Z] (host/engine/member_quantities.hpp).
  py::object quantities = py::none();
  if (const int Z = model.n_quantities(); Z > 0) {
    std::vector<double> values, z(static_cast<std::size_t>(N * S) * static_cast<std::size_t>(Z));
    {
      py::gil_scoped_release released;
      const int team = threads > 0 ? threads : lockstep::omp::default_threads();
      lockstep::member_values(model, problem.save_times, static_cast<long>(N), s.outputs.data(), problem.params.data(),
                              run.where == lockstep::backend::omp ? team : 1, values);
    }
    const std::size_t W = static_cast<std::size_t>(ny + Z);
    for (std::size_t point = 0; point < static_cast<std::size_t>(N * S); ++point)
      std::copy(values.begin() + static_cast<std::ptrdiff_t>(point * W + static_cast<std::size_t>(ny)),
                values.begin() + static_cast<std::ptrdiff_t>((point + 1) * W),
                z.begin() + static_cast<std::ptrdiff_t>(point * static_cast<std::size_t>(Z)));
    quantities = owned_array(std::move(z), {N, S, Z});
  }

  py::dict out;
  out["quantities"] = quantities;
  out["outputs"] = owned_array(std::move(s.outputs), {N, S, ny});
  out["status"] = owned_array(std::move(status), {N});
  out["counters"] = counters;
  out["t_final"] = owned_array(std::move(s.t_final), {N});
  out["y_final"] = owned_array(std::move(s.y_final), {N, ny});
  out["has_mu"] = lockstep::uses_mu(problem.options.form) && model.m() > 0;
  out["chunk_size"] = s.chunk_size;
  out["seconds"] = s.seconds;
  // What the engine's SIMD lanes executed meanwhile (engine::lanes_work; (0, 0) without lanes): lane-attempts
  // and those that advanced a member, the corrector's lane-iterations and lane-factorizations and those of
  // members. Another solve of the same model at the same time adds its own.
  const lockstep::lanes_work_counts lanes = model.lanes_work() - lanes_before;
  out["lane_attempts"] = py::make_tuple(lanes.attempts.executed, lanes.attempts.of_members);
  out["lane_newton_iterations"] = py::make_tuple(lanes.newton_iterations.executed, lanes.newton_iterations.of_members);
  out["lane_factorizations"] = py::make_tuple(lanes.factorizations.executed, lanes.factorizations.of_members);
  // Events (a model with event functions; lockstep/ensemble.hpp, ensemble_solution): counts and first
  // times [members, E], records made and stopping event [members], the kept records' times and events
  // [members, C] and states [members, C, ny].
  if (s.n_events > 0) {
    const auto E = static_cast<py::ssize_t>(s.n_events), C = static_cast<py::ssize_t>(s.event_capacity);
    const auto R = static_cast<std::size_t>(2 + ny);
    std::vector<double> t(static_cast<std::size_t>(N * C)), y(static_cast<std::size_t>(N * C) * static_cast<std::size_t>(ny));
    std::vector<int> index(static_cast<std::size_t>(N * C));
    for (std::size_t r = 0; r < t.size(); ++r) {
      const double* record = s.event_records.data() + r * R;
      t[r] = record[0];
      index[r] = std::isnan(record[1]) ? -1 : static_cast<int>(record[1]);
      std::copy(record + 2, record + R, y.begin() + static_cast<std::ptrdiff_t>(r * static_cast<std::size_t>(ny)));
    }
    std::vector<long long> counts(s.event_counts.begin(), s.event_counts.end()),
        made(s.event_records_made.begin(), s.event_records_made.end());
    py::dict events;
    events["count"] = owned_array(std::move(counts), {N, E});
    events["first_time"] = owned_array(std::move(s.event_first_times), {N, E});
    events["records"] = owned_array(std::move(made), {N});
    events["stop_event"] = owned_array(std::move(s.stop_event), {N});
    events["t"] = owned_array(std::move(t), {N, C});
    events["event"] = owned_array(std::move(index), {N, C});
    events["y"] = owned_array(std::move(y), {N, C, ny});
    out["events"] = events;
  }
  return out;
}

// ---- Lyapunov exponents and sensitivities ------------------------------------------------------------

// The members' parameters and states [members, n_params] and [members, n], checked.
struct member_inputs {
  c_array params, q0, v0;
  py::ssize_t members = 0;
};

member_inputs member_inputs_of(const lockstep::engine& model, const py::handle& params_in, const py::handle& q0_in,
                               const py::handle& v0_in) {
  member_inputs in;
  in.params = c_array::ensure(params_in);
  if (!in.params || in.params.ndim() != 2) throw py::value_error("params must be a 2-D array [members, n_params]");
  in.members = in.params.shape(0);
  in.params = as_shape(in.params, "params", {in.members, model.n_params()});
  in.q0 = as_shape(q0_in, "q0", {in.members, model.n()});
  in.v0 = as_shape(v0_in, "v0", {in.members, model.n()});
  return in;
}

// The solver options a tangent run can use, else ValueError with the reason: the engine would report
// it per member as status invalid_input, and every member would fail alike.
lockstep::solver_options tangent_options_of(const lockstep::engine& model, const py::dict& options, bool tangents) {
  const lockstep::solver_options o = solver_options_of(options);
  if (const std::string why = model.refusal(o); !why.empty()) throw py::value_error(why);
  if (tangents)
    if (const char* why = lockstep::tangent_check_options(o); why[0] != '\0') throw py::value_error(why);
  return o;
}

// Every member through run_lyapunov_batch (the driver `lockstep run` uses for [lyapunov]), without the
// GIL, on `threads` threads of the CPU cores' team (0: omp::default_threads(), as the command's omp
// backend). Ctrl-C stops it between members (KeyboardInterrupt).
py::dict lyapunov(const model_handle& handle, const py::handle& params_in, const py::handle& q0_in,
                  const py::handle& v0_in, double t0, double t1, const py::dict& options, int method, int exponents,
                  double renormalize, double transient, int metric, double separation, long history_capacity,
                  int threads) {
  const std::shared_ptr<const model_handle::loaded> held =
      handle.with(lockstep::model_files::engine_contents{}.with_lyapunov(solver_options_of(options).method, method));
  const lockstep::engine& model = held->model;
  const member_inputs in = member_inputs_of(model, params_in, q0_in, v0_in);
  const int d = 2 * (model.n() - model.m()) - model.k();
  if (method != 0 && method != 1) throw py::value_error("method must be 0 (qr) or 1 (clone)");
  if (metric != 0 && metric != 1) throw py::value_error("metric must be 0 (mass) or 1 (euclidean)");
  if (exponents < 1 || exponents > d || (method == 1 && exponents != 1))
    throw py::value_error("exponents must be in [1, " + std::to_string(d) + "] (1 for clone)");
  if (!(t1 > t0)) throw py::value_error("t1 must be greater than t0");
  if (!(renormalize > 0.0) || !(transient >= 0.0) || !(separation > 0.0) || history_capacity < 0)
    throw py::value_error("renormalize and separation must be > 0, transient and history_capacity >= 0");
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: OMP_NUM_THREADS, else the CPUs this process may run on)");
  const lockstep::solver_options o = tangent_options_of(model, options, method == 0);

  const lockstep_lyapunov_request request =
      lockstep::lyapunov_request(method, exponents, renormalize, transient, metric, separation, history_capacity);
  const lockstep::lyapunov_inputs inputs{in.params.data(), in.q0.data(), in.v0.data(), t0, t1, &o};
  lockstep::lyapunov_batch b;
  sigint_watch watch;  // before the GIL is released: it asks Python which thread this is
  const auto started = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release released;
    const int team = threads > 0 ? threads : lockstep::omp::default_threads();
    lockstep::run_lyapunov_batch(model, inputs, request, 0, in.members, team, b, {}, [&watch] { return watch.seen(); });
  }
  if (watch.seen()) {
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  const py::ssize_t N = in.members, p = exponents, H = history_capacity;
  std::vector<int> status(b.status.size());
  std::transform(b.status.begin(), b.status.end(), status.begin(), [](lockstep::member_status x) { return int(x); });
  std::vector<long long> renormalizations(b.renormalizations.begin(), b.renormalizations.end()),
      steps(b.steps.begin(), b.steps.end());
  py::list messages;
  for (const auto& m : b.messages) messages.append(m);
  py::dict out;
  out["exponents"] = owned_array(std::move(b.exponents), {N, p});
  out["status"] = owned_array(std::move(status), {N});
  out["t_start"] = owned_array(std::move(b.t_start), {N});
  out["t_end"] = owned_array(std::move(b.t_end), {N});
  out["renormalizations"] = owned_array(std::move(renormalizations), {N});
  out["steps"] = owned_array(std::move(steps), {N});
  out["history_t"] = owned_array(std::move(b.history_t), {N, H});
  out["history"] = owned_array(std::move(b.history), {N, H, p});
  out["messages"] = messages;
  out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

// One member's final state and its derivatives along `directions` [D, 2n] (initial (dq0, dv0)) and
// to the parameters `parameters` (indices), the engine's forward sensitivities, without the GIL.
py::dict sensitivities(const model_handle& handle, const py::handle& params_in, const py::handle& q0_in,
                       const py::handle& v0_in, double t0, double t1, const py::dict& options,
                       const py::handle& directions_in, const std::vector<int>& parameters) {
  const std::shared_ptr<const model_handle::loaded> held =
      handle.with(lockstep::model_files::engine_contents{}.with_sensitivities(solver_options_of(options).method));
  const lockstep::engine& model = held->model;
  const int n = model.n(), ny = model.ny();
  const c_array params = as_shape(params_in, "params", {model.n_params()});
  const c_array q0 = as_shape(q0_in, "q0", {n});
  const c_array v0 = as_shape(v0_in, "v0", {n});
  c_array directions = c_array::ensure(directions_in);
  if (!directions || directions.ndim() != 2) throw py::value_error("directions must be a 2-D array [D, 2n]");
  directions = as_shape(directions, "directions", {directions.shape(0), 2 * n});
  for (int j : parameters)
    if (j < 0 || j >= model.n_params()) throw py::value_error("parameter index " + std::to_string(j) + " out of range");
  if (!(t1 > t0)) throw py::value_error("t1 must be greater than t0");
  const lockstep::solver_options o = tangent_options_of(model, options, true);
  const auto D = static_cast<int>(directions.shape(0)), P = static_cast<int>(parameters.size());

  lockstep_sensitivity_request request{};
  request.header = lockstep::abi_header_for<lockstep_sensitivity_request>();
  request.state_directions = D;
  request.directions = D > 0 ? directions.data() : nullptr;
  request.parameter_count = P;
  request.parameters = P > 0 ? parameters.data() : nullptr;
  std::vector<double> y_final(ny, std::numeric_limits<double>::quiet_NaN()),
      sens(static_cast<std::size_t>(D + P) * ny, std::numeric_limits<double>::quiet_NaN());
  lockstep::member_counters counters;
  lockstep_sensitivity_output out{};
  out.header = lockstep::abi_header_for<lockstep_sensitivity_output>();
  out.y_final = y_final.data();
  out.sensitivities = sens.data();
  out.counters = &counters;
  {
    py::gil_scoped_release released;
    model.sensitivities(params.data(), q0.data(), v0.data(), t0, t1, o, request, out);
  }
  if (out.status == int(lockstep::member_status::invalid_input) && out.message[0] != '\0')
    throw py::value_error(out.message);
  py::dict result;
  result["status"] = out.status;
  result["t_final"] = out.t_final;
  result["y_final"] = owned_array(std::move(y_final), {ny});
  result["sensitivities"] = owned_array(std::move(sens), {D + P, ny});
  result["steps"] = counters.steps;
  result["rejected"] = counters.rejected_steps;
  return result;
}

}  // namespace

PYBIND11_MODULE(_lockstep, m) {
  m.doc() = "lockstep's compiled core: model engines and the ensemble solve (docs/PYTHON.md)";
  m.attr("__version__") = LOCKSTEP_VERSION_STRING;
  // The instruction set the module was compiled for (LOCKSTEP_INSTRUCTION_SET) and the CPU features
  // it needs; the results' bits do not depend on it.
  m.attr("instruction_set") = std::string(lockstep::host::built_instruction_set().name);
  m.attr("instruction_set_cpu_features") = std::string(lockstep::host::built_instruction_set().cpu_features);
  // How the built-in engines advance their members here (lockstep/engine/builtin.hpp): the
  // instruction set, the SIMD lanes (0: one at a time), the libraries' directory and why there are
  // no lanes. Decided at the first use of a built-in engine; an impossible request (an unknown
  // LOCKSTEP_BUILTIN_INSTRUCTION_SET, say) raises ValueError.
  m.def("builtin_lanes", [] {
    const lockstep::builtin_lanes_choice& choice = lockstep::builtin_lanes_in_use();
    py::dict d;
    d["instruction_set"] = choice.instruction_set;
    d["lanes"] = choice.lanes;
    d["libraries"] = choice.libraries;
    d["why_none"] = choice.why_none;
    return d;
  });
  // The command run_study starts: an installed module's is the installation's (PREFIX/bin/lockstep,
  // host/model_files/install_layout.hpp), a build tree's is the one built beside it.
  const auto& layout = lockstep::model_files::this_install_layout();
  m.attr("lockstep_executable") = layout.prefix ? layout.command.string() : std::string(LOCKSTEP_CLI_BUILD_PATH);
  m.attr("install_prefix") = layout.prefix ? py::object(py::str(layout.prefix->string())) : py::object(py::none());

  py::list names;
  for (int code = 0; code < lockstep::member_status_count; ++code)
    names.append(lockstep::status_name(static_cast<lockstep::member_status>(code)));
  m.attr("status_names") = py::tuple(names);

  py::class_<model_handle>(m, "Engine", "A model's compiled engine (built in, or from a model file)")
      .def_property_readonly("name", [](const model_handle& h) { return std::string(h.model().name()); })
      .def_property_readonly("description", [](const model_handle& h) { return std::string(h.model().description()); })
      .def_property_readonly("n", [](const model_handle& h) { return h.model().n(); })
      .def_property_readonly("m", [](const model_handle& h) { return h.model().m(); })
      .def_property_readonly("k", [](const model_handle& h) { return h.model().k(); })
      .def_property_readonly("ny", [](const model_handle& h) { return h.model().ny(); })
      .def_property_readonly("coordinate_names",
                             [](const model_handle& h) {
                               std::vector<std::string> names;
                               for (const char* c : h.model().coordinate_names()) names.emplace_back(c);
                               return names;
                             })
      .def_property_readonly("events",
                             [](const model_handle& h) {
                               // (name, direction, action, description) of each event function.
                               py::list events;
                               for (const lockstep_event_info& e : h.model().events())
                                 events.append(py::make_tuple(
                                     std::string(e.name),
                                     lockstep::event_direction_name(lockstep::event_direction(e.direction)),
                                     lockstep::event_action_name(lockstep::event_action(e.action)),
                                     std::string(e.description)));
                               return events;
                             })
      .def_property_readonly("quantities",
                             [](const model_handle& h) {
                               // (name, description) of each derived quantity.
                               py::list quantities;
                               for (const lockstep_quantity_info& q : h.model().quantities())
                                 quantities.append(py::make_tuple(std::string(q.name), std::string(q.description)));
                               return quantities;
                             })
      .def_property_readonly("params", [](const model_handle& h) { return value_table(h.model().params()); })
      .def_property_readonly("inputs", [](const model_handle& h) { return value_table(h.model().inputs()); })
      .def_property_readonly("source", [](const model_handle& h) { return h.source; })
      .def_property_readonly("cache_key", [](const model_handle& h) { return h.cache_key; })
      .def_property_readonly("compiled", [](const model_handle& h) { return h.compiled; })
      .def(
          "initial_state",
          [](const model_handle& h, const py::handle& params_in, const py::handle& inputs_in) {
            // [members, n_params] and [members, n_inputs] -> q0, v0 [members, n], one engine call per member.
            const int n = h.model().n(), P = h.model().n_params(), I = h.model().n_inputs();
            c_array p = c_array::ensure(params_in);
            if (!p || p.ndim() != 2) throw py::value_error("params must be a 2-D array [members, n_params]");
            const py::ssize_t members = p.shape(0);
            p = as_shape(p, "params", {members, P});
            const c_array in = as_shape(inputs_in, "inputs", {members, I});
            std::vector<double> q0(static_cast<std::size_t>(members) * n), v0(q0.size());
            std::vector<double> none(1, 0.0);  // a model without initial inputs still gets a valid pointer
            for (py::ssize_t i = 0; i < members; ++i)
              h.model().initial_state(p.data() + i * P, I > 0 ? in.data() + i * I : none.data(), q0.data() + i * n,
                                    v0.data() + i * n);
            return py::make_tuple(owned_array(std::move(q0), {members, n}), owned_array(std::move(v0), {members, n}));
          },
          py::arg("params"), py::arg("inputs"))
      .def(
          "evaluate",
          [](const model_handle& h, const py::handle& params_in, double t, const py::handle& q_in, const py::handle& v_in) {
            // The model's equations at one state, as the solver sees them (abi.h, lockstep_model_values):
            // M, Q, Phi, G = dPhi/dq and Phi_t by automatic differentiation, and for k > 0 A v + a and A.
            const int n = h.model().n(), m = h.model().m(), k = h.model().k(), P = h.model().n_params();
            const c_array p = as_shape(params_in, "params", {P});
            const c_array q = as_shape(q_in, "q", {n});
            const c_array v = as_shape(v_in, "v", {n});
            std::vector<double> mass(static_cast<std::size_t>(n) * n), force(n), phi(m), G(static_cast<std::size_t>(m) * n),
                phi_t(m), residual(k), A(static_cast<std::size_t>(k) * n);
            lockstep_model_values out{};
            out.header = lockstep::abi_header_for<lockstep_model_values>();
            out.mass = mass.data();
            out.force = force.data();
            out.constraint = m > 0 ? phi.data() : nullptr;
            out.constraint_jacobian = m > 0 ? G.data() : nullptr;
            out.constraint_rate = m > 0 ? phi_t.data() : nullptr;
            out.velocity_constraint = k > 0 ? residual.data() : nullptr;
            out.velocity_jacobian = k > 0 ? A.data() : nullptr;
            h.model().evaluate(p.data(), t, q.data(), v.data(), out);
            py::dict values;
            values["mass"] = owned_array(std::move(mass), {n, n});
            values["force"] = owned_array(std::move(force), {n});
            values["constraint"] = owned_array(std::move(phi), {m});
            values["constraint_jacobian"] = owned_array(std::move(G), {m, n});
            values["constraint_rate"] = owned_array(std::move(phi_t), {m});
            values["velocity_constraint"] = owned_array(std::move(residual), {k});
            values["velocity_jacobian"] = owned_array(std::move(A), {k, n});
            return values;
          },
          py::arg("params"), py::arg("t"), py::arg("q"), py::arg("v"),
          "M, Q, Phi, G = dPhi/dq, Phi_t (and for k > 0 the residual A v + a and A) at one state, as the solver "
          "evaluates them (automatic differentiation), in a dict of arrays.");

  m.def("builtin_models", [] {
    py::list out;
    for (const auto& e : lockstep::builtin_engines()) out.append(std::string(e.name()));
    return out;
  });
  m.def(
      "builtin_model",
      [](const std::string& name) -> py::object {
        const lockstep::engine* e = lockstep::find_builtin_engine(name);
        if (!e) return py::none();
        return py::cast(model_handle{model_handle::holding(*e, lockstep::model_files::engine_contents::everything()),
                                     "", "", "", false, py::none()});
      },
      py::arg("name"));
  m.def(
      "load_model_file",
      [](const std::string& path, const std::string& name, const py::object& announce) {
        // The model's own part alone (its tables and evaluations: names, initial states, evaluate), in
        // which the model's code is compiled, so that its errors are raised here; model_handle::with
        // adds what a call needs when it first needs it (a solve its method, lyapunov its tangents),
        // and compiles nothing a session never uses, such as a default method it does not run.
        const lockstep::model_files::engine_contents contents{};
        const lockstep::model_files::loaded_model loaded = load_engine(path, name, contents, announce);
        return model_handle{model_handle::holding(loaded.model, contents),
                            loaded.source.string(), name, loaded.key, loaded.compiled, announce};
      },
      py::arg("path"), py::arg("name") = "", py::arg("announce") = py::none());
  m.def("omp_available", &lockstep::omp::available);
  // The omp backend's threads where a call asks for 0 (OMP_NUM_THREADS, else the CPUs this process may
  // run on): what a Dataset records as its run's "threads", as the command's results files do.
  m.def("default_threads", &lockstep::omp::default_threads);
  m.def(
      "bytes_per_member",
      [](const model_handle& h, int save_count, const std::string& method) {
        return lockstep::bytes_per_member(h.model(), save_count, choose(py::str(method), "method", method_choices));
      },
      py::arg("model"), py::arg("save_count"), py::arg("method") = "radau5",
      "Bytes of chunk storage one member needs in a solve with save_count save times (the scheduler's "
      "chunks hold at most a quarter of available RAM, capped at 256 MiB, unless chunk_size is given).");
  m.def("lyapunov", &lyapunov, py::arg("model"), py::arg("params"), py::arg("q0"), py::arg("v0"), py::arg("t0"),
        py::arg("t1"), py::arg("options"), py::arg("method"), py::arg("exponents"), py::arg("renormalize"),
        py::arg("transient"), py::arg("metric"), py::arg("separation"), py::arg("history_capacity"),
        py::arg("threads") = 0,
        "Lyapunov exponents of members [members] (params [members, n_params], q0 and v0 [members, n]) over "
        "[t0, t1], as `lockstep run` computes a study's [lyapunov]. method 0: discrete QR, 1: clone; metric "
        "0: mass, 1: euclidean. Returns a dict: exponents [members, exponents], status, t_start, t_end, "
        "renormalizations, steps [members], history_t [members, history_capacity], history [members, "
        "history_capacity, exponents], messages.");
  m.def("sensitivities", &sensitivities, py::arg("model"), py::arg("params"), py::arg("q0"), py::arg("v0"),
        py::arg("t0"), py::arg("t1"), py::arg("options"), py::arg("directions"), py::arg("parameters"),
        "One member's final state y_final [2n + 2m + k] and d y_final / d direction for each initial direction "
        "[D, 2n] (dq0, dv0) and then each parameter index: sensitivities [D + P, 2n + 2m + k].");
  m.def("solve", &solve, py::arg("model"), py::arg("params"), py::arg("q0"), py::arg("v0"), py::arg("t0"),
        py::arg("t1"), py::arg("save_times"), py::arg("options") = py::dict(), py::arg("backend") = "omp",
        py::arg("threads") = 0, py::arg("chunk_size") = 0, py::arg("attempts_per_sync") = 32,
        py::arg("progress") = py::none(), py::arg("progress_interval") = 0.1, py::arg("event_records") = 16,
        "Solves members [members] of the model from params [members, n_params], q0 and v0 [members, n] over "
        "[t0, t1], saving at save_times. Returns a dict: outputs [members, saves, 2n + 2m + k] (q, v, lambda, "
        "mu, nu), status [members], counters (dict of [members] arrays), t_final [members], y_final "
        "[members, 2n + 2m + k], and for a model with events `events` (count and first_time [members, E], records "
        "and stop_event [members], t and event [members, event_records], y [members, event_records, 2n + 2m + k]).");
}
