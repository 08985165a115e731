// tools/member_footprint.cpp — the per-member figures docs/GPU.md's performance model is built on.
//
// Built nowhere by default; run it ad hoc:
//     g++ -std=c++20 -O2 -Iinclude -I. tools/member_footprint.cpp -o /tmp/member_footprint
//     /tmp/member_footprint
//
// Prints, for pendulum, double_pendulum, andrews and chain<16> (bdf_method and radau5_method):
//   1. sizes: n, m, k, the state vector ny, the Newton matrix size N = n + 2m + k, sizeof(member_state),
//      soa_image words, bytes_per_member (lockstep/chunks/typed_chunks.hpp) and the largest AD temporary;
//   2. operation counts of one residual evaluation and one Jacobian evaluation, obtained by running the
//      very templates the stepper runs (model functions, derivatives.hpp's AD in chunks, linalg.hpp's
//      products) on a counting scalar: adds/subs, muls, divs, sqrt, sin/cos. These are counts of the
//      source as written, an upper bound on what a compiler emits (it may fold x * 1, never x * 0);
//   3. the work of a CPU run of the member stepper (the code solve_member runs) — steps, attempts,
//      Newton iterations, LU factorizations, Jacobian and residual evaluations, and BDF's mean order —
//      and from them an estimate of the floating-point work per accepted step: the counted model
//      work plus exact loop counts of the Newton-matrix assembly, the pivoted LU ((2/3) N^3 + ...),
//      the triangular solves (2 N^2 per right-hand side) and the method's vector bookkeeping.
// Everything here runs on the CPU: nothing is a GPU measurement.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/member.hpp"

// ---------------------------------------------------------------------------------------------------
// A counting scalar: every arithmetic operation on it increments a global tally.
// ---------------------------------------------------------------------------------------------------
namespace fc {

struct tally {
  long add = 0, mul = 0, div = 0, sqrt = 0, trig = 0;
  long flops() const { return add + mul + div + sqrt + trig; }
  // FP64 cost in FLOP-equivalents on a GPU, with the assumed weights of docs/GPU.md: add/mul 1, div and
  // sqrt 8 (reciprocal seed + Newton refinement, ~4 DFMA), sin/cos 40 (range reduction + polynomial,
  // ~20 DFMA).
  double weighted() const { return add + mul + 8.0 * (div + sqrt) + 40.0 * trig; }
  tally operator-(const tally& b) const { return {add - b.add, mul - b.mul, div - b.div, sqrt - b.sqrt, trig - b.trig}; }
  tally operator+(const tally& b) const { return {add + b.add, mul + b.mul, div + b.div, sqrt + b.sqrt, trig + b.trig}; }
  tally scaled(double s) const {
    return {long(add * s + 0.5), long(mul * s + 0.5), long(div * s + 0.5), long(sqrt * s + 0.5), long(trig * s + 0.5)};
  }
};
inline tally g;

struct cnt {
  double v = 0.0;
  cnt() = default;
  cnt(double x) : v(x) {}  // NOLINT: constants convert implicitly, as for double
};
inline cnt operator+(cnt a, cnt b) { ++g.add; return a.v + b.v; }
inline cnt operator-(cnt a, cnt b) { ++g.add; return a.v - b.v; }
inline cnt operator*(cnt a, cnt b) { ++g.mul; return a.v * b.v; }
inline cnt operator/(cnt a, cnt b) { ++g.div; return a.v / b.v; }
inline cnt operator-(cnt a) { return -a.v; }  // a sign flip, folded into the consuming instruction
inline cnt operator+(cnt a) { return a; }
inline bool operator<(cnt a, cnt b) { return a.v < b.v; }
inline bool operator>(cnt a, cnt b) { return a.v > b.v; }
inline bool operator<=(cnt a, cnt b) { return a.v <= b.v; }
inline bool operator>=(cnt a, cnt b) { return a.v >= b.v; }
inline cnt sqrt(cnt a) { ++g.sqrt; return std::sqrt(a.v); }
inline cnt sin(cnt a) { ++g.trig; return std::sin(a.v); }
inline cnt cos(cnt a) { ++g.trig; return std::cos(a.v); }
inline cnt tan(cnt a) { ++g.trig; return std::tan(a.v); }
inline cnt exp(cnt a) { ++g.trig; return std::exp(a.v); }
inline cnt log(cnt a) { ++g.trig; return std::log(a.v); }
inline cnt atan2(cnt a, cnt b) { ++g.trig; return std::atan2(a.v, b.v); }
inline cnt abs(cnt a) { return std::fabs(a.v); }
inline double value_of(cnt a) { return a.v; }
inline bool is_finite(cnt a) { return std::isfinite(a.v); }

}  // namespace fc

