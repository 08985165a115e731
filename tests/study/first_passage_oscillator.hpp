// tests/study/first_passage_oscillator.hpp — an undamped oscillator x'' = -omega^2 x released at rest
// from x0 = A, with a stopping event when x first falls below -a: the first-passage time of
// first_times_study_test.py, whose distribution over a uniform A has a closed form.
//
// A member fails (model_not_finite) at t = t_fail: its force is then NaN (0 sqrt(t_fail - t)), so
// that members can be made to end early without the event, independently of A: the censored members
// of a Kaplan-Meier estimate.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/model/concept.hpp"

struct first_passage_oscillator {
  static constexpr const char* name = "first_passage_oscillator";
  static constexpr const char* description = "x'' = -omega^2 x from rest at x0; stops when x falls below -a";
  static constexpr int n = 1, m = 0, k = 0;
  static constexpr int n_params = 3;
  static constexpr lockstep::named_value params[n_params] = {
      {"omega", 1.0, "angular frequency [rad/s]"},
      {"a", 1.0, "the level, x = -a [m]"},
      {"t_fail", 1e300, "where the member fails (its force becomes NaN) [s]"},
  };
  static constexpr int n_inputs = 1;
  static constexpr lockstep::named_value inputs[n_inputs] = {{"x0", 1.5, "initial position, at rest [m]"}};
  static constexpr int n_events = 1;
  static constexpr lockstep::event_declaration events[n_events] = {
      {"below", lockstep::event_direction::falling, lockstep::event_action::stop, "x falls through -a"}};

  template <class T, class P>
  LOCKSTEP_HD static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    lockstep::mat<T, n, n> M;
    M(0, 0) = T(1.0);
    return M;
  }
  template <class T, class P>
  LOCKSTEP_HD static lockstep::vec<T, n> force(const T& t, const lockstep::vec<T, n>& q, const lockstep::vec<T, n>&,
                                               const P* p) {
    lockstep::vec<T, n> Q;
    Q[0] = -(p[0] * p[0]) * q[0] + 0.0 * sqrt(p[2] - t);
    return Q;
  }
  template <class T, class P>
  LOCKSTEP_HD static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>&, const P*) {
    lockstep::vec<T, m> none;
    return none;
  }
  template <class T, class P>
  LOCKSTEP_HD static lockstep::vec<T, n_events> event(const T&, const lockstep::vec<T, n>& q,
                                                      const lockstep::vec<T, n>&, const P* p) {
    lockstep::vec<T, n_events> g;
    g[0] = q[0] + p[1];
    return g;
  }
  LOCKSTEP_HD static void initial_state(const double*, const double* in, lockstep::vec<double, n>& q0,
                                        lockstep::vec<double, n>& v0) {
    q0[0] = in[0];
    v0[0] = 0.0;
  }
};
