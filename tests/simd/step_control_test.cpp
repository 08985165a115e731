// Tests of lockstep/simd/step_control_inl.hpp: the step-size and order decisions in lanes must give
// every lane exactly what the scalar functions of lockstep/method/step_control.hpp,
// bdf_step_control.hpp and radau_step_control.hpp give its member alone — every output, bit for bit,
// and nothing changed in the lanes a decision is not for — at W = 1, 2, 4, 8 on every instruction set
// compiled in. BDF's and Radau's controllers are one text compiled both ways (for one member's ints
// and doubles, and for packs): here that text must decide alike in both. The members of a pack are drawn independently, so packs mix orders 1 to 5, estimates
// from 0 to overflow (NaN and infinity included), near-ties of the order comparison, steps that land
// on the end of the interval or just miss it, fixed-step grids, first and later error-test failures
// and Newton failures that cut or give up, side by side; the lanes may raise no division-by-zero or
// overflow flag the scalar code does not raise on the same members.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/step_control_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/simd/step_control_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_STEP_CONTROL_TEST_COMMON_
#define LOCKSTEP_STEP_CONTROL_TEST_COMMON_
namespace lockstep::simd_test {
// The decisions under test, and the doubles each member reads and writes (member-major arrays; a mask
// or a bool is 1 or 0).
enum decision : int { plan = 0, newton_cut = 1, bdf_order = 2, bdf_accept = 3, bdf_error_failure = 4, radau = 5 };
inline constexpr int decision_count = 6;
inline constexpr int inputs_of[decision_count] = {6, 9, 7, 10, 9, 12};
inline constexpr int outputs_of[decision_count] = {6, 6, 6, 4, 5, 10};
}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// Decision `which` for `count` members (a multiple of W) in packs of W lanes.
template <size_t W>
HWY_NOINLINE bool decide_at_width(int which, const double* in, double* out, size_t count, const solver_options& opt,
                                  int stages) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using M = sl::mask<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  const int n_in = inputs_of[which], n_out = outputs_of[which];
  for (size_t first = 0; first < count; first += W) {
    const auto arg = [&](int j) {
      HWY_ALIGN double lanes[W];
      for (size_t l = 0; l < W; ++l) lanes[l] = in[(first + l) * n_in + j];
      return P(hn::Load(d, lanes));
    };
    const auto flag = [&](int j) { return arg(j) == P(1.0); };
    const auto put = [&](int j, P x) {
      HWY_ALIGN double lanes[W];
      hn::Store(x.v, d, lanes);
      for (size_t l = 0; l < W; ++l) out[(first + l) * n_out + j] = lanes[l];
    };
    const auto put_flag = [&](int j, M m) { put(j, P(hn::IfThenElse(m, hn::Set(d, 1.0), hn::Zero(d)))); };
    switch (which) {
      case plan: {  // t, h proposed, t_end, t0, status, lane -> h, h_min, too_small, t_new, status, fail
        const sl::step_plan_lanes<D> p = sl::plan_step(arg(0), arg(1), arg(2), opt, arg(3));
        P status = arg(4);
        const M fail = sl::step_too_small(flag(5), p, status);
        put(0, p.h), put(1, p.h_min), put_flag(2, p.too_small), put(3, p.t_new), put(4, status), put_flag(5, fail);
        break;
      }
      case newton_cut: {  // lane, reason, cuts, h, h_min, h_next, rejected, newton failures, status
        P cuts = arg(2), h_next = arg(5), status = arg(8);
        sl::step_counters_lanes<D> counters{arg(6), arg(7)};
        const M failed = sl::cut_after_newton_failure(flag(0), arg(1), opt.fixed_h > 0.0, cuts, arg(3), 0.25, arg(4),
                                                      h_next, counters, status);
        put_flag(0, failed), put(1, cuts), put(2, h_next), put(3, counters.rejected_steps),
            put(4, counters.newton_failures), put(5, status);
        break;
      }
      case bdf_order: {  // k, planned order, steps at order, available past, LTE_k, LTE_k-1, LTE_k+1
        const sl::order_candidates_lanes<D> c = sl::bdf_order_candidates(arg(0), arg(1), arg(2), opt.max_order, arg(3));
        const sl::order_choice_lanes<D> next = sl::choose_order(arg(0), arg(4), c.lower, arg(5), c.higher, arg(6));
        put(0, c.steps_at_order), put_flag(1, c.lower), put_flag(2, c.higher), put(3, next.order), put(4, next.ratio),
            put_flag(5, next.shrinks);
        break;
      }
      case bdf_accept: {  // lane, next order, ratio, shrinks, k, h, order, h_next, steps at order, failures
        const sl::order_choice_lanes<D> next{arg(1), arg(2), flag(3)};
        P order = arg(6), h_next = arg(7), steps = arg(8), failures = arg(9);
        sl::bdf_after_acceptance(flag(0), next, arg(4), arg(5), opt, order, h_next, steps, failures);
        put(0, order), put(1, h_next), put(2, steps), put(3, failures);
        break;
      }
      case bdf_error_failure: {  // lane, k, err_k, h, h_min, LTE_k-1, failures, order, h_next
        P failures = arg(6), order = arg(7), h_next = arg(8);
        M asked = hn::FirstN(d, 0);
        const P lower_estimate = arg(5);
        const auto lower = [&](M ask) {
          asked = hn::Or(asked, ask);
          return lower_estimate;
        };
        const M too_small =
            sl::bdf_after_error_failure(flag(0), arg(1), arg(2), arg(3), arg(4), lower, failures, order, h_next);
        put_flag(0, too_small), put(1, failures), put(2, order), put(3, h_next), put_flag(4, asked);
        break;
      }
      case radau: {  // lane, Newton iterations, err, h, first, h_min, h_next, last rejected, h_acc, err_acc, kept,
                     // a quotient
        const P fac = sl::radau_safety_factor(arg(1), opt.newton_max_iterations);
        const P quot = sl::radau_error_quotient(arg(2), stages, fac);
        P h_next = arg(6);
        M last_rejected = flag(7);
        const M too_small = sl::radau_after_error_failure(flag(0), arg(3), quot, flag(4), arg(5), h_next, last_rejected);
        const P accepted_quot = sl::radau_accepted_quotient(quot, arg(3), arg(2), stages, flag(4), arg(8), arg(9));
        const P h_new = sl::radau_next_step(arg(3), accepted_quot, flag(7), flag(10), opt.h_max);
        P h_acc = arg(8), err_acc = arg(9);
        sl::radau_remember_accepted(hn::Not(flag(0)), arg(3), arg(2), h_acc, err_acc);
        put(0, fac), put(1, quot), put_flag(2, too_small), put(3, h_next), put_flag(4, last_rejected),
            put(5, accepted_quot), put(6, h_new), put(7, h_acc), put(8, err_acc),
            put(9, sl::radau_next_step(arg(3), arg(11), flag(7), flag(10), opt.h_max));
        break;
      }
      default: return false;
    }
  }
  return true;
}

