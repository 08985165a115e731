// lockstep/study/derivative_measures.hpp — derivative-based global sensitivity measures (DGSM) of one
// output over k independent inputs, and the upper bounds they give on the total Sobol' indices: a
// screening that costs one forward-sensitivity solve per member, where Saltelli's design
// (study/sensitivity_indices.hpp) costs k + 2 solves per row.
//
// The measure (Sobol' & Kucherenko 2009, "Derivative based global sensitivity measures and their link
// with global sensitivity indices", Math. Comput. Simul. 79, eq. (5)): nu_i = E[(df/dx_i)^2], estimated
// by the mean over the members of the squared derivative. The bound (Lamboni, Iooss, Popelin & Gamboa
// 2013, "Derivative-based global sensitivity measures: general links with Sobol' indices and numerical
// tests", Math. Comput. Simul. 87, theorem 2): S_Ti <= C_i nu_i / V, V the output's variance and C_i
// the Poincare constant of X_i's distribution: (b - a)^2 / pi^2 for the uniform on [a, b] (Sobol' &
// Kucherenko 2009, theorem 3), sigma^2 for the normal. The lognormal X = exp(Z) has no Poincare
// constant, but the indices do not change when an input is replaced by a monotone function of it:
// the bound is taken in Z, sigma^2 E[(X df/dX)^2] / V. An input whose bound is small cannot matter;
// a large bound says nothing (for a linear f of uniform inputs it is 12 / pi^2 = 1.22 times S_Ti, for
// a linear f of normal inputs it equals S_Ti).
//
// Meaningless for a chaotic output: its derivatives grow like exp(lambda t) with the largest Lyapunov
// exponent lambda, while its variance stays bounded, so the bounds grow without limit long before the
// indices change (docs/LYAPUNOV.md).
//
// Members whose output or derivative is not finite (failed members) are left out; `members_used` says
// how many entered.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <vector>

#include "lockstep/study/sampling_plan.hpp"
#include "lockstep/study/sensitivity_indices.hpp"

namespace lockstep::study {

struct derivative_measures {
  std::vector<double> nu;           // E[(df/dx_i)^2] (for a lognormal input, E[(x_i df/dx_i)^2]), k entries
  std::vector<double> nu_stderr;    // the standard error of each nu: std / sqrt(members used)
  std::vector<double> total_bound;  // C_i nu_i / V, an upper bound on S_Ti
  double variance = std::numeric_limits<double>::quiet_NaN();  // V, the sample variance of the output
  long members = 0;
  long members_used = 0;
};

// The Poincare constant of a distribution in the variable the bound is taken in (above); NaN for a grid,
// which has no derivative to speak of.
inline double poincare_constant(const distribution& d) {
  switch (d.kind) {
    case distribution_kind::uniform:
      return (d.b - d.a) * (d.b - d.a) / (std::numbers::pi * std::numbers::pi);
    case distribution_kind::normal:
    case distribution_kind::lognormal:
      return d.b * d.b;
    case distribution_kind::grid:
      break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The measures of an output from `members` independent members (random or quasi-random points of the
// inputs' distribution): y[m] the output of member m, x[m * k + i] and dy[m * k + i] its input i and
// the output's derivative by it.
inline derivative_measures estimate_derivative_measures(const std::vector<distribution>& inputs, const double* y,
                                                        const double* x, const double* dy, long members) {
  const std::size_t k = inputs.size();
  derivative_measures out;
  out.members = members;
  out.nu.assign(k, std::numeric_limits<double>::quiet_NaN());
  out.nu_stderr = out.nu;
  out.total_bound = out.nu;
  std::vector<long> used;
  for (long m = 0; m < members; ++m) {
    bool finite = std::isfinite(y[m]);
    for (std::size_t i = 0; i < k; ++i) finite = finite && std::isfinite(dy[static_cast<std::size_t>(m) * k + i]);
    if (finite) used.push_back(m);
  }
  out.members_used = static_cast<long>(used.size());
  if (out.members_used < 2) return out;
  const double n = static_cast<double>(out.members_used);
  sensitivity_detail::compensated_sum sum;
  for (const long m : used) sum.add(y[m]);
  const double mean = sum.value() / n;
  sensitivity_detail::compensated_sum squares;
  for (const long m : used) squares.add((y[m] - mean) * (y[m] - mean));
  out.variance = squares.value() / (n - 1.0);
  for (std::size_t i = 0; i < k; ++i) {
    const bool logarithmic = inputs[i].kind == distribution_kind::lognormal;
    const auto squared = [&](long m) {
      const std::size_t at = static_cast<std::size_t>(m) * k + i;
      const double d = logarithmic ? x[at] * dy[at] : dy[at];
      return d * d;
    };
    sensitivity_detail::compensated_sum s;
    for (const long m : used) s.add(squared(m));
    const double nu = s.value() / n;
    sensitivity_detail::compensated_sum spread;
    for (const long m : used) spread.add((squared(m) - nu) * (squared(m) - nu));
    out.nu[i] = nu;
    out.nu_stderr[i] = std::sqrt(spread.value() / (n - 1.0) / n);
    out.total_bound[i] = out.variance > 0.0 ? poincare_constant(inputs[i]) * nu / out.variance
                                            : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

}  // namespace lockstep::study
