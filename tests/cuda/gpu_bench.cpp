// tests/cuda/gpu_bench.cpp — the GPU side of scripts/gpu-check.sh: what the device is, a small ensemble
// for compute-sanitizer and Nsight Compute, and members per second of the cuda backend against the omp
// backend on every core of the machine.
//
//   gpu_bench info                   device name, compute capability, driver and runtime versions
//   gpu_bench small                  every device model, BDF and Radau IIA 5, fused and forced split (with
//                                    split projections for andrews), tsit5 and, on andrews, auto
//                                    (fused: they have no split path), 100 members in chunks of 64:
//                                    every kernel of the backend, small enough for compute-sanitizer;
//                                    statuses against the serial backend
//   gpu_bench one MODEL MEMBERS [radau5|tsit5|dopri5|auto]
//                                    one cuda run (what Nsight Compute profiles): BDF on ggl, or Radau
//                                    IIA 5 on index3, or an explicit pair on index1 or auto on index3,
//                                    both with coordinate projection
//   gpu_bench rate BUDGET_S MODEL... members per second, cuda against the best CPU path of the same
//                                    build on every core: the omp backend with the SIMD lanes of the
//                                    build's instruction set (a build for avx512 has 8; a baseline
//                                    build none, and the line says "lanes 0"). BDF on ggl, Radau IIA 5
//                                    on index3 and tsit5 on index1 (coordinate projection after every
//                                    step, as study files run it), at 10^4, 10^5 and 10^6 members; each rate the
//                                    least time of three runs where a run takes under 5 s (one run
//                                    otherwise; the line says how many). A size whose cuda run would
//                                    overrun the model and method's share of BUDGET_S (estimated from
//                                    the previous size) is recorded as skipped. The omp backend runs
//                                    at most as many members as three runs fit in a sixth of that
//                                    share (and 15 s), estimated from a run of 1,000: its rate is flat
//                                    in the ensemble size once every core has a few hundred members.
//                                    Each line gives the accepted steps per member (the mean over the
//                                    cuda run), which an Nsight Compute profile of `one` turns into
//                                    bytes and operations per member-step.
//
// Settings (one per model, as bench/ensemble_scale.cpp; rtol = atol on both backends): pendulum and
// double pendulum with rtol 1e-6, t in [0, 0.5] (non-chaotic there); andrews with rtol 1e-5 over its
// standard interval [0, 0.03] (Hairer & Wanner's test set; `small` and `one` keep [0, 0.003], short
// enough for compute-sanitizer); members differ in their first parameter by up to 1e-3. Exit status:
// 0, or 1 when a run throws or a cuda status differs from the serial backend's.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "kernels/cuda/ensemble_cuda.hpp"  // lockstep::cuda::device_count
#include "lockstep/lockstep.hpp"
#include "tests/support/builtin_solve.hpp"

namespace {

using namespace lockstep;
using lockstep::test::solve_builtin;  // every model here is built in

// Each method's formulation here: BDF's ggl, Radau IIA 5's and auto's index3, the explicit pairs'
// index1 (the only one they take); the explicit pairs and auto with the projection after every step
// that study files give them.
bool needs_projection(method_kind method) { return is_explicit_pair(method) || method == method_kind::automatic; }
formulation formulation_of(method_kind method) {
  if (method == method_kind::bdf) return formulation::ggl;
  return is_explicit_pair(method) ? formulation::index1 : formulation::index3;
}

template <class Model>
ensemble<Model> bench_ensemble(long members, method_kind method = method_kind::bdf, formulation form = formulation::ggl,
                               bool standard_interval = false) {
  auto e = ensemble<Model>::with_defaults(members);
  for (long i = 0; i < members; ++i) e.params_of(i)[0] *= 1.0 + 1e-3 * static_cast<double>(i % 1000) / 1000.0;
  const bool andrews = std::strcmp(Model::name, "andrews") == 0;
  e.t1 = andrews ? (standard_interval ? 0.03 : 0.003) : 0.5;
  e.save_times = {0.5 * e.t1, e.t1};
  e.options.method = method;
  e.options.form = form;
  if (needs_projection(method)) e.options.projection = projection_kind::coordinate;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = andrews ? 1e-5 : 1e-6;
  return e;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int info() {
  int driver = 0, runtime = 0, count = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  std::printf("cuda driver API version %d.%d, runtime (linked) %d.%d, devices %d\n", driver / 1000, driver % 1000 / 10,
              runtime / 1000, runtime % 1000 / 10, count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, d);
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", d, p.name, p.major, p.minor, p.multiProcessorCount,
                static_cast<double>(p.totalGlobalMem) / (1 << 30));
  }
  return count > 0 ? 0 : 1;
}

