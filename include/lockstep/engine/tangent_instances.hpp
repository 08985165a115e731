// lockstep/engine/tangent_instances.hpp — the functions of the tangents that the parts of a model file's
// engine share.
//
// As one_member_instances.hpp for one member, for the tangents: every method's Lyapunov exponents (QR
// and clone) and sensitivities start from the same tangent-space basis and initial tangents and
// linearize the same residual. The part "tangents" instantiates them (LOCKSTEP_TANGENT_INSTANCES(, Model))
// and every tangent part declares them (LOCKSTEP_TANGENT_INSTANCES(extern, Model)).
#pragma once

#include "lockstep/lyapunov/initial_tangents.hpp"
#include "lockstep/lyapunov/linearized_residual.hpp"
#include "lockstep/lyapunov/spectrum.hpp"

// EXTERN: `extern` for the parts that call the functions, nothing for the part that compiles them.
// MODEL: the model's type, fully qualified. The macro is expanded at namespace scope, outside lockstep.
#define LOCKSTEP_TANGENT_INSTANCES(EXTERN, MODEL)                                                                  \
  EXTERN template lockstep::member_status lockstep::tangent_space_basis<MODEL>(                                    \
      double, const lockstep::vec<double, MODEL::n>&, const lockstep::vec<double, MODEL::n>&, const double*,       \
      lockstep::tangent_metric, lockstep::phase_vector<MODEL>*);                                                   \
  EXTERN template lockstep::member_status lockstep::initial_phase_tangent<MODEL>(                                  \
      double, const lockstep::vec<double, MODEL::n>&, const lockstep::vec<double, MODEL::n>&, const double*,       \
      lockstep::projection_metric, const lockstep::vec<double, MODEL::n>&, const lockstep::vec<double, MODEL::n>&, \
      int, lockstep::vec<double, MODEL::n>&, lockstep::vec<double, MODEL::n>&);                                    \
  EXTERN template lockstep::member_status lockstep::initial_full_tangent<MODEL>(                                   \
      double, const lockstep::initial_values<MODEL>&, const double*, const lockstep::vec<double, MODEL::n>&,       \
      const lockstep::vec<double, MODEL::n>&, int, lockstep::state_vector<MODEL>&, lockstep::state_vector<MODEL>&); \
  EXTERN template lockstep::state_vector<MODEL> lockstep::residual_parameter_derivative<MODEL>(                    \
      lockstep::formulation, double, const lockstep::state_vector<MODEL>&, const lockstep::vec<double, MODEL::n>&, \
      const double*, int);                                                                                         \
  EXTERN template lockstep::state_vector<MODEL> lockstep::linearized_residual<MODEL>(                              \
      lockstep::formulation, const lockstep::exact_jacobian<MODEL>&, const lockstep::state_vector<MODEL>&,         \
      const lockstep::state_vector<MODEL>&, const lockstep::state_vector<MODEL>*)
