// Tests of lockstep/simd/newton_control_inl.hpp: the simplified Newton iteration's norm, stale-shift
// rules and convergence test in lanes must give every lane exactly what lockstep/method/corrector.hpp's
// functions give its member alone, bit for bit, at W = 1, 2, 4, 8 on every instruction set compiled in.
// The norm: three state layouts (andrews, 26 variables; the knife edge, 7 with a velocity constraint;
// one with holonomic and velocity constraints both),
// every formulation, increments and weights over many scales, shifts c on both sides of 1, and dropped
// constraint rows differing from lane to lane. The convergence test: each member's sequence of
// increment norms (contracting at its own rate, stalling, diverging, exact to round-off, at the tests'
// thresholds) run through the corrector's loop, each lane starting at its own iteration as lanes do
// after a retry with a fresh Jacobian; the verdict, the increment it came at, and the remembered first
// norm and rate must be the member's alone.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/newton_control_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/newton_control_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_NEWTON_CONTROL_TEST_COMMON_
#define LOCKSTEP_NEWTON_CONTROL_TEST_COMMON_
namespace lockstep::simd_test {
// A layout with holonomic and non-holonomic rows both (no built-in model has them together): what the
// norm reads of a model is its sizes.
struct mixed_rows_layout {
  static constexpr int n = 4, m = 2, k = 1;
};
template <class Model>
struct norm_case {
  static constexpr int ny = state_layout<Model>::size, g_entries = Model::m * Model::n > 0 ? Model::m * Model::n : 1;
  double delta[ny], w[ny], G[g_entries], c, c_old;
  uint64_t dropped;
};
struct norm_result {
  double norm, ratio_ok, scale;
};
inline constexpr int newton_iterations = 6, newton_offsets = 3;
struct verdict_case {
  double dnorm[newton_iterations], fresh;
  int offset;  // the global iteration at which the member's own iteration 0 comes
};
struct verdict_result {
  double converged, ended_at, delta0, rate;
};
}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The norm and the stale-shift rules of `count` members (a multiple of W) in packs of W lanes.
template <class Model, size_t W>
HWY_NOINLINE bool norms_at_width(formulation f, const norm_case<Model>* in, norm_result* out, size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using C = norm_case<Model>;
  const D d;
  const hn::RebindToSigned<D> di;
  if (hn::Lanes(d) != W) return false;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    lockstep::vec<P, C::ny> delta, w;
    for (int j = 0; j < C::ny; ++j) {
      delta[j] = gather([j](const C& c) { return c.delta[j]; });
      w[j] = gather([j](const C& c) { return c.w[j]; });
    }
    mat<P, Model::m, Model::n> G;
    for (int e = 0; e < Model::m * Model::n; ++e) G.a[e] = gather([e](const C& c) { return c.G[e]; });
    HWY_ALIGN int64_t bits[W];
    for (size_t l = 0; l < W; ++l) bits[l] = static_cast<int64_t>(in[first + l].dropped);
    const P c = gather([](const C& x) { return x.c; }), c_old = gather([](const C& x) { return x.c_old; });
    const auto dropped = hn::Load(di, bits);
    const P norm = sl::newton_norm<Model>(f, delta, w, G, [&](int row) { return sl::row_dropped<D>(dropped, row); }, c);
    const P ok(hn::IfThenElse(sl::stale_shift_ratio_ok(c, c_old), hn::Set(d, 1.0), hn::Zero(d)));
    const P scale = sl::stale_shift_scale(c, c_old);
    HWY_ALIGN double lanes[3][W];
    hn::Store(norm.v, d, lanes[0]), hn::Store(ok.v, d, lanes[1]), hn::Store(scale.v, d, lanes[2]);
    for (size_t l = 0; l < W; ++l) out[first + l] = {lanes[0][l], lanes[1][l], lanes[2][l]};
  }
  return true;
}