// A small run on the cuda backend against the serial one: statuses equal (the positions are
// tests/cuda's business; here the point is every kernel under compute-sanitizer).
template <class Model>
int small_case(method_kind method, formulation form, bool split, projection_kind projection = projection_kind::none) {
  auto e = bench_ensemble<Model>(100, method, form);
  if (projection != projection_kind::none) e.options.projection = projection;
  run_options cuda_run;
  cuda_run.where = backend::cuda;
  cuda_run.chunk_size = 64;  // two chunks: both result buffers and the chunk overlap
  cuda_run.split_factorization = split;
  const auto gpu = solve_builtin(e, cuda_run);
  const auto cpu = solve_builtin(e, run_options{});
  long differ = 0;
  for (long i = 0; i < e.members; ++i) differ += gpu.status[i] != cpu.status[i];
  std::printf("small %-16s %-6s %-7s %-5s projection %-18s statuses differing from serial: %ld\n", Model::name,
              method_name(method), formulation_name(form), split ? "split" : "fused", projection_name(e.options.projection), differ);
  return differ == 0 ? 0 : 1;
}

int small() {
  int failures = 0;
  for (method_kind m : {method_kind::bdf, method_kind::radau5}) {
    const formulation form = m == method_kind::bdf ? formulation::ggl : formulation::index3;
    for (bool split : {false, true}) {
      failures += small_case<models::pendulum>(m, form, split);
      failures += small_case<models::double_pendulum>(m, form, split);
      failures += small_case<models::andrews>(m, form, split);
    }
    failures += small_case<models::andrews>(m, form, true, projection_kind::coordinate);
  }
  failures += small_case<models::pendulum>(method_kind::tsit5, formulation::index1, false);
  failures += small_case<models::double_pendulum>(method_kind::tsit5, formulation::index1, false);
  failures += small_case<models::andrews>(method_kind::tsit5, formulation::index1, false);
  failures += small_case<models::andrews>(method_kind::automatic, formulation::index3, false, projection_kind::coordinate);
  return failures == 0 ? 0 : 1;
}

template <class Model>
int one(long members, method_kind method) {
  const auto e = bench_ensemble<Model>(members, method, formulation_of(method));
  run_options ro;
  ro.where = backend::cuda;
  const auto start = std::chrono::steady_clock::now();
  const auto r = solve_builtin(e, ro);
  std::printf("one %s %s %ld members: %.3f s on cuda, chunk %ld\n", Model::name, method_name(method), members,
              seconds_since(start), r.chunk_size);
  return 0;
}

struct timing {
  double seconds = 0.0;  // the least of the runs
  int runs = 0;
  long failed = 0;
  double steps_per_member = 0.0;
};

// The least time of up to three runs; a run over 5 s is not repeated (its spread is below the
// difference between backends this measures).
template <class Model>
timing timed(const ensemble<Model>& e, const run_options& ro, int most_runs = 3) {
  timing t;
  while (t.runs < most_runs) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = solve_builtin(e, ro);
    const double s = seconds_since(start);
    t.seconds = t.runs == 0 ? s : std::min(t.seconds, s);
    ++t.runs;
    t.failed = 0;
    long steps = 0;
    for (long i = 0; i < e.members; ++i) {
      t.failed += r.status[i] != member_status::success;
      steps += r.counters[i].steps;
    }
    t.steps_per_member = static_cast<double>(steps) / static_cast<double>(e.members);
    if (s > 5.0) break;
  }
  return t;
}

