// The split path (lockstep/detail/split_factor.hpp, docs/GPU.md section 5) emulated on the CPU: step
// attempts that suspend at every factorization, a factor phase between launches, and replays. Its
// member results — outputs at the save times, final states and times, statuses and every counter — must
// be bitwise those of the fused path, for BDF and the Radau IIA family, on the serial and omp backends,
// with failing members and with attempts whose old Jacobian fails and is re-evaluated mid-attempt.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"
#include "../support/builtin_solve.hpp"
#include "../support/same_member.hpp"

namespace {

using namespace lockstep;
using lockstep::test::same_member;
using lockstep::test::solve_builtin;  // every model here is built in

template <class Model>
ensemble<Model> varied_ensemble(long members, double t1, method_kind method, formulation form) {
  auto e = ensemble<Model>::with_defaults(members);
  for (long i = 0; i < members; ++i) {
    e.params_of(i)[0] *= 1.0 + 0.01 * std::sin(1.7 * static_cast<double>(i));
    double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
    if constexpr (Model::n_inputs > 0) {
      for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
      if (!std::isnan(inputs[0])) inputs[0] += 0.05 * std::cos(0.9 * static_cast<double>(i));
    }
    e.set_initial_inputs(i, inputs);
  }
  e.t1 = t1;
  e.save_times = {0.3 * t1, 0.7 * t1, t1};
  e.options.method = method;
  e.options.form = form;
  // backward Euler at a tolerance where it is practical (docs/METHODS.md, "What rtol means"; on index3
  // its per-step tolerance is about 1e-4 rtol^2)
  const double tol = method == method_kind::euler ? 1e-1 : 1e-7;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = tol;
  e.options.max_steps = 20000;  // bounds the member made to fail, whichever way its NaN shows
  return e;
}

// The fused serial run against the split path on serial (K = 3, chunk 5) and on two omp threads (K = 4,
// chunk 4): every member bitwise. Member 2 has a NaN parameter; the others must succeed, but for
// `projection_fails` (when not -1), whose projection must fail after some steps.
template <class Model>
void expect_split_bitwise_fused(ensemble<Model> e, long projection_fails = -1) {
  e.params_of(2)[0] = std::numeric_limits<double>::quiet_NaN();
  run_options fused;
  fused.chunk_size = 5;
  fused.attempts_per_sync = 3;
  run_options split = fused;
  split.split_factorization = true;
  run_options split_omp;
  split_omp.where = backend::omp;
  split_omp.threads = 2;
  split_omp.chunk_size = 4;
  split_omp.attempts_per_sync = 4;
  split_omp.split_factorization = true;
  const auto reference = solve_builtin(e, fused);
  const auto serial = solve_builtin(e, split);
  const auto omp = solve_builtin(e, split_omp);
  EXPECT_NE(reference.status[2], member_status::success);
  ::testing::Test::RecordProperty("nan_member_status", status_name(reference.status[2]));
  for (long i = 0; i < e.members; ++i) {
    if (i == projection_fails) {
      EXPECT_EQ(reference.status[i], member_status::projection_failed);
      EXPECT_GT(reference.counters[i].steps, 0);
    } else if (i != 2) {
      EXPECT_EQ(reference.status[i], member_status::success) << "member " << i;
    }
    EXPECT_GT(reference.counters[i].lu_factorizations + (i == 2 ? 1 : 0), 0) << "member " << i;
    if (projects_after_steps(e.options.projection, e.options.form) && i != 2 && i != projection_fails) {
      EXPECT_GT(reference.counters[i].projections, 0) << "member " << i;
    }
    EXPECT_TRUE(same_member(reference, i, serial, i)) << "serial split, member " << i;
    EXPECT_TRUE(same_member(reference, i, omp, i)) << "omp split, member " << i;
  }
}

// One member driven by hand through the split path: member_advance with the factorizations external,
// factor_external whenever it suspends. Returns how many attempts suspended twice (an old Jacobian's
// factorization, a failed Newton round, the re-evaluated Jacobian's factorization) and the member state;
// the caller compares it with the fused single-member driver.
template <class Model, class Method>
struct split_trace {
  std::unique_ptr<member_state<Model, Method>> state = std::make_unique<member_state<Model, Method>>();
  std::unique_ptr<projection_work<Model>> projection = std::make_unique<projection_work<Model>>();
  std::vector<double> outputs;
  long suspensions = 0;             // at Newton factorizations
  long double_suspensions = 0;
  long projection_suspensions = 0;  // at a projection's Cholesky factorizations
};

// force_old_jacobian_refactor: a test-only rule applied after every accepted step (never on a replay), so
// that attempts refactor with an old Jacobian, which then fails to converge, and the second Newton round
// (re-evaluate, refactor) runs within the attempt. Radau IIA keeps its Jacobian as RADAU5 does when
// Newton contracted very fast, whatever the rate was; BDF drops its factored matrix but keeps the
// Jacobian (BDF refactors only when the shift leaves IDA's band, method/corrector.hpp, so without the
// rule an old Jacobian seldom meets a refactorization).
template <class Model, class Method>
split_trace<Model, Method> drive_split(const ensemble<Model>& e, long i, bool split = true,
                                       bool force_old_jacobian_refactor = false) {
  split_trace<Model, Method> tr;
  member_state<Model, Method>& ms = *tr.state;
  constexpr int ny = state_layout<Model>::size;
  tr.outputs.assign(e.save_times.size() * ny, std::numeric_limits<double>::quiet_NaN());
  auto sink = [&](int s, double, const state_vector<Model>& y) {
    for (int j = 0; j < ny; ++j) tr.outputs[static_cast<std::size_t>(s) * ny + j] = y[j];
  };
  vec<double, Model::n> q0, v0;
  for (int j = 0; j < Model::n; ++j) {
    q0[j] = e.q0[i * Model::n + j];
    v0[j] = e.v0[i * Model::n + j];
  }
  const int save_count = static_cast<int>(e.save_times.size());
  member_begin<Model>(ms, e.t0, e.t1, q0, v0, e.params_of(i), e.options, e.save_times.data(), save_count, sink);
  long last_attempt = -1, in_attempt = 0, steps = 0;
  for (int launch = 0; launch < 1000000; ++launch) {
    if (force_old_jacobian_refactor && !external_of(ms.method).resuming && ms.counters.steps > steps) {
      if constexpr (Method::kind == method_kind::bdf)
        ms.method.corrector.newton_valid = false;
      else
        ms.method.jacobian_valid = true;
    }
    steps = ms.counters.steps;
    external_of(ms.method).enabled = split;
    const bool done = member_advance<Model>(ms, 1, e.t1, e.params_of(i), e.options, e.save_times.data(), save_count,
                                            sink, split ? tr.projection.get() : nullptr);
    if (done) break;
    if (tr.projection->external.pending) {
      ++tr.projection_suspensions;
      factor_pending_projection(*tr.projection);
    }
    if (!external_of(ms.method).pending) continue;
    ++tr.suspensions;
    in_attempt = ms.attempts == last_attempt ? in_attempt + 1 : 1;
    last_attempt = ms.attempts;
    if (in_attempt == 2) ++tr.double_suspensions;
    factor_external(ms.method);
  }
  return tr;
}

// The fused single-member driver's results against drive_split's, bitwise; returns the trace.
template <class Model, class Method>
split_trace<Model, Method> expect_driven_split_bitwise_fused(const ensemble<Model>& e, long i) {
  auto tr = drive_split<Model, Method>(e, i);
  run_options fused;
  ensemble<Model> one = e;
  one.members = 1;
  one.params.assign(e.params_of(i), e.params_of(i) + Model::n_params);
  one.q0.assign(e.q0.begin() + i * Model::n, e.q0.begin() + (i + 1) * Model::n);
  one.v0.assign(e.v0.begin() + i * Model::n, e.v0.begin() + (i + 1) * Model::n);
  const auto reference = solve_builtin(one, fused);
  const member_state<Model, Method>& ms = *tr.state;
  EXPECT_EQ(ms.status, reference.status[0]);
  EXPECT_EQ(std::memcmp(&ms.counters, &reference.counters[0], sizeof(member_counters)), 0);
  EXPECT_EQ(std::memcmp(tr.outputs.data(), reference.outputs.data(), tr.outputs.size() * sizeof(double)), 0);
  const double t = Method::time(ms.method);
  EXPECT_EQ(std::memcmp(&t, &reference.t_final[0], sizeof(double)), 0);
  // Every factorization went through a suspension: BDF counts one per suspension, Radau IIA (s = 3) two.
  const long per = Method::kind == method_kind::radau5 ? 2 : 1;
  EXPECT_EQ(tr.suspensions * per, ms.counters.lu_factorizations);
  return tr;
}

TEST(SplitFactorization, ThresholdSplitsChain16AndKeepsTheSmallModelsFused) {
  EXPECT_TRUE(uses_split_factorization<models::chain<16>>);
  EXPECT_FALSE(uses_split_factorization<models::chain<8>>);
  EXPECT_FALSE(uses_split_factorization<models::andrews>);
  EXPECT_FALSE(uses_split_factorization<models::double_pendulum>);
  EXPECT_FALSE(uses_split_factorization<models::pendulum>);
}

TEST(SplitFactorization, DoublePendulumBdfIsBitwiseTheFusedPathOnSerialAndOmp) {
  expect_split_bitwise_fused(varied_ensemble<models::double_pendulum>(9, 1.0, method_kind::bdf, formulation::ggl));
}

TEST(SplitFactorization, DoublePendulumRadauIIAIsBitwiseTheFusedPathOnSerialAndOmp) {
  expect_split_bitwise_fused(varied_ensemble<models::double_pendulum>(9, 1.0, method_kind::radau5, formulation::index3));
  expect_split_bitwise_fused(varied_ensemble<models::double_pendulum>(9, 1.0, method_kind::radau3, formulation::ggl));
  expect_split_bitwise_fused(varied_ensemble<models::double_pendulum>(9, 1.0, method_kind::euler, formulation::index3));
}

TEST(SplitFactorization, AndrewsBdfAndRadauIIAAreBitwiseTheFusedPath) {
  expect_split_bitwise_fused(varied_ensemble<models::andrews>(7, 0.01, method_kind::bdf, formulation::ggl));
  expect_split_bitwise_fused(varied_ensemble<models::andrews>(7, 0.01, method_kind::radau5, formulation::index3));
}

TEST(SplitFactorization, Chain4BdfAndRadauIIAAreBitwiseTheFusedPath) {
  expect_split_bitwise_fused(varied_ensemble<models::chain<4>>(7, 1.0, method_kind::bdf, formulation::ggl));
  expect_split_bitwise_fused(varied_ensemble<models::chain<4>>(7, 1.0, method_kind::radau5, formulation::index3));
}

TEST(SplitFactorization, Chain16TheSplitModelIsBitwiseTheFusedPath) {
  expect_split_bitwise_fused(varied_ensemble<models::chain<16>>(4, 0.2, method_kind::bdf, formulation::ggl));
  expect_split_bitwise_fused(varied_ensemble<models::chain<16>>(4, 0.2, method_kind::radau5, formulation::index3));
}

// An attempt whose Newton iteration fails with an old Jacobian re-evaluates and refactors it within the
// attempt; if it had refactored the old one, it suspends twice and replays from y_pred as the fused
// second round does. The test-only rule of drive_split makes that frequent, in the fused and the split
// run alike.
template <class Method>
void expect_old_jacobian_refactor_split_bitwise_fused(const ensemble<models::double_pendulum>& e) {
  const auto fused = drive_split<models::double_pendulum, Method>(e, 1, false, true);
  const auto split = drive_split<models::double_pendulum, Method>(e, 1, true, true);
  EXPECT_EQ(fused.suspensions, 0);
  EXPECT_GT(split.double_suspensions, 0);
  EXPECT_EQ(split.state->status, fused.state->status);
  EXPECT_EQ(std::memcmp(&split.state->counters, &fused.state->counters, sizeof(member_counters)), 0);
  EXPECT_EQ(std::memcmp(split.outputs.data(), fused.outputs.data(), split.outputs.size() * sizeof(double)), 0);
  const state_vector<models::double_pendulum>& y_split = Method::current(split.state->method);
  const state_vector<models::double_pendulum>& y_fused = Method::current(fused.state->method);
  EXPECT_EQ(std::memcmp(&y_split, &y_fused, sizeof(y_split)), 0);
  const double t_split = Method::time(split.state->method), t_fused = Method::time(fused.state->method);
  EXPECT_EQ(std::memcmp(&t_split, &t_fused, sizeof(double)), 0);
}

TEST(SplitFactorization, BdfNewtonFailureWithAnOldJacobianRefactorsMidAttemptBitwiseAsFused) {
  auto e = varied_ensemble<models::double_pendulum>(9, 1.0, method_kind::bdf, formulation::ggl);
  e.options.newton_max_iterations = 2;
  expect_old_jacobian_refactor_split_bitwise_fused<bdf_method>(e);
  expect_split_bitwise_fused(e);
}

TEST(SplitFactorization, RadauIIANewtonFailureWithAnOldJacobianRefactorsMidAttemptBitwiseAsFused) {
  auto e = varied_ensemble<models::double_pendulum>(3, 3.0, method_kind::radau5, formulation::index3);
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-6;
  expect_old_jacobian_refactor_split_bitwise_fused<radau5_method>(e);
}

// ---- projections split at their Cholesky factorizations (formulation/projection.hpp, run_projection;
// docs/GPU.md section 5.4): forced, every metric and Gram factorization of an accepted point's
// projection suspends, the factor phase makes it, and the projection resumes where it stopped.

template <class Model>
ensemble<Model> projecting(ensemble<Model> e, projection_kind kind) {
  e.options.projection = kind;
  return e;
}

// Member 4's inertia i5 (andrews parameter 18) is negative enough that M(q) is SPD at the start but
// not along the motion: its projection fails with a singular metric after some steps.
ensemble<models::andrews> andrews_with_failing_projection(method_kind method, formulation form, projection_kind kind) {
  auto e = projecting(varied_ensemble<models::andrews>(7, 0.011, method, form), kind);
  e.params_of(4)[18] *= -4.64;
  return e;
}

TEST(SplitProjection, AndrewsBdfProjectionsAreBitwiseTheFusedPath) {
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization})
    expect_split_bitwise_fused(andrews_with_failing_projection(method_kind::bdf, formulation::ggl, kind), 4);
}

