// tests/support/reference.hpp — independent references for the pendulum and the double pendulum:
// their minimal-coordinate ODEs integrated in
// long double by Gragg-Bulirsch-Stoer extrapolation, and mapped to the Cartesian q, v and the
// multipliers lambda of the project's formulation.
//
// Nothing here uses the library: the reference shares neither the formulation (angles instead of
// Cartesian coordinates with constraints) nor the method (explicit extrapolation instead of BDF) with
// the code under test.
//
// Method. The modified midpoint rule with n = 2, 4, 6, ..., 2 levels substeps of one macro step H has an
// asymptotic error expansion in even powers of H / n (Gragg 1965); Aitken-Neville extrapolation of the
// `levels` values to H / n -> 0 gives a one-step method of order 2 levels (Hairer, Norsett & Wanner I,
// section II.9). The defaults (levels = 8: order 16, H <= 1/200) put the truncation error far below
// double round-off for the angular speeds met in the tests (|theta'| <~ 15 rad/s, H |theta'| <~ 0.08),
// and long double arithmetic (64-bit significand on x86-64) keeps the accumulated round-off below
// 1e-16 over thousands of macro steps. ReferenceSolution.* tests in tests/method/bdf_test.cpp check
// the self-consistency (two macro step sizes agree) and energy conservation.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lockstep::test::reference {

using real = long double;

template <std::size_t N>
using state = std::array<real, N>;

struct settings {
  real max_macro_step = 1.0L / 200.0L;  // H: macro steps never exceed this
  int levels = 8;                       // extrapolation levels: order 2 levels
};

// One macro step of the extrapolated modified midpoint rule for y' = f(t, y).
template <std::size_t N, class F>
state<N> gbs_step(const F& f, real t, const state<N>& y0, real H, int levels) {
  constexpr int max_levels = 16;
  if (levels > max_levels) levels = max_levels;
  if (levels < 1) levels = 1;
  std::vector<std::array<state<N>, max_levels>> table(static_cast<std::size_t>(levels));
  const state<N> f0 = f(t, y0);
  for (int j = 0; j < levels; ++j) {
    const int n = 2 * (j + 1);
    const real h = H / n;
    state<N> z_prev = y0, z = y0;
    for (std::size_t i = 0; i < N; ++i) z[i] = y0[i] + h * f0[i];
    for (int m = 1; m < n; ++m) {
      const state<N> fz = f(t + m * h, z);
      state<N> z_next;
      for (std::size_t i = 0; i < N; ++i) z_next[i] = z_prev[i] + 2 * h * fz[i];
      z_prev = z;
      z = z_next;
    }
    const state<N> fz = f(t + H, z);
    state<N> Tj;
    for (std::size_t i = 0; i < N; ++i) Tj[i] = (z[i] + z_prev[i] + h * fz[i]) / 2;
    // Aitken-Neville in (H / n)^2: T[j][k] = T[j][k-1] + (T[j][k-1] - T[j-1][k-1]) / ((n_j / n_{j-k})^2 - 1).
    table[j][0] = Tj;
    for (int k = 1; k <= j; ++k) {
      const real ratio = real(n) / real(2 * (j - k + 1));
      const real denom = ratio * ratio - 1;
      for (std::size_t i = 0; i < N; ++i)
        table[j][k][i] = table[j][k - 1][i] + (table[j][k - 1][i] - table[j - 1][k - 1][i]) / denom;
    }
  }
  return table[levels - 1][levels - 1];
}

// The solution of y' = f(t, y), y(t0) = y0 at each of the sorted times (all >= t0). Each interval
// between consecutive output times is split into equal macro steps no longer than s.max_macro_step,
// so every output time is a step point (no interpolation).
template <std::size_t N, class F>
std::vector<state<N>> integrate(const F& f, real t0, const state<N>& y0, const std::vector<double>& times,
                                const settings& s = {}) {
  std::vector<state<N>> out;
  out.reserve(times.size());
  real t = t0;
  state<N> y = y0;
  for (double tout_d : times) {
    const real tout = tout_d;
    const real span = tout - t;
    if (span > 0) {
      const long steps = static_cast<long>(std::ceil(static_cast<double>(span / s.max_macro_step)));
      const real H = span / steps;
      for (long i = 0; i < steps; ++i) y = gbs_step<N>(f, t + i * H, y, H, s.levels);
      t = tout;
    }
    out.push_back(y);
  }
  return out;
}

