// lockstep/stepper/events.hpp — events: the zero crossings of a model's event functions, located on
// each accepted step's dense output, per member.
//
// A model may declare scalar event functions g_k(t, q, v; p), k = 0 .. n_events - 1, each with a
// direction and an action (model/concept.hpp):
//
//     static constexpr int n_events = 1;
//     static constexpr event_declaration events[n_events] = {
//         {"bottom", event_direction::rising, event_action::stop, "the bob passes below the pivot, left to right"}};
//     template <class T, class P> LOCKSTEP_HD static vec<T, n_events> event(const T& t, const vec<T, n>& q,
//                                                                          const vec<T, n>& v, const P* p);
//
// or, for events of the accelerations and multipliers (a rod's tension falling below a load, a
// contact force changing sign), g_k(t, q, v, q'', lambda, nu; p): `event(t, q, v, a, lambda, nu, p)`.
// Their q'', lambda and nu are those of the acceleration-level (index-1) system at (t, q, v)
// (method/initialize.hpp, accelerations_and_multipliers; with dropped redundant rows, in the options'
// multiplier convention), at every point where g is evaluated: the step's end, its interior checks
// and the locator's trial points. The method's own lambda would not do: on Radau IIA's index-3
// formulation it is of low order, and its dense output lower still, so g would jump between the
// accepted points and the points between them. So defined, g is one continuous function of
// (t, q, v), and it is what a record at the event holds. Each evaluation costs one solve of that
// system, about a Newton iteration's work; a model whose events do not need it declares the first form.
//
// Detection. After every accepted step (and its projection) the member stepper evaluates g at the new
// point and compares it with g at the last accepted point (or the consistent initial point): event k
// occurs in the step when g_k goes from below zero to zero or above (rising), from above zero to zero
// or below (falling), or either (both). A value that arrives at exactly zero counts on the side it
// arrived at, so the next step, which starts from it, cannot find the same crossing again. With
// `event_interior_checks` = c > 0, g is also evaluated at c equally spaced interior points of the
// step's dense output, and each of the c + 1 pieces is tested in turn: two crossings of one event in
// a step (a grazing approach) are found when a check separates them, and missed otherwise, as in
// every solver that locates events from sign changes (SUNDIALS IDA's root finding; SciPy's solve_ivp).
//
// Location. The crossing time t* in a bracket [a, b] is found by the Illinois variant of regula falsi
// (Dowell & Jarratt 1971, "A modified regula falsi method for computing the root of an equation", BIT
// 11; the method of IDA's root finder, Hindmarsh et al., SUNDIALS IDA user guide, "Rootfinding") on
// g_k of the method's dense output, until the bracket is shorter than the time tolerance: the
// study's `event_time_tolerance`, or by default 100 eps (|t| + |h|), IDA's default. t* is the
// bracket's end on the far side of the crossing, so g_k(t*) has crossed. Dense output is not on the
// constraint manifold (stepper/member.hpp), so the state at t* is then projected onto the position and
// velocity constraints (coordinate projection, or the study's own projection when it has one), and
// its multipliers come from the acceleration-level (index-1) system (method/initialize.hpp,
// accelerations_and_multipliers), not from the method's index-3 lambda, whose dense output is of low
// order on Radau IIA.
//
// Several crossings in one step are handled in time order (ties by event index). Each occurrence is
// counted and the first time of each event kept (event_state); `record` and `stop` events hand the
// sink a record (record index, event index, t*, state at t*); `count` events only count. A `stop`
// ends the member there, with status stopped_by_event: the step beyond t* is discarded (no later
// event of the step is handled, no later save point written) and the member's final point is the
// event's state at t*. Locating uses only the accepted step's dense output: it never changes the
// trajectory, the step sizes or the counters of the method, so a member with events takes the same
// steps as without them, up to a stop.
//
// The event state is part of the member's plain-data state (stepper/member.hpp, member_state), so it
// is the same on every CPU backend, in lanes (lane by lane, lockstep/simd/member_inl.hpp), on the
// device (one thread per member, as the rest of the member) and across pauses; a model without events
// carries an empty one, and its kernels have no event code.
#pragma once

#include <cstddef>
#include <limits>
#include <utility>

#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/model/concept.hpp"