namespace {

using namespace lockstep;
using fc::cnt;

template <class Model>
void model_point(vec<cnt, Model::n>& q, vec<cnt, Model::n>& v, vec<cnt, Model::n>& a, vec<cnt, Model::m>& lambda,
                 vec<cnt, Model::m>& mu, std::vector<double>& p) {
  p.resize(Model::n_params);
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  double in[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int j = 0; j < Model::n_inputs; ++j) in[j] = Model::inputs[j].default_value;
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), in, q0, v0);
  for (int i = 0; i < Model::n; ++i) {
    q[i] = q0[i];
    v[i] = v0[i] + 0.1 * (i + 1);
    a[i] = 0.3 * (i + 1);
  }
  for (int i = 0; i < Model::m; ++i) {
    lambda[i] = 1.0 + i;
    mu[i] = 1e-7 * (i + 1);
  }
}

// evaluate_residual (formulation/euler_lagrange.hpp) on the counting scalar, statement by statement.
template <class Model>
fc::tally count_residual(formulation f) {
  static_assert(Model::k == 0, "the models of docs/GPU.md have no non-holonomic constraints");
  constexpr int n = Model::n, m = Model::m;
  vec<cnt, n> q, v, vdot, qdot;
  vec<cnt, m> lambda, mu;
  std::vector<double> p;
  model_point<Model>(q, v, vdot, lambda, mu, p);
  qdot = v;
  const cnt t = 0.1;
  const fc::tally before = fc::g;
  const auto con = constraint_linearize<Model>(t, q, p.data());
  const auto M = Model::template mass<cnt, double>(q, p.data());
  const auto Q = Model::template force<cnt, double>(t, q, v, p.data());
  const auto Mvdot = M * vdot;
  const auto Gtl = transpose_times(con.G, lambda);
  vec<cnt, n> Fq, Fv;
  for (int i = 0; i < n; ++i) {
    Fq[i] = qdot[i] - v[i];
    Fv[i] = Mvdot[i] + Gtl[i] - Q[i];
  }
  if (f == formulation::ggl) {
    const auto Gtm = transpose_times(con.G, mu);
    for (int i = 0; i < n; ++i) Fq[i] = Fq[i] + Gtm[i];
    const auto Gv = con.G * v;
    vec<cnt, m> Fpsi;
    for (int i = 0; i < m; ++i) Fpsi[i] = Gv[i] + con.phi_t[i];
  }
  return fc::g - before;
}

// evaluate_jacobian (formulation/euler_lagrange.hpp) on the counting scalar.
// breakdown (6 entries, optional): mass; Q, dQ/dq, dQ/dv (over 2n inputs); d(M a)/dq (- dQ/dq);
// G, Phi_t (over n + 1 inputs); d(G^T lambda)/dq (nested); d(G v + Phi_t)/dq (ggl).
template <class Model>
fc::tally count_jacobian(formulation f, fc::tally* breakdown = nullptr) {
  constexpr int n = Model::n, m = Model::m;
  vec<cnt, n> q, v, vdot;
  vec<cnt, m> lambda, mu;
  std::vector<double> p;
  model_point<Model>(q, v, vdot, lambda, mu, p);
  const cnt t = 0.1;
  const fc::tally before = fc::g;
  fc::tally mark = fc::g;
  auto piece = [&](int i) {
    if (breakdown) breakdown[i] = fc::g - mark;
    mark = fc::g;
  };
  const auto M = Model::template mass<cnt, double>(q, p.data());
  piece(0);
  const auto force = force_linearize<Model>(t, q, v, p.data());
  piece(1);
  auto K = inertia_jacobian<Model>(q, vdot, p.data()) - force.dQ_dq;
  piece(2);
  const auto G = constraint_jacobian<Model>(t, q, p.data());
  piece(3);
  K = K + constraint_force_jacobian<Model>(t, q, lambda, p.data());
  piece(4);
  if (f == formulation::ggl) {
    const auto Psi_q = velocity_constraint_jacobian<Model>(t, q, v, p.data());
    (void)Psi_q;
  }
  piece(5);
  (void)M;
  (void)G;
  return fc::g - before;
}

