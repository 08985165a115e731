// tests/simd/method_digest.hpp — digests of what a method decides for a member (its method state and
// counts: BDF's, the Radau IIA family's, rho_inf's, dopri5's, auto's), by which the lanes tests compare
// a lane with its member alone: equal digests, equal bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "lockstep/method/auto_switch.hpp"
#include "lockstep/method/bdf.hpp"
#include "lockstep/method/dopri5.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/method/rhoinf.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::simd_test {

// FNV-1a over the bits of x, every NaN read as one NaN (a payload is not part of a result).
inline void digest_values(std::uint64_t& h, const double* x, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const double v = std::isnan(x[i]) ? std::numeric_limits<double>::quiet_NaN() : x[i];
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int b = 0; b < 8; ++b) h = (h ^ ((bits >> (8 * b)) & 0xff)) * 0x100000001b3ull;
  }
}

// The Jacobian blocks, into h.
template <class Model>
void digest_jacobian(std::uint64_t& h, const jacobian_blocks<Model>& J) {
  for (const auto* block : {J.M.a, J.dQ_dv.a, J.K.a}) digest_values(h, block, Model::n * Model::n);
  for (const auto* block : {J.G.a, J.Psi_q.a, J.Psi_v.a}) digest_values(h, block, Model::m * Model::n);
  for (const auto* block : {J.A.a, J.A_q.a, J.A_v.a}) digest_values(h, block, Model::k * Model::n);
}

// A factored Newton matrix (its LU, pivots and shift), into h; nothing for a block a tableau lacks.
template <class Model, class E>
void digest_factors(std::uint64_t& h, const newton_matrix<Model, E>& N) {
  constexpr int size = newton_matrix<Model, E>::size;
  constexpr size_t parts = sizeof(E) / sizeof(double);  // a complex entry is two doubles
  for (int e = 0; e < size * size; ++e) digest_values(h, reinterpret_cast<const double*>(&N.lu.a[e]), parts);
  for (int i = 0; i < size; ++i) {
    const double pivot = N.pivot[i];
    digest_values(h, &pivot, 1);
  }
  digest_values(h, reinterpret_cast<const double*>(&N.c), parts);
}
template <class Model>
void digest_factors(std::uint64_t&, const absent_newton_matrix&) {}

// The corrector's Jacobian where valid and its factors where factored (elsewhere they are not defined,
// lockstep/simd/lu_inl.hpp), into h.
template <class Model>
void digest_corrector(std::uint64_t& h, const corrector_matrices<Model>& c) {
  if (c.jacobian_valid) digest_jacobian<Model>(h, c.jac);
  if (c.newton_valid) digest_factors<Model>(h, c.newton);
}

// The digest of what a member's attempts decide: the method state (its Jacobian and factors where
// valid: elsewhere they are not defined, lockstep/simd/lu_inl.hpp) and the counters.
template <class Model>
std::uint64_t digest_of(const bdf_state<Model>& s, const member_counters& c) {
  using L = state_layout<Model>;
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double scalars[] = {s.t, s.t0, s.h, double(s.order), double(s.last_order), double(s.steps_at_order),
                            double(s.error_failures), double(s.newton_cuts), double(s.past_count),
                            double(s.initial_derivative), s.error, double(s.corrector.jacobian_valid),
                            double(s.corrector.newton_valid), double(s.corrector.jacobian_fresh),
                            double(s.corrector.jac.dropped), double(c.steps), double(c.rejected_steps),
                            double(c.newton_iterations), double(c.newton_failures), double(c.jacobian_evaluations),
                            double(c.lu_factorizations), double(c.model_evaluations), c.last_h};
  digest_values(h, scalars, std::size(scalars));
  digest_values(h, s.t_past, bdf_state<Model>::max_past);
  digest_values(h, s.y_newest.a, L::size);
  digest_values(h, s.yp0.a, L::size);
  digest_values(h, s.y_scale.a, L::size);
  for (int j = 0; j < bdf_state<Model>::max_past; ++j) digest_values(h, s.older_differences[j].a, L::size);
  digest_corrector<Model>(h, s.corrector);
  return h;
}

// The same of a member of rho_inf.
template <class Model>
std::uint64_t digest_of(const rhoinf_state<Model>& s, const member_counters& c) {
  using L = state_layout<Model>;
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double scalars[] = {s.t, s.t0, s.h, s.h_last, s.h_last2, double(s.last_rejected), double(s.newton_cuts),
                            s.error, double(s.corrector.jacobian_valid), double(s.corrector.newton_valid),
                            double(s.corrector.jacobian_fresh), double(s.corrector.jac.dropped), double(c.steps),
                            double(c.rejected_steps), double(c.newton_iterations), double(c.newton_failures),
                            double(c.jacobian_evaluations), double(c.lu_factorizations), double(c.model_evaluations),
                            c.last_h};
  digest_values(h, scalars, std::size(scalars));
  for (const auto* y : {&s.y, &s.yp, &s.y_last, &s.yp_last, &s.y_last2}) digest_values(h, y->a, L::size);
  digest_corrector<Model>(h, s.corrector);
  return h;
}

