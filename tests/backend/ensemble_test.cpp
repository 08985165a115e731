// The batched engine: a member's results depend on its own inputs only — never on the ensemble it is in,
// the chunk size, the number of attempts between syncs, the thread count or the backend (serial vs
// omp: bitwise, docs/DESIGN-NOTES.md, "Determinism") — and one failing member never changes another.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"
#include "../support/builtin_solve.hpp"
#include "../support/same_member.hpp"

namespace {

using namespace lockstep;
using lockstep::test::same_member;
using lockstep::test::solve_builtin;  // every model here is built in

// Members that differ (parameters and start), so they take different numbers of steps and the
// scheduler really interleaves them. `salt` picks the variation; member i of a large ensemble equals
// member i of a small one.
template <class Model>
void vary_member(ensemble<Model>& e, long i) {
  double* p = e.params_of(i);
  const double f = 1.0 + 0.01 * std::sin(1.7 * static_cast<double>(i));
  for (int j = 0; j < Model::n_params; ++j) p[j] *= (j == 0 ? f : 1.0);
  double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0) {
    for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
    if (!std::isnan(inputs[0])) inputs[0] += 0.05 * std::cos(0.9 * static_cast<double>(i));
  }
  e.set_initial_inputs(i, inputs);
}

template <class Model>
ensemble<Model> make_ensemble(long members, double t1, double tol, formulation form = formulation::ggl,
                              double fixed_h = 0.0) {
  auto e = ensemble<Model>::with_defaults(members);
  for (long i = 0; i < members; ++i) vary_member(e, i);
  e.t1 = t1;
  e.save_times = {0.25 * t1, 0.5 * t1, t1};
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = tol;
  e.options.fixed_h = fixed_h;
  e.options.fixed_order = 2;
  return e;
}

// The sub-ensemble of the given members (same inputs, new indices).
template <class Model>
ensemble<Model> select(const ensemble<Model>& e, const std::vector<long>& members) {
  ensemble<Model> s = e;
  s.members = static_cast<long>(members.size());
  s.params.clear();
  s.q0.clear();
  s.v0.clear();
  for (long i : members) {
    s.params.insert(s.params.end(), e.params_of(i), e.params_of(i) + Model::n_params);
    s.q0.insert(s.q0.end(), e.q0.begin() + i * Model::n, e.q0.begin() + (i + 1) * Model::n);
    s.v0.insert(s.v0.end(), e.v0.begin() + i * Model::n, e.v0.begin() + (i + 1) * Model::n);
  }
  return s;
}

run_options make_run(backend where, long chunk, int threads, int attempts = 32) {
  run_options r;
  r.where = where;
  r.chunk_size = chunk;
  r.threads = threads;
  r.attempts_per_sync = attempts;
  return r;
}

// The full determinism matrix (docs/DESIGN-NOTES.md, "Determinism") for one model: alone, in 100 and in 10,000;
// chunks 7, 1000 and all; K = 32 and 5; serial, omp with 1 and 2 threads.
template <class Model>
void check_full_determinism_matrix(double t1, double tol) {
  const auto big = make_ensemble<Model>(10000, t1, tol);
  const std::vector<long> probes = {0, 3, 57, 99};
  const auto reference_big = solve_builtin(big, make_run(backend::serial, 0, 1));
  for (long i = 0; i < 10000; ++i) ASSERT_EQ(reference_big.status[i], member_status::success) << "member " << i;
  for (long i : probes) {
    const auto alone = solve_builtin(select(big, {i}), make_run(backend::serial, 0, 1));
    EXPECT_TRUE(same_member(alone, 0, reference_big, i)) << "alone vs in 10000, member " << i;
    // The single-member driver is the same code.
    vec<double, Model::n> q0, v0;
    for (int j = 0; j < Model::n; ++j) {
      q0[j] = big.q0[i * Model::n + j];
      v0[j] = big.v0[i * Model::n + j];
    }
    const auto single = solve_member<Model>(big.params_of(i), q0, v0, big.t0, big.t1, big.options, big.save_times);
    ASSERT_EQ(single.y.size(), 3u);
    for (int s = 0; s < 3; ++s)
      EXPECT_EQ(std::memcmp(&single.y[s][0], &reference_big.outputs[(i * 3 + s) * state_layout<Model>::size],
                            state_layout<Model>::size * sizeof(double)),
                0)
          << "solve_member vs ensemble, member " << i << ", save " << s;
  }
  std::vector<long> first100(100);
  for (long i = 0; i < 100; ++i) first100[i] = i;
  const auto hundred = select(big, first100);
  for (long chunk : {7L, 1000L, 0L})
    for (int attempts : {32, 5}) {
      const auto r = solve_builtin(hundred, make_run(backend::serial, chunk, 1, attempts));
      for (long i : probes) EXPECT_TRUE(same_member(r, i, reference_big, i)) << "100, chunk " << chunk << ", K " << attempts;
    }
  for (long chunk : {7L, 1000L, 0L})
    for (int threads : {1, 2}) {
      const auto r = solve_builtin(big, make_run(backend::omp, chunk, threads));
      long differing = 0;
      for (long i = 0; i < 10000; ++i) differing += same_member(r, i, reference_big, i) ? 0 : 1;
      EXPECT_EQ(differing, 0) << "10000 on omp, chunk " << chunk << ", threads " << threads;
    }
}

