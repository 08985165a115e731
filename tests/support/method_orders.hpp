// tests/support/method_orders.hpp — the fixed-step order table of docs/METHODS.md: for every
// (method, formulation, projection) combination the library accepts, the observed global orders of q, v
// and lambda on the pendulum and of q on the knife edge, beside the orders the literature proves.
//
// One header for the generator (bench/method_orders.cpp, which writes docs/METHODS.md) and the test that
// asserts the table (tests/method/method_orders_test.cpp): both call `measure_row` on the rows of
// `order_table`, so the document and the assertions cannot drift apart. The test reads nothing from the
// .md; it recomputes.
//
// Measurement. Fixed steps h = 1 / N on [0, 1] (`fixed_h`), the library's own member stepper
// (member_begin / member_advance of stepper/member.hpp, so the projection after each accepted step is the
// library's), errors at t = 1 in the max norm:
//   - pendulum (theta0 = 1, m = L = 1, g = 9.81) against the extrapolated long-double reference of
//     tests/support/reference.hpp (truncation and round-off far below 1e-14), q, v and the method's own
//     multiplier lambda (consistent_multipliers = false: recomputing lambda from (q, v) would hide its
//     order);
//   - knife edge (tau = 0, theta0 = 0, spinning at omega0 = 2 with u0 = 0 from the origin: one non-holonomic constraint,
//     no holonomic one) against its exact solution x = G sin^2(w t) / (2 w^2),
//     y = G (w t - sin(w t) cos(w t)) / (2 w^2), theta = w t, G = g sin(alpha),
//     q only.
// Newton is converged far below the discretization error (error weights 1e-12, newton_tol 1e-4, up to
// 30 iterations), as tests/method/method_test_support.hpp does. The observed order is the least-squares
// slope of log(error) against log(h) over the N of the row, chosen in the asymptotic range and with
// every error at least 1e3 ulps above round-off.
//
// Starting values. The convergence theorems for k-step BDF assume k + 1 starting values accurate to
// O(h^(k+1)) (Brenan, Campbell & Petzold 1996, ch. 3; Ascher & Petzold 1998, 10.1.2). The library's own start raises
// the order one step at a time from t0, whose first (order-1) step alone contributes an O(h^2) error, so
// for BDF of fixed order k >= 2 the k + 1 points at t = 0, h, ..., k h are taken from the exact solution
// (multipliers from the index-1 system of method/initialize.hpp, mu = 0) and the member continues from
// there with bdf_start_from_points (as tests/method/bdf_test.cpp's FixedStepOrder does). Every other
// method starts from the exact point at t = 0 alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/member.hpp"
#include "lockstep/stepper/solve_member.hpp"
#include "reference.hpp"

namespace lockstep::orders {

// A method with its parameter: BDF's fixed order, rho_inf's spectral radius.
struct method_variant {
  method_kind kind = method_kind::radau5;
  int bdf_order = 0;     // BDF only
  double rho_inf = 0.6;  // rhoinf only
};

inline std::string variant_name(const method_variant& m) {
  std::string s = method_name(m.kind);
  if (m.kind == method_kind::bdf) s += " k=" + std::to_string(m.bdf_order);
  if (m.kind == method_kind::rhoinf) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " rho=%g", m.rho_inf);
    s += buf;
  }
  return s;
}

// The orders the literature proves, and where.
struct theory {
  double q = 0, v = 0, lambda = 0, knife_q = 0;
  std::string citation;
};

// One row of the table: the combination, the step counts N (h = 1 / N) of its fits, the orders asserted
// (the theory's, or a justified measured value where a note says why they differ) and the citation.
struct order_row {
  method_variant method;
  formulation form = formulation::index3;
  projection_kind projection = projection_kind::none;
  std::vector<int> pendulum_steps, knife_steps;
  theory proved;    // what the cited theorems give
  theory expected;  // what the test asserts: `proved`, or a justified value where `note` names why
  std::string note;  // empty when the asserted orders are the theory's
  // index3 with a projection: the asserted slope of the largest velocity correction (the velocity-
  // constraint residual the projection removes, O(h^pv)); NaN elsewhere (corrections at round-off)
  double projection_v = std::numeric_limits<double>::quiet_NaN();

