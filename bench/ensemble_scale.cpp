// bench/ensemble_scale.cpp — how the CPU ensemble engine scales with members and threads, what a member
// costs in memory, and what the ensemble path costs over the single-member driver.
//
// Google Benchmark cases (wall time, UseRealTime; every figure bench/RESULTS.md reports is a ratio or
// a rate computed by bench/write_results.py from one run of bench/run_scale.sh):
//
//   scale/pendulum/serial/N:<N>        pendulum, ggl BDF, rtol = atol = 1e-6, t in [0, 0.5],
//                                      theta0 spread evenly over [0.9, 1.1] so members differ,
//                                      N = 1, 1e2, 1e3, 1e4, 1e5, 1e6
//   scale/andrews/serial/N:<N>         Andrews' squeezer, ggl BDF, rtol = atol = 1e-5, t in [0, 0.003],
//                                      motor torque mom spread over [1, 1 + 1e-3] x default,
//                                      N = 1, 1e2, 1e3, 1e4, 1e5
//   threads/<model>/omp/T:<T>/N:<N>    the omp backend with T = 1 and 2 threads (pendulum N = 1e4,
//                                      andrews N = 1e3)
//   path/andrews/ensemble/N:1000       solve_ensemble, serial backend, andrews N = 1000
//   path/andrews/solve_member/N:1000   1000 calls of solve_member with the same inputs
//
// Counters (per iteration, not rates): members, steps (accepted, summed over members), attempts
// (accepted + rejected), bytes_per_member (the API's bytes_per_member<Model>(save_count)), chunk
// (members per chunk the scheduler chose), peak_rss (getrusage ru_maxrss in bytes after the case),
// peak_rss_before (before it), io_bytes_per_member (the ensemble's inputs and result arrays per member,
// outside the chunk), failed (members whose status is not success), own_cores (this process's CPU time
// over wall time) and other_cores (the mean number of cores other processes kept busy while the case
// ran: machine busy time from /proc/stat minus this process's CPU time, over the case's wall time; the
// machine has 2 cores and other work may share them), bitwise_equal (path/ cases: 1 = checked).
//
//   threads/spin/omp/T:<T>             the bound for the thread ratio: the same omp launch over 4096
//                                      items of pure arithmetic (no memory traffic), T = 1 and 2; its
//                                      T:1 / T:2 time ratio is what the cores gave at that moment.
//
// Before any benchmark runs, and again after every timed path/ case, the ensemble path and the
// single-member path are checked to give bitwise identical results (status, all counters, final t and
// state, every saved output) on the path/ inputs; the program aborts if they do not.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/launch.hpp"
#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"

namespace {

using namespace lockstep;

constexpr int save_count = 4;  // save times t1/4, t1/2, 3 t1/4, t1

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return 1024.0 * static_cast<double>(u.ru_maxrss);  // Linux reports kilobytes
}

double own_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);  // all threads of the process
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

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

// What other processes took from the machine while one case ran.
class load_meter {
 public:
  load_meter()
      : wall_(std::chrono::steady_clock::now()), own_(own_cpu_seconds()), busy_(machine_busy_seconds()) {}
  void report(benchmark::State& state) const {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
    const double own = own_cpu_seconds() - own_, busy = machine_busy_seconds() - busy_;
    state.counters["other_cores"] = wall > 0.0 ? std::max(0.0, busy - own) / wall : NAN;
    state.counters["own_cores"] = wall > 0.0 ? own / wall : NAN;
  }

 private:
  std::chrono::steady_clock::time_point wall_;
  double own_, busy_;
};

template <class Model>
void set_times_and_tolerance(ensemble<Model>& e, double t1, double tol) {
  e.t0 = 0.0;
  e.t1 = t1;
  e.save_times.clear();
  for (int s = 1; s <= save_count; ++s) e.save_times.push_back(t1 * s / save_count);
  e.options.form = formulation::ggl;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = tol;
}

// Pendulum members differ in theta0 only, spread evenly over [0.9, 1.1] whatever N is, so the mean
// cost per member does not drift with N.
ensemble<models::pendulum> pendulum_ensemble(long n) {
  auto e = ensemble<models::pendulum>::with_defaults(n);
  for (long i = 0; i < n; ++i) {
    const double inputs[2] = {0.9 + 0.2 * (static_cast<double>(i) + 0.5) / static_cast<double>(n), 0.0};
    e.set_initial_inputs(i, inputs);
  }
  set_times_and_tolerance(e, 0.5, 1e-6);
  return e;
}

// Andrews has one published consistent start and no named inputs; members differ in the motor torque
// (which the constraints do not involve, so the start stays consistent).
ensemble<models::andrews> andrews_ensemble(long n) {
  auto e = ensemble<models::andrews>::with_defaults(n);
  for (long i = 0; i < n; ++i)
    e.params_of(i)[models::andrews::i_mom] *= 1.0 + 1e-3 * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
  set_times_and_tolerance(e, 0.003, 1e-5);
  return e;
}

