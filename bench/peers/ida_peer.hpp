// bench/peers/ida_peer.hpp — SUNDIALS IDA solving a lockstep model in the stabilized index-2 (GGL)
// form: the peer lockstep is measured against.
//
// The setting is the one a careful IDA user would choose for a multibody DAE (IDA user guide, v6.4,
// sections 2.1 and 4.5; SUNDIALS' own multibody example sundials/examples/ida/serial/idaSlCrank_dns.c solves
// the same stabilized index-2 form):
//   - the residual F(t, y, y') of lockstep's ggl formulation, y = (q, v, lambda, mu, nu)
//     (formulation/euler_lagrange.hpp: F_q = q' - v + G^T mu, F_v = M v' + G^T lambda + A^T nu - Q,
//     Phi, G v + Phi_t, A v + a), evaluated by the very function lockstep's methods call;
//   - algebraic variables (lambda, mu, nu) marked by IDASetId and left out of the local error test
//     (IDASetSuppressAlg): their BDF error estimate does not vanish as h -> 0 on index-2 problems
//     (Brenan, Campbell & Petzold 1996, 5.4; the IDA guide recommends it for higher-index systems);
//   - the dense direct linear solver (SUNDenseMatrix + SUNLinSol_Dense: LU with partial pivoting)
//     with the exact Jacobian dF/dy + c_j dF/dy', assembled from lockstep's automatic-differentiation
//     blocks (evaluate_jacobian, plus d(G^T mu)/dq for the GGL row); no difference quotients;
//   - consistent initial values from lockstep's consistent initialization (method/initialize.hpp):
//     (q, v) projected onto the constraints, (q'', lambda) from the index-1 system, mu = 0, so
//     IDACalcIC is not needed and both codes start from the same point;
//   - the same tolerances as lockstep: rtol, and componentwise atol (atol_q, atol_v, atol_lambda);
//   - two settings a careful user arrives at after IDA's first failures on these problems (both
//     switchable in ida_options; bench/peers/work_precision.cpp measures what happens without them):
//       * the first step lockstep takes (method/step_control.hpp, initial_step_size) through
//         IDASetInitStep. IDA's own rule, h ||y'|| = 0.5 in the weighted norm, gives h ~ 1e-15 on
//         andrews at rtol 1e-6 (its accelerations are ~1e5 weighted by 1/atol), where the Newton
//         iteration drowns in round-off: IDA_CONV_FAIL at t = 0 for every member at rtol <= 1e-6;
//       * the multipliers' weights in IDA's Newton test scaled by h (an IDAEwtFn set by
//         IDAWFtolerances, error_weights below): RADAU5's index-2 scaling, which lockstep's own Newton
//         norm applies too. Without it IDA_CONV_FAIL at t = 0 for every andrews member at rtol <= 1e-8;
//   - everything else at IDA's defaults (maximum order 5, Newton with epcon = 0.33, at most 4
//     iterations, Jacobian and LU kept while c_j stays within a factor 0.6 .. 1/0.6 of the value they
//     were formed at, the stale c_j compensated by IDA's scaling of the Newton correction), except
//     max_steps, raised to lockstep's.
// Outputs at the save times come from IDA's interpolation (IDA_NORMAL mode), the final time is a stop
// time (IDASetStopTime): like lockstep, IDA never shortens a step for a save time and lands on t1.
//
// One ida_ggl_solver per thread: it owns a SUNContext, the vectors, the matrix, the linear solver and
// the IDA memory, and re-initializes them for every member (IDAReInit keeps the options and the
// linear solver), which is what a user solving many systems in a loop does. Solving is
// deterministic: a member's result does not depend on which members the workspace solved before
// (tests/peers checks this).
#pragma once

#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/step_control.hpp"
#include "lockstep/model/derivatives.hpp"
#include "lockstep/method/initialize.hpp"
#include "lockstep/method/options.hpp"

