// lockstep/method/auto_switch.hpp — method "auto": the explicit pair while a member is not stiff, Radau
// IIA 5 while it is, switching per member in both directions.
//
// Most members of a mechanism study are not stiff, and an explicit method takes their steps without a
// Jacobian or a Newton iteration (method/dopri5.hpp); a member that turns stiff (a stiff spring, a
// small mass, a near-singular position) holds an explicit method at its stability limit, where an
// implicit one steps at the size accuracy asks for. Auto gives each member the method its phase needs,
// as LSODA does between Adams and BDF (Petzold 1983, "Automatic selection of methods for solving stiff
// and nonstiff systems of ordinary differential equations", SIAM J. Sci. Stat. Comput. 4) and
// DifferentialEquations.jl's AutoSwitch does between a non-stiff and a stiff Runge-Kutta method.
//
// The phases. The member starts with dopri5 on the index-1 equations. The explicit-to-implicit switch
// is the explicit method's stiffness test (method/dopri5.hpp: h lambda above 2.5 on 15 accepted steps
// before 6 below it). The member then goes on with Radau IIA 5 (method/radau.hpp) on the formulation
// the options name (index3 or ggl), started from the current point as from consistent initial values,
// with the explicit method's proposed step. The way back is a test of the implicit phase's own steps:
// every `probe_interval` accepted implicit steps, the dominant eigenvalue rho of the index-1 equations'
// Jacobian at the current point is estimated (dominant_eigenvalue below), and where h rho, with h the
// implicit method's next step, is at most half of the test's threshold (1.25), the explicit method is
// stable at that step with a margin and the member switches back, starting dopri5 with that h. The gap
// between 2.5 and 1.25 keeps a member near the boundary from switching on every test. A member that
// goes back to the implicit method within 100 explicit steps of leaving it doubles its probe interval
// (a false "not stiff" costs at least the 15 explicit steps the test needs and two restarts), so a
// member on the boundary switches O(log steps) times.
//
// A switch happens at the start of an attempt, after the member stepper has completed the last
// accepted step (its projection, save points): the new method starts from the projected point, and
// the dense output of the step before the switch stays the old method's. Each phase counts its work in
// the member's counters as the method does alone; the member adds explicit_steps (dopri5's accepted
// steps), method_switches and stiffness_detections.
//
// Options. `formulation` names the implicit phase's (index3, the default in study files, or ggl; the
// explicit phase runs index1), rtol and atol mean for each phase what they mean for its method alone
// (method/tolerance_calibration.hpp: both are calibrated to -log10 rtol digits of the positions). The
// implicit phases are stiff by construction, and there index3's calibration holds where ggl's does not:
// ggl's internal tolerance is 56 rtol, fitted to the error a member that is not stiff accumulates over
// its steps, while a stiff member's error is its last steps' local error; on the fading damper of
// tests/method/auto_switch_test.cpp at rtol 1e-5 Radau IIA 5 alone ends 6e-4 off on ggl and 4e-8 on
// index3, and auto 3e-2 and 6e-6. A projection after every step (coordinate or post-stabilization) is
// required: the explicit phase drifts without one. Fixed steps are refused: a step fixed in advance
// has no stability limit to detect.
//
// Redundant constraints: the rank decision lives in the explicit phase's constraint rows (the member
// stepper's Method::jacobian), copied to and from the implicit phase's Jacobian blocks across its
// attempts, so the stepper sees one decision whatever the phase.
#pragma once

#include <cstdint>
#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/dopri5.hpp"
#include "lockstep/method/error_weights.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/step_control.hpp"

