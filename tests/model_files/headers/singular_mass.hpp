// tests/model_files/headers/singular_mass.hpp — a pendulum whose bob has no mass in y: M = diag(m, 0)
// is singular, which `lockstep check` must report.
#pragma once

#include "lockstep/model/concept.hpp"

struct massless_in_y {
  static constexpr const char* name = "massless_in_y";
  static constexpr const char* description = "pendulum with M = diag(m, 0): a modelling error";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 2;
  static constexpr lockstep::named_value params[n_params] = {{"m", 1.0, "mass [kg]"}, {"L", 1.0, "rod length [m]"}};
  static constexpr int n_inputs = 0;

  template <class T, class P>
  static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P* p) {
    lockstep::mat<T, n, n> M;
    M(0, 0) = T(p[0]);  // M(1, 1) forgotten
    return M;
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P* p) {
    lockstep::vec<T, n> Q;
    Q[1] = T(-9.81 * p[0]);
    return Q;
  }
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
    return phi;
  }
  static void initial_state(const double* p, const double*, lockstep::vec<double, n>& q0, lockstep::vec<double, n>& v0) {
    q0[0] = p[1] * 0.6;
    q0[1] = -p[1] * 0.8;
    v0[0] = v0[1] = 0.0;
  }
};
