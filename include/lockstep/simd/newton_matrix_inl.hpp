// lockstep/simd/newton_matrix_inl.hpp — the Newton matrix of lockstep/formulation/euler_lagrange.hpp
// for W members at once, one per lane: its assembly from the lanes' Jacobian blocks at each lane's
// shift c, its factorization by the LU in lanes (lockstep/simd/lu_inl.hpp), and the Newton increment
// for each lane's residual (the scaled right-hand side, the triangular solves, the recovery of the
// unscaled increments and of Delta v): factor_newton_matrix and solve_newton of euler_lagrange.hpp.
//
// The assembly, the right-hand side and the recovery are euler_lagrange.hpp's own templates
// (detail::newton_matrix_entries, newton_right_side, newton_recover) instantiated on packs; what this
// header adds is the dropped constraint rows per lane (jacobian_blocks::dropped, a 64-bit mask per
// member, here a lane of an integer vector): a row dropped in some lanes becomes an identity row and
// column in those lanes by blends, the others keep their entries. So each lane gets the bits its member
// gets alone, from the matrix to the increment (tests/simd/newton_matrix_test.cpp compares them at
// W = 1, 2, 4, 8 on every instruction set), and a lane whose factorization fails keeps its status while
// the others go on (lu_inl.hpp).
//
// Per-target header (Highway's foreach_target convention): include after hwy/highway.h, inside no
// namespace.
#if defined(LOCKSTEP_SIMD_NEWTON_MATRIX_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_NEWTON_MATRIX_INL_HPP_
#undef LOCKSTEP_SIMD_NEWTON_MATRIX_INL_HPP_
#else
#define LOCKSTEP_SIMD_NEWTON_MATRIX_INL_HPP_
#endif

#include "hwy/highway.h"
#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/simd/lu_inl.hpp"
#include "lockstep/simd/newton_control_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// Each lane's dropped-row mask (jacobian_blocks::dropped of its member).
template <class D>
struct dropped_lanes {
  int_vec<D> bits;
};

// The operations euler_lagrange.hpp's generic Newton code does with a dropped-row mask, per lane.
template <class D>
HWY_INLINE bool any_row_dropped(const dropped_lanes<D>& dropped) {
  const int_tag<D> di;
  return !hn::AllTrue(di, hn::Eq(dropped.bits, hn::Zero(di)));
}

// E: pack<D>, or complex<pack<D>> for Radau IIA's complex block.
template <class D, class E, int S>
HWY_INLINE void pin_if_dropped(const dropped_lanes<D>& dropped, int row, mat<E, S, S>& N, int u) {
  const D d;
  const mask<D> pinned = row_dropped<D>(dropped.bits, row);
  if (hn::AllFalse(d, pinned)) return;
  const E zero(pack<D>(0.0)), one(pack<D>(1.0));
  for (int j = 0; j < S; ++j) {
    N(u, j) = select(pinned, zero, N(u, j));
    N(j, u) = select(pinned, zero, N(j, u));
  }
  N(u, u) = select(pinned, one, N(u, u));
}

template <class D, class E>
HWY_INLINE void zero_if_dropped(const dropped_lanes<D>& dropped, int row, E& b) {
  b = select(row_dropped<D>(dropped.bits, row), E(pack<D>(0.0)), b);
}

// Whether constraint row `row` is dropped, per lane (as euler_lagrange.hpp's row_dropped of one member's
// mask): the error weights of the multipliers held (radau_weights).
template <class D>
HWY_INLINE mask<D> row_dropped(const dropped_lanes<D>& dropped, int row) {
  return row_dropped<D>(dropped.bits, row);
}

// The factored Newton matrices of W members, one per lane, and each lane's shift: newton_matrix on packs.
template <class Model, class D>
using newton_matrix_lanes = lockstep::newton_matrix<Model, pack<D>>;

// factor_newton_matrix per lane: assembles each lane's matrix at its shift c into N and factors it in
// place (lu_inl.hpp). Returns each lane's lu_info and failing column (factorization_status of
// lu_generic.inc maps a lane's info to its status).
template <class Model, class D>
HWY_INLINE lockstep::basic_factor_result<pack<D>> factor_newton_matrix(formulation f,
                                                                      const jacobian_values<Model, pack<D>>& J,
                                                                      const dropped_lanes<D>& dropped, pack<D> c,
                                                                      newton_matrix_lanes<Model, D>& N) {
  lockstep::detail::newton_matrix_entries<Model, pack<D>>(f, J, dropped, c, N.lu);
  N.c = c;
  return lu_factor(N.lu, N.pivot);
}

// solve_newton per lane: each lane's increment for its residual parts, with its factors of
// factor_newton_matrix. A lane whose factorization failed gets a finite increment of no meaning (its
// matrix is the identity there, lu_inl.hpp); its member stops on that status.
template <class Model, class D>
HWY_INLINE void solve_newton(formulation f, const jacobian_values<Model, pack<D>>& J, const dropped_lanes<D>& dropped,
                             const newton_matrix_lanes<Model, D>& N, const residual_parts<Model, pack<D>>& r,
                             lockstep::vec<pack<D>, Model::n>& dq, lockstep::vec<pack<D>, Model::n>& dv,
                             lockstep::vec<pack<D>, Model::m>& dlambda, lockstep::vec<pack<D>, Model::m>& dmu,
                             lockstep::vec<pack<D>, Model::k>& dnu) {
  constexpr int size = state_layout<Model>::newton_size;
  lockstep::vec<pack<D>, size> b;
  newton_right_side<Model, pack<D>>(f, J, dropped, N.c, r.Fq, r.Fv, r.Fphi, r.Fpsi, r.Fa, b);
  lu_solve(N.lu, N.pivot, b);
  newton_recover<Model, pack<D>>(f, J, N.c, b, r.Fq, dq, dv, dlambda, dmu, dnu);
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
