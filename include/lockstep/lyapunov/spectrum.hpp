// lockstep/lyapunov/spectrum.hpp — Lyapunov exponents of one member of a constrained mechanical
// system, by the discrete QR method on the tangents of lyapunov/tangent.hpp (BDF) and
// lyapunov/tangent_radau.hpp (Radau IIA), and the two-trajectory
// ("clone") estimate of the largest exponent as an independent cross-check.
//
// The state space is the constraint manifold {Phi = 0, G v + Phi_t = 0, A v + a = 0}, of dimension
// d = 2 (n - m) - k (Mantegazza & Masarati 2012, section 3.4.1 eq. 71 defines the exponents by the growth of the axes
// of an infinitesimal ellipsoid; on a manifold those axes are tangent vectors). The spectrum has d exponents.
//
// Discrete QR (Benettin, Galgani, Giorgilli & Strelcyn 1980, Meccanica 15, Part 2; Shimada &
// Nagashima 1979, Prog. Theor. Phys. 61; the "discrete QR" method of Dieci, Russell & Van Vleck 1997,
// SIAM J. Numer. Anal. 34): p <= d tangent directions S are propagated with the member;
// at the first accepted step after every `renormalize` time units S = Q R (Gram-Schmidt in the metric
// below), the directions are replaced by Q, and
//     lambda_i ~ (1 / (t - t_start)) sum over re-orthonormalizations of log R_ii,                     (L1)
// the p leading exponents in decreasing order (the i-th diagonal entry measures the growth of the
// i-dimensional volume beyond the (i-1)-dimensional one). Steps are never shortened for a
// re-orthonormalization (docs/ARCHITECTURE.md section 1): it happens at the first step at or after each multiple
// of `renormalize`, and (L1) divides by the true elapsed time, so nothing is lost. Replacing S by
// Q = S R^-1 is applied to the whole tangent history (recombine_tangents: BDF's past points and
// confluent derivative; Radau has only the current point): the history is linear in the directions,
// so the tangents continue exactly as if they had started as Q.
//
// Accuracy. The tangents' error control (tangent.hpp) is on by default: right after a
// re-orthonormalization the new directions contain the fastest modes at full size (on the damped
// oscillator, directions that had decayed by e^-4.3 relative to the others), and the steps the state
// alone would take cannot resolve them; with it, the exponents of the oscillator with d = 5 come out to
// 4e-7 (BDF, rtol 1e-7) and 1.4e-8 (Radau IIA 5, rtol 1e-8) of the exact values, without it wrong by
// 0.2-4.4. The first step after a re-orthonormalization is then often rejected once (one per interval,
// measured).
//
// Initial basis. The tangent space at (q0, v0) is {(dq, dv) : G dq = 0, Psi_q dq + G dv = 0,
// A_q dq + A dv = 0}. Its basis: the null space of G from the Householder QR of G^T (Mantegazza & Masarati 2012,
// section 1.8, eq. 24: the columns Q2), each completed by the minimal-norm dv that satisfies the velocity rows
// (initial_phase_tangent), and (0, w) for w in the null space of [G; A] (the QR of [G; A]^T); then
// orthonormalized in the metric.
//
// Metric. <(a_q, a_v), (b_q, b_v)> = a_q^T W b_q + a_v^T W b_v with W = M(q) (the default: the
// kinetic-energy metric of the configuration space, so the result does not depend on how the
// coordinates of bodies of different masses are scaled, and the natural metric of a mechanical system)
// or W = I. Only (dq, dv) enter: the multipliers are functions of the state, not coordinates of the
// manifold. Exponents do not depend on the metric when W and W^-1 stay bounded along the trajectory (a
// Lyapunov transformation; Dieci, Russell & Van Vleck 1997): true for M(q) on every bounded
// trajectory of the built-in models; the finite-time estimates differ by O(log cond W / t).
//
// Transient. The first re-orthonormalization at or after t0 + transient starts the averages (its own
// logarithms are discarded): the basis has then aligned with the Oseledets directions and the estimates
// are free of the initial basis' arbitrary contribution O(log ||R(transient)|| / t).
//
// Clone estimate (Benettin, Galgani & Strelcyn 1976, Phys. Rev. A 14, "two nearby trajectories"): a
// second solution is started at distance `separation` (in the metric) from the fiducial one, along its
// current separation direction; every `renormalize` time units log(distance / separation) is
// accumulated and the clone restarted at distance `separation` along the new direction (its consistent
// initialization puts it back on the manifold, the correction being O(separation^2)). It needs no
// derivatives, only the member solver, so it checks the tangents of tangent.hpp independently.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/lyapunov/tangent_radau.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace lockstep {

