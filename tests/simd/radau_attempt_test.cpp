// Tests of lockstep/simd/radau_attempt_inl.hpp: members integrated by the Radau IIA family in lanes
// (Radau IIA 5, Radau IIA 3 and backward Euler), attempt after attempt, must go through exactly the
// states lockstep/method/radau.hpp's radau_attempt takes them through alone, bit for bit, at every width
// the build's instruction set has: after every attempt each lane's result and status, and a digest of its
// whole method state (time, step, stages, the controller's memory, the valid Jacobian and factors, the
// dropped rows) and of its counters, read out of the lane by store_lane. Members of andrews, of the knife
// edge (a non-holonomic constraint) and of a pendulum with its constraint listed twice (a dropped row in
// every member) start from consistent values for their own parameters, with their own end times, so
// that some finish while the others go on and their lanes wait; one in sixteen has a NaN parameter and
// fails, and one in four proposes a first step far too long (Newton failures and cuts).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/radau_attempt_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/radau_attempt_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"
#include "tests/support/doubled_pendulum.hpp"

#ifndef LOCKSTEP_RADAU_ATTEMPT_TEST_COMMON_
#define LOCKSTEP_RADAU_ATTEMPT_TEST_COMMON_
#include <memory>

#include "tests/simd/attempt_comparison.hpp"
#include "tests/simd/method_digest.hpp"

namespace lockstep::simd_test {
inline constexpr int radau_attempts = 60;

template <class Model, class RT>
struct radau_member {
  double p[Model::n_params];
  double t_end;
  radau_state<Model, RT> start;
};

}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The attempts of `count` members (a multiple of W) in packs of W lanes; out[m * radau_attempts + a].
template <class Model, class RT, size_t W>
HWY_NOINLINE bool attempts_at_width(const solver_options& opt, const radau_member<Model, RT>* in, attempt_record* out,
                                    size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  const auto s_space = std::make_unique<sl::radau_lanes<Model, RT, D>>();  // megabytes for a large model
  sl::radau_lanes<Model, RT, D>& s = *s_space;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    P p[Model::n_params];
    for (int i = 0; i < Model::n_params; ++i) p[i] = gather([i](const radau_member<Model, RT>& m) { return m.p[i]; });
    const P t_end = gather([](const radau_member<Model, RT>& m) { return m.t_end; });
    sl::clear_lanes(s);
    for (size_t l = 0; l < W; ++l) sl::load_lane(s, l, in[first + l].start);
    sl::attempt_counters_lanes<D> counters;
    P status(double(member_status::running));
    sl::mask<D> done = hn::FirstN(d, 0);
    for (int a = 0; a < radau_attempts; ++a) {
      const P result = sl::radau_attempt<Model, RT>(hn::Not(done), s, t_end, p, opt, counters, status);
      done = hn::Or(done, hn::Or(result == P(double(int(attempt_result::failed))),
                                 hn::And(result == P(double(int(attempt_result::accepted))), s.t >= t_end)));
      for (size_t l = 0; l < W; ++l) {
        radau_state<Model, RT> member;
        sl::store_lane(s, l, member);
        member_counters c;
        sl::store_counters_lane(counters, l, c);
        out[(first + l) * radau_attempts + a] = {sl::lane_of(result, l), sl::lane_of(status, l), member.t, member.h,
                                                 0.0, digest_of(member, c)};
      }
    }
  }
  return true;
}

