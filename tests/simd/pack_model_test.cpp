// Tests of lockstep/simd/pack_inl.hpp: every built-in model runs on pack<D> unchanged, and each lane
// gets the bits the member gets alone in a pack of one — the mass matrix, the applied forces, the
// constraints and the non-holonomic constraints, and the constraint Jacobian G = Phi_q with Phi_t by
// dual numbers over packs — for every width this instruction set has. The one-lane results are then
// compared with the models on doubles: equal bits for the models whose arithmetic has no elementary
// function, within 1e-12 of each output's scale for the others (the functions are lockstep's own, not
// the C library's, so the last bits may differ).
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
#include "lockstep/model/derivatives.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/simd/pack_inl.hpp"

namespace lockstep::simd_test {
namespace {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

constexpr size_t kMembers = 64;  // a multiple of every width

// One member's arguments: parameters, t, q, v.
template <class Model>
struct member_arguments {
  double p[Model::n_params];
  double t;
  double q[Model::n], v[Model::n];
};

template <class Model>
std::vector<member_arguments<Model>> members(uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<member_arguments<Model>> all(kMembers);
  for (member_arguments<Model>& a : all) {
    for (int i = 0; i < Model::n_params; ++i) a.p[i] = Model::params[i].default_value * (1.0 + 0.05 * u(g));
    double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
    if constexpr (Model::n_inputs > 0)
      for (int i = 0; i < Model::n_inputs; ++i) inputs[i] = Model::inputs[i].default_value + 0.1 * u(g);
    vec<double, Model::n> q, v;
    Model::initial_state(a.p, inputs, q, v);
    for (int i = 0; i < Model::n; ++i) a.q[i] = q[i] + 1e-2 * u(g), a.v[i] = v[i] + 1e-2 * u(g);
    a.t = 0.5 + 0.5 * u(g);
  }
  return all;
}

// Everything evaluated for one member, flattened: M, Q, Phi, the non-holonomic constraints, G, Phi_t.
template <class Model>
constexpr size_t outputs = Model::n * Model::n + Model::n + Model::m + Model::k + Model::m * Model::n + Model::m;

template <class Model, class T, class P>
void evaluate(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v, const P* p, T* out) {
  constexpr int n = Model::n, m = Model::m;
  const mat<T, n, n> M = Model::template mass<T, P>(q, p);
  for (int i = 0; i < n * n; ++i) *out++ = M.a[i];
  const vec<T, n> Q = Model::template force<T, P>(t, q, v, p);
  for (int i = 0; i < n; ++i) *out++ = Q[i];
  const auto lin = constraint_linearize<Model>(t, q, p);
  for (int i = 0; i < m; ++i) *out++ = lin.phi[i];
  if constexpr (Model::k > 0) {
    const vec<T, Model::k> nh = Model::template nonholonomic<T, P>(t, q, v, p);
    for (int i = 0; i < Model::k; ++i) *out++ = nh[i];
  }
  for (int i = 0; i < m * n; ++i) *out++ = lin.G.a[i];
  for (int i = 0; i < m; ++i) *out++ = lin.phi_t[i];
}

// All members in packs of W lanes; false where this instruction set has fewer than W.
template <class Model, size_t W>
bool evaluate_in_packs(const std::vector<member_arguments<Model>>& args, std::vector<double>& out) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  constexpr size_t size = outputs<Model>;
  out.assign(kMembers * size, 0.0);
  HWY_ALIGN double lanes[W];
  const auto gather = [&](size_t first, auto field) {
    for (size_t l = 0; l < W; ++l) lanes[l] = field(args[first + l]);
    return P(hn::Load(d, lanes));
  };
  for (size_t first = 0; first < kMembers; first += W) {
    P p[Model::n_params];
    for (int i = 0; i < Model::n_params; ++i) p[i] = gather(first, [i](const auto& a) { return a.p[i]; });
    const P t = gather(first, [](const auto& a) { return a.t; });
    vec<P, Model::n> q, v;
    for (int i = 0; i < Model::n; ++i) {
      q[i] = gather(first, [i](const auto& a) { return a.q[i]; });
      v[i] = gather(first, [i](const auto& a) { return a.v[i]; });
    }
    std::vector<P> result(size);
    evaluate<Model>(t, q, v, p, result.data());
    for (size_t e = 0; e < size; ++e) {
      hn::Store(result[e].v, d, lanes);
      for (size_t l = 0; l < W; ++l) out[(first + l) * size + e] = lanes[l];
    }
  }
  return true;
}

// Models whose mass, forces and constraints call no elementary function: on doubles they give the
// same bits (their initial states call sin and cos, on doubles in both cases).
template <class Model>
struct only_arithmetic : std::bool_constant<std::is_same_v<Model, models::pendulum> ||
                                            std::is_same_v<Model, models::linear_oscillator>> {};
template <int Size>
struct only_arithmetic<models::chain<Size>> : std::true_type {};

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

    // The models on doubles.
    constexpr size_t size = outputs<Model>;
    std::vector<double> scalar(kMembers * size);
    for (size_t mem = 0; mem < kMembers; ++mem) {
      vec<double, Model::n> q, v;
      for (int i = 0; i < Model::n; ++i) q[i] = args[mem].q[i], v[i] = args[mem].v[i];
      evaluate<Model>(args[mem].t, q, v, args[mem].p, &scalar[mem * size]);
    }
    double scale = 0.0, worst = 0.0;
    size_t differ = 0;
    for (size_t i = 0; i < scalar.size(); ++i) scale = std::max(scale, std::fabs(scalar[i]));
    for (size_t i = 0; i < scalar.size(); ++i) {
      differ += !same_bits(one[i], scalar[i]);
      worst = std::max(worst, std::fabs(one[i] - scalar[i]));
    }
    if constexpr (only_arithmetic<Model>::value) {
      EXPECT_EQ(differ, 0u) << Model::name << ": the pack of one differs from doubles without elementary functions";
    }
    EXPECT_LE(worst, 1e-12 * scale) << Model::name;
    std::printf("[ pack ] %s: %zu values per member, widths 1..%zu equal, %zu of %zu differ from doubles (max %.2g of "
                "scale %.3g)\n",
                Model::name, size, size_t{1} << (widths - 1), differ, scalar.size(), worst, scale);
  });
  std::printf("[ digest ] %s %016llx\n", hwy::TargetName(HWY_STATIC_TARGET), static_cast<unsigned long long>(digest));
}

}  // namespace
}  // namespace lockstep::simd_test