bool Decide(int which, const double* in, double* out, size_t count, size_t lanes, const solver_options& opt,
            int stages) {
  return at_lane_width(
      lanes, [&](auto w) { return decide_at_width<decltype(w)::value>(which, in, out, count, opt, stages); });
}
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"
#include "lockstep/method/step_control.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(Decide);

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A local error estimate of every kind the decisions meet: small and large, exactly 0, near the
// order comparison's tie (a = 2 LTE + 1e-4 = 1 and powers of it), overflowing powers, NaN, infinity.
double estimate(std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0, 1);
  switch (g() % 10) {
    case 0: return 0.0;
    case 1: return 0.49995 * (1.0 + (u(g) - 0.5) * 1e-15);  // a next to 1
    case 2: return std::pow(10.0, 100 + 200 * u(g));        // powers overflow
    case 3: return (g() & 1) ? nan : inf;
    case 4: return 0.5 * std::ldexp(1.0, -int(g() % 8)) - 0.5e-4;  // a near 2^-e
    default: return std::pow(10.0, -8 + 9 * u(g));
  }
}

double step(std::mt19937_64& g) { return std::pow(10.0, -12 + 11 * std::uniform_real_distribution<double>(0, 1)(g)); }

double status_value(std::mt19937_64& g) {
  const member_status values[] = {member_status::running, member_status::success, member_status::singular_matrix,
                                  member_status::model_not_finite};
  return double(values[g() % 4]);
}

