// End-to-end tests of `lockstep run` on small studies that succeed: the layout of results.h5 (shapes,
// names, attributes), every member bit for bit against solve_member in this process, the pendulum
// against its independent minimal-coordinate reference, members.csv against results.h5, and where
// the outputs go.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../support/reference.hpp"
#include "cli_support.hpp"
#include "host/io/study_file.hpp"
#include "in_process.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/pendulum.hpp"
#include "lockstep/study/samplers.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::cli_test;
namespace ref = lockstep::test::reference;

// ---- a pendulum study mixing a drawn parameter with a 4 x 3 grid of initial inputs ------------------
// 3 random draws of m crossed with 12 grid points: 36 members, run on 2 omp threads in chunks of 5
// (chunks straddle grid rows and draws). One run serves the tests of this suite.
constexpr const char* mixed_study = R"(# a study for the end-to-end tests
[model]
name = "pendulum"
params = { L = 0.9 }

[solver]
rtol = 1e-7
atol = 1e-7

[time]
t1 = 1.5
save = { every = 0.25 }

[ensemble]
members = 3
seed = 11
[ensemble.vary]
"params.m" = { uniform = [0.5, 2.0] }
"initial.theta0" = { grid = [0.2, 0.7, 1.2, 1.7] }
"initial.omega0" = { grid = [-0.5, 0.0, 0.5] }

[output]
trajectories = true
)";
const std::vector<double> theta_grid = {0.2, 0.7, 1.2, 1.7};
const std::vector<double> omega_grid = {-0.5, 0.0, 0.5};

class PendulumMixedStudy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<scratch_dir>();
    result_ = std::make_unique<run_result>(
        run_study(*dir_, "mixed", mixed_study, {"--backend", "omp", "--threads", "2", "--chunk-size", "5"}));
    spec_ = std::make_unique<io::study_spec>(io::parse_study(mixed_study, "mixed.toml"));
  }
  static void TearDownTestSuite() {
    dir_.reset();
    result_.reset();
    spec_.reset();
  }
  static fs::path out() { return *dir_ / "out"; }

  static std::unique_ptr<scratch_dir> dir_;
  static std::unique_ptr<run_result> result_;
  static std::unique_ptr<io::study_spec> spec_;
};
std::unique_ptr<scratch_dir> PendulumMixedStudy::dir_;
std::unique_ptr<run_result> PendulumMixedStudy::result_;
std::unique_ptr<io::study_spec> PendulumMixedStudy::spec_;

TEST_F(PendulumMixedStudy, RunWritesResultsMembersCsvAndTheStudyCopyAndExitsZero) {
  // Arrange: the suite's run. Act: list the output directory.
  const auto entries = dir_->entries("out");

  // Assert
  EXPECT_EQ(result_->exit_code, 0) << result_->err;
  EXPECT_EQ(entries, (std::vector<std::string>{"members.csv", "results.h5", "study.toml"}));
  EXPECT_EQ(read_text(out() / "study.toml"), mixed_study);
  EXPECT_TRUE(result_->out.empty()) << result_->out;
  EXPECT_NE(result_->err.find("36 members: 36 succeeded, 0 failed"), std::string::npos) << result_->err;
  EXPECT_NE(result_->err.find("results in out"), std::string::npos) << result_->err;
}

