// bench/lyapunov_long.cpp — the long-horizon Lyapunov comparisons, for docs/LYAPUNOV.md
// (the test suite checks the same properties at t <= 300 / 3000: tests/lyapunov).
//
// Sections (each printed as a Markdown table):
//   cost        one double pendulum (d = 4) and andrews (d = 2): the full spectrum with the tangents'
//               error control off (so the member takes exactly the plain solve's steps) against the
//               plain solve of the same member: wall-time ratio, and with the control on.
//   pendulum    the integrable pendulum: both exponents at t = 1000.
//   chaotic     the double pendulum at the default start, members whose initial angles differ by 1e-6
//               (theta1 + 1e-6 i): QR spectrum (BDF on ggl) and clone l1 per member at t = T, then their
//               means with standard errors; the Hamiltonian form of every member's spectrum.
//   variants    the same members' QR l1 with Radau IIA 5 on index3, renormalize = 0.1, rtol 1e-10:
//               means against the reference's.
//
// Usage: lyapunov_long [members = 16] [T = 2000] [sections = cost,pendulum,chaotic,variants,tolerance]
// ("tolerance" is the rtol 1e-10 variant alone, the most expensive: run it as a second process).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lockstep/lyapunov/spectrum.hpp"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/pendulum.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

template <class Model>
struct start_point {
  std::vector<double> p;
  vec<double, Model::n> q0, v0;
  explicit start_point(std::vector<double> input_changes = {}) : p(Model::n_params) {
    for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
    std::vector<double> in(Model::n_inputs > 0 ? Model::n_inputs : 1, 0.0);
    if constexpr (Model::n_inputs > 0)
      for (int i = 0; i < Model::n_inputs; ++i) in[i] = Model::inputs[i].default_value;
    for (std::size_t i = 0; i < input_changes.size() && i < in.size(); ++i) in[i] += input_changes[i];
    Model::initial_state(p.data(), in.data(), q0, v0);
  }
};

solver_options options(method_kind method, formulation form, double tol) {
  solver_options opt;
  opt.method = method;
  opt.form = form;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = tol;
  opt.max_steps = 1L << 40;  // t = 2000 takes ~2e6 steps at rtol 1e-8
  return opt;
}

struct mean_and_error {
  double mean = 0.0, standard_error = 0.0, spread = 0.0;
};

mean_and_error statistics(const std::vector<double>& x) {
  mean_and_error r;
  const double n = static_cast<double>(x.size());
  for (double v : x) r.mean += v / n;
  double ss = 0.0;
  for (double v : x) ss += (v - r.mean) * (v - r.mean);
  r.spread = x.size() > 1 ? std::sqrt(ss / (n - 1.0)) : 0.0;
  r.standard_error = r.spread / std::sqrt(n);
  return r;
}

// Seconds per call of f, averaged over at least 0.1 s of repeated calls.
template <class F>
double seconds_per_call(const F& f) {
  const auto start = clock_type::now();
  int repetitions = 0;
  do {
    f();
    ++repetitions;
  } while (seconds_since(start) < 0.1);
  return seconds_since(start) / repetitions;
}

template <class Model>
void cost_row(const char* name, double t1, const solver_options& opt, double transient) {
  const start_point<Model> s;
  lyapunov_options lopt;
  lopt.renormalize = t1 / 100.0;
  lopt.transient = transient;
  member_result<Model> plain;
  lyapunov_result<Model> spectrum[2];
  // The plain solve and the two spectra are timed in turns, 7 rounds, and each keeps its fastest round:
  // load from other processes then slows all three alike or is filtered out, instead of landing on
  // whichever of them ran while it lasted.
  double plain_time = 1e300, times[2] = {1e300, 1e300};
  for (int round = 0; round < 7; ++round) {
    plain_time = std::min(plain_time, seconds_per_call([&] {
                            plain = solve_member<Model>(s.p.data(), s.q0, s.v0, 0.0, t1, opt, {});
                          }));
    for (int control = 0; control < 2; ++control) {
      lopt.tangent_error_control = control == 1;
      times[control] = std::min(times[control], seconds_per_call([&] {
                                  spectrum[control] = lyapunov_spectrum<Model>(s.p.data(), s.q0, s.v0, 0.0, t1, opt, lopt);
                                }));
    }
  }
  long steps[2];
  for (int control = 0; control < 2; ++control) {
    const lyapunov_result<Model>& r = spectrum[control];
    steps[control] = r.counters.steps;
    if (r.status != member_status::success) std::printf("<!-- %s: status %d %s -->\n", name, int(r.status), r.message.c_str());
  }
  std::printf("| %s | %s on %s, rtol %.0e, t = %g | %d | %ld | %.4f s | %.4f s | %.2f | %ld | %.2f |\n", name,
              method_name(opt.method), formulation_name(opt.form), opt.rtol, t1, manifold_dimension<Model>(),
              plain.counters.steps, plain_time, times[0], times[0] / plain_time, steps[1], times[1] / plain_time);
}

