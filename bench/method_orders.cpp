// bench/method_orders.cpp — writes docs/METHODS.md: the observed fixed-step orders of every
// (method, formulation, projection) combination the library accepts beside the orders the literature
// proves (tests/support/method_orders.hpp, shared with tests/method/method_orders_test.cpp), the
// combinations it refuses with the library's own message, and Radau IIA 5 on Andrews' squeezer beside
// Hairer's RADAU5.
//
// Usage: method_orders [--raw]      (markdown on stdout; --raw prints every error of every fit)
//        method_orders --test-set-json   (andrews' digits for docs/PERFORMANCE.md: test_set_json)
// The command that regenerates the document: scripts/write-methods-doc.sh
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "../tests/support/method_orders.hpp"
#include "lockstep/method/tolerance_calibration.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::orders;

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

std::string steps_list(const std::vector<int>& n) {
  std::string s;
  for (std::size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + std::to_string(n[i]);
  return s;
}

void raw() {
  for (const order_row& row : order_table()) {
    const row_measurement m = measure_row(row);
    std::printf("%-50s q %5.2f (%g) v %5.2f (%g) lambda %5.2f (%g) knife q %5.2f (%g) %s\n", row.name().c_str(), m.q,
                row.expected.q, m.v, row.expected.v, m.lambda, row.expected.lambda, m.knife_q, row.expected.knife_q,
                m.failure.c_str());
    for (std::size_t i = 0; i < row.pendulum_steps.size(); ++i)
      std::printf("    N %5d  q %.3e  v %.3e  lambda %.3e\n", row.pendulum_steps[i], m.err_q[i], m.err_v[i],
                  m.err_lambda[i]);
    for (std::size_t i = 0; i < row.knife_steps.size(); ++i)
      std::printf("    knife N %5d  q %.3e\n", row.knife_steps[i], m.knife_err_q[i]);
    std::fflush(stdout);
  }
}


// ---- docs/METHODS.md ----------------------------------------------------------------------------

const char* short_form(formulation f) { return formulation_name(f); }

void refused_section() {
  std::printf("## Combinations the library refuses\n\n");
  std::printf("`check_method_options` (method/methods.hpp) refuses these before any step; `solve_member` then returns\n"
              "status `invalid_input` with the message below, the study file loader reports it at the `[solver]`\n"
              "table, and `solve_ensemble` throws `std::invalid_argument`. Each line was produced by calling\n"
              "`solve_member` on the pendulum with the combination.\n\n");
  std::printf("| method | formulation | steps | status | message |\n|---|---|---|---|---|\n");
  struct refused {
    method_variant m;
    formulation f;
    bool fixed;
  };
  const refused cases[] = {{{method_kind::bdf, 1}, formulation::index3, false},
                           {{method_kind::rhoinf, 0, 1.0}, formulation::index3, true},
                           {{method_kind::rhoinf, 0, 1.0}, formulation::index3, false},
                           {{method_kind::rhoinf, 0, 1.0}, formulation::ggl, false},
                           {{method_kind::rhoinf, 0, 1.0}, formulation::index1, false},
                           {{method_kind::rhoinf, 0, 1.0}, formulation::projected_invariants, false},
                           {{method_kind::dopri5}, formulation::ggl, false}};
  for (const refused& c : cases) {
    solver_options opt;
    opt.method = c.m.kind;
    opt.form = c.f;
    opt.rho_inf = c.m.rho_inf;
    if (c.fixed) opt.fixed_h = 0.01;
    using P = pendulum_problem;
    vec<double, 2> q0, v0;
    double l0;
    P::exact(0.0, q0, v0, l0);
    const auto r = solve_member<P::Model>(P::params, q0, v0, 0.0, 1.0, opt, {1.0});
    const std::string name = c.m.kind == method_kind::bdf ? std::string("bdf") : variant_name(c.m);
    std::printf("| %s | %s | %s | `%s` | %s |\n", name.c_str(), short_form(c.f),
                c.fixed ? "fixed" : "adaptive", status_name(r.status), r.message.c_str());
  }
  std::printf("\n");
}

// Radau IIA 5 (index3) and BDF (ggl) on Andrews' squeezer: work and accuracy per tolerance, and
// Radau IIA 5 at the tolerances RADAU5 uses internally for the same user tolerance.
struct work_point {
  member_status status;
  member_counters c;
  double scd;
};

// A Test Set problem from its published start (the model's defaults), rtol = atol = tol, to t1.
template <class Model>
member_result<Model> test_set_solve(method_kind method, formulation form, double t1, double tol) {
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  double in[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  vec<double, Model::n> q0, v0;
  Model::initial_state(p, in, q0, v0);
  solver_options opt;
  opt.method = method;
  opt.form = form;
  if (is_explicit_pair(method)) opt.projection = projection_kind::coordinate;  // its study default
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  opt.max_steps = 1000000;
  return solve_member<Model>(p, q0, v0, 0.0, t1, opt, {t1});
}

// Andrews' squeezer to t = 0.03.
member_result<models::andrews> andrews_solve(method_kind method, formulation form, double tol) {
  return test_set_solve<models::andrews>(method, form, 0.03, tol);
}

// Work counters, and significant correct digits of the final positions against `ref`.
work_point andrews_run(method_kind method, formulation form, double tol, const state_vector<models::andrews>& ref) {
  const auto r = andrews_solve(method, form, tol);
  work_point w{r.status, r.counters, NAN};
  if (r.status == member_status::success) {
    double e = 0.0;
    for (int i = 0; i < models::andrews::n; ++i) e = std::max(e, std::abs(r.y_final[i] - ref[i]) / (1.0 + std::abs(ref[i])));
    w.scd = e > 0 ? -std::log10(e) : INFINITY;
  }
  return w;
}

// RADAU5's reshaping of the user tolerance (Hairer & Wanner II, IV.8; the RADAU5 code: with atol = rtol,
// rtol' = 0.1 rtol^(2/3) and atol' = rtol' atol / rtol).
double radau5_internal_tolerance(double tol) { return 0.1 * std::pow(tol, 2.0 / 3.0); }

// Steps of Radau IIA 5 at 1e-6 and 1e-8, and with its internal tolerance at RADAU5's for them.
struct andrews_steps {
  long at6 = 0, at8 = 0, internal6 = 0, internal8 = 0;
  double slope = 0;                          // of log10(error) against log10(tol), 1e-4 .. 1e-10
  double min_ratio = INFINITY, max_ratio = 0;  // error / tol
};

// The IVP Test Set's published end points (F. Mazzia and C. Magherini, Test Set for Initial Value Problem
// Solvers, release 2.4, 2008: andrews.f, SOLN, at t = 0.03; caraxis.f, carsoln, at t = 3), positions only;
// tests/method/test_set_reference_test.cpp asserts the digits against them.
constexpr double andrews_published[7] = {0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                                         -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                                         0.1048080741042263e+1};
constexpr double car_axis_published[4] = {0.4934557842755629e-1, 0.4969894602303324e+0, 0.1041742524885400e+1,
                                          0.3739110272652214e+0};

andrews_steps andrews_section() {
  andrews_steps out;
  state_vector<models::andrews> reference;
  for (int i = 0; i < 7; ++i) reference[i] = andrews_published[i];
  std::printf("| rtol = atol | Radau IIA 5 steps | rejected | LU | Jacobians | model evals | scd | "
              "Radau IIA 5 at RADAU5's internal tol: tol' | steps | scd | BDF (ggl) steps | LU | model evals | scd |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int e = 4; e <= 10; ++e) {
    const double tol = std::pow(10.0, -e);
    const work_point r = andrews_run(method_kind::radau5, formulation::index3, tol, reference);
    sx += e;
    sy += r.scd;
    sxx += e * e;
    sxy += e * r.scd;
    out.min_ratio = std::min(out.min_ratio, std::pow(10.0, e - r.scd));
    out.max_ratio = std::max(out.max_ratio, std::pow(10.0, e - r.scd));
    // The user tolerance at which our Radau IIA 5 on index3 works internally at RADAU5's tol'
    // (method/tolerance_calibration.hpp: rtol' = c rtol there).
    const double tol2 = radau5_internal_tolerance(tol);
    const double user2 = tol2 / calibration_for(method_kind::radau5, formulation::index3).c;
    const work_point r2 = andrews_run(method_kind::radau5, formulation::index3, user2, reference);
    const work_point b = andrews_run(method_kind::bdf, formulation::ggl, tol, reference);
    std::printf("| 1e-%d | %ld | %ld | %ld | %ld | %ld | %.2f | %.1e | %ld | %.2f | %ld | %ld | %ld | %.2f |\n", e, r.c.steps,
                r.c.rejected_steps, r.c.lu_factorizations, r.c.jacobian_evaluations, r.c.model_evaluations, r.scd, tol2,
                r2.c.steps, r2.scd, b.c.steps, b.c.lu_factorizations, b.c.model_evaluations, b.scd);
    if (e == 6) {
      out.at6 = r.c.steps;
      out.internal6 = r2.c.steps;
    }
    if (e == 8) {
      out.at8 = r.c.steps;
      out.internal8 = r2.c.steps;
    }
  }
  out.slope = (7 * sxy - sx * sy) / (7 * sxx - sx * sx);
  std::printf("\n");
  return out;
}

// Adaptive steps (no fixed_h) of every method on every formulation: the pendulum and the knife edge of
// the order table over [0, 1] at rtol = atol = 1e-6, accepted (rejected) steps and the max error of q
// at t = 1 against the exact solutions.
template <class Problem>
std::string adaptive_cell(method_kind method, formulation form) {
  solver_options opt;
  opt.method = method;
  opt.form = form;
  if (is_explicit_pair(method)) opt.projection = projection_kind::coordinate;  // its study default
  // backward Euler where it is practical: its per-step tolerance is about rtol^2 ("What rtol means")
  const adaptive_result r = adaptive_run<Problem>(opt, method == method_kind::euler ? 1e-2 : 1e-6);
  if (r.status == member_status::invalid_input) return "refused";
  if (r.status != member_status::success) return status_name(r.status);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%ld (%ld), %.0e", r.steps, r.rejected, r.err_q);
  return buf;
}

void adaptive_section() {
  std::printf("| method | problem | index3 | ggl | index1 | projected-invariants |\n|---|---|---|---|---|---|\n");
  for (method_kind m : {method_kind::radau5, method_kind::radau3, method_kind::euler, method_kind::bdf, method_kind::rhoinf,
                        method_kind::dopri5, method_kind::tsit5}) {
    std::printf("| %s | pendulum |", method_name(m));
    for (formulation f : formulations()) std::printf(" %s |", adaptive_cell<pendulum_problem>(m, f).c_str());
    std::printf("\n| %s | knife edge |", method_name(m));
    for (formulation f : formulations()) std::printf(" %s |", adaptive_cell<knife_edge_problem>(m, f).c_str());
    std::printf("\n");
  }
  std::printf("\n");
}

// The status of one fixed-step BDF run of the order table's pendulum.
const char* bdf_status(formulation form, int k, int steps) {
  order_row row;
  row.method = {method_kind::bdf, k};
  row.form = form;
  return status_name(fixed_step_run<pendulum_problem>(row.options(), steps).status);
}

// Digits (scd of the positions against the published end points) and accepted steps of every method and
// formulation on andrews and the car axis at rtol = atol = 1e-2 ... 1e-10 (euler to 1e-4: backward Euler
// buys a digit per two decades of its internal tolerance, method/tolerance_calibration.hpp).
// The scd of a final state's first N entries (the positions) against the published end point.
template <class Y, int N>
double test_set_digits(const Y& y_final, const double (&published)[N]) {
  double e = 0.0;
  for (int i = 0; i < N; ++i) e = std::max(e, std::abs(y_final[i] - published[i]) / (1.0 + std::abs(published[i])));
  return e > 0 ? -std::log10(e) : INFINITY;
}

template <class Model, int N>
std::string test_set_cell(method_kind method, formulation form, double t1, double tol, const double (&published)[N]) {
  const auto r = test_set_solve<Model>(method, form, t1, tol);
  if (r.status != member_status::success) return status_name(r.status);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f (%ld)", test_set_digits(r.y_final, published), r.counters.steps);
  return buf;
}

void test_set_section() {
  for (int problem = 0; problem < 2; ++problem) {
    std::printf("%s\n\n| method | formulation | 1e-2 | 1e-3 | 1e-4 | 1e-5 | 1e-6 | 1e-7 | 1e-8 | 1e-9 | 1e-10 |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n",
                problem == 0 ? "Andrews' squeezer, t = 0.03: digits (accepted steps)" : "Car axis, t = 3: digits (accepted steps)");
    for (method_kind m : {method_kind::bdf, method_kind::radau5, method_kind::radau3, method_kind::euler, method_kind::rhoinf,
                          method_kind::dopri5, method_kind::tsit5})
      for (formulation f : formulations()) {
        solver_options probe;
        probe.method = m;
        probe.form = f;
        if (check_method_options(probe)[0] != '\0') continue;  // adaptive BDF on index3
        std::printf("| %s | %s |", method_name(m), formulation_name(f));
        for (int e = 2; e <= 10; ++e) {
          if (m == method_kind::euler && e > 4) {
            std::printf(" |");
            continue;
          }
          const double tol = std::pow(10.0, -e);
          const std::string cell = problem == 0 ? test_set_cell<models::andrews>(m, f, 0.03, tol, andrews_published)
                                                : test_set_cell<models::car_axis>(m, f, 3.0, tol, car_axis_published);
          std::printf(" %s |", cell.c_str());
        }
        std::printf("\n");
      }
    std::printf("\n");
  }
}

// The digits bench/write_performance.py sets beside Hairer's RADAU5 on andrews (docs/PERFORMANCE.md,
// "Against Hairer's RADAU5, per core"): as JSON, the scd of the published problem's positions at
// t = 0.03 against the published end point, with the two lockstep solvers of bench/peers/work_precision
// (BDF on ggl, Radau IIA 5 on index3, every other option at its default) at its tolerances
// rtol = atol = 1e-4 ... 1e-10; null where a solve failed.
void test_set_json() {
  std::printf("{\"problem\": \"andrews\", \"t1\": 0.03, \"digits\": {");
  const struct {
    const char* solver;
    method_kind method;
    formulation form;
  } solvers[] = {{"lockstep-bdf", method_kind::bdf, formulation::ggl},
                 {"lockstep-radau5", method_kind::radau5, formulation::index3}};
  for (std::size_t k = 0; k < std::size(solvers); ++k) {
    std::printf("%s\"%s\": {", k ? ", " : "", solvers[k].solver);
    for (int e = 4; e <= 10; ++e) {
      const auto r = andrews_solve(solvers[k].method, solvers[k].form, std::pow(10.0, -e));
      if (r.status != member_status::success)
        std::printf("%s\"%d\": null", e > 4 ? ", " : "", e);
      else
        std::printf("%s\"%d\": %.4f", e > 4 ? ", " : "", e, test_set_digits(r.y_final, andrews_published));
    }
    std::printf("}");
  }
  std::printf("}}\n");
}

void markdown();

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--raw") == 0) {
    raw();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--test-set") == 0) {
    test_set_section();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--test-set-json") == 0) {
    test_set_json();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--andrews") == 0) {
    andrews_section();
    return 0;
  }
  markdown();
  return 0;
}

