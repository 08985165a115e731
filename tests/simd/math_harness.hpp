// tests/simd/math_harness.hpp — the target-independent half of the vector math tests: runs a function
// of lockstep/core/vector_math at every pack width (1, 2, 4, 8) on every instruction set compiled into the test
// and supported by this CPU, and checks the three properties docs/SIMD.md requires of it:
//
//  1. determinism: every variant gives the same bits as the first (the scalar target at W = 1), NaN
//     payloads aside (every NaN equals every NaN);
//  2. independence of neighbours: at the widest width, the same arguments in a shuffled order give each
//     argument the same bits, so a lane's result never depends on what the other lanes hold;
//  3. accuracy: the distance in units in the last place (ulp) to a reference computed in x87 extended
//     precision (64-bit significand, so its own error is below 2^-11 ulp of a double) stays within a
//     stated bound, and the exceptional cases (NaN, infinities, signed zeros) are exactly as specified;
//  4. quiet lanes: on arguments with finite results no variant raises the invalid, division-by-zero or
//     overflow exception (a discarded candidate computed on an unsuitable argument would).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace lockstep::simd_test {

using entry_fn = std::function<bool(const double* x, const double* y, double* out, size_t n, size_t lanes)>;
// The entry_fn of a function exported by HWY_EXPORT(NAME) from the per-target half.
#define LOCKSTEP_SIMD_TEST_DISPATCH(NAME)                                                  \
  [](const double* x, const double* y, double* out, size_t n, size_t lanes) {              \
    return HWY_DYNAMIC_DISPATCH(NAME)(x, y, out, n, lanes);                                \
  }

// The arguments padded to a multiple of 8 with 1.0, a harmless value (y = 1.0 too when y is empty).
inline size_t pad_arguments(std::vector<double>& x, std::vector<double>& y) {
  y.resize(x.size(), 1.0);
  const size_t padded = (x.size() + 7) / 8 * 8;
  x.resize(padded, 1.0);
  y.resize(padded, 1.0);
  return padded;
}

struct variant_result {
  std::string name;  // "AVX3 W=8"
  std::vector<double> out;
};

inline bool same_bits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Runs every variant on the padded arguments; the results are cut back to the arguments given.
inline std::vector<variant_result> run_every_variant(const entry_fn& entry, std::vector<double> x,
                                                     std::vector<double> y) {
  const size_t n = x.size();
  const size_t padded = pad_arguments(x, y);
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::sort(targets.begin(), targets.end(), std::greater<>());  // the scalar target first
  std::vector<variant_result> results;
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    for (const size_t lanes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      std::vector<double> out(padded);
      if (!entry(x.data(), y.data(), out.data(), padded, lanes)) continue;
      out.resize(n);
      results.push_back({std::string(hwy::TargetName(target)) + " W=" + std::to_string(lanes), std::move(out)});
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  return results;
}

// Property 1 and 2; returns the results of the first variant (the reference for property 3).
inline std::vector<double> expect_deterministic(const char* function, const entry_fn& entry,
                                                const std::vector<double>& x, const std::vector<double>& y) {
  const std::vector<variant_result> results = run_every_variant(entry, x, y);
  EXPECT_GE(results.size(), 2u) << "fewer than two variants compiled and supported";
  if (results.empty()) return {};
  const variant_result& first = results.front();
  std::string names;
  for (const variant_result& r : results) names += (names.empty() ? "" : ", ") + r.name;
  std::printf("[ variants ] %s: %s\n", function, names.c_str());
  for (const variant_result& r : results) {
    size_t differ = 0, first_index = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_bits(r.out[i], first.out[i]) && differ++ == 0) first_index = i;
    EXPECT_EQ(differ, 0u) << function << ": " << r.name << " differs from " << first.name << " in " << differ
                          << " of " << x.size() << " results; first at x = " << std::hexfloat << x[first_index]
                          << (y.empty() ? "" : ", y = ") << (y.empty() ? 0.0 : y[first_index]) << ": "
                          << r.out[first_index] << " against " << first.out[first_index];
  }
  // Shuffle the arguments; every widest variant must give each argument the same bits again.
  std::vector<size_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(20261126));
  std::vector<double> xs(x.size()), ys(y.empty() ? 0 : y.size());
  for (size_t i = 0; i < order.size(); ++i) {
    xs[i] = x[order[i]];
    if (!y.empty()) ys[i] = y[order[i]];
  }
  const std::vector<variant_result> shuffled = run_every_variant(entry, xs, ys);
  for (const variant_result& r : shuffled) {
    size_t differ = 0;
    for (size_t i = 0; i < order.size(); ++i) differ += !same_bits(r.out[i], first.out[order[i]]);
    EXPECT_EQ(differ, 0u) << function << ": " << r.name << " gives " << differ
                          << " results that depend on the other lanes of their pack";
  }
  return first.out;
}

