// bench/gpu_shapes/kernel_shape_lab.cu — the kernel-shape lab: one synthetic member attempt (the work of
// one implicit step, without step-size control) in each candidate kernel shape, at Newton sizes
// N = 4, 8, 19 and 32 (the pendulum's, the double pendulum's, Andrews' and a 32-unknown chain's), with
// BDF and Radau IIA 5, so that a few minutes of a GPU decide which shape the production kernels take
// (docs/GPU.md, "Kernel shapes").
//
// The member. N unknowns, of which the last m = N / 4 are multipliers: a saddle-point system as the
// index-3 and GGL formulations give (docs/GPU.md section 1), whose constraint rows have a zero diagonal
// block, so that partial pivoting interchanges rows. F(y) has, on the first n = N - m rows, a stiff
// diagonal -s y_i, a dense coupling c w(i, j) y_j, a smooth nonlinearity 0.1 sin y_i, a force and the
// constraint forces -lambda_(i mod m); on the last m rows the constraints sum_(j = k mod m) y_j = 1/2.
// s and c vary from member to member. A BDF attempt is BDF3's corrector (Hairer & Wanner, "Solving
// Ordinary Differential Equations II", 1996, III.1) with three simplified Newton iterations; a Radau
// IIA 5 attempt the transformed simplified Newton iteration of Hairer & Wanner IV.8 (8.16)-(8.18), three
// iterations, and one more solve for the error estimate. The work per attempt is the production code's
// in kind (one Newton matrix and its LU per attempt, residuals, solves, the history or stages read and
// written) and in order of magnitude; the model is cheap beside Andrews', so the lab weighs the linear
// algebra more than the production kernels do.
//
// The shapes (each a kernel; `--list` names them):
//   stack      one thread per member, the member copied into the thread's frame for the launch, rows
//              interchanged by index, loops unrolled where the compiler chooses: today's production shape
//   registers  one thread per member, every loop unrolled and rows interchanged by selection: no dynamic
//              index, so a small member's arrays can stay in registers (N <= 19)
//   global     one thread per member, the member's history or stages and its Newton matrices in global
//              storage interleaved across members (element e of member i at e * members + i), used in
//              place: the frame keeps one phase's vectors
//   team       a block holds B members in shared memory; the residuals run one thread per member (Radau's
//              three stage residuals on three), the Jacobian's rows, the LU, the solves and the norms
//              one team of T threads per member (T = 4..32, within a warp; pivot search and norms by a
//              fixed butterfly, so that a member's bits do not depend on T)
//   rows       a team of R lanes of one warp per member (R = 4, 8, 16 or 32, from N up), lane i holding
//              row i of the Newton matrices in registers; the pivot row broadcast element by element by
//              shuffles, the rows never moved (each lane keeps its place under the serial interchanges),
//              so the factorization and the solves need no shared memory and no synchronization; the
//              model phase and the vectors as the team's (B = 256 / R members a block)
//   batched    phases in separate launches: the Newton matrices assembled one thread per member, then
//              cuBLAS's batched LU and solves (getrfBatched, getrsBatched), as the project's first
//              design had them
// A persistent kernel with a device-side queue is for the tails of uneven members; every lab member
// takes the same work, so it has nothing to show here and is not among the shapes.
//
// What it prints: per shape, N, method (and T, B for the team): registers, frame and shared bytes,
// resident threads per SM, the best of `--repeat` timed launches, member-attempts per second, the
// FLOP rate (a count of the operations, below) and its fraction of the FP64 peak given with
// --fp64-peak, and how many members' results are bitwise those of the stack shape (with the largest
// difference otherwise). `--host-check` runs the stack shape's text on the host for a few members and
// compares: the lab's own check, and what runs on a machine without a GPU.
//
// Usage: kernel_shape_lab [--members M] [--repeat R] [--only SHAPE[:N[:METHOD]]] [--shared-kib K]
//                         [--fp64-peak TFLOPS] [--once] [--attempts K] [--size N] [--host-check] [--list]
// (--once: one untimed launch per configuration, for a profiler; --attempts: attempts per launch instead
// of the default that makes a launch take milliseconds; --size: one N only)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/core/complex.hpp"
#include "lockstep/method/radau.hpp"

namespace lab {

using lockstep::abs1;
using cplx = lockstep::complex<double>;

constexpr double step = 0.01;         // h: h s = 0.1 .. 0.2, a stiff but stable step for BDF3
constexpr int newton_iterations = 3;  // what a converging production step takes
constexpr double bdf3_alpha = 11.0 / 6.0;

template <int N>
struct sizes {
  static constexpr int m = N / 4;  // multipliers
  static constexpr int n = N - m;  // positions and velocities
};

struct member_parameters {
  double s, c;
};
LOCKSTEP_HD member_parameters parameters_of(long member) {
  return {10.0 + 0.1 * double(member % 97), 0.5 + 0.01 * double(member % 13)};
}

// w(i, j): a dense coupling with no memory behind it (the model computes it).
LOCKSTEP_HD double coupling(int i, int j) { return 0.25 * double((i + j) & 3) - 0.375; }

// F_i(y).
template <int N, class V>
LOCKSTEP_HD double residual_entry(int i, const V& y, member_parameters par) {
  constexpr int n = sizes<N>::n, m = sizes<N>::m;
  if (i < n) {
    double f = (1.0 - par.s * y[i]) + 0.1 * sin(y[i]);
    for (int j = 0; j < n; ++j)
      if (j != i) f = f + par.c * coupling(i, j) * y[j];
    return f - y[n + i % m];
  }
  double g = -0.5;
  for (int j = i - n; j < n; j += m) g = g + y[j];
  return g;
}

// dF_i / dy_j (y).
template <int N, class V>
LOCKSTEP_HD double jacobian_entry(int i, int j, const V& y, member_parameters par) {
  constexpr int n = sizes<N>::n, m = sizes<N>::m;
  if (i < n) {
    if (j < n) return i == j ? -par.s + 0.1 * cos(y[i]) : par.c * coupling(i, j);
    return j - n == i % m ? -1.0 : 0.0;
  }
  return j < n && j % m == i - n ? 1.0 : 0.0;
}

// The mass part of a Newton matrix: value on the diagonal of the first n rows, zero elsewhere.
LOCKSTEP_HD double newton_diagonal(int i, int j, int n, double value) { return i == j && i < n ? value : 0.0; }

// BDF3's Newton residual row i: alpha y_i - (3 y_n - 3/2 y_n-1 + 1/3 y_n-2)_i - h F_i on the first n
// rows, -h F_i on the constraint rows.
template <int N, class V, class H>
LOCKSTEP_HD double bdf_residual_entry(int i, const V& y, const H& history_part, member_parameters par) {
  const double mass = i < sizes<N>::n ? bdf3_alpha * y[i] - history_part[i] : 0.0;
  return mass - step * residual_entry<N>(i, y, par);
}

// Radau IIA 5 in the transformed variables W = T^-1 Z (Hairer & Wanner IV.8 (8.16)): row i of the real
// right-hand side gamma D W_0 - h (T^-1 F)_0 and of the complex one, whose real and imaginary parts are
// D (alpha W_1 + beta W_2) - h (T^-1 F)_1 and D (-beta W_1 + alpha W_2) - h (T^-1 F)_2, solved with
// gamma D - h J and (alpha - i beta) D - h J.
template <class Z>
LOCKSTEP_HD void radau_rhs(int i, int n, const Z& z, double f0, double f1, double f2, double& r0, cplx& r1) {
  using t = lockstep::radau5_tableau;
  double w[3], g[3];
  for (int k = 0; k < 3; ++k) {
    w[k] = (t::Ti(k, 0) * z(0, i) + t::Ti(k, 1) * z(1, i)) + t::Ti(k, 2) * z(2, i);
    g[k] = (t::Ti(k, 0) * f0 + t::Ti(k, 1) * f1) + t::Ti(k, 2) * f2;
  }
  const bool mass = i < n;
  r0 = (mass ? t::gamma * w[0] : 0.0) - step * g[0];
  r1 = cplx((mass ? t::alpha * w[1] + t::beta * w[2] : 0.0) - step * g[1],
            (mass ? -t::beta * w[1] + t::alpha * w[2] : 0.0) - step * g[2]);
}
// W <- W - (d0, Re d1, Im d1); Z <- T W.
template <class Z>
LOCKSTEP_HD void radau_update(int i, Z& z, double d0, cplx d1) {
  using t = lockstep::radau5_tableau;
  double w[3];
  for (int k = 0; k < 3; ++k) w[k] = (t::Ti(k, 0) * z(0, i) + t::Ti(k, 1) * z(1, i)) + t::Ti(k, 2) * z(2, i);
  w[0] = w[0] - d0;
  w[1] = w[1] - d1.re;
  w[2] = w[2] - d1.im;
  for (int s = 0; s < 3; ++s) z(s, i) = (t::T(s, 0) * w[0] + t::T(s, 1) * w[1]) + t::T(s, 2) * w[2];
}
// The error estimate's right-hand side (Hairer & Wanner IV.8 (8.19)'s form): D sum_s d_s Z_s - h F(y0).
template <class Z>
LOCKSTEP_HD double radau_error_rhs(int i, int n, const Z& z, double f) {
  using t = lockstep::radau5_tableau;
  const double mass = i < n ? (t::d(0) * z(0, i) + t::d(1) * z(1, i)) + t::d(2) * z(2, i) : 0.0;
  return mass - step * f;
}

// ---- storage ----

template <class E, int N>
struct frame_matrix {
  E a[N * N];
  LOCKSTEP_HD E& operator()(int i, int j) { return a[i * N + j]; }
  LOCKSTEP_HD const E& operator()(int i, int j) const { return a[i * N + j]; }
};
template <int R, int N>
struct frame_rows {  // R vectors of N: BDF's history, Radau's stages
  double a[R * N];
  LOCKSTEP_HD double& operator()(int r, int i) { return a[r * N + i]; }
  LOCKSTEP_HD const double& operator()(int r, int i) const { return a[r * N + i]; }
};
template <class E, int N>
struct global_matrix {  // element (i, j) of member `first` at base[(i N + j) stride]
  E* base;
  long stride;
  LOCKSTEP_HD E& operator()(int i, int j) const { return base[long(i * N + j) * stride]; }
};
template <int N>
struct global_rows {
  double* base;
  long stride;
  LOCKSTEP_HD double& operator()(int r, int i) const { return base[long(r * N + i) * stride]; }
};
template <int N>
struct global_vector {
  double* base;
  long stride;
  LOCKSTEP_HD double& operator[](int i) const { return base[long(i) * stride]; }
};

// ---- the member's text, twice ----

namespace chosen {
constexpr bool interchange_by_selection = false;
#define LAB_UNROLL
#include "member_generic.inc"
#undef LAB_UNROLL
}  // namespace chosen
namespace unrolled {
constexpr bool interchange_by_selection = true;
#define LAB_UNROLL _Pragma("unroll")
#include "member_generic.inc"
#undef LAB_UNROLL
}  // namespace unrolled

enum class method { bdf, radau5 };
const char* method_name(method m) { return m == method::bdf ? "bdf" : "radau5"; }

// The member state the attempts carry from one to the next, 4 N words interleaved across members:
// BDF's history (z_0 newest) or Radau's y and its three stages.

// ---- thread-per-member kernels ----

template <int N, bool Unrolled>
__global__ void frame_bdf(double* state, long members, int attempts, double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  frame_rows<4, N> z;
  for (int e = 0; e < 4 * N; ++e) z.a[e] = state[e * members + i];
  frame_matrix<double, N> m;
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if constexpr (Unrolled)
      err = unrolled::bdf_attempt<N>(z, m, parameters_of(i));
    else
      err = chosen::bdf_attempt<N>(z, m, parameters_of(i));
  }
  for (int e = 0; e < 4 * N; ++e) state[e * members + i] = z.a[e];
  error[i] = err;
}

