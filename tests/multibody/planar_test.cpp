// The planar algorithms of multibody/planar.hpp against the spatial ones of multibody/tree.hpp and
// cut_joints.hpp, which tree_vs_pinocchio.py checks against Pinocchio: on planar trees drawn at random
// (revolute joints about +-z, prismatic ones in the plane, fixed ones; joint frames offset and turned
// about z, or not, in both bodies; each joint's axis given by the frame's index and sign or as a vector;
// centres of mass off the plane, full inertia tensors, gravity and applied forces with out-of-plane
// parts, which take no part in the motion in the plane), the poses, motion axes, mass matrix and
// generalized forces agree to round-off, and so do their derivatives by automatic differentiation and
// the cut joints' rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <type_traits>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/multibody/cut_joints.hpp"
#include "lockstep/multibody/planar.hpp"
#include "lockstep/multibody/spatial.hpp"
#include "lockstep/multibody/tree.hpp"
#include "random_trees.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::multibody;

using test_trees::draw;
using test_trees::shape;

constexpr vec3<double> ez{{0.0, 0.0, 1.0}};

// A frame turned about z (or not) and offset in space (or not; its z takes no part in the plane's
// motion), with the flags a generated tree sets.
frame<double> random_frame(draw& u, bool& turned, bool& offset) {
  frame<double> f;
  turned = u.coin();
  offset = u.coin();
  if (turned) f.R = rotation_about(ez, u(-std::numbers::pi, std::numbers::pi));
  if (offset) f.p = vec3<double>{{u(-0.5, 0.5), u(-0.5, 0.5), u(-0.2, 0.2)}};
  return f;
}

body<double> random_body(draw& u) {
  body<double> b;
  b.mass = u(0.5, 3.0);
  b.centre_of_mass = vec3<double>{{u(-0.3, 0.3), u(-0.3, 0.3), u(-0.3, 0.3)}};
  for (int i = 0; i < 3; ++i) {
    b.inertia(i, i) = u(0.2, 0.5);
    for (int j = 0; j < i; ++j) b.inertia(i, j) = b.inertia(j, i) = u(-0.05, 0.05);
  }
  return b;
}

// Revolute joints about +-z, prismatic ones in the plane, each axis by the frame's index and sign or
// as a vector.
template <int B>
tree<double, B> random_planar_tree(const shape (&s)[B], std::uint64_t seed) {
  return test_trees::random_tree(s, seed, random_body, [](draw& u, joint<double>& j) {
    j.in_parent = random_frame(u, j.parent_turned, j.parent_offset);
    j.in_child = random_frame(u, j.child_turned, j.child_offset);
    const bool by_index = u.coin();
    const double sign = u.coin() ? 1.0 : -1.0;
    if (j.type == joint_type::revolute) {
      j.axis = vec3<double>{{0.0, 0.0, sign}};
      if (by_index) {
        j.axis_index = 2;
        j.axis_sign = static_cast<int>(sign);
      }
    } else if (j.type == joint_type::prismatic) {
      if (by_index) {
        j.axis_index = u.coin() ? 1 : 0;
        j.axis_sign = static_cast<int>(sign);
        j.axis = vec3<double>{};
        j.axis[j.axis_index] = sign;
      } else {
        const double a = u(-std::numbers::pi, std::numbers::pi);
        j.axis = vec3<double>{{std::cos(a), std::sin(a), 0.0}};
      }
    }
  });
}

// A chain and a branched tree: a second root, a fixed joint, and coordinates out of the bodies' order.
constexpr shape chain[] = {{joint_type::revolute, -1, 0}, {joint_type::prismatic, 0, 1}, {joint_type::revolute, 1, 2},
                           {joint_type::revolute, 2, 3}, {joint_type::prismatic, 3, 4}};
constexpr shape branched[] = {{joint_type::prismatic, -1, 2}, {joint_type::revolute, 0, 0}, {joint_type::fixed, 1, -1},
                              {joint_type::revolute, 2, 4},   {joint_type::revolute, 0, 1},
                              {joint_type::revolute, -1, 3},  {joint_type::prismatic, 5, 5}};

