// bench/peers/hem5_andrews.cpp — Brasey's HEM5, the half-explicit Runge-Kutta code of order 5 for
// constrained mechanical systems of index 2 (Brasey and Hairer, "Half-explicit Runge-Kutta methods for
// differential-algebraic systems of index 2", SIAM J. Numer. Anal. 30, 1993; the code of Brasey's thesis,
// Geneva 1994), on Andrews' squeezer, for bench/explicit_andrews.py: the peer that decides whether a
// half-explicit method would serve lockstep's non-stiff members better than dopri5 on the index-1
// formulation with the projection after each step (docs/METHODS.md).
//
// HEM5 is not part of lockstep: the script compiles this driver with the user's copy of its Fortran
// sources (hem5.f, the MA28 routines it calls, Hairer's DEC/SOL). The model is lockstep's own built-in
// andrews (the IVP Test Set's problem, its parameters and start), evaluated through the same header as
// lockstep's engines evaluate it, G = Phi_q by the same automatic differentiation: the two codes pay the
// same price per evaluation, and what differs is the method. HEM5 takes the index-2 form
//
//     q' = v,   M(q) v' = f(q, v) - G(q)^T lambda,   0 = G(q) v,
//
// lockstep's M q'' + G^T lambda = Q with f = Q (FPROB below fills what each call asks for).
//
// Usage: hem5_andrews RTOL REPEATS
// Solves t = 0 ... 0.03 REPEATS times at rtol = atol = RTOL (full linear algebra, DEC/SOL; no projection,
// the start is consistent) and prints one line: the seconds per solve (the repeats' wall time over their
// count, as lockstep's time per member is a study's over its members), the accepted and rejected steps,
// the evaluations of f, and the seven positions at t = 0.03.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lockstep/core/elementary_definitions.hpp"  // this program's one copy of lockstep's sin, cos, ...
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/derivatives.hpp"

namespace {

using Model = lockstep::models::andrews;
constexpr int n = Model::n, m = Model::m;
double params[Model::n_params];

}  // namespace

extern "C" {

// HEM5's problem: Fortran arguments by address; matrices column-major with the leading dimensions LDG
// (GQ) and LDA (AM).
void andrews_fprob(const int* ifcn, const int*, const int*, const int*, const int*, const int* ldg, const int*,
                   const int* lda, const int*, const int*, const int*, const int*, const int*, const int*, const int*,
                   const int*, const double* t, const double* q_in, const double* v_in, const double*,
                   const double*, double* g, double* gq, double* f, double*, double* gt, double*, double* qdot,
                   double*, double* am) {
  // What each call asks for (the table of modes in hem5.f's header); HEM5 calls 5 and 7 only for its
  // accelerations, which this driver does not ask for (IWK(15) = 0).
  const int mode = *ifcn;
  const bool wants_f = mode == 1 || mode == 5 || mode == 7 || mode == 8;
  const bool wants_m = mode == 1 || mode == 7 || mode == 8 || mode == 9 || mode == 10 || mode == 11;
  const bool wants_qdot = mode == 1 || mode == 2 || mode == 10;
  const bool wants_gt = mode == 3 || mode == 6 || mode == 10 || mode == 11;
  const bool wants_gq = mode == 6 || mode == 10 || mode == 11;
  lockstep::vec<double, n> q, v;
  for (int i = 0; i < n; ++i) {
    q[i] = q_in[i];
    v[i] = v_in[i];
  }
  if (wants_f) {
    const lockstep::vec<double, n> force = Model::force(*t, q, v, params);
    for (int i = 0; i < n; ++i) f[i] = force[i];
  }
  if (wants_m) {
    const lockstep::mat<double, n, n> M = Model::mass(q, params);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) am[i + j * *lda] = M(i, j);
  }
  if (wants_qdot)
    for (int i = 0; i < n; ++i) qdot[i] = v[i];
  if (wants_gt)  // the constraints do not depend on t
    for (int i = 0; i < m; ++i) gt[i] = 0.0;
  if (wants_gq) {
    const lockstep::mat<double, m, n> G = lockstep::constraint_jacobian<Model>(*t, q, params);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) gq[i + j * *ldg] = G(i, j);
  }
  if (mode == 4) {
    const lockstep::vec<double, m> phi = Model::constraint(*t, q, params);
    for (int i = 0; i < m; ++i) g[i] = phi[i];
  }
}

void andrews_solout(const int*, const int*, const int*, const int*, const int*, const int*, const int*,
                    const int*, const int*, const int*, const int*, void*, const double*, const double*,
                    const double*, const double*, const int*) {}

void hem5_(const int* nq, const int* nv, const int* nu, const int* nl, decltype(&andrews_fprob) fprob, double* t,
           double* q, double* v, double* u, double* a, double* lambda, const double* tend, double* h,
           const double* rtol, const double* atol, const int* itol, decltype(&andrews_solout) solout,
           const int* iout, double* wk, const int* lwk, int* iwk, const int* liwk, int* idid);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hem5_andrews RTOL REPEATS\n");
    return 2;
  }
  const double tol = std::atof(argv[1]);
  const int repeats = std::max(1, std::atoi(argv[2]));
  for (int i = 0; i < Model::n_params; ++i) params[i] = Model::params[i].default_value;

  const int nq = n, nv = n, nu = 0, nl = m, itol = 0, iout = 0;
  const int lwk = 4000, liwk = 4000;  // more than HEM5 asks for these sizes (it says so where not)
  std::vector<double> wk(lwk);
  std::vector<int> iwk(liwk);
  lockstep::vec<double, n> q, v;
  int idid = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    std::fill(wk.begin(), wk.end(), 0.0);
    std::fill(iwk.begin(), iwk.end(), 0);
    iwk[13] = 0;  // IWK(14), MODE: full linear algebra with DEC and SOL
    lockstep::vec<double, n> q0, v0;
    Model::initial_state(params, nullptr, q0, v0);
    q = q0;
    v = v0;
    double u[1] = {0.0}, a[n] = {}, lambda[m] = {};
    double t = 0.0, h = tol;
    const double tend = 0.03;
    hem5_(&nq, &nv, &nu, &nl, &andrews_fprob, &t, &q[0], &v[0], u, a, lambda, &tend, &h, &tol, &tol, &itol,
          &andrews_solout, &iout, wk.data(), &lwk, iwk.data(), &liwk, &idid);
    // HEM5 sets IDID itself only for inconsistent input (-1): its core integrator HCOR, which would
    // report the rest, has no IDID argument in the copy measured here (version of June 8, 1994), so the
    // end time says whether the solve got there.
    if (idid < 0 || t != tend) {
      std::fprintf(stderr, "hem5_andrews: HEM5 stopped at t = %g (IDID = %d, rtol %g)\n", t, idid, tol);
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
  // ISTAT = IWK(31..38): steps, accepted, rejected, f evaluations, ...
  std::printf("%.9e %d %d %d", seconds, iwk[31], iwk[32], iwk[33]);
  for (int i = 0; i < n; ++i) std::printf(" %.17e", q[i]);
  std::printf("\n");
  return 0;
}
