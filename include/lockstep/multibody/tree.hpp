// lockstep/multibody/tree.hpp — a kinematic tree in joint coordinates: its configuration, mass matrix
// and the generalized forces of gravity, velocity and applied forces, generic in the scalar.
//
// Bodies are numbered in topological order (a body's parent comes before it; -1 is the ground), and
// body i is moved by its own joint i: revolute (one angle about an axis), prismatic (one displacement
// along an axis) or fixed (none). Joints of several degrees of freedom are chains of these with
// massless bodies between (mechanism files, docs/how-to/mechanisms.md). The equations of motion
// M(q) q'' = Q(t, q, v) of the tree come from
//
//   - the composite-rigid-body algorithm for M (Featherstone, Rigid Body Dynamics Algorithms, 2008,
//     section 6.2), and
//   - the recursive Newton-Euler algorithm with q'' = 0 for the bias forces C(q, v) (gravity,
//     centrifugal and Coriolis forces, and the applied forces; section 5.3),
//
// both in absolute coordinates (spatial.hpp), where the joint axis s_i of joint i is one spatial motion
// vector in world coordinates and the composite inertia of a subtree is the plain sum of its bodies'
// inertias. Everything is written once on a generic scalar T, so the library's automatic
// differentiation gives every Jacobian of M and Q (model/derivatives.hpp), and no symbolic expression
// of the tree is ever formed (the expression swell of symbolic multibody codes).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/multibody/spatial.hpp"

