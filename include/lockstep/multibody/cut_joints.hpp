// lockstep/multibody/cut_joints.hpp — the constraint equations of a joint that closes a loop.
//
// Where a mechanism's joints form loops, a spanning tree of them carries the joint coordinates
// (tree.hpp) and each remaining joint is *cut*: it becomes constraint equations between the two joint
// frames it joins, F_a on one body and F_b on the other, both in world coordinates (Wittenburg,
// Dynamics of Multibody Systems, 2008, chapter 5; the same elementary conditions as Haug, Computer-Aided
// Kinematics and Dynamics of Mechanical Systems, 1989, section 3.3 for absolute coordinates). With
// d = p_b - p_a the offset of the frames' origins:
//
//   - coincident points: R_a^T d = 0 (the offset in F_a's axes, so that the multipliers are the joint's
//     reaction force in F_a);
//   - perpendicular directions: (R_a w) . (R_b u) = 0 for a direction w fixed in F_a and u fixed in F_b;
//   - an offset across a direction: (R_a w) . d = 0;
//   - a distance L: (|d|^2 - L^2) / 2 = 0.
//
// Every joint type is a set of these (mechanism files, docs/how-to/mechanisms.md, lists them).
//
// The constraint force of a row phi with multiplier lambda (M q'' + G^T lambda = Q: the bodies feel
// -G^T lambda) on the body of F_b is f_b = -lambda d(phi)/d(delta), delta a small rigid motion of that
// body (a spatial motion vector, spatial.hpp, paired with forces by power): with R_a w = w_a,
// R_b u = u_b and the origin x_b of F_b,
//
//   - coincident points, row i: R_a^T d changes by R_a^T (dv + dtheta x x_b): the force -lambda R_a e_i at x_b;
//   - perpendicular directions: w_a . u_b changes by dtheta . (u_b x w_a): the torque -lambda (u_b x w_a);
//   - an offset across w: w_a . d changes by w_a . (dv + dtheta x x_b): the force -lambda w_a at x_b;
//   - a distance: (|d|^2 - L^2) / 2 changes by d . (dv + dtheta x x_b): the force -lambda d at x_b.
//
// The body of F_a feels the opposite of each (Newton's third law: the same derivative by a's motion,
// with the sign of d's), so a cut joint's reaction is f_b alone (the *_force functions below).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/multibody/spatial.hpp"

namespace lockstep::multibody {

// The frame `local` of body b (b = -1: the ground, and `local` is in world coordinates) in world
// coordinates, the body's world pose given.
template <class T>
LOCKSTEP_HD frame<T> world_frame(const frame<T>* pose, int b, const frame<T>& local) {
  return b < 0 ? local : compose(pose[b], local);
}

// The same for a frame with the body's own axes at the point `origin` of body b: the body's rotation
// as it is, without the product by an identity that compose would form (27 products of the scalar T,
// a dual number with second derivatives where the library differentiates the constraints twice).
template <class T>
LOCKSTEP_HD frame<T> world_frame(const frame<T>* pose, int b, const vec3<T>& origin) {
  if (b < 0) return {mat3<T>::identity(), origin};
  return {pose[b].R, point_of(pose[b], origin)};
}

// The offset of b's origin from a's, in a's axes.
template <class T>
LOCKSTEP_HD vec3<T> offset_in(const frame<T>& a, const frame<T>& b) {
  return transpose_times(a.R, b.p - a.p);
}

// (R_a w) . (R_b u): zero while w (fixed in F_a) and u (fixed in F_b) stay perpendicular.
template <class T, class D>
LOCKSTEP_HD T perpendicular(const frame<T>& a, const vec3<D>& w, const frame<T>& b, const vec3<D>& u) {
  return dot(vec3<T>(times(a.R, w)), vec3<T>(times(b.R, u)));
}

// (R_a w) . d: zero while b's origin stays in the plane through a's origin normal to w.
template <class T, class D>
LOCKSTEP_HD T offset_along(const frame<T>& a, const vec3<D>& w, const frame<T>& b) {
  const vec3<T> d = b.p - a.p;
  T s = T(0.0);
  for (int i = 0; i < 3; ++i) s = s + (a.R(i, 0) * w[0] + a.R(i, 1) * w[1] + a.R(i, 2) * w[2]) * d[i];
  return s;
}

// (|d|^2 - L^2) / 2: zero while the origins are L apart.
template <class T, class L>
LOCKSTEP_HD T distance_residual(const frame<T>& a, const frame<T>& b, const L& length) {
  const vec3<T> d = b.p - a.p;
  return 0.5 * (dot(d, d) - length * length);
}

// The force on F_b's body of a coincident-points row along F_a's axis i (see the header).
template <class T, class L>
LOCKSTEP_HD force<T> offset_force(const frame<T>& a, int i, const frame<T>& b, const L& lambda) {
  return force_at(b.p, -lambda * column(a.R, i));
}

// The torque on F_b's body of a perpendicular-directions row.
template <class T, class D, class L>
LOCKSTEP_HD force<T> perpendicular_force(const frame<T>& a, const vec3<D>& w, const frame<T>& b, const vec3<D>& u,
                                         const L& lambda) {
  const vec3<T> wa = times(a.R, w), ub = times(b.R, u);
  return force<T>{-lambda * cross(ub, wa), vec3<T>{}};
}

// The force on F_b's body of an offset-across-a-direction row.
template <class T, class D, class L>
LOCKSTEP_HD force<T> offset_along_force(const frame<T>& a, const vec3<D>& w, const frame<T>& b, const L& lambda) {
  return force_at(b.p, -lambda * times(a.R, w));
}

// The force on F_b's body of a distance row.
template <class T, class L>
LOCKSTEP_HD force<T> distance_force(const frame<T>& a, const frame<T>& b, const L& lambda) {
  return force_at(b.p, -lambda * (b.p - a.p));
}

}  // namespace lockstep::multibody