// record_constraint_residuals (stepper/member.hpp), once per accepted step.
template <class Model>
fc::tally count_constraint_record() {
  constexpr int n = Model::n, m = Model::m;
  vec<cnt, n> q, v, a;
  vec<cnt, m> lambda, mu;
  std::vector<double> p;
  model_point<Model>(q, v, a, lambda, mu, p);
  const cnt t = 0.1;
  const fc::tally before = fc::g;
  const auto phi = Model::template constraint<cnt, double>(t, q, p.data());
  const auto vc = velocity_constraint<Model>(t, q, v, p.data());
  (void)phi;
  (void)vc;
  return fc::g - before;
}

// ---------------------------------------------------------------------------------------------------
// Exact loop counts of the dense kernels (core/linalg.hpp, formulation/euler_lagrange.hpp), in real
// operations; complex: add 2, mul 4 mul + 2 add, div (Smith) 3 div + 3 mul + 3 add.
// ---------------------------------------------------------------------------------------------------
struct eops {  // operations on the element type E
  long add = 0, mul = 0, div = 0;
};
fc::tally real_ops(const eops& e, bool complex_elements) {
  fc::tally t;
  if (!complex_elements) {
    t.add = e.add;
    t.mul = e.mul;
    t.div = e.div;
  } else {
    t.add = 2 * e.add + 2 * e.mul + 3 * e.div;
    t.mul = 4 * e.mul + 3 * e.div;
    t.div = 3 * e.div;
  }
  return t;
}

// lu_factor: for k, the N - k - 1 multipliers (div) and the (N - k - 1)^2 updates (mul + sub).
eops lu_factor_ops(long N) {
  eops e;
  for (long k = 0; k < N; ++k) {
    const long r = N - k - 1;
    e.div += r;
    e.mul += r * r;
    e.add += r * r;
  }
  return e;
}
// lu_solve: forward N(N-1)/2 and backward N(N-1)/2 multiply-subtracts, N divisions.
eops lu_solve_ops(long N) {
  eops e;
  e.mul = N * (N - 1);
  e.add = N * (N - 1);
  e.div = N;
  return e;
}
// factor_newton_matrix's assembly before lu_factor, in real operations. The element-type part: 1 / c,
// c^-2, M - D_v / c and + K / c^2 (n^2 each), Psi_q / c and (M - D_v / c) G^T (ggl); G G^T is real.
fc::tally assembly_ops(long n, long m, bool ggl, bool complex_elements) {
  eops e;
  e.div = 1;
  e.mul = 1 + 2 * n * n + (ggl ? m * n + n * m * n : 0);
  e.add = 2 * n * n + (ggl ? m * n + n * m * n : 0);
  fc::tally t = real_ops(e, complex_elements);
  if (ggl) {
    t.mul += m * m * n;
    t.add += m * m * n;
  }
  return t;
}
// solve_newton around lu_solve: the right-hand side ((c M - D_v) F_q: 2 mul + 2 add per entry; G F_q),
// the multipliers' unscaling and dv = c dq + F_q + G^T dmu.
eops solve_glue_ops(long n, long m, bool ggl) {
  eops e;
  e.div = 1;
  e.mul = 2 + 2 * n * n + n + (ggl ? m * n + 2 * m : m) + n * (1 + m);
  e.add = 2 * n * n + n + (ggl ? m * n + m : 0) + n * (1 + m);
  return e;
}

// ---------------------------------------------------------------------------------------------------
// Work of one CPU run of the member stepper.
// ---------------------------------------------------------------------------------------------------
template <class Model, class Method>
struct run_stats {
  member_status status = member_status::running;
  member_counters c;
  long attempts = 0;
  double mean_order = 0.0;  // BDF: mean order of the accepted steps
  // Per attempt: Newton iterations, Jacobian evaluations, LU factorizations, residual evaluations
  // beyond those of the Newton iterations (Radau's error estimate).
  struct attempt_work {
    long it = 0, jac = 0, lu = 0, extra = 0;
  };
  std::vector<attempt_work> per_attempt;
};

