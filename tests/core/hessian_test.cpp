// Tests of lockstep/core/hessian.hpp: the second-order forward type that forms one half of a Hessian.
//
// Three independent references:
//   - hand-derived Hessians of polynomials at dyadic points, where IEEE arithmetic is exact: the
//     second derivatives must be EXACT (EXPECT_EQ);
//   - every unary function against its analytic f' and f'' written out here (std:: functions), on an
//     argument with arbitrary gradient and second-derivative parts, so both terms of
//     h_ij = f' a_ij + f'' a_i a_j are exercised: relative 1e-14;
//   - every binary operation and function against nested duals dual<dual<double, 3>, 3> (first-order
//     rules applied twice, core/dual.hpp), which form both halves of the same Hessian: relative 1e-14.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hessian.hpp"

namespace {

namespace ls = lockstep;
using h3 = ls::hessian_dual<double, 3>;
using d3 = ls::dual<double, 3>;
using dd33 = ls::dual<d3, 3>;

constexpr double kRel = 1e-14;

static_assert(std::is_trivially_copyable_v<h3>, "device code copies it as plain data");
static_assert(std::is_standard_layout_v<h3>);
static_assert(h3::packed == 6);
static_assert(sizeof(ls::hessian_dual<double, 8>) == (1 + 8 + 36) * sizeof(double),
              "one half: 45 parts for 8 directions, where dual<dual<double, 8>, 8> has 81");

void expect_relative(double got, double want, double tol = kRel, const std::string& what = "") {
  const double scale = std::max(std::abs(want), 1e-300);
  EXPECT_LE(std::abs(got - want), tol * scale) << what << ": got " << got << ", want " << want;
}

h3 variable(double x, int k) { return h3::variable(x, k); }

dd33 nested_variable(double x, int k) {
  dd33 r;
  r.v = d3(x);
  r.v.d[k] = 1.0;
  r.d[k] = d3(1.0);
  return r;
}

// hessian_dual and nested dual agree on value, gradient and both halves of the second derivatives.
void expect_same_derivatives(const h3& h, const dd33& d, const std::string& what) {
  expect_relative(h.v, d.v.v, kRel, what + " value");
  for (int i = 0; i < 3; ++i) {
    expect_relative(h.g[i], d.v.d[i], kRel, what + " gradient " + std::to_string(i));
    // The nested dual's two gradient copies agree; it is the Hessian that differs in layout.
    for (int j = 0; j < 3; ++j) {
      // Scale by the largest second derivative: a tiny off-diagonal entry next to large ones is
      // checked at the scale of the matrix, as round-off allows.
      double scale = 0.0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) scale = std::max(scale, std::abs(d.d[a].d[b]));
      EXPECT_LE(std::abs(h.second(i, j) - d.d[i].d[j]), kRel * std::max(scale, 1e-300))
          << what << " second (" << i << ", " << j << "): " << h.second(i, j) << " vs " << d.d[i].d[j];
    }
  }
}

TEST(HessianDual, PackedUpperTriangleIsRowMajorAndSecondIsSymmetric) {
  int k = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j, ++k) EXPECT_EQ(h3::packed_index(i, j), k);
  EXPECT_EQ(k, h3::packed);
  using h8 = ls::hessian_dual<double, 8>;
  k = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = i; j < 8; ++j, ++k) EXPECT_EQ(h8::packed_index(i, j), k);
  EXPECT_EQ(k, h8::packed);

  h3 a;
  for (int k2 = 0; k2 < h3::packed; ++k2) a.h[k2] = 10.0 + k2;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(&a.second(i, j), &a.second(j, i));
}

// f(x, y, z) = x^2 y - 3 y z^3 + x z / 4 + 2 at dyadic points: every part is exact.
template <class T>
T trivariate(const T& x, const T& y, const T& z) {
  return x * x * y - 3 * y * z * z * z + x * z / 4.0 + 2;
}

TEST(HessianDual, PolynomialHessianIsExactAtDyadicPoints) {
  const double x = 1.5, y = -0.5, z = 2.0;
  const h3 f = trivariate(variable(x, 0), variable(y, 1), variable(z, 2));
  EXPECT_EQ(f.v, trivariate(x, y, z));
  EXPECT_EQ(f.g[0], 2 * x * y + z / 4);
  EXPECT_EQ(f.g[1], x * x - 3 * z * z * z);
  EXPECT_EQ(f.g[2], -9 * y * z * z + x / 4);
  EXPECT_EQ(f.second(0, 0), 2 * y);
  EXPECT_EQ(f.second(0, 1), 2 * x);
  EXPECT_EQ(f.second(0, 2), 0.25);
  EXPECT_EQ(f.second(1, 1), 0.0);
  EXPECT_EQ(f.second(1, 2), -9 * z * z);
  EXPECT_EQ(f.second(2, 2), -18 * y * z);
}

