// lockstep/study/exceedance.hpp — the probability that an output exceeds a threshold, from the count of
// members above it, with its Wilson score interval.
//
// With k of n members above the threshold, p = k / n, and the interval (Wilson 1927, "Probable
// inference, the law of succession, and statistical inference", J. Am. Stat. Assoc. 22; recommended
// over the normal ("Wald") interval by Agresti & Coull 1998, "Approximate is better than 'exact' for
// interval estimation of binomial proportions", Am. Stat. 52, and Brown, Cai & DasGupta 2001)
//     (p + z^2 / 2n +- z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n),
// z the standard normal quantile of (1 + level) / 2: it stays inside [0, 1] and keeps its coverage
// near the stated level down to a few members above. With fewer than rare_event_count members on
// either side the estimate is still what the members say, but a probability that small is beyond
// plain sampling: the result says so (importance sampling or subset simulation would be needed).
// The members are taken as independent draws; for quasi-random points, which are not, and for which the
// binomial interval overstates the error, a study of R >= 2 replicates of a randomized design takes
// Student's interval from the spread of the replicates' own fractions instead (estimate_exceedance with
// their standard error; study/first_times.hpp, replicate_interval, says why). A member whose value is
// NaN (it failed before that time) does not enter n.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace lockstep::study {

// Fewer members than this above (or below) the threshold: the estimate is flagged as a rare event.
inline constexpr std::int64_t rare_event_count = 10;

struct exceedance_estimate {
  double probability = std::numeric_limits<double>::quiet_NaN();  // k / n; NaN when n = 0
  double low = std::numeric_limits<double>::quiet_NaN();          // the Wilson interval
  double high = std::numeric_limits<double>::quiet_NaN();
  bool rare = false;  // fewer than rare_event_count members on one side
  int replicates = 0;  // the interval is Student's from the spread over this many replicates; 0: Wilson's
};

// Student's t_{R-1,(1+level)/2}: the factor of the standard error in the interval for the mean of R >= 2
// independent estimates (the replicates of a randomized quasi-Monte Carlo design).
inline double replicate_t(std::int64_t replicates, double level = 0.95) {
  return boost::math::quantile(boost::math::students_t(static_cast<double>(replicates - 1)), 0.5 + level / 2.0);
}

// The fraction p of a sample of n (a real n: the effective sample size of an estimate that is not a
// plain share, study/first_times.hpp) with its Wilson interval; NaN where n is not positive.
inline exceedance_estimate estimate_fraction(double p, double n, double level = 0.95) {
  exceedance_estimate e;
  if (!(n > 0.0)) return e;
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + level / 2.0);
  const double z2 = z * z;
  const double centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
  const double half = z / (1.0 + z2 / n) * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
  e.probability = p;
  e.low = std::fmax(centre - half, 0.0);
  e.high = std::fmin(centre + half, 1.0);
  return e;
}

// k = above of n = count members; with the standard error `replicate_se` of k / n from the spread over
// `replicates` replicates (ensemble_summary::above_stderr), Student's interval k / n +- t se from them,
// clipped to [0, 1], where R >= 2 and se > 0, else Wilson's (no spread says nothing of the error).
inline exceedance_estimate estimate_exceedance(std::int64_t above, std::int64_t count, double level = 0.95,
                                               double replicate_se = std::numeric_limits<double>::quiet_NaN(),
                                               std::int64_t replicates = 0) {
  if (count <= 0) return {};
  exceedance_estimate e = estimate_fraction(static_cast<double>(above) / static_cast<double>(count),
                                            static_cast<double>(count), level);
  e.rare = above < rare_event_count || count - above < rare_event_count;
  if (replicates >= 2 && replicate_se > 0.0) {
    const double half = replicate_t(replicates, level) * replicate_se;
    e.low = std::fmax(e.probability - half, 0.0);
    e.high = std::fmin(e.probability + half, 1.0);
    e.replicates = static_cast<int>(replicates);
  }
  return e;
}

}  // namespace lockstep::study
