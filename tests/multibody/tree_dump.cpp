// tree_dump — lockstep's kinematic trees (multibody/tree.hpp) at a few states, for tree_vs_pinocchio.py
// to rebuild the same trees in Pinocchio (Carpentier et al., The Pinocchio C++ library, 2019) and
// compare the mass matrix and the generalized forces.
//
// Two trees, their geometry drawn from a fixed-seed generator (so that nothing is aligned with the axes
// or symmetric: unit joint axes in general directions, joint frames offset and rotated in both bodies,
// centres of mass off the joint frames, full inertia tensors):
//   - chain: six bodies in a chain, revolute and prismatic joints;
//   - tree: nine bodies, a base welded to the ground, a branch, a body welded to a moving one with a
//     joint on it, a second root on the ground, and coordinates numbered out of the bodies' order.
//
// Prints, for each tree, a "model" line, "gravity", one "body" and one "joint" line a body (all that is
// needed to rebuild it), then for each state: "state", "q", "v", each body's world "pose" (R row-major,
// then p) and spatial "velocity" (omega, then the velocity of the body point at the world origin), "M"
// (row-major), "Q" = -C(q, v) with gravity (0, 0, -9.81) and no applied force, and "load" (a point force:
// the body, the point in body coordinates, the point in world coordinates, the force in world
// coordinates) with "Q_load", the generalized forces with that force applied. Numbers as %.17g.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>

#include "lockstep/core/linalg.hpp"
#include "lockstep/multibody/spatial.hpp"
#include "lockstep/multibody/tree.hpp"
#include "random_trees.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::multibody;

using test_trees::draw;
using test_trees::shape;

vec3<double> unit_vector(draw& u) {
  for (;;) {
    const vec3<double> x{{u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)}};
    const double n = std::sqrt(dot(x, x));
    if (n > 0.2 && n <= 1.0) return (1.0 / n) * x;
  }
}

frame<double> random_frame(draw& u) {
  frame<double> f;
  f.R = rotation_about(unit_vector(u), u(-std::numbers::pi, std::numbers::pi));
  f.p = vec3<double>{{u(-0.5, 0.5), u(-0.5, 0.5), u(-0.5, 0.5)}};
  return f;
}

// A body with a full inertia tensor: principal moments that satisfy the triangle inequality (a real
// mass distribution's do), turned to general principal axes.
body<double> random_body(draw& u) {
  body<double> b;
  b.mass = u(0.5, 3.0);
  b.centre_of_mass = vec3<double>{{u(-0.3, 0.3), u(-0.3, 0.3), u(-0.3, 0.3)}};
  const double p0 = u(0.05, 0.5), p1 = u(0.05, 0.5);
  const double p2 = u(std::abs(p0 - p1) + 0.01, p0 + p1 - 0.01);
  const mat3<double> R = rotation_about(unit_vector(u), u(-std::numbers::pi, std::numbers::pi));
  mat3<double> D;
  D(0, 0) = p0;
  D(1, 1) = p1;
  D(2, 2) = p2;
  b.inertia = R * D * transpose(R);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < i; ++j) b.inertia(i, j) = b.inertia(j, i);  // exactly symmetric
  return b;
}

template <int B>
tree<double, B> random_tree(const shape (&s)[B], std::uint64_t seed) {
  return test_trees::random_tree(s, seed, random_body, [](draw& u, joint<double>& j) {
    j.axis = j.type == joint_type::fixed ? vec3<double>{} : unit_vector(u);
    j.in_parent = random_frame(u);
    j.in_child = random_frame(u);
  });
}

void print(const char* name, const double* x, int n) {
  std::printf("%s", name);
  for (int i = 0; i < n; ++i) std::printf(" %.17g", x[i]);
}

void print_frame(const char* name, const frame<double>& f) {
  print(name, f.R.a, 9);
  print("", f.p.a, 3);
}