// E[max of W independent draws] of a per-attempt count, from its empirical distribution: the trip
// count of a code block for a warp of W members at independent points of their trajectories (SIMT
// runs a block as often as its most demanding lane needs it).
template <class Rows, class Get>
double expected_max(const Rows& rows, Get get, int W) {
  if (rows.empty()) return 0.0;
  long top = 0;
  for (const auto& r : rows) top = std::max(top, get(r));
  double e = 0.0;
  for (long x = 1; x <= top; ++x) {  // E[max] = sum_{x >= 1} P(max >= x) = sum (1 - F(x - 1)^W)
    long below = 0;
    for (const auto& r : rows) below += get(r) < x;
    e += 1.0 - std::pow(double(below) / rows.size(), W);
  }
  return e;
}

template <class Model, class Method>
run_stats<Model, Method> run_member(double t1, formulation form) {
  std::vector<double> p(Model::n_params);
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  double in[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int j = 0; j < Model::n_inputs; ++j) in[j] = Model::inputs[j].default_value;
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), in, q0, v0);
  solver_options opt;  // rtol = atol = 1e-6
  opt.method = Method::kind;
  opt.form = form;
  const double save_times[1] = {t1};
  auto sink = [](int, double, const state_vector<Model>&) {};
  member_state<Model, Method> ms;
  member_begin<Model>(ms, 0.0, t1, q0, v0, p.data(), opt, save_times, 1, sink);
  run_stats<Model, Method> r;
  long order_sum = 0;
  long steps_before = ms.counters.steps;
  // One attempt per call: the same sequence as one call with an unbounded budget (member.hpp).
  member_counters before = ms.counters;
  long attempts_before = ms.attempts;
  bool done = false;
  while (!done) {
    done = member_advance<Model>(ms, 1, t1, p.data(), opt, save_times, 1, sink);
    if constexpr (std::is_same_v<Method, bdf_method>)
      if (ms.counters.steps > steps_before) order_sum += ms.method.last_order;
    steps_before = ms.counters.steps;
    if (ms.attempts > attempts_before) {
      const member_counters& c = ms.counters;
      const long it = c.newton_iterations - before.newton_iterations;
      const long res = c.model_evaluations - before.model_evaluations;
      const long per_it = std::is_same_v<Method, bdf_method> ? 1 : 3;
      r.per_attempt.push_back({it, c.jacobian_evaluations - before.jacobian_evaluations,
                               c.lu_factorizations - before.lu_factorizations, res - per_it * it});
    }
    before = ms.counters;
    attempts_before = ms.attempts;
  }
  r.status = ms.status;
  r.c = ms.counters;
  r.attempts = ms.attempts;
  r.mean_order = ms.counters.steps > 0 ? double(order_sum) / ms.counters.steps : 0.0;
  return r;
}

template <class Model, class Method>
void print_sizes(const char* label) {
  using L = state_layout<Model>;
  using S = member_state<Model, Method>;
  constexpr int C1 = ad::chunk_for(Model::n);
  constexpr int C2 = ad::chunk_for(Model::n + 1);
  // d(G^T lambda)/dq differentiates constraint_linearize, itself differentiated: its input vector
  // (q, t) holds nested duals dual<dual<double, C1>, C2>.
  const std::size_t nested = sizeof(vec<dual<dual<double, C1>, C2>, Model::n + 1>);
  std::printf("| %-15s | %-6s | %2d | %2d | %2d | %3d | %3d | %7zu | %5d | %7zu | %7zu | %7zu | %7zu |\n", label,
              Method::kind == method_kind::bdf ? "bdf" : "radau5", Model::n, Model::m, Model::k, L::size,
              L::newton_size, sizeof(S), soa_image<S>::words, bytes_per_member_with<Model, Method>(0),
              bytes_per_member_with<Model, Method>(1), sizeof(jacobian_blocks<Model>), nested);
}

template <class Model>
void print_model_ops(const char* label) {
  const fc::tally rg = count_residual<Model>(formulation::ggl), ri = count_residual<Model>(formulation::index3);
  const fc::tally jg = count_jacobian<Model>(formulation::ggl), ji = count_jacobian<Model>(formulation::index3);
  const fc::tally cr = count_constraint_record<Model>();
  auto row = [&](const char* what, const fc::tally& t) {
    std::printf("| %-15s | %-28s | %7ld | %7ld | %5ld | %4ld | %4ld | %8ld | %9.0f |\n", label, what, t.add, t.mul,
                t.div, t.sqrt, t.trig, t.flops(), t.weighted());
  };
  row("residual (ggl)", rg);
  row("residual (index3)", ri);
  row("Jacobian (ggl)", jg);
  row("Jacobian (index3)", ji);
  row("constraint record", cr);
  fc::tally b[6];
  count_jacobian<Model>(formulation::ggl, b);
  const char* names[6] = {"  J: mass M", "  J: Q, dQ/dq, dQ/dv", "  J: d(M a)/dq", "  J: G, Phi_t",
                          "  J: d(G^T lambda)/dq", "  J: d(Gv + Phi_t)/dq"};
  for (int i = 0; i < 6; ++i) row(names[i], b[i]);
}

