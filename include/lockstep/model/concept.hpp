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
//     };
//
// Nothing else: every Jacobian and time derivative comes from model/derivatives.hpp by automatic
// differentiation. The functions call sqrt, sin, cos, atan2, ... unqualified; where both the sine
// and the cosine of one angle are needed, `const auto [s, c] = sin_cos(angle);` (core/math.hpp) gives
// the same values and saves half the trigonometric work when the library differentiates. `lockstep_check_model<M>()` turns a malformed model into one readable compile
// error that names the missing piece (tests/model/compile_fail/ proves it).
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>

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

}  // namespace model_requirements

// Whether a model names its coordinates (the array checked by lockstep_check_model).
template <class M>
inline constexpr bool has_coordinate_names = model_requirements::declares_coordinate_names<M>;

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
                model_requirements::has_initial_state<M> && model_requirements::coordinate_names_fit<M>();

// One static_assert per requirement, so a malformed model fails with a sentence that names what is
// missing rather than a page of substitution failures. Call it where a model enters the library.
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
    static_assert(has_mass_for<M, double> && has_mass_for<M, probe_dual>,
                  "lockstep model: missing mass: `template <class T, class P> static mat<T, n, n> "
                  "mass(const vec<T, n>& q, const P* p)`");
    static_assert(has_force_for<M, double> && has_force_for<M, probe_dual>,
                  "lockstep model: missing force: `template <class T, class P> static vec<T, n> "
                  "force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    static_assert(has_constraint_for<M, double> && has_constraint_for<M, probe_dual>,
                  "lockstep model: missing constraint: `template <class T, class P> static vec<T, m> "
                  "constraint(const T& t, const vec<T, n>& q, const P* p)`");
    static_assert(has_nonholonomic_for<M, double> && has_nonholonomic_for<M, probe_dual>,
                  "lockstep model: k > 0 but missing nonholonomic: `template <class T, class P> static "
                  "vec<T, k> nonholonomic(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p)`");
    static_assert(has_initial_state<M>,
                  "lockstep model: missing initial_state: `static void initial_state(const double* p, "
                  "const double* inputs, vec<double, n>& q0, vec<double, n>& v0)`");
    static_assert(coordinate_names_fit<M>(),
                  "lockstep model: coordinate_names must be `static constexpr const char* coordinate_names[n]` "
                  "(or a std::array of n), one name per coordinate");
  }
  return Model<M>;
}

}  // namespace lockstep
