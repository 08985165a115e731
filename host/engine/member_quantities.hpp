// host/engine/member_quantities.hpp — the values results hold per member and save time: the saved
// state (q, v, lambda, mu, nu) and after it the model's derived quantities (lockstep/stepper/quantities.hpp),
// evaluated from that state by the engine after the solve.
//
// Each member's quantities depend on its own saved states and parameters only, and each member writes
// its own slots, so they are the same for any thread count and chunking. Include this only in programs
// that link lockstep::omp (kernels/omp/thread_team.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "host/engine/member_batch.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep {

// Values per member and save time: the state's ny, then the n_quantities quantities.
inline int values_per_save(const engine& model) { return model.ny() + model.n_quantities(); }

// The values of `count` members from their saved states y [count][S][ny] at the save times t [S] and
// their parameters params [count][n_params], into values [count][S][ny + n_quantities], on `threads`
// threads. A save time whose state is not finite or whose acceleration-level system is singular has
// NaN quantities (stepper/quantities.hpp); an engine call that fails (out of memory, an engine without
// quantities_at) throws engine_error after the batch, naming the first member it failed for.
inline void member_values(const engine& model, const std::vector<double>& t, long count, const double* y,
                          const double* params, int threads, std::vector<double>& values) {
  const std::size_t S = t.size(), Y = static_cast<std::size_t>(model.ny()),
                    Z = static_cast<std::size_t>(model.n_quantities()), W = Y + Z;
  const std::size_t P = static_cast<std::size_t>(model.n_params());
  values.assign(static_cast<std::size_t>(count) * S * W, 0.0);
  std::mutex failure_lock;
  long failed = -1;
  std::string why;
  run_member_batch(
      count, threads, {}, {},
      [&](long i) {
        const std::size_t member = static_cast<std::size_t>(i);
        const double* from = y + member * S * Y;
        double* to = values.data() + member * S * W;
        std::vector<double> z(S * Z);
        if (Z > 0) model.quantities_at(params + member * P, static_cast<long>(S), t.data(), from, z.data());
        for (std::size_t s = 0; s < S; ++s) {
          std::copy(from + s * Y, from + (s + 1) * Y, to + s * W);
          std::copy(z.begin() + static_cast<std::ptrdiff_t>(s * Z), z.begin() + static_cast<std::ptrdiff_t>((s + 1) * Z),
                    to + s * W + Y);
        }
      },
      [&](long i, const char* what) {
        const std::lock_guard<std::mutex> hold(failure_lock);
        if (failed < 0 || i < failed) {
          failed = i;
          why = what;
        }
      });
  if (failed >= 0)
    throw engine_error("model " + std::string(model.name()) + ": the derived quantities of member " +
                       std::to_string(failed) + " of the chunk could not be evaluated: " + why);
}

}  // namespace lockstep
