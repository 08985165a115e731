// host/engine/sensitivity_batch.hpp — the final states of many members and their total derivatives by
// the study's varied inputs, through an engine's forward sensitivities (lockstep/lyapunov/sensitivity.hpp),
// in parallel on the host.
//
// A varied input is a parameter p_j or an initial input u_i (an argument of the model's initial_state),
// and either can move the initial state: a rod length that initial_state turns angles into positions
// with. So the derivative of the final state y(t1) by it is the total one,
//
//   dy/dx = [dy/dp_j with (q0, v0) held, for a parameter] + dy/d(q0, v0) . d(q0, v0)/dx,
//
// the first term the engine's parameter sensitivity, the second its sensitivity along the state
// direction d(q0, v0)/dx (taken through consistent initialization, as every member's start is). The
// engine's initial_state is a function of doubles (the engine ABI), so d(q0, v0)/dx is the central
// difference [s(x + h) - s(x - h)] / (2h) with h = eps^(1/3) max(|x|, scale), scale the input
// distribution's spread: exact where initial_state is linear in x, and otherwise within about 1e-10 of
// the derivative relative to its size (truncation h^2 and rounding eps / h balance there; Nocedal &
// Wright 2006, "Numerical Optimization", section 8.1). An input initial_state does not read has no
// state direction, and a parameter and its state direction are two tangents of one solve.
//
// Each member's solve depends on its inputs only and writes only its own slots, so the values are the
// same for any thread count and member order. The members run on the CPU cores' thread team
// (host/engine/member_batch.hpp): include this only in programs that link lockstep::omp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "host/engine/member_batch.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep {

// One varied input: a parameter's or an initial input's index, and the spread of its distribution
// (the difference step's scale where the input's value is near zero).
struct varied_argument {
  bool is_param = false;
  int index = 0;
  double scale = 1.0;
};

// Where batch members come from: member g's parameters [n_params] and initial inputs [n_inputs] (its
// varied values in place), and the varied values themselves [P], written by
// `arguments(g, params, inputs, x)`.
struct sensitivity_inputs {
  std::function<void(long g, double* params, double* inputs, double* x)> arguments;
  std::vector<varied_argument> varied;
  double t0 = 0.0, t1 = 0.0;
  const solver_options* options = nullptr;
};

// A batch's results, member-major, reused from batch to batch.
struct sensitivity_batch {
  std::vector<member_status> status;  // [count] the sensitivity solve's
  std::vector<double> x;              // [count][P] the varied inputs' values
  std::vector<double> y;              // [count][Y] its final state (q, v, lambda, mu, nu)
  std::vector<double> dy;             // [count][P][Y] the final state's derivatives by the P varied inputs
  std::vector<std::string> messages;  // why a member's solve was refused

  void start(std::size_t members, std::size_t P, std::size_t Y) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    status.assign(members, member_status::running);
    x.assign(members * P, nan);
    y.assign(members * Y, nan);
    dy.assign(members * P * Y, nan);
    messages.assign(members, std::string());
  }
};

namespace sensitivity_detail {

// d(q0, v0)/dx of the varied input at `at` of (params, inputs) by a central difference (above); zeros
// where initial_state does not read it. Returns whether any entry is non-zero.
inline bool initial_state_direction(const engine& model, const varied_argument& a, double* params, double* inputs,
                                    std::vector<double>& direction) {
  const int n = model.n();
  double* x = (a.is_param ? params : inputs) + a.index;
  const double value = *x;
  const double h = std::cbrt(std::numeric_limits<double>::epsilon()) * std::max(std::abs(value), a.scale);
  const double up = value + h, down = value - h;
  std::vector<double> q_up(static_cast<std::size_t>(n)), v_up(q_up.size()), q_down(q_up.size()), v_down(q_up.size());
  *x = up;
  model.initial_state(params, inputs, q_up.data(), v_up.data());
  *x = down;
  model.initial_state(params, inputs, q_down.data(), v_down.data());
  *x = value;
  const double width = up - down;  // the step as represented, not 2h
  direction.assign(static_cast<std::size_t>(2 * n), 0.0);
  bool moves = false;
  for (int i = 0; i < n; ++i) {
    direction[i] = (q_up[i] - q_down[i]) / width;
    direction[n + i] = (v_up[i] - v_down[i]) / width;
    moves = moves || direction[i] != 0.0 || direction[n + i] != 0.0;
  }
  return moves;
}

}  // namespace sensitivity_detail

