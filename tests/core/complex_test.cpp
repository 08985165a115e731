// Tests of lockstep/core/complex.hpp: arithmetic against std::complex, and Smith's division on operands
// where the textbook formula (a conj(b)) / |b|^2 overflows or underflows.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <type_traits>

#include "lockstep/core/complex.hpp"

namespace {

namespace ls = lockstep;
using cplx = ls::complex<double>;

constexpr double kEps = std::numeric_limits<double>::epsilon();

std::complex<double> to_std(const cplx& z) { return {z.re, z.im}; }

// The textbook quotient, kept here only to show that the operands below defeat it.
cplx naive_divide(const cplx& a, const cplx& b) {
  const double den = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / den, (a.im * b.re - a.re * b.im) / den};
}

// |got - want| <= tol * |want| in the modulus: Smith's quotient is accurate normwise, not necessarily
// in a component much smaller than the other.
void expect_close(const cplx& got, std::complex<double> want, double tol) {
  EXPECT_LE(std::abs(to_std(got) - want), tol * std::abs(want))
      << "got (" << got.re << ", " << got.im << "), want " << want;
}

}  // namespace

TEST(ComplexDivision, DividesHugeOperandsWhoseSquaredModulusOverflows) {
  // Arrange: |b|^2 = 8e600 is not representable.
  const cplx a(1e300, 1e300);
  const cplx b(2e300, 2e300);

  // Act
  const cplx q = a / b;

  // Assert: (1 + i) / (2 + 2i) = 1/2, exactly (r = 1, den = 4e300, (1e300 + 1e300) / 4e300).
  EXPECT_EQ(q.re, 0.5);
  EXPECT_EQ(q.im, 0.0);
  const cplx naive = naive_divide(a, b);
  EXPECT_FALSE(ls::is_finite(naive) && naive.re == 0.5) << "the textbook formula should break down here";
}

TEST(ComplexDivision, DividesByAHugePurelyImaginaryNumber) {
  // (3 + 4i) e305 / (1e305 i) = 4 - 3i; the second branch of Smith's algorithm (|im| > |re|).
  const cplx q = cplx(3e305, 4e305) / cplx(0.0, 1e305);
  EXPECT_EQ(q.re, 4.0);
  EXPECT_EQ(q.im, -3.0);
  EXPECT_FALSE(ls::is_finite(naive_divide(cplx(3e305, 4e305), cplx(0.0, 1e305))));
}

TEST(ComplexDivision, DividesTinyOperandsWhoseSquaredModulusUnderflows) {
  // Arrange: |b|^2 = 2e-600 flushes to zero.
  const cplx a(1e-300, 3e-300);
  const cplx b(1e-300, 1e-300);

  // Act
  const cplx q = a / b;

  // Assert: (1 + 3i) / (1 + i) = 2 + i, to rounding of the decimal operands.
  expect_close(q, {2.0, 1.0}, 4 * kEps);
  EXPECT_FALSE(ls::is_finite(naive_divide(a, b))) << "the textbook formula should divide by zero here";

  // Subnormal divisor, normal quotient.
  const cplx s = cplx(3e-310, -6e-310) / cplx(0.0, 3e-310);  // (1 - 2i) / i = -2 - i
  expect_close(s, {-2.0, -1.0}, 4 * kEps);
}

TEST(ComplexDivision, HandlesOperandsOfWildlyDifferentScales) {
  // b = 1e300 + 1e-300 i: the ratio im/re underflows to 0 and the quotient stays accurate.
  const cplx q = cplx(1e300, 0.0) / cplx(1e300, 1e-300);
  EXPECT_EQ(q.re, 1.0);
  EXPECT_EQ(q.im, 0.0);

  // Quotient of a huge by a tiny number that is still representable: 1e150 / 1e-150 (1 + i).
  const cplx r = cplx(1e150, 0.0) / cplx(1e-150, 1e-150);
  expect_close(r, std::complex<double>(1e150, 0.0) / std::complex<double>(1e-150, 1e-150), 4 * kEps);
  expect_close(r, {0.5e300, -0.5e300}, 4 * kEps);
}