TEST_F(PendulumMixedStudy, ResultsHaveTheDocumentedShapesNamesAndAttributes) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());
  const hsize_t N = 36, S = 7, n = 2, m = 1;

  // Act + Assert: datasets and their shapes
  EXPECT_EQ(f.doubles("/t"), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5}));
  EXPECT_EQ(f.dims("/q"), (std::vector<hsize_t>{N, S, n}));
  EXPECT_EQ(f.dims("/v"), (std::vector<hsize_t>{N, S, n}));
  EXPECT_EQ(f.dims("/lambda"), (std::vector<hsize_t>{N, S, m}));
  EXPECT_FALSE(f.exists("/mu")) << "index3 has no mu";
  EXPECT_FALSE(f.exists("/nu")) << "the pendulum has no velocity constraints";
  EXPECT_EQ(f.dims("/members/status"), (std::vector<hsize_t>{N}));
  for (const char* name : {"steps", "rejected", "newton_iterations", "newton_failures", "jacobian_evaluations",
                           "lu_factorizations", "model_evaluations", "final_t", "final_h", "max_phi",
                           "max_velocity_residual", "init_q_correction", "init_v_correction"})
    EXPECT_EQ(f.dims(std::string("/members/") + name), (std::vector<hsize_t>{N})) << name;
  EXPECT_EQ(f.dims("/members/final_q"), (std::vector<hsize_t>{N, n}));
  EXPECT_EQ(f.dims("/members/final_v"), (std::vector<hsize_t>{N, n}));
  EXPECT_EQ(f.dims("/members/inputs"), (std::vector<hsize_t>{N, 3}));
  EXPECT_EQ(f.string_attributes("/members/inputs", "names"),
            (std::vector<std::string>{"params.m", "initial.theta0", "initial.omega0"}));
  EXPECT_EQ(f.int64_attributes("/members/inputs", "grid_shape"), (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(f.int64_attributes("/members/inputs", "grid_dims"), (std::vector<std::int64_t>{1, 2}));
  const auto status_names = f.string_attributes("/members/status", "names");
  ASSERT_EQ(status_names.size(), static_cast<std::size_t>(member_status_count));
  for (int c = 0; c < member_status_count; ++c)
    EXPECT_EQ(status_names[static_cast<std::size_t>(c)], status_name(static_cast<member_status>(c)));
  for (const char* stat : {"mean", "std", "min", "max", "q05", "q50", "q95", "mean_stderr"}) {
    const std::string g = std::string("/statistics/") + stat;
    EXPECT_EQ(f.dims(g + "/q"), (std::vector<hsize_t>{S, n})) << g;
    EXPECT_EQ(f.dims(g + "/v"), (std::vector<hsize_t>{S, n})) << g;
    EXPECT_EQ(f.dims(g + "/lambda"), (std::vector<hsize_t>{S, m})) << g;
    EXPECT_EQ(f.dims(g + "/count"), (std::vector<hsize_t>{S, 2 * n + 2 * m})) << g;
    EXPECT_EQ(f.has_attribute(g, "probability"), stat[0] == 'q') << g;
  }
  EXPECT_EQ(f.double_attribute("/statistics/q05", "probability"), 0.05);
  EXPECT_EQ(f.double_attribute("/statistics/q50", "probability"), 0.50);
  EXPECT_EQ(f.double_attribute("/statistics/q95", "probability"), 0.95);

  // Root attributes
  EXPECT_EQ(f.string_attribute("/", "format"), "lockstep-results");
  EXPECT_EQ(f.string_attribute("/", "model"), "pendulum");
  EXPECT_EQ(f.int64_attribute("/", "members"), 36);
  EXPECT_EQ(f.int64_attribute("/", "n"), 2);
  EXPECT_EQ(f.int64_attribute("/", "m"), 1);
  EXPECT_EQ(f.int64_attribute("/", "k"), 0);
  EXPECT_EQ(f.int64_attribute("/", "trajectories"), 1);
  EXPECT_EQ(f.string_attribute("/", "study"), mixed_study);
  EXPECT_EQ(f.string_attribute("/", "study_name"), "mixed");
  EXPECT_EQ(f.string_attribute("/", "backend"), "omp");
  EXPECT_EQ(f.int64_attribute("/", "threads"), 2);
  EXPECT_EQ(f.string_attribute("/", "method"), "radau5");
  EXPECT_EQ(f.string_attribute("/", "formulation"), "index3");
  EXPECT_EQ(f.string_attribute("/", "mean_stderr_method"), "std/sqrt(n)");
  EXPECT_FALSE(f.string_attribute("/", "lockstep_version").empty());
  EXPECT_FALSE(f.string_attribute("/", "git_revision").empty());
  EXPECT_GE(f.double_attribute("/", "wall_time_seconds"), 0.0);
}

TEST_F(PendulumMixedStudy, InputsFollowTheDocumentedMemberNumbering) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());

  // Act
  const std::vector<double> inputs = f.doubles("/members/inputs");

  // Assert: i = draw * 12 + grid point, the grid row-major with omega0 fastest; every grid point of a
  // draw sees the same m (sampling_plan.hpp), which is the sampler's value for that member.
  ASSERT_EQ(inputs.size(), 36u * 3);
  for (std::size_t i = 0; i < 36; ++i) {
    const std::size_t point = i % 12, draw = i / 12;
    EXPECT_EQ(inputs[i * 3 + 1], theta_grid[point / 3]) << "member " << i;
    EXPECT_EQ(inputs[i * 3 + 2], omega_grid[point % 3]) << "member " << i;
    EXPECT_EQ(inputs[i * 3 + 0], inputs[draw * 12 * 3]) << "member " << i << ": m differs within draw " << draw;
    EXPECT_GE(inputs[i * 3 + 0], 0.5);
    EXPECT_LE(inputs[i * 3 + 0], 2.0);
    double expected[3];
    study::sample_member(spec_->plan, static_cast<long>(i), expected);
    EXPECT_TRUE(same_value(inputs[i * 3 + 0], expected[0])) << "member " << i;
  }
  EXPECT_NE(inputs[0], inputs[12 * 3]) << "the three draws of m should differ";
}

