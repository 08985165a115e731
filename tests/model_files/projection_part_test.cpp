// tests/model_files/projection_part_test.cpp — a model file's projection after steps in SIMD lanes is a
// part of its own (docs/MODEL-FILES.md, "What is compiled"), which the command and Python compile
// whenever a run projects. A C++ program chooses an engine's contents itself
// (compile_settings::contents): an engine compiled without that part must refuse a run that projects
// after steps, with a message that names the part, rather than run it unprojected; with the part, the
// same run succeeds. Compiles the heavy top of examples/models at -O1 into a cache of its own; skipped
// where model files get no lanes (the part exists only there).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "host/model_files/model_compiler.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/ensemble.hpp"
#include "lockstep/formulation/projection.hpp"
#include "tests/support/engine_members.hpp"

namespace lockstep::model_files {
namespace {

namespace fs = std::filesystem;

// Members of the model at their default parameters and initial state, with Radau IIA 5 and the
// coordinate projection after every step.
ensemble_problem projecting_problem(const engine& model) {
  ensemble_problem e = tests::members_at_defaults(model, 16);
  e.t0 = 0.0;
  e.t1 = 0.05;
  e.save_times = {0.05};
  e.options.method = method_kind::radau5;
  e.options.form = formulation::index3;
  e.options.projection = projection_kind::coordinate;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-6;
  return e;
}

TEST(ModelFileProjectionPart, AnEngineWithoutItRefusesARunThatProjectsAndOneWithItRunsIt) {
  const fs::path cache = fs::path(testing::TempDir()) / "lockstep_projection_part_cache";
  fs::remove_all(cache);
  ASSERT_EQ(setenv("LOCKSTEP_CACHE_DIR", cache.c_str(), 1), 0);
  ASSERT_EQ(setenv("LOCKSTEP_MODEL_OPTIMIZATION", "1", 1), 0);  // the same bits, half the compile time
  const model_request request{fs::path(LOCKSTEP_SOURCE_DIR) / "examples/models/heavy_top.hpp", ""};

  compile_settings without;
  without.contents = engine_contents{}.with_method(method_kind::radau5);
  const loaded_model plain = load_model_file(request, without);
  if (plain.lanes == 0) GTEST_SKIP() << "model files get no SIMD lanes with this toolchain or CPU";
  const ensemble_problem problem = projecting_problem(plain.model);
  ASSERT_TRUE(projects_after_steps(problem.options.projection, problem.options.form));
  try {
    (void)solve_ensemble(plain.model, problem, run_options{});
    ADD_FAILURE() << "an engine without the projection in lanes ran a study that projects after steps";
  } catch (const std::exception& refusal) {
    EXPECT_NE(std::string(refusal.what()).find("holds no projection in SIMD lanes"), std::string::npos)
        << refusal.what();
  }

  compile_settings with = without;
  with.contents = engine_contents{}.with_method(method_kind::radau5, true);
  const loaded_model projecting = load_model_file(request, with);
  const ensemble_solution solution = solve_ensemble(projecting.model, problem, run_options{});
  for (long i = 0; i < solution.members; ++i) EXPECT_EQ(solution.status[i], member_status::success) << "member " << i;
  fs::remove_all(cache);
}

}  // namespace
}  // namespace lockstep::model_files
