// lockstep/simd/radau_attempt_inl.hpp — one step attempt of the Radau IIA family (lockstep/method/radau.hpp,
// radau_attempt: Radau IIA 5, Radau IIA 3 and backward Euler) for W members at once, one per lane, each
// with its own time, step, stages, Jacobian, factors and controller memory: the one text of
// lockstep/method/radau_attempt_generic.inc, which the one-member code compiles for doubles, compiled
// here for packs, with the dense work of a pack of members (that text's header lists it):
//  - the Jacobian of the lanes without a valid one (corrector_inl.hpp, lanes_jacobians: on the pack
//    where nearly all lanes need one, as they mostly do here, else lane by lane on the double code): a
//    lane's bits do not depend on the code that computed them, and a Jacobian is kept over steps
//    while Newton contracts fast;
//  - the real block at gamma / h and the complex block at (alpha - i beta) / h of the lanes that need
//    them, assembled and factored in lanes (newton_matrix_inl.hpp, the LU of lu_inl.hpp on complex<pack>
//    for the complex block), the other lanes keeping their factors.
// Each lane ends the attempt with exactly the state, status, result and counts its member ends
// radau_attempt with alone (tests/simd/radau_attempt_test.cpp), so a member's integration does not
// depend on its lane, its pack or W.
//
// radau_lanes holds radau_state<Model, RT> for W members, under its names; load_lane and store_lane move
// one member between its radau_state and a lane, bit for bit. The split path (factors computed outside
// the attempt) and the step's companion (the tangents) are not part of the lanes.
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_RADAU_ATTEMPT_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_RADAU_ATTEMPT_INL_HPP_
#undef LOCKSTEP_SIMD_RADAU_ATTEMPT_INL_HPP_
#else
#define LOCKSTEP_SIMD_RADAU_ATTEMPT_INL_HPP_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "lockstep/core/complex.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/radau.hpp"
#include "lockstep/simd/bdf_history_inl.hpp"
#include "lockstep/simd/corrector_inl.hpp"
#include "lockstep/simd/lu_inl.hpp"
#include "lockstep/simd/newton_matrix_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"
#include "lockstep/simd/step_control_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// The Newton matrix of a Radau IIA block per lane: newton_matrix on packs (E = pack<D>) or on complex
// packs (E = complex<pack<D>>), or nothing where the tableau has no such block.
template <class Model, class E, bool present>
using radau_block_lanes = std::conditional_t<present, lockstep::newton_matrix<Model, E>, absent_newton_matrix>;

// What an attempt computes before it blends it into the lanes that take it: the new Jacobian blocks,
// and the blocks assembled and factored. It grows as the square of the model's unknowns,
// so it lives with the lanes' state (corrector_scratch says why), and holds nothing from one call to the
// next.
template <class Model, class RT, class D>
struct radau_scratch {
  jacobian_scratch<Model, D> jacobian;
  radau_block_lanes<Model, pack<D>, RT::has_real_eigenvalue> real_block;
  radau_block_lanes<Model, lockstep::complex<pack<D>>, RT::has_complex_pair> complex_block;
};

// radau_state<Model, RT> per lane, under its names, as the one text of the attempt reads them: the
// small integers in double lanes, the flags as masks, the Jacobian's dropped rows as each lane's mask.
template <class Model, class RT, class D>
struct radau_lanes {
  using Y = lockstep::vec<pack<D>, state_layout<Model>::size>;
  pack<D> t, t0, h;
  Y y, yp;
  pack<D> h_last;
  Y y_last;
  Y Z[RT::stages];
  mask<D> have_step;
  pack<D> h_accepted, err_accepted;
  mask<D> first, last_rejected;
  pack<D> newton_cuts, newton_iterations, theta, error;
  jacobian_values<Model, pack<D>> jac;
  dropped_lanes<D> dropped;
  radau_block_lanes<Model, pack<D>, RT::has_real_eigenvalue> real_block;
  radau_block_lanes<Model, lockstep::complex<pack<D>>, RT::has_complex_pair> complex_block;
  mask<D> jacobian_valid;
  pack<D> factored_h;
  radau_scratch<Model, RT, D> scratch;
  corrector_work work;  // the Newton iterations and factorizations the pack ran (corrector_inl.hpp)
};

// A block without factors: the identity without interchanges at shift 1 (finite, no division by zero).
template <class Model, class E>
HWY_INLINE void clear_block(lockstep::newton_matrix<Model, E>& N) {
  constexpr int size = lockstep::newton_matrix<Model, E>::size;
  using P = lane_index_t<E>;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) N.lu(i, j) = E(P(i == j ? 1.0 : 0.0));
    N.pivot[i] = P(double(i));
  }
  N.c = E(P(1.0));
}
template <class Model>
HWY_INLINE void clear_block(absent_newton_matrix&) {}

