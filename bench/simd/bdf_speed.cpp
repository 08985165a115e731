// bench/simd/bdf_speed.cpp — BDF's step attempts for a study's members one at a time (method/bdf.hpp,
// bdf_attempt, as every CPU backend runs them today) against the same attempts in W SIMD lanes with a
// refilled lane for each finished member (lockstep/simd/bdf_attempt_inl.hpp), in the same run, on one
// core. Every member's final state and counters are compared bit for bit between the two (the lanes'
// determinism rule): the accuracy is the same by construction, only the time differs.
//
// What is timed is the method alone, from bdf_start's state to the end time: no projection after the
// steps, no output (the member stepper around the attempt is not in lanes yet; docs/SIMD.md).
// Built once per instruction set, like the models' evaluation on packs:
//
//   build/bench/simd_bdf_speed_avx512 [members] [repetitions] [model]   (W = 1, 2, 4, 8)
//   build/bench/simd_bdf_speed_avx2 [members] [repetitions] [model]     (W = 1, 2, 4)
//
// (model: one of andrews, car_axis, slider_crank, double_pendulum; all four by default.)
//
// Studies (docs/SIMD.md, "Lane utilization"): a sweep of the first parameter over +-10 %; Monte Carlo,
// every parameter within 5 % of its default, one member in 32 with a NaN parameter (it fails at its
// first Jacobian); mixed failures, those with one in eight NaN and one in eight stopped after 20
// attempts. ggl, rtol 1e-6. Prints a markdown table: time per member (the least of the repetitions),
// the lanes' speed-up, and their lane utilization (lane-attempts of members over lane-attempts
// executed).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/car_axis.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/slider_crank.hpp"
#include "lockstep/simd/bdf_attempt_inl.hpp"
#include "tests/support/monte_carlo_member.hpp"

