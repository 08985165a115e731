// lockstep/engine/one_member_instances.hpp — the one-member functions that the parts of a model file's
// engine share.
//
// A model file's engine is compiled in parts, one translation unit each (model_engine.hpp's adders,
// host/engine/engine_sources.hpp), and every method part, its tangents and BDF in SIMD lanes call the
// same large functions of one member on doubles: the Jacobian blocks (evaluate_jacobian), the
// projection onto the constraints (project_state), consistent initial values and the multipliers of an
// output point. Compiled in each part, they were about half of each part's compile time. The part
// "one member" instantiates them (LOCKSTEP_ONE_MEMBER_INSTANCES(, Model)) and every other part declares
// them (LOCKSTEP_ONE_MEMBER_INSTANCES(extern, Model)): one copy, compiled once, with the flags of every
// part, so the results are the same bits as an engine compiled in one unit. The functions are declared
// LOCKSTEP_HD_SHARED (lockstep/core/hd.hpp), not inline, or the declarations would not keep a part from
// compiling its own copy. A built-in engine is one unit and needs neither.
//
// The list names each function with its signature, as an explicit instantiation must: a signature that
// no longer matches its template fails to compile, in every part.
#pragma once

#include <cstdint>

#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"
#include "lockstep/stepper/member.hpp"

// EXTERN: `extern` for the parts that call the functions, nothing for the part that compiles them.
// MODEL: the model's type, fully qualified. The macro is expanded at namespace scope, outside lockstep.
#define LOCKSTEP_ONE_MEMBER_INSTANCES(EXTERN, MODEL)                                                               \
  EXTERN template lockstep::member_status lockstep::evaluate_jacobian<MODEL, lockstep::ad::default_chunk>(         \
      lockstep::formulation, double, const lockstep::state_vector<MODEL>&,                                         \
      const lockstep::vec<double, MODEL::n>&, const double*, lockstep::jacobian_blocks<MODEL>&,                    \
      lockstep::baumgarte_gains, lockstep::mat<double, MODEL::n, MODEL::n>*);                                      \
  EXTERN template lockstep::member_status lockstep::project_state<MODEL>(                                          \
      lockstep::projection_kind, lockstep::formulation, lockstep::projection_metric, double,                       \
      lockstep::state_vector<MODEL>&, const double*, lockstep::projection_sizes&, std::uint64_t);                  \
  EXTERN template lockstep::member_status lockstep::consistent_initialization<MODEL>(                              \
      double, const lockstep::vec<double, MODEL::n>&, const lockstep::vec<double, MODEL::n>&, const double*,       \
      const lockstep::solver_options&, lockstep::initial_values<MODEL>&, lockstep::member_counters&);              \
  EXTERN template lockstep::member_status lockstep::accelerations_and_multipliers<MODEL>(                          \
      double, const lockstep::vec<double, MODEL::n>&, const lockstep::vec<double, MODEL::n>&, const double*,       \
      lockstep::vec<double, MODEL::n>&, lockstep::vec<double, MODEL::m>&, lockstep::vec<double, MODEL::k>&,        \
      std::uint64_t);                                                                                              \
  EXTERN template void lockstep::detail::apply_multiplier_convention<MODEL>(                                       \
      double, lockstep::state_vector<MODEL>&, const double*, const lockstep::solver_options&, std::uint64_t)
