// lockstep/model/concept.hpp — what a model is.
//
// A model is a plain struct describing one constrained mechanical system
//
//     M(q, p) q'' + G^T lambda + A^T nu = Q(t, q, v, p),   Phi(t, q, p) = 0,   A(t, q, p) v + a(t, q, p) = 0
//
// (docs/ARCHITECTURE.md section 1) by its sizes, its parameter and initial-input tables, and
// four functions written once for a generic scalar T (double, or dual numbers when the library
// differentiates) and a parameter scalar P:
//
//     struct my_model {
//       static constexpr const char* name = "my_model";
//       static constexpr int n = ..., m = ..., k = ...;                 // coordinates, holonomic and
//                                                                       // non-holonomic constraints
//       static constexpr int n_params = ...;
//       static constexpr named_value params[n_params] = {{"mass", 1.0, "kg, the bob"}, ...};
//       static constexpr int n_inputs = ...;
//       static constexpr named_value inputs[n_inputs] = {{"theta0", 1.0, "rad, ..."}, ...};
//
//       template <class T, class P> LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>& q, const P* p);
//       template <class T, class P> LOCKSTEP_HD static vec<T, n> force(const T& t, const vec<T, n>& q,
//                                                                     const vec<T, n>& v, const P* p);
//       template <class T, class P> LOCKSTEP_HD static vec<T, m> constraint(const T& t,
//                                                                          const vec<T, n>& q, const P* p);
//       // only when k > 0: the residual A(t, q) v + a(t, q), affine in v
//       template <class T, class P> LOCKSTEP_HD static vec<T, k> nonholonomic(const T& t,
//                                         const vec<T, n>& q, const vec<T, n>& v, const P* p);
//       // the named initial inputs mapped to a consistent (q0, v0)
//       LOCKSTEP_HD static void initial_state(const double* p, const double* inputs,
//                                             vec<double, n>& q0, vec<double, n>& v0);
//       // optional: the names of q's entries, for results and Python (else q0, q1, ...)
//       static constexpr const char* coordinate_names[n] = {"x1", "y1", ...};
//       // optional: event functions g_k(t, q, v; p), each with a direction and an action
//       // (stepper/events.hpp)
//       static constexpr int n_events = ...;
//       static constexpr event_declaration events[n_events] = {{"name", event_direction::rising,
//                                                               event_action::record, "what it is"}, ...};
//       template <class T, class P> LOCKSTEP_HD static vec<T, n_events> event(const T& t,
//                                         const vec<T, n>& q, const vec<T, n>& v, const P* p);
//       // ... or, for event functions of the accelerations and multipliers (a rod's tension, a
//       // contact force), g_k(t, q, v, q'', lambda, nu; p), with those of the acceleration-level
//       // system at (t, q, v) (stepper/events.hpp):
//       template <class T, class P> LOCKSTEP_HD static vec<T, n_events> event(const T& t,
//                                         const vec<T, n>& q, const vec<T, n>& v, const vec<T, n>& a,
//                                         const vec<T, m>& lambda, const vec<T, k>& nu, const P* p);
//       // optional: M and Q at one state in one pass, for a model whose two share work (a mechanism
//       // file places its tree once); it must give the bits of mass and force (mass_and_force below)
//       template <class T, class P> LOCKSTEP_HD static void mass_and_force(const T& t,
//                                         const vec<T, n>& q, const vec<T, n>& v, const P* p,
//                                         mat<T, n, n>& M, vec<T, n>& Q);
//       // optional: derived quantities z(t, q, v, q'', lambda, nu; p) reported at the save times
//       // (body poses, point positions, joint reactions: stepper/quantities.hpp), each with a
//       // description and units
//       static constexpr int n_quantities = ...;
//       static constexpr quantity_declaration quantities[n_quantities] = {{"name", "N, what it is"}, ...};
//       static void quantity_values(double t, const vec<double, n>& q, const vec<double, n>& v,
//                                   const vec<double, n>& a, const vec<double, m>& lambda,
//                                   const vec<double, k>& nu, const double* p, double* z);
//     };
//
// Nothing else: every Jacobian and time derivative comes from model/derivatives.hpp by automatic
// differentiation. The functions call sqrt, sin, cos, atan2, ... unqualified; where both the sine
// and the cosine of one angle are needed, `const auto [s, c] = sin_cos(angle);` (core/math.hpp) gives
// the same values and saves half the trigonometric work when the library differentiates.
// `lockstep_check_model<M>()` turns a malformed model into one readable compile error that names the
// piece that is missing, declared with other parameters, or of another type (tests/model/compile_fail/
// proves it).
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep {

// A parameter or initial input: its name, default value and a short description with units.
struct named_value {
  const char* name;
  double default_value;
  const char* description;
};

// A derived quantity (stepper/quantities.hpp): its name, for results, and a description with units.
struct quantity_declaration {
  const char* name;
  const char* description;
};

// An event function's direction: the crossings it reports (stepper/events.hpp).
enum class event_direction : int {
  both = 0,     // either way
  rising = 1,   // from g < 0 to g >= 0
  falling = -1  // from g > 0 to g <= 0
};

// What a member does at an event (stepper/events.hpp).
enum class event_action : int {
  record = 0,  // its time and state are recorded, the member goes on
  stop = 1,    // recorded, and the member ends there (status stopped_by_event)
  count = 2    // counted (and its first time kept), nothing recorded
};

// An event function's name (for results), direction, action and a short description.
struct event_declaration {
  const char* name;
  event_direction direction;
  event_action action;
  const char* description;
};

LOCKSTEP_HD constexpr const char* event_direction_name(event_direction d) {
  return d == event_direction::rising ? "rising" : d == event_direction::falling ? "falling" : "both";
}
LOCKSTEP_HD constexpr const char* event_action_name(event_action a) {
  return a == event_action::stop ? "stop" : a == event_action::count ? "count" : "record";
}

namespace model_requirements {

// The dual type the library evaluates models with most often; a model that works for it and for
// double is generic enough.
using probe_dual = dual<double, 2>;

template <class M>
concept has_sizes = requires {
  { M::n } -> std::convertible_to<int>;
  { M::m } -> std::convertible_to<int>;
  { M::k } -> std::convertible_to<int>;
  { M::n_params } -> std::convertible_to<int>;
  { M::n_inputs } -> std::convertible_to<int>;
} && (M::n > 0) && (M::m >= 0) && (M::k >= 0) && (M::m + M::k <= M::n);

template <class M>
concept has_name = requires {
  { M::name } -> std::convertible_to<const char*>;
};

template <class M>
concept has_parameter_table = requires {
  { M::params[0] } -> std::convertible_to<named_value>;
} || (M::n_params == 0);

template <class M>
concept has_input_table = requires {
  { M::inputs[0] } -> std::convertible_to<named_value>;
} || (M::n_inputs == 0);

// Whether M has a member of a given name at all, whatever its kind or signature: in a class derived
// from both M and a probe holding a data member of that name, the name is ambiguous exactly when M
// has one too (name lookup across base classes, [class.member.lookup]). This tells a function that is
// missing from one declared with other parameters. A final M cannot be derived from: it counts as
// declaring every name, and a function it lacks is reported as one that cannot be called.
template <class M, class Probe>
struct with_probe : M, Probe {};
struct mass_probe { int mass; };
struct force_probe { int force; };
struct constraint_probe { int constraint; };
struct nonholonomic_probe { int nonholonomic; };
struct initial_state_probe { int initial_state; };

template <class M>
concept declares_mass = std::is_final_v<M> || !requires { &with_probe<M, mass_probe>::mass; };
template <class M>
concept declares_force = std::is_final_v<M> || !requires { &with_probe<M, force_probe>::force; };
template <class M>
concept declares_constraint = std::is_final_v<M> || !requires { &with_probe<M, constraint_probe>::constraint; };
template <class M>
concept declares_nonholonomic = std::is_final_v<M> || !requires { &with_probe<M, nonholonomic_probe>::nonholonomic; };
template <class M>
concept declares_initial_state =
    std::is_final_v<M> || !requires { &with_probe<M, initial_state_probe>::initial_state; };

// Whether each function can be called as the library calls it, whatever it returns.
template <class M, class T>
concept mass_callable = requires(const vec<T, M::n>& q, const double* p) { M::template mass<T, double>(q, p); };
template <class M, class T>
concept force_callable = requires(const T& t, const vec<T, M::n>& q, const vec<T, M::n>& v, const double* p) {
  M::template force<T, double>(t, q, v, p);
};
template <class M, class T>
concept constraint_callable = requires(const T& t, const vec<T, M::n>& q, const double* p) {
  M::template constraint<T, double>(t, q, p);
};
template <class M, class T>
concept nonholonomic_callable = requires(const T& t, const vec<T, M::n>& q, const vec<T, M::n>& v, const double* p) {
  M::template nonholonomic<T, double>(t, q, v, p);
};

// And whether it returns what the library expects.
template <class M, class T>
concept has_mass_for = requires(const vec<T, M::n>& q, const double* p) {
  { M::template mass<T, double>(q, p) } -> std::same_as<mat<T, M::n, M::n>>;
};

template <class M, class T>
concept has_force_for = requires(const T& t, const vec<T, M::n>& q, const vec<T, M::n>& v, const double* p) {
  { M::template force<T, double>(t, q, v, p) } -> std::same_as<vec<T, M::n>>;
};

template <class M, class T>
concept has_constraint_for = requires(const T& t, const vec<T, M::n>& q, const double* p) {
  { M::template constraint<T, double>(t, q, p) } -> std::same_as<vec<T, M::m>>;
};

template <class M, class T>
concept has_nonholonomic_for =
    (M::k == 0) || requires(const T& t, const vec<T, M::n>& q, const vec<T, M::n>& v, const double* p) {
      { M::template nonholonomic<T, double>(t, q, v, p) } -> std::same_as<vec<T, M::k>>;
    };

template <class M>
concept has_initial_state = requires(const double* p, const double* in, vec<double, M::n>& q0,
                                     vec<double, M::n>& v0) {
  { M::initial_state(p, in, q0, v0) };
};

// The optional coordinate names: an array (C array or std::array) of exactly n strings.
template <class M>
concept declares_coordinate_names = requires { M::coordinate_names; };

template <class M>
constexpr bool coordinate_names_fit() {
  if constexpr (declares_coordinate_names<M>) {
    if constexpr (requires {
                    std::size(M::coordinate_names);
                    { M::coordinate_names[0] } -> std::convertible_to<const char*>;
                  })
      return std::size(M::coordinate_names) == static_cast<std::size_t>(M::n);
    else
      return false;
  }
  return true;
}

// The optional events: n_events > 0, a table of n_events declarations, and event<T, P>(t, q, v, p) or
// event<T, P>(t, q, v, a, lambda, nu, p) returning vec<T, n_events> for T = double.
template <class M>
concept declares_events = requires { M::n_events; };

template <class M>
constexpr bool events_fit() {
  if constexpr (declares_events<M>) {
    if constexpr (requires {
                    { M::n_events } -> std::convertible_to<int>;
                    std::size(M::events);
                    { M::events[0] } -> std::convertible_to<event_declaration>;
                  })
      return M::n_events > 0 && std::size(M::events) == static_cast<std::size_t>(M::n_events);
    else
      return false;
  }
  return true;
}

// The event function of the state alone, g(t, q, v; p).
template <class M>
constexpr bool event_of_state_fits() {
  return requires(const double& t, const vec<double, M::n>& q, const vec<double, M::n>& v, const double* p) {
    { M::template event<double, double>(t, q, v, p) } -> std::same_as<vec<double, M::n_events>>;
  };
}

// The event function of the accelerations and multipliers too, g(t, q, v, q'', lambda, nu; p).
template <class M>
constexpr bool event_of_multipliers_fits() {
  return requires(const double& t, const vec<double, M::n>& q, const vec<double, M::n>& v,
                  const vec<double, M::n>& a, const vec<double, M::m>& lambda, const vec<double, M::k>& nu,
                  const double* p) {
    { M::template event<double, double>(t, q, v, a, lambda, nu, p) } -> std::same_as<vec<double, M::n_events>>;
  };
}

template <class M>
constexpr bool event_function_fits() {
  if constexpr (declares_events<M>) {
    if constexpr (events_fit<M>()) return event_of_state_fits<M>() != event_of_multipliers_fits<M>();
    return false;
  }
  return true;
}

// The optional derived quantities: n_quantities > 0, a table of n_quantities declarations, and
// quantity_values(t, q, v, a, lambda, nu, p, z) on doubles.
template <class M>
concept declares_quantities = requires { M::n_quantities; };

template <class M>
constexpr bool quantities_fit() {
  if constexpr (declares_quantities<M>) {
    if constexpr (requires {
                    { M::n_quantities } -> std::convertible_to<int>;
                    std::size(M::quantities);
                    { M::quantities[0] } -> std::convertible_to<quantity_declaration>;
                  })
      return M::n_quantities > 0 && std::size(M::quantities) == static_cast<std::size_t>(M::n_quantities);
    else
      return false;
  }
  return true;
}

template <class M>
constexpr bool quantity_function_fits() {
  if constexpr (declares_quantities<M>) {
    return requires(double t, const vec<double, M::n>& q, const vec<double, M::n>& v, const vec<double, M::n>& a,
                    const vec<double, M::m>& lambda, const vec<double, M::k>& nu, const double* p, double* z) {
      M::quantity_values(t, q, v, a, lambda, nu, p, z);
    };
  }
  return true;
}

}  // namespace model_requirements

namespace model_requirements {
template <class M>
constexpr int quantity_count_of() {
  if constexpr (declares_quantities<M>)
    return int(M::n_quantities);
  else
    return 0;
}

template <class M>
constexpr int event_count_of() {
  if constexpr (declares_events<M>)
    return int(M::n_events);
  else
    return 0;
}

template <class M>
constexpr bool events_of_multipliers_of() {
  if constexpr (declares_events<M> && events_fit<M>())
    return event_of_multipliers_fits<M>();
  else
    return false;
}
}  // namespace model_requirements

// The number of event functions of a model: Model::n_events, or 0 (stepper/events.hpp).
template <class M>
inline constexpr int event_count = model_requirements::event_count_of<M>();

// Whether a model's event functions take the accelerations and multipliers (stepper/events.hpp).
template <class M>
inline constexpr bool events_of_multipliers = model_requirements::events_of_multipliers_of<M>();

// The number of derived quantities of a model: Model::n_quantities, or 0 (stepper/quantities.hpp).
template <class M>
inline constexpr int quantity_count = model_requirements::quantity_count_of<M>();

// Whether a model names its coordinates (the array checked by lockstep_check_model).
template <class M>
inline constexpr bool has_coordinate_names = model_requirements::declares_coordinate_names<M>;

// M(q) and Q(t, q, v) at one state, where the solvers need both: by the model's mass_and_force where it
// declares one, else by mass and force. The same bits either way (a model's mass_and_force must give
// them; a mechanism file's is checked so by tests/python/test_mechanisms.py). Returned, not assigned to
// the caller's matrix: the caller's M is then the one mass built (`auto [M, Q] = ...`), where an
// assignment copied it, and GCC's copy of a matrix whose entries were just stored one by one read them
// back in vector loads that stall on those stores.
template <class T, int N>
struct mass_and_force_values {
  mat<T, N, N> M;
  vec<T, N> Q;
};

template <class Model, class T, class P>
LOCKSTEP_HD mass_and_force_values<T, Model::n> mass_and_force(const T& t, const vec<T, Model::n>& q,
                                                              const vec<T, Model::n>& v, const P* p) {
  if constexpr (requires(mat<T, Model::n, Model::n>& M, vec<T, Model::n>& Q) {
                  Model::template mass_and_force<T, P>(t, q, v, p, M, Q);
                }) {
    mass_and_force_values<T, Model::n> out;
    Model::template mass_and_force<T, P>(t, q, v, p, out.M, out.Q);
    return out;
  } else {
    return {Model::template mass<T, P>(q, p), Model::template force<T, P>(t, q, v, p)};
  }
}

template <class M>
concept Model = model_requirements::has_sizes<M> && model_requirements::has_name<M> &&
                model_requirements::has_parameter_table<M> && model_requirements::has_input_table<M> &&
                model_requirements::has_mass_for<M, double> &&
                model_requirements::has_mass_for<M, model_requirements::probe_dual> &&
                model_requirements::has_force_for<M, double> &&
                model_requirements::has_force_for<M, model_requirements::probe_dual> &&
                model_requirements::has_constraint_for<M, double> &&
                model_requirements::has_constraint_for<M, model_requirements::probe_dual> &&
                model_requirements::has_nonholonomic_for<M, double> &&
                model_requirements::has_nonholonomic_for<M, model_requirements::probe_dual> &&
                model_requirements::has_initial_state<M> && model_requirements::coordinate_names_fit<M>() &&
                model_requirements::events_fit<M>() && model_requirements::event_function_fits<M>() &&
                model_requirements::quantities_fit<M>() && model_requirements::quantity_function_fits<M>();

// One static_assert per requirement, so a malformed model fails with a sentence that names what is
// missing or wrong (a function that is absent, declared with other parameters, or returning another
// type) rather than a page of substitution failures. Call it where a model enters the library.
template <class M>
constexpr bool lockstep_check_model() {
  using namespace model_requirements;
  static_assert(has_sizes<M>,
                "lockstep model: needs `static constexpr int n, m, k, n_params, n_inputs` with n > 0, "
                "m >= 0, k >= 0 and m + k <= n");
  if constexpr (has_sizes<M>) {
    static_assert(has_name<M>, "lockstep model: needs `static constexpr const char* name`");
    static_assert(has_parameter_table<M>,
                  "lockstep model: needs `static constexpr named_value params[n_params]`");
    static_assert(has_input_table<M>,
                  "lockstep model: needs `static constexpr named_value inputs[n_inputs]`");
    // Each function: missing, or declared so that the library cannot call it, or returning another
    // type; at most one of the three fails. The model compiler (host/model_files) restates these
    // messages at the line of the model's header that declares the function.
    static_assert(declares_mass<M>,
                  "lockstep model: missing mass: `template <class T, class P> static mat<T, n, n> "
                  "mass(const vec<T, n>& q, const P* p)`");
    static_assert(!declares_mass<M> || (mass_callable<M, double> && mass_callable<M, probe_dual>),
                  "lockstep model: mass cannot be called as mass<T, P>(q, p) with T = double and with dual "
                  "numbers: it must be `template <class T, class P> static mat<T, n, n> "
                  "mass(const vec<T, n>& q, const P* p)`");
    static_assert(!(mass_callable<M, double> && mass_callable<M, probe_dual>) ||
                      (has_mass_for<M, double> && has_mass_for<M, probe_dual>),
                  "lockstep model: mass returns the wrong type: it must return mat<T, n, n> for T = double and "
                  "for dual numbers: `template <class T, class P> static mat<T, n, n> "
                  "mass(const vec<T, n>& q, const P* p)`");
    static_assert(declares_force<M>,
                  "lockstep model: missing force: `template <class T, class P> static vec<T, n> "
                  "force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    static_assert(!declares_force<M> || (force_callable<M, double> && force_callable<M, probe_dual>),
                  "lockstep model: force cannot be called as force<T, P>(t, q, v, p) with T = double and with "
                  "dual numbers: it must be `template <class T, class P> static vec<T, n> "
                  "force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    static_assert(!(force_callable<M, double> && force_callable<M, probe_dual>) ||
                      (has_force_for<M, double> && has_force_for<M, probe_dual>),
                  "lockstep model: force returns the wrong type: it must return vec<T, n> for T = double and for "
                  "dual numbers: `template <class T, class P> static vec<T, n> "
                  "force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    static_assert(declares_constraint<M>,
                  "lockstep model: missing constraint: `template <class T, class P> static vec<T, m> "
                  "constraint(const T& t, const vec<T, n>& q, const P* p)`");
    static_assert(!declares_constraint<M> || (constraint_callable<M, double> && constraint_callable<M, probe_dual>),
                  "lockstep model: constraint cannot be called as constraint<T, P>(t, q, p) with T = double and "
                  "with dual numbers: it must be `template <class T, class P> static vec<T, m> "
                  "constraint(const T& t, const vec<T, n>& q, const P* p)`");
    static_assert(!(constraint_callable<M, double> && constraint_callable<M, probe_dual>) ||
                      (has_constraint_for<M, double> && has_constraint_for<M, probe_dual>),
                  "lockstep model: constraint returns the wrong type: it must return vec<T, m> (m entries, even "
                  "for m = 1) for T = double and for dual numbers: `template <class T, class P> static vec<T, m> "
                  "constraint(const T& t, const vec<T, n>& q, const P* p)`");
    if constexpr (M::k > 0) {
      static_assert(declares_nonholonomic<M>,
                    "lockstep model: k > 0 but missing nonholonomic: `template <class T, class P> static "
                    "vec<T, k> nonholonomic(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
      static_assert(!declares_nonholonomic<M> ||
                        (nonholonomic_callable<M, double> && nonholonomic_callable<M, probe_dual>),
                    "lockstep model: nonholonomic cannot be called as nonholonomic<T, P>(t, q, v, p) with "
                    "T = double and with dual numbers: it must be `template <class T, class P> static vec<T, k> "
                    "nonholonomic(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
      static_assert(!(nonholonomic_callable<M, double> && nonholonomic_callable<M, probe_dual>) ||
                        (has_nonholonomic_for<M, double> && has_nonholonomic_for<M, probe_dual>),
                    "lockstep model: nonholonomic returns the wrong type: it must return vec<T, k> for "
                    "T = double and for dual numbers: `template <class T, class P> static vec<T, k> "
                    "nonholonomic(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    }
    static_assert(declares_initial_state<M>,
                  "lockstep model: missing initial_state: `static void initial_state(const double* p, "
                  "const double* inputs, vec<double, n>& q0, vec<double, n>& v0)`");
    static_assert(!declares_initial_state<M> || has_initial_state<M>,
                  "lockstep model: initial_state cannot be called as initial_state(p, inputs, q0, v0): it must "
                  "be `static void initial_state(const double* p, const double* inputs, vec<double, n>& q0, "
                  "vec<double, n>& v0)`");
    static_assert(coordinate_names_fit<M>(),
                  "lockstep model: coordinate_names must be `static constexpr const char* coordinate_names[n]` "
                  "(or a std::array of n), one name per coordinate");
    static_assert(events_fit<M>(),
                  "lockstep model: events need `static constexpr int n_events` (> 0) and `static constexpr "
                  "event_declaration events[n_events]`, one {name, direction, action, description} per event");
    static_assert(event_function_fits<M>(),
                  "lockstep model: n_events > 0 needs one function `template <class T, class P> static "
                  "vec<T, n_events> event(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`, or "
                  "`event(const T& t, const vec<T, n>& q, const vec<T, n>& v, const vec<T, n>& a, const "
                  "vec<T, m>& lambda, const vec<T, k>& nu, const P* p)` for events of the accelerations and "
                  "multipliers, not both");
    static_assert(quantities_fit<M>(),
                  "lockstep model: quantities need `static constexpr int n_quantities` (> 0) and `static constexpr "
                  "quantity_declaration quantities[n_quantities]`, one {name, description} per quantity");
    static_assert(quantity_function_fits<M>(),
                  "lockstep model: n_quantities > 0 needs `static void quantity_values(double t, const "
                  "vec<double, n>& q, const vec<double, n>& v, const vec<double, n>& a, const vec<double, m>& "
                  "lambda, const vec<double, k>& nu, const double* p, double* z)`");
  }
  return Model<M>;
}

}  // namespace lockstep
