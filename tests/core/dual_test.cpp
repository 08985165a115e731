// Tests of lockstep/core/dual.hpp: forward-mode derivatives against analytic ones.
//
// Polynomials and rational functions are evaluated at dyadic points (1.5, 2, 0.5, ...), where every
// intermediate value is a short dyadic rational and IEEE arithmetic is exact: their first and second
// derivatives must be EXACT (EXPECT_EQ). Elementary functions are compared with their analytic
// derivatives to kRel = 1e-15 relative: the dual rule and the analytic formula differ by at most a
// couple of roundings (e.g. tan' = 1 + tan^2 against 1 / cos^2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include "lockstep/core/dual.hpp"
#include "lockstep/core/hessian.hpp"

namespace {

namespace ls = lockstep;
using d1 = ls::dual<double, 1>;
using d2 = ls::dual<double, 2>;
using d3 = ls::dual<double, 3>;
using dd11 = ls::dual<d1, 1>;  // second derivatives along one direction
using dd23 = ls::dual<d2, 3>;  // a 3 x 2 block of a Hessian

constexpr double kRel = 1e-15;  // first derivatives of elementary functions
constexpr double kRel2 = 1e-14;  // second derivatives: one more level of rounding in the chain rule

void expect_relative(double got, double want, double tol = kRel) {
  EXPECT_LE(std::abs(got - want), tol * std::abs(want)) << "got " << got << ", want " << want;
}

// x seeded for second derivatives along one direction: value x, both first-derivative slots 1.
dd11 second_order_variable(double x) {
  dd11 r;
  r.v = d1::variable(x, 0);
  r.d[0] = d1(1.0);
  return r;
}

// The k-th of three variables for a Hessian block: outer directions 0..2 (all three variables), inner
// directions 0..1 (the first two). r.d[i].d[j] is then d^2 f / dx_i dx_j.
dd23 hessian_variable(double x, int k) {
  dd23 r;
  r.v = d2(x);
  if (k < 2) r.v.d[k] = 1.0;
  r.d[k] = d2(1.0);
  return r;
}

// 3 x^3 - 2 x^2 + x / 4 - 5, written as a model would write it, for any scalar.
template <class T>
T cubic(const T& x) {
  return 3.0 * x * x * x - 2 * x * x + x / 4 - 5.0;
}

// x^2 y - 3 y z^3 + x z / 4 + 2
template <class T>
T trivariate(const T& x, const T& y, const T& z) {
  return x * x * y - 3 * y * z * z * z + x * z / 4.0 + 2;
}

}  // namespace

// =====================================================================================================
// Exact second derivatives through nested duals
// =====================================================================================================

TEST(NestedDual, GivesExactSecondDerivativesOfACubic) {
  // Arrange: p(x) = 3x^3 - 2x^2 + x/4 - 5 at x = 1.5: p = 1, p' = 9x^2 - 4x + 1/4 = 14.5,
  // p'' = 18x - 4 = 23.
  const dd11 x = second_order_variable(1.5);

  // Act
  const dd11 p = cubic(x);

  // Assert: value, both copies of the first derivative, and the second derivative, all exact.
  EXPECT_EQ(p.v.v, 1.0);
  EXPECT_EQ(p.v.d[0], 14.5);
  EXPECT_EQ(p.d[0].v, 14.5);
  EXPECT_EQ(p.d[0].d[0], 23.0);
}

TEST(NestedDual, GivesExactSecondDerivativesOfARationalFunction) {
  // q(x) = (x^2 + 1) / x at x = 2: q = 5/2, q' = 1 - 1/x^2 = 3/4, q'' = 2/x^3 = 1/4.
  const dd11 x = second_order_variable(2.0);
  const dd11 q = (x * x + 1) / x;
  EXPECT_EQ(q.v.v, 2.5);
  EXPECT_EQ(q.v.d[0], 0.75);
  EXPECT_EQ(q.d[0].v, 0.75);
  EXPECT_EQ(q.d[0].d[0], 0.25);

  // 1 / x^2 through the scalar-over-dual overload: -2/x^3 = -1/4, 6/x^4 = 3/8.
  const dd11 r = 1.0 / (x * x);
  EXPECT_EQ(r.v.v, 0.25);
  EXPECT_EQ(r.d[0].v, -0.25);
  EXPECT_EQ(r.d[0].d[0], 0.375);
}

