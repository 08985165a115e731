// tests/cuda/device_check_test.cpp — the device check kernels (kernels/cuda/device_check.cu) against
// the same per-member function compiled by the host compiler.
//
// Compiled by g++: check_member<Model> from device_check.hpp is the host reference, and the CUDA
// runtime is reached only through device_check::run / gpu_count. The GPU comparison is skipped where
// no device exists (docs/ARCHITECTURE.md section 2); the host reference's own sanity test runs everywhere.
//
// Tolerances: CUDA results cannot be bitwise equal to the CPU's (different math libraries, FMA
// contraction: docs/DESIGN-NOTES.md, "Determinism"). Single evaluations (model functions, Jacobians) agree to a few
// ulps of their section's largest entry; factors and solutions to that times the condition of the
// matrix, which for andrews (scales differing by 1e5) is large, hence the looser bound there. The
// constraint residuals Phi and G v + Phi_t are the exception to "their section's largest entry": at the
// consistent (q, v) the inputs hold, they are sums of terms of order one that cancel to ~1e-17, so their
// rounding error is a few ulps of those terms (see residual_scale), and the device's contractions change
// it (seen on an H100: Phi = -5.4e-17 on the device against -5.6e-17 on the host). LU
// factors and pivot vectors are not compared: where two candidate pivots are within rounding of each
// other the device may legitimately pick the other row; the solutions must agree regardless.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "device_check.hpp"
#include "lockstep/model/registry.hpp"

namespace {

using namespace lockstep;
using lockstep::device_check::layout;

constexpr int members = 200;  // not a multiple of the block size: the bounds check matters

// Member i's inputs in SoA storage: defaults for member 0, small perturbations of parameters and
// initial inputs for the others, a consistent (q, v) from the model's initial_state, random
// multipliers, held accelerations and complex shifts.
template <class Model>
std::vector<double> make_inputs(std::uint64_t seed) {
  using L = layout<Model>;
  std::vector<double> in(std::size_t(L::in_size) * members);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < members; ++i) {
    device_check::soa_view<double> x{in.data(), members, i};
    const double wiggle = i == 0 ? 0.0 : 1.0;
    double p[Model::n_params > 0 ? Model::n_params : 1];
    // A model without parameters or initial inputs need not declare the (empty) table.
    if constexpr (Model::n_params > 0)
      for (int j = 0; j < Model::n_params; ++j) {
        p[j] = Model::params[j].default_value * (1.0 + wiggle * 0.01 * u(rng));
        x[L::in_params + j] = p[j];
      }
    double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1];
    if constexpr (Model::n_inputs > 0)
      for (int j = 0; j < Model::n_inputs; ++j) {
        inputs[j] = Model::inputs[j].default_value + wiggle * 0.01 * u(rng);
        x[L::in_inputs + j] = inputs[j];
      }
    vec<double, Model::n> q0, v0;
    Model::initial_state(p, inputs, q0, v0);
    x[L::in_t] = wiggle * 0.5 * (1.0 + u(rng));
    for (int j = 0; j < Model::n; ++j) {
      x[L::in_q + j] = q0[j];
      x[L::in_v + j] = v0[j];
      x[L::in_acc + j] = u(rng);
    }
    for (int j = 0; j < Model::m; ++j) x[L::in_lambda + j] = u(rng);
    for (int j = 0; j < Model::k; ++j) x[L::in_nu + j] = u(rng);
    x[L::in_shift] = 2.0 + u(rng);
    x[L::in_shift + 1] = 1.0 + 0.5 * u(rng);
  }
  return in;
}

template <class Model>
std::vector<double> host_outputs(const std::vector<double>& in) {
  std::vector<double> out(std::size_t(layout<Model>::out_size) * members, 0.0);
  for (int i = 0; i < members; ++i)
    device_check::check_member<Model>(device_check::soa_view<const double>{in.data(), members, i},
                                      device_check::soa_view<double>{out.data(), members, i});
  return out;
}

// What a section's tolerance is relative to.
enum class scale_of {
  largest_entry,        // the section's largest host entry
  position_residual,    // Phi at q: row r's terms, sum_j |G_rj q_j| (residual_scale)
  velocity_residual,    // G v + Phi_t: row r's terms, sum_j |G_rj v_j| + |Phi_t,r|
};

