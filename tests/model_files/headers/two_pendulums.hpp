// tests/model_files/headers/two_pendulums.hpp — a header defining two models: [model] name (or
// --name) must pick one. Both are the planar pendulum of lockstep/model/pendulum.hpp with another
// default rod length.
#pragma once

#include "lockstep/model/concept.hpp"

namespace test_models {

using lockstep::mat;
using lockstep::named_value;
using lockstep::vec;

template <int LengthTenths>
struct pendulum_of_length {
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 3;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "mass of the bob [kg]"},
      {"L", LengthTenths / 10.0, "rod length [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 1;
  static constexpr named_value inputs[n_inputs] = {{"theta0", 1.0, "initial angle [rad]"}};

  template <class T, class P>
  static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    return M;
  }
  template <class T, class P>
  static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    vec<T, n> Q;
    Q[1] = T(-(p[0] * p[2]));
    return Q;
  }
  template <class T, class P>
  static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
    return phi;
  }
  static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = p[1] * sin(in[0]);
    q0[1] = -p[1] * cos(in[0]);
    v0[0] = v0[1] = 0.0;
  }
};

// The template above is not a model by itself (it has no name and is a template); these two are.
struct short_pendulum : pendulum_of_length<5> {
  static constexpr const char* name = "short_pendulum";
  static constexpr const char* description = "pendulum, rod 0.5 m";
  using pendulum_of_length<5>::mass;
  using pendulum_of_length<5>::force;
  using pendulum_of_length<5>::constraint;
  using pendulum_of_length<5>::initial_state;
};

struct long_pendulum : pendulum_of_length<20> {
  static constexpr const char* name = "long_pendulum";
  static constexpr const char* description = "pendulum, rod 2 m";
  using pendulum_of_length<20>::mass;
  using pendulum_of_length<20>::force;
  using pendulum_of_length<20>::constraint;
  using pendulum_of_length<20>::initial_state;
};

}  // namespace test_models