// The pendulum's lambda . Phi = lambda (x^2 + y^2 - L^2) has the Hessian 2 lambda I.
TEST(HessianDual, PendulumConstraintHessianIsTwoLambdaTimesIdentity) {
  using h2 = ls::hessian_dual<double, 2>;
  const double lambda = -0.75, L = 1.25;
  const h2 x = h2::variable(0.3, 0), y = h2::variable(-0.9, 1);
  const h2 f = lambda * (x * x + y * y - L * L);
  EXPECT_EQ(f.second(0, 0), 2 * lambda);
  EXPECT_EQ(f.second(1, 1), 2 * lambda);
  EXPECT_EQ(f.second(0, 1), 0.0);
}

// An argument with arbitrary parts: value v, gradient (0.3, -1.2, 0.7), second derivatives nonzero
// everywhere, as an intermediate of a model evaluation would be.
h3 general_argument(double v) {
  h3 a(v);
  a.g[0] = 0.3;
  a.g[1] = -1.2;
  a.g[2] = 0.7;
  const double h[h3::packed] = {0.25, -0.5, 1.5, 2.0, -0.125, 0.8};
  for (int k = 0; k < h3::packed; ++k) a.h[k] = h[k];
  return a;
}

struct unary_case {
  const char* name;
  double at;
  std::function<h3(const h3&)> f;
  double (*f0)(double);
  double (*f1)(double);
  double (*f2)(double);
};

TEST(HessianDual, UnaryFunctionsMatchAnalyticSecondDerivatives) {
  const std::vector<unary_case> cases = {
      {"sqrt", 2.3, [](const h3& a) { return sqrt(a); }, [](double x) { return std::sqrt(x); },
       [](double x) { return 0.5 / std::sqrt(x); }, [](double x) { return -0.25 * std::pow(x, -1.5); }},
      {"sin", 0.7, [](const h3& a) { return sin(a); }, [](double x) { return std::sin(x); },
       [](double x) { return std::cos(x); }, [](double x) { return -std::sin(x); }},
      {"cos", -1.1, [](const h3& a) { return cos(a); }, [](double x) { return std::cos(x); },
       [](double x) { return -std::sin(x); }, [](double x) { return -std::cos(x); }},
      {"tan", 0.4, [](const h3& a) { return tan(a); }, [](double x) { return std::tan(x); },
       [](double x) { return 1.0 / (std::cos(x) * std::cos(x)); },
       [](double x) { return 2.0 * std::sin(x) / std::pow(std::cos(x), 3); }},
      {"asin", 0.35, [](const h3& a) { return asin(a); }, [](double x) { return std::asin(x); },
       [](double x) { return 1.0 / std::sqrt(1.0 - x * x); },
       [](double x) { return x / std::pow(1.0 - x * x, 1.5); }},
      {"acos", -0.6, [](const h3& a) { return acos(a); }, [](double x) { return std::acos(x); },
       [](double x) { return -1.0 / std::sqrt(1.0 - x * x); },
       [](double x) { return -x / std::pow(1.0 - x * x, 1.5); }},
      {"atan", 1.7, [](const h3& a) { return atan(a); }, [](double x) { return std::atan(x); },
       [](double x) { return 1.0 / (1.0 + x * x); }, [](double x) { return -2.0 * x / std::pow(1.0 + x * x, 2); }},
      {"exp", 0.9, [](const h3& a) { return exp(a); }, [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); }, [](double x) { return std::exp(x); }},
      {"log", 3.2, [](const h3& a) { return log(a); }, [](double x) { return std::log(x); },
       [](double x) { return 1.0 / x; }, [](double x) { return -1.0 / (x * x); }},
      {"abs of a negative", -2.5, [](const h3& a) { return abs(a); }, [](double x) { return std::abs(x); },
       [](double) { return -1.0; }, [](double) { return 0.0; }},
      {"abs of a positive", 2.5, [](const h3& a) { return abs(a); }, [](double x) { return std::abs(x); },
       [](double) { return 1.0; }, [](double) { return 0.0; }},
      {"pow 2.5", 1.3, [](const h3& a) { return pow(a, 2.5); }, [](double x) { return std::pow(x, 2.5); },
       [](double x) { return 2.5 * std::pow(x, 1.5); }, [](double x) { return 3.75 * std::sqrt(x); }},
      {"pow -1", 0.8, [](const h3& a) { return pow(a, -1.0); }, [](double x) { return 1.0 / x; },
       [](double x) { return -1.0 / (x * x); }, [](double x) { return 2.0 / (x * x * x); }},
      {"3^x", 0.6, [](const h3& a) { return pow(3.0, a); }, [](double x) { return std::pow(3.0, x); },
       [](double x) { return std::pow(3.0, x) * std::log(3.0); },
       [](double x) { return std::pow(3.0, x) * std::log(3.0) * std::log(3.0); }},
  };
  for (const auto& c : cases) {
    // A plain variable: the single second derivative is f''.
    const h3 r0 = c.f(variable(c.at, 1));
    expect_relative(r0.v, c.f0(c.at), kRel, std::string(c.name) + " value");
    expect_relative(r0.g[1], c.f1(c.at), kRel, std::string(c.name) + " f'");
    EXPECT_EQ(r0.g[0], 0.0);
    if (c.f2(c.at) != 0.0) expect_relative(r0.second(1, 1), c.f2(c.at), kRel, std::string(c.name) + " f''");
    else EXPECT_EQ(r0.second(1, 1), 0.0) << c.name;
    EXPECT_EQ(r0.second(0, 0), 0.0) << c.name;
    EXPECT_EQ(r0.second(0, 1), 0.0) << c.name;

    // A general argument: h_ij = f' a_ij + f'' a_i a_j, both terms present.
    const h3 a = general_argument(c.at);
    const h3 r = c.f(a);
    const double f1 = c.f1(c.at), f2 = c.f2(c.at);
    for (int i = 0; i < 3; ++i) {
      expect_relative(r.g[i], f1 * a.g[i], kRel, std::string(c.name) + " gradient");
      for (int j = 0; j < 3; ++j) {
        const double want = f1 * a.second(i, j) + f2 * a.g[i] * a.g[j];
        const double scale = std::abs(f1 * a.second(i, j)) + std::abs(f2 * a.g[i] * a.g[j]);
        EXPECT_LE(std::abs(r.second(i, j) - want), kRel * scale) << c.name << " (" << i << ", " << j << ")";
      }
    }
  }
}

