// lockstep/method/interpolation.hpp — Newton divided differences over the recent solution points.
//
// BDF is interpolation: the predictor is the polynomial through the last k + 1 points extrapolated
// to t_n, the corrector's derivative is that of the polynomial through y_n and the last k points, the
// error estimate is a divided difference, and dense output evaluates the same polynomial. The nodes are
// given newest first. The oldest node may repeat the one before it (a confluent, Hermite node) whose
// first divided difference is the known derivative y'(t0): that is how the first steps use the
// consistent initial derivative without inventing a past point.
#pragma once

#include <type_traits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep::detail {

// divided_differences (the Newton coefficients over given nodes), prepend_node (the coefficients with a
// new node in front, from those over the nodes behind it) and evaluate_newton_form (P(t) and P'(t)) on
// doubles: a text compiled also for SIMD packs, one lane per member, each with its own count of nodes
// (see its header).
#include "lockstep/method/newton_form_generic.inc"

}  // namespace lockstep::detail

namespace lockstep {

// In place: dd[0..count-1] holds the values at nodes x[0..count-1] on entry and the Newton coefficients
// y[x0], y[x0, x1], ..., y[x0 .. x_{count-1}] on exit. If confluent_last, x[count-1] == x[count-2] and
// `derivative` is y'(x[count-1]) (dd[count-1] may hold anything on entry).
template <int NY>
LOCKSTEP_HD void divided_differences(int count, const double* x, vec<double, NY>* dd, bool confluent_last,
                                     const vec<double, NY>& derivative) {
  detail::divided_differences(count, x, dd, confluent_last, &derivative);
}

}  // namespace lockstep
