// lockstep/stepper/quantities.hpp — a model's derived quantities at a saved state.
//
// A model may declare quantities z = h(t, q, v, q'', lambda, nu; p) (model/concept.hpp): what an
// engineer reads besides the coordinates, such as body poses, the positions of named points and joint
// reaction forces (the mechanism files generate them: docs/reference/mechanism-file.md). They are
// evaluated after the solve, from the saved (t, q, v) alone, so they are the same for every method,
// formulation, backend and SIMD width, and cost nothing while the members are advanced.
//
// q'', lambda and nu come from the acceleration-level system at (t, q, v)
// (method/initialize.hpp, accelerations_and_multipliers; Mantegazza & Masarati 2012, eqs. 122-123),
// not from the method's own multipliers: an index-3 method's lambda is of lower order than its q, and
// a save point's dense output lies between steps. Where the rows of [G; A] are dependent at q (redundant
// joints: formulation/constraint_rank.hpp), the multipliers are not unique; those of the independent
// rows are made the minimum-norm ones (formulation/minimum_norm_multipliers.hpp), which give the same
// total constraint force. Which members have such rows, /members/dropped_rows of results.h5 says.
#pragma once

#include <cstdint>
#include <limits>

#include "lockstep/core/linalg.hpp"
#include "lockstep/formulation/constraint_rank.hpp"
#include "lockstep/formulation/minimum_norm_multipliers.hpp"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep {

// The quantities z[quantity_count<Model>] of the state y = (q, v, ...) (state layout) at t: NaN
// everywhere where y is not finite (a save time the member never reached) or where the
// acceleration-level system is singular. Returns whether they were computed.
template <class Model>
bool evaluate_quantities(double t, const double* y, const double* p, double* z) {
  constexpr int n = Model::n, m = Model::m, k = Model::k, Z = quantity_count<Model>;
  if constexpr (Z > 0) {
    for (int j = 0; j < Z; ++j) z[j] = std::numeric_limits<double>::quiet_NaN();
    vec<double, n> q, v, a;
    for (int i = 0; i < n; ++i) {
      q[i] = y[i];
      v[i] = y[n + i];
      if (!is_finite(q[i]) || !is_finite(v[i])) return false;
    }
    vec<double, m> lambda;
    vec<double, k> nu;
    std::uint64_t dropped = 0;
    [[maybe_unused]] velocity_constraint_rows<Model> rows;
    if constexpr (decides_constraint_rank<Model>) {
      rows = velocity_constraints_at<Model>(t, q, p);
      dropped = constraint_rank<m + k, n>(rows.C).dependent;
    }
    if (accelerations_and_multipliers<Model>(t, q, v, p, a, lambda, nu, dropped) != member_status::success) return false;
    if constexpr (decides_constraint_rank<Model>) {
      if (dropped != 0) {
        vec<double, m + k> mu;
        for (int c = 0; c < m; ++c) mu[c] = lambda[c];
        for (int c = 0; c < k; ++c) mu[m + c] = nu[c];
        if (make_minimum_norm<m + k, n>(rows.C, dropped, mu) != member_status::success) return false;
        for (int c = 0; c < m; ++c) lambda[c] = mu[c];
        for (int c = 0; c < k; ++c) nu[c] = mu[m + c];
      }
    }
    Model::quantity_values(t, q, v, a, lambda, nu, p, z);
    return true;
  } else {
    (void)t, (void)y, (void)p, (void)z;
    return false;
  }
}

}  // namespace lockstep
