// lockstep/multibody/spatial.hpp — rigid-body kinematics and spatial vectors in world coordinates,
// generic in the scalar so that automatic differentiation (core/dual.hpp) differentiates everything
// built on it.
//
// Spatial vectors follow Featherstone, Rigid Body Dynamics Algorithms (2008), chapter 2, in *absolute*
// (world) coordinates, section 2.15 there: a motion vector is (omega, v_O), the angular velocity and the
// velocity of the body-fixed point that is momentarily at the world origin O; a force vector is
// (n_O, f), the moment about O and the resultant. Expressing every body's quantities in the one world
// frame means composite inertias add without transforms (CRBA) and a joint's motion axis is a plain
// 6-vector (tree.hpp).
#pragma once

#include <utility>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep::multibody {

template <class T>
using vec3 = vec<T, 3>;
template <class T>
using mat3 = mat<T, 3, 3>;

template <class T>
LOCKSTEP_HD vec3<T> cross(const vec3<T>& a, const vec3<T>& b) {
  vec3<T> c;
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
  return c;
}

// Column j of a rotation matrix: the body's j-th axis in world coordinates.
template <class T>
LOCKSTEP_HD vec3<T> column(const mat3<T>& R, int j) {
  vec3<T> c;
  for (int i = 0; i < 3; ++i) c[i] = R(i, j);
  return c;
}

// The rotation by angle theta about the unit axis u (Rodrigues' formula):
// R = 1 + sin(theta) [u]x + (1 - cos(theta)) [u]x^2.
template <class T, class A>
LOCKSTEP_HD mat3<T> rotation_about(const vec3<A>& u, const T& theta) {
  const auto [s, c] = sin_cos(theta);
  const T d = T(1.0) - c;
  mat3<T> R;
  R(0, 0) = c + d * (u[0] * u[0]);
  R(1, 1) = c + d * (u[1] * u[1]);
  R(2, 2) = c + d * (u[2] * u[2]);
  R(0, 1) = d * (u[0] * u[1]) - s * u[2];
  R(1, 0) = d * (u[0] * u[1]) + s * u[2];
  R(0, 2) = d * (u[0] * u[2]) + s * u[1];
  R(2, 0) = d * (u[0] * u[2]) - s * u[1];
  R(1, 2) = d * (u[1] * u[2]) - s * u[0];
  R(2, 1) = d * (u[1] * u[2]) + s * u[0];
  return R;
}

// Products of a matrix of one scalar and a matrix or vector of another: the tree's constants (joint
// frames, inertias) are of the parameters' scalar P, plain doubles unless parameters are
// differentiated, while the kinematics are of the evaluation scalar T, a dual number whenever the
// library differentiates (tree.hpp). A dual times a double costs about half a dual times a dual.
template <class A, class B>
using product_t = decltype(std::declval<A>() * std::declval<B>());

template <class A, class B>
LOCKSTEP_HD mat3<product_t<A, B>> times(const mat3<A>& X, const mat3<B>& Y) {
  mat3<product_t<A, B>> Z;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Z(i, j) = X(i, 0) * Y(0, j) + X(i, 1) * Y(1, j) + X(i, 2) * Y(2, j);
  return Z;
}

// X Y^T.
template <class A, class B>
LOCKSTEP_HD mat3<product_t<A, B>> times_transpose(const mat3<A>& X, const mat3<B>& Y) {
  mat3<product_t<A, B>> Z;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Z(i, j) = X(i, 0) * Y(j, 0) + X(i, 1) * Y(j, 1) + X(i, 2) * Y(j, 2);
  return Z;
}

template <class A, class B>
LOCKSTEP_HD vec3<product_t<A, B>> times(const mat3<A>& X, const vec3<B>& y) {
  vec3<product_t<A, B>> z;
  for (int i = 0; i < 3; ++i) z[i] = X(i, 0) * y[0] + X(i, 1) * y[1] + X(i, 2) * y[2];
  return z;
}

// A frame: its orientation R (columns: its axes in the reference frame) and its origin p.
template <class T>
struct frame {
  mat3<T> R = mat3<T>::identity();
  vec3<T> p{};
};

// The frame b given in frame a, expressed in a's reference: a ∘ b.
template <class T>
LOCKSTEP_HD frame<T> compose(const frame<T>& a, const frame<T>& b) {
  return {a.R * b.R, a.p + a.R * b.p};
}

