// lockstep/stepper/member.hpp — one member's whole integration as resumable plain data.
//
// The single-member driver (solve_member.hpp) and the batch kernels (lockstep/detail/member_kernels.hpp) run exactly this
// code, so a member's results cannot depend on which of them ran it, on the batch it was in, or on how
// often the host paused it: `member_advance` performs at most K step attempts and returns, and all the
// member knows lives in member_state (docs/ARCHITECTURE.md section 1: a sync point is an attempt boundary).
//
// Outputs go to a sink, called as sink(save_index, t, y) for every save time passed, in order, with y
// from dense output; multipliers are made consistent with (q, v) when the options ask for it.
//
// Projection (formulation/projection.hpp). When the options ask for one (or the formulation is
// projected invariants), every accepted step is followed by it: the method's current point is
// replaced by the projected one (Method::replace_current), after the step-size and order decisions,
// which therefore never see it, and the size of the corrections goes to the counters. The dense
// output between two projected points is the method's own interpolant through them (BDF: through the
// projected past points; Radau: from the projected start to the projected end, through the unprojected
// interior stages), so it stays continuous; off the mesh it satisfies the constraints only to
// interpolation accuracy, O(h^(p+1)). So a saved point between steps is projected too, by the same
// projection, as an output only: it changes neither the trajectory nor the counters (which must not
// depend on the save times), and when its projection fails the unprojected point is written.
// Events (stepper/events.hpp) are located after an accepted step's projection and before its save
// points, on the method's dense output; a stopping event ends the member, and the step's save points
// after it are not written.
// On the split path (lockstep/detail/split_factor.hpp) the projection of an accepted step may stop at
// its Cholesky factorizations, kept in a projection_work beside the member state, and the next call
// of member_advance resumes it before anything else; save points and initialization project in the
// thread (docs/GPU.md section 5.4 says why).
#pragma once

#include <limits>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/formulation/minimum_norm_multipliers.hpp"
#include "lockstep/method/methods.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/stepper/events.hpp"