TEST(SplitProjection, AndrewsRadauIIAProjectionsAreBitwiseTheFusedPath) {
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization})
    expect_split_bitwise_fused(andrews_with_failing_projection(method_kind::radau5, formulation::index3, kind), 4);
}

// A chunk sized from the memory budget counts what the split path adds per member (its pending flag and
// batch index, and its resumable projection when projections split), so the split run's storage fits
// the same budget as the fused run's.
TEST(SplitProjection, ChunkFromTheMemoryBudgetCountsTheSplitPathsStorage) {
  using Model = models::andrews;
  const auto e = projecting(varied_ensemble<Model>(300, 0.001, method_kind::bdf, formulation::ggl),
                            projection_kind::coordinate);
  const std::size_t fused_bytes = bytes_per_member<Model>(static_cast<int>(e.save_times.size()), method_kind::bdf);
  const std::size_t split_bytes = fused_bytes + split_bytes_per_member<Model>(true, true);
  EXPECT_GT(split_bytes_per_member<Model>(true, true), split_bytes_per_member<Model>(true, false));
  // Independent of the scheduler's arithmetic: the resumable projection's share holds the object itself.
  EXPECT_GE(split_bytes_per_member<Model>(true, true) - split_bytes_per_member<Model>(true, false),
            sizeof(projection_work<Model>));
  run_options fused;
  fused.memory_budget = 100 * split_bytes;
  run_options split = fused;
  split.split_factorization = true;
  const auto fused_result = solve_builtin(e, fused);
  const auto split_result = solve_builtin(e, split);
  EXPECT_EQ(split_result.chunk_size, 100);
  EXPECT_EQ(fused_result.chunk_size, static_cast<long>(100 * split_bytes / fused_bytes));
  EXPECT_GT(fused_result.chunk_size, 100);
  for (long i = 0; i < e.members; ++i) EXPECT_TRUE(same_member(fused_result, i, split_result, i)) << "member " << i;
}