// ---- pendulum: theta'' = -(g / L) sin theta ---------------------------------------------------------

struct pendulum_params {
  double m = 1.0, L = 1.0, g = 9.81;
};

struct pendulum_point {
  double theta, omega;
  std::array<double, 2> q, v;  // (x, y), (x', y')
  double lambda;               // with Phi = (x^2 + y^2 - L^2) / 2
  double energy;               // m/2 |v|^2 + m g y
};

inline std::vector<pendulum_point> pendulum(const pendulum_params& p, double theta0, double omega0,
                                            const std::vector<double>& times, const settings& s = {}) {
  const real gL = static_cast<real>(p.g) / static_cast<real>(p.L);
  auto f = [gL](real, const state<2>& y) { return state<2>{y[1], -gL * std::sin(y[0])}; };
  const auto ys = integrate<2>(f, 0.0L, state<2>{theta0, omega0}, times, s);
  std::vector<pendulum_point> out;
  out.reserve(ys.size());
  for (const auto& y : ys) {
    const real th = y[0], w = y[1], L = p.L, m = p.m, g = p.g;
    const real c = std::cos(th), sn = std::sin(th);
    pendulum_point pt;
    pt.theta = static_cast<double>(th);
    pt.omega = static_cast<double>(w);
    pt.q = {static_cast<double>(L * sn), static_cast<double>(-L * c)};
    pt.v = {static_cast<double>(L * w * c), static_cast<double>(L * w * sn)};
    pt.lambda = static_cast<double>(m * (g * c + L * w * w) / L);
    pt.energy = static_cast<double>(m / 2 * L * L * w * w - m * g * L * c);
    out.push_back(pt);
  }
  return out;
}

// ---- double pendulum: the 2x2 minimal ODE of double_pendulum.md --------------------------------------
//   (m1+m2) L1 th1'' + m2 L2 th2'' cos d + m2 L2 th2'^2 sin d + (m1+m2) g sin th1 = 0
//   L2 th2'' + L1 th1'' cos d - L1 th1'^2 sin d + g sin th2 = 0,      d = th1 - th2

struct double_pendulum_params {
  double m1 = 1.0, m2 = 1.0, L1 = 1.0, L2 = 1.0, g = 9.81;
};

struct double_pendulum_point {
  std::array<double, 2> theta, omega;
  std::array<double, 4> q, v, a;  // (x1, y1, x2, y2) and its first and second derivatives
  std::array<double, 2> lambda;   // with Phi1 = (|p1|^2 - L1^2) / 2, Phi2 = (|p2 - p1|^2 - L2^2) / 2
  double energy;                  // sum m_i/2 |v_i|^2 + m_i g y_i
};