template <int N, bool Unrolled>
__global__ void frame_radau(double* state, long members, int attempts, double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  double y[N];
  frame_rows<3, N> z;
  for (int e = 0; e < N; ++e) y[e] = state[e * members + i];
  for (int e = 0; e < 3 * N; ++e) z.a[e] = state[(N + e) * members + i];
  frame_matrix<double, N> m1;
  frame_matrix<cplx, N> m2;
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if constexpr (Unrolled)
      err = unrolled::radau_attempt<N>(y, z, m1, m2, parameters_of(i));
    else
      err = chosen::radau_attempt<N>(y, z, m1, m2, parameters_of(i));
  }
  for (int e = 0; e < N; ++e) state[e * members + i] = y[e];
  for (int e = 0; e < 3 * N; ++e) state[(N + e) * members + i] = z.a[e];
  error[i] = err;
}

template <int N>
__global__ void global_bdf(double* state, double* matrices, long members, int attempts, double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_rows<N> z{state + i, members};
  global_matrix<double, N> m{matrices + i, members};
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) err = chosen::bdf_attempt<N>(z, m, parameters_of(i));
  error[i] = err;
}

template <int N>
__global__ void global_radau(double* state, double* matrices, cplx* complex_matrices, long members, int attempts,
                             double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y{state + i, members};
  global_rows<N> z{state + N * members + i, members};
  global_matrix<double, N> m1{matrices + i, members};
  global_matrix<cplx, N> m2{complex_matrices + i, members};
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) err = chosen::radau_attempt<N>(y, z, m1, m2, parameters_of(i));
  error[i] = err;
}

// ---- team kernels ----
//
// A team is T consecutive threads of one warp (T divides 32); `lane` its thread's place in it. Within a
// team the threads meet at __syncwarp; the model phase (threads 0 .. B-1 of the block, one per member of
// the block) and the team phases meet at __syncthreads.

template <int T>
__device__ unsigned team_mask(int lane) {
  if constexpr (T == 32) {
    return 0xffffffffu;
  } else {
    const unsigned first = (threadIdx.x % 32) - lane;
    return ((1u << T) - 1u) << first;
  }
}

// The butterfly over the team: every lane ends with the largest magnitude and, among equals, the
// smallest row: the row a serial search of the first largest finds.
template <int T>
__device__ void team_argmax(double& best, int& row, unsigned mask) {
#pragma unroll
  for (int offset = T / 2; offset > 0; offset /= 2) {
    const double other = __shfl_xor_sync(mask, best, offset, T);
    const int other_row = __shfl_xor_sync(mask, row, offset, T);
    const bool take = other > best || (other == best && other_row < row);
    best = take ? other : best;
    row = take ? other_row : row;
  }
}
template <int T>
__device__ double team_sum(double x, unsigned mask) {
#pragma unroll
  for (int offset = T / 2; offset > 0; offset /= 2) x = x + __shfl_xor_sync(mask, x, offset, T);
  return x;
}

template <int N>
constexpr int padded = N | 1;  // an odd row stride: the team's rows fall in different banks

// a - l b with its multiply-adds fused where this code says, not where the compiler chooses: a complex
// product is a sum of two products, and which of them nvcc fuses with the sum differs from one kernel to
// another (the first lab run's Radau IIA teams differed in their bits with T: docs/GPU.md 9.4), so
// the team's elimination and substitutions name their fused operations. That alone did not make the
// teams' bits independent of T (the transformations' sums of products are contracted too), so the lab
// is also built with --fmad=false (kernel_shape_lab_nofmad, LAB_NO_FMAD): no contraction anywhere, and
// the elimination written as the other shapes write it, so that every shape of it computes the same
// operations and what contraction costs in time is measured beside what it changes in bits.
#if defined(LAB_NO_FMAD)
__device__ inline double minus_product(double a, double l, double b) { return a - l * b; }
__device__ inline cplx minus_product(const cplx& a, const cplx& l, const cplx& b) { return a - l * b; }
#else
__device__ inline double minus_product(double a, double l, double b) { return __fma_rn(-l, b, a); }
__device__ inline cplx minus_product(const cplx& a, const cplx& l, const cplx& b) {
  return {a.re - __fma_rn(l.re, b.re, -(l.im * b.im)), a.im - __fma_rn(l.re, b.im, l.im * b.re)};
}
#endif

