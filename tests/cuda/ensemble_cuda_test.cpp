// The CUDA backend against the serial reference. CUDA results cannot be bitwise equal to the CPU's
// (other math library, FMA contraction): the contract is agreement within 10 x rtol on non-chaotic
// runs (docs/DESIGN-NOTES.md, "Determinism"). Without a GPU every test here skips.
// Per member: positions within 10 (atol + rtol |q|), statuses equal; built with
// -DLOCKSTEP_CUDA_NO_FMAD=ON (no fused multiply-add, as on the host) within 1 (atol + rtol |q|).
// On a GPU no test may skip: scripts/gpu-check.sh run tests fails when one does.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/cuda/ensemble_cuda.hpp"
#include "lockstep/lockstep.hpp"
#include "tests/cuda/agreement_with_serial.hpp"
#include "tests/support/builtin_solve.hpp"

namespace {

using namespace lockstep;
using lockstep::test::solve_builtin;  // every model here is built in

template <class Model>
void expect_cuda_agrees_with_serial(double t1, double tol, long members = 300,
                                    method_kind method = method_kind::bdf, formulation form = formulation::ggl,
                                    bool may_not_fit = false, bool split = false,
                                    projection_kind projection = projection_kind::none) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto e = ensemble<Model>::with_defaults(members);
  e.options.method = method;
  e.options.form = form;
  e.options.projection = projection;
  for (long i = 0; i < e.members; ++i) e.params_of(i)[0] *= 1.0 + 1e-3 * static_cast<double>(i % 17);
  e.t1 = t1;
  e.save_times = {0.5 * t1, t1};
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = tol;
  run_options serial_run, cuda_run;
  cuda_run.where = backend::cuda;
  cuda_run.chunk_size = 128;  // several chunks, so the double-buffered copies are exercised
  cuda_run.split_factorization = split;
  ensemble_result<Model> gpu;
  try {
    gpu = solve_builtin(e, cuda_run);
  } catch (const std::invalid_argument& refused) {  // a kernel's local memory exceeds the device's
    if (!may_not_fit) throw;
    GTEST_SKIP() << refused.what();
  }
  const auto reference = solve_builtin(e, serial_run);
  for (long i = 0; i < e.members; ++i) {
    ASSERT_EQ(gpu.status[i], reference.status[i]) << "member " << i;
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < Model::n; ++j)
        EXPECT_NEAR(gpu.q(i, s, j), reference.q(i, s, j), cuda_tests::device_position_bound(tol, reference.q(i, s, j)))
            << "member " << i << " save " << s << " q" << j;
  }
}

TEST(CudaEnsemble, PendulumAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8);
}

TEST(CudaEnsemble, AndrewsAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8);
}

// The default start is chaotic, but over t = 0.5 errors grow by a factor of about 2 only.
TEST(CudaEnsemble, DoublePendulumShortRunAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8);
}

TEST(CudaEnsemble, EveryDeviceModelWithRadauIIAAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8, 300, method_kind::radau5, formulation::index3);
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method_kind::radau5, formulation::index3);
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::radau5, formulation::index3);
}

// The explicit pairs on the index-1 equations, projected after every step as study files project them
// (coordinate projection; post-stabilization on andrews): their stages' saddle-point solves and the
// projection in one fused launch. Their members never split (lockstep/detail/split_factor.hpp).
TEST(CudaEnsemble, EveryDeviceModelWithTheExplicitPairsAgreesWithSerialWithinTenTimesTolerance) {
  for (method_kind method : {method_kind::tsit5, method_kind::dopri5}) {
    expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8, 300, method, formulation::index1, false, false,
                                                     projection_kind::coordinate);
    expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method, formulation::index1, false, false,
                                                            projection_kind::coordinate);
    expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method, formulation::index1, false, false,
                                                    projection_kind::coordinate);
  }
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::tsit5, formulation::index1, false,
                                                  false, projection_kind::post_stabilization);
}