TEST(SplitProjection, Chain4ProjectionsAreBitwiseTheFusedPath) {
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization}) {
    expect_split_bitwise_fused(projecting(varied_ensemble<models::chain<4>>(7, 1.0, method_kind::bdf, formulation::ggl), kind));
    expect_split_bitwise_fused(projecting(varied_ensemble<models::chain<4>>(7, 1.0, method_kind::radau5, formulation::index3), kind));
  }
  // The projected-invariants formulation's own velocity projection (projection kind none).
  expect_split_bitwise_fused(varied_ensemble<models::chain<4>>(7, 1.0, method_kind::bdf, formulation::projected_invariants));
}

// One member driven by hand: every accepted step's projection suspends at each of its factorizations
// (the metric, one Gram matrix per Gauss-Newton iteration, the velocity Gram matrix), and the result
// is bitwise the fused driver's.
TEST(SplitProjection, DrivenMemberSuspendsAtEveryProjectionFactorizationAndIsBitwiseTheFusedPath) {
  auto e = projecting(varied_ensemble<models::chain<4>>(3, 1.0, method_kind::bdf, formulation::ggl),
                      projection_kind::coordinate);
  const auto tr = expect_driven_split_bitwise_fused<models::chain<4>, bdf_method>(e, 1);
  const long projections = tr.state->counters.projections;
  ASSERT_GT(projections, 0);
  // Metric, >= 1 Gauss-Newton iteration, and velocities only where Gauss-Newton's last correction was
  // not at round-off (chain<4> has no non-holonomic rows: project_point's gauss_newton_last_linearization);
  // from a step's end point it mostly is.
  EXPECT_GE(tr.projection_suspensions, 2 * projections);
  EXPECT_LT(tr.projection_suspensions, 3 * projections);
  EXPECT_EQ(tr.projection->phase, projection_phase::idle);
}

