// host/engine/lyapunov_batch.hpp — Lyapunov runs of many members through an engine's lyapunov
// (lyapunov_spectrum, or clone_largest_exponent for method 1), in parallel on the host.
//
// One definition for every caller that must give the same numbers: the `lockstep` command runs a
// study's [lyapunov] section chunk by chunk through it (host/cli/run_study_impl.hpp), and the Python
// module's lyapunov() its members (python/src/module.cpp), so a member's exponents from Python are
// bitwise those of `lockstep run`. Each member's run depends on its inputs only and writes only its
// own slots, so the values are the same for any thread count and member order. The members run on the
// CPU cores' thread team (kernels/omp/thread_team.hpp): include it only in programs that link
// lockstep::omp (the command and the Python module do), which is why this is host code and not an
// installed header.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "host/engine/member_batch.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/lyapunov/spectrum.hpp"

namespace lockstep {

// A batch's Lyapunov results, member-major, reused from batch to batch.
struct lyapunov_batch {
  std::vector<member_status> status;
  std::vector<double> exponents, t_start, t_end, history_t, history;
  std::vector<std::int64_t> renormalizations, steps;
  std::vector<std::string> messages;  // why a member's options were refused (first one reported)

  // `members` members with p exponents and h running estimates each, as the driver starts them:
  // running, NaN values, no renormalizations, steps -1 (what an unfinished member is written with).
  void start(std::size_t members, std::size_t p, std::size_t h) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    status.assign(members, member_status::running);
    exponents.assign(members * p, nan);
    t_start.assign(members, nan);
    t_end.assign(members, nan);
    renormalizations.assign(members, 0);
    steps.assign(members, -1);
    history_t.assign(members * h, nan);
    history.assign(members * h * p, nan);
    messages.assign(members, std::string());
  }
};

// The engine's request with the drivers' default tangent error control (lyapunov_options).
// method: 0 discrete QR, 1 clone; metric: 0 mass, 1 euclidean; exponents: p, resolved (not 0).
inline lockstep_lyapunov_request lyapunov_request(int method, int exponents, double renormalize, double transient,
                                                  int metric, double separation, long history_capacity) {
  const lyapunov_options defaults;
  lockstep_lyapunov_request r{};
  r.header = abi_header_for<lockstep_lyapunov_request>();
  r.method = method;
  r.exponents = exponents;
  r.renormalize = renormalize;
  r.transient = transient;
  r.metric = metric;
  r.tangent_error_control = defaults.tangent_error_control ? 1 : 0;
  r.separation = separation;
  r.history_capacity = history_capacity;
  return r;
}

// Where batch members come from: member g's params, q0 and v0 at [g * n_params] and [g * n].
struct lyapunov_inputs {
  const double* params;
  const double* q0;
  const double* v0;
  double t0, t1;
  const solver_options* options;
};

// Members [first, first + count) of `in` into slots [0, count) of b, on at most `threads` threads of the
// team (run_member_batch: on_done and stop as there; members that do not start keep status running). A
// member whose run throws (out of memory) fails alone with invalid_input.
inline void run_lyapunov_batch(const engine& model, const lyapunov_inputs& in, const lockstep_lyapunov_request& request,
                               long first, long count, int threads, lyapunov_batch& b,
                               const std::function<void(long finished)>& on_done = {},
                               const std::function<bool()>& stop = {}) {
  const auto N = static_cast<std::size_t>(count), p = static_cast<std::size_t>(request.exponents),
             H = static_cast<std::size_t>(request.history_capacity);
  b.start(N, p, H);
  const bool clone = request.method == 1;
  const int n = model.n(), n_params = model.n_params();
  const auto solve = [&](long i) {
    const long g = first + i;
    const auto s = static_cast<std::size_t>(i);
    std::vector<double> exponents(std::max<std::size_t>(p, 1), std::numeric_limits<double>::quiet_NaN());
    member_counters counters;
    lockstep_lyapunov_output out{};
    out.header = abi_header_for<lockstep_lyapunov_output>();
    out.exponents = exponents.data();
    // The running estimates that fit (at most H) go straight into the member's slots.
    out.history_t = H > 0 ? &b.history_t[s * H] : nullptr;
    out.history = H > 0 ? &b.history[s * H * p] : nullptr;
    out.counters = &counters;
    model.lyapunov(in.params + g * n_params, in.q0 + g * n, in.v0 + g * n, in.t0, in.t1, *in.options, request, out);
    const auto st = static_cast<member_status>(out.status);
    b.status[s] = st;
    b.messages[s] = out.message;
    b.renormalizations[s] = out.renormalizations;
    // How far the run got: with t_start, the time its estimate covers (a run stopped by max_steps
    // keeps the estimate it reached).
    b.t_end[s] = out.t_final;
    if (!clone) {
      b.t_start[s] = out.t_start;
      b.steps[s] = counters.steps;
      // A run stopped by max_steps keeps its status and reports the estimate it reached (its message
      // says over which time); a failed one has none.
      if (out.exponent_count == static_cast<long>(p))
        for (std::size_t j = 0; j < p; ++j) b.exponents[s * p + j] = exponents[j];
    } else {
      // The clone estimate does not say where its averages started: t0 without a transient, else the
      // first point t0 + i renormalize (i >= 1; t1 at the latest) of its grid at or after
      // t0 + transient, computed as clone_largest_exponent computes its grid.
      double start = in.t0;
      if (request.transient > 0.0)
        for (long k = 1;; ++k) {
          start = std::min(in.t0 + static_cast<double>(k) * request.renormalize, in.t1);
          if (start >= in.t0 + request.transient || start >= in.t1) break;
        }
      if (out.history_count > 0) b.t_start[s] = start;
      if (st == member_status::success) b.exponents[s] = exponents[0];
    }
  };
  run_member_batch(count, threads, on_done, stop, solve, [&](long i, const char* what) {
    b.status[static_cast<std::size_t>(i)] = member_status::invalid_input;
    b.messages[static_cast<std::size_t>(i)] = what;
  });
}

}  // namespace lockstep