TEST(EnsembleDeterminism, PendulumMemberIsBitwiseTheSameInEveryEnsembleChunkThreadCountAndBackend) {
  check_full_determinism_matrix<models::pendulum>(1.0, 1e-5);
}

TEST(EnsembleDeterminism, AndrewsMemberIsBitwiseTheSameInEveryEnsembleChunkThreadCountAndBackend) {
  check_full_determinism_matrix<models::andrews>(0.003, 1e-5);
}

// Every other model, method and formulation: 200 members, chunk 7 vs all, omp with 2 threads vs serial.
template <class Model>
struct EnsembleDeterminismPerModel : ::testing::Test {};
using AllModels = ::testing::Types<models::double_pendulum, models::chain<2>, models::chain<4>, models::chain<8>,
                                   models::chain<16>, models::slider_crank, models::car_axis, models::knife_edge,
                                   models::linear_oscillator>;
TYPED_TEST_SUITE(EnsembleDeterminismPerModel, AllModels);

TYPED_TEST(EnsembleDeterminismPerModel, SerialAndTwoThreadOmpAgreeBitwiseForChunk7AndAllWithEveryMethod) {
  using Model = TypeParam;
  struct pair {
    method_kind method;
    formulation form;
    double fixed_h;  // BDF on index3 runs with fixed steps only
    double t1;
    double tol;  // the low orders at tolerances where they are practical (docs/METHODS.md, "What rtol means")
    projection_kind projection = projection_kind::none;  // the explicit methods project after every step
  };
  for (const pair& fp : {pair{method_kind::bdf, formulation::ggl, 0.0, 0.1, 1e-5},
                         pair{method_kind::bdf, formulation::index3, 2e-4, 0.05, 1e-5},
                         pair{method_kind::radau5, formulation::index3, 0.0, 0.1, 1e-5},
                         pair{method_kind::radau5, formulation::ggl, 0.0, 0.1, 1e-5},
                         // the other methods over shorter intervals (euler takes 10-100 times the steps)
                         pair{method_kind::radau3, formulation::index3, 0.0, 0.05, 1e-5},
                         pair{method_kind::euler, formulation::ggl, 0.0, 0.01, 1e-2},
                         pair{method_kind::rhoinf, formulation::index3, 0.0, 0.05, 1e-3},
                         // the explicit methods likewise (no member here turns stiff: auto's switches are in
                         // the golden corpus, tests/golden/corpus.py, over threads, chunks and ranks)
                         pair{method_kind::dopri5, formulation::index1, 0.0, 0.03, 1e-5, projection_kind::coordinate},
                         pair{method_kind::tsit5, formulation::index1, 0.0, 0.03, 1e-5, projection_kind::coordinate},
                         pair{method_kind::automatic, formulation::index3, 0.0, 0.03, 1e-5, projection_kind::coordinate}}) {
    auto e = make_ensemble<Model>(200, fp.t1, fp.tol, fp.form, fp.fixed_h);
    e.options.method = fp.method;
    e.options.projection = fp.projection;
    const auto reference = solve_builtin(e, make_run(backend::serial, 0, 1));
    const auto chunked = solve_builtin(e, make_run(backend::omp, 7, 2));
    const auto whole = solve_builtin(e, make_run(backend::omp, 0, 2));
    long finished = 0;
    for (long i = 0; i < 200; ++i) {
      finished += reference.status[i] == member_status::success;
      EXPECT_TRUE(same_member(chunked, i, reference, i))
          << Model::name << " " << method_name(fp.method) << "/" << formulation_name(fp.form) << " member " << i;
      EXPECT_TRUE(same_member(whole, i, reference, i))
          << Model::name << " " << method_name(fp.method) << "/" << formulation_name(fp.form) << " member " << i;
    }
    EXPECT_EQ(finished, 200) << Model::name << " " << method_name(fp.method) << "/" << formulation_name(fp.form)
                             << ": members that did not reach t1";
  }
}