namespace lockstep {

template <class Model>
struct auto_state {
  static constexpr int first_probe_interval = 10;  // accepted implicit steps between eigenvalue estimates
  static constexpr long short_explicit_phase = 100;  // explicit steps: a quicker return doubles the interval
  bool stiff = false;  // which phase steps: false the explicit method, true the implicit one
  dopri5_state<Model> explicit_phase;
  radau_state<Model, radau5_tableau> implicit_phase;
  double t1 = 0.0;                // the run's end (the implicit method's start)
  int probe_interval = first_probe_interval;
  long implicit_steps_since_probe = 0;
  long explicit_steps_in_phase = 0;
  bool returned = false;          // the explicit phase running is a return from the implicit method
};

// The options of each phase: its method and formulation, the rest as given.
LOCKSTEP_HD constexpr solver_options auto_explicit_options(solver_options opt) {
  opt.method = method_kind::dopri5;
  opt.form = formulation::index1;
  return opt;
}
LOCKSTEP_HD constexpr solver_options auto_implicit_options(solver_options opt) {
  opt.method = method_kind::radau5;
  return opt;
}

LOCKSTEP_HD constexpr const char* auto_check_options(const solver_options& opt) {
  if (opt.form != formulation::ggl && opt.form != formulation::index3)
    return "auto runs its explicit phases on index1 and its implicit phases (Radau IIA 5) on the formulation "
           "the options name: ggl or index3";
  if (opt.projection == projection_kind::none)
    return "auto needs a projection after every step (coordinate or post-stabilization): its explicit "
           "phases integrate the index-1 equations, which drift from the constraints without one";
  if (opt.fixed_h > 0.0)
    return "auto switches where the explicit method's steps are held by its stability limit, which fixed "
           "steps do not have: choose dopri5, radau5 or another method for fixed steps";
  if (opt.baumgarte_alpha != 0.0 || opt.baumgarte_beta != 0.0)
    return "auto does not apply Baumgarte's gains: it keeps the constraints by projection after each step";
  if (!(opt.rtol > 0.0) || !(opt.atol_q > 0.0) || !(opt.atol_v > 0.0) || !(opt.atol_lambda > 0.0))
    return "rtol and atol must be positive";
  return "";
}

namespace detail {

// The consistent values at the current point (t, y) of a phase, for the other phase's start: q and v
// as they are (projected after the last step), the accelerations and multipliers of the index-1
// system; success, or why that system has no solution.
template <class Model>
LOCKSTEP_HD member_status auto_restart_values(double t, const state_vector<Model>& y, const double* p,
                                              std::uint64_t dropped, initial_values<Model>& init) {
  using L = state_layout<Model>;
  for (int i = 0; i < Model::n; ++i) {
    init.q[i] = y[L::q + i];
    init.v[i] = y[L::v + i];
  }
  init.dropped = dropped;
  return accelerations_and_multipliers<Model>(t, init.q, init.v, p, init.a, init.lambda, init.nu, dropped);
}

}  // namespace detail

// An estimate of the spectral radius of the index-1 equations' Jacobian d(v, a)/d(q, v) at (t, y), by
// four steps of the power iteration on finite differences of the right-hand side (method/dopri5.hpp,
// dopri5_derivative), in coordinates scaled by the error weights 1 / (rtol |x| + atol) (a similarity:
// the eigenvalues are those of the Jacobian). The start vector's entries are the fractional parts of
// (c + 1) times the golden ratio, less 1/2: no symmetry of a mechanism makes it orthogonal to a mode.
// The estimate is sqrt(r3 r4) of the last two ratios ||J u|| / ||u||: for a complex pair (an undamped
// mode, J^2 = -omega^2 on it) single ratios alternate while the product of two is |lambda|^2. Five
// acceleration solves, counted in the member's counters; infinity where one fails (the member stays
// implicit).
template <class Model>
LOCKSTEP_HD double dominant_eigenvalue(double t, const state_vector<Model>& y, const double* p, const solver_options& opt,
                                       std::uint64_t dropped, member_counters& counters) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, d = 2 * n;
  constexpr double infinite = std::numeric_limits<double>::infinity();
  vec<double, d> x, weight, f0, f, u;
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
  double x_norm = 0.0;
  for (int c = 0; c < d; ++c) {
    const int component = c < n ? L::q + c : L::v + (c - n);
    x[c] = y[component];
    weight[c] = detail::tolerance_weight(1.0, opt.rtol, abs(x[c]), detail::absolute_tolerance<Model>(opt, component));
    x_norm += (weight[c] * x[c]) * (weight[c] * x[c]);
  }
  const auto evaluate = [&](const vec<double, d>& at, vec<double, d>& out) {
    ++counters.model_evaluations;
    ++counters.lu_factorizations;
    return detail::dopri5_derivative<Model>(t, at, p, dropped, out, lambda, nu) == member_status::success;
  };
  if (!evaluate(x, f0)) return infinite;
  // The difference step: sqrt(eps) relative to the state in the weighted norm (1 where it is smaller).
  const double eta = 1.4901161193847656e-08 * max(1.0, sqrt(x_norm));
  double u_norm = 0.0;
  for (int c = 0; c < d; ++c) {
    const double golden = (c + 1) * 0.6180339887498949;
    u[c] = golden - static_cast<double>(static_cast<long>(golden)) - 0.5;
    u_norm += u[c] * u[c];
  }
  for (int c = 0; c < d; ++c) u[c] /= sqrt(u_norm);
  double ratio[4] = {};
  for (int k = 0; k < 4; ++k) {
    vec<double, d> at = x;
    for (int c = 0; c < d; ++c) at[c] += eta * u[c] / weight[c];
    if (!evaluate(at, f)) return infinite;
    double r = 0.0;
    for (int c = 0; c < d; ++c) {
      u[c] = weight[c] * (f[c] - f0[c]) / eta;
      r += u[c] * u[c];
    }
    r = sqrt(r);
    if (!is_finite(r)) return infinite;
    if (!(r > 0.0)) return 0.0;  // J u = 0: nothing moves along u
    ratio[k] = r;
    for (int c = 0; c < d; ++c) u[c] /= r;
  }
  return sqrt(ratio[2] * ratio[3]);
}

