// bench/peers/work_precision.cpp — work-precision data for lockstep against SUNDIALS IDA.
//
// For each problem (andrews on [0, 0.03], car_axis on [0, 3], slider_crank on [0, 1], double_pendulum
// from theta1 = theta2 = 0.5 on [0, 10]), an ensemble of perturbed members (bench/peers/
// peer_problems.hpp: every parameter within +-1 % of its default, a counter-based draw) is solved by
//   lockstep-bdf     lockstep BDF on ggl           (solve_ensemble, omp backend)
//   lockstep-radau5  lockstep Radau IIA 5 on index3 (solve_ensemble, omp backend)
//   lockstep-dopri5  lockstep Dormand-Prince 5(4) on index1, with the coordinate projection after each
//                    step (on request)
//   lockstep-bdf-lanes, lockstep-radau5-lanes, lockstep-dopri5-lanes  the same three through the built-in
//                    engine, which runs their members in SIMD lanes in a build for avx2 or avx512
//                    (lockstep/engine/lanes_engine.hpp; lockstep-bdf-lanes is in the solvers by default
//                    there, the others on request). Their results are compared with the one-member runs' bit for bit (every
//                    member's final positions, status and counters: "bitwise_equal"), and the lanes'
//                    utilization is recorded ("lane_utilization": lane-attempts of members over those
//                    executed: the engine's lanes_work, lockstep/engine/abi.h)
//   ida              SUNDIALS IDA on ggl            (bench/peers/ida_peer.hpp, one solve per member,
//                                                   members spread over as many threads by OpenMP)
// at rtol = atol = 10^-tol_min .. 10^-tol_max, with the same save times (save_count evenly spaced,
// t1 included). Accuracy is measured, per member, as significant correct digits of the final
// positions (peer_problems.hpp, significant_digits) against a reference computed for every member by
// lockstep's Radau IIA 5 at rtol = atol = reference_rtol. At rtol = 1e-13 every method works at the
// floor of its internal tolerance, 1000 eps (method/tolerance_calibration.hpp), where the calibration
// that makes its global error follow rtol no longer applies; Radau IIA 5, of fixed order 5, is the
// reference. The reference is cross-checked on a sample of members by Radau at
// ten times the reference tolerance, by BDF at the reference tolerance and by IDA at ida_check_rtol.
// On the first variant_sample members of that sample IDA also runs without the two settings its peer
// adds (ida_peer.hpp: lockstep's first step, h-scaled multiplier weights), to show what they are for.
//
// Timing: each (solver, tolerance) solves the whole ensemble `reps` times, interleaved (repetition,
// tolerance, solver) so that a disturbance of the machine spreads over all solvers, each run after a
// wait (at most idle_wait seconds) for an idle machine. A run is clean when other processes kept
// fewer than max_other_cores cores busy meanwhile (from /proc/stat); a (solver, tolerance) without a
// clean run is repeated up to `retries` times. The fastest clean run counts (other processes can only
// slow a run down). Wall time per member = that time / members. The counters are per member means (identical in every repetition: both codes are
// deterministic).
//
// Output: one JSON file (bench/write_performance.py turns it into docs/PERFORMANCE.md).
//
// Usage: work_precision --out FILE [--members N] [--reps R] [--threads T] [--tol-min 4] [--tol-max 10]
//                       [--problems andrews,car_axis,slider_crank,double_pendulum] [--seed S]
//                       [--spread 0.01] [--save-count 10] [--reference-rtol 1e-13]
//                       [--ida-check-rtol 1e-12] [--check-sample 20] [--variant-sample 10]
//                       [--members-PROBLEM N] [--reps-PROBLEM R] [--solvers lockstep-bdf,lockstep-radau5,lockstep-dopri5,lockstep-bdf-lanes,...,ida]
//                       [--no-reference] [--max-other-cores 0.1] [--retries 3] [--idle-wait 20]
//        work_precision --scaling --out FILE.json [--scaling-sizes 100,1000,10000,100000] [--scaling-tol 1e-6]
//                       [--scaling-t1 1] [--threads 2]   (time per member against N: run_scaling)
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/peers/ida_peer.hpp"
#include "bench/peers/peer_problems.hpp"
#include "lockstep/engine/builtin.hpp"
#include "lockstep/lockstep.hpp"