TEST(SplitFactorization, RadauIIADrivenMemberIsBitwiseTheFusedPathAndSuspendsAtEveryFactorization) {
  auto e = varied_ensemble<models::andrews>(3, 0.03, method_kind::radau5, formulation::index3);
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-4;
  const auto tr = expect_driven_split_bitwise_fused<models::andrews, radau5_method>(e, 1);
  EXPECT_GT(tr.suspensions, 0);
  ::testing::Test::RecordProperty("radau_double_suspensions", static_cast<int>(tr.double_suspensions));
}

// The CUDA backend keeps large members in a member_workspace (lockstep/detail/member_kernels.hpp)
// instead of the thread's locals. The functors are LOCKSTEP_HD, so that path runs here too, member by
// member in one thread with the workspace in host memory: the chunk it leaves (every state word, every
// output, the finished flags) must be bitwise the one the locals leave, with and without resumable
// projections (whose projection_work then sits in the workspace too). Slots start as garbage, as
// cudaMalloc leaves them.
template <class Model, class Method, bool InWorkspace>
struct split_chunk_run {
  std::vector<std::uint64_t> states, projections;
  std::vector<double> outputs;
  std::vector<unsigned char> finished;
};

template <class Model, class Method, bool InWorkspace>
split_chunk_run<Model, Method, InWorkspace> run_split_chunk(const ensemble<Model>& e, bool split_projections) {
  const long chunk = e.members;
  const int save_count = static_cast<int>(e.save_times.size());
  split_chunk_run<Model, Method, InWorkspace> r;
  r.states.assign(std::size_t(soa_image<member_state<Model, Method>>::words) * chunk, 0);
  r.projections.assign(split_projections ? std::size_t(soa_image<projection_work<Model>>::words) * chunk : 0, 0);
  r.outputs.assign(std::size_t(save_count) * state_layout<Model>::size * chunk, std::numeric_limits<double>::quiet_NaN());
  r.finished.assign(std::size_t(chunk), 0);
  std::vector<double> params(std::size_t(Model::n_params) * chunk), q0(std::size_t(Model::n) * chunk), v0(q0.size());
  detail::scatter_inputs(e, 0, chunk, chunk, params.data(), q0.data(), v0.data());
  std::vector<unsigned char> pending(std::size_t(chunk), 0);
  auto workspace = std::make_unique<member_workspace<Model, Method>[]>(std::size_t(chunk));
  std::memset(static_cast<void*>(workspace.get()), 0xA5, sizeof(member_workspace<Model, Method>) * chunk);
  chunk_view<Model> view = detail::chunk_view_of(e, chunk, r.states.data(), params.data(), q0.data(), v0.data(),
                                                 r.outputs.data(), r.finished.data(), e.save_times.data());
  if (split_projections) view.projections = r.projections.data();
  const begin_member<Model, Method, InWorkspace> begin{view, workspace.get()};
  for (long i = 0; i < chunk; ++i) begin(i);
  const advance_member_split<Model, Method, InWorkspace> advance{view, 3, pending.data(),
                                                                projection_split_above(split_projections), workspace.get()};
  const factor_member<Model, Method> factor{view, pending.data()};
  for (int launch = 0; launch < 100000; ++launch) {
    bool any = false;
    for (long i = 0; i < chunk; ++i)
      if (r.finished[std::size_t(i)] == 0) {
        advance(i);
        factor(i);
        any = true;
      }
    if (!any) break;
  }
  return r;
}

