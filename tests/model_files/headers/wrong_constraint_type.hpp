// tests/model_files/headers/wrong_constraint_type.hpp — the built-in pendulum with a constraint that
// returns a scalar where the library expects vec<T, m> (even for m = 1): the model concept's message
// must point at this file's line 16, where constraint is declared, not at lockstep's own headers.
#pragma once

#include "lockstep/model/pendulum.hpp"

struct scalar_constraint : lockstep::models::pendulum {
  static constexpr const char* name = "scalar_constraint";
  using pendulum::mass;  // what makes the struct a model candidate (docs/MODEL-FILES.md)
  using pendulum::force;
  using pendulum::initial_state;

  template <class T, class P>
  static T
  constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    return 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
  }
};
