// lockstep/method/methods.hpp — the methods behind one interface, for the member stepper.
//
// A method is a type with a per-member state template and five LOCKSTEP_HD operations: check the
// options, start from consistent initial values, attempt one step, evaluate the dense output of the
// last step, and report the current point. The member stepper (stepper/member.hpp) and the batch
// kernels are templates on the method (DESIGN.md section 5: templates on the Model and the method's
// kernel; everything else is chosen at run time).
#pragma once

#include "lockstep/method/bdf.hpp"
#include "lockstep/method/radau.hpp"

namespace lockstep {

struct bdf_method {
  static constexpr method_kind kind = method_kind::bdf;
  template <class Model>
  using state = bdf_state<Model>;

  LOCKSTEP_HD static const char* check_options(const solver_options& opt) { return bdf_check_options(opt); }
  template <class Model>
  LOCKSTEP_HD static void start(state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                                const solver_options& opt) {
    bdf_start(s, t0, t1, init, opt);
  }
  template <class Model>
  LOCKSTEP_HD static attempt_result attempt(state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                            member_counters& c, member_status& why) {
    return bdf_attempt<Model>(s, t_end, p, opt, c, why);
  }
  template <class Model>
  LOCKSTEP_HD static void dense_output(const state<Model>& s, double t, state_vector<Model>& y) {
    bdf_dense_output(s, t, y);
  }
  template <class Model>
  LOCKSTEP_HD static double time(const state<Model>& s) { return s.t; }
  template <class Model>
  LOCKSTEP_HD static const state_vector<Model>& current(const state<Model>& s) { return s.y_past[0]; }
};

struct radau5_method {
  static constexpr method_kind kind = method_kind::radau5;
  template <class Model>
  using state = radau_state<Model>;

  LOCKSTEP_HD static const char* check_options(const solver_options& opt) { return radau_check_options(opt); }
  template <class Model>
  LOCKSTEP_HD static void start(state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                                const solver_options& opt) {
    radau_start(s, t0, t1, init, opt);
  }
  template <class Model>
  LOCKSTEP_HD static attempt_result attempt(state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                            member_counters& c, member_status& why) {
    return radau_attempt<Model>(s, t_end, p, opt, c, why);
  }
  template <class Model>
  LOCKSTEP_HD static void dense_output(const state<Model>& s, double t, state_vector<Model>& y) {
    radau_dense_output(s, t, y);
  }
  template <class Model>
  LOCKSTEP_HD static double time(const state<Model>& s) { return s.t; }
  template <class Model>
  LOCKSTEP_HD static const state_vector<Model>& current(const state<Model>& s) { return s.y; }
};

// Why the options are refused by the method they name ("" when accepted).
LOCKSTEP_HD const char* check_method_options(const solver_options& opt) {
  return opt.method == method_kind::bdf ? bdf_method::check_options(opt) : radau5_method::check_options(opt);
}

// Calls f.template operator()<Method>() for the method the options name.
template <class F>
decltype(auto) visit_method(method_kind kind, F&& f) {
  if (kind == method_kind::radau5) return f.template operator()<radau5_method>();
  return f.template operator()<bdf_method>();
}

}  // namespace lockstep