namespace lockstep::peers {

struct ida_options {
  double rtol = 1e-6;
  double atol_q = 1e-6;
  double atol_v = 1e-6;
  double atol_lambda = 1e-6;  // lambda, mu and nu (in IDA's Newton test only: they are suppressed from the error test)
  long max_steps = 500000;    // lockstep's solver_options::max_steps
  // The first step: lockstep's choice (method/step_control.hpp, initial_step_size: the order-1 error
  // h^2 / 2 ||q''|| aimed at 0.1) when true, IDA's own (h ||y'|| = 0.5 in its weighted norm) when false.
  bool lockstep_initial_step = true;
  // The weights of the multipliers in IDA's Newton test: 1 / (rtol |y_j| + atol_lambda) times
  // min(1, h) when true (IDAWFtolerances), the plain weights (IDASVtolerances) when false.
  bool scale_multipliers_by_h = true;
};

// IDA's own statistics for one solve (IDAGetIntegratorStats, IDAGetNonlinSolvStats, IDAGetNumJacEvals).
struct ida_counters {
  long steps = 0;
  long error_test_failures = 0;
  long newton_iterations = 0;
  long newton_failures = 0;
  long jacobian_evaluations = 0;
  long lu_factorizations = 0;       // linear solver setups: each evaluates the Jacobian and factors it
  long residual_evaluations = 0;    // the model evaluations (M, Q, Phi and their kin once each)
  double last_h = 0.0;
};

template <class Model>
struct ida_result {
  int flag = IDA_SUCCESS;           // IDA's last return flag (IDA_SUCCESS or IDA_TSTOP_RETURN on success)
  bool success = false;
  std::string message;              // IDA's error message, when it failed
  member_status init_status = member_status::success;  // lockstep's consistent initialization
  std::vector<double> t;            // save times reached
  std::vector<state_vector<Model>> y;  // (q, v, lambda, mu, nu) at those times
  double t_final = 0.0;
  state_vector<Model> y_final;
  ida_counters counters;
};

// The name of an IDA return flag (the ones IDASolve can return).
inline const char* ida_flag_name(int flag) {
  switch (flag) {
    case IDA_SUCCESS: return "IDA_SUCCESS";
    case IDA_TSTOP_RETURN: return "IDA_TSTOP_RETURN";
    case IDA_TOO_MUCH_WORK: return "IDA_TOO_MUCH_WORK";
    case IDA_TOO_MUCH_ACC: return "IDA_TOO_MUCH_ACC";
    case IDA_ERR_FAIL: return "IDA_ERR_FAIL";
    case IDA_CONV_FAIL: return "IDA_CONV_FAIL";
    case IDA_LSETUP_FAIL: return "IDA_LSETUP_FAIL";
    case IDA_LSOLVE_FAIL: return "IDA_LSOLVE_FAIL";
    case IDA_RES_FAIL: return "IDA_RES_FAIL";
    case IDA_REP_RES_ERR: return "IDA_REP_RES_ERR";
    case IDA_CONSTR_FAIL: return "IDA_CONSTR_FAIL";
    default: return "IDA error";
  }
}

// F(t, y, y') of the ggl formulation in lockstep's layout y = (q, v, lambda, mu, nu), by
// formulation/euler_lagrange.hpp's evaluate_residual; the rows follow the unknowns (the Phi rows in the
// lambda slots, G v + Phi_t in the mu slots, A v + a in the nu slots). Returns false when a value is
// not finite.
template <class Model>
bool ggl_residual(const double* params, double t, const double* y, const double* yp, double* F) {
  using layout = state_layout<Model>;
  state_vector<Model> ys;
  for (int j = 0; j < layout::size; ++j) ys[j] = y[j];
  vec<double, Model::n> qdot, vdot;
  for (int i = 0; i < Model::n; ++i) {
    qdot[i] = yp[layout::q + i];
    vdot[i] = yp[layout::v + i];
  }
  const residual_parts<Model> r = evaluate_residual<Model>(formulation::ggl, t, ys, qdot, vdot, params);
  for (int i = 0; i < Model::n; ++i) {
    F[layout::q + i] = r.Fq[i];
    F[layout::v + i] = r.Fv[i];
  }
  for (int a = 0; a < Model::m; ++a) {
    F[layout::lambda + a] = r.Fphi[a];
    F[layout::mu + a] = r.Fpsi[a];
  }
  for (int a = 0; a < Model::k; ++a) F[layout::nu + a] = r.Fa[a];
  return all_finite(r);
}

// The iteration matrix dF/dy + c_j dF/dy' of ggl_residual (IDA user guide v6.4, IDALsJacFn), exact, from
// lockstep's automatic-differentiation blocks (evaluate_jacobian) and d(G^T mu)/dq; written densely,
// column-major (J[i + j * size] is row i, column j, SUNDIALS' dense layout):
//   F_q:   d/dq = d(G^T mu)/dq + c_j I,  d/dv = -I,  d/dmu = G^T
//   F_v:   d/dq = K = d(M v')/dq + d(G^T lambda)/dq + d(A^T nu)/dq - dQ/dq,  d/dv = c_j M - dQ/dv,
//          d/dlambda = G^T,  d/dnu = A^T
//   Phi:   d/dq = G;   G v + Phi_t:  d/dq = d(G v + Phi_t)/dq,  d/dv = G;   A v + a:  d/dq = A_q, d/dv = A
// Returns false when a value is not finite.
template <class Model>
bool ggl_iteration_matrix(const double* params, double t, double cj, const double* y, const double* yp, double* J) {
  using layout = state_layout<Model>;
  constexpr int size = layout::size, n = Model::n, m = Model::m, k = Model::k;
  constexpr int iq = layout::q, iv = layout::v, il = layout::lambda, imu = layout::mu, inu = layout::nu;
  state_vector<Model> ys;
  for (int j = 0; j < size; ++j) ys[j] = y[j];
  vec<double, n> q, vdot;
  vec<double, m> mu;
  for (int i = 0; i < n; ++i) {
    q[i] = y[iq + i];
    vdot[i] = yp[iv + i];
  }
  for (int a = 0; a < m; ++a) mu[a] = y[imu + a];
  jacobian_blocks<Model> B;
  if (evaluate_jacobian<Model>(formulation::ggl, t, ys, vdot, params, B) != member_status::success) return false;
  for (int j = 0; j < size * size; ++j) J[j] = 0.0;
  auto at = [J](int i, int j) -> double& { return J[i + j * size]; };
  if constexpr (m > 0) {
    const auto dGtmu_dq = constraint_force_jacobian<Model>(t, q, mu, params);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) at(iq + i, iq + j) = dGtmu_dq(i, j);
  }
  for (int i = 0; i < n; ++i) {
    at(iq + i, iq + i) += cj;
    at(iq + i, iv + i) = -1.0;
    for (int j = 0; j < n; ++j) {
      at(iv + i, iq + j) = B.K(i, j);
      at(iv + i, iv + j) = cj * B.M(i, j) - B.dQ_dv(i, j);
    }
  }
  for (int a = 0; a < m; ++a)
    for (int j = 0; j < n; ++j) {
      at(iq + j, imu + a) = B.G(a, j);
      at(iv + j, il + a) = B.G(a, j);
      at(il + a, iq + j) = B.G(a, j);
      at(imu + a, iq + j) = B.Psi_q(a, j);
      at(imu + a, iv + j) = B.G(a, j);
    }
  for (int a = 0; a < k; ++a)
    for (int j = 0; j < n; ++j) {
      at(iv + j, inu + a) = B.A(a, j);
      at(inu + a, iq + j) = B.A_q(a, j);
      at(inu + a, iv + j) = B.A(a, j);
    }
  bool finite = true;
  for (int j = 0; j < size * size; ++j) finite = finite && std::isfinite(J[j]);
  return finite;
}

