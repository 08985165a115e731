// lockstep/simd/member_inl.hpp — the member stepper (lockstep/stepper/member.hpp, member_advance)
// around a method's step attempt in lanes (BDF: bdf_attempt_inl.hpp; the Radau IIA family:
// radau_attempt_inl.hpp; rho_inf: rhoinf_attempt_inl.hpp; the explicit pairs: dopri5_attempt_inl.hpp):
// W members, one per lane, each advanced by one attempt per call with member_advance's rules, so that a
// lane ends every call with exactly the member state, counters, status and outputs its member has alone
// after the same number of attempts (tests/simd/member_test.cpp).
// member_advance's results do not depend on how many attempts one call makes (it pauses at attempt
// boundaries), so one attempt per call is the member alone.
//
// What runs in lanes: the budget and end checks, the attempt, the record of a revised rank decision,
// the projection of the accepted points (projection_inl.hpp: formulation/projection_generic.inc) and
// their constraint residuals (evaluated on packs: each lane gets its member's bits). What runs lane by
// lane on the member's own double code, for the lanes whose attempt was accepted: the check of dropped
// rows, the step's events
// (stepper/events.hpp, on the lane's dense output) and the save points the step passed (dense output
// from the lane's last step, projected as an output, multipliers made consistent, handed to the sink). These are member.hpp's functions, so they compute the bits they
// compute for the member alone; they run once per accepted step, not per Newton iteration, and the time
// they take is measured in bench/simd/member_speed.cpp.
//
// A member enters a lane after member_begin (load_member) and leaves it for member_final_state
// (store_member): the consistent initialization and the final multipliers run on doubles. Every lane
// must hold a member that member_begin started, also a lane that idles: the lanes outside a call's mask
// are computed too (their results discarded), and the state of a member that never started (no step,
// no error scales) would divide by zero there, raising flags the members alone do not. So a member that
// cannot start has finished and does not enter a lane, a finished member stays in its lane until it is
// replaced, and fill_idle_lanes gives a lane that never had a member a copy of another lane's.
//
// Every method runs in lanes: BDF, the Radau IIA family (Radau IIA 5, Radau IIA 3, backward Euler),
// rho_inf, the explicit pairs (dopri5, tsit5) and auto (auto_attempt_inl.hpp: both phases' lanes, each
// lane in its member's phase); method_lanes names each one's lanes, and the overloads below give the
// stepper what methods.hpp gives it for one member (the attempt, the current time and point and the
// point's replacement by the projected one, the Jacobian's dropped rows, the work done).
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_MEMBER_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_MEMBER_INL_HPP_
#undef LOCKSTEP_SIMD_MEMBER_INL_HPP_
#else
#define LOCKSTEP_SIMD_MEMBER_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "hwy/highway.h"
#include "lockstep/method/methods.hpp"
#include "lockstep/simd/auto_attempt_inl.hpp"
#include "lockstep/simd/bdf_attempt_inl.hpp"
#include "lockstep/simd/dopri5_attempt_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/projection_inl.hpp"
#include "lockstep/simd/radau_attempt_inl.hpp"
#include "lockstep/simd/rhoinf_attempt_inl.hpp"
#include "lockstep/stepper/member.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// The lanes of a method's state: method_lanes_t<Model, Method, D> holds Method::state<Model> for W
// members.
template <class Model, class Method, class D>
struct method_lanes;
template <class Model, class D>
struct method_lanes<Model, bdf_method, D> {
  using type = bdf_lanes<Model, D>;
};
template <class Model, class RT, method_kind Kind, class D>
struct method_lanes<Model, radau_iia_method<RT, Kind>, D> {
  using type = radau_lanes<Model, RT, D>;
};
template <class Model, class D>
struct method_lanes<Model, rhoinf_method, D> {
  using type = rhoinf_lanes<Model, D>;
};
template <class Model, class T, method_kind Kind, class D>
struct method_lanes<Model, explicit_pair_method<T, Kind>, D> {
  using type = dopri5_lanes<Model, T, D>;
};
template <class Model, class D>
struct method_lanes<Model, auto_method, D> {
  using type = auto_lanes<Model, D>;
};
template <class Model, class Method, class D>
using method_lanes_t = typename method_lanes<Model, Method, D>::type;