template <class E, int N, int T>
__device__ void team_lu_factor(E* a, int* pivot, int lane, unsigned mask) {
  constexpr int ld = padded<N>;
  for (int k = 0; k < N; ++k) {
    double best = -1.0;
    int p = N;
    for (int i = k + lane; i < N; i += T) {
      const double v = abs1(a[i * ld + k]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    team_argmax<T>(best, p, mask);
    if (p != k)
      for (int j = lane; j < N; j += T) {
        const E top = a[k * ld + j];
        a[k * ld + j] = a[p * ld + j];
        a[p * ld + j] = top;
      }
    if (lane == 0) pivot[k] = p;
    __syncwarp(mask);
    const E d = a[k * ld + k];
    for (int i = k + 1 + lane; i < N; i += T) {
      const E l = a[i * ld + k] / d;
      a[i * ld + k] = l;
      for (int j = k + 1; j < N; ++j) a[i * ld + j] = minus_product(a[i * ld + j], l, a[k * ld + j]);
    }
    __syncwarp(mask);
  }
}

template <class E, int N, int T>
__device__ void team_lu_solve(const E* a, const int* pivot, E* b, int lane, unsigned mask) {
  constexpr int ld = padded<N>;
  if (lane == 0)
    for (int k = 0; k < N; ++k) {
      const int p = pivot[k];
      const E top = b[k];
      b[k] = b[p];
      b[p] = top;
    }
  __syncwarp(mask);
  for (int j = 0; j < N; ++j) {
    const E bj = b[j];
    for (int i = j + 1 + lane; i < N; i += T) b[i] = minus_product(b[i], a[i * ld + j], bj);
    __syncwarp(mask);
  }
  for (int i = N - 1; i >= 0; --i) {
    const E xi = b[i] / a[i * ld + i];
    __syncwarp(mask);
    if (lane == 0) b[i] = xi;
    for (int r = lane; r < i; r += T) b[r] = minus_product(b[r], a[r * ld + i], xi);
    __syncwarp(mask);
  }
}

// The model phase of the team and rows shapes: one thread per member of the block (member i), its
// vectors in the block's shared memory.

// BDF's predictor (into predicted and y) and the history's part of the residual.
template <int N>
__device__ void model_bdf_predict(const double* state, long members, long i, double* predicted, double* history_part,
                                  double* y) {
  global_rows<N> z{const_cast<double*>(state) + i, members};
  for (int k = 0; k < N; ++k) {
    predicted[k] = ((4.0 * z(0, k) - 6.0 * z(1, k)) + 4.0 * z(2, k)) - z(3, k);
    history_part[k] = (3.0 * z(0, k) - 1.5 * z(1, k)) + z(2, k) / 3.0;
    y[k] = predicted[k];
  }
}
// BDF's Newton residual at y.
template <int N>
__device__ void model_bdf_residual(long i, const double* history_part, const double* y, double* r) {
  const member_parameters par = parameters_of(i);
  for (int k = 0; k < N; ++k) r[k] = bdf_residual_entry<N>(k, y, history_part, par);
}
// F at y0 + Z_s, Radau IIA 5's stage s (Z in the state after y, interleaved).
template <int N>
__device__ void model_radau_stage(const double* state, long members, long i, int s, const double* y0, double* f) {
  const member_parameters par = parameters_of(i);
  global_rows<N> z{const_cast<double*>(state) + N * members + i, members};
  double ys[N];
  for (int k = 0; k < N; ++k) ys[k] = y0[k] + z(s, k);
  for (int k = 0; k < N; ++k) f[k] = residual_entry<N>(k, ys, par);
}
// F(y0), for the error estimate.
template <int N>
__device__ void model_radau_at_start(long i, const double* y0, double* f) {
  const member_parameters par = parameters_of(i);
  for (int k = 0; k < N; ++k) f[k] = residual_entry<N>(k, y0, par);
}

// Shared words per member.
template <int N>
constexpr int team_bdf_words = N * padded<N> + 4 * N;  // matrix; predicted, history part, y, r
template <int N>
constexpr int team_radau_words = 3 * N * padded<N> + 7 * N;  // real and complex matrices; y0, f (3 N), r0, r1 (2 N)

template <int N, int T>
__global__ void team_bdf(double* state, long members, int attempts, double* error) {
  extern __shared__ double shared[];
  const int B = blockDim.x / T, team = threadIdx.x / T, lane = threadIdx.x % T;
  const long first = long(blockIdx.x) * B;
  const unsigned mask = team_mask<T>(lane);
  int* pivots = reinterpret_cast<int*>(shared + B * team_bdf_words<N>);
  constexpr int ld = padded<N>;
  // Region of member b: matrix, then the four vectors.
  auto matrix = [&](int b) { return shared + b * team_bdf_words<N>; };
  auto vec = [&](int b, int which) { return shared + b * team_bdf_words<N> + N * ld + which * N; };
  const long mine = first + team;  // the team's member
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if (threadIdx.x < B) {  // the model: one thread per member
      const int b = threadIdx.x;
      model_bdf_predict<N>(state, members, first + b, vec(b, 0), vec(b, 1), vec(b, 2));
    }
    __syncthreads();
    {  // the Newton matrix, rows shared by the team (a production model would share its AD passes)
      const member_parameters par = parameters_of(mine);
      const double* y = vec(team, 2);
      double* e = matrix(team);
      for (int r = lane; r < N; r += T)
        for (int c = 0; c < N; ++c)
          e[r * ld + c] = newton_diagonal(r, c, sizes<N>::n, bdf3_alpha) - step * jacobian_entry<N>(r, c, y, par);
      __syncwarp(mask);
    }
    team_lu_factor<double, N, T>(matrix(team), pivots + team * N, lane, mask);
    for (int iteration = 0; iteration < newton_iterations; ++iteration) {
      __syncthreads();
      if (const int b = threadIdx.x; b < B) model_bdf_residual<N>(first + b, vec(b, 1), vec(b, 2), vec(b, 3));
      __syncthreads();
      double *y = vec(team, 2), *r = vec(team, 3);
      team_lu_solve<double, N, T>(matrix(team), pivots + team * N, r, lane, mask);
      for (int k = lane; k < N; k += T) y[k] = y[k] - r[k];
      __syncwarp(mask);
    }
    double sum = 0.0;
    const double *predicted = vec(team, 0), *y = vec(team, 2);
    global_rows<N> z{state + mine, members};
    for (int k = lane; k < N; k += T) {
      const double d = y[k] - predicted[k];
      sum = sum + d * d;
      z(3, k) = z(2, k);
      z(2, k) = z(1, k);
      z(1, k) = z(0, k);
      z(0, k) = y[k];
    }
    err = sqrt(team_sum<T>(sum, mask) / N);
    __syncthreads();
  }
  if (lane == 0) error[mine] = err;
}

template <int N, int T>
__global__ void team_radau(double* state, long members, int attempts, double* error) {
  extern __shared__ double shared[];
  const int B = blockDim.x / T, team = threadIdx.x / T, lane = threadIdx.x % T;
  const long first = long(blockIdx.x) * B;
  const unsigned mask = team_mask<T>(lane);
  constexpr int ld = padded<N>, words = team_radau_words<N>;
  int* pivots = reinterpret_cast<int*>(shared + B * words);  // 2 N per member
  auto m1 = [&](int b) { return shared + b * words; };
  auto m2 = [&](int b) { return reinterpret_cast<cplx*>(shared + b * words + N * ld); };
  auto vec = [&](int b, int which) { return shared + b * words + 3 * N * ld + which * N; };  // which: 0 y0, 1-3 f, 4 r0, 5-6 r1
  const long mine = first + team;
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if (threadIdx.x < B) {
      const int b = threadIdx.x;
      const long i = first + b;
      double* y0 = vec(b, 0);
      for (int k = 0; k < N; ++k) y0[k] = state[long(k) * members + i];
    }
    __syncthreads();
    {  // the two Newton matrices, rows shared by the team
      const member_parameters par = parameters_of(mine);
      const double* y0 = vec(team, 0);
      double* e1 = m1(team);
      cplx* e2 = m2(team);
      for (int r = lane; r < N; r += T)
        for (int c = 0; c < N; ++c) {
          const double hj = step * jacobian_entry<N>(r, c, y0, par);
          e1[r * ld + c] = newton_diagonal(r, c, sizes<N>::n, lockstep::radau5_tableau::gamma) - hj;
          e2[r * ld + c] = cplx(newton_diagonal(r, c, sizes<N>::n, lockstep::radau5_tableau::alpha) - hj,
                                -newton_diagonal(r, c, sizes<N>::n, lockstep::radau5_tableau::beta));
        }
      __syncwarp(mask);
    }
    team_lu_factor<double, N, T>(m1(team), pivots + team * 2 * N, lane, mask);
    team_lu_factor<cplx, N, T>(m2(team), pivots + team * 2 * N + N, lane, mask);
    for (int iteration = 0; iteration < newton_iterations; ++iteration) {
      __syncthreads();
      if (threadIdx.x < 3 * B) {  // the three stage residuals of each member on three threads (T >= 4)
        const int b = threadIdx.x % B, s = threadIdx.x / B;
        model_radau_stage<N>(state, members, first + b, s, vec(b, 0), vec(b, 1 + s));
      }
      __syncthreads();
      global_rows<N> z{state + N * members + mine, members};
      double* r0 = vec(team, 4);
      cplx* r1 = reinterpret_cast<cplx*>(vec(team, 5));
      for (int k = lane; k < N; k += T) radau_rhs(k, sizes<N>::n, z, vec(team, 1)[k], vec(team, 2)[k], vec(team, 3)[k], r0[k], r1[k]);
      __syncwarp(mask);
      team_lu_solve<double, N, T>(m1(team), pivots + team * 2 * N, r0, lane, mask);
      team_lu_solve<cplx, N, T>(m2(team), pivots + team * 2 * N + N, r1, lane, mask);
      for (int k = lane; k < N; k += T) radau_update(k, z, r0[k], r1[k]);
      __syncwarp(mask);
    }
    __syncthreads();
    if (const int b = threadIdx.x; b < B) model_radau_at_start<N>(first + b, vec(b, 0), vec(b, 1));  // into f_0
    __syncthreads();
    global_rows<N> z{state + N * members + mine, members};
    double* r0 = vec(team, 4);
    for (int k = lane; k < N; k += T) r0[k] = radau_error_rhs(k, sizes<N>::n, z, vec(team, 1)[k]);
    __syncwarp(mask);
    team_lu_solve<double, N, T>(m1(team), pivots + team * 2 * N, r0, lane, mask);
    double sum = 0.0;
    const double* y0 = vec(team, 0);
    for (int k = lane; k < N; k += T) {
      sum = sum + r0[k] * r0[k];
      state[long(k) * members + mine] = y0[k] + z(2, k);
    }
    err = sqrt(team_sum<T>(sum, mask) / N);
    __syncthreads();
  }
  if (lane == 0) error[mine] = err;
}

