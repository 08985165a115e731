// tests/model_files/headers/lost_derivative.hpp — a pendulum whose constraint passes x through a plain
// double (value_of), a common way to cut automatic differentiation: dPhi/dx comes out 0 where it is x.
// `lockstep check` must report the derivative against central differences, naming the coordinate.
#pragma once

#include "lockstep/model/concept.hpp"

struct pendulum_with_a_double {
  static constexpr const char* name = "pendulum_with_a_double";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr const char* coordinate_names[n] = {"x", "y"};
  static constexpr int n_params = 1;
  static constexpr lockstep::named_value params[n_params] = {{"L", 1.0, "rod length [m]"}};
  static constexpr int n_inputs = 0;

  template <class T, class P>
  static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    return lockstep::mat<T, n, n>::identity();
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    lockstep::vec<T, n> Q;
    Q[1] = T(-9.81);
    return Q;
  }
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    const double x = lockstep::value_of(q[0]);  // the mistake: x leaves the dual numbers here
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (T(x * x) + q[1] * q[1] - p[0] * p[0]);
    return phi;
  }
  static void initial_state(const double* p, const double*, lockstep::vec<double, n>& q0, lockstep::vec<double, n>& v0) {
    q0[0] = 0.6 * p[0];
    q0[1] = -0.8 * p[0];
    v0[0] = v0[1] = 0.0;
  }
};