// What the stepper needs of a method in lanes, for each method: its attempt (returning each lane's
// attempt_result as a double), its current time and point (Method::time, Method::current), its
// Jacobian's dropped rows (Method::jacobian(s).dropped) and its work (corrector_work).
template <class Model, class D>
HWY_INLINE pack<D> method_attempt(mask<D> lanes, bdf_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                  const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return bdf_attempt<Model>(lanes, s, t_end, p, opt, counters, status);
}
template <class Model, class RT, class D>
HWY_INLINE pack<D> method_attempt(mask<D> lanes, radau_lanes<Model, RT, D>& s, pack<D> t_end, const pack<D>* p,
                                  const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return radau_attempt<Model, RT>(lanes, s, t_end, p, opt, counters, status);
}
template <class Model, class D>
HWY_INLINE pack<D> method_attempt(mask<D> lanes, rhoinf_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                  const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return rhoinf_attempt_in_lanes<Model>(lanes, s, t_end, p, opt, counters, status);
}
template <class Model, class T, class D>
HWY_INLINE pack<D> method_attempt(mask<D> lanes, dopri5_lanes<Model, T, D>& s, pack<D> t_end, const pack<D>* p,
                                  const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return dopri5_attempt_in_lanes<Model, T>(lanes, s, t_end, p, opt, counters, status);
}
template <class Model, class D>
HWY_INLINE pack<D> method_attempt(mask<D> lanes, auto_lanes<Model, D>& s, pack<D> t_end, const pack<D>* p,
                                  const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return auto_attempt_in_lanes<Model>(lanes, s, t_end, p, opt, counters, status);
}
template <class Lanes>
HWY_INLINE auto method_time(const Lanes& s) {
  return s.t;
}
template <class Model, class D>
HWY_INLINE pack<D> method_time(const auto_lanes<Model, D>& s) {
  return auto_time(s);
}
template <class Model, class D>
HWY_INLINE auto& current_point(bdf_lanes<Model, D>& s) {
  return s.y_newest;
}
template <class Model, class RT, class D>
HWY_INLINE auto& current_point(radau_lanes<Model, RT, D>& s) {
  return s.y;
}
template <class Model, class D>
HWY_INLINE auto& current_point(rhoinf_lanes<Model, D>& s) {
  return s.y;
}
template <class Model, class T, class D>
HWY_INLINE auto& current_point(dopri5_lanes<Model, T, D>& s) {
  return s.y;
}
template <class Model, class D>
HWY_INLINE auto current_point(auto_lanes<Model, D>& s) {  // by value: each lane's phase's
  return auto_current(s);
}
template <class Model, class D>
HWY_INLINE const dropped_lanes<D>& dropped_rows(const bdf_lanes<Model, D>& s) {
  return s.corrector.dropped;
}
template <class Model, class RT, class D>
HWY_INLINE const dropped_lanes<D>& dropped_rows(const radau_lanes<Model, RT, D>& s) {
  return s.dropped;
}
template <class Model, class D>
HWY_INLINE const dropped_lanes<D>& dropped_rows(const rhoinf_lanes<Model, D>& s) {
  return s.corrector.dropped;
}
template <class Model, class T, class D>
HWY_INLINE const dropped_lanes<D>& dropped_rows(const dopri5_lanes<Model, T, D>& s) {
  return s.rows.dropped;
}
template <class Model, class D>
HWY_INLINE const dropped_lanes<D>& dropped_rows(const auto_lanes<Model, D>& s) {
  return s.explicit_phase.rows.dropped;  // auto_method::jacobian: the explicit phase's rows
}
template <class Model, class D>
HWY_INLINE const corrector_work& method_work(const bdf_lanes<Model, D>& s) {
  return s.corrector.work;
}
template <class Model, class RT, class D>
HWY_INLINE const corrector_work& method_work(const radau_lanes<Model, RT, D>& s) {
  return s.work;
}
template <class Model, class D>
HWY_INLINE const corrector_work& method_work(const rhoinf_lanes<Model, D>& s) {
  return s.corrector.work;
}
template <class Model, class T, class D>
HWY_INLINE const corrector_work& method_work(const dopri5_lanes<Model, T, D>& s) {
  return s.work;
}
template <class Model, class D>
HWY_INLINE const corrector_work& method_work(const auto_lanes<Model, D>& s) {
  return s.work;
}

