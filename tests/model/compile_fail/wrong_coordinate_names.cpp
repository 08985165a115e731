// MUST NOT compile: the minimal model of well_formed.cpp with three coordinate names for its n = 2
// coordinates; lockstep_check_model names the mistake.
#include "lockstep/model/concept.hpp"

namespace {

struct wrong_names_model {
  static constexpr const char* name = "wrong_names_model";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr const char* coordinate_names[3] = {"x", "y", "z"};
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
  template <class T, class P>
  static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[0] * p[0]);
    return phi;
  }
  static void initial_state(const double*, const double*, lockstep::vec<double, n>&, lockstep::vec<double, n>&) {}
};

}  // namespace

static_assert(lockstep::lockstep_check_model<wrong_names_model>());