TEST(NestedDual, GivesAnExactHessianBlockOfAPolynomialInThreeVariables) {
  // Arrange: f = x^2 y - 3 y z^3 + x z / 4 + 2 at (1.5, -2, 0.5).
  const double x0 = 1.5, y0 = -2.0, z0 = 0.5;
  const dd23 x = hessian_variable(x0, 0);
  const dd23 y = hessian_variable(y0, 1);
  const dd23 z = hessian_variable(z0, 2);

  // Act
  const dd23 f = trivariate(x, y, z);

  // Assert: every quantity is a short dyadic rational, so the expectations are exact too.
  const double grad[3] = {2 * x0 * y0 + z0 / 4, x0 * x0 - 3 * z0 * z0 * z0, -9 * y0 * z0 * z0 + x0 / 4};
  const double hess[3][2] = {{2 * y0, 2 * x0},        //
                             {2 * x0, 0.0},           //
                             {0.25, -9 * z0 * z0}};   // d^2/dz dx, d^2/dz dy
  EXPECT_EQ(f.v.v, trivariate(x0, y0, z0));
  for (int j = 0; j < 2; ++j) EXPECT_EQ(f.v.d[j], grad[j]) << "inner direction " << j;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f.d[i].v, grad[i]) << "outer direction " << i;
    for (int j = 0; j < 2; ++j) EXPECT_EQ(f.d[i].d[j], hess[i][j]) << "(" << i << ", " << j << ")";
  }
}

TEST(NestedDual, AcceptsIntAndDoubleLiteralsOnEitherSide) {
  // g(x) = 2x + 3x - 1 + 5/(2x) - x/4 + 1 - x at x = 2: g = 8.75, g' = 3.75 - 5/(2x^2) = 3.125,
  // g'' = 5/x^3 = 0.625. Every literal form must compile for nested duals and give exact results.
  const dd11 x = second_order_variable(2.0);
  const dd11 g = 2 * x + x * 3 - 1 + 2.5 / x - x / 4 + 1.0 - x;
  EXPECT_EQ(g.v.v, 8.75);
  EXPECT_EQ(g.d[0].v, 3.125);
  EXPECT_EQ(g.d[0].d[0], 0.625);

  // Compound assignment with literals, and the other literal types models might use.
  dd11 h = x;
  h += 1;
  h *= 2.0;
  h -= 0.5f;
  h /= 4;
  h = h + 1u - 2L;  // (2 (x + 1) - 1/2) / 4 + 1 - 2 at x = 2: 0.375, slope 1/2
  EXPECT_EQ(h.v.v, 0.375);
  EXPECT_EQ(h.d[0].v, 0.5);
  EXPECT_EQ(h.d[0].d[0], 0.0);

  // The same for the 3 x 2 nesting, and mixing with the inner type.
  const dd23 y = hessian_variable(0.5, 1);
  const dd23 k = 1 - 4 * y * y + y / 2 + d2(3.0) * y - 0.25;
  EXPECT_EQ(k.v.v, 1.0 - 1.0 + 0.25 + 1.5 - 0.25);
  EXPECT_EQ(k.d[1].v, -8 * 0.5 + 0.5 + 3.0);
  EXPECT_EQ(k.d[1].d[1], -8.0);
  EXPECT_EQ(k.d[0].d[1], 0.0);

  // A constant built from a literal is a constant at every level.
  const dd11 c = 3;
  EXPECT_EQ(c.v.v, 3.0);
  EXPECT_EQ(c.v.d[0], 0.0);
  EXPECT_EQ(c.d[0].v, 0.0);
}