template <class Model, class Method>
void expect_workspace_bitwise_locals(ensemble<Model> e, projection_kind projection) {
  e.options.projection = projection;
  e.params_of(2)[0] = std::numeric_limits<double>::quiet_NaN();
  const bool split_projections = projects_after_steps(projection, e.options.form);
  const auto locals = run_split_chunk<Model, Method, false>(e, split_projections);
  const auto in_workspace = run_split_chunk<Model, Method, true>(e, split_projections);
  EXPECT_EQ(in_workspace.finished, locals.finished);
  EXPECT_EQ(std::memcmp(in_workspace.states.data(), locals.states.data(), locals.states.size() * 8), 0);
  EXPECT_EQ(std::memcmp(in_workspace.projections.data(), locals.projections.data(), locals.projections.size() * 8), 0);
  EXPECT_EQ(std::memcmp(in_workspace.outputs.data(), locals.outputs.data(), locals.outputs.size() * sizeof(double)), 0);
  EXPECT_EQ(locals.finished, std::vector<unsigned char>(locals.finished.size(), 1));
}

TEST(MemberWorkspace, SplitChunkInAWorkspaceIsBitwiseTheChunkInLocals) {
  static_assert(uses_member_workspace<models::chain<16>> && !uses_member_workspace<models::andrews>);
  for (projection_kind kind : {projection_kind::none, projection_kind::coordinate}) {
    expect_workspace_bitwise_locals<models::andrews, bdf_method>(
        varied_ensemble<models::andrews>(5, 0.003, method_kind::bdf, formulation::ggl), kind);
    expect_workspace_bitwise_locals<models::chain<4>, radau5_method>(
        varied_ensemble<models::chain<4>>(5, 0.3, method_kind::radau5, formulation::index3), kind);
  }
}

}  // namespace
