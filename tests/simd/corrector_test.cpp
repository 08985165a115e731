// Tests of lockstep/simd/corrector_inl.hpp: the corrector solved in lanes must leave every lane exactly
// as lockstep/method/corrector.hpp's solve_corrector leaves its member alone, bit for bit, call after
// call, at every width the build's instruction set has: the verdict and the status that stopped a
// lane, the corrected state, the counts of Jacobians, factorizations, model evaluations and Newton
// iterations, which matrices are valid and fresh, the shift the factors are for, and the dropped rows.
// Each member (andrews; the knife edge, with its velocity constraint), started consistently for its own
// parameters, makes three corrector calls in a row, keeping its Jacobian and factors between them as a
// BDF member does between steps, each from a prediction off its last corrected state, at its own step
// h from 1e-6 to 3e-2 (the knife edge: 30), so that members reuse their factors, refactor for a shift
// that left IDA's band, evaluate a new Jacobian after slow contraction, fail to converge and retry with
// a fresh one, or give up. One member in sixteen has a NaN parameter (its Jacobian is not finite), and
// one in eight sits out its second call (its lane must not change).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/corrector_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/corrector_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_CORRECTOR_TEST_COMMON_
#define LOCKSTEP_CORRECTOR_TEST_COMMON_
namespace lockstep::simd_test {
inline constexpr int corrector_calls = 3;

template <class Model>
struct corrector_member {
  static constexpr int ny = state_layout<Model>::size;
  double p[Model::n_params];
  double t0, y0[ny], yp0[ny];  // the start, and the derivative every prediction takes
  double h[corrector_calls], noise[corrector_calls][ny], sits_out[corrector_calls];
};
// A lane after one call.
template <class Model>
struct corrector_record {
  static constexpr int ny = state_layout<Model>::size;
  double converged, reason, y[ny];
  double jacobian_evaluations, lu_factorizations, model_evaluations, newton_iterations;
  double jacobian_valid, newton_valid, jacobian_fresh, factored_c, dropped;
};
}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The calls of `count` members (a multiple of W) in packs of W lanes; out[m * corrector_calls + call].
template <class Model, size_t W>
HWY_NOINLINE bool corrector_at_width(formulation f, const corrector_member<Model>* in, corrector_record<Model>* out,
                                     size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using C = corrector_member<Model>;
  using R = corrector_record<Model>;
  constexpr int ny = C::ny;
  const D d;
  const hn::RebindToSigned<D> di;
  if (hn::Lanes(d) != W) return false;
  const solver_options opt{};
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    P p[Model::n_params];
    for (int i = 0; i < Model::n_params; ++i) p[i] = gather([i](const C& c) { return c.p[i]; });
    lockstep::vec<P, ny> base, yp, y;
    for (int j = 0; j < ny; ++j) {
      base[j] = gather([j](const C& c) { return c.y0[j]; });
      yp[j] = gather([j](const C& c) { return c.yp0[j]; });
      y[j] = base[j];
    }
    P t = gather([](const C& c) { return c.t0; });
    sl::corrector_lanes<Model, D> cm;
    sl::clear_matrices(cm);
    sl::corrector_counts<D> counts;
    for (int call = 0; call < corrector_calls; ++call) {
      const P h = gather([call](const C& c) { return c.h[call]; });
      const sl::mask<D> lanes = gather([call](const C& c) { return c.sits_out[call]; }) == P(0.0);
      const P t_new = t + h, c = 1.0 / h;
      lockstep::vec<P, ny> y_pred, w;
      for (int j = 0; j < ny; ++j) {
        y_pred[j] = base[j] + h * yp[j] + gather([call, j](const C& x) { return x.noise[call][j]; });
        w[j] = 1.0 / (1e-6 + 1e-6 * abs(y_pred[j]));
      }
      const sl::corrector_outcome_lanes<D> o = sl::solve_corrector<Model>(lanes, f, t_new, y_pred, yp, c, w, p, opt, cm, counts, y);
      for (int j = 0; j < ny; ++j) base[j] = sl::select(o.converged, y[j], base[j]);
      t = sl::select(lanes, t_new, t);

      HWY_ALIGN double lanes_out[W];
      const auto scatter = [&](P x, auto put) {
        hn::Store(x.v, d, lanes_out);
        for (size_t l = 0; l < W; ++l) put(out[(first + l) * corrector_calls + call], lanes_out[l]);
      };
      const auto flag = [&](sl::mask<D> m) { return P(hn::IfThenElse(m, hn::Set(d, 1.0), hn::Zero(d))); };
      scatter(flag(o.converged), [](R& r, double x) { r.converged = x; });
      scatter(o.reason, [](R& r, double x) { r.reason = x; });
      for (int j = 0; j < ny; ++j) scatter(y[j], [j](R& r, double x) { r.y[j] = x; });
      scatter(counts.jacobian_evaluations, [](R& r, double x) { r.jacobian_evaluations = x; });
      scatter(counts.lu_factorizations, [](R& r, double x) { r.lu_factorizations = x; });
      scatter(counts.model_evaluations, [](R& r, double x) { r.model_evaluations = x; });
      scatter(counts.newton_iterations, [](R& r, double x) { r.newton_iterations = x; });
      scatter(flag(cm.jacobian_valid), [](R& r, double x) { r.jacobian_valid = x; });
      scatter(flag(cm.newton_valid), [](R& r, double x) { r.newton_valid = x; });
      scatter(flag(cm.jacobian_fresh), [](R& r, double x) { r.jacobian_fresh = x; });
      scatter(sl::select(cm.newton_valid, cm.newton.c, P(0.0)), [](R& r, double x) { r.factored_c = x; });
      scatter(P(hn::ConvertTo(d, cm.dropped.bits)), [](R& r, double x) { r.dropped = x; });
    }
  }
  (void)di;
  return true;
}