  solver_options options() const {
    solver_options opt;
    opt.method = method.kind;
    opt.form = form;
    opt.projection = projection;
    opt.rho_inf = method.rho_inf;
    opt.fixed_order = method.kind == method_kind::bdf ? method.bdf_order : 1;
    return opt;
  }
  std::string name() const {
    return variant_name(method) + " / " + formulation_name(form) + " / " + projection_name(projection);
  }
};

// ---- the exact solutions --------------------------------------------------------------------------

struct pendulum_problem {
  using Model = models::pendulum;
  static constexpr double params[3] = {1.0, 1.0, 9.81};
  static void exact(double t, vec<double, 2>& q, vec<double, 2>& v, double& lambda) {
    const auto pt = test::reference::pendulum({}, 1.0, 0.0, {t}).back();
    for (int j = 0; j < 2; ++j) {
      q[j] = pt.q[j];
      v[j] = pt.v[j];
    }
    lambda = pt.lambda;
  }
};

struct knife_edge_problem {
  using Model = models::knife_edge;
  static constexpr double params[5] = {1.0, 0.1, 9.81, 0.3, 0.0};  // m, I, g, alpha, tau = 0
  static constexpr double omega = 2.0;
  static void exact(double t, vec<double, 3>& q, vec<double, 3>& v, double& lambda) {
    const double G = params[2] * std::sin(params[3]), w = omega, s = std::sin(w * t), c = std::cos(w * t);
    q = vec<double, 3>{G / (2 * w * w) * s * s, G / (2 * w * w) * (w * t - s * c), w * t};
    v = vec<double, 3>{G / w * s * c, G / w * s * s, w};
    lambda = 0.0;
  }
};

// ---- one fixed-step run ---------------------------------------------------------------------------

struct run_result {
  member_status status = member_status::running;
  double err_q = 0, err_v = 0, err_lambda = 0;
  double projection_v = 0;  // largest velocity correction of a projection (member_counters)
};

