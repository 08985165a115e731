// Tests of lockstep/simd/pack_inl.hpp: every built-in model runs on pack<D> unchanged, and each lane
// gets the bits the member gets alone in a pack of one — the mass matrix, the applied forces, the
// constraints and the non-holonomic constraints, the constraint Jacobian G = Phi_q with Phi_t by
// dual numbers over packs, and the residual and the Jacobian blocks of every formulation
// (formulation/euler_lagrange.hpp: what a Newton iteration and a Jacobian evaluation compute) — for
// every width this instruction set has. The one-lane results are then
// compared with the models on doubles, bit for bit: on the host a double's elementary functions are one
// lane of the packs' own (lockstep/core/elementary.hpp), so a member computed alone has the bits it has
// in any lane, which is what members in lanes must give (docs/SIMD.md).
//
// The models' templates are compiled for the instruction set of this translation unit, so this file is
// built once per instruction set with that set's flags (tests/simd/CMakeLists.txt); each build prints
// a digest of all its one-lane results, and tests/simd/pack_model_test.sh requires the digests of every
// build the CPU can run to be equal: the same bits on every instruction set.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "tests/support/pack_models.hpp"

namespace lockstep::simd_test {
namespace {

uint64_t fnv1a(uint64_t hash, const std::vector<double>& values) {
  for (const double x : values) {
    uint64_t bits = std::bit_cast<uint64_t>(x);
    for (int b = 0; b < 8; ++b, bits >>= 8) hash = (hash ^ (bits & 0xff)) * 0x100000001b3ull;
  }
  return hash;
}

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) || (std::isnan(a) && std::isnan(b));
}

TEST(PackModels, EveryLaneIsTheMemberAloneAndCloseToDoubles) {
  if ((hwy::SupportedTargets() & HWY_STATIC_TARGET) == 0) GTEST_SKIP() << "this CPU lacks " << hwy::TargetName(HWY_STATIC_TARGET);
  uint64_t digest = 0xcbf29ce484222325ull;
  size_t widths = 0;
  builtin_models::for_each([&]<class Model>() {
    const auto args = members<Model>(std::hash<std::string>{}(Model::name));
    std::vector<double> one;
    ASSERT_TRUE((evaluate_in_packs<Model, 1>(args, one)));
    digest = fnv1a(digest, one);
    std::vector<double> wide;
    widths = 1;
    const auto expect_same = [&](size_t W) {
      ++widths;
      size_t differ = 0;
      for (size_t i = 0; i < one.size(); ++i) differ += !same_bits(wide[i], one[i]);
      EXPECT_EQ(differ, 0u) << Model::name << ": " << differ << " of " << one.size() << " values differ at W = " << W
                            << " from W = 1";
    };
    if (evaluate_in_packs<Model, 2>(args, wide)) expect_same(2);
    if (evaluate_in_packs<Model, 4>(args, wide)) expect_same(4);
    if (evaluate_in_packs<Model, 8>(args, wide)) expect_same(8);

    // The models and the residuals on doubles.
    constexpr size_t size = outputs<Model> + residual_outputs<Model> + jacobian_outputs<Model>;
    std::vector<double> scalar(kMembers * size);
    for (size_t mem = 0; mem < kMembers; ++mem) {
      vec<double, Model::n> q, v;
      for (int i = 0; i < Model::n; ++i) q[i] = args[mem].q[i], v[i] = args[mem].v[i];
      evaluate<Model>(args[mem].t, q, v, args[mem].p, &scalar[mem * size]);
      state_vector<Model> y;
      vec<double, Model::n> qdot, vdot;
      residual_point<Model, double>([&](auto field) { return field(args[mem]); }, y, qdot, vdot);
      evaluate_residuals<Model>(args[mem].t, y, qdot, vdot, args[mem].p, &scalar[mem * size + outputs<Model>]);
      evaluate_jacobians<Model>(args[mem].t, y, vdot, args[mem].p,
                                &scalar[mem * size + outputs<Model> + residual_outputs<Model>]);
    }
    size_t differ = 0;
    for (size_t i = 0; i < scalar.size(); ++i) differ += !same_bits(one[i], scalar[i]);
    EXPECT_EQ(differ, 0u) << Model::name << ": " << differ << " of " << scalar.size()
                          << " values of the pack of one differ from the model on doubles";
    std::printf("[ pack ] %s: %zu values per member, widths 1..%zu equal, %zu of %zu differ from doubles\n",
                Model::name, size, size_t{1} << (widths - 1), differ, scalar.size());
  });
  std::printf("[ digest ] %s %016llx\n", hwy::TargetName(HWY_STATIC_TARGET), static_cast<unsigned long long>(digest));
}

}  // namespace
}  // namespace lockstep::simd_test
