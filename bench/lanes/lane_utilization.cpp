// bench/lanes/lane_utilization.cpp — lane utilization per model, method and kind of study: the
// per-attempt traces of every member (recorded by the one-member stepper, one attempt per call),
// replayed through W = 4 and 8 refilled lanes (the CPU lanes backend's schedule) and through 32-thread
// warps with K = 32 attempts per launch (the CUDA backend's), by bench/lanes/lane_schedule.hpp.
//
//   build/bench/lane_utilization [members]        (default 256 members per study; about 2 minutes)
//
// Kinds of study, each `members` members in the order a chunk holds them:
//  - sweep: one input (or, for models without inputs, the first parameter) varied linearly over
//    +-10 % of its default in member order, so that neighbours in a pack are similar;
//  - Monte Carlo: every input +-10 % and every parameter +-5 %, independently at random; on the double
//    pendulum (released at 2 and 2.5 rad) the trajectories are chaotic;
//  - mixed failures: the Monte Carlo members, where one in eight has a NaN parameter (it fails before
//    its first attempt) and one in eight stops at 20 attempts (max_steps).
// Output: a markdown table per method, for docs/SIMD.md and docs/GPU.md.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/lanes/lane_schedule.hpp"
#include "lockstep/method/methods.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/member.hpp"

namespace {
using namespace lockstep;
using lanes_model::attempt_work;
using lanes_model::member_trace;

// The attempts of one member, one member_advance call with a budget of one attempt each (the same
// sequence as one call with an unbounded budget: stepper/member.hpp).
template <class Model, class Method>
member_trace record(const std::vector<double>& p, const std::vector<double>& inputs, double t1,
                    const solver_options& opt) {
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), inputs.data(), q0, v0);
  const double save_times[1] = {t1};
  auto sink = [](int, double, const state_vector<Model>&) {};
  member_state<Model, Method> ms;
  member_begin<Model>(ms, 0.0, t1, q0, v0, p.data(), opt, save_times, 1, sink);
  member_trace trace;
  member_counters before = ms.counters;
  long attempts_before = ms.attempts;
  for (bool done = ms.status != member_status::running; !done;) {
    done = member_advance<Model>(ms, 1, t1, p.data(), opt, save_times, 1, sink);
    if (ms.attempts > attempts_before)
      trace.push_back({ms.counters.newton_iterations - before.newton_iterations,
                       ms.counters.jacobian_evaluations - before.jacobian_evaluations,
                       ms.counters.lu_factorizations - before.lu_factorizations});
    before = ms.counters;
    attempts_before = ms.attempts;
  }
  return trace;
}

enum class study_kind { sweep, monte_carlo, mixed_failures };
const char* kind_name(study_kind k) {
  return k == study_kind::sweep ? "sweep" : k == study_kind::monte_carlo ? "Monte Carlo" : "mixed failures";
}

template <class Model, class Method>
std::vector<member_trace> study(study_kind kind, int members, double t1, solver_options opt) {
  std::mt19937_64 g(20261126);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<member_trace> traces;
  for (int i = 0; i < members; ++i) {
    std::vector<double> p(Model::n_params), in(Model::n_inputs > 0 ? Model::n_inputs : 1, 0.0);
    for (int j = 0; j < Model::n_params; ++j) p[j] = Model::params[j].default_value;
    if constexpr (Model::n_inputs > 0)
      for (int j = 0; j < Model::n_inputs; ++j) in[j] = Model::inputs[j].default_value;
    const auto perturb = [](double x, double relative) { return x != 0.0 ? x * (1.0 + relative) : relative; };
    if (kind == study_kind::sweep) {
      const double s = members > 1 ? -0.1 + 0.2 * i / (members - 1) : 0.0;
      if (Model::n_inputs > 0) in[0] = perturb(in[0], s);
      else p[0] = perturb(p[0], s);
    } else {
      for (int j = 0; j < Model::n_inputs; ++j) in[j] = perturb(in[j], 0.1 * u(g));
      for (int j = 0; j < Model::n_params; ++j) p[j] = perturb(p[j], 0.05 * u(g));
    }
    solver_options member_opt = opt;
    if (kind == study_kind::mixed_failures) {
      if (i % 8 == 1) p[0] = std::nan("");
      if (i % 8 == 5) member_opt.max_steps = 20;
    }
    traces.push_back(record<Model, Method>(p, in, t1, member_opt));
  }
  return traces;
}

template <class Model, class Method>
void report(double t1, int members, const solver_options& opt) {
  for (const study_kind kind : {study_kind::sweep, study_kind::monte_carlo, study_kind::mixed_failures}) {
    const std::vector<member_trace> traces = study<Model, Method>(kind, members, t1, opt);
    double attempts = 0;
    for (const member_trace& t : traces) attempts += double(t.size());
    const auto u4 = lanes_model::refilled_lanes(traces, 4);
    const auto u8 = lanes_model::refilled_lanes(traces, 8);
    const auto w32 = lanes_model::warps(traces, 32, 32);
    using lanes_model::work_totals;
    const auto cells = [](const lanes_model::utilization& u) {
      char s[96];
      std::snprintf(s, sizeof s, "%.2f / %.2f / %.2f / %.2f", u.of(&work_totals::attempts), u.of(&work_totals::iterations),
                    u.of(&work_totals::jacobians), u.of(&work_totals::factorizations));
      return std::string(s);
    };
    std::printf("| %s | %s | %.0f | %s | %s | %s |\n", Model::name, kind_name(kind), attempts / members,
                cells(u4).c_str(), cells(u8).c_str(), cells(w32).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int members = argc > 1 ? std::atoi(argv[1]) : 256;
  if (members < 1) {
    std::fprintf(stderr, "usage: lane_utilization [members >= 1]\n");
    return 2;
  }
  for (const method_kind method : {method_kind::bdf, method_kind::radau5}) {
    solver_options opt;  // rtol = atol = 1e-6, the formulation each method runs by default
    opt.method = method;
    // The default start projected onto each member's own constraints, however far: with parameters 5 %
    // off, Andrews' moves by more than init "auto" accepts (method/options.hpp).
    opt.init = init_mode::project;
    opt.form = method == method_kind::bdf ? formulation::ggl : formulation::index3;
    std::printf("\n%s on %s, rtol 1e-6, %d members per study. Utilization = useful / executed lane work: "
                "attempts / Newton iterations / Jacobians / LU factorizations.\n\n",
                method == method_kind::bdf ? "BDF" : "Radau IIA 5", formulation_name(opt.form), members);
    std::printf("| model | study | attempts per member | lanes W = 4 | lanes W = 8 | warps of 32, K = 32 |\n");
    std::printf("|---|---|---|---|---|---|\n");
    visit_method(method, [&]<class Method>() {
      report<models::pendulum, Method>(10.0, members, opt);
      report<models::double_pendulum, Method>(10.0, members, opt);
      report<models::slider_crank, Method>(0.1, members, opt);
      report<models::andrews, Method>(0.03, members, opt);
      report<models::car_axis, Method>(3.0, members, opt);
    });
  }
}