// ---- rows kernels ----
//
// A team of R lanes of one warp per member (R the power of two from N up, at most 32: several members
// share a warp when N <= 16), lane i holding row i of the Newton matrices in registers. The rows never
// move: the elimination keeps each lane's position under the interchanges the serial algorithm would
// make (so that the pivot search breaks ties as it does), broadcasts the pivot row element by element
// with shuffles, and the lane chosen at step k ends holding row k of U (and its multipliers, L's row).
// The solves broadcast one component per step the same way, so the team performs the serial text's
// operations in its order, without shared memory or a synchronization inside the factorization or the
// solves. The model phase and the member's vectors are the team shape's (one thread per member for the
// residuals, three for Radau IIA 5's stages, the Jacobian's rows by the team: lane i computes its row).

template <int N>
constexpr int row_team = N <= 4 ? 4 : N <= 8 ? 8 : N <= 16 ? 16 : 32;

__device__ inline double shuffle(double x, int from, int width) { return __shfl_sync(0xffffffffu, x, from, width); }
__device__ inline cplx shuffle(const cplx& x, int from, int width) {
  return {__shfl_sync(0xffffffffu, x.re, from, width), __shfl_sync(0xffffffffu, x.im, from, width)};
}

// LU with partial pivoting of the team's rows (row i in lane i's `row`); `step` ends as the elimination
// step whose pivot this lane's row was (N for the lanes beyond the matrix).
template <class E, int N, int R>
__device__ void rows_factor(E (&row)[N], int& step, int lane) {
  int position = lane;  // this row's place under the serial algorithm's interchanges
  step = N;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const bool candidate = lane < N && step == N;
    double best = candidate ? abs1(row[k]) : -1.0;
    int key = candidate ? position * 32 + lane : 0x7fffffff;  // ties to the first row in position
#pragma unroll
    for (int offset = R / 2; offset > 0; offset /= 2) {
      const double other = __shfl_xor_sync(0xffffffffu, best, offset, R);
      const int other_key = __shfl_xor_sync(0xffffffffu, key, offset, R);
      const bool take = other > best || (other == best && other_key < key);
      best = take ? other : best;
      key = take ? other_key : key;
    }
    const int p = key % 32, p_position = key / 32;
    if (candidate && position == k) position = p_position;  // the row at k goes where the pivot row was
    const bool below = candidate && lane != p;
    if (lane == p) {
      step = k;
      position = k;
    }
    const E d = shuffle(row[k], p, R);
    const E l = row[k] / d;
    if (below) row[k] = l;
#pragma unroll
    for (int j = k + 1; j < N; ++j) {
      const E pivot_j = shuffle(row[j], p, R);
      if (below) row[j] = row[j] - l * pivot_j;
    }
  }
}

// The lane whose row was step k's pivot.
template <int N, int R>
__device__ int pivot_lane(int step, int lane, int k) {
  const unsigned all = __ballot_sync(0xffffffffu, lane < N && step == k);
  const unsigned mine = R == 32 ? all : (all >> ((threadIdx.x % 32) - lane)) & ((1u << R) - 1u);
  return __ffs(mine) - 1;
}

// b <- A^-1 b with rows_factor's factors: b's row i in lane i on entry; on return, component `step` of
// the solution in each lane below N.
template <class E, int N, int R>
__device__ void rows_solve(const E (&row)[N], int step, E& b, int lane) {
#pragma unroll
  for (int j = 0; j < N; ++j) {  // L, by columns: the rows eliminated after step j take its component
    const E bj = shuffle(b, pivot_lane<N, R>(step, lane, j), R);
    if (lane < N && step > j) b = b - row[j] * bj;
  }
#pragma unroll
  for (int i = N - 1; i >= 0; --i) {  // U, by columns
    const int p = pivot_lane<N, R>(step, lane, i);
    const E xi = shuffle(lane == p ? b / row[i] : b, p, R);
    if (lane == p) b = xi;
    if (lane < N && step < i) b = b - row[i] * xi;
  }
}

template <int N, int R>
__global__ void rows_bdf(double* state, long members, int attempts, double* error) {
  extern __shared__ double shared[];
  const int B = blockDim.x / R, team = threadIdx.x / R, lane = threadIdx.x % R;
  const long first = long(blockIdx.x) * B, mine = first + team;
  auto vec = [&](int b, int which) { return shared + (b * 4 + which) * N; };  // predicted, history part, y, r
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if (threadIdx.x < B) {  // the model: one thread per member
      const int b = threadIdx.x;
      model_bdf_predict<N>(state, members, first + b, vec(b, 0), vec(b, 1), vec(b, 2));
    }
    __syncthreads();
    double row[N];
    {
      const member_parameters par = parameters_of(mine);
      const double* y = vec(team, 2);
#pragma unroll
      for (int c = 0; c < N; ++c)
        row[c] = lane < N ? newton_diagonal(lane, c, sizes<N>::n, bdf3_alpha) - step * jacobian_entry<N>(lane, c, y, par)
                          : 0.0;
    }
    int pivot_step;
    rows_factor<double, N, R>(row, pivot_step, lane);
    for (int iteration = 0; iteration < newton_iterations; ++iteration) {
      __syncthreads();
      if (const int b = threadIdx.x; b < B) model_bdf_residual<N>(first + b, vec(b, 1), vec(b, 2), vec(b, 3));
      __syncthreads();
      double b = lane < N ? vec(team, 3)[lane] : 0.0;
      rows_solve<double, N, R>(row, pivot_step, b, lane);
      if (lane < N) vec(team, 2)[pivot_step] = vec(team, 2)[pivot_step] - b;
    }
    __syncthreads();
    double sum = 0.0;
    if (lane < N) {
      const double *predicted = vec(team, 0), *y = vec(team, 2);
      global_rows<N> z{state + mine, members};
      const double d = y[lane] - predicted[lane];
      sum = d * d;
      z(3, lane) = z(2, lane);
      z(2, lane) = z(1, lane);
      z(1, lane) = z(0, lane);
      z(0, lane) = y[lane];
    }
    err = sqrt(team_sum<R>(sum, 0xffffffffu) / N);
    __syncthreads();
  }
  if (lane == 0) error[mine] = err;
}