namespace {

std::string orders_text(const theory& t) {
  return fmt("%g", t.q) + ", " + fmt("%g", t.v) + ", " + fmt("%g", t.lambda) + " / " + fmt("%g", t.knife_q);
}

// A measured order, bold when it is more than 0.3 away from the asserted one (none should be: the test
// fails then).
std::string measured_cell(double measured, double asserted) {
  std::string s = std::isfinite(measured) ? fmt("%.2f", measured) : std::string("failed");
  if (!(std::abs(measured - asserted) <= 0.3)) s = "**" + s + "**";
  return s;
}

void markdown() {
  const std::vector<order_row> rows = order_table();
  std::vector<row_measurement> measured;
  for (const order_row& row : rows) measured.push_back(measure_row(row));
  std::printf(R"(# Methods, formulations and projections: measured orders

Generated by `scripts/write-methods-doc.sh` (which builds and runs `bench/method_orders.cpp`); do not
edit by hand, rerun the command. The measurement code is `tests/support/method_orders.hpp`, shared
with `tests/method/method_orders_test.cpp`, which recomputes every order below and asserts it within
0.3 of the order in the "asserted" column (the proved order unless a note says why not). Nothing in
this file depends on the machine's speed: rerunning the command reproduces it.

## What is measured

Every (method, formulation, projection) combination that `check_method_options`
(`include/lockstep/method/methods.hpp`) accepts with fixed steps — methods Radau IIA with 3, 2 and 1
stages (`radau5`, `radau3`, `euler`), BDF of fixed order k = 1 ... 5, the two-step rho_inf method with
rho_inf = 0, 0.6, 0.9, 1, the explicit pairs of Dormand & Prince (`dopri5`) and of Tsitouras (`tsit5`),
on `index1` only; formulations
`index3`, `ggl`, `index1` (without Baumgarte gains),
`projected-invariants`; projections `none`, `coordinate`, `post-stabilization` (mass metric) — is
run with fixed steps h = 1 / N (`solver_options::fixed_h`) over t in [0, 1] through the library's
member stepper (`member_begin` / `member_advance`, so each accepted step is followed by the library's
own projection):

- **pendulum** (theta0 = 1 rad from rest, m = L = 1, g = 9.81; |v| up to 3.1): errors in q, v and the
  method's own multiplier lambda (`consistent_multipliers = false`; the default recomputes lambda from
  (q, v), which would show q's and v's order instead), against the minimal-coordinate ODE integrated in
  long double by Gragg-Bulirsch-Stoer extrapolation of order 16 (`tests/support/reference.hpp`; its
  error is far below 1e-14);
- **knife edge** (the non-holonomic model: tau = 0, spinning at omega0 = 2 rad/s with no speed along the blade (u0 = 0) from the origin, one
  constraint sin(theta) x' - cos(theta) y' = 0 and no holonomic one): errors in q against the exact
  solution x = G sin^2(wt) / (2w^2), y = G (wt - sin(wt) cos(wt)) / (2w^2), theta = wt, G = g sin(alpha).

An error is the max norm over the components and over the step points t = 1/4, 1/2, 3/4, 1 (a single
time can sit where an error component crosses zero). The order is the least-squares slope of
log(error) against log(h) over the N of the row ("N" columns), chosen in the asymptotic range and above
round-off (the smallest error used is %.1e). Newton is converged far below the discretization error
(error weights 1e-12, `newton_tol` 1e-4, up to 30 iterations). Radau IIA, the rho_inf method and the explicit pairs start
from the exact point at t = 0; BDF of order k >= 2 from the k + 1 exact points at t = 0, h, ..., kh (the
convergence theorems assume starting values accurate to O(h^(k+1)); the library's own start raises the
order step by step from order 1, whose first step alone leaves an O(h^2) error).

Step ranges: the N columns of the table. They start where the slopes have settled and stop above
round-off or, on index3, before the Newton iteration stalls. Reasons behind some of them: Radau IIA 5
fails Newton on the knife edge at N = 8; the rho_inf method with rho_inf = 0.9 needs more than about
100 steps before its parasitic root -0.9 has damped the multipliers' start-up oscillation; BDF on
index3 meets the h^-3 growth of the Newton matrix's condition (Ascher & Petzold 1998, ch. 10), and the tight Newton test
fails first (k = 1 at N = 800, k = 4 and 5 at N = 640), so index3 BDF uses smaller N than ggl.
Every error of every fit is printed by `build/bench/method_orders --raw`.

)",
              [&] {
                double smallest = 1.0;
                for (const row_measurement& m : measured) {
                  for (double e : m.err_q) smallest = std::min(smallest, e);
                  for (double e : m.knife_err_q) smallest = std::min(smallest, e);
                }
                return smallest;
              }());

  std::printf(R"(## Orders

Columns q, v, lambda: pendulum; knife q: knife edge. "proved" lists the orders (q, v, lambda / knife q)
the cited theorems give for the method on the formulation; "asserted" is what the test checks when it
differs, for the reason in the note. The keys are expanded under "References" below.

| method | formulation | projection | N (pendulum) | q | v | lambda | N (knife) | knife q | proved | asserted | cited | note |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
)");
  int outside = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const order_row& row = rows[i];
    const row_measurement& m = measured[i];
    const theory& e = row.expected;
    for (auto [got, want] : {std::pair{m.q, e.q}, {m.v, e.v}, {m.lambda, e.lambda}, {m.knife_q, e.knife_q}})
      if (!(std::abs(got - want) <= 0.3)) ++outside;
    const std::string asserted = orders_text(row.expected) == orders_text(row.proved) ? "=" : orders_text(row.expected);
    std::string note = row.note.empty()                ? ""
                       : row.note == "v-raised"        ? "[A](#projection-after-index-3-steps)"
                       : row.note == "small-constants" ? "[C](#tsitouras-pair-small-error-constants)"
                                                       : "[B](#projection-after-index-3-steps)";
    if (row.note.size() && row.note != "small-constants" && std::isfinite(m.projection_v_order))
      note += fmt(" (v correction slope %.2f)", m.projection_v_order);
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", variant_name(row.method).c_str(),
                formulation_name(row.form), projection_name(row.projection), steps_list(row.pendulum_steps).c_str(),
                measured_cell(m.q, e.q).c_str(), measured_cell(m.v, e.v).c_str(), measured_cell(m.lambda, e.lambda).c_str(),
                steps_list(row.knife_steps).c_str(), measured_cell(m.knife_q, e.knife_q).c_str(),
                orders_text(row.proved).c_str(), asserted.c_str(), row.expected.citation.c_str(), note.c_str());
  }
  std::printf("\n%zu combinations; measured orders more than 0.3 from the asserted ones: %d%s.\n\n", rows.size(), outside,
              outside ? " (bold above)" : "");

  std::printf(R"(## Projection after index-3 steps

Every row agrees with the proved orders within 0.3 except the %d index3 rows with a projection (notes A
and B) and the tsit5 rows (note C, in the next section). In the former, two effects, both measured,
change the orders of v and of the method's own lambda. The index-3 form imposes
Phi = 0 but not the velocity constraint G v + Phi_t = 0, so the method's v leaves the velocity manifold
by its own global error, O(h^pv) (pv = s for Radau IIA, k for BDF, 2 for rho_inf), and each projection
moves v by that much (the "v correction slope" in the note: the fitted slope of the largest velocity
correction, `member_counters::max_projection_v`). The theorem cited for projections (PROJ) is about the
projected variables, and it holds: q and v keep at least their orders.

- **A: v gains order with Radau IIA.** The removed part of the v error is its normal component. For
  Radau IIA on index 3 the O(h^s) term of the v error is normal to the velocity manifold (q, which fixes
  the manifold, is O(h^(2s-1)) accurate), so the projected v is as accurate as q: measured 2s - 1
  (s = 2: 3.00; s = 3: 5.00). Asserted: 2s - 1. For BDF and rho_inf v already has q's order.
- **B: lambda loses an order with the multistep methods and backward Euler.** The projection leaves the
  method's own multiplier alone, but the next step starts from the moved v, and every index-3
  discretization obtains lambda from a difference quotient of v (the dynamic row
  M (v_{n+1} - sum_j alpha_j v_{n-j}) / (h beta) = Q - G^T lambda): an O(h^pv) jump in the starting v
  becomes an O(h^(pv-1)) error in lambda. Asserted: min(proved, pv - 1): BDF k gives k - 1, rho_inf 1,
  backward Euler and BDF 1 order 0: lambda does not converge. For backward Euler the mechanism is
  explicit: its index-3 velocity (q_n - q_{n-1}) / h is a secant of the circle, with normal component
  h |v|^2 / (2L); the projection removes it and the next step's difference quotient turns it into a
  lambda error m |v|^2 / (2 L^2) that does not shrink with h (measured 4.47 at N = 2560; on this
  trajectory |v|^2 / 2 = g L (cos theta - cos theta0) <= 4.51). Radau IIA keeps s - 1. The multipliers
  the library reports by default (`consistent_multipliers = true`) are recomputed from the projected
  (q, v) and have q's and v's order, so on index3 a projection costs the reported multipliers nothing,
  leaves q as it was (already on Phi = 0) and improves v with Radau IIA. On ggl, index1 and projected
  invariants the projections move the point by the constraint drift only, and every order is the
  unprojected one.

)",
              [&] {
                int n = 0;
                for (const order_row& row : rows) n += !row.note.empty() && row.note != "small-constants";
                return n;
              }());

  std::printf(R"(## Tsitouras' pair: small error constants

- **C: tsit5's slopes above 5.** Tsitouras' pair (Tsitouras 2011) is of order 5: its weights satisfy
  the 17 order conditions of order 5 to round-off (`tests/method/dopri5_test.cpp`). Its fifth-order
  error terms are small by design (its stability polynomial's z^6 coefficient is 1.031 / 6! against
  e^z's 1 / 6!; Dormand & Prince's: 1.2 / 6!), so over the N at which the errors stay above round-off
  the sixth-order terms still raise the slopes on these smooth problems: the knife edge, linear in its
  velocities, at about 6, the unprojected pendulum at 5.5-5.8; the projected pendulum shows the
  theory's 5. Asserted: those slopes. `tests/method/dopri5_test.cpp` follows the pendulum's q and v to
  N = 256, where they come down towards 5.

)");

  refused_section();

  std::printf(R"(Accepted, but outside the theory's comfort zone (nothing refused, what happens):

- **rho_inf close to 1 on index3 with adaptive steps**: allowed for rho_inf < 1; the method's own
  multipliers degrade under step-size changes as rho_inf -> 1 (`method/rhoinf.hpp`, header); with fixed
  steps rho_inf = 0.9 converges with order 2 but only after ~100 steps (table).
- **BDF on index3 with fixed steps at small h**: the Newton matrix's condition grows like h^-3 (Ascher & Petzold 1998, ch. 10,
  10.1.4), and with a tight Newton test the iteration stalls in round-off. On the pendulum with the
  table's settings: k = 1, N = 800: `%s`; k = 4, N = 640: `%s`; k = 5, N = 640: `%s` (the same N on
  ggl: `%s`, `%s`, `%s`).