// One member's inputs for a decision.
void draw(int which, std::mt19937_64& g, const solver_options& opt, double* x) {
  std::uniform_real_distribution<double> u(0, 1);
  const auto lane = [&] { return (g() % 4 != 0) ? 1.0 : 0.0; };
  switch (which) {
    case plan: {
      const double t = (g() % 8 == 0) ? 0.0 : 10.0 * u(g) * ((g() % 4 == 0) ? -1.0 : 1.0), h = step(g);
      const double ends[] = {0.5, 0.99995, 1.00009, 1.0001, 1.00011, 2.0, 1e6, 1.0};
      double t_end = t + h * ends[g() % 8];
      double t0 = 0.0;
      if (opt.fixed_h > 0.0) {  // on the grid, next to it, at its end and off it
        t0 = (g() % 2) ? 0.0 : -0.37;
        const double k = double(g() % 200);
        double t_grid = t0 + k * opt.fixed_h;
        if (g() % 3 == 0) t_grid += (u(g) - 0.5) * 1e-15;
        x[0] = t_grid;
        const double k_end = k + double(g() % 3);
        t_end = t0 + k_end * opt.fixed_h + ((g() % 3 == 0) ? (u(g) - 0.5) * 1e-14 : 0.0);
        if (g() % 4 == 0) t_end = t_grid + opt.fixed_h * u(g);
      } else {
        x[0] = t;
      }
      x[1] = h * ((g() % 8 == 0) ? 1e-6 : 1.0), x[2] = t_end, x[3] = t0, x[4] = status_value(g), x[5] = lane();
      break;
    }
    case newton_cut: {
      const member_status reasons[] = {member_status::success, member_status::singular_matrix,
                                       member_status::model_not_finite};
      const double h = step(g);
      x[0] = lane(), x[1] = double(reasons[g() % 3]), x[2] = double(g() % 13), x[3] = h;
      x[4] = (g() % 3 == 0) ? h * (0.1 + 0.3 * u(g)) : 0.0, x[5] = step(g), x[6] = double(g() % 50),
      x[7] = double(g() % 50), x[8] = status_value(g);
      break;
    }
    case bdf_order: {
      const double k = double(1 + g() % 5);
      x[0] = k, x[1] = (g() % 3 == 0) ? k + double(int(g() % 3) - 1) : k, x[2] = double(g() % 8);
      x[3] = double(1 + g() % 7), x[4] = estimate(g), x[5] = estimate(g), x[6] = estimate(g);
      if (g() % 5 == 0) x[5] = x[4];  // equal estimates: the comparison of powers of one value
      break;
    }
    case bdf_accept: {
      const double k = double(1 + g() % 5);
      x[0] = lane(), x[1] = k + double(int(g() % 3) - 1), x[2] = (g() % 2) ? 2.0 : 0.5 + 0.4 * u(g),
      x[3] = double(g() % 2), x[4] = k, x[5] = step(g), x[6] = double(1 + g() % 5), x[7] = step(g),
      x[8] = double(g() % 7), x[9] = double(g() % 4);
      break;
    }
    case bdf_error_failure: {
      const double h = step(g);
      x[0] = lane(), x[1] = double(1 + g() % 5), x[2] = (g() % 6 == 0) ? nan : 1.0 + std::pow(10.0, 4 * u(g) - 3);
      x[3] = h, x[4] = (g() % 3 == 0) ? h * (0.2 + 0.1 * u(g)) : 0.0, x[5] = estimate(g),
      x[6] = double(g() % 4), x[7] = double(1 + g() % 5), x[8] = step(g);
      if (g() % 5 == 0) x[5] = x[2];  // LTE_{k-1} = err_k: the lower order is taken on equality
      break;
    }
    case radau: {
      const double h = step(g);
      x[0] = lane(), x[1] = double(1 + g() % opt.newton_max_iterations), x[2] = estimate(g), x[3] = h;
      x[4] = double(g() % 5 == 0), x[5] = (g() % 3 == 0) ? h * (0.05 + 0.2 * u(g)) : 0.0, x[6] = step(g);
      x[7] = double(g() % 3 == 0), x[8] = (x[4] == 1.0 && g() % 2) ? 0.0 : step(g);
      x[9] = (x[4] == 1.0 && g() % 2) ? 0.0 : 1e-2 + 10.0 * u(g), x[10] = double(g() % 2);
      if (g() % 4 == 0) x[3] = x[8];  // h / h_accepted = 1 ...
      if (g() % 8 == 0) x[2] = 1.0;   // ... and quotients at the bounds of the kept band
      // A quotient given directly, at the kept band's ends h_new / h = 1 and 1.2 (h a power of 2, so
      // that h_new / h is 1 / quot exactly) and next to them.
      const double band[] = {1.0, 1.0 / 1.2, std::nextafter(1.0 / 1.2, 1.0), std::nextafter(1.0 / 1.2, 0.0),
                             std::nextafter(1.0, 2.0), 0.125 + 4.875 * u(g)};
      x[11] = band[g() % 6];
      if (g() % 2) x[3] = std::ldexp(1.0, -int(g() % 40));
      break;
    }
  }
}

