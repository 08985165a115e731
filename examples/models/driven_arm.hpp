// examples/models/driven_arm.hpp — an arm (a point mass on a rigid massless rod, Cartesian (x, y))
// driven from rest at the bottom by a constant torque against gravity and viscous damping, with two
// events: when does it first reach the horizontal, and how often does its swing turn back on the way.
// A model header with event functions (lockstep/stepper/events.hpp) for
// `[model] source = "driven_arm.hpp"` (examples/models/driven_arm_reach.toml).
//
// The torque tau about the pivot acts on the bob as the force tau (-y, x) / L^2, perpendicular to the
// rod (its moment about the pivot is x F_y - y F_x = tau); damping is -c v; gravity -m g along y. A
// torque below m g L cannot hold the arm horizontal, but the swing it starts can still carry it there:
// which members reach it, and when, is what the study asks.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/model/concept.hpp"

namespace examples {

using lockstep::event_action;
using lockstep::event_declaration;
using lockstep::event_direction;
using lockstep::mat;
using lockstep::named_value;
using lockstep::vec;

struct driven_arm {
  static constexpr const char* name = "driven_arm";
  static constexpr const char* description = "arm driven by a constant torque against gravity and damping, Cartesian (x, y)";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr const char* coordinate_names[n] = {"x", "y"};
  static constexpr int n_params = 5;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "mass of the bob [kg]"},
      {"L", 1.0, "rod length [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
      {"c", 0.5, "viscous damping of the bob [N s/m]"},
      {"tau", 8.0, "driving torque about the pivot [N m]"},
  };
  static constexpr int n_inputs = 2;
  static constexpr named_value inputs[n_inputs] = {
      {"theta0", 0.0, "initial angle from the downward vertical [rad]"},
      {"omega0", 0.0, "initial angular velocity [rad/s]"},
  };

  static constexpr int n_events = 2;
  static constexpr event_declaration events[n_events] = {
      {"horizontal", event_direction::rising, event_action::stop, "the bob rises through the pivot's height (y = 0)"},
      {"turn", event_direction::falling, event_action::count, "the swing turns back: omega = (x y' - y x') / L^2 falls through 0"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    const P &mass_ = p[0], &L = p[1], &g = p[2], &c = p[3], &tau = p[4];
    vec<T, n> Q;
    Q[0] = -tau * q[1] / (L * L) - c * v[0];
    Q[1] = tau * q[0] / (L * L) - c * v[1] - mass_ * g;
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
    return phi;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    vec<T, n_events> g;
    g[0] = q[1];
    g[1] = (q[0] * v[1] - q[1] * v[0]) / (p[1] * p[1]);  // the angular velocity, counterclockwise
    return g;
  }

  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    const double L = p[1], theta0 = in[0], omega0 = in[1];
    q0[0] = L * sin(theta0);
    q0[1] = -L * cos(theta0);
    v0[0] = L * omega0 * cos(theta0);
    v0[1] = L * omega0 * sin(theta0);
  }
};

}  // namespace examples
