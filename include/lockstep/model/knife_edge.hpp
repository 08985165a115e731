// lockstep/model/knife_edge.hpp — a knife edge on an inclined plane: the
// classic non-holonomic system (m = 0, k = 1), centre of mass at the contact point, with an exact
// solution for tau = 0.
#pragma once

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct knife_edge {
  static constexpr const char* name = "knife_edge";
  static constexpr const char* description =
      "knife edge on an inclined plane, q = (x, y, theta) with x down the slope; the blade cannot "
      "move sideways (one non-holonomic constraint)";
  static constexpr int n = 3;  // q = (x, y, theta)
  static constexpr const char* coordinate_names[n] = {"x", "y", "theta"};
  static constexpr int m = 0;
  static constexpr int k = 1;  // sin(theta) x' - cos(theta) y' = 0

  static constexpr int n_params = 5;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "mass of the blade [kg]"},
      {"I", 0.1, "moment of inertia about the contact point [kg m^2]"},
      {"g", 9.81, "gravitational acceleration [m/s^2]"},
      {"alpha", 0.3, "slope angle of the plane [rad]"},
      {"tau", 0.0, "torque about the vertical [N m]"},
  };
  static constexpr int n_inputs = 5;
  static constexpr named_value inputs[n_inputs] = {
      {"omega0", 2.0, "initial spin rate theta' [rad/s]"},
      {"u0", 0.0, "initial speed along the blade [m/s]"},
      {"x0", 0.0, "initial x, down the slope [m]"},
      {"y0", 0.0, "initial y, across the slope [m]"},
      {"theta0", 0.0, "initial blade angle from the x axis [rad]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    M(2, 2) = T(p[1]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    const P &mass_ = p[0], &g = p[2], &alpha = p[3], &tau = p[4];
    vec<T, n> Q;
    Q[0] = T(mass_ * g * sin(alpha));
    Q[1] = T(0.0);
    Q[2] = T(tau);
    return Q;
  }

  // No holonomic constraints.
  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>&, const P*) {
    return vec<T, m>{};
  }

  // A v + a with A = [sin theta, -cos theta, 0], a = 0: no velocity across the blade.
  template <class T, class P>
  LOCKSTEP_HD static vec<T, k> nonholonomic(const T&, const vec<T, n>& q, const vec<T, n>& v, const P*) {
    vec<T, k> r;
    const auto [s, c] = sin_cos(q[2]);  // core/math.hpp
    r[0] = s * v[0] - c * v[1];
    return r;
  }

  // Velocity u0 along the blade direction (cos theta0, sin theta0), so A v0 = 0.
  LOCKSTEP_HD static void initial_state(const double*, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    const double omega0 = in[0], u0 = in[1], theta0 = in[4];
    q0[0] = in[2];
    q0[1] = in[3];
    q0[2] = theta0;
    v0[0] = u0 * cos(theta0);
    v0[1] = u0 * sin(theta0);
    v0[2] = omega0;
  }
};

}  // namespace lockstep::models
