// lockstep/lyapunov/tangent.hpp — forward sensitivities (tangents) of one member's solution with
// respect to its initial state and its parameters, integrated with the member's own steps.
//
// What is differentiated. A member's numerical solution is a map from (q0, v0, p) to the sequence of
// accepted BDF points y_n = (q, v, lambda, mu, nu)_n. With the step sizes and orders held at the values
// the member chose (they are piecewise constant in the inputs), every step is the smooth map defined by
// the BDF corrector equation (method/bdf.hpp)
//
//     F(t_n, y_n, y'_pred + c (y_n - y_pred)) = 0,     (y_pred, y'_pred) = linear in the past points,
//
// so its derivative along a direction s solves the linearized corrector equation
//
//     (F_y + c F_y') s_n = -F_y' (s'_pred - c s_pred) - F_p e_j,                                  (T1)
//
// where (s_pred, s'_pred) is the same predictor applied to the past tangents, and F_p e_j appears only
// for the sensitivity to parameter j. This is the "staggered direct" method of Caracotsios & Stewart
// (1985, Comput. Chem. Eng. 9) as used in DASPK3.0 and IDAS (Maly & Petzold 1996, Appl. Numer. Math.
// 20; Feehery, Tolsma & Barton 1997, Appl. Numer. Math. 25; the IDAS guide's forward sensitivity
// chapter): after the state's Newton iteration has converged, (T1) is solved once per
// direction, with the EXACT Jacobian evaluated at the converged point (not the corrector's simplified,
// possibly stale Newton matrix: that would make the tangents depend on when the Jacobian was last
// refreshed, and be wrong by O(h) at every step). The tangent history is kept in the representation the
// state history uses (past values at the BDF nodes, plus the confluent initial derivative while t0 is in
// the window: method/interpolation.hpp), and the predictor applies the same divided differences to it,
// so the tangents are the exact derivatives of the discrete solution, not of the exact flow: they agree
// with finite differences of two member solves (with the same step sequence) to the finite-difference
// error, and with the exact variational equation to the method's global error.
//
// Constraints. The rows Phi(q_n) = 0 (lambda slot), G v + Phi_t = 0 (mu slot, ggl) and A v + a = 0
// (nu slot) are part of F, so (T1) contains their linearizations
//     G s_q = -Phi_p e_j,   Psi_q s_q + G s_v = -Psi_p e_j,   A_q s_q + A s_v = -(A v + a)_p e_j
// at every accepted point: the tangents stay in the tangent space of the constraint manifold by
// construction, to the rounding of one linear solve, and no projection of the tangents is needed
// (tests/lyapunov/tangent_test.cpp checks |G s_q| and |Psi_q s_q + G s_v| at every step). The initial
// tangents are put in that space by the exact derivative of consistent initialization (stepper/
// initialize.hpp) at a consistent point: the minimal-norm projector of Mantegazza & Masarati 2012, eq. (121), see
// initial_phase_tangent and initial_full_tangent (lyapunov/initial_tangents.hpp).
//
// Error control of the tangents (IDAS's IDASetSensErrCon; Maly & Petzold 1996). The state's error
// test does not see the tangents: where the state decays below its absolute tolerance (an attracting
// equilibrium, as for the damped linear oscillator) the steps grow without bound while the tangents,
// renormalized to size 1 by the Lyapunov QR, still need to be resolved (measured: steps of 10 time
// units and exponents wrong by 0.2-4.4 on the oscillator with d = 5). So, unless switched off, each
// direction's local error is estimated like the state's (method/bdf.hpp, LTE_k = (s - s_pred) /
// (1 + c (t_n - tau_{k+1}))), in the weighted RMS norm over its (q, v) parts with weights
// 1 / (rtol' (|s_j| + max_i |s_i|)) for directions in the initial state — relative to the direction's
// own size, since they have no natural absolute scale — and IDAS's parameter-scaled weights for
// parameters (detail::tangent_weighting), with BDF's internal rtol'. The tangents are the companion of
// the member's step (method/attempt.hpp): once the state has converged and passed its own error test,
// (T1) is solved, and BDF's one order and step selection (method/bdf_step_control.hpp: orders k - 1, k,
// k + 1 after acceptance, the escalating cut after error-test failures) decides on the larger of the
// state's and the tangents' estimates at each order; a step whose tangents fail the test is rejected
// like any other (nothing of the member has changed yet) and counts as an error-test failure. With the state's
// estimates alone, a state decayed below its tolerance makes every order look equally good, the tie
// goes to the lowest order, and the tangents then need order-1 steps (measured: 5e5 steps for
// t = 300). Each combined estimate is at least the state's, so the state keeps its own accuracy; with
// error control off the decision is the state's alone, bitwise the plain member's.
//
// Scope. BDF on the ggl formulation (adaptive) and on index3 (fixed steps, as BDF allows), here; the
// Radau IIA methods on index3 and ggl in lyapunov/tangent_radau.hpp; no projection after steps (a
// projection is a further map the tangents would have to follow). tangent_check_options refuses every
// other combination (rho_inf, index1, projected invariants, projections) with a sentence.
//
// The linear system. (T1) is the Newton system of the corrector with the exact Jacobian at the
// converged point, so it is solved the way the corrector solves its own (formulation/euler_lagrange.hpp,
// "The Newton matrix"): the kinematic rows F_q = q' - v + G^T mu are eliminated, leaving n + 2m + k
// unknowns (not 2n + 2m + k) in a matrix scaled to a nonsingular limit as h -> 0 (Ascher & Petzold 1998, ch. 10,
// "Ill-conditioned Newton iteration matrix"). Two differences from the corrector's matrix: the blocks
// are evaluated at the converged point every accepted step, and on ggl the kinematic rows keep the term
// H = d(G^T mu)/dq that the simplified Newton matrix leaves out, so the elimination reads
// s_v = (c I + H) s_q + G^T s_mu + ..., which adds (c M - D_v) H, G H and A H to the blocks K, Psi_q and
// A_q (factor_tangent_step_matrix). The unknown is the correction to the predicted tangent,
// s = s_pred + delta, whose right-hand side is the linearized residual at the predictor: solving for s
// itself, the recovery of s_v would cancel terms of size c |s| (solve_tangent_steps). The matrix is
// factored once per accepted step by the pivoted LU and the directions are solved together
// (euler_lagrange.hpp's solve_newton_columns). Measured cost of a full spectrum: docs/LYAPUNOV.md.
//
// The pieces, one concept per file: lyapunov/parameter_duals.hpp (parameters as dual numbers),
// linearized_residual.hpp (the exact linearization), tangent_bdf_system.hpp (the system (T1)),
// initial_tangents.hpp, tangent_error_control.hpp (the tangents' error norm), tangent_member_common.hpp
// (what the BDF and Radau members share) and tangent_bdf.hpp (the BDF member and its step);
// lyapunov/tangent_radau.hpp is the Radau IIA member. Including this file includes the BDF pieces.
#pragma once

#include "lockstep/lyapunov/initial_tangents.hpp"
#include "lockstep/lyapunov/linearized_residual.hpp"
#include "lockstep/lyapunov/parameter_duals.hpp"
#include "lockstep/lyapunov/tangent_bdf.hpp"
#include "lockstep/lyapunov/tangent_bdf_system.hpp"
#include "lockstep/lyapunov/tangent_error_control.hpp"
#include "lockstep/lyapunov/tangent_member_common.hpp"
