// tests/support/doubled_pendulum.hpp — a test-only model whose constraint Jacobian has two identical
// rows: without the solver's rank decision every Newton matrix would be singular; with it the second
// row is dropped (formulation/constraint_rank.hpp) and the member succeeds.
#pragma once

#include <cmath>

#include "lockstep/core/linalg.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep::test {

// A pendulum whose constraint is listed twice: G has two identical rows. Test-only.
struct doubled_pendulum_constraint {
  static constexpr const char* name = "doubled_pendulum_constraint";
  static constexpr const char* description = "pendulum with its constraint repeated (redundant)";
  static constexpr int n = 2, m = 2, k = 0;
  static constexpr int n_params = 3;
  static constexpr named_value params[n_params] = {{"m", 1.0, ""}, {"L", 1.0, ""}, {"g", 9.81, ""}};
  static constexpr int n_inputs = 0;

  template <class T, class P>
  static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    M(0, 0) = T(p[0]);
    M(1, 1) = T(p[0]);
    return M;
  }
  template <class T, class P>
  static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {
    vec<T, n> Q;
    Q[1] = T(-(p[0] * p[2]));
    return Q;
  }
  template <class T, class P>
  static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
    phi[1] = phi[0];
    return phi;
  }
  static void initial_state(const double* p, const double*, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = p[1] * std::sin(1.0);
    q0[1] = -p[1] * std::cos(1.0);
    v0[0] = v0[1] = 0.0;
  }
};

}  // namespace lockstep::test
