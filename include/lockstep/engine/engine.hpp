// lockstep/engine/engine.hpp — a model-agnostic handle on an engine table (lockstep/engine/abi.h).
//
// The host side of the library (scheduler, study layer, I/O, the command line, MPI, checkpoints, the
// Lyapunov driver, Python) sees a model only through this class: its sizes and tables, and the
// table's functions with C++ error handling (a failing call throws engine_error, or
// std::invalid_argument for a request the engine refuses). Copies are cheap: an engine is a pointer
// to a table that lives as long as the program (engines are never unloaded).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lockstep/engine/abi.h"
#include "lockstep/engine/abi_support.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// A call into an engine failed for a reason other than a refused request (out of memory, an
// unexpected exception inside the engine).
class engine_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One kind of work an engine's SIMD lanes executed, counted in lanes (W for each time a pack of W lanes
// ran it), and the part of it that was a member's. Their ratio is its utilization (docs/SIMD.md, "Lane
// utilization").
struct lane_counts {
  std::uint64_t executed = 0, of_members = 0;
  double utilization() const { return executed > 0 ? double(of_members) / double(executed) : 0.0; }
  lane_counts operator-(const lane_counts& before) const {
    return {executed - before.executed, of_members - before.of_members};
  }
};

// What an engine's SIMD lanes executed (lockstep/engine/abi.h, lanes_work and lanes_corrector_work):
// step attempts, below 1 of them a member's where lanes idled for want of members (a chunk's last
// members, a call's last attempts) or held a member that had finished or was out of attempts; and the
// corrector's Newton iterations and LU factorizations, below 1 where a pack ran one for some of its
// lanes (the Newton loop runs while any lane iterates, the pack factors when any lane needs new factors).
struct lanes_work_counts {
  lane_counts attempts, newton_iterations, factorizations;
  lanes_work_counts operator-(const lanes_work_counts& before) const {
    return {attempts - before.attempts, newton_iterations - before.newton_iterations,
            factorizations - before.factorizations};
  }
};

// Where engine::finish writes the members' events, for a model with events (each array may be null:
// not wanted).
struct member_event_results {
  long* counts = nullptr;         // [count][n_events]
  double* first_times = nullptr;  // [count][n_events]
  long* records_made = nullptr;   // [count]
  int* stop_event = nullptr;      // [count]
};

class engine {
 public:
  // Checks the table's ABI header: another version or size is refused with std::invalid_argument
  // naming both builds.
  explicit engine(const lockstep_engine* table);

  const lockstep_engine& table() const { return *table_; }
  std::string_view name() const { return table_->name; }
  std::string_view description() const { return table_->description; }
  int n() const { return table_->n; }
  int m() const { return table_->m; }
  int k() const { return table_->k; }
  // Values per member and save time: (q, v, lambda, mu, nu).
  int ny() const { return 2 * table_->n + 2 * table_->m + table_->k; }
  int n_params() const { return table_->n_params; }
  int n_inputs() const { return table_->n_inputs; }
  std::span<const lockstep_value_info> params() const { return {table_->params, std::size_t(table_->n_params)}; }
  std::span<const lockstep_value_info> inputs() const {
    return {table_->inputs, std::size_t(table_->n_inputs > 0 ? table_->n_inputs : 0)};
  }
  // The names of q's entries (the model's own, else "q0", "q1", ...), also those of v's.
  std::span<const char* const> coordinate_names() const { return {table_->coordinate_names, std::size_t(table_->n)}; }
  // The model's event functions (lockstep/stepper/events.hpp): name, direction, action, description.
  int n_events() const { return table_->n_events; }
  std::span<const lockstep_event_info> events() const {
    return {table_->events, std::size_t(table_->n_events > 0 ? table_->n_events : 0)};
  }
  // The model's derived quantities (lockstep/stepper/quantities.hpp): name, description with units.
  int n_quantities() const { return table_->n_quantities; }
  std::span<const lockstep_quantity_info> quantities() const {
    return {table_->quantities, std::size_t(table_->n_quantities > 0 ? table_->n_quantities : 0)};
  }
  bool device_built() const { return table_->device_built != 0 && table_->solve_on_device != nullptr; }
  // What advances the members on the host: the instruction set of the methods' chunk functions
  // ("baseline", "sse4", "avx2", "avx512") and the members per SIMD pack (0: one at a time).
  std::string_view instruction_set() const { return table_->instruction_set; }
  int lanes() const { return table_->lanes; }
  // What the engine's SIMD lanes executed since it was loaded, over every thread; zero where it runs
  // BDF's members one at a time (or LOCKSTEP_LANES=0 turned its lanes off).
  lanes_work_counts lanes_work() const {
    lanes_work_counts w;
    if (table_->lanes_work != nullptr) table_->lanes_work(&w.attempts.executed, &w.attempts.of_members);
    if (table_->lanes_corrector_work != nullptr)
      table_->lanes_corrector_work(&w.newton_iterations.executed, &w.newton_iterations.of_members,
                                   &w.factorizations.executed, &w.factorizations.of_members);
    return w;
  }

