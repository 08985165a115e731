// lockstep/method/methods.hpp — the methods behind one interface, for the member stepper.
//
// A method is a type with a per-member state template and eight LOCKSTEP_HD operations: check the
// options, start from consistent initial values, attempt one step, evaluate the dense output of the
// last step, give its Jacobian blocks (whose dropped constraint rows the member stepper starts from
// the initial decision and reports), report the current point, replace the current point by its projection
// (formulation/projection.hpp) after an accepted step: the next step starts from, and the dense output
// of the last step ends at, the projected point; and place a member that never starts (refused options,
// failed initialization) at the point it was given, which its time and current point then report
// (stepper/member.hpp, member_begin). The member stepper (stepper/member.hpp) and the batch
// kernels are templates on the method (docs/DESIGN-NOTES.md, "Conventions": templates on the Model and the method's
// kernel; everything else is chosen at run time).
#pragma once

#include <type_traits>

#include "lockstep/method/auto_switch.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/dopri5.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/rhoinf.hpp"

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
  LOCKSTEP_HD static const state_vector<Model>& current(const state<Model>& s) { return s.y_newest; }
  // The newest past point: the next predictor and the dense-output polynomial pass through it.
  template <class Model>
  LOCKSTEP_HD static void replace_current(state<Model>& s, const state_vector<Model>& y) { s.y_newest = y; }
  // A member that never starts: time t and current point y, the rest of the state as constructed.
  template <class Model>
  LOCKSTEP_HD static void place_unstarted(state<Model>& s, double t, const state_vector<Model>& y) {
    s.t = t;
    s.y_newest = y;
  }
  // The Jacobian blocks the method keeps (their dropped constraint rows are the member's decision).
  template <class State>  // a state<Model>, const or not
  LOCKSTEP_HD static auto& jacobian(State& s) { return s.corrector.jac; }
};

// What the methods whose state holds the current point as (s.t, s.y) share: the Radau IIA family and
// the rho_inf method. replace_current makes y the next step's start and the end point of the last
// step's dense output; what else that polynomial passes through (Radau's interior stages, the rho_inf
// method's derivatives) stays unprojected.
struct current_point_in_y {
  template <class State>
  LOCKSTEP_HD static double time(const State& s) { return s.t; }
  template <class State>
  LOCKSTEP_HD static const auto& current(const State& s) { return s.y; }
  template <class State, class Y>
  LOCKSTEP_HD static void replace_current(State& s, const Y& y) { s.y = y; }
  template <class State, class Y>
  LOCKSTEP_HD static void place_unstarted(State& s, double t, const Y& y) {
    s.t = t;
    s.y = y;
  }
};

// The Radau IIA family (method/radau.hpp): one implementation, one tableau per method.
template <class Tableau, method_kind Kind>
struct radau_iia_method : current_point_in_y {
  static constexpr method_kind kind = Kind;
  template <class Model>
  using state = radau_state<Model, Tableau>;

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
  template <class State>  // a state<Model>, const or not
  LOCKSTEP_HD static auto& jacobian(State& s) { return s.jac; }
};

using radau5_method = radau_iia_method<radau5_tableau, method_kind::radau5>;
using radau3_method = radau_iia_method<radau3_tableau, method_kind::radau3>;
using euler_method = radau_iia_method<euler_tableau, method_kind::euler>;

struct rhoinf_method : current_point_in_y {
  static constexpr method_kind kind = method_kind::rhoinf;
  template <class Model>
  using state = rhoinf_state<Model>;

  LOCKSTEP_HD static const char* check_options(const solver_options& opt) { return rhoinf_check_options(opt); }
  template <class Model>
  LOCKSTEP_HD static void start(state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                                const solver_options& opt) {
    rhoinf_start(s, t0, t1, init, opt);
  }
  template <class Model>
  LOCKSTEP_HD static attempt_result attempt(state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                            member_counters& c, member_status& why) {
    return rhoinf_attempt<Model>(s, t_end, p, opt, c, why);
  }
  template <class Model>
  LOCKSTEP_HD static void dense_output(const state<Model>& s, double t, state_vector<Model>& y) {
    rhoinf_dense_output(s, t, y);
  }
  template <class State>  // a state<Model>, const or not
  LOCKSTEP_HD static auto& jacobian(State& s) { return s.corrector.jac; }
};

// An explicit pair on the index-1 equations (method/dopri5.hpp): Dormand & Prince's (dopri5) or
// Tsitouras' (tsit5), T its coefficients. Its constraint rows (Method::jacobian) are the initial rank
// decision and G for dropped_rows_hold: it has no Jacobian.
template <class T, method_kind Kind>
struct explicit_pair_method : current_point_in_y {
  static constexpr method_kind kind = Kind;
  template <class Model>
  using state = dopri5_state<Model>;

  LOCKSTEP_HD static const char* check_options(const solver_options& opt) { return dopri5_check_options(opt); }
  template <class Model>
  LOCKSTEP_HD static void start(state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                                const solver_options& opt) {
    dopri5_start(s, t0, t1, init, opt);
  }
  template <class Model>
  LOCKSTEP_HD static attempt_result attempt(state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                            member_counters& c, member_status& why) {
    return dopri5_attempt<Model, T>(s, t_end, p, opt, c, why);
  }
  template <class Model>
  LOCKSTEP_HD static void dense_output(const state<Model>& s, double t, state_vector<Model>& y) {
    dopri5_dense_output(s, t, y);
  }
  // The projected point is the next step's start and the end of the last step's dense output.
  template <class Model>
  LOCKSTEP_HD static void replace_current(state<Model>& s, const state_vector<Model>& y) {
    dopri5_replace_current(s, y);
  }
  template <class State>  // a state<Model>, const or not
  LOCKSTEP_HD static auto& jacobian(State& s) { return s.rows; }
};
using dopri5_method = explicit_pair_method<dopri5_tableau, method_kind::dopri5>;
using tsit5_method = explicit_pair_method<tsit5_tableau, method_kind::tsit5>;