namespace lockstep {

template <class Model, class Method>
struct member_state {
  typename Method::template state<Model> method;
  event_state<Model> events;  // a model without events has none (stepper/events.hpp)
  member_counters counters;
  member_status status = member_status::running;
  int next_save = 0;   // index of the first save time not yet written
  long attempts = 0;   // step attempts so far (max_steps bounds them)
};

namespace detail {

// Tracks max |Phi| and max |G v + Phi_t| over the accepted points, and max |Phi| of the holonomic rows
// set in `dropped`, from one point's Phi and G v + Phi_t.
template <class Model>
LOCKSTEP_HD void record_holonomic_residuals(const vec<double, Model::m>& phi, const vec<double, Model::m>& rate,
                                            member_counters& c, std::uint64_t dropped) {
  c.max_phi = max(c.max_phi, norm_inf(phi));
  c.max_velocity_residual = max(c.max_velocity_residual, norm_inf(rate));
  for (int a = 0; dropped != 0 && a < Model::m; ++a)
    if (row_dropped(dropped, a)) c.max_dropped_phi = max(c.max_dropped_phi, abs(phi[a]));
}

// Tracks max |A v + a| (in max_velocity_residual) from one point's non-holonomic residuals.
template <class Model>
LOCKSTEP_HD void record_nonholonomic_residuals(const vec<double, Model::k>& residual, member_counters& c) {
  c.max_velocity_residual = max(c.max_velocity_residual, norm_inf(residual));
}

// Tracks max |Phi| and max |G v + Phi_t|, |A v + a| at an accepted point, and max |Phi| of the
// holonomic rows set in `dropped`. Members in SIMD lanes evaluate the residuals on packs and record
// them lane by lane with the two functions above (lockstep/simd/member_inl.hpp).
template <class Model>
LOCKSTEP_HD void record_constraint_residuals(double t, const state_vector<Model>& y, const double* p,
                                             member_counters& c, std::uint64_t dropped) {
  using L = state_layout<Model>;
  vec<double, Model::n> q, v;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  if constexpr (Model::m > 0) {  // one evaluation for both (after every accepted step: ~5 % of car_axis' time)
    const auto both = constraint_along<Model>(t, q, v, p);
    record_holonomic_residuals<Model>(both.phi, both.rate, c, dropped);
  }
  if constexpr (Model::k > 0)
    record_nonholonomic_residuals<Model>(Model::template nonholonomic<double, double>(t, q, v, p), c);
}

// Whether the dropped holonomic rows still hold at an accepted point y. A row the rank decision drops
// is monitored, not imposed (formulation/constraint_rank.hpp): it holds because it is a combination of
// the kept rows, which is true of a redundant constraint along the whole motion but not of one whose
// gradient merely vanished at a point (a bob at its pivot, G = 0: dropping it would let the bob fall
// freely). So its distance from its own zero set, |Phi_a| / |G_a| (G from the method's last Jacobian),
// must stay within 100 times the position tolerance plus 100 times the kept rows' own distances (which
// drift without stabilization in index1). False ends the member with singular_matrix: without the
// drop its Newton matrix was singular, and with it the motion is not the constrained one. Rows: what
// the method keeps of the constraint rows (Method::jacobian: jacobian_blocks, or the explicit
// method's explicit_constraint_rows), with `dropped` and G.
template <class Model, class Rows>
LOCKSTEP_HD bool dropped_rows_hold(double t, const state_vector<Model>& y, const double* p, const solver_options& opt,
                                   const Rows& J) {
  using L = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m;
  if constexpr (m > 0) {
    vec<double, n> q;
    for (int i = 0; i < n; ++i) q[i] = y[L::q + i];
    const vec<double, m> phi = Model::template constraint<double, double>(t, q, p);
    double kept = 0.0, worst = 0.0;
    for (int a = 0; a < m; ++a) {
      double g = 0.0;
      for (int j = 0; j < n; ++j) g += J.G(a, j) * J.G(a, j);
      const double distance = abs(phi[a]) == 0.0 ? 0.0 : abs(phi[a]) / sqrt(g);  // inf for G_a = 0
      if (row_dropped(J.dropped, a)) worst = max(worst, distance);
      else kept = max(kept, distance);
    }
    const double tolerance = 100.0 * (opt.atol_q + opt.rtol * norm_inf(q)) + 100.0 * kept;
    return worst <= tolerance;  // false for NaN
  } else {
    (void)t, (void)y, (void)p, (void)opt, (void)J;
    return true;
  }
}

// Replaces lambda and nu of an output point by the multipliers consistent with its (q, v), those of
// the independent rows when rows are `dropped`, and gives the accelerations too where `a` is asked
// for; y is left as it was where the acceleration-level system cannot be solved (the status says so).
template <class Model>
LOCKSTEP_HD member_status make_multipliers_consistent(double t, state_vector<Model>& y, const double* p,
                                                      std::uint64_t dropped, vec<double, Model::n>* a = nullptr) {
  using L = state_layout<Model>;
  vec<double, Model::n> q, v, accelerations;
  vec<double, Model::m> lambda;
  vec<double, Model::k> nu;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  const member_status s = accelerations_and_multipliers<Model>(t, q, v, p, accelerations, lambda, nu, dropped);
  if (s != member_status::success) return s;
  for (int i = 0; i < Model::m; ++i) y[L::lambda + i] = lambda[i];
  for (int i = 0; i < Model::k; ++i) y[L::nu + i] = nu[i];
  if (a != nullptr) *a = accelerations;
  return s;
}

// The reported multipliers of a point with dropped constraint rows in the convention the options ask
// for: the method's are those of the independent rows (0 on the dropped ones), which minimum_norm
// turns into the smallest with the same constraint force (formulation/minimum_norm_multipliers.hpp).
template <class Model>
LOCKSTEP_HD_SHARED void apply_multiplier_convention(double t, state_vector<Model>& y, const double* p,
                                                    const solver_options& opt, std::uint64_t dropped) {
  using L = state_layout<Model>;
  constexpr int m = Model::m, k = Model::k;
  if constexpr (decides_constraint_rank<Model>) {
    if (dropped == 0 || opt.multipliers != multiplier_convention::minimum_norm) return;
    vec<double, Model::n> q;
    for (int i = 0; i < Model::n; ++i) q[i] = y[L::q + i];
    const velocity_constraint_rows<Model> rows = velocity_constraints_at<Model>(t, q, p);
    vec<double, m + k> mu;
    for (int a = 0; a < m; ++a) mu[a] = y[L::lambda + a];
    for (int a = 0; a < k; ++a) mu[m + a] = y[L::nu + a];
    if (make_minimum_norm<m + k, Model::n>(rows.C, dropped, mu) != member_status::success) return;
    for (int a = 0; a < m; ++a) y[L::lambda + a] = mu[a];
    for (int a = 0; a < k; ++a) y[L::nu + a] = mu[m + a];
  } else {
    (void)t, (void)y, (void)p, (void)opt, (void)dropped;
  }
}

// The event functions at (t, y) (stepper/events.hpp). Those of the accelerations and multipliers see the
// ones of the acceleration-level system at (t, q, v), in the options' convention where rows are
// dropped (what a record at t holds), whatever multipliers y carries: NaN where that system cannot be
// solved, which fails the member as an event function that is not finite does.
template <class Model>
LOCKSTEP_HD vec<double, event_count<Model>> event_function_values(double t, const state_vector<Model>& y, const double* p,
                                                                  const solver_options& opt, std::uint64_t dropped) {
  vec<double, Model::n> a;  // zero, and unused, for events of the state alone
  if constexpr (event_count<Model> == 0) {
    (void)t, (void)y, (void)p, (void)opt, (void)dropped;
    return {};
  } else if constexpr (events_of_multipliers<Model>) {
    state_vector<Model> at = y;
    member_status s = member_status::success;
    phase<separate_device_phases<Model>>([&] { s = make_multipliers_consistent<Model>(t, at, p, dropped, &a); });
    if (s != member_status::success) return vec<double, event_count<Model>>::filled(std::numeric_limits<double>::quiet_NaN());
    if (dropped != 0) phase<true>([&] { apply_multiplier_convention<Model>(t, at, p, opt, dropped); });
    return event_values<Model>(t, at, a, p);
  } else {
    return event_values<Model>(t, y, a, p);
  }
}

// A save point from dense output, projected as the steps are (see the header); unchanged when the
// options ask for no projection or when the projection fails.
template <class Model>
LOCKSTEP_HD void project_output(double t, state_vector<Model>& y, const double* p, const solver_options& opt,
                                std::uint64_t dropped) {
  if (!projects_after_steps(opt.projection, opt.form)) return;
  // A phase (core/hd.hpp): for large members the projection's matrices live only while it runs.
  phase<separate_device_phases<Model>>([&] {
    state_vector<Model> projected = y;
    projection_sizes sizes;
    if (project_state<Model>(opt.projection, opt.form, opt.metric, t, projected, p, sizes, dropped) == member_status::success)
      y = projected;
  });
}

// The counts of a successful projection of an accepted point.
LOCKSTEP_HD void count_projection(member_counters& c, const projection_sizes& sizes) {
  ++c.projections;
  c.max_projection_q = max(c.max_projection_q, sizes.q);
  c.max_projection_v = max(c.max_projection_v, sizes.v);
}

// The member's record of its accepted point's projection that ended with status s: the projected y
// becomes the current point and the corrections are counted; false (with the member's status set)
// when it failed.
template <class Model, class Method>
LOCKSTEP_HD bool record_projection(member_state<Model, Method>& ms, member_status s, const state_vector<Model>& y,
                                   const projection_sizes& sizes) {
  if (s != member_status::success) {
    ms.status = s;
    return false;
  }
  Method::replace_current(ms.method, y);
  count_projection(ms.counters, sizes);
  return true;
}

// The projection after an accepted step; false (with the member's status set) when it failed.
template <class Model, class Method>
LOCKSTEP_HD bool project_accepted_point(member_state<Model, Method>& ms, const double* p, const solver_options& opt) {
  if (!projects_after_steps(opt.projection, opt.form)) return true;
  state_vector<Model> y = Method::current(ms.method);
  projection_sizes sizes;
  member_status s = member_status::success;
  const std::uint64_t dropped = Method::jacobian(ms.method).dropped;
  phase<separate_device_phases<Model>>([&] {
    s = project_state<Model>(opt.projection, opt.form, opt.metric, Method::time(ms.method), y, p, sizes, dropped);
  });
  return record_projection<Model>(ms, s, y, sizes);
}

// What became of an accepted step's completion (its projection, residuals, events and save points):
// stopped, a stopping event ended the member (status stopped_by_event).
enum class completion : int { done = 0, suspended = 1, failed = 2, stopped = 3 };

// The split path's projection of the accepted point (formulation/projection.hpp, run_projection):
// begun after the accepted attempt, continued after each factor phase until it ends. The method's
// current point and t stay those of the accepted step until then.
template <class Model, class Method>
LOCKSTEP_HD completion project_accepted_point_split(member_state<Model, Method>& ms, const double* p,
                                                    const solver_options& opt, projection_work<Model>& w) {
  if (!projects_after_steps(opt.projection, opt.form)) return completion::done;
  state_vector<Model> y = Method::current(ms.method);
  if (w.phase == projection_phase::idle) begin_projection<Model>(w, opt.metric, y, p, Method::jacobian(ms.method).dropped);
  const member_status s = run_projection<Model>(w, opt.projection, Method::time(ms.method), p);
  if (w.phase != projection_phase::idle) return completion::suspended;
  projection_sizes sizes;
  const member_status accepted = accept_projection<Model>(s, w.q, w.v, y, sizes);
  return record_projection<Model>(ms, accepted, y, sizes) ? completion::done : completion::failed;
}

template <class Model, class Sink>
LOCKSTEP_HD void emit(int save_index, double t, state_vector<Model> y, const double* p, const solver_options& opt,
                      std::uint64_t dropped, Sink& sink) {
  if (opt.consistent_multipliers)
    phase<separate_device_phases<Model>>([&] { make_multipliers_consistent<Model>(t, y, p, dropped); });
  // Separate device calls (core/hd.hpp) whatever the model's size: they run only for members with
  // dropped rows, and inlined their matrices would join every step kernel's frame (docs/GPU.md).
  if (dropped != 0) phase<true>([&] { apply_multiplier_convention<Model>(t, y, p, opt, dropped); });
  sink(save_index, t, y);
}

// The state at an event's time t* (stepper/events.hpp): the step's dense output, projected onto the
// constraints as a save point is (by the coordinate projection where the options ask for none: dense
// output is not on the manifold), with the multipliers of the acceleration-level (index-1) system.
template <class Model, class Dense>
LOCKSTEP_HD state_vector<Model> event_point(double t_event, const double* p, const solver_options& opt,
                                            std::uint64_t dropped, const Dense& dense) {
  state_vector<Model> y;
  dense(t_event, y);
  solver_options projecting = opt;
  if (opt.projection == projection_kind::none) projecting.projection = projection_kind::coordinate;
  project_output<Model>(t_event, y, p, projecting, dropped);
  phase<separate_device_phases<Model>>([&] { make_multipliers_consistent<Model>(t_event, y, p, dropped); });
  return y;
}

// The events of the accepted step that ends at the (projected) point y at t (stepper/events.hpp),
// with dense(s, y) the step's dense output: each record handed to sink.event(index, k, t*, y*) with
// the multipliers in the options' convention; the time up to which the step's save points are
// written (t, or the stopping event's t*); done, stopped or failed (the member's status set).
template <class Model, class Dense, class Sink>
LOCKSTEP_HD completion complete_events(event_state<Model>& es, member_status& status, double t,
                                       const state_vector<Model>& y, const double* p, const solver_options& opt,
                                       std::uint64_t dropped, const Dense& dense, Sink& sink, double& saves_until) {
  saves_until = t;
  if constexpr (event_count<Model> > 0) {
    const auto record = [&](long index, int k, double t_event, state_vector<Model> y_event) {
      if (dropped != 0) phase<true>([&] { apply_multiplier_convention<Model>(t_event, y_event, p, opt, dropped); });
      sink.event(index, k, t_event, y_event);
    };
    const auto point = [&](double t_event) { return event_point<Model>(t_event, p, opt, dropped, dense); };
    const auto values = [&](double s, const state_vector<Model>& at) {
      return event_function_values<Model>(s, at, p, opt, dropped);
    };
    const events_outcome o = step_events<Model>(es, t, y, opt, values, dense, point, record);
    if (o == events_outcome::not_finite) {
      status = member_status::model_not_finite;
      return completion::failed;
    }
    if (o == events_outcome::stopped) {
      saves_until = es.t_stop;
      status = member_status::stopped_by_event;
      return completion::stopped;
    }
  } else {
    (void)es, (void)status, (void)y, (void)p, (void)opt, (void)dropped, (void)dense, (void)sink;
  }
  return completion::done;
}

// One step attempt of member_advance, for one member here and for SIMD lanes in
// lockstep/simd/member_inl.hpp (member_attempt_outcome, member_attempt).
#include "lockstep/stepper/member_attempt_generic.inc"

// After an accepted attempt: the projection (fused, or resumable when `split_projection` is given),
// the constraint residuals, the step's events, and the save points the step passed (up to a stopping
// event's time).
template <class Model, class Method, class Sink>
LOCKSTEP_HD completion complete_accepted_step(member_state<Model, Method>& ms, const double* p, const solver_options& opt,
                                              const double* save_times, int save_count, Sink& sink,
                                              projection_work<Model>* split_projection) {
  if (split_projection != nullptr) {
    const completion c = project_accepted_point_split<Model>(ms, p, opt, *split_projection);
    if (c != completion::done) return c;
  } else if (!project_accepted_point<Model>(ms, p, opt)) {
    return completion::failed;
  }
  const double t = Method::time(ms.method);
  const std::uint64_t dropped = Method::jacobian(ms.method).dropped;
  record_constraint_residuals<Model>(t, Method::current(ms.method), p, ms.counters, dropped);
  if (dropped != 0) {
    bool hold = true;
    phase<true>([&] { hold = dropped_rows_hold<Model>(t, Method::current(ms.method), p, opt, Method::jacobian(ms.method)); });
    if (!hold) {
      ms.status = member_status::singular_matrix;
      return completion::failed;
    }
  }
  double saves_until = t;
  const auto dense = [&](double s, state_vector<Model>& out) { Method::dense_output(ms.method, s, out); };
  const completion events = complete_events<Model>(ms.events, ms.status, t, Method::current(ms.method), p, opt,
                                                   dropped, dense, sink, saves_until);
  if (events == completion::failed) return events;
  while (ms.next_save < save_count && save_times[ms.next_save] <= saves_until) {
    state_vector<Model> y;
    if (save_times[ms.next_save] == t) {
      y = Method::current(ms.method);
    } else {
      Method::dense_output(ms.method, save_times[ms.next_save], y);
      project_output<Model>(save_times[ms.next_save], y, p, opt, dropped);
    }
    emit<Model>(ms.next_save, save_times[ms.next_save], y, p, opt, dropped, sink);
    ++ms.next_save;
  }
  return events;
}

}  // namespace detail

// The point a member that never starts reports as its final one: the (q0, v0) it was given, unprojected,
// and NaN multipliers (none were computed). docs/RESULTS-FORMAT.md, /members/final_q.
template <class Model>
LOCKSTEP_HD state_vector<Model> given_point(const vec<double, Model::n>& q0, const vec<double, Model::n>& v0) {
  using L = state_layout<Model>;
  state_vector<Model> y;
  for (int i = 0; i < L::size; ++i) y[i] = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < Model::n; ++i) {
    y[L::q + i] = q0[i];
    y[L::v + i] = v0[i];
  }
  return y;
}

