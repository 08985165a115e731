// lockstep/lyapunov/tangent_member_common.hpp — what the BDF and the Radau IIA tangent members share: the
// options they accept, the start with initial tangents, an attempt's bookkeeping and the recombination of
// directions.
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/lyapunov/initial_tangents.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep {

// Why tangents cannot be propagated with these options ("" when they can).
LOCKSTEP_HD constexpr const char* tangent_check_options(const solver_options& opt) {
  if (opt.method == method_kind::rhoinf)
    return "tangent propagation (sensitivities, Lyapunov spectra) is implemented for bdf and the Radau IIA "
           "methods (radau5, radau3, euler), not for rhoinf: it would need its own linearized step "
           "equations, which are not implemented";
  if (is_explicit_pair(opt.method))
    return "tangent propagation (sensitivities, Lyapunov spectra) is implemented for bdf and the Radau IIA "
           "methods (radau5, radau3, euler), not for the explicit pairs (dopri5, tsit5): their variational "
           "equations through the acceleration system and the projection are not implemented";
  if (opt.method == method_kind::automatic)
    return "tangent propagation (sensitivities, Lyapunov spectra) is implemented for bdf and the Radau IIA "
           "methods (radau5, radau3, euler), not for auto: its explicit phases are dopri5's, whose variational "
           "equations are not implemented";
  if (opt.form != formulation::ggl && opt.form != formulation::index3)
    return "tangent propagation supports the formulations ggl and index3 only (bdf: index3 with fixed steps)";
  if (opt.projection != projection_kind::none)
    return "tangent propagation needs projection = none: a projection after the steps is a further map "
           "whose derivative the tangents do not follow";
  return opt.method == method_kind::bdf ? bdf_check_options(opt) : radau_check_options(opt);
}

// A direction in the phase space (q, v) of a member: dq then dv.
template <class Model>
using phase_vector = vec<double, 2 * Model::n>;

// What the BDF and the Radau members share at the start: the checks, consistent initialization, the
// method's start (start(init)) and the initial tangents, handed to store(d, s, s') (s' = the tangent of
// the initial derivative BDF starts from). directions[d] (a phase vector, taken through the derivative
// of the initialization, so it need not lie in the tangent space) for d < state_directions, then the
// sensitivities to parameters[0 .. parameter_directions - 1]. status = running, or the reason the
// member cannot start (invalid_input for options the tangents refuse).
template <class Model, class TM, class Start, class Store>
LOCKSTEP_HD void begin_member_with_tangents(TM& tm, double t0, double t1, const vec<double, Model::n>& q0,
                                            const vec<double, Model::n>& v0, const double* p,
                                            const solver_options& opt, const phase_vector<Model>* directions,
                                            int state_directions, const int* parameters, int parameter_directions,
                                            bool error_control, const Start& start, const Store& store) {
  constexpr int n = Model::n;
  tm.status = member_status::running;
  tm.error_control = error_control;
  tm.tangent_rejections = 0;
  tm.counters = member_counters{};
  tm.attempts = 0;
  tm.tangent_factorizations = 0;
  tm.directions = state_directions + parameter_directions;
  if (tangent_check_options(opt)[0] != '\0' || !(t1 > t0) || tm.directions > TM::capacity || state_directions < 0 ||
      parameter_directions < 0) {
    tm.status = member_status::invalid_input;
    return;
  }
  for (int d = 0; d < parameter_directions; ++d)
    if (parameters[d] < 0 || parameters[d] >= Model::n_params) {
      tm.status = member_status::invalid_input;
      return;
    }
  initial_values<Model> init;
  member_status st = consistent_initialization<Model>(t0, q0, v0, p, opt, init, tm.counters);
  if (st != member_status::success) {
    tm.status = st;
    return;
  }
  start(init);
  for (int d = 0; d < tm.directions; ++d) {
    const bool is_state = d < state_directions;
    tm.parameter[d] = is_state ? -1 : parameters[d - state_directions];
    vec<double, n> dq0{}, dv0{}, dq, dv;
    if (is_state)
      for (int i = 0; i < n; ++i) {
        dq0[i] = directions[d][i];
        dv0[i] = directions[d][n + i];
      }
    // The initialization's metric is factored at the given q0 (method/initialize.hpp); at a consistent
    // q0 it is the metric at init.q, and elsewhere the difference is of second order.
    st = initial_phase_tangent<Model>(t0, init.q, init.v, p, opt.metric, dq0, dv0, tm.parameter[d], dq, dv);
    state_vector<Model> s0, sp0;
    if (st == member_status::success) st = initial_full_tangent<Model>(t0, init, p, dq, dv, tm.parameter[d], s0, sp0);
    if (st != member_status::success) {
      tm.status = st;
      return;
    }
    store(d, s0, sp0);
  }
}

namespace detail {

// The method's attempt; a failure sets the member's status.
template <class Member, class Attempt>
LOCKSTEP_HD attempt_result run_member_attempt(Member& tm, const Attempt& attempt) {
  member_status why = member_status::running;
  const attempt_result r = attempt(why);
  if (r == attempt_result::failed) tm.status = why;
  return r;
}

// slot[d] <- sum_e X(e, d) slot[e] for d < count.
template <class Model, int Capacity>
LOCKSTEP_HD void recombine_slot(state_vector<Model>* slot, const double (*X)[Capacity], int count) {
  state_vector<Model> out[Capacity];
  for (int d = 0; d < count; ++d) {
    out[d] = state_vector<Model>{};
    for (int e = 0; e < count; ++e)
      if (X[e][d] != 0.0)
        for (int j = 0; j < state_layout<Model>::size; ++j) out[d][j] += X[e][d] * slot[e][j];
  }
  for (int d = 0; d < count; ++d) slot[d] = out[d];
}

}  // namespace detail

}  // namespace lockstep