// Estimated operations of the method's vector bookkeeping (interpolation, weights, norms, updates);
// approximate (the loops depend on run-time order and rejections), see docs/GPU.md.
template <class Model>
fc::tally bdf_bookkeeping(const run_stats<Model, bdf_method>& r) {
  const long ny = state_layout<Model>::size, n = Model::n, m = Model::m;
  const double k = r.mean_order > 0 ? r.mean_order : 1.0;
  fc::tally per_attempt;
  // predictor: divided differences over k + 1 nodes, Newton form with derivative; weights; error test
  per_attempt.add = long(k * (k + 1) / 2 * ny + 2 * k * ny + ny + ny + 2 * n);
  per_attempt.mul = long(k * (k + 1) / 2 * ny + 2 * k * ny + ny + 2 * n);
  per_attempt.div = long(k * (k + 1) / 2) + ny;
  fc::tally per_step;  // order selection: one or two LTE estimates (divided differences over k + 2, k + 3 nodes)
  per_step.add = long(1.5 * (k + 1) * (k + 2) / 2 * ny + 2 * 2 * n);
  per_step.mul = long(1.5 * (k + 1) * (k + 2) / 2 * ny + 2 * 2 * n);
  per_step.div = long(1.5 * (k + 1));
  per_step.trig = 3;  // pow for the step ratios (counted with the transcendentals)
  fc::tally per_iteration;  // corrector derivatives, update, newton_norm
  per_iteration.add = 2 * n * 2 + ny + ny + n * m + n;
  per_iteration.mul = 2 * n * 2 + 2 * ny + n * m + 2 * n;
  per_iteration.div = 1;
  per_iteration.sqrt = 1;
  const double s = double(r.c.steps);
  return per_attempt.scaled(r.attempts / s) + per_step + per_iteration.scaled(r.c.newton_iterations / s);
}

template <class Model>
fc::tally radau_bookkeeping(const run_stats<Model, radau5_method>& r) {
  const long ny = state_layout<Model>::size;
  fc::tally per_attempt;  // weights; starting values (divided differences over 4 nodes, 3 evaluations)
  per_attempt.add = 2 * ny + 6 * ny + 3 * 3 * ny + 3 * ny;
  per_attempt.mul = 3 * ny + 6 * ny + 3 * 3 * ny;
  per_attempt.div = ny + 6;
  fc::tally per_iteration;  // stage derivatives, stage points, T^-1 F, T dW, Z update, norms
  per_iteration.add = 3 * 3 * ny + 3 * ny + 3 * 3 * ny + 3 * 3 * ny + 3 * ny + 3 * 2 * ny;
  per_iteration.mul = 3 * 3 * ny + 3 * 3 * ny + 3 * 3 * ny + 3 * 2 * ny;
  per_iteration.div = 3 * ny + 2;
  per_iteration.sqrt = 4;
  fc::tally per_step;  // error estimate vectors, accepted-step updates, controller
  per_step.add = 3 * ny + 2 * ny + 3 * ny + ny;
  per_step.mul = 3 * ny + 2 * ny + 3 * ny;
  per_step.div = 2 * ny;
  per_step.trig = 2;
  const double s = double(r.c.steps);
  return per_attempt.scaled(r.attempts / s) + per_step + per_iteration.scaled(r.c.newton_iterations / s);
}