namespace lockstep::simd_bench {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

template <class Model>
struct member {
  std::vector<double> p;
  bdf_state<Model> start;
  double max_attempts = std::numeric_limits<double>::infinity();  // a step budget (mixed failures)
};

// The kinds of study of docs/SIMD.md's section "Lane utilization": the first parameter swept over
// +-10 % in member order; every parameter within 5 % (one member in 32 with a NaN parameter); and those
// members with one in eight given a NaN parameter and one in eight stopped after 20 attempts.
enum class study_kind { sweep, monte_carlo, mixed_failures };
const char* kind_name(study_kind k) {
  return k == study_kind::sweep ? "sweep" : k == study_kind::monte_carlo ? "Monte Carlo" : "mixed failures";
}
// What a member ends with: its state's time and newest point, status, and counts.
struct outcome {
  double t = 0.0, status = 0.0, steps = 0.0, attempts = 0.0, jacobians = 0.0;
  std::uint64_t digest = 0;
};

std::uint64_t digest(const double* x, size_t count, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (size_t i = 0; i < count; ++i) {
    std::uint64_t bits;
    const double v = std::isnan(x[i]) ? std::numeric_limits<double>::quiet_NaN() : x[i];
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ull;
  }
  return h;
}

template <class Model>
std::vector<member<Model>> study(study_kind kind, size_t count, const solver_options& opt, double t_end) {
  std::mt19937_64 g(20261127);
  std::vector<member<Model>> all(count);
  for (size_t i = 0; i < count; ++i) {
    member<Model>& m = all[i];
    initial_values<Model> start;
    if (kind == study_kind::sweep) {
      m.p.resize(Model::n_params);
      for (int j = 0; j < Model::n_params; ++j) m.p[j] = Model::params[j].default_value;
      m.p[0] *= 1.0 + 0.1 * (2.0 * double(i) / double(count - 1) - 1.0);
      start = simd_test::consistent_start<Model>(m.p.data(), 0.0, opt);
    } else {
      const unsigned nan_one_in = kind == study_kind::mixed_failures ? 8 : 32;
      const simd_test::monte_carlo_member<Model> drawn =
          simd_test::draw_monte_carlo_member<Model>(g, 0.0, opt, nan_one_in);
      m.p.assign(drawn.p, drawn.p + Model::n_params);
      start = drawn.start;
      if (kind == study_kind::mixed_failures && g() % 8 == 0) m.max_attempts = 20;
    }
    bdf_start(m.start, 0.0, t_end, start, opt);
  }
  return all;
}

template <class Model>
outcome outcome_of(const bdf_state<Model>& s, double status, double steps, double attempts, double jacobians) {
  return {s.t, status, steps, attempts, jacobians, digest(s.y_newest.a, state_layout<Model>::size)};
}

// Every member alone, one after the other.
template <class Model>
std::vector<outcome> one_at_a_time(const std::vector<member<Model>>& members, const solver_options& opt, double t_end) {
  std::vector<outcome> out(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    bdf_state<Model> s = members[i].start;
    member_counters c;
    member_status status = member_status::running;
    double attempts = 0;
    for (;;) {
      ++attempts;
      const attempt_result r = bdf_attempt<Model>(s, t_end, members[i].p.data(), opt, c, status);
      if (r == attempt_result::failed || (r == attempt_result::accepted && s.t >= t_end)) break;
      if (attempts >= members[i].max_attempts) break;  // the stepper's max_steps, here in attempts
    }
    out[i] = outcome_of(s, double(status), double(c.steps), attempts, double(c.jacobian_evaluations));
  }
  return out;
}

// The members in W lanes, a finished member's lane refilled with the next one; lane_attempts counts the
// lane-attempts executed (W per pack attempt while any lane works).
template <class Model, size_t W>
std::vector<outcome> in_lanes(const std::vector<member<Model>>& members, const solver_options& opt, double t_end,
                              double& lane_attempts) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  std::vector<outcome> out(members.size());
  sl::bdf_lanes<Model, D> s;
  s.corrector = sl::no_matrices<Model, D>();
  sl::bdf_counters_lanes<D> counters;
  P status(double(member_status::running)), attempts(0.0), max_attempts(0.0);
  P p[Model::n_params];
  long lane_member[W];
  sl::mask<D> busy = hn::FirstN(d, 0);
  size_t next = 0;
  const auto fill = [&](size_t l) {  // the next member into lane l, or the lane stays idle
    if (next == members.size()) {
      lane_member[l] = -1;
      sl::set_mask_lane<D>(busy, l, false);
      return;
    }
    const member<Model>& m = members[next];
    sl::load_lane(s, l, m.start);
    for (int i = 0; i < Model::n_params; ++i) sl::set_lane(p[i], l, m.p[i]);
    sl::set_lane(max_attempts, l, m.max_attempts);
    for (P* c : {&counters.steps, &counters.last_h, &counters.step.rejected_steps, &counters.step.newton_failures,
                 &counters.corrector.jacobian_evaluations, &counters.corrector.lu_factorizations,
                 &counters.corrector.model_evaluations, &counters.corrector.newton_iterations, &attempts})
      sl::set_lane(*c, l, 0.0);
    sl::set_lane(status, l, double(member_status::running));
    lane_member[l] = long(next++);
    sl::set_mask_lane<D>(busy, l, true);
  };
  for (size_t l = 0; l < W; ++l) fill(l);
  lane_attempts = 0;
  const P end(t_end);
  while (!hn::AllFalse(d, busy)) {
    lane_attempts += double(W);
    attempts = sl::select(busy, attempts + 1.0, attempts);
    const P r = sl::bdf_attempt<Model>(busy, s, end, p, opt, counters, status);
    const sl::mask<D> done =
        hn::And(busy, hn::Or(hn::Or(r == P(double(int(attempt_result::failed))),
                                    hn::And(r == P(double(int(attempt_result::accepted))), s.t >= end)),
                             attempts >= max_attempts));
    if (hn::AllFalse(d, done)) continue;
    for (size_t l = 0; l < W; ++l) {
      if (!sl::mask_lane_of<D>(done, l)) continue;
      bdf_state<Model> finished;
      sl::store_lane(s, l, finished);
      out[size_t(lane_member[l])] =
          outcome_of(finished, sl::lane_of(status, l), sl::lane_of(counters.steps, l), sl::lane_of(attempts, l),
                     sl::lane_of(counters.corrector.jacobian_evaluations, l));
      fill(l);
    }
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same(const std::vector<outcome>& a, const std::vector<outcome>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].digest != b[i].digest || a[i].status != b[i].status || a[i].steps != b[i].steps ||
        a[i].attempts != b[i].attempts || std::memcmp(&a[i].t, &b[i].t, sizeof(double)) != 0)
      return false;
  return true;
}

