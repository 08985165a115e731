// bench/simd/math_speed.cpp — time per element of lockstep's vector math (lockstep/core/vector_math) against
// the C library's functions in the same run: glibc on one double at a time, and lockstep's at one lane
// and at the full width of every instruction set compiled in and supported by this CPU.
//
//   build/bench/simd_math_speed [--benchmark_filter=exp]
//
// Each benchmark evaluates the function over 4096 arguments from the range models use (sin on
// [-100, 100], exp on [-50, 50], ...) and reports ns per element; the ratio of glibc's time to a
// variant's is the speed-up of that variant. docs/SIMD.md quotes a run.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/simd/math_speed.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "bench/simd/math_functions_inl.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <size_t W>
HWY_NOINLINE bool run_at_width(int function, const double* x, const double* y, double* out, size_t n) {
  const hn::CappedTag<double, W> d;
  if (hn::Lanes(d) != W) return false;
  for (size_t i = 0; i < n; i += W)
    hn::StoreU(evaluate(function, d, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, out + i);
  return true;
}
bool Run(int function, const double* x, const double* y, double* out, size_t n, size_t lanes) {
  switch (lanes) {
    case 1: return run_at_width<1>(function, x, y, out, n);
    case 2: return run_at_width<2>(function, x, y, out, n);
    case 4: return run_at_width<4>(function, x, y, out, n);
    case 8: return run_at_width<8>(function, x, y, out, n);
    default: return false;
  }
}
size_t FullLanes() { return hn::Lanes(hn::ScalableTag<double>()); }
}  // namespace lockstep::simd_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"

namespace lockstep::simd_bench {
HWY_EXPORT(Run);
HWY_EXPORT(FullLanes);
namespace {

constexpr size_t kN = 4096;

struct arguments {
  std::vector<double> x, y;
};
arguments arguments_for(int function) {
  const function_info& f = functions[function];
  std::mt19937_64 g(20261126);
  std::uniform_real_distribution<double> ux(f.x_lo, f.x_hi), uy(f.y_lo, f.y_hi);
  arguments a{std::vector<double>(kN), std::vector<double>(kN)};
  for (size_t i = 0; i < kN; ++i) a.x[i] = ux(g), a.y[i] = uy(g);
  return a;
}

void glibc(benchmark::State& state, int function) {
  const arguments a = arguments_for(function);
  std::vector<double> out(kN);
  for (auto _ : state) {
    for (size_t i = 0; i < kN; ++i) out[i] = functions[function].libm(a.x[i], a.y[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_element"] =
      benchmark::Counter(double(kN) * double(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void lockstep_variant(benchmark::State& state, int function, int64_t target, size_t lanes) {
  const arguments a = arguments_for(function);
  std::vector<double> out(kN);
  hwy::SetSupportedTargetsForTest(target);
  for (auto _ : state) {
    HWY_DYNAMIC_DISPATCH(Run)(function, a.x.data(), a.y.data(), out.data(), kN, lanes);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  hwy::SetSupportedTargetsForTest(0);
  state.counters["ns_per_element"] =
      benchmark::Counter(double(kN) * double(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void register_all() {
  for (int f = 0; f < function_count; ++f) {
    const std::string name = functions[f].name;
    benchmark::RegisterBenchmark((name + "/glibc").c_str(), glibc, f);
    for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
      if (target == HWY_SSSE3) continue;  // same code as SSE4 for doubles, as far as timing goes
      hwy::SetSupportedTargetsForTest(target);
      const size_t full = HWY_DYNAMIC_DISPATCH(FullLanes)();
      hwy::SetSupportedTargetsForTest(0);
      for (const size_t lanes : {size_t{1}, full}) {
        if (lanes == 1 && full != 1 && target != HWY_AVX3 && target != HWY_AVX2) continue;
        benchmark::RegisterBenchmark((name + "/" + hwy::TargetName(target) + "/W=" + std::to_string(lanes)).c_str(),
                                     lockstep_variant, f, target, lanes);
        if (lanes == full) break;
      }
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
