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
    constexpr size_t size = outputs<Model> + newton_outputs<Model>;
    std::vector<double> one;
    ASSERT_TRUE((evaluate_in_packs<Model, 1, true>(args, one)));
    digest = fnv1a(digest, one);
    std::vector<double> wide;
    widths = 1;
    // Every width compares the models' outputs; the full width of this build also the Newton parts (the
    // widths between are the same template code, and each costs the build a Jacobian instantiation).
    const auto expect_same = [&](size_t W, size_t per_member) {
      ++widths;
      size_t differ = 0;
      for (size_t m = 0; m < kMembers; ++m)
        for (size_t e = 0; e < per_member; ++e) differ += !same_bits(wide[m * per_member + e], one[m * size + e]);
      EXPECT_EQ(differ, 0u) << Model::name << ": " << differ << " of " << kMembers * per_member
                            << " values differ at W = " << W << " from W = 1";
    };
    constexpr size_t full = HWY_LANES(double);
    const auto at_width = [&]<size_t W>() {
      if constexpr (W < full) {
        if (evaluate_in_packs<Model, W, false>(args, wide)) expect_same(W, outputs<Model>);
      } else if constexpr (W == full) {
        if (evaluate_in_packs<Model, W, true>(args, wide)) expect_same(W, size);
      }
    };
    at_width.template operator()<2>();
    at_width.template operator()<4>();
    at_width.template operator()<8>();

    // The models, the residuals and the Jacobians on doubles.
    std::vector<double> scalar(kMembers * size);
    for (size_t mem = 0; mem < kMembers; ++mem) {
      vec<double, Model::n> q, v;
      for (int i = 0; i < Model::n; ++i) q[i] = args[mem].q[i], v[i] = args[mem].v[i];
      evaluate<Model>(args[mem].t, q, v, args[mem].p, &scalar[mem * size]);
      if constexpr (with_newton_parts<Model>) {
        state_vector<Model> y;
        vec<double, Model::n> qdot, vdot;
        residual_point<Model, double>([&](auto field) { return field(args[mem]); }, y, qdot, vdot);
        evaluate_residuals<Model>(args[mem].t, y, qdot, vdot, args[mem].p, &scalar[mem * size + outputs<Model>]);
        evaluate_jacobians<Model>(args[mem].t, y, vdot, args[mem].p,
                                  &scalar[mem * size + outputs<Model> + residual_outputs<Model>]);
      }
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