namespace {

using namespace lockstep;

struct settings {
  std::string out;
  long members = 1000;
  std::map<std::string, long> members_of;  // per-problem overrides
  int reps = 3;
  std::map<std::string, int> reps_of;      // per-problem overrides
  int threads = 2;
  int tol_min = 4, tol_max = 10;
  std::vector<std::string> problems = {"andrews", "car_axis", "slider_crank", "double_pendulum"};
  std::uint64_t seed = 1;
  double spread = 0.01;
  int save_count = 10;
  double reference_rtol = 1e-13;
  double ida_check_rtol = 1e-12;
  int check_sample = 20;
  std::size_t variant_sample = 10;  // members for the IDA variants without the peer's two settings
  double max_other_cores = 0.1;     // a run is clean when other processes kept fewer cores busy
  int retries = 3;                  // extra runs of a (solver, tolerance) without a clean repetition
  double idle_wait = 20.0;          // seconds to wait for an idle machine before each timed run
  // lockstep-bdf-lanes joins them where the build has lanes (parse); lockstep-radau5-lanes on request.
  std::vector<std::string> solvers = {"lockstep-bdf", "lockstep-radau5", "ida"};
  bool reference = true;  // false: no reference and no checks (scd null): for profiling runs
  // --scaling: time per member against the ensemble size instead of work-precision data.
  bool scaling = false;
  std::vector<long> scaling_sizes = {100, 1000, 10000, 100000};
  double scaling_tol = 1e-6;
  double scaling_t1 = 1.0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU time of the whole process (all threads): the work a run did, which other processes on the
// machine disturb far less than its wall time.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// What one solver run over the ensemble produced, in solver-neutral form.
// Busy core-seconds of the whole machine since boot (first line of /proc/stat); NaN if unreadable.
double machine_busy_seconds() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return NAN;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
                              &irq, &softirq, &steal);
  std::fclose(f);
  if (got < 7) return NAN;
  return static_cast<double>(user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Brackets one timed run: wall and CPU time, and the mean number of cores other processes kept busy
// meanwhile (machine busy time minus this process's CPU time, over the wall time).
class run_meter {
 public:
  run_meter() : wall_(std::chrono::steady_clock::now()), cpu_(process_cpu_seconds()), busy_(machine_busy_seconds()) {}
  void stop(double& wall, double& cpu, double& other_cores) const {
    wall = seconds_since(wall_);
    cpu = process_cpu_seconds() - cpu_;
    const double busy = machine_busy_seconds() - busy_;
    other_cores = wall > 0.0 ? std::max(0.0, busy - cpu) / wall : NAN;
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_, busy_;
};

// Waits, for at most max_seconds, until other processes keep fewer than max_other_cores cores busy
// (sampled over 1 s while this process sleeps); returns whether the machine went idle.
bool wait_until_idle(double max_seconds, double max_other_cores) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const double before = machine_busy_seconds();
    usleep(1000000);
    const double busy = machine_busy_seconds() - before;
    if (!(busy == busy) || busy < max_other_cores) return true;
    if (seconds_since(start) >= max_seconds) return false;
  }
}

struct run_outcome {
  double seconds = 0.0;
  double cpu_seconds = 0.0;
  double other_cores = 0.0;
  std::vector<double> q_final;  // members x n (NaN for failed members)
  std::vector<char> ok;
  // Per member counters.
  std::vector<long> steps, rejected, newton, lu, jac, model;
  std::string first_failure;
  double lane_utilization = NAN;  // in lanes: lane-attempts of members over those executed
};

// Whether two runs gave every member the same status, counters and final positions, bit for bit.
bool same_bits(const run_outcome& a, const run_outcome& b) {
  auto same = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
  };
  return same(a.q_final, b.q_final) && same(a.ok, b.ok) && same(a.steps, b.steps) && same(a.rejected, b.rejected) &&
         same(a.newton, b.newton) && same(a.lu, b.lu) && same(a.jac, b.jac) && same(a.model, b.model);
}

template <class Model>
void resize(run_outcome& o, long members) {
  const auto n = static_cast<std::size_t>(members);
  o.q_final.assign(n * Model::n, NAN);
  o.ok.assign(n, 0);
  for (auto* v : {&o.steps, &o.rejected, &o.newton, &o.lu, &o.jac, &o.model}) v->assign(n, 0);
}

