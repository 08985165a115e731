// write_sample_results OUT_DIR [--no-grid] [--no-trajectories] [--no-statistics] [--coordinate-names A,B]
//                     [--quantities]
// — writes OUT_DIR/results.h5 and OUT_DIR/members.csv for a small made-up 2-D grid study, through the
// results writers, for the plot script's test (tests/io/check_plot.py). The flags leave out the grid
// description (as for a Monte Carlo study), the trajectories, or the statistics, name the two
// coordinates (else the model names none, as a C++ header model may), or give the model two derived
// quantities, `point.speed` and `point.height` (as a mechanism file's).
//
// The "model" is a point on a circle, q = A (sin wt, -cos wt), on a 6 x 5 grid of
// (params.omega, initial.amplitude): no solver is involved, the values only have to be plausible
// and deterministic. Members 7 and 22 "fail" at t = 1 (newton_failure) with NaN afterwards, so the
// statistics count fewer members late in the run and the plot script draws a status chart.
// Statistics: mean, std, mean_stderr and the exact quantiles q05, q25, median, q75, q95 over the
// members with finite values. Exit status 1 with the writer's message on an io_error (the test runs
// it with LOCKSTEP_IO_FAIL_AFTER_BYTES set to check that).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "host/io/members_csv.hpp"
#include "host/io/results_h5.hpp"

namespace {

namespace io = lockstep::io;

constexpr int n = 2, m = 1, Y = 2 * n + 2 * m;  // (q0, q1, v0, v1, lambda, mu)

// The state of the point at time t, or NaN after a failure at t_fail; with `quantities`, then its speed
// and height (Y + 2 values).
void state(double omega, double amplitude, double t, double t_fail, double* y, bool quantities = false) {
  if (t > t_fail) {
    std::fill(y, y + Y + (quantities ? 2 : 0), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  if (quantities) {
    y[Y] = amplitude * omega;
    y[Y + 1] = -amplitude * std::cos(omega * t);
  }
  const double s = std::sin(omega * t), c = std::cos(omega * t);
  y[0] = amplitude * s;
  y[1] = -amplitude * c;
  y[2] = amplitude * omega * c;
  y[3] = amplitude * omega * s;
  y[4] = omega * omega / 2.0;  // the multiplier of |q|^2 - A^2 = 0 holding the point on the circle
  y[5] = 0.0;
}

// The p-quantile of sorted values (linear interpolation between order statistics).
double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double x = p * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(x));
  const std::size_t j = std::min(i + 1, sorted.size() - 1);
  return sorted[i] + (x - static_cast<double>(i)) * (sorted[j] - sorted[i]);
}

}  // namespace

