// Must NOT compile: a model whose `constraint` returns a scalar instead of vec<T, m>. lockstep_check_model
// says so ("constraint returns the wrong type"), not that it is missing; see expect_failure.cmake.
#include "lockstep/model/pendulum.hpp"

namespace {

// The built-in pendulum, its constraint returning T for m = 1 where the library expects vec<T, m>.
struct bad_model : lockstep::models::pendulum {
  template <class T, class P>
  static T constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    return 0.5 * (q[0] * q[0] + q[1] * q[1] - p[1] * p[1]);
  }
};

}  // namespace

static_assert(lockstep::lockstep_check_model<bad_model>());