// through: the engine to solve with; nullptr: Model's own engine table, compiled here (one member at a
// time, as solve_ensemble<Model> runs it).
template <class Model>
run_outcome run_lockstep(const ensemble<Model>& base, method_kind method, double tol, int threads,
                         const engine* through = nullptr) {
  ensemble<Model> e = base;
  e.options = solver_options{};
  e.options.method = method;
  e.options.form = method == method_kind::bdf ? formulation::ggl : formulation::index3;
  if (method == method_kind::dopri5) {  // the study file's defaults for the explicit method
    e.options.form = formulation::index1;
    e.options.projection = projection_kind::coordinate;
  }
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = tol;
  e.options.init = peers::initialization;
  run_options run;
  run.where = backend::omp;
  run.threads = threads;
  const run_meter meter;
  const ensemble_result<Model> r =
      through != nullptr ? ensemble_result<Model>(solve_ensemble(*through, e, run)) : solve_ensemble(e, run);
  run_outcome o;
  meter.stop(o.seconds, o.cpu_seconds, o.other_cores);
  resize<Model>(o, e.members);
  for (long i = 0; i < e.members; ++i) {
    const auto& c = r.counters[static_cast<std::size_t>(i)];
    o.steps[i] = c.steps;
    o.rejected[i] = c.rejected_steps;
    o.newton[i] = c.newton_iterations;
    o.lu[i] = c.lu_factorizations;
    o.jac[i] = c.jacobian_evaluations;
    o.model[i] = c.model_evaluations;
    o.ok[i] = r.status[static_cast<std::size_t>(i)] == member_status::success;
    if (o.ok[i]) {
      for (int j = 0; j < Model::n; ++j) o.q_final[i * Model::n + j] = r.y_final[i * state_layout<Model>::size + j];
    } else if (o.first_failure.empty()) {
      o.first_failure = "member " + std::to_string(i) + ": " + status_name(r.status[static_cast<std::size_t>(i)]);
    }
  }
  return o;
}

// IDA over the members `which` (all members when empty), one workspace per thread.
template <class Model>
run_outcome run_ida(const ensemble<Model>& e, double tol, int threads, const std::vector<long>& which = {},
                    peers::ida_options opt = {}) {
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  run_outcome o;
  resize<Model>(o, e.members);
  std::vector<long> members = which;
  if (members.empty()) {
    members.resize(static_cast<std::size_t>(e.members));
    std::iota(members.begin(), members.end(), 0L);
  }
  const long count = static_cast<long>(members.size());
  std::vector<std::string> failures(static_cast<std::size_t>(e.members));
  const run_meter meter;
#pragma omp parallel num_threads(threads)
  {
    peers::ida_ggl_solver<Model> solver;
#pragma omp for schedule(dynamic, 1)
    for (long a = 0; a < count; ++a) {
      const long i = members[static_cast<std::size_t>(a)];
      vec<double, Model::n> q0, v0;
      for (int j = 0; j < Model::n; ++j) {
        q0[j] = e.q0[i * Model::n + j];
        v0[j] = e.v0[i * Model::n + j];
      }
      const auto r = solver.solve(e.params_of(i), q0, v0, e.t0, e.t1, opt, e.save_times);
      const auto& c = r.counters;
      o.steps[i] = c.steps;
      o.rejected[i] = c.error_test_failures + c.newton_failures;
      o.newton[i] = c.newton_iterations;
      o.lu[i] = c.lu_factorizations;
      o.jac[i] = c.jacobian_evaluations;
      o.model[i] = c.residual_evaluations;
      o.ok[i] = r.success && r.t_final == e.t1;
      if (o.ok[i])
        for (int j = 0; j < Model::n; ++j) o.q_final[i * Model::n + j] = r.y_final[state_layout<Model>::q + j];
      else
        failures[static_cast<std::size_t>(i)] = std::string(peers::ida_flag_name(r.flag)) + " at t = " +
                                                std::to_string(r.t_final) + " (" + r.message + ")";
    }
  }
  meter.stop(o.seconds, o.cpu_seconds, o.other_cores);
  for (long i = 0; i < e.members && o.first_failure.empty(); ++i)
    if (!failures[static_cast<std::size_t>(i)].empty()) o.first_failure = "member " + std::to_string(i) + ": " + failures[static_cast<std::size_t>(i)];
  return o;
}

// ---- a small JSON writer -----------------------------------------------------------------------------

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      r += ' ';
    } else {
      r += c;
    }
  }
  return r + "\"";
}

// Quantile (type 7) of the finite values; NaN when there are none.
double quantile(std::vector<double> x, double p) {
  x.erase(std::remove_if(x.begin(), x.end(), [](double v) { return !std::isfinite(v); }), x.end());
  if (x.empty()) return NAN;
  std::sort(x.begin(), x.end());
  const double h = (static_cast<double>(x.size()) - 1.0) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, x.size() - 1);
  return x[lo] + (h - static_cast<double>(lo)) * (x[hi] - x[lo]);
}

double mean_of(const std::vector<long>& v, const std::vector<char>& ok) {
  double s = 0.0;
  long n = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (ok[i]) {
      s += static_cast<double>(v[i]);
      ++n;
    }
  return n > 0 ? s / static_cast<double>(n) : NAN;
}