template <class Model>
class ida_ggl_solver {
 public:
  using layout = state_layout<Model>;
  static constexpr int ny = layout::size;

  ida_ggl_solver() {
    if (SUNContext_Create(nullptr, &context_) != 0) throw std::runtime_error("ida peer: SUNContext_Create failed");
    y_ = N_VNew_Serial(ny, context_);
    yp_ = N_VNew_Serial(ny, context_);
    id_ = N_VNew_Serial(ny, context_);
    atol_ = N_VNew_Serial(ny, context_);
    matrix_ = SUNDenseMatrix(ny, ny, context_);
    if (y_ == nullptr || yp_ == nullptr || id_ == nullptr || atol_ == nullptr || matrix_ == nullptr)
      throw std::runtime_error("ida peer: cannot allocate vectors or matrix");
    linear_solver_ = SUNLinSol_Dense(y_, matrix_, context_);
    memory_ = IDACreate(context_);
    if (linear_solver_ == nullptr || memory_ == nullptr) throw std::runtime_error("ida peer: cannot create IDA");
    // q and v are differential, the multipliers algebraic (the IDA guide's id vector: 1 and 0).
    double* id = N_VGetArrayPointer(id_);
    for (int j = 0; j < ny; ++j) id[j] = j < layout::lambda ? 1.0 : 0.0;
  }
  ida_ggl_solver(const ida_ggl_solver&) = delete;
  ida_ggl_solver& operator=(const ida_ggl_solver&) = delete;
  ~ida_ggl_solver() {
    IDAFree(&memory_);
    SUNLinSolFree(linear_solver_);
    SUNMatDestroy(matrix_);
    N_VDestroy(atol_);
    N_VDestroy(id_);
    N_VDestroy(yp_);
    N_VDestroy(y_);
    SUNContext_Free(&context_);
  }