struct section {
  const char* name;
  int offset;
  int size;
  double rtol;
  scale_of scale = scale_of::largest_entry;
};

// The size of the terms that cancel in a constraint residual of member i, row r. For a constraint
// homogeneous of degree d in q, Euler's theorem gives sum_j G_rj q_j = d Phi_r monomial by monomial, so
// sum_j |G_rj q_j| bounds d times its terms' magnitude; for the built-in constraints (polynomials in q and
// in sines and cosines of angles, plus lengths) it has the order of those terms. Velocity residuals are
// linear in v, so their terms are G_rj v_j and Phi_t,r exactly.
template <class Model>
double residual_scale(scale_of kind, const std::vector<double>& in, const std::vector<double>& host, int r, int i);

template <class Model>
std::vector<section> sections() {
  using L = layout<Model>;
  constexpr int n = L::n, m = L::m, k = L::k, N = L::N;
  constexpr double eval = 1e-11;
  const double factor = std::string_view(Model::name) == "andrews" ? 1e-6 : 1e-9;
  return {
      {"q0", L::out_q0, n, eval},
      {"v0", L::out_v0, n, eval},
      {"mass", L::out_mass, n * n, eval},
      {"phi", L::out_phi, m, eval, scale_of::position_residual},
      {"G", L::out_G, m * n, eval},
      {"phi_t", L::out_phi_t, m, eval},
      {"G v + phi_t", L::out_gv, m, eval, scale_of::velocity_residual},
      {"gamma", L::out_gamma, m, eval},
      {"constraint_force_jacobian", L::out_Kc, n * n, eval},
      {"velocity_constraint_jacobian", L::out_gv_q, m * n, eval},
      {"Q", L::out_Q, n, eval},
      {"dQ/dq", L::out_dQ_dq, n * n, eval},
      {"dQ/dv", L::out_dQ_dv, n * n, eval},
      {"inertia_jacobian", L::out_Ki, n * n, eval},
      {"nonholonomic A", L::out_nh_A, k * n, eval},
      {"nonholonomic a", L::out_nh_a, k, eval},
      {"nonholonomic_jacobian_q", L::out_nh_Aq, k * n, eval},
      {"nonholonomic_force_jacobian", L::out_nh_K, L::out_nh_gamma - L::out_nh_K, eval},
      {"nonholonomic_gamma", L::out_nh_gamma, k, eval},
      {"lu info", L::out_lu_info, 1, 0.0},
      {"lu solution", L::out_lu_x, N, factor},
      {"complex lu info", L::out_zlu_info, 1, 0.0},
      {"complex lu solution", L::out_zlu_x, 2 * N, factor},
      {"cholesky(M) info", L::out_chol_m_info, 1, 0.0},
      {"cholesky(M)", L::out_chol_m, n * n, factor},
      {"gram info", L::out_gram_info, 1, 0.0},
      {"cholesky(C M^-1 C^T)", L::out_gram, L::C * L::C, factor},
  };
}

double at(const std::vector<double>& data, int variable, int member) {
  return data[std::size_t(variable) * members + std::size_t(member)];
}

template <class Model>
double residual_scale(scale_of kind, const std::vector<double>& in, const std::vector<double>& host, int r, int i) {
  using L = layout<Model>;
  const int from = kind == scale_of::position_residual ? L::in_q : L::in_v;
  double terms = kind == scale_of::velocity_residual ? std::abs(at(host, L::out_phi_t + r, i)) : 0.0;
  for (int j = 0; j < L::n; ++j) terms += std::abs(at(host, L::out_G + r * L::n + j, i) * at(in, from + j, i));
  return terms;
}

// Calls f.template operator()<Model>(index) for each built-in model.
template <class F>
void for_each_model(F&& f) {
  int index = 0;
  builtin_models::for_each([&]<class Model>() { f.template operator()<Model>(index++); });
}

