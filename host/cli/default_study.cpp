// host/cli/default_study.cpp — the built-in default study, run by the README's main command
// (scripts/run-default-study.sh) until the `lockstep run STUDY.toml` front end of issue 6 exists.
//
// A Monte Carlo study of the chaotic double pendulum: 10,000 members with initial angles
// theta1 ~ U[1.9, 2.1] and theta2 ~ U[2.4, 2.6], integrated to t = 3 with BDF on the stabilized
// index-2 formulation (rtol = atol = 1e-8) on the OpenMP backend. Samples come from Random123's
// Philox counter-based generator keyed by (seed, member), so member i's inputs never depend on the
// ensemble size or the order of evaluation (DESIGN.md section 3). Writes
//   OUT/members.csv      one row per member: inputs, status, steps, final q
//   OUT/statistics.csv   mean and standard deviation of q over the members at every save time
// and prints a summary. Usage: lockstep-default-study [OUT_DIR] [MEMBERS] [THREADS]
#include <Random123/philox.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "lockstep/lockstep.hpp"

namespace {

using Model = lockstep::models::double_pendulum;

// Two uniform numbers in [0, 1) for member i of the study with this seed: Philox4x32-10 on the counter
// (i, 0) with key seed; 53-bit doubles from pairs of 32-bit outputs.
std::array<double, 2> uniform_pair(std::uint32_t seed, std::uint64_t i) {
  r123::Philox4x32 rng;
  const r123::Philox4x32::ctr_type counter = {{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i >> 32), 0, 0}};
  const r123::Philox4x32::key_type key = {{seed, 0x6c6f636bu}};  // "lock"
  const auto r = rng(counter, key);
  // 21 bits of hi above 32 bits of lo: an integer below 2^53, scaled into [0, 1).
  auto to_double = [](std::uint32_t hi, std::uint32_t lo) {
    return static_cast<double>((static_cast<std::uint64_t>(hi >> 11) << 32) | lo) * 0x1.0p-53;
  };
  return {to_double(r[0], r[1]), to_double(r[2], r[3])};
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : "lockstep-out/default";
  const long members = argc > 2 ? std::atol(argv[2]) : 10000;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
  if (members <= 0) {
    std::cerr << "lockstep-default-study: MEMBERS must be positive\n";
    return 2;
  }
  const std::uint32_t seed = 1;

  auto e = lockstep::ensemble<Model>::with_defaults(members);
  std::vector<std::array<double, 2>> angles(static_cast<std::size_t>(members));
  for (long i = 0; i < members; ++i) {
    const auto u = uniform_pair(seed, static_cast<std::uint64_t>(i));
    angles[i] = {1.9 + 0.2 * u[0], 2.4 + 0.2 * u[1]};
    const double inputs[4] = {angles[i][0], angles[i][1], 0.0, 0.0};
    e.set_initial_inputs(i, inputs);
  }
  e.t1 = 3.0;
  for (int s = 1; s <= 30; ++s) e.save_times.push_back(0.1 * s);
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-8;

  lockstep::run_options run;
  run.where = lockstep::backend::omp;
  run.threads = threads;
  const auto r = lockstep::solve_ensemble(e, run);

  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::cerr << "lockstep-default-study: cannot create " << out << ": " << ec.message() << "\n";
    return 3;
  }
  long succeeded = 0, steps = 0;
  {
    std::ofstream csv(out / "members.csv");
    csv << "member,theta1,theta2,status,steps,x1,y1,x2,y2\n";
    csv.precision(17);
    for (long i = 0; i < members; ++i) {
      succeeded += r.status[i] == lockstep::member_status::success;
      steps += r.counters[i].steps;
      csv << i << ',' << angles[i][0] << ',' << angles[i][1] << ',' << lockstep::status_name(r.status[i]) << ','
          << r.counters[i].steps;
      for (int j = 0; j < Model::n; ++j) csv << ',' << r.y_final[i * lockstep::state_layout<Model>::size + j];
      csv << '\n';
    }
  }
  {
    // Mean and standard deviation over the members that succeeded, summed in member order (fixed, so
    // the figures do not depend on threads or chunking).
    std::ofstream csv(out / "statistics.csv");
    csv << "t,mean_x1,mean_y1,mean_x2,mean_y2,std_x1,std_y1,std_x2,std_y2\n";
    csv.precision(12);
    for (int s = 0; s < r.save_count; ++s) {
      double mean[4] = {}, m2[4] = {};
      long count = 0;
      for (long i = 0; i < members; ++i) {
        if (r.status[i] != lockstep::member_status::success) continue;
        ++count;
        for (int j = 0; j < 4; ++j) {  // Welford's update
          const double x = r.q(i, s, j), d = x - mean[j];
          mean[j] += d / count;
          m2[j] += d * (x - mean[j]);
        }
      }
      csv << e.save_times[s];
      for (double m : mean) csv << ',' << m;
      for (double v : m2) csv << ',' << (count > 1 ? std::sqrt(v / (count - 1)) : 0.0);
      csv << '\n';
    }
  }
  std::printf("lockstep default study: double pendulum Monte Carlo, %ld members, t1 = 3, BDF/ggl, rtol 1e-8\n",
              members);
  std::printf("  %ld succeeded, %ld failed; %ld accepted steps in all; wall time %.2f s on the omp backend\n",
              succeeded, members - succeeded, steps, r.seconds);
  std::printf("  results: %s and %s\n", (out / "members.csv").c_str(), (out / "statistics.csv").c_str());
  return succeeded == members ? 0 : 1;
}
