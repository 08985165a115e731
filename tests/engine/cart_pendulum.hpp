// tests/engine/cart_pendulum.hpp — a test model for the engine boundary: a pendulum hanging from a cart
// on a horizontal spring, in Cartesian coordinates q = (x_cart, x_bob, y_bob) with one holonomic
// constraint (the rod). Compiled into the test programs and, separately, into an engine library
// (engine_library.cpp) that the tests load at run time.
#pragma once

#include <stdexcept>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep::tests {

struct cart_pendulum {
  static constexpr const char* name = "cart_pendulum";
  static constexpr const char* description = "pendulum on a cart held by a horizontal spring (engine tests)";
  static constexpr int n = 3, m = 1, k = 0;
  static constexpr int n_params = 5;
  static constexpr named_value params[n_params] = {
      {"M", 2.0, "cart mass [kg]"},
      {"mb", 1.0, "bob mass [kg]"},
      {"L", 1.0, "rod length [m]"},
      {"c", 10.0, "spring stiffness on the cart [N/m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 2;
  static constexpr named_value inputs[n_inputs] = {
      {"theta0", 0.5, "initial rod angle from the downward vertical [rad]"},
      {"x0", 0.1, "initial cart position [m]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[1]);
    M(2, 2) = T(p[1]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& q, const vec<T, n>&, const P* p) {
    vec<T, n> Q;
    Q[0] = -(p[3] * q[0]);
    Q[1] = T(0.0);
    Q[2] = T(-(p[1] * p[4]));
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    vec<T, m> phi;
    const T dx = q[1] - q[0];
    phi[0] = 0.5 * (dx * dx + q[2] * q[2] - p[2] * p[2]);
    return phi;
  }

  // Throws for a rod that is not positive: the engine boundary must turn it into an error status.
  static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    if (!(p[2] > 0.0)) throw std::invalid_argument("cart_pendulum: the rod length L must be positive");
    q0[0] = in[1];
    q0[1] = in[1] + p[2] * sin(in[0]);
    q0[2] = -p[2] * cos(in[0]);
    v0[0] = 0.0;
    v0[1] = 0.0;
    v0[2] = 0.0;
  }
};

}  // namespace lockstep::tests
