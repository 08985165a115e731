// lockstep/core/vector_math/pi_over_2_reduction.hpp — reduction of a large double modulo pi/2, exactly enough
// for any finite argument, in integer arithmetic and plain IEEE operations only, so that it gives the
// same bits on every machine and in every pack lane that calls it (rules: common_inl.hpp).
//
// x = q pi/2 + r with q an integer and |r| <= pi/4 (up to rounding), returned as q mod 4 and r as a
// double-double hi + lo. The method is Payne and Hanek's ("Radian reduction for trigonometric
// functions", ACM SIGNUM Newsletter 18, 1983; Muller, Elementary Functions, 3rd ed., 2016, section
// 11.4): with x = m 2^E (m < 2^53 an integer), x 2/pi = m sum_i b_i 2^(E-i) where b_i are the bits of
// 2/pi; the bits with E - i >= 2 contribute multiples of 4 to x 2/pi, which change neither q mod 4 nor
// r, and are skipped; the next 192 bits of 2/pi times m, taken modulo 2^192, give the two low bits of
// the integer part and 190 bits of the fraction. What is left out weighs less than m 2^-190 < 2^-137,
// and the fraction of x 2/pi is never below 2^-62 for a double x (the closest double to a multiple of
// pi/2 is x = 6381956970095103 2^797, whose distance is about 4.7e-19: Kahan and McDonald; Muller,
// section 11.3), so r keeps at least 70 correct bits and the double-double holds about 104 of them.
//
// This header is not per-target: it is plain C++, included by the per-target vector math, which calls
// it lane by lane for the lanes whose |x| is beyond its own Cody-Waite reduction.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace lockstep::simd {

// The reduced argument: x = (4 j + quadrant) pi/2 + hi + lo for some integer j, quadrant in 0..3.
struct pi_over_2_reduced {
  int quadrant;
  double hi, lo;
};

namespace pi_over_2_detail {

__extension__ typedef unsigned __int128 uint128;

// The bits of 2/pi after the binary point, 64 per word, most significant first: word k + 1 holds bits
// 64 k + 1 ... 64 k + 64 (b_1 is the top bit of word 1), and word 0 holds the zero integer part and
// zeros above it, so that the window of an argument as small as 2^-10 still starts inside the table.
// 1280 bits: floor(2/pi 2^1280) computed by mpmath at 1400 and 3000 bits of precision (both the same),
// `int(mpmath.floor(mpmath.ldexp(2 / mpmath.pi, 1280)))`, written as 20 hexadecimal words. The
// largest double needs bits up to b_1162; tests/simd/trig_test.cpp checks the first word against the
// long double 1/pi of the C++ library.
inline constexpr uint64_t two_over_pi_bits[21] = {
    0x0000000000000000,
    0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
    0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
    0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab, 0xf0cfbc209af4361d,
};

// 64 bits of the table starting at bit `position` (bit 0 is the top bit of word 0).
inline uint64_t bits_at(int position) {
  const int word = position >> 6, shift = position & 63;
  if (shift == 0) return two_over_pi_bits[word];
  return (two_over_pi_bits[word] << shift) | (two_over_pi_bits[word + 1] >> (64 - shift));
}

// Dekker's exact product a b = p + e without FMA (Veltkamp's split into 26-bit halves), and Knuth's
// fast two-sum for |a| >= |b|: the scalar forms of the helpers of common_inl.hpp.
struct double_double {
  double hi, lo;
};
inline double_double split(double a) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  const double hi = c - (c - a);
  return {hi, a - hi};
}
inline double_double two_product(double a, double b) {
  const double p = a * b;
  const double_double as = split(a), bs = split(b);
  const double e = (((as.hi * bs.hi - p) + as.hi * bs.lo) + as.lo * bs.hi) + as.lo * bs.lo;
  return {p, e};
}
inline double_double fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

}  // namespace pi_over_2_detail