template <class Model>
void report(benchmark::State& state, const ensemble_result<Model>& r, double rss_before) {
  double steps = 0.0, attempts = 0.0, failed = 0.0;
  for (long i = 0; i < r.members; ++i) {
    steps += static_cast<double>(r.counters[i].steps);
    attempts += static_cast<double>(r.counters[i].steps + r.counters[i].rejected_steps);
    failed += r.status[i] != member_status::success;
  }
  state.counters["members"] = static_cast<double>(r.members);
  state.counters["steps"] = steps;
  state.counters["attempts"] = attempts;
  state.counters["failed"] = failed;
  state.counters["bytes_per_member"] = static_cast<double>(bytes_per_member<Model>(r.save_count));
  state.counters["chunk"] = static_cast<double>(r.chunk_size);
  state.counters["peak_rss_before"] = rss_before;
  // Host storage of one member outside the scheduler's chunk: the ensemble's inputs and the result
  // (status, counters, saved outputs, final t and state), which peak RSS includes too.
  state.counters["io_bytes_per_member"] =
      static_cast<double>(sizeof(double) * (Model::n_params + 2 * Model::n) + sizeof(member_status) +
                          sizeof(member_counters) + sizeof(double) * (1 + state_layout<Model>::size * (1 + r.save_count)));
  state.counters["peak_rss"] = peak_rss_bytes();
}

template <class Model>
void run_ensemble(benchmark::State& state, ensemble<Model> (*make)(long), long n, backend where, int threads) {
  const double rss_before = peak_rss_bytes();
  const auto e = make(n);
  run_options run;
  run.where = where;
  run.threads = threads;
  ensemble_result<Model> r;
  const load_meter load;
  for (auto _ : state) {
    r = solve_ensemble(e, run);
    benchmark::DoNotOptimize(r.y_final.data());
  }
  load.report(state);
  report(state, r, rss_before);
}

// ---- the bound for the thread ratio -----------------------------------------------------------------

// Through the omp backend's own launch (blocks of members on its team), as the scheduler calls it.
struct spin_items final : detail::block_task {
  double* out;
  explicit spin_items(double* o) : out(o) {}
  void operator()(const long* members, long count) const override {
    for (long a = 0; a < count; ++a) {
      const long i = members[a];
      // A dependent chain of multiply-adds on registers only: the work scales with cores, nothing else.
      double x = 1.0 + 1e-9 * static_cast<double>(i);
      for (int k = 0; k < 20000; ++k) x = x * 0.999999 + 1e-6;
      out[i] = x;
    }
  }
};

