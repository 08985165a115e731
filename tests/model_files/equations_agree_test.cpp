// The structs that host/model_files/equations_to_header.py generates from equations files agree with
// the hand-written built-in models they restate (tests/model_files/equations/*.toml, and examples/mbs/a03_andrews.toml): the tables
// entry for entry, and mass, force, constraint and nonholonomic at 100 random states near the start,
// for T = double and for dual numbers (values and derivative parts), as well as initial_state; that
// every form the printer writes computes its formula (printer_forms.toml); and that a file's [events]
// become the struct's event table and event function (pendulum_events.toml).
//
// Agreement is measured norm-wise: max_i |a_i - b_i| / max_i |b_i| for each vector or matrix, over
// the values and, separately, over the derivative parts of all directions. The generated code evaluates the same formulas in another
// order (SymPy's canonical order, common subexpressions shared), so entries differ by rounding;
// rounding in an entry is relative to the size of the terms it sums, which the largest entry bounds
// better than the entry itself (a constraint residual near zero is a difference of O(1) terms), and
// a floor of max(1, |b_i|) would hide real differences in Andrews' mass matrix, whose entries are
// 1e-7 to 1e-5.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "equations/andrews.hpp"
#include "equations/fourbar.hpp"
#include "equations/knife_edge.hpp"
#include "equations/pendulum_events.hpp"
#include "equations/printer_forms.hpp"
#include "equations/slider_crank.hpp"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/model/slider_crank.hpp"

