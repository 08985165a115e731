// lockstep/multibody/force_elements.hpp — force elements between bodies, as external spatial forces on
// the tree (tree.hpp, generalized_forces).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/multibody/spatial.hpp"

namespace lockstep::multibody {

// A linear spring-damper between the world points xa (on body a) and xb (on body b; -1: the ground):
// the tension F = k (l - L0) + d l' along the line between them, l = |xb - xa|, pulls b towards a and a
// towards b. Its two forces are added to f_ext of the bodies, V being their spatial velocities. At l = 0
// the direction is undefined: a spring of free length zero between coincident points is a model error
// the caller's start check finds (a non-finite force).
template <class T, class K>
LOCKSTEP_HD void spring_damper(const motion<T>* V, force<T>* f_ext, int a, const vec3<T>& xa, int b,
                               const vec3<T>& xb, const K& k, const K& d, const K& free_length) {
  const vec3<T> e = xb - xa;
  const T l = sqrt(dot(e, e));
  const vec3<T> u = (T(1.0) / l) * e;
  vec3<T> va{}, vb{};
  if (a >= 0) va = point_velocity(V[a], xa);
  if (b >= 0) vb = point_velocity(V[b], xb);
  const T rate = dot(u, vb - va);
  const T tension = k * (l - free_length) + d * rate;
  const vec3<T> on_b = (-tension) * u;
  if (b >= 0) f_ext[b] = f_ext[b] + force_at(xb, on_b);
  if (a >= 0) f_ext[a] = f_ext[a] + force_at(xa, -on_b);
}

}  // namespace lockstep::multibody