// Projection after every accepted step (formulation/projection.hpp) in the batch path: a member solved
// with projection = coordinate (and post-stabilization) is bitwise the same alone (serial, and through
// solve_member), in an ensemble of 64 on the serial backend, and on omp with 2 threads and chunk 7. index1
// drifts, so there the projections really move the point (max_projection_q > 0 is checked); on index3
// they correct v.
template <class Model>
void check_projection_determinism(method_kind method, formulation form, projection_kind projection, double t1,
                                  double tol = 1e-6) {
  const std::string what = std::string(Model::name) + " " + method_name(method) + "/" + formulation_name(form) + "/" +
                           projection_name(projection);
  constexpr long members = 64;
  auto e = make_ensemble<Model>(members, t1, tol, form);
  e.options.method = method;
  e.options.projection = projection;
  const auto reference = solve_builtin(e, make_run(backend::serial, 0, 1));
  const auto chunked = solve_builtin(e, make_run(backend::omp, 7, 2));
  long moved = 0;
  for (long i = 0; i < members; ++i) {
    ASSERT_EQ(reference.status[i], member_status::success) << what << " member " << i;
    EXPECT_GT(reference.counters[i].projections, 0) << what << " member " << i;
    moved += reference.counters[i].max_projection_q > 0.0 || reference.counters[i].max_projection_v > 0.0;
    EXPECT_TRUE(same_member(chunked, i, reference, i)) << what << ": omp chunk 7, 2 threads vs serial, member " << i;
  }
  EXPECT_EQ(moved, members) << what << ": members whose projections moved the point";
  for (long i : {0L, 7L, 13L, members - 1}) {
    const auto alone = solve_builtin(select(e, {i}), make_run(backend::serial, 0, 1));
    EXPECT_TRUE(same_member(alone, 0, reference, i)) << what << ": alone vs in the ensemble, member " << i;
    vec<double, Model::n> q0, v0;
    for (int j = 0; j < Model::n; ++j) {
      q0[j] = e.q0[i * Model::n + j];
      v0[j] = e.v0[i * Model::n + j];
    }
    const auto single = solve_member<Model>(e.params_of(i), q0, v0, e.t0, e.t1, e.options, e.save_times);
    ASSERT_EQ(single.y.size(), 3u) << what;
    for (int s = 0; s < 3; ++s)
      EXPECT_EQ(std::memcmp(&single.y[s][0], &reference.outputs[(i * 3 + s) * state_layout<Model>::size],
                            state_layout<Model>::size * sizeof(double)),
                0)
          << what << ": solve_member vs ensemble, member " << i << ", save " << s;
    EXPECT_EQ(std::memcmp(&single.counters, &reference.counters[i], sizeof(member_counters)), 0)
        << what << ": solve_member vs ensemble counters, member " << i;
  }
}

