// lockstep/multibody/tree.hpp — a kinematic tree in joint coordinates: its configuration, mass matrix,
// the generalized forces of gravity, velocity and applied forces, and the forces its joints transmit,
// generic in the scalar.
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
//
// What a generated model knows of its joints before any evaluation it says here, so that place() skips
// the work: a frame without rotation (turned = false) or at the body's origin (offset = false), and an
// axis along +-x, +-y or +-z of the joint frame (axis_index 0, 1, 2, and axis_sign). The defaults, true
// and -1, take the general path; both paths give the same configuration. (Flags, not tests of the
// values: T may be a SIMD pack, on which a model's code must not branch.)
template <class T>
struct joint {
  joint_type type = joint_type::fixed;
  int parent = -1;
  int coordinate = -1;
  vec3<T> axis{};
  frame<T> in_parent{};
  frame<T> in_child{};
  bool parent_turned = true, parent_offset = true;
  bool child_turned = true, child_offset = true;
  int axis_index = -1, axis_sign = 1;
};

// The tree: B bodies, each with the joint that moves it, in topological order. Its scalar C is the
// parameters' (the constants of a configuration's scalar T: spatial.hpp, times).
template <class C, int B>
struct tree {
  body<C> bodies[B];
  joint<C> joints[B];
};

// The tree at one configuration: each body's world pose and each joint's motion axis s_i in world
// coordinates (zero for fixed joints). The algorithms below take it or a planar mechanism's
// (planar.hpp), whose vectors are of its own types: both name them.
template <class T, int B>
struct configuration {
  using motion_type = motion<T>;
  using force_type = force<T>;
  frame<T> pose[B];
  motion<T> axis[B];
};

// What the algorithms below ask of a configuration's kind, for the spatial one: a body's inertia at
// its pose, the ground's acceleration that stands for gravity, and an applied force in its vectors.
template <class T, class C>
LOCKSTEP_HD inertia<T> body_inertia(const body<C>& b, const frame<T>& pose) {
  return placed_inertia(b.mass, b.centre_of_mass, b.inertia, pose);
}

template <class T, int B>
LOCKSTEP_HD motion<T> ground_acceleration(const configuration<T, B>&, const vec3<T>& gravity) {
  return motion<T>{vec3<T>{}, -gravity};
}

template <class T, int B>
LOCKSTEP_HD const force<T>& applied_force(const configuration<T, B>&, const force<T>& f) {
  return f;
}

// R Rot(e_k, theta): the columns i and j of R (k, i, j cyclic) turned by theta in their plane.
template <class T>
LOCKSTEP_HD void turn_about_axis(mat3<T>& R, int k, const T& theta) {
  const auto [s, c] = sin_cos(theta);
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  for (int r = 0; r < 3; ++r) {
    const T a = R(r, i), b = R(r, j);
    R(r, i) = c * a + s * b;
    R(r, j) = c * b - s * a;
  }
}

// Forward kinematics: the world pose of every body and the world motion axis of every joint,
// pose_i = pose_parent in_parent J(q_i) in_child^-1, J a rotation about or a translation along the axis.
// A revolute joint's axis through the joint point o is s = (u, o x u), a prismatic joint's s = (0, u)
// (Featherstone 2008, table 4.1, moved to absolute coordinates).
template <int N, class T, class C, int B>
LOCKSTEP_HD configuration<T, B> place(const tree<C, B>& t, const vec<T, N>& q) {
  configuration<T, B> c;
  for (int i = 0; i < B; ++i) {
    const joint<C>& j = t.joints[i];
    frame<T> f;  // the joint frame on the parent's side, in world coordinates
    if (j.parent >= 0) {
      const frame<T>& parent = c.pose[j.parent];
      f.p = j.parent_offset ? parent.p + times(parent.R, j.in_parent.p) : parent.p;
      f.R = j.parent_turned ? times(parent.R, j.in_parent.R) : parent.R;
    } else {
      for (int a = 0; a < 3; ++a) {
        f.p[a] = T(j.in_parent.p[a]);
        for (int b = 0; b < 3; ++b) f.R(a, b) = T(j.in_parent.R(a, b));
      }
    }
    vec3<T> u;
    if (j.axis_index >= 0) {
      u = column(f.R, j.axis_index);
      if (j.axis_sign < 0) u = -u;
    } else {
      u = times(f.R, j.axis);
    }
    if (j.type == joint_type::revolute) c.axis[i] = {u, cross(f.p, u)};
    if (j.type == joint_type::prismatic) c.axis[i] = {vec3<T>{}, u};
    const T x = j.coordinate >= 0 ? q[j.coordinate] : T(0.0);
    if (j.type == joint_type::revolute) {
      if (j.axis_index >= 0) turn_about_axis(f.R, j.axis_index, j.axis_sign < 0 ? T(-x) : x);
      else f.R = f.R * rotation_about(j.axis, x);
    }
    if (j.type == joint_type::prismatic) f.p = f.p + x * u;
    // ... then the child body's frame from the joint frame on its side: in_child^-1.
    if (j.child_turned) f.R = times_transpose(f.R, j.in_child.R);
    if (j.child_offset) f.p = f.p - times(f.R, j.in_child.p);
    c.pose[i] = f;
  }
  return c;
}