// Method::replace_current for the lanes of `lanes`: y becomes their current point; an explicit pair also
// moves its dense output's end there (dopri5_replace_current).
template <class Model, class Lanes, class Mask, class Y>
HWY_INLINE void replace_current(Mask lanes, Lanes& s, const Y& y) {
  auto& current = current_point(s);
  for (int i = 0; i < state_layout<Model>::size; ++i) current[i] = select(lanes, y[i], current[i]);
}
template <class Model, class T, class D, class Mask, class Y>
HWY_INLINE void replace_current(Mask lanes, dopri5_lanes<Model, T, D>& s, const Y& y) {
  dopri5_replace_current<Model>(lanes, s, y);
}
template <class Model, class D, class Mask, class Y>
HWY_INLINE void replace_current(Mask lanes, auto_lanes<Model, D>& s, const Y& y) {
  auto_replace_current<Model>(lanes, s, y);
}

// member_state<Model, Method> and the member's parameters, per lane: the method and the counts an
// attempt changes in lanes, the rest of the counters and the next save index lane by lane.
template <class Model, class Method, class D>
struct member_lanes {
  static constexpr size_t max_lanes = hn::MaxLanes(D());
  static constexpr int n_params = Model::n_params > 0 ? Model::n_params : 1;
  method_lanes_t<Model, Method, D> method;
  attempt_counters_lanes<D> counters;
  pack<D> status{double(member_status::running)};
  pack<D> attempts{0.0};  // step attempts so far (member_state::attempts)
  pack<D> p[n_params];     // parameter i of every lane
  // Lane by lane: the parameters as the member's own row, the counts the attempt does not change
  // (projections, constraint residuals, rank decisions), and the first save time not yet written.
  double p_row[max_lanes][n_params] = {};
  member_counters other_counters[max_lanes] = {};
  int next_save[max_lanes] = {};
  event_state<Model> events[max_lanes];  // a model without events has none (stepper/events.hpp)
  // A member read out of its lane for its dense output or dropped rows.
  typename Method::template state<Model> scratch;
  // A member read from its chunk on its way into a lane: kept here, since a local one is kilobytes that
  // the compiler zeroes at every declaration (the chunk's copy, soa_load, then writes every byte).
  member_state<Model, Method> incoming;
  // The lanes' work, for their utilization (docs/SIMD.md, "Lane utilization"): the step attempts the
  // pack ran, each of which every lane executes, and the lanes among them that attempted a member's
  // step (a lane that idles, has finished or was refused by its budget executes without one).
  std::uint64_t pack_attempts = 0, lane_attempts = 0;

  member_lanes() { clear_lanes(method); }
};

// Lane l of M becomes the member ms with parameters p (after member_begin, or between two calls of
// member_advance).
template <class Model, class Method, class D>
HWY_INLINE void load_member(member_lanes<Model, Method, D>& M, size_t l, const member_state<Model, Method>& ms,
                            const double* p) {
  load_lane(M.method, l, ms.method);
  load_counters_lane(M.counters, l, ms.counters);
  M.other_counters[l] = ms.counters;
  set_lane(M.status, l, double(ms.status));
  set_lane(M.attempts, l, double(ms.attempts));
  M.next_save[l] = ms.next_save;
  M.events[l] = ms.events;
  for (int i = 0; i < Model::n_params; ++i) {
    M.p_row[l][i] = p[i];
    set_lane(M.p[i], l, p[i]);
  }
}

// The member in lane l of M, into ms (the inverse of load_member).
template <class Model, class Method, class D>
HWY_INLINE void store_member(const member_lanes<Model, Method, D>& M, size_t l, member_state<Model, Method>& ms) {
  store_lane(M.method, l, ms.method);
  ms.counters = M.other_counters[l];
  store_counters_lane(M.counters, l, ms.counters);
  ms.status = member_status(int(lane_of(M.status, l)));
  ms.attempts = long(lane_of(M.attempts, l));
  ms.next_save = M.next_save[l];
  ms.events = M.events[l];
}

