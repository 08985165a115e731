// host/model_files/model_doctor.cpp — examine_model (model_doctor.hpp).
#include "host/model_files/model_doctor.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "lockstep/core/status.hpp"
#include "lockstep/formulation/constraint_rank.hpp"
#include "lockstep/ensemble.hpp"

namespace lockstep::model_files {

namespace {

using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using vector = Eigen::VectorXd;

constexpr double eps = std::numeric_limits<double>::epsilon();

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

// The model's equations at one state, from the engine.
struct equations {
  matrix M, G, A;
  vector Q, phi, phi_t, velocity_residual;
};

equations evaluate(const engine& model, const std::vector<double>& p, double t, const vector& q, const vector& v) {
  const int n = model.n(), m = model.m(), k = model.k();
  equations e{matrix::Zero(n, n), matrix::Zero(m, n), matrix::Zero(k, n), vector::Zero(n), vector::Zero(m),
              vector::Zero(m), vector::Zero(k)};
  lockstep_model_values out{};
  out.header = abi_header_for<lockstep_model_values>();
  out.mass = e.M.data();
  out.force = e.Q.data();
  out.constraint = m > 0 ? e.phi.data() : nullptr;
  out.constraint_jacobian = m > 0 ? e.G.data() : nullptr;
  out.constraint_rate = m > 0 ? e.phi_t.data() : nullptr;
  out.velocity_constraint = k > 0 ? e.velocity_residual.data() : nullptr;
  out.velocity_jacobian = k > 0 ? e.A.data() : nullptr;
  model.evaluate(p.data(), t, q.data(), v.data(), out);
  return e;
}

bool finite(const matrix& x) { return x.size() == 0 || x.allFinite(); }
bool finite(const vector& x) { return x.size() == 0 || x.allFinite(); }
double max_abs(const matrix& x) { return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff(); }
double max_abs(const vector& x) { return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff(); }

// The rows of J that are dependent or nearly so, each with the earlier rows that combine to it. The
// decision is the solver's (lockstep/formulation/constraint_rank.hpp: unit rows, Gram-Schmidt in
// the model's order, dependent at a distance <= 1e-9 from the span of the rows before); a row the
// solver keeps but that lies within `near` of that span is reported as nearly redundant (the
// saddle-point matrix is then ill-conditioned).
struct dependent_row {
  int row;
  bool exact;  // dependent by the solver's decision
  bool zero;   // the row is zero: dependent on nothing, the constraint has no gradient here
  double distance;
  std::vector<int> combination;
};

std::vector<dependent_row> dependent_rows(const matrix& J, double near) {
  std::vector<dependent_row> found;
  const int rows = static_cast<int>(J.rows()), cols = static_cast<int>(J.cols());
  if (rows == 0) return found;
  std::vector<double> basis(static_cast<std::size_t>(rows) * cols), distance(rows);
  const constraint_rank_result decision = constraint_rank(J.data(), rows, cols, cols, basis.data(), distance.data());
  std::vector<int> independent;
  for (int i = 0; i < rows; ++i) {
    const bool dependent = ((decision.dependent >> i) & 1u) != 0;
    if (dependent || distance[i] <= near) {
      dependent_row d{i, dependent, J.row(i).isZero(0.0), distance[i], {}};
      if (!independent.empty()) {
        matrix B(cols, independent.size());
        for (std::size_t j = 0; j < independent.size(); ++j) B.col(j) = J.row(independent[j]).transpose();
        const vector c = B.completeOrthogonalDecomposition().solve(J.row(i).transpose());
        const double largest = c.cwiseAbs().maxCoeff();
        for (std::size_t j = 0; j < independent.size(); ++j)
          if (std::abs(c(j)) > 1e-8 * largest) d.combination.push_back(independent[j]);
      }
      found.push_back(d);
    }
    if (!dependent) independent.push_back(i);
  }
  return found;
}

}  // namespace

// The rank of G as the solver decides it (formulation/constraint_rank.hpp).
static long decided_rank(const matrix& G) {
  const std::vector<dependent_row> dependent = dependent_rows(G, 1e-8);
  return G.rows() - std::count_if(dependent.begin(), dependent.end(), [](const dependent_row& r) { return r.exact; });
}

// The mobility check (model_doctor.hpp): the Grubler-Kutzbach count n - m against n - rank(G) at the
// start, and where they differ, the rank again at a configuration reached by a small step along the
// motion (a direction in G's null space) and projected back onto Phi = 0 by Gauss-Newton steps of least
// norm: a deficiency that persists is redundancy along the motion (Bricard's linkage; Haug 1989, 3.4),
// one that vanishes is a singular assembly at the start.
template <class Ok, class Defect, class Add>
static void examine_mobility(const engine& model, const std::vector<double>& p, double t0, const vector& q0,
                             const equations& e, int count, int driven_rows, Ok& ok, Defect& defect, Add& add) {
  const int n = model.n(), m = model.m();
  const long rank = decided_rank(e.G);
  const long freedom = n - rank;
  const std::string counted = "the Grubler-Kutzbach count gives n - m = " + std::to_string(n) + " - " +
                              std::to_string(m) + " = " + std::to_string(count) + " degree" + (count == 1 ? "" : "s") +
                              " of freedom";
  if (freedom == 0 && count == 0 && driven_rows > 0) {
    ok("mobility", counted + ", as the rank of G does: its " + std::to_string(driven_rows) + " drive" +
                       (driven_rows == 1 ? "" : "s") + " prescribe" + (driven_rows == 1 ? "s" : "") +
                       " the whole motion (a kinematically driven mechanism).");
    return;
  }
  if (freedom == 0) {
    defect("mobility", counted + ", and the rank of G, " + std::to_string(rank) + ", gives none at the initial "
                           "state: the mechanism cannot move.");
    return;
  }
  if (freedom == count) {
    ok("mobility", counted + ", as the rank of G does at the initial state.");
    return;
  }
  const std::string here = "the rank of G, " + std::to_string(rank) + ", gives " + std::to_string(freedom);
  // A step along the motion, projected back onto the constraints.
  const Eigen::JacobiSVD<matrix> svd(e.G, Eigen::ComputeFullV);
  const vector direction = svd.matrixV().col(n - 1);  // a unit vector of G's null space
  // A step of 1e-3 along a unit direction: a milliradian or a millimetre, near enough to stay on the
  // assembly's branch, far enough for a rank lost only at this configuration to come back.
  vector q = q0 + 1e-3 * direction;
  equations there = evaluate(model, p, t0, q, vector::Zero(n));
  for (int iteration = 0; iteration < 50 && there.phi.norm() > 1e-13 * (1.0 + q.norm()); ++iteration) {
    q -= there.G.completeOrthogonalDecomposition().solve(there.phi);
    there = evaluate(model, p, t0, q, vector::Zero(n));
  }
  const long rank_there = decided_rank(there.G);
  if (!(there.phi.norm() <= 1e-10 * (1.0 + q.norm()))) {
    add(finding_kind::warning, "mobility",
        counted + "; " + here + " at the initial state, and no assembled configuration near it could be "
        "found to tell redundant joints from a singular assembly (|Phi| = " + number(there.phi.norm()) + " after 50 steps).");
  } else if (rank_there == rank) {
    ok("mobility", counted + "; " + here + ", here and at a configuration along the motion: " +
                       std::to_string(m - rank) + " constraint row" + (m - rank == 1 ? " is" : "s are") +
                       " redundant along the motion (named under rank), which the solver leaves out.");
  } else {
    add(finding_kind::warning, "mobility",
        counted + "; " + here + " at the initial state, but " + std::to_string(n - rank_there) +
            " at a configuration along the motion: the start is a singular assembly (a dead point or a "
            "bifurcation), where the rows named under rank are dependent only there; start away from it.");
  }
}

doctor_report examine_model(const engine& model, const doctor_settings& settings) {
  doctor_report report;
  auto add = [&](finding_kind kind, std::string topic, std::string sentence) {
    report.findings.push_back({kind, std::move(topic), std::move(sentence)});
  };
  auto ok = [&](std::string topic, std::string sentence) { add(finding_kind::ok, std::move(topic), std::move(sentence)); };
  auto defect = [&](std::string topic, std::string sentence) { add(finding_kind::defect, std::move(topic), std::move(sentence)); };

  const int n = model.n(), m = model.m(), k = model.k();
  std::vector<double> p, inputs;
  for (const auto& v : model.params()) p.push_back(v.default_value);
  for (const auto& v : model.inputs()) inputs.push_back(v.default_value);
  vector q0 = vector::Zero(n), v0 = vector::Zero(n);
  model.initial_state(p.data(), inputs.data(), q0.data(), v0.data());
  const double t0 = 0.0;

  // ---- finite ----
  const equations at_start = evaluate(model, p, t0, q0, v0);
  std::vector<std::string> not_finite;
  if (!finite(q0) || !finite(v0)) not_finite.push_back("the initial state (q0, v0)");
  if (!finite(at_start.M)) not_finite.push_back("M");
  if (!finite(at_start.Q)) not_finite.push_back("Q");
  if (!finite(at_start.phi)) not_finite.push_back("Phi");
  if (!finite(at_start.G)) not_finite.push_back("G = dPhi/dq");
  if (!finite(at_start.phi_t)) not_finite.push_back("Phi_t");
  if (!finite(at_start.velocity_residual) || !finite(at_start.A)) not_finite.push_back("A v + a");
  if (!not_finite.empty()) {
    std::string what;
    for (std::size_t i = 0; i < not_finite.size(); ++i) what += (i ? ", " : "") + not_finite[i];
    defect("finite", "NaN or Inf at the default initial state in " + what + ".");
    return report;  // nothing below means anything with NaN in it
  }
  ok("finite", "q0, v0, M, Q, Phi and their derivatives are finite at the default initial state.");

  // ---- mass matrix, at the initial state as given ----
  bool mass_positive_definite = false;
  {
    const matrix& M = at_start.M;
    const double mass_scale = max_abs(M);
    const double asymmetry = max_abs(matrix(M - M.transpose()));
    if (!(mass_scale > 0.0)) {
      defect("mass", "the mass matrix M is zero.");
    } else if (asymmetry > 1e-12 * mass_scale) {
      defect("mass", "the mass matrix M is not symmetric: |M - M^T| = " + number(asymmetry) + " against |M| = " +
                         number(mass_scale) + ".");
      mass_positive_definite = Eigen::LLT<matrix>(M).info() == Eigen::Success;  // what the solver's Cholesky sees
    } else {
      const Eigen::SelfAdjointEigenSolver<matrix> eigen(M, Eigen::EigenvaluesOnly);
      const double smallest = eigen.eigenvalues()(0), largest = eigen.eigenvalues()(n - 1);
      if (!(smallest > n * eps * largest)) {
        // Singular or indefinite M: a massless coordinate is a modelling error, and the solver factors
        // M by Cholesky before anything else (formulation/projection.hpp).
        defect("mass", "the mass matrix M is not positive definite: its smallest eigenvalue is " + number(smallest) +
                           " (largest " + number(largest) + ").");
      } else {
        ok("mass", "M is symmetric positive definite (condition number " + number(largest / smallest) + ").");
        mass_positive_definite = true;
      }
    }
  }

  // ---- consistent initialization ----
  solver_options options;
  options.method = method_kind::radau5;
  options.form = formulation::index3;
  // Projected whatever its size: the corrections are judged below, against the default tolerance
  // (rtol = atol = 1e-6) and the gross threshold of init "auto" (method/options.hpp), and the short
  // solve below then runs from the projected start.
  options.init = init_mode::project;
  vector q = vector::Zero(n), v = vector::Zero(n), a = vector::Zero(n), lambda = vector::Zero(m), nu = vector::Zero(k);
  member_counters counters;
  lockstep_initial_values init{};
  init.header = abi_header_for<lockstep_initial_values>();
  init.q = q.data();
  init.v = v.data();
  init.a = a.data();
  init.lambda = m > 0 ? lambda.data() : nullptr;
  init.nu = k > 0 ? nu.data() : nullptr;
  init.counters = &counters;
  if (mass_positive_definite) model.initialize(p.data(), t0, q0.data(), v0.data(), options, init);
  const auto init_status = static_cast<member_status>(init.status);
  if (!mass_positive_definite) {
    add(finding_kind::not_run, "initial",
        "consistent initialization was not run: it factors M by Cholesky (for either metric) and cannot start "
        "without M positive definite (above); rank and derivatives below are at the initial state as given.");
    q = q0;
    v = v0;
  } else if (init_status != member_status::success) {
    defect("initial", std::string("consistent initialization failed (") + status_name(init_status) +
                          "): the default initial state cannot be projected onto the constraints.");
    q = q0;
    v = v0;
  } else {
    const equations e = evaluate(model, p, t0, q, v);
    const double phi = max_abs(e.phi);
    const double rate = m > 0 ? max_abs(vector(e.G * v + e.phi_t)) : 0.0;
    const double nonholonomic = max_abs(e.velocity_residual);
    const double scale = std::max(1.0, max_abs(q));
    std::string sentence = "after consistent initialization |Phi(q0)| = " + number(phi) + ", |G v0 + Phi_t| = " + number(rate);
    if (k > 0) sentence += ", |A v0 + a| = " + number(nonholonomic);
    const double dq = counters.init_q_correction, dv = counters.init_v_correction;
    sentence += " (corrections: " + number(dq) + " in q, " + number(dv) + " in v).";
    // The default tolerance is what a study gets without rtol and atol (solver_options' defaults).
    const solver_options defaults;
    const bool q_beyond = init_correction_beyond_tolerance(dq, max_abs(q0), defaults.atol_q, defaults.rtol);
    const bool v_beyond = init_correction_beyond_tolerance(dv, max_abs(v0), defaults.atol_v, defaults.rtol);
    if (phi > 1e-8 * scale || rate > 1e-8 * std::max(1.0, max_abs(v)) || nonholonomic > 1e-8 * std::max(1.0, max_abs(v))) {
      defect("initial", "the initial state stays off the constraints: " + sentence);
    } else if (init_q_correction_is_gross(dq, max_abs(q0), max_abs(q), defaults)) {
      // Where the start is furthest off: for a mechanism file, the loop that does not close.
      std::string worst;
      if (m > 0) {
        Eigen::Index row = 0;
        const double largest = at_start.phi.cwiseAbs().maxCoeff(&row);
        const bool named = settings.row_names.size() == static_cast<std::size_t>(m + k);
        worst = " The largest residual of the initial positions, " + number(largest) + ", is in Phi[" +
                std::to_string(row) + "]" + (named ? " (" + settings.row_names[static_cast<std::size_t>(row)] + ")" : "") +
                ".";
      }
      defect("initial", "the default initial positions are off the constraints by " + number(dq) + ", more than " +
                            number(100.0 * init_gross_fraction) +
                            " % of the configuration's size: a study refuses such a start (status inconsistent_initial) "
                            "unless it sets init = \"project\"; " + sentence + worst);
    } else if (q_beyond || v_beyond) {
      // Not a defect (a study projects such a start, and its summary says so) but marked: the start
      // the solver runs from is not the one given.
      add(finding_kind::warning, "initial",
          "the default initial state is corrected by more than the default tolerance (atol + rtol |x0| with rtol = "
          "atol = 1e-6) in " + std::string(q_beyond ? (v_beyond ? "q and v" : "q") : "v") + ": " + sentence);
    } else {
      ok("initial", sentence);
    }
  }

  const equations e = evaluate(model, p, t0, q, v);

  // ---- rank of G and [G; A] ----
  constexpr double near = 1e-8;
  // Rows before report_from were reported with G already; they still count in the rank.
  auto examine_rank = [&](const matrix& J, const char* name, int rows_holonomic, int report_from = 0) {
    if (J.rows() > constraint_rank_max_rows) {
      ok("rank", std::string(name) + " has " + std::to_string(J.rows()) + " rows, more than the " +
                     std::to_string(constraint_rank_max_rows) + " whose rank lockstep decides: not examined.");
      return;
    }
    const std::vector<dependent_row> dependent = dependent_rows(J, near);
    if (dependent.empty()) {
      ok("rank", std::string(name) + " has full row rank " + std::to_string(J.rows()) + ".");
      return;
    }
    auto plain_name = [&](int i) {
      return i < rows_holonomic ? "Phi[" + std::to_string(i) + "]" : "A[" + std::to_string(i - rows_holonomic) + "]";
    };
    // With the model file's name of the row where it has one (an equations file's constraint, a
    // mechanism file's joint and condition).
    auto row_name = [&](int i) {
      const bool named = settings.row_names.size() == static_cast<std::size_t>(m + k);
      return named ? plain_name(i) + " (" + settings.row_names[static_cast<std::size_t>(i)] + ")" : plain_name(i);
    };
    const long rank = J.rows() - std::count_if(dependent.begin(), dependent.end(), [](const dependent_row& r) { return r.exact; });
    const std::string rank_of = name + std::string(" has rank ") + std::to_string(rank) + " of " + std::to_string(J.rows());
    for (const dependent_row& d : dependent) {
      if (d.row < report_from) continue;
      if (d.zero) {
        // No gradient at a point is a singular configuration, not redundancy: the constraint is no
        // combination of the others, so the rows the solver keeps do not make it hold once it is
        // dropped, and the member fails (stepper/member.hpp, dropped_rows_hold).
        defect("rank", "constraint " + row_name(d.row) + " has no gradient at the initial state: its row of " + name +
                           " is zero (a singular configuration, such as a rod of length 0 or a mechanism at a dead "
                           "point); " + rank_of + ", and the solver would leave " + plain_name(d.row) +
                           " out as if redundant although it is no combination of the other constraints, so the "
                           "motion would not keep to it.");
        continue;
      }
      std::vector<std::string> parts;  // the rows it combines, by number only: its own name says where
      for (int c : d.combination) parts.push_back(plain_name(c));
      std::string of;
      for (std::size_t i = 0; i < parts.size(); ++i) of += (i ? (i + 1 == parts.size() ? " and " : ", ") : "") + parts[i];
      std::string sentence = "constraint " + row_name(d.row) + " is " + (d.exact ? "redundant" : "nearly redundant") + ": its row of " +
                             name + " is " + (d.exact ? "" : "almost ") + "a combination of " + of +
                             (d.exact ? "" : " (relative distance " + number(d.distance) + ", below 1e-8)") + "; " + rank_of +
                             (d.exact ? "; the solver leaves " + plain_name(d.row) +
                                            " out, monitors its residual and reports its multiplier as 0 "
                                            "(or by the minimum-norm convention)."
                                      : " and the saddle-point matrix is ill-conditioned.");
      // An exactly redundant row is what the solver handles (formulation/constraint_rank.hpp, the same
      // decision): named, not a defect. A nearly redundant one it keeps, and its Newton matrix is
      // ill-conditioned near a singular configuration: a defect of the model or of its configuration.
      if (d.exact) ok("rank", sentence);
      else defect("rank", sentence);
    }
  };
  if (m > 0) examine_rank(e.G, "G = dPhi/dq", m);
  if (settings.mobility_count && m > 0 && m <= constraint_rank_max_rows) examine_mobility(model, p, t0, q, e, *settings.mobility_count, settings.driven_rows, ok, defect,
                     add);
  if (k > 0) {
    matrix GA(m + k, n);
    GA << e.G, e.A;
    if (m > 0) {
      // Only new findings: rows of A dependent on G or on each other.
      const std::vector<dependent_row> dependent =
          GA.rows() <= constraint_rank_max_rows ? dependent_rows(GA, near) : std::vector<dependent_row>{};
      bool any = GA.rows() > constraint_rank_max_rows;  // examine_rank says it is not examined
      for (const dependent_row& d : dependent) any = any || d.row >= m;
      if (any) examine_rank(GA, "[G; A]", m, m);
      else ok("rank", "[G; A] has full row rank " + std::to_string(m + k) + ".");
    } else {
      examine_rank(e.A, "A", 0);
    }
  }

  // ---- automatic differentiation against central differences ----
  {
    double worst = 0.0;
    std::string worst_entry;
    auto compare = [&](double ad, double fd, double scale, const std::string& entry) {
      const double difference = std::abs(ad - fd) / std::max(scale, 1e-300);
      if (difference > worst) {
        worst = difference;
        worst_entry = entry + ": automatic differentiation gives " + number(ad) + ", central differences " + number(fd);
      }
    };
    const double cbrt_eps = std::cbrt(eps);
    // Each column j of a Jacobian J = d r / d x (x = q or v) against (r(x + h e_j) - r(x - h e_j)) / 2h.
    auto check_columns = [&](const matrix& J, bool of_q, auto residual, auto entry_name) {
      if (J.rows() == 0) return;
      const double scale = std::max(1.0, max_abs(J));
      const vector& x = of_q ? q : v;
      for (int j = 0; j < n; ++j) {
        const double h = cbrt_eps * std::max(1.0, std::abs(x(j)));
        vector xp = x, xm = x;
        xp(j) += h;
        xm(j) -= h;
        const vector rp = residual(of_q ? evaluate(model, p, t0, xp, v) : evaluate(model, p, t0, q, xp));
        const vector rm = residual(of_q ? evaluate(model, p, t0, xm, v) : evaluate(model, p, t0, q, xm));
        for (int i = 0; i < J.rows(); ++i) compare(J(i, j), (rp(i) - rm(i)) / (xp(j) - xm(j)), scale, entry_name(i, j));
      }
    };
    // Column j belongs to coordinate j: " (x2)" names it where the model does (its engine says q<j> otherwise).
    const auto coordinate = [&model](int j) {
      const std::string_view name = model.coordinate_names()[static_cast<std::size_t>(j)];
      std::string named;
      if (!name.starts_with('q') || name.substr(1) != std::to_string(j)) named.append(" (").append(name).append(")");
      return named;
    };
    check_columns(e.G, true, [](const equations& x) { return x.phi; }, [&](int i, int j) {
      return "dPhi[" + std::to_string(i) + "]/dq[" + std::to_string(j) + "]" + coordinate(j);
    });
    check_columns(e.A, false, [](const equations& x) { return x.velocity_residual; }, [&](int i, int j) {
      return "A[" + std::to_string(i) + "][" + std::to_string(j) + "]" + coordinate(j);
    });
    if (m > 0) {
      const double ht = cbrt_eps;
      const equations ep = evaluate(model, p, t0 + ht, q, v), em = evaluate(model, p, t0 - ht, q, v);
      for (int i = 0; i < m; ++i)
        compare(e.phi_t(i), (ep.phi(i) - em.phi(i)) / (2 * ht), std::max(1.0, max_abs(e.phi_t)),
                "dPhi[" + std::to_string(i) + "]/dt");
    }
    // Central differences with h = eps^(1/3) carry errors of about eps^(2/3) ~ 4e-11 times the third
    // derivative; a wrong derivative is off by O(1).
    if (worst > 1e-6)
      defect("derivatives", "a derivative disagrees with central differences (relative " + number(worst) + "): " + worst_entry +
                                " — a value that left the dual numbers (a plain double, value_of), a non-smooth function (abs, "
                                "min, max, a branch) or a function the dual numbers do not differentiate correctly.");
    else if (m + k > 0)
      ok("derivatives", std::string(m > 0 ? (k > 0 ? "G, Phi_t and A" : "G and Phi_t") : "A") +
                            " agree with central differences (largest relative difference " +
                            number(worst) + ").");
  }

  // ---- a short solve ----
  if (!mass_positive_definite) {
    add(finding_kind::not_run, "solve",
        "the short solve was not run: it starts with consistent initialization, which needs M positive definite "
        "(above).");
    return report;
  }
  ensemble_problem problem;
  problem.members = 1;
  problem.params = p;
  problem.q0.assign(q0.data(), q0.data() + n);
  problem.v0.assign(v0.data(), v0.data() + n);
  problem.t0 = t0;
  problem.t1 = settings.t1;
  problem.save_times = {settings.t1};
  problem.options = options;
  run_options run;
  run.where = backend::serial;
  const ensemble_solution solution = solve_ensemble(model, problem, run);
  const member_status status = solution.status[0];
  const member_counters& c = solution.counters[0];
  const std::string what = "a solve over [0, " + number(settings.t1) + "] (Radau IIA 5, index 3, rtol 1e-6): " +
                           status_name(status) + " after " + std::to_string(c.steps) + " steps (" +
                           std::to_string(c.rejected_steps) + " rejected)";
  if (status != member_status::success) defect("solve", what + ".");
  else ok("solve", what + ", largest |Phi| " + number(c.max_phi) + ".");
  return report;
}

}  // namespace lockstep::model_files