int main(int argc, char** argv) {
  bool grid = true, trajectories = true, statistics = true, quantities = false, usage_error = argc < 2;
  std::vector<std::string> coordinate_names;
  for (int a = 2; a < argc; ++a) {
    const std::string flag = argv[a];
    if (flag == "--coordinate-names" && a + 1 < argc) {
      const std::string list = argv[++a];
      const std::size_t comma = list.find(',');
      if (comma == std::string::npos) usage_error = true;
      else coordinate_names = {list.substr(0, comma), list.substr(comma + 1)};
    } else if (flag == "--no-grid") {
      grid = false;
    } else if (flag == "--no-trajectories") {
      trajectories = false;
    } else if (flag == "--no-statistics") {
      statistics = false;
    } else if (flag == "--quantities") {
      quantities = true;
    } else {
      usage_error = true;
    }
  }
  if (usage_error) {
    std::cerr << "usage: write_sample_results OUT_DIR [--no-grid] [--no-trajectories] [--no-statistics] "
                 "[--coordinate-names A,B] [--quantities]\n";
    return 2;
  }
  const std::string out = argv[1];
  const std::vector<double> omegas{1.0, 1.5, 2.0, 2.5, 3.0, 3.5}, amplitudes{0.2, 0.4, 0.6, 0.8, 1.0};

  io::results_layout layout;
  layout.model = "sample_circle";
  layout.n = n;
  layout.m = m;
  layout.coordinate_names = coordinate_names;
  if (quantities) {
    layout.quantity_names = {"point.speed", "point.height"};
    layout.quantity_descriptions = {"m/s, the point's speed", "m, the point's height"};
  }
  layout.has_mu = true;
  layout.trajectories = trajectories;
  layout.varied_names = {"params.omega", "initial.amplitude"};
  layout.members = static_cast<long>(omegas.size() * amplitudes.size());
  if (grid) {
    layout.grid_dims = {0, 1};
    layout.grid_shape = {static_cast<long>(omegas.size()), static_cast<long>(amplitudes.size())};
  }
  for (int s = 1; s <= 20; ++s) layout.save_times.push_back(0.1 * s);
  const auto N = static_cast<std::size_t>(layout.members), S = layout.save_times.size();
  const auto W = static_cast<std::size_t>(layout.value_size());  // the values per save time
  const double t1 = layout.save_times.back();

  // Members in grid order, the last grid dimension (amplitude) fastest (study/sampling_plan.hpp).
  std::vector<lockstep::member_status> status(N, lockstep::member_status::success);
  std::vector<lockstep::member_counters> counters(N);
  std::vector<double> final_t(N, t1), inputs(N * 2), y(N * S * W), y_final(N * Y);
  for (std::size_t i = 0; i < N; ++i) {
    const double omega = omegas[i / amplitudes.size()], amplitude = amplitudes[i % amplitudes.size()];
    const bool fails = i == 7 || i == 22;
    const double t_fail = fails ? 1.0 : std::numeric_limits<double>::infinity();
    if (fails) {
      status[i] = lockstep::member_status::newton_failure;
      final_t[i] = 1.0;
    }
    inputs[2 * i] = omega;
    inputs[2 * i + 1] = amplitude;
    counters[i].steps = static_cast<long>(40 + 10 * omega * amplitude);
    counters[i].newton_iterations = 2 * counters[i].steps;
    counters[i].last_h = 0.01 / omega;
    for (std::size_t s = 0; s < S; ++s)
      state(omega, amplitude, layout.save_times[s], t_fail, &y[(i * S + s) * W], quantities);
    state(omega, amplitude, final_t[i], t_fail, &y_final[i * Y]);
  }

  try {
    io::results_writer h5(out + "/results.h5", layout);
    io::members_csv_writer csv(out + "/members.csv", layout);
    // Two blocks, as a scheduler's chunks would arrive.
    for (long first : {0L, 17L}) {
      const long count = first == 0 ? 17 : layout.members - 17;
      const auto f = static_cast<std::size_t>(first);
      io::member_block b{first, count, status.data() + f, counters.data() + f, final_t.data() + f,
                         inputs.data() + 2 * f, trajectories ? y.data() + f * S * W : nullptr, y_final.data() + f * Y};
      h5.write_members(b);
      csv.write_members(b);
    }

    std::vector<double> mean(S * W), stddev(S * W), stderr_of_mean(S * W);
    std::vector<std::int64_t> count(S * W);
    const std::vector<std::pair<const char*, double>> quantiles{{"q05", 0.05}, {"q25", 0.25}, {"median", 0.5}, {"q75", 0.75}, {"q95", 0.95}};
    std::vector<std::vector<double>> quantile_values(quantiles.size(), std::vector<double>(S * W));
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t j = 0; j < W; ++j) {
        std::vector<double> values;
        for (std::size_t i = 0; i < N; ++i)
          if (const double x = y[(i * S + s) * W + j]; std::isfinite(x)) values.push_back(x);
        std::sort(values.begin(), values.end());
        const auto c = static_cast<double>(values.size());
        double sum = 0.0, squares = 0.0;
        for (double x : values) sum += x;
        const double mu = sum / c;
        for (double x : values) squares += (x - mu) * (x - mu);
        mean[s * W + j] = mu;
        stddev[s * W + j] = std::sqrt(squares / (c - 1.0));
        stderr_of_mean[s * W + j] = stddev[s * W + j] / std::sqrt(c);
        count[s * W + j] = static_cast<std::int64_t>(values.size());
        for (std::size_t a = 0; a < quantiles.size(); ++a) quantile_values[a][s * W + j] = quantile(values, quantiles[a].second);
      }
    const double no_probability = std::numeric_limits<double>::quiet_NaN();
    if (statistics) {
      h5.write_statistic_state("mean", no_probability, mean.data(), count.data());
      h5.write_statistic_state("std", no_probability, stddev.data(), count.data());
      h5.write_statistic_state("mean_stderr", no_probability, stderr_of_mean.data(), count.data());
      for (std::size_t a = 0; a < quantiles.size(); ++a)
        h5.write_statistic_state(quantiles[a].first, quantiles[a].second, quantile_values[a].data(), count.data());
    }

    io::run_info run;
    run.study_text = "# made-up sample study (tests/io/write_sample_results.cpp)\n";
    run.lockstep_version = "0.1.0";
    run.git_revision = "unknown";
    run.backend = "serial";
    run.threads = 1;
    run.wall_time_seconds = 0.0;
    h5.set_run_info(run);
    h5.commit();
    csv.commit();
  } catch (const io::io_error& e) {
    std::cerr << "write_sample_results: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