  // One member from t0 to t1 with outputs at save_times (sorted, in (t0, t1]; a save time equal to t0
  // is served by the initial point).
  ida_result<Model> solve(const double* params, const vec<double, Model::n>& q0, const vec<double, Model::n>& v0,
                          double t0, double t1, const ida_options& opt, const std::vector<double>& save_times) {
    ida_result<Model> out;
    params_ = params;
    message_.clear();

    // Consistent initial values: lockstep's (projection with the mass metric, the index-1 system), from
    // whatever start it is given (the starts of peer_problems.hpp are projected on purpose).
    solver_options init_options;
    init_options.init = init_mode::project;
    member_counters init_counters;
    initial_values<Model> init;
    out.init_status = consistent_initialization<Model>(t0, q0, v0, params, init_options, init, init_counters);
    if (out.init_status != member_status::success) {
      out.message = "consistent initialization failed";
      return out;
    }
    double* y = N_VGetArrayPointer(y_);
    double* yp = N_VGetArrayPointer(yp_);
    for (int j = 0; j < ny; ++j) y[j] = yp[j] = 0.0;
    for (int i = 0; i < Model::n; ++i) {
      y[layout::q + i] = init.q[i];
      y[layout::v + i] = init.v[i];
      yp[layout::q + i] = init.v[i];  // q' = v - G^T mu with mu = 0
      yp[layout::v + i] = init.a[i];
    }
    for (int a = 0; a < Model::m; ++a) y[layout::lambda + a] = init.lambda[a];
    for (int a = 0; a < Model::k; ++a) y[layout::nu + a] = init.nu[a];
    double* atol = N_VGetArrayPointer(atol_);
    for (int j = 0; j < ny; ++j) atol[j] = j < layout::v ? opt.atol_q : (j < layout::lambda ? opt.atol_v : opt.atol_lambda);

    if (!initialized_) {
      check(IDAInit(memory_, residual, t0, y_, yp_), "IDAInit");
      check(IDASetLinearSolver(memory_, linear_solver_, matrix_), "IDASetLinearSolver");
      check(IDASetJacFn(memory_, jacobian), "IDASetJacFn");
      check(IDASetId(memory_, id_), "IDASetId");
      check(IDASetSuppressAlg(memory_, SUNTRUE), "IDASetSuppressAlg");
      check(IDASetUserData(memory_, this), "IDASetUserData");
      check(IDASetErrHandlerFn(memory_, error_handler, this), "IDASetErrHandlerFn");
      initialized_ = true;
    } else {
      check(IDAReInit(memory_, t0, y_, yp_), "IDAReInit");
    }
    rtol_ = opt.rtol;
    h_first_ = opt.lockstep_initial_step ? initial_step_size<Model>(t0, t1, init, step_options(opt)) : 0.0;
    if (opt.scale_multipliers_by_h)
      check(IDAWFtolerances(memory_, error_weights), "IDAWFtolerances");
    else
      check(IDASVtolerances(memory_, opt.rtol, atol_), "IDASVtolerances");
    check(IDASetMaxNumSteps(memory_, opt.max_steps), "IDASetMaxNumSteps");
    check(IDASetStopTime(memory_, t1), "IDASetStopTime");
    check(IDASetInitStep(memory_, h_first_), "IDASetInitStep");

    double t = t0;
    int flag = IDA_SUCCESS;
    for (double tout : save_times) {
      if (tout <= t0) {
        out.t.push_back(t0);
        out.y.push_back(to_state(y_));
        continue;
      }
      flag = IDASolve(memory_, tout, &t, y_, yp_, IDA_NORMAL);
      if (flag < 0) break;
      out.t.push_back(t);
      out.y.push_back(to_state(y_));
    }
    if (flag >= 0 && t < t1) flag = IDASolve(memory_, t1, &t, y_, yp_, IDA_NORMAL);
    out.flag = flag;
    out.success = flag >= 0;
    out.message = message_;
    out.t_final = t;
    out.y_final = to_state(y_);
    read_counters(out.counters);
    return out;
  }

 private:
  void check(int flag, const char* what) {
    if (flag != 0) throw std::runtime_error(std::string("ida peer: ") + what + " returned " + std::to_string(flag));
  }

  static solver_options step_options(const ida_options& opt) {
    solver_options o;
    o.rtol = opt.rtol;
    o.atol_q = opt.atol_q;
    return o;
  }

