// lockstep/model/andrews.hpp — Andrews' squeezing mechanism, seven rigid bodies in a plane
// (Hairer & Wanner, Solving ODEs II, sec. VII.7; Mazzia, Iavernaro & Magherini,
// Test Set for IVP Solvers, problem "andrews"). The standard hard index-3 benchmark.
//
// q = (beta, Theta, gamma, Phi, delta, Omega, epsilon). The published problem is written
// M q'' - Q + G^T lambda = 0, the sign convention of this project, so lambda is the published one.
#pragma once

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

struct andrews {
  static constexpr const char* name = "andrews";
  static constexpr const char* description =
      "Andrews' squeezing mechanism: seven rigid bodies, seven angles, six loop-closure constraints "
      "(IVP Test Set); the only start is the published consistent one";
  static constexpr int n = 7;
  static constexpr const char* coordinate_names[n] = {"beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"};
  static constexpr int m = 6;
  static constexpr int k = 0;

  // Parameter indices, in the order of the IVP Test Set.
  enum param_index : int {
    i_m1, i_m2, i_m3, i_m4, i_m5, i_m6, i_m7,
    i_xa, i_ya, i_xb, i_yb, i_xc, i_yc, i_c0,
    i_i1, i_i2, i_i3, i_i4, i_i5, i_i6, i_i7,
    i_d, i_da, i_e, i_ea, i_rr, i_ra, i_l0,
    i_ss, i_sa, i_sb, i_sc, i_sd, i_ta, i_tb,
    i_u, i_ua, i_ub, i_zf, i_zt, i_fa, i_mom,
    param_count
  };