namespace lockstep::multibody {

enum class joint_type : int { revolute = 0, prismatic = 1, fixed = 2 };

// A body: its mass, centre of mass and inertia tensor about the centre of mass, in body coordinates.
template <class T>
struct body {
  T mass{};
  vec3<T> centre_of_mass{};
  mat3<T> inertia{};
};

// The joint that moves a body: its type, the parent body (-1: the ground), the index of its coordinate
// in q (-1 for a fixed joint), its unit axis in the joint frame, and the joint frame's pose in the
// parent body (in_parent) and in the child body (in_child). With the coordinate at zero the two joint
// frames coincide.
template <class T>
struct joint {
  joint_type type = joint_type::fixed;
  int parent = -1;
  int coordinate = -1;
  vec3<T> axis{};
  frame<T> in_parent{};
  frame<T> in_child{};
};

// The tree: B bodies, each with the joint that moves it, in topological order.
template <class T, int B>
struct tree {
  body<T> bodies[B];
  joint<T> joints[B];
};

// The tree at one configuration: each body's world pose and each joint's motion axis s_i in world
// coordinates (zero for fixed joints).
template <class T, int B>
struct configuration {
  frame<T> pose[B];
  motion<T> axis[B];
};

// The joint's own displacement: a rotation about, or a translation along, its axis.
template <class T>
LOCKSTEP_HD frame<T> joint_motion(const joint<T>& j, const T& x) {
  frame<T> f;
  if (j.type == joint_type::revolute) f.R = rotation_about(j.axis, x);
  if (j.type == joint_type::prismatic) f.p = x * j.axis;
  return f;
}

// Forward kinematics: the world pose of every body and the world motion axis of every joint.
// A revolute joint's axis through the joint point o is s = (u, o x u), a prismatic joint's s = (0, u)
// (Featherstone 2008, table 4.1, moved to absolute coordinates).
template <int N, class T, int B>
LOCKSTEP_HD configuration<T, B> place(const tree<T, B>& t, const vec<T, N>& q) {
  configuration<T, B> c;
  for (int i = 0; i < B; ++i) {
    const joint<T>& j = t.joints[i];
    const frame<T> parent_joint = j.parent < 0 ? j.in_parent : compose(c.pose[j.parent], j.in_parent);
    const T x = j.coordinate >= 0 ? q[j.coordinate] : T(0.0);
    c.pose[i] = compose(compose(parent_joint, joint_motion(j, x)), inverse(j.in_child));
    const vec3<T> u = parent_joint.R * j.axis;
    if (j.type == joint_type::revolute) c.axis[i] = {u, cross(parent_joint.p, u)};
    if (j.type == joint_type::prismatic) c.axis[i] = {vec3<T>{}, u};
  }
  return c;
}

// Each body's spatial velocity, V_i = V_parent + s_i v_i.
template <int N, class T, int B>
LOCKSTEP_HD void velocities(const tree<T, B>& t, const configuration<T, B>& c, const vec<T, N>& v, motion<T>* V) {
  for (int i = 0; i < B; ++i) {
    const joint<T>& j = t.joints[i];
    V[i] = j.parent < 0 ? motion<T>{} : V[j.parent];
    if (j.coordinate >= 0) V[i] = V[i] + c.axis[i] * v[j.coordinate];
  }
}

// The mass matrix by the composite-rigid-body algorithm: with I^C_i the inertia of the subtree at i,
// M_ij = s_i . (I^C_i s_j) for j on the path from i to the ground (Featherstone 2008, eq. 6.14).
template <int N, class T, int B>
LOCKSTEP_HD mat<T, N, N> mass_matrix(const tree<T, B>& t, const configuration<T, B>& c) {
  inertia<T> composite[B];
  for (int i = 0; i < B; ++i)
    composite[i] = placed_inertia(t.bodies[i].mass, t.bodies[i].centre_of_mass, t.bodies[i].inertia, c.pose[i]);
  for (int i = B - 1; i >= 0; --i)
    if (t.joints[i].parent >= 0) composite[t.joints[i].parent] = composite[t.joints[i].parent] + composite[i];
  mat<T, N, N> M;
  for (int i = 0; i < B; ++i) {
    const int a = t.joints[i].coordinate;
    if (a < 0) continue;
    const force<T> f = composite[i] * c.axis[i];
    M(a, a) = power(c.axis[i], f);
    for (int j = t.joints[i].parent; j >= 0; j = t.joints[j].parent) {
      const int b = t.joints[j].coordinate;
      if (b < 0) continue;
      M(a, b) = power(c.axis[j], f);
      M(b, a) = M(a, b);
    }
  }
  return M;
}

// The generalized forces of gravity (the acceleration g), of the velocity-dependent inertial forces and
// of the external spatial forces f_ext[i] on body i: Q = -C(q, v) with C from the recursive
// Newton-Euler algorithm at q'' = 0, gravity entering as the ground's acceleration -g
// (Featherstone 2008, section 5.3 and eq. 5.20). So that M q'' = Q + (joint forces).
template <int N, class T, int B>
LOCKSTEP_HD vec<T, N> generalized_forces(const tree<T, B>& t, const configuration<T, B>& c, const motion<T>* V,
                                         const vec<T, N>& v, const vec3<T>& gravity, const force<T>* f_ext) {
  motion<T> A[B];
  force<T> F[B];
  for (int i = 0; i < B; ++i) {
    const joint<T>& j = t.joints[i];
    A[i] = j.parent < 0 ? motion<T>{vec3<T>{}, -gravity} : A[j.parent];
    if (j.coordinate >= 0) A[i] = A[i] + cross_motion(V[i], c.axis[i]) * v[j.coordinate];
    const inertia<T> I = placed_inertia(t.bodies[i].mass, t.bodies[i].centre_of_mass, t.bodies[i].inertia, c.pose[i]);
    F[i] = I * A[i] + cross_force(V[i], I * V[i]) - f_ext[i];
  }
  vec<T, N> Q;
  for (int i = B - 1; i >= 0; --i) {
    const joint<T>& j = t.joints[i];
    if (j.coordinate >= 0) Q[j.coordinate] = -power(c.axis[i], F[i]);
    if (j.parent >= 0) F[j.parent] = F[j.parent] + F[i];
  }
  return Q;
}

}  // namespace lockstep::multibody