template <int N, int R>
__global__ void rows_radau(double* state, long members, int attempts, double* error) {
  extern __shared__ double shared[];
  const int B = blockDim.x / R, team = threadIdx.x / R, lane = threadIdx.x % R;
  const long first = long(blockIdx.x) * B, mine = first + team;
  auto vec = [&](int b, int which) { return shared + (b * 7 + which) * N; };  // 0 y0, 1-3 f, 4 r0, 5-6 r1
  double err = 0.0;
  for (int a = 0; a < attempts; ++a) {
    if (threadIdx.x < B) {
      const int b = threadIdx.x;
      double* y0 = vec(b, 0);
      for (int k = 0; k < N; ++k) y0[k] = state[long(k) * members + first + b];
    }
    __syncthreads();
    double row1[N];
    cplx row2[N];
    {
      using t = lockstep::radau5_tableau;
      const member_parameters par = parameters_of(mine);
      const double* y0 = vec(team, 0);
#pragma unroll
      for (int c = 0; c < N; ++c) {
        const double hj = lane < N ? step * jacobian_entry<N>(lane, c, y0, par) : 0.0;
        row1[c] = newton_diagonal(lane, c, sizes<N>::n, t::gamma) - hj;
        row2[c] = cplx(newton_diagonal(lane, c, sizes<N>::n, t::alpha) - hj,
                       -newton_diagonal(lane, c, sizes<N>::n, t::beta));
      }
    }
    int step1, step2;
    rows_factor<double, N, R>(row1, step1, lane);
    rows_factor<cplx, N, R>(row2, step2, lane);
    global_rows<N> z{state + N * members + mine, members};
    for (int iteration = 0; iteration < newton_iterations; ++iteration) {
      __syncthreads();
      if (threadIdx.x < 3 * B) {  // the three stage residuals of each member on three threads (R >= 4)
        const int b = threadIdx.x % B, s = threadIdx.x / B;
        model_radau_stage<N>(state, members, first + b, s, vec(b, 0), vec(b, 1 + s));
      }
      __syncthreads();
      double b0 = 0.0;
      cplx b1(0.0, 0.0);
      if (lane < N) radau_rhs(lane, sizes<N>::n, z, vec(team, 1)[lane], vec(team, 2)[lane], vec(team, 3)[lane], b0, b1);
      rows_solve<double, N, R>(row1, step1, b0, lane);
      rows_solve<cplx, N, R>(row2, step2, b1, lane);
      double* r0 = vec(team, 4);
      cplx* r1 = reinterpret_cast<cplx*>(vec(team, 5));
      if (lane < N) {
        r0[step1] = b0;
        r1[step2] = b1;
      }
      __syncwarp();
      if (lane < N) radau_update(lane, z, r0[lane], r1[lane]);
    }
    __syncthreads();
    if (const int b = threadIdx.x; b < B) model_radau_at_start<N>(first + b, vec(b, 0), vec(b, 1));  // into f_0
    __syncthreads();
    double b0 = lane < N ? radau_error_rhs(lane, sizes<N>::n, z, vec(team, 1)[lane]) : 0.0;
    rows_solve<double, N, R>(row1, step1, b0, lane);
    double sum = 0.0;
    if (lane < N) {
      sum = b0 * b0;  // the error estimate's components in another order: the sum's bits may differ
      state[long(lane) * members + mine] = vec(team, 0)[lane] + z(2, lane);
    }
    err = sqrt(team_sum<R>(sum, 0xffffffffu) / N);
    __syncthreads();
  }
  if (lane == 0) error[mine] = err;
}

// ---- batched phases (cuBLAS) ----
//
// Matrices column-major, one after another (cuBLAS's batched layout); right-hand sides N contiguous per
// member; the member's vectors interleaved as elsewhere.

template <int N>
__global__ void batched_bdf_assemble(const double* state, double* scratch, double* matrices, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_rows<N> z{const_cast<double*>(state) + i, members};
  global_rows<N> v{scratch + i, members};  // 0 predicted, 1 history part, 2 y
  for (int k = 0; k < N; ++k) {
    v(0, k) = ((4.0 * z(0, k) - 6.0 * z(1, k)) + 4.0 * z(2, k)) - z(3, k);
    v(1, k) = (3.0 * z(0, k) - 1.5 * z(1, k)) + z(2, k) / 3.0;
    v(2, k) = v(0, k);
  }
  const member_parameters par = parameters_of(i);
  global_vector<N> y{scratch + 2 * N * members + i, members};
  double* e = matrices + i * N * N;
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < N; ++r)
      e[c * N + r] = newton_diagonal(r, c, sizes<N>::n, bdf3_alpha) - step * jacobian_entry<N>(r, c, y, par);
}
template <int N>
__global__ void batched_bdf_residual(const double* scratch, double* rhs, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> history_part{const_cast<double*>(scratch) + N * members + i, members};
  global_vector<N> y{const_cast<double*>(scratch) + 2 * N * members + i, members};
  const member_parameters par = parameters_of(i);
  for (int k = 0; k < N; ++k) rhs[i * N + k] = bdf_residual_entry<N>(k, y, history_part, par);
}
template <int N>
__global__ void batched_bdf_update(double* scratch, const double* rhs, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y{scratch + 2 * N * members + i, members};
  for (int k = 0; k < N; ++k) y[k] = y[k] - rhs[i * N + k];
}
template <int N>
__global__ void batched_bdf_finish(double* state, const double* scratch, long members, double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_rows<N> z{state + i, members};
  global_rows<N> v{const_cast<double*>(scratch) + i, members};
  double sum = 0.0;
  for (int k = 0; k < N; ++k) {
    const double d = v(2, k) - v(0, k);
    sum = sum + d * d;
    z(3, k) = z(2, k);
    z(2, k) = z(1, k);
    z(1, k) = z(0, k);
    z(0, k) = v(2, k);
  }
  error[i] = sqrt(sum / N);
}

template <int N>
__global__ void batched_radau_assemble(const double* state, double* m1, cplx* m2, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y{const_cast<double*>(state) + i, members};
  const member_parameters par = parameters_of(i);
  double* e1 = m1 + i * N * N;
  cplx* e2 = m2 + i * N * N;
  using t = lockstep::radau5_tableau;
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < N; ++r) {
      const double hj = step * jacobian_entry<N>(r, c, y, par);
      e1[c * N + r] = newton_diagonal(r, c, sizes<N>::n, t::gamma) - hj;
      e2[c * N + r] = cplx(newton_diagonal(r, c, sizes<N>::n, t::alpha) - hj, -newton_diagonal(r, c, sizes<N>::n, t::beta));
    }
}
template <int N>
__global__ void batched_radau_residual(const double* state, double* rhs0, cplx* rhs1, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y0{const_cast<double*>(state) + i, members};
  global_rows<N> z{const_cast<double*>(state) + N * members + i, members};
  const member_parameters par = parameters_of(i);
  double f[3][N];
  for (int s = 0; s < 3; ++s) {
    double ys[N];
    for (int k = 0; k < N; ++k) ys[k] = y0[k] + z(s, k);
    for (int k = 0; k < N; ++k) f[s][k] = residual_entry<N>(k, ys, par);
  }
  for (int k = 0; k < N; ++k) radau_rhs(k, sizes<N>::n, z, f[0][k], f[1][k], f[2][k], rhs0[i * N + k], rhs1[i * N + k]);
}
template <int N>
__global__ void batched_radau_update(double* state, const double* rhs0, const cplx* rhs1, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_rows<N> z{state + N * members + i, members};
  for (int k = 0; k < N; ++k) radau_update(k, z, rhs0[i * N + k], rhs1[i * N + k]);
}
template <int N>
__global__ void batched_radau_error_rhs(const double* state, double* rhs0, long members) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y0{const_cast<double*>(state) + i, members};
  global_rows<N> z{const_cast<double*>(state) + N * members + i, members};
  const member_parameters par = parameters_of(i);
  for (int k = 0; k < N; ++k) rhs0[i * N + k] = radau_error_rhs(k, sizes<N>::n, z, residual_entry<N>(k, y0, par));
}
template <int N>
__global__ void batched_radau_finish(double* state, const double* rhs0, long members, double* error) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= members) return;
  global_vector<N> y{state + i, members};
  global_rows<N> z{state + N * members + i, members};
  double sum = 0.0;
  for (int k = 0; k < N; ++k) {
    sum = sum + rhs0[i * N + k] * rhs0[i * N + k];
    y[k] = y[k] + z(2, k);
  }
  error[i] = sqrt(sum / N);
}

__global__ void pointers_into(double** pointers, double* base, long stride, long count) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) pointers[i] = base + i * stride;
}

// ---- the harness ----

#define LAB_CHECK(call)                                                                                  \
  do {                                                                                                   \
    const cudaError_t lab_status = (call);                                                               \
    if (lab_status != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "kernel_shape_lab: %s: %s (%s:%d)\n", #call, cudaGetErrorString(lab_status), \
                   __FILE__, __LINE__);                                                                  \
      std::exit(2);                                                                                      \
    }                                                                                                    \
  } while (0)
#define LAB_CUBLAS(call)                                                                                        \
  do {                                                                                                          \
    const cublasStatus_t lab_status = (call);                                                                   \
    if (lab_status != CUBLAS_STATUS_SUCCESS) {                                                                  \
      std::fprintf(stderr, "kernel_shape_lab: %s: cuBLAS status %d (%s:%d)\n", #call, int(lab_status), __FILE__, \
                   __LINE__);                                                                                   \
      std::exit(2);                                                                                             \
    }                                                                                                           \
  } while (0)

// Initial member states: a history at rest (every z_k the same y) or y with zero stages.
double initial_value(int k) { return 0.1 * double(k % 5); }
std::vector<double> initial_state(int N, method m, long members) {
  std::vector<double> s(size_t(4 * N) * members, 0.0);
  for (int e = 0; e < 4 * N; ++e)
    for (long i = 0; i < members; ++i)
      s[size_t(e) * members + i] = m == method::bdf ? initial_value(e % N) : (e < N ? initial_value(e) : 0.0);
  return s;
}

