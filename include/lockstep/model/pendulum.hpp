// lockstep/model/pendulum.hpp — point mass on a massless rod in Cartesian coordinates:
// the smallest index-3 system, with an exact minimal-coordinate ODE.
#pragma once

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct pendulum {
  static constexpr const char* name = "pendulum";
  static constexpr const char* description = "point mass on a rigid massless rod, Cartesian (x, y)";
  static constexpr int n = 2;  // q = (x, y)
  static constexpr const char* coordinate_names[n] = {"x", "y"};
  static constexpr int m = 1;  // Phi = (x^2 + y^2 - L^2) / 2
  static constexpr int k = 0;

  static constexpr int n_params = 3;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "mass of the bob [kg]"},
      {"L", 1.0, "rod length [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 2;
  static constexpr named_value inputs[n_inputs] = {
      {"theta0", 1.0, "initial angle from the downward vertical [rad]"},
      {"omega0", 0.0, "initial angular velocity [rad/s]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    const P& mass_ = p[0];
    const P& g = p[2];
    vec<T, n> Q;
    Q[0] = T(0.0);
    Q[1] = T(-(mass_ * g));
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P& L = p[1];
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - L * L);
    return phi;
  }

  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    const double L = p[1], theta0 = in[0], omega0 = in[1];
    q0[0] = L * sin(theta0);
    q0[1] = -L * cos(theta0);
    v0[0] = L * omega0 * cos(theta0);
    v0[1] = L * omega0 * sin(theta0);
  }
};

}  // namespace lockstep::models