template <class Model>
void report(const char* name, study_kind kind, double t_end, size_t count, int repetitions) {
  solver_options opt;
  opt.form = formulation::ggl;
  opt.rtol = 1e-6;
  const std::vector<member<Model>> members = study<Model>(kind, count, opt, t_end);
  double alone_time = std::numeric_limits<double>::infinity();
  std::vector<outcome> alone;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    alone = one_at_a_time(members, opt, t_end);
    alone_time = std::min(alone_time, seconds_since(start));
  }
  double attempts = 0, failed = 0;
  for (const outcome& o : alone) attempts += o.attempts, failed += o.status != double(member_status::running);
  std::printf("| %s | %s | %zu | %.0f | %.0f | %.1f us |", name, kind_name(kind), count, attempts / double(count), failed,
              1e6 * alone_time / double(count));
  const auto lanes = [&](auto w) {
    constexpr size_t W = decltype(w)::value;
    if (hn::Lanes(hn::CappedTag<double, W>()) != W) {
      std::printf(" - |");
      return;
    }
    double time = std::numeric_limits<double>::infinity(), lane_attempts = 0;
    std::vector<outcome> out;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = std::chrono::steady_clock::now();
      out = in_lanes<Model, W>(members, opt, t_end, lane_attempts);
      time = std::min(time, seconds_since(start));
    }
    std::printf(" %.1f us, %.2fx, %.2f%s |", 1e6 * time / double(count), alone_time / time, attempts / lane_attempts,
                same(out, alone) ? "" : " (RESULTS DIFFER)");
  };
  lanes(std::integral_constant<size_t, 1>{});
  lanes(std::integral_constant<size_t, 2>{});
  lanes(std::integral_constant<size_t, 4>{});
  lanes(std::integral_constant<size_t, 8>{});
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace lockstep::simd_bench

int main(int argc, char** argv) {
  using namespace lockstep;
  const size_t count = argc > 1 ? size_t(std::atol(argv[1])) : 256;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string only = argc > 3 ? argv[3] : "";
  std::printf("BDF attempts on ggl, rtol 1e-6, instruction set %s; per member: time one at a time, and in W lanes "
              "(time, speed-up, lane utilization)\n\n",
              hwy::TargetName(HWY_STATIC_TARGET));
  std::printf("| model | study | members | attempts per member | failed | one at a time | W = 1 | W = 2 | W = 4 | W = 8 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const auto wanted = [&](const char* name) { return only.empty() || only == name; };
  for (const simd_bench::study_kind kind :
       {simd_bench::study_kind::sweep, simd_bench::study_kind::monte_carlo, simd_bench::study_kind::mixed_failures}) {
    if (wanted("andrews")) simd_bench::report<models::andrews>("andrews", kind, 0.03, count, repetitions);
    if (wanted("car_axis")) simd_bench::report<models::car_axis>("car axis", kind, 3.0, count, repetitions);
    if (wanted("slider_crank")) simd_bench::report<models::slider_crank>("slider crank", kind, 0.1, count, repetitions);
    if (wanted("double_pendulum"))
      simd_bench::report<models::double_pendulum>("double pendulum", kind, 10.0, count, repetitions);
  }
  return 0;
}