// Consistent initialization and the method's start; writes the save times equal to t0. Leaves
// status = running, or the reason the member cannot start; a member that cannot start is placed at
// t0 and the point it was given (given_point), which member_final_state then reports. save_times are
// sorted, in [t0, t1].
template <class Model, class Method, class Sink>
LOCKSTEP_HD void member_begin(member_state<Model, Method>& ms, double t0, double t1, const vec<double, Model::n>& q0,
                              const vec<double, Model::n>& v0, const double* p, const solver_options& opt,
                              const double* save_times, int save_count, Sink& sink) {
  ms = member_state<Model, Method>{};
  const auto refuse = [&](member_status why) {
    ms.status = why;
    Method::place_unstarted(ms.method, t0, given_point<Model>(q0, v0));
  };
  // Fixed steps must divide [t0, t1] into whole steps (method/step_control.hpp, fixed_step_count).
  const bool off_grid = opt.fixed_h > 0.0 && fixed_step_count(t0, t1, opt.fixed_h) < 0;
  if (Method::check_options(opt)[0] != '\0' || !(t1 > t0) || off_grid) {
    refuse(member_status::invalid_input);
    return;
  }
  initial_values<Model> init;
  const member_status st = consistent_initialization<Model>(t0, q0, v0, p, opt, init, ms.counters);
  if (st != member_status::success) {
    refuse(st);
    return;
  }
  Method::start(ms.method, t0, t1, init, opt);
  Method::jacobian(ms.method).dropped = init.dropped;
  ms.counters.dropped_rows = static_cast<long>(init.dropped);
  const state_vector<Model>& y0 = Method::current(ms.method);
  detail::record_constraint_residuals<Model>(t0, y0, p, ms.counters, init.dropped);
  begin_events<Model>(ms.events, t0, y0, [&](double t, const state_vector<Model>& at) {
    return detail::event_function_values<Model>(t, at, p, opt, init.dropped);
  });
  while (ms.next_save < save_count && save_times[ms.next_save] <= t0) {
    if (save_times[ms.next_save] == t0) detail::emit<Model>(ms.next_save, t0, y0, p, opt, init.dropped, sink);
    ++ms.next_save;
  }
}