TEST_F(PendulumMixedStudy, EveryMemberAgreesBitwiseWithSolveMember) {
  // Arrange
  using Model = models::pendulum;
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 36u);

  // Act + Assert
  long mismatches = 0;
  for (long i = 0; i < 36; ++i) {
    const std::vector<double> varied(d.inputs.begin() + i * 3, d.inputs.begin() + i * 3 + 3);
    const auto setup = setup_member<Model>(*spec_, varied);
    EXPECT_EQ(setup.params[1], 0.9) << "the [model] override of L";
    const member_result<Model> r = solve_in_process<Model>(*spec_, setup);
    EXPECT_EQ(r.status, member_status::success) << "member " << i;
    mismatches += expect_member_bitwise<Model>(d, i, spec_->save_times.size(), r);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(PendulumMixedStudy, MembersCsvHasOneRowPerMemberEqualToResults) {
  // Arrange
  h5_file f(out() / "results.h5");
  ASSERT_TRUE(f.is_open());
  const member_datasets d(f);
  const auto names = f.string_attributes("/members/status", "names");

  // Act
  const csv_table csv = read_csv(out() / "members.csv");

  // Assert: the coordinates' columns carry the model's names of them (models::pendulum: x, y).
  EXPECT_EQ(csv.header, (std::vector<std::string>{"member", "params.m", "initial.theta0", "initial.omega0", "status",
                                                  "steps", "final_t", "x", "y"}));
  ASSERT_EQ(csv.rows.size(), 36u);
  for (std::size_t i = 0; i < 36; ++i) {
    const auto& row = csv.rows[i];
    ASSERT_EQ(row.size(), csv.header.size()) << "row " << i;
    EXPECT_EQ(row[0], std::to_string(i));
    for (std::size_t k = 0; k < 3; ++k)
      EXPECT_TRUE(same_value(parse_double(row[1 + k]), d.inputs[i * 3 + k])) << "row " << i << " input " << k;
    EXPECT_EQ(row[4], names.at(static_cast<std::size_t>(d.status[i])));
    EXPECT_EQ(row[5], std::to_string(d.steps[i]));
    EXPECT_TRUE(same_value(parse_double(row[6]), d.final_t[i])) << "row " << i;
    EXPECT_TRUE(same_value(parse_double(row[7]), d.final_q[i * 2])) << "row " << i << ": " << row[7];
    EXPECT_TRUE(same_value(parse_double(row[8]), d.final_q[i * 2 + 1])) << "row " << i << ": " << row[8];
  }
}

// ---- the double pendulum on BDF + GGL, Sobol with replicates, the serial backend ---------------------
TEST(LockstepRun, DoublePendulumSobolOnBdfGglAgreesBitwiseWithSolveMember) {
  // Arrange
  using Model = models::double_pendulum;
  const char* text = R"([model]
name = "double_pendulum"
[solver]
method = "bdf"
formulation = "ggl"
rtol = 1e-6
atol = 1e-6
[time]
t1 = 1.0
save = { times = [0.1, 0.5] }
[ensemble]
sampler = "sobol"
members = 8
replicates = 2
seed = 3
[ensemble.vary]
"initial.theta1" = { normal = { mean = 1.0, std = 0.1 } }
"params.L2" = { lognormal = { mu = 0.0, sigma = 0.05 } }
[output]
trajectories = true
statistics = ["mean"]
)";
  scratch_dir dir;
  const io::study_spec spec = io::parse_study(text, "dp.toml");

  // Act
  const run_result r = run_study(dir, "dp", text, {"--backend", "serial"});

  // Assert
  ASSERT_EQ(r.exit_code, 0);
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  EXPECT_EQ(f.doubles("/t"), (std::vector<double>{0.1, 0.5, 1.0}));
  EXPECT_EQ(f.dims("/q"), (std::vector<hsize_t>{16, 3, 4}));
  EXPECT_EQ(f.dims("/lambda"), (std::vector<hsize_t>{16, 3, 2}));
  EXPECT_EQ(f.dims("/mu"), (std::vector<hsize_t>{16, 3, 2}));
  EXPECT_EQ(f.dims("/statistics/mean/mu"), (std::vector<hsize_t>{3, 2}));
  EXPECT_EQ(f.string_attribute("/", "method"), "bdf");
  EXPECT_EQ(f.string_attribute("/", "formulation"), "ggl");
  EXPECT_EQ(f.string_attribute("/", "backend"), "serial");
  EXPECT_EQ(f.int64_attribute("/", "threads"), 1);
  EXPECT_EQ(f.string_attribute("/", "mean_stderr_method"), "replicates");
  EXPECT_TRUE(f.int64_attributes("/members/inputs", "grid_shape").empty());
  EXPECT_TRUE(f.int64_attributes("/members/inputs", "grid_dims").empty());
  const member_datasets d(f);
  ASSERT_EQ(d.status.size(), 16u);
  long mismatches = 0;
  for (long i = 0; i < 16; ++i) {
    std::vector<double> varied(2);
    study::sample_member(spec.plan, i, varied.data());
    EXPECT_TRUE(same_value(d.inputs[static_cast<std::size_t>(2 * i)], varied[0])) << "member " << i;
    EXPECT_TRUE(same_value(d.inputs[static_cast<std::size_t>(2 * i + 1)], varied[1])) << "member " << i;
    const member_result<Model> expected = solve_in_process<Model>(spec, setup_member<Model>(spec, varied));
    EXPECT_EQ(expected.status, member_status::success) << "member " << i;
    mismatches += expect_member_bitwise<Model>(d, i, spec.save_times.size(), expected);
  }
  EXPECT_EQ(mismatches, 0);
}

