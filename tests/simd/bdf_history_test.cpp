// Tests of lockstep/simd/bdf_history_inl.hpp: BDF's history in lanes must give every lane exactly
// what lockstep/method/bdf.hpp's functions give its member alone — the predictor and its leading
// coefficient, the Newton form over the past nodes and its extension, the error weights, the error
// test's estimate, LTE_{k-1} after an error-test failure, the order-choice estimates LTE_{k-1} and
// LTE_{k+1}, the history after an accepted step (and the lanes whose step was not accepted left as they
// were), and dense output — bit for bit at W = 1, 2, 4, 8 on every instruction set compiled in. The
// members of a pack have independent histories: 1 to 6 past points, with and without the confluent
// node at t0, orders 1 to 5 limited by the history, step sizes from 1e-7 to 1e-2 and uneven past
// steps, so the lanes' counts differ within every pack; some values are signed zeros. Two state
// layouts: andrews (26 variables, no velocity constraints) and the knife edge (7, with one).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/bdf_history_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/bdf_history_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_BDF_HISTORY_TEST_COMMON_
#define LOCKSTEP_BDF_HISTORY_TEST_COMMON_
namespace lockstep::simd_test {
// One member's history and attempt (inputs), and what the functions under test give it (outputs).
template <class Model>
struct history_case {
  static constexpr int ny = state_layout<Model>::size, max_past = bdf_state<Model>::max_past;
  double past_count, initial_derivative, t_past[max_past], y_newest[ny], older[max_past][ny], yp0[ny], y_scale[ny];
  double k, planned_order, steps_at_order, t_new, y_delta[ny], accepted, last_order, dense_fraction;
};
template <class Model>
struct history_result {
  static constexpr int ny = state_layout<Model>::size, max_past = bdf_state<Model>::max_past, max_nodes = max_past + 2;
  double c, y_pred[ny], yp_pred[ny], x[max_nodes], dd[max_nodes][ny], w[ny], err_k, lte_failure, lower, higher,
      lte_lower, lte_higher;
  // after the acceptance (the step's own lanes only) and dense output at a time in the last step
  double past_count, initial_derivative, t_past[max_past], y_newest[ny], older[max_past][ny], y_scale[ny], dense[ny];
};
}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// bdf_attempt's sequence on the histories of `count` members (a multiple of W) in packs of W lanes.
template <class Model, size_t W>
HWY_NOINLINE bool history_at_width(const history_case<Model>* in, history_result<Model>* out, size_t count,
                                   const solver_options& opt) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using H = sl::bdf_history_lanes<Model, D>;
  using S = sl::state_lanes<Model, D>;
  using L = state_layout<Model>;
  constexpr int ny = L::size;
  const D d;
  if (hn::Lanes(d) != W) return false;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    const auto scatter = [&](auto get, P x) {
      HWY_ALIGN double lanes[W];
      hn::Store(x.v, d, lanes);
      for (size_t l = 0; l < W; ++l) get(out[first + l]) = lanes[l];
    };
    const auto flag = [](P x) { return x == P(1.0); };
    const auto as_double = [&](sl::mask<D> m) { return P(hn::IfThenElse(m, hn::Set(d, 1.0), hn::Zero(d))); };
    using C = history_case<Model>;
    using R = history_result<Model>;

    H s;
    s.past_count = gather([](const C& c) { return c.past_count; });
    s.initial_derivative = flag(gather([](const C& c) { return c.initial_derivative; }));
    for (int j = 0; j < H::max_past; ++j) {
      s.t_past[j] = gather([j](const C& c) { return c.t_past[j]; });
      for (int i = 0; i < ny; ++i) s.older_differences[j][i] = gather([=](const C& c) { return c.older[j][i]; });
    }
    S y_delta;
    for (int i = 0; i < ny; ++i) {
      s.y_newest[i] = gather([i](const C& c) { return c.y_newest[i]; });
      s.yp0[i] = gather([i](const C& c) { return c.yp0[i]; });
      s.y_scale[i] = gather([i](const C& c) { return c.y_scale[i]; });
      y_delta[i] = gather([i](const C& c) { return c.y_delta[i]; });
    }
    const P k = gather([](const C& c) { return c.k; }), t_new = gather([](const C& c) { return c.t_new; });

    // bdf_attempt's sequence: predictor, weights, a new point, its estimate; the failure's LTE_{k-1}.
    P x[sl::bdf_max_nodes<H>];
    S dd[sl::bdf_max_nodes<H>], y_pred, yp_pred, y;
    const P c = sl::bdf_predict(s, k, t_new, x, dd, y_pred, yp_pred);
    const S w = sl::bdf_error_weights<Model>(s.y_newest, s.y_scale, opt);
    for (int i = 0; i < ny; ++i) y[i] = y_pred[i] + y_delta[i];
    const P err_k = sl::error_estimate<Model>(y, y_pred, w, c, t_new, x, k);
    const P lte_failure = sl::lte_from_newton_form<Model>(k > P(1.0), k - 1.0, x, dd, t_new, y, w);
    scatter([](R& r) -> double& { return r.c; }, c);
    scatter([](R& r) -> double& { return r.err_k; }, err_k);
    scatter([](R& r) -> double& { return r.lte_failure; }, lte_failure);
    for (int i = 0; i < ny; ++i) {
      scatter([i](R& r) -> double& { return r.y_pred[i]; }, y_pred[i]);
      scatter([i](R& r) -> double& { return r.yp_pred[i]; }, yp_pred[i]);
      scatter([i](R& r) -> double& { return r.w[i]; }, w[i]);
    }

    // The acceptance: the form over every available node, the order estimates, the new history.
    const P available = sl::available_past(s);
    sl::past_newton_form(s, 0, available, x, dd);  // levels 0 .. k again (the same bits), then the rest
    for (int j = 0; j < sl::bdf_max_nodes<H>; ++j) {
      scatter([j](R& r) -> double& { return r.x[j]; }, x[j]);
      for (int i = 0; i < ny; ++i) scatter([=](R& r) -> double& { return r.dd[j][i]; }, dd[j][i]);
    }
    const sl::order_candidates_lanes<D> can =
        sl::bdf_order_candidates(k, gather([](const C& c) { return c.planned_order; }),
                                 gather([](const C& c) { return c.steps_at_order; }), opt.max_order, available);
    P lte_lower(-1.0), lte_higher(-1.0);
    sl::order_estimates<Model>(k, can.lower, can.higher, x, dd, t_new, y, w, lte_lower, lte_higher);
    scatter([](R& r) -> double& { return r.lower; }, as_double(can.lower));
    scatter([](R& r) -> double& { return r.higher; }, as_double(can.higher));
    scatter([](R& r) -> double& { return r.lte_lower; }, lte_lower);
    scatter([](R& r) -> double& { return r.lte_higher; }, lte_higher);

    const sl::mask<D> accepted = flag(gather([](const C& c) { return c.accepted; }));
    sl::accept_into_history(accepted, t_new, y, dd, s);
    scatter([](R& r) -> double& { return r.past_count; }, s.past_count);
    scatter([](R& r) -> double& { return r.initial_derivative; }, as_double(s.initial_derivative));
    for (int j = 0; j < H::max_past; ++j) {
      scatter([j](R& r) -> double& { return r.t_past[j]; }, s.t_past[j]);
      for (int i = 0; i < ny; ++i)
        scatter([=](R& r) -> double& { return r.older[j][i]; }, s.older_differences[j][i]);
    }
    for (int i = 0; i < ny; ++i) {
      scatter([i](R& r) -> double& { return r.y_newest[i]; }, s.y_newest[i]);
      scatter([i](R& r) -> double& { return r.y_scale[i]; }, s.y_scale[i]);
    }
    // Dense output within the newest step (the accepted one, or the last before it).
    const P fraction = gather([](const C& c) { return c.dense_fraction; });
    const P t_dense = s.t_past[1] + fraction * (s.t_past[0] - s.t_past[1]);
    S dense;
    sl::bdf_dense_output(s, gather([](const C& c) { return c.last_order; }), t_dense, dense);
    for (int i = 0; i < ny; ++i) scatter([i](R& r) -> double& { return r.dense[i]; }, dense[i]);
  }
  return true;
}

