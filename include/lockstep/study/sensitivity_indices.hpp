// lockstep/study/sensitivity_indices.hpp — variance-based sensitivity indices of one output over k
// independent inputs: Saltelli's design, the estimators of the first-order, total and second-order
// indices, and their confidence intervals (from replicates, or from the bootstrap).
//
// The indices (Sobol' 1993, "Sensitivity estimates for nonlinear mathematical models", Math. Model.
// Comput. Exp. 1; Homma & Saltelli 1996 for the total index). With Y = f(X_1, ..., X_k) and the X_i
// independent, V = Var Y, the first-order index of input i is S_i = Var(E[Y | X_i]) / V, the share of
// the variance X_i causes alone; the total index S_Ti = E[Var(Y | X_~i)] / V = 1 - Var(E[Y | X_~i]) / V,
// the share in which X_i takes part, interactions included (S_Ti >= S_i, and S_Ti = S_i for all i
// exactly when f is additive); the second-order index S_ij = Var(E[Y | X_i, X_j]) / V - S_i - S_j.
//
// The design (Saltelli 2002, "Making best use of model evaluations to compute sensitivity indices",
// Comput. Phys. Commun. 145, section 3; Saltelli et al. 2010, "Variance based sensitivity analysis of
// model output. Design and estimator for the total sensitivity index", Comput. Phys. Commun. 181,
// section 3): two N x k matrices A and B whose rows are independent input points, here the first k
// and the last k coordinates of one 2k-dimensional Sobol' point (study/samplers.hpp, sampler
// saltelli), and for each input i the matrix A_B^(i), A with its column i taken from B (and for
// second-order indices B_A^(i), B with its column i taken from A). Row j of the design holds the
// k + 2 (2k + 2) points A_j, A_B^(1)_j, ..., A_B^(k)_j, [B_A^(1)_j, ..., B_A^(k)_j,] B_j in that
// order, SALib's order (Herman & Usher 2017, "SALib: an open-source Python library for sensitivity
// analysis", J. Open Source Softw. 2), so that its analysis reads lockstep's outputs as they are.
//
// The estimators, with y = f - c the outputs less their mean c over the whole design, and
// V = the variance (denominator 2N) of the 2N values y(A_j), y(B_j):
//   first order   V_i = (1/N) sum_j y(B_j) (y(A_B^(i)_j) - y(A_j))           (Saltelli et al. 2010, the
//                                                                              first-order estimator
//                                                                              they recommend)
//   total         V_Ti = (1/2N) sum_j (y(A_j) - y(A_B^(i)_j))^2                (Jansen 1999, "Analysis of
//                                                                              variance designs for model
//                                                                              output", Comput. Phys.
//                                                                              Commun. 117; recommended
//                                                                              by Saltelli et al. 2010)
//   second order  V_ij = (1/N) sum_j (y(B_A^(i)_j) y(A_B^(j)_j) - y(A_j) y(B_j))   (Saltelli 2002)
// and S_i = V_i / V, S_Ti = V_Ti / V, S_ij = V_ij / V - S_i - S_j. Centering does not change V or the
// total estimator; it removes from the first-order one the term c (mean of y(A_B^(i)) - mean of y(A)),
// which is zero in expectation but not in a sample, and large where the output's mean is large against
// its spread. SALib's analysis centres (and scales, which the ratios do not see) the same way, so the
// two agree to rounding.
//
// Failed members. A row with a non-finite output (a member that failed leaves NaN) is left out whole:
// the estimators pair the row's points. Rows left out bias the indices when failures depend on the
// inputs, so above a fraction of rows left out the indices are refused (the result says why).
//
// Intervals. With R >= 2 replicates (independent randomizations of the design, study/samplers.hpp) the
// estimate is that of all rows together and its interval half-width t_{R-1} s_R / sqrt(R), s_R the
// standard deviation of the R replicates' own estimates (L'Ecuyer & Lemieux 2002, "Recent advances in
// randomized quasi-Monte Carlo methods"). Otherwise the bootstrap over rows (Efron & Tibshirani 1993,
// "An Introduction to the Bootstrap", chapter 6; as SALib does): B resamples of the N rows with
// replacement, drawn from Philox keyed by the seed (the same for any thread or rank), and the
// half-width z s_B, s_B the standard deviation of the resamples' estimates. The bootstrap treats the
// rows as independent draws: for Sobol' points, whose errors are smaller than independent draws', it
// overstates the error.
//
// Everything here is a fixed function of its arguments: the same values give the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "lockstep/study/samplers.hpp"