double scale_of(double x) { return 1.0 + std::abs(x); }

template <int N, int B>
void expect_planar_matches_spatial(const tree<double, B>& t, std::uint64_t seed) {
  draw u(seed);
  const vec3<double> gravity{{u(-5.0, 5.0), u(-10.0, 10.0), u(-10.0, 10.0)}};
  for (int state = 0; state < 5; ++state) {
    vec<double, N> q, v;
    for (int i = 0; i < B; ++i) {
      const int a = t.joints[i].coordinate;
      if (a < 0) continue;
      q[a] = t.joints[i].type == joint_type::revolute ? u(-4.0, 4.0) : u(-0.5, 0.5);
      v[a] = u(-2.0, 2.0);
    }
    force<double> f_ext[B];
    for (int i = 0; i < B; ++i)
      f_ext[i] = force_at(vec3<double>{{u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)}},
                          vec3<double>{{u(-3.0, 3.0), u(-3.0, 3.0), u(-3.0, 3.0)}});

    const configuration<double, B> c = place<N>(t, q);
    const planar_configuration<double, B> g = place_planar<N>(t, q);
    const configuration<double, B> from_plane = spatial_configuration(g);
    for (int i = 0; i < B; ++i) {
      for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) EXPECT_NEAR(from_plane.pose[i].R(a, b), c.pose[i].R(a, b), 1e-14) << "body " << i;
        EXPECT_NEAR(from_plane.pose[i].p[a], c.pose[i].p[a], 1e-14 * scale_of(c.pose[i].p[a])) << "body " << i;
      }
      EXPECT_NEAR(g.axis[i].angular, c.axis[i].angular[2], 1e-15) << "body " << i;
      for (int a = 0; a < 2; ++a) EXPECT_NEAR(g.axis[i].linear[a], c.axis[i].linear[a], 1e-14) << "body " << i;
    }

    const mat<double, N, N> M = mass_matrix<N>(t, c), Mp = mass_matrix<N>(t, g);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) EXPECT_NEAR(Mp(a, b), M(a, b), 1e-13 * scale_of(M(a, b))) << a << ", " << b;

    // Q(q, v) with the configurations of `place_of` (place or place_planar), on doubles or duals.
    const auto forces_by = [&](const auto& place_of) {
      return [&, place_of](const auto& qs, const auto& vs) {
        using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
        const auto cs = place_of(qs);
        typename std::remove_cvref_t<decltype(cs)>::motion_type V[B];
        velocities<N>(t, cs, vs, V);
        force<S> f[B];
        for (int i = 0; i < B; ++i)
          for (int a = 0; a < 3; ++a) {
            f[i].moment[a] = S(f_ext[i].moment[a]);
            f[i].linear[a] = S(f_ext[i].linear[a]);
          }
        const vec3<S> gs{{S(gravity[0]), S(gravity[1]), S(gravity[2])}};
        return generalized_forces<N>(t, cs, V, vs, gs, f);
      };
    };
    const auto spatial_place = [&](const auto& x) { return place<N>(t, x); };
    const auto planar_place = [&](const auto& x) { return place_planar<N>(t, x); };
    const vec<double, N> Q = forces_by(spatial_place)(q, v), Qp = forces_by(planar_place)(q, v);
    for (int a = 0; a < N; ++a) EXPECT_NEAR(Qp[a], Q[a], 1e-12 * scale_of(Q[a])) << a;

    // The derivatives the solvers take of them, by automatic differentiation: d(M a)/dq and dQ/d(q, v).
    vec<double, N> acc;
    for (int a = 0; a < N; ++a) acc[a] = u(-1.0, 1.0);
    const auto inertial = [&](const auto& qs, const auto& gs_of) {
      using S = typename std::remove_cvref_t<decltype(qs)>::value_type;
      const mat<S, N, N> Ms = mass_matrix<N>(t, gs_of(qs));
      vec<S, N> r;
      for (int a = 0; a < N; ++a) {
        r[a] = S(0.0);
        for (int b = 0; b < N; ++b) r[a] = r[a] + Ms(a, b) * acc[b];
      }
      return r;
    };
    const auto dMa = ad::jacobian([&](const auto& qs) { return inertial(qs, spatial_place); }, q);
    const auto dMa_planar = ad::jacobian([&](const auto& qs) { return inertial(qs, planar_place); }, q);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b)
        EXPECT_NEAR(dMa_planar(a, b), dMa(a, b), 1e-12 * scale_of(dMa(a, b))) << "d(M a)/dq " << a << ", " << b;
    const auto dQ = ad::evaluate_with_state_jacobians(forces_by(spatial_place), q, v);
    const auto dQ_planar = ad::evaluate_with_state_jacobians(forces_by(planar_place), q, v);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) {
        EXPECT_NEAR(dQ_planar.d_dq(a, b), dQ.d_dq(a, b), 1e-11 * scale_of(dQ.d_dq(a, b))) << "dQ/dq " << a << ", " << b;
        EXPECT_NEAR(dQ_planar.d_dv(a, b), dQ.d_dv(a, b), 1e-11 * scale_of(dQ.d_dv(a, b))) << "dQ/dv " << a << ", " << b;
      }
  }
}