namespace detail {

// One member's stepper for member_attempt_generic.inc: the method's attempt, with the record of a
// revised rank decision, and the completion of an accepted step.
template <class Model, class Method, class Sink>
struct member_stepper {
  const double* p;
  const double* save_times;
  int save_count;
  Sink& sink;
  projection_work<Model>* split_projection;

  LOCKSTEP_HD double time(const member_state<Model, Method>& ms) const { return Method::time(ms.method); }

  // The attempt's attempt_result as a double; on failed, the member's status says why.
  LOCKSTEP_HD double attempt(bool, member_state<Model, Method>& ms, double t1, const solver_options& opt) {
    member_status why = member_status::running;
    const std::uint64_t dropped_before = Method::jacobian(ms.method).dropped;
    const attempt_result r = Method::attempt(ms.method, t1, p, opt, ms.counters, why);
    if (const std::uint64_t dropped = Method::jacobian(ms.method).dropped; dropped != dropped_before) {
      ++ms.counters.rank_changes;  // a revised decision (constraint_rank.hpp: hysteresis keeps these rare)
      ms.counters.dropped_rows = static_cast<long>(static_cast<std::uint64_t>(ms.counters.dropped_rows) | dropped);
    }
    if (r == attempt_result::failed) ms.status = why;
    return double(int(r));
  }

