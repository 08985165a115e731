// lockstep/model/car_axis.hpp — a car axle on a bumpy road (Mazzia, Iavernaro &
// Magherini, Test Set for IVP Solvers, problem "caraxis", index 3). Stiff springs, light masses and a
// rheonomic constraint: the left wheel follows the road height yb(t) = r sin(w t), so Phi_t and Phi_tt
// are non-zero and a wrong time derivative in a formulation shows at once as drift.
//
// Sign: the Test Set writes K q'' = Q + G^T lambda_pub; this project writes K q'' + G^T lambda = Q,
// so lambda = -lambda_pub (IVP Test Set). Phi2 is not halved, exactly as published.
#pragma once

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct car_axis {
  static constexpr const char* name = "car_axis";
  static constexpr const char* description =
      "car axle on a bumpy road (IVP Test Set caraxis): stiff springs, time-dependent constraint; "
      "the only start is the published consistent one";
  static constexpr int n = 4;  // q = (xl, yl, xr, yr)
  static constexpr const char* coordinate_names[n] = {"xl", "yl", "xr", "yr"};
  static constexpr int m = 2;
  static constexpr int k = 0;

  static constexpr int n_params = 7;
  static constexpr named_value params[n_params] = {
      {"eps", 1e-2, "stiffness parameter: the wheel masses are K = mass eps^2 / 2"},
      {"mass", 10.0, "mass scale M of the Test Set (K = mass eps^2 / 2)"},
      {"L", 1.0, "axle length"},
      {"L0", 0.5, "rest length of the wheel springs"},
      {"r", 0.1, "amplitude of the road bumps"},
      {"w", 10.0, "angular frequency of the road bumps"},
      {"g", 1.0, "gravitational acceleration along -y"},
  };
  // No named initial inputs: the published start is the only one (IVP Test Set). There is no
  // `inputs` table because a zero-length array is ill-formed; the concept and registry accept that.
  static constexpr int n_inputs = 0;

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    const P K = 0.5 * p[1] * p[0] * p[0];
    mat<T, n, n> M;
    for (int i = 0; i < n; ++i) M(i, i) = T(K);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T& t, const vec<T, n>& q, const vec<T, n>&, const P* p) {
    const P K = 0.5 * p[1] * p[0] * p[0];
    const P &L = p[2], &L0 = p[3], &g = p[6];
    const T yb = road_height(t, p);
    const T xb = sqrt(L * L - yb * yb);
    const T ll = sqrt(q[0] * q[0] + q[1] * q[1]);
    const T rx = q[2] - xb;
    const T ry = q[3] - yb;
    const T lr = sqrt(rx * rx + ry * ry);
    vec<T, n> Q;
    Q[0] = (L0 - ll) * q[0] / ll;
    Q[1] = (L0 - ll) * q[1] / ll - K * g;
    Q[2] = (L0 - lr) * rx / lr;
    Q[3] = (L0 - lr) * ry / lr - K * g;
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T& t, const vec<T, n>& q, const P* p) {
    const P& L = p[2];
    const T yb = road_height(t, p);
    const T xb = sqrt(L * L - yb * yb);
    const T dx = q[0] - q[2];
    const T dy = q[1] - q[3];
    vec<T, m> phi;
    phi[0] = xb * q[0] + yb * q[1];
    phi[1] = dx * dx + dy * dy - L * L;
    return phi;
  }

  // The published consistent start (IVP Test Set), valid for the default parameters: then
  // lambda(0) = 0 and q''(0) = (0, -1, 0, -1).
  LOCKSTEP_HD static void initial_state(const double*, const double*, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = 0.0;
    q0[1] = 0.5;
    q0[2] = 1.0;
    q0[3] = 0.5;
    v0[0] = -0.5;
    v0[1] = 0.0;
    v0[2] = -0.5;
    v0[3] = 0.0;
  }

  // yb(t) = r sin(w t): the road under the left wheel.
  template <class T, class P>
  LOCKSTEP_HD static T road_height(const T& t, const P* p) {
    const P &r = p[4], &w = p[5];
    return r * sin(w * t);
  }
};

}  // namespace lockstep::models