#define LOCKSTEP_HISTORY_TEST_ENTRY(NAME, MODEL)                                                              \
  bool NAME(const history_case<MODEL>* in, history_result<MODEL>* out, size_t count, size_t lanes,           \
            const solver_options& opt) {                                                                     \
    return at_lane_width(lanes,                                                                              \
                         [&](auto w) { return history_at_width<MODEL, decltype(w)::value>(in, out, count, opt); }); \
  }
LOCKSTEP_HISTORY_TEST_ENTRY(HistoryAndrews, lockstep::models::andrews)
LOCKSTEP_HISTORY_TEST_ENTRY(HistoryKnifeEdge, lockstep::models::knife_edge)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(HistoryAndrews);
HWY_EXPORT(HistoryKnifeEdge);

namespace {

template <class Model>
history_case<Model> draw(std::mt19937_64& g) {
  using C = history_case<Model>;
  std::uniform_real_distribution<double> u(0, 1), s(-1, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(g)); };
  C c{};
  c.past_count = double(1 + g() % C::max_past);
  // The confluent node at t0 stays in the window until it is full (bdf_start); a start from given
  // points (bdf_start_from_points) has none.
  c.initial_derivative = (c.past_count < C::max_past || g() % 2) && g() % 4 != 0;
  c.t_past[0] = (g() % 8 == 0) ? 0.0 : 10.0 * u(g);
  for (int j = 1; j < C::max_past; ++j) c.t_past[j] = c.t_past[j - 1] - log_uniform(1e-7, 1e-2);
  for (int i = 0; i < C::ny; ++i) {
    const double scale = log_uniform(1e-6, 1e3);
    c.y_newest[i] = scale * s(g);
    c.yp0[i] = scale * s(g) * 10.0;
    c.y_scale[i] = std::abs(c.y_newest[i]) * (1.0 + u(g));
    for (int j = 0; j < C::max_past; ++j) c.older[j][i] = scale * s(g) * std::pow(10.0, j);
    c.y_delta[i] = scale * s(g) * log_uniform(1e-12, 1e-3);
    if (g() % 16 == 0) c.y_newest[i] = (g() % 2) ? -0.0 : 0.0;  // signed zeros through the Horner scheme
  }
  const int available = int(c.past_count) + (c.initial_derivative != 0.0 ? 1 : 0);
  const int k_max = std::max(1, std::min(bdf_max_order, available - 1));
  c.k = double(1 + g() % k_max);
  c.planned_order = (g() % 3 == 0) ? c.k + 1 : c.k;
  c.steps_at_order = double(g() % 8);
  c.t_new = c.t_past[0] + log_uniform(1e-7, 1e-2);
  c.accepted = double(g() % 4 != 0);
  c.last_order = double(1 + g() % bdf_max_order);
  c.dense_fraction = u(g);
  return c;
}