  LOCKSTEP_HD member_attempt_outcome<bool> complete(bool, member_state<Model, Method>& ms, const solver_options& opt) {
    const completion c = complete_accepted_step<Model>(ms, p, opt, save_times, save_count, sink, split_projection);
    return {c == completion::failed || c == completion::stopped, c == completion::suspended};
  }
};

}  // namespace detail

// At most max_attempts step attempts towards t1 (member_attempt_generic.inc: one attempt, its rules);
// returns true when the member has finished (status success or a failure), false when it paused at an
// attempt boundary or, on the split path, at a factorization. `split_projection` (the split path only;
// lockstep/detail/split_factor.hpp) holds the accepted point's projection when it suspends at a
// factorization: the next call resumes it before any new attempt. Null, projections run in the thread
// (project_state).
template <class Model, class Method, class Sink>
LOCKSTEP_HD bool member_advance(member_state<Model, Method>& ms, int max_attempts, double t1, const double* p,
                                const solver_options& opt, const double* save_times, int save_count, Sink& sink,
                                projection_work<Model>* split_projection = nullptr) {
  if (ms.status != member_status::running) return true;
  if (split_projection != nullptr && split_projection->phase != projection_phase::idle) {
    const detail::completion c = detail::complete_accepted_step<Model>(ms, p, opt, save_times, save_count, sink, split_projection);
    if (c == detail::completion::suspended) return false;
    if (c == detail::completion::failed || c == detail::completion::stopped) return true;
  }
  detail::member_stepper<Model, Method, Sink> stepper{p, save_times, save_count, sink, split_projection};
  for (int a = 0; a < max_attempts; ++a) {
    const detail::member_attempt_outcome<bool> o = detail::member_attempt(true, ms, t1, opt, stepper);
    if (o.paused) return false;
    if (o.finished) return true;
  }
  if (!(Method::time(ms.method) < t1)) {  // no attempt asked for (max_attempts 0) at the end
    ms.status = member_status::success;
    return true;
  }
  return false;
}