  static constexpr int n_params = param_count;
  static constexpr named_value params[n_params] = {
      {"m1", .04325, "mass of body 1 [kg]"},
      {"m2", .00365, "mass of body 2 [kg]"},
      {"m3", .02373, "mass of body 3 [kg]"},
      {"m4", .00706, "mass of body 4 [kg]"},
      {"m5", .07050, "mass of body 5 [kg]"},
      {"m6", .00706, "mass of body 6 [kg]"},
      {"m7", .05498, "mass of body 7 [kg]"},
      {"xa", -.06934, "x of fixed point A [m]"},
      {"ya", -.00227, "y of fixed point A [m]"},
      {"xb", -.03635, "x of fixed point B [m]"},
      {"yb", .03273, "y of fixed point B [m]"},
      {"xc", .014, "x of the spring anchor C [m]"},
      {"yc", .072, "y of the spring anchor C [m]"},
      {"c0", 4530.0, "spring stiffness [N/m]"},
      {"i1", 2.194e-6, "moment of inertia of body 1 [kg m^2]"},
      {"i2", 4.410e-7, "moment of inertia of body 2 [kg m^2]"},
      {"i3", 5.255e-6, "moment of inertia of body 3 [kg m^2]"},
      {"i4", 5.667e-7, "moment of inertia of body 4 [kg m^2]"},
      {"i5", 1.169e-5, "moment of inertia of body 5 [kg m^2]"},
      {"i6", 5.667e-7, "moment of inertia of body 6 [kg m^2]"},
      {"i7", 1.912e-5, "moment of inertia of body 7 [kg m^2]"},
      {"d", 28e-3, "geometry length d [m]"},
      {"da", 115e-4, "geometry length da [m]"},
      {"e", 2e-2, "geometry length e [m]"},
      {"ea", 1421e-5, "geometry length ea [m]"},
      {"rr", 7e-3, "geometry length rr [m]"},
      {"ra", 92e-5, "geometry length ra [m]"},
      {"l0", 7785e-5, "spring rest length [m]"},
      {"ss", 35e-3, "geometry length ss [m]"},
      {"sa", 1874e-5, "geometry length sa [m]"},
      {"sb", 1043e-5, "geometry length sb [m]"},
      {"sc", 18e-3, "geometry length sc [m]"},
      {"sd", 2e-2, "geometry length sd [m]"},
      {"ta", 2308e-5, "geometry length ta [m]"},
      {"tb", 916e-5, "geometry length tb [m]"},
      {"u", 4e-2, "geometry length u [m]"},
      {"ua", 1228e-5, "geometry length ua [m]"},
      {"ub", 449e-5, "geometry length ub [m]"},
      {"zf", 2e-2, "geometry length zf [m]"},
      {"zt", 4e-2, "geometry length zt [m]"},
      {"fa", 1421e-5, "geometry length fa [m]"},
      {"mom", 33e-3, "motor torque [N m]"},
  };
  // No named initial inputs: the published start is the only one (IVP Test Set). There is no
  // `inputs` table because a zero-length array is ill-formed; the concept and registry accept that.
  static constexpr int n_inputs = 0;

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>& q, const P* p) {
    const P &m1 = p[i_m1], &m2 = p[i_m2], &m3 = p[i_m3], &m4 = p[i_m4], &m5 = p[i_m5], &m6 = p[i_m6],
            &m7 = p[i_m7];
    const P &i1 = p[i_i1], &i2 = p[i_i2], &i3 = p[i_i3], &i4 = p[i_i4], &i5 = p[i_i5], &i6 = p[i_i6],
            &i7 = p[i_i7];
    const P &da = p[i_da], &e = p[i_e], &ea = p[i_ea], &rr = p[i_rr], &ra = p[i_ra];
    const P &sa = p[i_sa], &sb = p[i_sb], &ta = p[i_ta], &tb = p[i_tb];
    const P &u = p[i_u], &ua = p[i_ua], &ub = p[i_ub], &zf = p[i_zf], &zt = p[i_zt], &fa = p[i_fa];

    const T c_theta = cos(q[1]);
    const T s_phi = sin(q[3]);
    const T s_omega = sin(q[5]);
    const P e_ea = e - ea;
    const P zf_fa = zf - fa;

    mat<T, n, n> M;
    M(0, 0) = m1 * ra * ra + m2 * (rr * rr - 2.0 * da * rr * c_theta + da * da) + i1 + i2;
    M(1, 0) = m2 * (da * da - da * rr * c_theta) + i2;
    M(0, 1) = M(1, 0);
    M(1, 1) = T(m2 * da * da + i2);
    M(2, 2) = T(m3 * (sa * sa + sb * sb) + i3);
    M(3, 3) = T(m4 * e_ea * e_ea + i4);
    M(4, 3) = m4 * (e_ea * e_ea + zt * e_ea * s_phi) + i4;
    M(3, 4) = M(4, 3);
    M(4, 4) = m4 * (zt * zt + 2.0 * zt * e_ea * s_phi + e_ea * e_ea) + m5 * (ta * ta + tb * tb) + i4 + i5;
    M(5, 5) = T(m6 * zf_fa * zf_fa + i6);
    M(6, 5) = m6 * (zf_fa * zf_fa - u * zf_fa * s_omega) + i6;
    M(5, 6) = M(6, 5);
    M(6, 6) = m6 * (zf_fa * zf_fa - 2.0 * u * zf_fa * s_omega + u * u) + m7 * (ua * ua + ub * ub) + i6 + i7;
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    const P &m2 = p[i_m2], &m4 = p[i_m4], &m6 = p[i_m6];
    const P &xb = p[i_xb], &yb = p[i_yb], &xc = p[i_xc], &yc = p[i_yc], &c0 = p[i_c0];
    const P &da = p[i_da], &e = p[i_e], &ea = p[i_ea], &rr = p[i_rr], &l0 = p[i_l0];
    const P &sc = p[i_sc], &sd = p[i_sd];
    const P &u = p[i_u], &zf = p[i_zf], &zt = p[i_zt], &fa = p[i_fa], &mom = p[i_mom];

    const T s_theta = sin(q[1]);
    const auto [s_gamma, c_gamma] = sin_cos(q[2]);
    const T c_phi = cos(q[3]);
    const T c_omega = cos(q[5]);
    const T &beta_dot = v[0], &theta_dot = v[1], &phi_dot = v[3], &delta_dot = v[4], &omega_dot = v[5],
            &epsilon_dot = v[6];

    // The spring between D (on body 3) and the fixed anchor C.
    const T xd = sd * c_gamma + sc * s_gamma + xb;
    const T yd = sd * s_gamma - sc * c_gamma + yb;
    const T dx = xd - xc;
    const T dy = yd - yc;
    const T L = sqrt(dx * dx + dy * dy);
    const T F = -c0 * (L - l0) / L;
    const T Fx = F * dx;
    const T Fy = F * dy;

    const P e_ea = e - ea;
    const P zf_fa = zf - fa;
    vec<T, n> Q;
    Q[0] = mom - m2 * da * rr * theta_dot * (theta_dot + 2.0 * beta_dot) * s_theta;
    Q[1] = m2 * da * rr * beta_dot * beta_dot * s_theta;
    Q[2] = Fx * (sc * c_gamma - sd * s_gamma) + Fy * (sd * c_gamma + sc * s_gamma);
    Q[3] = m4 * zt * e_ea * delta_dot * delta_dot * c_phi;
    Q[4] = -(m4 * zt * e_ea) * phi_dot * (phi_dot + 2.0 * delta_dot) * c_phi;
    Q[5] = -(m6 * u * zf_fa) * epsilon_dot * epsilon_dot * c_omega;
    Q[6] = m6 * u * zf_fa * omega_dot * (omega_dot + 2.0 * epsilon_dot) * c_omega;
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P &xa = p[i_xa], &ya = p[i_ya], &xb = p[i_xb], &yb = p[i_yb];
    const P &d = p[i_d], &e = p[i_e], &rr = p[i_rr], &ss = p[i_ss];
    const P &u = p[i_u], &zf = p[i_zf], &zt = p[i_zt];

    // sin_cos (core/math.hpp): on dual numbers, one evaluation of each serves both derivatives.
    const auto [s_beta, c_beta] = sin_cos(q[0]);
    const auto [s_bt, c_bt] = sin_cos(q[0] + q[1]);
    const auto [s_gamma, c_gamma] = sin_cos(q[2]);
    const auto [s_pd, c_pd] = sin_cos(q[3] + q[4]);
    const auto [s_delta, c_delta] = sin_cos(q[4]);
    const auto [s_oe, c_oe] = sin_cos(q[5] + q[6]);
    const auto [s_epsilon, c_epsilon] = sin_cos(q[6]);

    // The point reached from the crank through bodies 1 and 2, shared by the three loops.
    const T px = rr * c_beta - d * c_bt;
    const T py = rr * s_beta - d * s_bt;
    vec<T, m> phi;
    phi[0] = px - ss * s_gamma - xb;
    phi[1] = py + ss * c_gamma - yb;
    phi[2] = px - e * s_pd - zt * c_delta - xa;
    phi[3] = py + e * c_pd - zt * s_delta - ya;
    phi[4] = px - zf * c_oe - u * s_epsilon - xa;
    phi[5] = py - zf * s_oe + u * c_epsilon - ya;
    return phi;
  }

  // The published consistent start (IVP Test Set), valid for the default parameters; v0 = 0.
  LOCKSTEP_HD static void initial_state(const double*, const double*, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = -0.0617138900142764496358948458001;
    q0[1] = 0.0;
    q0[2] = 0.455279819163070380255912382449;
    q0[3] = 0.222668390165885884674473185609;
    q0[4] = 0.487364979543842550225598953530;
    q0[5] = -0.222668390165885884674473185609;
    q0[6] = 1.23054744454982119249735015568;
    for (int i = 0; i < n; ++i) v0[i] = 0.0;
  }
};

}  // namespace lockstep::models
