// bench/simd/member_speed.cpp — whole members integrated by BDF, Radau IIA 5 or rho_inf one at a time
// (stepper/member.hpp's member_begin and member_advance, as every CPU backend runs them) against the same
// members in W
// SIMD lanes with a refilled lane for each finished member (lockstep/simd/member_inl.hpp), in the
// same run, on one core. Every member's final state, status, counters and save points are compared bit
// for bit between the two (the lanes' determinism rule): the accuracy is the same by construction, only
// the time differs.
//
// What is timed is the member stepper's whole work for a chunk of a study: the consistent
// initialization, the step attempts, the record of each accepted step (constraint residuals), 11 save
// points by dense output, and the final point. Built once per instruction set, like the models'
// evaluation on packs:
//
//   build/bench/simd_member_speed_avx512 [members] [repetitions] [model] [method]   (W = 1, 2, 4, 8)
//   build/bench/simd_member_speed_avx2 [members] [repetitions] [model] [method]     (W = 1, 2, 4)
//
// (model: one of andrews, car_axis, slider_crank, double_pendulum, or all, the default; method: bdf,
// the default, radau5, rhoinf at its default rho_inf of 0.6, or dopri5 on index1 with coordinate
// projection; the others on ggl.)
//
// Studies (docs/SIMD.md, "Lane utilization"): a sweep of the first parameter over +-10 %; Monte Carlo,
// every parameter within 5 % of its default, one member in 32 with a NaN parameter; mixed failures,
// those with one in eight NaN and a step budget (max_steps) just below the attempts of the member at 7/8
// of them, so that about one in eight stops at it. ggl (dopri5: index1), rtol 1e-6. Prints a markdown
// table: time per member (the least of the repetitions), the lanes' speed-up, and their utilization,
// measured: lane-attempts of members over lane-attempts executed, and likewise the corrector's Newton
// iterations and LU factorizations (the members' counts over W times the pack's, corrector_work).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/car_axis.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/slider_crank.hpp"
#include "lockstep/simd/member_inl.hpp"
#include "tests/simd/refilled_lanes_inl.hpp"
#include "tests/support/monte_carlo_member.hpp"

