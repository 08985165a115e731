// Must NOT compile: a model whose `force` lacks its time argument. lockstep_check_model says it cannot
// be called as the library calls it ("force cannot be called"), not that it is missing; see
// expect_failure.cmake.
#include "lockstep/model/pendulum.hpp"

namespace {

// The built-in pendulum, its force declared without t.
struct bad_model : lockstep::models::pendulum {
  template <class T, class P>
  static lockstep::vec<T, n> force(const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    return {};
  }
};

}  // namespace

static_assert(lockstep::lockstep_check_model<bad_model>());
