// lockstep/ensemble.hpp — an ensemble of one model's members, how to run it, and what comes back,
// model-agnostic: the types the scheduler, the command line and the Python module share.
//
// solve_ensemble(engine, problem, run) splits the members into chunks, runs each chunk through the
// engine's kernels on the chosen backend and gathers the results (host/scheduler). Every member's
// result depends on its own inputs only: serial and omp give bitwise the same results for any thread
// count, chunk size and attempts per sync. The typed C++ API over it (ensemble<Model>,
// solve_ensemble<Model>) is lockstep/lockstep.hpp.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

#include "lockstep/core/status.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

enum class backend : int { serial = 0, omp = 1, cuda = 2 };

inline const char* backend_name(backend b) {
  return b == backend::serial ? "serial" : (b == backend::omp ? "omp" : "cuda");
}

struct progress_report {
  long members_total = 0;
  long members_finished = 0;
  long steps = 0;        // accepted steps of finished members so far
  double seconds = 0.0;  // wall time since the run started
};

// One finished chunk, members [first, first + count), member-major. Valid during on_chunk only.
struct chunk_results {
  long first = 0, count = 0;
  int save_count = 0, ny = 0;
  const double* outputs = nullptr;        // [count][save][ny]: (q, v, lambda, mu, nu); NaN where never reached
  const member_status* status = nullptr;  // [count]
  const member_counters* counters = nullptr;
  const double* t_final = nullptr;        // [count]
  const double* y_final = nullptr;        // [count][ny]
  // Events (a model with n_events > 0; lockstep/stepper/events.hpp), else null: each event's
  // occurrences and first time (NaN: none) [count][n_events]; the records each member made and the
  // event that stopped it (-1: none) [count]; the records kept, [count][event_capacity][2 + ny] of
  // (t, event, y), NaN past a member's records_made.
  int n_events = 0, event_capacity = 0;
  const long* event_counts = nullptr;
  const double* event_first_times = nullptr;
  const long* event_records_made = nullptr;
  const int* stop_event = nullptr;
  const double* event_records = nullptr;
};

struct run_options {
  backend where = backend::serial;
  int threads = 0;                // omp: 0 = omp::default_threads()
  long chunk_size = 0;            // members per chunk; 0 = from memory_budget
  std::size_t memory_budget = 0;  // bytes of chunk storage when chunk_size = 0; 0 = a quarter of the
                                  // backend's free memory (host: available RAM, capped at 256 MiB)
  int attempts_per_sync = 32;     // K: step attempts per member per launch
  // serial and omp: run the split path (factorizations in a phase between launches, by lu_factor)
  // instead of the fused step: the CPU emulation of the CUDA backend's path for large members, with
  // results bitwise those of the fused path. Methods without a split path (rhoinf) run fused. cuda:
  // members above split_factorization_threshold always take the split path; this option sends every
  // model there (cuBLAS factor phase).
  bool split_factorization = false;
  std::function<void(const progress_report&)> on_progress;  // called after every launch
  // Abandons the run when it returns true: polled by the backend's threads before each block of a
  // launch (omp: blocks of 8-64 members; serial: the launch is one block) and by the scheduler after
  // each launch, which then throws run_stopped (cuda: at the device run's progress reports, and the
  // exception comes when the device run returns). A launch can last seconds (every active member of a
  // chunk takes up to attempts_per_sync attempts), so a front end that must answer an interrupt
  // promptly (the Python module's Ctrl-C) cannot wait for on_progress. Called concurrently from the
  // backend's threads: it must be thread-safe and cheap (an atomic load). Throwing from on_progress
  // abandons the run too, at the next launch boundary.
  std::function<bool()> stop_requested;

  // Streaming: when keep_outputs is false, ensemble_solution::outputs stays empty and a chunk's
  // trajectories exist only while on_chunk runs, so a study of 10^6 members that keeps statistics
  // only never holds all trajectories. Statuses, counters and final states are always kept.
  bool keep_outputs = true;
  std::function<void(const chunk_results&)> on_chunk;  // once per finished chunk, in member order
};

