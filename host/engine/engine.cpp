// host/engine/engine.cpp — lockstep::engine (lockstep/engine/engine.hpp): the C ABI's status codes
// turned back into C++ exceptions on the host side of the boundary.
#include "lockstep/engine/engine.hpp"

#include <new>
#include <string>
#include <string_view>

namespace lockstep {

namespace {

std::string describe(const lockstep_abi_header& h) {
  return "ABI version " + std::to_string(h.abi_version) + ", " + std::to_string(h.struct_size) + "-byte table, " +
         (h.build_id != nullptr ? std::string(h.build_id) : std::string("no build id"));
}

template <class Call>
void call_engine(const lockstep_engine& table, const char* what, Call&& call) {
  lockstep_error error{};
  const lockstep_result r = call(&error);
  if (r != LOCKSTEP_OK) throw_engine_failure(table, what, r, error);
}

// Which part of an engine an entry of lockstep_method_functions belongs to, for the message of an
// engine compiled without it.
const char* part_of(const char* call) {
  const std::string_view c(call);
  if (c == "advance_split" || c == "factor") return "split path";
  if (c == "lyapunov") return "Lyapunov tangents (discrete QR)";
  if (c == "lyapunov_clone") return "Lyapunov clone";
  if (c == "sensitivities") return "sensitivities";
  return "chunk functions";
}

}  // namespace

template <class Function>
Function engine::method_entry(method_kind method, Function lockstep_method_functions::*entry, const char* call) const {
  const int index = static_cast<int>(method);
  if (index < 0 || index >= LOCKSTEP_METHOD_COUNT)
    throw std::invalid_argument(std::string("model ") + table_->name + ": " + call + ": no method " + std::to_string(index));
  const Function f = table_->methods[index].*entry;
  if (f == nullptr)
    throw std::invalid_argument(std::string("model ") + table_->name + ": " + call + ": this engine holds no " +
                                part_of(call) + " for method " + method_name(method) +
                                (std::string_view(call) == "advance_split" || std::string_view(call) == "factor"
                                     ? std::string(" (the method has no split path, or the model file was compiled "
                                                   "without it)")
                                     : std::string(" (a model file's engine holds what it was loaded for: "
                                                   "load it again asking for this method)")));
  return f;
}

bool engine::has_method(method_kind method) const {
  const int index = static_cast<int>(method);
  return index >= 0 && index < LOCKSTEP_METHOD_COUNT && table_->methods[index].advance != nullptr;
}

bool engine::has_split(method_kind method) const {
  const int index = static_cast<int>(method);
  return index >= 0 && index < LOCKSTEP_METHOD_COUNT && table_->methods[index].advance_split != nullptr;
}

bool engine::has_lyapunov(method_kind method, int lyapunov_method) const {
  const int index = static_cast<int>(method);
  if (index < 0 || index >= LOCKSTEP_METHOD_COUNT) return false;
  const lockstep_method_functions& f = table_->methods[index];
  return (lyapunov_method == 0 ? f.lyapunov : f.lyapunov_clone) != nullptr;
}

bool engine::has_sensitivities(method_kind method) const {
  const int index = static_cast<int>(method);
  return index >= 0 && index < LOCKSTEP_METHOD_COUNT && table_->methods[index].sensitivities != nullptr;
}

void throw_engine_failure(const lockstep_engine& table, const char* call, lockstep_result result,
                          const lockstep_error& error) {
  const std::string message = std::string("model ") + table.name + ": " + call + ": " + error.message;
  switch (result) {
    case LOCKSTEP_OK: return;
    case LOCKSTEP_INVALID_ARGUMENT:
    case LOCKSTEP_UNSUPPORTED: throw std::invalid_argument(message);
    case LOCKSTEP_OUT_OF_MEMORY: throw std::bad_alloc();
    case LOCKSTEP_INTERNAL_ERROR: break;
  }
  throw engine_error(message);
}

engine::engine(const lockstep_engine* table) : table_(table) {
  if (table == nullptr) throw std::invalid_argument("lockstep: no engine table");
  const lockstep_abi_header expected = abi_header_for<lockstep_engine>();
  if (table->header.abi_version != expected.abi_version || table->header.struct_size != expected.struct_size)
    throw std::invalid_argument("lockstep: the engine table has " + describe(table->header) + "; this program expects " +
                                describe(expected) + ": rebuild the engine with this lockstep");
}

void engine::initial_state(const double* params, const double* inputs, double* q0, double* v0) const {
  call_engine(*table_, "initial_state", [&](lockstep_error* e) { return table_->initial_state(params, inputs, q0, v0, e); });
}

std::string engine::refusal(const solver_options& options) const {
  lockstep_error error{};
  const lockstep_solver_options abi = abi_options(options);
  const lockstep_result r = table_->check_options(&abi, &error);
  if (r == LOCKSTEP_OK) return std::string();
  if (r == LOCKSTEP_INVALID_ARGUMENT) return error.message;
  throw_engine_failure(*table_, "check_options", r, error);
  return std::string();
}

lockstep_chunk_layout engine::chunk_layout(method_kind method) const {
  lockstep_chunk_layout layout{};
  layout.header = abi_header_for<lockstep_chunk_layout>();
  call_engine(*table_, "chunk_layout", [&](lockstep_error* e) { return table_->chunk_layout(static_cast<int>(method), &layout, e); });
  return layout;
}

void engine::begin(const lockstep_chunk& chunk, const long* members, long count) const {
  const auto f = method_entry(method_kind(chunk.method), &lockstep_method_functions::begin, "begin");
  call_engine(*table_, "begin", [&](lockstep_error* e) { return f(&chunk, members, count, e); });
}

void engine::advance(const lockstep_chunk& chunk, const long* members, long count, int max_attempts) const {
  const auto f = method_entry(method_kind(chunk.method), &lockstep_method_functions::advance, "advance");
  call_engine(*table_, "advance", [&](lockstep_error* e) { return f(&chunk, members, count, max_attempts, e); });
}

void engine::advance_split(const lockstep_chunk& chunk, const long* members, long count, int max_attempts,
                           int projection_split_above) const {
  const auto f = method_entry(method_kind(chunk.method), &lockstep_method_functions::advance_split, "advance_split");
  call_engine(*table_, "advance_split", [&](lockstep_error* e) {
    return f(&chunk, members, count, max_attempts, projection_split_above, e);
  });
}

void engine::factor(const lockstep_chunk& chunk, const long* members, long count) const {
  const auto f = method_entry(method_kind(chunk.method), &lockstep_method_functions::factor, "factor");
  call_engine(*table_, "factor", [&](lockstep_error* e) { return f(&chunk, members, count, e); });
}

void engine::finish(const lockstep_chunk& chunk, long first, long count, int* status, member_counters* counters,
                    double* t_final, double* y_final, const member_event_results& events) const {
  lockstep_member_results out{};
  out.header = abi_header_for<lockstep_member_results>();
  out.status = status;
  out.counters = counters;
  out.t_final = t_final;
  out.y_final = y_final;
  out.event_counts = events.counts;
  out.event_first_times = events.first_times;
  out.event_records_made = events.records_made;
  out.stop_event = events.stop_event;
  const auto f = method_entry(method_kind(chunk.method), &lockstep_method_functions::finish, "finish");
  call_engine(*table_, "finish", [&](lockstep_error* e) { return f(&chunk, first, count, &out, e); });
}

void engine::lyapunov(const double* params, const double* q0, const double* v0, double t0, double t1,
                      const solver_options& options, const lockstep_lyapunov_request& request,
                      lockstep_lyapunov_output& out) const {
  const bool clone = request.method == 1;
  const char* call = clone ? "lyapunov_clone" : "lyapunov";
  const auto f = method_entry(options.method, clone ? &lockstep_method_functions::lyapunov_clone
                                                    : &lockstep_method_functions::lyapunov, call);
  const lockstep_solver_options abi = abi_options(options);
  call_engine(*table_, call, [&](lockstep_error* e) {
    return f(params, q0, v0, t0, t1, &abi, &request, &out, e);
  });
}

void engine::sensitivities(const double* params, const double* q0, const double* v0, double t0, double t1,
                           const solver_options& options, const lockstep_sensitivity_request& request,
                           lockstep_sensitivity_output& out) const {
  const auto f = method_entry(options.method, &lockstep_method_functions::sensitivities, "sensitivities");
  const lockstep_solver_options abi = abi_options(options);
  call_engine(*table_, "sensitivities", [&](lockstep_error* e) {
    return f(params, q0, v0, t0, t1, &abi, &request, &out, e);
  });
}

void engine::quantities_at(const double* params, long points, const double* t, const double* y, double* out) const {
  if (table_->n_quantities <= 0)
    throw std::invalid_argument(std::string("model ") + table_->name + " declares no derived quantities");
  if (table_->quantities_at == nullptr)
    throw std::invalid_argument(std::string("model ") + table_->name + ": quantities_at: this engine holds the model's "
                                "tables alone (a model file's engine holds what it was loaded for: load it again "
                                "asking for a method)");
  call_engine(*table_, "quantities_at",
              [&](lockstep_error* e) { return table_->quantities_at(params, points, t, y, out, e); });
}

void engine::evaluate(const double* params, double t, const double* q, const double* v, lockstep_model_values& out) const {
  call_engine(*table_, "evaluate", [&](lockstep_error* e) { return table_->evaluate(params, t, q, v, &out, e); });
}

void engine::initialize(const double* params, double t0, const double* q0, const double* v0, const solver_options& options,
                        lockstep_initial_values& out) const {
  if (table_->initialize == nullptr)
    throw std::invalid_argument(std::string("model ") + table_->name + ": initialize: this engine holds the model's "
                                "tables alone (a model file's engine holds what it was loaded for: load it again "
                                "asking for a method)");
  const lockstep_solver_options abi = abi_options(options);
  call_engine(*table_, "initialize", [&](lockstep_error* e) {
    return table_->initialize(params, t0, q0, v0, &abi, &out, e);
  });
}

void engine::solve_on_device(lockstep_device_run& run) const {
  if (table_->solve_on_device == nullptr)
    throw std::invalid_argument(std::string("lockstep: the cuda backend is not built for model ") + table_->name);
  call_engine(*table_, "solve_on_device", [&](lockstep_error* e) { return table_->solve_on_device(&run, e); });
}

}  // namespace lockstep
