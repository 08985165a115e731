// tests/model/model_test_support.hpp — what the model tests share: the built-in models as GoogleTest
// type lists, default and perturbed parameters, random states near a model's start, Richardson-
// extrapolated central differences of the models' own double-valued functions, and the comparison
// rule for "AD matches finite differences".
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/model/registry.hpp"

namespace lockstep::test {

// ---- type lists ------------------------------------------------------------------------------------

template <template <class> class Keep, class Kept, class... Rest>
struct filter_models {
  using type = Kept;
};
template <template <class> class Keep, class... Kept, class First, class... Rest>
struct filter_models<Keep, ::testing::Types<Kept...>, First, Rest...>
    : filter_models<Keep,
                    std::conditional_t<Keep<First>::value, ::testing::Types<Kept..., First>,
                                       ::testing::Types<Kept...>>,
                    Rest...> {};

template <template <class> class Keep, class List>
struct filter_list;
template <template <class> class Keep, class... Models>
struct filter_list<Keep, model_list<Models...>> : filter_models<Keep, ::testing::Types<>, Models...> {};

template <class Model>
struct always : std::true_type {};
template <class Model>
struct has_nonholonomic : std::bool_constant<(Model::k > 0)> {};
template <class Model>
struct has_inputs : std::bool_constant<(Model::n_inputs > 0)> {};

using all_models = typename filter_list<always, builtin_models>::type;
using nonholonomic_models = typename filter_list<has_nonholonomic, builtin_models>::type;
using models_with_inputs = typename filter_list<has_inputs, builtin_models>::type;

// Test names show the model ("Derivatives/chain16.…") instead of a type index.
struct model_names {
  template <class Model>
  static std::string GetName(int) {
    return Model::name;
  }
};

// ---- parameters, inputs and states -----------------------------------------------------------------

template <class Model>
std::vector<double> default_params() {
  std::vector<double> p(Model::n_params);
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  return p;
}

// Never empty, so .data() is a valid pointer even for models without inputs.
template <class Model>
std::vector<double> default_inputs() {
  std::vector<double> in(Model::n_inputs > 0 ? Model::n_inputs : 1, 0.0);
  if constexpr (Model::n_inputs > 0)
    for (int i = 0; i < Model::n_inputs; ++i) in[i] = Model::inputs[i].default_value;
  return in;
}

inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// Every parameter moved by up to 10 %; parameters that default to zero (damping, torques, springs)
// get a value in (0, 1) so that the terms they switch on are exercised too.
template <class Model>
std::vector<double> perturbed_params(std::mt19937_64& rng) {
  std::vector<double> p = default_params<Model>();
  for (double& x : p) x = x != 0.0 ? x * (1.0 + uniform(rng, -0.1, 0.1)) : uniform(rng, 0.0, 1.0);
  return p;
}

// The size of the random velocity perturbation. Andrews' mechanism runs at angular velocities ~1e3
// (IVP Test Set); at speeds ~1 its Coriolis terms (~1e-7) would drown in the motor torque
// (0.033) and no difference quotient could resolve their derivatives.
template <class Model>
struct typical_speed {
  static constexpr double value = 1.0;
};
template <>
struct typical_speed<models::andrews> {
  static constexpr double value = 100.0;
};

template <class Model>
struct model_state {
  std::vector<double> p;
  double t = 0.0;
  vec<double, Model::n> q, v;
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
  vec<double, Model::n> a;  // an acceleration-like vector for d(M a)/dq
};

// A random state near the model's default start: q0 + 0.1 U(-1, 1), v0 + V U(-1, 1) with V the
// model's typical speed, random t in
// [0, 1], multipliers and a in U(-1, 1), perturbed parameters. The states are not consistent; none of
// the derivative identities needs them to be.
template <class Model>
model_state<Model> random_state(std::mt19937_64& rng) {
  model_state<Model> s;
  s.p = perturbed_params<Model>(rng);
  const std::vector<double> p0 = default_params<Model>();
  const std::vector<double> in0 = default_inputs<Model>();
  vec<double, Model::n> q0, v0;
  Model::initial_state(p0.data(), in0.data(), q0, v0);
  s.t = uniform(rng, 0.0, 1.0);
  for (int i = 0; i < Model::n; ++i) {
    s.q[i] = q0[i] + uniform(rng, -0.1, 0.1);
    s.v[i] = v0[i] + typical_speed<Model>::value * uniform(rng, -1.0, 1.0);
    s.a[i] = uniform(rng, -1.0, 1.0);
  }
  for (int i = 0; i < Model::m; ++i) s.lambda[i] = uniform(rng, -1.0, 1.0);
  for (int i = 0; i < Model::k; ++i) s.nu[i] = uniform(rng, -1.0, 1.0);
  return s;
}

inline constexpr int n_random_states = 6;
inline constexpr unsigned long long rng_seed = 20240611ULL;

// ---- finite differences ----------------------------------------------------------------------------
//
// Central differences with one Richardson extrapolation step: D(h) = f' + c h^2 + O(h^4), so
// (4 D(h/2) - D(h)) / 3 = f' + O(h^4). This allows steps of 1e-3, where rounding noise
// (~eps |f| / h, or eps |f| / h^2 for second differences) stays far below the 1e-6 tolerance, while
// the truncation error (~h^4 f^(5)) does too, even for car_axis's road with w = 10.

inline constexpr double fd_step = 1e-3;

// Steps scale with the variable they perturb: fd_step relative to max(1, |x|) for q and v, and along
// the motion (t + s, q + s v) small enough that |s v| <= fd_step (slider_crank turns at 150 rad/s).
template <int N>
double step_for(const vec<double, N>& x) {
  return fd_step * std::max(1.0, norm_inf(x));
}
template <int N>
double motion_step(const vec<double, N>& v) {
  return fd_step / std::max(1.0, norm_inf(v));
}

// d/ds f(s) at s = 0; f maps a double to a vec.
template <class F>
auto first_difference(const F& f, double h) {
  const auto d = [&](double hh) { return (0.5 / hh) * (f(hh) - f(-hh)); };
  return (1.0 / 3.0) * (4.0 * d(0.5 * h) - d(h));
}

// d^2/ds^2 f(s) at s = 0 by the three-point second difference, extrapolated the same way.
template <class F>
auto second_difference(const F& f, double h) {
  const auto f0 = f(0.0);
  const auto d = [&](double hh) { return (1.0 / (hh * hh)) * (f(hh) - 2.0 * f0 + f(-hh)); };
  return (1.0 / 3.0) * (4.0 * d(0.5 * h) - d(h));
}

// The Jacobian of f : vec<double, N> -> vec<double, R> at x, column by column, step step_for(x).
template <int R, int N, class F>
mat<double, R, N> difference_jacobian(const F& f, const vec<double, N>& x) {
  const double h = step_for(x);
  mat<double, R, N> J;
  for (int j = 0; j < N; ++j) {
    const vec<double, R> column = first_difference(
        [&](double s) {
          vec<double, N> xs = x;
          xs[j] = xs[j] + s;
          return f(xs);
        },
        h);
    for (int i = 0; i < R; ++i) J(i, j) = column[i];
  }
  return J;
}

// ---- comparison ------------------------------------------------------------------------------------
//
// The rule (row-wise relative error in the max norm): AD and FD agree when, for every row i,
//     max_j |ad_ij - fd_ij| <= rel * S_i,
// with S_i = max_j |ad_ij|, the scale of the row. A structurally zero row falls back to the scale of
// the whole quantity, and an identically zero quantity to 1: there the finite difference is pure
// rounding noise. Rows, not the whole matrix, so that the small entries of a badly scaled model
// (andrews: Coriolis terms ~1e-7 next to a spring force ~1) are checked at their own scale.

template <int R, int C>
::testing::AssertionResult rows_agree(const mat<double, R, C>& ad, const mat<double, R, C>& fd, double rel) {
  double whole = 0.0;
  for (int i = 0; i < R * C; ++i) whole = std::max(whole, std::abs(ad.a[i]));
  if (whole == 0.0) whole = 1.0;
  double worst = 0.0;
  for (int i = 0; i < R; ++i) {
    double scale = 0.0, err = 0.0;
    for (int j = 0; j < C; ++j) {
      scale = std::max(scale, std::abs(ad(i, j)));
      err = std::max(err, std::abs(ad(i, j) - fd(i, j)));
    }
    if (scale == 0.0) scale = whole;
    worst = std::max(worst, err / scale);
    if (!(err <= rel * scale)) {
      std::ostringstream os;
      os.precision(17);
      os << "row " << i << ": max |ad - fd| = " << err << " > " << rel << " * " << scale << "\n  ad:";
      for (int j = 0; j < C; ++j) os << ' ' << ad(i, j);
      os << "\n  fd:";
      for (int j = 0; j < C; ++j) os << ' ' << fd(i, j);
      return ::testing::AssertionFailure() << os.str();
    }
  }
  return ::testing::AssertionSuccess() << "worst relative error " << worst;
}

// A vector is compared as a column: each component is a row of its own.
template <int R>
::testing::AssertionResult rows_agree(const vec<double, R>& ad, const vec<double, R>& fd, double rel) {
  mat<double, R, 1> a, f;
  for (int i = 0; i < R; ++i) {
    a(i, 0) = ad[i];
    f(i, 0) = fd[i];
  }
  return rows_agree(a, f, rel);
}

inline constexpr double fd_tolerance = 1e-6;

}  // namespace lockstep::test