// Operations per attempt (an add, a multiply or a fused multiply-add's parts count one each; a division
// or square root one; sin and cos one each, though they cost tens of instructions): the rate column's
// numerator, the same for every shape.
double flops_per_attempt(int N, method m) {
  const double n = N, residual = 2.0 * n * n, solve = 2.0 * n * n, factor = 2.0 * n * n * n / 3.0;
  const double assemble = 2.0 * n * n;
  if (m == method::bdf) return assemble + factor + newton_iterations * (residual + solve + 4.0 * n) + 12.0 * n;
  // The complex factor and solve take four real multiplications and four additions per complex
  // multiply-add: four times the real count.
  return 2.0 * assemble + 5.0 * factor + newton_iterations * (3.0 * residual + 5.0 * solve + 36.0 * n) + residual +
         solve + 12.0 * n;
}

struct options {
  long members = 131072;
  int repeat = 3;
  std::string only;
  double shared_kib = 100.0;
  double fp64_peak_tflops = 0.0;  // 0: no fraction printed
  bool once = false;              // one launch per configuration, untimed: for a profiler
  int attempts = 0;               // attempts per launch; 0: attempts_for(N)
  int size = 0;                   // only this N; 0: every N
};

struct result_row {
  std::string shape;
  int N;
  method m;
  int team = 0, block_members = 0;
  int registers = 0, frame = 0, shared_bytes = 0, threads_per_sm = 0;
  double seconds = 0.0;
  int attempts = 0;
  long bitwise = -1;  // members equal to the stack shape's, -1 when not compared
  double largest_difference = 0.0;
  long not_finite = 0;
  long members = 0;            // members run (a team's launch rounds up to whole blocks)
  int reference_team = 0;      // the team size of the first team of this N and method, 0: none
  long bitwise_to_team = -1;   // members equal to that team's
};

void print_header() {
  std::printf("%-9s %3s %-6s %3s %3s %5s %7s %7s %8s %10s %14s %9s %7s %12s %10s\n", "shape", "N", "method", "T", "B",
              "regs", "frame", "shared", "thr/SM", "ms", "attempts/s", "GFLOP/s", "of peak", "bitwise", "max diff");
  std::fflush(stdout);
}

void print_row(const options& o, const result_row& r) {
  const double attempts = double(r.members) * r.attempts;
  const double rate = attempts / r.seconds, gflops = rate * flops_per_attempt(r.N, r.m) * 1e-9;
  char team[8] = "-", block[8] = "-", peak[16] = "-", bitwise[24] = "(reference)", diff[16] = "-";
  if (r.team) {
    std::snprintf(team, sizeof team, "%d", r.team);
    std::snprintf(block, sizeof block, "%d", r.block_members);
  }
  if (o.fp64_peak_tflops > 0) std::snprintf(peak, sizeof peak, "%.2f%%", 100.0 * gflops / (o.fp64_peak_tflops * 1e3));
  if (r.bitwise >= 0) {
    std::snprintf(bitwise, sizeof bitwise, "%ld/%ld", r.bitwise, o.members);
    std::snprintf(diff, sizeof diff, "%.1e", r.largest_difference);
  } else if (r.shape != "stack") {
    std::snprintf(bitwise, sizeof bitwise, "(not compared)");
  }
  char to_team[48] = "";
  if (r.bitwise_to_team >= 0)
    std::snprintf(to_team, sizeof to_team, "  bitwise to T=%d: %ld/%ld", r.reference_team, r.bitwise_to_team, o.members);
  std::printf("%-9s %3d %-6s %3s %3s %5d %7d %7d %8d %10.3f %14.4g %9.1f %7s %12s %10s%s%s\n", r.shape.c_str(), r.N,
              method_name(r.m), team, block, r.registers, r.frame, r.shared_bytes, r.threads_per_sm, r.seconds * 1e3,
              rate, gflops, peak, bitwise, diff, to_team, r.not_finite ? "  NOT FINITE" : "");
  std::fflush(stdout);
}

// Enough attempts per launch that a launch takes milliseconds, not microseconds.
int attempts_for(const options& o, int N) {
  if (o.attempts > 0) return o.attempts;
  return N <= 4 ? 32 : N <= 8 ? 16 : N <= 19 ? 4 : 2;
}
int attempts_for(int N) { return attempts_for(options{}, N); }

bool wanted(const options& o, const std::string& shape, int N, method m) {
  if (o.size && o.size != N) return false;
  if (o.only.empty()) return true;
  std::string want = o.only;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t c = want.find(':', start);
    parts.push_back(want.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts[0] != shape) return false;
  if (parts.size() > 1 && std::atoi(parts[1].c_str()) != N) return false;
  if (parts.size() > 2 && parts[2] != method_name(m)) return false;
  return true;
}

// Times `launch` (all of one configuration's attempts) from a fresh copy of the initial state each time;
// the state after the last launch is left in `device_state`.
template <class Launch>
double time_launches(const options& o, double* device_state, const std::vector<double>& initial, Launch&& launch) {
  cudaEvent_t begin, end;
  LAB_CHECK(cudaEventCreate(&begin));
  LAB_CHECK(cudaEventCreate(&end));
  double best = 1e300;
  const int runs = o.once ? 1 : o.repeat + 1;  // the first run warms up
  for (int run = 0; run < runs; ++run) {
    LAB_CHECK(cudaMemcpy(device_state, initial.data(), initial.size() * sizeof(double), cudaMemcpyHostToDevice));
    LAB_CHECK(cudaEventRecord(begin));
    launch();
    LAB_CHECK(cudaEventRecord(end));
    LAB_CHECK(cudaEventSynchronize(end));
    LAB_CHECK(cudaGetLastError());
    float ms = 0.0f;
    LAB_CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (run > 0 || o.once) best = std::min(best, ms * 1e-3);
  }
  LAB_CHECK(cudaEventDestroy(begin));
  LAB_CHECK(cudaEventDestroy(end));
  return best;
}

template <class Kernel>
void record_attributes(result_row& row, Kernel kernel, int block, size_t shared) {
  cudaFuncAttributes a{};
  LAB_CHECK(cudaFuncGetAttributes(&a, kernel));
  row.registers = a.numRegs;
  row.frame = int(a.localSizeBytes);
  row.shared_bytes = int(shared + a.sharedSizeBytes);
  int blocks = 0;
  LAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, shared));
  row.threads_per_sm = blocks * block;
}

struct lab_state {
  options o;
  std::vector<result_row> rows;
  std::vector<double> reference;       // the stack shape's final state of the current (N, method)
  std::vector<double> team_reference;  // the first team's, and its team size
  int team_reference_size = 0;
  cublasHandle_t cublas = nullptr;
};

// Members of `a` and `b` (the first `members` of each, stride `members`) equal bit for bit; the
// largest difference of the others, relative to max(1, |a|).
long bitwise_equal(const std::vector<double>& a, const std::vector<double>& b, long members, int words,
                   double* largest_difference) {
  long equal = 0;
  double largest = 0.0;
  for (long i = 0; i < members; ++i) {
    bool same = true;
    for (int e = 0; e < words; ++e) {
      const double x = a[size_t(e) * members + i], y = b[size_t(e) * members + i];
      if (std::memcmp(&x, &y, sizeof x) != 0) {
        same = false;
        largest = std::max(largest, std::abs(x - y) / std::max(1.0, std::abs(x)));
      }
    }
    equal += same ? 1 : 0;
  }
  if (largest_difference) *largest_difference = largest;
  return equal;
}

void compare(lab_state& lab, result_row& row, const std::vector<double>& final_state, int words) {
  long not_finite = 0;
  for (double v : final_state) not_finite += std::isfinite(v) ? 0 : 1;
  row.not_finite = not_finite;
  if (row.shape == "stack") {
    lab.reference = final_state;
    return;
  }
  if (lab.reference.size() != final_state.size()) return;
  row.bitwise = bitwise_equal(lab.reference, final_state, lab.o.members, words, &row.largest_difference);
}