// The scalar functions on one member, in bdf_attempt's order.
template <class Model>
history_result<Model> decide_alone(const history_case<Model>& in, const solver_options& opt) {
  using L = state_layout<Model>;
  using C = history_case<Model>;
  constexpr int ny = L::size, max_nodes = C::max_past + 2;
  bdf_state<Model> s{};
  s.past_count = int(in.past_count);
  s.initial_derivative = in.initial_derivative == 1.0;
  for (int j = 0; j < C::max_past; ++j) {
    s.t_past[j] = in.t_past[j];
    for (int i = 0; i < ny; ++i) s.older_differences[j][i] = in.older[j][i];
  }
  for (int i = 0; i < ny; ++i) s.y_newest[i] = in.y_newest[i], s.yp0[i] = in.yp0[i], s.y_scale[i] = in.y_scale[i];
  const int k = int(in.k);
  history_result<Model> r{};
  double x[max_nodes] = {};
  state_vector<Model> dd[max_nodes], y_pred, yp_pred, y;
  r.c = detail::bdf_predict(s, k, in.t_new, x, dd, y_pred, yp_pred);
  const state_vector<Model> w = detail::bdf_error_weights<Model>(s.y_newest, s.y_scale, opt);
  for (int i = 0; i < ny; ++i) y[i] = y_pred[i] + in.y_delta[i];
  {
    state_vector<Model> e;
    for (int j = 0; j < ny; ++j) e[j] = y[j] - y_pred[j];
    r.err_k = detail::weighted_rms(e, w, L::q, L::lambda) / (1.0 + r.c * (in.t_new - x[k]));
  }
  r.lte_failure = k > 1 ? detail::lte_from_newton_form<Model>(true, k - 1, x, dd, in.t_new, y, w) : 0.0;
  for (int i = 0; i < ny; ++i) r.y_pred[i] = y_pred[i], r.yp_pred[i] = yp_pred[i], r.w[i] = w[i];

  const int available = detail::available_past(s);
  detail::past_newton_form(s, k + 1, available, x, dd);
  for (int j = 0; j < max_nodes; ++j) {
    r.x[j] = x[j];
    for (int i = 0; i < ny; ++i) r.dd[j][i] = dd[j][i];
  }
  const detail::order_candidates can =
      detail::bdf_order_candidates(k, int(in.planned_order), int(in.steps_at_order), opt.max_order, available);
  r.lower = can.lower, r.higher = can.higher;
  r.lte_lower = -1.0, r.lte_higher = -1.0;
  if (can.lower || can.higher)
    detail::order_estimates<Model>(k, can.lower, can.higher, x, dd, in.t_new, y, w, r.lte_lower, r.lte_higher);

  if (in.accepted == 1.0) {  // bdf_attempt's acceptance block
    for (int j = C::max_past - 1; j > 0; --j) s.t_past[j] = s.t_past[j - 1];
    s.t_past[0] = in.t_new;
    if (s.past_count < C::max_past) ++s.past_count;
    else s.initial_derivative = false;
    const int older = detail::available_past(s) - 1;
    for (int j = 0; j < older; ++j) s.older_differences[j] = dd[j];
    s.y_newest = y;
    for (int j = 0; j < ny; ++j) s.y_scale[j] = max(s.y_scale[j], abs(y[j]));
  }
  r.past_count = s.past_count, r.initial_derivative = s.initial_derivative;
  for (int j = 0; j < C::max_past; ++j) {
    r.t_past[j] = s.t_past[j];
    for (int i = 0; i < ny; ++i) r.older[j][i] = s.older_differences[j][i];
  }
  for (int i = 0; i < ny; ++i) r.y_newest[i] = s.y_newest[i], r.y_scale[i] = s.y_scale[i];
  s.last_order = int(in.last_order);
  state_vector<Model> dense;
  bdf_dense_output(s, s.t_past[1] + in.dense_fraction * (s.t_past[0] - s.t_past[1]), dense);
  for (int i = 0; i < ny; ++i) r.dense[i] = dense[i];
  return r;
}