TEST(ComplexDivision, AgreesWithStdComplexOnRandomOperandsOfManyScales) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-500, 500);  // |b|^2 overflows or underflows often
  for (int trial = 0; trial < 2000; ++trial) {
    const cplx a(std::ldexp(mantissa(rng), exponent(rng)), std::ldexp(mantissa(rng), exponent(rng)));
    const cplx b(std::ldexp(mantissa(rng), exponent(rng)), std::ldexp(mantissa(rng), exponent(rng)));
    const std::complex<double> want = to_std(a) / to_std(b);
    if (!std::isfinite(want.real()) || !std::isfinite(want.imag()) || std::abs(want) < 1e-290 ||
        std::abs(want) > 1e300)
      continue;
    // Smith's algorithm: a normwise relative error of a few eps (Higham, Accuracy and Stability, 3.6).
    expect_close(a / b, want, 8 * kEps);
  }
}

TEST(ComplexArithmetic, AgreesWithStdComplexOnRandomOperands) {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (int trial = 0; trial < 200; ++trial) {
    const cplx a(u(rng), u(rng));
    const cplx b(u(rng), u(rng));
    const std::complex<double> sa = to_std(a);
    const std::complex<double> sb = to_std(b);

    // One rounding per component: exact.
    EXPECT_EQ(to_std(a + b), sa + sb);
    EXPECT_EQ(to_std(a - b), sa - sb);
    EXPECT_EQ(to_std(-a), -sa);
    EXPECT_EQ(to_std(ls::conj(a)), std::conj(sa));
    // Products and quotients: a normwise relative error of a few eps.
    expect_close(a * b, sa * sb, 4 * kEps);
    expect_close(a / b, sa / sb, 8 * kEps);

    // Compound assignment is the binary operator.
    cplx c = a;
    c += b;
    EXPECT_EQ(to_std(c), to_std(a + b));
    c = a;
    c -= b;
    EXPECT_EQ(to_std(c), to_std(a - b));
    c = a;
    c *= b;
    EXPECT_EQ(to_std(c), to_std(a * b));
    c = a;
    c /= b;
    EXPECT_EQ(to_std(c), to_std(a / b));

    // Mixed with reals through the implicit conversion.
    const double s = u(rng);
    EXPECT_EQ(to_std(a * s), sa * s);
    EXPECT_EQ(to_std(s + a), s + sa);
    EXPECT_EQ(to_std(a - s), sa - s);
    expect_close(s / a, s / sa, 8 * kEps);
  }
}

TEST(ComplexArithmetic, ProvidesPivotMagnitudeFinitenessAndZeroInitialization) {
  EXPECT_EQ(ls::abs1(cplx(-3.0, 4.0)), 7.0);
  EXPECT_EQ(ls::abs1(-2.5), 2.5);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(ls::is_finite(cplx(1.0, -1e308)));
  EXPECT_FALSE(ls::is_finite(cplx(nan, 0.0)));
  EXPECT_FALSE(ls::is_finite(cplx(0.0, nan)));
  EXPECT_FALSE(ls::is_finite(cplx(-inf, 0.0)));
  EXPECT_FALSE(ls::is_finite(cplx(0.0, inf)));

  const cplx zero{};
  EXPECT_EQ(zero.re, 0.0);
  EXPECT_EQ(zero.im, 0.0);
  const cplx real = 2.5;
  EXPECT_EQ(real.re, 2.5);
  EXPECT_EQ(real.im, 0.0);
  static_assert(std::is_trivially_copyable_v<cplx>, "complex numbers are plain data in device buffers");
  static_assert(sizeof(cplx) == 2 * sizeof(double));
}