// Per member digits of `o` against the reference positions (members outside `which` are NaN).
template <class Model>
std::vector<double> digits_against(const run_outcome& o, const std::vector<double>& ref, double atol_over_rtol) {
  const std::size_t members = o.ok.size();
  std::vector<double> d(members, NAN);
  for (std::size_t i = 0; i < members; ++i)
    if (o.ok[i] && std::isfinite(ref[i * Model::n]))
      d[i] = peers::significant_digits<Model::n>(&o.q_final[i * Model::n], &ref[i * Model::n], atol_over_rtol);
  return d;
}

std::string digits_json(const std::vector<double>& d) {
  long finite = 0;
  for (double x : d) finite += std::isfinite(x) ? 1 : 0;
  std::ostringstream s;
  s << "{\"count\": " << finite << ", \"min\": " << json_number(quantile(d, 0.0))
    << ", \"p10\": " << json_number(quantile(d, 0.1)) << ", \"median\": " << json_number(quantile(d, 0.5))
    << ", \"p90\": " << json_number(quantile(d, 0.9)) << ", \"max\": " << json_number(quantile(d, 1.0)) << "}";
  return s.str();
}

long failures(const run_outcome& o, const std::vector<long>& which) {
  long f = 0;
  if (which.empty()) {
    for (char k : o.ok) f += k ? 0 : 1;
  } else {
    for (long i : which) f += o.ok[static_cast<std::size_t>(i)] ? 0 : 1;
  }
  return f;
}

// ---- one problem ---------------------------------------------------------------------------------------

