// examples/models/heavy_top.hpp — a heavy symmetric top spinning about a fixed point, in Euler
// parameters (a unit quaternion): a spatial mechanism written as a model header for
// `[model] source = "heavy_top.hpp"`.
//
// Coordinates e = (e0, e1, e2, e3), the Euler parameters of the body's orientation; one constraint,
// Phi = (e^T e - 1) / 2. With L(e) the 3 x 4 matrix that maps e' to the body angular velocity,
// w' = 2 L(e) e' (Haug, Computer-Aided Kinematics and Dynamics of Mechanical Systems, 1989,
// section 6.3; Nikravesh, Computer-Aided Analysis of Mechanical Systems, 1988, section 6.3), the
// kinetic energy is T = 2 e'^T L^T J' L e' with J' = diag(A, A, C) the inertia about the fixed point.
// Lagrange's equations give
//
//     4 L^T J' L e'' = Q_gravity + 8 L(e')^T J' L(e') e - e lambda,
//
// using L(e) e' = -L(e') e and L(e') e' = 0. 4 L^T J' L is singular along e (L e = 0); the model adds
// c e e^T, which only adds a force along e, the direction of the constraint's gradient: the
// multiplier absorbs it and the motion is unchanged (only lambda differs), while M becomes positive
// definite, as `lockstep check` asks.
//
// The centre of mass lies at distance l along the body's symmetry axis; its height is
// l (e0^2 - e1^2 - e2^2 + e3^2), the (3, 3) entry of the rotation matrix.
//
// Every function is LOCKSTEP_HD (lockstep/core/hd.hpp: __host__ __device__ under nvcc, plain inline
// otherwise), so that `lockstep run --backend cuda` can compile the model for the GPU as well.
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/model/concept.hpp"

namespace examples {

using lockstep::mat;
using lockstep::named_value;
using lockstep::vec;

struct heavy_top {
  static constexpr const char* name = "heavy_top";
  static constexpr const char* description =
      "heavy symmetric top about a fixed point, Euler parameters (e0, e1, e2, e3), gravity along -z";
  static constexpr int n = 4, m = 1, k = 0;
  static constexpr const char* coordinate_names[n] = {"e0", "e1", "e2", "e3"};

  static constexpr int n_params = 5;
  static constexpr named_value params[n_params] = {
      {"mass", 1.0, "mass of the top [kg]"},
      {"l", 0.04, "distance from the fixed point to the centre of mass [m]"},
      {"A", 2.0e-3, "moment of inertia about a transverse axis through the fixed point [kg m^2]"},
      {"C", 1.0e-3, "moment of inertia about the symmetry axis [kg m^2]"},
      {"g", 9.81, "gravitational acceleration [m/s^2]"},
  };
  static constexpr int n_inputs = 4;
  static constexpr named_value inputs[n_inputs] = {
      {"theta0", 0.3, "initial tilt of the symmetry axis from the vertical (nutation angle) [rad]"},
      {"spin0", 150.0, "initial spin rate about the symmetry axis, psi' [rad/s]"},
      {"precession0", 0.0, "initial precession rate about the vertical, phi' [rad/s]"},
      {"nutation_rate0", 0.0, "initial nutation rate, theta' [rad/s]"},
  };

  // L(e): body angular velocity w' = 2 L(e) e'.
  template <class T>
  LOCKSTEP_HD static mat<T, 3, 4> body_map(const vec<T, 4>& e) {
    mat<T, 3, 4> L;
    L(0, 0) = -e[1], L(0, 1) = e[0], L(0, 2) = e[3], L(0, 3) = -e[2];
    L(1, 0) = -e[2], L(1, 1) = -e[3], L(1, 2) = e[0], L(1, 3) = e[1];
    L(2, 0) = -e[3], L(2, 1) = e[2], L(2, 2) = -e[1], L(2, 3) = e[0];
    return L;
  }

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>& e, const P* p) {
    const P J[3] = {p[2], p[2], p[3]};
    const mat<T, 3, 4> L = body_map(e);
    // c: of the order of 4 J', so the regularized M is as well conditioned as the physical block.
    const P c = 4.0 * (2.0 * p[2] + p[3]) / 3.0;
    mat<T, n, n> M;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        T s = c * e[i] * e[j];
        for (int r = 0; r < 3; ++r) s += 4.0 * J[r] * L(r, i) * L(r, j);
        M(i, j) = s;
      }
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& e, const vec<T, n>& de, const P* p) {
    const P J[3] = {p[2], p[2], p[3]};
    const P weight_arm = p[0] * p[4] * p[1];  // m g l
    // Gravity: -d/de of m g l (e0^2 - e1^2 - e2^2 + e3^2).
    vec<T, n> Q;
    Q[0] = -2.0 * weight_arm * e[0];
    Q[1] = 2.0 * weight_arm * e[1];
    Q[2] = 2.0 * weight_arm * e[2];
    Q[3] = -2.0 * weight_arm * e[3];
    // Quadratic velocity terms: 8 L(e')^T J' L(e') e.
    const mat<T, 3, 4> Ld = body_map(de);
    vec<T, 3> w;  // L(e') e = -w'/2
    for (int r = 0; r < 3; ++r) {
      T s = Ld(r, 0) * e[0];
      for (int j = 1; j < 4; ++j) s += Ld(r, j) * e[j];
      w[r] = s;
    }
    for (int i = 0; i < n; ++i)
      for (int r = 0; r < 3; ++r) Q[i] += 8.0 * J[r] * Ld(r, i) * w[r];
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& e, const P*) {
    vec<T, m> phi;
    phi[0] = 0.5 * (e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] - 1.0);
    return phi;
  }

  // Euler parameters of the z-x-z Euler angles (precession phi, nutation theta, spin psi).
  template <class S>
  LOCKSTEP_HD static vec<S, n> euler_parameters(const S& phi, const S& theta, const S& psi) {
    vec<S, n> e;
    e[0] = cos(0.5 * theta) * cos(0.5 * (phi + psi));
    e[1] = sin(0.5 * theta) * cos(0.5 * (phi - psi));
    e[2] = sin(0.5 * theta) * sin(0.5 * (phi - psi));
    e[3] = cos(0.5 * theta) * sin(0.5 * (phi + psi));
    return e;
  }

  // e0 from the angles (phi = psi = 0), e0' by differentiating along the angle rates.
  LOCKSTEP_HD static void initial_state(const double*, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    using S = lockstep::dual<double, 1>;
    S phi(0.0), theta(in[0]), psi(0.0);
    phi.d[0] = in[2];
    theta.d[0] = in[3];
    psi.d[0] = in[1];
    const vec<S, n> e = euler_parameters(phi, theta, psi);
    for (int i = 0; i < n; ++i) {
      q0[i] = e[i].v;
      v0[i] = e[i].d[0];
    }
  }
};

}  // namespace examples
