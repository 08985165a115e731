// examples/mbs/a04_bricard.hpp — Bricard's mechanism, after problem A04 of the multibody benchmark
// library (González, Dopico, Lugrís & Cuadrado, "A benchmarking system for MBS simulation software",
// Multibody System Dynamics 16, 2006): five rods of 1 m and 1 kg with a square cross-section of 0.1 m
// and six revolute joints, gravity along -y. Grübler's count gives 0 degrees of freedom, the geometry
// 1: the constraints are redundant on the mechanism's whole motion, the case lockstep's rank decision
// is for (docs/CONSTRAINT-RANK.md). As a model header for `[model] source = "a04_bricard.hpp"`.
//
// The geometry, Bricard's orthogonal linkage: six links of equal length (the five rods and the
// ground), every link perpendicular to the axes of the two joints at its ends, consecutive joint axes
// perpendicular, no offsets. Its starting configuration is a closed path along six edges of the unit
// cube, V0 = (0,0,0), V1 = (1,0,0) (both fixed: the ground link), V2 = (1,1,0), V3 = (1,1,1),
// V4 = (0,1,1), V5 = (0,0,1), the axis at each V_i perpendicular to its two edges: u0 = y, u1 = z
// (fixed), u2 = x, u3 = y, u4 = z, u5 = x. The library's figure shows five rods in such a right-angled
// path; its exact coordinates could not be confirmed, so this is its kind, not its certified copy.
//
// Natural coordinates (García de Jalón & Bayo, "Kinematic and Dynamic Simulation of Multibody
// Systems", 1994, ch. 3): the moving joint points V2 .. V5 and the unit vectors u2 .. u5 of their
// axes, n = 24; rods i = 1 .. 5 join V_i and V_{i+1} (V6 = V0) and carry the axes u_i, u_{i+1}. A
// revolute joint is two rods sharing a point and an axis vector; each rod is rigid by
//     |V_{i+1} - V_i|^2 = L^2,  |u|^2 = 1 (each moving axis once),
//     u_i . (V_{i+1} - V_i) = 0,  u_{i+1} . (V_{i+1} - V_i) = 0,  u_i . u_{i+1} = 0,
// 24 constraints for 24 coordinates, of which one (the last, u5 . u0 = 0: of a redundant set the
// rows listed last are dropped) is a consequence of the others along the whole motion (checked by
// continuation along the motion; the solver's rank decision finds it at the start).
// Mass matrix (constant): a rod's points are r = (1 - s) V_i + s V_{i+1} + a u_i + b u_{i+1} with
// s in [0, 1] and (a, b) over the square section (side w); integrating |r'|^2 over the uniform rod
// gives m [1/3, 1/6, 0, 0; 1/6, 1/3, 0, 0; 0, 0, w^2/12, 0; 0, 0, 0, w^2/12] (x) I_3 on
// (V_i, V_{i+1}, u_i, u_{i+1}) (García de Jalón & Bayo 1994, section 3.3). Gravity: each rod's
// weight at its centre, -m g / 2 on y of each of its moving end points.
#pragma once

#include "lockstep/core/dual.hpp"
#include "lockstep/model/concept.hpp"

namespace examples::mbs {

using lockstep::mat;
using lockstep::named_value;
using lockstep::vec;

struct bricard {
  static constexpr const char* name = "bricard";
  static constexpr const char* description =
      "Bricard's orthogonal 6R linkage: five rods of 1 m and 1 kg, six revolute joints, natural coordinates";
  static constexpr int n = 24, m = 24, k = 0;
  static constexpr const char* coordinate_names[n] = {
      "x2",  "y2",  "z2",  "x3",  "y3",  "z3",  "x4",  "y4",  "z4",  "x5",  "y5",  "z5",
      "u2x", "u2y", "u2z", "u3x", "u3y", "u3z", "u4x", "u4y", "u4z", "u5x", "u5y", "u5z"};

