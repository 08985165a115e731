// lockstep/model/double_pendulum.hpp — two point masses on massless rods in Cartesian coordinates:
// chaotic and conservative, the model for Lyapunov spectra and Monte
// Carlo studies.
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct double_pendulum {
  static constexpr const char* name = "double_pendulum";
  static constexpr const char* description =
      "two point masses on rigid massless rods, Cartesian (x1, y1, x2, y2), gravity along -y";
  static constexpr int n = 4;  // q = (x1, y1, x2, y2)
  static constexpr const char* coordinate_names[n] = {"x1", "y1", "x2", "y2"};
  static constexpr int m = 2;  // Phi1 = (x1^2 + y1^2 - L1^2) / 2, Phi2 = (|p2 - p1|^2 - L2^2) / 2
  static constexpr int k = 0;

  static constexpr int n_params = 5;
  static constexpr named_value params[n_params] = {
      {"m1", 1.0, "mass of the first bob [kg]"},
      {"m2", 1.0, "mass of the second bob [kg]"},
      {"L1", 1.0, "length of the first rod (origin to bob 1) [m]"},
      {"L2", 1.0, "length of the second rod (bob 1 to bob 2) [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 4;
  static constexpr named_value inputs[n_inputs] = {
      {"theta1", 2.0, "initial angle of the first rod from the downward vertical [rad]"},
      {"theta2", 2.5, "initial angle of the second rod from the downward vertical [rad]"},
      {"omega1", 0.0, "initial angular velocity of the first rod [rad/s]"},
      {"omega2", 0.0, "initial angular velocity of the second rod [rad/s]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    M(2, 2) = T(p[1]);
    M(3, 3) = T(p[1]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    const P& m1 = p[0];
    const P& m2 = p[1];
    const P& g = p[4];
    vec<T, n> Q;
    Q[0] = T(0.0);
    Q[1] = T(-(m1 * g));
    Q[2] = T(0.0);
    Q[3] = T(-(m2 * g));
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P& L1 = p[2];
    const P& L2 = p[3];
    const T dx = q[2] - q[0];
    const T dy = q[3] - q[1];
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - L1 * L1);
    phi[1] = 0.5 * (dx * dx + dy * dy - L2 * L2);
    return phi;
  }

  // The position map of double_pendulum.md as a function of the two angles; evaluated on a dual
  // number along (theta1 + omega1 s, theta2 + omega2 s) it gives q0 and, as the derivative part,
  // v0 = dq/ds ("velocities by differentiation") without a hand-written derivative.
  template <class S>
  LOCKSTEP_HD static vec<S, n> position(const S& th1, const S& th2, const double* p) {
    const double L1 = p[2], L2 = p[3];
    vec<S, n> q;
    q[0] = L1 * sin(th1);
    q[1] = -L1 * cos(th1);
    q[2] = q[0] + L2 * sin(th2);
    q[3] = q[1] - L2 * cos(th2);
    return q;
  }

  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    using S = dual<double, 1>;
    S th1(in[0]), th2(in[1]);
    th1.d[0] = in[2];
    th2.d[0] = in[3];
    const vec<S, n> q = position(th1, th2, p);
    for (int i = 0; i < n; ++i) {
      q0[i] = q[i].v;
      v0[i] = q[i].d[0];
    }
  }
};

}  // namespace lockstep::models