// Bytes moved per accepted step. Global memory (exact, from the sizes): one launch loads and stores
// the member's SoA image, reads its parameters and its active-list index and writes its flag, once per
// K attempts (run_options::attempts_per_sync, default 32). Local memory (an estimate, the traffic of
// the per-thread arrays the stepper indexes: the member state, the Jacobian blocks, the Newton
// matrices, BDF's history and divided differences, Radau's stages), if every access went to memory:
//   LU (in place): the trailing block is read and written at every elimination step, 16 sum_k (N-k-1)^2
//     bytes (x2 for complex entries), plus the assembly (Jacobian blocks read, N^2 written, scale pass);
//   a solve: the LU factors (N^2 entries) and M, D_v, G for the eliminated rows; the vectors touched by
//     residuals, updates and norms, counted per state vector (ny doubles);
//   a Jacobian evaluation: its output blocks only (3 n^2 + 2 m n doubles; the AD temporaries are
//     not counted, so chain<16>'s figure is low).
struct byte_row {
  std::string label, method;
  double global = 0, local = 0, weighted = 0, flops = 0;
};
inline std::vector<byte_row> g_bytes;
struct warp_row {
  std::string label, method;
  double lane, warp, it1, it32, jac1, jac32, lu1, lu32;
  long max_it;
};
inline std::vector<warp_row> g_warp;
inline constexpr int K_default = 32;

double lu_bytes(long N, bool complex_elements) {
  double s = 0;
  for (long k = 0; k < N; ++k) s += double(N - k - 1) * double(N - k - 1);
  return (complex_elements ? 32.0 : 16.0) * s;
}