// Lane l of a block takes member block b where `valid` (else the identity of clear_block), and gives
// it back.
template <class Model, class D>
HWY_INLINE void load_block_lane(lockstep::newton_matrix<Model, pack<D>>& N, size_t l,
                                const lockstep::newton_matrix<Model, double>& b, bool valid) {
  constexpr int size = lockstep::newton_matrix<Model, double>::size;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) set_lane(N.lu(i, j), l, valid ? b.lu(i, j) : i == j ? 1.0 : 0.0);
    set_lane(N.pivot[i], l, double(valid ? b.pivot[i] : i));
  }
  set_lane(N.c, l, valid ? b.c : 1.0);
}
template <class Model, class D>
HWY_INLINE void load_block_lane(lockstep::newton_matrix<Model, lockstep::complex<pack<D>>>& N, size_t l,
                                const lockstep::newton_matrix<Model, lockstep::complex<double>>& b, bool valid) {
  constexpr int size = lockstep::newton_matrix<Model, double>::size;
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) {
      set_lane(N.lu(i, j).re, l, valid ? b.lu(i, j).re : i == j ? 1.0 : 0.0);
      set_lane(N.lu(i, j).im, l, valid ? b.lu(i, j).im : 0.0);
    }
    set_lane(N.pivot[i], l, double(valid ? b.pivot[i] : i));
  }
  set_lane(N.c.re, l, valid ? b.c.re : 1.0);
  set_lane(N.c.im, l, valid ? b.c.im : 0.0);
}
template <class Model, class D>
HWY_INLINE void store_block_lane(const lockstep::newton_matrix<Model, pack<D>>& N, size_t l,
                                 lockstep::newton_matrix<Model, double>& b) {
  constexpr int size = lockstep::newton_matrix<Model, double>::size;
  for (int e = 0; e < size * size; ++e) b.lu.a[e] = lane_of(N.lu.a[e], l);
  for (int i = 0; i < size; ++i) b.pivot[i] = int(lane_of(N.pivot[i], l));
  b.c = lane_of(N.c, l);
}
template <class Model, class D>
HWY_INLINE void store_block_lane(const lockstep::newton_matrix<Model, lockstep::complex<pack<D>>>& N, size_t l,
                                 lockstep::newton_matrix<Model, lockstep::complex<double>>& b) {
  constexpr int size = lockstep::newton_matrix<Model, double>::size;
  for (int e = 0; e < size * size; ++e) b.lu.a[e] = {lane_of(N.lu.a[e].re, l), lane_of(N.lu.a[e].im, l)};
  for (int i = 0; i < size; ++i) b.pivot[i] = int(lane_of(N.pivot[i], l));
  b.c = {lane_of(N.c.re, l), lane_of(N.c.im, l)};
}
template <class Model, class D>
HWY_INLINE void load_block_lane(absent_newton_matrix&, size_t, const absent_newton_matrix&, bool) {}
template <class Model, class D>
HWY_INLINE void store_block_lane(const absent_newton_matrix&, size_t, absent_newton_matrix&) {}

// S without a member: every value finite and every matrix the identity (the pack's arithmetic runs in
// every lane, also in a lane no member has entered yet). In place: a radau_lanes of a large model is
// megabytes.
template <class Model, class RT, class D>
HWY_INLINE void clear_lanes(radau_lanes<Model, RT, D>& S) {
  const D d;
  const int_tag<D> di;
  const pack<D> zero(0.0), one(1.0);
  S.t = S.t0 = S.h_last = S.h_accepted = S.newton_cuts = S.newton_iterations = S.error = S.factored_h = zero;
  S.h = S.theta = S.err_accepted = one;
  for (int j = 0; j < state_layout<Model>::size; ++j) {
    S.y[j] = S.yp[j] = S.y_last[j] = zero;
    for (int i = 0; i < RT::stages; ++i) S.Z[i][j] = zero;
  }
#define LOCKSTEP_SIMD_ZERO_BLOCK(B) \
  for (pack<D> & x : S.jac.B.a) x = zero;
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_ZERO_BLOCK)
#undef LOCKSTEP_SIMD_ZERO_BLOCK
  S.dropped.bits = hn::Zero(di);
  clear_block<Model>(S.real_block);
  clear_block<Model>(S.complex_block);
  S.have_step = S.first = S.last_rejected = S.jacobian_valid = hn::FirstN(d, 0);
}

