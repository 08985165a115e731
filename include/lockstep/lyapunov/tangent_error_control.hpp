// lockstep/lyapunov/tangent_error_control.hpp — the weighted norm of a tangent direction's local error (the
// tangents' error control of lyapunov/tangent.hpp), shared by the BDF and Radau IIA tangent members.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/tolerance_calibration.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

namespace detail {

// How a direction's error is weighted: for a direction in the initial state relative to its own size,
// weights 1 / (tol (|s_j| + max_i |s_i|)) (lyapunov/tangent.hpp header: such tangents have no natural
// absolute scale, and the Lyapunov QR keeps them of size 1); for the sensitivity to a parameter, which
// starts at zero when the initial state does not depend on it, IDAS's scaling by the parameter's size
// (its pbar, IDASetSensParams): weights 1 / (tol |s_j| + atol'_group / pbar),
// atol' the state's internal absolute tolerance (method/bdf.hpp) and pbar = |p_j| (1 when p_j = 0).
struct tangent_weighting {
  double tol = 0.0;         // BDF's internal rtol'
  double absolute_q = 0.0;  // 0: relative to the direction's size
  double absolute_v = 0.0;
};

template <class Model>
LOCKSTEP_HD double tangent_error_norm(const state_vector<Model>& e, const state_vector<Model>& s,
                                      const tangent_weighting& wt) {
  using L = state_layout<Model>;
  double size = 0.0;
  const bool relative = !(wt.absolute_q > 0.0);
  if (relative) {
    for (int j = L::q; j < L::lambda; ++j) size = max(size, abs(s[j]));
    if (!(size > 0.0)) return 0.0;
  }
  double sum = 0.0;
  for (int j = L::q; j < L::lambda; ++j) {
    const double floor = relative ? wt.tol * size : (j < L::v ? wt.absolute_q : wt.absolute_v);
    const double x = e[j] / (wt.tol * abs(s[j]) + floor);
    sum += x * x;
  }
  return sqrt(sum / (L::lambda - L::q));
}

// Whether every entry of the first `count` directions is finite. A tangent that is not (a direction
// given as NaN, a derivative that overflows) must end the member: its error would not stop the step,
// as the attempt takes the largest of the estimates with max(), which drops a NaN.
template <class Model, int Capacity>
LOCKSTEP_HD bool tangents_finite(const state_vector<Model> (&tangents)[Capacity], int count) {
  for (int d = 0; d < count; ++d)
    for (int j = 0; j < state_layout<Model>::size; ++j)
      if (!is_finite(tangents[d][j])) return false;
  return true;
}

// The weighting of direction d of a member (see tangent_weighting).
// At the method's internal tolerances (method/tolerance_calibration.hpp), as the member's own error test.
LOCKSTEP_HD tangent_weighting weighting_for(int parameter, const double* p, const solver_options& opt) {
  tangent_weighting wt;
  const double f = internal_tolerance_factor(opt);
  wt.tol = f * opt.rtol;
  if (parameter >= 0) {
    const double pbar = p[parameter] != 0.0 ? abs(p[parameter]) : 1.0;
    wt.absolute_q = f * opt.atol_q / pbar;
    wt.absolute_v = f * opt.atol_v / pbar;
  }
  return wt;
}

}  // namespace detail

}  // namespace lockstep
