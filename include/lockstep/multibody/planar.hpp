// lockstep/multibody/planar.hpp — the kinematic tree of a planar mechanism (tree.hpp) and its cut
// joints (cut_joints.hpp) in planar vectors, generic in the scalar.
//
// In a planar mechanism (a mechanism file with `planar = true`: revolute joints about z, prismatic ones
// along the x-y plane, joint frames turned about z alone) every body moves in the x-y plane, and the
// spatial algorithms of tree.hpp carry zeros: a rotation is 9 entries where 2 vary, a spatial vector 6
// where 3 do, an inertia 10 where 4 matter. On a dual number every product by such a zero still costs
// its derivative parts. So the motion in the plane is computed in Featherstone's planar vectors
// (Rigid Body Dynamics Algorithms, 2008, section 2.16), again in absolute (world) coordinates:
//
//   - a pose: cos and sin of the body's angle, and its origin (x, y) (and its constant height z);
//   - a motion (omega, v_O): the angular velocity about z and the in-plane velocity of the body point at
//     the world origin; a force (n_O, f): the moment about z through the origin and the in-plane
//     resultant; their power omega n_O + v_O . f;
//   - an inertia about the origin: the mass m, the first moment h = m c and J_O = J_zz + m |c|^2, the
//     moment of inertia about z through the origin (c in the plane: its z takes no part in the motion),
//     so that I (omega, v) = (J_O omega + h x v, m v + omega x h).
//
// The composite-rigid-body algorithm and the recursive Newton-Euler algorithm are tree.hpp's own, which
// take this configuration as they take the spatial one (place_planar below forms it). What the plane
// leaves out is what the motion in it does not depend on: the out-of-plane parts of the applied
// forces, of gravity, of the centres of mass and the products of inertia J_xz, J_yz, which the joints
// balance (out-of-plane reactions). They reach what a mechanism reports (its reaction forces, at the
// save times): that goes through the spatial configuration (spatial_configuration) of the same planar
// one.
//
// A cut joint's rows (cut_joints.hpp) are the same conditions on planar frames: the overloads below take
// the same arguments, so the generated constraint code reads the same for both.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/multibody/spatial.hpp"
#include "lockstep/multibody/tree.hpp"

