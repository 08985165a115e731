// lockstep/method/interpolation.hpp — Newton divided differences over the recent solution points.
//
// BDF is interpolation: the predictor is the polynomial through the last k + 1 points extrapolated
// to t_n, the corrector's derivative is that of the polynomial through y_n and the last k points, the
// error estimate is a divided difference, and dense output evaluates the same polynomial. The nodes are
// given newest first. The oldest node may repeat the one before it (a confluent, Hermite node) whose
// first divided difference is the known derivative y'(t0): that is how the first steps use the
// consistent initial derivative without inventing a past point.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"

namespace lockstep {

// In place: dd[0..count-1] holds the values at nodes x[0..count-1] on entry and the Newton coefficients
// y[x0], y[x0, x1], ..., y[x0 .. x_{count-1}] on exit. If confluent_last, x[count-1] == x[count-2] and
// `derivative` is y'(x[count-1]) (dd[count-1] may hold anything on entry).
template <int NY>
LOCKSTEP_HD void divided_differences(int count, const double* x, vec<double, NY>* dd, bool confluent_last,
                                     const vec<double, NY>& derivative) {
  for (int level = 1; level < count; ++level)
    for (int i = count - 1; i >= level; --i) {
      if (level == 1 && confluent_last && i == count - 1) {
        dd[i] = derivative;
        continue;
      }
      const double inv = 1.0 / (x[i] - x[i - level]);
      for (int j = 0; j < NY; ++j) dd[i][j] = (dd[i][j] - dd[i - 1][j]) * inv;
    }
}

// The Newton coefficients over the nodes (x[0], x[1 .. count-1]) from the value y0 at the new node x[0]
// and the coefficients older[j] = y[x_1 .. x_{j+1}] over the nodes that follow it: dd[0] = y0 and
//     dd[j] = y[x_0 .. x_j] = (y[x_1 .. x_j] - y[x_0 .. x_{j-1}]) / (x_j - x_0),
// one new entry per level, O(count) vectors instead of the table's O(count^2). The result is bitwise
// that of divided_differences over all count nodes: there, too, entry y[x_0 .. x_j] is formed as
// (y[x_1 .. x_j] - y[x_0 .. x_{j-1}]) * (1 / (x_j - x_0)), and older's entries are themselves the table
// over x_1 .. (each entry depends only on its own nodes, however many follow). If x[1] is a confluent
// copy of x[0] (count == 2 then), `derivative_at_x0` is y'(x[0]) and becomes dd[1]. Levels
// [first, count) are formed (those below first are already in dd: a table extended later), components
// [begin, end) only: the rest of dd is left as it is.
template <int NY>
LOCKSTEP_HD void prepend_node(int first, int count, const double* x, const vec<double, NY>& y0,
                              const vec<double, NY>* older, const vec<double, NY>* derivative_at_x0,
                              vec<double, NY>* dd, int begin = 0, int end = NY) {
  for (int j = first; j < count; ++j) {
    if (j == 0) {
      for (int i = begin; i < end; ++i) dd[0][i] = y0[i];
    } else if (j == 1 && derivative_at_x0 != nullptr) {
      for (int i = begin; i < end; ++i) dd[1][i] = (*derivative_at_x0)[i];
    } else {
      const double inv = 1.0 / (x[j] - x[0]);
      for (int i = begin; i < end; ++i) dd[j][i] = (older[j - 1][i] - dd[j - 1][i]) * inv;
    }
  }
}

// P(t) and P'(t) for the Newton form with coefficients dd and nodes x (Horner with the product rule).
template <int NY>
LOCKSTEP_HD void evaluate_newton_form(int count, const double* x, const vec<double, NY>* dd, double t,
                                      vec<double, NY>& value, vec<double, NY>* derivative) {
  value = dd[count - 1];
  vec<double, NY> dvalue{};
  for (int i = count - 2; i >= 0; --i) {
    const double w = t - x[i];
    for (int j = 0; j < NY; ++j) {
      dvalue[j] = dvalue[j] * w + value[j];
      value[j] = value[j] * w + dd[i][j];
    }
  }
  if (derivative) *derivative = dvalue;
}

}  // namespace lockstep