template <int N>
void run_thread_per_member(lab_state& lab, method m, const std::string& shape) {
  const options& o = lab.o;
  if (!wanted(o, shape, N, m)) return;
  const long members = o.members;
  const int words = 4 * N, attempts = attempts_for(o, N), block = 128;
  const std::vector<double> initial = initial_state(N, m, members);
  double *state = nullptr, *error = nullptr, *matrices = nullptr;
  cplx* complex_matrices = nullptr;
  LAB_CHECK(cudaMalloc(&state, initial.size() * sizeof(double)));
  LAB_CHECK(cudaMalloc(&error, members * sizeof(double)));
  if (shape == "global") {
    LAB_CHECK(cudaMalloc(&matrices, size_t(N) * N * members * sizeof(double)));
    if (m == method::radau5) LAB_CHECK(cudaMalloc(&complex_matrices, size_t(N) * N * members * sizeof(cplx)));
  }
  result_row row{shape, N, m};
  row.attempts = attempts;
  row.members = members;
  const unsigned grid = unsigned((members + block - 1) / block);
  if (shape == "stack" || shape == "registers") {
    const bool unroll = shape == "registers";
    if (m == method::bdf) {
      auto kernel = unroll ? frame_bdf<N, true> : frame_bdf<N, false>;
      record_attributes(row, kernel, block, 0);
      row.seconds = time_launches(o, state, initial, [&] { kernel<<<grid, block>>>(state, members, attempts, error); });
    } else {
      auto kernel = unroll ? frame_radau<N, true> : frame_radau<N, false>;
      record_attributes(row, kernel, block, 0);
      row.seconds = time_launches(o, state, initial, [&] { kernel<<<grid, block>>>(state, members, attempts, error); });
    }
  } else if (m == method::bdf) {
    record_attributes(row, global_bdf<N>, block, 0);
    row.seconds = time_launches(o, state, initial,
                                [&] { global_bdf<N><<<grid, block>>>(state, matrices, members, attempts, error); });
  } else {
    record_attributes(row, global_radau<N>, block, 0);
    row.seconds = time_launches(o, state, initial, [&] {
      global_radau<N><<<grid, block>>>(state, matrices, complex_matrices, members, attempts, error);
    });
  }
  std::vector<double> final_state(initial.size());
  LAB_CHECK(cudaMemcpy(final_state.data(), state, final_state.size() * sizeof(double), cudaMemcpyDeviceToHost));
  compare(lab, row, final_state, words);
  lab.rows.push_back(row);
  print_row(lab.o, row);
  cudaFree(state);
  cudaFree(error);
  cudaFree(matrices);
  cudaFree(complex_matrices);
}

// Runs a kernel whose blocks hold B members each (the team and rows shapes), timed, and compares its
// result with the stack shape's. The launch rounds up to whole blocks; the padding's few members are
// left out of the comparisons. Returns the first o.members members' final state (stride o.members).
template <int N, class Kernel>
std::vector<double> run_in_blocks(lab_state& lab, result_row& row, Kernel kernel, int B, size_t shared) {
  const options& o = lab.o;
  const long members = (o.members + B - 1) / B * B;
  const int block = B * row.team, attempts = attempts_for(o, N);
  if (shared > 48 * 1024) LAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  const std::vector<double> initial = initial_state(N, row.m, members);
  double *state = nullptr, *error = nullptr;
  LAB_CHECK(cudaMalloc(&state, initial.size() * sizeof(double)));
  LAB_CHECK(cudaMalloc(&error, members * sizeof(double)));
  row.attempts = attempts;
  row.members = members;
  record_attributes(row, kernel, block, shared);
  const unsigned grid = unsigned(members / B);
  row.seconds = time_launches(o, state, initial, [&] { kernel<<<grid, block, shared>>>(state, members, attempts, error); });
  std::vector<double> final_state(initial.size());
  LAB_CHECK(cudaMemcpy(final_state.data(), state, final_state.size() * sizeof(double), cudaMemcpyDeviceToHost));
  cudaFree(state);
  cudaFree(error);
  std::vector<double> first(size_t(4 * N) * o.members);
  for (int e = 0; e < 4 * N; ++e)
    for (long i = 0; i < o.members; ++i) first[size_t(e) * o.members + i] = final_state[size_t(e) * members + i];
  compare(lab, row, first, 4 * N);
  return first;
}

template <int N, int T>
void run_team(lab_state& lab, method m) {
  const options& o = lab.o;
  if (!wanted(o, "team", N, m)) return;
  const int words_per_member = m == method::bdf ? team_bdf_words<N> : team_radau_words<N>;
  const int pivot_ints = m == method::bdf ? N : 2 * N;
  const size_t bytes_per_member = size_t(words_per_member) * sizeof(double) + size_t(pivot_ints) * sizeof(int);
  // B members per block: as many as the shared budget holds, at most 256 threads and 32 members (the
  // model phase's threads), at least one.
  int B = int(o.shared_kib * 1024.0 / double(bytes_per_member));
  B = std::max(1, std::min({B, 256 / T, 32}));
  result_row row{"team", N, m, T, B};
  const std::vector<double> first =
      run_in_blocks<N>(lab, row, m == method::bdf ? team_bdf<N, T> : team_radau<N, T>, B, size_t(B) * bytes_per_member);
  // A member's bits must not depend on the team size: each team against the first of this N and method.
  if (lab.team_reference.empty()) {
    lab.team_reference = first;
    lab.team_reference_size = T;
  } else {
    row.reference_team = lab.team_reference_size;
    row.bitwise_to_team = bitwise_equal(lab.team_reference, first, o.members, 4 * N, nullptr);
  }
  lab.rows.push_back(row);
  print_row(lab.o, row);
}

// The rows shape: B = 256 / R members a block (the model phase's threads: B, 3 B for Radau IIA 5).
template <int N>
void run_rows(lab_state& lab, method m) {
  if (!wanted(lab.o, "rows", N, m)) return;
  constexpr int R = row_team<N>;
  const int B = 256 / R;
  result_row row{"rows", N, m, R, B};
  run_in_blocks<N>(lab, row, m == method::bdf ? rows_bdf<N, R> : rows_radau<N, R>, B,
                   size_t(B) * (m == method::bdf ? 4 : 7) * N * sizeof(double));
  lab.rows.push_back(row);
  print_row(lab.o, row);
}