// The member's final time: where it stopped, or the method's time (t1 after success).
template <class Model, class Method>
LOCKSTEP_HD double member_final_time(const member_state<Model, Method>& ms) {
  if constexpr (event_count<Model> > 0)
    if (ms.status == member_status::stopped_by_event) return ms.events.t_stop;
  return Method::time(ms.method);
}

// The member's final point, with multipliers consistent with (q, v) when the options ask for it; for
// a member a stopping event ended, the event's point (stepper/events.hpp: multipliers of the
// acceleration-level system).
template <class Model, class Method>
LOCKSTEP_HD state_vector<Model> member_final_state(const member_state<Model, Method>& ms, const double* p,
                                                   const solver_options& opt) {
  if constexpr (event_count<Model> > 0)
    if (ms.status == member_status::stopped_by_event) {
      state_vector<Model> y = ms.events.y_stop;
      const std::uint64_t dropped = Method::jacobian(ms.method).dropped;
      if (dropped != 0) phase<true>([&] { detail::apply_multiplier_convention<Model>(ms.events.t_stop, y, p, opt, dropped); });
      return y;
    }
  state_vector<Model> y = Method::current(ms.method);
  // A member that never started (refused options, failed initialization) reports the point it was given
  // (member_begin), with no multipliers to correct.
  const bool started = ms.status == member_status::success || ms.attempts > 0;
  if (!started) return y;
  const std::uint64_t dropped = Method::jacobian(ms.method).dropped;
  if (opt.consistent_multipliers) detail::make_multipliers_consistent<Model>(Method::time(ms.method), y, p, dropped);
  if (dropped != 0) phase<true>([&] { detail::apply_multiplier_convention<Model>(Method::time(ms.method), y, p, opt, dropped); });
  return y;
}

}  // namespace lockstep
