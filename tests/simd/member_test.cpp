// Tests of lockstep/simd/member_inl.hpp: whole members integrated in refilled lanes, by BDF and by the
// Radau IIA family, must end exactly as stepper/member.hpp's member_advance ends them alone, bit for
// bit, at every width the
// build's instruction set has, and must hand the sink the same save points in the same order. A study
// of `count` members (not a multiple of W, so that lanes wait at the end) starts each member with
// member_begin, loads it into a free lane, advances the lanes one attempt per call, and on each finished
// lane reads the member out (store_member), takes its final point (member_final_state) and refills the
// lane with the next member. Alone, member_advance makes three attempts per call (its results do not
// depend on that). Compared per member: status, attempts, next save index, a digest of its whole method
// state, of every counter and of its final point, and a digest of its save points (index, time, bits).
//
// Members: parameters within 5 % of the defaults (one in sixteen NaN), positions off their constraints
// (so that the initialization corrects them), shared end time and save times (t0, points between
// steps, t1), as a study's chunk has them. Runs, with BDF: andrews on ggl with consistent multipliers;
// andrews on ggl with coordinate projection and a step budget that stops some members; the knife edge
// on projected invariants; a pendulum with its constraint listed twice (a dropped row in every member,
// minimum-norm multipliers) on ggl with post-stabilization; a chain of 17 links on ggl, 68 unknowns
// (the lanes' matrices of a model that size live in their workspace, not on the stack). With Radau IIA
// 5: andrews on index3 with coordinate projection and a step budget, the knife edge on index 1, the
// doubled pendulum on ggl with post-stabilization; with Radau IIA 3 andrews on index3, and with
// backward Euler the knife edge; with rho_inf at four dampings (0, 0.5, 0.9, and 1 with fixed steps)
// andrews, the knife edge and the doubled pendulum.
//
// And of lockstep/simd/member_kernels_inl.hpp: a chunk's members advanced by advance_in_lanes, call
// after call as the scheduler calls an engine's advance, must leave the chunk's SoA storage as
// advance_member leaves it after every call (state, counters, status, finished flag, outputs).
// And for every built-in model (in the build for AVX-512): a study with failing members (a NaN
// parameter, a singular configuration, the step budget) run through advance_in_lanes in three chunkings
// (chunk sizes, workspaces trading members as threads would, attempts per call) must end every member
// as advance_member ends it alone, with BDF, Radau IIA 5 and rho_inf.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/member_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/chain.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/simd/member_inl.hpp"
#include "lockstep/simd/member_kernels_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"
#include "tests/simd/refilled_lanes_inl.hpp"
#include "tests/support/doubled_pendulum.hpp"
#include "tests/support/fading_damper.hpp"

#ifndef LOCKSTEP_MEMBER_TEST_COMMON_
#define LOCKSTEP_MEMBER_TEST_COMMON_
#include <functional>
#include <memory>
#include <vector>

#include "tests/simd/method_digest.hpp"

namespace lockstep::simd_test {

// What the members of a study share.
struct member_study {
  solver_options opt;
  double t0 = 0.0, t1 = 0.0;
  std::vector<double> save_times;
};

template <class Model>
struct study_member {
  double p[Model::n_params];
  vec<double, Model::n> q0, v0;
};

// What a run's lanes executed: pack attempts (each runs every lane) and lane-attempts of members; the
// corrector's Newton iterations and factorizations likewise (corrector_work).
struct lanes_work {
  std::uint64_t pack_attempts = 0, lane_attempts = 0;
  std::uint64_t pack_iterations = 0, lane_iterations = 0, pack_factorizations = 0, lane_factorizations = 0;
};

// How a member ended.
struct member_record {
  double status = -1.0;
  long attempts = -1;
  int next_save = -1, outputs = 0;
  int finished = -1;  // the chunk's flag (advance_in_lanes)
  std::uint64_t method = 0, counters = 0, final_point = 0;
  std::uint64_t output_digest = 0xcbf29ce484222325ull;
  long newton_iterations = -1, lu_factorizations = -1, method_switches = -1;  // the member's counters
};

// The sink's record of one save point.
template <class Model>
void record_output(member_record& r, int index, double t, const state_vector<Model>& y) {
  const double at[] = {double(index), t};
  digest_values(r.output_digest, at, 2);
  digest_values(r.output_digest, y.a, state_layout<Model>::size);
  ++r.outputs;
}

// The record of a member's state.
template <class Model, class Method>
void record_state(member_record& r, const member_state<Model, Method>& ms) {
  r.status = double(ms.status);
  r.attempts = ms.attempts;
  r.next_save = ms.next_save;
  r.method = digest_of(ms.method, member_counters{});
  r.counters = digest_of(ms.counters);
  r.newton_iterations = ms.counters.newton_iterations;
  r.lu_factorizations = ms.counters.lu_factorizations;
  r.method_switches = ms.counters.method_switches;
}

// The record of a member that has finished: its state and its final point.
template <class Model, class Method>
void record_end(member_record& r, const member_state<Model, Method>& ms, const double* p, const solver_options& opt) {
  record_state<Model>(r, ms);
  const state_vector<Model> y = member_final_state<Model>(ms, p, opt);
  r.final_point = 0xcbf29ce484222325ull;
  digest_values(r.final_point, y.a, state_layout<Model>::size);
}

}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The study's members in W refilled lanes; out[m] is member m's record, work the workspace's count of
// pack attempts and of the lane-attempts among them that were members' (member_lanes).
template <class Model, class Method, size_t W>
HWY_NOINLINE bool members_at_width(const member_study& st, const study_member<Model>* in, member_record* out,
                                   size_t count, lanes_work& work) {
  using D = hn::CappedTag<double, W>;
  if (hn::Lanes(D()) != W) return false;
  const auto lanes = std::make_unique<sl::member_lanes<Model, Method, D>>();
  run_in_refilled_lanes(
      *lanes, count, st.t1, st.opt, st.save_times.data(), int(st.save_times.size()),
      [&](size_t m, member_state<Model, Method>& ms, const auto& sink) {
        member_begin<Model>(ms, st.t0, st.t1, in[m].q0, in[m].v0, in[m].p, st.opt, st.save_times.data(),
                            int(st.save_times.size()), sink);
      },
      [&](size_t m) { return in[m].p; },
      [&](size_t m, const member_state<Model, Method>& ms) { record_end<Model>(out[m], ms, in[m].p, st.opt); },
      [&](size_t m, int index, double t, const state_vector<Model>& y) { record_output<Model>(out[m], index, t, y); });
  const sl::corrector_work& corrector = sl::method_work(lanes->method);
  work = {lanes->pack_attempts, lanes->lane_attempts, corrector.pack_iterations,
          corrector.lane_iterations, corrector.pack_factorizations, corrector.lane_factorizations};
  return true;
}