- **index1 without Baumgarte gains** drifts off Phi = 0 (|Phi| grows with t; measured in
  `tests/formulation/index1_test.cpp` and docs/DESIGN-NOTES.md); over t in [0, 1] with fixed steps the
  drift is of the method's order, so the table shows the ODE orders.
- **ggl with very different masses** (Ascher & Petzold 1993, section 4: the index-2 discretization treats the term
  R S explicitly, so a large F C' forces small steps): allowed. On the double pendulum with masses 1e-6
  and 1 neither ggl nor projected invariants showed the step restriction, because the mass matrix is
  constant (docs/DESIGN-NOTES.md, "Heterogeneous masses, measured").

)",
              bdf_status(formulation::index3, 1, 800), bdf_status(formulation::index3, 4, 640),
              bdf_status(formulation::index3, 5, 640), bdf_status(formulation::ggl, 1, 800),
              bdf_status(formulation::ggl, 4, 640), bdf_status(formulation::ggl, 5, 640));

  std::printf(R"(## Adaptive steps, for comparison

Not an order measurement: the same two problems with error control (no projection, default options,
rtol = atol = 1e-6, backward Euler 1e-2, t in [0, 1]): accepted (rejected) steps and the max error of q
at t = 1. BDF is variable-order here; rho_inf = 0.6 (the default).

)");
  adaptive_section();
  std::printf(R"(The adaptive rho_inf method on index1 and projected invariants used to take about two orders of
magnitude more steps than on index3 and ggl for no better accuracy (pendulum: 20,882 and 14,970; knife
edge: 16,581 and 13,187). Its error estimate solved a fresh residual, which also held the converged
Newton residual, with the Jacobian the corrector keeps across steps; on these formulations the
multipliers are index-1 variables weighted in full, and both mismatches left a part in them that does
not vanish with h. The estimate now builds c F_y' tau from the blocks of the same Jacobian
(`method/rhoinf.hpp`, "Error estimate"); `tests/method/rhoinf_test.cpp` holds the step counts on these
formulations within 3 times ggl's and the estimate to the true local error with kept Jacobians.

)");

  std::printf(R"(## Radau IIA 5 on Andrews' squeezer beside Hairer's RADAU5

Andrews' squeezer (IVP Test Set, t in [0, 0.03]), our Radau IIA 5 on index3 and BDF on ggl at
rtol = atol = 1e-4 ... 1e-10; scd = -log10 max_i |q_i - ref_i| / (1 + |ref_i|) over the positions against
the Test Set's published end point (Mazzia & Magherini, release 2.4, 2008: the problem's reference
routine, computed with PSIDE at rtol = atol = 1e-14). LU counts the
real and the complex factorization of Radau as two. The middle columns rerun Radau IIA 5 with its
internal tolerance at the one RADAU5 itself works with for the same user tolerance (below). The same counters, with BDF and
the car axis and wall times, come from `build/bench/hard_problems`.

)");
  const andrews_steps st = andrews_section();
  const double t6 = radau5_internal_tolerance(1e-6), t8 = radau5_internal_tolerance(1e-8);
  const double radau5_index3_c = calibration_for(method_kind::radau5, formulation::index3).c;
  std::printf(R"(Hairer's RADAU5 (atol = rtol, index hints (7, 7, 13), its approximate analytic Jacobian) needs about
105 steps at 1e-6 and 159 at 1e-8 on this problem. Where we stand: %ld steps at 1e-6 and %ld
at 1e-8 (%.2f and %.2f times RADAU5's); at the tolerances RADAU5 actually works with for those two,
%ld and %ld (%.2f and %.2f times). Why:

- **Tolerances.** Neither code controls the error per step at the user's tolerance. RADAU5 replaces
  rtol by rtol' = 0.1 rtol^(2/3) and atol by rtol' atol / rtol before it starts (Hairer & Wanner II,
  IV.8; the RADAU5 code), so that its global error comes out near the user's tolerance: for
  rtol = 1e-6 it works at %.1e, for 1e-8 at %.1e. lockstep's Radau IIA 5 on index3 works at
  rtol' = %.2f rtol, the calibration that makes every method's digits come out near -log10 rtol on
  this problem and the car axis (`method/tolerance_calibration.hpp`; "What rtol means" below). At 1e-8
  RADAU5's internal tolerance is %.0f times looser than ours. Run with its internal tolerance at RADAU5's
  (middle columns) our Radau IIA 5 takes fewer steps than RADAU5: the gap in steps is what each code
  asks of its steps, not the method. What RADAU5 delivers at its settings is not measured here; ours is
  in the scd columns: the global error is %.1f to %.0f times the tolerance and grows like tol^%.2f
  (least squares over 1e-4 ... 1e-10).
- **Error estimate and step control** are RADAU5's (`method/radau.hpp`): the embedded estimate filtered
  by (I - h gamma0 J)^-1 with the extra filter application after a rejection and at the first step,
  index-2 and index-3 components scaled by h and h^2 (RADAU5's index hints), h_new = h / quot with
  quot = err^(1/4) / fac in [1/8, 5] (h_new / h in [0.2, 8], RADAU5's WORK(8) and WORK(9)), fac = 0.9
  lowered by the Newton effort, Gustafsson's predictive
  controller and h kept when the change is within [1, 1.2]. Differences that remain: our formulation
  has no acceleration unknowns (the Test Set's andrews has 27 unknowns, w = q'' among the index-3
  ones; ours has q, v, lambda with the kinematic rows eliminated), our Jacobian is exact (automatic
  differentiation, RADAU5's is approximate), and the accuracy per step differs accordingly; the scd
  columns give the accuracy we buy per tolerance.
- **Jacobians**: our rule is RADAU5's (a new Jacobian unless Newton contracted by a factor below
  0.001); on andrews it fires on nearly every step (Jacobians close to steps in the table). RADAU5's own
  counts are not available here, so this is not a comparison; the Test Set's published RADAU5 runs
  (its documentation's tables of steps, Jacobians and LU decompositions per tolerance) were not
  available to this document either. The threshold was measured against 0.01 and 0.1 (next section).

Command: `build/bench/method_orders --andrews` prints the table above; `build/bench/hard_problems`
prints BDF's and Radau IIA 5's counters and wall times for andrews and the car axis.

)",
              st.at6, st.at8, st.at6 / 105.0, st.at8 / 159.0, st.internal6, st.internal8, st.internal6 / 105.0,
              st.internal8 / 159.0, t6, t8, radau5_index3_c, t8 / (radau5_index3_c * 1e-8), st.min_ratio, st.max_ratio,
              st.slope);
  std::printf(R"(## What rtol means: digits per tolerance against the IVP Test Set

rtol asks for the same thing of every method and formulation: about -log10 rtol significant correct
digits of the positions at the end of a run. Each method controls its error per step at an internal
tolerance rtol' = c rtol^e (atol' = atol rtol' / rtol), with e from its order (1.25 for BDF, 1 for the
Radau IIA methods, 1.5 for rho_inf, 2 for backward Euler) and c per method and formulation, fitted to
these two problems and clamped to [1000 eps, max(rtol, 1e-3)] (`method/tolerance_calibration.hpp`
gives the reasons). Below: scd of the positions against the Test Set's published end points (Mazzia &
Magherini, release 2.4, 2008), accepted steps in parentheses, rtol = atol.
`tests/method/test_set_reference_test.cpp` asserts, at the tolerances where each method is practical,
that the digits lie within 1.5 of -log10 rtol and no more than half a digit below their value here.
Adaptive BDF on index3 is refused; backward Euler is run to 1e-4 only.

)");
  test_set_section();
  std::fputs(R"(Findings behind these numbers:

- **Before the calibration, one rtol bought digits that differed by more than six** between methods and
  formulations (andrews at 1e-6: Radau IIA 5 on the projected invariants 9.60, on index3 5.18, BDF on
  ggl 7.60, rho_inf on index3 2.97). Two causes: the order (per-step control lets the global error grow
  like tol^(p/(p+1)), so the low orders fell short), and RADAU5's index scaling, which counts the
  velocities h times on index3 (index-2 variables there, |v| ~ 1e3 and h ~ 1e-4 on andrews) but in
  full on ggl, index1 and the projected invariants, so that the same rtol asked ggl for three more
  digits at 4.5 times the steps. Now the spread at 1e-6 and 1e-8 is at most 2.3 digits over both
  problems (rho_inf on index3 and backward Euler aside), and at equal digits the formulations cost
  about the same (andrews, 1e-8: 393 steps on index3, 485 on ggl, for 7.50 and 8.81 digits).
- **A fit on two problems.** Elsewhere the digits land further off: on the pendulum of the multibody
  benchmark library (A01, docs/MBS-BENCHMARKS.md) over five periods at rtol 1e-8 the position error is
  6 times rtol with BDF on ggl and 44 times with Radau IIA 5 on ggl
  (`tests/python/test_mbs_benchmarks.py`).
- **The price of one meaning is work for the low orders**, which the old convention hid: rho_inf needs
  14,000-73,000 steps for 6 digits, backward Euler 33,000-685,000 for 3, and rho_inf on index3 fails
  beyond 1e-4 on andrews (newton_failure at internal tolerances below ~1e-9). The floor 1000 eps caps
  rho_inf near 8 digits on both problems.
- **Where the ceiling bites** (internal tolerance at most max(rtol, 1e-3)): Radau IIA 5 on ggl, index1
  and the projected invariants work at 1e-3 for both rtol = 1e-3 and 1e-4, so those columns hold the
  same runs (3.6 to 7.1 digits on andrews): the fit is not extrapolated beyond the tolerances it was
  measured at.
- **Radau IIA's Jacobian reuse** (a new Jacobian after an accepted step unless the contraction rate is
  below THET): at THET = 0.01 instead of RADAU5's 0.001, andrews, the car axis, the slider crank and the
  double pendulum at rtol 1e-5, 1e-7, 1e-9 took 0.89-1.02 of the time (car axis at 1e-9: 455 Jacobians
  instead of 1753 for 7 % more Newton iterations) at the same digits, but the slider crank at 1e-12 lost
  a digit (6.96 instead of 7.91 against BDF at 1e-13); THET = 0.1 took 0.93-1.33 of the time. 0.001 is
  kept (`method/radau.hpp`, radau_jacobian_reuse_theta).
- **BDF's Newton effort** (2.0 iterations per step on all four problems; IDA 1.4-1.7): the convergence
  rate is measured in every step and never carried over (`method/corrector.hpp`), so a step converges
  after one iteration only with a Jacobian evaluated at its own predictor or a negligible first
  increment. IDA's rule, which accepts the first iterate when the previous step's rate times the
  increment is below the tolerance, gives 1.1-1.3 iterations per step here but 2.2-3.7 times the steps
  (andrews at 1e-9: 11007 steps and 12878 iterations instead of 3076 and 6161): the unconverged first
  iterates reach the error estimate and the step-size choice. The second iteration is the cheaper one.

Commands: `build/bench/method_orders --test-set` prints the two tables; the THET and Newton-rule
comparisons were measured with the counters of `build/bench/hard_problems`' kind on builds with the
rule changed (docs/PERFORMANCE.md, "Work on the hard problems before and after the numerics review").

## References

)",
             stdout);
  for (const citation& c : citations()) std::printf("- **%s** — %s\n", c.key, c.text);
}

}  // namespace
