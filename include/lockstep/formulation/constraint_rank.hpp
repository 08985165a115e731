// lockstep/formulation/constraint_rank.hpp — which rows of a constraint Jacobian are independent:
// the one rank decision for redundant constraints, made by the model doctor (`lockstep check`) and
// meant for the solver, host and device alike.
//
// The rows are normalized to unit length first: a constraint's units or a factor in front of it say
// nothing about its independence, and a row of G measured in metres must not outvote one in radians.
// They are then taken in the model's order by modified Gram-Schmidt with one re-orthogonalization
// ("twice is enough": Giraud, Langou, Rozloznik & van den Eshof, "Rounding error analysis of the
// classical Gram-Schmidt orthogonalization process", Numerische Mathematik 2005). The distance of row
// i,
//
//     d_i = || u_i - P_i u_i ||,   u_i = g_i / |g_i|,   P_i the projector onto the independent rows before i,
//
// is the sine of the angle between the row and their span: 0 for an exact combination (a few ulps in
// floating point), 1 for a row orthogonal to them. Row i is dependent when d_i <= drop. The earlier
// rows win: of a redundant set, the ones listed last are the dependent ones, so a model's author
// chooses which constraints a solver keeps by their order.
//
// Hysteresis. Near a configuration where the rank changes, d_i passes through any single threshold
// back and forth from step to step. Given the previous decision, a row that was dependent becomes
// independent again only when d_i > release (> drop): between the two thresholds a row keeps its
// state. The first decision (previous = 0) uses drop for every row.
//
// The thresholds: exactly redundant rows (a duplicated joint, a loop closed twice) come out at
// d_i ~ 1e-16 ... 1e-13 when G is computed by automatic differentiation at a consistent state; rows
// that are dependent only at an instant (a singular configuration) have d_i proportional to the
// distance from it. drop = 1e-9 separates the first from all but the last 1e-9 of the second;
// release = 1e-6 is three decades above it.
#pragma once

#include <cstdint>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"

namespace lockstep {

struct constraint_rank_tolerances {
  double drop = 1e-9;     // a row at most this far from the span of the rows before it is dependent
  double release = 1e-6;  // a row that was dependent is independent again only beyond this distance
};

// At most 64 rows: the decision is a bit mask (bit i: row i is dependent).
inline constexpr int constraint_rank_max_rows = 64;

struct constraint_rank_result {
  int rank = 0;
  std::uint64_t dependent = 0;
};

// The rank decision for the rows x cols matrix J (row i at J + i * stride). basis: rows * cols doubles
// of workspace (the orthonormal rows); distance: rows doubles for d_i, or nullptr. A row with a
// non-finite entry has d_i = NaN and counts as dependent (the caller sees the NaN: a model that
// produces one is defective, not redundant). rows <= constraint_rank_max_rows.
LOCKSTEP_HD constraint_rank_result constraint_rank(const double* J, int rows, int cols, int stride, double* basis,
                                                          double* distance, const constraint_rank_tolerances& tol = {},
                                                          std::uint64_t previous = 0) {
  constraint_rank_result result;
  for (int i = 0; i < rows; ++i) {
    const double* g = J + static_cast<long>(i) * stride;
    double* u = basis + static_cast<long>(result.rank) * cols;
    double length = 0.0;
    for (int j = 0; j < cols; ++j) length += g[j] * g[j];
    length = sqrt(length);
    double d = 0.0;
    if (!is_finite(length)) {
      d = length - length;  // NaN
    } else if (length > 0.0) {
      for (int j = 0; j < cols; ++j) u[j] = g[j] / length;
      for (int pass = 0; pass < 2; ++pass) {
        for (int r = 0; r < result.rank; ++r) {
          const double* q = basis + static_cast<long>(r) * cols;
          double projection = 0.0;
          for (int j = 0; j < cols; ++j) projection += q[j] * u[j];
          for (int j = 0; j < cols; ++j) u[j] -= projection * q[j];
        }
      }
      for (int j = 0; j < cols; ++j) d += u[j] * u[j];
      d = sqrt(d);
    }
    if (distance != nullptr) distance[i] = d;
    const bool was_dependent = ((previous >> i) & 1u) != 0;
    const double threshold = was_dependent ? tol.release : tol.drop;
    if (d > threshold) {  // false for NaN
      for (int j = 0; j < cols; ++j) u[j] /= d;
      ++result.rank;
    } else {
      result.dependent |= std::uint64_t{1} << i;
    }
  }
  return result;
}

// The same for a fixed-size matrix (a member's G, or [G; A]).
template <int R, int C>
LOCKSTEP_HD constraint_rank_result constraint_rank(const mat<double, R, C>& J, vec<double, R>* distance = nullptr,
                                                   const constraint_rank_tolerances& tol = {}, std::uint64_t previous = 0) {
  static_assert(R <= constraint_rank_max_rows, "the rank decision is a 64-bit mask");
  mat<double, R, C> basis;
  return constraint_rank(J.a, R, C, C, basis.a, distance != nullptr ? distance->a : nullptr, tol, previous);
}

}  // namespace lockstep