template <class Model>
LOCKSTEP_HD void auto_start(auto_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                            const solver_options& opt) {
  s = auto_state<Model>{};
  s.t1 = t1;
  dopri5_start(s.explicit_phase, t0, t1, init, auto_explicit_options(opt));
}

namespace detail {

// The switch to the implicit method at the explicit phase's current point; false (with `status`) when
// the point's accelerations have no solution.
template <class Model>
LOCKSTEP_HD bool auto_switch_to_implicit(auto_state<Model>& s, const double* p, const solver_options& opt,
                                         member_counters& counters, member_status& status) {
  dopri5_state<Model>& e = s.explicit_phase;
  initial_values<Model> init;
  const member_status st = auto_restart_values<Model>(e.t, e.y, p, e.rows.dropped, init);
  if (st != member_status::success) {
    status = st;
    return false;
  }
  radau_start(s.implicit_phase, e.t, s.t1, init, auto_implicit_options(opt));
  s.implicit_phase.h = e.h;
  s.implicit_phase.jac.dropped = e.rows.dropped;
  // A quick return from a switch back: the eigenvalue estimate was wrong there, so test less often.
  if (s.returned && s.explicit_steps_in_phase < auto_state<Model>::short_explicit_phase)
    s.probe_interval = min(2 * s.probe_interval, 1 << 20);
  else
    s.probe_interval = auto_state<Model>::first_probe_interval;
  s.implicit_steps_since_probe = 0;
  s.stiff = true;
  ++counters.method_switches;
  return true;
}

// The test of the implicit phase (header) and, where the member is no longer stiff, the switch back.
template <class Model>
LOCKSTEP_HD void auto_probe(auto_state<Model>& s, const double* p, const solver_options& opt, member_counters& counters) {
  auto& i = s.implicit_phase;
  s.implicit_steps_since_probe = 0;
  const std::uint64_t dropped = s.explicit_phase.rows.dropped;
  const double rho = dominant_eigenvalue<Model>(i.t, i.y, p, opt, dropped, counters);
  if (!(i.h * rho <= 0.5 * stiffness_test::threshold)) return;
  initial_values<Model> init;
  if (auto_restart_values<Model>(i.t, i.y, p, dropped, init) != member_status::success) return;
  const explicit_constraint_rows<Model> rows = s.explicit_phase.rows;
  dopri5_start(s.explicit_phase, i.t, s.t1, init, auto_explicit_options(opt));
  s.explicit_phase.rows = rows;
  s.explicit_phase.h = min(i.h, opt.h_max);
  s.explicit_steps_in_phase = 0;
  s.returned = true;
  s.stiff = false;
  ++counters.method_switches;
}

}  // namespace detail

// One step attempt (same contract as dopri5_attempt): a pending switch first (header), then the
// attempt of the phase's method.
template <class Model>
LOCKSTEP_HD attempt_result auto_attempt(auto_state<Model>& s, double t_end, const double* p, const solver_options& opt,
                                        member_counters& counters, member_status& status) {
  if (!s.stiff && s.explicit_phase.turned_stiff) {
    s.explicit_phase.turned_stiff = false;
    if (!detail::auto_switch_to_implicit<Model>(s, p, opt, counters, status)) return attempt_result::failed;
  } else if (s.stiff && s.implicit_steps_since_probe >= s.probe_interval) {
    detail::auto_probe<Model>(s, p, opt, counters);
  }
  if (!s.stiff) {
    const attempt_result r = dopri5_attempt<Model>(s.explicit_phase, t_end, p, auto_explicit_options(opt), counters, status);
    if (r == attempt_result::accepted) ++s.explicit_steps_in_phase;
    return r;
  }
  auto& i = s.implicit_phase;
  i.jac.dropped = s.explicit_phase.rows.dropped;
  const attempt_result r = radau_attempt<Model>(i, t_end, p, auto_implicit_options(opt), counters, status);
  s.explicit_phase.rows.dropped = i.jac.dropped;
  if (i.jac.dropped != 0) s.explicit_phase.rows.G = i.jac.G;
  if (r == attempt_result::accepted) ++s.implicit_steps_since_probe;
  return r;
}

template <class Model>
LOCKSTEP_HD void auto_dense_output(const auto_state<Model>& s, double t, state_vector<Model>& y) {
  if (s.stiff) radau_dense_output(s.implicit_phase, t, y);
  else dopri5_dense_output(s.explicit_phase, t, y);
}

}  // namespace lockstep
