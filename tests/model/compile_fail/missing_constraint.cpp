// Must NOT compile: a model without `constraint`. lockstep_check_model names the missing piece
// ("missing constraint"); see expect_failure.cmake.
#include "lockstep/model/concept.hpp"

namespace {

struct bad_model {
  static constexpr const char* name = "bad_model";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 1;
  static constexpr lockstep::named_value params[n_params] = {{"L", 1.0, "length"}};
  static constexpr int n_inputs = 1;
  static constexpr lockstep::named_value inputs[n_inputs] = {{"theta0", 1.0, "angle"}};

  template <class T, class P>
  static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    return lockstep::mat<T, n, n>::identity();
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    return {};
  }

  // no constraint(t, q, p)

  static void initial_state(const double*, const double*, lockstep::vec<double, n>&, lockstep::vec<double, n>&) {}
};

}  // namespace

static_assert(lockstep::lockstep_check_model<bad_model>());