// Each body's spatial velocity, V_i = V_parent + s_i v_i.
template <int N, class T, class C, int B, class Configuration>
LOCKSTEP_HD void velocities(const tree<C, B>& t, const Configuration& c, const vec<T, N>& v,
                            typename Configuration::motion_type* V) {
  for (int i = 0; i < B; ++i) {
    const joint<C>& j = t.joints[i];
    V[i] = j.parent < 0 ? typename Configuration::motion_type{} : V[j.parent];
    if (j.coordinate >= 0) V[i] = V[i] + c.axis[i] * v[j.coordinate];
  }
}

// The mass matrix by the composite-rigid-body algorithm: with I^C_i the inertia of the subtree at i,
// M_ij = s_i . (I^C_i s_j) for j on the path from i to the ground (Featherstone 2008, eq. 6.14).
template <int N, class C, int B, class Configuration>
LOCKSTEP_HD auto mass_matrix(const tree<C, B>& t, const Configuration& c) {
  using Inertia = decltype(body_inertia(t.bodies[0], c.pose[0]));
  using T = decltype(Inertia::mass);
  Inertia composite[B];
  for (int i = 0; i < B; ++i) composite[i] = body_inertia(t.bodies[i], c.pose[i]);
  for (int i = B - 1; i >= 0; --i)
    if (t.joints[i].parent >= 0) composite[t.joints[i].parent] = composite[t.joints[i].parent] + composite[i];
  mat<T, N, N> M;
  for (int i = 0; i < B; ++i) {
    const int a = t.joints[i].coordinate;
    if (a < 0) continue;
    const typename Configuration::force_type f = composite[i] * c.axis[i];
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

// The spatial force each joint transmits: F[i], what body i's parent (the ground for a root) exerts
// through joint i on the subtree at i, in world coordinates about the origin, from the recursive
// Newton-Euler algorithm at the accelerations q'' (Featherstone 2008, section 5.3 and eq. 5.20):
//
//     F_i = sum over the subtree at i of (I_j A_j + V_j x* I_j V_j - f_ext[j]),
//
// A_j the bodies' spatial accelerations, A_i = A_parent + s_i q''_i + (V_i x s_i) q'_i, gravity entering
// as the ground's acceleration -g. f_ext[j] is every other force on body j: force elements, applied
// forces, and the constraint forces of cut joints. accelerations = nullptr: q'' = 0.
template <int N, class T, class C, int B, class Configuration>
LOCKSTEP_HD void transmitted_forces(const tree<C, B>& t, const Configuration& c,
                                    const typename Configuration::motion_type* V, const vec<T, N>& v,
                                    const vec<T, N>* accelerations, const vec3<T>& gravity, const force<T>* f_ext,
                                    typename Configuration::force_type* F) {
  typename Configuration::motion_type A[B];
  for (int i = 0; i < B; ++i) {
    const joint<C>& j = t.joints[i];
    A[i] = j.parent < 0 ? ground_acceleration(c, gravity) : A[j.parent];
    if (j.coordinate >= 0) {
      if (accelerations != nullptr) A[i] = A[i] + c.axis[i] * (*accelerations)[j.coordinate];
      A[i] = A[i] + cross_motion(V[i], c.axis[i]) * v[j.coordinate];
    }
    const auto I = body_inertia(t.bodies[i], c.pose[i]);
    F[i] = I * A[i] + cross_force(V[i], I * V[i]) - applied_force(c, f_ext[i]);
  }
  for (int i = B - 1; i >= 0; --i)
    if (t.joints[i].parent >= 0) F[t.joints[i].parent] = F[t.joints[i].parent] + F[i];
}

// The generalized forces of gravity (the acceleration g), of the velocity-dependent inertial forces and
// of the external spatial forces f_ext[i] on body i: Q = -C(q, v), C_i = s_i . F_i the power of the
// forces transmitted at q'' = 0 (Featherstone 2008, section 5.3). So that M q'' = Q + (joint forces).
template <int N, class T, class C, int B, class Configuration>
LOCKSTEP_HD vec<T, N> generalized_forces(const tree<C, B>& t, const Configuration& c,
                                         const typename Configuration::motion_type* V, const vec<T, N>& v,
                                         const vec3<T>& gravity, const force<T>* f_ext) {
  typename Configuration::force_type F[B];
  transmitted_forces<N>(t, c, V, v, static_cast<const vec<T, N>*>(nullptr), gravity, f_ext, F);
  vec<T, N> Q;
  for (int i = 0; i < B; ++i)
    if (t.joints[i].coordinate >= 0) Q[t.joints[i].coordinate] = -power(c.axis[i], F[i]);
  return Q;
}

}  // namespace lockstep::multibody