// The scheduler's loop over a chunk (begun by begin_member): while members run, advance_in_lanes for
// the running ones, in reverse order, max_attempts each, with one workspace kept over the calls;
// after_call(call) after each.
template <class Model, class Method, size_t W>
HWY_NOINLINE bool chunk_at_width(const chunk_view<Model>& c, int max_attempts, const std::function<void(int)>& after_call) {
  using D = hn::CappedTag<double, W>;
  if (hn::Lanes(D()) != W) return false;
  const auto lanes = std::make_unique<sl::member_lanes<Model, Method, D>>();
  std::vector<long> running;
  for (int call = 0;; ++call) {
    running.clear();
    for (long i = c.stride - 1; i >= 0; --i)
      if (!c.finished[i]) running.push_back(i);
    if (running.empty()) return true;
    sl::advance_in_lanes(c, running.data(), long(running.size()), max_attempts, *lanes);
    after_call(call);
  }
}

#define LOCKSTEP_MEMBER_TEST_ENTRY(NAME, MODEL, METHOD)                                                          \
  bool NAME(const member_study& st, const study_member<MODEL>* in, member_record* out, size_t count, size_t lanes, \
            lanes_work& work) {                                                                                    \
    return at_lane_width(lanes, [&](auto w) {                                                                      \
      return members_at_width<MODEL, METHOD, decltype(w)::value>(st, in, out, count, work);                        \
    });                                                                                                            \
  }