// ---- the pendulum against its minimal-coordinate reference ---------------------------------------------
struct reference_case {
  const char* name;
  const char* method;
  const char* formulation;
};

class PendulumReference : public ::testing::TestWithParam<reference_case> {};

// rtol = atol = 1e-8 over t in [0, 2] from six starts (m = 2, L = 0.8): the saved q and lambda within
// 1000 tol of tests/support/reference.hpp's solution of theta'' = -(g / L) sin theta (the bound of the
// adaptive-accuracy tests of tests/method/bdf_test.cpp).
TEST_P(PendulumReference, SavedPositionsAndMultipliersAgreeWithTheMinimalCoordinateReference) {
  // Arrange
  const reference_case c = GetParam();
  const double tol = 1e-8;
  const std::string text = std::string("[model]\nname = \"pendulum\"\nparams = { m = 2.0, L = 0.8 }\n[solver]\nmethod = \"") +
                           c.method + "\"\nformulation = \"" + c.formulation +
                           "\"\nrtol = 1e-8\natol = 1e-8\n[time]\nt1 = 2.0\nsave = { every = 0.25 }\n"
                           "[ensemble]\nsampler = \"grid\"\n[ensemble.vary]\n"
                           "\"initial.theta0\" = { grid = [0.5, 1.0, 2.0] }\n\"initial.omega0\" = { grid = [0.0, 1.5] }\n"
                           "[output]\ntrajectories = true\nstatistics = [\"mean\"]\n";
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "reference", text);

  // Assert
  ASSERT_EQ(r.exit_code, 0);
  h5_file f(dir / "out" / "results.h5");
  ASSERT_TRUE(f.is_open());
  const std::vector<double> t = f.doubles("/t"), q = f.doubles("/q"), lambda = f.doubles("/lambda"),
                            inputs = f.doubles("/members/inputs");
  const std::size_t S = t.size();
  ASSERT_EQ(S, 9u);
  ASSERT_EQ(inputs.size(), 12u);
  ASSERT_EQ(q.size(), 6 * S * 2);
  double err_q = 0.0, err_lambda = 0.0;
  for (std::size_t i = 0; i < 6; ++i) {
    const double theta0 = inputs[2 * i], omega0 = inputs[2 * i + 1];
    EXPECT_EQ(theta0, (std::vector<double>{0.5, 1.0, 2.0})[i / 2]);
    EXPECT_EQ(omega0, (std::vector<double>{0.0, 1.5})[i % 2]);
    const auto expected = ref::pendulum({2.0, 0.8, 9.81}, theta0, omega0, t);
    for (std::size_t s = 0; s < S; ++s) {
      for (std::size_t j = 0; j < 2; ++j) err_q = std::max(err_q, std::abs(q[(i * S + s) * 2 + j] - expected[s].q[j]));
      err_lambda = std::max(err_lambda, std::abs(lambda[i * S + s] - expected[s].lambda));
    }
  }
  std::printf("[ measured ] %s: max |q - q_ref| %.3e (%.1f tol), max |lambda - lambda_ref| %.3e (%.1f tol)\n", c.name,
              err_q, err_q / tol, err_lambda, err_lambda / tol);
  EXPECT_LE(err_q, 1000 * tol);
  EXPECT_LE(err_lambda, 1000 * tol);
  EXPECT_FALSE(std::isnan(err_q + err_lambda));
}

