// tests/model_files/headers/redundant_constraint.hpp — a double pendulum that states the first rod's
// length twice (Phi[2] = 2 Phi[0]): G has rank 2 of 3, and `lockstep check` must name Phi[2] as a
// combination of Phi[0].
#pragma once

#include "lockstep/model/concept.hpp"

namespace test_models {

struct double_pendulum_stated_twice {
  static constexpr const char* name = "double_pendulum_stated_twice";
  static constexpr const char* description = "double pendulum with a redundant third constraint";
  static constexpr int n = 4, m = 3, k = 0;
  static constexpr int n_params = 3;
  static constexpr lockstep::named_value params[n_params] = {
      {"L1", 1.0, "first rod [m]"}, {"L2", 1.0, "second rod [m]"}, {"g", 9.81, "gravity [m/s^2]"}};
  static constexpr int n_inputs = 0;

  template <class T, class P>
  static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    lockstep::mat<T, n, n> M;
    for (int i = 0; i < n; ++i) M(i, i) = T(1.0);
    return M;
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P* p) {
    lockstep::vec<T, n> Q;
    Q[1] = T(-p[2]);
    Q[3] = T(-p[2]);
    return Q;
  }
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    const T dx = q[2] - q[0], dy = q[3] - q[1];
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[0] * p[0]);
    phi[1] = 0.5 * (dx * dx + dy * dy - p[1] * p[1]);
    phi[2] = q[0] * q[0] + q[1] * q[1] - p[0] * p[0];
    return phi;
  }
  static void initial_state(const double* p, const double*, lockstep::vec<double, n>& q0, lockstep::vec<double, n>& v0) {
    q0[0] = p[0];
    q0[1] = 0.0;
    q0[2] = p[0] + p[1];
    q0[3] = 0.0;
    for (int i = 0; i < n; ++i) v0[i] = 0.0;
  }
};

}  // namespace test_models