// Reduces any finite x (infinite or NaN x: not allowed). Arguments below 2^-10 in magnitude are below
// pi/4 and come back unchanged (quadrant 0, lo = 0); the vector math calls this for |x| >= 2^20 pi/2.
inline pi_over_2_reduced reduce_pi_over_2(double x) {
  using namespace pi_over_2_detail;
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased_exponent < 1023 - 10) return {0, x, 0.0};
  const uint64_t m = (bits & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
  const int e = biased_exponent - 1075;  // x = m 2^e, e >= -62

  // The window: bits b_(e-1) ... b_(e+190) of 2/pi, which is table bit e + 62 onwards; b_(e-1) has weight
  // 2^1 in x 2/pi. The 192-bit product m B is wanted modulo 2^192: two integer bits, 190 fraction bits.
  const int start = e + 62;
  const uint64_t w0 = bits_at(start), w1 = bits_at(start + 64), w2 = bits_at(start + 128);
  const uint128 p2 = static_cast<uint128>(m) * w2;
  const uint128 p1 = static_cast<uint128>(m) * w1;
  const uint64_t p0 = m * w0;  // only its low 64 bits are below 2^192
  const uint64_t r2 = static_cast<uint64_t>(p2);
  const uint128 mid = (p2 >> 64) + static_cast<uint64_t>(p1);
  const uint64_t r1 = static_cast<uint64_t>(mid);
  const uint64_t r0 = p0 + static_cast<uint64_t>(p1 >> 64) + static_cast<uint64_t>(mid >> 64);

  // Integer part mod 4 and the fraction f in [0, 1) as 190 bits (f0 holds its top 62); rounding to the
  // nearest quadrant makes the fraction f - 1 in [-1/2, 0) where f >= 1/2.
  int quadrant = static_cast<int>(r0 >> 62);
  uint64_t f0 = r0 & 0x3fffffffffffffffULL, f1 = r1, f2 = r2;
  const bool negative = (f0 >> 61) != 0;
  if (negative) {  // |f - 1| = 2^190 - F: the two's complement of the 190-bit F
    quadrant = (quadrant + 1) & 3;
    f2 = ~f2 + 1;
    const uint64_t carry2 = f2 == 0 ? 1 : 0;
    f1 = ~f1 + carry2;
    const uint64_t carry1 = (carry2 != 0 && f1 == 0) ? 1 : 0;
    f0 = (~f0 + carry1) & 0x3fffffffffffffffULL;
  }
  if ((f0 | f1 | f2) == 0) return {quadrant, 0.0, 0.0};  // cannot happen for a double; kept total

  // Normalize the 192-bit magnitude N (< 2^189) so that its top bit is the top bit of u0.
  int shift = 0;
  while (f0 == 0) f0 = f1, f1 = f2, f2 = 0, shift += 64;
  const int lz = std::countl_zero(f0);
  if (lz != 0) {
    f0 = (f0 << lz) | (f1 >> (64 - lz));
    f1 = (f1 << lz) | (f2 >> (64 - lz));
  }
  shift += lz;
  // |f| = N 2^-190 = U 2^(-190 - shift) with U = f0:f1:... in [2^191, 2^192): its top 53 bits and the
  // next 53, each exactly a double, then scaled by powers of two (exact: no underflow at these sizes).
  const uint64_t a = f0 >> 11;
  const uint64_t b = ((f0 & 0x7ff) << 42) | (f1 >> 22);
  const double_double f = fast_two_sum(std::ldexp(static_cast<double>(a), -51 - shift),
                                       std::ldexp(static_cast<double>(b), -104 - shift));

  // r = f pi/2 in double-double: pi/2 = 0x1.921fb54442d18p+0 + 0x1.1a62633145c07p-54 (mpmath).
  constexpr double pi_over_2_hi = 0x1.921fb54442d18p+0;
  constexpr double pi_over_2_lo = 0x1.1a62633145c07p-54;
  const double_double p = two_product(f.hi, pi_over_2_hi);
  const double_double r = fast_two_sum(p.hi, p.lo + (f.hi * pi_over_2_lo + f.lo * pi_over_2_hi));
  double hi = negative ? -r.hi : r.hi, lo = negative ? -r.lo : r.lo;

  // x < 0: x = -(q pi/2 + r) = (-q) pi/2 - r.
  if (x < 0) {
    quadrant = (4 - quadrant) & 3;
    hi = -hi;
    lo = -lo;
  }
  return {quadrant, hi, lo};
}

}  // namespace lockstep::simd