// A point given in frame f, in f's reference.
template <class T>
LOCKSTEP_HD vec3<T> point_of(const frame<T>& f, const vec3<T>& r) {
  return f.p + f.R * r;
}

// ---- spatial vectors ----

template <class T>
struct motion {
  vec3<T> angular{};  // omega
  vec3<T> linear{};   // velocity of the body point at the world origin
};

template <class T>
struct force {
  vec3<T> moment{};  // about the world origin
  vec3<T> linear{};  // the resultant
};

template <class T>
LOCKSTEP_HD motion<T> operator+(const motion<T>& a, const motion<T>& b) {
  return {a.angular + b.angular, a.linear + b.linear};
}
template <class T, class S>
LOCKSTEP_HD motion<T> operator*(const motion<T>& a, const S& s) {
  return {s * a.angular, s * a.linear};
}
template <class T>
LOCKSTEP_HD force<T> operator+(const force<T>& a, const force<T>& b) {
  return {a.moment + b.moment, a.linear + b.linear};
}
template <class T>
LOCKSTEP_HD force<T> operator-(const force<T>& a, const force<T>& b) {
  return {a.moment - b.moment, a.linear - b.linear};
}

// The power of a force on a motion, m . f (Featherstone 2008, eq. 2.8).
template <class T>
LOCKSTEP_HD T power(const motion<T>& m, const force<T>& f) {
  return dot(m.angular, f.moment) + dot(m.linear, f.linear);
}

// v x m for motion vectors: the rate of change of m fixed in a body moving with v (eq. 2.31).
template <class T>
LOCKSTEP_HD motion<T> cross_motion(const motion<T>& v, const motion<T>& m) {
  return {cross(v.angular, m.angular), cross(v.angular, m.linear) + cross(v.linear, m.angular)};
}

// v x* f for force vectors (eq. 2.32).
template <class T>
LOCKSTEP_HD force<T> cross_force(const motion<T>& v, const force<T>& f) {
  return {cross(v.angular, f.moment) + cross(v.linear, f.linear), cross(v.angular, f.linear)};
}

// The velocity of the world point x on a body moving with v.
template <class T>
LOCKSTEP_HD vec3<T> point_velocity(const motion<T>& v, const vec3<T>& x) {
  return v.linear + cross(v.angular, x);
}

// The force f applied at the world point x, as a spatial force.
template <class T>
LOCKSTEP_HD force<T> force_at(const vec3<T>& x, const vec3<T>& f) {
  return {cross(x, f), f};
}

// A rigid body's spatial inertia about the world origin (Featherstone 2008, eq. 2.63, in absolute
// coordinates): mass m, first moment h = m c (c the centre of mass) and the rotational inertia about
// the origin, J_O = J_c + m (|c|^2 1 - c c^T). I v = (J_O omega + h x v_O, m v_O - h x omega).
template <class T>
struct inertia {
  T mass{};
  vec3<T> first_moment{};
  mat3<T> rotational{};
};

template <class T>
LOCKSTEP_HD inertia<T> operator+(const inertia<T>& a, const inertia<T>& b) {
  return {a.mass + b.mass, a.first_moment + b.first_moment, a.rotational + b.rotational};
}

template <class T>
LOCKSTEP_HD force<T> operator*(const inertia<T>& I, const motion<T>& v) {
  return {I.rotational * v.angular + cross(I.first_moment, v.linear),
          I.mass * v.linear - cross(I.first_moment, v.angular)};
}

// The inertia of a body of mass m whose centre of mass is at c_body and whose inertia tensor about the
// centre of mass is J_body (both in body coordinates, of the constants' scalar C), placed at the world
// pose f.
template <class T, class C>
LOCKSTEP_HD inertia<T> placed_inertia(const C& m, const vec3<C>& c_body, const mat3<C>& J_body, const frame<T>& f) {
  const vec3<T> c = f.p + times(f.R, c_body);
  mat3<T> J = times_transpose(times(f.R, J_body), f.R);
  const T c2 = dot(c, c);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) J(i, j) = J(i, j) - m * (c[i] * c[j]);
    J(i, i) = J(i, i) + m * c2;
  }
  return {T(m), m * c, J};
}

}  // namespace lockstep::multibody