INSTANTIATE_TEST_SUITE_P(LockstepRun, PendulumReference,
                         ::testing::Values(reference_case{"Radau5Index3", "radau5", "index3"},
                                           reference_case{"BdfGgl", "bdf", "ggl"}),
                         [](const ::testing::TestParamInfo<reference_case>& info) { return info.param.name; });

// ---- where the outputs go --------------------------------------------------------------------------
constexpr const char* tiny_study = "[model]\nname = \"pendulum\"\n[time]\nt1 = 0.5\nsave = { every = 0.25 }\n";

TEST(LockstepRun, WithoutOutputOptionWritesToLockstepOutSlashTheStudyStem) {
  // Arrange
  scratch_dir dir;
  write_text(dir / "tiny.toml", tiny_study);

  // Act
  const run_result r = run_lockstep(dir, {"run", "tiny.toml"});

  // Assert
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"lockstep-out", "lockstep-out/tiny", "lockstep-out/tiny/members.csv",
                                                     "lockstep-out/tiny/results.h5", "lockstep-out/tiny/study.toml",
                                                     "tiny.toml"}));
  h5_file f(dir / "lockstep-out" / "tiny" / "results.h5");
  ASSERT_TRUE(f.is_open());
  EXPECT_EQ(f.string_attribute("/", "study_name"), "tiny");
  EXPECT_EQ(f.int64_attribute("/", "members"), 1);
  EXPECT_FALSE(f.exists("/q")) << "trajectories are off by default";
}

TEST(LockstepRun, QuietRunPrintsNothing) {
  // Arrange
  scratch_dir dir;

  // Act
  const run_result r = run_study(dir, "tiny", tiny_study, {"--quiet"});

  // Assert
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(fs::exists(dir / "out" / "results.h5"));
}

TEST(LockstepRun, RunIntoAnExistingDirectoryKeepsItsOtherFilesAndReplacesOldResults) {
  // Arrange
  scratch_dir dir;
  fs::create_directories(dir / "out");
  write_text(dir / "out" / "notes.txt", "mine");
  write_text(dir / "out" / "results.h5", "not an HDF5 file");

  // Act
  const run_result r = run_study(dir, "tiny", tiny_study);

  // Assert
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(dir.entries("out"), (std::vector<std::string>{"members.csv", "notes.txt", "results.h5", "study.toml"}));
  EXPECT_EQ(read_text(dir / "out" / "notes.txt"), "mine");
  h5_file f(dir / "out" / "results.h5");
  EXPECT_TRUE(f.is_open()) << "the old results.h5 should have been replaced";
}

}  // namespace
