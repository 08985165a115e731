// bench/simd/model_speed.cpp — time per member of a model's evaluation (mass matrix, forces,
// constraints, G = Phi_q and Phi_t by dual numbers: tests/support/pack_models.hpp), and of what the
// Newton loop evaluates of it on the ggl formulation (the residual, each iteration; the Jacobian blocks
// by dual numbers, each Jacobian evaluation), on doubles one member at a time, against the same code on
// packs of W members (lockstep/simd/pack_inl.hpp), in the same run. Built once per instruction set,
// like the test of the same evaluation:
//
//   build/bench/simd_model_speed_avx512 [--benchmark_filter=andrews]      (AVX-512: W = 1, 2, 4, 8, and
//                                                                          W = 8 with 4, 2, 1 directions
//                                                                          per dual-number pass)
//   build/bench/simd_model_speed_avx2                                     (AVX2: W = 1, 2, 4)
//
// Rows: <model>/<W or doubles> the model's evaluation; <model>/residual/..., <model>/jacobian/... the
// Newton loop's. The members' arguments are laid out as the evaluation reads them before the clock
// starts (packed in lanes for the packs): what is timed is the evaluation itself, as a lanes backend that
// keeps its members lane-interleaved would run it.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tests/support/pack_models.hpp"

namespace lockstep::simd_test {
namespace {

// The counter every row reports: nanoseconds per member.
void count_members(benchmark::State& state) {
  state.counters["ns_per_member"] = benchmark::Counter(double(kMembers) * double(state.iterations()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// False, with the row marked as skipped, where this instruction set has fewer than W lanes.
template <size_t W>
bool has_lanes(benchmark::State& state) {
  if (hn::Lanes(hn::CappedTag<double, W>()) == W) return true;
  state.SkipWithError("this instruction set has fewer lanes");
  return false;
}

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
  count_members(state);
}

template <class Model, size_t W, int Chunk>
void on_packs(benchmark::State& state) {
  using P = sl::pack<hn::CappedTag<double, W>>;
  if (!has_lanes<W>(state)) return;
  const auto packs = pack_arguments<Model, W>(members<Model>(1));
  P out[outputs<Model>];
  for (auto _ : state)
    for (const auto& pm : packs) {
      evaluate<Model, Chunk>(pm.t, pm.q, pm.v, pm.p, out);
      benchmark::DoNotOptimize(out);
    }
  count_members(state);
}

// What the Newton loop evaluates of a model, on the ggl formulation: its residual, or its Jacobian blocks.
enum class newton_part { residual, jacobian };

template <newton_part Part, class Model, class T, class P>
HWY_INLINE void evaluate_newton_part(const T& t, const vec<T, state_layout<Model>::size>& y,
                                     const vec<T, Model::n>& qdot, const vec<T, Model::n>& vdot, const P* p) {
  if constexpr (Part == newton_part::residual) {
    const residual_parts<Model, T> r = detail::formulation_residual<Model>(formulation::ggl, t, y, qdot, vdot, p, {});
    benchmark::DoNotOptimize(r);
  } else {
    jacobian_values<Model, T> J;
    detail::jacobian_block_values<Model, ad::default_chunk>(formulation::ggl, t, y, vdot, p, J, {},
                                                            static_cast<mat<T, Model::n, Model::n>*>(nullptr));
    benchmark::DoNotOptimize(J);
  }
}

template <newton_part Part, class Model>
void newton_part_on_doubles(benchmark::State& state) {
  const auto args = members<Model>(1);
  std::vector<state_vector<Model>> y(kMembers);
  std::vector<vec<double, Model::n>> qdot(kMembers), vdot(kMembers);
  for (size_t m = 0; m < kMembers; ++m)
    residual_point<Model, double>([&](auto field) { return field(args[m]); }, y[m], qdot[m], vdot[m]);
  for (auto _ : state)
    for (size_t m = 0; m < kMembers; ++m) evaluate_newton_part<Part, Model>(args[m].t, y[m], qdot[m], vdot[m], args[m].p);
  count_members(state);
}

template <newton_part Part, class Model, size_t W>
void newton_part_on_packs(benchmark::State& state) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (!has_lanes<W>(state)) return;
  const auto args = members<Model>(1);
  const auto packs = pack_arguments<Model, W>(args);
  std::vector<vec<P, state_layout<Model>::size>> y(packs.size());
  std::vector<vec<P, Model::n>> qdot(packs.size()), vdot(packs.size());
  HWY_ALIGN double lanes[W];
  for (size_t k = 0; k < packs.size(); ++k)
    residual_point<Model, P>(
        [&](auto field) {
          for (size_t l = 0; l < W; ++l) lanes[l] = field(args[k * W + l]);
          return P(hn::Load(d, lanes));
        },
        y[k], qdot[k], vdot[k]);
  for (auto _ : state)
    for (size_t k = 0; k < packs.size(); ++k)
      evaluate_newton_part<Part, Model>(packs[k].t, y[k], qdot[k], vdot[k], packs[k].p);
  count_members(state);
}

template <newton_part Part, class Model>
void register_newton_part(const std::string& name, size_t full) {
  benchmark::RegisterBenchmark((name + "/doubles").c_str(), newton_part_on_doubles<Part, Model>);
  benchmark::RegisterBenchmark((name + "/W=1").c_str(), newton_part_on_packs<Part, Model, 1>);
  if (full >= 4) benchmark::RegisterBenchmark((name + "/W=4").c_str(), newton_part_on_packs<Part, Model, 4>);
  if (full >= 8) benchmark::RegisterBenchmark((name + "/W=8").c_str(), newton_part_on_packs<Part, Model, 8>);
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
  register_newton_part<newton_part::residual, Model>(name + "/residual", full);
  register_newton_part<newton_part::jacobian, Model>(name + "/jacobian", full);
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
