// lockstep/study/first_times.hpp — the distribution of an event's first time over an ensemble: the
// fraction of members whose event occurred by each time, with its interval, and the quantiles of the
// first time, with the members that end without the event taken as right-censored.
//
// A member either has the event at its first time T, or is observed without it until the time C its
// run ended: t1 when it reached it, earlier when it failed or a stopping event of another kind ended
// it. Its T is then only known to be later than C. The fraction by time t is the Kaplan-Meier estimate
// (Kaplan & Meier 1958, "Nonparametric estimation from incomplete observations", J. Am. Stat. Assoc.
// 53):
//     F(t) = 1 - prod over the first times t_i <= t of (1 - d_i / n_i),
// d_i the members with T = t_i, n_i those still observed without the event just before t_i (a member
// censored at t_i counts as observed there: Kaplan & Meier's convention). Where no member was censored
// before t, F(t) is exactly the share of members with T <= t, k / n: the exceedance probability's
// estimator (study/exceedance.hpp), and its interval is the same Wilson score interval. With censoring
// before t, the interval is Wilson's with the effective sample size n' = F (1 - F) / Var F (Dorey &
// Korn 1987, "Effective sample sizes for confidence intervals for survival probabilities", Stat. Med.
// 6), Var F from Greenwood's formula Var S(t) = S(t)^2 sum d_i / (n_i (n_i - d_i)) (Greenwood 1926),
// which gives n' = n where nothing was censored; where Var F = 0 (no first time yet, or none left
// observed), n' is the members observed at t. The members are taken as independent draws, as for the
// exceedance probability; for quasi-random points, which are not, replicate_interval below replaces
// this interval by one from the spread over the study's replicates.
//
// The quantile q_p is the first time t_i at which F reaches p; where F stays below p up to the last
// first time (too many members never had the event, or were censored before), q_p is not estimable and
// is NaN: a quantile is reported only where the distribution reaches it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "lockstep/study/exceedance.hpp"

namespace lockstep::study {

// One event's distribution: at each requested time, F, its interval, and the members it rests on (n,
// and how many of them had the event by then); and the quantiles.
struct first_time_distribution {
  std::vector<double> fraction, low, high;  // [times]
  std::vector<double> variance;             // [times] Greenwood's variance of F
  std::vector<std::int64_t> observed;       // [times] members observed at t (with the event by t, or without it beyond t)
  std::vector<std::int64_t> occurred;       // [times] members with the event by t
  std::vector<double> quantiles;            // [probabilities]
  std::int64_t members = 0, censored = 0;   // members, and those that ended without the event
  int replicates = 0;  // the replicates low and high come from (replicate_interval); 0: Wilson's interval
};

// The first times of one event over the members, and the time each member's observation ended.
class first_time_sample {
 public:
  // first: the member's first time of the event (NaN: it never occurred); ended: where its run ended
  // (its final time: t1, or earlier for a member that failed or that another event stopped).
  void add(double first, double ended) {
    if (std::isnan(first))
      points_.push_back({ended, false});
    else
      points_.push_back({first, true});
  }