template <class Problem>
run_result fixed_step_run(solver_options opt, int steps) {
  using Model = typename Problem::Model;
  using L = state_layout<Model>;
  const double* p = Problem::params;
  constexpr double t1 = 1.0;
  const double h = t1 / steps;
  opt.fixed_h = h;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-12;
  opt.newton_tol = 1e-4;
  opt.newton_max_iterations = 30;
  opt.consistent_multipliers = false;

  vec<double, Model::n> q0, v0;
  double lambda0;
  Problem::exact(0.0, q0, v0, lambda0);
  // Errors at the step points t = 1/4, 1/2, 3/4, 1 (N is a multiple of 4): the max over four times is
  // not fooled by an error component that happens to cross zero near t = 1.
  vec<double, Model::n> q_ref[4], v_ref[4];
  double lambda_ref[4];
  for (int i = 0; i < 4; ++i) Problem::exact(0.25 * (i + 1), q_ref[i], v_ref[i], lambda_ref[i]);
  run_result out;
  int checked = 0;
  visit_method(opt.method, [&]<class Method>() {
    member_state<Model, Method> ms;
    auto sink = [](int, double, const state_vector<Model>&) {};
    member_begin<Model>(ms, 0.0, t1, q0, v0, p, opt, nullptr, 0, sink);
    if constexpr (std::is_same_v<Method, bdf_method>) {
      const int k = opt.fixed_order;
      if (ms.status == member_status::running && k > 1) {
        // k + 1 exact starting points, newest first (see the header).
        double t[bdf_max_order + 1];
        state_vector<Model> y[bdf_max_order + 1];
        for (int j = 0; j <= k; ++j) {
          const double tj = (k - j) * h;
          vec<double, Model::n> q, v, a;
          vec<double, Model::m> lambda;
          vec<double, Model::k> nu;
          double unused;
          Problem::exact(tj, q, v, unused);
          accelerations_and_multipliers<Model>(tj, q, v, p, a, lambda, nu);
          t[j] = tj;
          y[j] = state_vector<Model>{};
          for (int i = 0; i < Model::n; ++i) {
            y[j][L::q + i] = q[i];
            y[j][L::v + i] = v[i];
          }
          for (int i = 0; i < Model::m; ++i) y[j][L::lambda + i] = lambda[i];
          for (int i = 0; i < Model::k; ++i) y[j][L::nu + i] = nu[i];
        }
        bdf_start_from_points(ms.method, k + 1, t, y, h, k);
      }
    }
    // One attempt at a time (fixed steps: every attempt is accepted or fails the member).
    while (!member_advance<Model>(ms, 1, t1, p, opt, nullptr, 0, sink)) {
      const double t = Method::time(ms.method);
      if (checked < 4 && std::abs(t - 0.25 * (checked + 1)) < 1e-9) {
        const state_vector<Model>& y = Method::current(ms.method);
        for (int i = 0; i < Model::n; ++i) {
          out.err_q = std::max(out.err_q, std::abs(y[L::q + i] - q_ref[checked][i]));
          out.err_v = std::max(out.err_v, std::abs(y[L::v + i] - v_ref[checked][i]));
        }
        if constexpr (Model::m > 0) out.err_lambda = std::max(out.err_lambda, std::abs(y[L::lambda] - lambda_ref[checked]));
        ++checked;
      }
    }
    out.status = ms.status;
    out.projection_v = ms.counters.max_projection_v;
    if (out.status == member_status::success && checked == 3 && std::abs(Method::time(ms.method) - t1) < 1e-12) {
      const state_vector<Model>& y = Method::current(ms.method);  // t1 itself ends the loop above
      for (int i = 0; i < Model::n; ++i) {
        out.err_q = std::max(out.err_q, std::abs(y[L::q + i] - q_ref[3][i]));
        out.err_v = std::max(out.err_v, std::abs(y[L::v + i] - v_ref[3][i]));
      }
      if constexpr (Model::m > 0) out.err_lambda = std::max(out.err_lambda, std::abs(y[L::lambda] - lambda_ref[3]));
      ++checked;
    }
  });
  if (out.status == member_status::success && checked != 4) out.status = member_status::invalid_input;  // missed a time
  if (out.status != member_status::success)
    out.err_q = out.err_v = out.err_lambda = std::numeric_limits<double>::quiet_NaN();
  return out;
}

// ---- one adaptive run ----------------------------------------------------------------------------

// The "Adaptive steps" table of docs/METHODS.md (and tests/method/rhoinf_test.cpp's comparison of the
// formulations): the method, formulation (and rho_inf) of `opt` with error control at rtol = atol = tol
// over [0, 1] from the exact start, no projection; accepted and rejected steps and the max error of q
// at t = 1 against the exact solution.
struct adaptive_result {
  member_status status = member_status::running;
  long steps = 0, rejected = 0;
  double err_q = 0;
};

template <class Problem>
adaptive_result adaptive_run(solver_options opt, double tol = 1e-6) {
  using Model = typename Problem::Model;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  vec<double, Model::n> q0, v0, q1, v1;
  double l0, l1;
  Problem::exact(0.0, q0, v0, l0);
  Problem::exact(1.0, q1, v1, l1);
  const auto r = solve_member<Model>(Problem::params, q0, v0, 0.0, 1.0, opt, {1.0});
  adaptive_result out;
  out.status = r.status;
  out.steps = r.counters.steps;
  out.rejected = r.counters.rejected_steps;
  if (r.status == member_status::success)
    for (int i = 0; i < Model::n; ++i) out.err_q = std::max(out.err_q, std::abs(r.q(0, i) - q1[i]));
  return out;
}