// The dimension of the constraint manifold: the number of Lyapunov exponents.
template <class Model>
constexpr int manifold_dimension() {
  return 2 * (Model::n - Model::m) - Model::k;
}

enum class tangent_metric : int { mass = 0, euclidean = 1 };

LOCKSTEP_HD constexpr const char* tangent_metric_name(tangent_metric m) {
  return m == tangent_metric::mass ? "mass" : "euclidean";
}

// The metric matrix W at q (see the header).
template <class Model>
LOCKSTEP_HD mat<double, Model::n, Model::n> tangent_metric_matrix(tangent_metric metric, const vec<double, Model::n>& q,
                                                                  const double* p) {
  if (metric == tangent_metric::mass) return Model::template mass<double, double>(q, p);
  return mat<double, Model::n, Model::n>::identity();
}

// <a, b> over the (q, v) parts of two state-layout tangents.
template <class Model>
LOCKSTEP_HD double tangent_inner(const mat<double, Model::n, Model::n>& W, const state_vector<Model>& a,
                                 const state_vector<Model>& b) {
  using L = state_layout<Model>;
  double s = 0.0;
  for (int i = 0; i < Model::n; ++i)
    for (int j = 0; j < Model::n; ++j)
      s += W(i, j) * (a[L::q + i] * b[L::q + j] + a[L::v + i] * b[L::v + j]);
  return s;
}

// An orthonormal basis (Euclidean) of the null space of the R x N matrix B (R <= N, full rank): the
// last N - R columns of Q in the Householder QR of B^T (Mantegazza & Masarati 2012, eq. 24). Returns them as the
// first N - R columns of the result.
template <int N, int R>
LOCKSTEP_HD mat<double, N, N> null_space_basis(const mat<double, R, N>& B) {
  mat<double, N, R> A = transpose(B);
  mat<double, N, N> Q = mat<double, N, N>::identity();
  for (int j = 0; j < R; ++j) {
    double norm2 = 0.0;
    for (int i = j; i < N; ++i) norm2 += A(i, j) * A(i, j);
    const double norm = sqrt(norm2);
    if (norm == 0.0) continue;
    const double alpha = A(j, j) > 0.0 ? -norm : norm;  // no cancellation in v_0 = x_0 - alpha
    double u[N > 0 ? N : 1] = {};
    for (int i = j; i < N; ++i) u[i] = A(i, j);
    u[j] -= alpha;
    double unorm2 = 0.0;
    for (int i = j; i < N; ++i) unorm2 += u[i] * u[i];
    if (unorm2 == 0.0) continue;
    // A <- H A, Q <- Q H with H = I - 2 u u^T / (u^T u).
    for (int c = j; c < R; ++c) {
      double s = 0.0;
      for (int i = j; i < N; ++i) s += u[i] * A(i, c);
      s *= 2.0 / unorm2;
      for (int i = j; i < N; ++i) A(i, c) -= s * u[i];
    }
    for (int r = 0; r < N; ++r) {
      double s = 0.0;
      for (int i = j; i < N; ++i) s += Q(r, i) * u[i];
      s *= 2.0 / unorm2;
      for (int i = j; i < N; ++i) Q(r, i) -= s * u[i];
    }
  }
  mat<double, N, N> out{};
  for (int r = 0; r < N; ++r)
    for (int c = R; c < N; ++c) out(r, c - R) = Q(r, c);
  return out;
}

// Orthonormalizes count state-layout tangents in place by modified Gram-Schmidt, twice ("twice is
// enough": Giraud, Langou & Rozloznik 2005, Comput. Math. Appl. 50), in the metric W; R (upper triangular) with S_old = S_new R.
template <class Model, int Capacity>
LOCKSTEP_HD bool orthonormalize(const mat<double, Model::n, Model::n>& W, state_vector<Model>* S, int count,
                                double (*R)[Capacity]) {
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) R[a][b] = 0.0;
  for (int d = 0; d < count; ++d) {
    for (int pass = 0; pass < 2; ++pass)
      for (int e = 0; e < d; ++e) {
        const double r = tangent_inner<Model>(W, S[e], S[d]);
        R[e][d] += r;
        for (int j = 0; j < state_layout<Model>::size; ++j) S[d][j] -= r * S[e][j];
      }
    const double norm = sqrt(tangent_inner<Model>(W, S[d], S[d]));
    if (!(norm > 0.0) || !is_finite(norm)) return false;
    R[d][d] = norm;
    for (int j = 0; j < state_layout<Model>::size; ++j) S[d][j] /= norm;
  }
  return true;
}

