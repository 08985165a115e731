// sensitivity_dump FUNCTION ROWS ORDER — the outputs of a test function at the points of Saltelli's
// design (the saltelli sampler, seed 1, one replicate, ROWS rows, ORDER 1 or 2: with the points of
// second-order indices) and lockstep's indices of them, for sensitivity_vs_salib.py to hand the same
// outputs to SALib's analysis. FUNCTION: ishigami (a = 7, b = 0.1 on [-pi, pi]^3), oscillator
// (x0 cos(2 omega), x0 on [1, 2], omega on [1, 3]) or offset (the oscillator plus 1000: a mean large
// against the spread, where the first-order estimator must centre the outputs).
//
// Prints "inputs K rows N order O", then "first", "total" and (order 2) "second" lines of indices
// (second: row-major K x K, NaN off i < j), then one output a line; numbers as %.17g.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "lockstep/study/samplers.hpp"
#include "lockstep/study/sensitivity_indices.hpp"

namespace {

using namespace lockstep::study;

void print(const char* name, const std::vector<double>& values) {
  std::printf("%s", name);
  for (const double v : values) std::printf(" %.17g", v);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: sensitivity_dump ishigami|oscillator|offset ROWS 1|2\n");
    return 2;
  }
  const std::string function = argv[1];
  const long rows = std::atol(argv[2]);
  const bool second_order = std::strcmp(argv[3], "2") == 0;
  constexpr double pi = std::numbers::pi;
  sampling_plan plan;
  plan.sampler = sampler_kind::saltelli;
  plan.second_order = second_order;
  const bool ishigami = function == "ishigami";
  if (!ishigami && function != "oscillator" && function != "offset") {
    std::fprintf(stderr, "sensitivity_dump: unknown function '%s'\n", function.c_str());
    return 2;
  }
  const std::vector<distribution> inputs =
      ishigami ? std::vector<distribution>(3, {distribution_kind::uniform, -pi, pi, {}})
               : std::vector<distribution>{{distribution_kind::uniform, 1.0, 2.0, {}}, {distribution_kind::uniform, 1.0, 3.0, {}}};
  for (std::size_t k = 0; k < inputs.size(); ++k) plan.vary.push_back({"x", true, static_cast<int>(k), inputs[k]});
  const saltelli_design design{static_cast<int>(inputs.size()), second_order};
  plan.members = rows * design.slots();
  if (const std::string why = check_plan(plan); !why.empty()) {
    std::fprintf(stderr, "sensitivity_dump: %s\n", why.c_str());
    return 2;
  }
  std::vector<double> x(inputs.size());
  std::vector<double> y(static_cast<std::size_t>(member_count(plan)));
  for (long i = 0; i < member_count(plan); ++i) {
    sample_member(plan, i, x.data());
    y[static_cast<std::size_t>(i)] =
        ishigami ? std::sin(x[0]) + 7.0 * std::sin(x[1]) * std::sin(x[1]) + 0.1 * std::pow(x[2], 4) * std::sin(x[0])
                 : x[0] * std::cos(2.0 * x[1]) + (function == "offset" ? 1000.0 : 0.0);
  }
  const sensitivity_indices s = estimate_sensitivity_indices(design, y.data(), rows);
  if (!s.refused.empty()) {
    std::fprintf(stderr, "sensitivity_dump: %s\n", s.refused.c_str());
    return 1;
  }
  std::printf("inputs %d rows %ld order %d\n", design.inputs, rows, second_order ? 2 : 1);
  print("first", s.first);
  print("total", s.total);
  if (second_order) print("second", s.second);
  for (const double v : y) std::printf("%.17g\n", v);
  return 0;
}
