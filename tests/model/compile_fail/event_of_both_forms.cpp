// Must NOT compile: a model that declares its event function in both forms, of the state alone and of the
// accelerations and multipliers too. Which one the stepper calls would be a guess, so lockstep_check_model
// says that one form is wanted; see expect_failure.cmake.
#include "lockstep/model/pendulum.hpp"

namespace {

struct bad_model : lockstep::models::pendulum {
  static constexpr int n_events = 1;
  static constexpr lockstep::event_declaration events[n_events] = {
      {"x", lockstep::event_direction::both, lockstep::event_action::record, "the bob's x"}};
  template <class T, class P>
  static lockstep::vec<T, n_events> event(const T&, const lockstep::vec<T, n>& q, const lockstep::vec<T, n>&, const P*) {
    return lockstep::vec<T, n_events>::filled(q[0]);
  }
  template <class T, class P>
  static lockstep::vec<T, n_events> event(const T&, const lockstep::vec<T, n>& q, const lockstep::vec<T, n>&,
                                          const lockstep::vec<T, n>&, const lockstep::vec<T, m>&,
                                          const lockstep::vec<T, k>&, const P*) {
    return lockstep::vec<T, n_events>::filled(q[0]);
  }
};

}  // namespace

static_assert(lockstep::lockstep_check_model<bad_model>());
