// tests/cli/in_process.hpp — a study member solved in this process with solve_member, and the bitwise
// comparison of everything results.h5 keeps about that member with it.
//
// The member's inputs are rebuilt here from the study as study_file.hpp documents them (model
// defaults, then the [model] overrides, then the member's varied values), not through the CLI's code.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "host/io/study_file.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace lockstep::cli_test {

// Parameters and named initial inputs of one member: defaults, [model] overrides, varied values
// (`varied` in the order of spec.plan.vary).
template <class Model>
struct member_setup {
  std::vector<double> params;
  std::vector<double> inputs;
};

template <class Model>
member_setup<Model> setup_member(const io::study_spec& spec, const std::vector<double>& varied) {
  member_setup<Model> s;
  for (int j = 0; j < Model::n_params; ++j) s.params.push_back(Model::params[j].default_value);
  if constexpr (Model::n_inputs > 0)
    for (int j = 0; j < Model::n_inputs; ++j) s.inputs.push_back(Model::inputs[j].default_value);
  for (const auto& o : spec.params) s.params[static_cast<std::size_t>(o.index)] = o.value;
  for (const auto& o : spec.initial) s.inputs[static_cast<std::size_t>(o.index)] = o.value;
  for (std::size_t d = 0; d < spec.plan.vary.size(); ++d) {
    const auto& v = spec.plan.vary[d];
    (v.is_param ? s.params : s.inputs)[static_cast<std::size_t>(v.index)] = varied[d];
  }
  return s;
}

template <class Model>
member_result<Model> solve_in_process(const io::study_spec& spec, const member_setup<Model>& s) {
  vec<double, Model::n> q0, v0;
  Model::initial_state(s.params.data(), s.inputs.empty() ? nullptr : s.inputs.data(), q0, v0);
  return solve_member<Model>(s.params.data(), q0, v0, spec.t0, spec.t1, spec.solver, spec.save_times);
}

// The datasets of results.h5 that describe members, read once.
struct member_datasets {
  std::vector<std::int32_t> status;
  std::vector<std::int64_t> steps, rejected, newton_iterations, newton_failures, jacobian_evaluations,
      lu_factorizations, model_evaluations;
  std::vector<double> final_t, final_h, max_phi, max_velocity_residual, init_q_correction, init_v_correction;
  std::vector<double> final_q, final_v, inputs;
  std::vector<double> q, v, lambda, mu;  // empty when not stored

  explicit member_datasets(const h5_file& f) {
    status = f.int32s("/members/status");
    steps = f.int64s("/members/steps");
    rejected = f.int64s("/members/rejected");
    newton_iterations = f.int64s("/members/newton_iterations");
    newton_failures = f.int64s("/members/newton_failures");
    jacobian_evaluations = f.int64s("/members/jacobian_evaluations");
    lu_factorizations = f.int64s("/members/lu_factorizations");
    model_evaluations = f.int64s("/members/model_evaluations");
    final_t = f.doubles("/members/final_t");
    final_h = f.doubles("/members/final_h");
    max_phi = f.doubles("/members/max_phi");
    max_velocity_residual = f.doubles("/members/max_velocity_residual");
    init_q_correction = f.doubles("/members/init_q_correction");
    init_v_correction = f.doubles("/members/init_v_correction");
    final_q = f.doubles("/members/final_q");
    final_v = f.doubles("/members/final_v");
    inputs = f.doubles("/members/inputs");
    if (f.exists("/q")) {
      q = f.doubles("/q");
      v = f.doubles("/v");
      lambda = f.doubles("/lambda");
    }
    if (f.exists("/mu")) mu = f.doubles("/mu");
  }
};

// Member i of the file against r, bit for bit: status, counters, final state and (when stored) every
// saved q, v, lambda, mu; saves the member never reached must be NaN in the file. Returns the number
// of mismatching values (each also reported as a gtest failure, at most a few per member).
template <class Model>
long expect_member_bitwise(const member_datasets& d, long i, std::size_t save_count, const member_result<Model>& r) {
  using layout = state_layout<Model>;
  constexpr int n = Model::n, m = Model::m;
  const auto I = static_cast<std::size_t>(i);
  long mismatches = 0;
  int reported = 0;
  auto check = [&](bool equal, const std::string& what, double file_value, double expected) {
    if (equal) return;
    ++mismatches;
    if (reported++ < 4)
      ADD_FAILURE() << "member " << i << " " << what << ": file " << file_value << " (bits " << std::hex
                    << bits_of(file_value) << "), solve_member " << expected << " (bits " << bits_of(expected) << ")"
                    << std::dec;
  };
  auto check_int = [&](std::int64_t file_value, long expected, const char* what) {
    check(file_value == expected, what, static_cast<double>(file_value), static_cast<double>(expected));
  };
  check_int(d.status[I], static_cast<long>(r.status), "status");
  check_int(d.steps[I], r.counters.steps, "steps");
  check_int(d.rejected[I], r.counters.rejected_steps, "rejected");
  check_int(d.newton_iterations[I], r.counters.newton_iterations, "newton_iterations");
  check_int(d.newton_failures[I], r.counters.newton_failures, "newton_failures");
  check_int(d.jacobian_evaluations[I], r.counters.jacobian_evaluations, "jacobian_evaluations");
  check_int(d.lu_factorizations[I], r.counters.lu_factorizations, "lu_factorizations");
  check_int(d.model_evaluations[I], r.counters.model_evaluations, "model_evaluations");
  auto check_real = [&](double file_value, double expected, const std::string& what) {
    check(same_value(file_value, expected), what, file_value, expected);
  };
  check_real(d.final_t[I], r.t_final, "final_t");
  check_real(d.final_h[I], r.counters.last_h, "final_h");
  check_real(d.max_phi[I], r.counters.max_phi, "max_phi");
  check_real(d.max_velocity_residual[I], r.counters.max_velocity_residual, "max_velocity_residual");
  check_real(d.init_q_correction[I], r.counters.init_q_correction, "init_q_correction");
  check_real(d.init_v_correction[I], r.counters.init_v_correction, "init_v_correction");
  for (int j = 0; j < n; ++j) {
    check_real(d.final_q[I * n + j], r.y_final[layout::q + j], "final_q[" + std::to_string(j) + "]");
    check_real(d.final_v[I * n + j], r.y_final[layout::v + j], "final_v[" + std::to_string(j) + "]");
  }
  if (d.q.empty()) return mismatches;
  const double nan = std::nan("");
  for (std::size_t s = 0; s < save_count; ++s) {
    const bool reached = s < r.y.size();
    const std::string at = " at save " + std::to_string(s);
    for (int j = 0; j < n; ++j) {
      const std::size_t k = (I * save_count + s) * n + j;
      check_real(d.q[k], reached ? r.y[s][layout::q + j] : nan, "q[" + std::to_string(j) + "]" + at);
      check_real(d.v[k], reached ? r.y[s][layout::v + j] : nan, "v[" + std::to_string(j) + "]" + at);
    }
    for (int j = 0; j < m; ++j) {
      const std::size_t k = (I * save_count + s) * m + j;
      check_real(d.lambda[k], reached ? r.y[s][layout::lambda + j] : nan, "lambda[" + std::to_string(j) + "]" + at);
      if (!d.mu.empty()) check_real(d.mu[k], reached ? r.y[s][layout::mu + j] : nan, "mu[" + std::to_string(j) + "]" + at);
    }
  }
  return mismatches;
}

}  // namespace lockstep::cli_test
