// lockstep/multibody/assembly.hpp — position and velocity analysis: a consistent start from the joint
// values a user gives.
//
// A mechanism's start is given joint by joint: some coordinates (and rates) are prescribed, the others
// are unknowns, solved so that the constraints hold, Phi(0, q) = 0 and G v + Phi_t = 0. The positions
// are found by Gauss-Newton steps on the unknowns from the user's guesses, halved until |Phi| falls, each
// step the Levenberg-Marquardt solution (G_f^T G_f + mu 1) dq_f = -G_f^T Phi with a tiny mu, which is the
// least-squares step of least norm when the loop equations are redundant (a planar loop, or a joint
// stated twice) and stays defined at a singular assembly (Nocedal & Wright, Numerical Optimization, 2006,
// section 10.3). The rates are one such step of the linear velocity equations. Where the loop cannot
// close, the best least-squares configuration is returned: the run's start check then reports the
// constraint residual it leaves, member by member.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep::multibody {

namespace detail {

// The least-squares step of least norm over the unknown entries (free[j]) of G dx = -r.
template <int M, int N>
LOCKSTEP_HD void least_squares_step(const mat<double, M, N>& G, const vec<double, M>& r, const bool* free, vec<double, N>& x) {
  mat<double, N, N> A;
  vec<double, N> b;
  double scale = 0.0;
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      if (free[i] && free[j])
        for (int k = 0; k < M; ++k) s += G(k, i) * G(k, j);
      A(i, j) = s;
    }
    double s = 0.0;
    if (free[i])
      for (int k = 0; k < M; ++k) s -= G(k, i) * r[k];
    b[i] = s;
    scale = A(i, i) > scale ? A(i, i) : scale;
  }
  // A relative damping, with a floor: where G is only rounding noise (constraints that hold whatever
  // the unknowns), the step stays of the noise's size instead of growing to O(1).
  const double mu = 1e-13 * scale + 1e-12;
  for (int i = 0; i < N; ++i) A(i, i) = free[i] ? A(i, i) + mu : 1.0;
  if (cholesky_factor(A).info != lu_ok) return;
  cholesky_solve(A, b);
  for (int i = 0; i < N; ++i)
    if (free[i]) x[i] += b[i];
}

}  // namespace detail

// Solves for the entries of q (and v) not marked given, from their values on entry as the first guess.
template <class Model>
LOCKSTEP_HD void assemble(const double* p, vec<double, Model::n>& q, vec<double, Model::n>& v, const bool* position_given,
              const bool* velocity_given) {
  constexpr int n = Model::n, m = Model::m;
  if constexpr (m > 0) {
    bool free_q[n], free_v[n];
    bool any_q = false, any_v = false;
    for (int j = 0; j < n; ++j) {
      free_q[j] = !position_given[j];
      free_v[j] = !velocity_given[j];
      any_q = any_q || free_q[j];
      any_v = any_v || free_v[j];
    }
    if (any_q) {
      // Gauss-Newton with backtracking: a step that does not reduce |Phi|_2 is halved, up to 30 times
      // (a guess far from the assembly can overshoot); no reducing step left means a minimum of |Phi|.
      auto squared = [&](const vec<double, n>& x) {
        const vec<double, m> phi = Model::template constraint<double, double>(0.0, x, p);
        double s = 0.0;
        for (int i = 0; i < m; ++i) s += phi[i] * phi[i];
        return s;
      };
      // Converged where |Phi|_2 reaches rounding: 1e-14 (1 + |q|_inf).
      auto converged = [&](double squared_size) {
        double largest = 0.0;
        for (int j = 0; j < n; ++j) largest = q[j] > largest ? q[j] : (-q[j] > largest ? -q[j] : largest);
        const double floor = 1e-14 * (1.0 + largest);
        return squared_size <= floor * floor;
      };
      double size = squared(q);
      for (int iteration = 0; iteration < 100 && !converged(size); ++iteration) {
        const auto lin = constraint_linearize<Model>(0.0, q, p);
        vec<double, n> step{};
        detail::least_squares_step(lin.G, lin.phi, free_q, step);
        bool reduced = false;
        for (int halving = 0; halving < 30 && !reduced; ++halving) {
          vec<double, n> trial = q;
          for (int j = 0; j < n; ++j) trial[j] += step[j];
          const double trial_size = squared(trial);
          if (trial_size < size) {
            q = trial;
            size = trial_size;
            reduced = true;
          }
          for (int j = 0; j < n; ++j) step[j] *= 0.5;
        }
        if (!reduced) break;
      }
    }
    if (any_v) {
      for (int pass = 0; pass < 2; ++pass) {  // the second pass mends the first's rounding
        const auto lin = constraint_linearize<Model>(0.0, q, p);
        vec<double, m> r;
        for (int i = 0; i < m; ++i) {
          r[i] = lin.phi_t[i];
          for (int j = 0; j < n; ++j) r[i] += lin.G(i, j) * v[j];
        }
        detail::least_squares_step(lin.G, r, free_v, v);
      }
    }
  }
}

}  // namespace lockstep::multibody