  // F, its `level` interval and n at each of `times` (sorted), and the quantiles of `probabilities`.
  first_time_distribution estimate(const std::vector<double>& times, const std::vector<double>& probabilities,
                                   double level = 0.95) const {
    std::vector<std::pair<double, bool>> points = points_;
    // By time; at one time the first times before the censorings (n_i counts those censored at t_i).
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second && !b.second);
    });
    first_time_distribution d;
    d.members = static_cast<std::int64_t>(points.size());
    d.censored = std::count_if(points.begin(), points.end(), [](const auto& p) { return !p.second; });
    // The steps of S at the distinct first times: (t_i, S after t_i, Greenwood's sum after t_i).
    // F after t_i: the share occurred / members while no member was censored before t_i (the product
    // would only round it), Kaplan-Meier's 1 - S from the first censoring on.
    struct step {
      double t, fraction, survival, greenwood;
      std::int64_t occurred;  // members with T <= t_i
    };
    std::vector<step> steps;
    std::int64_t at_risk = d.members, occurred = 0;
    double survival = 1.0, greenwood = 0.0;
    bool censored_yet = false;
    for (std::size_t i = 0; i < points.size();) {
      const double t = points[i].first;
      std::int64_t events = 0, censored = 0;
      for (; i < points.size() && points[i].first == t; ++i) (points[i].second ? events : censored) += 1;
      if (events > 0) {
        survival *= 1.0 - static_cast<double>(events) / static_cast<double>(at_risk);
        if (at_risk > events)
          greenwood += static_cast<double>(events) / (static_cast<double>(at_risk) * static_cast<double>(at_risk - events));
        occurred += events;
        const double share = static_cast<double>(occurred) / static_cast<double>(d.members);
        steps.push_back({t, censored_yet ? 1.0 - survival : share, survival, greenwood, occurred});
      }
      at_risk -= events + censored;
      censored_yet = censored_yet || censored > 0;
    }
    // Members observed at t: every one with the event (T <= t, or T > t and so observed without it at
    // t), and those censored at t or later.
    std::vector<double> censor_times;
    for (const auto& p : points)
      if (!p.second) censor_times.push_back(p.first);  // sorted, as points are
    const auto with_event = d.members - static_cast<std::int64_t>(censor_times.size());
    for (const double t : times) {
      const auto last = std::upper_bound(steps.begin(), steps.end(), t, [](double x, const step& s) { return x < s.t; });
      const double s = last == steps.begin() ? 1.0 : std::prev(last)->survival;
      const double f = last == steps.begin() ? 0.0 : std::prev(last)->fraction;
      const double sum = last == steps.begin() ? 0.0 : std::prev(last)->greenwood;
      const std::int64_t by_t = last == steps.begin() ? 0 : std::prev(last)->occurred;
      const auto censored_before = static_cast<std::int64_t>(
          std::lower_bound(censor_times.begin(), censor_times.end(), t) - censor_times.begin());
      const std::int64_t n = with_event + static_cast<std::int64_t>(censor_times.size()) - censored_before;
      const double variance = s * s * sum;
      // Dorey & Korn's effective sample size; n itself where nothing was censored before t (then F is
      // k / n exactly) or where the variance vanishes.
      double n_effective = static_cast<double>(n);
      if (censored_before > 0 && variance > 0.0) n_effective = f * (1.0 - f) / variance;
      const exceedance_estimate e = censored_before > 0 ? estimate_fraction(f, n_effective, level)
                                                        : estimate_exceedance(by_t, n, level);
      d.fraction.push_back(n > 0 || by_t > 0 ? f : std::numeric_limits<double>::quiet_NaN());
      d.variance.push_back(variance);
      d.low.push_back(e.low);
      d.high.push_back(e.high);
      d.observed.push_back(n);
      d.occurred.push_back(by_t);
    }
    for (const double p : probabilities) {
      double q = std::numeric_limits<double>::quiet_NaN();
      for (const step& s : steps)
        if (s.fraction >= p) {
          q = s.t;
          break;
        }
      d.quantiles.push_back(q);
    }
    return d;
  }

  std::size_t size() const { return points_.size(); }

 private:
  std::vector<std::pair<double, bool>> points_;  // (T, true) or (C, false)
};

// The interval of F(t) from the spread over R >= 2 replicates of a randomized quasi-Monte Carlo design:
// Sobol' points with a random digital shift per replicate, or Latin hypercubes with a permutation per
// replicate (study/samplers.hpp). The members of one replicate are not independent draws, and for a
// smooth enough F their estimate errs far less than the binomial interval says; the replicates are
// independent randomizations of one design, so their estimates F_r(t) are independent draws of one
// unbiased estimator, and their spread estimates its error (L'Ecuyer & Lemieux 2002, "Recent advances
// in randomized quasi-Monte Carlo methods", in Modeling Uncertainty, Kluwer). The interval is
// Student's for their mean, F_bar +- t_{R-1,(1+level)/2} s / sqrt(R), s their standard deviation, centred
// on the pooled estimate of `pooled` (their mean where no member was censored before t, the replicates
// being of one size), and clipped to [0, 1]. Where every replicate gives the same F (s = 0: before the
// first event, or where every member has had it) their spread says nothing, and Wilson's interval of
// the pooled sample stays. `replicates` holds each replicate's members alone.
inline void replicate_interval(first_time_distribution& pooled, const std::vector<first_time_sample>& replicates,
                               const std::vector<double>& times, double level = 0.95) {
  const std::size_t R = replicates.size();
  if (R < 2) return;
  std::vector<first_time_distribution> each;
  for (const first_time_sample& r : replicates) each.push_back(r.estimate(times, {}, level));
  const double t = replicate_t(static_cast<std::int64_t>(R), level);
  for (std::size_t s = 0; s < times.size(); ++s) {
    double mean = 0.0;
    for (const first_time_distribution& e : each) mean += e.fraction[s];
    mean /= static_cast<double>(R);
    double sum_of_squares = 0.0;
    for (const first_time_distribution& e : each) sum_of_squares += (e.fraction[s] - mean) * (e.fraction[s] - mean);
    const double spread = std::sqrt(sum_of_squares / static_cast<double>(R - 1));
    if (!(spread > 0.0)) continue;  // no spread, or a replicate without members (NaN): Wilson's stays
    const double half = t * spread / std::sqrt(static_cast<double>(R));
    pooled.low[s] = std::max(0.0, pooled.fraction[s] - half);
    pooled.high[s] = std::min(1.0, pooled.fraction[s] + half);
  }
  pooled.replicates = static_cast<int>(R);
}

}  // namespace lockstep::study
