// tests/support/fading_damper.hpp — a test-only mechanism that is stiff, then not: the member that
// method auto (method/auto_switch.hpp) switches to Radau IIA 5 and back, with an exact solution.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep::test {

// A particle on the line y = x / 2 whose motion along it follows g(t) = sin t (y = sin(t) / 2) through a
// damper and a spring towards the moving target (Prothero & Robinson's construction, 1974, "On the
// stability and accuracy of one-step methods for solving stiff systems of ordinary differential
// equations", Math. Comp. 28, for a mechanism):
//     q'' = g'' - c(t) (q' - g') - (q - g),   c(t) = C / (1 + exp(20 (t - 1))) + 1,
// with g = (sin t, sin(t) / 2). q = g exactly, with lambda = 0, from q0 = g(0), v0 = g'(0), whatever C;
// a deviation along the line decays like e'' + c e' + e = 0, so the member is stiff while C is large
// and t < 1 (an eigenvalue near -C) and not once the damping has fallen to 1 (t > 1.4 for C = 10^4).
// Restated = true states the constraint twice (the second row 2 y - x, dependent on the first): the
// rank decision drops a row, which auto must carry between its phases (constraint_rank.hpp).
template <bool Restated>
struct fading_damper_model {
  static constexpr const char* name = "fading_damper";
  static constexpr const char* description = "particle on y = x / 2 tracking sin t through a damper that fades";
  static constexpr int n = 2;
  static constexpr const char* coordinate_names[n] = {"x", "y"};
  static constexpr int m = Restated ? 2 : 1;
  static constexpr int k = 0;
  static constexpr int n_params = 1;
  static constexpr named_value params[n_params] = {{"C", 1e4, "initial damping, fading at t = 1"}};
  static constexpr int n_inputs = 0;

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P*) {
    mat<T, n, n> M;
    M(0, 0) = T(1.0);
    M(1, 1) = T(1.0);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    const T s = sin(t), c = cos(t);
    const T damping = p[0] / (1.0 + exp(20.0 * (t - 1.0))) + 1.0;
    const double along[n] = {1.0, 0.5};
    vec<T, n> Q;
    for (int i = 0; i < n; ++i) Q[i] = -along[i] * s - damping * (v[i] - along[i] * c) - (q[i] - along[i] * s);
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P*) {
    vec<T, m> phi;
    phi[0] = q[1] - 0.5 * q[0];
    if constexpr (Restated) phi[1] = 2.0 * q[1] - q[0];
    return phi;
  }

  LOCKSTEP_HD static void initial_state(const double*, const double*, vec<double, n>& q0, vec<double, n>& v0) {
    q0[0] = 0.0;
    q0[1] = 0.0;
    v0[0] = 1.0;
    v0[1] = 0.5;
  }
};


}  // namespace lockstep::test