// The distance from got to the exact value ref in ulp of the double nearest ref (ulp of the smallest
// subnormal below 2^-1022). Infinite or NaN got counts as infinitely far from a finite ref.
inline double ulp_error(double got, long double ref) {
  if (std::isnan(got) || std::isinf(got)) return std::numeric_limits<double>::infinity();
  const long double a = std::fabs(ref);
  int e = 0;
  std::frexp(static_cast<double>(a == 0 ? 0x1p-1022L : a), &e);  // a in [2^(e-1), 2^e)
  const long double ulp = std::ldexp(1.0L, std::max(e - 53, -1074));
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

struct accuracy {
  double max_ulp = 0;
  size_t worst = 0;  // index of the argument with the largest error
  size_t counted = 0;
};

// Property 3 over arguments whose exact result is finite and representable: ulp distance to
// reference(x, y) (long double) no more than bound. Arguments where the reference is not finite or
// overflows a double are the exceptional cases' business and are skipped here.
template <class Reference>
inline accuracy expect_accurate(const char* function, const std::vector<double>& x, const std::vector<double>& y,
                                const std::vector<double>& got, Reference reference, double bound) {
  accuracy acc;
  for (size_t i = 0; i < got.size(); ++i) {
    const long double ref = reference(x[i], y.empty() ? 0.0 : y[i]);
    if (!std::isfinite(ref) || std::fabs(ref) > 0x1.fffffffffffffp+1023L) continue;
    ++acc.counted;
    const double e = ulp_error(got[i], ref);
    if (e > acc.max_ulp) acc.max_ulp = e, acc.worst = i;
  }
  EXPECT_LE(acc.max_ulp, bound) << function << ": worst at x = " << std::hexfloat << x[acc.worst]
                                << (y.empty() ? "" : ", y = ") << (y.empty() ? 0.0 : y[acc.worst]) << ": got "
                                << got[acc.worst] << ", exact " << static_cast<double>(reference(
                                       x[acc.worst], y.empty() ? 0.0 : y[acc.worst]));
  std::printf("[ accuracy ] %s: max %.3f ulp over %zu arguments\n", function, acc.max_ulp, acc.counted);
  return acc;
}

// Named argument sets of one function, run together for properties 1 and 2 and property 4, measured
// one by one for property 3 (one accuracy line per set). y is empty for functions of one argument, in
// every set or in none.
struct argument_set {
  std::string name;
  std::vector<double> x, y = {};  // the initializer: sets of one-argument functions leave y out
};
template <class Reference>
inline void expect_accurate_by_set(const std::string& function, const entry_fn& entry,
                                   const std::vector<argument_set>& sets, Reference reference, double bound);

// Property 4 over arguments the caller knows to have finite, representable results.
inline void expect_no_exceptions(const char* function, const entry_fn& entry, std::vector<double> x,
                                 std::vector<double> y) {
  const size_t padded = pad_arguments(x, y);
  std::vector<double> out(padded);
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    for (const size_t lanes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      std::feclearexcept(FE_ALL_EXCEPT);
      const bool ran = entry(x.data(), y.data(), out.data(), padded, lanes);
      const int raised = std::fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
      if (!ran) continue;
      EXPECT_EQ(raised, 0) << function << " at " << hwy::TargetName(target) << " W=" << lanes << " raised"
                           << ((raised & FE_INVALID) ? " invalid" : "") << ((raised & FE_DIVBYZERO) ? " divbyzero" : "")
                           << ((raised & FE_OVERFLOW) ? " overflow" : "");
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Exceptional cases: f(x, y) must be exactly want (same bits, any NaN for NaN), at every variant.
struct exact_case {
  double x, y, want;
};
// The cases without a NaN argument whose result is finite must raise no exception either (property 4:
// atan2(inf, -inf) = 3 pi/4 must not raise invalid because another candidate computed inf - inf).
inline void expect_exact_cases(const char* function, const entry_fn& entry, const std::vector<exact_case>& cases) {
  std::vector<double> x, y, quiet_x, quiet_y;
  for (const exact_case& c : cases) {
    x.push_back(c.x), y.push_back(c.y);
    if (!std::isnan(c.x) && !std::isnan(c.y) && std::isfinite(c.want)) quiet_x.push_back(c.x), quiet_y.push_back(c.y);
  }
  for (const variant_result& r : run_every_variant(entry, x, y))
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_TRUE(same_bits(r.out[i], cases[i].want))
          << function << " at " << r.name << ": f(" << std::hexfloat << cases[i].x << ", " << cases[i].y
          << ") = " << r.out[i] << ", want " << cases[i].want;
  if (!quiet_x.empty()) expect_no_exceptions((std::string(function) + " (exact cases)").c_str(), entry, quiet_x, quiet_y);
}

// Argument sets. uniform(a, b): uniformly distributed; log_uniform(a, b): magnitudes spread evenly
// over the binades between a > 0 and b, both signs when signed; bit_patterns(lo, hi): doubles whose
// bit patterns are uniform between those of lo and hi (every binade weighted equally by its count).
inline std::vector<double> uniform(double a, double b, size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(a, b);
  std::vector<double> v(n);
  for (double& x : v) x = u(g);
  return v;
}
inline std::vector<double> log_uniform(double a, double b, size_t n, uint64_t seed, bool signed_values) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(std::log2(a), std::log2(b));
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = std::exp2(u(g));
    if (signed_values && (g() & 1)) v[i] = -v[i];
  }
  return v;
}
inline std::vector<double> bit_patterns(double lo, double hi, size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<uint64_t> u(std::bit_cast<uint64_t>(lo), std::bit_cast<uint64_t>(hi));
  std::vector<double> v(n);
  for (double& x : v) x = std::bit_cast<double>(u(g));
  return v;
}
inline std::vector<double> concat(std::vector<std::vector<double>> parts) {
  std::vector<double> all;
  for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

template <class Reference>
inline void expect_accurate_by_set(const std::string& function, const entry_fn& entry,
                                   const std::vector<argument_set>& sets, Reference reference, double bound) {
  std::vector<double> x, y;
  for (const argument_set& set : sets) {
    EXPECT_EQ(set.y.empty(), sets.front().y.empty()) << function << ": y given in some sets only";
    x.insert(x.end(), set.x.begin(), set.x.end());
    y.insert(y.end(), set.y.begin(), set.y.end());
  }
  const std::vector<double> got = expect_deterministic(function.c_str(), entry, x, y);
  expect_no_exceptions(function.c_str(), entry, x, y);
  if (got.size() != x.size()) return;
  size_t offset = 0;
  for (const argument_set& set : sets) {
    const std::vector<double> part(got.begin() + offset, got.begin() + offset + set.x.size());
    expect_accurate((function + ", " + set.name).c_str(), set.x, set.y, part, reference, bound);
    offset += set.x.size();
  }
}

}  // namespace lockstep::simd_test