TEST(EnsembleDeterminism, ProjectedMembersAreBitwiseTheSameAloneInAnEnsembleAndOnTwoOmpThreadsWithChunk7) {
  check_projection_determinism<models::double_pendulum>(method_kind::bdf, formulation::index1,
                                                        projection_kind::coordinate, 0.5);
  check_projection_determinism<models::double_pendulum>(method_kind::radau5, formulation::index3,
                                                        projection_kind::coordinate, 0.5);
  check_projection_determinism<models::double_pendulum>(method_kind::radau3, formulation::index1,
                                                        projection_kind::post_stabilization, 0.5);
  check_projection_determinism<models::double_pendulum>(method_kind::rhoinf, formulation::index3,
                                                        projection_kind::coordinate, 0.5, 1e-3);
  // non-holonomic: v onto A v + a = 0
  check_projection_determinism<models::knife_edge>(method_kind::bdf, formulation::index1, projection_kind::coordinate,
                                                   1.0);
}

// 1,000 pendulum members, 10 of them broken on purpose; the other 990 must be bitwise what they are in
// a clean run.
TEST(EnsembleIsolation, TenFailingMembersReportTheirStatusesAndLeaveTheOthersBitwiseUnchanged) {
  using Model = models::pendulum;
  auto clean = make_ensemble<Model>(1000, 2.0, 1e-6);
  clean.options.h_min = 1e-7;
  auto broken = clean;
  const long nan_members[] = {5, 250, 777}, singular_members[] = {17, 500, 901}, stiff_members[] = {42, 333, 666, 999};
  for (long i : nan_members) broken.params_of(i)[2] = std::numeric_limits<double>::quiet_NaN();  // g
  for (long i : singular_members) {  // the bob at the pivot: G = (x, y) = 0
    broken.params_of(i)[1] = 0.0;   // L
    const double in[2] = {1.0, 0.0};
    broken.set_initial_inputs(i, in);
  }
  for (long i : stiff_members) broken.params_of(i)[2] = 1e14;  // g: accelerations need steps below h_min

  const auto rc = solve_builtin(clean, make_run(backend::omp, 64, 2));
  const auto rb = solve_builtin(broken, make_run(backend::omp, 64, 2));
  for (long i : nan_members) EXPECT_EQ(rb.status[i], member_status::model_not_finite) << i;
  for (long i : singular_members) EXPECT_EQ(rb.status[i], member_status::singular_matrix) << i;
  for (long i : stiff_members) EXPECT_EQ(rb.status[i], member_status::step_size_too_small) << i;
  long unchanged = 0;
  for (long i = 0; i < 1000; ++i) {
    const bool is_broken = std::find(std::begin(nan_members), std::end(nan_members), i) != std::end(nan_members) ||
                           std::find(std::begin(singular_members), std::end(singular_members), i) != std::end(singular_members) ||
                           std::find(std::begin(stiff_members), std::end(stiff_members), i) != std::end(stiff_members);
    if (is_broken) continue;
    EXPECT_EQ(rc.status[i], member_status::success);
    unchanged += same_member(rb, i, rc, i) ? 1 : 0;
  }
  EXPECT_EQ(unchanged, 990);
}

TEST(EnsembleApi, RefusesBadInputWithAClearMessage) {
  auto e = ensemble<models::pendulum>::with_defaults(3);
  e.save_times = {0.5, 2.0};
  e.t1 = 1.0;
  try {
    solve_builtin(e, run_options{});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("outside [t0, t1]"), std::string::npos) << err.what();
  }
  e.save_times = {0.5};
  e.options.form = formulation::index3;  // adaptive BDF on index3 is refused
  EXPECT_THROW(solve_builtin(e, run_options{}), std::invalid_argument);
}

TEST(EnsembleApi, ReportsBytesPerMemberThatGrowWithSaveTimes) {
  EXPECT_GT(bytes_per_member<models::pendulum>(10), bytes_per_member<models::pendulum>(1));
  EXPECT_GE(bytes_per_member<models::pendulum>(0), sizeof(member_state<models::pendulum, bdf_method>));
  EXPECT_GE(bytes_per_member<models::pendulum>(0, method_kind::radau5), sizeof(member_state<models::pendulum, radau5_method>));
  EXPECT_GE(bytes_per_member<models::pendulum>(0, method_kind::radau3), sizeof(member_state<models::pendulum, radau3_method>));
  EXPECT_GE(bytes_per_member<models::pendulum>(0, method_kind::euler), sizeof(member_state<models::pendulum, euler_method>));
  EXPECT_GE(bytes_per_member<models::pendulum>(0, method_kind::rhoinf), sizeof(member_state<models::pendulum, rhoinf_method>));
}