TEST(PlanarTree, ChainMatchesTheSpatialAlgorithms) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    expect_planar_matches_spatial<5>(random_planar_tree(chain, seed), 100 + seed);
}

TEST(PlanarTree, BranchedTreeMatchesTheSpatialAlgorithms) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    expect_planar_matches_spatial<6>(random_planar_tree(branched, seed), 200 + seed);
}

// The cut joints' rows and the world frames of points and turned frames (at heights off the plane), on
// planar frames and on the same frames in space.
TEST(PlanarTree, CutJointRowsMatchTheSpatialOnes) {
  const tree<double, 5> t = random_planar_tree(chain, 7);
  draw u(42);
  for (int state = 0; state < 10; ++state) {
    vec<double, 5> q;
    for (int a = 0; a < 5; ++a) q[a] = u(-3.0, 3.0);
    const planar_configuration<double, 5> g = place_planar<5>(t, q);
    const configuration<double, 5> c = spatial_configuration(g);
    const int body_a = state % 2 == 0 ? -1 : 1, body_b = 3;
    const vec3<double> origin{{u(-0.5, 0.5), u(-0.5, 0.5), u(-0.2, 0.2)}};
    frame<double> local;
    local.R = rotation_about(ez, u(-3.0, 3.0));
    local.p = vec3<double>{{u(-0.5, 0.5), u(-0.5, 0.5), u(-0.2, 0.2)}};
    const planar_frame<double> a = world_frame(g.pose, body_a, origin), b = world_frame(g.pose, body_b, local);
    const frame<double> as = world_frame(c.pose, body_a, origin), bs = world_frame(c.pose, body_b, local);
    const vec3<double> d = offset_in(a, b), ds = offset_in(as, bs);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(d[i], ds[i], 1e-14);
    const double angle = u(-3.0, 3.0);
    const vec3<double> w{{std::cos(angle), std::sin(angle), 0.0}}, x{{-std::sin(angle), std::cos(angle), 0.0}};
    const vec3<double> ex{{1.0, 0.0, 0.0}}, ey{{0.0, 1.0, 0.0}};
    EXPECT_NEAR(perpendicular(a, w, b, x), perpendicular(as, w, bs, x), 1e-14);
    EXPECT_NEAR(perpendicular(a, ex, b, ey), perpendicular(as, ex, bs, ey), 1e-14);
    EXPECT_NEAR(offset_along(a, w, b), offset_along(as, w, bs), 1e-14);
    EXPECT_NEAR(distance_residual(a, b, 0.3), distance_residual(as, bs, 0.3), 1e-14);
  }
}

}  // namespace