// The scalar functions on one member: what every lane must reproduce.
void decide_alone(int which, const double* x, double* y, const solver_options& opt, int stages) {
  const bool lane = x[0] == 1.0;
  switch (which) {
    case plan: {
      const step_plan p = plan_step(x[0], x[1], x[2], opt, x[3]);
      member_status status = member_status(int(x[4]));
      const bool fail = x[5] == 1.0 && step_too_small(p, status);
      y[0] = p.h, y[1] = p.h_min, y[2] = p.too_small, y[3] = p.t_new, y[4] = double(status), y[5] = fail;
      break;
    }
    case newton_cut: {
      int cuts = int(x[2]);
      double h_next = x[5];
      member_counters counters;
      counters.rejected_steps = long(x[6]);
      counters.newton_failures = long(x[7]);
      member_status status = member_status(int(x[8]));
      bool failed = false;
      if (lane)
        failed = cut_after_newton_failure(member_status(int(x[1])), opt.fixed_h > 0.0, cuts, x[3], 0.25, x[4], h_next,
                                          counters, status) == attempt_result::failed;
      y[0] = failed, y[1] = cuts, y[2] = h_next, y[3] = double(counters.rejected_steps),
      y[4] = double(counters.newton_failures), y[5] = double(status);
      break;
    }
    case bdf_order: {
      const int k = int(x[0]);
      const detail::order_candidates c =
          detail::bdf_order_candidates(k, int(x[1]), int(x[2]), opt.max_order, int(x[3]));
      const detail::order_choice next = detail::choose_order(k, x[4], c.lower, x[5], c.higher, x[6]);
      y[0] = c.steps_at_order, y[1] = c.lower, y[2] = c.higher, y[3] = next.order, y[4] = next.ratio,
      y[5] = next.shrinks;
      break;
    }
    case bdf_accept: {
      detail::order_choice next;
      next.order = int(x[1]), next.ratio = x[2], next.shrinks = x[3] == 1.0;
      int order = int(x[6]), steps = int(x[8]), failures = int(x[9]);
      double h_next = x[7];
      if (lane) detail::bdf_after_acceptance(true, next, int(x[4]), x[5], opt, order, h_next, steps, failures);
      y[0] = order, y[1] = h_next, y[2] = steps, y[3] = failures;
      break;
    }
    case bdf_error_failure: {
      int failures = int(x[6]), order = int(x[7]);
      double h_next = x[8];
      bool asked = false, too_small = false;
      const auto lower = [&](bool) {
        asked = true;
        return x[5];
      };
      if (lane)
        too_small = detail::bdf_after_error_failure(true, int(x[1]), x[2], x[3], x[4], lower, failures, order, h_next);
      y[0] = too_small, y[1] = failures, y[2] = order, y[3] = h_next, y[4] = asked;
      break;
    }
    case radau: {
      const double fac = detail::radau_safety_factor(x[1], opt.newton_max_iterations);
      const double quot = detail::radau_error_quotient(x[2], stages, fac);
      double h_next = x[6];
      bool last_rejected = x[7] == 1.0, too_small = false;
      if (lane) too_small = detail::radau_after_error_failure(true, x[3], quot, x[4] == 1.0, x[5], h_next, last_rejected);
      const double accepted_quot = detail::radau_accepted_quotient(quot, x[3], x[2], stages, x[4] == 1.0, x[8], x[9]);
      const double h_new = detail::radau_next_step(x[3], accepted_quot, x[7] == 1.0, x[10] == 1.0, opt.h_max);
      double h_acc = x[8], err_acc = x[9];
      if (!lane) detail::radau_remember_accepted(true, x[3], x[2], h_acc, err_acc);
      y[0] = fac, y[1] = quot, y[2] = too_small, y[3] = h_next, y[4] = last_rejected, y[5] = accepted_quot;
      y[6] = h_new, y[7] = h_acc, y[8] = err_acc;
      y[9] = detail::radau_next_step(x[3], x[11], x[7] == 1.0, x[10] == 1.0, opt.h_max);
      break;
    }
  }
}