namespace lockstep::study {

// The indices of one output.
struct sensitivity_indices {
  int inputs = 0;
  std::vector<double> first;   // S_i, k entries
  std::vector<double> total;   // S_Ti, k entries
  std::vector<double> second;  // S_ij at i * k + j for i < j, NaN elsewhere; empty without second order
  double variance = std::numeric_limits<double>::quiet_NaN();  // V, of the outputs at A and B
  long rows = 0;        // design rows given
  long rows_used = 0;   // those whose outputs are all finite
  std::string refused;  // why there are no indices (they are NaN), or ""
};

// Half-widths of the indices' confidence intervals, laid out as sensitivity_indices' vectors.
struct sensitivity_intervals {
  double level = 0.95;  // the intervals' confidence level
  std::vector<double> first;
  std::vector<double> total;
  std::vector<double> second;
  int replicates = 0;   // R >= 2: from the replicates' spread; 0: from the bootstrap
  int resamples = 0;    // the bootstrap's B
};

namespace sensitivity_detail {

// Neumaier's compensated sum (Neumaier 1974, ZAMM 54): summation in the given order with the
// rounding error carried, so that a design of 10^6 rows loses no digits to the order of the terms.
struct compensated_sum {
  double sum = 0.0;
  double carry = 0.0;
  void add(double x) {
    const double t = sum + x;
    carry += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Counter tag ("boot" in ASCII) of the bootstrap's Philox draws, disjoint from the samplers'.
inline constexpr std::uint64_t tag_bootstrap = 0x626f6f74;

// The rows of y (rows rows of design.slots() values) whose outputs are all finite, in order.
inline std::vector<long> finite_rows(const saltelli_design& design, const double* y, long rows) {
  std::vector<long> finite;
  finite.reserve(static_cast<std::size_t>(std::max(rows, 0L)));
  const int slots = design.slots();
  for (long row = 0; row < rows; ++row) {
    bool all = true;
    for (int s = 0; s < slots; ++s) all = all && std::isfinite(y[static_cast<std::size_t>(row) * slots + s]);
    if (all) finite.push_back(row);
  }
  return finite;
}

// The estimators over the rows listed in `rows` (indices into y's rows; a row may repeat, as in a
// bootstrap resample), each row's outputs finite.
inline void estimate_over(const saltelli_design& design, const double* y, const std::vector<long>& rows,
                          sensitivity_indices& out) {
  const int k = design.inputs;
  const int slots = design.slots();
  const long n = static_cast<long>(rows.size());
  const auto at = [&](long row, int slot) { return y[static_cast<std::size_t>(row) * slots + slot]; };
  compensated_sum all;
  for (const long row : rows)
    for (int s = 0; s < slots; ++s) all.add(at(row, s));
  const double c = all.value() / static_cast<double>(n * slots);
  // V: the variance of the 2N centred values at A and B, about their own mean (two passes).
  compensated_sum ab;
  for (const long row : rows) {
    ab.add(at(row, 0) - c);
    ab.add(at(row, slots - 1) - c);
  }
  const double ab_mean = ab.value() / static_cast<double>(2 * n);
  compensated_sum squares;
  for (const long row : rows) {
    const double a = (at(row, 0) - c) - ab_mean, b = (at(row, slots - 1) - c) - ab_mean;
    squares.add(a * a);
    squares.add(b * b);
  }
  out.variance = squares.value() / static_cast<double>(2 * n);
  const double v = out.variance;
  out.first.assign(static_cast<std::size_t>(k), nan);
  out.total.assign(static_cast<std::size_t>(k), nan);
  out.second.assign(design.second_order ? static_cast<std::size_t>(k) * k : 0, nan);
  if (!(v > 0.0)) {
    out.refused = "the output does not vary over the design (its variance is 0)";
    return;
  }
  for (int i = 0; i < k; ++i) {
    compensated_sum first, total;
    for (const long row : rows) {
      const double a = at(row, 0) - c, b = at(row, slots - 1) - c, ab_i = at(row, 1 + i) - c;
      first.add(b * (ab_i - a));
      total.add((a - ab_i) * (a - ab_i));
    }
    out.first[i] = first.value() / static_cast<double>(n) / v;
    out.total[i] = 0.5 * total.value() / static_cast<double>(n) / v;
  }
  if (!design.second_order) return;
  for (int i = 0; i < k; ++i)
    for (int j = i + 1; j < k; ++j) {
      compensated_sum closed;
      for (const long row : rows) {
        const double a = at(row, 0) - c, b = at(row, slots - 1) - c;
        closed.add((at(row, 1 + k + i) - c) * (at(row, 1 + j) - c) - a * b);
      }
      out.second[static_cast<std::size_t>(i) * k + j] =
          closed.value() / static_cast<double>(n) / v - out.first[i] - out.first[j];
    }
}

// The sample standard deviation (n - 1) of values[f] over the estimates whose values are finite, and
// how many those were.
inline std::pair<double, long> spread(const std::vector<const std::vector<double>*>& estimates, std::size_t f) {
  compensated_sum sum;
  long n = 0;
  for (const std::vector<double>* e : estimates)
    if (std::isfinite((*e)[f])) {
      sum.add((*e)[f]);
      ++n;
    }
  if (n < 2) return {nan, n};
  const double mean = sum.value() / static_cast<double>(n);
  compensated_sum squares;
  for (const std::vector<double>* e : estimates)
    if (std::isfinite((*e)[f])) squares.add(((*e)[f] - mean) * ((*e)[f] - mean));
  return {std::sqrt(squares.value() / static_cast<double>(n - 1)), n};
}

}  // namespace sensitivity_detail

// The indices of one output from its values y at the design's points, `rows` rows of design.slots()
// values each (row-major: row j's points in the order of the design, above). Rows with a non-finite
// value are left out; where more than max_left_out of the rows are, or none is left, the indices are
// NaN and `refused` says why.
inline sensitivity_indices estimate_sensitivity_indices(const saltelli_design& design, const double* y, long rows,
                                                        double max_left_out = 0.05) {
  sensitivity_indices out;
  out.inputs = design.inputs;
  out.rows = rows;
  const std::vector<long> used = sensitivity_detail::finite_rows(design, y, rows);
  out.rows_used = static_cast<long>(used.size());
  const long left_out = rows - out.rows_used;
  if (static_cast<double>(left_out) > max_left_out * static_cast<double>(rows)) {
    char allowed[32];
    std::snprintf(allowed, sizeof allowed, "%g", 100.0 * max_left_out);
    out.refused = std::to_string(left_out) + " of " + std::to_string(rows) +
                  " design rows have a failed member (a non-finite output), more than the " + allowed +
                  " % allowed: indices from the others would be biased where the failures depend on the inputs";
  } else if (out.rows_used < 2) {
    out.refused = "fewer than 2 design rows";
  }
  if (!out.refused.empty()) {
    const std::size_t k = static_cast<std::size_t>(design.inputs);
    out.first.assign(k, sensitivity_detail::nan);
    out.total.assign(k, sensitivity_detail::nan);
    out.second.assign(design.second_order ? k * k : 0, sensitivity_detail::nan);
    return out;
  }
  sensitivity_detail::estimate_over(design, y, used, out);
  return out;
}

// The interval half-widths from R >= 2 replicates: y holds R consecutive replicates of
// rows_per_replicate rows each; `pooled` is estimate_sensitivity_indices over all R x rows_per_replicate
// rows. A replicate whose own estimate is refused (too many failed rows) does not count; fewer than 2
// counted give NaN.
inline sensitivity_intervals replicate_intervals(const saltelli_design& design, const double* y,
                                                 long rows_per_replicate, int replicates, double level = 0.95,
                                                 double max_left_out = 0.05) {
  sensitivity_intervals out;
  out.level = level;
  out.replicates = replicates;
  if (replicates < 1) return out;
  std::vector<sensitivity_indices> each;
  for (int r = 0; r < replicates; ++r)
    each.push_back(estimate_sensitivity_indices(
        design, y + static_cast<std::size_t>(r) * rows_per_replicate * design.slots(), rows_per_replicate,
        max_left_out));
  const auto half_widths = [&](std::vector<double> sensitivity_indices::*field) {
    std::vector<const std::vector<double>*> estimates;
    for (const sensitivity_indices& e : each) estimates.push_back(&(e.*field));
    std::vector<double> h((each.front().*field).size(), sensitivity_detail::nan);
    for (std::size_t f = 0; f < h.size(); ++f) {
      const auto [s, n] = sensitivity_detail::spread(estimates, f);
      if (n < 2) continue;
      const boost::math::students_t t(static_cast<double>(n - 1));
      h[f] = boost::math::quantile(t, 0.5 + level / 2.0) * s / std::sqrt(static_cast<double>(n));
    }
    return h;
  };
  out.first = half_widths(&sensitivity_indices::first);
  out.total = half_widths(&sensitivity_indices::total);
  out.second = half_widths(&sensitivity_indices::second);
  return out;
}

// The interval half-widths from `resamples` bootstrap resamples of the usable rows of y (rows rows),
// drawn from Philox keyed by seed: resample b's m-th row is row floor(u n) of the n usable rows, u the
// open-interval uniform of Philox({seed, b}, {tag_bootstrap, m}).
inline sensitivity_intervals bootstrap_intervals(const saltelli_design& design, const double* y, long rows,
                                                 int resamples, std::uint64_t seed, double level = 0.95) {
  sensitivity_intervals out;
  out.level = level;
  out.resamples = resamples;
  const std::vector<long> usable = sensitivity_detail::finite_rows(design, y, rows);
  const long n = static_cast<long>(usable.size());
  std::vector<sensitivity_indices> each(static_cast<std::size_t>(resamples));
  std::vector<long> drawn(static_cast<std::size_t>(n));
  for (int b = 0; b < resamples && n >= 2; ++b) {
    for (long m = 0; m < n; ++m) {
      const double u = unit_open(philox_word(seed, static_cast<std::uint64_t>(b), sensitivity_detail::tag_bootstrap,
                                             static_cast<std::uint64_t>(m)));
      drawn[static_cast<std::size_t>(m)] = usable[static_cast<std::size_t>(std::min<long>(
          static_cast<long>(u * static_cast<double>(n)), n - 1))];
    }
    sensitivity_detail::estimate_over(design, y, drawn, each[static_cast<std::size_t>(b)]);
  }
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + level / 2.0);
  const auto half_widths = [&](std::vector<double> sensitivity_indices::*field, std::size_t size) {
    std::vector<double> h(size, sensitivity_detail::nan);
    if (n < 2 || resamples < 2) return h;
    std::vector<const std::vector<double>*> estimates;
    for (const sensitivity_indices& e : each) estimates.push_back(&(e.*field));
    for (std::size_t f = 0; f < size; ++f) h[f] = z * sensitivity_detail::spread(estimates, f).first;
    return h;
  };
  const std::size_t k = static_cast<std::size_t>(design.inputs);
  out.first = half_widths(&sensitivity_indices::first, k);
  out.total = half_widths(&sensitivity_indices::total, k);
  out.second = half_widths(&sensitivity_indices::second, design.second_order ? k * k : 0);
  return out;
}

}  // namespace lockstep::study