// Every lane outside `busy` takes a copy of the first lane of `busy`'s member, to carry masked (see the
// header); for lanes that never had a member, after the first members are loaded.
template <class Model, class Method, class D>
HWY_INLINE void fill_idle_lanes(member_lanes<Model, Method, D>& M, mask<D> busy) {
  const D d;
  if (hn::AllFalse(d, busy) || hn::AllTrue(d, busy)) return;
  const size_t first = size_t(hn::FindKnownFirstTrue(d, busy));
  member_state<Model, Method>& ms = M.incoming;
  store_member(M, first, ms);
  for (size_t l = 0; l < hn::Lanes(d); ++l)
    if (!mask_lane_of<D>(busy, l)) load_member(M, l, ms, M.p_row[first]);
}

// One step attempt of member_advance (member_attempt_outcome, member_attempt), the text member.hpp
// compiles for one member.
#include "lockstep/stepper/member_attempt_generic.inc"  // IWYU pragma: keep

// Where the lanes find Model's projection of accepted points (member_lanes_detail::project_points_in_lanes):
// compiled with each method's lanes (false, the default), or apart (true): then the lanes call it
// through registered_lanes_projection, which the unit that compiles it sets. A model file's engine
// compiles it apart, in a part of its own that only the studies that project after steps need
// (host/engine/engine_sources.cpp, parts_of), and every lanes unit of that engine declares this
// specialization.
template <class Model>
struct lanes_projection_apart : std::false_type {};

template <class Model, class D>
using lanes_projection = mask<D> (*)(mask<D> accepted, const pack<D>& t, const pack<D>* p, const dropped_lanes<D>& dropped,
                                     const solver_options& opt, double (*y)[hn::MaxLanes(D())], pack<D>& status,
                                     member_counters* counters);
template <class Model, class D>
inline lanes_projection<Model, D> registered_lanes_projection = nullptr;