namespace lockstep::simd_bench {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

template <class Model>
struct member {
  std::vector<double> p;
  vec<double, Model::n> q0, v0;
};

// What the members of a study share, as a chunk's do.
struct chunk {
  solver_options opt;
  double t1 = 0.0;
  std::vector<double> save_times;
};

enum class study_kind { sweep, monte_carlo, mixed_failures };
const char* kind_name(study_kind k) {
  return k == study_kind::sweep ? "sweep" : k == study_kind::monte_carlo ? "Monte Carlo" : "mixed failures";
}

// What a member ends with: status, attempts, counts, and digests of its final point and save points.
struct outcome {
  double status = 0.0, attempts = 0.0, steps = 0.0, newton_iterations = 0.0, lu_factorizations = 0.0;
  std::uint64_t final_point = 0, saves = 0xcbf29ce484222325ull;
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
void record_save(outcome& o, int index, double t, const state_vector<Model>& y) {
  const double at[] = {double(index), t};
  o.saves = digest(y.a, state_layout<Model>::size, digest(at, 2, o.saves));
}

template <class Model, class Method>
void record_end(outcome& o, const member_state<Model, Method>& ms, const double* p, const solver_options& opt) {
  const state_vector<Model> y = member_final_state<Model>(ms, p, opt);
  o.status = double(ms.status), o.attempts = double(ms.attempts), o.steps = double(ms.counters.steps);
  o.newton_iterations = double(ms.counters.newton_iterations), o.lu_factorizations = double(ms.counters.lu_factorizations);
  o.final_point = digest(y.a, state_layout<Model>::size);
}

template <class Model>
std::vector<member<Model>> study(study_kind kind, size_t count) {
  std::mt19937_64 g(20261127);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<member<Model>> all(count);
  for (size_t i = 0; i < count; ++i) {
    member<Model>& m = all[i];
    m.p.resize(Model::n_params);
    for (int j = 0; j < Model::n_params; ++j) m.p[j] = Model::params[j].default_value;
    if (kind == study_kind::sweep) {
      m.p[0] *= 1.0 + 0.1 * (2.0 * double(i) / double(count - 1) - 1.0);
    } else {
      for (int j = 0; j < Model::n_params; ++j) m.p[j] *= 1.0 + 0.05 * u(g);
      if (g() % (kind == study_kind::mixed_failures ? 8 : 32) == 0)
        m.p[g() % Model::n_params] = std::numeric_limits<double>::quiet_NaN();
    }
    simd_test::default_initial_state<Model>(m.p.data(), m.q0, m.v0);
  }
  return all;
}

// Every member alone, one after the other, as a CPU backend's thread runs its chunk.
template <class Model, class Method>
std::vector<outcome> one_at_a_time(const std::vector<member<Model>>& members, const chunk& c) {
  std::vector<outcome> out(members.size());
  const int save_count = int(c.save_times.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const auto sink = [&](int index, double t, const state_vector<Model>& y) { record_save<Model>(out[i], index, t, y); };
    member_state<Model, Method> ms;
    member_begin<Model>(ms, 0.0, c.t1, members[i].q0, members[i].v0, members[i].p.data(), c.opt, c.save_times.data(),
                        save_count, sink);
    while (!member_advance<Model>(ms, 16, c.t1, members[i].p.data(), c.opt, c.save_times.data(), save_count, sink)) {
    }
    record_end<Model>(out[i], ms, members[i].p.data(), c.opt);
  }
  return out;
}

// What W lanes executed, as their workspace counts it (member_lanes, corrector_work): lane-attempts,
// lane-iterations of the Newton loop and lane-factorizations (W for each the pack ran).
struct lanes_executed {
  double attempts = 0.0, newton_iterations = 0.0, lu_factorizations = 0.0;
};

// The members in W lanes, a finished member's lane refilled with the next one.
template <class Model, class Method, size_t W>
std::vector<outcome> in_lanes(const std::vector<member<Model>>& members, const chunk& c, lanes_executed& executed) {
  using D = hn::CappedTag<double, W>;
  std::vector<outcome> out(members.size());
  const auto lanes = std::make_unique<sl::member_lanes<Model, Method, D>>();
  simd_test::HWY_NAMESPACE::run_in_refilled_lanes(
      *lanes, members.size(), c.t1, c.opt, c.save_times.data(), int(c.save_times.size()),
      [&](size_t i, member_state<Model, Method>& ms, const auto& sink) {
        member_begin<Model>(ms, 0.0, c.t1, members[i].q0, members[i].v0, members[i].p.data(), c.opt,
                            c.save_times.data(), int(c.save_times.size()), sink);
      },
      [&](size_t i) { return members[i].p.data(); },
      [&](size_t i, const member_state<Model, Method>& ms) { record_end<Model>(out[i], ms, members[i].p.data(), c.opt); },
      [&](size_t i, int index, double t, const state_vector<Model>& y) { record_save<Model>(out[i], index, t, y); });
  executed.attempts = double(W) * double(lanes->pack_attempts);
  executed.newton_iterations = double(W) * double(sl::method_work(lanes->method).pack_iterations);
  executed.lu_factorizations = double(W) * double(sl::method_work(lanes->method).pack_factorizations);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same(const std::vector<outcome>& a, const std::vector<outcome>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].final_point != b[i].final_point || a[i].saves != b[i].saves || a[i].status != b[i].status ||
        a[i].steps != b[i].steps || a[i].attempts != b[i].attempts)
      return false;
  return true;
}

template <class Model, class Method>
void report(const char* name, study_kind kind, double t1, size_t count, int repetitions) {
  chunk c;
  c.opt.method = Method::kind;
  c.opt.form = formulation::ggl;
  if (Method::kind == method_kind::dopri5) {  // the explicit method's formulation and projection
    c.opt.form = formulation::index1;
    c.opt.projection = projection_kind::coordinate;
  }
  c.opt.rtol = 1e-6;
  // The default start projected onto each member's own constraints, however far: with parameters 5 %
  // off, Andrews' moves by more than init "auto" accepts (method/options.hpp).
  c.opt.init = init_mode::project;
  c.t1 = t1;
  for (int i = 0; i <= 10; ++i) c.save_times.push_back(t1 * double(i) / 10.0);
  const std::vector<member<Model>> members = study<Model>(kind, count);
  if (kind == study_kind::mixed_failures) {  // the budget: the attempts of the member at 7/8 of them
    std::vector<double> attempts;
    for (const outcome& o : one_at_a_time<Model, Method>(members, c)) attempts.push_back(o.attempts);
    std::nth_element(attempts.begin(), attempts.begin() + long(count * 7 / 8), attempts.end());
    c.opt.max_steps = long(attempts[count * 7 / 8]) - 1;
  }
  double alone_time = std::numeric_limits<double>::infinity();
  std::vector<outcome> alone;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    alone = one_at_a_time<Model, Method>(members, c);
    alone_time = std::min(alone_time, seconds_since(start));
  }
  // attempted: the attempts a lane executes for the members, all but the one a budget refused (which
  // member_state::attempts counts too).
  double attempts = 0, attempted = 0, failed = 0, iterations = 0, factorizations = 0;
  for (const outcome& o : alone) {
    attempts += o.attempts, failed += o.status != double(member_status::success);
    attempted += o.attempts - (o.status == double(member_status::max_steps) ? 1.0 : 0.0);
    iterations += o.newton_iterations, factorizations += o.lu_factorizations;
  }
  std::printf("| %s | %s | %zu | %.0f | %.0f | %.1f us |", name, kind_name(kind), count, attempts / double(count), failed,
              1e6 * alone_time / double(count));
  const auto lanes = [&](auto w) {
    constexpr size_t W = decltype(w)::value;
    if (hn::Lanes(hn::CappedTag<double, W>()) != W) {
      std::printf(" - |");
      return;
    }
    double time = std::numeric_limits<double>::infinity();
    lanes_executed executed;
    std::vector<outcome> out;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = std::chrono::steady_clock::now();
      out = in_lanes<Model, Method, W>(members, c, executed);
      time = std::min(time, seconds_since(start));
    }
    // A ratio of counts, "-" where none was executed (an explicit method has no Newton iteration).
    const auto ratio = [](double of_members, double executed_count) {
      char text[32] = "-";
      if (executed_count > 0.0) std::snprintf(text, sizeof text, "%.2f", of_members / executed_count);
      return std::string(text);
    };
    std::printf(" %.1f us, %.2fx, %s / %s / %s%s |", 1e6 * time / double(count), alone_time / time,
                ratio(attempted, executed.attempts).c_str(), ratio(iterations, executed.newton_iterations).c_str(),
                ratio(factorizations, executed.lu_factorizations).c_str(), same(out, alone) ? "" : " (RESULTS DIFFER)");
  };
  lanes(std::integral_constant<size_t, 1>{});
  lanes(std::integral_constant<size_t, 2>{});
  lanes(std::integral_constant<size_t, 4>{});
  lanes(std::integral_constant<size_t, 8>{});
  std::printf("\n");
  std::fflush(stdout);
}