// What to solve: one model's members, member-major.
struct ensemble_problem {
  long members = 0;
  std::vector<double> params;      // members x n_params
  std::vector<double> q0, v0;      // members x n
  double t0 = 0.0, t1 = 1.0;
  std::vector<double> save_times;  // sorted, within [t0, t1]
  solver_options options;
  // The event records kept per member (a model with events): its first event_capacity record and
  // stop events (time, event, state); the counts and first times of every event are kept whatever it is.
  int event_capacity = 16;
};

// What came back. Outputs and final states in the state layout (q, v, lambda, mu, nu).
struct ensemble_solution {
  long members = 0;
  int save_count = 0;
  int n = 0, m = 0, k = 0, ny = 0;
  std::vector<member_status> status;
  std::vector<member_counters> counters;
  std::vector<double> outputs;  // [member][save][ny]; NaN where never reached
  std::vector<double> t_final;
  std::vector<double> y_final;  // [member][ny]
  // Events (a model with n_events > 0; chunk_results says what each is); event_records only with
  // keep_outputs.
  int n_events = 0, event_capacity = 0;
  std::vector<long> event_counts;         // [member][n_events]
  std::vector<double> event_first_times;  // [member][n_events]
  std::vector<long> event_records_made;   // [member]
  std::vector<int> stop_event;            // [member]
  std::vector<double> event_records;      // [member][event_capacity][2 + ny]
  long chunk_size = 0;          // what the scheduler used
  double seconds = 0.0;

  double y(long i, int s, int j) const { return outputs[(static_cast<std::size_t>(i) * save_count + s) * ny + j]; }
  double q(long i, int s, int j) const { return y(i, s, j); }
  double v(long i, int s, int j) const { return y(i, s, n + j); }
  double lambda(long i, int s, int j) const { return y(i, s, 2 * n + j); }
};

// What solve_ensemble throws when run_options::stop_requested asked it to stop; nothing of the run is
// returned (the members finished so far have already gone to on_chunk).
class run_stopped : public std::runtime_error {
 public:
  run_stopped() : std::runtime_error("lockstep: the run was stopped (run_options::stop_requested)") {}
};

// Solves the ensemble with the engine's kernels on run.where. Throws std::invalid_argument for an
// ensemble, options or backend the library or the engine refuses (naming the reason), engine_error
// when an engine call fails otherwise. One member's failure is its status, never an exception.
ensemble_solution solve_ensemble(const engine& model, const ensemble_problem& problem, const run_options& run);

// Bytes of chunk storage one member needs with `save_count` save times (its state, parameters, initial
// state, outputs and bookkeeping), and what the split path adds.
std::size_t bytes_per_member(const engine& model, int save_count, method_kind method = method_kind::bdf);
std::size_t split_bytes_per_member(const engine& model, method_kind method, bool split, bool split_projections);

// Bytes an ensemble_problem and its ensemble_solution hold for each member from the start of the run
// to its end: parameters and initial state; status, counters, final time and state; with
// keep_outputs, the outputs at `save_count` save times. Chunk storage (above) comes on top, within
// the memory budget. A front end multiplies it by the member count and compares with
// physical_memory_bytes() before it builds the problem: a count beyond the machine then gets a
// sentence rather than std::bad_alloc.
std::size_t run_bytes_per_member(const engine& model, int save_count, bool keep_outputs);

// The machine's physical memory in bytes (sysconf), or 0 where the system does not say.
std::size_t physical_memory_bytes();

// The CPUs this process may run on (its affinity mask: taskset, cpusets, an MPI launcher's binding),
// at least 1.
int available_cpus();

// The omp backend: the CPU cores' thread team (the lockstep::omp target; kernels/omp/thread_team.hpp).
// It keeps the name omp, which run_options, the command's --backend and results files use; it needs
// no OpenMP runtime and reads no OpenMP setting but OMP_NUM_THREADS.
namespace omp {
// Whether this program links the omp backend (the lockstep::omp target). The same answer in every
// translation unit, whatever its compile flags.
bool available();
// The threads run_options::threads = 0 means: the first entry of OMP_NUM_THREADS when it is a positive
// integer (read at every call, so a change made after start-up counts), else available_cpus(). The
// same count OpenMP runtimes choose by default. A launch uses fewer when it has fewer blocks of 8
// members.
int default_threads();
}  // namespace omp

}  // namespace lockstep