  // IDA's error weights (IDAEwtFn) with the multipliers scaled by the step about to be attempted.
  // Their Newton corrections carry round-off that grows like 1 / h (mu, through q' = v - G^T mu with
  // q' = c_j (q - q_pred) + ...) and 1 / h^2 (lambda, through M v'), so with plain weights the
  // iteration cannot converge once eps c_j |q| reaches atol: measured, IDA_CONV_FAIL at t = 0 for every
  // andrews member at rtol <= 1e-8 (and <= 1e-6 with IDA's own first step). Scaling index-2 components
  // by h is RADAU5's remedy (Hairer & Wanner II, IV.8 and VII.4, the index hints) and the scaling
  // lockstep's Newton norm applies (method/bdf.hpp, newton_norm); the error test is unaffected, since
  // IDASetSuppressAlg leaves the multipliers out of it.
  static int error_weights(N_Vector yy, N_Vector ewt, void* data) {
    auto* self = static_cast<ida_ggl_solver*>(data);
    const double* y = N_VGetArrayPointer(yy);
    const double* atol = N_VGetArrayPointer(self->atol_);
    double* w = N_VGetArrayPointer(ewt);
    long steps = 0;
    double h = self->h_first_;
    IDAGetNumSteps(self->memory_, &steps);
    if (steps > 0) IDAGetCurrentStep(self->memory_, &h);
    const double h_scale = h > 0.0 && h < 1.0 ? h : 1.0;
    for (int j = 0; j < ny; ++j) {
      const double tol = self->rtol_ * std::abs(y[j]) + atol[j];
      if (!(tol > 0.0)) return -1;
      w[j] = (j < layout::lambda ? 1.0 : h_scale) / tol;
    }
    return 0;
  }

  static state_vector<Model> to_state(N_Vector v) {
    const double* x = N_VGetArrayPointer(v);
    state_vector<Model> s;
    for (int j = 0; j < ny; ++j) s[j] = x[j];
    return s;
  }

  void read_counters(ida_counters& c) {
    long rejected_newton = 0;
    int last_order = 0, current_order = 0;
    double h0 = 0.0, h_current = 0.0, t_current = 0.0;
    IDAGetIntegratorStats(memory_, &c.steps, &c.residual_evaluations, &c.lu_factorizations, &c.error_test_failures,
                          &last_order, &current_order, &h0, &c.last_h, &h_current, &t_current);
    IDAGetNonlinSolvStats(memory_, &c.newton_iterations, &rejected_newton);
    c.newton_failures = rejected_newton;
    IDAGetNumJacEvals(memory_, &c.jacobian_evaluations);
  }

  static void error_handler(int, const char*, const char* function, char* msg, void* data) {
    auto* self = static_cast<ida_ggl_solver*>(data);
    self->message_ = std::string(function) + ": " + msg;
  }

  // IDA's residual callback: ggl_residual. A non-finite residual is a recoverable error (positive
  // return): IDA then retries with a smaller step, as lockstep cuts its step.
  static int residual(double t, N_Vector yy, N_Vector yyp, N_Vector rr, void* data) {
    const auto* self = static_cast<const ida_ggl_solver*>(data);
    return ggl_residual<Model>(self->params_, t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yyp), N_VGetArrayPointer(rr))
               ? 0
               : 1;
  }

  // IDA's Jacobian callback (IDALsJacFn): ggl_iteration_matrix into the dense matrix's column-major data.
  static int jacobian(double t, double cj, N_Vector yy, N_Vector yyp, N_Vector, SUNMatrix J, void* data, N_Vector,
                      N_Vector, N_Vector) {
    const auto* self = static_cast<const ida_ggl_solver*>(data);
    return ggl_iteration_matrix<Model>(self->params_, t, cj, N_VGetArrayPointer(yy), N_VGetArrayPointer(yyp),
                                       SUNDenseMatrix_Data(J))
               ? 0
               : 1;
  }

  SUNContext context_ = nullptr;
  N_Vector y_ = nullptr, yp_ = nullptr, id_ = nullptr, atol_ = nullptr;
  SUNMatrix matrix_ = nullptr;
  SUNLinearSolver linear_solver_ = nullptr;
  void* memory_ = nullptr;
  bool initialized_ = false;
  const double* params_ = nullptr;
  double rtol_ = 0.0;
  double h_first_ = 0.0;  // the first step handed to IDA (0: IDA's choice)
  std::string message_;
};

}  // namespace lockstep::peers