namespace lockstep::multibody {

template <class T>
using vec2 = vec<T, 2>;

// A frame in the plane: its angle's cosine and sine (its x axis is (c, s), its y axis (-s, c)), its
// origin, and the origin's height z above the plane z = 0, which no motion in the plane changes: it
// takes part only where a distance is measured in space (a distance joint, a spring between bodies at
// different heights).
template <class T>
struct planar_frame {
  T c = T(1.0), s = T(0.0);
  vec2<T> p{};
  T z = T(0.0);
};

// (R x, R y) for the rotation (c, s): the vector (x, y) turned by the frame's angle.
template <class T, class X>
LOCKSTEP_HD vec2<T> turned(const T& c, const T& s, const X& x, const X& y) {
  return vec2<T>{{c * x - s * y, s * x + c * y}};
}

template <class T>
struct planar_motion {
  T angular{};       // omega, about z
  vec2<T> linear{};  // the velocity of the body point at the world origin
};

template <class T>
struct planar_force {
  T moment{};        // about z through the world origin
  vec2<T> linear{};  // the resultant
};

template <class T>
LOCKSTEP_HD planar_motion<T> operator+(const planar_motion<T>& a, const planar_motion<T>& b) {
  return {a.angular + b.angular, a.linear + b.linear};
}

template <class T, class S>
LOCKSTEP_HD planar_motion<T> operator*(const planar_motion<T>& a, const S& x) {
  return {a.angular * x, x * a.linear};
}

template <class T>
LOCKSTEP_HD planar_force<T> operator+(const planar_force<T>& a, const planar_force<T>& b) {
  return {a.moment + b.moment, a.linear + b.linear};
}

template <class T>
LOCKSTEP_HD planar_force<T> operator-(const planar_force<T>& a, const planar_force<T>& b) {
  return {a.moment - b.moment, a.linear - b.linear};
}

// m . f (spatial.hpp's power).
template <class T>
LOCKSTEP_HD T power(const planar_motion<T>& m, const planar_force<T>& f) {
  return m.angular * f.moment + m.linear[0] * f.linear[0] + m.linear[1] * f.linear[1];
}

// v x m for motion vectors: spatial.hpp's cross_motion with the out-of-plane parts, which are zero,
// left out (omega x omega_m = 0).
template <class T>
LOCKSTEP_HD planar_motion<T> cross_motion(const planar_motion<T>& v, const planar_motion<T>& m) {
  return {T(0.0), vec2<T>{{m.angular * v.linear[1] - v.angular * m.linear[1],
                           v.angular * m.linear[0] - m.angular * v.linear[0]}}};
}

// v x* f for force vectors (spatial.hpp's cross_force in the plane).
template <class T>
LOCKSTEP_HD planar_force<T> cross_force(const planar_motion<T>& v, const planar_force<T>& f) {
  return {v.linear[0] * f.linear[1] - v.linear[1] * f.linear[0],
          vec2<T>{{-(v.angular * f.linear[1]), v.angular * f.linear[0]}}};
}

// A rigid body's inertia about the world origin in the plane (the header).
template <class T>
struct planar_inertia {
  T mass{};
  vec2<T> first_moment{};
  T rotational{};  // J_O about z
};

template <class T>
LOCKSTEP_HD planar_inertia<T> operator+(const planar_inertia<T>& a, const planar_inertia<T>& b) {
  return {a.mass + b.mass, a.first_moment + b.first_moment, a.rotational + b.rotational};
}

template <class T>
LOCKSTEP_HD planar_force<T> operator*(const planar_inertia<T>& I, const planar_motion<T>& v) {
  const vec2<T>& h = I.first_moment;
  return {I.rotational * v.angular + (h[0] * v.linear[1] - h[1] * v.linear[0]),
          vec2<T>{{I.mass * v.linear[0] - v.angular * h[1], I.mass * v.linear[1] + v.angular * h[0]}}};
}

// The inertia of a body (tree.hpp's body: mass, centre of mass and inertia tensor about it, in body
// coordinates) at the pose f: its z moment J_zz, which no turn about z changes, and its centre's x and y.
template <class T, class C>
LOCKSTEP_HD planar_inertia<T> body_inertia(const body<C>& b, const planar_frame<T>& f) {
  vec2<T> c = turned(f.c, f.s, b.centre_of_mass[0], b.centre_of_mass[1]);
  c = c + f.p;
  return {T(b.mass), b.mass * c, b.inertia(2, 2) + b.mass * (c[0] * c[0] + c[1] * c[1])};
}

// The tree at one configuration, in the plane (tree.hpp's configuration), with each body's angle.
template <class T, int B>
struct planar_configuration {
  using motion_type = planar_motion<T>;
  using force_type = planar_force<T>;
  planar_frame<T> pose[B];
  T angle[B];
  planar_motion<T> axis[B];
};

// A joint frame's turn about z, as (cos, sin): the first column of its rotation matrix; and as its angle.
template <class C>
LOCKSTEP_HD void frame_turn(const frame<C>& f, C& c, C& s) {
  c = f.R(0, 0);
  s = f.R(1, 0);
}

template <class C>
LOCKSTEP_HD C frame_angle(const frame<C>& f) {
  return atan2(f.R(1, 0), f.R(0, 0));
}

// Forward kinematics in the plane: tree.hpp's place, step for step, with every angle a sum. A body's
// angle is its parent's, plus the turn of the joint frame in the parent, plus the joint's own angle
// (revolute), less the turn of the joint frame in the child; its cosine and sine come from one
// sin_cos of that sum where a revolute joint turns it, as a hand-written planar model's would (no
// product of rotations), and from the parent's turned by the constant frames elsewhere. A revolute
// joint's axis through the joint point o is s = (u_z, o x u) = (u_z, (o_y u_z, -o_x u_z)), a prismatic
// one's s = (0, u).
template <int N, class T, class C, int B>
LOCKSTEP_HD planar_configuration<T, B> place_planar(const tree<C, B>& t, const vec<T, N>& q) {
  planar_configuration<T, B> g;
  for (int i = 0; i < B; ++i) {
    const joint<C>& j = t.joints[i];
    // The joint frame on the parent's side in world coordinates: its angle, cos and sin, origin o.
    T angle, c, s, z;
    vec2<T> o;
    if (j.parent >= 0) {
      const planar_frame<T>& parent = g.pose[j.parent];
      angle = g.angle[j.parent];
      c = parent.c;
      s = parent.s;
      o = j.parent_offset ? parent.p + turned(parent.c, parent.s, j.in_parent.p[0], j.in_parent.p[1]) : parent.p;
      z = j.parent_offset ? parent.z + j.in_parent.p[2] : parent.z;
      if (j.parent_turned) {
        C ci, si;
        frame_turn(j.in_parent, ci, si);
        angle = angle + frame_angle(j.in_parent);
        const T cs = c * ci - s * si;
        s = s * ci + c * si;
        c = cs;
      }
    } else {
      C ci, si;
      frame_turn(j.in_parent, ci, si);
      angle = j.parent_turned ? T(frame_angle(j.in_parent)) : T(0.0);
      c = T(ci);
      s = T(si);
      o = vec2<T>{{T(j.in_parent.p[0]), T(j.in_parent.p[1])}};
      z = T(j.in_parent.p[2]);
    }
    const T x = j.coordinate >= 0 ? q[j.coordinate] : T(0.0);
    const bool revolute = j.type == joint_type::revolute;
    if (revolute) {
      // u = (0, 0, u_z): +-z of the joint frame (axis_index 2) or the axis given, which a planar
      // mechanism has along +-z.
      const C uz = j.axis_index >= 0 ? C(j.axis_sign < 0 ? -1.0 : 1.0) : j.axis[2];
      g.axis[i] = {T(uz), vec2<T>{{uz * o[1], -(uz * o[0])}}};
      angle = angle + uz * x;
    } else if (j.type == joint_type::prismatic) {
      vec2<T> u;
      if (j.axis_index >= 0) {  // the joint frame's x or y
        u = j.axis_index == 0 ? vec2<T>{{c, s}} : vec2<T>{{-s, c}};
        if (j.axis_sign < 0) u = -u;
      } else {
        u = turned(c, s, j.axis[0], j.axis[1]);
      }
      g.axis[i] = {T(0.0), u};
      o = o + x * u;
    }
    // ... then the child body's frame from the joint frame on its side: in_child^-1.
    if (j.child_turned) {
      angle = angle - frame_angle(j.in_child);
      if (!revolute) {
        C ci, si;
        frame_turn(j.in_child, ci, si);
        const T cs = c * ci + s * si;
        s = s * ci - c * si;
        c = cs;
      }
    }
    if (revolute) {
      const auto [sa, ca] = sin_cos(angle);
      c = ca;
      s = sa;
    }
    if (j.child_offset) {
      o = o - turned(c, s, j.in_child.p[0], j.in_child.p[1]);
      z = z - j.in_child.p[2];
    }
    g.pose[i] = {c, s, o, z};
    g.angle[i] = angle;
  }
  return g;
}

// The spatial force f in the plane: its moment about z and its in-plane resultant.
template <class T>
LOCKSTEP_HD planar_force<T> in_plane(const force<T>& f) {
  return {f.moment[2], vec2<T>{{f.linear[0], f.linear[1]}}};
}

// What tree.hpp's algorithms ask of a configuration's kind (tree.hpp, body_inertia), in the plane.
template <class T, int B>
LOCKSTEP_HD planar_motion<T> ground_acceleration(const planar_configuration<T, B>&, const vec3<T>& gravity) {
  return {T(0.0), vec2<T>{{-gravity[0], -gravity[1]}}};
}

template <class T, int B>
LOCKSTEP_HD planar_force<T> applied_force(const planar_configuration<T, B>&, const force<T>& f) {
  return in_plane(f);
}

// ---- the same configuration in space, for the code written on spatial quantities (applied forces,
// what a mechanism reports) ----

template <class T>
LOCKSTEP_HD frame<T> spatial_frame(const planar_frame<T>& f) {
  frame<T> r;  // the identity's third row and column, the origin's z = 0
  r.R(0, 0) = f.c;
  r.R(1, 0) = f.s;
  r.R(0, 1) = -f.s;
  r.R(1, 1) = f.c;
  r.p[0] = f.p[0];
  r.p[1] = f.p[1];
  r.p[2] = f.z;
  return r;
}

template <class T>
LOCKSTEP_HD motion<T> spatial_motion(const planar_motion<T>& m) {
  motion<T> r;
  r.angular[2] = m.angular;
  r.linear[0] = m.linear[0];
  r.linear[1] = m.linear[1];
  return r;
}

template <class T, int B>
LOCKSTEP_HD configuration<T, B> spatial_configuration(const planar_configuration<T, B>& g) {
  configuration<T, B> c;
  for (int i = 0; i < B; ++i) {
    c.pose[i] = spatial_frame(g.pose[i]);
    c.axis[i] = spatial_motion(g.axis[i]);
  }
  return c;
}

// ---- cut joints in the plane (cut_joints.hpp's conditions on planar frames) ----

// The frame with body b's axes at its point `origin` (x and y), in world coordinates (b = -1: the
// ground, `origin` in world coordinates).
template <class T>
LOCKSTEP_HD planar_frame<T> world_frame(const planar_frame<T>* pose, int b, const vec3<T>& origin) {
  if (b < 0) return {T(1.0), T(0.0), vec2<T>{{origin[0], origin[1]}}, origin[2]};
  const planar_frame<T>& f = pose[b];
  return {f.c, f.s, f.p + turned(f.c, f.s, origin[0], origin[1]), f.z + origin[2]};
}

// The frame `local` of body b (turned about z) in world coordinates.
template <class T>
LOCKSTEP_HD planar_frame<T> world_frame(const planar_frame<T>* pose, int b, const frame<T>& local) {
  T c, s;
  frame_turn(local, c, s);
  if (b < 0) return {c, s, vec2<T>{{local.p[0], local.p[1]}}, local.p[2]};
  const planar_frame<T>& f = pose[b];
  return {f.c * c - f.s * s, f.s * c + f.c * s, f.p + turned(f.c, f.s, local.p[0], local.p[1]), f.z + local.p[2]};
}

// The offset of b's origin from a's, in a's axes.
template <class T>
LOCKSTEP_HD vec3<T> offset_in(const planar_frame<T>& a, const planar_frame<T>& b) {
  const T dx = b.p[0] - a.p[0], dy = b.p[1] - a.p[1];
  return vec3<T>{{a.c * dx + a.s * dy, a.c * dy - a.s * dx, b.z - a.z}};
}

// (R_a w) . (R_b u) for w and u in the plane.
template <class T, class D>
LOCKSTEP_HD T perpendicular(const planar_frame<T>& a, const vec3<D>& w, const planar_frame<T>& b, const vec3<D>& u) {
  const vec2<T> wa = turned(a.c, a.s, w[0], w[1]), ub = turned(b.c, b.s, u[0], u[1]);
  return wa[0] * ub[0] + wa[1] * ub[1];
}

// (R_a w) . d for w in the plane.
template <class T, class D>
LOCKSTEP_HD T offset_along(const planar_frame<T>& a, const vec3<D>& w, const planar_frame<T>& b) {
  const vec2<T> wa = turned(a.c, a.s, w[0], w[1]);
  return wa[0] * (b.p[0] - a.p[0]) + wa[1] * (b.p[1] - a.p[1]);
}

// (|d|^2 - L^2) / 2, d in space: the heights' difference counts.
template <class T, class L>
LOCKSTEP_HD T distance_residual(const planar_frame<T>& a, const planar_frame<T>& b, const L& length) {
  const T dx = b.p[0] - a.p[0], dy = b.p[1] - a.p[1], dz = b.z - a.z;
  return 0.5 * ((dx * dx + dy * dy + dz * dz) - length * length);
}

}  // namespace lockstep::multibody