namespace lockstep::test {
namespace {

constexpr double tolerance = 1e-14;
constexpr int samples = 100;
using D = dual<double, 2>;

static_assert(lockstep_check_model<equations::andrews>());
static_assert(lockstep_check_model<equations::slider_crank>());
static_assert(lockstep_check_model<equations::knife_edge>());
static_assert(lockstep_check_model<equations::fourbar>());
static_assert(lockstep_check_model<equations::printer_forms>());
static_assert(lockstep_check_model<equations::pendulum_events>());
// A file without [events] declares none (the struct is as it was before events existed).
static_assert(event_count<equations::knife_edge> == 0 && event_count<equations::printer_forms> == 0);

// Norm-wise relative difference of two arrays of doubles (see the top of the file).
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  if (scale == 0.0) return diff == 0.0 ? 0.0 : INFINITY;
  return diff / scale;
}

// The scalars of a vec or mat as arrays: the values, then (for duals) all derivative parts together.
// The directions share one scale: a single random direction can nearly cancel in an entry (the sum
// of terms of size 10 coming out at 0.03), and its own norm would then magnify plain rounding.
template <class T, int N>
std::vector<std::vector<double>> parts(const T (&a)[N], int count) {
  std::vector<std::vector<double>> out;
  if constexpr (std::is_same_v<T, double>) {
    out.emplace_back(a, a + count);
  } else {
    out.resize(2);
    for (int i = 0; i < count; ++i) {
      out[0].push_back(a[i].v);
      for (int d = 0; d < T::directions; ++d) out[1].push_back(a[i].d[d]);
    }
  }
  return out;
}

// Largest norm-wise difference over values and derivative parts.
template <class X>
double difference(const X& generated, const X& builtin, int count) {
  const auto g = parts(generated.a, count), b = parts(builtin.a, count);
  double worst = 0.0;
  for (std::size_t k = 0; k < g.size(); ++k) worst = std::max(worst, relative_difference(g[k], b[k]));
  return worst;
}

// The default inputs, never an empty vector (a model without inputs has no `inputs` table).
template <class Model>
std::vector<double> default_inputs() {
  std::vector<double> in(std::max(Model::n_inputs, 1), 0.0);
  if constexpr (Model::n_inputs > 0)
    for (int i = 0; i < Model::n_inputs; ++i) in[i] = Model::inputs[i].default_value;
  return in;
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// x as a T: for a dual, random derivative parts of size up to `scale`. Parameters get derivative parts
// relative to their value: a unit derivative on a stiffness of 4530 N/m next to one on a length of
// 0.02 m would be a direction scaled so badly that rounding, not the generator, decides the result.
template <class T>
T near(std::mt19937_64& rng, double x, double scale = 1.0) {
  T r(x);
  if constexpr (!std::is_same_v<T, double>)
    for (int d = 0; d < T::directions; ++d) r.d[d] = scale * uniform(rng, -1.0, 1.0);
  return r;
}

// Largest difference seen per function, reported at the end of each test.
struct worst_seen {
  double mass = 0, force = 0, constraint = 0, nonholonomic = 0;
  void print(const char* model, const char* scalar) const {
    std::printf("[ agreement ] %s, %s: largest relative difference mass %.3g, force %.3g, constraint %.3g, "
                "nonholonomic %.3g\n",
                model, scalar, mass, force, constraint, nonholonomic);
  }
};

// Random states near the built-in start, parameters within 10 % of their defaults (a parameter that
// defaults to zero gets a value of order one, so its terms are exercised). T is the scalar of q, v, t;
// P that of the parameters (double, or T itself as when the library differentiates by parameters).
template <class Gen, class Ref, class T, class P>
void expect_agreement(std::uint64_t stream, double speed) {
  static_assert(Gen::n == Ref::n && Gen::m == Ref::m && Gen::k == Ref::k);
  constexpr int n = Ref::n, m = Ref::m, k = Ref::k;
  std::mt19937_64 rng(stream);
  std::vector<double> p0(Ref::n_params);
  for (int i = 0; i < Ref::n_params; ++i) p0[i] = Ref::params[i].default_value;
  const std::vector<double> in0 = default_inputs<Ref>();
  vec<double, n> q0, v0;
  Ref::initial_state(p0.data(), in0.data(), q0, v0);

  worst_seen worst;
  for (int s = 0; s < samples; ++s) {
    std::vector<P> p(Ref::n_params);
    for (int i = 0; i < Ref::n_params; ++i) {
      const double value = p0[i] == 0.0 ? uniform(rng, 0.5, 1.5) : p0[i] * uniform(rng, 0.9, 1.1);
      p[i] = near<P>(rng, value, std::abs(value));
    }
    vec<T, n> q, v;
    for (int i = 0; i < n; ++i) {
      q[i] = near<T>(rng, q0[i] + uniform(rng, -0.1, 0.1));
      v[i] = near<T>(rng, v0[i] + uniform(rng, -speed, speed));
    }
    const T t = near<T>(rng, uniform(rng, 0.0, 1.0));

    const auto mass_g = Gen::template mass<T, P>(q, p.data());
    const auto mass_r = Ref::template mass<T, P>(q, p.data());
    worst.mass = std::max(worst.mass, difference(mass_g, mass_r, n * n));
    const auto force_g = Gen::template force<T, P>(t, q, v, p.data());
    const auto force_r = Ref::template force<T, P>(t, q, v, p.data());
    worst.force = std::max(worst.force, difference(force_g, force_r, n));
    if constexpr (m > 0) {
      const auto phi_g = Gen::template constraint<T, P>(t, q, p.data());
      const auto phi_r = Ref::template constraint<T, P>(t, q, p.data());
      worst.constraint = std::max(worst.constraint, difference(phi_g, phi_r, m));
    }
    if constexpr (k > 0) {
      const auto r_g = Gen::template nonholonomic<T, P>(t, q, v, p.data());
      const auto r_r = Ref::template nonholonomic<T, P>(t, q, v, p.data());
      worst.nonholonomic = std::max(worst.nonholonomic, difference(r_g, r_r, k));
    }
  }
  worst.print(Ref::name, std::is_same_v<T, double> ? "double" : std::is_same_v<P, double> ? "dual" : "dual, dual parameters");
  EXPECT_LE(worst.mass, tolerance);
  EXPECT_LE(worst.force, tolerance);
  EXPECT_LE(worst.constraint, tolerance);
  EXPECT_LE(worst.nonholonomic, tolerance);
}

template <class Gen, class Ref>
void expect_same_tables() {
  EXPECT_STREQ(Gen::name, Ref::name);
  EXPECT_STREQ(Gen::description, Ref::description);
  ASSERT_EQ(Gen::n_params, Ref::n_params);
  for (int i = 0; i < Ref::n_params; ++i) {
    EXPECT_STREQ(Gen::params[i].name, Ref::params[i].name) << i;
    EXPECT_EQ(Gen::params[i].default_value, Ref::params[i].default_value) << Ref::params[i].name;
    EXPECT_STREQ(Gen::params[i].description, Ref::params[i].description) << Ref::params[i].name;
  }
  ASSERT_EQ(Gen::n_inputs, Ref::n_inputs);
  if constexpr (Ref::n_inputs > 0)
    for (int i = 0; i < Ref::n_inputs; ++i) {
      EXPECT_STREQ(Gen::inputs[i].name, Ref::inputs[i].name) << i;
      EXPECT_EQ(Gen::inputs[i].default_value, Ref::inputs[i].default_value) << Ref::inputs[i].name;
      EXPECT_STREQ(Gen::inputs[i].description, Ref::inputs[i].description) << Ref::inputs[i].name;
    }
}

// initial_state at the defaults and, where there are inputs, at 100 random inputs and parameters.
template <class Gen, class Ref>
void expect_same_initial_state(std::uint64_t stream) {
  constexpr int n = Ref::n;
  std::mt19937_64 rng(stream);
  double worst = 0.0;
  for (int s = 0; s < (Ref::n_inputs > 0 ? samples : 1); ++s) {
    std::vector<double> p(Ref::n_params), in = default_inputs<Ref>();
    for (int i = 0; i < Ref::n_params; ++i) p[i] = Ref::params[i].default_value * (s ? uniform(rng, 0.9, 1.1) : 1.0);
    for (int i = 0; i < Ref::n_inputs; ++i) in[i] += s ? uniform(rng, -1.0, 1.0) : 0.0;
    vec<double, n> qg, vg, qr, vr;
    Gen::initial_state(p.data(), in.data(), qg, vg);
    Ref::initial_state(p.data(), in.data(), qr, vr);
    worst = std::max({worst, difference(qg, qr, n), difference(vg, vr, n)});
  }
  std::printf("[ agreement ] %s: largest relative difference initial_state %.3g\n", Ref::name, worst);
  EXPECT_LE(worst, tolerance);
}

TEST(EquationsAgree, AndrewsTables) { expect_same_tables<equations::andrews, models::andrews>(); }
TEST(EquationsAgree, AndrewsDouble) { expect_agreement<equations::andrews, models::andrews, double, double>(11, 10.0); }
TEST(EquationsAgree, AndrewsDual) { expect_agreement<equations::andrews, models::andrews, D, double>(12, 10.0); }
TEST(EquationsAgree, AndrewsDualParameters) { expect_agreement<equations::andrews, models::andrews, D, D>(13, 10.0); }
TEST(EquationsAgree, AndrewsInitialState) { expect_same_initial_state<equations::andrews, models::andrews>(14); }

TEST(EquationsAgree, SliderCrankTables) { expect_same_tables<equations::slider_crank, models::slider_crank>(); }
TEST(EquationsAgree, SliderCrankDouble) {
  expect_agreement<equations::slider_crank, models::slider_crank, double, double>(21, 10.0);
}
TEST(EquationsAgree, SliderCrankDual) { expect_agreement<equations::slider_crank, models::slider_crank, D, double>(22, 10.0); }
TEST(EquationsAgree, SliderCrankDualParameters) {
  expect_agreement<equations::slider_crank, models::slider_crank, D, D>(23, 10.0);
}
TEST(EquationsAgree, SliderCrankInitialState) {
  expect_same_initial_state<equations::slider_crank, models::slider_crank>(24);
}

TEST(EquationsAgree, KnifeEdgeTables) { expect_same_tables<equations::knife_edge, models::knife_edge>(); }
TEST(EquationsAgree, KnifeEdgeDouble) { expect_agreement<equations::knife_edge, models::knife_edge, double, double>(31, 2.0); }
TEST(EquationsAgree, KnifeEdgeDual) { expect_agreement<equations::knife_edge, models::knife_edge, D, double>(32, 2.0); }
TEST(EquationsAgree, KnifeEdgeDualParameters) { expect_agreement<equations::knife_edge, models::knife_edge, D, D>(33, 2.0); }
TEST(EquationsAgree, KnifeEdgeInitialState) { expect_same_initial_state<equations::knife_edge, models::knife_edge>(34); }

// The example four-bar linkage: its default start lies on the constraints (position and velocity)
// and the constraint Jacobian there has full row rank, so the start is a regular point.
TEST(EquationsExample, FourbarStartIsConsistentAndRegular) {
  using M = equations::fourbar;
  std::vector<double> p(M::n_params), in(M::n_inputs);
  for (int i = 0; i < M::n_params; ++i) p[i] = M::params[i].default_value;
  for (int i = 0; i < M::n_inputs; ++i) in[i] = M::inputs[i].default_value;
  vec<double, M::n> q0, v0;
  M::initial_state(p.data(), in.data(), q0, v0);
  EXPECT_EQ(q0[0], in[0]);
  EXPECT_EQ(v0[0], in[1]);

  const auto phi = M::constraint<double, double>(0.0, q0, p.data());
  const auto velocity = velocity_constraint<M>(0.0, q0, v0, p.data());
  for (int i = 0; i < M::m; ++i) {
    EXPECT_LE(std::abs(phi[i]), 1e-15) << "loop " << i;
    EXPECT_LE(std::abs(velocity[i]), 1e-14) << "loop " << i;
  }
  const auto G = constraint_jacobian<M>(0.0, q0, p.data());
  Eigen::Matrix<double, M::m, M::n> J;
  for (int i = 0; i < M::m; ++i)
    for (int j = 0; j < M::n; ++j) J(i, j) = G(i, j);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(J);
  const auto sigma = svd.singularValues();
  std::printf("[ fourbar ] constraint Jacobian singular values at the default start: %.6g %.6g\n", sigma(0),
              sigma(1));
  EXPECT_GT(sigma(M::m - 1), 1e-3 * sigma(0)) << "rank-deficient constraint Jacobian";
}

// ---- the printer's forms -----------------------------------------------------------------------------

// printer_forms.toml's force, written again with the C library's functions.
vec<double, 3> printer_forms_force(double t, const vec<double, 3>& q, const vec<double, 3>& v, const double* p) {
  const double x = q[0], y = q[1], z = q[2], a = p[0], T = p[1], pw = p[2], n = p[3], qq = p[4];
  const double r = std::sqrt(x * x + y * y + 1);
  vec<double, 3> Q;
  Q[0] = (x + y) * (x + y) - std::pow(x - y, -3.0) + std::pow(x, 5.0) + std::pow(std::abs(y), 1.5) + std::pow(x, pw) +
         std::pow(2.0, x) + 1 / r + 1 / (r * r) + T / (a * r) + std::pow(x * y, 4.0);
  Q[1] = std::atan2(x, 2.0) + std::atan2(1.5, y) + std::atan2(y, x) + std::tanh(x) + std::sinh(y) + std::cosh(z) -
         std::numbers::pi / 2 + 1.0 / 3.0 + std::log(r) + std::exp(-v[0] * t);
  Q[2] = -(x * y * z) + std::tan(z) + std::asin(x / 10) + std::acos(y / 10) + std::atan(z) + std::sqrt(2.0) * x +
         n * qq + std::sin(x) * std::cos(x) + v[1] * v[1] * std::sin(t);
  return Q;
}

// Every printed form type-checks for double, dual numbers (also with dual parameters and nested, as
// for second derivatives) and computes the formula: values within rounding of the C++ reference,
// derivative parts within truncation of central differences.
TEST(EquationsPrinter, EveryFormComputesItsFormulaForDoublesAndDuals) {
  using F = equations::printer_forms;
  std::mt19937_64 rng(41);
  double worst_value = 0.0, worst_derivative = 0.0;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> p(F::n_params);
    for (int i = 0; i < F::n_params; ++i) p[i] = F::params[i].default_value * uniform(rng, 0.9, 1.1);
    vec<double, 3> q, v, dq;
    q[0] = uniform(rng, 0.1, 0.4);  // x - y stays away from 0, |x|, |y| / 10 below 1
    q[1] = uniform(rng, 0.6, 0.9);
    q[2] = uniform(rng, -1.0, 1.0);
    for (int i = 0; i < 3; ++i) {
      v[i] = uniform(rng, -1.0, 1.0);
      dq[i] = uniform(rng, -1.0, 1.0);
    }
    const double t = uniform(rng, 0.0, 1.0);
    const auto expected = printer_forms_force(t, q, v, p.data());
    const auto generated = F::force<double, double>(t, q, v, p.data());
    worst_value = std::max(worst_value, difference(generated, expected, 3));

    // Along q + h dq: the dual's derivative part against a central difference.
    vec<dual<double, 1>, 3> qd, vd;
    for (int i = 0; i < 3; ++i) {
      qd[i] = dual<double, 1>(q[i]);
      qd[i].d[0] = dq[i];
      vd[i] = dual<double, 1>(v[i]);
    }
    const auto along = F::force<dual<double, 1>, double>(dual<double, 1>(t), qd, vd, p.data());
    const double h = 1e-5;
    vec<double, 3> plus = q, minus = q;
    for (int i = 0; i < 3; ++i) {
      plus[i] += h * dq[i];
      minus[i] -= h * dq[i];
    }
    const auto fp = F::force<double, double>(t, plus, v, p.data()), fm = F::force<double, double>(t, minus, v, p.data());
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(along[i].v, generated[i]) << "value part of entry " << i;
      const double fd = (fp[i] - fm[i]) / (2 * h);
      worst_derivative = std::max(worst_derivative, std::abs(along[i].d[0] - fd) / std::max(1.0, std::abs(fd)));
    }
  }
  std::printf("[ printer ] largest relative difference: values %.3g, derivative parts against central "
              "differences %.3g\n", worst_value, worst_derivative);
  EXPECT_LE(worst_value, tolerance);
  EXPECT_LE(worst_derivative, 1e-6);