  static constexpr int n_params = 4;
  static constexpr named_value params[n_params] = {
      {"L", 1.0, "length of every rod and of the ground link [m]"},
      {"mass", 1.0, "mass of every rod [kg]"},
      {"section", 0.1, "side of the rods' square cross-section [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
  };
  static constexpr int n_inputs = 1;
  static constexpr named_value inputs[n_inputs] = {
      {"omega", 0.0, "initial angular velocity of the first rod (V1 V2) about its fixed axis u1 = +z [rad/s]"},
  };

  // Moving point V_i (i = 2 .. 5) and axis u_i start at these offsets of q.
  static constexpr int point(int i) { return 3 * (i - 2); }
  static constexpr int axis(int i) { return 12 + 3 * (i - 2); }

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    const P rod = p[1], w = p[2];
    const P ends[2][2] = {{rod / 3.0, rod / 6.0}, {rod / 6.0, rod / 3.0}};
    const P axes = rod * w * w / 12.0;
    mat<T, n, n> M;
    for (int r = 1; r <= 5; ++r) {
      const int at[2] = {r, r == 5 ? 0 : r + 1};  // the rod's joints; 0 and 1 are fixed
      for (int a = 0; a < 2; ++a) {
        if (at[a] < 2) continue;
        for (int d = 0; d < 3; ++d) M(axis(at[a]) + d, axis(at[a]) + d) = M(axis(at[a]) + d, axis(at[a]) + d) + T(axes);
        for (int b = 0; b < 2; ++b) {
          if (at[b] < 2) continue;
          for (int d = 0; d < 3; ++d)
            M(point(at[a]) + d, point(at[b]) + d) = M(point(at[a]) + d, point(at[b]) + d) + T(ends[a][b]);
        }
      }
    }
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    const P half_weight = 0.5 * p[1] * p[3];
    vec<T, n> Q;
    for (int i = 0; i < n; ++i) Q[i] = T(0.0);
    for (int r = 1; r <= 5; ++r) {
      const int at[2] = {r, r == 5 ? 0 : r + 1};
      for (int a = 0; a < 2; ++a)
        if (at[a] >= 2) Q[point(at[a]) + 1] = Q[point(at[a]) + 1] - T(half_weight);
    }
    return Q;
  }

  // The fixed joints: V0, V1 and their axes u0, u1.
  template <class T, class P>
  LOCKSTEP_HD static void joint(int i, const vec<T, n>& q, const P* p, T V[3], T u[3]) {
    const P& L = p[0];
    if (i == 0 || i == 1) {
      V[0] = T(i == 1 ? L : P(0.0)), V[1] = T(0.0), V[2] = T(0.0);
      u[0] = T(0.0), u[1] = T(i == 0 ? 1.0 : 0.0), u[2] = T(i == 1 ? 1.0 : 0.0);
      return;
    }
    for (int d = 0; d < 3; ++d) {
      V[d] = q[point(i) + d];
      u[d] = q[axis(i) + d];
    }
  }

  template <class T>
  LOCKSTEP_HD static T dot(const T a[3], const T b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P& L = p[0];
    vec<T, m> phi;
    int row = 0;
    for (int r = 1; r <= 5; ++r) {
      const int i = r, j = r == 5 ? 0 : r + 1;
      T Vi[3], ui[3], Vj[3], uj[3], d[3];
      joint(i, q, p, Vi, ui);
      joint(j, q, p, Vj, uj);
      for (int c = 0; c < 3; ++c) d[c] = Vj[c] - Vi[c];
      phi[row++] = dot(d, d) - L * L;
      if (j >= 2) phi[row++] = dot(uj, uj) - 1.0;
      phi[row++] = dot(ui, d);
      phi[row++] = dot(uj, d);
      phi[row++] = dot(ui, uj);
    }
    return phi;
  }

  // The cube path of the header, moving along its one degree of freedom with the first rod turning
  // at omega about +z: the velocity of every point and axis is omega times the integers below (the
  // kernel of G there, a rigid rotation of each rod; the initial projection makes it exact).
  static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    const double L = p[0];
    const double start[n] = {L, L, 0, L, L, L, 0, L, L, 0, 0, L, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
    const double tangent[n] = {-L, 0, 0, -L, L, 0, -L, 0, -L, -L, 0, 0, 0, 1, 0, -1, 0, -1, -1, 1, 0, 0, 0, 1};
    for (int i = 0; i < n; ++i) {
      q0[i] = start[i];
      v0[i] = in[0] * tangent[i];
    }
  }
};

}  // namespace examples::mbs