// An orthonormal basis (in the metric) of the tangent space of the manifold at a consistent (t, q, v):
// d = manifold_dimension<Model>() phase vectors (see the header).
template <class Model>
LOCKSTEP_HD_SHARED member_status tangent_space_basis(double t, const vec<double, Model::n>& q,
                                                     const vec<double, Model::n>& v, const double* p,
                                                     tangent_metric metric, phase_vector<Model>* basis) {
  constexpr int n = Model::n, m = Model::m, k = Model::k;
  constexpr int d = manifold_dimension<Model>();
  using L = state_layout<Model>;
  mat<double, n, n> Zq = mat<double, n, n>::identity();
  if constexpr (m > 0) Zq = null_space_basis<n, m>(constraint_jacobian<Model>(t, q, p));
  mat<double, n, n> Zv = mat<double, n, n>::identity();
  if constexpr (m + k > 0) Zv = null_space_basis<n, m + k>(velocity_constraints_at<Model>(t, q, p).C);
  state_vector<Model> S[d > 0 ? d : 1];
  for (int c = 0; c < n - m; ++c) {
    vec<double, n> dq0, dv0{}, dq, dv;
    for (int i = 0; i < n; ++i) dq0[i] = Zq(i, c);
    const member_status s = initial_phase_tangent<Model>(t, q, v, p, projection_metric::euclidean, dq0, dv0, -1, dq, dv);
    if (s != member_status::success) return s;
    S[c] = state_vector<Model>{};
    for (int i = 0; i < n; ++i) {
      S[c][L::q + i] = dq[i];
      S[c][L::v + i] = dv[i];
    }
  }
  for (int c = 0; c < n - m - k; ++c) {
    S[n - m + c] = state_vector<Model>{};
    for (int i = 0; i < n; ++i) S[n - m + c][L::v + i] = Zv(i, c);
  }
  double R[d > 0 ? d : 1][d > 0 ? d : 1];
  if (!orthonormalize<Model, (d > 0 ? d : 1)>(tangent_metric_matrix<Model>(metric, q, p), S, d, R))
    return member_status::singular_matrix;
  for (int c = 0; c < d; ++c)
    for (int i = 0; i < n; ++i) {
      basis[c][i] = S[c][L::q + i];
      basis[c][n + i] = S[c][L::v + i];
    }
  return member_status::success;
}

