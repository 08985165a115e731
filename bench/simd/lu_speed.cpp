// bench/simd/lu_speed.cpp — time per member of the LU factorization and one solve of the Newton matrix:
// lockstep::lu_factor and lu_solve on one member's matrix (the path every CPU backend takes today)
// against lockstep/simd/lu_inl.hpp on W members at once, in the same run, for N = 6 (the pendulum's ggl
// matrix), 13 (andrews on index 3) and 26 (andrews on ggl). The matrices are saddle-point matrices
// [[M, G^T], [G, 0]] with M diagonally dominant and G random, so every member pivots as a real Newton
// matrix does (the zero block forces interchanges).
//
//   build/bench/simd_lu_speed [--benchmark_filter=N=26]
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/simd/lu_speed.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/simd/lu_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// Factors and solves `count` members stored lane-interleaved (entry e of member m at e * W + m % W
// within the block of W members), as a lanes backend keeps them; returns false where W is unavailable.
template <int N, size_t W>
HWY_NOINLINE bool factor_and_solve(const double* matrices, const double* rhs, double* out, size_t count) {
  using D = hn::CappedTag<double, W>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  for (size_t block = 0; block < count / W; ++block) {
    const double* a = matrices + block * N * N * W;
    using P = sl::pack<D>;
    mat<P, N, N> A;
    for (int e = 0; e < N * N; ++e) A.a[e] = P(hn::LoadU(d, a + e * W));
    vec<P, N> x;
    for (int i = 0; i < N; ++i) x[i] = P(hn::LoadU(d, rhs + (block * N + i) * W));
    vec<P, N> p;
    sl::lu_factor(A, p);
    sl::lu_solve(A, p, x);
    for (int i = 0; i < N; ++i) hn::StoreU(x[i].v, d, out + (block * N + i) * W);
  }
  return true;
}
template <int N>
bool run(const double* matrices, const double* rhs, double* out, size_t count, size_t lanes) {
  switch (lanes) {
    case 1: return factor_and_solve<N, 1>(matrices, rhs, out, count);
    case 2: return factor_and_solve<N, 2>(matrices, rhs, out, count);
    case 4: return factor_and_solve<N, 4>(matrices, rhs, out, count);
    case 8: return factor_and_solve<N, 8>(matrices, rhs, out, count);
    default: return false;
  }
}
bool Run6(const double* a, const double* b, double* x, size_t n, size_t w) { return run<6>(a, b, x, n, w); }
bool Run13(const double* a, const double* b, double* x, size_t n, size_t w) { return run<13>(a, b, x, n, w); }
bool Run26(const double* a, const double* b, double* x, size_t n, size_t w) { return run<26>(a, b, x, n, w); }
size_t FullLanes() { return hn::Lanes(hn::ScalableTag<double>()); }
}  // namespace lockstep::simd_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "lockstep/core/linalg.hpp"

namespace lockstep::simd_bench {
HWY_EXPORT(Run6);
HWY_EXPORT(Run13);
HWY_EXPORT(Run26);
HWY_EXPORT(FullLanes);
namespace {

constexpr size_t kMembers = 512;

// Member-major saddle-point matrices [[M, G^T], [G, 0]], N = 2 n_q with as many constraints as
// coordinates minus one, like the ggl and index-3 Newton matrices' structure.
std::vector<double> saddle_point_matrices(int N) {
  std::mt19937_64 g(20261126);
  std::uniform_real_distribution<double> u(-1, 1);
  const int n = N - N / 3;  // unknowns of the M block; the rest are multipliers
  std::vector<double> a(kMembers * N * N, 0.0);
  for (size_t m = 0; m < kMembers; ++m) {
    double* A = &a[m * N * N];
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) A[i * N + j] = 0.1 * u(g);
      A[i * N + i] = 2.0 + u(g);
    }
    for (int i = n; i < N; ++i)
      for (int j = 0; j < n; ++j) A[i * N + j] = A[j * N + i] = u(g);
  }
  return a;
}
// The same members, lane-interleaved in blocks of W.
std::vector<double> interleaved(const std::vector<double>& member_major, int entries, size_t W) {
  std::vector<double> out(member_major.size());
  for (size_t m = 0; m < kMembers; ++m)
    for (int e = 0; e < entries; ++e) out[(m / W) * entries * W + e * W + m % W] = member_major[m * entries + e];
  return out;
}

template <int N>
void one_member_at_a_time(benchmark::State& state) {
  const std::vector<double> a = saddle_point_matrices(N);
  std::vector<double> rhs(kMembers * N, 1.0);
  for (auto _ : state) {
    for (size_t m = 0; m < kMembers; ++m) {
      mat<double, N, N> A;
      for (int e = 0; e < N * N; ++e) A.a[e] = a[m * N * N + e];
      vec<double, N> x;
      for (int i = 0; i < N; ++i) x[i] = rhs[m * N + i];
      vec<int, N> p;
      lu_factor(A, p);
      lu_solve(A, p, x);
      benchmark::DoNotOptimize(x);
    }
  }
  state.counters["ns_per_member"] = benchmark::Counter(double(kMembers) * double(state.iterations()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

using run_fn = bool (*)(const double*, const double*, double*, size_t, size_t);
void in_lanes(benchmark::State& state, int N, int64_t target, size_t W, run_fn (*entry)()) {
  const std::vector<double> a = interleaved(saddle_point_matrices(N), N * N, W);
  std::vector<double> rhs(kMembers * N, 1.0), out(kMembers * N);
  hwy::SetSupportedTargetsForTest(target);
  const run_fn run = entry();
  for (auto _ : state) {
    run(a.data(), rhs.data(), out.data(), kMembers, W);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  hwy::SetSupportedTargetsForTest(0);
  state.counters["ns_per_member"] = benchmark::Counter(double(kMembers) * double(state.iterations()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The dispatched entry of the target set by SetSupportedTargetsForTest.
run_fn entry6() { return [](const double* a, const double* b, double* x, size_t n, size_t w) { return HWY_DYNAMIC_DISPATCH(Run6)(a, b, x, n, w); }; }
run_fn entry13() { return [](const double* a, const double* b, double* x, size_t n, size_t w) { return HWY_DYNAMIC_DISPATCH(Run13)(a, b, x, n, w); }; }
run_fn entry26() { return [](const double* a, const double* b, double* x, size_t n, size_t w) { return HWY_DYNAMIC_DISPATCH(Run26)(a, b, x, n, w); }; }

void register_all() {
  const struct {
    int N;
    void (*one)(benchmark::State&);
    run_fn (*entry)();
  } sizes[] = {{6, one_member_at_a_time<6>, entry6}, {13, one_member_at_a_time<13>, entry13},
               {26, one_member_at_a_time<26>, entry26}};
  for (const auto& s : sizes) {
    const std::string prefix = "N=" + std::to_string(s.N) + "/";
    benchmark::RegisterBenchmark((prefix + "one_member").c_str(), s.one);
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
      if (target != HWY_AVX3 && target != HWY_AVX2 && target != HWY_SSE4) continue;
      hwy::SetSupportedTargetsForTest(target);
      const size_t full = HWY_DYNAMIC_DISPATCH(FullLanes)();
      hwy::SetSupportedTargetsForTest(0);
      for (size_t W = 1; W <= full; W *= 2)
        benchmark::RegisterBenchmark((prefix + hwy::TargetName(target) + "/W=" + std::to_string(W)).c_str(), in_lanes,
                                     s.N, target, W, s.entry);
    }
  }
}

}  // namespace
}  // namespace lockstep::simd_bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lockstep::simd_bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
#endif  // HWY_ONCE