  // Instantiations the library uses: dual parameters, nested duals (second derivatives).
  std::vector<double> p(F::n_params);
  for (int i = 0; i < F::n_params; ++i) p[i] = F::params[i].default_value;
  vec<double, 3> q, v;
  q[0] = 0.3;
  q[1] = 0.7;
  q[2] = 0.1;
  const auto gamma = constraint_gamma<F>(0.5, q, v, p.data());
  EXPECT_TRUE(std::isfinite(gamma[0]));
  std::vector<D> pd(p.begin(), p.end());
  vec<D, 3> qd;
  for (int i = 0; i < 3; ++i) qd[i] = D(q[i]);
  const auto Qd = F::force<D, D>(D(0.5), qd, qd, pd.data());
  EXPECT_TRUE(std::isfinite(Qd[0].v));

  vec<double, 3> q0, v0;
  F::initial_state(p.data(), nullptr, q0, v0);
  EXPECT_EQ(q0[0], 1.0 / 3.0);
  EXPECT_EQ(q0[1], std::sqrt(2.0) / 2);
  EXPECT_EQ(q0[2], p[1]);
  EXPECT_EQ(v0[0], -1.0);
  EXPECT_EQ(v0[1], 0.0);
  EXPECT_EQ(v0[2], std::numbers::pi);
}