LOCKSTEP_MEMBER_TEST_ENTRY(BdfAndrews, lockstep::models::andrews, bdf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(BdfKnifeEdge, lockstep::models::knife_edge, bdf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(BdfDoubledPendulum, lockstep::test::doubled_pendulum_constraint, bdf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(BdfChain17, lockstep::models::chain<17>, bdf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Radau5Andrews, lockstep::models::andrews, radau5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Radau5KnifeEdge, lockstep::models::knife_edge, radau5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Radau5DoubledPendulum, lockstep::test::doubled_pendulum_constraint, radau5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Radau3Andrews, lockstep::models::andrews, radau3_method)
LOCKSTEP_MEMBER_TEST_ENTRY(EulerKnifeEdge, lockstep::models::knife_edge, euler_method)
LOCKSTEP_MEMBER_TEST_ENTRY(RhoinfAndrews, lockstep::models::andrews, rhoinf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(RhoinfKnifeEdge, lockstep::models::knife_edge, rhoinf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(RhoinfDoubledPendulum, lockstep::test::doubled_pendulum_constraint, rhoinf_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Dopri5Andrews, lockstep::models::andrews, dopri5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Dopri5KnifeEdge, lockstep::models::knife_edge, dopri5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Dopri5DoubledPendulum, lockstep::test::doubled_pendulum_constraint, dopri5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Tsit5Andrews, lockstep::models::andrews, tsit5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(Tsit5KnifeEdge, lockstep::models::knife_edge, tsit5_method)
LOCKSTEP_MEMBER_TEST_ENTRY(AutoAndrews, lockstep::models::andrews, auto_method)
LOCKSTEP_MEMBER_TEST_ENTRY(AutoFadingDamper, lockstep::test::fading_damper_model<false>, auto_method)
LOCKSTEP_MEMBER_TEST_ENTRY(AutoRestatedDamper, lockstep::test::fading_damper_model<true>, auto_method)
bool ChunkAndrews(const chunk_view<lockstep::models::andrews>& c, int max_attempts,
                  const std::function<void(int)>& after_call, size_t lanes) {
  return at_lane_width(lanes, [&](auto w) {
    return chunk_at_width<lockstep::models::andrews, bdf_method, decltype(w)::value>(c, max_attempts, after_call);
  });
}

// A chunk's running members advanced by advance_in_lanes in `workspaces` workspaces of W lanes each, as
// that many threads of an engine would take them: on call c, member i goes to workspace (i + c) mod
// workspaces, so that a member changes workspace from call to call; max_attempts each call.
template <class Model, class Method, size_t W>
HWY_NOINLINE bool chunk_in_workspaces(const chunk_view<Model>& c, int max_attempts, int workspaces) {
  using D = hn::CappedTag<double, W>;
  if (hn::Lanes(D()) != W) return false;
  std::vector<std::unique_ptr<sl::member_lanes<Model, Method, D>>> lanes;
  for (int k = 0; k < workspaces; ++k) lanes.push_back(std::make_unique<sl::member_lanes<Model, Method, D>>());
  std::vector<long> running;
  for (long call = 0;; ++call) {
    bool any = false;
    for (int k = 0; k < workspaces; ++k) {
      running.clear();
      for (long i = c.stride - 1; i >= 0; --i)
        if (!c.finished[i] && (i + call) % workspaces == k) running.push_back(i);
      if (running.empty()) continue;
      any = true;
      sl::advance_in_lanes(c, running.data(), long(running.size()), max_attempts, *lanes[size_t(k)]);
    }
    if (!any) return true;
  }
}

// The chunk of built-in model number `model` (builtin_models' order; `view` is its chunk_view), with
// BDF, Radau IIA 5, rho_inf or dopri5, in workspaces of `lanes` lanes. Every built-in model with every
// method is many instantiations of the whole stepper in lanes, so only the build for AVX-512 compiles
// them, and at its full width alone, W = 8, the width its engines run (lanes_engine.hpp's lanes_tag;
// the other widths return false): at W = 1, 2, 4 and 8 this was the largest unit of the tests
// (CONTRIBUTING.md, "Continuous integration"). Every width, with every method, runs on four models in
// the entries above. The models' evaluation on packs is compared across every instruction set by
// pack_model_test.cpp, and the built-in engines of AVX2 (W = 4) and AVX-512 against the baseline, bit
// for bit, by tests/engine/builtin_lanes_test.py.
template <class Method>
bool chunk_builtin(int model, const void* view, int max_attempts, int workspaces, size_t lanes) {
#if HWY_TARGET <= HWY_AVX3
  constexpr size_t full_width = hn::MaxLanes(hn::ScalableTag<double>());
  if (lanes != full_width) return false;
  bool ran = false;
  int index = 0;
  builtin_models::for_each([&]<class Model>() {
    if (index++ != model) return;
    const auto& c = *static_cast<const chunk_view<Model>*>(view);
    ran = chunk_in_workspaces<Model, Method, full_width>(c, max_attempts, workspaces);
  });
  return ran;
#else
  (void)model, (void)view, (void)max_attempts, (void)workspaces, (void)lanes;
  return false;
#endif
}
bool ChunkBuiltinBdf(int model, const void* view, int max_attempts, int workspaces, size_t lanes) {
  return chunk_builtin<bdf_method>(model, view, max_attempts, workspaces, lanes);
}
bool ChunkBuiltinRadau5(int model, const void* view, int max_attempts, int workspaces, size_t lanes) {
  return chunk_builtin<radau5_method>(model, view, max_attempts, workspaces, lanes);
}
bool ChunkBuiltinRhoinf(int model, const void* view, int max_attempts, int workspaces, size_t lanes) {
  return chunk_builtin<rhoinf_method>(model, view, max_attempts, workspaces, lanes);
}
bool ChunkBuiltinDopri5(int model, const void* view, int max_attempts, int workspaces, size_t lanes) {
  return chunk_builtin<dopri5_method>(model, view, max_attempts, workspaces, lanes);
}
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cfenv>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"
#include "tests/support/monte_carlo_member.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(BdfAndrews);
HWY_EXPORT(BdfKnifeEdge);
HWY_EXPORT(BdfDoubledPendulum);
HWY_EXPORT(BdfChain17);
HWY_EXPORT(Radau5Andrews);
HWY_EXPORT(Radau5KnifeEdge);
HWY_EXPORT(Radau5DoubledPendulum);
HWY_EXPORT(Radau3Andrews);
HWY_EXPORT(EulerKnifeEdge);
HWY_EXPORT(RhoinfAndrews);
HWY_EXPORT(RhoinfKnifeEdge);
HWY_EXPORT(RhoinfDoubledPendulum);
HWY_EXPORT(ChunkAndrews);
HWY_EXPORT(ChunkBuiltinBdf);
HWY_EXPORT(ChunkBuiltinRadau5);
HWY_EXPORT(ChunkBuiltinRhoinf);

namespace {

// Parameters within 5 % of the defaults (one member in sixteen with a NaN one), the model's initial
// state with its positions moved by up to 1e-4 relative, so that they are off their constraints.
template <class Model>
study_member<Model> draw(std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  study_member<Model> m{};
  for (int i = 0; i < Model::n_params; ++i) m.p[i] = Model::params[i].default_value * (1.0 + 0.05 * u(g));
  if (g() % 16 == 0) m.p[g() % Model::n_params] = std::numeric_limits<double>::quiet_NaN();
  default_initial_state<Model>(m.p, m.q0, m.v0);
  for (int i = 0; i < Model::n; ++i) m.q0[i] += 1e-4 * u(g) * (m.q0[i] == 0.0 ? 1.0 : m.q0[i]);
  return m;
}

// f() on a thread with a stack of stack_bytes; the floating-point flags it raised there (they are the
// thread's own) are raised in the caller's thread too.
template <class F>
bool on_stack_of(size_t stack_bytes, const F& f) {
  struct call {
    const F* f;
    bool result;
    int flags;
  } c{&f, false, 0};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  const auto body = [](void* arg) -> void* {
    call& c = *static_cast<call*>(arg);
    std::feclearexcept(FE_ALL_EXCEPT);
    c.result = (*c.f)();
    c.flags = std::fetestexcept(FE_ALL_EXCEPT);
    return nullptr;
  };
  const int created = pthread_create(&thread, &attr, body, &c);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(created, 0) << "no thread of " << stack_bytes << " bytes of stack";
  if (created != 0) return false;
  pthread_join(thread, nullptr);
  std::feraiseexcept(c.flags);
  return c.result;
}

// Every member alone: member_begin, member_advance three attempts at a time, member_final_state.
template <class Model, class Method>
member_record alone(const member_study& st, const study_member<Model>& in) {
  member_record r;
  const auto sink = [&](int index, double t, const state_vector<Model>& y) { record_output<Model>(r, index, t, y); };
  member_state<Model, Method> ms;
  const int save_count = int(st.save_times.size());
  member_begin<Model>(ms, st.t0, st.t1, in.q0, in.v0, in.p, st.opt, st.save_times.data(), save_count, sink);
  while (!member_advance<Model>(ms, 3, st.t1, in.p, st.opt, st.save_times.data(), save_count, sink)) {
  }
  record_end<Model>(r, ms, in.p, st.opt);
  return r;
}

// The save times: t0, t1 and `between` points in between, none of them on a step.
member_study study_of(const solver_options& opt, double t1, int between) {
  member_study st;
  st.opt = opt;
  st.t1 = t1;
  st.save_times.push_back(0.0);
  for (int i = 1; i <= between; ++i) st.save_times.push_back(t1 * (double(i) - 0.3) / double(between + 1));
  st.save_times.push_back(t1);
  return st;
}

// Returns how many of the study's members switched methods (auto), and how many of them switched back.
template <class Model, class Method, class Entry>
std::pair<size_t, size_t> expect_lanes_equal_alone(const Entry& run, const std::string& what, const member_study& st,
                                                   uint64_t seed) {
  const std::string name = std::string(method_name(Method::kind)) + ", " + what;
  constexpr size_t count = 45;
  std::mt19937_64 g(seed);
  std::vector<study_member<Model>> in(count);
  for (auto& m : in) m = draw<Model>(g);
  std::vector<member_record> scalar(count);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) scalar[m] = alone<Model, Method>(st, in[m]);
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);

  // What the study must include: members that succeed, members that fail, save points between steps.
  std::map<double, size_t> statuses;
  size_t outputs = 0;
  for (const member_record& r : scalar) ++statuses[r.status], outputs += size_t(r.outputs);
  EXPECT_GT(statuses[double(member_status::success)], count / 2) << name;
  EXPECT_GT(count - statuses[double(member_status::success)], 0u) << name;
  EXPECT_GT(outputs, count) << name;
  // The members that switched between auto's phases, and those that switched back too.
  size_t switched = 0, returned = 0;
  for (const member_record& r : scalar) switched += r.method_switches > 0, returned += r.method_switches > 1;

  // The lane-attempts of members a run in lanes must count: every attempt of every member but one its
  // budget refused (member_state::attempts counts that one too).
  std::uint64_t members_attempts = 0, members_iterations = 0, members_factorizations = 0;
  for (const member_record& r : scalar) {
    members_attempts += std::uint64_t(r.attempts) - (r.status == double(member_status::max_steps) ? 1 : 0);
    members_iterations += std::uint64_t(r.newton_iterations);
    members_factorizations += std::uint64_t(r.lu_factorizations);
  }

  std::vector<member_record> out;
  lanes_work work;
  size_t width = 0;
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
      [&](size_t lanes) {
        out.assign(count, member_record{});  // nothing of the previous variant stays
        work = {};
        width = lanes;
        return run(st, in.data(), out.data(), count, lanes, work);
      },
      [&](const std::string& variant) {
        // The utilization's counts: every member's attempt in one lane of one pack attempt, and every
        // pack attempt with at least one of them.
        EXPECT_EQ(work.lane_attempts, members_attempts) << name << ", " << variant;
        EXPECT_LE(work.pack_attempts, work.lane_attempts) << name << ", " << variant;
        EXPECT_GE(work.pack_attempts * width, work.lane_attempts) << name << ", " << variant;
        // The corrector's phases likewise: every member's Newton iteration and factorization in one lane
        // of one the pack ran, and every one the pack ran with at least one of them.
        EXPECT_EQ(work.lane_iterations, members_iterations) << name << ", " << variant;
        EXPECT_LE(work.pack_iterations, work.lane_iterations) << name << ", " << variant;
        EXPECT_GE(work.pack_iterations * width, work.lane_iterations) << name << ", " << variant;
        EXPECT_EQ(work.lane_factorizations, members_factorizations) << name << ", " << variant;
        EXPECT_LE(work.pack_factorizations, work.lane_factorizations) << name << ", " << variant;
        EXPECT_GE(work.pack_factorizations * width, work.lane_factorizations) << name << ", " << variant;
        size_t differ = 0;
        for (size_t m = 0; m < count; ++m) {
          const member_record &x = out[m], &y = scalar[m];
          if (same_bits(x.status, y.status) && x.attempts == y.attempts && x.next_save == y.next_save &&
              x.outputs == y.outputs && x.method == y.method && x.counters == y.counters &&
              x.final_point == y.final_point && x.output_digest == y.output_digest)
            continue;
          if (differ++ == 0)
            ADD_FAILURE() << name << ", " << variant << ": member " << m << ": status " << x.status << ", attempts "
                          << x.attempts << ", saves " << x.next_save << " (" << x.outputs << " written); alone "
                          << y.status << ", " << y.attempts << ", " << y.next_save << " (" << y.outputs << ")"
                          << (x.method != y.method ? "; method states differ" : "")
                          << (x.counters != y.counters ? "; counters differ" : "")
                          << (x.final_point != y.final_point ? "; final points differ" : "")
                          << (x.output_digest != y.output_digest ? "; save points differ" : "");
        }
        return differ;
      },
      1);  // one per build; tests/simd/pack_model_test.sh runs the builds for every instruction set
  std::string ends;
  for (const auto& [status, n] : statuses)
    ends += (ends.empty() ? "" : ", ") + std::to_string(n) + " " + status_name(member_status(int(status)));
  std::printf("[ members ] %s: %zu members (%s), %zu save points, %zu switched and %zu back, %zu variants equal\n",
              name.c_str(), count, ends.c_str(), outputs, switched, returned, variants);
  return {switched, returned};
}

solver_options adaptive(formulation f) {
  solver_options opt;
  opt.form = f;
  opt.rtol = 1e-6;
  // The default start projected onto each member's own constraints, however far: with parameters 5 %
  // off, Andrews' moves by more than init "auto" accepts (method/options.hpp).
  opt.init = init_mode::project;
  return opt;
}

// opt for Method.
template <class Method>
solver_options for_method(solver_options opt) {
  opt.method = Method::kind;
  return opt;
}

TEST(SimdMember, EveryLaneEndsItsBdfMemberAsMemberAdvanceAlone) {
  const auto andrews = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(BdfAndrews)(a...); };
  const auto knife_edge = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(BdfKnifeEdge)(a...); };
  const auto doubled = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(BdfDoubledPendulum)(a...); };

  solver_options ggl = adaptive(formulation::ggl);
  ggl.consistent_multipliers = true;
  expect_lanes_equal_alone<models::andrews, bdf_method>(andrews, "andrews, ggl", study_of(ggl, 3e-3, 5), 41);

  solver_options projected = adaptive(formulation::ggl);
  projected.projection = projection_kind::coordinate;
  projected.max_steps = 40;  // about half the members run out of attempts
  expect_lanes_equal_alone<models::andrews, bdf_method>(andrews, "andrews, ggl, coordinate projection, 40 attempts",
                                                        study_of(projected, 3e-3, 3), 42);

  expect_lanes_equal_alone<models::knife_edge, bdf_method>(
      knife_edge, "knife edge, projected invariants", study_of(adaptive(formulation::projected_invariants), 2.0, 6), 43);

  solver_options redundant = adaptive(formulation::ggl);
  redundant.projection = projection_kind::post_stabilization;
  redundant.multipliers = multiplier_convention::minimum_norm;
  redundant.consistent_multipliers = true;
  expect_lanes_equal_alone<test::doubled_pendulum_constraint, bdf_method>(
      doubled, "doubled pendulum, ggl, post-stabilization, minimum-norm multipliers", study_of(redundant, 1.0, 4),
      44);

  // More than 64 unknowns in ggl form (4 x 17 = 68): a pack of its Newton matrices is 296 KB at W = 8,
  // and the lanes keep such objects in their workspace (corrector_scratch), not on the stack. They run
  // on a thread of 768 KiB of stack: this study needs less than 640 KiB of it (on 512 KiB it overflowed
  // in the model's evaluation on packs of eight lanes), and more than 1 MiB with the matrices of
  // solve_corrector and of the workspace's first value on the stack (g++ 12 at -O3, the library's level,
  // measured by the stack sizes at which the thread overflowed and ran; this test's own -O1 build runs
  // on the 768 KiB as well, its margin not measured).
  const auto chain = [](auto&&... a) {
    return on_stack_of(768 * 1024, [&] { return HWY_DYNAMIC_DISPATCH(BdfChain17)(a...); });
  };
  static_assert(state_layout<models::chain<17>>::newton_size > 64);
  expect_lanes_equal_alone<models::chain<17>, bdf_method>(chain, "chain17, ggl", study_of(ggl, 0.05, 3), 46);
}

TEST(SimdMember, EveryLaneEndsItsRadauIIAMemberAsMemberAdvanceAlone) {
  const auto andrews5 = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Radau5Andrews)(a...); };
  const auto knife_edge5 = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Radau5KnifeEdge)(a...); };
  const auto doubled5 = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Radau5DoubledPendulum)(a...); };
  const auto andrews3 = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Radau3Andrews)(a...); };
  const auto knife_edge_euler = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(EulerKnifeEdge)(a...); };

  solver_options index3 = for_method<radau5_method>(adaptive(formulation::index3));
  index3.projection = projection_kind::coordinate;
  index3.max_steps = 10;  // some members run out of attempts
  expect_lanes_equal_alone<models::andrews, radau5_method>(
      andrews5, "andrews, index3, coordinate projection, 10 attempts", study_of(index3, 3e-3, 3), 51);

  expect_lanes_equal_alone<models::knife_edge, radau5_method>(
      knife_edge5, "knife edge, index1", study_of(for_method<radau5_method>(adaptive(formulation::index1)), 2.0, 6), 52);

  solver_options redundant = for_method<radau5_method>(adaptive(formulation::ggl));
  redundant.projection = projection_kind::post_stabilization;
  redundant.multipliers = multiplier_convention::minimum_norm;
  redundant.consistent_multipliers = true;
  expect_lanes_equal_alone<test::doubled_pendulum_constraint, radau5_method>(
      doubled5, "doubled pendulum, ggl, post-stabilization, minimum-norm multipliers", study_of(redundant, 1.0, 4),
      53);

  expect_lanes_equal_alone<models::andrews, radau3_method>(
      andrews3, "andrews, index3", study_of(for_method<radau3_method>(adaptive(formulation::index3)), 3e-3, 3), 54);

  solver_options euler = for_method<euler_method>(adaptive(formulation::index1));
  euler.rtol = 1e-3;  // a first-order method
  expect_lanes_equal_alone<models::knife_edge, euler_method>(knife_edge_euler, "knife edge, index1, rtol 1e-3",
                                                             study_of(euler, 0.5, 3), 55);
}