// The table for Method.
template <class Method>
void report_all(size_t count, int repetitions, const std::string& only) {
  using namespace lockstep;
  std::printf("Whole members by %s on %s, rtol 1e-6, 11 save points, instruction set %s; per member: time one at a "
              "time, and in W lanes (time, speed-up, utilization of attempts / Newton iterations / LU factorizations)\n\n",
              method_name(Method::kind),
              Method::kind == method_kind::dopri5 ? "index1 with coordinate projection" : "ggl",
              hwy::TargetName(HWY_STATIC_TARGET));
  std::printf("| model | study | members | attempts per member | failed | one at a time | W = 1 | W = 2 | W = 4 | W = 8 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const auto wanted = [&](const char* name) { return only == "all" || only == name; };
  for (const study_kind kind : {study_kind::sweep, study_kind::monte_carlo, study_kind::mixed_failures}) {
    if (wanted("andrews")) report<models::andrews, Method>("andrews", kind, 0.03, count, repetitions);
    if (wanted("car_axis")) report<models::car_axis, Method>("car axis", kind, 3.0, count, repetitions);
    if (wanted("slider_crank")) report<models::slider_crank, Method>("slider crank", kind, 0.1, count, repetitions);
    if (wanted("double_pendulum"))
      report<models::double_pendulum, Method>("double pendulum", kind, 10.0, count, repetitions);
  }
}

}  // namespace lockstep::simd_bench

int main(int argc, char** argv) {
  using namespace lockstep;
  const size_t count = argc > 1 ? size_t(std::atol(argv[1])) : 256;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string only = argc > 3 ? argv[3] : "all";
  const std::string method = argc > 4 ? argv[4] : "bdf";
  const char* const models[] = {"all", "andrews", "car_axis", "slider_crank", "double_pendulum"};
  if (count < 2 || repetitions < 1 || std::find(std::begin(models), std::end(models), only) == std::end(models) ||
      (method != "bdf" && method != "radau5" && method != "rhoinf" && method != "dopri5")) {
    std::fprintf(stderr, "usage: %s [members >= 2] [repetitions >= 1] [all|andrews|car_axis|slider_crank|"
                         "double_pendulum] [bdf|radau5|rhoinf|dopri5]\n", argv[0]);
    return 2;
  }
  if (method == "bdf")
    simd_bench::report_all<bdf_method>(count, repetitions, only);
  else if (method == "radau5")
    simd_bench::report_all<radau5_method>(count, repetitions, only);
  else if (method == "rhoinf")
    simd_bench::report_all<rhoinf_method>(count, repetitions, only);
  else
    simd_bench::report_all<dopri5_method>(count, repetitions, only);
  return 0;
}
