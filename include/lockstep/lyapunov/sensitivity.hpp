// lockstep/lyapunov/sensitivity.hpp — the C++ API for forward sensitivities of one member: derivatives
// of its solution at t1 with respect to directions in its initial state and to its parameters, by the
// staggered direct method of lyapunov/tangent.hpp (BDF on ggl, or on index3 with fixed steps) and
// lyapunov/tangent_radau.hpp (Radau IIA on index3 and ggl); other options are refused with the reason
// in `message`.
//
// The sensitivities are those of the method's own solution (the accepted points, multipliers as
// the method computed them), with the step sizes and orders the member chose held fixed: gradient-based
// calibration and UQ get the exact derivative of what they evaluate, and it approximates the derivative
// of the exact solution to the method's accuracy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/lyapunov/tangent_radau.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep {

template <class Model>
struct sensitivity_result {
  member_status status = member_status::running;
  std::string message;  // why the options were refused (status invalid_input)
  double t_final = 0.0;
  state_vector<Model> y_final;  // the method's point at t1 (its own multipliers)
  // d y_final / d direction, state directions first, then one per requested parameter.
  std::vector<state_vector<Model>> sensitivities;
  member_counters counters;
};

// No per-step observer.
struct ignore_tangent_steps {
  template <class Y, class S>
  void operator()(double, const Y&, const S*, int) const {}
};

// Solves one member from (q0, v0) on [t0, t1] with the sensitivities along `directions` (phase vectors
// (dq0, dv0) of the given initial values, taken through consistent initialization) and to the
// parameters with the indices `parameters` (initial values held). on_step(t, y, tangents, count) is
// called after every accepted step (tests use it to check the linearized constraints). error_control:
// the sensitivities' local error limits the steps too (IDAS's IDASetSensErrCon; lyapunov/tangent.hpp), on by
// default; off, the steps are exactly those of solve_member. Methods: every_method, or the one method it
// is compiled for (method/methods.hpp, visit_method_in).
template <class Model, class OnStep = ignore_tangent_steps, class Methods = every_method>
sensitivity_result<Model> solve_member_with_sensitivities(const double* params, const vec<double, Model::n>& q0,
                                                          const vec<double, Model::n>& v0, double t0, double t1,
                                                          const solver_options& opt,
                                                          const std::vector<phase_vector<Model>>& directions,
                                                          const std::vector<int>& parameters,
                                                          OnStep&& on_step = OnStep{}, bool error_control = true) {
  static_assert(lockstep_check_model<Model>());
  constexpr int capacity = 2 * Model::n + Model::n_params;
  sensitivity_result<Model> out;
  for (const char* why : {tangent_check_options(opt), methods_refusal<Methods>(opt.method)})
    if (why[0] != '\0') {
      out.status = member_status::invalid_input;
      out.message = why;
      return out;
    }
  if (directions.size() + parameters.size() > static_cast<std::size_t>(capacity)) {
    out.status = member_status::invalid_input;
    out.message = "at most 2 n + n_params directions";
    return out;
  }
  for (int j : parameters)
    if (j < 0 || j >= Model::n_params) {
      out.status = member_status::invalid_input;
      out.message = "parameter index out of range";
      return out;
    }
  if (!(t1 > t0)) {
    out.status = member_status::invalid_input;
    out.message = "t1 must be greater than t0";
    return out;
  }
  visit_tangent_member<Model, capacity, Methods>(opt.method, [&]<class Member>() {
    auto tm = std::make_unique<Member>();  // plain data, large for big models: on the heap
    tangent_member_begin(*tm, t0, t1, q0, v0, params, opt, directions.data(), static_cast<int>(directions.size()),
                         parameters.data(), static_cast<int>(parameters.size()), error_control);
    while (tm->status == member_status::running && member_time(*tm) < t1) {
      if (tm->attempts++ >= opt.max_steps) {
        tm->status = member_status::max_steps;
        break;
      }
      const attempt_result r = tangent_member_attempt(*tm, t1, params, opt);
      if (r == attempt_result::accepted) on_step(member_time(*tm), member_point(*tm), current_tangents(*tm), tm->directions);
    }
    out.status = tm->status == member_status::running ? member_status::success : tm->status;
    out.counters = tm->counters;
    out.t_final = member_time(*tm);
    out.y_final = member_point(*tm);
    for (int d = 0; d < tm->directions; ++d) out.sensitivities.push_back(current_tangents(*tm)[d]);
  });
  return out;
}

}  // namespace lockstep