template <class Model, class Method>
void print_work(const char* label, double t1, formulation form) {
  const auto r = run_member<Model, Method>(t1, form);
  const bool bdf = std::is_same_v<Method, bdf_method>;
  const long n = Model::n, m = Model::m, N = state_layout<Model>::newton_size;
  const bool ggl = form == formulation::ggl;
  const double s = double(r.c.steps);

  // Per accepted step.
  const double res_per = r.c.model_evaluations / s, jac_per = r.c.jacobian_evaluations / s;
  const double lu_per = r.c.lu_factorizations / s, it_per = r.c.newton_iterations / s;
  const fc::tally res = count_residual<Model>(form).scaled(res_per);
  const fc::tally jac = count_jacobian<Model>(form).scaled(jac_per);
  fc::tally lu, solves;
  if (bdf) {
    lu = (assembly_ops(n, m, ggl, false) + real_ops(lu_factor_ops(N), false)).scaled(lu_per);
    solves = (real_ops(lu_solve_ops(N), false) + real_ops(solve_glue_ops(n, m, ggl), false)).scaled(it_per);
  } else {
    // lu_factorizations counts the real and the complex block: lu_per / 2 pairs. Each Newton iteration
    // solves once with each; the error estimate solves 1-2 more times with the real block.
    const fc::tally pair = assembly_ops(n, m, ggl, false) + real_ops(lu_factor_ops(N), false) +
                           assembly_ops(n, m, ggl, true) + real_ops(lu_factor_ops(N), true);
    lu = pair.scaled(lu_per / 2.0);
    const fc::tally real_solve = real_ops(lu_solve_ops(N), false) + real_ops(solve_glue_ops(n, m, ggl), false);
    const fc::tally complex_solve = real_ops(lu_solve_ops(N), true) + real_ops(solve_glue_ops(n, m, ggl), true);
    const double error_solves = (r.c.model_evaluations - 3.0 * r.c.newton_iterations) / s;  // one per extra residual
    solves = (real_solve + complex_solve).scaled(it_per) + real_solve.scaled(error_solves);
  }
  const fc::tally rec = count_constraint_record<Model>();
  fc::tally book;
  if constexpr (std::is_same_v<Method, bdf_method>)
    book = bdf_bookkeeping<Model>(r);
  else
    book = radau_bookkeeping<Model>(r);
  const fc::tally total = res + jac + lu + solves + rec + book;

  // Unit costs (weighted FLOP) of the divergent code blocks, and the warp's cost per step.
  double c_it, c_jac = count_jacobian<Model>(form).weighted(), c_lu, c_extra = 0.0;
  {
    const double unit_res = count_residual<Model>(form).weighted();
    const double real_solve = (real_ops(lu_solve_ops(N), false) + real_ops(solve_glue_ops(n, m, ggl), false)).weighted();
    if (bdf) {
      c_it = unit_res + real_solve;
      c_lu = (assembly_ops(n, m, ggl, false) + real_ops(lu_factor_ops(N), false)).weighted();
    } else {
      const double complex_solve = (real_ops(lu_solve_ops(N), true) + real_ops(solve_glue_ops(n, m, ggl), true)).weighted();
      c_it = 3 * unit_res + real_solve + complex_solve;
      c_lu = 0.5 * (assembly_ops(n, m, ggl, false) + real_ops(lu_factor_ops(N), false) + assembly_ops(n, m, ggl, true) +
                    real_ops(lu_factor_ops(N), true)).weighted();
      c_extra = unit_res + real_solve;
    }
  }
  using Rec = typename run_stats<Model, Method>::attempt_work;
  const auto& A = r.per_attempt;
  const double att_per = r.attempts / s;
  const double warp_step =
      att_per * (c_it * expected_max(A, [](const Rec& x) { return x.it; }, 32) +
                 c_jac * expected_max(A, [](const Rec& x) { return x.jac; }, 32) +
                 c_lu * expected_max(A, [](const Rec& x) { return x.lu; }, 32) +
                 c_extra * expected_max(A, [](const Rec& x) { return x.extra; }, 32)) +
      (rec + book).weighted();
  long max_it = 0;
  for (const auto& x : A) max_it = std::max(max_it, x.it);
  g_warp.push_back({label, bdf ? "bdf/ggl" : "radau5/index3", total.weighted(), warp_step,
                    expected_max(A, [](const Rec& x) { return x.it; }, 1), expected_max(A, [](const Rec& x) { return x.it; }, 32),
                    expected_max(A, [](const Rec& x) { return x.jac; }, 1), expected_max(A, [](const Rec& x) { return x.jac; }, 32),
                    expected_max(A, [](const Rec& x) { return x.lu; }, 1), expected_max(A, [](const Rec& x) { return x.lu; }, 32), max_it});

  {
    using L = state_layout<Model>;
    const double ny = L::size, e = 8.0;
    const double words = soa_image<member_state<Model, Method>>::words;
    const double launch = 2.0 * e * words + e * Model::n_params + 8.0 + 1.0;
    const double global = launch * (double(r.attempts) / s) / K_default;
    const double nn = double(n) * n, mn = double(m) * n, NN = double(N) * N;
    const double jac_b = e * (3 * nn + 2 * mn);
    const double assembly_b = e * (3 * nn + 2 * mn + nn + 2 * NN);
    double local = 0;
    if (bdf) {
      const double k = r.mean_order > 0 ? r.mean_order : 1.0;
      const double per_attempt = e * ny * (2 * (k + 1) + 1.5 * k * (k + 1) + 2 * k + 3);
      const double per_step = e * ny * (1.5 * (2 * (k + 2) + 1.5 * (k + 1) * (k + 2)) + 2 * 6);
      const double per_iteration = e * (NN + 2 * nn + 2 * mn + 8 * ny);
      const double per_lu = assembly_b + lu_bytes(N, false);
      local = per_attempt * (r.attempts / s) + per_step + per_iteration * it_per + per_lu * lu_per + jac_b * jac_per;
    } else {
      const double per_attempt = e * ny * 31;  // weights, starting values (4-node divided differences, 3 evaluations)
      const double per_iteration = e * (3 * 3 * ny + 6 * ny + 9 * ny + 3 * ny) + e * (NN + 2 * NN + 2 * (2 * nn + 2 * mn));
      const double per_pair = 2 * assembly_b + e * NN + lu_bytes(N, false) + lu_bytes(N, true);
      const double error_solves = (r.c.model_evaluations - 3.0 * r.c.newton_iterations) / s;
      const double per_step = e * ny * 12;
      local = per_attempt * (r.attempts / s) + per_step + per_iteration * it_per + per_pair * (lu_per / 2.0) +
              error_solves * e * (NN + 2 * nn + 2 * mn + 4 * ny) + jac_b * jac_per;
    }
    g_bytes.push_back({label, bdf ? "bdf/ggl" : "radau5/index3", global, local, total.weighted(), double(total.flops())});
  }

  std::printf("| %-15s | %-13s | %-8s | %5ld | %5ld | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f | %4.2f |",
              label, bdf ? "bdf/ggl" : "radau5/index3", status_name(r.status), r.c.steps, r.attempts - r.c.steps,
              it_per, res_per, jac_per, lu_per, r.attempts / s, r.mean_order);
  std::printf(" %8.0f | %8.0f | %8.0f | %8.0f | %7.0f | %8ld | %9.0f |\n", res.weighted(), jac.weighted(),
              lu.weighted(), solves.weighted(), (rec + book).weighted(), total.flops(), total.weighted());
}

}  // namespace

