// lockstep/simd/projection_inl.hpp — the projection of accepted points onto the constraint manifold
// (lockstep/formulation/projection.hpp: coordinate projection, post-stabilization, the projected
// invariants' velocity projection) for W members at once, one per lane, each at its own point: the one
// text of lockstep/formulation/projection_generic.inc, which project_state compiles for doubles,
// compiled here for packs, with the model's mass matrix and constraint Jacobians on packs, the Gram
// matrices factored by the Cholesky factorization in lanes (lu_inl.hpp) and each lane's dropped rows
// (newton_matrix_inl.hpp's dropped_lanes). Each lane ends with exactly the point, status and sizes of
// corrections its member's project_state gives alone (tests/simd/member_test.cpp compares every
// method's members in lanes with them alone, with each projection).
//
// For translation units built for one instruction set (HWY_COMPILE_ONLY_STATIC), as corrector_inl.hpp.
// Per-target header: include after hwy/highway.h, inside no namespace.
#if defined(LOCKSTEP_SIMD_PROJECTION_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_PROJECTION_INL_HPP_
#undef LOCKSTEP_SIMD_PROJECTION_INL_HPP_
#else
#define LOCKSTEP_SIMD_PROJECTION_INL_HPP_
#endif

#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "lockstep/formulation/projection.hpp"
#include "lockstep/simd/lu_inl.hpp"
#include "lockstep/simd/newton_matrix_inl.hpp"
#include "lockstep/simd/pack_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

// The lane types the text is compiled for here (projection_generic.inc): packs.
template <class S>
concept projection_lane = std::is_same_v<S, pack<typename S::tag>>;

#include "lockstep/formulation/projection_generic.inc"  // IWYU pragma: keep

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