// auto on its implicit phases' formulation (index3), projected after every step: each member's phases
// (dopri5 while it is not stiff, Radau IIA 5 while it is) on the device, against the serial backend.
TEST(CudaEnsemble, EveryDeviceModelWithAutoAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8, 300, method_kind::automatic, formulation::index3, false,
                                                   false, projection_kind::coordinate);
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method_kind::automatic, formulation::index3,
                                                          false, false, projection_kind::coordinate);
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::automatic, formulation::index3, false,
                                                  false, projection_kind::coordinate);
}

// A request for the split path is no request for an explicit pair, which has no Newton matrix to split:
// its members run fused and agree all the same.
TEST(CudaEnsemble, AnExplicitPairIgnoresTheForcedSplitPath) {
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method_kind::tsit5, formulation::index1,
                                                          false, true, projection_kind::coordinate);
}

// The forced split path on the two small models: their Newton matrices (4 and 8 rows) through the
// cuBLAS phase, with BDF and Radau IIA.
TEST(CudaEnsemble, PendulumAndDoublePendulumForcedSplitPathAgreeWithSerialForBdfAndRadauIIA) {
  expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8, 300, method_kind::bdf, formulation::ggl, false, true);
  expect_cuda_agrees_with_serial<models::pendulum>(2.0, 1e-8, 300, method_kind::radau5, formulation::index3, false, true);
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method_kind::bdf, formulation::ggl, false, true);
  expect_cuda_agrees_with_serial<models::double_pendulum>(0.5, 1e-8, 300, method_kind::radau5, formulation::index3, false,
                                                          true);
}

// The split path on a model that fits one thread, forced: the cuBLAS factor phase (gather, batched
// getrf, pivot conversion, scatter) against the serial backend's fused solve. cuBLAS factors with its
// own operation order, so agreement is to the tolerance, not bitwise.
TEST(CudaEnsemble, AndrewsForcedSplitPathAgreesWithSerialForBdfAndRadauIIA) {
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::bdf, formulation::ggl, false, true);
  expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::radau5, formulation::index3, false, true);
}

// Projections forced through the split path too: every metric and Gram factorization of an accepted
// point's projection by cusolverDnDpotrfBatched between launches (docs/GPU.md section 5.2, item 4).
TEST(CudaEnsemble, AndrewsForcedSplitProjectionsAgreeWithSerialForBdfAndRadauIIA) {
  for (projection_kind kind : {projection_kind::coordinate, projection_kind::post_stabilization}) {
    expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::bdf, formulation::ggl, false, true, kind);
    expect_cuda_agrees_with_serial<models::andrews>(0.003, 1e-8, 300, method_kind::radau5, formulation::index3, false, true,
                                                    kind);
  }
}

#if defined(LOCKSTEP_CUDA_CHAIN16)
// chain<16> takes the split path (lockstep/detail/split_factor.hpp): factorizations by
// cublasDgetrfBatched / cublasZgetrfBatched between launches, in batches over several chunks, with the
// member in a workspace in device memory. ptxas probes put its kernels at 108 KB (BDF) and
// 112 KB (Radau IIA) of local memory per thread (sm_90, docs/GPU.md section 5.7), under CUDA's
// 512 KB; the reservation for every thread a device can hold (29.2 and 30.3 GB on an H100)
// fits an 80 GB device, but a device with less free memory still refuses them (std::invalid_argument,
// a skip).
TEST(CudaEnsemble, Chain16SplitPathBdfAgreesWithSerialWithinTenTimesTolerance) {
  static_assert(uses_split_factorization<models::chain<16>>);
  expect_cuda_agrees_with_serial<models::chain<16>>(0.2, 1e-8, 200, method_kind::bdf, formulation::ggl, true);
}

TEST(CudaEnsemble, Chain16SplitPathRadauIIAAgreesWithSerialWithinTenTimesTolerance) {
  expect_cuda_agrees_with_serial<models::chain<16>>(0.2, 1e-8, 200, method_kind::radau5, formulation::index3, true);
}
#endif  // LOCKSTEP_CUDA_CHAIN16

}  // namespace
