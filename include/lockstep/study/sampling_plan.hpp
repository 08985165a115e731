// lockstep/study/sampling_plan.hpp — what a study varies across its members, and how the values are
// drawn: the plain description the study-file loader (host/io/study_file.hpp) produces and the
// samplers (study/samplers.hpp) consume.
//
// Member numbering. Grid dimensions always form a Cartesian product of G points (G = 1 when there
// are none); the other dimensions are drawn by the sampler, `members` points per replicate. A study
// with at least one drawn dimension has G x members x replicates members, numbered
//     i = (replicate * members + draw) * G + grid_point,
// with grid_point enumerating the product in row-major order of the dimensions as written (the last
// grid dimension varies fastest). A pure grid (no drawn dimension) has G members and ignores
// `members` and `replicates`. The drawn values depend on (seed, replicate, draw) only, so every grid
// point sees the same drawn points (a crossed design: differences between grid points are not masked
// by different draws). Every member's values depend on (plan, i) only — never on which chunk, thread
// or rank computes them (docs/DESIGN-NOTES.md, "Determinism").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::study {

enum class distribution_kind : int {
  uniform = 0,    // a = lower, b = upper (lower <= upper)
  normal = 1,     // a = mean, b = standard deviation (>= 0)
  lognormal = 2,  // exp(X), X normal with mean a = mu and standard deviation b = sigma (>= 0)
  grid = 3,       // the listed values, in order
};

struct distribution {
  distribution_kind kind = distribution_kind::uniform;
  double a = 0.0;
  double b = 0.0;
  std::vector<double> grid;  // grid only; non-empty
};

enum class sampler_kind : int {
  random = 0,  // Random123 Philox keyed by (seed, replicate, draw): independent uniform draws
  sobol = 1,   // Sobol points (Joe & Kuo direction numbers), randomized per replicate by the seed
  lhs = 2,     // Latin hypercube: each dimension stratified into `members` equal cells
  grid = 3,    // every dimension must be a grid
  saltelli = 4,  // Saltelli's design for sensitivity indices (study/sensitivity_indices.hpp): rows of
                 // k + 2 (2k + 2) points from one randomized 2k-dimensional Sobol' point each
};

struct varied_input {
  std::string name;  // as written in the study: "initial.theta1", "params.L2"
  bool is_param = false;
  int index = 0;     // into Model::params or Model::inputs
  distribution dist;
};

struct sampling_plan {
  sampler_kind sampler = sampler_kind::random;
  std::uint64_t seed = 1;
  long members = 1;    // drawn points per replicate (ignored for a pure grid)
  int replicates = 1;  // independent randomizations (QMC error bars); ignored for a pure grid
  bool second_order = false;  // saltelli only: the rows hold the B_A^(i) points of second-order indices
  std::vector<varied_input> vary;
};

}  // namespace lockstep::study