// The work-precision runs of one problem, appended to js (which holds the problem's opening fields);
// ref_q: the reference's final positions (NaN when there is none).
template <class Model>
std::string run_solvers(const settings& s, const std::string& name, const ensemble<Model>& e,
                        const std::vector<double>& ref_q, std::ostringstream& js) {
  struct solver_entry {
    const char* name;
    std::function<run_outcome(double)> run;
  };
  const auto in_lanes = [&](method_kind method, double tol) {
    const engine* lanes = find_builtin_engine(Model::name);
    const lanes_work_counts before = lanes->lanes_work();
    run_outcome o = run_lockstep(e, method, tol, s.threads, lanes);
    const lane_counts run = (lanes->lanes_work() - before).attempts;
    if (run.executed > 0) o.lane_utilization = run.utilization();
    return o;
  };
  const std::vector<solver_entry> all = {
      {"lockstep-bdf", [&](double tol) { return run_lockstep(e, method_kind::bdf, tol, s.threads); }},
      {"lockstep-radau5", [&](double tol) { return run_lockstep(e, method_kind::radau5, tol, s.threads); }},
      {"lockstep-bdf-lanes", [&](double tol) { return in_lanes(method_kind::bdf, tol); }},
      {"lockstep-radau5-lanes", [&](double tol) { return in_lanes(method_kind::radau5, tol); }},
      {"lockstep-dopri5", [&](double tol) { return run_lockstep(e, method_kind::dopri5, tol, s.threads); }},
      {"lockstep-dopri5-lanes", [&](double tol) { return in_lanes(method_kind::dopri5, tol); }},
      {"ida", [&](double tol) { return run_ida(e, tol, s.threads); }},
  };
  std::vector<solver_entry> solvers;
  for (const auto& entry : all)
    if (std::find(s.solvers.begin(), s.solvers.end(), entry.name) != s.solvers.end()) solvers.push_back(entry);
  struct cell {
    std::vector<double> times, cpu_times, other_cores;
    run_outcome last;
  };
  std::map<std::pair<int, int>, cell> cells;  // (solver, tol exponent)
  const int reps = s.reps_of.count(name) ? s.reps_of.at(name) : s.reps;
  auto timed_run = [&](int k, int te, const char* what) {
    wait_until_idle(s.idle_wait, s.max_other_cores);
    run_outcome o = solvers[static_cast<std::size_t>(k)].run(std::pow(10.0, -te));
    cell& c = cells[{k, te}];
    c.times.push_back(o.seconds);
    c.cpu_times.push_back(o.cpu_seconds);
    c.other_cores.push_back(o.other_cores);
    std::fprintf(stderr, "%s: %s tol 1e-%d %-16s %8.3f s wall %8.3f s cpu, other cores %.2f\n", name.c_str(), what, te,
                 solvers[static_cast<std::size_t>(k)].name, o.seconds, o.cpu_seconds, o.other_cores);
    c.last = std::move(o);
  };
  for (int rep = 0; rep < reps; ++rep)
    for (int te = s.tol_min; te <= s.tol_max; ++te)
      for (int k = 0; k < static_cast<int>(solvers.size()); ++k) timed_run(k, te, ("rep " + std::to_string(rep)).c_str());
  // Runs that other processes disturbed in every repetition are repeated (after a wait for an idle
  // machine), at most `retries` times: the fastest clean run is the one reported.
  auto clean = [&](const cell& c) {
    for (double o : c.other_cores)
      if (o < s.max_other_cores) return true;
    return false;
  };
  for (int attempt = 0; attempt < s.retries; ++attempt)
    for (int te = s.tol_min; te <= s.tol_max; ++te)
      for (int k = 0; k < static_cast<int>(solvers.size()); ++k)
        if (!clean(cells[{k, te}])) timed_run(k, te, ("retry " + std::to_string(attempt)).c_str());
  js << ", \"runs\": [";
  bool first = true;
  for (int k = 0; k < static_cast<int>(solvers.size()); ++k)
    for (int te = s.tol_min; te <= s.tol_max; ++te) {
      const cell& c = cells[{k, te}];
      const run_outcome& o = c.last;
      const double tol = std::pow(10.0, -te);
      const std::vector<double> d = digits_against<Model>(o, ref_q, 1.0);  // atol / rtol = 1
      js << (first ? "" : ", ") << "{\"solver\": " << json_string(solvers[static_cast<std::size_t>(k)].name)
         << ", \"tol\": " << json_number(tol) << ", \"times\": [";
      for (std::size_t r = 0; r < c.times.size(); ++r) js << (r ? ", " : "") << json_number(c.times[r]);
      js << "], \"cpu_times\": [";
      for (std::size_t r = 0; r < c.cpu_times.size(); ++r) js << (r ? ", " : "") << json_number(c.cpu_times[r]);
      js << "], \"other_cores\": [";
      for (std::size_t r = 0; r < c.other_cores.size(); ++r) js << (r ? ", " : "") << json_number(c.other_cores[r]);
      // The fastest clean run; the fastest of all when none is clean ("clean": false).
      double best = INFINITY, best_any = INFINITY;
      for (std::size_t r = 0; r < c.times.size(); ++r) {
        best_any = std::min(best_any, c.times[r]);
        if (c.other_cores[r] < s.max_other_cores) best = std::min(best, c.times[r]);
      }
      js << "], \"clean\": " << (std::isfinite(best) ? "true" : "false")
         << ", \"best_seconds\": " << json_number(std::isfinite(best) ? best : best_any)
         << ", \"failed\": " << failures(o, {}) << ", \"first_failure\": " << json_string(o.first_failure)
         << ", \"steps\": " << json_number(mean_of(o.steps, o.ok)) << ", \"rejected\": " << json_number(mean_of(o.rejected, o.ok))
         << ", \"newton\": " << json_number(mean_of(o.newton, o.ok)) << ", \"lu\": " << json_number(mean_of(o.lu, o.ok))
         << ", \"jac\": " << json_number(mean_of(o.jac, o.ok)) << ", \"model\": " << json_number(mean_of(o.model, o.ok))
         << ", \"scd\": " << digits_json(d);
      // A method in lanes against the method one member at a time, from the same run.
      const std::string solver = solvers[static_cast<std::size_t>(k)].name;
      if (solver.ends_with("-lanes"))
        for (int b = 0; b < static_cast<int>(solvers.size()); ++b)
          if (solvers[static_cast<std::size_t>(b)].name == solver.substr(0, solver.size() - 6))
            js << ", \"bitwise_equal\": " << (same_bits(o, cells[{b, te}].last) ? "true" : "false")
               << ", \"lane_utilization\": " << json_number(o.lane_utilization);
      js << "}";
      first = false;
    }
  js << "]}";
  return js.str();
}