namespace member_lanes_detail {

// member.hpp's complete_accepted_step (the fused path) for the lanes, in three parts: the projection of
// the accepted points, in lanes (lanes_stepper::complete, lockstep/simd/projection_inl.hpp), the
// constraint residuals, which the lanes evaluate together (below), and the rest, lane by lane.

// First, where projections follow the steps (projects_after_steps, which the caller tests once for all
// lanes), the accepted points projected in lanes: each gets its member's project_state. y holds the
// lanes' current points (y[i][l], component i of lane l) at their times t with their parameters p and
// dropped rows; the lanes that succeed get their projected point there and count the projection in
// their counters, and the lanes returned (their status set) failed. Independent of the method, and kept
// out of line, so that the completion of the studies that do not project stays as small as it was and a
// model file's engine compiles it in a part of its own, for the studies that project alone
// (lanes_projection_apart above).
template <class Model, class D>
HWY_NOINLINE mask<D> project_points_in_lanes(mask<D> accepted, const pack<D>& t, const pack<D>* p,
                                             const dropped_lanes<D>& dropped, const solver_options& opt,
                                             double (*y)[hn::MaxLanes(D())], pack<D>& status,
                                             member_counters* counters) {
  using L = state_layout<Model>;
  using P = pack<D>;
  const D d;
  lockstep::vec<P, Model::n> q, v;
  for (int i = 0; i < Model::n; ++i) {
    q[i] = P(hn::Load(d, y[L::q + i]));
    v[i] = P(hn::Load(d, y[L::v + i]));
  }
  P size_q(0.0), size_v(0.0);
  const P s = project_point<Model>(accepted, opt.projection, opt.form, opt.metric, t, q, v, p, dropped, size_q, size_v);
  const mask<D> projected = hn::And(accepted, succeeded<P>(s));
  const mask<D> failed = hn::AndNot(projected, accepted);
  status = select(failed, s, status);
  for (int i = 0; i < Model::n; ++i) {
    hn::Store(select(projected, q[i], P(hn::Load(d, y[L::q + i]))).v, d, y[L::q + i]);
    hn::Store(select(projected, v[i], P(hn::Load(d, y[L::v + i]))).v, d, y[L::v + i]);
  }
  const uint64_t lanes = mask_bits<D>(projected);
  for (size_t l = 0; l < hn::Lanes(d); ++l)
    if (lanes >> l & 1) detail::count_projection(counters[l], projection_sizes{lane_of(size_q, l), lane_of(size_v, l)});
  return failed;
}

// The constraint residuals of the lanes in `lanes` at their accepted points (y[i][l], t[l]; after the
// projection), recorded in each lane's counters: the residuals are evaluated on packs (every lane at its
// own point, its results discarded outside `lanes`), which gives each lane the bits of the member's
// evaluation on doubles (tests/simd/pack_model_test.cpp), for a fraction of eight evaluations' time.
template <class Model, class Method, class D>
HWY_INLINE void record_constraint_residuals(member_lanes<Model, Method, D>& M, mask<D> lanes,
                                            const double (&y)[state_layout<Model>::size][member_lanes<Model, Method, D>::max_lanes],
                                            const double* t, const int64_t* dropped) {
  using L = state_layout<Model>;
  using P = pack<D>;
  constexpr size_t max_lanes = member_lanes<Model, Method, D>::max_lanes;
  constexpr int m = Model::m, k = Model::k;
  if constexpr (m > 0 || k > 0) {
    const D d;
    lockstep::vec<P, Model::n> q, v;
    for (int i = 0; i < Model::n; ++i) {
      q[i] = P(hn::Load(d, y[L::q + i]));
      v[i] = P(hn::Load(d, y[L::v + i]));
    }
    const P t_lanes(hn::Load(d, t));
    HWY_ALIGN double phi[m > 0 ? m : 1][max_lanes], rate[m > 0 ? m : 1][max_lanes], nonholonomic[k > 0 ? k : 1][max_lanes];
    if constexpr (m > 0) {  // member.hpp's one evaluation for both
      const auto both = constraint_along<Model>(t_lanes, q, v, M.p);
      for (int i = 0; i < m; ++i) hn::Store(both.phi[i].v, d, phi[i]), hn::Store(both.rate[i].v, d, rate[i]);
    }
    if constexpr (k > 0) {
      const lockstep::vec<P, k> r = Model::template nonholonomic<P, P>(t_lanes, q, v, M.p);
      for (int i = 0; i < k; ++i) hn::Store(r[i].v, d, nonholonomic[i]);
    }
    const uint64_t bits = mask_bits<D>(lanes);
    for (size_t l = 0; l < hn::Lanes(d); ++l) {
      if (!(bits >> l & 1)) continue;
      member_counters& c = M.other_counters[l];
      if constexpr (m > 0) {
        lockstep::vec<double, m> phi_l, rate_l;
        for (int i = 0; i < m; ++i) phi_l[i] = phi[i][l], rate_l[i] = rate[i][l];
        detail::record_holonomic_residuals<Model>(phi_l, rate_l, c, static_cast<std::uint64_t>(dropped[l]));
      }
      if constexpr (k > 0) {
        lockstep::vec<double, k> nonholonomic_l;
        for (int i = 0; i < k; ++i) nonholonomic_l[i] = nonholonomic[i][l];
        detail::record_nonholonomic_residuals<Model>(nonholonomic_l, c);
      }
    }
  }
}

// Last, for the member in lane l at its (projected) accepted point y at t: the check of the dropped
// rows, the step's events and the save points the step passed (member.hpp, complete_accepted_step);
// failed or stopped with the lane's status set. sink(lane, save_index, t, y) and sink.event(lane,
// index, k, t, y).
template <class Model, class Method, class D, class Sink>
HWY_INLINE detail::completion finish_accepted_step(member_lanes<Model, Method, D>& M, size_t l, double t, const state_vector<Model>& y,
                                     std::uint64_t dropped, const solver_options& opt, const double* save_times,
                                     int save_count, Sink& sink) {
  const double* p = M.p_row[l];
  // The lane's last step (for dense output) and Jacobian (for the dropped rows), read out only where
  // needed, into M's scratch state: lane by lane they cost a lane extraction per value, and a method's
  // state is kilobytes (a local one, even an empty std::optional of one, was zeroed every step).
  auto& member = M.scratch;
  bool with_history = false, with_matrices = false;
  const auto read_member = [&](bool matrices) -> const auto& {
    if (matrices && !with_matrices) {
      store_lane(M.method, l, member);
      with_history = with_matrices = true;
    } else if (!with_history) {
      store_history_lane(M.method, l, member);
      with_history = true;
    }
    Method::replace_current(member, y);  // the projected point, which the lanes receive after this
    return member;
  };
  if (dropped != 0) {
    if (!detail::dropped_rows_hold<Model>(t, y, p, opt, Method::jacobian(read_member(true)))) {
      set_lane(M.status, l, double(member_status::singular_matrix));
      return detail::completion::failed;
    }
  }
  struct {
    Sink& sink;
    size_t l;
    void operator()(int index, double time, const state_vector<Model>& out) const { sink(l, index, time, out); }
    void event(long index, int k, double time, const state_vector<Model>& out) const {
      if constexpr (event_count<Model> > 0) sink.event(l, index, k, time, out);  // sinks of other models have none
    }
  } lane_sink{sink, l};
  double saves_until = t;
  member_status status = member_status::running;
  const auto dense = [&](double s, state_vector<Model>& out) { Method::dense_output(read_member(false), s, out); };
  const detail::completion events =
      detail::complete_events<Model>(M.events[l], status, t, y, p, opt, dropped, dense, lane_sink, saves_until);
  if (events != detail::completion::done) set_lane(M.status, l, double(status));
  if (events == detail::completion::failed) return events;
  int& next = M.next_save[l];
  for (; next < save_count && save_times[next] <= saves_until; ++next) {
    state_vector<Model> out;
    if (save_times[next] == t) {
      out = y;
    } else {
      Method::dense_output(read_member(false), save_times[next], out);
      detail::project_output<Model>(save_times[next], out, p, opt, dropped);
    }
    detail::emit<Model>(next, save_times[next], out, p, opt, dropped, lane_sink);
  }
  return events;
}

}  // namespace member_lanes_detail