void section_cost() {
  std::printf("\n### Cost of a full spectrum\n\n");
  std::printf("| model | method | d | steps (plain) | plain solve | spectrum, same steps | ratio | steps with "
              "the tangents' error control | ratio |\n|---|---|---|---|---|---|---|---|---|\n");
  cost_row<models::double_pendulum>("double_pendulum", 100.0, options(method_kind::bdf, formulation::ggl, 1e-8), 0.0);
  cost_row<models::double_pendulum>("double_pendulum", 100.0, options(method_kind::radau5, formulation::index3, 1e-8),
                                    0.0);
  cost_row<models::andrews>("andrews", 0.03, options(method_kind::bdf, formulation::ggl, 1e-6), 0.0);
  cost_row<models::andrews>("andrews", 0.03, options(method_kind::radau5, formulation::index3, 1e-6), 0.0);
}

void section_pendulum() {
  using Model = models::pendulum;
  const start_point<Model> s;
  std::printf("\n### Pendulum (integrable, d = 2), t = 1000\n\n| method | l1 | l2 | steps | wall |\n|---|---|---|---|---|\n");
  for (const solver_options& opt :
       {options(method_kind::bdf, formulation::ggl, 1e-8), options(method_kind::radau5, formulation::index3, 1e-8)}) {
    const auto start = clock_type::now();
    const auto r = lyapunov_spectrum<Model>(s.p.data(), s.q0, s.v0, 0.0, 1000.0, opt, lyapunov_options{});
    if (r.status != member_status::success) {
      std::printf("| %s: status %d %s |\n", method_name(opt.method), int(r.status), r.message.c_str());
      continue;
    }
    std::printf("| %s on %s | %.5f | %.5f | %ld | %.2f s |\n", method_name(opt.method), formulation_name(opt.form),
                r.exponents[0], r.exponents[1], r.counters.steps, seconds_since(start));
  }
}

// The QR l1 of `members` chaotic double pendulums (theta1 + 1e-6 i) at t = T; spectra[i] gets all four.
std::vector<double> chaotic_l1(int members, double T, const solver_options& opt, double renormalize,
                               std::vector<std::vector<double>>* spectra, double* wall) {
  using Model = models::double_pendulum;
  std::vector<double> l1;
  const auto start = clock_type::now();
  for (int i = 0; i < members; ++i) {
    const start_point<Model> s({1e-6 * i});
    lyapunov_options lopt;
    lopt.renormalize = renormalize;
    lopt.transient = 20.0;
    const auto r = lyapunov_spectrum<Model>(s.p.data(), s.q0, s.v0, 0.0, T, opt, lopt);
    if (r.status != member_status::success) {
      std::printf("<!-- member %d: status %d %s -->\n", i, int(r.status), r.message.c_str());
      continue;
    }
    l1.push_back(r.exponents[0]);
    if (spectra) spectra->push_back(r.exponents);
  }
  *wall = seconds_since(start);
  return l1;
}

// The reference QR l1 (BDF on ggl, rtol 1e-8, renormalize 1) of the chaotic members, computed once.
std::vector<double> reference_l1;