// rho_inf adaptive at damping 0.5 on ggl with coordinate projection, 0 (BDF2) on index 1 and 0.9 on ggl
// with redundant constraints; rho_inf = 1 with fixed steps on ggl. (The chunkings' test below has
// members that stop at the step budget.)
TEST(SimdMember, EveryLaneEndsItsRhoinfMemberAsMemberAdvanceAlone) {
  const auto andrews = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(RhoinfAndrews)(a...); };
  const auto knife_edge = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(RhoinfKnifeEdge)(a...); };
  const auto doubled = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(RhoinfDoubledPendulum)(a...); };

  solver_options projected = for_method<rhoinf_method>(adaptive(formulation::ggl));
  projected.rho_inf = 0.5;
  projected.projection = projection_kind::coordinate;
  expect_lanes_equal_alone<models::andrews, rhoinf_method>(andrews, "rho_inf 0.5, andrews, ggl, coordinate projection",
                                                           study_of(projected, 1e-3, 3), 61);

  solver_options bdf2 = for_method<rhoinf_method>(adaptive(formulation::index1));
  bdf2.rho_inf = 0.0;
  bdf2.rtol = 1e-4;
  expect_lanes_equal_alone<models::knife_edge, rhoinf_method>(knife_edge, "rho_inf 0, knife edge, index1, rtol 1e-4",
                                                              study_of(bdf2, 1.0, 5), 62);

  solver_options redundant = for_method<rhoinf_method>(adaptive(formulation::ggl));
  redundant.rho_inf = 0.9;
  redundant.rtol = 1e-4;
  redundant.projection = projection_kind::post_stabilization;
  redundant.multipliers = multiplier_convention::minimum_norm;
  redundant.consistent_multipliers = true;
  expect_lanes_equal_alone<test::doubled_pendulum_constraint, rhoinf_method>(
      doubled, "rho_inf 0.9, doubled pendulum, ggl, post-stabilization, minimum-norm multipliers, rtol 1e-4",
      study_of(redundant, 1.0, 4), 63);

  solver_options trapezoidal = for_method<rhoinf_method>(adaptive(formulation::ggl));
  trapezoidal.rho_inf = 1.0;
  trapezoidal.fixed_h = 2e-5;
  expect_lanes_equal_alone<models::andrews, rhoinf_method>(andrews, "rho_inf 1, andrews, ggl, fixed steps of 2e-5",
                                                           study_of(trapezoidal, 3e-3, 3), 64);
}

