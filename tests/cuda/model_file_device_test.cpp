// A model file's CUDA backend on a GPU, against the same engine's serial backend.
//
// `lockstep run STUDY --backend cuda` compiles a model file's engine with its device solve (nvcc, the
// kernels of kernels/cuda instantiated for the user's model; docs/MODEL-FILES.md). The GPU machine
// that runs scripts/gpu-check.sh has no host compiler set up for lockstep and no Python with SymPy, so
// the engines are compiled where the pack is made and carried as libraries:
//
//   model_file_device_test compile DIR FILE...
//       compiles every model file FILE (a model header or an equations file) with its CUDA backend,
//       through the path `lockstep run --backend cuda` takes (model_files::load_model_file), and copies
//       each engine library to DIR/<FILE's stem>.so. Needs nvcc; no GPU.
//   model_file_device_test [GoogleTest options]
//       loads every DIR/*.so (DIR: LOCKSTEP_MODEL_FILE_ENGINES) through the engine loader and checks
//       each on the device against its serial backend, as tests/cuda/ensemble_cuda_test.cpp does for
//       the built-in models: statuses equal member by member, positions within
//       10 (atol + rtol |q|) (1 x with -DLOCKSTEP_CUDA_NO_FMAD=ON), BDF on the GGL formulation and
//       Radau IIA 5 on index 3, fused and forced split, with one member that starts from NaN; and the
//       events of the engine with them (driven_arm.so: a torque-driven arm that stops at the
//       horizontal and counts its swing's turns) over torques that reach the horizontal and torques
//       that do not: the same counts, stops and records member by member, first times close.
//       Without a device, or without LOCKSTEP_MODEL_FILE_ENGINES, every test skips (and gpu-check.sh
//       fails a stage that skips); a DIR that holds no engine fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/model_files/model_compiler.hpp"
#include "kernels/cuda/ensemble_cuda.hpp"
#include "lockstep/engine/loader.hpp"
#include "lockstep/ensemble.hpp"
#include "tests/cuda/agreement_with_serial.hpp"
#include "tests/support/engine_members.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lockstep;

// The member that starts from NaN: its status must be the same failure on both backends, and the
// members beside it must not notice it.
constexpr long nan_member = 5;

// The engine libraries in `dir` (none when it is no folder).
std::vector<fs::path> packed_engines(const fs::path& dir) {
  std::vector<fs::path> libraries;
  if (!fs::is_directory(dir)) return libraries;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".so") libraries.push_back(entry.path());
  std::sort(libraries.begin(), libraries.end());
  return libraries;
}

// 256 members of the model's defaults, the first parameter spread by up to 1.6 % (as the built-in
// models' device tests do), over a span short enough that no model here is chaotic within it.
ensemble_problem spread_problem(const engine& model, method_kind method, formulation form) {
  const int np = model.n_params();
  ensemble_problem e = tests::members_at_defaults(model, 256, [&](long i, double* p) {
    if (np > 0) p[0] *= 1.0 + 1e-3 * static_cast<double>(i % 17);
  });
  e.q0[std::size_t(nan_member) * model.n()] = std::numeric_limits<double>::quiet_NaN();
  e.t0 = 0.0;
  e.t1 = 0.2;
  e.save_times = {0.1, 0.2};
  e.options.method = method;
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-8;
  return e;
}

void expect_device_agrees_with_serial(const fs::path& library, method_kind method, formulation form, bool split) {
  SCOPED_TRACE(library.filename().string() + (method == method_kind::bdf ? " BDF" : " Radau IIA 5") +
               (split ? ", forced split" : ", fused"));
  const engine model = load_engine_library(library);
  ASSERT_TRUE(model.device_built()) << library << " holds no device solve";
  const ensemble_problem e = spread_problem(model, method, form);
  run_options serial_run, cuda_run;
  cuda_run.where = backend::cuda;
  cuda_run.chunk_size = 128;  // two chunks: the double-buffered copies run
  cuda_run.split_factorization = split;
  const ensemble_solution gpu = solve_ensemble(model, e, cuda_run);
  const ensemble_solution reference = solve_ensemble(model, e, serial_run);
  const double tol = e.options.rtol;
  long succeeded = 0;
  for (long i = 0; i < e.members; ++i) {
    ASSERT_EQ(gpu.status[i], reference.status[i]) << "member " << i;
    if (reference.status[i] != member_status::success) continue;
    ++succeeded;
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < model.n(); ++j)
        EXPECT_NEAR(gpu.q(i, s, j), reference.q(i, s, j), cuda_tests::device_position_bound(tol, reference.q(i, s, j)))
            << "member " << i << " save " << s << " q" << j;
  }
  EXPECT_NE(reference.status[nan_member], member_status::success) << "the member that starts from NaN";
  EXPECT_EQ(succeeded, e.members - 1) << "every member but the one that starts from NaN succeeds";
}