TEST(NestedDual, GivesSecondDerivativesOfElementaryFunctions) {
  const double x0 = 0.375;
  const dd11 x = second_order_variable(x0);
  const double s = std::sqrt(x0), t = std::tan(x0), w = 1 - x0 * x0;

  struct expectation {
    const char* name;
    dd11 got;
    double first, second;
  };
  const expectation cases[] = {
      {"sqrt", sqrt(x), 0.5 / s, -0.25 / (s * x0)},
      {"sin", sin(x), std::cos(x0), -std::sin(x0)},
      {"cos", cos(x), -std::sin(x0), -std::cos(x0)},
      {"tan", tan(x), 1 + t * t, 2 * t * (1 + t * t)},
      {"exp", exp(x), std::exp(x0), std::exp(x0)},
      {"log", log(x), 1 / x0, -1 / (x0 * x0)},
      {"asin", asin(x), 1 / std::sqrt(w), x0 / (w * std::sqrt(w))},
      {"acos", acos(x), -1 / std::sqrt(w), -x0 / (w * std::sqrt(w))},
      {"atan", atan(x), 1 / (1 + x0 * x0), -2 * x0 / ((1 + x0 * x0) * (1 + x0 * x0))},
      {"pow(x, 2.5)", pow(x, 2.5), 2.5 * std::pow(x0, 1.5), 3.75 * std::sqrt(x0)},
      {"pow(x, x)", pow(x, x), std::pow(x0, x0) * (std::log(x0) + 1),
       std::pow(x0, x0) * ((std::log(x0) + 1) * (std::log(x0) + 1) + 1 / x0)},
      {"pow(3, x)", pow(3.0, x), std::pow(3.0, x0) * std::log(3.0),
       std::pow(3.0, x0) * std::log(3.0) * std::log(3.0)},
      {"atan2(x, 1 - x)", atan2(x, 1 - x), 1 / (x0 * x0 + (1 - x0) * (1 - x0)),
       -(4 * x0 - 2) / ((x0 * x0 + (1 - x0) * (1 - x0)) * (x0 * x0 + (1 - x0) * (1 - x0)))},
  };
  for (const expectation& c : cases) {
    SCOPED_TRACE(c.name);
    expect_relative(c.got.v.d[0], c.first);
    expect_relative(c.got.d[0].v, c.first);
    expect_relative(c.got.d[0].d[0], c.second, kRel2);
  }
}

// =====================================================================================================
// First derivatives of elementary functions
// =====================================================================================================

TEST(Dual, DifferentiatesElementaryFunctionsAsTheirAnalyticDerivatives) {
  for (const double x0 : {0.125, 0.3, 0.7, 0.99}) {
    SCOPED_TRACE(x0);
    const d1 x = d1::variable(x0, 0);
    const double w = 1 - x0 * x0;

    // Values are the plain functions' values, bit for bit: lockstep's on doubles (core/math.hpp), which
    // are not the C library's (core/elementary.hpp); the derivatives below are checked against the C library.
    EXPECT_EQ(sqrt(x).v, std::sqrt(x0));
    EXPECT_EQ(sin(x).v, lockstep::sin(x0));
    EXPECT_EQ(exp(x).v, lockstep::exp(x0));
    EXPECT_EQ(log(x).v, lockstep::log(x0));

    expect_relative(sqrt(x).d[0], 1 / (2 * std::sqrt(x0)));
    expect_relative(sin(x).d[0], std::cos(x0));
    expect_relative(cos(x).d[0], -std::sin(x0));
    expect_relative(tan(x).d[0], 1 / (std::cos(x0) * std::cos(x0)), 2 * kRel);
    expect_relative(exp(x).d[0], std::exp(x0));
    expect_relative(log(x).d[0], 1 / x0);
    expect_relative(asin(x).d[0], 1 / std::sqrt(w));
    expect_relative(acos(x).d[0], -1 / std::sqrt(w));
    expect_relative(atan(x).d[0], 1 / (1 + x0 * x0));
  }
  // Negative and larger arguments where the functions allow them.
  for (const double x0 : {-2.5, -0.4, 1.3, 7.0}) {
    SCOPED_TRACE(x0);
    const d1 x = d1::variable(x0, 0);
    expect_relative(sin(x).d[0], std::cos(x0));
    expect_relative(cos(x).d[0], -std::sin(x0));
    expect_relative(exp(x).d[0], std::exp(x0));
    expect_relative(atan(x).d[0], 1 / (1 + x0 * x0));
  }
}

