// Must NOT compile: a model without `mass`. lockstep_check_model names the missing piece
// ("missing mass"); tests/model/CMakeLists.txt runs the compiler and checks both the failure and the
// message (expect_failure.cmake).
#include "lockstep/model/concept.hpp"

namespace {

struct bad_model {
  static constexpr const char* name = "bad_model";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 1;
  static constexpr lockstep::named_value params[n_params] = {{"L", 1.0, "length"}};
  static constexpr int n_inputs = 1;
  static constexpr lockstep::named_value inputs[n_inputs] = {{"theta0", 1.0, "angle"}};

  // no mass(q, p)

  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    return {};
  }
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[0] * p[0]);
    return phi;
  }
  static void initial_state(const double*, const double*, lockstep::vec<double, n>&, lockstep::vec<double, n>&) {}
};

}  // namespace

static_assert(lockstep::lockstep_check_model<bad_model>());