// The events of a model file on the device against its serial backend: each member's status, event
// counts, stopping event and records made equal, and its first times and kept records' times within
// 10 times a position's bound: an event's time is a root of g along the trajectory, off by the
// trajectory's error over |dg/dt|, which the members here keep well away from zero (no grazing).
void expect_device_events_agree_with_serial(const fs::path& library, method_kind method, formulation form) {
  SCOPED_TRACE(library.filename().string() + " events, " + method_name(method));
  const engine model = load_engine_library(library);
  ASSERT_GT(model.n_events(), 0) << library << " has no events";
  const int np = model.n_params();
  // The driving torque: from 4 to 6.8 N m (the arm swings back below the horizontal) and from 7.4 to
  // 14 N m (it reaches the horizontal and stops there), away from the threshold near 7.03 N m where
  // it grazes the horizontal and a member could find the event on one backend and not the other.
  ensemble_problem e = tests::members_at_defaults(model, 256, [&](long i, double* p) {
    const double s = static_cast<double>(i % 128) / 127.0;
    p[np - 1] = i < 128 ? 4.0 + 2.8 * s : 7.4 + 6.6 * s;
  });
  e.t1 = 4.0;
  e.save_times = {2.0, 4.0};
  e.options.method = method;
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-8;
  e.event_capacity = 2;
  run_options serial_run, cuda_run;
  cuda_run.where = backend::cuda;
  cuda_run.chunk_size = 96;  // three chunks: the double-buffered copies of the records run
  const ensemble_solution gpu = solve_ensemble(model, e, cuda_run);
  const ensemble_solution reference = solve_ensemble(model, e, serial_run);
  const int E = model.n_events(), ny = model.ny();
  ASSERT_EQ(gpu.n_events, E);
  ASSERT_EQ(gpu.event_records.size(), reference.event_records.size());
  const double bound = 10.0 * cuda_tests::device_tolerance_factor * e.options.rtol;
  long stopped = 0;
  for (long i = 0; i < e.members; ++i) {
    ASSERT_EQ(gpu.status[i], reference.status[i]) << "member " << i;
    ASSERT_EQ(gpu.stop_event[i], reference.stop_event[i]) << "member " << i;
    ASSERT_EQ(gpu.event_records_made[i], reference.event_records_made[i]) << "member " << i;
    stopped += reference.stop_event[i] >= 0;
    for (int k = 0; k < E; ++k) {
      EXPECT_EQ(gpu.event_counts[i * E + k], reference.event_counts[i * E + k]) << "member " << i << " event " << k;
      const double t = reference.event_first_times[i * E + k];
      if (std::isnan(t)) EXPECT_TRUE(std::isnan(gpu.event_first_times[i * E + k])) << "member " << i << " event " << k;
      else EXPECT_NEAR(gpu.event_first_times[i * E + k], t, bound * (1.0 + t)) << "member " << i << " event " << k;
    }
    for (long r = 0; r < std::min<long>(e.event_capacity, reference.event_records_made[i]); ++r) {
      const std::size_t at = (static_cast<std::size_t>(i) * e.event_capacity + r) * (2 + ny);
      EXPECT_EQ(gpu.event_records[at + 1], reference.event_records[at + 1]) << "member " << i << " record " << r;
      EXPECT_NEAR(gpu.event_records[at], reference.event_records[at], bound * (1.0 + reference.event_records[at]))
          << "member " << i << " record " << r;
    }
  }
  // Measured on the serial backend: every member above the threshold stops, none below it does.
  EXPECT_EQ(stopped, 128);
}

class ModelFileOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
    const char* dir = std::getenv("LOCKSTEP_MODEL_FILE_ENGINES");
    if (dir == nullptr || *dir == '\0')
      GTEST_SKIP() << "no model-file engines: LOCKSTEP_MODEL_FILE_ENGINES is not set "
                      "(scripts/gpu-check.sh pack --model-files makes them)";
    libraries_ = packed_engines(dir);
    if (libraries_.empty()) FAIL() << "LOCKSTEP_MODEL_FILE_ENGINES = '" << dir << "' holds no engine library (*.so)";
  }
  std::vector<fs::path> libraries_;
};

TEST_F(ModelFileOnDevice, BdfOnGglAgreesWithSerialFusedAndSplit) {
  for (const auto& library : libraries_) {
    expect_device_agrees_with_serial(library, method_kind::bdf, formulation::ggl, false);
    expect_device_agrees_with_serial(library, method_kind::bdf, formulation::ggl, true);
  }
}

TEST_F(ModelFileOnDevice, RadauIIAOnIndex3AgreesWithSerialFusedAndSplit) {
  for (const auto& library : libraries_) {
    expect_device_agrees_with_serial(library, method_kind::radau5, formulation::index3, false);
    expect_device_agrees_with_serial(library, method_kind::radau5, formulation::index3, true);
  }
}

TEST_F(ModelFileOnDevice, EventsAgreeWithSerial) {
  const auto with_events = std::find_if(libraries_.begin(), libraries_.end(),
                                        [](const fs::path& p) { return p.filename() == "driven_arm.so"; });
  ASSERT_NE(with_events, libraries_.end()) << "no driven_arm.so among the packed engines (gpu-check.sh packs it)";
  expect_device_events_agree_with_serial(*with_events, method_kind::bdf, formulation::ggl);
  expect_device_events_agree_with_serial(*with_events, method_kind::radau5, formulation::index3);
  expect_device_events_agree_with_serial(*with_events, method_kind::tsit5, formulation::index1);
}

int compile(const fs::path& into, const std::vector<std::string>& files) {
  fs::create_directories(into);
  model_files::compile_settings settings;
  settings.device = true;
  settings.progress = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  for (const auto& file : files) {
    try {
      const auto loaded = model_files::load_model_file({fs::path(file), ""}, settings);
      const fs::path target = into / (fs::path(file).stem().string() + ".so");
      if (fs::exists(target))
        throw std::invalid_argument("another model file of the same stem was packed as " + target.string());
      fs::copy_file(loaded.library, target, fs::copy_options::overwrite_existing);
      std::printf("%s: engine %s (%s) -> %s\n", file.c_str(), std::string(loaded.model.name()).c_str(),
                  loaded.compiled ? "compiled" : "from the cache", target.c_str());
    } catch (const std::exception& failure) {
      std::fprintf(stderr, "model_file_device_test compile: %s: %s\n", file.c_str(), failure.what());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "compile") {
    if (argc < 4) {
      std::fprintf(stderr, "usage: %s compile DIR MODEL_FILE...\n", argv[0]);
      return 2;
    }
    return compile(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
