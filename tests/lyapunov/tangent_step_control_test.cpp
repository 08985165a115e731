// tests/lyapunov/tangent_step_control_test.cpp — the tangent members step with their methods' attempts,
// the tangents riding along as the step's companion (method/attempt.hpp): without the tangents' error
// control a member with tangents takes bitwise the attempts of the plain member — the same accepted and
// rejected attempts, times, step sizes, orders and final state — for BDF and the Radau IIA methods on
// two models. Any way in which the companion changes the method's decision beyond its estimates (a
// dropped factor, another h, another memory) shows here as a different step sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/lyapunov/tangent_radau.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/pendulum.hpp"
#include "lockstep/method/initialize.hpp"
#include "lyapunov_test_support.hpp"

namespace lockstep::test {
namespace {

// What one attempt left behind: its outcome, the member's time, the step it took, the step and (BDF)
// order it proposes next.
struct attempt_record {
  attempt_result result;
  double t;
  double h_taken;
  double h_next;
  int order_next;
  int order_taken;
  bool operator==(const attempt_record&) const = default;
};

template <class Model>
attempt_record record_of(attempt_result r, const bdf_state<Model>& s, const member_counters& c) {
  return {r, s.t, c.last_h, s.h, s.order, s.last_order};
}
template <class Model, class RT>
attempt_record record_of(attempt_result r, const radau_state<Model, RT>& s, const member_counters& c) {
  return {r, s.t, c.last_h, s.h, 0, 0};
}

template <class Model>
void start_plain(bdf_state<Model>& s, double t0, double t1, const initial_values<Model>& init,
                 const solver_options& opt) {
  bdf_start(s, t0, t1, init, opt);
}
template <class Model, class RT>
void start_plain(radau_state<Model, RT>& s, double t0, double t1, const initial_values<Model>& init,
                 const solver_options& opt) {
  radau_start(s, t0, t1, init, opt);
}
template <class Model>
attempt_result attempt_plain(bdf_state<Model>& s, double t1, const double* p, const solver_options& opt,
                             member_counters& c, member_status& status) {
  return bdf_attempt<Model>(s, t1, p, opt, c, status);
}
template <class Model, class RT>
attempt_result attempt_plain(radau_state<Model, RT>& s, double t1, const double* p, const solver_options& opt,
                             member_counters& c, member_status& status) {
  return radau_attempt<Model>(s, t1, p, opt, c, status);
}

template <class Model>
const state_vector<Model>& member_point_of(const bdf_state<Model>& s) {
  return s.y_newest;
}
template <class Model, class RT>
const state_vector<Model>& member_point_of(const radau_state<Model, RT>& s) {
  return s.y;
}

// Every attempt of a run and its final point.
template <class Model>
struct run_trace {
  std::vector<attempt_record> attempts;
  member_status status = member_status::running;
  state_vector<Model> y_final;
  long steps = 0, rejected = 0;
};

constexpr long max_attempts = 200000;

// The plain member: consistent initialization and the method's attempts, as a tangent member starts.
template <class Member>
run_trace<typename Member::model> plain_run(const start_point<typename Member::model>& start, double t1,
                                            const solver_options& opt) {
  using Model = typename Member::model;
  run_trace<Model> out;
  member_counters counters;
  initial_values<Model> init;
  EXPECT_EQ(consistent_initialization<Model>(0.0, start.q0, start.v0, start.p.data(), opt, init, counters),
            member_status::success);
  auto s = std::make_unique<decltype(Member::method)>();
  start_plain(*s, 0.0, t1, init, opt);
  while (out.status == member_status::running && s->t < t1 && static_cast<long>(out.attempts.size()) < max_attempts) {
    member_status why = member_status::running;
    const attempt_result r = attempt_plain(*s, t1, start.p.data(), opt, counters, why);
    if (r == attempt_result::failed) out.status = why;
    out.attempts.push_back(record_of(r, *s, counters));
  }
  out.y_final = member_point_of(*s);
  out.steps = counters.steps;
  out.rejected = counters.rejected_steps;
  return out;
}

// The member with tangents along a basis of the tangent space, their error control off.
template <class Member>
run_trace<typename Member::model> tangent_run(const start_point<typename Member::model>& start, double t1,
                                              const solver_options& opt) {
  using Model = typename Member::model;
  constexpr int d = manifold_dimension<Model>();
  std::vector<phase_vector<Model>> basis(d);
  EXPECT_EQ(tangent_space_basis<Model>(0.0, start.q0, start.v0, start.p.data(), tangent_metric::mass, basis.data()),
            member_status::success);
  run_trace<Model> out;
  auto tm = std::make_unique<Member>();
  tangent_member_begin(*tm, 0.0, t1, start.q0, start.v0, start.p.data(), opt, basis.data(), d, nullptr, 0,
                       /*error_control=*/false);
  EXPECT_EQ(tm->status, member_status::running);
  while (tm->status == member_status::running && member_time(*tm) < t1 &&
         static_cast<long>(out.attempts.size()) < max_attempts) {
    const attempt_result r = tangent_member_attempt(*tm, t1, start.p.data(), opt);
    out.attempts.push_back(record_of(r, tm->method, tm->counters));
  }
  out.status = tm->status;
  out.y_final = member_point(*tm);
  out.steps = tm->counters.steps;
  out.rejected = tm->counters.rejected_steps;
  return out;
}

// The two runs attempt for attempt; the first difference is reported and ends the comparison.
template <class Member>
void expect_same_steps(const solver_options& opt, double t1, const char* label) {
  using Model = typename Member::model;
  const start_point<Model> start;
  const run_trace<Model> plain = plain_run<Member>(start, t1, opt);
  const run_trace<Model> tangents = tangent_run<Member>(start, t1, opt);
  EXPECT_EQ(plain.status, member_status::running) << label;  // reached t1
  EXPECT_EQ(tangents.status, member_status::running) << label;
  EXPECT_EQ(plain.attempts.size(), tangents.attempts.size()) << label;
  EXPECT_GT(plain.steps, 20) << label;
  for (std::size_t i = 0; i < std::min(plain.attempts.size(), tangents.attempts.size()); ++i) {
    const attempt_record &a = plain.attempts[i], &b = tangents.attempts[i];
    ASSERT_TRUE(a == b) << label << ": attempt " << i << " differs: result " << int(a.result) << " / "
                        << int(b.result) << ", t " << a.t << " / " << b.t << ", h taken " << a.h_taken << " / "
                        << b.h_taken << ", next h " << a.h_next << " / " << b.h_next << ", next order "
                        << a.order_next << " / " << b.order_next;
  }
  EXPECT_EQ(plain.steps, tangents.steps) << label;
  EXPECT_EQ(plain.rejected, tangents.rejected) << label;
  for (int j = 0; j < state_layout<Model>::size; ++j) EXPECT_EQ(plain.y_final[j], tangents.y_final[j]) << label << " y[" << j << "]";
  std::printf("[ measured ] %s: %zu attempts, %ld steps, %ld rejected, the same with tangents\n", label,
              plain.attempts.size(), plain.steps, plain.rejected);
}

solver_options with_method(method_kind method, formulation form, double tol) {
  solver_options opt = bdf_ggl(tol);
  opt.method = method;
  opt.form = form;
  return opt;
}

TEST(TangentStepControl, BdfTakesThePlainMembersStepsAndOrdersWithoutTangentErrorControl) {
  const solver_options opt = with_method(method_kind::bdf, formulation::ggl, 1e-7);
  expect_same_steps<tangent_member<models::pendulum>>(opt, 5.0, "BDF on ggl, pendulum");
  expect_same_steps<tangent_member<models::double_pendulum>>(opt, 3.0, "BDF on ggl, double pendulum");
}

TEST(TangentStepControl, RadauTakesThePlainMembersStepsWithoutTangentErrorControl) {
  const solver_options radau5 = with_method(method_kind::radau5, formulation::index3, 1e-7);
  expect_same_steps<radau_tangent_member<models::pendulum, radau5_tableau>>(radau5, 5.0, "radau5 on index3, pendulum");
  expect_same_steps<radau_tangent_member<models::double_pendulum, radau5_tableau>>(radau5, 3.0,
                                                                                     "radau5 on index3, double pendulum");
  const solver_options radau3 = with_method(method_kind::radau3, formulation::ggl, 1e-6);
  expect_same_steps<radau_tangent_member<models::pendulum, radau3_tableau>>(radau3, 5.0, "radau3 on ggl, pendulum");
  expect_same_steps<radau_tangent_member<models::double_pendulum, radau3_tableau>>(radau3, 3.0,
                                                                                     "radau3 on ggl, double pendulum");
}

}  // namespace
}  // namespace lockstep::test