// ---- events -------------------------------------------------------------------------------------------

// pendulum_events.toml's [events]: the table in file order with each direction and action as written
// (defaults both and record), and event(t, q, v, p) computing each g, for doubles and for duals.
TEST(EquationsEvents, TableAndFunctionFollowTheFile) {
  using E = equations::pendulum_events;
  static_assert(E::n_events == 4 && event_count<E> == 4);
  const struct {
    const char* name;
    const char* direction;
    const char* action;
    const char* description;
  } expected[] = {
      {"x", "falling", "stop", "the bob passes below the pivot, moving left"},
      {"high", "rising", "count", ""},
      {"work", "both", "record", "a function of t, v and a definition"},
      {"swing", "both", "record", ""},
  };
  for (int i = 0; i < E::n_events; ++i) {
    EXPECT_STREQ(E::events[i].name, expected[i].name) << i;
    EXPECT_STREQ(event_direction_name(E::events[i].direction), expected[i].direction) << expected[i].name;
    EXPECT_STREQ(event_action_name(E::events[i].action), expected[i].action) << expected[i].name;
    EXPECT_STREQ(E::events[i].description, expected[i].description) << expected[i].name;
  }

  // Parameters other than the defaults, so that each g must read the right entry of p.
  const double p[] = {2.0, 1.5, 9.0, -0.25};  // m, L, g, h
  const double m = p[0], g = p[2], h = p[3], t = 0.5;
  vec<double, 2> q, v;
  q[0] = 0.6;
  q[1] = -0.8;
  v[0] = 1.2;
  v[1] = 0.9;
  const double kinetic = m * (v[0] * v[0] + v[1] * v[1]) / 2;
  const double values[] = {q[0], q[1] - h, kinetic - m * g * t * v[1], v[0]};
  const auto ev = E::event<double, double>(t, q, v, p);
  for (int i = 0; i < E::n_events; ++i) EXPECT_DOUBLE_EQ(ev[i], values[i]) << expected[i].name;

  // Generic in T: a dual along x_dot carries dg/dx_dot = 0, 0, m x_dot, 1.
  using D1 = dual<double, 1>;
  vec<D1, 2> qd, vd;
  for (int i = 0; i < 2; ++i) {
    qd[i] = D1(q[i]);
    vd[i] = D1(v[i]);
  }
  vd[0].d[0] = 1.0;
  const auto evd = E::event<D1, double>(D1(t), qd, vd, p);
  const double slopes[] = {0.0, 0.0, m * v[0], 1.0};
  for (int i = 0; i < E::n_events; ++i) {
    EXPECT_EQ(evd[i].v, ev[i]) << expected[i].name;
    EXPECT_DOUBLE_EQ(evd[i].d[0], slopes[i]) << expected[i].name;
  }
}

}  // namespace
}  // namespace lockstep::test