// Lane l of S becomes the member s (its split-path state, unused by lanes, is not carried). S's other
// lanes are not read: a pack can be filled lane by lane.
template <class Model, class RT, class D>
HWY_INLINE void load_lane(radau_lanes<Model, RT, D>& S, size_t l, const radau_state<Model, RT>& s) {
  using L = state_layout<Model>;
  set_lane(S.t, l, s.t), set_lane(S.t0, l, s.t0), set_lane(S.h, l, s.h), set_lane(S.h_last, l, s.h_last);
  for (int j = 0; j < L::size; ++j) {
    set_lane(S.y[j], l, s.y[j]), set_lane(S.yp[j], l, s.yp[j]), set_lane(S.y_last[j], l, s.y_last[j]);
    for (int i = 0; i < RT::stages; ++i) set_lane(S.Z[i][j], l, s.Z[i][j]);
  }
  set_mask_lane<D>(S.have_step, l, s.have_step);
  set_lane(S.h_accepted, l, s.h_accepted), set_lane(S.err_accepted, l, s.err_accepted);
  set_mask_lane<D>(S.first, l, s.first), set_mask_lane<D>(S.last_rejected, l, s.last_rejected);
  set_lane(S.newton_cuts, l, double(s.newton_cuts)), set_lane(S.newton_iterations, l, double(s.newton_iterations));
  set_lane(S.theta, l, s.theta), set_lane(S.error, l, s.error);
  // The Jacobian and the factors where valid; elsewhere finite values (a member's invalid ones may be a
  // failed evaluation's, or never written), which nothing reads as the member's.
#define LOCKSTEP_SIMD_LOAD_BLOCK(B) \
  for (size_t e = 0; e < std::size(s.jac.B.a); ++e) set_lane(S.jac.B.a[e], l, s.jacobian_valid ? s.jac.B.a[e] : 0.0);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_LOAD_BLOCK)
#undef LOCKSTEP_SIMD_LOAD_BLOCK
  S.dropped.bits = with_lane(S.dropped.bits, l, static_cast<int64_t>(s.jac.dropped));
  const bool factored = s.jacobian_valid && s.factored_h != 0.0;
  load_block_lane<Model, D>(S.real_block, l, s.real_block, factored);
  load_block_lane<Model, D>(S.complex_block, l, s.complex_block, factored);
  set_mask_lane<D>(S.jacobian_valid, l, s.jacobian_valid);
  set_lane(S.factored_h, l, s.factored_h);
}

// The member in lane l of S, without its Jacobian and factors, into s: what its dense output reads
// (the last step: radau_dense_output), and the step controller's state.
template <class Model, class RT, class D>
HWY_INLINE void store_history_lane(const radau_lanes<Model, RT, D>& S, size_t l, radau_state<Model, RT>& s) {
  using L = state_layout<Model>;
  s.t = lane_of(S.t, l), s.t0 = lane_of(S.t0, l), s.h = lane_of(S.h, l), s.h_last = lane_of(S.h_last, l);
  for (int j = 0; j < L::size; ++j) {
    s.y[j] = lane_of(S.y[j], l), s.yp[j] = lane_of(S.yp[j], l), s.y_last[j] = lane_of(S.y_last[j], l);
    for (int i = 0; i < RT::stages; ++i) s.Z[i][j] = lane_of(S.Z[i][j], l);
  }
  s.have_step = mask_lane_of<D>(S.have_step, l);
  s.h_accepted = lane_of(S.h_accepted, l), s.err_accepted = lane_of(S.err_accepted, l);
  s.first = mask_lane_of<D>(S.first, l), s.last_rejected = mask_lane_of<D>(S.last_rejected, l);
  s.newton_cuts = int(lane_of(S.newton_cuts, l)), s.newton_iterations = int(lane_of(S.newton_iterations, l));
  s.theta = lane_of(S.theta, l), s.error = lane_of(S.error, l);
}

// The member in lane l of S, into s (the inverse of load_lane).
template <class Model, class RT, class D>
HWY_INLINE void store_lane(const radau_lanes<Model, RT, D>& S, size_t l, radau_state<Model, RT>& s) {
  store_history_lane(S, l, s);
#define LOCKSTEP_SIMD_STORE_BLOCK(B) \
  for (size_t e = 0; e < std::size(s.jac.B.a); ++e) s.jac.B.a[e] = lane_of(S.jac.B.a[e], l);
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_SIMD_STORE_BLOCK)
#undef LOCKSTEP_SIMD_STORE_BLOCK
  s.jac.dropped = static_cast<std::uint64_t>(hn::ExtractLane(S.dropped.bits, l));
  store_block_lane<Model, D>(S.real_block, l, s.real_block);
  store_block_lane<Model, D>(S.complex_block, l, s.complex_block);
  s.jacobian_valid = mask_lane_of<D>(S.jacobian_valid, l);
  s.factored_h = lane_of(S.factored_h, l);
}