// x^p at x = 0: the vanishing coefficients give exact zeros, not 0 * inf.
TEST(HessianDual, PowerAtZeroStaysFinite) {
  const h3 x = variable(0.0, 0);
  const h3 p1 = pow(x, 1.0), p2 = pow(x, 2.0), p0 = pow(x, 0.0);
  EXPECT_TRUE(is_finite(p1));
  EXPECT_TRUE(is_finite(p2));
  EXPECT_TRUE(is_finite(p0));
  EXPECT_EQ(p1.g[0], 1.0);
  EXPECT_EQ(p1.second(0, 0), 0.0);
  EXPECT_EQ(p2.g[0], 0.0);
  EXPECT_EQ(p2.second(0, 0), 2.0);
  EXPECT_EQ(p0.v, 1.0);
  EXPECT_EQ(p0.g[0], 0.0);
  EXPECT_EQ(p0.second(0, 0), 0.0);
}

// Every binary rule against nested duals, on functions of three variables that mix the operations as
// models do (with itself, with double, with the value type, compound assignment, unary minus).
template <class S>
S binary_mix(const S& x, const S& y, const S& z) {
  S r = x * y / z - (y - 2.0) / (x + z) + 0.5 / y - z * 3.0 + (1.5 - x) * (y + 0.25);
  r += x / 4.0;
  r -= 2.0 - y;
  r *= z - 1.0;
  r /= x + 3.0;
  return -r + pow(x, y) + pow(2.0, z * x) + pow(y * y, 1.5) + atan2(y, x * z) + atan2(y, 2.0) + atan2(-1.0, z) +
         min(x, y) * max(y, z) + abs(y - x) + sqrt(x * z) * log(z + y * y) - exp(-x * y) + sin(x * y) * cos(z - x) +
         tan(0.3 * z) + asin(0.2 * x * y) + acos(0.1 * z) + atan(x - y * z);
}

TEST(HessianDual, BinaryRulesMatchNestedDuals) {
  const double points[][3] = {{1.3, 0.7, 2.1}, {0.45, 1.9, 1.2}, {2.6, -0.8, 0.9}, {0.9, 0.9, 3.3}};
  for (const auto& pt : points) {
    const h3 h = binary_mix(variable(pt[0], 0), variable(pt[1], 1), variable(pt[2], 2));
    const dd33 d = binary_mix(nested_variable(pt[0], 0), nested_variable(pt[1], 1), nested_variable(pt[2], 2));
    expect_same_derivatives(h, d, "binary_mix at (" + std::to_string(pt[0]) + ", " + std::to_string(pt[1]) + ")");
    EXPECT_NE(h.second(0, 1), 0.0);
  }
}

TEST(HessianDual, ComparisonsAndValueFollowTheValue) {
  h3 a = variable(1.0, 0), b = variable(2.0, 1);
  a.h[3] = 100.0;  // derivative parts never take part in a comparison
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(a <= 1.0);
  EXPECT_TRUE(2.0 >= b);
  EXPECT_FALSE(a > 1.5);
  EXPECT_EQ(ls::value_of(b), 2.0);
  EXPECT_EQ(ls::value_of(ls::hessian_dual<ls::dual<double, 2>, 2>(ls::dual<double, 2>(3.5))), 3.5);
}

TEST(HessianDual, IsFiniteChecksEveryPart) {
  h3 a = variable(1.0, 0);
  EXPECT_TRUE(is_finite(a));
  a.h[4] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(is_finite(a));
  a.h[4] = 0.0;
  a.g[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(is_finite(a));
  const h3 s = sqrt(variable(0.0, 0));  // 1 / (2 sqrt 0)
  EXPECT_FALSE(is_finite(s));
}

}  // namespace