// The corrector's loop of `count` members (a multiple of W) in packs of W lanes: a lane iterates from
// its offset until its verdict is converged or stopped, or its iterations run out.
template <size_t W>
HWY_NOINLINE bool verdicts_at_width(const verdict_case* in, verdict_result* out, size_t count, double tol) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using M = sl::mask<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    const M fresh = gather([](const verdict_case& c) { return c.fresh; }) == P(1.0);
    const P offset = gather([](const verdict_case& c) { return double(c.offset); });
    sl::newton_progress_lanes<D> progress{P(0.0), P(0.0)};
    M done = hn::FirstN(d, 0), converged = hn::FirstN(d, 0);
    P ended_at(-1.0);
    for (int global = 0; global < newton_iterations + newton_offsets; ++global) {
      const P it = P(double(global)) - offset;
      const M lanes_now = hn::AndNot(done, hn::And(it >= 0.0, it < double(newton_iterations)));
      if (hn::AllFalse(d, lanes_now)) continue;
      P dnorm(0.0);
      for (int i = 0; i < newton_iterations; ++i)
        dnorm = sl::select(it == P(double(i)), gather([i](const verdict_case& c) { return c.dnorm[i]; }), dnorm);
      const sl::newton_verdict_lanes<D> v = sl::judge_newton_increment(lanes_now, it, dnorm, fresh, tol, progress);
      const M ended = hn::Or(v.converged, v.stopped);
      converged = hn::Or(converged, v.converged);
      ended_at = sl::select(ended, it, ended_at);
      done = hn::Or(done, ended);
    }
    HWY_ALIGN double parts[4][W];
    hn::Store(hn::IfThenElse(converged, hn::Set(d, 1.0), hn::Zero(d)), d, parts[0]);
    hn::Store(ended_at.v, d, parts[1]), hn::Store(progress.delta0.v, d, parts[2]), hn::Store(progress.rate.v, d, parts[3]);
    for (size_t l = 0; l < W; ++l) out[first + l] = {parts[0][l], parts[1][l], parts[2][l], parts[3][l]};
  }
  return true;
}

#define LOCKSTEP_NORM_TEST_ENTRY(NAME, MODEL)                                                                  \
  bool NAME(formulation f, const norm_case<MODEL>* in, norm_result* out, size_t count, size_t lanes) {          \
    return at_lane_width(lanes, [&](auto w) { return norms_at_width<MODEL, decltype(w)::value>(f, in, out, count); }); \
  }
LOCKSTEP_NORM_TEST_ENTRY(NormsAndrews, lockstep::models::andrews)
LOCKSTEP_NORM_TEST_ENTRY(NormsKnifeEdge, lockstep::models::knife_edge)
LOCKSTEP_NORM_TEST_ENTRY(NormsMixedRows, lockstep::simd_test::mixed_rows_layout)

bool Verdicts(const verdict_case* in, verdict_result* out, size_t count, size_t lanes, double tol) {
  return at_lane_width(lanes, [&](auto w) { return verdicts_at_width<decltype(w)::value>(in, out, count, tol); });
}
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(NormsAndrews);
HWY_EXPORT(NormsKnifeEdge);
HWY_EXPORT(NormsMixedRows);
HWY_EXPORT(Verdicts);

namespace {

// Runs `run(lanes, out)` for every target and width and requires out to equal `alone`, value by value.
template <class Result, class Run, class Values>
void expect_every_variant(const std::vector<Result>& alone, const Run& run, const Values& values,
                          const std::string& name) {
  std::vector<Result> out;
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, 0,
      [&](size_t lanes) {
        out.assign(alone.size(), Result{});  // nothing of the previous variant stays
        return run(lanes, out);
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        for (size_t m = 0; m < alone.size(); ++m) {
          const auto a = values(out[m]), b = values(alone[m]);
          for (size_t i = 0; i < a.size(); ++i)
            if (!same_bits(a[i], b[i]) && differ++ == 0)
              ADD_FAILURE() << name << ", " << variant << ": member " << m << " value " << i << " is " << a[i]
                            << ", alone " << b[i];
        }
        return differ;
      });
  std::printf("[ newton control ] %s: %zu members, %zu variants equal\n", name.c_str(), alone.size(), variants);
}

template <class Model, class Entry>
void expect_norms_equal_scalar(const Entry& run, const char* model_name, uint64_t seed) {
  using C = norm_case<Model>;
  constexpr size_t count = 1024;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> s(-1, 1);
  std::vector<C> in(count);
  for (C& c : in) {
    for (int j = 0; j < C::ny; ++j) {
      c.delta[j] = s(g) * log_uniform(g, 1e-14, 1e2);
      c.w[j] = log_uniform(g, 1e-2, 1e10);
    }
    for (int e = 0; e < Model::m * Model::n; ++e) c.G[e] = s(g) * log_uniform(g, 1e-3, 1e2);
    c.c = log_uniform(g, 1e-2, 1e8);
    const double ratios[] = {0.6, 5.0 / 3.0, 1.0, 0.59, 1.7};
    c.c_old = (g() % 2) ? c.c / ratios[g() % 5] : log_uniform(g, 1e-2, 1e8);
    c.dropped = (g() % 3 == 0) ? g() & ((uint64_t{1} << (Model::m + Model::k)) - 1) : 0;
  }
  for (const formulation f :
       {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    std::vector<norm_result> alone(count);
    for (size_t i = 0; i < count; ++i) {
      const C& c = in[i];
      state_vector<Model> delta, w;
      for (int j = 0; j < C::ny; ++j) delta[j] = c.delta[j], w[j] = c.w[j];
      jacobian_blocks<Model> J;
      for (int e = 0; e < Model::m * Model::n; ++e) J.G.a[e] = c.G[e];
      J.dropped = c.dropped;
      alone[i] = {detail::newton_norm<Model>(f, delta, w, J, c.c), double(detail::stale_shift_ratio_ok(c.c, c.c_old)),
                  detail::stale_shift_scale(c.c, c.c_old)};
    }
    size_t in_band = 0, dropped = 0;
    for (size_t i = 0; i < count; ++i) in_band += alone[i].ratio_ok == 1.0, dropped += in[i].dropped != 0;
    EXPECT_GT(in_band, 0u);
    EXPECT_LT(in_band, count);
    EXPECT_GT(dropped, 0u);
    expect_every_variant(
        alone, [&](size_t lanes, std::vector<norm_result>& out) { return run(f, in.data(), out.data(), count, lanes); },
        [](const norm_result& r) { return std::vector<double>{r.norm, r.ratio_ok, r.scale}; },
        std::string("newton_norm ") + model_name + ", " + formulation_name(f));
  }
}

TEST(SimdNewtonControl, NormAndStaleShiftInLanesAreTheMemberAlone) {
  expect_norms_equal_scalar<models::andrews>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NormsAndrews)(a...); }, "andrews", 3);
  expect_norms_equal_scalar<models::knife_edge>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NormsKnifeEdge)(a...); }, "knife edge", 4);
  expect_norms_equal_scalar<mixed_rows_layout>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NormsMixedRows)(a...); }, "2 holonomic and 1 velocity rows", 5);
}