template <int N, int B>
void dump(const char* name, const tree<double, B>& t, std::uint64_t seed, int states) {
  const vec3<double> gravity{{0.0, 0.0, -9.81}};
  std::printf("model %s bodies %d coordinates %d\n", name, B, N);
  print("gravity", gravity.a, 3);
  std::printf("\n");
  const char* types[] = {"revolute", "prismatic", "fixed"};
  for (int i = 0; i < B; ++i) {
    const body<double>& b = t.bodies[i];
    const joint<double>& j = t.joints[i];
    std::printf("body %d mass %.17g", i, b.mass);
    print(" com", b.centre_of_mass.a, 3);
    print(" inertia", b.inertia.a, 9);
    std::printf("\njoint %d type %s parent %d coordinate %d", i, types[static_cast<int>(j.type)], j.parent,
                j.coordinate);
    print(" axis", j.axis.a, 3);
    print_frame(" in_parent", j.in_parent);
    print_frame(" in_child", j.in_child);
    std::printf("\n");
  }
  draw u(seed);
  for (int s = 0; s < states; ++s) {
    vec<double, N> q, v;
    for (int i = 0; i < B; ++i) {
      const int a = t.joints[i].coordinate;
      if (a < 0) continue;
      q[a] = t.joints[i].type == joint_type::revolute ? u(-std::numbers::pi, std::numbers::pi) : u(-0.5, 0.5);
      v[a] = u(-2.0, 2.0);
    }
    const configuration<double, B> c = place<N>(t, q);
    motion<double> V[B];
    velocities<N>(t, c, v, V);
    std::printf("state %d\n", s);
    print("q", q.a, N);
    std::printf("\n");
    print("v", v.a, N);
    std::printf("\n");
    for (int i = 0; i < B; ++i) {
      std::printf("pose %d", i);
      print_frame("", c.pose[i]);
      std::printf("\nvelocity %d", i);
      print("", V[i].angular.a, 3);
      print("", V[i].linear.a, 3);
      std::printf("\n");
    }
    const mat<double, N, N> M = mass_matrix<N>(t, c);
    print("M", M.a, N * N);
    std::printf("\n");
    force<double> f_ext[B] = {};
    const vec<double, N> Q = generalized_forces<N>(t, c, V, v, gravity, f_ext);
    print("Q", Q.a, N);
    std::printf("\n");
    // A point force on one body after another (the welded ones too), at a point of the body.
    const int k = s % B;
    const vec3<double> r{{u(-0.4, 0.4), u(-0.4, 0.4), u(-0.4, 0.4)}};
    const vec3<double> f{{u(-20.0, 20.0), u(-20.0, 20.0), u(-20.0, 20.0)}};
    const vec3<double> x = point_of(c.pose[k], r);
    f_ext[k] = force_at(x, f);
    const vec<double, N> Q_load = generalized_forces<N>(t, c, V, v, gravity, f_ext);
    std::printf("load %d", k);
    print(" point", r.a, 3);
    print(" world", x.a, 3);
    print(" force", f.a, 3);
    std::printf("\n");
    print("Q_load", Q_load.a, N);
    std::printf("\n");
    // The forces the joints transmit at random accelerations, with gravity and the load.
    vec<double, N> a;
    for (int j = 0; j < N; ++j) a[j] = u(-5.0, 5.0);
    force<double> F[B];
    transmitted_forces<N>(t, c, V, v, &a, gravity, f_ext, F);
    print("a", a.a, N);
    std::printf("\n");
    for (int i = 0; i < B; ++i) {
      std::printf("transmitted %d", i);
      print("", F[i].moment.a, 3);
      print("", F[i].linear.a, 3);
      std::printf("\n");
    }
  }
}

}  // namespace

int main() {
  constexpr joint_type R = joint_type::revolute, P = joint_type::prismatic, F = joint_type::fixed;
  const shape chain[] = {{R, -1, 0}, {P, 0, 1}, {R, 1, 2}, {R, 2, 3}, {P, 3, 4}, {R, 4, 5}};
  dump<6>("chain", random_tree(chain, 11), 101, 6);
  // Body 0 welded to the ground, body 4 welded to body 3 and carrying body 5, bodies 6-7 a branch on
  // body 1, body 8 a second root; coordinates in another order than the bodies.
  const shape branched[] = {{F, -1, -1}, {R, 0, 3}, {P, 1, 0}, {R, 2, 5}, {F, 3, -1},
                            {R, 4, 1},   {R, 1, 2}, {P, 6, 4}, {R, -1, 6}};
  dump<7>("tree", random_tree(branched, 12), 102, 9);
  return 0;
}