void section_chaotic(int members, double T) {
  using Model = models::double_pendulum;
  const solver_options opt = options(method_kind::bdf, formulation::ggl, 1e-8);
  std::vector<std::vector<double>> spectra;
  double wall = 0.0;
  const std::vector<double> qr = chaotic_l1(members, T, opt, 1.0, &spectra, &wall);
  reference_l1 = qr;
  std::vector<double> clone;
  const auto start = clock_type::now();
  for (int i = 0; i < members; ++i) {
    const start_point<Model> s({1e-6 * i});
    lyapunov_options lopt;
    lopt.transient = 20.0;
    const auto c = clone_largest_exponent<Model>(s.p.data(), s.q0, s.v0, 0.0, T, opt, lopt, 1e-6);
    if (c.status == member_status::success) clone.push_back(c.exponent);
  }
  const double clone_wall = seconds_since(start);
  std::printf("\n### Chaotic double pendulum, %d members (theta1 + 1e-6 i), t = %g, transient 20, BDF on ggl rtol 1e-8\n\n",
              members, T);
  std::printf("| member | l1 | l2 | l3 | l4 | \\|l2\\| / l1 | \\|l3\\| / l1 | \\|l1 + l4\\| / l1 |\n|---|---|---|---|---|---|---|---|\n");
  double worst = 0.0;
  for (std::size_t i = 0; i < spectra.size(); ++i) {
    const auto& l = spectra[i];
    const double a = std::abs(l[1]) / l[0], b = std::abs(l[2]) / l[0], c = std::abs(l[0] + l[3]) / l[0];
    worst = std::max({worst, a, b, c});
    std::printf("| %zu | %.4f | %.5f | %.5f | %.4f | %.4f | %.4f | %.4f |\n", i, l[0], l[1], l[2], l[3], a, b, c);
  }
  const auto sq = statistics(qr), sc = statistics(clone);
  std::printf("\nHamiltonian form: largest of |l2|, |l3|, |l1 + l4| over l1 across members: %.4f (required: < 0.02).\n\n", worst);
  std::printf("| estimate | members | mean l1 | standard error | spread | wall |\n|---|---|---|---|---|---|\n");
  std::printf("| discrete QR | %zu | %.4f | %.4f | %.4f | %.1f s |\n", qr.size(), sq.mean, sq.standard_error, sq.spread, wall);
  std::printf("| clone (separation 1e-6) | %zu | %.4f | %.4f | %.4f | %.1f s |\n", clone.size(), sc.mean, sc.standard_error,
              sc.spread, clone_wall);
  std::printf("\nclone / QR - 1 = %+.4f (required: within 3 %%)\n", sc.mean / sq.mean - 1.0);
}

void section_variants(int members, double T, bool tolerance_only) {
  double wall = 0.0;
  if (reference_l1.empty())
    reference_l1 = chaotic_l1(members, T, options(method_kind::bdf, formulation::ggl, 1e-8), 1.0, nullptr, &wall);
  const auto ref = statistics(reference_l1);
  std::printf("\n### Variants, %d members, t = %g (mean QR l1 against BDF on ggl, rtol 1e-8, renormalize 1: %.4f +- %.4f)\n\n",
              members, T, ref.mean, ref.standard_error);
  std::printf("| variant | mean l1 | standard error | relative to the reference | required bound | wall |\n|---|---|---|---|---|---|\n");
  struct variant {
    const char* name;
    solver_options opt;
    double renormalize;
    const char* bound;
  };
  const variant variants[] = {
      {"Radau IIA 5 on index3, rtol 1e-8", options(method_kind::radau5, formulation::index3, 1e-8), 1.0, "2 %"},
      {"renormalize = 0.1", options(method_kind::bdf, formulation::ggl, 1e-8), 0.1, "2 %"},
      {"rtol 1e-10", options(method_kind::bdf, formulation::ggl, 1e-10), 1.0, "1.5 %"},
  };
  for (const variant& v : variants) {
    if (tolerance_only != (v.opt.rtol < 1e-9)) continue;
    const auto st = statistics(chaotic_l1(members, T, v.opt, v.renormalize, nullptr, &wall));
    std::printf("| %s | %.4f | %.4f | %+.4f | %s | %.1f s |\n", v.name, st.mean, st.standard_error, st.mean / ref.mean - 1.0,
                v.bound, wall);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int members = argc > 1 ? std::atoi(argv[1]) : 16;
  const double T = argc > 2 ? std::atof(argv[2]) : 2000.0;
  const std::string sections = argc > 3 ? argv[3] : "cost,pendulum,chaotic,variants,tolerance";
  std::printf("<!-- lyapunov_long %d %g %s -->\n", members, T, sections.c_str());
  if (sections.find("cost") != std::string::npos) section_cost();
  std::fflush(stdout);
  if (sections.find("pendulum") != std::string::npos) section_pendulum();
  std::fflush(stdout);
  if (sections.find("chaotic") != std::string::npos) section_chaotic(members, T);
  std::fflush(stdout);
  if (sections.find("variants") != std::string::npos) section_variants(members, T, false);
  std::fflush(stdout);
  if (sections.find("tolerance") != std::string::npos) section_variants(members, T, true);
  return 0;
}
