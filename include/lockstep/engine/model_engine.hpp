// lockstep/engine/model_engine.hpp — the engine table (lockstep/engine/abi.h) of a model compiled into
// the program: model_engine<Model>().
//
// Every function of the table is a thin adapter from the C ABI to the header code the library is made
// of: the per-member functors of lockstep/detail/member_kernels.hpp and split_factor.hpp over a list of
// members, the Lyapunov and sensitivity drivers, consistent initialization and the AD-derived model
// values. Nothing is computed differently from a direct call, so a member's result through the table
// is bitwise the result of the template code. Each adapter catches every exception and returns it as a
// status and a message (no exception crosses the C ABI).
//
// The table is assembled from parts, each instantiating its own templates: model_table (the model's
// tables and values), add_one_member (consistent initialization, and the one-member functions every
// method calls: one_member_instances.hpp), and per method add_method (a chunk of members), add_split
// (the split path), add_lyapunov, add_lyapunov_clone and add_sensitivities (the tangents).
// make_engine_table adds them all for a model compiled into a C++ program (model_engine<Model>()), and a
// model file's "tangents" part adds no entry (tangent_instances.hpp). The built-in models' engines
// and model files' engine libraries are written as calls of the parts by one generator
// (host/engine/engine_sources.hpp): a built-in engine in one translation unit, a model file's engine a
// unit per part that its study needs, compiled in parallel and linked into one library
// (host/model_files/model_compiler.cpp, docs/MODEL-FILES.md "What is compiled").
#pragma once

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/detail/split_factor.hpp"
#include "lockstep/engine/abi.h"
#include "lockstep/engine/abi_support.hpp"
#include "lockstep/lyapunov/sensitivity.hpp"
#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/model/concept.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/stepper/quantities.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/stepper/member.hpp"
#include "lockstep/version.hpp"