// The dense work of the attempt in lanes (lockstep/method/radau_attempt_generic.inc's header says what
// each does).

template <class Model, class RT, class D>
HWY_INLINE const dropped_lanes<D>& radau_dropped(const radau_lanes<Model, RT, D>& s) {
  return s.dropped;
}

template <class Model, class RT, class D>
HWY_INLINE mask<D> radau_resumed_fresh(radau_lanes<Model, RT, D>&) {
  return hn::FirstN(D(), 0);  // the split path is not part of the lanes
}

template <class Model, class RT, class D>
HWY_INLINE pack<D> radau_jacobian(mask<D> need, formulation form, radau_lanes<Model, RT, D>& s, const pack<D>* p,
                                  const solver_options& opt) {
  return lanes_jacobians<Model>(need, form, s.t, s.y, s.yp, p, opt, s.jac, s.dropped, s.scratch.jacobian);
}

// Block N of the lanes of `need` becomes fresh (assembled and factored at shift c), the others keep
// theirs; each lane's status (factorization_status).
template <class Model, class E, class D>
HWY_INLINE pack<D> factor_block(mask<D> need, formulation form, const jacobian_values<Model, pack<D>>& J,
                                const dropped_lanes<D>& dropped, E c, lockstep::newton_matrix<Model, E>& fresh,
                                lockstep::newton_matrix<Model, E>& N) {
  constexpr int size = lockstep::newton_matrix<Model, E>::size;
  lockstep::detail::newton_matrix_entries<Model, E>(form, J, dropped, c, fresh.lu);
  fresh.c = c;
  const lockstep::basic_factor_result<pack<D>> fr = lu_factor(fresh.lu, fresh.pivot);
  for (int e = 0; e < size * size; ++e) N.lu.a[e] = select(need, fresh.lu.a[e], N.lu.a[e]);
  for (int i = 0; i < size; ++i) N.pivot[i] = select(need, fresh.pivot[i], N.pivot[i]);
  N.c = select(need, c, N.c);
  return factorization_status(fr);
}

// One Newton iteration of the lanes of `iterating`, counted (corrector_work).
template <class Model, class RT, class D>
HWY_INLINE void radau_newton_iteration(mask<D> iterating, radau_lanes<Model, RT, D>& s) {
  ++s.work.pack_iterations;
  s.work.lane_iterations += static_cast<std::uint64_t>(hn::CountTrue(D(), iterating));
}

// The real block at gamma / h, then the complex block at (alpha - i beta) / h: a lane whose real block
// fails reports that (its complex block, factored too, is not read: its factors are not valid).
template <class Model, class RT, class D>
HWY_INLINE pack<D> radau_factor(mask<D> need, formulation form, pack<D> h, mask<D> /*fresh*/,
                                radau_lanes<Model, RT, D>& s, bool& /*suspended: no split path*/) {
  using P = pack<D>;
  constexpr std::uint64_t blocks = int(RT::has_real_eigenvalue) + int(RT::has_complex_pair);
  s.work.pack_factorizations += blocks;
  s.work.lane_factorizations += blocks * static_cast<std::uint64_t>(hn::CountTrue(D(), need));
  const P success(double(member_status::success));
  P status = success;
  if constexpr (RT::has_real_eigenvalue)
    status = factor_block<Model>(need, form, s.jac, s.dropped, P(RT::gamma / h), s.scratch.real_block, s.real_block);
  if constexpr (RT::has_complex_pair) {
    const lockstep::complex<P> c(RT::alpha / h, -RT::beta / h);
    const P cs = factor_block<Model>(need, form, s.jac, s.dropped, c, s.scratch.complex_block, s.complex_block);
    status = select(status == success, cs, status);
  }
  return status;
}

// The attempt and its parts, compiled for this instruction set's packs from the text the one-member
// code compiles.
#include "lockstep/method/radau_attempt_generic.inc"  // IWYU pragma: keep

// radau_attempt for the lanes of `lanes` (p[i]: parameter i of every lane). Returns each lane's
// attempt_result as a double (the other lanes: -1); sets status where a lane fails.
template <class Model, class RT, class D>
HWY_NOINLINE pack<D> radau_attempt(mask<D> lanes, radau_lanes<Model, RT, D>& s, pack<D> t_end, const pack<D>* p,
                                   const solver_options& opt, attempt_counters_lanes<D>& counters, pack<D>& status) {
  return radau_attempt<Model, RT>(lanes, s, t_end, p, opt, counters, status, no_companion{});
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