template <class Model>
int rate(double budget, method_kind method) {
  const formulation form = formulation_of(method);
  auto ensemble_of = [&](long members) { return bench_ensemble<Model>(members, method, form, true); };
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int lanes = builtin_lanes(Model::name);
  run_options cuda_run, omp_run;
  cuda_run.where = backend::cuda;
  omp_run.where = backend::omp;
  omp_run.threads = cores;
  // The omp rate from 1,000 members sets how many members its timed runs take: three runs of each
  // size within a sixth of this share of the budget (and 15 s), the rest left to the cuda runs.
  const auto stage = std::chrono::steady_clock::now();
  const timing probe = timed(ensemble_of(1000), omp_run, 1);
  const double omp_seconds = std::min(15.0, budget / 6.0) / 3.0;
  const long omp_cap = std::max(1000L, static_cast<long>(omp_seconds * 1000.0 / std::max(probe.seconds, 1e-6)));
  timed(ensemble_of(100), cuda_run, 1);  // context creation and module loading are not the ensemble's cost
  double cuda_previous = 0.0;
  long previous_members = 0;
  for (long members = 10000; members <= 1000000; members *= 10) {
    const double estimate = previous_members > 0 ? cuda_previous * members / previous_members : 0.0;
    if (seconds_since(stage) + estimate > budget) {
      std::printf("rate %-16s %-6s %8ld members: skipped (cuda run estimated at %.0f s, over the %.0f s budget)\n",
                  Model::name, method_name(method), members, estimate, budget);
      continue;
    }
    const timing cuda = timed(ensemble_of(members), cuda_run,
                              seconds_since(stage) + 3.0 * estimate > budget ? 1 : 3);
    const long omp_members = std::min(members, omp_cap);
    const timing omp = timed(ensemble_of(omp_members), omp_run);
    const double cuda_rate = members / cuda.seconds, omp_rate = omp_members / omp.seconds;
    std::printf("rate %-16s %-6s %8ld members: cuda %10.0f members/s (%.3f s, least of %d, %ld failed, %.1f steps) | omp x%d "
                "lanes %d %10.0f members/s (%ld members, %.3f s, least of %d, %ld failed, %.1f steps) | cuda/omp %.2f\n",
                Model::name, method_name(method), members, cuda_rate, cuda.seconds, cuda.runs, cuda.failed,
                cuda.steps_per_member, cores, lanes, omp_rate, omp_members, omp.seconds, omp.runs, omp.failed,
                omp.steps_per_member, cuda_rate / omp_rate);
    std::fflush(stdout);
    cuda_previous = cuda.seconds;
    previous_members = members;
  }
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: gpu_bench info | small | one MODEL MEMBERS [radau5|tsit5|dopri5|auto] | rate BUDGET_S MODEL...\n");
  return 2;
}

template <class F>
int for_model(const std::string& name, F&& f) {
  if (name == "pendulum") return f(models::pendulum{});
  if (name == "double_pendulum") return f(models::double_pendulum{});
  if (name == "andrews") return f(models::andrews{});
  std::fprintf(stderr, "gpu_bench: unknown model %s (pendulum, double_pendulum, andrews)\n", name.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string what = argv[1];
  try {
    if (what == "info") return info();
    if (lockstep::cuda::device_count() == 0) {
      std::fprintf(stderr, "gpu_bench: no CUDA device\n");
      return 1;
    }
    if (what == "small") return small();
    if (what == "one" && (argc == 4 || argc == 5)) {
      const long members = std::atol(argv[3]);
      method_kind method = method_kind::bdf;
      if (argc == 5) {
        const std::string name = argv[4];
        if (name == "radau5") method = method_kind::radau5;
        else if (name == "tsit5") method = method_kind::tsit5;
        else if (name == "dopri5") method = method_kind::dopri5;
        else if (name == "auto") method = method_kind::automatic;
        else return usage();
      }
      return for_model(argv[2], [&](auto m) { return one<decltype(m)>(members, method); });
    }
    if (what == "rate" && argc >= 4) {
      const double budget = std::atof(argv[2]);
      int rc = 0;
      const method_kind methods[] = {method_kind::bdf, method_kind::radau5, method_kind::tsit5};
      const double share = budget / (3 * (argc - 3));  // per model and method
      for (int a = 3; a < argc; ++a)
        for (method_kind method : methods)
          rc |= for_model(argv[a], [&](auto m) { return rate<decltype(m)>(share, method); });
      return rc;
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gpu_bench: %s\n", error.what());
    return 1;
  }
  return usage();
}
