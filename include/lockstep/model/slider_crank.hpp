// lockstep/model/slider_crank.hpp — planar crank, connecting rod and slider in absolute (body)
// coordinates: each body free in the plane, the joints as 8 constraints,
// one degree of freedom; masses and lengths from Simeon's slider crank (IVP Test Set, "crank").
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct slider_crank {
  static constexpr const char* name = "slider_crank";
  static constexpr const char* description =
      "planar slider crank: crank, rod and slider as free bodies (x, y, phi) joined by 8 constraints";
  static constexpr int n = 9;  // q = (x1, y1, phi1, x2, y2, phi2, x3, y3, phi3)
  static constexpr const char* coordinate_names[n] = {"x1", "y1", "phi1", "x2", "y2", "phi2", "x3", "y3", "phi3"};
  static constexpr int m = 8;  // 2 + 2 + 2 revolute-joint equations, slider y3 = 0 and phi3 = 0
  static constexpr int k = 0;

  static constexpr int n_params = 13;
  static constexpr named_value params[n_params] = {
      {"l1", 0.15, "crank length (centre at mid-length) [m]"},
      {"l2", 0.30, "connecting rod length (centre at mid-length) [m]"},
      {"m1", 0.36, "crank mass [kg]"},
      {"m2", 0.151104, "rod mass [kg]"},
      {"m3", 0.075552, "slider mass [kg]"},
      {"J1", 0.000702, "crank moment of inertia about its centre [kg m^2]"},
      {"J2", 0.0011340859, "rod moment of inertia about its centre [kg m^2]"},
      {"J3", 1e-4, "slider moment of inertia about its centre [kg m^2]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
      {"T", 0.0, "constant driving torque on the crank [N m]"},
      {"k", 0.0, "stiffness of the linear spring on the slider along x [N/m]"},
      {"c", 0.0, "damping of the linear damper on the slider along x [N s/m]"},
      {"x0", 0.45, "rest position of the slider spring [m]"},
  };
  static constexpr int n_inputs = 2;
  static constexpr named_value inputs[n_inputs] = {
      {"phi1_0", 0.0, "initial crank angle [rad]"},
      {"omega0", 150.0, "initial crank angular velocity [rad/s]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    const P& m1 = p[2];
    const P& m2 = p[3];
    const P& m3 = p[4];
    mat<T, n, n> M;
    M(0, 0) = T(m1);
    M(1, 1) = T(m1);
    M(2, 2) = T(p[5]);
    M(3, 3) = T(m2);
    M(4, 4) = T(m2);
    M(5, 5) = T(p[6]);
    M(6, 6) = T(m3);
    M(7, 7) = T(m3);
    M(8, 8) = T(p[7]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    const P& m1 = p[2];
    const P& m2 = p[3];
    const P& m3 = p[4];
    const P& g = p[8];
    const P& torque = p[9];
    const P& stiffness = p[10];
    const P& damping = p[11];
    const P& rest = p[12];
    vec<T, n> Q;
    Q[0] = T(0.0);
    Q[1] = T(-(m1 * g));
    Q[2] = T(torque);
    Q[3] = T(0.0);
    Q[4] = T(-(m2 * g));
    Q[5] = T(0.0);
    Q[6] = -(stiffness * (q[6] - rest)) - damping * v[6];
    Q[7] = T(-(m3 * g));
    Q[8] = T(0.0);
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P half_l1 = 0.5 * p[0];
    const P half_l2 = 0.5 * p[1];
    const auto [s1, c1] = sin_cos(q[2]);  // core/math.hpp: one evaluation of each on dual numbers
    const auto [s2, c2] = sin_cos(q[5]);
    vec<T, m> phi;
    // crank pinned at the origin
    phi[0] = q[0] - half_l1 * c1;
    phi[1] = q[1] - half_l1 * s1;
    // crank tip = rod start
    phi[2] = q[0] + half_l1 * c1 - q[3] + half_l2 * c2;
    phi[3] = q[1] + half_l1 * s1 - q[4] + half_l2 * s2;
    // rod end = slider centre
    phi[4] = q[3] + half_l2 * c2 - q[6];
    phi[5] = q[4] + half_l2 * s2 - q[7];
    // slider on the x axis, not rotating
    phi[6] = q[7];
    phi[7] = q[8];
    return phi;
  }

  // All positions as functions of the crank angle (slider_crank.md: phi2 = -asin(l1 sin phi1 / l2),
  // the rod pointing to +x). Evaluated on a dual number phi1 + omega0 s it returns q0 and, as the
  // derivative part, v0 = dq/dphi1 omega0, which satisfies the velocity constraints exactly (to
  // round-off) because the map stays on the constraint manifold for every phi1.
  template <class S>
  LOCKSTEP_HD static vec<S, n> position(const S& phi1, const double* p) {
    const double l1 = p[0], l2 = p[1];
    const S phi2 = -asin(l1 * sin(phi1) / l2);
    const S c1 = cos(phi1), s1 = sin(phi1);
    const S c2 = cos(phi2), s2 = sin(phi2);
    vec<S, n> q;
    q[0] = 0.5 * l1 * c1;
    q[1] = 0.5 * l1 * s1;
    q[2] = phi1;
    q[3] = l1 * c1 + 0.5 * l2 * c2;
    q[4] = l1 * s1 + 0.5 * l2 * s2;
    q[5] = phi2;
    q[6] = l1 * c1 + l2 * c2;
    q[7] = S(0.0);  // l1 s1 + l2 s2 = 0 by the choice of phi2
    q[8] = S(0.0);
    return q;
  }

  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    using S = dual<double, 1>;
    S phi1(in[0]);
    phi1.d[0] = in[1];
    const vec<S, n> q = position(phi1, p);
    for (int i = 0; i < n; ++i) {
      q0[i] = q[i].v;
      v0[i] = q[i].d[0];
    }
  }
};

}  // namespace lockstep::models
