// tests/support/pack_models.hpp — the built-in models evaluated for many members at once on
// lockstep/simd/pack_inl.hpp's packs, and one member at a time on doubles: the mass matrix, the applied
// forces, the constraints (holonomic and non-holonomic), G = Phi_q and Phi_t by dual numbers; and the
// residual and the Jacobian blocks of every formulation (formulation/euler_lagrange.hpp), what a Newton
// iteration and a Jacobian evaluation compute.
// One header
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
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/simd/pack_inl.hpp"

namespace lockstep::simd_test {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

constexpr size_t kMembers = 64;  // members per study, a multiple of every width

// One member's arguments: parameters, t, q, v; for the residuals also the multipliers and q', v'.
template <class Model>
struct member_arguments {
  static constexpr int m_slots = Model::m > 0 ? Model::m : 1, k_slots = Model::k > 0 ? Model::k : 1;
  double p[Model::n_params];
  double t;
  double q[Model::n], v[Model::n];
  double lambda[m_slots], mu[m_slots], nu[k_slots], qdot[Model::n], vdot[Model::n];
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
    for (int i = 0; i < Model::m; ++i) a.lambda[i] = 10.0 * u(g), a.mu[i] = 1e-3 * u(g);
    for (int i = 0; i < Model::k; ++i) a.nu[i] = 10.0 * u(g);
    for (int i = 0; i < Model::n; ++i) a.qdot[i] = a.v[i] + 1e-3 * u(g), a.vdot[i] = 10.0 * u(g);
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

// The formulations' residuals, flattened: for index3, ggl, index1 (with Baumgarte's gains) and projected
// invariants in turn, F_q, F_v, F_phi, F_psi, F_a.
template <class Model>
constexpr size_t residual_outputs = 4 * (2 * Model::n + 2 * Model::m + Model::k);

template <class Model, class T, class P>
void evaluate_residuals(const T& t, const vec<T, state_layout<Model>::size>& y, const vec<T, Model::n>& qdot,
                        const vec<T, Model::n>& vdot, const P* p, T* out) {
  for (const formulation f :
       {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    const residual_parts<Model, T> r =
        detail::formulation_residual<Model>(f, t, y, qdot, vdot, p, baumgarte_gains{5.0, 7.0});
    for (int i = 0; i < Model::n; ++i) *out++ = r.Fq[i];
    for (int i = 0; i < Model::n; ++i) *out++ = r.Fv[i];
    for (int i = 0; i < Model::m; ++i) *out++ = r.Fphi[i];
    for (int i = 0; i < Model::m; ++i) *out++ = r.Fpsi[i];
    for (int i = 0; i < Model::k; ++i) *out++ = r.Fa[i];
  }
}

// The formulations' Jacobian blocks (formulation/euler_lagrange.hpp, jacobian_values), flattened: for
// index3, ggl, index1 (with Baumgarte's gains), projected invariants, and ggl with d(G^T mu)/dq in turn,
// M, D_v, K, G, Psi_q, Psi_v, A, A_q, A_v; then d(G^T mu)/dq.
template <class Model>
constexpr size_t jacobian_outputs = 5 * (3 * Model::n * Model::n + 3 * Model::m * Model::n + 3 * Model::k * Model::n) +
                                    Model::n * Model::n;

template <class Model, class T, class P>
void evaluate_jacobians(const T& t, const vec<T, state_layout<Model>::size>& y, const vec<T, Model::n>& vdot,
                        const P* p, T* out) {
  constexpr int n = Model::n;
  mat<T, n, n> mu_curvature;
  const auto flatten = [&](const auto& block) {
    for (const T& x : block.a) *out++ = x;
  };
  const auto blocks_of = [&](formulation f, mat<T, n, n>* curvature) {
    jacobian_values<Model, T> J;
    detail::jacobian_block_values<Model, ad::default_chunk>(f, t, y, vdot, p, J, baumgarte_gains{5.0, 7.0}, curvature);
    flatten(J.M), flatten(J.dQ_dv), flatten(J.K);
    // (a block with no rows holds one unused entry: mat's storage is never empty)
    if constexpr (Model::m > 0) flatten(J.G), flatten(J.Psi_q), flatten(J.Psi_v);
    if constexpr (Model::k > 0) flatten(J.A), flatten(J.A_q), flatten(J.A_v);
  };
  for (const formulation f :
       {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants})
    blocks_of(f, static_cast<mat<T, n, n>*>(nullptr));
  blocks_of(formulation::ggl, &mu_curvature);
  flatten(mu_curvature);
}

// The residuals and the Jacobian blocks are compared for the models whose reduced Newton matrix has at
// most large_member_newton_rows rows (formulation/euler_lagrange.hpp): chain<16>, the only larger one,
// is chain<8>'s code at twice the size, and its Jacobians on packs took most of the four builds' time.
template <class Model>
constexpr bool with_newton_parts = state_layout<Model>::newton_size <= large_member_newton_rows;
template <class Model>
constexpr size_t newton_outputs = with_newton_parts<Model> ? residual_outputs<Model> + jacobian_outputs<Model> : 0;

// A member's state vector (q, v, lambda, mu, nu) and q', v' from its arguments, in scalar T; field(i)
// gives entry i of the arguments' arrays in T.
template <class Model, class T, class Field>
void residual_point(const Field& field, vec<T, state_layout<Model>::size>& y, vec<T, Model::n>& qdot,
                    vec<T, Model::n>& vdot) {
  using L = state_layout<Model>;
  for (int i = 0; i < Model::n; ++i) {
    y[L::q + i] = field([i](const auto& a) { return a.q[i]; });
    y[L::v + i] = field([i](const auto& a) { return a.v[i]; });
    qdot[i] = field([i](const auto& a) { return a.qdot[i]; });
    vdot[i] = field([i](const auto& a) { return a.vdot[i]; });
  }
  for (int i = 0; i < Model::m; ++i) {
    y[L::lambda + i] = field([i](const auto& a) { return a.lambda[i]; });
    y[L::mu + i] = field([i](const auto& a) { return a.mu[i]; });
  }
  for (int i = 0; i < Model::k; ++i) y[L::nu + i] = field([i](const auto& a) { return a.nu[i]; });
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

// All members evaluated in packs of W lanes, per member the models' outputs and, with Newton, the
// residuals' and the Jacobians' (newton_outputs); false where this instruction set has fewer than W.
template <class Model, size_t W, bool Newton>
bool evaluate_in_packs(const std::vector<member_arguments<Model>>& args, std::vector<double>& out) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  const D d;
  if (hn::Lanes(d) != W) return false;
  constexpr size_t size = outputs<Model> + (Newton ? newton_outputs<Model> : 0);
  out.assign(kMembers * size, 0.0);
  HWY_ALIGN double lanes[W];
  const auto packs = pack_arguments<Model, W>(args);
  for (size_t k = 0; k < packs.size(); ++k) {
    P result[size];
    evaluate<Model>(packs[k].t, packs[k].q, packs[k].v, packs[k].p, result);
    if constexpr (Newton && with_newton_parts<Model>) {
      vec<P, state_layout<Model>::size> y;
      vec<P, Model::n> qdot, vdot;
      residual_point<Model, P>(
          [&](auto field) {
            for (size_t l = 0; l < W; ++l) lanes[l] = field(args[k * W + l]);
            return P(hn::Load(d, lanes));
          },
          y, qdot, vdot);
      evaluate_residuals<Model>(packs[k].t, y, qdot, vdot, packs[k].p, result + outputs<Model>);
      evaluate_jacobians<Model>(packs[k].t, y, vdot, packs[k].p, result + outputs<Model> + residual_outputs<Model>);
    }
    for (size_t e = 0; e < size; ++e) {
      hn::Store(result[e].v, d, lanes);
      for (size_t l = 0; l < W; ++l) out[(k * W + l) * size + e] = lanes[l];
    }
  }
  return true;
}

}  // namespace lockstep::simd_test