template <int N>
void run_batched(lab_state& lab, method m) {
  const options& o = lab.o;
  if (!wanted(o, "batched", N, m)) return;
  if (!lab.cublas) LAB_CUBLAS(cublasCreate(&lab.cublas));
  const long members = o.members;
  const int attempts = attempts_for(o, N), block = 128;
  const unsigned grid = unsigned((members + block - 1) / block);
  const std::vector<double> initial = initial_state(N, m, members);
  double *state = nullptr, *error = nullptr, *scratch = nullptr, *m1 = nullptr, *rhs0 = nullptr;
  cplx *m2 = nullptr, *rhs1 = nullptr;
  int *pivots = nullptr, *info = nullptr;
  double **m1_ptr = nullptr, **m2_ptr = nullptr, **rhs0_ptr = nullptr, **rhs1_ptr = nullptr;
  LAB_CHECK(cudaMalloc(&state, initial.size() * sizeof(double)));
  LAB_CHECK(cudaMalloc(&error, members * sizeof(double)));
  LAB_CHECK(cudaMalloc(&scratch, size_t(3 * N) * members * sizeof(double)));
  LAB_CHECK(cudaMalloc(&m1, size_t(N) * N * members * sizeof(double)));
  LAB_CHECK(cudaMalloc(&rhs0, size_t(N) * members * sizeof(double)));
  LAB_CHECK(cudaMalloc(&pivots, size_t(2 * N) * members * sizeof(int)));
  LAB_CHECK(cudaMalloc(&info, members * sizeof(int)));
  LAB_CHECK(cudaMalloc(&m1_ptr, members * sizeof(double*)));
  LAB_CHECK(cudaMalloc(&rhs0_ptr, members * sizeof(double*)));
  pointers_into<<<grid, block>>>(m1_ptr, m1, long(N) * N, members);
  pointers_into<<<grid, block>>>(rhs0_ptr, rhs0, N, members);
  if (m == method::radau5) {
    LAB_CHECK(cudaMalloc(&m2, size_t(N) * N * members * sizeof(cplx)));
    LAB_CHECK(cudaMalloc(&rhs1, size_t(N) * members * sizeof(cplx)));
    LAB_CHECK(cudaMalloc(&m2_ptr, members * sizeof(double*)));
    LAB_CHECK(cudaMalloc(&rhs1_ptr, members * sizeof(double*)));
    pointers_into<<<grid, block>>>(m2_ptr, reinterpret_cast<double*>(m2), 2L * N * N, members);
    pointers_into<<<grid, block>>>(rhs1_ptr, reinterpret_cast<double*>(rhs1), 2L * N, members);
  }
  LAB_CHECK(cudaDeviceSynchronize());
  result_row row{"batched", N, m};
  row.attempts = attempts;
  row.members = members;
  int host_info = 0;
  const int batch = int(members);
  if (m == method::bdf) {
    record_attributes(row, batched_bdf_residual<N>, block, 0);
    row.seconds = time_launches(o, state, initial, [&] {
      for (int a = 0; a < attempts; ++a) {
        batched_bdf_assemble<N><<<grid, block>>>(state, scratch, m1, members);
        LAB_CUBLAS(cublasDgetrfBatched(lab.cublas, N, m1_ptr, N, pivots, info, batch));
        for (int it = 0; it < newton_iterations; ++it) {
          batched_bdf_residual<N><<<grid, block>>>(scratch, rhs0, members);
          LAB_CUBLAS(cublasDgetrsBatched(lab.cublas, CUBLAS_OP_N, N, 1, m1_ptr, N, pivots, rhs0_ptr, N, &host_info, batch));
          batched_bdf_update<N><<<grid, block>>>(scratch, rhs0, members);
        }
        batched_bdf_finish<N><<<grid, block>>>(state, scratch, members, error);
      }
    });
  } else {
    auto z2 = reinterpret_cast<cuDoubleComplex**>(m2_ptr);
    auto r2 = reinterpret_cast<cuDoubleComplex**>(rhs1_ptr);
    record_attributes(row, batched_radau_residual<N>, block, 0);
    row.seconds = time_launches(o, state, initial, [&] {
      for (int a = 0; a < attempts; ++a) {
        batched_radau_assemble<N><<<grid, block>>>(state, m1, m2, members);
        LAB_CUBLAS(cublasDgetrfBatched(lab.cublas, N, m1_ptr, N, pivots, info, batch));
        LAB_CUBLAS(cublasZgetrfBatched(lab.cublas, N, z2, N, pivots + size_t(N) * members, info, batch));
        for (int it = 0; it < newton_iterations; ++it) {
          batched_radau_residual<N><<<grid, block>>>(state, rhs0, rhs1, members);
          LAB_CUBLAS(cublasDgetrsBatched(lab.cublas, CUBLAS_OP_N, N, 1, m1_ptr, N, pivots, rhs0_ptr, N, &host_info, batch));
          LAB_CUBLAS(cublasZgetrsBatched(lab.cublas, CUBLAS_OP_N, N, 1, z2, N, pivots + size_t(N) * members, r2, N,
                                         &host_info, batch));
          batched_radau_update<N><<<grid, block>>>(state, rhs0, rhs1, members);
        }
        batched_radau_error_rhs<N><<<grid, block>>>(state, rhs0, members);
        LAB_CUBLAS(cublasDgetrsBatched(lab.cublas, CUBLAS_OP_N, N, 1, m1_ptr, N, pivots, rhs0_ptr, N, &host_info, batch));
        batched_radau_finish<N><<<grid, block>>>(state, rhs0, members, error);
      }
    });
  }
  std::vector<double> final_state(initial.size());
  LAB_CHECK(cudaMemcpy(final_state.data(), state, final_state.size() * sizeof(double), cudaMemcpyDeviceToHost));
  compare(lab, row, final_state, 4 * N);
  lab.rows.push_back(row);
  print_row(lab.o, row);
  for (void* p : {(void*)state, (void*)error, (void*)scratch, (void*)m1, (void*)rhs0, (void*)pivots, (void*)info,
                  (void*)m1_ptr, (void*)rhs0_ptr, (void*)m2, (void*)rhs1, (void*)m2_ptr, (void*)rhs1_ptr})
    cudaFree(p);
}

template <int N, int... Teams>
void run_size(lab_state& lab) {
  for (method m : {method::bdf, method::radau5}) {
    lab.reference.clear();
    lab.team_reference.clear();
    run_thread_per_member<N>(lab, m, "stack");
    if constexpr (N <= 19) run_thread_per_member<N>(lab, m, "registers");
    run_thread_per_member<N>(lab, m, "global");
    (run_team<N, Teams>(lab, m), ...);
    run_rows<N>(lab, m);
    run_batched<N>(lab, m);
  }
}

// The stack shape's text on the host, for the first members: finite results, and (on a GPU) the
// device's agreement with the host (fused multiply-adds on the device round differently).
template <int N>
int host_check(long members) {
  int failures = 0;
  for (method m : {method::bdf, method::radau5}) {
    std::vector<double> s = initial_state(N, m, members);
    double largest_error = 0.0;
    for (long i = 0; i < members; ++i) {
      double err = 0.0;
      if (m == method::bdf) {
        frame_rows<4, N> z;
        for (int e = 0; e < 4 * N; ++e) z.a[e] = s[size_t(e) * members + i];
        frame_matrix<double, N> e1;
        for (int a = 0; a < attempts_for(N); ++a) err = chosen::bdf_attempt<N>(z, e1, parameters_of(i));
        for (int e = 0; e < 4 * N; ++e) s[size_t(e) * members + i] = z.a[e];
      } else {
        double y[N];
        frame_rows<3, N> z;
        for (int e = 0; e < N; ++e) y[e] = s[size_t(e) * members + i];
        for (int e = 0; e < 3 * N; ++e) z.a[e] = s[size_t(N + e) * members + i];
        frame_matrix<double, N> e1;
        frame_matrix<cplx, N> e2;
        for (int a = 0; a < attempts_for(N); ++a) err = chosen::radau_attempt<N>(y, z, e1, e2, parameters_of(i));
        for (int e = 0; e < N; ++e) s[size_t(e) * members + i] = y[e];
        for (int e = 0; e < 3 * N; ++e) s[size_t(N + e) * members + i] = z.a[e];
      }
      largest_error = std::max(largest_error, err);
    }
    long not_finite = 0;
    for (double v : s) not_finite += std::isfinite(v) ? 0 : 1;
    // The constraints hold at the end (the Newton iterations converge): sum_(j = k mod m) y_j = 1/2.
    double residual = 0.0;
    for (long i = 0; i < members; ++i)
      for (int k = 0; k < sizes<N>::m; ++k) {
        double g = -0.5;
        for (int j = k; j < sizes<N>::n; j += sizes<N>::m) g += s[size_t(j) * members + i];
        residual = std::max(residual, std::abs(g));
      }
    const bool ok = not_finite == 0 && residual < 1e-9;
    std::printf("host check N = %2d %-6s: %s (constraint residual %.1e, largest error estimate %.2e, %ld not finite)\n",
                N, method_name(m), ok ? "ok" : "FAILED", residual, largest_error, not_finite);
    failures += ok ? 0 : 1;
  }
  return failures;
}

}  // namespace lab

int main(int argc, char** argv) {
  using namespace lab;
  lab_state state;
  options& o = state.o;
  bool list = false, host = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&]() -> std::string {
      if (a + 1 >= argc) {
        std::fprintf(stderr, "kernel_shape_lab: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++a];
    };
    if (arg == "--members") o.members = std::atol(value().c_str());
    else if (arg == "--repeat") o.repeat = std::atoi(value().c_str());
    else if (arg == "--only") o.only = value();
    else if (arg == "--shared-kib") o.shared_kib = std::atof(value().c_str());
    else if (arg == "--fp64-peak") o.fp64_peak_tflops = std::atof(value().c_str());
    else if (arg == "--once") o.once = true;
    else if (arg == "--attempts") o.attempts = std::atoi(value().c_str());
    else if (arg == "--size") o.size = std::atoi(value().c_str());
    else if (arg == "--host-check") host = true;
    else if (arg == "--list") list = true;
    else {
      std::fprintf(stderr, "kernel_shape_lab: unknown argument %s (see the head of kernel_shape_lab.cu)\n", arg.c_str());
      return 2;
    }
  }
  if (o.members < 32 || o.repeat < 1) {
    std::fprintf(stderr, "kernel_shape_lab: --members must be at least 32 and --repeat at least 1\n");
    return 2;
  }
  if (list) {
    std::printf("shapes: stack registers global team rows batched; N: 4 8 19 32; methods: bdf radau5\n");
    return 0;
  }
  if (host) return host_check<4>(64) + host_check<8>(64) + host_check<19>(16) + host_check<32>(8) ? 1 : 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "kernel_shape_lab: no CUDA device\n");
    return 3;
  }
  cudaDeviceProp p{};
  LAB_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, sm_%d%d, %d SMs; %ld members, ", p.name, p.major, p.minor, p.multiProcessorCount, o.members);
  if (o.once)
    std::printf("one launch each (--once: its time is not a measurement)\n");
  else
    std::printf("best of %d timed launches after a warm-up\n", o.repeat);
  print_header();
  run_size<4, 4>(state);
  run_size<8, 4, 8>(state);
  run_size<19, 8, 16, 32>(state);
  run_size<32, 8, 16, 32>(state);
  if (state.cublas) cublasDestroy(state.cublas);
  long bad = 0;
  for (const result_row& r : state.rows) bad += r.not_finite;
  return bad ? 1 : 0;
}
