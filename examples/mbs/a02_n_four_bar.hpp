// examples/mbs/a02_n_four_bar.hpp — problem A02 of the multibody benchmark library (González,
// Dopico, Lugrís & Cuadrado, "A benchmarking system for MBS simulation software", Multibody System
// Dynamics 16, 2006): the N-four-bar mechanism, N four-bar windows in a row, for N = 2 and for the
// library's N = 40, as model headers for `[model] source = "a02_n_four_bar.hpp"` with `name`.
//
// The mechanism. N + 1 cranks hang from ground pivots A_i = (i L, 0), i = 0 .. N; their free ends B_i
// are joined by N couplers B_i B_{i+1}: 2N + 1 moving links, every one of length L and mass m, a
// uniform rod. Gravity acts along -y. It starts with the cranks vertical, B_i = (i L, L), and every
// B_i moving at v0 along +x: the couplers stay parallel to the ground, and the mechanism turns over
// and over, passing the horizontal position (all B_i on the ground line) twice per turn. There the
// Jacobian of the constraints loses N of its 2N + 1 rows of rank and the degrees of freedom jump from
// 1 to N + 1 for an instant: a singular configuration, where a solver may stop or leave the branch
// on which the couplers stay parallel to the ground.
//
// Natural coordinates (García de Jalón & Bayo, "Kinematic and Dynamic Simulation of Multibody
// Systems: The Real-Time Challenge", 1994, ch. 3): q = (x_0, y_0, ..., x_N, y_N), the points B_i.
// Constraints, in this order (of a redundant set the rows listed last are dropped: docs/CONSTRAINT-RANK.md):
//     crank i:    ((x_i - i L)^2 + y_i^2 - L^2) / 2 = 0                       i = 0 .. N
//     coupler i:  ((x_{i+1} - x_i)^2 + (y_{i+1} - y_i)^2 - L^2) / 2 = 0      i = 0 .. N - 1
// Mass matrix (constant): a uniform rod between two points p, r has kinetic energy
// m (|p'|^2 + p'.r' + |r'|^2) / 6 (García de Jalón & Bayo 1994, section 3.3), a crank with p fixed
// m |r'|^2 / 6; so a crank adds (m / 3) I to its B_i, a coupler (m / 6) [2 I, I; I, 2 I] to B_i, B_{i+1}.
// Gravity: each rod's weight m g acts at its centre, half on each end point: -m g / 2 on y of every end
// that moves.
//
// The parallel branch is a one-degree-of-freedom system in the cranks' angle phi from +x,
// B_i = (i L + L cos phi, L sin phi): kinetic energy I phi'^2 / 2 with I = ((N + 1) / 3 + N) m L^2,
// potential ((N + 1) / 2 + N) m g L sin phi, so I phi'' = -((N + 1) / 2 + N) m g L cos phi, the
// independent solution tests/python/test_mbs_benchmarks.py holds lockstep to.
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/model/concept.hpp"

namespace examples::mbs {

using lockstep::mat;
using lockstep::named_value;
using lockstep::vec;

// The mechanics of N windows; the models below are its N = 2 and N = 40, which name what they take
// from it (a model header's struct must mention mass, force, constraint and initial_state:
// docs/MODEL-FILES.md).
template <int N>
struct n_four_bar_mechanics {
  static constexpr int n = 2 * (N + 1), m = 2 * N + 1, k = 0;
  static constexpr int n_params = 3;
  static constexpr named_value params[n_params] = {
      {"L", 1.0, "length of every link [m]"},
      {"mass", 1.0, "mass of every link, a uniform rod [kg]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 1;
  static constexpr named_value inputs[n_inputs] = {
      {"v0", 1.0, "initial velocity of every crank end B_i along +x, the cranks vertical [m/s]"},
  };

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    const P& rod = p[1];
    mat<T, n, n> M;
    for (int i = 0; i <= N; ++i)
      for (int d = 0; d < 2; ++d) M(2 * i + d, 2 * i + d) = T(rod / 3.0);  // crank i
    for (int i = 0; i < N; ++i)                                             // coupler i
      for (int d = 0; d < 2; ++d) {
        const int a = 2 * i + d, b = 2 * (i + 1) + d;
        M(a, a) = M(a, a) + T(rod / 3.0);
        M(b, b) = M(b, b) + T(rod / 3.0);
        M(a, b) = M(a, b) + T(rod / 6.0);
        M(b, a) = M(b, a) + T(rod / 6.0);
      }
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    const P half_weight = 0.5 * p[1] * p[2];
    vec<T, n> Q;
    for (int i = 0; i <= N; ++i) {
      const int links = (i == 0 || i == N) ? 2 : 3;  // its crank and one or two couplers
      Q[2 * i] = T(0.0);
      Q[2 * i + 1] = T(-(links * half_weight));
    }
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P& L = p[0];
    vec<T, m> phi;
    for (int i = 0; i <= N; ++i) {
      const T dx = q[2 * i] - P(i) * L;
      phi[i] = 0.5 * (dx * dx + q[2 * i + 1] * q[2 * i + 1] - L * L);
    }
    for (int i = 0; i < N; ++i) {
      const T dx = q[2 * (i + 1)] - q[2 * i], dy = q[2 * (i + 1) + 1] - q[2 * i + 1];
      phi[N + 1 + i] = 0.5 * (dx * dx + dy * dy - L * L);
    }
    return phi;
  }

  static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    for (int i = 0; i <= N; ++i) {
      q0[2 * i] = i * p[0];
      q0[2 * i + 1] = p[0];
      v0[2 * i] = in[0];
      v0[2 * i + 1] = 0.0;
    }
  }
};

struct n_four_bar_2 : n_four_bar_mechanics<2> {
  static constexpr const char* name = "n_four_bar_2";
  static constexpr const char* description =
      "A02 N-four-bar mechanism, N = 2: five links of 1 m and 1 kg, natural coordinates of the crank ends";
  static constexpr const char* coordinate_names[n] = {"x0", "y0", "x1", "y1", "x2", "y2"};
  using n_four_bar_mechanics<2>::mass;
  using n_four_bar_mechanics<2>::force;
  using n_four_bar_mechanics<2>::constraint;
  using n_four_bar_mechanics<2>::initial_state;
};

struct n_four_bar_40 : n_four_bar_mechanics<40> {
  static constexpr const char* name = "n_four_bar_40";
  static constexpr const char* description =
      "A02 N-four-bar mechanism, N = 40 (the library's): 81 links of 1 m and 1 kg, natural coordinates";
  using n_four_bar_mechanics<40>::mass;
  using n_four_bar_mechanics<40>::force;
  using n_four_bar_mechanics<40>::constraint;
  using n_four_bar_mechanics<40>::initial_state;
};

}  // namespace examples::mbs