TEST(DeviceCheck, HostReferenceFactorsEverySaddlePointMatrix) {
  for_each_model([]<class Model>(int) {
    using L = layout<Model>;
    const std::vector<double> in = make_inputs<Model>(2024);
    const std::vector<double> out = host_outputs<Model>(in);
    for (int i = 0; i < members; ++i) {
      ASSERT_EQ(at(out, L::out_lu_info, i), double(lu_ok)) << Model::name << " member " << i;
      ASSERT_EQ(at(out, L::out_zlu_info, i), double(lu_ok)) << Model::name << " member " << i;
      ASSERT_EQ(at(out, L::out_chol_m_info, i), double(lu_ok)) << Model::name << " member " << i;
      ASSERT_EQ(at(out, L::out_gram_info, i), double(lu_ok)) << Model::name << " member " << i;
    }
    // Member 0's acceleration solve reproduces the saddle-point equations M a + G^T lambda + A^T nu = Q,
    // G a = -gamma, A a = -gamma_nh, assembled again from the stored blocks.
    constexpr int n = L::n, m = L::m, k = L::k;
    double scale = 0.0, residual = 0.0;
    for (int r = 0; r < n; ++r) {
      double s = -at(out, L::out_Q + r, 0);
      scale = std::max(scale, std::abs(at(out, L::out_Q + r, 0)));
      for (int j = 0; j < n; ++j) {
        const double term = at(out, L::out_mass + r * n + j, 0) * at(out, L::out_lu_x + j, 0);
        s += term;
        scale = std::max(scale, std::abs(term));
      }
      for (int c = 0; c < m; ++c) s += at(out, L::out_G + c * n + r, 0) * at(out, L::out_lu_x + n + c, 0);
      for (int c = 0; c < k; ++c) s += at(out, L::out_nh_A + c * n + r, 0) * at(out, L::out_lu_x + n + m + c, 0);
      residual = std::max(residual, std::abs(s));
    }
    for (int c = 0; c < m; ++c) {
      double s = at(out, L::out_gamma + c, 0);
      for (int j = 0; j < n; ++j) s += at(out, L::out_G + c * n + j, 0) * at(out, L::out_lu_x + j, 0);
      residual = std::max(residual, std::abs(s));
    }
    for (int c = 0; c < k; ++c) {
      double s = at(out, L::out_nh_gamma + c, 0);
      for (int j = 0; j < n; ++j) s += at(out, L::out_nh_A + c * n + j, 0) * at(out, L::out_lu_x + j, 0);
      residual = std::max(residual, std::abs(s));
    }
    EXPECT_LE(residual, 1e-9 * std::max(scale, 1.0)) << Model::name;
  });
}

TEST(DeviceCheck, GpuMatchesHostForEveryBuiltinModel) {
  if (device_check::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: the kernels are only compiled here";
  for_each_model([]<class Model>(int index) {
    const std::vector<double> in = make_inputs<Model>(7 + index);
    const std::vector<double> expected = host_outputs<Model>(in);
    std::vector<double> actual(expected.size(), -1.0);
    const device_check::run_result run = device_check::run(index, in.data(), actual.data(), members);
    if (run.status == device_check::run_result::does_not_fit) {
      std::cout << "[   NOTE   ] not run: " << run.message << "\n";
      return;
    }
    ASSERT_EQ(run.status, device_check::run_result::ok) << Model::name << ": " << run.message;
    for (const section& s : sections<Model>()) {
      for (int i = 0; i < members; ++i) {
        double largest = 0.0;
        for (int j = 0; j < s.size; ++j) largest = std::max(largest, std::abs(at(expected, s.offset + j, i)));
        for (int j = 0; j < s.size; ++j) {
          const double scale = s.scale == scale_of::largest_entry
                                   ? largest
                                   : std::max(largest, residual_scale<Model>(s.scale, in, expected, j, i));
          const double tol = s.rtol * scale;
          const double want = at(expected, s.offset + j, i), got = at(actual, s.offset + j, i);
          if (std::isnan(want) && std::isnan(got)) continue;
          ASSERT_LE(std::abs(got - want), tol)
              << Model::name << ", " << s.name << " entry " << j << ", member " << i << ": device " << got
              << ", host " << want;
        }
      }
    }
  });
}

}  // namespace
