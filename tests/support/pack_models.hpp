// tests/support/pack_models.hpp — the built-in models evaluated for many members at once on
// lockstep/simd/pack_inl.hpp's packs, and one member at a time on doubles: the mass matrix, the applied
// forces, the constraints (holonomic and non-holonomic), G = Phi_q and Phi_t by dual numbers. One header
// for the test that requires every lane to equal the member alone (tests/simd/pack_model_test.cpp) and
// the benchmark that times it (bench/simd/model_speed.cpp), so that they evaluate the same thing.
//
// For translation units built for one instruction set with its flags (HWY_COMPILE_ONLY_STATIC): the
// models' templates take the instruction set of the unit that instantiates them (docs/SIMD.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "hwy/highway.h"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/simd/pack_inl.hpp"

namespace lockstep::simd_test {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

constexpr size_t kMembers = 64;  // members per study, a multiple of every width

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

// Chunk: the directions each dual-number pass of the Jacobian carries (the results do not depend on it:
// every direction sees the same operations).
template <class Model, int Chunk = ad::default_chunk, class T, class P>
void evaluate(const T& t, const vec<T, Model::n>& q, const vec<T, Model::n>& v, const P* p, T* out) {
  constexpr int n = Model::n, m = Model::m;
  const mat<T, n, n> M = Model::template mass<T, P>(q, p);
  for (int i = 0; i < n * n; ++i) *out++ = M.a[i];
  const vec<T, n> Q = Model::template force<T, P>(t, q, v, p);
  for (int i = 0; i < n; ++i) *out++ = Q[i];
  const auto lin = constraint_linearize<Model, Chunk>(t, q, p);
  for (int i = 0; i < m; ++i) *out++ = lin.phi[i];
  if constexpr (Model::k > 0) {
    const vec<T, Model::k> nh = Model::template nonholonomic<T, P>(t, q, v, p);
    for (int i = 0; i < Model::k; ++i) *out++ = nh[i];
  }
  for (int i = 0; i < m * n; ++i) *out++ = lin.G.a[i];
  for (int i = 0; i < m; ++i) *out++ = lin.phi_t[i];
}

// The arguments of W consecutive members, lane l for member first + l.
template <class Model, class D>
struct packed_arguments {
  using P = sl::pack<D>;
  P p[Model::n_params];
  P t;
  vec<P, Model::n> q, v;
};
// All members' arguments in packs of W lanes (kMembers / W packs); W must be this target's or fewer.
template <class Model, size_t W>
std::vector<packed_arguments<Model, hn::CappedTag<double, W>>> pack_arguments(
    const std::vector<member_arguments<Model>>& args) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  HWY_ALIGN double lanes[W];
  std::vector<packed_arguments<Model, D>> packs(kMembers / W);
  for (size_t k = 0; k < packs.size(); ++k) {
    const auto gather = [&](auto field) {
      for (size_t l = 0; l < W; ++l) lanes[l] = field(args[k * W + l]);
      return P(hn::Load(d, lanes));
    };
    for (int i = 0; i < Model::n_params; ++i) packs[k].p[i] = gather([i](const auto& a) { return a.p[i]; });
    packs[k].t = gather([](const auto& a) { return a.t; });
    for (int i = 0; i < Model::n; ++i) {
      packs[k].q[i] = gather([i](const auto& a) { return a.q[i]; });
      packs[k].v[i] = gather([i](const auto& a) { return a.v[i]; });
    }
  }
  return packs;
}

// All members evaluated in packs of W lanes; false where this instruction set has fewer than W.
template <class Model, size_t W>
bool evaluate_in_packs(const std::vector<member_arguments<Model>>& args, std::vector<double>& out) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  constexpr size_t size = outputs<Model>;
  out.assign(kMembers * size, 0.0);
  HWY_ALIGN double lanes[W];
  const auto packs = pack_arguments<Model, W>(args);
  for (size_t k = 0; k < packs.size(); ++k) {
    P result[size];
    evaluate<Model>(packs[k].t, packs[k].q, packs[k].v, packs[k].p, result);
    for (size_t e = 0; e < size; ++e) {
      hn::Store(result[e].v, d, lanes);
      for (size_t l = 0; l < W; ++l) out[(k * W + l) * size + e] = lanes[l];
    }
  }
  return true;
}

}  // namespace lockstep::simd_test