// The lanes' stepper for member_attempt_generic.inc: the method's attempt in lanes, with the record of a
// revised rank decision lane by lane (rare: constraint_rank.hpp's hysteresis), and member.hpp's
// complete_accepted_step (the fused path) for the accepted lanes: the projection and the constraint
// residuals in lanes, the rest lane by lane on the member's own double code. sink(lane, save_index, t, y)
// receives the save points in order.
template <class Model, class Method, class D, class Sink>
struct lanes_stepper {
  using P = pack<D>;
  using Mask = mask<D>;
  using Lanes = member_lanes<Model, Method, D>;
  static constexpr int ny = state_layout<Model>::size;
  static constexpr size_t max_lanes = Lanes::max_lanes;
  const double* save_times;
  int save_count;
  Sink& sink;

  HWY_INLINE P time(const Lanes& M) const { return method_time(M.method); }

  // The projection of the accepted points: the lanes' own, or the one compiled apart
  // (lanes_projection_apart), which an engine holds where its runs project after steps.
  static lanes_projection<Model, D> projection() {
    if constexpr (lanes_projection_apart<Model>::value) {
      if (registered_lanes_projection<Model, D> == nullptr)
        throw std::logic_error("this engine holds no projection in SIMD lanes, which its run asks for: it was compiled "
                               "for runs that do not project after steps (engine_contents::projection)");
      return registered_lanes_projection<Model, D>;
    } else {
      return &member_lanes_detail::project_points_in_lanes<Model, D>;
    }
  }