TEST(Dual, DifferentiatesPowInAllThreeForms) {
  // dual ^ double: d(x^p) = p x^(p-1) dx.
  for (const double p : {2.0, 0.5, -1.5, 3.25}) {
    const d1 x = d1::variable(1.7, 0);
    const d1 r = pow(x, p);
    EXPECT_EQ(r.v, lockstep::pow(1.7, p));
    expect_relative(r.d[0], p * std::pow(1.7, p - 1));
  }
  // An integer exponent converts to double, and the derivative at 0 is finite for p >= 1.
  const d1 zero = d1::variable(0.0, 0);
  EXPECT_EQ(pow(zero, 2).d[0], 0.0);
  EXPECT_EQ(pow(zero, 1.0).d[0], 1.0);

  // dual ^ dual, two directions: d(x^y) = y x^(y-1) dx + x^y log(x) dy.
  const double x0 = 1.7, y0 = -0.6;
  const d2 x = d2::variable(x0, 0);
  const d2 y = d2::variable(y0, 1);
  const d2 r = pow(x, y);
  EXPECT_EQ(r.v, lockstep::pow(x0, y0));
  expect_relative(r.d[0], y0 * std::pow(x0, y0 - 1), 2 * kRel);
  expect_relative(r.d[1], std::pow(x0, y0) * std::log(x0));

  // double ^ dual: d(a^y) = a^y log(a) dy.
  const d1 e = d1::variable(y0, 0);
  const d1 s = pow(2.5, e);
  EXPECT_EQ(s.v, lockstep::pow(2.5, y0));
  expect_relative(s.d[0], std::pow(2.5, y0) * std::log(2.5));
}

TEST(Dual, DifferentiatesAtan2InAllOverloadsAndQuadrants) {
  for (const double y0 : {0.75, -1.25})
    for (const double x0 : {2.0, -0.5}) {
      SCOPED_TRACE(testing::Message() << "y = " << y0 << ", x = " << x0);
      const double r2 = x0 * x0 + y0 * y0;
      const d2 y = d2::variable(y0, 0);
      const d2 x = d2::variable(x0, 1);

      // dual, dual: d = (x dy - y dx) / (x^2 + y^2).
      const d2 both = atan2(y, x);
      EXPECT_EQ(both.v, lockstep::atan2(y0, x0));
      expect_relative(both.d[0], x0 / r2);
      expect_relative(both.d[1], -y0 / r2);

      // dual, double and double, dual.
      const d2 over_constant = atan2(y, x0);
      EXPECT_EQ(over_constant.v, lockstep::atan2(y0, x0));
      expect_relative(over_constant.d[0], x0 / r2);
      EXPECT_EQ(over_constant.d[1], 0.0);
      const d2 constant_over = atan2(y0, x);
      EXPECT_EQ(constant_over.v, lockstep::atan2(y0, x0));
      EXPECT_EQ(constant_over.d[0], 0.0);
      expect_relative(constant_over.d[1], -y0 / r2);
    }
}

TEST(Dual, TakesAbsMinAndMaxDerivativesFromTheSelectedBranch) {
  const d1 negative = d1::variable(-1.5, 0);
  EXPECT_EQ(abs(negative).v, 1.5);
  EXPECT_EQ(abs(negative).d[0], -1.0);
  const d1 positive = d1::variable(2.0, 0);
  EXPECT_EQ(abs(positive).v, 2.0);
  EXPECT_EQ(abs(positive).d[0], 1.0);

  // a = x (slope 1 along direction 0), b = 3y (slope 3 along direction 1).
  const d2 a = d2::variable(1.0, 0);
  const d2 b = 3.0 * d2::variable(2.0, 1);
  EXPECT_EQ(min(a, b).v, 1.0);
  EXPECT_EQ(min(a, b).d[0], 1.0);
  EXPECT_EQ(min(a, b).d[1], 0.0);
  EXPECT_EQ(max(a, b).v, 6.0);
  EXPECT_EQ(max(a, b).d[0], 0.0);
  EXPECT_EQ(max(a, b).d[1], 3.0);
  // At a tie both return their first argument, as the primal `b < a ? b : a` would.
  const d2 c = 1.0 + 0.0 * d2::variable(0.0, 1);
  EXPECT_EQ(min(a, c).d[0], 1.0);
  EXPECT_EQ(max(a, c).d[0], 1.0);

  // Nested: abs of a negative value flips first and second derivatives.
  const dd11 x = second_order_variable(-0.5);
  const dd11 q = abs(x * x * x);  // -x^3 near x = -0.5: slope -3x^2 = -0.75, curvature -6x = 3
  EXPECT_EQ(q.v.v, 0.125);
  EXPECT_EQ(q.d[0].v, -0.75);
  EXPECT_EQ(q.d[0].d[0], 3.0);
}

