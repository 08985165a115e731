// kernels/cuda/device_check.hpp — one member's worth of every per-member computation the solver will
// run on the GPU, for each built-in model: the model functions, every AD-derived Jacobian
// (model/derivatives.hpp) and the dense factorizations (core/linalg.hpp) of the saddle-point matrix
// [[M, G^T, A^T], [G, 0, 0], [A, 0, 0]] in real and complex arithmetic, and Cholesky of M and of the
// Gram matrix C M^-1 C^T, C = [G; A].
//
// Why it exists: the machines the project is built and tested on have no GPU (one is lent now and then:
// docs/GPU.md sections 6-8), so the CUDA build is held to what a compiler can prove (docs/ARCHITECTURE.md
// section 2). device_check.cu instantiates check_member<Model> in a __global__ kernel
// for every model of lockstep::builtin_models, so nvcc must compile every LOCKSTEP_HD function the
// step kernels will reach, with diagnostics 20011/20013/20014 (a host function called from device code)
// as errors, and ptxas reports registers, stack and spills for each. Where a GPU exists,
// tests/cuda/device_check_test.cpp runs the kernels and compares them with check_member<Model> compiled
// by the host compiler: the same source on both sides (it passed on H100s, docs/GPU.md sections 7.1
// and 8.1).
//
// Storage is structure-of-arrays as in the real batch kernels (docs/ARCHITECTURE.md section 3): variable j of
// member i at data[j * stride + i]. Matrices are flattened row-major, one variable per entry; complex
// entries take two variables (re, im).
#pragma once

#include <string>

#include "lockstep/core/complex.hpp"
#include "lockstep/core/hd.hpp"
#include "lockstep/core/linalg.hpp"
#include "lockstep/model/derivatives.hpp"

namespace lockstep::device_check {

// Where each input and output variable of a member lives. Sections of size zero (m = 0, k = 0) are
// legal and simply empty.
template <class Model>
struct layout {
  static constexpr int n = Model::n, m = Model::m, k = Model::k;
  static constexpr int N = n + m + k;  // size of the saddle-point matrix
  static constexpr int C = m + k;      // rows of the constraint Jacobian [G; A]

  // ---- inputs ----
  static constexpr int in_t = 0;
  static constexpr int in_q = in_t + 1;
  static constexpr int in_v = in_q + n;
  static constexpr int in_lambda = in_v + n;
  static constexpr int in_nu = in_lambda + m;
  static constexpr int in_acc = in_nu + k;          // the acceleration held fixed in d(M a)/dq
  static constexpr int in_shift = in_acc + n;       // (re, im): the complex Newton shift
  static constexpr int in_params = in_shift + 2;
  static constexpr int in_inputs = in_params + Model::n_params;  // named initial inputs
  static constexpr int in_size = in_inputs + Model::n_inputs;