TEST(EnsembleStreaming, ChunksArriveInOrderAndCarryExactlyTheKeptResults) {
  // Arrange: 37 varied pendulums, chunks of 10 (the last one short).
  const auto e = make_ensemble<models::pendulum>(37, 1.0, 1e-6);
  constexpr int ny = state_layout<models::pendulum>::size;
  const auto kept = solve_builtin(e, make_run(backend::serial, 10, 1));
  auto streamed_run = make_run(backend::omp, 10, 2);
  streamed_run.keep_outputs = false;
  std::vector<double> streamed(kept.outputs.size(), 0.0);
  std::vector<long> firsts;
  streamed_run.on_chunk = [&](const chunk_results& c) {
    firsts.push_back(c.first);
    ASSERT_EQ(c.ny, ny);
    ASSERT_EQ(c.save_count, 3);
    const std::size_t block = static_cast<std::size_t>(c.save_count) * c.ny;
    std::copy(c.outputs, c.outputs + block * c.count, streamed.begin() + static_cast<std::ptrdiff_t>(block * c.first));
    for (long i = 0; i < c.count; ++i) EXPECT_EQ(c.status[i], kept.status[c.first + i]);
  };

  // Act
  const auto r = solve_builtin(e, streamed_run);

  // Assert: no trajectories held, chunks 0, 10, 20, 30 in order, and the streamed values bitwise equal
  // to the kept ones.
  EXPECT_TRUE(r.outputs.empty());
  EXPECT_EQ(firsts, (std::vector<long>{0, 10, 20, 30}));
  EXPECT_EQ(std::memcmp(streamed.data(), kept.outputs.data(), streamed.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(r.y_final.data(), kept.y_final.data(), r.y_final.size() * sizeof(double)), 0);
}

TEST(EnsembleStop, StopRequestedAbandonsTheRunBetweenBlocksAndOtherwiseChangesNothing) {
  // Arrange: 600 varied double pendulums in chunks of 200, on two omp threads (blocks of 8-64).
  const auto e = make_ensemble<models::double_pendulum>(600, 2.0, 1e-6);
  const auto plain = solve_builtin(e, make_run(backend::omp, 200, 2));

  // A stop that is never requested changes no bit.
  auto polled = make_run(backend::omp, 200, 2);
  std::atomic<long> polls{0};
  polled.stop_requested = [&] { return polls.fetch_add(1) < 0; };
  const auto same = solve_builtin(e, polled);
  EXPECT_GT(polls.load(), 0);
  EXPECT_EQ(std::memcmp(same.outputs.data(), plain.outputs.data(), plain.outputs.size() * sizeof(double)), 0);

  // Requested during the first chunk: run_stopped, before any chunk is delivered, and within the
  // launch that saw it (the blocks already running finish; no launch follows).
  for (backend where : {backend::omp, backend::serial}) {
    auto stopping = make_run(where, 200, 2);
    std::atomic<long> blocks{0}, launches{0};
    std::atomic<bool> stop{false};
    long chunks = 0;
    stopping.stop_requested = [&] {
      if (stop.load()) return true;
      if (blocks.fetch_add(1) == 3) stop.store(true);  // the fourth poll asks to stop
      return false;
    };
    stopping.on_progress = [&](const progress_report&) { launches.fetch_add(1); };
    stopping.on_chunk = [&](const chunk_results&) { ++chunks; };
    EXPECT_THROW(solve_builtin(e, stopping), run_stopped) << backend_name(where);
    EXPECT_EQ(chunks, 0) << backend_name(where);
    EXPECT_LE(launches.load(), 2) << backend_name(where);
  }
}

}  // namespace