namespace lockstep {

// What the stepper keeps of a member's events: g at the last accepted point, the occurrences of each
// event and the first time of each (NaN before), the records handed to the sink, and where a stopping
// event ended the member.
template <class Model, int E = event_count<Model>>
struct event_state {
  double t = 0.0;                 // the time of g: the last accepted point
  vec<double, E> g;
  vec<double, E> first_time;      // NaN until event k occurred
  long count[E] = {};             // occurrences of event k
  long records = 0;               // records handed to the sink (record and stop events)
  int stop_event = -1;            // the event that stopped the member, or -1
  double t_stop = 0.0;            // ... and where: the member's final time and point
  state_vector<Model> y_stop;
};
template <class Model>
struct event_state<Model, 0> {};

// What became of a step's events: none stopped the member, one did, or an event function (or its
// location) gave a value that is not finite.
enum class events_outcome : int { went_on = 0, stopped = 1, not_finite = 2 };

namespace detail {

// g at a point (t, y) whose multipliers the caller has made those of the acceleration-level system (for
// events of the multipliers: stepper/member.hpp, event_function_values) or need not (the others).
template <class Model>
LOCKSTEP_HD vec<double, event_count<Model>> event_values(double t, const state_vector<Model>& y, const vec<double, Model::n>& a,
                                                         const double* p) {
  using L = state_layout<Model>;
  vec<double, Model::n> q, v;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = y[L::q + i];
    v[i] = y[L::v + i];
  }
  if constexpr (events_of_multipliers<Model>) {
    vec<double, Model::m> lambda;
    vec<double, Model::k> nu;
    for (int i = 0; i < Model::m; ++i) lambda[i] = y[L::lambda + i];
    for (int i = 0; i < Model::k; ++i) nu[i] = y[L::nu + i];
    return Model::template event<double, double>(t, q, v, a, lambda, nu, p);
  } else {
    (void)a;
    return Model::template event<double, double>(t, q, v, p);
  }
}

// The direction and action of event k. Device code may not index a model's `events` array (a host
// variable: its entries hold strings); these local constant copies of the enums it may.
template <class Model, std::size_t... I>
LOCKSTEP_HD event_direction direction_of(int k, std::index_sequence<I...>) {
  constexpr event_direction directions[] = {Model::events[I].direction...};
  return directions[k];
}
template <class Model, std::size_t... I>
LOCKSTEP_HD event_action action_of(int k, std::index_sequence<I...>) {
  constexpr event_action actions[] = {Model::events[I].action...};
  return actions[k];
}

// Whether g went from `before` to `after` across zero in the event's direction (header).
LOCKSTEP_HD constexpr bool crosses(event_direction d, double before, double after) {
  const bool rising = before < 0.0 && after >= 0.0, falling = before > 0.0 && after <= 0.0;
  return d == event_direction::rising ? rising : d == event_direction::falling ? falling : rising || falling;
}

// The crossing of g_k in [a, b], g_k(a) = ga before it and g_k(b) = gb past it (header: Illinois);
// returns t* (NaN where g was not finite on the way). dense(s, y) is the step's dense output, values(t,
// y) the event functions at a point.
template <class Model, class Dense, class Values>
LOCKSTEP_HD double locate_crossing(int k, double a, double ga, double b, double gb, double tolerance,
                                   const Values& values, const Dense& dense) {
  const bool from_below = ga < 0.0;  // past the crossing: g >= 0 from below, g <= 0 from above
  int retained = 0;                  // +1: a was kept last time, -1: b was (Illinois halves the other's g)
  for (int iteration = 0; iteration < 200 && b - a > tolerance; ++iteration) {
    double c = a + (b - a) * (ga / (ga - gb));  // regula falsi: the secant's zero
    if (!(c > a && c < b)) c = a + 0.5 * (b - a);
    state_vector<Model> y;
    dense(c, y);
    const double gc = values(c, y)[k];
    if (!is_finite(gc)) return std::numeric_limits<double>::quiet_NaN();
    if (from_below ? gc >= 0.0 : gc <= 0.0) {
      b = c, gb = gc;
      if (retained == 1) ga *= 0.5;
      retained = 1;
    } else {
      a = c, ga = gc;
      if (retained == -1) gb *= 0.5;
      retained = -1;
    }
  }
  return b;
}

}  // namespace detail

// What a finished member's events came to, into the result's arrays (each may be null: not wanted):
// each event's occurrences and first time [n_events], the records it made, the event that stopped it.
template <class Model>
void member_event_results_of(const event_state<Model>& es, long* counts, double* first_times, long* records_made,
                             int* stop_event) {
  if constexpr (event_count<Model> > 0) {
    for (int k = 0; k < event_count<Model>; ++k) {
      if (counts != nullptr) counts[k] = es.count[k];
      if (first_times != nullptr) first_times[k] = es.first_time[k];
    }
    if (records_made != nullptr) *records_made = es.records;
    if (stop_event != nullptr) *stop_event = es.stop_event;
  } else {
    (void)es, (void)counts, (void)first_times, (void)records_made, (void)stop_event;
  }
}