#define LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(NAME, MODEL, RT)                                                        \
  bool NAME(const solver_options& opt, const radau_member<MODEL, RT>* in, attempt_record* out, size_t count,      \
            size_t lanes) {                                                                                     \
    return at_lane_width(lanes,                                                                                 \
                         [&](auto w) { return attempts_at_width<MODEL, RT, decltype(w)::value>(opt, in, out, count); }); \
  }
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(Radau5Andrews, lockstep::models::andrews, lockstep::radau5_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(Radau5KnifeEdge, lockstep::models::knife_edge, lockstep::radau5_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(Radau5Doubled, lockstep::test::doubled_pendulum_constraint, lockstep::radau5_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(Radau3Andrews, lockstep::models::andrews, lockstep::radau3_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(Radau3Doubled, lockstep::test::doubled_pendulum_constraint, lockstep::radau3_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(EulerKnifeEdge, lockstep::models::knife_edge, lockstep::euler_tableau)
LOCKSTEP_RADAU_ATTEMPT_TEST_ENTRY(EulerDoubled, lockstep::test::doubled_pendulum_constraint, lockstep::euler_tableau)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/support/monte_carlo_member.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Radau5Andrews);
HWY_EXPORT(Radau5KnifeEdge);
HWY_EXPORT(Radau5Doubled);
HWY_EXPORT(Radau3Andrews);
HWY_EXPORT(Radau3Doubled);
HWY_EXPORT(EulerKnifeEdge);
HWY_EXPORT(EulerDoubled);

namespace {

// A member: parameters within 5 % of the defaults, started consistently at t0 = 0, ending at its own
// time between t_end / 30 and t_end (log-uniformly); one in four proposes a first step 1000 times
// radau_start's.
template <class Model, class RT>
radau_member<Model, RT> draw(std::mt19937_64& g, const solver_options& opt, double t_end) {
  std::uniform_real_distribution<double> u(-1, 1);
  radau_member<Model, RT> m{};
  const monte_carlo_member<Model> drawn = draw_monte_carlo_member<Model>(g, 0.0, opt, 16);
  for (int i = 0; i < Model::n_params; ++i) m.p[i] = drawn.p[i];
  m.t_end = t_end * std::pow(30.0, -0.5 * (1.0 + u(g)));
  radau_start(m.start, 0.0, m.t_end, drawn.start, opt);
  if (g() % 4 == 0) m.start.h *= 1e3;  // a first step far too long: Newton failures and cuts
  return m;
}

// radau_attempt for one member alone, as attempts_at_width drives its lane.
template <class Model, class RT>
void alone(const solver_options& opt, const radau_member<Model, RT>& in, attempt_record* out) {
  attempts_alone(
      in.start, in.t_end, radau_attempts,
      [&](radau_state<Model, RT>& s, member_counters& c, member_status& status) {
        return radau_attempt<Model>(s, in.t_end, in.p, opt, c, status);
      },
      [](const radau_state<Model, RT>& s, const member_counters& c) {
        return attempt_record{0.0, 0.0, s.t, s.h, 0.0, digest_of(s, c)};
      },
      out);
}

template <class Model, class RT, class Entry>
void expect_lanes_equal_scalar(const Entry& run, const std::string& what, const solver_options& opt, double t_end,
                               uint64_t seed) {
  constexpr size_t count = 64;
  std::mt19937_64 g(seed);
  std::vector<radau_member<Model, RT>> in(count);
  for (auto& m : in) m = draw<Model, RT>(g, opt, t_end);
  const std::string name = what + ", " + formulation_name(opt.form) + (opt.fixed_h > 0.0 ? ", fixed steps" : "");
  std::vector<double> ends(count);
  for (size_t m = 0; m < count; ++m) ends[m] = in[m].t_end;
  expect_attempts_equal_alone(
      "radau attempts", name, radau_attempts, ends, opt.fixed_h > 0.0,
      [&](size_t m, attempt_record* out) { alone<Model, RT>(opt, in[m], out); },
      [&](size_t lanes, attempt_record* out) { return run(opt, in.data(), out, count, lanes); });
}

#define LOCKSTEP_RADAU_ENTRY(NAME) [](auto... a) { return HWY_DYNAMIC_DISPATCH(NAME)(a...); }

TEST(SimdRadauAttempt, EveryLaneGoesThroughItsMembersStatesAloneWithRadauIIA5) {
  using models::andrews, models::knife_edge, test::doubled_pendulum_constraint;
  for (const formulation f : {formulation::index3, formulation::ggl, formulation::projected_invariants})
    expect_lanes_equal_scalar<andrews, radau5_tableau>(LOCKSTEP_RADAU_ENTRY(Radau5Andrews), "Radau IIA 5, andrews",
                                                       adaptive(f), 3e-2, 41);
  expect_lanes_equal_scalar<knife_edge, radau5_tableau>(LOCKSTEP_RADAU_ENTRY(Radau5KnifeEdge),
                                                        "Radau IIA 5, knife edge", adaptive(formulation::index1), 2.0, 42);
  expect_lanes_equal_scalar<doubled_pendulum_constraint, radau5_tableau>(
      LOCKSTEP_RADAU_ENTRY(Radau5Doubled), "Radau IIA 5, doubled pendulum", adaptive(formulation::ggl), 2.0, 43);
  solver_options fixed = adaptive(formulation::index3);
  fixed.fixed_h = 2e-5;
  expect_lanes_equal_scalar<andrews, radau5_tableau>(LOCKSTEP_RADAU_ENTRY(Radau5Andrews), "Radau IIA 5, andrews",
                                                     fixed, 1.5e-3, 44);
}

TEST(SimdRadauAttempt, EveryLaneGoesThroughItsMembersStatesAloneWithRadauIIA3AndBackwardEuler) {
  using models::andrews, models::knife_edge, test::doubled_pendulum_constraint;
  expect_lanes_equal_scalar<andrews, radau3_tableau>(LOCKSTEP_RADAU_ENTRY(Radau3Andrews), "Radau IIA 3, andrews",
                                                     adaptive(formulation::index3), 1e-2, 51);
  expect_lanes_equal_scalar<doubled_pendulum_constraint, radau3_tableau>(
      LOCKSTEP_RADAU_ENTRY(Radau3Doubled), "Radau IIA 3, doubled pendulum", adaptive(formulation::ggl), 2.0, 52);
  expect_lanes_equal_scalar<knife_edge, euler_tableau>(LOCKSTEP_RADAU_ENTRY(EulerKnifeEdge),
                                                       "backward Euler, knife edge", adaptive(formulation::ggl), 0.1, 53);
  expect_lanes_equal_scalar<doubled_pendulum_constraint, euler_tableau>(
      LOCKSTEP_RADAU_ENTRY(EulerDoubled), "backward Euler, doubled pendulum", adaptive(formulation::index3), 0.1, 54);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
