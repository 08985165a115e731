// host/model_files/model_doctor.hpp — `lockstep check MODEL`: what is wrong with a model, before a long
// study finds out.
//
// At the model's default parameters and initial inputs it examines, through the engine's own
// evaluations (the automatic-differentiation values the solver uses):
//
//   finite       q0, v0 and M, Q, Phi, G, Phi_t (and A, A v + a) at them: no NaN or Inf
//   initial      consistent initialization (stepper/initialize.hpp) succeeds, and |Phi(q0)|,
//                |G v0 + Phi_t| (and |A v0 + a|) after it
//   mass         M symmetric and positive definite (Cholesky), with its condition number
//   rank         the rank of G and of [G; A]; a row that is (nearly) a combination of the rows before
//                it is named, with those rows — redundant constraints make the saddle-point matrix
//                singular (Haug 1989, 3.4; Garcia de Jalon & Bayo 1994, 3.3)
//   derivatives  G, Phi_t and A against central differences of Phi and of A v + a
//   solve        a short solve from t = 0 with the default solver, its status and steps
//
// Each defect is one plain sentence; the command exits 1 when there is any.
#pragma once

#include <string>
#include <vector>

#include "lockstep/engine/engine.hpp"

namespace lockstep::model_files {

struct doctor_settings {
  double t1 = 1.0;  // the short solve runs over [0, t1]
};

struct doctor_finding {
  bool defect = false;
  std::string topic;     // finite, initial, mass, rank, derivatives, solve
  std::string sentence;  // one plain sentence
};

struct doctor_report {
  std::vector<doctor_finding> findings;
  int defects() const {
    int count = 0;
    for (const doctor_finding& f : findings) count += f.defect ? 1 : 0;
    return count;
  }
};

doctor_report examine_model(const engine& model, const doctor_settings& settings = {});

}  // namespace lockstep::model_files
