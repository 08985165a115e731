// bench/simd/model_speed.cpp — time per member of a model's evaluation (mass matrix, forces,
// constraints, G = Phi_q and Phi_t by dual numbers: tests/support/pack_models.hpp) on doubles one member
// at a time, against the same code on packs of W members (lockstep/simd/pack_inl.hpp), in the same run.
// Built once per instruction set, like the test of the same evaluation:
//
//   build/bench/simd_model_speed_avx512 [--benchmark_filter=andrews]      (AVX-512: W = 1, 2, 4, 8, and
//                                                                          W = 8 with 4, 2, 1 directions
//                                                                          per dual-number pass)
//   build/bench/simd_model_speed_avx2                                     (AVX2: W = 1, 2, 4)
//
// The members' arguments are laid out as the evaluation reads them before the clock starts (packed in
// lanes for the packs): what is timed is the evaluation itself, as a lanes backend that keeps its
// members lane-interleaved would run it.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tests/support/pack_models.hpp"

namespace lockstep::simd_test {
namespace {

template <class Model>
void on_doubles(benchmark::State& state) {
  const auto args = members<Model>(1);
  std::vector<vec<double, Model::n>> q(kMembers), v(kMembers);
  for (size_t m = 0; m < kMembers; ++m)
    for (int i = 0; i < Model::n; ++i) q[m][i] = args[m].q[i], v[m][i] = args[m].v[i];
  double out[outputs<Model>];
  for (auto _ : state)
    for (size_t m = 0; m < kMembers; ++m) {
      evaluate<Model>(args[m].t, q[m], v[m], args[m].p, out);
      benchmark::DoNotOptimize(out);
    }
  state.counters["ns_per_member"] = benchmark::Counter(double(kMembers) * double(state.iterations()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <class Model, size_t W, int Chunk>
void on_packs(benchmark::State& state) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) {
    state.SkipWithError("this instruction set has fewer lanes");
    return;
  }
  const auto packs = pack_arguments<Model, W>(members<Model>(1));
  P out[outputs<Model>];
  for (auto _ : state)
    for (const auto& pm : packs) {
      evaluate<Model, Chunk>(pm.t, pm.q, pm.v, pm.p, out);
      benchmark::DoNotOptimize(out);
    }
  state.counters["ns_per_member"] = benchmark::Counter(double(kMembers) * double(state.iterations()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <class Model>
void register_model() {
  const std::string name = Model::name;
  benchmark::RegisterBenchmark((name + "/doubles").c_str(), on_doubles<Model>);
  const size_t full = hn::Lanes(hn::ScalableTag<double>());
  benchmark::RegisterBenchmark((name + "/W=1").c_str(), on_packs<Model, 1, ad::default_chunk>);
  if (full >= 2) benchmark::RegisterBenchmark((name + "/W=2").c_str(), on_packs<Model, 2, ad::default_chunk>);
  if (full >= 4) benchmark::RegisterBenchmark((name + "/W=4").c_str(), on_packs<Model, 4, ad::default_chunk>);
  if (full >= 8) {
    benchmark::RegisterBenchmark((name + "/W=8").c_str(), on_packs<Model, 8, ad::default_chunk>);
    benchmark::RegisterBenchmark((name + "/W=8/chunk=4").c_str(), on_packs<Model, 8, 4>);
    benchmark::RegisterBenchmark((name + "/W=8/chunk=2").c_str(), on_packs<Model, 8, 2>);
    benchmark::RegisterBenchmark((name + "/W=8/chunk=1").c_str(), on_packs<Model, 8, 1>);
  }
}

}  // namespace
}  // namespace lockstep::simd_test

int main(int argc, char** argv) {
  using namespace lockstep;
  if ((hwy::SupportedTargets() & HWY_STATIC_TARGET) == 0) {
    std::fprintf(stderr, "this CPU lacks %s, the instruction set this build is for\n", hwy::TargetName(HWY_STATIC_TARGET));
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  simd_test::register_model<models::pendulum>();
  simd_test::register_model<models::double_pendulum>();
  simd_test::register_model<models::slider_crank>();
  simd_test::register_model<models::andrews>();
  simd_test::register_model<models::car_axis>();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
