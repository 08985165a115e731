// host/model_files/model_doctor.hpp — `lockstep check MODEL`: what is wrong with a model, before a long
// study finds out.
//
// At the model's default parameters and initial inputs it examines, through the engine's own
// evaluations (the automatic-differentiation values the solver uses):
//
//   finite       q0, v0 and M, Q, Phi, G, Phi_t (and A, A v + a) at them: no NaN or Inf
//   mass         M symmetric and positive definite, with its condition number
//   initial      consistent initialization (method/initialize.hpp) succeeds, and |Phi(q0)|,
//                |G v0 + Phi_t| (and |A v0 + a|) after it; its corrections against the default
//                tolerance (a warning beyond atol + rtol |x0|, rtol = atol = 1e-6) and the gross
//                threshold of init "auto" (a defect: method/options.hpp)
//   rank         the rank of G and of [G; A]; a row that is (nearly) a combination of the rows before
//                it is named, with those rows — redundant constraints make the saddle-point matrix
//                singular (Haug 1989, 3.4; Garcia de Jalon & Bayo 1994, 3.3). An exactly redundant
//                row is no defect (the solver leaves it out: formulation/constraint_rank.hpp); a
//                nearly redundant one is, and so is a zero row: a constraint without gradient at the
//                initial state (a singular configuration), which the solver could only drop, and
//                whose dropped row then fails to hold (stepper/member.hpp, dropped_rows_hold)
//   mobility     for a mechanism file: the Grubler-Kutzbach count n - m against the n - rank(G) degrees
//                of freedom the geometry gives; where these differ, the rank is examined again at a
//                nearby assembled configuration, which tells rows redundant along the motion (as in
//                Bricard's linkage: named, handled by the solver) from a singular assembly (a warning)
//   derivatives  G, Phi_t and A against central differences of Phi and of A v + a
//   solve        a short solve from t = 0 with the default solver, its status and steps
//
// M comes first: consistent initialization factors it (by Cholesky, for either metric:
// formulation/projection.hpp) and every solve starts with that initialization, so where M is not
// positive definite both are reported as not run, for that reason, rather than as failures of their
// own; rank and derivatives are then examined at the initial state as given.
//
// Each finding is one plain sentence: ok, a defect, a warning (not a defect: worth reading before a
// study) or a check not run; the command exits 1 when any is a defect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockstep/engine/engine.hpp"

namespace lockstep::model_files {

struct doctor_settings {
  double t1 = 1.0;  // the short solve runs over [0, t1]
  // What a model file says of its constraint rows (model_compiler.hpp, describe_model_file_rows): a
  // name per row of Phi, then of A, used where the findings name rows ("Phi[3] (joint D: ...)"); and a
  // mechanism file's Grubler-Kutzbach count, which enables the mobility check.
  std::vector<std::string> row_names;
  std::optional<int> mobility_count;
  int driven_rows = 0;  // of the rows, the drives (a mechanism moved by drives alone has no freedom left)
};

enum class finding_kind : int {
  ok = 0,
  defect = 1,
  not_run = 2,  // a check that could not run because of a defect found before it (the sentence says which)
  warning = 3,  // not a defect, but worth reading before a study (the sentence says why)
};

struct doctor_finding {
  finding_kind kind = finding_kind::ok;
  std::string topic;     // finite, mass, initial, rank, derivatives, solve
  std::string sentence;  // one plain sentence
  bool defect() const { return kind == finding_kind::defect; }
};

struct doctor_report {
  std::vector<doctor_finding> findings;
  int defects() const {
    int count = 0;
    for (const doctor_finding& f : findings) count += f.defect() ? 1 : 0;
    return count;
  }
  int warnings() const {
    int count = 0;
    for (const doctor_finding& f : findings) count += f.kind == finding_kind::warning ? 1 : 0;
    return count;
  }
};

doctor_report examine_model(const engine& model, const doctor_settings& settings = {});

}  // namespace lockstep::model_files