// The same of a member of dopri5: its constraint rows' G where rows are dropped (elsewhere it is not
// kept).
template <class Model>
std::uint64_t digest_of(const dopri5_state<Model>& s, const member_counters& c) {
  using L = state_layout<Model>;
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double scalars[] = {s.t, s.t0, s.h, s.h_last, s.log_error_accepted, double(s.last_rejected),
                            double(s.consecutive_cuts), s.error, double(s.stiffness.stiff_steps),
                            double(s.stiffness.nonstiff_steps), double(s.turned_stiff), double(s.rows.dropped),
                            double(c.steps), double(c.rejected_steps), double(c.lu_factorizations),
                            double(c.model_evaluations), double(c.explicit_steps), double(c.stiffness_detections),
                            c.last_h};
  digest_values(h, scalars, std::size(scalars));
  for (const auto* y : {&s.y, &s.y_last}) digest_values(h, y->a, L::size);
  digest_values(h, s.f.a, 2 * Model::n);
  for (const auto& r : s.dense) digest_values(h, r.a, 2 * Model::n);
  if (s.rows.dropped != 0) digest_values(h, s.rows.G.a, Model::m * Model::n);
  return h;
}

// The same of a member of the Radau IIA family: its Jacobian where valid, its factors where factored
// for a step.
template <class Model, class RT>
std::uint64_t digest_of(const radau_state<Model, RT>& s, const member_counters& c) {
  using L = state_layout<Model>;
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double scalars[] = {s.t, s.t0, s.h, s.h_last, double(s.have_step), s.h_accepted, s.err_accepted,
                            double(s.first), double(s.last_rejected), double(s.newton_cuts),
                            double(s.newton_iterations), s.theta, s.error, double(s.jacobian_valid), s.factored_h,
                            double(s.jac.dropped), double(c.steps), double(c.rejected_steps),
                            double(c.newton_iterations), double(c.newton_failures), double(c.jacobian_evaluations),
                            double(c.lu_factorizations), double(c.model_evaluations), c.last_h};
  digest_values(h, scalars, std::size(scalars));
  digest_values(h, s.y.a, L::size);
  digest_values(h, s.yp.a, L::size);
  digest_values(h, s.y_last.a, L::size);
  for (int i = 0; i < RT::stages; ++i) digest_values(h, s.Z[i].a, L::size);
  if (s.jacobian_valid) {
    digest_jacobian<Model>(h, s.jac);
    if (s.factored_h != 0.0) {
      digest_factors<Model>(h, s.real_block);
      digest_factors<Model>(h, s.complex_block);
    }
  }
  return h;
}

// The same of a member of auto: which phase it is in, both phases (the one it is not in as that phase
// left it, or never started), the switching rule's counts and its switches.
template <class Model>
std::uint64_t digest_of(const auto_state<Model>& s, const member_counters& c) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double scalars[] = {double(s.stiff), s.t1, double(s.probe_interval), double(s.implicit_steps_since_probe),
                            double(s.explicit_steps_in_phase), double(s.returned), double(c.method_switches),
                            double(digest_of(s.explicit_phase, c) >> 11), double(digest_of(s.implicit_phase, c) >> 11)};
  digest_values(h, scalars, std::size(scalars));
  return h;
}

// Every count of the member stepper (method/options.hpp, member_counters).
inline std::uint64_t digest_of(const member_counters& c) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const double all[] = {double(c.steps), double(c.rejected_steps), double(c.newton_iterations),
                        double(c.newton_failures), double(c.jacobian_evaluations), double(c.lu_factorizations),
                        double(c.model_evaluations), c.last_h, c.max_phi, c.max_velocity_residual,
                        c.init_q_correction, c.init_v_correction, double(c.projections), c.max_projection_q,
                        c.max_projection_v, double(c.dropped_rows), double(c.rank_changes), c.max_dropped_phi,
                        double(c.explicit_steps), double(c.method_switches), double(c.stiffness_detections)};
  static_assert(sizeof(member_counters) == sizeof all, "a count of member_counters is missing here");
  digest_values(h, all, std::size(all));
  return h;
}

}  // namespace lockstep::simd_test