// An explicit pair's lanes (Method: dopri5 or tsit5, the same attempt with other coefficients,
// method/dopri5.hpp) on index1: with coordinate projection on Andrews' squeezer, whose members run out
// of attempts, and with post-stabilization on the knife edge's non-holonomic constraint (seeds: the
// studies' first and second).
template <class Method, class Andrews, class KnifeEdge>
void expect_explicit_pair_lanes_equal_alone(const Andrews& andrews, const KnifeEdge& knife_edge, uint64_t seed) {
  solver_options projected = for_method<Method>(adaptive(formulation::index1));
  projected.projection = projection_kind::coordinate;
  projected.max_steps = 60;  // Andrews' squeezer is mildly stiff: some members run out of attempts
  expect_lanes_equal_alone<models::andrews, Method>(andrews, "andrews, coordinate projection, 60 attempts",
                                                    study_of(projected, 3e-3, 3), seed);

  solver_options stabilized = for_method<Method>(adaptive(formulation::index1));
  stabilized.projection = projection_kind::post_stabilization;
  stabilized.rtol = 1e-4;
  expect_lanes_equal_alone<models::knife_edge, Method>(knife_edge, "knife edge, post-stabilization, rtol 1e-4",
                                                       study_of(stabilized, 2.0, 6), seed + 1);
}

