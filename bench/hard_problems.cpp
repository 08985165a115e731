// bench/hard_problems.cpp — the work BDF (ggl) and Radau IIA 5 (index3) do on the hard index-3 problems
// of the IVP Test Set.
//
// For andrews on [0, 0.03] and car_axis on [0, 3] at rtol = atol = 1e-4, 1e-5, ..., 1e-10, prints per
// member and method: status, accepted and rejected steps, Newton iterations, LU factorizations (Radau
// counts its real and complex factorization as two), Jacobian evaluations, model (residual)
// evaluations, wall time, and the significant correct digits of the final positions against a 1e-11 run
// of the same method,
//   scd = -log10( max_i |q_i - ref_i| / (1 + |ref_i|) )   (the IVP Test Set's mixed error measure).
// Wall time is the mean over enough repetitions to fill about 0.2 s.
//
// Usage: hard_problems [min_seconds_per_case]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lockstep/model/registry.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;

template <class Model>
member_result<Model> run(method_kind method, double tol, double t1) {
  std::vector<double> p(Model::n_params);
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  std::vector<double> in(Model::n_inputs > 0 ? Model::n_inputs : 1, 0.0);
  vec<double, Model::n> q0, v0;
  Model::initial_state(p.data(), in.data(), q0, v0);
  solver_options opt;
  opt.method = method;
  opt.form = method == method_kind::bdf ? formulation::ggl : formulation::index3;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  return solve_member<Model>(p.data(), q0, v0, 0.0, t1, opt, {t1});
}

template <class Model>
double scd(const state_vector<Model>& y, const state_vector<Model>& ref) {
  double e = 0.0;
  for (int i = 0; i < Model::n; ++i) e = std::max(e, std::abs(y[i] - ref[i]) / (1.0 + std::abs(ref[i])));
  return e > 0.0 ? -std::log10(e) : INFINITY;
}

template <class Model>
void bench(method_kind method, double t1, double min_seconds) {
  const auto reference = run<Model>(method, 1e-11, t1);
  std::printf("\n%s on [0, %g], %s (reference: the same solver at 1e-11, status %s, %ld steps)\n", Model::name, t1,
              method == method_kind::bdf ? "BDF on ggl" : "Radau IIA 5 on index3", status_name(reference.status),
              reference.counters.steps);
  std::printf("%7s %-20s %8s %8s %8s %8s %8s %8s %11s %6s\n", "tol", "status", "steps", "rejected", "newton", "lu",
              "jac", "model", "time [ms]", "scd");
  for (int e = 4; e <= 10; ++e) {
    const double tol = std::pow(10.0, -e);
    using clock = std::chrono::steady_clock;
    member_result<Model> r;
    long reps = 0;
    const auto start = clock::now();
    double elapsed = 0.0;
    do {
      r = run<Model>(method, tol, t1);
      ++reps;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < min_seconds);
    const auto& c = r.counters;
    const double digits =
        r.status == member_status::success && reference.status == member_status::success ? scd<Model>(r.y_final, reference.y_final) : NAN;
    std::printf("%7.0e %-20s %8ld %8ld %8ld %8ld %8ld %8ld %11.3f %6.2f\n", tol, status_name(r.status), c.steps,
                c.rejected_steps, c.newton_iterations, c.lu_factorizations, c.jacobian_evaluations,
                c.model_evaluations, 1e3 * elapsed / reps, digits);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double min_seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  for (method_kind method : {method_kind::bdf, method_kind::radau5}) {
    bench<models::andrews>(method, 0.03, min_seconds);
    bench<models::car_axis>(method, 3.0, min_seconds);
  }
  return 0;
}