template <class Model>
std::string run_problem(const settings& s, const std::string& name, double t1, const double* inputs) {
  const long members = s.members_of.count(name) ? s.members_of.at(name) : s.members;
  const ensemble<Model> e = peers::perturbed_ensemble<Model>(members, t1, inputs, s.seed, s.spread, s.save_count);
  std::ostringstream js;
  js << "{\"problem\": " << json_string(name) << ", \"t1\": " << json_number(t1) << ", \"members\": " << members
     << ", \"reps\": " << (s.reps_of.count(name) ? s.reps_of.at(name) : s.reps)
     << ", \"n\": " << Model::n << ", \"m\": " << Model::m << ", \"save_count\": " << s.save_count
     << ", \"spread\": " << json_number(s.spread) << ", \"seed\": " << s.seed;
  if constexpr (Model::n_inputs > 0) {
    if (inputs != nullptr) {
      js << ", \"inputs\": {";
      for (int j = 0; j < Model::n_inputs; ++j)
        js << (j ? ", " : "") << json_string(Model::inputs[j].name) << ": " << json_number(inputs[j]);
      js << "}";
    }
  }

  // ---- the reference, for every member ----
  if (!s.reference) {
    run_outcome none;
    resize<Model>(none, members);
    return run_solvers(s, name, e, none.q_final, js);
  }
  std::fprintf(stderr, "%s: reference (radau5, rtol %.0e, %ld members)\n", name.c_str(), s.reference_rtol, members);
  const run_outcome ref = run_lockstep(e, method_kind::radau5, s.reference_rtol, s.threads);
  const std::vector<double>& ref_q = ref.q_final;
  js << ", \"reference\": {\"solver\": \"lockstep-radau5\", \"rtol\": " << json_number(s.reference_rtol)
     << ", \"failed\": " << failures(ref, {}) << ", \"first_failure\": " << json_string(ref.first_failure)
     << ", \"seconds\": " << json_number(ref.seconds) << ", \"mean_steps\": " << json_number(mean_of(ref.steps, ref.ok));

  // ---- cross-checks on a sample ----
  std::vector<long> sample;
  const long stride = std::max(1L, members / std::max(1, s.check_sample));
  for (long i = 0; i < members && static_cast<int>(sample.size()) < s.check_sample; i += stride) sample.push_back(i);
  ensemble<Model> sub = e;  // the sampled members only, for the lockstep checks
  sub.members = static_cast<long>(sample.size());
  sub.params.clear();
  sub.q0.clear();
  sub.v0.clear();
  for (long i : sample) {
    sub.params.insert(sub.params.end(), e.params_of(i), e.params_of(i) + Model::n_params);
    sub.q0.insert(sub.q0.end(), e.q0.begin() + i * Model::n, e.q0.begin() + (i + 1) * Model::n);
    sub.v0.insert(sub.v0.end(), e.v0.begin() + i * Model::n, e.v0.begin() + (i + 1) * Model::n);
  }
  std::vector<double> sub_ref;
  for (long i : sample) sub_ref.insert(sub_ref.end(), ref_q.begin() + i * Model::n, ref_q.begin() + (i + 1) * Model::n);
  auto check = [&](const char* what, const run_outcome& o, const std::vector<double>& against, const std::vector<long>& which) {
    // Agreement digits with the plain mixed measure (floor 1): the checks compare two accurate solutions.
    std::vector<double> d = digits_against<Model>(o, against, 1.0);
    if (!which.empty()) {
      std::vector<double> picked;
      for (long i : which) picked.push_back(d[static_cast<std::size_t>(i)]);
      d = picked;
    }
    std::fprintf(stderr, "%s: check %s: agreement digits min %.2f median %.2f, failed %ld\n", name.c_str(), what,
                 quantile(d, 0.0), quantile(d, 0.5), failures(o, which));
    return std::string("{\"what\": ") + json_string(what) + ", \"sample\": " + std::to_string(sample.size()) +
           ", \"failed\": " + std::to_string(failures(o, which)) + ", \"first_failure\": " + json_string(o.first_failure) +
           ", \"digits\": " + digits_json(d) + "}";
  };
  char label[128];
  js << ", \"checks\": [";
  std::snprintf(label, sizeof label, "lockstep-radau5 rtol %.0e", 10.0 * s.reference_rtol);
  js << check(label, run_lockstep(sub, method_kind::radau5, 10.0 * s.reference_rtol, s.threads), sub_ref, {});
  std::snprintf(label, sizeof label, "lockstep-bdf rtol %.0e", s.reference_rtol);
  js << ", " << check(label, run_lockstep(sub, method_kind::bdf, s.reference_rtol, s.threads), sub_ref, {});
  std::snprintf(label, sizeof label, "ida rtol %.0e", s.ida_check_rtol);
  js << ", " << check(label, run_ida(e, s.ida_check_rtol, s.threads, sample), ref_q, sample);
  js << "]}";

  // ---- IDA without the two settings its peer adds (ida_peer.hpp), on a sample ----
  std::vector<long> few(sample.begin(), sample.begin() + std::min<std::size_t>(sample.size(), s.variant_sample));
  struct variant {
    const char* name;
    bool lockstep_initial_step, scale_multipliers_by_h;
  };
  const variant variants[] = {{"IDA's first step, plain weights", false, false},
                              {"lockstep's first step, plain weights", true, false},
                              {"IDA's first step, h-scaled weights", false, true}};
  js << ", \"ida_variants\": [";
  bool first_variant = true;
  for (const variant& v : variants)
    for (int te = s.tol_min; te <= s.tol_max; ++te) {
      peers::ida_options o;
      o.lockstep_initial_step = v.lockstep_initial_step;
      o.scale_multipliers_by_h = v.scale_multipliers_by_h;
      const run_outcome r = run_ida(e, std::pow(10.0, -te), s.threads, few, o);
      std::vector<double> d = digits_against<Model>(r, ref_q, 1.0), picked;
      for (long i : few) picked.push_back(d[static_cast<std::size_t>(i)]);
      js << (first_variant ? "" : ", ") << "{\"variant\": " << json_string(v.name) << ", \"tol\": "
         << json_number(std::pow(10.0, -te)) << ", \"sample\": " << few.size() << ", \"failed\": " << failures(r, few)
         << ", \"first_failure\": " << json_string(r.first_failure) << ", \"scd\": " << digits_json(picked) << "}";
      first_variant = false;
    }
  js << "]";
  return run_solvers(s, name, e, ref_q, js);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

settings parse(int argc, char** argv) {
  settings s;
  if (builtin_lanes() > 0) s.solvers.insert(s.solvers.begin() + 2, "lockstep-bdf-lanes");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
      return argv[++i];
    };
    if (a == "--out") s.out = value();
    else if (a == "--members") s.members = std::stol(value());
    else if (a.rfind("--members-", 0) == 0) s.members_of[a.substr(10)] = std::stol(value());
    else if (a.rfind("--reps-", 0) == 0) s.reps_of[a.substr(7)] = std::stoi(value());
    else if (a == "--reps") s.reps = std::stoi(value());
    else if (a == "--threads") s.threads = std::stoi(value());
    else if (a == "--tol-min") s.tol_min = std::stoi(value());
    else if (a == "--tol-max") s.tol_max = std::stoi(value());
    else if (a == "--problems") s.problems = split(value(), ',');
    else if (a == "--seed") s.seed = std::stoull(value());
    else if (a == "--spread") s.spread = std::stod(value());
    else if (a == "--save-count") s.save_count = std::stoi(value());
    else if (a == "--reference-rtol") s.reference_rtol = std::stod(value());
    else if (a == "--ida-check-rtol") s.ida_check_rtol = std::stod(value());
    else if (a == "--check-sample") s.check_sample = std::stoi(value());
    else if (a == "--solvers") s.solvers = split(value(), ',');
    else if (a == "--variant-sample") s.variant_sample = std::stoul(value());
    else if (a == "--max-other-cores") s.max_other_cores = std::stod(value());
    else if (a == "--retries") s.retries = std::stoi(value());
    else if (a == "--idle-wait") s.idle_wait = std::stod(value());
    else if (a == "--no-reference") s.reference = false;
    else if (a == "--scaling") s.scaling = true;
    else if (a == "--scaling-sizes") {
      s.scaling_sizes.clear();
      for (const std::string& n : split(value(), ',')) s.scaling_sizes.push_back(std::stol(n));
    } else if (a == "--scaling-tol") s.scaling_tol = std::stod(value());
    else if (a == "--scaling-t1") s.scaling_t1 = std::stod(value());
    else throw std::invalid_argument("unknown argument " + a);
  }
  if (s.out.empty()) throw std::invalid_argument("--out FILE is required");
  return s;
}