// dopri5 as above, and on the doubled pendulum with redundant constraints and minimum-norm
// multipliers, with fixed steps, and with both projections in the Euclidean metric.
TEST(SimdMember, EveryLaneEndsItsDopri5MemberAsMemberAdvanceAlone) {
  const auto andrews = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Dopri5Andrews)(a...); };
  const auto knife_edge = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Dopri5KnifeEdge)(a...); };
  const auto doubled = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Dopri5DoubledPendulum)(a...); };
  expect_explicit_pair_lanes_equal_alone<dopri5_method>(andrews, knife_edge, 71);

  solver_options redundant = for_method<dopri5_method>(adaptive(formulation::index1));
  redundant.projection = projection_kind::coordinate;
  redundant.multipliers = multiplier_convention::minimum_norm;
  redundant.consistent_multipliers = true;
  expect_lanes_equal_alone<test::doubled_pendulum_constraint, dopri5_method>(
      doubled, "doubled pendulum, coordinate projection, minimum-norm multipliers", study_of(redundant, 1.0, 4), 73);

  solver_options fixed = for_method<dopri5_method>(adaptive(formulation::index1));
  fixed.projection = projection_kind::coordinate;
  fixed.fixed_h = 2e-5;
  expect_lanes_equal_alone<models::andrews, dopri5_method>(andrews, "andrews, fixed steps of 2e-5",
                                                           study_of(fixed, 3e-3, 3), 74);

  // The projections in the Euclidean metric (the lanes' projection skips W^-1 for it, as one member's).
  solver_options euclidean = for_method<dopri5_method>(adaptive(formulation::index1));
  euclidean.projection = projection_kind::post_stabilization;
  euclidean.metric = projection_metric::euclidean;
  expect_lanes_equal_alone<models::andrews, dopri5_method>(andrews, "andrews, post-stabilization, Euclidean metric",
                                                           study_of(euclidean, 3e-3, 3), 71);
  euclidean.projection = projection_kind::coordinate;
  expect_lanes_equal_alone<test::doubled_pendulum_constraint, dopri5_method>(
      doubled, "doubled pendulum, coordinate projection, Euclidean metric", study_of(euclidean, 1.0, 4), 76);
}

TEST(SimdMember, EveryLaneEndsItsTsit5MemberAsMemberAdvanceAlone) {
  const auto andrews = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Tsit5Andrews)(a...); };
  const auto knife_edge = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(Tsit5KnifeEdge)(a...); };
  expect_explicit_pair_lanes_equal_alone<tsit5_method>(andrews, knife_edge, 81);
}

// auto's lanes (lockstep/simd/auto_attempt_inl.hpp): each lane in its member's phase, both phases'
// attempts masked to their lanes, the switches lane by lane. The fading damper's members turn stiff at
// once, switch to Radau IIA 5, and switch back to dopri5 once the damping has faded (t > 1.4), so packs
// hold members of both phases; restated, a dropped constraint row travels between the phases. On
// Andrews' squeezer (index3, coordinate projection) the members run out of attempts.
TEST(SimdMember, EveryLaneEndsItsAutoMemberAsMemberAdvanceAlone) {
  const auto damper = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(AutoFadingDamper)(a...); };
  const auto restated = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(AutoRestatedDamper)(a...); };
  const auto andrews = [](auto&&... a) { return HWY_DYNAMIC_DISPATCH(AutoAndrews)(a...); };
  solver_options projected = for_method<auto_method>(adaptive(formulation::index3));
  projected.projection = projection_kind::coordinate;
  projected.rtol = projected.atol_q = projected.atol_v = projected.atol_lambda = 1e-5;
  for (const auto& [switched, returned] :
       {expect_lanes_equal_alone<test::fading_damper_model<false>, auto_method>(
            damper, "fading damper, index3, coordinate projection", study_of(projected, 3.0, 4), 94),
        expect_lanes_equal_alone<test::fading_damper_model<true>, auto_method>(
            restated, "fading damper restated, index3, coordinate projection", study_of(projected, 3.0, 4), 92)}) {
    EXPECT_GT(switched, 30u);  // of 45, the NaN members aside
    EXPECT_GT(returned, 20u);  // the others switch back after t1 or run out of attempts first
  }

  solver_options andrews_opt = for_method<auto_method>(adaptive(formulation::index3));
  andrews_opt.projection = projection_kind::coordinate;
  andrews_opt.max_steps = 60;
  expect_lanes_equal_alone<models::andrews, auto_method>(andrews, "andrews, index3, coordinate projection, 60 attempts",
                                                         study_of(andrews_opt, 3e-3, 3), 93);
}

// A chunk's storage (lockstep/detail/member_kernels.hpp, chunk_view) for `members`, begun by
// begin_member, as an engine's begin leaves it.
template <class Model, class Method>
struct chunk_storage {
  std::vector<std::uint64_t> states;
  std::vector<double> params, q0, v0, outputs;
  std::vector<unsigned char> finished;
  chunk_view<Model> view;

  chunk_storage(const member_study& st, const std::vector<study_member<Model>>& members) {
    const long stride = long(members.size());
    states.assign(size_t(soa_image<member_state<Model, Method>>::words * stride), 0);
    params.resize(size_t(Model::n_params * stride));
    q0.resize(size_t(Model::n * stride)), v0.resize(size_t(Model::n * stride));
    outputs.assign(st.save_times.size() * state_layout<Model>::size * size_t(stride),
                   std::numeric_limits<double>::quiet_NaN());
    finished.assign(size_t(stride), 0);
    for (long i = 0; i < stride; ++i) {
      for (int j = 0; j < Model::n_params; ++j) params[size_t(j * stride + i)] = members[size_t(i)].p[j];
      for (int j = 0; j < Model::n; ++j) {
        q0[size_t(j * stride + i)] = members[size_t(i)].q0[j];
        v0[size_t(j * stride + i)] = members[size_t(i)].v0[j];
      }
    }
    view.stride = stride;
    view.states = states.data(), view.params = params.data(), view.q0 = q0.data(), view.v0 = v0.data();
    view.outputs = outputs.data(), view.finished = finished.data();
    view.save_times = st.save_times.data(), view.save_count = int(st.save_times.size());
    view.t0 = st.t0, view.t1 = st.t1, view.options = st.opt;
    for (long i = 0; i < stride; ++i) begin_member<Model, Method>{view}(i);
  }
  chunk_storage(const chunk_storage&) = delete;
};