// Least-squares slope of log(error) against log(h), h = 1 / steps (NaN when a run failed).
inline double fitted_order(const std::vector<int>& steps, const std::vector<double>& errors) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double x = std::log(1.0 / steps[i]), y = std::log(errors[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

struct row_measurement {
  std::vector<double> err_q, err_v, err_lambda, knife_err_q, projection_v;
  double q = 0, v = 0, lambda = 0, knife_q = 0;  // fitted orders
  double projection_v_order = 0;  // of the largest velocity correction (pendulum)
  bool all_succeeded = true;
  std::string failure;  // the first failed run, if any
};

inline row_measurement measure_row(const order_row& row) {
  row_measurement m;
  const solver_options opt = row.options();
  auto note_failure = [&m](const run_result& r, const char* problem, int n) {
    if (r.status == member_status::success || !m.all_succeeded) return;
    m.all_succeeded = false;
    m.failure = std::string(problem) + " N = " + std::to_string(n) + ": " + status_name(r.status);
  };
  for (int n : row.pendulum_steps) {
    const run_result r = fixed_step_run<pendulum_problem>(opt, n);
    note_failure(r, "pendulum", n);
    m.err_q.push_back(r.err_q);
    m.err_v.push_back(r.err_v);
    m.err_lambda.push_back(r.err_lambda);
    m.projection_v.push_back(r.projection_v);
  }
  for (int n : row.knife_steps) {
    const run_result r = fixed_step_run<knife_edge_problem>(opt, n);
    note_failure(r, "knife edge", n);
    m.knife_err_q.push_back(r.err_q);
  }
  m.q = fitted_order(row.pendulum_steps, m.err_q);
  m.v = fitted_order(row.pendulum_steps, m.err_v);
  m.lambda = fitted_order(row.pendulum_steps, m.err_lambda);
  m.knife_q = fitted_order(row.knife_steps, m.knife_err_q);
  m.projection_v_order = fitted_order(row.pendulum_steps, m.projection_v);
  return m;
}

// ---- the theory -----------------------------------------------------------------------------------

// Citation keys of the table; the references behind them (docs/METHODS.md lists them).
struct citation {
  const char* key;
  const char* text;
};

inline const std::vector<citation>& citations() {
  static const std::vector<citation> list = {
      {"HLR3",
       "Hairer, Lubich & Roche, *The Numerical Solution of Differential-Algebraic Systems by Runge-Kutta Methods*, "
       "LNM 1409 (1989), convergence on Hessenberg index 3 (summarized in Hairer & Wanner II, ch. VII): Radau IIA with s >= 2 "
       "stages, errors O(h^(2s-1)) in y = q, O(h^s) in z = v, O(h^(s-1)) in u = lambda."},
      {"HLR2",
       "Hairer, Lubich & Roche 1989, convergence on Hessenberg index 2 (also Hairer & Wanner II, VII.4): Radau IIA, "
       "O(h^(2s-1)) in the differential variables y (here q and v; on the knife edge q), O(h^s) in the algebraic z "
       "(lambda and mu on ggl)."},
      {"BDF3",
       "Lotstedt & Petzold, Math. Comp. 46 (1986); Brenan & Engquist, Math. Comp. 51 (1988); Brenan, Campbell & "
       "Petzold, *Numerical Solution of IVPs in DAEs* (1996), ch. 3: k-step BDF, k < 7, with constant steps on "
       "Hessenberg index 3 converges with O(h^k) in every component after k + 1 steps, given starting values "
       "accurate to O(h^(k+1)). Backward Euler is BDF 1."},
      {"BDF2",
       "Brenan, Campbell & Petzold 1996, ch. 3 (Ascher & Petzold 1998, 10.1.2): k-step BDF, k < 7, with constant steps on index "
       "1 and on Hessenberg index 2: O(h^k) in every component. Backward Euler is BDF 1."},
      {"ODE1",
       "Index 1 (Ascher & Petzold 1998, 10.1; Hairer & Wanner II, VI.1): lambda = lambda(q, v), the method is the ODE method on "
       "the underlying ODE, and a stiffly accurate method (Radau IIA, BDF, the rho_inf method) has its ODE order "
       "p in every component (Radau IIA: 2s - 1)."},
      {"RHO",
       "Mantegazza & Masarati 2012, eqs. 74-77 (Masarati, Lanz & Mantegazza 2001): second order for every rho_inf in [0, 1]; on index "
       "1 and Hessenberg index 2 a linear multistep method needs extra DAE order conditions only above order 2 "
       "(Ascher & Petzold 1998, 10.1.2), so it keeps order 2 in every component."},
      {"RHO3",
       "Mantegazza & Masarati 2012, eqs. 74-77 on index 3: a multistep method whose roots at infinity (-rho_inf, double) lie strictly "
       "inside the unit circle keeps its order in every component (Hairer & Wanner II, VII.3; Arnold & Bruls, "
       "Multibody Syst. Dyn. 18 (2007), for the related generalized-alpha method); rho_inf = 1 is refused there."},
      {"PI",
       "Ascher & Petzold, SIAM J. Sci. Comput. 14 (1993), eq. 4.14: Hessenberg index 2 in (q, mu), "
       "index 1 in lambda, followed by the velocity projection of its section 5: the method's ODE order p in "
       "every component (HLR2 and ODE1 for the parts, PROJ for the velocity projection)."},
      {"ERK1",
       "An explicit Runge-Kutta method of order p on the index-1 equations is that method on the ODE q' = v, v' = "
       "a(t, q, v), the accelerations from the saddle-point system at every stage (Hairer & Wanner II, VII.1): "
       "O(h^p) in q and v (Hairer, Norsett & Wanner I, II.3), and in lambda = lambda(t, q, v) of the end point's "
       "system. Dormand & Prince 1980 and Tsitouras 2011: p = 5."},
      {"PROJ",
       "Projection after every step keeps the method's order p (Ascher & Petzold 1998, 10.2: \"stabilization does not change "
       "the method's order of convergence\"; Ascher, Chin & Reich, Numer. Math. 67 (1994); Hairer & Wanner II, "
       "VII.2)."},
  };
  return list;
}

// The orders proved for the method on the formulation without projection. The knife edge has no
// holonomic constraint: it is Hessenberg index 2 in (v, nu) on index3 and ggl and index 1 on index1 and
// projected invariants, so its q has the method's ODE order p everywhere (HLR2 / BDF2 / RHO, ODE1).
inline theory theory_of(const method_variant& m, formulation f) {
  const bool radau = m.kind == method_kind::radau5 || m.kind == method_kind::radau3 || m.kind == method_kind::euler;
  const int s = m.kind == method_kind::radau5 ? 3 : (m.kind == method_kind::radau3 ? 2 : 1);
  const double p = radau ? 2 * s - 1 : (m.kind == method_kind::bdf ? m.bdf_order : is_explicit_pair(m.kind) ? 5 : 2);
  const bool euler_like = m.kind == method_kind::euler || m.kind == method_kind::bdf;
  theory t;
  t.knife_q = p;
  if (f == formulation::index3) {
    if (radau && s >= 2) t = {p, double(s), double(s - 1), p, "HLR3, HLR2 (knife)"};
    else if (euler_like) t = {p, p, p, p, "BDF3, BDF2 (knife)"};
    else t = {2, 2, 2, 2, "RHO3, RHO (knife)"};
  } else if (f == formulation::ggl) {
    if (radau && s >= 2) t = {p, p, double(s), p, "HLR2"};
    else if (euler_like) t = {p, p, p, p, "BDF2"};
    else t = {2, 2, 2, 2, "RHO"};
  } else if (f == formulation::index1) {
    t = {p, p, p, p, m.kind == method_kind::rhoinf ? "ODE1, RHO" : is_explicit_pair(m.kind) ? "ERK1" : "ODE1"};
  } else {
    t = {p, p, p, p, m.kind == method_kind::rhoinf ? "PI, RHO" : "PI"};
  }
  return t;
}

// ---- the table ------------------------------------------------------------------------------------

// Fit ranges (N, h = 1 / N, multiples of 4): in the asymptotic range and above round-off. Index 3 has
// Newton matrices with condition ~ h^-3 (Ascher & Petzold 1998, ch. 10): BDF there stops short of the N that ggl
// reaches (k = 1 met newton_failure at N = 800, k = 4 and 5 at N = 640 with the tight Newton test).
inline std::vector<int> pendulum_steps_of(const method_variant& m, formulation f) {
  const bool index3 = f == formulation::index3;
  switch (m.kind) {
    case method_kind::radau5: return {20, 40, 80};
    case method_kind::dopri5: return {32, 64, 128};
    case method_kind::tsit5: return {48, 96, 192};
    case method_kind::automatic: break;  // adaptive only: its phases' orders are dopri5's and radau5's
    case method_kind::radau3: return {40, 80, 160, 320};
    case method_kind::euler: return {320, 640, 1280, 2560};
    case method_kind::rhoinf:
      // the parasitic mode -rho_inf decays like rho_inf^n: rho_inf = 0.9 needs n >~ 100 before the
      // multipliers are asymptotic (tests/method/rhoinf_test.cpp: N = 320..1280)
      if (m.rho_inf > 0.8 && m.rho_inf < 1.0) return {160, 320, 640, 1280};
      return {40, 80, 160, 320};
    case method_kind::bdf:
      if (m.bdf_order == 1) return index3 ? std::vector<int>{100, 200, 400} : std::vector<int>{400, 800, 1600, 3200};
      if (m.bdf_order == 2) return index3 ? std::vector<int>{160, 320, 640} : std::vector<int>{80, 160, 320};
      if (m.bdf_order == 3) return {80, 160, 320};
      return index3 ? std::vector<int>{80, 160, 320} : std::vector<int>{160, 320, 640};
  }
  return {};
}

inline std::vector<int> knife_steps_of(const method_variant& m) {
  switch (m.kind) {
    case method_kind::radau5: return {16, 32, 64};  // N = 8: newton_failure (h = 1/8 too long for Newton)
    case method_kind::dopri5: return {16, 32, 64};
    case method_kind::tsit5: return {16, 32, 64};
    case method_kind::automatic: break;  // adaptive only
    case method_kind::radau3: return {20, 40, 80, 160};
    case method_kind::euler: return {320, 640, 1280, 2560};
    case method_kind::rhoinf: return {40, 80, 160, 320};
    case method_kind::bdf: return m.bdf_order == 1 ? std::vector<int>{400, 800, 1600, 3200} : std::vector<int>{40, 80, 160, 320};
  }
  return {};
}

inline std::vector<method_variant> method_variants() {
  return {{method_kind::radau5}, {method_kind::radau3},    {method_kind::euler},
          {method_kind::bdf, 1}, {method_kind::bdf, 2},    {method_kind::bdf, 3},
          {method_kind::bdf, 4}, {method_kind::bdf, 5},    {method_kind::rhoinf, 0, 0.0},
          {method_kind::rhoinf, 0, 0.6}, {method_kind::rhoinf, 0, 0.9}, {method_kind::rhoinf, 0, 1.0},
          {method_kind::dopri5}, {method_kind::tsit5}};
}

inline std::vector<formulation> formulations() {
  return {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants};
}

inline std::vector<projection_kind> projections() {
  return {projection_kind::none, projection_kind::coordinate, projection_kind::post_stabilization};
}

// Projection after index-3 steps: what the measurements show and why (docs/METHODS.md, "Projection
// after index-3 steps"). The index-3 form imposes Phi = 0 but not G v + Phi_t = 0, so the method's v
// leaves the velocity manifold by its own global error, O(h^pv) (pv = s for Radau IIA, k for BDF, 2
// for rho_inf), and every projection moves v by that much (measured: the largest correction has slope
// pv). Two consequences:
//   - v: the removed part is the normal component of the error. For Radau IIA the O(h^s) term is
//     normal (q itself is O(h^(2s-1)) accurate on the manifold), so the projected v is measured at
//     2s - 1 (s = 2: 3.00, s = 3: 5.00); for the other methods v already had q's order.
//   - lambda: the projection leaves the method's own multiplier alone, but the next step starts from
//     the moved v, and every index-3 discretization obtains lambda from a difference quotient of v (the
//     dynamic row M (v_{n+1} - sum v_past) / (h b0) = Q - G^T lambda): an O(h^pv) jump in the starting
//     v becomes an O(h^(pv - 1)) error in lambda. Its order is min(theory, pv - 1): backward Euler and
//     BDF 1 (pv = 1) lose convergence of lambda altogether (order 0: the error tends to a constant),
//     BDF k keeps k - 1, rho_inf 1, Radau IIA its s - 1.
// The consistent multipliers the library reports by default (consistent_multipliers = true) are
// recomputed from (q, v) and are not affected.
inline void index3_projection_orders(order_row& row) {
  const method_kind k = row.method.kind;
  const bool radau = k == method_kind::radau5 || k == method_kind::radau3;
  const double pv = row.expected.v;
  row.projection_v = pv;
  if (radau) row.expected.v = row.expected.q;
  row.expected.lambda = std::min(row.expected.lambda, pv - 1);
  row.note = radau ? "v-raised" : "lambda-reduced";
}

// Tsitouras' pair (method/dopri5.hpp) is of order 5, but its fifth-order error terms are small by
// design: its stability polynomial's z^6 coefficient is 1.031 / 6! against e^z's 1 / 6! (Dormand &
// Prince's: 1.2 / 6!), and the order conditions of order 6 it leaves unmet are nearly met. So over the
// N at which the errors stay above round-off, the sixth-order terms still raise the slopes on these
// smooth problems: the knife edge (linear in its velocities) is measured at 6.0-6.1, the unprojected
// pendulum at 5.5-5.8 (the projected one at 4.9-5.3, the theory's 5). Asserted: those slopes, with
// note "small-constants"; tests/method/dopri5_test.cpp shows the pendulum's q and v tending to 5
// from above as N grows, and the order conditions hold to round-off.
inline void tsit5_measured_orders(order_row& row) {
  row.expected.knife_q = 6.0;
  if (row.projection == projection_kind::none) {
    row.expected.q = row.expected.v = 5.5;
    row.expected.lambda = 5.7;
  }
  row.note = "small-constants";
}

// Every combination check_method_options accepts with fixed steps (the refused ones are listed by
// `refused_combinations`).
inline std::vector<order_row> order_table() {
  std::vector<order_row> rows;
  for (const method_variant& m : method_variants())
    for (formulation f : formulations())
      for (projection_kind pk : projections()) {
        order_row row;
        row.method = m;
        row.form = f;
        row.projection = pk;
        solver_options opt = row.options();
        opt.fixed_h = 0.01;
        if (check_method_options(opt)[0] != '\0') continue;
        row.pendulum_steps = pendulum_steps_of(m, f);
        row.knife_steps = knife_steps_of(m);
        row.expected = theory_of(m, f);
        if (pk != projection_kind::none) row.expected.citation += ", PROJ";
        row.proved = row.expected;
        if (pk != projection_kind::none && f == formulation::index3) index3_projection_orders(row);
        if (m.kind == method_kind::tsit5) tsit5_measured_orders(row);
        rows.push_back(row);
      }
  return rows;
}

}  // namespace lockstep::orders