// The discrete QR step on a tangent member (BDF or Radau): orthonormalizes its current tangents (the
// first `count` directions) in the metric at the current point, applies the same recombination to the
// whole tangent history, and returns log R_ii in log_r. False when the tangents degenerated (zero or
// non-finite).
template <class Member>
LOCKSTEP_HD bool renormalize_tangents(Member& tm, int count, const double* p, tangent_metric metric, double* log_r) {
  using Model = typename Member::model;
  constexpr int Capacity = Member::capacity;
  using L = state_layout<Model>;
  vec<double, Model::n> q;
  for (int i = 0; i < Model::n; ++i) q[i] = member_point(tm)[L::q + i];
  const auto W = tangent_metric_matrix<Model>(metric, q, p);
  state_vector<Model> S[Capacity];
  for (int d = 0; d < count; ++d) S[d] = current_tangents(tm)[d];
  double R[Capacity][Capacity];
  if (!orthonormalize<Model, Capacity>(W, S, count, R)) return false;
  // X = R^-1 (upper triangular, by columns): Q = S_old X.
  double X[Capacity][Capacity] = {};
  for (int c = 0; c < count; ++c) {
    X[c][c] = 1.0 / R[c][c];
    for (int r = c - 1; r >= 0; --r) {
      double s = 0.0;
      for (int j = r + 1; j <= c; ++j) s += R[r][j] * X[j][c];
      X[r][c] = -s / R[r][r];
    }
  }
  recombine_tangents(tm, X, count);
  for (int d = 0; d < count; ++d) log_r[d] = log(R[d][d]);
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Host drivers
// ---------------------------------------------------------------------------------------------------

struct lyapunov_options {
  int exponents = 0;          // p leading exponents; 0: all d = 2 (n - m) - k
  double renormalize = 1.0;   // time units between re-orthonormalizations
  double transient = 0.0;     // time discarded before the averages start
  tangent_metric metric = tangent_metric::mass;
  bool tangent_error_control = true;  // the tangents' local error limits the steps (lyapunov/tangent.hpp)
};

// Why the Lyapunov options cannot be used for this model and interval ("" when they can).
template <class Model>
std::string lyapunov_check_options(const solver_options& opt, const lyapunov_options& lopt, double t0, double t1) {
  if (const char* why = tangent_check_options(opt); why[0] != '\0') return why;
  if (lopt.exponents < 0 || lopt.exponents > manifold_dimension<Model>())
    return "exponents must be between 1 and the manifold dimension 2 (n - m) - k = " +
           std::to_string(manifold_dimension<Model>()) + " (0: all)";
  if (!(lopt.renormalize > 0.0)) return "renormalize must be positive";
  if (!(lopt.transient >= 0.0) || !(lopt.transient < t1 - t0)) return "transient must be in [0, t1 - t0)";
  return "";
}

// Why a member whose constraint rows the solver drops (formulation/constraint_rank.hpp) gets no
// exponents ("" when it drops none): the tangent space, its basis and its dimension 2 (n - m) - k
// assume independent constraints; with r rows dropped the manifold has dimension 2 (n - m + r) - k
// and the basis of the independent rows is not built yet. Refused, not approximated.
inline std::string redundant_constraints_refusal(std::uint64_t dropped) {
  if (dropped == 0) return "";
  std::string rows;
  for (int i = 0; i < constraint_rank_max_rows; ++i)
    if (row_dropped(dropped, i)) rows += (rows.empty() ? "" : ", ") + std::to_string(i);
  return "Lyapunov exponents need independent constraints, and the solver drops the redundant rows " + rows +
         " of [G; A] at the initial point (docs/CONSTRAINT-RANK.md): state the model without them";
}

template <class Model>
struct lyapunov_result {
  member_status status = member_status::running;
  std::string message;                       // why the options were refused (status invalid_input)
  int dimension = manifold_dimension<Model>();
  std::vector<double> exponents;             // p leading exponents, decreasing
  std::vector<double> history_t;             // times of the re-orthonormalizations that count
  std::vector<std::vector<double>> history;  // the running estimates (L1) at those times
  double t_start = 0.0;                      // where the averages started (after the transient)
  double t_final = 0.0;
  // The time the exponents average over: from t_start to the last re-orthonormalization that counts
  // (t1 - t_start after a full run; less when a run that stopped at max_steps reports its estimate).
  double averaged_over = 0.0;
  long renormalizations = 0;
  member_counters counters;
  long tangent_factorizations = 0;
  long tangent_rejections = 0;  // steps rejected by the tangents' error test
};

// The p leading Lyapunov exponents of one member on [t0, t1] (see the header). Methods: every_method,
// or the one method it is compiled for (method/methods.hpp, visit_method_in).
template <class Model, class Methods = every_method>
lyapunov_result<Model> lyapunov_spectrum(const double* params, const vec<double, Model::n>& q0,
                                         const vec<double, Model::n>& v0, double t0, double t1,
                                         const solver_options& opt, const lyapunov_options& lopt) {
  static_assert(lockstep_check_model<Model>());
  constexpr int d_max = manifold_dimension<Model>() > 0 ? manifold_dimension<Model>() : 1;
  lyapunov_result<Model> out;
  out.message = lyapunov_check_options<Model>(opt, lopt, t0, t1);
  if (out.message.empty()) out.message = methods_refusal<Methods>(opt.method);
  if (!out.message.empty()) {
    out.status = member_status::invalid_input;
    return out;
  }
  const int p = lopt.exponents == 0 ? manifold_dimension<Model>() : lopt.exponents;

  // The basis is taken at the consistent initial point, which the member's initialization computes.
  initial_values<Model> init;
  member_counters scratch;
  member_status st = consistent_initialization<Model>(t0, q0, v0, params, opt, init, scratch);
  if (st == member_status::success && init.dropped != 0) {
    out.status = member_status::invalid_input;
    out.message = redundant_constraints_refusal(init.dropped);
    return out;
  }
  phase_vector<Model> basis[d_max];
  if (st == member_status::success) st = tangent_space_basis<Model>(t0, init.q, init.v, params, lopt.metric, basis);
  if (st != member_status::success) {
    out.status = st;
    return out;
  }
  std::vector<double> sums(p, 0.0);
  double t_start = t0;
  visit_tangent_member<Model, d_max, Methods>(opt.method, [&]<class Member>() {
    auto tm = std::make_unique<Member>();  // plain data, large for big models: on the heap
    tangent_member_begin(*tm, t0, t1, q0, v0, params, opt, basis, p, nullptr, 0, lopt.tangent_error_control);
    double log_r[d_max];
    bool started = lopt.transient <= 0.0;
    double next = t0 + lopt.renormalize;
    while (tm->status == member_status::running && member_time(*tm) < t1) {
      if (tm->attempts++ >= opt.max_steps) {
        tm->status = member_status::max_steps;
        break;
      }
      const attempt_result r = tangent_member_attempt(*tm, t1, params, opt);
      if (r != attempt_result::accepted) continue;
      const double t = member_time(*tm);
      if (t < next && t < t1) continue;
      if (!renormalize_tangents(*tm, p, params, lopt.metric, log_r)) {
        tm->status = member_status::model_not_finite;
        break;
      }
      ++out.renormalizations;
      while (next <= t) next += lopt.renormalize;
      if (!started) {
        if (t >= t0 + lopt.transient) {
          started = true;
          t_start = t;
        }
        continue;
      }
      if (!(t > t_start)) continue;
      std::vector<double> estimate(p);
      for (int i = 0; i < p; ++i) {
        sums[i] += log_r[i];
        estimate[i] = sums[i] / (t - t_start);
      }
      out.history_t.push_back(t);
      out.history.push_back(estimate);
    }
    out.status = tm->status == member_status::running ? member_status::success : tm->status;
    out.counters = tm->counters;
    out.tangent_factorizations = tm->tangent_factorizations;
    out.tangent_rejections = tm->tangent_rejections;
    out.t_final = member_time(*tm);
  });
  out.t_start = t_start;
  if (!out.history.empty()) out.averaged_over = out.history_t.back() - t_start;
  if (out.status == member_status::success) {
    if (out.history.empty()) {
      out.status = member_status::invalid_input;
      out.message = "no re-orthonormalization after the transient: shorten transient or renormalize";
    } else {
      out.exponents = out.history.back();
    }
  } else if (out.status == member_status::max_steps) {
    // A run that ran out of steps keeps its status, and reports the estimate it reached and the time
    // that estimate covers rather than nothing: with exponents that converge like 1 / T, a partial
    // average is worth having, and the message says how far it got and how to go further.
    char text[480];
    const double reached = out.t_final - t0;
    const double needed = reached > 0.0 ? static_cast<double>(opt.max_steps) * (t1 - t0) / reached : 0.0;
    if (!out.history.empty()) {
      out.exponents = out.history.back();
      std::snprintf(text, sizeof text,
                    "max_steps = %ld step attempts ran out at t = %.9g of [%.9g, %.9g]: the exponents are the "
                    "running estimate over [%.9g, %.9g] (%.9g time units of the %.9g after the transient); raise "
                    "max_steps ([solver] max_steps in a study) to about %.3g or more to reach t1",
                    opt.max_steps, out.t_final, t0, t1, t_start, out.history_t.back(), out.averaged_over,
                    t1 - t_start, needed);
    } else {
      std::snprintf(text, sizeof text,
                    "max_steps = %ld step attempts ran out at t = %.9g of [%.9g, %.9g], before any estimate after "
                    "the transient; raise max_steps ([solver] max_steps in a study) to about %.3g or more to reach t1",
                    opt.max_steps, out.t_final, t0, t1, needed);
    }
    out.message = text;
  }
  return out;
}

struct clone_result {
  member_status status = member_status::running;
  std::string message;
  double exponent = 0.0;       // the largest exponent's estimate
  std::vector<double> history_t;
  std::vector<double> history;  // running estimates after each interval that counts
  long intervals = 0;
};

// The two-trajectory estimate of the largest exponent (see the header): the fiducial member is solved
// once with saves at t0 + i renormalize (dense output, so its steps are those of an unsaved solve),
// the clone afresh over each interval. `separation` in the metric: small enough for the linear regime
// (separation e^(lambda_1 renormalize) << the state's size), large enough that the solver's error
// (~ rtol |y|) is negligible against it. Methods: as lyapunov_spectrum's.
template <class Model, class Methods = every_method>
clone_result clone_largest_exponent(const double* params, const vec<double, Model::n>& q0,
                                    const vec<double, Model::n>& v0, double t0, double t1, const solver_options& opt,
                                    const lyapunov_options& lopt, double separation = 1e-6) {
  using L = state_layout<Model>;
  constexpr int n = Model::n;
  constexpr int d_max = manifold_dimension<Model>() > 0 ? manifold_dimension<Model>() : 1;
  clone_result out;
  if (!(lopt.renormalize > 0.0) || !(lopt.transient >= 0.0) || !(lopt.transient < t1 - t0) || !(separation > 0.0)) {
    out.status = member_status::invalid_input;
    out.message = "renormalize and separation must be positive and transient in [0, t1 - t0)";
    return out;
  }
  std::vector<double> grid;
  for (long i = 0;; ++i) {
    const double t = t0 + static_cast<double>(i) * lopt.renormalize;
    if (!(t < t1)) break;
    grid.push_back(t);
  }
  grid.push_back(t1);
  const member_result<Model> fiducial = solve_member<Model, Methods>(params, q0, v0, t0, t1, opt, grid);
  if (fiducial.counters.dropped_rows != 0) {
    out.status = member_status::invalid_input;
    out.message = redundant_constraints_refusal(static_cast<std::uint64_t>(fiducial.counters.dropped_rows));
    return out;
  }
  if (fiducial.status != member_status::success || fiducial.y.size() != grid.size()) {
    out.status = fiducial.status == member_status::success ? member_status::invalid_input : fiducial.status;
    out.message = fiducial.message;
    return out;
  }
  auto phase_of = [](const state_vector<Model>& y, vec<double, n>& q, vec<double, n>& v) {
    for (int i = 0; i < n; ++i) {
      q[i] = y[L::q + i];
      v[i] = y[L::v + i];
    }
  };
  auto norm_at = [&](const vec<double, n>& q, const vec<double, n>& dq, const vec<double, n>& dv) {
    const auto W = tangent_metric_matrix<Model>(lopt.metric, q, params);
    return std::sqrt(dot(dq, W * dq) + dot(dv, W * dv));
  };
  // The first direction: the first vector of the tangent basis at the start.
  vec<double, n> uq, uv, q, v;
  {
    phase_vector<Model> basis[d_max];
    phase_of(fiducial.y[0], q, v);
    const member_status st = tangent_space_basis<Model>(t0, q, v, params, lopt.metric, basis);
    if (st != member_status::success) {
      out.status = st;
      return out;
    }
    for (int i = 0; i < n; ++i) {
      uq[i] = basis[0][i];
      uv[i] = basis[0][n + i];
    }
  }
  double sum = 0.0, t_start = t0;
  bool started = lopt.transient <= 0.0;
  for (std::size_t i = 0; i + 1 < grid.size(); ++i) {
    phase_of(fiducial.y[i], q, v);
    // The clone's start, put on the manifold by consistent initialization (a correction of
    // O(separation^2)); the distance it actually starts at is measured after it.
    initial_values<Model> start;
    member_counters scratch;
    const member_status si =
        consistent_initialization<Model>(grid[i], q + separation * uq, v + separation * uv, params, opt, start, scratch);
    if (si != member_status::success) {
      out.status = si;
      return out;
    }
    const member_result<Model> clone =
        solve_member<Model, Methods>(params, start.q, start.v, grid[i], grid[i + 1], opt, {grid[i + 1]});
    if (clone.status != member_status::success || clone.y.empty()) {
      out.status = clone.status == member_status::success ? member_status::invalid_input : clone.status;
      out.message = clone.message;
      return out;
    }
    const double d0 = norm_at(q, start.q - q, start.v - v);
    vec<double, n> q1, v1, qc1, vc1;
    phase_of(fiducial.y[i + 1], q1, v1);
    phase_of(clone.y.back(), qc1, vc1);
    const vec<double, n> dq = qc1 - q1, dv = vc1 - v1;
    const double d1 = norm_at(q1, dq, dv);
    if (!(d1 > 0.0) || !(d0 > 0.0) || !std::isfinite(d1)) {
      out.status = member_status::model_not_finite;
      return out;
    }
    uq = (1.0 / d1) * dq;
    uv = (1.0 / d1) * dv;
    ++out.intervals;
    const double t = grid[i + 1];
    if (!started) {
      if (t >= t0 + lopt.transient) {
        started = true;
        t_start = t;
      }
      continue;
    }
    sum += log(d1 / d0);  // lockstep::log (core/math.hpp), as the QR estimate above
    out.history_t.push_back(t);
    out.history.push_back(sum / (t - t_start));
  }
  out.status = out.history.empty() ? member_status::invalid_input : member_status::success;
  if (out.history.empty()) out.message = "no interval after the transient";
  else out.exponent = out.history.back();
  return out;
}

}  // namespace lockstep