// What the engine's advance leaves of member i: its digests and flags, as member_record.
template <class Model, class Method>
member_record record_of(const chunk_storage<Model, Method>& c, long i) {
  member_state<Model, Method> ms;
  soa_load(c.states.data(), c.view.stride, i, ms);
  member_record r;
  record_state<Model>(r, ms);
  r.finished = c.finished[size_t(i)];
  const size_t ny = state_layout<Model>::size;
  for (int s = 0; s < c.view.save_count; ++s)
    for (size_t j = 0; j < ny; ++j)
      digest_values(r.output_digest, &c.outputs[(size_t(s) * ny + j) * size_t(c.view.stride) + size_t(i)], 1);
  return r;
}

// Two records of what a chunk holds of a member (record_of) are the same, bit for bit.
bool same_in_chunk(const member_record& x, const member_record& y) {
  return same_bits(x.status, y.status) && x.attempts == y.attempts && x.next_save == y.next_save &&
         x.method == y.method && x.counters == y.counters && x.finished == y.finished &&
         x.output_digest == y.output_digest;
}

TEST(SimdAdvanceInLanes, EveryMemberOfAChunkEndsEachCallAsAdvanceMemberLeavesIt) {
  using Model = models::andrews;
  solver_options opt = adaptive(formulation::ggl);
  opt.projection = projection_kind::coordinate;
  opt.max_steps = 40;
  const member_study st = study_of(opt, 3e-3, 3);
  std::mt19937_64 g(45);
  std::vector<study_member<Model>> members(45);
  for (auto& m : members) m = draw<Model>(g);
  constexpr int max_attempts = 7;

  // The reference: advance_member for each running member, in reverse order, as the engine does; each
  // member's record after every call.
  std::feclearexcept(FE_ALL_EXCEPT);
  chunk_storage<Model, bdf_method> alone(st, members);
  std::vector<std::vector<member_record>> expected;  // [call][member]
  const auto records = [](const chunk_storage<Model, bdf_method>& c) {
    std::vector<member_record> all;
    for (long i = 0; i < c.view.stride; ++i) all.push_back(record_of(c, i));
    return all;
  };
  for (;;) {
    bool any = false;
    for (long i = alone.view.stride - 1; i >= 0; --i)
      if (!alone.finished[size_t(i)]) advance_member<Model, bdf_method>{alone.view, max_attempts}(i), any = true;
    if (!any) break;
    expected.push_back(records(alone));
  }
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
  size_t succeeded = 0;
  for (const member_record& r : expected.back()) succeeded += r.status == double(member_status::success);
  EXPECT_GT(expected.size(), 3u);  // members pause at the call's budget many times
  EXPECT_GT(succeeded, members.size() / 3);
  EXPECT_LT(succeeded, members.size());

  std::unique_ptr<chunk_storage<Model, bdf_method>> lanes;
  std::vector<std::vector<member_record>> got;
  const size_t variants = expect_every_variant_equal(
      "advance_in_lanes, BDF, andrews", FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
      [&](size_t w) {
        lanes = std::make_unique<chunk_storage<Model, bdf_method>>(st, members);
        got.clear();
        return HWY_DYNAMIC_DISPATCH(ChunkAndrews)(lanes->view, max_attempts, [&](int) { got.push_back(records(*lanes)); }, w);
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        EXPECT_EQ(got.size(), expected.size()) << variant << ": calls";
        for (size_t call = 0; call < std::min(got.size(), expected.size()); ++call)
          for (size_t i = 0; i < members.size(); ++i) {
            const member_record &x = got[call][i], &y = expected[call][i];
            if (same_in_chunk(x, y)) continue;
            if (differ++ == 0)
              ADD_FAILURE() << variant << ": after call " << call << ", member " << i << ": status " << x.status
                            << ", attempts " << x.attempts << "; alone " << y.status << ", " << y.attempts;
          }
        return differ;
      },
      1);
  std::printf("[ members ] advance_in_lanes, BDF, andrews: %zu members, %d calls of %d attempts, %zu succeed, %zu "
              "variants equal\n",
              members.size(), int(expected.size()), max_attempts, succeeded, variants);
}

// How a chunking runs a study: its members split into chunks of at most `chunk` members (in order),
// each chunk's running members handed to `workspaces` workspaces, at most `max_attempts` per call.
struct chunking {
  long chunk;
  int workspaces, max_attempts;
};

// Each member's record after the study ran in chunks as `how` says, in W lanes: false where this
// build has no such width.
template <class Model, class Method>
bool run_in_chunks(int model, const member_study& st, const std::vector<study_member<Model>>& members,
                   const chunking& how, size_t lanes, std::vector<member_record>& out) {
  out.clear();
  for (size_t first = 0; first < members.size(); first += size_t(how.chunk)) {
    const size_t last = std::min(members.size(), first + size_t(how.chunk));
    const std::vector<study_member<Model>> part(members.begin() + long(first), members.begin() + long(last));
    chunk_storage<Model, Method> c(st, part);
    const auto chunk_builtin = std::is_same_v<Method, bdf_method>      ? HWY_DYNAMIC_DISPATCH(ChunkBuiltinBdf)
                               : std::is_same_v<Method, radau5_method> ? HWY_DYNAMIC_DISPATCH(ChunkBuiltinRadau5)
                               : std::is_same_v<Method, rhoinf_method> ? HWY_DYNAMIC_DISPATCH(ChunkBuiltinRhoinf)
                                                                       : HWY_DYNAMIC_DISPATCH(ChunkBuiltinDopri5);
    static_assert(std::is_same_v<Method, bdf_method> || std::is_same_v<Method, radau5_method> ||
                  std::is_same_v<Method, rhoinf_method> || std::is_same_v<Method, dopri5_method>);
    const bool ran = chunk_builtin(model, &c.view, how.max_attempts, how.workspaces, lanes);
    if (!ran) return false;
    for (long i = 0; i < c.view.stride; ++i) out.push_back(record_of(c, i));
  }
  return true;
}

