// tests/model_files/headers/compile_error.hpp — a model with a typo the compiler must report at this
// file's line 24 (`qq` is not declared).
#pragma once

#include "lockstep/model/concept.hpp"

struct typo_pendulum {
  static constexpr const char* name = "typo_pendulum";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 1;
  static constexpr lockstep::named_value params[n_params] = {{"L", 1.0, "rod length [m]"}};
  static constexpr int n_inputs = 0;
  template <class T, class P>
  static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    return lockstep::mat<T, n, n>::identity();
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    return lockstep::vec<T, n>{};
  }
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + qq[1] * q[1] - p[0] * p[0]);
    return phi;
  }
  static void initial_state(const double*, const double*, lockstep::vec<double, n>& q0, lockstep::vec<double, n>& v0) {
    q0[0] = 1.0;
    q0[1] = 0.0;
    v0[0] = v0[1] = 0.0;
  }
};