void spin(benchmark::State& state, int threads) {
  constexpr long items = 4096;
  std::vector<long> active(items);
  for (long i = 0; i < items; ++i) active[static_cast<std::size_t>(i)] = i;
  std::vector<double> out(items);
  const load_meter load;
  for (auto _ : state) {
    const spin_items task(out.data());
    lockstep_omp_launch(threads, active.data(), items, &task);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  load.report(state);
  state.counters["members"] = static_cast<double>(items);
}

// ---- the ensemble path against the single-member path ---------------------------------------------

constexpr long path_members = 1000;

template <class Model>
std::vector<member_result<Model>> solve_each(const ensemble<Model>& e) {
  std::vector<member_result<Model>> out;
  out.reserve(static_cast<std::size_t>(e.members));
  for (long i = 0; i < e.members; ++i) {
    vec<double, Model::n> q0, v0;
    for (int j = 0; j < Model::n; ++j) {
      q0[j] = e.q0[i * Model::n + j];
      v0[j] = e.v0[i * Model::n + j];
    }
    out.push_back(solve_member<Model>(e.params_of(i), q0, v0, e.t0, e.t1, e.options, e.save_times));
  }
  return out;
}

bool same_bits(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

bool same_counters(const member_counters& a, const member_counters& b) {
  return a.steps == b.steps && a.rejected_steps == b.rejected_steps && a.newton_iterations == b.newton_iterations &&
         a.newton_failures == b.newton_failures && a.jacobian_evaluations == b.jacobian_evaluations &&
         a.lu_factorizations == b.lu_factorizations && a.model_evaluations == b.model_evaluations &&
         same_bits(&a.last_h, &b.last_h, sizeof(double)) && same_bits(&a.max_phi, &b.max_phi, sizeof(double)) &&
         same_bits(&a.max_velocity_residual, &b.max_velocity_residual, sizeof(double)) &&
         same_bits(&a.init_q_correction, &b.init_q_correction, sizeof(double)) &&
         same_bits(&a.init_v_correction, &b.init_v_correction, sizeof(double));
}

// Aborts unless every member of `r` equals the matching single-member result bit for bit.
template <class Model>
void require_bitwise_equal(const ensemble_result<Model>& r, const std::vector<member_result<Model>>& single,
                           const char* where) {
  constexpr int ny = state_layout<Model>::size;
  auto fail = [&](long i, const char* what) {
    std::fprintf(stderr, "ensemble_scale: %s: member %ld: ensemble and solve_member differ in %s\n", where, i, what);
    std::abort();
  };
  if (r.members != static_cast<long>(single.size())) fail(-1, "member count");
  for (long i = 0; i < r.members; ++i) {
    const auto& s = single[static_cast<std::size_t>(i)];
    if (r.status[i] != s.status) fail(i, "status");
    if (s.status != member_status::success) fail(i, "status (not success)");
    if (!same_counters(r.counters[i], s.counters)) fail(i, "counters");
    if (!same_bits(&r.t_final[i], &s.t_final, sizeof(double))) fail(i, "final t");
    if (!same_bits(&r.y_final[static_cast<std::size_t>(i) * ny], &s.y_final[0], ny * sizeof(double))) fail(i, "final state");
    if (static_cast<int>(s.y.size()) != r.save_count) fail(i, "number of saved points");
    for (int k = 0; k < r.save_count; ++k)
      for (int j = 0; j < ny; ++j) {
        const double a = r.y(i, k, j), b = s.y[static_cast<std::size_t>(k)][j];
        if (!same_bits(&a, &b, sizeof(double))) fail(i, "saved outputs");
      }
  }
}

struct path_reference {
  ensemble<models::andrews> e;
  ensemble_result<models::andrews> ensemble_run;
  std::vector<member_result<models::andrews>> single_runs;
};

path_reference& path() {
  static path_reference p = [] {
    path_reference r;
    r.e = andrews_ensemble(path_members);
    run_options run;  // serial
    r.ensemble_run = solve_ensemble(r.e, run);
    r.single_runs = solve_each(r.e);
    require_bitwise_equal(r.ensemble_run, r.single_runs, "startup check");
    return r;
  }();
  return p;
}

void path_ensemble(benchmark::State& state) {
  const double rss_before = peak_rss_bytes();
  const auto& p = path();
  run_options run;
  ensemble_result<models::andrews> r;
  const load_meter load;
  for (auto _ : state) {
    r = solve_ensemble(p.e, run);
    benchmark::DoNotOptimize(r.y_final.data());
  }
  load.report(state);
  require_bitwise_equal(r, p.single_runs, "path/andrews/ensemble");
  report(state, r, rss_before);
  state.counters["bitwise_equal"] = 1;  // reached only if the check passed
}

void path_single(benchmark::State& state) {
  const double rss_before = peak_rss_bytes();
  const auto& p = path();
  std::vector<member_result<models::andrews>> s;
  const load_meter load;
  for (auto _ : state) {
    s = solve_each(p.e);
    benchmark::DoNotOptimize(s.data());
  }
  load.report(state);
  require_bitwise_equal(p.ensemble_run, s, "path/andrews/solve_member");
  // The same counters as the ensemble case, from the single-member results.
  ensemble_result<models::andrews> as_result = p.ensemble_run;
  for (std::size_t i = 0; i < s.size(); ++i) {
    as_result.counters[i] = s[i].counters;
    as_result.status[i] = s[i].status;
  }
  as_result.chunk_size = 0;
  report(state, as_result, rss_before);
  state.counters["bitwise_equal"] = 1;
}

void register_all() {
  auto add = [](const std::string& name, auto fn, long n) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
    b->UseRealTime()->Unit(benchmark::kMillisecond);
    if (n >= 100000) b->Iterations(1);  // a single pass fills seconds to minutes
    return b;
  };
  for (long n : {1L, 100L, 1000L, 10000L, 100000L, 1000000L})
    add("scale/pendulum/serial/N:" + std::to_string(n),
        [n](benchmark::State& s) { run_ensemble(s, pendulum_ensemble, n, backend::serial, 0); }, n);
  for (long n : {1L, 100L, 1000L, 10000L, 100000L})
    add("scale/andrews/serial/N:" + std::to_string(n),
        [n](benchmark::State& s) { run_ensemble(s, andrews_ensemble, n, backend::serial, 0); }, n);
  for (int t : {1, 2}) {
    add("threads/pendulum/omp/T:" + std::to_string(t) + "/N:10000",
        [t](benchmark::State& s) { run_ensemble(s, pendulum_ensemble, 10000, backend::omp, t); }, 10000);
    add("threads/andrews/omp/T:" + std::to_string(t) + "/N:1000",
        [t](benchmark::State& s) { run_ensemble(s, andrews_ensemble, 1000, backend::omp, t); }, 1000);
    add("threads/spin/omp/T:" + std::to_string(t), [t](benchmark::State& s) { spin(s, t); }, 1);
  }
  add("path/andrews/ensemble/N:" + std::to_string(path_members), path_ensemble, path_members);
  add("path/andrews/solve_member/N:" + std::to_string(path_members), path_single, path_members);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Runs the bitwise check of the ensemble path against solve_member before anything is timed.
  (void)path();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