// ---- scaling ----------------------------------------------------------------------------------------
// Time per member against the ensemble size N for lockstep (both methods, `threads` threads, and
// Radau IIA 5 on one thread: the thread scaling) and IDA (`threads` threads), on the regular double
// pendulum over [0, scaling_t1] at rtol = atol = scaling_tol. The horizon is short so that N = 10^5
// fits in minutes; the members are those of the work-precision ensembles (perturbed parameters). Each
// (solver, N) runs once after a wait for an idle machine; wall, CPU and other processes' cores are
// recorded as in the work-precision runs.
std::string run_scaling(const settings& s) {
  using Model = models::double_pendulum;
  const double inputs[4] = {0.5, 0.5, 0.0, 0.0};
  std::ostringstream js;
  js << "{\"problem\": \"double_pendulum\", \"t1\": " << json_number(s.scaling_t1) << ", \"tol\": "
     << json_number(s.scaling_tol) << ", \"threads\": " << s.threads << ", \"save_count\": " << s.save_count
     << ", \"runs\": [";
  struct solver_case {
    const char* name;
    int threads;
  };
  const solver_case cases[] = {{"lockstep-radau5", s.threads}, {"lockstep-radau5", 1}, {"lockstep-bdf", s.threads}, {"ida", s.threads}};
  auto run_case = [&](const ensemble<Model>& e, const solver_case& c) {
    const std::string name = c.name;
    if (name == "ida") return run_ida(e, s.scaling_tol, c.threads);
    return run_lockstep(e, name == "lockstep-bdf" ? method_kind::bdf : method_kind::radau5, s.scaling_tol, c.threads);
  };
  // One untimed small run of each case first: the thread pools, the allocator's arenas and
  // IDA's library pages are then warm, so the first timed case (the smallest N) does not pay for them.
  const ensemble<Model> warm = peers::perturbed_ensemble<Model>(16, s.scaling_t1, inputs, s.seed, s.spread, s.save_count);
  for (const solver_case& c : cases) run_case(warm, c);
  bool first = true;
  for (long members : s.scaling_sizes) {
    const ensemble<Model> e = peers::perturbed_ensemble<Model>(members, s.scaling_t1, inputs, s.seed, s.spread, s.save_count);
    for (const solver_case& c : cases) {
      wait_until_idle(s.idle_wait, s.max_other_cores);
      const run_outcome o = run_case(e, c);
      std::fprintf(stderr, "scaling: N %ld %-16s %d thread(s) %9.3f s wall %9.3f s cpu, other cores %.2f\n", members,
                   c.name, c.threads, o.seconds, o.cpu_seconds, o.other_cores);
      js << (first ? "" : ", ") << "{\"solver\": " << json_string(c.name) << ", \"threads\": " << c.threads
         << ", \"members\": " << members << ", \"seconds\": " << json_number(o.seconds)
         << ", \"cpu_seconds\": " << json_number(o.cpu_seconds) << ", \"other_cores\": " << json_number(o.other_cores)
         << ", \"failed\": " << failures(o, {}) << ", \"steps\": " << json_number(mean_of(o.steps, o.ok)) << "}";
      first = false;
    }
  }
  js << "]}";
  return js.str();
}

}  // namespace

