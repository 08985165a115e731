// lockstep/study/moments.hpp — running moments of one statistics slice (count, mean, M2, min, max, and
// the count above a threshold) and
// running means of one replicate's cell, with the pairwise merge of two partial results.
//
// Per block, (n, mean, M2) by Welford's update (Welford 1962, Technometrics 4); blocks merged
// by the pairwise update of Chan, Golub & LeVeque (1979, Stanford STAN-CS-79-773; 1983, Am. Stat. 37,
// section 2, there in sums rather than means): delta = mean_b - mean_a, mean = mean_a + delta n_b / n,
// M2 = M2_a + M2_b + delta^2 n_a n_b / n.
// std is the sample standard deviation sqrt(M2 / (n - 1)).
//
// The merges are fixed functions of their two arguments, which the fixed combination tree of
// study/statistics.hpp relies on for bitwise reproducible results.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace lockstep::study::statistics_detail {

// Running moments of one slice (Welford 1962; Chan, Golub & LeVeque 1979).
struct moments {
  std::int64_t n = 0;
  std::int64_t above = 0;  // the values above the slice's exceedance threshold (statistics.hpp counts them)
  double mean = 0.0;
  double m2 = 0.0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void add(double x) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
    min = std::min(min, x);
    max = std::max(max, x);
  }
};

inline moments merge(const moments& a, const moments& b) {
  // An empty side returns the other unchanged, so empty blocks or slices cannot perturb the result.
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  moments r;
  r.n = a.n + b.n;
  r.above = a.above + b.above;
  const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n), n = static_cast<double>(r.n);
  const double delta = b.mean - a.mean;
  r.mean = a.mean + delta * (nb / n);
  r.m2 = a.m2 + b.m2 + delta * delta * (na * nb / n);
  r.min = std::min(a.min, b.min);
  r.max = std::max(a.max, b.max);
  return r;
}

// Running mean only, and the count above the slice's exceedance threshold: one replicate's cell.
struct mean_accumulator {
  std::int64_t n = 0;
  double mean = 0.0;
  std::int64_t above = 0;

  void add(double x) {
    ++n;
    mean += (x - mean) / static_cast<double>(n);
  }
};

inline mean_accumulator merge(const mean_accumulator& a, const mean_accumulator& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  mean_accumulator r;
  r.n = a.n + b.n;
  r.above = a.above + b.above;
  r.mean = a.mean + (b.mean - a.mean) * (static_cast<double>(b.n) / static_cast<double>(r.n));
  return r;
}

}  // namespace lockstep::study::statistics_detail