const char* const decision_names[decision_count] = {"plan_step + step_too_small", "cut_after_newton_failure",
                                                    "bdf_order_candidates + choose_order", "bdf_after_acceptance",
                                                    "bdf_after_error_failure", "radau controller"};

// The members of one comparison: inputs and the scalar decisions, member-major.
struct decided {
  int n_in, n_out;
  std::vector<double> in, out;
  // How many members satisfy pred(x, y): the tests require each case of a decision to occur.
  template <class Pred>
  size_t count(const Pred& pred) const {
    size_t c = 0;
    for (size_t m = 0; m < in.size() / n_in; ++m) c += pred(&in[m * n_in], &out[m * n_out]) ? 1 : 0;
    return c;
  }
};

// Draws 4096 members, decides for each alone and in lanes at every width on every target, and
// requires every output of every lane to be the scalar one.
decided expect_lanes_equal_scalar(int which, const solver_options& opt, int stages, uint64_t seed,
                                  const std::string& setting) {
  constexpr size_t count = 4096;
  const int n_in = inputs_of[which], n_out = outputs_of[which];
  std::mt19937_64 g(seed);
  decided r{n_in, n_out, std::vector<double>(count * n_in), std::vector<double>(count * n_out)};
  for (size_t m = 0; m < count; ++m) draw(which, g, opt, &r.in[m * n_in]);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) decide_alone(which, &r.in[m * n_in], &r.out[m * n_out], opt, stages);
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW);

  const std::string name = std::string(decision_names[which]) + " (" + setting + ")";
  std::vector<double> out;
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW, raised_alone,
      [&](size_t lanes) {
        out.assign(count * n_out, -7.0);  // nothing of the previous variant stays
        return HWY_DYNAMIC_DISPATCH(Decide)(which, r.in.data(), out.data(), count, lanes, opt, stages);
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        for (size_t m = 0; m < count; ++m)
          for (int j = 0; j < n_out; ++j)
            if (!same_bits(out[m * n_out + j], r.out[m * n_out + j]) && differ++ == 0)
              ADD_FAILURE() << name << ", " << variant << ": member " << m << " output " << j << " is "
                            << out[m * n_out + j] << ", alone " << r.out[m * n_out + j];
        return differ;
      });
  std::printf("[ step control ] %s (%s): %zu members, %zu variants equal\n", decision_names[which], setting.c_str(),
              count, variants);
  return r;
}