#define LOCKSTEP_CORRECTOR_TEST_ENTRY(NAME, MODEL)                                                                 \
  bool NAME(formulation f, const corrector_member<MODEL>* in, corrector_record<MODEL>* out, size_t count,          \
            size_t lanes) {                                                                                        \
    return at_lane_width(lanes, [&](auto w) { return corrector_at_width<MODEL, decltype(w)::value>(f, in, out, count); }); \
  }
LOCKSTEP_CORRECTOR_TEST_ENTRY(CorrectorAndrews, lockstep::models::andrews)
LOCKSTEP_CORRECTOR_TEST_ENTRY(CorrectorKnifeEdge, lockstep::models::knife_edge)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"
#include "tests/support/monte_carlo_member.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(CorrectorAndrews);
HWY_EXPORT(CorrectorKnifeEdge);

namespace {

// h_max: the largest step, beyond which the model's Newton iterations fail often.
template <class Model>
corrector_member<Model> draw(std::mt19937_64& g, double h_max) {
  using L = state_layout<Model>;
  std::uniform_real_distribution<double> u(-1, 1);
  corrector_member<Model> c{};
  c.t0 = 0.01 * u(g);
  const monte_carlo_member<Model> drawn = draw_monte_carlo_member<Model>(g, c.t0, solver_options{}, 16);
  for (int i = 0; i < Model::n_params; ++i) c.p[i] = drawn.p[i];
  const initial_values<Model>& start = drawn.start;
  for (int i = 0; i < Model::n; ++i) {
    c.y0[L::q + i] = start.q[i], c.y0[L::v + i] = start.v[i];
    c.yp0[L::q + i] = start.v[i], c.yp0[L::v + i] = start.a[i];
  }
  for (int i = 0; i < Model::m; ++i) c.y0[L::lambda + i] = start.lambda[i];
  for (int i = 0; i < Model::k; ++i) c.y0[L::nu + i] = start.nu[i];
  const double noise = log_uniform(g, 1e-10, 1e-4);
  for (int call = 0; call < corrector_calls; ++call) {
    c.h[call] = log_uniform(g, 1e-6, h_max);
    if (call > 0 && g() % 2 == 0) c.h[call] = c.h[call - 1] * ((g() % 2) ? 1.0 : 1.1);  // reuse, or within the band
    for (int j = 0; j < L::size; ++j) c.noise[call][j] = noise * u(g);
    c.sits_out[call] = call == 1 && g() % 8 == 0;
  }
  return c;
}

// solve_corrector's calls for one member alone, as corrector_at_width makes them.
template <class Model>
void alone(formulation f, const corrector_member<Model>& in, corrector_record<Model>* out) {
  constexpr int ny = state_layout<Model>::size;
  const solver_options opt{};
  corrector_matrices<Model> cm;
  member_counters counts;
  state_vector<Model> base, yp, y;
  for (int j = 0; j < ny; ++j) base[j] = y[j] = in.y0[j], yp[j] = in.yp0[j];
  double t = in.t0;
  for (int call = 0; call < corrector_calls; ++call) {
    corrector_record<Model>& r = out[call];
    corrector_outcome o{false, member_status::success, false};
    if (in.sits_out[call] == 0.0) {
      const double h = in.h[call], t_new = t + h, c = 1.0 / h;
      state_vector<Model> y_pred, w;
      for (int j = 0; j < ny; ++j) {
        y_pred[j] = base[j] + h * yp[j] + in.noise[call][j];
        w[j] = 1.0 / (1e-6 + 1e-6 * lockstep::abs(y_pred[j]));
      }
      o = solve_corrector<Model>(f, t_new, y_pred, yp, c, w, in.p, opt, cm, counts, y);
      if (o.converged) base = y;
      t = t_new;
    }
    r.converged = o.converged;
    r.reason = o.converged ? double(member_status::success) : double(o.reason);
    for (int j = 0; j < ny; ++j) r.y[j] = y[j];
    r.jacobian_evaluations = double(counts.jacobian_evaluations);
    r.lu_factorizations = double(counts.lu_factorizations);
    r.model_evaluations = double(counts.model_evaluations);
    r.newton_iterations = double(counts.newton_iterations);
    r.jacobian_valid = cm.jacobian_valid, r.newton_valid = cm.newton_valid, r.jacobian_fresh = cm.jacobian_fresh;
    r.factored_c = cm.newton_valid ? cm.newton.c : 0.0;
    r.dropped = double(cm.jac.dropped);
  }
}

template <class Model>
std::vector<std::pair<std::string, double>> values(const corrector_record<Model>& r) {
  std::vector<std::pair<std::string, double>> v{{"converged", r.converged},
                                                {"reason", r.reason},
                                                {"jacobian evaluations", r.jacobian_evaluations},
                                                {"LU factorizations", r.lu_factorizations},
                                                {"model evaluations", r.model_evaluations},
                                                {"Newton iterations", r.newton_iterations},
                                                {"Jacobian valid", r.jacobian_valid},
                                                {"factors valid", r.newton_valid},
                                                {"Jacobian fresh", r.jacobian_fresh},
                                                {"factored shift", r.factored_c},
                                                {"dropped rows", r.dropped}};
  for (int j = 0; j < corrector_record<Model>::ny; ++j) v.push_back({"y[" + std::to_string(j) + "]", r.y[j]});
  return v;
}

// gives_up: whether some of the model's members give up without converging (the knife edge's nearly
// linear equations never make its Newton iteration fail).
template <class Model, class Entry>
void expect_lanes_equal_scalar(const Entry& run, const char* model_name, double h_max, bool gives_up, uint64_t seed) {
  constexpr size_t count = 256;
  std::mt19937_64 g(seed);
  std::vector<corrector_member<Model>> in(count);
  for (auto& c : in) c = draw<Model>(g, h_max);
  for (const formulation f :
       {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    const std::string name = std::string("corrector, ") + model_name + ", " + formulation_name(f);
    std::vector<corrector_record<Model>> scalar(count * corrector_calls);
    std::feclearexcept(FE_ALL_EXCEPT);
    for (size_t m = 0; m < count; ++m) alone<Model>(f, in[m], &scalar[m * corrector_calls]);
    const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);

    // What the calls must include: reused factors, a refactorization without a new Jacobian, a retry
    // with a fresh Jacobian, convergence, a lane given up without convergence, a Jacobian not finite.
    size_t reused = 0, refactored = 0, retried = 0, converged = 0, unconverged = 0, not_finite = 0;
    for (size_t m = 0; m < count; ++m)
      for (int call = 0; call < corrector_calls; ++call) {
        if (in[m].sits_out[call] != 0.0) continue;
        const corrector_record<Model>& r = scalar[m * corrector_calls + call];
        const corrector_record<Model> before = call > 0 ? scalar[m * corrector_calls + call - 1] : corrector_record<Model>{};
        const double jacobians = r.jacobian_evaluations - before.jacobian_evaluations;
        const double factorizations = r.lu_factorizations - before.lu_factorizations;
        reused += jacobians == 0 && factorizations == 0;
        refactored += jacobians == 0 && factorizations > 0;
        retried += before.jacobian_valid == 1.0 && jacobians == 1;  // kept one, so only a retry evaluates
        converged += r.converged == 1.0;
        unconverged += r.converged == 0.0 && r.reason == double(member_status::success);
        not_finite += r.reason == double(member_status::model_not_finite);
      }
    EXPECT_GT(reused, 0u) << name;
    EXPECT_GT(refactored, 0u) << name;
    EXPECT_GT(retried, 0u) << name;
    EXPECT_GT(converged, count) << name;
    if (gives_up) {
      EXPECT_GT(unconverged, 0u) << name;
    }
    EXPECT_GT(not_finite, 0u) << name;

    std::vector<corrector_record<Model>> out;
    const size_t variants = expect_every_variant_equal(
        name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
        [&](size_t lanes) {
          out.assign(count * corrector_calls, corrector_record<Model>{});  // nothing of the previous variant stays
          return run(f, in.data(), out.data(), count, lanes);
        },
        [&](const std::string& variant) {
          size_t differ = 0;
          for (size_t i = 0; i < out.size(); ++i) {
            const auto a = values(out[i]), b = values(scalar[i]);
            for (size_t j = 0; j < a.size(); ++j)
              if (!same_bits(a[j].second, b[j].second)) {
                if (differ++ == 0)
                  ADD_FAILURE() << name << ", " << variant << ": member " << i / corrector_calls << ", call "
                                << i % corrector_calls << ": " << a[j].first << " is " << a[j].second << ", alone "
                                << b[j].second;
                break;
              }
          }
          return differ;
        },
        1);  // one per build; tests/simd/pack_model_test.sh runs the builds for every instruction set
    std::printf("[ corrector ] %s: %zu members x %d calls (%zu converged, %zu reused factors, %zu refactored, %zu "
                "retried, %zu gave up, %zu not finite), %zu variants equal\n",
                name.c_str(), count, corrector_calls, converged, reused, refactored, retried, unconverged, not_finite,
                variants);
  }
}

TEST(SimdCorrector, EveryLaneEndsAsItsMemberAlone) {
  expect_lanes_equal_scalar<models::andrews>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(CorrectorAndrews)(a...); }, "andrews", 3e-2, true, 21);
  expect_lanes_equal_scalar<models::knife_edge>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(CorrectorKnifeEdge)(a...); }, "knife edge", 30.0, false, 22);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
