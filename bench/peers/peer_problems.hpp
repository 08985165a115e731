// bench/peers/peer_problems.hpp — the ensembles lockstep and its peers are measured on, and
// the accuracy measure, shared by the work-precision program and the agreement test.
//
// Members differ: every parameter of member i is the model's default times (1 + spread (2 u - 1)),
// u uniform on (0, 1) from Philox keyed by (seed, i) and counted by the parameter index (the
// counter-based draw, lockstep::study::philox_word; docs/DESIGN-NOTES.md, "Determinism"), so any member can be
// rebuilt alone and every run sees the same ensemble. Parameters whose default is 0 stay 0.
// Initial (q0, v0) come from the model's initial_state with the member's parameters; where that
// start holds for the default parameters only (andrews, car_axis) the consistent initialization of
// both solvers projects it onto the member's constraints.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/study/samplers.hpp"

namespace lockstep::peers {

// How lockstep's solves of these ensembles treat their starts: projected onto each member's constraints
// whatever the correction (init "project"). The published starts of andrews and car_axis hold for the
// default parameters only, and with spread 0.01 the projection moves Andrews' start by up to 7 % of its
// configuration's size: below init "auto"'s gross threshold (init_gross_fraction, method/options.hpp),
// but beyond the tolerance, so "auto" would warn of most members where projecting them is the point.
inline constexpr init_mode initialization = init_mode::project;

// Counter tag for the parameter draws ("prtb" in ASCII): disjoint from the study samplers' tags.
inline constexpr std::uint64_t tag_parameter_perturbation = 0x70727462;

// Member i's parameters: defaults times (1 + spread (2 u_ij - 1)).
template <class Model>
void perturbed_parameters(std::uint64_t seed, long member, double spread, double* p) {
  for (int j = 0; j < Model::n_params; ++j) {
    const double u = study::unit_open(
        study::philox_word(seed, static_cast<std::uint64_t>(member), tag_parameter_perturbation, static_cast<std::uint64_t>(j)));
    p[j] = Model::params[j].default_value * (1.0 + spread * (2.0 * u - 1.0));
  }
}

// `count` save times t1 / count, 2 t1 / count, ..., t1.
inline std::vector<double> even_save_times(double t1, int count) {
  std::vector<double> s;
  for (int i = 1; i <= count; ++i) s.push_back(i == count ? t1 : t1 * i / count);
  return s;
}

// An ensemble of `members` perturbed members on [0, t1]; `inputs` are the model's named initial
// inputs (nullptr: the defaults).
template <class Model>
ensemble<Model> perturbed_ensemble(long members, double t1, const double* inputs, std::uint64_t seed, double spread,
                                   int save_count) {
  auto e = ensemble<Model>::with_defaults(members);
  double defaults[Model::n_inputs > 0 ? Model::n_inputs : 1] = {};
  if constexpr (Model::n_inputs > 0)
    for (int j = 0; j < Model::n_inputs; ++j) defaults[j] = Model::inputs[j].default_value;
  for (long i = 0; i < members; ++i) {
    perturbed_parameters<Model>(seed, i, spread, e.params_of(i));
    e.set_initial_inputs(i, inputs != nullptr ? inputs : defaults);
  }
  e.t0 = 0.0;
  e.t1 = t1;
  e.save_times = even_save_times(t1, save_count);
  return e;
}

// Significant correct digits of the positions (the IVP Test Set's mixed measure with the tolerance
// ratio as its absolute floor):  scd = -log10( max_i |q_i - ref_i| / (atol / rtol + |ref_i|) ).
// Capped at 16 when the error is zero.
template <int N>
double significant_digits(const double* q, const double* ref, double atol_over_rtol) {
  double e = 0.0;
  for (int i = 0; i < N; ++i) e = std::max(e, std::abs(q[i] - ref[i]) / (atol_over_rtol + std::abs(ref[i])));
  if (!(e == e)) return NAN;
  return e > 0.0 ? std::min(16.0, -std::log10(e)) : 16.0;
}

}  // namespace lockstep::peers