// The outputs whose scalar values are defined for a member: the nodes and coefficients of levels
// below its available count (bdf_attempt reads no others), and every other output.
template <class Model>
std::vector<std::pair<std::string, std::pair<double, double>>> differences(const history_case<Model>& in,
                                                                           const history_result<Model>& lanes,
                                                                           const history_result<Model>& alone) {
  using R = history_result<Model>;
  std::vector<std::pair<std::string, std::pair<double, double>>> d;
  const auto check = [&](const std::string& what, double a, double b) {
    if (!same_bits(a, b)) d.push_back({what, {a, b}});
  };
  const int available = int(in.past_count) + (in.initial_derivative == 1.0 ? 1 : 0);
  check("c", lanes.c, alone.c);
  check("err_k", lanes.err_k, alone.err_k);
  check("LTE_k-1 after a failure", lanes.lte_failure, alone.lte_failure);
  check("lower", lanes.lower, alone.lower);
  check("higher", lanes.higher, alone.higher);
  check("LTE_k-1", lanes.lte_lower, alone.lte_lower);
  check("LTE_k+1", lanes.lte_higher, alone.lte_higher);
  check("past_count", lanes.past_count, alone.past_count);
  check("initial_derivative", lanes.initial_derivative, alone.initial_derivative);
  for (int j = 0; j < R::max_past; ++j) check("t_past", lanes.t_past[j], alone.t_past[j]);
  for (int i = 0; i < R::ny; ++i) {
    check("y_pred", lanes.y_pred[i], alone.y_pred[i]);
    check("yp_pred", lanes.yp_pred[i], alone.yp_pred[i]);
    check("w", lanes.w[i], alone.w[i]);
    check("y_newest", lanes.y_newest[i], alone.y_newest[i]);
    check("y_scale", lanes.y_scale[i], alone.y_scale[i]);
    check("dense", lanes.dense[i], alone.dense[i]);
    for (int j = 0; j < R::max_past; ++j) check("older_differences", lanes.older[j][i], alone.older[j][i]);
    for (int j = 0; j < available; ++j) check("dd", lanes.dd[j][i], alone.dd[j][i]);
  }
  for (int j = 0; j < available; ++j) check("x", lanes.x[j], alone.x[j]);
  return d;
}