// Members [first, first + count) of `in` into slots [0, count) of b, on at most `threads` threads of the
// team (run_member_batch: on_done and stop as there; members that do not start keep status running). A
// member whose solve throws (out of memory) fails alone with invalid_input.
inline void run_sensitivity_batch(const engine& model, const sensitivity_inputs& in, long first, long count,
                                  int threads, sensitivity_batch& b,
                                  const std::function<void(long finished)>& on_done = {},
                                  const std::function<bool()>& stop = {}) {
  const std::size_t P = in.varied.size(), Y = static_cast<std::size_t>(model.ny());
  b.start(static_cast<std::size_t>(count), P, Y);
  const int n = model.n();
  const auto solve = [&](long i) {
    const auto s = static_cast<std::size_t>(i);
    std::vector<double> params(static_cast<std::size_t>(std::max(model.n_params(), 1))),
        inputs(static_cast<std::size_t>(std::max(model.n_inputs(), 1))), q0(static_cast<std::size_t>(n)),
        v0(q0.size());
    in.arguments(first + i, params.data(), inputs.data(), b.x.data() + s * P);
    model.initial_state(params.data(), inputs.data(), q0.data(), v0.data());
    // The tangents: a state direction for each input that moves (q0, v0), then a parameter for each
    // parameter; direction_slot[v] and parameter_slot[v] are input v's (-1: none).
    std::vector<double> directions, direction;
    std::vector<int> parameters;
    std::vector<int> direction_slot(P, -1), parameter_slot(P, -1);
    int state_directions = 0;
    for (std::size_t v = 0; v < P; ++v)
      if (sensitivity_detail::initial_state_direction(model, in.varied[v], params.data(), inputs.data(), direction)) {
        directions.insert(directions.end(), direction.begin(), direction.end());
        direction_slot[v] = state_directions++;
      }
    for (std::size_t v = 0; v < P; ++v)
      if (in.varied[v].is_param) {
        parameter_slot[v] = state_directions + static_cast<int>(parameters.size());
        parameters.push_back(in.varied[v].index);
      }
    lockstep_sensitivity_request request{};
    request.header = abi_header_for<lockstep_sensitivity_request>();
    request.state_directions = state_directions;
    request.directions = state_directions > 0 ? directions.data() : nullptr;
    request.parameter_count = static_cast<int>(parameters.size());
    request.parameters = parameters.empty() ? nullptr : parameters.data();
    const std::size_t tangents = static_cast<std::size_t>(state_directions) + parameters.size();
    std::vector<double> y(Y, std::numeric_limits<double>::quiet_NaN()),
        sensitivities(std::max<std::size_t>(tangents, 1) * Y, std::numeric_limits<double>::quiet_NaN());
    lockstep_sensitivity_output out{};
    out.header = abi_header_for<lockstep_sensitivity_output>();
    out.y_final = y.data();
    out.sensitivities = sensitivities.data();
    model.sensitivities(params.data(), q0.data(), v0.data(), in.t0, in.t1, *in.options, request, out);
    const auto status = static_cast<member_status>(out.status);
    b.status[s] = status;
    b.messages[s] = out.message;
    if (status == member_status::success) {
      std::copy(y.begin(), y.end(), b.y.begin() + static_cast<std::ptrdiff_t>(s * Y));
      for (std::size_t v = 0; v < P; ++v) {
        double* d = &b.dy[(s * P + v) * Y];
        std::fill_n(d, Y, 0.0);
        for (const int slot : {direction_slot[v], parameter_slot[v]})
          if (slot >= 0)
            for (std::size_t c = 0; c < Y; ++c) d[c] += sensitivities[static_cast<std::size_t>(slot) * Y + c];
      }
    }
  };
  run_member_batch(count, threads, on_done, stop, solve, [&](long i, const char* what) {
    b.status[static_cast<std::size_t>(i)] = member_status::invalid_input;
    b.messages[static_cast<std::size_t>(i)] = what;
  });
}

}  // namespace lockstep