  HWY_INLINE P attempt(Mask attempting, Lanes& M, P t1, const solver_options& opt) {
    const D d;
    const hn::RebindToSigned<D> di;
    ++M.pack_attempts;
    M.lane_attempts += static_cast<std::uint64_t>(hn::CountTrue(d, attempting));
    const auto dropped_before = dropped_rows(M.method).bits;
    const P r = method_attempt<Model>(attempting, M.method, t1, M.p, opt, M.counters, M.status);
    const Mask revised = hn::And(attempting, hn::RebindMask(d, hn::Ne(dropped_before, dropped_rows(M.method).bits)));
    if (!hn::AllFalse(d, revised)) {
      HWY_ALIGN int64_t dropped[max_lanes];
      hn::Store(dropped_rows(M.method).bits, di, dropped);
      const uint64_t lanes = mask_bits<D>(revised);
      for (size_t l = 0; l < hn::Lanes(d); ++l) {
        if (!(lanes >> l & 1)) continue;
        member_counters& c = M.other_counters[l];
        ++c.rank_changes;
        c.dropped_rows = static_cast<long>(static_cast<std::uint64_t>(c.dropped_rows) | static_cast<std::uint64_t>(dropped[l]));
      }
    }
    return r;
  }

  // The completion of the accepted lanes; finished: those whose completion failed (their status says why).
  HWY_INLINE member_attempt_outcome<Mask> complete(Mask accepted, Lanes& M,
                                                   const solver_options& opt) {
    const D d;
    const hn::RebindToSigned<D> di;
    // The accepted points, lane by lane through arrays (one store and one load per component).
    HWY_ALIGN double y[ny][max_lanes];
    HWY_ALIGN double t[max_lanes];
    HWY_ALIGN int64_t dropped[max_lanes];
    const auto& current = current_point(M.method);
    const P times = time(M);
    for (int i = 0; i < ny; ++i) hn::Store(current[i].v, d, y[i]);
    hn::Store(times.v, d, t);
    hn::Store(dropped_rows(M.method).bits, di, dropped);
    Mask completion_failed = hn::FirstN(d, 0);
    if (projects_after_steps(opt.projection, opt.form))
      completion_failed = projection()(accepted, times, M.p, dropped_rows(M.method), opt, y, M.status, M.other_counters);
    const Mask projected = hn::AndNot(completion_failed, accepted);
    member_lanes_detail::record_constraint_residuals(M, projected, y, t, dropped);
    const uint64_t lanes = mask_bits<D>(projected);
    Mask stopped = hn::FirstN(d, 0);
    for (size_t l = 0; l < hn::Lanes(d); ++l) {
      if (!(lanes >> l & 1)) continue;
      state_vector<Model> point;
      for (int i = 0; i < ny; ++i) point[i] = y[i][l];
      const detail::completion c = member_lanes_detail::finish_accepted_step(
          M, l, t[l], point, static_cast<std::uint64_t>(dropped[l]), opt, save_times, save_count, sink);
      if (c == detail::completion::failed) set_mask_lane<D>(completion_failed, l, true);
      if (c == detail::completion::stopped) set_mask_lane<D>(stopped, l, true);
    }
    // Method::replace_current: the projected point becomes the lanes' current one (a lane whose
    // completion failed keeps its unprojected one, as the member alone does; a stopped one has it).
    const Mask replaced = hn::AndNot(completion_failed, accepted);
    lockstep::vec<P, ny> new_current;
    for (int i = 0; i < ny; ++i) new_current[i] = P(hn::Load(d, y[i]));
    replace_current<Model>(replaced, M.method, new_current);
    return {hn::Or(completion_failed, stopped), false};
  }
};

// member_advance(ms, 1, t1, p, opt, save_times, save_count, sink) for every lane of `busy` (the fused
// path; member_attempt_generic.inc): returns the lanes whose member finished (success or a failure;
// their status says which), as member_advance returns true. sink(lane, save_index, t, y) receives the
// save points in order.
template <class Model, class Method, class D, class Sink>
HWY_NOINLINE mask<D> member_advance(mask<D> busy, member_lanes<Model, Method, D>& M, double t1,
                                    const solver_options& opt, const double* save_times, int save_count, Sink& sink) {
  lanes_stepper<Model, Method, D, Sink> stepper{save_times, save_count, sink};
  return member_attempt(busy, M, pack<D>(t1), opt, stepper).finished;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