template <class Model, class Entry>
void expect_lanes_equal_scalar(const Entry& run, const char* name, uint64_t seed) {
  constexpr size_t count = 1024;
  std::mt19937_64 g(seed);
  std::vector<history_case<Model>> in(count);
  for (auto& c : in) c = draw<Model>(g);
  solver_options opt;
  opt.rtol = 1e-6, opt.atol_q = 1e-7, opt.atol_v = 1e-5, opt.atol_lambda = 1e-3;
  std::vector<history_result<Model>> alone(count);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) alone[m] = decide_alone(in[m], opt);
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
  EXPECT_EQ(raised_alone, 0) << name << ": the drawn histories should raise no flag";

  // The draw reaches every case: each order, both kinds of start, lowered and raised order
  // candidates, accepted and not accepted steps, a full window.
  size_t orders[bdf_max_order + 1] = {}, confluent = 0, lower = 0, higher = 0, accepted = 0, full = 0;
  for (size_t m = 0; m < count; ++m) {
    ++orders[int(in[m].k)];
    confluent += in[m].initial_derivative == 1.0 && in[m].past_count == 1.0;
    lower += alone[m].lower == 1.0, higher += alone[m].higher == 1.0;
    accepted += in[m].accepted == 1.0;
    full += in[m].past_count == double(bdf_state<Model>::max_past);
  }
  for (int k = 1; k <= bdf_max_order; ++k) EXPECT_GT(orders[k], 0u) << name << ": no member at order " << k;
  EXPECT_GT(confluent, 0u);
  EXPECT_GT(lower, 0u);
  EXPECT_GT(higher, 0u);
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, count);
  EXPECT_GT(full, 0u);

  std::vector<history_result<Model>> out;
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, 0,
      [&](size_t lanes) {
        out.assign(count, history_result<Model>{});  // nothing of the previous variant stays
        return run(in.data(), out.data(), count, lanes, opt);
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        for (size_t m = 0; m < count; ++m) {
          const auto d = differences(in[m], out[m], alone[m]);
          if (!d.empty() && differ++ == 0)
            ADD_FAILURE() << name << ", " << variant << ": member " << m << " (order " << in[m].k << ", "
                          << in[m].past_count << " past points): " << d.size() << " outputs differ, first "
                          << d[0].first << " = " << d[0].second.first << ", alone " << d[0].second.second;
        }
        return differ;
      });
  std::printf("[ bdf history ] %s: %zu members, %zu variants equal\n", name, count, variants);
}

TEST(SimdBdfHistory, EveryLaneIsTheMemberAloneAndrews) {
  expect_lanes_equal_scalar<models::andrews>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(HistoryAndrews)(a...); }, "andrews", 7);
}

TEST(SimdBdfHistory, EveryLaneIsTheMemberAloneKnifeEdge) {
  expect_lanes_equal_scalar<models::knife_edge>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(HistoryKnifeEdge)(a...); }, "knife edge", 8);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