int main() {
  using namespace lockstep;
  using models::andrews;
  using models::chain;
  using models::double_pendulum;
  using models::pendulum;

  std::printf("## 1. Sizes (bytes; bytes_per_member: lockstep/chunks/typed_chunks.hpp, 0 and 1 save times)\n\n");
  std::printf("| model           | method | n  | m  | k  | ny  | N   | sizeof  | words | bpm(0)  | bpm(1)  | jac blk | AD nest |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  print_sizes<pendulum, bdf_method>("pendulum");
  print_sizes<pendulum, radau5_method>("pendulum");
  print_sizes<double_pendulum, bdf_method>("double_pendulum");
  print_sizes<double_pendulum, radau5_method>("double_pendulum");
  print_sizes<andrews, bdf_method>("andrews");
  print_sizes<andrews, radau5_method>("andrews");
  print_sizes<chain<16>, bdf_method>("chain<16>");
  print_sizes<chain<16>, radau5_method>("chain<16>");
  std::printf("\nsizeof = sizeof(member_state<Model, Method>); words = soa_image words (8 B); jac blk = "
              "sizeof(jacobian_blocks<Model>);\nAD nest = sizeof(vec<dual<dual<double, C>, C'>, n + 1>), the input "
              "vector of d(G^T lambda)/dq (constraint_force_jacobian).\n");

  std::printf("\n## 2. Operation counts of one evaluation (counting scalar; weighted: add/mul 1, div/sqrt 8, "
              "sin/cos 40)\n\n");
  std::printf("| model           | evaluation                   | add/sub | mul     | div   | sqrt | trig | flops    | weighted  |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  print_model_ops<pendulum>("pendulum");
  print_model_ops<andrews>("andrews");
  print_model_ops<chain<16>>("chain<16>");

  std::printf("\n## 3. Work per accepted step of a CPU run (rtol = atol = 1e-6; pendulum t1 = 10, andrews t1 = 0.03, "
              "chain<16> t1 = 3)\n");
  std::printf("Columns: steps, rejected attempts, then per accepted step: Newton iterations, residual evaluations, "
              "Jacobian evaluations,\nLU factorizations (Radau: real + complex), attempts, mean BDF order; then weighted "
              "FLOPs per step of residuals, Jacobians,\nassembly + LU, solves, bookkeeping (+ constraint record), "
              "and the total (raw flops and weighted).\n\n");
  std::printf("| model           | method        | status   | steps | rej   | it/st | res   | jac   | lu    | att   | ord  |"
              " res W    | jac W    | LU W     | solve W  | book W  | flops    | weighted  |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  print_work<pendulum, bdf_method>("pendulum", 10.0, formulation::ggl);
  print_work<pendulum, radau5_method>("pendulum", 10.0, formulation::index3);
  print_work<andrews, bdf_method>("andrews", 0.03, formulation::ggl);
  print_work<andrews, radau5_method>("andrews", 0.03, formulation::index3);
  print_work<chain<16>, bdf_method>("chain<16>", 3.0, formulation::ggl);
  print_work<chain<16>, radau5_method>("chain<16>", 3.0, formulation::index3);

  std::printf("\n## 4. Bytes per accepted step (global: exact, K = %d attempts per launch; local: estimate, see the "
              "comment of byte_row)\n\n", K_default);
  std::printf("| model           | method        | global B | local B  | weighted FLOP | FLOP / B (global) | FLOP / B (global + local) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& b : g_bytes)
    std::printf("| %-15s | %-13s | %8.0f | %8.0f | %13.0f | %17.1f | %25.2f |\n", b.label.c_str(), b.method.c_str(),
                b.global, b.local, b.weighted, b.weighted / b.global, b.weighted / (b.global + b.local));

  std::printf("\n## 5. Divergence: a warp of 32 members at independent points of their trajectories (per-attempt work "
              "of the run above,\nresampled); E1 = mean per attempt, E32 = expected maximum over 32 lanes = the warp's "
              "trip count of that block\n\n");
  std::printf("| model           | method        | it E1 | it E32 | it max | jac E1 | jac E32 | lu E1 | lu E32 | lane W/step | warp W/step | SIMT efficiency |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& w : g_warp)
    std::printf("| %-15s | %-13s | %5.2f | %6.2f | %6ld | %6.2f | %7.2f | %5.2f | %6.2f | %11.0f | %11.0f | %15.2f |\n",
                w.label.c_str(), w.method.c_str(), w.it1, w.it32, w.max_it, w.jac1, w.jac32, w.lu1, w.lu32, w.lane,
                w.warp, w.lane / w.warp);
  return 0;
}