// Requires at least one member of r in the case `pred` names.
template <class Pred>
void expect_case(const decided& r, const char* what, const Pred& pred) {
  EXPECT_GT(r.count(pred), 0u) << "no member " << what;
}

// Each comparison is followed by the cases its members must contain, so that a draw that stopped
// exercising a branch fails instead of passing trivially.
TEST(SimdStepControl, PlanStepInLanesIsTheScalarPlan) {
  solver_options opt;
  for (const bool limits : {false, true}) {
    if (limits) opt.h_min = 1e-9, opt.h_max = 1e-3;
    const decided r = expect_lanes_equal_scalar(plan, opt, 3, 11 + limits, limits ? "h_min and h_max" : "adaptive");
    expect_case(r, "too small", [](const double*, const double* y) { return y[2] == 1.0; });
    expect_case(r, "failing", [](const double*, const double* y) { return y[5] == 1.0; });
    expect_case(r, "stretched to t_end", [](const double* x, const double* y) { return y[3] == x[2] && y[0] > x[1]; });
    expect_case(r, "shortened to t_end", [](const double* x, const double* y) { return y[3] == x[2] && y[0] < x[1]; });
    expect_case(r, "taking h as proposed", [](const double* x, const double* y) { return y[0] == x[1]; });
    if (limits) expect_case(r, "limited by h_max", [](const double*, const double* y) { return y[0] == 1e-3; });
  }
  opt = solver_options{};
  opt.fixed_h = 0.01;
  const decided r = expect_lanes_equal_scalar(plan, opt, 3, 13, "fixed steps");
  expect_case(r, "ending at t_end", [](const double* x, const double* y) { return y[3] == x[2] && y[0] == 0.01; });
  expect_case(r, "shortened to t_end", [](const double* x, const double* y) { return y[3] == x[2] && y[0] != 0.01; });
  expect_case(r, "on the grid", [](const double* x, const double* y) { return y[3] != x[2]; });
}

TEST(SimdStepControl, NewtonFailureCutInLanesIsTheScalarCut) {
  solver_options opt;
  const decided r = expect_lanes_equal_scalar(newton_cut, opt, 3, 21, "adaptive");
  const auto failed_with = [](member_status s) {
    return [s](const double*, const double* y) { return y[0] == 1.0 && y[5] == double(s); };
  };
  expect_case(r, "failing to converge", failed_with(member_status::newton_failure));
  expect_case(r, "failing below h_min", failed_with(member_status::step_size_too_small));
  expect_case(r, "failing with its reason", failed_with(member_status::singular_matrix));
  expect_case(r, "cut", [](const double* x, const double* y) { return x[0] == 1.0 && y[0] == 0.0; });
  opt.fixed_h = 0.01;
  const decided fixed = expect_lanes_equal_scalar(newton_cut, opt, 3, 22, "fixed steps");
  EXPECT_EQ(fixed.count([](const double* x, const double* y) { return x[0] == 1.0 && y[0] == 0.0; }), 0u)
      << "a fixed step was cut";
}

TEST(SimdStepControl, BdfOrderChoiceInLanesIsTheScalarChoice) {
  solver_options opt;
  for (const int max_order : {5, 3}) {
    opt.max_order = max_order;
    const decided r = expect_lanes_equal_scalar(bdf_order, opt, 3, 31 + max_order,
                                                "max_order " + std::to_string(max_order));
    expect_case(r, "lowering its order", [](const double* x, const double* y) { return y[3] == x[0] - 1; });
    expect_case(r, "keeping its order", [](const double* x, const double* y) { return y[3] == x[0]; });
    expect_case(r, "raising its order", [](const double* x, const double* y) { return y[3] == x[0] + 1; });
    expect_case(r, "doubling h", [](const double*, const double* y) { return y[4] == 2.0; });
    expect_case(r, "keeping h", [](const double*, const double* y) { return y[4] == 1.0 && y[5] == 0.0; });
    expect_case(r, "shrinking h", [](const double*, const double* y) { return y[4] < 1.0 && y[5] == 1.0; });
    expect_case(r, "with a NaN estimate", [](const double* x, const double*) { return std::isnan(x[4]); });
  }
}