namespace lockstep {

// The table's methods[] holds one entry per method_kind, indexed by it (abi.h).
static_assert(static_cast<int>(method_kind::tsit5) + 1 == LOCKSTEP_METHOD_COUNT,
              "LOCKSTEP_METHOD_COUNT must count every method_kind");

namespace engine_detail {

// The solver options, which must name Method: an engine calls a method's functions by the method the
// options name (engine.hpp), so another method is a caller's error.
template <class Method>
solver_options options_of(const lockstep_solver_options* options) {
  const solver_options opt = options_of(options);
  if (opt.method != Method::kind)
    throw std::invalid_argument(std::string("the options name method ") + method_name(opt.method) + ", this entry runs " +
                                method_name(Method::kind));
  return opt;
}

template <class Model, class Method>
chunk_view<Model> view_of(const lockstep_chunk* c) {
  check_header(c, "chunk");
  chunk_view<Model> v;
  v.stride = c->stride;
  v.states = c->states;
  v.params = c->params;
  v.q0 = c->q0;
  v.v0 = c->v0;
  v.outputs = c->outputs;
  v.finished = c->finished;
  v.projections = c->projections;
  v.save_times = c->save_times;
  v.save_count = c->save_count;
  v.t0 = c->t0;
  v.t1 = c->t1;
  v.event_records = c->event_records;
  v.event_capacity = c->event_records != nullptr ? c->event_capacity : 0;
  v.options = options_of<Method>(c->options);
  if (c->method != static_cast<int>(v.options.method))
    throw std::invalid_argument("the chunk's method and its options' method differ");
  return v;
}

template <class Functor>
void for_members(const Functor& f, const long* members, long count) {
  for (long a = 0; a < count; ++a) f(members[a]);
}

template <int N>
vec<double, N> vec_from(const double* x) {
  vec<double, N> v;
  for (int i = 0; i < N; ++i) v[i] = x[i];
  return v;
}

// What an engine does whatever the method: the model's initial state, options, chunk layout and a
// model doctor's evaluations.
template <class Model>
struct model_functions {
  static lockstep_result initial_state(const double* params, const double* inputs, double* q0, double* v0,
                                       lockstep_error* error) {
    return guarded(error, [&] {
      vec<double, Model::n> q, v;
      Model::initial_state(params, inputs, q, v);
      for (int j = 0; j < Model::n; ++j) {
        q0[j] = q[j];
        v0[j] = v[j];
      }
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result check_options(const lockstep_solver_options* options, lockstep_error* error) {
    return guarded(error, [&] {
      const char* why = check_method_options(options_of(options));
      if (why[0] == '\0') return LOCKSTEP_OK;
      set_message(error, why);
      return LOCKSTEP_INVALID_ARGUMENT;
    });
  }

  static lockstep_result chunk_layout(int method, lockstep_chunk_layout* layout, lockstep_error* error) {
    return guarded(error, [&] {
      check_header(layout, "chunk layout");
      visit_method(static_cast<method_kind>(method), [&]<class Method>() {
        layout->state_words = soa_image<member_state<Model, Method>>::words;
        layout->projection_words = soa_image<projection_work<Model>>::words;
        layout->can_split = has_split_factorization<Method> ? 1 : 0;
      });
      return LOCKSTEP_OK;
    });
  }

  // The derived quantities of one member at saved states (stepper/quantities.hpp), point by point.
  static lockstep_result quantities_at(const double* params, long points, const double* t, const double* y,
                                       double* out, lockstep_error* error) {
    return guarded(error, [&] {
      constexpr long ny = state_layout<Model>::size, Z = quantity_count<Model>;
      for (long i = 0; i < points; ++i) evaluate_quantities<Model>(t[i], y + i * ny, params, out + i * Z);
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result evaluate(const double* params, double t, const double* q_in, const double* v_in,
                                  lockstep_model_values* out, lockstep_error* error) {
    return guarded(error, [&] {
      check_header(out, "model values");
      constexpr int n = Model::n, m = Model::m, k = Model::k;
      const auto q = vec_from<n>(q_in), v = vec_from<n>(v_in);
      if (out->mass != nullptr) {
        const mat<double, n, n> M = Model::template mass<double, double>(q, params);
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) out->mass[i * n + j] = M(i, j);
      }
      if (out->force != nullptr) {
        const vec<double, n> Q = Model::template force<double, double>(t, q, v, params);
        for (int i = 0; i < n; ++i) out->force[i] = Q[i];
      }
      if constexpr (m > 0) {
        const auto lin = constraint_linearize<Model>(t, q, params);
        for (int i = 0; i < m; ++i) {
          if (out->constraint != nullptr) out->constraint[i] = lin.phi[i];
          if (out->constraint_rate != nullptr) out->constraint_rate[i] = lin.phi_t[i];
          if (out->constraint_jacobian != nullptr)
            for (int j = 0; j < n; ++j) out->constraint_jacobian[i * n + j] = lin.G(i, j);
        }
      }
      if constexpr (k > 0) {
        const auto a = ad::evaluate_with_state_jacobians(
            [&](const auto& qq, const auto& vv) {
              using S = typename std::decay_t<decltype(qq)>::value_type;
              return Model::template nonholonomic<S, double>(S(t), qq, vv, params);
            },
            q, v);
        for (int i = 0; i < k; ++i) {
          if (out->velocity_constraint != nullptr) out->velocity_constraint[i] = a.value[i];
          if (out->velocity_jacobian != nullptr)
            for (int j = 0; j < n; ++j) out->velocity_jacobian[i * n + j] = a.d_dv(i, j);
        }
      }
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result initialize(const double* params, double t0, const double* q0, const double* v0,
                                    const lockstep_solver_options* options, lockstep_initial_values* out,
                                    lockstep_error* error) {
    return guarded(error, [&] {
      check_header(out, "initial values");
      const solver_options opt = options_of(options);
      initial_values<Model> init;
      member_counters counters;
      const member_status s = consistent_initialization<Model>(t0, vec_from<Model::n>(q0), vec_from<Model::n>(v0),
                                                               params, opt, init, counters);
      out->status = static_cast<int>(s);
      for (int j = 0; j < Model::n; ++j) {
        if (out->q != nullptr) out->q[j] = init.q[j];
        if (out->v != nullptr) out->v[j] = init.v[j];
        if (out->a != nullptr) out->a[j] = init.a[j];
      }
      for (int j = 0; j < Model::m; ++j)
        if (out->lambda != nullptr) out->lambda[j] = init.lambda[j];
      for (int j = 0; j < Model::k; ++j)
        if (out->nu != nullptr) out->nu[j] = init.nu[j];
      if (out->counters != nullptr) *static_cast<member_counters*>(out->counters) = counters;
      return LOCKSTEP_OK;
    });
  }
};

// One method's chunk functions (lockstep_method_functions: begin, advance, finish; the split path's
// advance_split and factor).
template <class Model, class Method>
struct method_functions {
  static constexpr int ny = state_layout<Model>::size;

  static lockstep_result begin(const lockstep_chunk* c, const long* members, long count, lockstep_error* error) {
    return guarded(error, [&] {
      const chunk_view<Model> view = view_of<Model, Method>(c);
      for_members(begin_member<Model, Method>{view}, members, count);
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result advance(const lockstep_chunk* c, const long* members, long count, int max_attempts,
                                 lockstep_error* error) {
    return guarded(error, [&] {
      const chunk_view<Model> view = view_of<Model, Method>(c);
      for_members(advance_member<Model, Method>{view, max_attempts}, members, count);
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result finish(const lockstep_chunk* c, long first, long count, const lockstep_member_results* out,
                                lockstep_error* error) {
    return guarded(error, [&] {
      check_header(out, "member results");
      const chunk_view<Model> view = view_of<Model, Method>(c);
      auto* counters = static_cast<member_counters*>(out->counters);
      for (long i = 0; i < count; ++i) {
        member_state<Model, Method> ms;
        soa_load(view.states, view.stride, first + i, ms);
        double p[Model::n_params];
        detail::load_params(view, first + i, p);
        out->status[i] = static_cast<int>(ms.status);
        counters[i] = ms.counters;
        out->t_final[i] = member_final_time<Model>(ms);
        const state_vector<Model> y = member_final_state<Model>(ms, p, view.options);
        for (int j = 0; j < ny; ++j) out->y_final[i * ny + j] = y[j];
        if constexpr (event_count<Model> > 0) {
          constexpr int E = event_count<Model>;
          member_event_results_of<Model>(ms.events, out->event_counts ? out->event_counts + i * E : nullptr,
                                         out->event_first_times ? out->event_first_times + i * E : nullptr,
                                         out->event_records_made ? out->event_records_made + i : nullptr,
                                         out->stop_event ? out->stop_event + i : nullptr);
        }
      }
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result advance_split(const lockstep_chunk* c, const long* members, long count, int max_attempts,
                                       int projection_split_above, lockstep_error* error) {
    return guarded(error, [&] {
      const chunk_view<Model> view = view_of<Model, Method>(c);
      for_members(advance_member_split<Model, Method>{view, max_attempts, c->pending, projection_split_above}, members,
                  count);
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result factor(const lockstep_chunk* c, const long* members, long count, lockstep_error* error) {
    return guarded(error, [&] {
      const chunk_view<Model> view = view_of<Model, Method>(c);
      for_members(factor_member<Model, Method>{view, c->pending}, members, count);
      return LOCKSTEP_OK;
    });
  }
};

// One method's tangents (lockstep_method_functions: lyapunov, lyapunov_clone, sensitivities), each
// its own function so that each can be compiled alone (model_compiler.cpp's parts).
template <class Model, class Method>
struct tangent_functions {
  static constexpr int ny = state_layout<Model>::size;

  // The Lyapunov options of a request for `method` (0: discrete QR, 1: clone), which the entry runs.
  static lyapunov_options lyapunov_options_of(const lockstep_lyapunov_request* request, int method) {
    check_header(request, "Lyapunov request");
    if (request->method != method)
      throw std::invalid_argument(std::string("the request names Lyapunov method ") +
                                  std::to_string(request->method) + ", this entry runs method " +
                                  std::to_string(method) + (method == 0 ? " (qr)" : " (clone)"));
    lyapunov_options lopt;
    lopt.exponents = request->exponents;
    lopt.renormalize = request->renormalize;
    lopt.transient = request->transient;
    lopt.metric = request->metric == 0 ? tangent_metric::mass : tangent_metric::euclidean;
    lopt.tangent_error_control = request->tangent_error_control != 0;
    return lopt;
  }

  static lockstep_result lyapunov(const double* params, const double* q0, const double* v0, double t0, double t1,
                                  const lockstep_solver_options* options, const lockstep_lyapunov_request* request,
                                  lockstep_lyapunov_output* out, lockstep_error* error) {
    return guarded(error, [&] {
      const lyapunov_options lopt = lyapunov_options_of(request, 0);
      check_header(out, "Lyapunov output");
      const solver_options opt = options_of<Method>(options);
      const lyapunov_result<Model> r =
          lyapunov_spectrum<Model, Method>(params, vec_from<Model::n>(q0), vec_from<Model::n>(v0), t0, t1, opt, lopt);
      out->status = static_cast<int>(r.status);
      std::snprintf(out->message, sizeof out->message, "%s", r.message.c_str());
      out->t_start = r.t_start;
      out->t_final = r.t_final;
      out->renormalizations = r.renormalizations;
      out->history_count = static_cast<long>(r.history_t.size());
      const std::size_t p = r.exponents.size();
      for (long row = 0; row < std::min<long>(request->history_capacity, out->history_count); ++row) {
        out->history_t[row] = r.history_t[static_cast<std::size_t>(row)];
        for (std::size_t j = 0; j < r.history[static_cast<std::size_t>(row)].size(); ++j)
          out->history[static_cast<std::size_t>(row) * r.history[static_cast<std::size_t>(row)].size() + j] =
              r.history[static_cast<std::size_t>(row)][j];
      }
      for (std::size_t j = 0; j < p; ++j) out->exponents[j] = r.exponents[j];
      out->exponent_count = static_cast<long>(p);
      if (out->counters != nullptr) *static_cast<member_counters*>(out->counters) = r.counters;
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result lyapunov_clone(const double* params, const double* q0, const double* v0, double t0,
                                        double t1, const lockstep_solver_options* options,
                                        const lockstep_lyapunov_request* request, lockstep_lyapunov_output* out,
                                        lockstep_error* error) {
    return guarded(error, [&] {
      const lyapunov_options lopt = lyapunov_options_of(request, 1);
      check_header(out, "Lyapunov output");
      const solver_options opt = options_of<Method>(options);
      const clone_result r = clone_largest_exponent<Model, Method>(params, vec_from<Model::n>(q0), vec_from<Model::n>(v0),
                                                                   t0, t1, opt, lopt, request->separation);
      out->status = static_cast<int>(r.status);
      std::snprintf(out->message, sizeof out->message, "%s", r.message.c_str());
      out->renormalizations = r.intervals;
      out->history_count = static_cast<long>(r.history_t.size());
      for (long row = 0; row < std::min<long>(request->history_capacity, out->history_count); ++row) {
        out->history_t[row] = r.history_t[static_cast<std::size_t>(row)];
        out->history[row] = r.history[static_cast<std::size_t>(row)];
      }
      out->exponents[0] = r.exponent;
      out->exponent_count = 1;
      return LOCKSTEP_OK;
    });
  }

  static lockstep_result sensitivities(const double* params, const double* q0, const double* v0, double t0, double t1,
                                       const lockstep_solver_options* options,
                                       const lockstep_sensitivity_request* request, lockstep_sensitivity_output* out,
                                       lockstep_error* error) {
    return guarded(error, [&] {
      check_header(request, "sensitivity request");
      check_header(out, "sensitivity output");
      const solver_options opt = options_of<Method>(options);
      std::vector<phase_vector<Model>> directions(static_cast<std::size_t>(std::max(0, request->state_directions)));
      for (std::size_t d = 0; d < directions.size(); ++d)
        for (int j = 0; j < 2 * Model::n; ++j) directions[d][j] = request->directions[d * 2 * Model::n + j];
      const std::vector<int> parameters(request->parameters, request->parameters + std::max(0, request->parameter_count));
      const sensitivity_result<Model> r = solve_member_with_sensitivities<Model, ignore_tangent_steps, Method>(
          params, vec_from<Model::n>(q0), vec_from<Model::n>(v0), t0, t1, opt, directions, parameters);
      out->status = static_cast<int>(r.status);
      std::snprintf(out->message, sizeof out->message, "%s", r.message.c_str());
      out->t_final = r.t_final;
      for (int j = 0; j < ny; ++j) out->y_final[j] = r.y_final[j];
      for (std::size_t d = 0; d < r.sensitivities.size(); ++d)
        for (int j = 0; j < ny; ++j) out->sensitivities[d * ny + j] = r.sensitivities[d][j];
      if (out->counters != nullptr) *static_cast<member_counters*>(out->counters) = r.counters;
      return LOCKSTEP_OK;
    });
  }
};

template <class Model>
struct value_tables {
  static constexpr int param_count = Model::n_params > 0 ? Model::n_params : 1;
  static constexpr int input_count = Model::n_inputs > 0 ? Model::n_inputs : 1;
  lockstep_value_info params[param_count] = {};
  lockstep_value_info inputs[input_count] = {};
  // The model's coordinate_names where it has them (model/concept.hpp), else q0, q1, ...
  std::string numbered[Model::n];
  const char* coordinates[Model::n] = {};
  static constexpr int event_table_count = event_count<Model> > 0 ? event_count<Model> : 1;
  lockstep_event_info events[event_table_count] = {};
  static constexpr int quantity_table_count = quantity_count<Model> > 0 ? quantity_count<Model> : 1;
  lockstep_quantity_info quantities[quantity_table_count] = {};
  value_tables() {
    if constexpr (quantity_count<Model> > 0)
      for (int k = 0; k < quantity_count<Model>; ++k)
        quantities[k] = {Model::quantities[k].name, Model::quantities[k].description};
    if constexpr (event_count<Model> > 0)
      for (int k = 0; k < event_count<Model>; ++k)
        events[k] = {Model::events[k].name, static_cast<int>(Model::events[k].direction),
                     static_cast<int>(Model::events[k].action), Model::events[k].description};
    for (int j = 0; j < Model::n; ++j) {
      if constexpr (has_coordinate_names<Model>) {
        coordinates[j] = Model::coordinate_names[j];
      } else {
        numbered[j] = "q" + std::to_string(j);
        coordinates[j] = numbered[j].c_str();
      }
    }
    for (int j = 0; j < Model::n_params; ++j)
      params[j] = {Model::params[j].name, Model::params[j].default_value, Model::params[j].description};
    if constexpr (Model::n_inputs > 0)
      for (int j = 0; j < Model::n_inputs; ++j)
        inputs[j] = {Model::inputs[j].name, Model::inputs[j].default_value, Model::inputs[j].description};
  }
};

// The x86-64 instruction set this unit is compiled for, by the names of LOCKSTEP_INSTRUCTION_SET (the
// top-level CMakeLists.txt): the widest whose features the compiler was told it may use.
constexpr const char* compiled_instruction_set() {
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__FMA__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__)
  return "avx2";
#elif defined(__SSE4_2__) && defined(__SSSE3__)
  return "sse4";
#else
  return "baseline";
#endif
}

// The table of Model's engine without any method: what it is, and what it does whatever the method.
// Each method's entries are added by add_method, add_split and the tangents' adders (header comment).
template <class Model>
lockstep_engine model_table() {
  static const value_tables<Model> tables;
  using F = model_functions<Model>;
  lockstep_engine e{};
  e.header = abi_header_for<lockstep_engine>();
  e.name = Model::name;
  if constexpr (requires { Model::description; }) e.description = Model::description;
  else e.description = "";
  e.n = Model::n;
  e.m = Model::m;
  e.k = Model::k;
  e.n_params = Model::n_params;
  e.n_inputs = Model::n_inputs;
  e.params = tables.params;
  e.inputs = tables.inputs;
  e.coordinate_names = tables.coordinates;
  e.n_events = event_count<Model>;
  e.events = tables.events;
  e.n_quantities = quantity_count<Model>;
  e.quantities = tables.quantities;
  e.quantities_at = nullptr;  // add_one_member sets it
  e.device_built = 0;
  e.initial_state = &F::initial_state;
  e.check_options = &F::check_options;
  e.chunk_layout = &F::chunk_layout;
  e.evaluate = &F::evaluate;
  e.initialize = nullptr;  // add_one_member sets it
  e.solve_on_device = nullptr;
  e.lanes_work = nullptr;  // lanes_engine.hpp's use_lanes sets them
  e.lanes_corrector_work = nullptr;
  e.instruction_set = compiled_instruction_set();
  e.lanes = 0;  // use_lanes sets it
  return e;
}

// Consistent initial values for a model doctor, and the derived quantities at saved states (which
// solve the same acceleration-level system). Its part, "one member", is also where a model file's
// engine compiles the one-member functions its other parts share (one_member_instances.hpp), which
// consistent initialization calls too: an engine of the tables alone (model_table) goes without both.
template <class Model>
void add_one_member(lockstep_engine& e) {
  e.initialize = &model_functions<Model>::initialize;
  if constexpr (quantity_count<Model> > 0) e.quantities_at = &model_functions<Model>::quantities_at;
}

// Method's begin and finish alone, for an engine whose part for Method in lanes gives its advance
// (lanes_engine.hpp, use_lanes): a model file's method part then does not compile the one-member advance,
// most of its compile time, which the lanes would replace (docs/MODEL-FILES.md, "What is compiled").
template <class Model, class Method>
void add_method_around_lanes(lockstep_engine& e) {
  using F = method_functions<Model, Method>;
  lockstep_method_functions& m = e.methods[static_cast<int>(Method::kind)];
  m.begin = &F::begin;
  m.finish = &F::finish;
}

// Method's entries that run a chunk of members: begin, advance (one member at a time) and finish.
template <class Model, class Method>
void add_method(lockstep_engine& e) {
  add_method_around_lanes<Model, Method>(e);
  e.methods[static_cast<int>(Method::kind)].advance = &method_functions<Model, Method>::advance;
}

// Method's split path (advance_split and factor), where it has one.
template <class Model, class Method>
void add_split(lockstep_engine& e) {
  if constexpr (has_split_factorization<Method>) {
    using F = method_functions<Model, Method>;
    lockstep_method_functions& m = e.methods[static_cast<int>(Method::kind)];
    m.advance_split = &F::advance_split;
    m.factor = &F::factor;
  }
}

// Method's tangents, each on its own: Lyapunov exponents by the discrete QR method, by the clone
// method, and forward sensitivities.
template <class Model, class Method>
void add_lyapunov(lockstep_engine& e) {
  e.methods[static_cast<int>(Method::kind)].lyapunov = &tangent_functions<Model, Method>::lyapunov;
}
template <class Model, class Method>
void add_lyapunov_clone(lockstep_engine& e) {
  e.methods[static_cast<int>(Method::kind)].lyapunov_clone = &tangent_functions<Model, Method>::lyapunov_clone;
}
template <class Model, class Method>
void add_sensitivities(lockstep_engine& e) {
  e.methods[static_cast<int>(Method::kind)].sensitivities = &tangent_functions<Model, Method>::sensitivities;
}

// The whole table: every method with its split path and tangents.
template <class Model>
lockstep_engine make_engine_table() {
  lockstep_engine e = model_table<Model>();
  add_one_member<Model>(e);
  for_each_method([&]<class Method>() {
    add_method<Model, Method>(e);
    add_split<Model, Method>(e);
    add_lyapunov<Model, Method>(e);
    add_lyapunov_clone<Model, Method>(e);
    add_sensitivities<Model, Method>(e);
  });
  return e;
}

}  // namespace engine_detail

// The engine table of Model: one per program, built on first use.
template <class Model>
const lockstep_engine* model_engine() {
  static_assert(lockstep_check_model<Model>());
  static const lockstep_engine table = engine_detail::make_engine_table<Model>();
  return &table;
}

}  // namespace lockstep
