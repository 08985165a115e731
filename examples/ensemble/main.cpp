// An ensemble of double pendulums, solved on all CPU cores with the C++ API.
//
// 200 copies of the same double pendulum start from slightly different first-rod angles theta1 in
// [1.9, 2.1] rad (everything else at the model's defaults). Each member is integrated independently,
// with its own step sizes and error control, from t0 = 0 to t1 = 1 s; the state is saved at t = 0.5
// and t = 1. The program prints how many members succeeded and the mean horizontal position x2 of the
// second bob at t1, and exits with 0 only if every member reached t1.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "lockstep/lockstep.hpp"

int main() {
  using Model = lockstep::models::double_pendulum;  // q = (x1, y1, x2, y2), Cartesian
  constexpr long members = 200;

  // Every member starts with the model's default parameters (masses, rod lengths, g) and inputs.
  auto e = lockstep::ensemble<Model>::with_defaults(members);

  // The initial state is given by the model's named inputs (theta1, theta2, omega1, omega2), which
  // set_initial_inputs maps to a consistent (q0, v0). Only theta1 varies across the ensemble.
  for (long i = 0; i < members; ++i) {
    double inputs[Model::n_inputs];
    for (int j = 0; j < Model::n_inputs; ++j) inputs[j] = Model::inputs[j].default_value;
    inputs[0] = 1.9 + 0.2 * static_cast<double>(i) / static_cast<double>(members - 1);  // theta1
    e.set_initial_inputs(i, inputs);
  }

  e.t0 = 0.0;
  e.t1 = 1.0;
  // Save times are served by dense output: they never shorten a step, so a member's trajectory does
  // not depend on them.
  e.save_times = {0.5, 1.0};
  e.options.rtol = 1e-8;
  e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-8;

  // The omp backend runs the members on all cores (set run.threads to limit them); it gives results
  // bitwise identical to backend::serial.
  lockstep::run_options run;
  run.where = lockstep::backend::omp;

  lockstep::ensemble_result<Model> r;
  try {
    r = lockstep::solve_ensemble(e, run);
  } catch (const std::exception& ex) {  // invalid ensemble or an unavailable backend
    std::fprintf(stderr, "lockstep_ensemble_example: %s\n", ex.what());
    return EXIT_FAILURE;
  }

  // Each member has its own status; a failing member never stops the others.
  long succeeded = 0;
  double sum_x2 = 0.0;
  const int last_save = r.save_count - 1;  // the save at t1
  for (long i = 0; i < r.members; ++i) {
    if (r.status[i] != lockstep::member_status::success) {
      std::fprintf(stderr, "member %ld: %s\n", i, lockstep::status_name(r.status[i]));
      continue;
    }
    ++succeeded;
    sum_x2 += r.q(i, last_save, 2);  // q index 2 is x2
  }

  std::printf("double pendulum ensemble, backend %s: %ld of %ld members succeeded in %.3f s\n",
              lockstep::backend_name(run.where), succeeded, r.members, r.seconds);
  if (succeeded > 0)
    std::printf("mean x2 at t1 = %g: %.6f\n", e.t1, sum_x2 / static_cast<double>(succeeded));
  return succeeded == r.members ? EXIT_SUCCESS : EXIT_FAILURE;
}
