// Random kinematic trees (lockstep/multibody/tree.hpp) for the tests of tests/multibody: a tree's
// shape (each body's joint type, parent and coordinate) and its geometry drawn from a fixed-seed
// generator, the bodies and the joints' frames and axes by the test's own rules.
#pragma once

#include <cstdint>
#include <random>

#include "lockstep/multibody/tree.hpp"

namespace lockstep::multibody::test_trees {

// Uniform on [a, b) from the generator's 53 high bits: the same numbers on every standard library
// (std::uniform_real_distribution's algorithm is not specified).
struct draw {
  std::mt19937_64 engine;
  explicit draw(std::uint64_t seed) : engine(seed) {}
  double operator()(double a, double b) { return a + (b - a) * (static_cast<double>(engine() >> 11) * 0x1.0p-53); }
  bool coin() { return (engine() >> 63) != 0; }
};

struct shape {
  joint_type type;
  int parent;
  int coordinate;
};

// The tree of shape s: body i from body_of(u), then joint i's frames and axis from geometry(u, joint),
// which finds its type, parent and coordinate set.
template <int B, class BodyOf, class Geometry>
tree<double, B> random_tree(const shape (&s)[B], std::uint64_t seed, const BodyOf& body_of, const Geometry& geometry) {
  draw u(seed);
  tree<double, B> t;
  for (int i = 0; i < B; ++i) {
    t.bodies[i] = body_of(u);
    joint<double>& j = t.joints[i];
    j.type = s[i].type;
    j.parent = s[i].parent;
    j.coordinate = s[i].coordinate;
    geometry(u, j);
  }
  return t;
}

}  // namespace lockstep::multibody::test_trees
