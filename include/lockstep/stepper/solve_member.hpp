// lockstep/stepper/solve_member.hpp — one member from t0 to t1: the single-member driver.
//
// Consistent initialization, then BDF step attempts until t1, with outputs at the requested save times
// served by dense output (no step is ever shortened for a save time: docs/ARCHITECTURE.md section 1). This host
// function is the reference the batch kernels are compared with; the stepping itself is the
// LOCKSTEP_HD member stepper of method/bdf.hpp.
#pragma once

#include <string>
#include <vector>

#include "lockstep/method/bdf.hpp"
#include "lockstep/model/concept.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/stepper/member.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// A recorded event (stepper/events.hpp): which, when, and the state there.
template <class Model>
struct event_record {
  int event = 0;
  double t = 0.0;
  state_vector<Model> y;
};

template <class Model>
struct member_result {
  using layout = state_layout<Model>;
  member_status status = member_status::running;
  std::string message;  // why the options were refused (status invalid_input)
  member_counters counters;
  initial_values<Model> initial;        // the consistent initial values actually used
  std::vector<double> t;                // save times reached
  std::vector<state_vector<Model>> y;   // (q, v, lambda, mu, nu) at those times
  double t_final = 0.0;
  state_vector<Model> y_final;
  // Events (a model with event functions): the records of `record` and `stop` events in time order,
  // each event's occurrences and first time (NaN if none), and the event that stopped the member (-1).
  std::vector<event_record<Model>> events;
  std::vector<long> event_counts;
  std::vector<double> event_first_times;
  int stop_event = -1;

  // Group accessors for saved point i.
  double q(std::size_t i, int j) const { return y[i][layout::q + j]; }
  double v(std::size_t i, int j) const { return y[i][layout::v + j]; }
  double lambda(std::size_t i, int j) const { return y[i][layout::lambda + j]; }
  double mu(std::size_t i, int j) const { return y[i][layout::mu + j]; }
  double nu(std::size_t i, int j) const { return y[i][layout::nu + j]; }
};

// Solves one member. save_times must be sorted and lie in [t0, t1]; t1 is not added implicitly.
// Methods: every_method, or the one method it is compiled for (method/methods.hpp, visit_method_in).
template <class Model, class Methods = every_method>
member_result<Model> solve_member(const double* params, const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                                  double t0, double t1, const solver_options& opt,
                                  const std::vector<double>& save_times) {
  static_assert(lockstep_check_model<Model>());
  member_result<Model> out;
  // Refused before it starts: where member_begin places such a member (stepper/member.hpp).
  out.t_final = t0;
  out.y_final = given_point<Model>(q0, v0);
  if (const char* why = check_method_options(opt); why[0] != '\0') {
    out.status = member_status::invalid_input;
    out.message = why;
    return out;
  }
  if (const char* why = methods_refusal<Methods>(opt.method); why[0] != '\0') {
    out.status = member_status::invalid_input;
    out.message = why;
    return out;
  }
  if (!(t1 > t0)) {
    out.status = member_status::invalid_input;
    out.message = "t1 must be greater than t0";
    return out;
  }
  if (opt.fixed_h > 0.0 && fixed_step_count(t0, t1, opt.fixed_h) < 0) {  // method/step_control.hpp
    out.status = member_status::invalid_input;
    out.message = "fixed_h must divide [t0, t1] into whole steps; the nearest that does is " +
                  std::to_string(nearest_fixed_step(t0, t1, opt.fixed_h));
    return out;
  }

  const int save_count = static_cast<int>(save_times.size());
  visit_method_in<Methods>(opt.method, [&]<class Method>() {
    member_state<Model, Method> ms;
    // LOCKSTEP_HD although only the host calls it: nvcc compiles this driver into a model file's device
    // engine, and refuses the member stepper's host-device templates (stepper/member.hpp, emit) a call
    // to a member function it may not compile for the device; this local class's it compiles on demand.
    struct {
      member_result<Model>& out;
      LOCKSTEP_HD void operator()(int, double t, const state_vector<Model>& y) const {
        out.t.push_back(t);
        out.y.push_back(y);
      }
      LOCKSTEP_HD void event(long, int k, double t, const state_vector<Model>& y) const {
        out.events.push_back({k, t, y});
      }
    } sink{out};
    member_begin<Model>(ms, t0, t1, q0, v0, params, opt, save_times.data(), save_count, sink);
    // The batch kernels pause every K attempts; one call with an unbounded budget is the same sequence.
    while (!member_advance<Model>(ms, 1 << 30, t1, params, opt, save_times.data(), save_count, sink)) {
    }
    out.status = ms.status;
    out.counters = ms.counters;
    out.t_final = member_final_time<Model>(ms);
    out.y_final = member_final_state<Model>(ms, params, opt);
    if constexpr (event_count<Model> > 0) {
      out.event_counts.assign(ms.events.count, ms.events.count + event_count<Model>);
      out.event_first_times.assign(ms.events.first_time.a, ms.events.first_time.a + event_count<Model>);
      out.stop_event = ms.events.stop_event;
    }
  });
  return out;
}

}  // namespace lockstep
