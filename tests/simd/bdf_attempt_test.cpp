// Tests of lockstep/simd/bdf_attempt_inl.hpp: members integrated by BDF in lanes, attempt after attempt,
// must go through exactly the states lockstep/method/bdf.hpp's bdf_attempt takes them through alone, bit
// for bit, at every width the build's instruction set has: after every attempt each lane's result and
// status, and a digest of its whole method state (time, step, order and the step control's counts, the
// history, the valid Jacobian and factors, the dropped rows) and of its counters, read out of the lane by
// store_lane. Members of andrews and of the knife edge start from consistent values for their own
// parameters (load_lane puts bdf_start's state into their lane), with their own end times, so that some
// finish while the others go on and their lanes wait; one in sixteen has a NaN parameter and fails.
// Adaptive steps on ggl, index1 and projected invariants; fixed steps of order 2 on index3.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/bdf_attempt_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/bdf_attempt_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_BDF_ATTEMPT_TEST_COMMON_
#define LOCKSTEP_BDF_ATTEMPT_TEST_COMMON_
#include "tests/simd/attempt_comparison.hpp"
#include "tests/simd/method_digest.hpp"

namespace lockstep::simd_test {
inline constexpr int bdf_attempts = 60;

template <class Model>
struct bdf_member {
  double p[Model::n_params];
  double t_end;
  bdf_state<Model> start;
};

}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The attempts of `count` members (a multiple of W) in packs of W lanes; out[m * bdf_attempts + a].
template <class Model, size_t W>
HWY_NOINLINE bool attempts_at_width(const solver_options& opt, const bdf_member<Model>* in, attempt_record* out,
                                    size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    P p[Model::n_params];
    for (int i = 0; i < Model::n_params; ++i) p[i] = gather([i](const bdf_member<Model>& m) { return m.p[i]; });
    const P t_end = gather([](const bdf_member<Model>& m) { return m.t_end; });
    sl::bdf_lanes<Model, D> s;
    sl::clear_matrices(s.corrector);
    for (size_t l = 0; l < W; ++l) sl::load_lane(s, l, in[first + l].start);
    sl::attempt_counters_lanes<D> counters;
    P status(double(member_status::running));
    sl::mask<D> done = hn::FirstN(d, 0);
    for (int a = 0; a < bdf_attempts; ++a) {
      const P result = sl::bdf_attempt<Model>(hn::Not(done), s, t_end, p, opt, counters, status);
      done = hn::Or(done, hn::Or(result == P(double(int(attempt_result::failed))),
                                 hn::And(result == P(double(int(attempt_result::accepted))), s.t >= t_end)));
      for (size_t l = 0; l < W; ++l) {
        bdf_state<Model> member;
        sl::store_lane(s, l, member);
        member_counters c;
        sl::store_counters_lane(counters, l, c);
        out[(first + l) * bdf_attempts + a] = {sl::lane_of(result, l), sl::lane_of(status, l), member.t, member.h,
                                               double(member.order), digest_of(member, c)};
      }
    }
  }
  return true;
}

#define LOCKSTEP_BDF_ATTEMPT_TEST_ENTRY(NAME, MODEL)                                                               \
  bool NAME(const solver_options& opt, const bdf_member<MODEL>* in, attempt_record* out, size_t count, size_t lanes) { \
    return at_lane_width(lanes, [&](auto w) { return attempts_at_width<MODEL, decltype(w)::value>(opt, in, out, count); }); \
  }
LOCKSTEP_BDF_ATTEMPT_TEST_ENTRY(AttemptsAndrews, lockstep::models::andrews)
LOCKSTEP_BDF_ATTEMPT_TEST_ENTRY(AttemptsKnifeEdge, lockstep::models::knife_edge)
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
HWY_EXPORT(AttemptsAndrews);
HWY_EXPORT(AttemptsKnifeEdge);

namespace {

// A member: parameters within 5 % of the defaults, started consistently at t0 = 0, ending at its own
// time between t_end / 30 and t_end (log-uniformly); one in four proposes a first step 1000 times
// bdf_start's.
template <class Model>
bdf_member<Model> draw(std::mt19937_64& g, const solver_options& opt, double t_end) {
  std::uniform_real_distribution<double> u(-1, 1);
  bdf_member<Model> m{};
  const monte_carlo_member<Model> drawn = draw_monte_carlo_member<Model>(g, 0.0, opt, 16);
  for (int i = 0; i < Model::n_params; ++i) m.p[i] = drawn.p[i];
  m.t_end = t_end * std::pow(30.0, -0.5 * (1.0 + u(g)));
  bdf_start(m.start, 0.0, m.t_end, drawn.start, opt);
  if (g() % 4 == 0) m.start.h *= 1e3;  // a first step far too long: Newton failures and cuts
  return m;
}

// bdf_attempt for one member alone, as attempts_at_width drives its lane.
template <class Model>
void alone(const solver_options& opt, const bdf_member<Model>& in, attempt_record* out) {
  attempts_alone(
      in.start, in.t_end, bdf_attempts,
      [&](bdf_state<Model>& s, member_counters& c, member_status& status) {
        return bdf_attempt<Model>(s, in.t_end, in.p, opt, c, status);
      },
      [](const bdf_state<Model>& s, const member_counters& c) {
        return attempt_record{0.0, 0.0, s.t, s.h, double(s.order), digest_of(s, c)};
      },
      out);
}

template <class Model, class Entry>
void expect_lanes_equal_scalar(const Entry& run, const char* model_name, const solver_options& opt, double t_end,
                               uint64_t seed) {
  constexpr size_t count = 64;
  std::mt19937_64 g(seed);
  std::vector<bdf_member<Model>> in(count);
  for (auto& m : in) m = draw<Model>(g, opt, t_end);
  const std::string name = std::string("BDF attempts, ") + model_name + ", " + formulation_name(opt.form) +
                           (opt.fixed_h > 0.0 ? ", fixed steps" : "");
  std::vector<double> ends(count);
  for (size_t m = 0; m < count; ++m) ends[m] = in[m].t_end;
  expect_attempts_equal_alone(
      "bdf attempts", name, bdf_attempts, ends, opt.fixed_h > 0.0,
      [&](size_t m, attempt_record* out) { alone<Model>(opt, in[m], out); },
      [&](size_t lanes, attempt_record* out) { return run(opt, in.data(), out, count, lanes); });
}

TEST(SimdBdfAttempt, EveryLaneGoesThroughItsMembersStatesAlone) {
  const auto andrews = [](auto... a) { return HWY_DYNAMIC_DISPATCH(AttemptsAndrews)(a...); };
  const auto knife_edge = [](auto... a) { return HWY_DYNAMIC_DISPATCH(AttemptsKnifeEdge)(a...); };
  for (const formulation f : {formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    expect_lanes_equal_scalar<models::andrews>(andrews, "andrews", adaptive(f), 1e-2, 31);
    expect_lanes_equal_scalar<models::knife_edge>(knife_edge, "knife edge", adaptive(f), 2.0, 32);
  }
  // One Newton iteration per attempt: most attempts fail Newton's test and cut the step, until it is
  // short enough for the first increment to pass.
  solver_options one_iteration = adaptive(formulation::ggl);
  one_iteration.newton_max_iterations = 1;
  expect_lanes_equal_scalar<models::andrews>(andrews, "andrews", one_iteration, 1e-5, 34);
  solver_options fixed = adaptive(formulation::index3);
  fixed.fixed_h = 2e-5;
  fixed.fixed_order = 2;
  expect_lanes_equal_scalar<models::andrews>(andrews, "andrews", fixed, 1.5e-3, 33);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