  // What the engine holds for a method (lockstep/engine/abi.h, lockstep_method_functions): its chunk
  // functions (begin, advance, finish), its split path, its tangents (Lyapunov exponents by
  // `lyapunov_method` 0, discrete QR, or 1, clone; sensitivities). A built-in engine holds all of them;
  // a model file's engine what it was loaded for (model_files::load_model_file). Calling what an
  // engine does not hold throws std::invalid_argument saying so.
  bool has_method(method_kind method) const;
  bool has_split(method_kind method) const;
  bool has_lyapunov(method_kind method, int lyapunov_method) const;
  bool has_sensitivities(method_kind method) const;

  // (q0, v0) of the named initial inputs (Model::initial_state).
  void initial_state(const double* params, const double* inputs, double* q0, double* v0) const;
  // Why the method and formulation cannot run this model ("" when they can).
  std::string refusal(const solver_options& options) const;
  lockstep_chunk_layout chunk_layout(method_kind method) const;

  void begin(const lockstep_chunk& chunk, const long* members, long count) const;
  void advance(const lockstep_chunk& chunk, const long* members, long count, int max_attempts) const;
  void advance_split(const lockstep_chunk& chunk, const long* members, long count, int max_attempts,
                     int projection_split_above) const;
  void factor(const lockstep_chunk& chunk, const long* members, long count) const;
  // With the members' events (member_event_results) for a model with events.
  void finish(const lockstep_chunk& chunk, long first, long count, int* status, member_counters* counters,
              double* t_final, double* y_final, const member_event_results& events = member_event_results()) const;

  // Lyapunov exponents by the method the request names (its entry: lyapunov or lyapunov_clone).
  void lyapunov(const double* params, const double* q0, const double* v0, double t0, double t1,
                const solver_options& options, const lockstep_lyapunov_request& request,
                lockstep_lyapunov_output& out) const;
  void sensitivities(const double* params, const double* q0, const double* v0, double t0, double t1,
                     const solver_options& options, const lockstep_sensitivity_request& request,
                     lockstep_sensitivity_output& out) const;
  // The derived quantities of one member at `points` saved states: y [points][ny] at the times t
  // [points] into out [points][n_quantities] (NaN where a state was never reached). Throws
  // std::invalid_argument for a model without quantities.
  void quantities_at(const double* params, long points, const double* t, const double* y, double* out) const;
  void evaluate(const double* params, double t, const double* q, const double* v, lockstep_model_values& out) const;
  void initialize(const double* params, double t0, const double* q0, const double* v0, const solver_options& options,
                  lockstep_initial_values& out) const;
  void solve_on_device(lockstep_device_run& run) const;

  friend bool operator==(const engine& a, const engine& b) { return a.table_ == b.table_; }

 private:
  // The method's entry of the table, or std::invalid_argument naming what the engine lacks.
  template <class Function>
  Function method_entry(method_kind method, Function lockstep_method_functions::*entry, const char* call) const;

  const lockstep_engine* table_;
};

// Throws for a failed engine call: std::invalid_argument for LOCKSTEP_INVALID_ARGUMENT and
// LOCKSTEP_UNSUPPORTED, std::bad_alloc for LOCKSTEP_OUT_OF_MEMORY, engine_error otherwise; the
// message names the engine and the call.
void throw_engine_failure(const lockstep_engine& table, const char* call, lockstep_result result,
                          const lockstep_error& error);

}  // namespace lockstep