TEST(SimdStepControl, BdfAcceptanceInLanesIsTheScalarDecision) {
  solver_options opt;
  for (const bool limited : {false, true}) {
    if (limited) opt.h_max = 1e-4;
    const decided r = expect_lanes_equal_scalar(bdf_accept, opt, 3, 41 + limited, limited ? "h_max" : "adaptive");
    expect_case(r, "changing order", [](const double* x, const double* y) { return x[0] == 1 && y[0] != x[6]; });
    expect_case(r, "restarting its count", [](const double* x, const double* y) { return y[2] == 0 && x[8] != 0; });
    expect_case(r, "clearing its failures", [](const double* x, const double* y) { return y[3] == 0 && x[9] != 0; });
    expect_case(r, "keeping its failures",
                [](const double* x, const double* y) { return x[0] == 1 && y[3] == x[9] && x[9] != 0; });
  }
  opt = solver_options{};
  opt.fixed_h = 0.01;
  const decided r = expect_lanes_equal_scalar(bdf_accept, opt, 3, 43, "fixed steps");
  expect_case(r, "taking the fixed step", [](const double* x, const double* y) { return x[0] == 1 && y[1] == 0.01; });
}

TEST(SimdStepControl, BdfErrorFailureInLanesIsTheScalarDecision) {
  const decided r = expect_lanes_equal_scalar(bdf_error_failure, solver_options{}, 3, 51, "adaptive");
  expect_case(r, "asked for LTE_k-1", [](const double*, const double* y) { return y[4] == 1.0; });
  expect_case(r, "lowering its order", [](const double* x, const double* y) { return y[4] == 1.0 && y[2] == x[1] - 1; });
  expect_case(r, "keeping its order", [](const double* x, const double* y) { return y[4] == 1.0 && y[2] == x[1]; });
  expect_case(r, "falling to order 1", [](const double* x, const double* y) { return y[1] >= 3 && x[1] > 1 && y[2] == 1; });
  expect_case(r, "below h_min", [](const double*, const double* y) { return y[0] == 1.0; });
  expect_case(r, "with a NaN estimate", [](const double* x, const double*) { return x[0] == 1 && std::isnan(x[2]); });
}

TEST(SimdStepControl, RadauControllerInLanesIsTheScalarController) {
  solver_options opt;
  for (const int stages : {3, 2}) {
    opt.newton_max_iterations = stages == 3 ? 7 : 4;
    opt.h_max = stages == 3 ? opt.h_max : 1e-5;
    const decided r = expect_lanes_equal_scalar(radau, opt, stages, 60 + stages, std::to_string(stages) + " stages");
    expect_case(r, "below h_min", [](const double*, const double* y) { return y[2] == 1.0; });
    expect_case(r, "cut by 10 at its first step",
                [](const double* x, const double* y) { return x[0] == 1 && x[4] == 1 && y[3] == 0.1 * x[3]; });
    expect_case(r, "keeping h", [](const double* x, const double* y) { return y[6] == x[3] && y[5] != 1.0; });
    expect_case(r, "predicted by Gustafsson", [](const double*, const double* y) { return y[5] > y[1]; });
    expect_case(r, "keeping h at h_new / h = 1.2",
                [](const double* x, const double* y) { return x[3] / x[11] / x[3] == 1.2 && y[9] == x[3]; });
    expect_case(r, "not keeping h above 1.2",
                [](const double* x, const double* y) { return x[3] / x[11] / x[3] > 1.2 && x[10] == 1 && y[9] != x[3]; });
  }
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
