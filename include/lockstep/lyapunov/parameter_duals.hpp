// lockstep/lyapunov/parameter_duals.hpp — the model's parameters as dual numbers, so that the library's AD
// derivatives also differentiate with respect to one parameter (forward sensitivities, lyapunov/tangent.hpp).
#pragma once

#include <type_traits>
#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep {

namespace detail {

// x as the scalar T when T is P or a dual nested over P (or over double when P is double): the
// parameter enters at the innermost level, where its derivative direction lives.
template <class T, class P>
LOCKSTEP_HD T lift_parameter(const P& x) {
  if constexpr (std::is_same_v<T, P>) {
    return x;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return T(x);
  } else {
    return T(lift_parameter<typename T::value_type>(x));
  }
}

// The model with its parameters converted to the evaluation scalar before each call. Parameter
// derivatives seed the parameters with a dual direction; the library's derivative functions nest duals
// over the state scalar, and the core dual type mixes only with its own value type, so a parameter
// of type dual<double, 1> meeting a state of type dual<dual<dual<double, 1>, 1>, 1> (the acceleration
// rows) would not compile. Lifting the parameters to the state scalar makes every operation one of a
// single type, and its derivative part along the parameter is exact (forward-mode AD, core/dual.hpp).
template <class Model>
struct parameters_lifted : Model {
  static constexpr int parameter_storage = Model::n_params > 0 ? Model::n_params : 1;

  template <class T, class P>
  LOCKSTEP_HD static void lift_all(const P* p, T* out) {
    for (int i = 0; i < Model::n_params; ++i) out[i] = lift_parameter<T>(p[i]);
  }
  template <class T, class P>
  LOCKSTEP_HD static mat<T, Model::n, Model::n> mass(const vec<T, Model::n>& q, const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template mass<T, T>(q, lp);
  }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, Model::n> force(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v,
                                            const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template force<T, T>(t, q, v, lp);
  }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, Model::m> constraint(const T& t, const vec<T, Model::n>& q, const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template constraint<T, T>(t, q, lp);
  }
  template <class T, class P>
    requires(Model::k > 0)
  LOCKSTEP_HD static vec<T, Model::k> nonholonomic(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v,
                                                   const P* p) {
    T lp[parameter_storage];
    lift_all(p, lp);
    return Model::template nonholonomic<T, T>(t, q, v, lp);
  }
};

using parameter_dual = dual<double, 1>;

// The parameters as duals with direction 1 on parameter j.
template <class Model>
LOCKSTEP_HD void seed_parameter(const double* p, int j, parameter_dual* out) {
  for (int i = 0; i < Model::n_params; ++i) out[i] = parameter_dual(p[i]);
  out[j].d[0] = 1.0;
}

template <class T, int N>
LOCKSTEP_HD vec<T, N> constant_duals(const vec<double, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = T(x[i]);
  return r;
}

}  // namespace detail

}  // namespace lockstep