// A member's increment norms: geometric at its own rate (contracting, stalling or diverging), exact to
// round-off, or at one of the test's thresholds.
verdict_case draw_verdict_case(std::mt19937_64& g, double tol) {
  verdict_case c{};
  c.fresh = double(g() % 2);
  c.offset = int(g() % newton_offsets);
  const double rates[] = {0.01, 0.1, 0.5, 0.9, 0.95, 1.0, 2.0};
  const double rate = (g() % 3 == 0) ? rates[g() % 7] : log_uniform(g, 1e-3, 3.0);
  double d = log_uniform(g, 1e-9, 1e2);
  switch (g() % 8) {
    case 0: d = 1e-4 * tol; break;   // the first test's round-off bound
    case 1: d = tol / 20.0; break;   // IDA's first-iteration test
    case 2: d = tol; break;          // stalled at the tolerance
    default: break;
  }
  for (int i = 0; i < newton_iterations; ++i, d *= rate) c.dnorm[i] = d;
  return c;
}

// solve_corrector's loop over the verdicts, for one member.
verdict_result corrector_loop(const verdict_case& c, double tol) {
  detail::newton_progress_of<double> progress;
  verdict_result r{0.0, -1.0, 0.0, 0.0};
  for (int it = 0; it < newton_iterations; ++it) {
    const detail::newton_verdicts_of<bool> v =
        detail::judge_newton_increment(true, it, c.dnorm[it], c.fresh == 1.0, tol, progress);
    if (!v.converged && !v.stopped) continue;
    r.converged = v.converged;
    r.ended_at = it;
    break;
  }
  r.delta0 = progress.delta0, r.rate = progress.rate;
  return r;
}

TEST(SimdNewtonControl, ConvergenceTestInLanesIsTheMemberAlone) {
  for (const double tol : {0.1, 0.33, 1e-3}) {
    constexpr size_t count = 4096;
    std::mt19937_64 g(uint64_t(tol * 1e6));
    std::vector<verdict_case> in(count);
    for (verdict_case& c : in) c = draw_verdict_case(g, tol);
    std::vector<verdict_result> alone(count);
    for (size_t i = 0; i < count; ++i) alone[i] = corrector_loop(in[i], tol);
    // Every ending occurs: converged at the first increment, later, stopped, and out of iterations.
    size_t at_first = 0, later = 0, stopped = 0, ran_out = 0;
    for (const verdict_result& r : alone) {
      at_first += r.converged == 1.0 && r.ended_at == 0.0;
      later += r.converged == 1.0 && r.ended_at > 0.0;
      stopped += r.converged == 0.0 && r.ended_at >= 0.0;
      ran_out += r.ended_at < 0.0;
    }
    EXPECT_GT(at_first, 0u);
    EXPECT_GT(later, 0u);
    EXPECT_GT(stopped, 0u);
    EXPECT_GT(ran_out, 0u);
    expect_every_variant(
        alone,
        [&](size_t lanes, std::vector<verdict_result>& out) {
          return HWY_DYNAMIC_DISPATCH(Verdicts)(in.data(), out.data(), count, lanes, tol);
        },
        [](const verdict_result& r) { return std::vector<double>{r.converged, r.ended_at, r.delta0, r.rate}; },
        "judge_newton_increment, newton_tol " + std::to_string(tol));
  }
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