// The member's events at its consistent initial point (t0, y0): g there (values(t, y): the event
// functions at a point, stepper/member.hpp's event_function_values), nothing occurred yet.
template <class Model, class Values>
LOCKSTEP_HD void begin_events(event_state<Model>& es, double t0, const state_vector<Model>& y0, const Values& values) {
  if constexpr (event_count<Model> > 0) {
    es = event_state<Model>{};
    es.t = t0;
    es.g = values(t0, y0);
    for (int k = 0; k < event_count<Model>; ++k) es.first_time[k] = std::numeric_limits<double>::quiet_NaN();
  } else {
    (void)es, (void)t0, (void)y0, (void)values;
  }
}

// The events of the step from es.t to the accepted (projected) point y at t, in time order (header):
// counted, recorded through record(index, k, t*, y*), and stopped at the first stopping one. values(t,
// y) is the event functions at a point (begin_events); dense(s, y) the step's dense output on [es.t,
// t]; point(t*) the state at an event (header: projected, with the multipliers of the
// acceleration-level system; stepper/member.hpp, event_point).
template <class Model, class Values, class Dense, class Point, class Record>
LOCKSTEP_HD events_outcome step_events(event_state<Model>& es, double t, const state_vector<Model>& y,
                                       const solver_options& opt, const Values& values, const Dense& dense,
                                       const Point& point, Record& record) {
  constexpr int E = event_count<Model>;
  if constexpr (E > 0) {
    const vec<double, E> g_end = values(t, y);
    for (int k = 0; k < E; ++k)
      if (!is_finite(g_end[k])) return events_outcome::not_finite;
    const double h = t - es.t;
    const double tolerance = opt.event_time_tolerance > 0.0
                                 ? opt.event_time_tolerance
                                 : 100.0 * std::numeric_limits<double>::epsilon() * (abs(t) + abs(h));
    const int pieces = opt.event_interior_checks + 1;
    double a = es.t;
    vec<double, E> g_a = es.g;
    for (int piece = 1; piece <= pieces; ++piece) {
      double b = t;
      vec<double, E> g_b = g_end;
      if (piece < pieces) {
        b = es.t + h * (double(piece) / double(pieces));
        state_vector<Model> y_b;
        dense(b, y_b);
        g_b = values(b, y_b);
        for (int k = 0; k < E; ++k)
          if (!is_finite(g_b[k])) return events_outcome::not_finite;
      }
      // The crossings of this piece, ordered by time and then by event (insertion into a short list).
      double found_t[E];
      int found_k[E];
      int found = 0;
      for (int k = 0; k < E; ++k) {
        const event_direction direction = detail::direction_of<Model>(k, std::make_index_sequence<E>{});
        if (!detail::crosses(direction, g_a[k], g_b[k])) continue;
        const double t_event = detail::locate_crossing<Model>(k, a, g_a[k], b, g_b[k], tolerance, values, dense);
        if (!is_finite(t_event)) return events_outcome::not_finite;
        int at = found++;
        for (; at > 0 && found_t[at - 1] > t_event; --at) {
          found_t[at] = found_t[at - 1];
          found_k[at] = found_k[at - 1];
        }
        found_t[at] = t_event;
        found_k[at] = k;
      }
      for (int i = 0; i < found; ++i) {
        const int k = found_k[i];
        const double t_event = found_t[i];
        ++es.count[k];
        if (!is_finite(es.first_time[k])) es.first_time[k] = t_event;  // the first: NaN until now
        const event_action action = detail::action_of<Model>(k, std::make_index_sequence<E>{});
        if (action == event_action::count) continue;
        const state_vector<Model> y_event = point(t_event);
        record(es.records, k, t_event, y_event);
        ++es.records;
        if (action == event_action::stop) {
          es.stop_event = k;
          es.t_stop = t_event;
          es.y_stop = y_event;
          return events_outcome::stopped;
        }
      }
      a = b;
      g_a = g_b;
    }
    es.t = t;
    es.g = g_end;
  } else {
    (void)es, (void)t, (void)y, (void)opt, (void)values, (void)dense, (void)point, (void)record;
  }
  return events_outcome::went_on;
}

}  // namespace lockstep