// =====================================================================================================
// Several directions at once
// =====================================================================================================

TEST(Dual, CarriesSeveralDirectionsIndependently) {
  // Arrange: f = sin(x y) + exp(z) x - sqrt(x^2 + y^2 + z^2) / z at (0.7, -1.1, 0.4).
  const double x0 = 0.7, y0 = -1.1, z0 = 0.4;
  auto f = [](const auto& x, const auto& y, const auto& z) {
    return sin(x * y) + exp(z) * x - sqrt(x * x + y * y + z * z) / z;
  };

  // Act: one evaluation with three directions, and three with one direction each.
  const d3 all = f(d3::variable(x0, 0), d3::variable(y0, 1), d3::variable(z0, 2));
  const d1 along_x = f(d1::variable(x0, 0), d1(y0), d1(z0));
  const d1 along_y = f(d1(x0), d1::variable(y0, 0), d1(z0));
  const d1 along_z = f(d1(x0), d1(y0), d1::variable(z0, 0));

  // Assert: directions never mix, so the three-direction gradient is the single-direction one bit
  // for bit; and it matches the analytic gradient.
  EXPECT_EQ(all.d[0], along_x.d[0]);
  EXPECT_EQ(all.d[1], along_y.d[0]);
  EXPECT_EQ(all.d[2], along_z.d[0]);
  const double r = std::sqrt(x0 * x0 + y0 * y0 + z0 * z0);
  expect_relative(all.d[0], y0 * std::cos(x0 * y0) + std::exp(z0) - x0 / (r * z0), kRel2);
  expect_relative(all.d[1], x0 * std::cos(x0 * y0) - y0 / (r * z0), kRel2);
  expect_relative(all.d[2], std::exp(z0) * x0 - z0 / (r * z0) + r / (z0 * z0), kRel2);
}

// =====================================================================================================
// Comparisons, finiteness, values
// =====================================================================================================

TEST(Dual, ComparesValuesOnlyIgnoringDerivativeParts) {
  const d2 a = d2::variable(1.0, 0);  // value 1, slope (1, 0)
  const d2 b = d2(1.0);               // value 1, slope (0, 0)
  EXPECT_FALSE(a < b);
  EXPECT_FALSE(a > b);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(a >= b);
  const d2 c = d2::variable(-3.0, 1);
  EXPECT_TRUE(c < a);
  EXPECT_TRUE(a > c);

  // Against literals on either side, and nested against plain and inner types.
  EXPECT_TRUE(a < 2);
  EXPECT_TRUE(2.5 > a);
  EXPECT_TRUE(a >= 1.0);
  EXPECT_TRUE(0 <= a);
  const dd11 x = second_order_variable(1.5);
  EXPECT_TRUE(x < 2);
  EXPECT_TRUE(x > 1.25);
  EXPECT_TRUE(x <= d1(1.5));
  EXPECT_TRUE(d1(1.0) < x);
  EXPECT_EQ(ls::value_of(x), 1.5);
  EXPECT_EQ(ls::value_of(hessian_variable(-2.0, 2)), -2.0);
}