// Every built-in model's members in lanes, in three chunkings (one chunk, one call at a time per
// member; one chunk shared by two workspaces that trade its members from call to call; chunks of 13
// members, the engine's default attempts per call), end as advance_member ends them alone, bit for bit.
// The study: ggl (dopri5: index1 with coordinate projection), 37 members (not a multiple of W) with
// parameters within 5 % of the defaults (one in sixteen NaN), one member at the origin of its
// coordinates (the pendulum's bob at its pivot, where G = 0), and a step budget just below the attempts
// of the member at three quarters of the successful ones (or at them, see below), so that about a
// quarter stop at it (more where many members need the same number of attempts, as Radau IIA's members
// of a smooth model often do); the horizon is 0.7 of the time the model's default member reaches in 120
// attempts (at most 10), so that every model's members take about a hundred attempts.
template <class Model, class Method>
void expect_every_chunking_equal_alone(int model) {
  const std::string name = std::string(method_name(Method::kind)) + ", " + Model::name;
  std::mt19937_64 g(std::hash<std::string>{}(Model::name));
  std::vector<study_member<Model>> members(37);
  for (auto& m : members) m = draw<Model>(g);
  members[5].q0 = {}, members[5].v0 = {};

  study_member<Model> nominal{};
  for (int i = 0; i < Model::n_params; ++i) nominal.p[i] = Model::params[i].default_value;
  default_initial_state<Model>(nominal.p, nominal.q0, nominal.v0);
  constexpr bool explicit_method = Method::kind == method_kind::dopri5;
  solver_options opt = for_method<Method>(adaptive(explicit_method ? formulation::index1 : formulation::ggl));
  if (explicit_method) opt.projection = projection_kind::coordinate;
  opt.max_steps = 120;
  member_study st = study_of(opt, 10.0, 0);
  {
    member_state<Model, Method> ms;
    const auto none = [](int, double, const state_vector<Model>&) {};
    const double* saves = st.save_times.data();
    const int save_count = int(st.save_times.size());
    member_begin<Model>(ms, st.t0, st.t1, nominal.q0, nominal.v0, nominal.p, opt, saves, save_count, none);
    while (!member_advance<Model>(ms, 64, st.t1, nominal.p, opt, saves, save_count, none)) {
    }
    ASSERT_GT(ms.method.t, 0.0) << name << ": the default member made no step";
    st = study_of(opt, ms.status == member_status::success ? 10.0 : 0.7 * ms.method.t, 3);
  }
  st.opt.max_steps = solver_options{}.max_steps;
  std::vector<long> attempts;
  for (const auto& m : members)
    if (const member_record r = alone<Model, Method>(st, m); r.status == double(member_status::success))
      attempts.push_back(r.attempts);
  ASSERT_GT(attempts.size(), members.size() / 2) << name;
  std::sort(attempts.begin(), attempts.end());
  // Over half succeed with BDF; a third with Radau IIA, rho_inf and dopri5, whose members of a smooth
  // model often need the same number of attempts, so that more of them stop at the budget. Where the
  // budget just below the member at three quarters would stop so many that fewer succeed (most of
  // dopri5's knife-edge members take 86 attempts), the budget is that member's count.
  const size_t least_successful = std::is_same_v<Method, bdf_method> ? members.size() / 2 + 1 : members.size() / 3;
  const long at_three_quarters = attempts[attempts.size() * 3 / 4];
  const auto fewer = size_t(std::lower_bound(attempts.begin(), attempts.end(), at_three_quarters) - attempts.begin());
  st.opt.max_steps = fewer >= least_successful ? at_three_quarters - 1 : at_three_quarters;

  std::feclearexcept(FE_ALL_EXCEPT);
  std::vector<member_record> expected;
  {
    chunk_storage<Model, Method> alone(st, members);
    for (bool any = true; any;) {
      any = false;
      for (long i = alone.view.stride - 1; i >= 0; --i)
        if (!alone.finished[size_t(i)]) advance_member<Model, Method>{alone.view, 3}(i), any = true;
    }
    for (long i = 0; i < alone.view.stride; ++i) expected.push_back(record_of(alone, i));
  }
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
  std::map<double, size_t> statuses;
  for (const member_record& r : expected) ++statuses[r.status];
  EXPECT_GE(statuses[double(member_status::success)], least_successful) << name;
  EXPECT_GT(statuses[double(member_status::max_steps)], 0u) << name;

  const chunking chunkings[] = {{37, 1, 1}, {37, 2, 9}, {13, 1, 32}};
  std::vector<member_record> got[std::size(chunkings)];
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
      [&](size_t lanes) {
        for (size_t k = 0; k < std::size(chunkings); ++k)
          if (!run_in_chunks<Model, Method>(model, st, members, chunkings[k], lanes, got[k])) return false;
        return true;
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        for (size_t k = 0; k < std::size(chunkings); ++k)
          for (size_t i = 0; i < members.size(); ++i) {
            const member_record &x = got[k][i], &y = expected[i];
            if (same_in_chunk(x, y)) continue;
            if (differ++ == 0)
              ADD_FAILURE() << name << ", " << variant << ", chunks of " << chunkings[k].chunk << " in "
                            << chunkings[k].workspaces << " workspaces, " << chunkings[k].max_attempts
                            << " attempts per call: member " << i << ": status " << x.status << ", attempts "
                            << x.attempts << "; alone " << y.status << ", " << y.attempts;
          }
        return differ;
      },
      1);
  std::string ends;
  for (const auto& [status, n] : statuses)
    ends += (ends.empty() ? "" : ", ") + std::to_string(n) + " " + status_name(member_status(int(status)));
  std::printf("[ members ] %s, every chunking: %zu members (%s) to t = %g, %zu variants equal\n", name.c_str(),
              members.size(), ends.c_str(), st.t1, variants);
}

// expect_every_chunking_equal_alone for every built-in model, with Method: compiled in the build for
// AVX-512 only (chunk_builtin).
template <class Method>
void expect_every_builtin_model_equal_alone() {
#if HWY_STATIC_TARGET > HWY_AVX3
  GTEST_SKIP() << "compiled in the build for AVX-512 only (chunk_builtin)";
#else
  int model = 0;
  builtin_models::for_each([&]<class Model>() { expect_every_chunking_equal_alone<Model, Method>(model++); });
#endif
}

TEST(SimdAdvanceInLanes, EveryBuiltInModelEndsItsBdfMembersAsAloneInEveryChunking) {
  expect_every_builtin_model_equal_alone<bdf_method>();
}

TEST(SimdAdvanceInLanes, EveryBuiltInModelEndsItsRadauIIAMembersAsAloneInEveryChunking) {
  expect_every_builtin_model_equal_alone<radau5_method>();
}

TEST(SimdAdvanceInLanes, EveryBuiltInModelEndsItsRhoinfMembersAsAloneInEveryChunking) {
  expect_every_builtin_model_equal_alone<rhoinf_method>();
}

TEST(SimdAdvanceInLanes, EveryBuiltInModelEndsItsDopri5MembersAsAloneInEveryChunking) {
  expect_every_builtin_model_equal_alone<dopri5_method>();
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
