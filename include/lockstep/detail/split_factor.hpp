// lockstep/detail/split_factor.hpp — the split path: step attempts that leave their factorizations to a
// batch phase between launches (docs/ARCHITECTURE.md section 1's one documented exception; docs/GPU.md section 5).
//
// Per launch, `advance_member_split` runs member_advance with the method state's external_factors
// enabled (method/attempt.hpp): an attempt that needs a factorization assembles its Newton matrices in
// the member's state, flags them pending and suspends; the launch ends there for that member and
// `pending[i]` says so. The host then runs a factor phase over the pending members — here
// `factor_member` (lu_factor, one member per call: the CPU emulation, bitwise the fused path's
// factorization because it is the same function on the same assembled matrix), on CUDA the batched
// cuBLAS phase of kernels/cuda/ensemble_cuda.cu — and the next launch replays the suspended attempts.
// Member results (states, outputs, statuses, counters) are those of the fused path: the attempt is a
// deterministic function of the member state, and the suspension changed nothing but what the replay
// needs (the assembled matrices, a Jacobian it evaluated, the freshness of that Jacobian).
#pragma once

#include <cstddef>

#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/method/methods.hpp"

namespace lockstep {

// Fused or split, per model at compile time (used by the CUDA backend; the CPU backends are fused unless
// run_options::split_factorization asks for the emulation). A member is split when its reduced Newton
// matrix has more than 32 rows. The reasons (docs/GPU.md section 5): the fused step kernel keeps the
// whole member state, its Newton matrices included (N^2 doubles, and N^2 complex doubles for Radau IIA),
// in one thread's local memory, and the factorization is that thread's O(N^3) serial loop; ptxas puts
// the fused kernels of andrews (N = 19) at 13-20 KB of stack, while chain<16> (N = 64) needed 500 KB (BDF)
// and 661 KB (Radau IIA, over the 512 KB per-thread limit) fused; split, with its state in a
// member_workspace (uses_member_workspace below), about a fifth of that (docs/GPU.md 5.7). The built-in models
// at or below 32 (pendulum 4, double pendulum 8, chain<4> 16, andrews 19, slider crank 25, chain<8> 32)
// stay fused: their factorization is a few microseconds of one thread, cheaper than the extra launch,
// the gather and scatter of the split path (a model, not a measurement: the one GPU run, docs/GPU.md
// section 7, compared the two paths' results, not their speed).
// run_options::split_factorization sends any model through the split path (docs/GPU.md 5.3 and 5.6).
inline constexpr int split_factorization_threshold = large_member_newton_rows;  // formulation/euler_lagrange.hpp

template <class Model>
inline constexpr bool uses_split_factorization = state_layout<Model>::newton_size > split_factorization_threshold;

// Methods with the split path: BDF (through method/corrector.hpp) and the Radau IIA family. The rho_inf
// method shares the corrector but its attempt does not pass a suspension on; it runs fused, and so does
// the explicit pairs (dopri5, tsit5), which factor only their stages' small acceleration systems, and
// auto (dopri5 and Radau IIA 5 by phases), whose members are the small ones an explicit method suits.
template <class Method>
inline constexpr bool has_split_factorization = Method::kind != method_kind::rhoinf &&
                                                !is_explicit_pair(Method::kind) &&
                                                Method::kind != method_kind::automatic;

template <class Model>
LOCKSTEP_HD external_factors& external_of(bdf_state<Model>& s) {
  return s.corrector.external;
}
template <class Model, class RT>
LOCKSTEP_HD external_factors& external_of(radau_state<Model, RT>& s) {
  return s.external;
}

// The real and complex Newton matrices of a method state that the split path factors (nullptr where
// the method has none).
template <class Model>
LOCKSTEP_HD newton_matrix<Model, double>* real_matrix_of(bdf_state<Model>& s) {
  return &s.corrector.newton;
}
template <class Model>
LOCKSTEP_HD newton_matrix<Model, complex<double>>* complex_matrix_of(bdf_state<Model>&) {
  return nullptr;
}
template <class Model, class RT>
LOCKSTEP_HD newton_matrix<Model, double>* real_matrix_of(radau_state<Model, RT>& s) {
  if constexpr (RT::has_real_eigenvalue) return &s.real_block;
  else return nullptr;
}
template <class Model, class RT>
LOCKSTEP_HD newton_matrix<Model, complex<double>>* complex_matrix_of(radau_state<Model, RT>& s) {
  if constexpr (RT::has_complex_pair) return &s.complex_block;
  else return nullptr;
}

// The factor phase of one member, as the fused attempt would have factored: the real matrix, then (if
// that succeeded) the complex one, each by lu_factor, with factor_newton_matrix's status.
template <class MethodState>
LOCKSTEP_HD void factor_external(MethodState& s) {
  external_factors& x = external_of(s);
  if (!x.pending) return;
  member_status status = member_status::success;
  if (auto* R = real_matrix_of(s)) status = factorization_status(lu_factor(R->lu, R->pivot));
  if (status == member_status::success)
    if (auto* C = complex_matrix_of(s)) status = factorization_status(lu_factor(C->lu, C->pivot));
  x.status = status;
  x.pending = false;
  x.ready = true;
}

// Which factorization a member left for the factor phase (the byte `pending[i]`): the Newton matrices
// of a suspended attempt, or the Cholesky factorization a suspended projection awaits (the metric M,
// G W^-1 G^T, or C W^-1 C^T: formulation/projection.hpp, projection_phase). The CUDA phase batches
// each kind separately, since a batched call factors matrices of one size.
enum class pending_factor : unsigned char { none = 0, newton = 1, metric = 2, position_gram = 3, velocity_gram = 4 };

LOCKSTEP_HD constexpr pending_factor pending_factor_of(projection_phase phase) {
  switch (phase) {
    case projection_phase::metric: return pending_factor::metric;
    case projection_phase::positions:
    case projection_phase::stabilization_positions: return pending_factor::position_gram;
    case projection_phase::velocities:
    case projection_phase::stabilization_velocities: return pending_factor::velocity_gram;
    case projection_phase::idle: break;
  }
  return pending_factor::none;
}

// Which projections split (docs/GPU.md section 5.3): a projection factorization of more rows than
// this, or every one when run_options::split_factorization forces the split path. The Cholesky
// factorizations of a projection are n x n (the metric M) and m x m or (m + k) x (m + k) (the Gram
// matrices), and cost about a sixth of N^3 multiply-adds, half an LU of the same size; the threshold
// is the Newton matrices' for the same reasons (the factor in one thread is cheap below it, while each
// split factorization costs a launch, and a projection makes 2 to 12 of them per accepted step). No
// built-in model has a projection matrix above it (chain<16>: n = 32, m = 16).
inline constexpr int split_projection_threshold = split_factorization_threshold;

template <class Model>
inline constexpr bool uses_split_projection =
    Model::n > split_projection_threshold || Model::m + Model::k > split_projection_threshold;

// Rows above which a projection factorization is left to the factor phase: all when forced.
LOCKSTEP_HD constexpr int projection_split_above(bool forced) { return forced ? 0 : split_projection_threshold; }

// Members whose state the CUDA backend keeps in a member_workspace (member_kernels.hpp) instead of the
// thread's local memory: those that split. The same size rule: both the factorization and the state
// (and the Jacobian's temporaries) of a member above it are too much for one thread.
template <class Model>
inline constexpr bool uses_member_workspace = uses_split_factorization<Model>;

// advance_member with the factorizations external; pending[i] says which one member i stopped at.
// c.projections (when not null) holds the members' resumable projections: projections of more than
// projection_split_above rows suspend at their factorizations too. InWorkspace: the member and its
// projection_work live in workspace[i] while the launch runs (member_kernels.hpp, member_workspace).
template <class Model, class Method, bool InWorkspace = false>
struct advance_member_split {
  chunk_view<Model> c;
  int max_attempts;
  unsigned char* pending;
  int projection_split_above = 0;
  member_workspace<Model, Method>* workspace = nullptr;
  LOCKSTEP_HD void operator()(long i) const {
    if constexpr (InWorkspace) {
      run(i, workspace[i].state, workspace[i].projection);
    } else {
      member_state<Model, Method> ms;
      projection_work<Model> w;
      run(i, ms, w);
    }
  }
  LOCKSTEP_HD void run(long i, member_state<Model, Method>& ms, projection_work<Model>& w) const {
    double p[Model::n_params];
    detail::load_params(c, i, p);
    soa_load(c.states, c.stride, i, ms);
    external_of(ms.method).enabled = true;
    if (c.projections != nullptr) {
      soa_load(c.projections, c.stride, i, w);
      w.external.split_above = projection_split_above;
    }
    detail::soa_output_sink<Model> sink = detail::output_sink_of(c, i);
    c.finished[i] = member_advance<Model>(ms, max_attempts, c.t1, p, c.options, c.save_times, c.save_count, sink,
                                          c.projections != nullptr ? &w : nullptr);
    pending_factor why = pending_factor::none;
    if (external_of(ms.method).pending) why = pending_factor::newton;
    else if (c.projections != nullptr && w.external.pending) why = pending_factor_of(w.phase);  // else w is unused
    pending[i] = static_cast<unsigned char>(why);
    soa_store(c.states, c.stride, i, ms);
    if (c.projections != nullptr) soa_store(c.projections, c.stride, i, w);
  }
};

// The CPU factor phase: member i's pending matrices, by lu_factor (Newton) or cholesky_factor
// (projection).
template <class Model, class Method>
struct factor_member {
  chunk_view<Model> c;
  const unsigned char* pending;
  LOCKSTEP_HD void operator()(long i) const {
    const auto why = static_cast<pending_factor>(pending[i]);
    if (why == pending_factor::none) return;
    if (why == pending_factor::newton) {
      member_state<Model, Method> ms;
      soa_load(c.states, c.stride, i, ms);
      factor_external(ms.method);
      soa_store(c.states, c.stride, i, ms);
    } else {
      projection_work<Model> w;
      soa_load(c.projections, c.stride, i, w);
      factor_pending_projection(w);
      soa_store(c.projections, c.stride, i, w);
    }
  }
};

// Where the split path's data sit in a member state's SoA image (byte offsets; the CUDA factor phase
// reads and writes them in place, without loading whole states). -1 where the method has no such matrix.
struct split_offsets {
  long external = -1;
  long real_lu = -1, real_pivot = -1;
  long complex_lu = -1, complex_pivot = -1;
};

// Where the hand-over and the matrices of a projection_work sit in its SoA image (byte offsets), for
// the CUDA factor phase.
struct projection_offsets {
  long external = -1;
  long metric = -1, position_gram = -1, velocity_gram = -1;
};

}  // namespace lockstep