TEST(Dual, IsFiniteDetectsNanAndInfinityInAnyPart) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();

  d2 a = d2::variable(1.0, 0);
  EXPECT_TRUE(ls::is_finite(a));
  a.d[1] = nan;
  EXPECT_FALSE(ls::is_finite(a));
  a.d[1] = 0.0;
  a.v = inf;
  EXPECT_FALSE(ls::is_finite(a));

  // sqrt at 0: finite value, infinite slope.
  const d1 s = sqrt(d1::variable(0.0, 0));
  EXPECT_EQ(s.v, 0.0);
  EXPECT_FALSE(ls::is_finite(s));

  // Nested: a NaN deep in the second-derivative part.
  dd11 x = second_order_variable(0.5);
  EXPECT_TRUE(ls::is_finite(x));
  x.d[0].d[0] = nan;
  EXPECT_FALSE(ls::is_finite(x));
  dd23 y = hessian_variable(0.5, 0);
  EXPECT_TRUE(ls::is_finite(y));
  y.v.d[1] = -inf;
  EXPECT_FALSE(ls::is_finite(y));
}

TEST(Dual, SeedsAVariableWithAUnitSlopeInOneDirection) {
  const d3 x = d3::variable(4.5, 1);
  EXPECT_EQ(x.v, 4.5);
  EXPECT_EQ(x.d[0], 0.0);
  EXPECT_EQ(x.d[1], 1.0);
  EXPECT_EQ(x.d[2], 0.0);
  const d3 zero{};
  EXPECT_EQ(zero.v, 0.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(zero.d[i], 0.0);
  // Default-initialized too (`dual r;`), in storage that held other bits: the operations' own
  // constructor leaves parts unset, the default one must not.
  alignas(dd23) unsigned char storage[sizeof(dd23)];
  std::memset(storage, 0xff, sizeof storage);
  const dd23* defaulted = new (storage) dd23;
  EXPECT_EQ(defaulted->v.v, 0.0);
  for (int j = 0; j < 2; ++j) EXPECT_EQ(defaulted->v.d[j], 0.0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(defaulted->d[i].v, 0.0);
    for (int j = 0; j < 2; ++j) EXPECT_EQ(defaulted->d[i].d[j], 0.0);
  }
  static_assert(ls::is_dual_v<dd23> && !ls::is_dual_v<double>);
  static_assert(dd23::directions == 3 && d2::directions == 2);
  static_assert(std::is_trivially_copyable_v<dd23>, "duals are plain data in member state");
}

// sin_cos (core/math.hpp) promises bitwise the values and derivative parts of sin and cos called
// separately, for every scalar type the models are evaluated on: plain, dual, nested dual and the
// symmetric second-order type (core/hessian.hpp). Compared by bit pattern at arguments whose every
// derivative part is nonzero.
namespace sin_cos_bits {

template <class S>
bool same_bits(const S& a, const S& b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0;
}

template <class S>
void expect_sin_cos_bitwise(const S& x) {
  const auto [s, c] = ls::sin_cos(x);
  EXPECT_TRUE(same_bits(s, S(sin(x))));
  EXPECT_TRUE(same_bits(c, S(cos(x))));
}

}  // namespace sin_cos_bits

TEST(SinCos, IsBitwiseSinAndCosOnEveryScalarTheModelsSee) {
  using namespace sin_cos_bits;
  using ls::cos;
  using ls::sin;
  for (const double v : {-2.7, -0.3, 0.0, 0.9, 1.5707963267948966, 4.1}) {
    expect_sin_cos_bitwise(v);
    d3 a(v);
    a.d[0] = 0.7;
    a.d[1] = -1.3;
    a.d[2] = 2.1;
    expect_sin_cos_bitwise(a);
    dd23 b;
    b.v = d2(v);
    b.v.d[0] = 0.4;
    b.v.d[1] = -0.9;
    for (int i = 0; i < 3; ++i) {
      b.d[i] = d2(0.3 * (i + 1));
      b.d[i].d[0] = -0.2 * (i + 2);
      b.d[i].d[1] = 0.15 * (i + 1);
    }
    expect_sin_cos_bitwise(b);
    ls::hessian_dual<double, 3> h(v);
    for (int i = 0; i < 3; ++i) h.g[i] = 0.5 - 0.4 * i;
    for (int i = 0; i < ls::hessian_dual<double, 3>::packed; ++i) h.h[i] = 0.25 * (i + 1) - 0.6;
    expect_sin_cos_bitwise(h);
  }
}