// The work-precision data (or with --scaling the scaling data) as one JSON text.
static std::string run_all(const settings& s, std::chrono::steady_clock::time_point start) {
  std::ostringstream js;
  if (s.scaling) {
    js << "{\"sundials_version\": " << json_string(SUNDIALS_VERSION) << ", \"scaling\": " << run_scaling(s)
       << ", \"seconds\": " << json_number(seconds_since(start)) << "}\n";
    return js.str();
  }
  js << "{\"threads\": " << s.threads << ", \"reps\": " << s.reps << ", \"tol_min\": " << s.tol_min
     << ", \"tol_max\": " << s.tol_max << ", \"sundials_version\": " << json_string(SUNDIALS_VERSION)
     << ", \"idle_wait\": " << json_number(s.idle_wait) << ", \"retries\": " << s.retries
     << ", \"max_other_cores\": " << json_number(s.max_other_cores) << ", \"bdf_lanes\": " << builtin_lanes()
     << ", \"problems\": [";
  bool first = true;
  for (const std::string& p : s.problems) {
    std::string one;
    if (p == "andrews") {
      one = run_problem<models::andrews>(s, p, 0.03, nullptr);
    } else if (p == "car_axis") {
      one = run_problem<models::car_axis>(s, p, 3.0, nullptr);
    } else if (p == "slider_crank") {
      one = run_problem<models::slider_crank>(s, p, 1.0, nullptr);
    } else if (p == "double_pendulum") {
      const double inputs[4] = {0.5, 0.5, 0.0, 0.0};  // regular motion
      one = run_problem<models::double_pendulum>(s, p, 10.0, inputs);
    } else {
      throw std::invalid_argument("unknown problem " + p);
    }
    js << (first ? "" : ", ") << one;
    first = false;
  }
  js << "], \"seconds\": " << json_number(seconds_since(start)) << "}\n";
  return js.str();
}

int main(int argc, char** argv) {
  settings s;
  try {
    s = parse(argc, argv);
    for (const std::string& p : s.problems)
      if (p != "andrews" && p != "car_axis" && p != "slider_crank" && p != "double_pendulum")
        throw std::invalid_argument("unknown problem " + p);
    const std::string known[] = {"lockstep-bdf", "lockstep-radau5", "lockstep-dopri5", "lockstep-bdf-lanes",
                                 "lockstep-radau5-lanes", "lockstep-dopri5-lanes", "ida"};
    for (const std::string& solver : s.solvers)
      if (std::find(std::begin(known), std::end(known), solver) == std::end(known))
        throw std::invalid_argument("--solvers: unknown solver " + solver);
    for (const std::string& solver : s.solvers)
      if (solver.ends_with("-lanes") && builtin_lanes() == 0)
        throw std::invalid_argument(
            "--solvers " + solver + ": this build runs members one at a time (lanes need a build for avx2 or "
            "avx512, LOCKSTEP_INSTRUCTION_SET, and LOCKSTEP_LANES unset or not 0)");
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "work_precision: %s\n", ex.what());
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string text = run_all(s, start);
  std::FILE* f = std::fopen(s.out.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "work_precision: cannot write %s\n", s.out.c_str());
    return 3;
  }
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::fprintf(stderr, "work_precision: wrote %s after %.1f s\n", s.out.c_str(), seconds_since(start));
  return 0;
}