// The angular accelerations (th1'', th2'') from the 2x2 system, by Cramer's rule.
inline std::array<real, 2> double_pendulum_accel(const double_pendulum_params& p, real th1, real th2, real w1,
                                                 real w2) {
  const real m1 = p.m1, m2 = p.m2, L1 = p.L1, L2 = p.L2, g = p.g;
  const real d = th1 - th2, cd = std::cos(d), sd = std::sin(d);
  const real a11 = (m1 + m2) * L1, a12 = m2 * L2 * cd;
  const real a21 = L1 * cd, a22 = L2;
  const real b1 = -m2 * L2 * w2 * w2 * sd - (m1 + m2) * g * std::sin(th1);
  const real b2 = L1 * w1 * w1 * sd - g * std::sin(th2);
  const real det = a11 * a22 - a12 * a21;
  return {(b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det};
}

inline std::vector<double_pendulum_point> double_pendulum(const double_pendulum_params& p, double theta1,
                                                          double theta2, double omega1, double omega2,
                                                          const std::vector<double>& times,
                                                          const settings& s = {}) {
  auto f = [&p](real, const state<4>& y) {
    const auto acc = double_pendulum_accel(p, y[0], y[1], y[2], y[3]);
    return state<4>{y[2], y[3], acc[0], acc[1]};
  };
  const auto ys = integrate<4>(f, 0.0L, state<4>{theta1, theta2, omega1, omega2}, times, s);
  std::vector<double_pendulum_point> out;
  out.reserve(ys.size());
  const real m1 = p.m1, m2 = p.m2, L1 = p.L1, L2 = p.L2, g = p.g;
  for (const auto& y : ys) {
    const real th1 = y[0], th2 = y[1], w1 = y[2], w2 = y[3];
    const auto acc = double_pendulum_accel(p, th1, th2, w1, w2);
    const real c1 = std::cos(th1), s1 = std::sin(th1), c2 = std::cos(th2), s2 = std::sin(th2);
    // Positions, velocities and accelerations by differentiating the position map.
    const real x1 = L1 * s1, y1 = -L1 * c1, x2 = x1 + L2 * s2, y2 = y1 - L2 * c2;
    const real vx1 = L1 * c1 * w1, vy1 = L1 * s1 * w1;
    const real vx2 = vx1 + L2 * c2 * w2, vy2 = vy1 + L2 * s2 * w2;
    const real ax1 = L1 * (c1 * acc[0] - s1 * w1 * w1), ay1 = L1 * (s1 * acc[0] + c1 * w1 * w1);
    const real ax2 = ax1 + L2 * (c2 * acc[1] - s2 * w2 * w2), ay2 = ay1 + L2 * (s2 * acc[1] + c2 * w2 * w2);
    // Multipliers from the Cartesian equations M a + G^T lambda = Q in least squares:
    // lambda = (G G^T)^-1 G (Q - M a), G = [x1 y1 0 0; -dx -dy dx dy] (dx = x2 - x1, dy = y2 - y1).
    const real dx = x2 - x1, dy = y2 - y1;
    const real r[4] = {-m1 * ax1, -m1 * g - m1 * ay1, -m2 * ax2, -m2 * g - m2 * ay2};
    const real G[2][4] = {{x1, y1, 0, 0}, {-dx, -dy, dx, dy}};
    real GGt[2][2] = {}, Gr[2] = {};
    for (int a = 0; a < 2; ++a) {
      for (int j = 0; j < 4; ++j) Gr[a] += G[a][j] * r[j];
      for (int b = 0; b < 2; ++b)
        for (int j = 0; j < 4; ++j) GGt[a][b] += G[a][j] * G[b][j];
    }
    const real det = GGt[0][0] * GGt[1][1] - GGt[0][1] * GGt[1][0];
    const real l1 = (Gr[0] * GGt[1][1] - GGt[0][1] * Gr[1]) / det;
    const real l2 = (GGt[0][0] * Gr[1] - GGt[1][0] * Gr[0]) / det;

    double_pendulum_point pt;
    pt.theta = {static_cast<double>(th1), static_cast<double>(th2)};
    pt.omega = {static_cast<double>(w1), static_cast<double>(w2)};
    pt.q = {static_cast<double>(x1), static_cast<double>(y1), static_cast<double>(x2), static_cast<double>(y2)};
    pt.v = {static_cast<double>(vx1), static_cast<double>(vy1), static_cast<double>(vx2), static_cast<double>(vy2)};
    pt.a = {static_cast<double>(ax1), static_cast<double>(ay1), static_cast<double>(ax2), static_cast<double>(ay2)};
    pt.lambda = {static_cast<double>(l1), static_cast<double>(l2)};
    pt.energy = static_cast<double>(m1 / 2 * (vx1 * vx1 + vy1 * vy1) + m2 / 2 * (vx2 * vx2 + vy2 * vy2) +
                                    g * (m1 * y1 + m2 * y2));
    out.push_back(pt);
  }
  return out;
}

}  // namespace lockstep::test::reference
