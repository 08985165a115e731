// lockstep/formulation/minimum_norm_multipliers.hpp — the minimum-norm multipliers of a redundant
// constraint set, from those of its independent rows.
//
// With dependent rows in B = [G; A] (formulation/constraint_rank.hpp), the constraint force
// f = B^T mu, mu = (lambda, nu), is unique but mu is not: any z with B^T z = 0 can be added. The solver
// computes the independent-subset multipliers mu_I (0 on the dropped rows). The minimum-norm ones are
//
//     mu_min = argmin |mu|  subject to  B^T mu = B^T mu_I,   i.e.   mu_min = mu_I - P_Z mu_I,
//
// P_Z the orthogonal projector onto null(B^T) (the least-squares characterization of the
// pseudo-inverse solution; Golub & Van Loan, "Matrix Computations", 3rd ed. 1996, section 5.5). A basis
// of null(B^T) comes from the dependencies themselves: a dropped row b_a is the combination
// b_a = sum_i c_ai b_i of the kept rows, c_a solving the kept rows' normal equations
// (B_I B_I^T) c_a = B_I b_a^T, so z_a = e_a - c_a satisfies B^T z_a = 0, and the z_a of the d dropped
// rows are independent (each has a 1 where the others have 0). Then P_Z mu = Z (Z^T Z)^-1 Z^T mu.
//
// Both small systems are SPD and factored by Cholesky in the fixed size of B, the dropped rows (or
// the kept ones) made identity rows, as the projections do (formulation/projection.hpp). The rows are
// taken as the model states them: the minimum norm is that of the model's own scaling of its
// constraints (a row written twice as large gets the larger share of the force).
#pragma once

#include <cstdint>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"

namespace lockstep {

// mu (the independent-subset multipliers of the R rows B, 0 where `dropped` is set) becomes the
// minimum-norm multipliers. Returns success, or singular_matrix when the kept rows are not
// independent after all (mu unchanged then).
template <int R, int C>
LOCKSTEP_HD member_status make_minimum_norm(const mat<double, R, C>& B, std::uint64_t dropped, vec<double, R>& mu) {
  if (dropped == 0) return member_status::success;
  // The kept rows' Gram matrix, with identity rows for the dropped ones.
  mat<double, R, R> gram;
  for (int a = 0; a < R; ++a)
    for (int b = 0; b < R; ++b) {
      double s = 0.0;
      if (!row_dropped(dropped, a) && !row_dropped(dropped, b))
        for (int j = 0; j < C; ++j) s += B(a, j) * B(b, j);
      gram(a, b) = s;
    }
  for (int a = 0; a < R; ++a)
    if (row_dropped(dropped, a)) gram(a, a) = 1.0;
  if (cholesky_factor(gram).info != lu_ok) return member_status::singular_matrix;
  // Column a of Z: z_a = e_a - c_a for a dropped row, 0 otherwise.
  mat<double, R, R> Z;
  for (int a = 0; a < R; ++a) {
    if (!row_dropped(dropped, a)) continue;
    vec<double, R> c;
    for (int i = 0; i < R; ++i) {
      double s = 0.0;
      if (!row_dropped(dropped, i))
        for (int j = 0; j < C; ++j) s += B(i, j) * B(a, j);
      c[i] = s;
    }
    cholesky_solve(gram, c);
    for (int i = 0; i < R; ++i) Z(i, a) = (i == a ? 1.0 : 0.0) - c[i];
  }
  // (Z^T Z) w = Z^T mu on the dropped rows (identity rows on the kept ones), then mu -= Z w.
  mat<double, R, R> ZtZ;
  vec<double, R> w;
  for (int a = 0; a < R; ++a) {
    w[a] = 0.0;
    for (int b = 0; b < R; ++b) ZtZ(a, b) = 0.0;
    if (!row_dropped(dropped, a)) {
      ZtZ(a, a) = 1.0;
      continue;
    }
    for (int i = 0; i < R; ++i) w[a] += Z(i, a) * mu[i];
    for (int b = 0; b < R; ++b) {
      if (!row_dropped(dropped, b)) continue;
      double s = 0.0;
      for (int i = 0; i < R; ++i) s += Z(i, a) * Z(i, b);
      ZtZ(a, b) = s;
    }
  }
  if (cholesky_factor(ZtZ).info != lu_ok) return member_status::singular_matrix;
  cholesky_solve(ZtZ, w);
  for (int i = 0; i < R; ++i) {
    double s = 0.0;
    for (int a = 0; a < R; ++a)
      if (row_dropped(dropped, a)) s += Z(i, a) * w[a];
    mu[i] = mu[i] - s;
  }
  return member_status::success;
}

}  // namespace lockstep
