// lockstep/model/linear_oscillator.hpp — a particle on the tilted plane z = a x + b y with springs to
// the origin and isotropic damping: linear, with exactly known
// Lyapunov exponents.
#pragma once

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct linear_oscillator {
  static constexpr const char* name = "linear_oscillator";
  static constexpr const char* description =
      "particle on the plane z = a x + b y with springs k1, k2, k3 to the origin and damping d";
  static constexpr int n = 3;  // q = (x, y, z)
  static constexpr const char* coordinate_names[n] = {"x", "y", "z"};
  static constexpr int m = 1;  // Phi = z - a x - b y
  static constexpr int k = 0;

  static constexpr int n_params = 7;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "particle mass"},
      {"k1", 1.0, "spring constant along x"},
      {"k2", 4.0, "spring constant along y"},
      {"k3", 9.0, "spring constant along z"},
      {"d", 0.2, "isotropic viscous damping"},
      {"a", 0.3, "plane slope along x (z = a x + b y)"},
      {"b", -0.2, "plane slope along y (z = a x + b y)"},
  };
  static constexpr int n_inputs = 4;
  static constexpr named_value inputs[n_inputs] = {
      {"x0", 1.0, "initial x (z0 = a x0 + b y0 follows)"},
      {"y0", 0.0, "initial y"},
      {"vx0", 0.0, "initial x velocity (vz0 = a vx0 + b vy0 follows)"},
      {"vy0", 0.0, "initial y velocity"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    for (int i = 0; i < n; ++i) M(i, i) = T(p[0]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    const P& d = p[4];
    vec<T, n> Q;
    for (int i = 0; i < n; ++i) Q[i] = -(p[1 + i] * q[i]) - d * v[i];
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P &a = p[5], &b = p[6];
    vec<T, m> phi;
    phi[0] = q[2] - a * q[0] - b * q[1];
    return phi;
  }

  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    const double a = p[5], b = p[6];
    q0[0] = in[0];
    q0[1] = in[1];
    q0[2] = a * in[0] + b * in[1];
    v0[0] = in[2];
    v0[1] = in[3];
    v0[2] = a * in[2] + b * in[3];
  }
};

}  // namespace lockstep::models