  // ---- outputs ----
  static constexpr int out_q0 = 0;                  // initial_state
  static constexpr int out_v0 = out_q0 + n;
  static constexpr int out_mass = out_v0 + n;       // M, n x n
  static constexpr int out_phi = out_mass + n * n;  // constraint_linearize: Phi, G, Phi_t
  static constexpr int out_G = out_phi + m;
  static constexpr int out_phi_t = out_G + m * n;
  static constexpr int out_gv = out_phi_t + m;      // velocity_constraint: G v + Phi_t
  static constexpr int out_gamma = out_gv + m;      // constraint_gamma
  static constexpr int out_Kc = out_gamma + m;      // constraint_force_jacobian, n x n
  static constexpr int out_gv_q = out_Kc + n * n;   // velocity_constraint_jacobian, m x n
  static constexpr int out_Q = out_gv_q + m * n;    // force_linearize: Q, dQ/dq, dQ/dv
  static constexpr int out_dQ_dq = out_Q + n;
  static constexpr int out_dQ_dv = out_dQ_dq + n * n;
  static constexpr int out_Ki = out_dQ_dv + n * n;  // inertia_jacobian, n x n
  static constexpr int out_nh_A = out_Ki + n * n;   // nonholonomic_linearize: A (k x n), a (k)
  static constexpr int out_nh_a = out_nh_A + k * n;
  static constexpr int out_nh_Aq = out_nh_a + k;    // nonholonomic_jacobian_q, k x n
  static constexpr int out_nh_K = out_nh_Aq + k * n;            // nonholonomic_force_jacobian
  static constexpr int out_nh_gamma = out_nh_K + (k > 0 ? n * n : 0);
  // real saddle-point matrix: info, LU factors, pivots, solution of S x = (Q, -gamma, -gamma_nh)
  static constexpr int out_lu_info = out_nh_gamma + k;
  static constexpr int out_lu = out_lu_info + 1;
  static constexpr int out_lu_pivot = out_lu + N * N;
  static constexpr int out_lu_x = out_lu_pivot + N;
  // complex Newton matrix at shift s: [[s^2 M - s dQ/dv - dQ/dq + Kc + Ki + nh_K, G^T, A^T], [G], [A]]
  static constexpr int out_zlu_info = out_lu_x + N;
  static constexpr int out_zlu = out_zlu_info + 1;              // (re, im) per entry
  static constexpr int out_zlu_pivot = out_zlu + 2 * N * N;
  static constexpr int out_zlu_x = out_zlu_pivot + N;           // (re, im) per entry
  // Cholesky of M and of the Gram matrix C M^-1 C^T
  static constexpr int out_chol_m_info = out_zlu_x + 2 * N;
  static constexpr int out_chol_m = out_chol_m_info + 1;
  static constexpr int out_gram_info = out_chol_m + n * n;
  static constexpr int out_gram = out_gram_info + 1;
  static constexpr int out_size = out_gram + C * C;
};

// A member's slice of SoA storage.
template <class Value>
struct soa_view {
  Value* data;
  int stride;
  int member;
  LOCKSTEP_HD Value& operator[](int j) const { return data[j * stride + member]; }
};

template <class T, int R, int C, class View>
LOCKSTEP_HD void store(const View& out, int offset, const mat<T, R, C>& A) {
  for (int i = 0; i < R * C; ++i) out[offset + i] = A.a[i];
}
template <class T, int N, class View>
LOCKSTEP_HD void store(const View& out, int offset, const vec<T, N>& x) {
  for (int i = 0; i < N; ++i) out[offset + i] = x[i];
}
template <int R, int C, class View>
LOCKSTEP_HD void store(const View& out, int offset, const mat<complex<double>, R, C>& A) {
  for (int i = 0; i < R * C; ++i) {
    out[offset + 2 * i] = A.a[i].re;
    out[offset + 2 * i + 1] = A.a[i].im;
  }
}
template <int N, class View>
LOCKSTEP_HD void store(const View& out, int offset, const vec<complex<double>, N>& x) {
  for (int i = 0; i < N; ++i) {
    out[offset + 2 * i] = x[i].re;
    out[offset + 2 * i + 1] = x[i].im;
  }
}
template <int N, class View>
LOCKSTEP_HD void store(const View& out, int offset, const vec<int, N>& x) {
  for (int i = 0; i < N; ++i) out[offset + i] = double(x[i]);
}

// ---- the phases of a member's check ----
//
// Each phase loads what it needs from the member's inputs (and from outputs of earlier phases), works
// in locals and stores its results, as a batch kernel does. On the device the phases are kept as real
// calls (__noinline__): their local arrays are then live one phase at a time, so a thread's stack is
// the largest phase's frame rather than the sum of all of them. Inlined into one body, chain<16> needed
// 355 KB of stack per thread, more than any GPU can reserve for its full complement of resident
// threads, so the kernel could not even launch.
#if defined(__CUDACC__)
#define LOCKSTEP_CHECK_PHASE __host__ __device__ __noinline__
#else
#define LOCKSTEP_CHECK_PHASE inline
#endif

template <class Model>
struct member_inputs {
  static constexpr int n = Model::n, m = Model::m, k = Model::k;
  double p[Model::n_params > 0 ? Model::n_params : 1];
  double inputs[Model::n_inputs > 0 ? Model::n_inputs : 1];
  double t;
  vec<double, n> q, v, acc;
  vec<double, m> lambda;
  vec<double, k> nu;
  complex<double> shift;
};

template <class Model>
LOCKSTEP_HD member_inputs<Model> load_inputs(const soa_view<const double>& in) {
  using L = layout<Model>;
  member_inputs<Model> x;
  for (int j = 0; j < Model::n_params; ++j) x.p[j] = in[L::in_params + j];
  for (int j = 0; j < Model::n_inputs; ++j) x.inputs[j] = in[L::in_inputs + j];
  x.t = in[L::in_t];
  for (int j = 0; j < L::n; ++j) {
    x.q[j] = in[L::in_q + j];
    x.v[j] = in[L::in_v + j];
    x.acc[j] = in[L::in_acc + j];
  }
  for (int j = 0; j < L::m; ++j) x.lambda[j] = in[L::in_lambda + j];
  for (int j = 0; j < L::k; ++j) x.nu[j] = in[L::in_nu + j];
  x.shift = complex<double>(in[L::in_shift], in[L::in_shift + 1]);
  return x;
}

// An output of an earlier phase, read back.
template <int R, int C>
LOCKSTEP_HD mat<double, R, C> load_mat(const soa_view<double>& out, int offset) {
  mat<double, R, C> A;
  for (int i = 0; i < R * C; ++i) A.a[i] = out[offset + i];
  return A;
}
template <int N>
LOCKSTEP_HD vec<double, N> load_vec(const soa_view<double>& out, int offset) {
  vec<double, N> x;
  for (int i = 0; i < N; ++i) x[i] = out[offset + i];
  return x;
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_model_functions(const soa_view<const double>& in, const soa_view<double>& out) {
  using L = layout<Model>;
  const member_inputs<Model> x = load_inputs<Model>(in);
  vec<double, L::n> q0, v0;
  Model::initial_state(x.p, x.inputs, q0, v0);
  store(out, L::out_q0, q0);
  store(out, L::out_v0, v0);
  store(out, L::out_mass, Model::template mass<double, double>(x.q, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_constraints(const soa_view<const double>& in, const soa_view<double>& out) {
  using L = layout<Model>;
  const member_inputs<Model> x = load_inputs<Model>(in);
  const auto cl = constraint_linearize<Model>(x.t, x.q, x.p);
  store(out, L::out_phi, cl.phi);
  store(out, L::out_G, cl.G);
  store(out, L::out_phi_t, cl.phi_t);
  store(out, L::out_gv, velocity_constraint<Model>(x.t, x.q, x.v, x.p));
  store(out, L::out_gamma, constraint_gamma<Model>(x.t, x.q, x.v, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_constraint_force_jacobian(const soa_view<const double>& in,
                                                          const soa_view<double>& out) {
  const member_inputs<Model> x = load_inputs<Model>(in);
  store(out, layout<Model>::out_Kc, constraint_force_jacobian<Model>(x.t, x.q, x.lambda, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_velocity_constraint_jacobian(const soa_view<const double>& in,
                                                             const soa_view<double>& out) {
  const member_inputs<Model> x = load_inputs<Model>(in);
  store(out, layout<Model>::out_gv_q, velocity_constraint_jacobian<Model>(x.t, x.q, x.v, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_forces(const soa_view<const double>& in, const soa_view<double>& out) {
  using L = layout<Model>;
  const member_inputs<Model> x = load_inputs<Model>(in);
  const auto fl = force_linearize<Model>(x.t, x.q, x.v, x.p);
  store(out, L::out_Q, fl.Q);
  store(out, L::out_dQ_dq, fl.dQ_dq);
  store(out, L::out_dQ_dv, fl.dQ_dv);
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_inertia_jacobian(const soa_view<const double>& in, const soa_view<double>& out) {
  const member_inputs<Model> x = load_inputs<Model>(in);
  store(out, layout<Model>::out_Ki, inertia_jacobian<Model>(x.q, x.acc, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_nonholonomic(const soa_view<const double>& in, const soa_view<double>& out) {
  using L = layout<Model>;
  const member_inputs<Model> x = load_inputs<Model>(in);
  const auto nl = nonholonomic_linearize<Model>(x.t, x.q, x.p);
  store(out, L::out_nh_A, nl.A);
  store(out, L::out_nh_a, nl.a);
  store(out, L::out_nh_Aq, nonholonomic_jacobian_q<Model>(x.t, x.q, x.v, x.p));
  store(out, L::out_nh_gamma, nonholonomic_gamma<Model>(x.t, x.q, x.v, x.p));
}

template <class Model>
LOCKSTEP_CHECK_PHASE void check_nonholonomic_force_jacobian(const soa_view<const double>& in,
                                                            const soa_view<double>& out) {
  const member_inputs<Model> x = load_inputs<Model>(in);
  store(out, layout<Model>::out_nh_K, nonholonomic_force_jacobian<Model>(x.t, x.q, x.nu, x.p));
}

// The saddle-point matrix [[top_left, G^T, A^T], [G, 0, 0], [A, 0, 0]] with top_left = M (real) or
// the complex Newton block, and the right-hand side (Q, -gamma, -gamma_nh) of the index-1
// acceleration solve, from the outputs of the earlier phases.
template <class Model, class E>
LOCKSTEP_HD void assemble_saddle_point(const soa_view<double>& out, mat<E, layout<Model>::N, layout<Model>::N>& S,
                                       vec<E, layout<Model>::N>& rhs) {
  using L = layout<Model>;
  constexpr int n = L::n, m = L::m, k = L::k;
  for (int r = 0; r < m; ++r) {
    for (int j = 0; j < n; ++j) S(n + r, j) = S(j, n + r) = E(out[L::out_G + r * n + j]);
    rhs[n + r] = E(-out[L::out_gamma + r]);
  }
  for (int r = 0; r < k; ++r) {
    for (int j = 0; j < n; ++j) S(n + m + r, j) = S(j, n + m + r) = E(out[L::out_nh_A + r * n + j]);
    rhs[n + m + r] = E(-out[L::out_nh_gamma + r]);
  }
}

// The real saddle-point matrix of the index-1 acceleration solve, pivoted LU.
template <class Model>
LOCKSTEP_CHECK_PHASE void check_real_lu(const soa_view<double>& out) {
  using L = layout<Model>;
  constexpr int n = L::n, N = L::N;
  mat<double, N, N> S{};
  vec<double, N> rhs{};
  assemble_saddle_point<Model>(out, S, rhs);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) S(i, j) = out[L::out_mass + i * n + j];
    rhs[i] = out[L::out_Q + i];
  }
  vec<int, N> pivot{};
  const factor_result f = lu_factor(S, pivot);
  out[L::out_lu_info] = double(f.info);
  if (f.info == lu_ok) lu_solve(S, pivot, rhs);
  store(out, L::out_lu, S);
  store(out, L::out_lu_pivot, pivot);
  store(out, L::out_lu_x, rhs);
}

// The complex Newton matrix at shift s (Radau IIA's second block, Hairer & Wanner IV.8 (8.16) shape):
// top-left s^2 M - s dQ/dv - dQ/dq + d(G^T lambda)/dq + d(M a)/dq + d(A^T nu)/dq.
template <class Model>
LOCKSTEP_CHECK_PHASE void check_complex_lu(const soa_view<const double>& in, const soa_view<double>& out) {
  using L = layout<Model>;
  using Z = complex<double>;
  constexpr int n = L::n, k = L::k, N = L::N;
  const Z s(in[L::in_shift], in[L::in_shift + 1]);
  const Z s2 = s * s;
  mat<Z, N, N> S{};
  vec<Z, N> rhs{};
  assemble_saddle_point<Model>(out, S, rhs);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int ij = i * n + j;
      double stiffness = out[L::out_Kc + ij] + out[L::out_Ki + ij] - out[L::out_dQ_dq + ij];
      if constexpr (k > 0) stiffness += out[L::out_nh_K + ij];
      S(i, j) = s2 * Z(out[L::out_mass + ij]) - s * Z(out[L::out_dQ_dv + ij]) + Z(stiffness);
    }
    rhs[i] = Z(out[L::out_Q + i], in[L::in_acc + i]);
  }
  vec<int, N> pivot{};
  const factor_result f = lu_factor(S, pivot);
  out[L::out_zlu_info] = double(f.info);
  if (f.info == lu_ok) lu_solve(S, pivot, rhs);
  store(out, L::out_zlu, S);
  store(out, L::out_zlu_pivot, pivot);
  store(out, L::out_zlu_x, rhs);
}

// Cholesky of M, and of the Gram matrix C M^-1 C^T, C = [G; A], of projections (Ascher & Petzold 1998, 10.2).
template <class Model>
LOCKSTEP_CHECK_PHASE void check_cholesky(const soa_view<double>& out) {
  using L = layout<Model>;
  constexpr int n = L::n, m = L::m, k = L::k, C = L::C;
  const mat<double, n, n> M = load_mat<n, n>(out, L::out_mass);
  mat<double, n, n> LM = M;
  const factor_result fm = cholesky_factor(LM);
  out[L::out_chol_m_info] = double(fm.info);
  store(out, L::out_chol_m, LM);
  if constexpr (C > 0) {
    mat<double, C, n> Cm;
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < n; ++j) Cm(r, j) = out[L::out_G + r * n + j];
    for (int r = 0; r < k; ++r)
      for (int j = 0; j < n; ++j) Cm(m + r, j) = out[L::out_nh_A + r * n + j];
    mat<double, n, C> X = transpose(Cm);  // becomes M^-1 C^T
    mat<double, n, n> LU = M;
    vec<int, n> pivot{};
    factor_result fg = lu_factor(LU, pivot);
    mat<double, C, C> W{};
    if (fg.info == lu_ok) {
      lu_solve(LU, pivot, X);
      W = Cm * X;
      fg = cholesky_factor(W);
    }
    out[L::out_gram_info] = double(fg.info);
    store(out, L::out_gram, W);
  } else {
    out[L::out_gram_info] = double(lu_ok);
  }
}

// Everything for one member: reads its inputs from `in`, writes every output to `out`.
template <class Model>
LOCKSTEP_HD void check_member(const soa_view<const double>& in, const soa_view<double>& out) {
  check_model_functions<Model>(in, out);
  check_constraints<Model>(in, out);
  check_constraint_force_jacobian<Model>(in, out);
  check_velocity_constraint_jacobian<Model>(in, out);
  check_forces<Model>(in, out);
  check_inertia_jacobian<Model>(in, out);
  // The non-holonomic functions exist only for k > 0 (and are never instantiated otherwise).
  if constexpr (Model::k > 0) {
    check_nonholonomic<Model>(in, out);
    check_nonholonomic_force_jacobian<Model>(in, out);
  }
  check_real_lu<Model>(out);
  check_complex_lu<Model>(in, out);
  check_cholesky<Model>(out);
}

// ---- host entry points of device_check.cu (the only part that needs the CUDA runtime) ----

// The number of usable CUDA devices: 0 when there is none or no driver.
int gpu_count();

struct run_result {
  enum status_code { ok, failed, does_not_fit } status = ok;
  std::string message;  // what failed, or why the kernel cannot run on this device
};

// Runs the check kernel of model number `model_index` of lockstep::builtin_models (by position, as
// builtin_models::for_each enumerates them) on `members` members: copies h_in (layout<Model>::in_size
// variables, stride = members) to the device, launches, and copies the outputs (out_size variables,
// stride = members) back into h_out.
//
// does_not_fit: the driver reserves a kernel's per-thread local memory (its stack, ptxas' "cumulative
// stack size") for every thread the device can hold at once, and for the largest models that exceeds
// the device's free memory (chain<16>: about 200 KB per thread). Not run then, rather than failing
// to launch.
run_result run(int model_index, const double* h_in, double* h_out, int members);

}  // namespace lockstep::device_check