// Method "auto" (method/auto_switch.hpp): dopri5 while the member is not stiff, Radau IIA 5 while it
// is. Time, current point and dense output are those of the phase stepping; the constraint rows are the
// explicit phase's, which the implicit phase's attempts keep up to date.
struct auto_method {
  static constexpr method_kind kind = method_kind::automatic;
  template <class Model>
  using state = auto_state<Model>;

  LOCKSTEP_HD static const char* check_options(const solver_options& opt) { return auto_check_options(opt); }
  template <class Model>
  LOCKSTEP_HD static void start(state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                                const solver_options& opt) {
    auto_start(s, t0, t1, init, opt);
  }
  template <class Model>
  LOCKSTEP_HD static attempt_result attempt(state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                            member_counters& c, member_status& why) {
    return auto_attempt<Model>(s, t_end, p, opt, c, why);
  }
  template <class Model>
  LOCKSTEP_HD static void dense_output(const state<Model>& s, double t, state_vector<Model>& y) {
    auto_dense_output(s, t, y);
  }
  template <class Model>
  LOCKSTEP_HD static double time(const state<Model>& s) {
    return s.stiff ? s.implicit_phase.t : s.explicit_phase.t;
  }
  template <class Model>
  LOCKSTEP_HD static const state_vector<Model>& current(const state<Model>& s) {
    return s.stiff ? s.implicit_phase.y : s.explicit_phase.y;
  }
  template <class Model>
  LOCKSTEP_HD static void replace_current(state<Model>& s, const state_vector<Model>& y) {
    if (s.stiff) s.implicit_phase.y = y;
    else dopri5_replace_current(s.explicit_phase, y);
  }
  template <class Model>
  LOCKSTEP_HD static void place_unstarted(state<Model>& s, double t, const state_vector<Model>& y) {
    s.stiff = false;
    s.explicit_phase.t = t;
    s.explicit_phase.y = y;
  }
  template <class State>  // a state<Model>, const or not
  LOCKSTEP_HD static auto& jacobian(State& s) { return s.explicit_phase.rows; }
};

// Why the options are refused by the method they name ("" when accepted).
LOCKSTEP_HD const char* check_method_options(const solver_options& opt) {
  switch (opt.method) {
    case method_kind::bdf: return bdf_method::check_options(opt);
    case method_kind::radau5: return radau5_method::check_options(opt);
    case method_kind::radau3: return radau3_method::check_options(opt);
    case method_kind::euler: return euler_method::check_options(opt);
    case method_kind::rhoinf: return rhoinf_method::check_options(opt);
    case method_kind::dopri5: return dopri5_method::check_options(opt);
    case method_kind::automatic: return auto_method::check_options(opt);
    case method_kind::tsit5: return tsit5_method::check_options(opt);
  }
  return "unknown method";
}

// Calls f.template operator()<Method>() for the method the options name (check_method_options first:
// an unknown kind runs BDF).
template <class F>
constexpr decltype(auto) visit_method(method_kind kind, F&& f) {
  switch (kind) {
    case method_kind::radau5: return f.template operator()<radau5_method>();
    case method_kind::radau3: return f.template operator()<radau3_method>();
    case method_kind::euler: return f.template operator()<euler_method>();
    case method_kind::rhoinf: return f.template operator()<rhoinf_method>();
    case method_kind::dopri5: return f.template operator()<dopri5_method>();
    case method_kind::automatic: return f.template operator()<auto_method>();
    case method_kind::tsit5: return f.template operator()<tsit5_method>();
    case method_kind::bdf: break;
  }
  return f.template operator()<bdf_method>();
}

// Calls f.template operator()<Method>() for each method, in the order of method_kind.
template <class F>
constexpr void for_each_method(F&& f) {
  f.template operator()<bdf_method>();
  f.template operator()<radau5_method>();
  f.template operator()<radau3_method>();
  f.template operator()<euler_method>();
  f.template operator()<rhoinf_method>();
  f.template operator()<dopri5_method>();
  f.template operator()<auto_method>();
  f.template operator()<tsit5_method>();
}

// Which methods a driver is compiled for: every_method (the default) chooses among all of them at run
// time by the options' method_kind; a method type compiles that one alone, and the options must name
// it. An engine compiled for the methods a study asks for instantiates the drivers per method
// (engine/model_engine.hpp), so that it compiles in seconds; the code each method runs is the same.
struct every_method {};

// Why a driver compiled for `Methods` cannot run `kind` ("" when it can).
template <class Methods>
LOCKSTEP_HD constexpr const char* methods_refusal(method_kind kind) {
  if constexpr (std::is_same_v<Methods, every_method>) {
    (void)kind;
    return "";
  } else {
    return kind == Methods::kind ? "" : "this code is compiled for another method than the options name";
  }
}

// visit_method restricted to `Methods`: every method, or the one given (whatever `kind` says: the
// caller has checked that it names that method).
template <class Methods, class F>
constexpr decltype(auto) visit_method_in(method_kind kind, F&& f) {
  if constexpr (std::is_same_v<Methods, every_method>) return visit_method(kind, f);
  else return f.template operator()<Methods>();
}

}  // namespace lockstep
