// The study-file loader (host/io/study_file.hpp): a valid file gives exactly the spec it describes,
// left-out keys give the documented defaults, and every malformed file gives one diagnostic at the
// right line and column.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/io/study_file.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/study/samplers.hpp"

namespace lockstep::io {
namespace {

int param_index(std::string_view model, std::string_view name) {
  const model_info* info = find_model(model);
  for (std::size_t i = 0; i < info->params.size(); ++i)
    if (name == info->params[i].name) return static_cast<int>(i);
  return -1;
}

int input_index(std::string_view model, std::string_view name) {
  const model_info* info = find_model(model);
  for (std::size_t i = 0; i < info->inputs.size(); ++i)
    if (name == info->inputs[i].name) return static_cast<int>(i);
  return -1;
}

std::size_t occurrences(std::string_view text, std::string_view word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// ---- a valid study, every key set ----------------------------------------------------------------

constexpr const char* full_study = R"([model]
name = "double_pendulum"
params  = { m1 = 1.5, L2 = 0.8 }
initial = { theta2 = 2.5, theta1 = 2 }

[solver]
method = "bdf"
formulation = "ggl"
projection = "none"
metric = "euclidean"
init = "strict"
rtol = 1e-8
atol = { q = 1e-9, v = 1e-7, lambda = 1e-5 }
max_steps = 20000
max_order = 4
h_initial = 1e-4
h_min = 1e-14
h_max = 0.1
newton_tol = 0.2
newton_max_iterations = 7
consistent_multipliers = false
multipliers = "minimum-norm"
init_tolerance = 1e-12

[time]
t0 = 1.0
t1 = 2.0
save = { every = 0.25 }

[ensemble]
members = 1000
sampler = "sobol"
seed = 7
replicates = 4
[ensemble.vary]
"initial.theta1" = { uniform = [1.5, 2.5] }
"params.L2"      = { normal = { mean = 0.8, std = 0.01 } }
params.m2 = { lognormal = { mu = 0.0, sigma = 0.1 } }
"initial.omega1" = { grid = [0.0, 0.5, 1] }

[output]
trajectories = true
statistics = ["mean", "std", "min", "max", "q05", "q50", "q97.5"]
quantile_memory_mb = 256
)";

TEST(StudyFile, FullStudyParsesIntoExactlyTheExpectedSpec) {
  // Arrange
  const std::string_view model = "double_pendulum";

  // Act
  const study_spec spec = parse_study(full_study, "studies/full.toml");

  // Assert
  EXPECT_EQ(spec.path, std::filesystem::path("studies/full.toml"));
  EXPECT_EQ(spec.name, "full");
  EXPECT_EQ(spec.text, full_study);
  EXPECT_EQ(spec.model, model);
  EXPECT_EQ(spec.params, (std::vector<indexed_value>{{param_index(model, "m1"), 1.5}, {param_index(model, "L2"), 0.8}}));
  EXPECT_EQ(spec.initial,
            (std::vector<indexed_value>{{input_index(model, "theta1"), 2.0}, {input_index(model, "theta2"), 2.5}}));

  const solver_options& opt = spec.solver;
  EXPECT_EQ(opt.method, method_kind::bdf);
  EXPECT_EQ(opt.max_order, 4);
  EXPECT_EQ(opt.form, formulation::ggl);
  EXPECT_EQ(opt.metric, projection_metric::euclidean);
  EXPECT_EQ(opt.projection, projection_kind::none);
  EXPECT_EQ(opt.init, init_mode::strict);
  EXPECT_EQ(opt.rtol, 1e-8);
  EXPECT_EQ(opt.atol_q, 1e-9);
  EXPECT_EQ(opt.atol_v, 1e-7);
  EXPECT_EQ(opt.atol_lambda, 1e-5);
  EXPECT_EQ(opt.max_steps, 20000);
  EXPECT_EQ(opt.h_initial, 1e-4);
  EXPECT_EQ(opt.h_min, 1e-14);
  EXPECT_EQ(opt.h_max, 0.1);
  EXPECT_EQ(opt.newton_tol, 0.2);
  EXPECT_EQ(opt.newton_max_iterations, 7);
  EXPECT_FALSE(opt.consistent_multipliers);
  EXPECT_EQ(opt.multipliers, multiplier_convention::minimum_norm);
  EXPECT_EQ(opt.init_tolerance, 1e-12);
  const solver_options untouched;
  EXPECT_EQ(opt.fixed_h, untouched.fixed_h);
  EXPECT_EQ(opt.fixed_order, untouched.fixed_order);

  EXPECT_EQ(spec.t0, 1.0);
  EXPECT_EQ(spec.t1, 2.0);
  EXPECT_EQ(spec.save_times, (std::vector<double>{1.0, 1.25, 1.5, 1.75, 2.0}));

  const study::sampling_plan& plan = spec.plan;
  EXPECT_EQ(plan.sampler, study::sampler_kind::sobol);
  EXPECT_EQ(plan.seed, 7u);
  EXPECT_EQ(plan.members, 1000);
  EXPECT_EQ(plan.replicates, 4);
  ASSERT_EQ(plan.vary.size(), 4u);  // in the order written, not toml++'s alphabetical order
  EXPECT_EQ(plan.vary[0].name, "initial.theta1");
  EXPECT_FALSE(plan.vary[0].is_param);
  EXPECT_EQ(plan.vary[0].index, input_index(model, "theta1"));
  EXPECT_EQ(plan.vary[0].dist.kind, study::distribution_kind::uniform);
  EXPECT_EQ(plan.vary[0].dist.a, 1.5);
  EXPECT_EQ(plan.vary[0].dist.b, 2.5);
  EXPECT_EQ(plan.vary[1].name, "params.L2");
  EXPECT_TRUE(plan.vary[1].is_param);
  EXPECT_EQ(plan.vary[1].index, param_index(model, "L2"));
  EXPECT_EQ(plan.vary[1].dist.kind, study::distribution_kind::normal);
  EXPECT_EQ(plan.vary[1].dist.a, 0.8);
  EXPECT_EQ(plan.vary[1].dist.b, 0.01);
  EXPECT_EQ(plan.vary[2].name, "params.m2");
  EXPECT_TRUE(plan.vary[2].is_param);
  EXPECT_EQ(plan.vary[2].index, param_index(model, "m2"));
  EXPECT_EQ(plan.vary[2].dist.kind, study::distribution_kind::lognormal);
  EXPECT_EQ(plan.vary[2].dist.a, 0.0);
  EXPECT_EQ(plan.vary[2].dist.b, 0.1);
  EXPECT_EQ(plan.vary[3].name, "initial.omega1");
  EXPECT_FALSE(plan.vary[3].is_param);
  EXPECT_EQ(plan.vary[3].index, input_index(model, "omega1"));
  EXPECT_EQ(plan.vary[3].dist.kind, study::distribution_kind::grid);
  EXPECT_EQ(plan.vary[3].dist.grid, (std::vector<double>{0.0, 0.5, 1.0}));

  EXPECT_TRUE(spec.output.trajectories);
  EXPECT_EQ(spec.output.statistics, (std::vector<std::string>{"mean", "std", "min", "max", "q05", "q50", "q97.5"}));
  EXPECT_EQ(spec.output.quantiles, (std::vector<double>{0.05, 0.50, 0.975}));
  EXPECT_EQ(spec.output.quantile_memory_mb, 256);
}

TEST(StudyFile, MinimalStudyTakesTheDocumentedDefaults) {
  // Arrange
  const char* text = "[model]\nname = \"pendulum\"\n[time]\nt1 = 2\n";

  // Act
  const study_spec spec = parse_study(text, "minimal.toml");

  // Assert
  EXPECT_EQ(spec.name, "minimal");
  EXPECT_EQ(spec.model, "pendulum");
  EXPECT_TRUE(spec.params.empty());
  EXPECT_TRUE(spec.initial.empty());
  const solver_options library_defaults;
  EXPECT_EQ(spec.solver.method, method_kind::radau5);
  EXPECT_EQ(spec.solver.form, formulation::index3);
  EXPECT_EQ(spec.solver.rtol, 1e-6);
  EXPECT_EQ(spec.solver.atol_q, 1e-6);
  EXPECT_EQ(spec.solver.atol_v, 1e-6);
  EXPECT_EQ(spec.solver.atol_lambda, 1e-6);
  EXPECT_EQ(spec.solver.metric, projection_metric::mass);
  EXPECT_EQ(spec.solver.init, init_mode::automatic);
  EXPECT_EQ(spec.solver.max_steps, library_defaults.max_steps);
  EXPECT_EQ(spec.solver.h_initial, library_defaults.h_initial);
  EXPECT_EQ(spec.solver.h_max, library_defaults.h_max);
  EXPECT_EQ(spec.solver.newton_tol, library_defaults.newton_tol);
  EXPECT_EQ(spec.solver.consistent_multipliers, library_defaults.consistent_multipliers);
  EXPECT_EQ(spec.t0, 0.0);
  EXPECT_EQ(spec.t1, 2.0);
  ASSERT_EQ(spec.save_times.size(), 101u);  // every (t1 - t0) / 100, both ends included
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(spec.save_times[i], static_cast<double>(i) * 0.02);
  EXPECT_EQ(spec.save_times.back(), 2.0);
  EXPECT_EQ(spec.plan.sampler, study::sampler_kind::random);
  EXPECT_EQ(spec.plan.seed, 1u);
  EXPECT_EQ(spec.plan.members, 1);
  EXPECT_EQ(spec.plan.replicates, 1);
  EXPECT_TRUE(spec.plan.vary.empty());
  EXPECT_FALSE(spec.output.trajectories);
  EXPECT_EQ(spec.output.statistics, (std::vector<std::string>{"mean", "std", "min", "max", "q05", "q50", "q95"}));
  EXPECT_EQ(spec.output.quantiles, (std::vector<double>{0.05, 0.50, 0.95}));
  EXPECT_EQ(spec.output.quantile_memory_mb, 1024);
}

TEST(StudyFile, InitTakesAutoProjectAndStrict) {
  // Arrange
  const std::string base = "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\n[solver]\ninit = ";

  // Act, Assert
  EXPECT_EQ(parse_study(base + "\"auto\"\n", "auto.toml").solver.init, init_mode::automatic);
  EXPECT_EQ(parse_study(base + "\"project\"\n", "project.toml").solver.init, init_mode::project);
  EXPECT_EQ(parse_study(base + "\"strict\"\n", "strict.toml").solver.init, init_mode::strict);
}

TEST(StudyFile, LyapunovSectionTakesTheDocumentedDefaults) {
  // Arrange: an empty [lyapunov] on the double pendulum (d = 2 (2 - 0) - 0 = 4), then clone and
  // explicit values; without the section nothing is enabled.
  const std::string base = "[model]\nname = \"double_pendulum\"\n[time]\nt1 = 10\n";

  // Act
  const study_spec none = parse_study(base, "none.toml");
  const study_spec defaults = parse_study(base + "[lyapunov]\n", "defaults.toml");
  const study_spec clone = parse_study(base + "[lyapunov]\nmethod = \"clone\"\n", "clone.toml");
  const study_spec given = parse_study(base + "[lyapunov]\nexponents = 2\nrenormalize = 0.5\ntransient = 3\n"
                                              "metric = \"euclidean\"\nhistory = false\n",
                                       "given.toml");

  // Assert
  EXPECT_FALSE(none.lyapunov.enabled);
  EXPECT_TRUE(defaults.lyapunov.enabled);
  EXPECT_EQ(defaults.lyapunov.line, 5);
  EXPECT_EQ(defaults.lyapunov.exponents, 4);
  EXPECT_EQ(defaults.lyapunov.dimension, 4);
  EXPECT_EQ(defaults.lyapunov.renormalize, 1.0);
  EXPECT_EQ(defaults.lyapunov.transient, 0.0);
  EXPECT_EQ(defaults.lyapunov.method, lyapunov_method::qr);
  EXPECT_EQ(defaults.lyapunov.metric, lyapunov_metric::mass);
  EXPECT_TRUE(defaults.lyapunov.history);
  EXPECT_EQ(lyapunov_history_length(defaults.lyapunov, 0.0, 10.0), 12);
  EXPECT_EQ(clone.lyapunov.method, lyapunov_method::clone);
  EXPECT_EQ(clone.lyapunov.exponents, 1);
  EXPECT_EQ(clone.lyapunov.separation, 1e-6);
  EXPECT_EQ(given.lyapunov.exponents, 2);
  EXPECT_EQ(given.lyapunov.renormalize, 0.5);
  EXPECT_EQ(given.lyapunov.transient, 3.0);
  EXPECT_EQ(given.lyapunov.metric, lyapunov_metric::euclidean);
  EXPECT_FALSE(given.lyapunov.history);
  EXPECT_EQ(lyapunov_history_length(given.lyapunov, 0.0, 10.0), 0);
}

TEST(StudyFile, SensitivityMakesSaltellisDesignTheMembers) {
  // Arrange: two drawn inputs, 3 replicates, base 64: rows of 2 + 2 members (2k + 2 = 6 with second order).
  const std::string base = "[model]\nname = \"double_pendulum\"\n[time]\nt1 = 1.0\n[ensemble]\nreplicates = 3\nseed = 9\n"
                           "[ensemble.vary]\n\"params.L1\" = { uniform = [0.9, 1.1] }\n"
                           "\"params.m2\" = { normal = { mean = 1.0, std = 0.1 } }\n";

  // Act
  const study_spec first = parse_study(base + "[sensitivity]\nbase = 64\n", "first.toml");
  const study_spec second = parse_study(base + "[sensitivity]\nbase = 64\nsecond_order = true\nmax_failed = 0\n",
                                        "second.toml");

  // Assert: the plan is the design; [sensitivity]'s defaults as documented.
  EXPECT_TRUE(first.sensitivity.enabled);
  EXPECT_EQ(first.plan.sampler, study::sampler_kind::saltelli);
  EXPECT_EQ(first.plan.members, 64 * 4);
  EXPECT_EQ(study::member_count(first.plan), 64 * 4 * 3);
  EXPECT_EQ(first.plan.seed, 9u);
  EXPECT_EQ(first.sensitivity.confidence, 0.95);
  EXPECT_EQ(first.sensitivity.resamples, 100);
  EXPECT_EQ(first.sensitivity.max_failed, 0.05);
  EXPECT_EQ(first.sensitivity.memory_mb, 1024);
  EXPECT_EQ(first.member_count_line, 12);  // at base
  EXPECT_EQ(second.plan.members, 64 * 6);
  EXPECT_TRUE(second.plan.second_order);
  EXPECT_EQ(second.sensitivity.max_failed, 0.0);
  EXPECT_EQ(study::check_plan(second.plan), "");
}

TEST(StudyFile, DerivativeMeasuresKeepThePlainSample) {
  // Arrange
  const std::string base = "[model]\nname = \"double_pendulum\"\n[time]\nt1 = 1.0\n[ensemble]\nmembers = 32\n"
                           "sampler = \"sobol\"\n[ensemble.vary]\n\"params.L1\" = { uniform = [0.9, 1.1] }\n";

  // Act
  const study_spec plain = parse_study(base, "plain.toml");
  const study_spec given = parse_study(base + "[derivative_measures]\n", "given.toml");
  const study_spec set = parse_study(base + "[derivative_measures]\nmax_failed = 0\nmemory_mb = 8\n", "set.toml");

  // Assert: the members stay the sample [ensemble] gives; the defaults as documented.
  EXPECT_FALSE(plain.derivative_measures.enabled);
  EXPECT_TRUE(given.derivative_measures.enabled);
  EXPECT_EQ(given.plan.sampler, study::sampler_kind::sobol);
  EXPECT_EQ(study::member_count(given.plan), 32);
  EXPECT_EQ(given.derivative_measures.max_failed, 0.05);
  EXPECT_EQ(given.derivative_measures.memory_mb, 1024);
  EXPECT_EQ(given.derivative_measures.line, 10);
  EXPECT_EQ(set.derivative_measures.max_failed, 0.0);
  EXPECT_EQ(set.derivative_measures.memory_mb, 8);
}

TEST(StudyFile, SaveTimesAreSortedDeduplicatedAndEndWithT1) {
  // Arrange
  const char* text = "[model]\nname = \"pendulum\"\n[time]\nt0 = 1\nt1 = 2\nsave = { times = [1.5, 1, 1.5, 1.9999999999999999] }\n";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.save_times, (std::vector<double>{1.0, 1.5, 2.0}));
}

TEST(StudyFile, SaveEveryDropsAPointARoundingErrorShortOfT1) {
  // Arrange: 3 * 0.1 = 0.30000000000000004 lies 5.6e-17 below t1, well within 1e-12 (t1 - t0).
  const char* text = "[model]\nname = \"pendulum\"\n[time]\nt1 = 0.3000000000000001\nsave = { every = 0.1 }\n";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.save_times, (std::vector<double>{0.0, 0.1, 0.2, 0.3000000000000001}));
}

TEST(StudyFile, SaveEveryThatDoesNotDivideTheSpanStopsBeforeT1) {
  // Arrange
  const char* text = "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\nsave = { every = 0.3 }\n";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert: t0 + i every, not a running sum.
  EXPECT_EQ(spec.save_times, (std::vector<double>{0.0, 0.3, 2 * 0.3, 3 * 0.3, 1.0}));
}

TEST(StudyFile, IntegralRealIsAcceptedWhereAnIntegerIsExpected) {
  // Arrange
  const char* text =
      "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\n[ensemble]\nmembers = 1e4\nseed = 3.0\n"
      "[ensemble.vary]\n\"initial.theta0\" = { uniform = [0.5, 1.0] }\n";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.plan.members, 10000);
  EXPECT_EQ(spec.plan.seed, 3u);
}

TEST(StudyFile, PureGridWithGridSamplerParses) {
  // Arrange
  const char* text = R"([model]
name = "pendulum"
[time]
t1 = 1
[ensemble]
sampler = "grid"
[ensemble.vary]
initial.theta0 = { grid = [0.1, 0.2] }
params.L = { grid = [1, 2, 3] }
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.plan.sampler, study::sampler_kind::grid);
  ASSERT_EQ(spec.plan.vary.size(), 2u);
  EXPECT_EQ(spec.plan.vary[0].name, "initial.theta0");
  EXPECT_EQ(spec.plan.vary[1].name, "params.L");
  EXPECT_EQ(spec.plan.vary[1].dist.grid, (std::vector<double>{1.0, 2.0, 3.0}));
}

TEST(StudyFile, MembersWithNothingVariedAreThatManyIdenticalMembers) {
  // Arrange: 1000 members, 3 replicates, nothing varied (a throughput measurement).
  const char* text = R"([model]
name = "pendulum"
[time]
t1 = 1
[ensemble]
members = 1000
replicates = 3
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert: every one of them is run, not one.
  EXPECT_TRUE(spec.plan.vary.empty());
  EXPECT_FALSE(study::is_pure_grid(spec.plan));
  EXPECT_EQ(study::member_count(spec.plan), 3000);
}

TEST(StudyFile, MemberCountIsPlacedAtItsLargestFactorAsWritten) {
  // Arrange: 2 grid points x members = 10 x replicates = 40; then a pure grid, then no [ensemble].
  const std::string head = "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\n";
  const std::string replicates_largest = head + "[ensemble]\nmembers = 10\nreplicates = 40\n[ensemble.vary]\n" +
                                         "\"params.L\" = { grid = [1.0, 2.0] }\n\"initial.theta0\" = { uniform = [0.1, 0.2] }\n";
  const std::string pure_grid =
      head + "[ensemble.vary]\n\"params.L\" = { grid = [1.0, 2.0] }\n\"initial.theta0\" = { grid = [0.1, 0.2, 0.3] }\n";

  // Act
  const study_spec a = parse_study(replicates_largest, "a.toml");
  const study_spec b = parse_study(pure_grid, "b.toml");
  const study_spec c = parse_study(head, "c.toml");

  // Assert: replicates' value; the larger grid's distribution; the start of the file.
  EXPECT_EQ(std::make_pair(a.member_count_line, a.member_count_column), std::make_pair(7, 14));
  EXPECT_EQ(std::make_pair(b.member_count_line, b.member_count_column), std::make_pair(7, 22));
  EXPECT_EQ(std::make_pair(c.member_count_line, c.member_count_column), std::make_pair(1, 1));
}

TEST(StudyFile, BaumgarteWithZeroGainsIsNoStabilizationAndAcceptedWithAnyFormulation) {
  // Arrange: a sample [solver] section that writes it with index3.
  const char* text = R"([model]
name = "pendulum"
[solver]
formulation = "index3"
baumgarte = { alpha = 0.0, beta = 0.0 }
[time]
t1 = 1
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.solver.form, formulation::index3);
}

TEST(StudyFile, Index1WithBaumgarteGainsAndAProjectionParsesIntoTheOptions) {
  // Arrange
  const char* text = R"([model]
name = "knife_edge"
[solver]
method = "bdf"
formulation = "index1"
projection = "post-stabilization"
baumgarte = { alpha = 5.0, beta = 10.0 }
[time]
t1 = 1
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.solver.form, formulation::index1);
  EXPECT_EQ(spec.solver.projection, projection_kind::post_stabilization);
  EXPECT_EQ(spec.solver.baumgarte_alpha, 5.0);
  EXPECT_EQ(spec.solver.baumgarte_beta, 10.0);
}

TEST(StudyFile, ProjectedInvariantsWithCoordinateProjectionParsesIntoTheOptions) {
  // Arrange
  const char* text = R"([model]
name = "double_pendulum"
[solver]
formulation = "projected-invariants"
projection = "coordinate"
metric = "euclidean"
[time]
t1 = 1
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.solver.form, formulation::projected_invariants);
  EXPECT_EQ(spec.solver.projection, projection_kind::coordinate);
  EXPECT_EQ(spec.solver.metric, projection_metric::euclidean);
  EXPECT_EQ(spec.solver.baumgarte_alpha, 0.0);
}

TEST(StudyFile, EveryMethodNameIsAcceptedOnIndex3) {
  for (const auto& [name, kind] : {std::pair{"bdf", method_kind::bdf}, std::pair{"radau5", method_kind::radau5},
                                   std::pair{"radau3", method_kind::radau3}, std::pair{"euler", method_kind::euler},
                                   std::pair{"rhoinf", method_kind::rhoinf}}) {
    // Arrange (BDF needs fixed steps on index3)
    const std::string text = std::string("[model]\nname = \"pendulum\"\n[solver]\nmethod = \"") + name +
                             "\"\nfixed_h = 0.01\n[time]\nt1 = 1\n";

    // Act
    const study_spec spec = parse_study(text, "s.toml");

    // Assert
    EXPECT_EQ(spec.solver.method, kind) << name;
    EXPECT_EQ(spec.solver.form, formulation::index3) << name;
  }
}

// The explicit pairs integrate the index-1 equations and project after every step: their defaults
// where the study names no formulation or projection; a projection the study names is kept.
TEST(StudyFile, TheExplicitPairsDefaultToIndex1WithTheCoordinateProjection) {
  for (const char* method : {"dopri5", "tsit5"}) {
    // Arrange
    const std::string plain =
        std::string("[model]\nname = \"pendulum\"\n[solver]\nmethod = \"") + method + "\"\n[time]\nt1 = 1\n";
    const std::string unprojected = std::string("[model]\nname = \"pendulum\"\n[solver]\nmethod = \"") + method +
                                    "\"\nprojection = \"none\"\n[time]\nt1 = 1\n";

    // Act
    const study_spec a = parse_study(plain, "a.toml"), b = parse_study(unprojected, "b.toml");

    // Assert
    EXPECT_STREQ(method_name(a.solver.method), method);
    EXPECT_EQ(a.solver.form, formulation::index1) << method;
    EXPECT_EQ(a.solver.projection, projection_kind::coordinate) << method;
    EXPECT_EQ(b.solver.form, formulation::index1) << method;
    EXPECT_EQ(b.solver.projection, projection_kind::none) << method;
  }
}

// Auto projects after every step, and its implicit phases run index3 unless the study names ggl.
TEST(StudyFile, AutoDefaultsToIndex3WithTheCoordinateProjection) {
  // Arrange
  const char* plain = "[model]\nname = \"pendulum\"\n[solver]\nmethod = \"auto\"\n[time]\nt1 = 1\n";
  const char* ggl = "[model]\nname = \"pendulum\"\n[solver]\nmethod = \"auto\"\nformulation = \"ggl\"\n"
                    "projection = \"post-stabilization\"\n[time]\nt1 = 1\n";

  // Act
  const study_spec a = parse_study(plain, "a.toml"), b = parse_study(ggl, "b.toml");

  // Assert
  EXPECT_EQ(a.solver.method, method_kind::automatic);
  EXPECT_EQ(a.solver.form, formulation::index3);
  EXPECT_EQ(a.solver.projection, projection_kind::coordinate);
  EXPECT_EQ(b.solver.form, formulation::ggl);
  EXPECT_EQ(b.solver.projection, projection_kind::post_stabilization);
}

TEST(StudyFile, RhoinfReadsItsSpectralRadiusAndAcceptsOneOnGglWithFixedSteps) {
  // Arrange
  const char* index3 = "[model]\nname = \"pendulum\"\n[solver]\nmethod = \"rhoinf\"\nrho_inf = 0.25\n[time]\nt1 = 1\n";
  const char* ggl = "[model]\nname = \"pendulum\"\n[solver]\nmethod = \"rhoinf\"\nformulation = \"ggl\"\nrho_inf = 1\n"
                    "fixed_h = 0.01\n[time]\nt1 = 1\n";
  const char* fallback = "[model]\nname = \"pendulum\"\n[solver]\nmethod = \"rhoinf\"\n[time]\nt1 = 1\n";

  // Act
  const study_spec a = parse_study(index3, "a.toml"), b = parse_study(ggl, "b.toml"), c = parse_study(fallback, "c.toml");

  // Assert
  EXPECT_EQ(a.solver.rho_inf, 0.25);
  EXPECT_EQ(b.solver.rho_inf, 1.0);
  EXPECT_EQ(b.solver.form, formulation::ggl);
  EXPECT_EQ(c.solver.rho_inf, solver_options{}.rho_inf);
}

TEST(StudyFile, BdfOnIndex3WithFixedStepsIsAccepted) {
  // Arrange
  const char* text = R"([model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "index3"
fixed_h = 0.01
fixed_order = 2
max_order = 3
atol = 1e-9
[time]
t1 = 1
)";

  // Act
  const study_spec spec = parse_study(text, "s.toml");

  // Assert
  EXPECT_EQ(spec.solver.method, method_kind::bdf);
  EXPECT_EQ(spec.solver.form, formulation::index3);
  EXPECT_EQ(spec.solver.fixed_h, 0.01);
  EXPECT_EQ(spec.solver.fixed_order, 2);
  EXPECT_EQ(spec.solver.max_order, 3);
  EXPECT_EQ(spec.solver.atol_q, 1e-9);
  EXPECT_EQ(spec.solver.atol_v, 1e-9);
  EXPECT_EQ(spec.solver.atol_lambda, 1e-9);
}

// ---- malformed studies ------------------------------------------------------------------------------

struct malformed_case {
  const char* what;      // the mistake
  const char* text;      // the file
  const char* location;  // "line:column"
  const char* fragment;  // a distinctive part of the message
};

// Lines 1-4 of most cases; the mistake follows on line 5 or later.
#define BASE "[model]\nname = \"double_pendulum\"\n[time]\nt1 = 1.0\n"

const malformed_case malformed_cases[] = {
    {"TOML syntax error", BASE "[solver]\nrtol = \n", "6:8", "invalid TOML: error while parsing key-value pair"},
    {"duplicate key", BASE "[solver]\nrtol = 1e-6\nrtol = 1e-7\n", "7:8", "invalid TOML: error while parsing key-value pair: cannot redefine existing floating-point 'rtol'"},
    {"empty file", "", "1:1", "missing [model]"},
    {"missing [model]", "[time]\nt1 = 1\n", "1:1", "missing [model]"},
    {"model without a name", "[model]\nparams = { m1 = 1 }\n[time]\nt1 = 1\n", "1:1", "[model] needs name = a built-in model"},
    {"model file without the command", "[model]\nsource = \"crane.hpp\"\n[time]\nt1 = 1\n", "2:10",
     "model files are compiled by the lockstep command"},
    {"study events without the command",
     "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\n[events.functions]\nlow = { g = \"y\" }\n", "2:8",
     "the event functions a study adds are compiled by the lockstep command"},
    {"empty model file", "[model]\nsource = \"\"\n[time]\nt1 = 1\n", "2:10", "[model] source is empty"},
    {"unknown model, close to a known one", "[model]\nname = \"double_pendulm\"\n[time]\nt1 = 1\n", "2:8",
     "unknown model \"double_pendulm\"; did you mean \"double_pendulum\"?"},
    {"unknown model, close to nothing", "[model]\nname = \"rocket\"\n[time]\nt1 = 1\n", "2:8",
     "unknown model \"rocket\"; built-in models: pendulum, double_pendulum, chain2"},
    {"model name not a string", "[model]\nname = 3\n[time]\nt1 = 1\n", "2:8", "[model] name must be a string (got an integer (3))"},
    {"unknown parameter", "[model]\nname = \"double_pendulum\"\nparams = { m1 = 1.0, mass = 2.0 }\n[time]\nt1 = 1\n", "3:22",
     "unknown parameter \"mass\" of model \"double_pendulum\"; its parameters: m1, m2, L1, L2, g"},
    {"parameter of the wrong type", "[model]\nname = \"double_pendulum\"\nparams = { m1 = \"heavy\" }\n[time]\nt1 = 1\n", "3:17",
     "[model.params] m1 must be a number (got a string \"heavy\")"},
    {"unknown initial input", "[model]\nname = \"double_pendulum\"\ninitial = { theta3 = 1.0 }\n[time]\nt1 = 1\n", "3:13",
     "unknown initial input \"theta3\" of model \"double_pendulum\"; did you mean \"theta1\"?"},
    {"initial input for a model without inputs", "[model]\nname = \"andrews\"\ninitial = { theta = 1.0 }\n[time]\nt1 = 1\n",
     "3:13", "model \"andrews\" has no initial inputs"},
    {"unknown key at the top level", BASE "[outptu]\n", "5:2", "unknown key \"outptu\" at the top level; did you mean \"output\"?"},
    {"string where a table is expected", "solver = \"radau5\"\n" BASE, "1:10", "\"solver\" must be a table, written [solver]"},
    {"unknown key in [model]", "[model]\nname = \"double_pendulum\"\nparms = { m1 = 1 }\n[time]\nt1 = 1\n", "3:1",
     "unknown key \"parms\" in [model]; did you mean \"params\"?"},
    {"unknown key in [solver]", BASE "[solver]\natoll = 1e-8\n", "6:1", "unknown key \"atoll\" in [solver]; did you mean \"atol\"?"},
    {"unknown key in [time]", "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\nend = 2\n", "5:1", "unknown key \"end\" in [time]; valid keys: t0, t1, save"},
    {"unknown key in [time.save]", BASE "save = { evry = 0.1 }\n", "5:10", "unknown key \"evry\" in [time.save]; did you mean \"every\"?"},
    {"unknown key in [ensemble]", BASE "[ensemble]\nmember = 10\n", "6:1", "unknown key \"member\" in [ensemble]; did you mean \"members\"?"},
    {"unknown distribution", BASE "[ensemble.vary]\n\"params.L2\" = { uniformly = [0.7, 0.9] }\n", "6:17",
     "unknown key \"uniformly\" in [ensemble.vary.\"params.L2\"]; did you mean \"uniform\"?"},
    {"unknown key in a normal distribution", BASE "[ensemble.vary]\n\"params.L2\" = { normal = { mean = 0.8, sd = 0.1 } }\n", "6:40",
     "unknown key \"sd\" in [ensemble.vary.\"params.L2\".normal]; did you mean \"std\"?"},
    {"unknown key in [output]", BASE "[output]\ntrajectory = true\n", "6:1", "unknown key \"trajectory\" in [output]; did you mean \"trajectories\"?"},
    {"rtol of the wrong type", BASE "[solver]\nrtol = \"1e-8\"\n", "6:8", "[solver] rtol must be a number (got a string \"1e-8\")"},
    {"rtol = 0", BASE "[solver]\nrtol = 0\n", "6:8", "[solver] rtol must be > 0 (got 0)"},
    {"rtol < 0", BASE "[solver]\nrtol = -1\n", "6:8", "[solver] rtol must be > 0 (got -1)"},
    {"rtol = nan", BASE "[solver]\nrtol = nan\n", "6:8", "[solver] rtol must be a finite number (got nan)"},
    {"atol = 0", BASE "[solver]\natol = 0.0\n", "6:8", "[solver] atol must be > 0 (got 0)"},
    {"atol of the wrong type", BASE "[solver]\natol = [1e-8]\n", "6:8", "[solver] atol must be a number or a table"},
    {"atol table with an unknown group", BASE "[solver]\natol = { q = 1e-8, w = 1e-8 }\n", "6:20",
     "unknown key \"w\" in [solver.atol]; valid keys: q, v, lambda"},
    {"atol group <= 0", BASE "[solver]\natol = { lambda = -1e-8 }\n", "6:19", "[solver.atol] lambda must be > 0 (got -1e-08)"},
    {"unknown method, close to a known one", BASE "[solver]\nmethod = \"radua5\"\n", "6:10",
     "[solver] unknown method \"radua5\"; did you mean \"radau5\"?"},
    {"unknown method, close to nothing", BASE "[solver]\nmethod = \"rk4\"\n", "6:10",
     "[solver] unknown method \"rk4\"; available: bdf, radau5, radau3, euler, rhoinf, dopri5, tsit5, auto"},
    {"auto on the explicit method's formulation", BASE "[solver]\nmethod = \"auto\"\nformulation = \"index1\"\n", "6:10",
     "[solver] method \"auto\" with formulation \"index1\" is refused: auto runs its explicit phases on index1"},
    {"auto without a projection", BASE "[solver]\nmethod = \"auto\"\nprojection = \"none\"\n", "6:10",
     "[solver] method \"auto\" with formulation \"index3\" is refused: auto needs a projection after every step"},
    {"auto with fixed steps", BASE "[solver]\nmethod = \"auto\"\nfixed_h = 0.01\n", "6:10",
     "is refused: auto switches where the explicit method's steps are held by its stability limit"},
    {"dopri5 on an implicit method's formulation", BASE "[solver]\nmethod = \"dopri5\"\nformulation = \"ggl\"\n", "6:10",
     "[solver] method \"dopri5\" with formulation \"ggl\" is refused: the explicit pairs (dopri5, tsit5) integrate "
     "the index-1 equations"},
    {"dopri5 with Baumgarte's gains", BASE "[solver]\nmethod = \"dopri5\"\nbaumgarte = { alpha = 1.0 }\n", "6:10",
     "[solver] method \"dopri5\" with formulation \"index1\" is refused: the explicit pairs (dopri5, tsit5) do not "
     "apply Baumgarte's gains"},
    {"tsit5 with Baumgarte's gains", BASE "[solver]\nmethod = \"tsit5\"\nbaumgarte = { alpha = 1.0 }\n", "6:10",
     "[solver] method \"tsit5\" with formulation \"index1\" is refused: the explicit pairs (dopri5, tsit5) do not "
     "apply Baumgarte's gains"},
    {"newton_tol with the explicit method", BASE "[solver]\nmethod = \"dopri5\"\nnewton_tol = 0.05\n", "7:1",
     "[solver] newton_tol applies to methods \"bdf\" and \"rhoinf\" only (method is \"dopri5\", an explicit method "
     "without a Newton iteration); remove it"},
    {"rho_inf above 1", BASE "[solver]\nmethod = \"rhoinf\"\nrho_inf = 1.5\n", "7:11",
     "[solver] rho_inf must be between 0 and 1 (got 1.5)"},
    {"rho_inf below 0", BASE "[solver]\nmethod = \"rhoinf\"\nformulation = \"ggl\"\nrho_inf = -0.1\n", "8:11",
     "[solver] rho_inf must be between 0 and 1 (got -0.1)"},
    {"rho_inf = 1 on index3", BASE "[solver]\nmethod = \"rhoinf\"\nrho_inf = 1.0\n", "7:11",
     "[solver] rho_inf = 1 with formulation \"index3\" is refused: rho_inf = 1 is refused on the index-3 formulation: "
     "the roots -rho_inf at infinity must lie strictly inside the unit circle"},
    {"rho_inf = 1 with adaptive steps", BASE "[solver]\nmethod = \"rhoinf\"\nformulation = \"ggl\"\nrho_inf = 1\n", "6:10",
     "[solver] method \"rhoinf\" with formulation \"ggl\" is refused: rho_inf = 1 needs fixed steps (fixed_h > 0)"},
    {"fixed_h that does not divide [t0, t1]", BASE "[solver]\nmethod = \"radau5\"\nfixed_h = 0.3\n", "7:11",
     "[solver] fixed_h = 0.3 does not divide [t0, t1] = [0, 1] into whole steps ((t1 - t0) / fixed_h = "
     "3.3333333333333335); the nearest fixed_h that does is 0.3333333333333333 (3 steps)"},
    {"unknown formulation", BASE "[solver]\nformulation = \"index2\"\n", "6:15", "[solver] unknown formulation \"index2\"; did you mean \"index3\"?"},
    {"unknown formulation, close to nothing", BASE "[solver]\nformulation = \"lagrange\"\n", "6:15",
     "[solver] unknown formulation \"lagrange\"; available: index3, ggl, index1, projected-invariants"},
    {"unknown projection", BASE "[solver]\nprojection = \"coordinates\"\n", "6:14",
     "[solver] unknown projection \"coordinates\"; did you mean \"coordinate\"?"},
    {"unknown metric", BASE "[solver]\nmetric = \"kinetic\"\n", "6:10", "[solver] unknown metric \"kinetic\"; available: mass, euclidean"},
    {"unknown multiplier convention", BASE "[solver]\nmultipliers = \"smallest\"\n", "6:15",
     "[solver] unknown multiplier convention \"smallest\"; available: independent, minimum-norm"},
    {"method/formulation pair the library refuses", BASE "[solver]\nmethod = \"bdf\"\nformulation = \"index3\"\n", "6:10",
     "[solver] method \"bdf\" with formulation \"index3\" is refused: BDF on the index-3 formulation is allowed with fixed steps only"},
    {"baumgarte with an unknown key", BASE "[solver]\nbaumgarte = { alpha = 0.0, gamma = 0.0 }\n", "6:28",
     "unknown key \"gamma\" in [solver.baumgarte]; valid keys: alpha, beta"},
    {"baumgarte on ggl", BASE "[solver]\nformulation = \"ggl\"\nbaumgarte = { alpha = 1.0, beta = 2.0 }\n", "7:1",
     "[solver] baumgarte applies to formulation \"index1\" only (formulation is \"ggl\")"},
    {"baumgarte on projected invariants", BASE "[solver]\nformulation = \"projected-invariants\"\nbaumgarte = { beta = 2.0 }\n",
     "7:1", "[solver] baumgarte applies to formulation \"index1\" only (formulation is \"projected-invariants\")"},
    {"negative baumgarte gain", BASE "[solver]\nformulation = \"index1\"\nbaumgarte = { alpha = -1.0 }\n", "7:23",
     "[solver.baumgarte] alpha must be >= 0 (got -1)"},
    {"rho_inf with radau5", BASE "[solver]\nrho_inf = 0.6\n", "6:1", "[solver] rho_inf applies to method \"rhoinf\" only"},
    {"max_order with radau5", BASE "[solver]\nmax_order = 3\n", "6:1", "[solver] max_order applies to method \"bdf\" only"},
    {"max_order out of range", BASE "[solver]\nmethod = \"bdf\"\nformulation = \"ggl\"\nmax_order = 6\n", "8:13",
     "[solver] max_order must be between 1 and 5 (got 6)"},
    {"h_min above h_max", BASE "[solver]\nh_max = 0.1\nh_min = 0.2\n", "7:9", "[solver] h_min must be <= h_max"},
    {"consistent_multipliers not a boolean", BASE "[solver]\nconsistent_multipliers = 1\n", "6:26",
     "[solver] consistent_multipliers must be true or false (got an integer (1))"},
    {"[time] missing", "[model]\nname = \"pendulum\"\n", "1:1", "missing [time]"},
    {"t1 missing", "[model]\nname = \"pendulum\"\n[time]\nt0 = 0.0\n", "3:1", "[time] needs t1"},
    {"t1 = t0", "[model]\nname = \"pendulum\"\n[time]\nt0 = 1.0\nt1 = 1.0\n", "5:6", "[time] t1 must be > t0 (got t1 = 1, t0 = 1)"},
    {"t1 < t0", "[model]\nname = \"pendulum\"\n[time]\nt0 = 2.0\nt1 = 1.0\n", "5:6", "[time] t1 must be > t0 (got t1 = 1, t0 = 2)"},
    {"t1 = inf", "[model]\nname = \"pendulum\"\n[time]\nt1 = inf\n", "4:6", "[time] t1 must be a finite number (got inf)"},
    {"save not a table", BASE "save = 0.1\n", "5:8", "[time] save must be a table (got a number (0.1))"},
    {"save with both every and times", BASE "save = { every = 0.1, times = [0.5] }\n", "5:23",
     "[time.save] gives both every and times; give one of them"},
    {"save with neither every nor times", BASE "save = {}\n", "5:8", "[time.save] needs every = ... or times = [...]"},
    {"save.every = 0", BASE "save = { every = 0.0 }\n", "5:18", "[time.save] every must be > 0 (got 0)"},
    {"save.every < 0", BASE "save = { every = -0.1 }\n", "5:18", "[time.save] every must be > 0 (got -0.1)"},
    {"save.every giving too many save times", BASE "save = { every = 1e-9 }\n", "5:18", "gives more than 1000000 save times"},
    {"save time outside [t0, t1]", BASE "save = { times = [0.5, 1.5] }\n", "5:24",
     "[time.save] times[1] = 1.5 is outside [t0, t1] = [0, 1]"},
    {"save time before t0", BASE "save = { times = [-0.5] }\n", "5:19", "[time.save] times[0] = -0.5 is outside [t0, t1] = [0, 1]"},
    {"members = 0", BASE "[ensemble]\nmembers = 0\n", "6:11", "[ensemble] members must be >= 1 (got 0)"},
    {"members not integral", BASE "[ensemble]\nmembers = 2.5\n", "6:11", "[ensemble] members must be an integer (got 2.5)"},
    {"negative seed", BASE "[ensemble]\nseed = -1\n", "6:8", "[ensemble] seed must be >= 0 (got -1)"},
    {"replicates = 0", BASE "[ensemble]\nreplicates = 0\n", "6:14", "[ensemble] replicates must be between 1 and 2147483647 (got 0)"},
    {"unknown sampler", BASE "[ensemble]\nsampler = \"sobel\"\n", "6:11", "[ensemble] unknown sampler \"sobel\"; did you mean \"sobol\"?"},
    {"too many members", BASE "[ensemble]\nmembers = 9000000000000000000\nreplicates = 10\n[ensemble.vary]\n\"params.L2\" = { uniform = [0.7, 0.9] }\n",
     "6:11", "[ensemble] the study has 9e+19 members; at most 2^53 are supported"},
    {"too many identical members", BASE "[ensemble]\nmembers = 1000000000000000000\n", "6:11",
     "[ensemble] the study has 1e+18 members; at most 2^53 are supported"},
    {"too many replicates of identical members", BASE "[ensemble]\nmembers = 100000000\nreplicates = 1000000000\n", "7:14",
     "[ensemble] the study has 1e+17 members; at most 2^53 are supported"},
    {"members beyond 2^53 as a real number", BASE "[ensemble]\nmembers = 1e18\n", "6:11",
     "[ensemble] members must be an integer of magnitude at most 2^53 when written as a real number (got 1e+18)"},
    {"sampler grid with a uniform dimension",
     BASE "[ensemble]\nsampler = \"grid\"\n[ensemble.vary]\n\"params.L1\" = { grid = [1, 2] }\n\"initial.theta1\" = { uniform = [1.5, 2.5] }\n",
     "9:22", "sampler = \"grid\" needs every [ensemble.vary] entry to be a grid; \"initial.theta1\" is uniform"},
    {"vary key without params./initial. prefix", BASE "[ensemble.vary]\n\"theta1\" = { uniform = [1.5, 2.5] }\n", "6:1",
     "[ensemble.vary] \"theta1\" must be \"params.NAME\" or \"initial.NAME\"; did you mean \"initial.theta1\"?"},
    {"vary key with a misspelt prefix", BASE "[ensemble.vary]\n\"inital.theta1\" = { uniform = [1.5, 2.5] }\n", "6:1",
     "[ensemble.vary] \"inital.theta1\" must be \"params.NAME\" or \"initial.NAME\"; did you mean \"initial.theta1\"?"},
    {"vary of an unknown parameter", BASE "[ensemble.vary]\n\"params.L3\" = { uniform = [0.7, 0.9] }\n", "6:1",
     "[ensemble.vary] unknown parameter \"L3\" of model \"double_pendulum\"; did you mean \"L1\"?"},
    {"vary of an initial input of a model without inputs",
     "[model]\nname = \"car_axis\"\n[time]\nt1 = 1\n[ensemble.vary]\ninitial.x = { uniform = [0, 1] }\n", "6:9",
     "[ensemble.vary] model \"car_axis\" has no initial inputs (its initial state is fixed); remove \"initial.x\""},
    {"vary without a variable name", BASE "[ensemble.vary]\nparams = { uniform = [0.7, 0.9] }\n", "6:1",
     "[ensemble.vary] \"params\" needs the name of a parameter"},
    {"vary of one variable twice", BASE "[ensemble.vary]\n\"params.L2\" = { uniform = [0.7, 0.9] }\nparams.L2 = { grid = [1] }\n", "7:8",
     "[ensemble.vary] \"params.L2\" is varied twice"},
    {"vary entry not a table", BASE "[ensemble.vary]\n\"params.L2\" = [0.7, 0.9]\n", "6:15",
     "[ensemble.vary] \"params.L2\" must be a table such as { uniform = [lower, upper] } (got an array)"},
    {"vary entry without a distribution", BASE "[ensemble.vary]\n\"params.L2\" = {}\n", "6:15",
     "[ensemble.vary] \"params.L2\" needs one of uniform, normal, lognormal or grid"},
    {"vary entry with two distributions", BASE "[ensemble.vary]\n\"params.L2\" = { uniform = [0.7, 0.9], grid = [0.8] }\n", "6:39",
     "[ensemble.vary] \"params.L2\" gives both uniform and grid; give exactly one distribution"},
    {"empty grid", BASE "[ensemble.vary]\n\"params.L2\" = { grid = [] }\n", "6:24", "[ensemble.vary] \"params.L2\" grid is empty"},
    {"grid with a non-finite value", BASE "[ensemble.vary]\n\"params.L2\" = { grid = [1.0, -inf] }\n", "6:30",
     "[ensemble.vary] \"params.L2\" grid[1] must be a finite number (got -inf)"},
    {"normal std < 0", BASE "[ensemble.vary]\n\"params.L2\" = { normal = { mean = 0.8, std = -0.01 } }\n", "6:46",
     "[ensemble.vary.\"params.L2\".normal] std must be >= 0 (got -0.01)"},
    {"normal without std", BASE "[ensemble.vary]\n\"params.L2\" = { normal = { mean = 0.8 } }\n", "6:26",
     "[ensemble.vary] \"params.L2\" normal needs mean and std (std is missing)"},
    {"lognormal sigma < 0", BASE "[ensemble.vary]\n\"params.L2\" = { lognormal = { mu = 0.0, sigma = -1 } }\n", "6:49",
     "[ensemble.vary.\"params.L2\".lognormal] sigma must be >= 0 (got -1)"},
    {"uniform lower > upper", BASE "[ensemble.vary]\n\"params.L2\" = { uniform = [0.9, 0.7] }\n", "6:27",
     "[ensemble.vary] \"params.L2\" uniform lower bound 0.9 is above the upper bound 0.7"},
    {"uniform with 3 values", BASE "[ensemble.vary]\n\"params.L2\" = { uniform = [0.7, 0.8, 0.9] }\n", "6:27",
     "[ensemble.vary] \"params.L2\" uniform must be [lower, upper] (got 3 values)"},
    {"uniform bound of the wrong type", BASE "[ensemble.vary]\n\"params.L2\" = { uniform = [0.7, \"0.9\"] }\n", "6:33",
     "[ensemble.vary] \"params.L2\" uniform upper bound must be a number (got a string \"0.9\")"},
    {"unknown statistic", BASE "[output]\nstatistics = [\"mean\", \"stdev\"]\n", "6:23", "[output] unknown statistic \"stdev\"; did you mean \"std\"?"},
    {"median instead of q50", BASE "[output]\nstatistics = [\"median\"]\n", "6:15", "[output] unknown statistic \"median\"; write \"q50\" for the median"},
    {"quantile above 100 percent", BASE "[output]\nstatistics = [\"q150\"]\n", "6:15", "[output] quantile \"q150\" is out of range"},
    {"one quantile spelt twice", BASE "[output]\nstatistics = [\"q5\", \"q05\"]\n", "6:21", "[output] quantile \"q05\" is listed twice"},
    {"statistic listed twice", BASE "[output]\nstatistics = [\"mean\", \"mean\"]\n", "6:23", "[output] statistic \"mean\" is listed twice"},
    {"statistics not an array", BASE "[output]\nstatistics = \"mean\"\n", "6:14", "[output] statistics must be an array of names (got a string \"mean\")"},
    {"trajectories not a boolean", BASE "[output]\ntrajectories = \"yes\"\n", "6:16", "[output] trajectories must be true or false"},
    {"quantile_memory_mb = 0", BASE "[output]\nquantile_memory_mb = 0\n", "6:22", "[output] quantile_memory_mb must be >= 1 (got 0)"},
    // Keys that would have no effect in the study as written are refused, never ignored.
    {"members with a pure grid", BASE "[ensemble]\nmembers = 10\n[ensemble.vary]\n\"initial.theta1\" = { grid = [1.0, 2.0] }\n",
     "6:1", "[ensemble] members has no effect: every [ensemble.vary] entry is a grid"},
    {"replicates with a pure grid", BASE "[ensemble]\nreplicates = 2\n[ensemble.vary]\n\"params.L1\" = { grid = [1.0, 2.0] }\n",
     "6:1", "[ensemble] replicates has no effect: every [ensemble.vary] entry is a grid"},
    {"seed with a pure grid", BASE "[ensemble]\nsampler = \"grid\"\nseed = 4\n[ensemble.vary]\n\"params.L1\" = { grid = [1.0] }\n",
     "7:1", "[ensemble] seed has no effect: every [ensemble.vary] entry is a grid"},
    {"seed when nothing is varied", BASE "[ensemble]\nmembers = 8\nseed = 3\n", "7:1",
     "[ensemble] seed has no effect: [ensemble.vary] varies nothing"},
    {"sampler when nothing is varied", BASE "[ensemble]\nsampler = \"sobol\"\n", "6:1",
     "[ensemble] sampler has no effect: [ensemble.vary] varies nothing"},
    {"init_tolerance without strict initialization", BASE "[solver]\ninit_tolerance = 1e-8\n", "6:1",
     "[solver] init_tolerance applies to init = \"strict\" only"},
    {"newton_tol with a Radau IIA method", BASE "[solver]\nmethod = \"radau5\"\nnewton_tol = 0.05\n", "7:1",
     "[solver] newton_tol applies to methods \"bdf\" and \"rhoinf\" only (method is \"radau5\""},
    {"h_max with fixed steps", BASE "[solver]\nmethod = \"radau5\"\nfixed_h = 0.01\nh_max = 0.1\n", "8:1",
     "[solver] h_max has no effect with fixed_h"},
    {"quantile budget without a quantile", BASE "[output]\nstatistics = [\"mean\"]\nquantile_memory_mb = 10\n", "7:1",
     "[output] quantile_memory_mb has no effect: the study asks for no quantile (qNN) statistic"},
#define VARY_L1 "[ensemble.vary]\n\"params.L1\" = { uniform = [0.9, 1.1] }\n"
    {"sensitivity without varied inputs", BASE "[sensitivity]\nbase = 8\n", "5:1",
     "[sensitivity] needs varied inputs: [ensemble.vary] varies nothing"},
    {"sensitivity without base", BASE VARY_L1 "[sensitivity]\nsecond_order = true\n", "7:1",
     "[sensitivity] needs base, the rows N of Saltelli's design"},
    {"sensitivity base not a power of two", BASE VARY_L1 "[sensitivity]\nbase = 1000\n", "8:8",
     "[sensitivity] base must be a power of two between 2 and 2^52"},
    {"members beside sensitivity", BASE "[ensemble]\nmembers = 10\n" VARY_L1 "[sensitivity]\nbase = 8\n", "6:1",
     "[ensemble] members has no effect with [sensitivity]"},
    {"sampler beside sensitivity", BASE "[ensemble]\nsampler = \"sobol\"\n" VARY_L1 "[sensitivity]\nbase = 8\n", "6:1",
     "[ensemble] sampler has no effect with [sensitivity]"},
    {"a grid in a sensitivity study", BASE "[ensemble.vary]\n\"params.L1\" = { uniform = [0.9, 1.1] }\n"
     "\"params.L2\" = { grid = [1.0, 2.0] }\n[sensitivity]\nbase = 8\n", "8:1",
     "\"params.L2\" is a grid, which no index can be of"},
    {"bootstrap resamples with 10 replicates", BASE "[ensemble]\nreplicates = 10\n" VARY_L1 "[sensitivity]\nbase = 8\nresamples = 50\n",
     "11:1", "[sensitivity] resamples has no effect: with 10 replicates"},
    {"confidence of 1", BASE VARY_L1 "[sensitivity]\nbase = 8\nconfidence = 1.0\n", "9:14",
     "[sensitivity] confidence must be in (0, 1) (got 1)"},
    {"max_failed of 1", BASE VARY_L1 "[sensitivity]\nbase = 8\nmax_failed = 1\n", "9:14",
     "[sensitivity] max_failed must be in [0, 1) (got 1)"},
    {"derivative measures without varied inputs", BASE "[derivative_measures]\n", "5:1",
     "[derivative_measures] needs varied inputs: [ensemble.vary] varies nothing"},
    {"a grid in derivative measures", BASE "[ensemble.vary]\n\"params.L2\" = { grid = [1.0, 2.0] }\n[derivative_measures]\n",
     "7:1", "\"params.L2\" is a grid, which has none"},
    {"derivative measures beside sensitivity", BASE VARY_L1 "[sensitivity]\nbase = 8\n[derivative_measures]\n", "9:1",
     "[derivative_measures] averages over independent points of the inputs, which the rows of [sensitivity]'s design"},
    {"derivative measures of an explicit method", BASE "[solver]\nmethod = \"dopri5\"\n" VARY_L1 "[derivative_measures]\n",
     "9:1", "[derivative_measures] takes the forward sensitivities of [solver] method \"dopri5\""},
    {"derivative measures of auto", BASE "[solver]\nmethod = \"auto\"\n" VARY_L1 "[derivative_measures]\n",
     "9:1", "[derivative_measures] takes the forward sensitivities of [solver] method \"auto\""},
    {"derivative measures max_failed of 1", BASE VARY_L1 "[derivative_measures]\nmax_failed = 1\n", "8:14",
     "[derivative_measures] max_failed must be in [0, 1) (got 1)"},
    {"events for a model without event functions", BASE "[events]\nrecords = 4\n", "5:1",
     "[events] has no effect: model \"double_pendulum\" declares no event functions"},
#undef VARY_L1
};

#undef BASE

class StudyFileMalformed : public ::testing::TestWithParam<malformed_case> {};

TEST_P(StudyFileMalformed, GivesOneDiagnosticAtTheMistake) {
  // Arrange
  const malformed_case& c = GetParam();
  const std::string expected_prefix = std::string("bad.toml:") + c.location + ": error: ";

  // Act
  std::string diagnostic;
  int line = -1, column = -1;
  try {
    (void)parse_study(c.text, "bad.toml");
  } catch (const study_error& error) {
    diagnostic = error.what();
    line = error.line();
    column = error.column();
  } catch (const std::exception& other) {
    FAIL() << c.what << ": threw something other than study_error: " << other.what();
  }

  // Assert
  ASSERT_FALSE(diagnostic.empty()) << c.what << ": accepted";
  EXPECT_EQ(diagnostic.rfind(expected_prefix, 0), 0u) << c.what << ": " << diagnostic;
  EXPECT_NE(diagnostic.find(c.fragment), std::string::npos) << c.what << ": " << diagnostic;
  EXPECT_EQ(occurrences(diagnostic, "error:"), 1u) << diagnostic;
  EXPECT_EQ(std::to_string(line) + ":" + std::to_string(column), c.location) << c.what;
}

std::string case_name(const ::testing::TestParamInfo<malformed_case>& info) {
  std::string name;
  for (const char* p = info.param.what; *p; ++p)
    name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return std::to_string(info.index) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(StudyFile, StudyFileMalformed, ::testing::ValuesIn(malformed_cases), case_name);

TEST(StudyFile, MalformedCasesNumberAtLeastThirtyFive) {
  EXPECT_GE(std::size(malformed_cases), 35u);
}

// ---- files ------------------------------------------------------------------------------------------

TEST(StudyFile, MissingFileSaysCannotOpenWithoutAPosition) {
  // Arrange
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "lockstep-no-such-study.toml";
  std::filesystem::remove(path);

  // Act / Assert
  try {
    (void)load_study_file(path);
    FAIL() << "loaded a missing file";
  } catch (const study_error& error) {
    EXPECT_EQ(std::string(error.what()), path.string() + ": error: cannot open: No such file or directory");
    EXPECT_EQ(error.line(), 0);
  }
}

TEST(StudyFile, DirectoryIsRefusedAsAFile) {
  // Arrange
  const std::filesystem::path path = std::filesystem::temp_directory_path();

  // Act / Assert
  try {
    (void)load_study_file(path);
    FAIL() << "loaded a directory";
  } catch (const study_error& error) {
    EXPECT_NE(std::string(error.what()).find("error: cannot open: Is a directory"), std::string::npos) << error.what();
  }
}

TEST(StudyFile, LoadedFileKeepsItsPathStemAndText) {
  // Arrange
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lockstep-study-" + std::to_string(::getpid()) + ".toml");
  const std::string text = "[model]\nname = \"chain4\"\n[time]\nt1 = 3\n";
  std::ofstream(path) << text;

  // Act
  const study_spec spec = load_study_file(path);
  std::filesystem::remove(path);

  // Assert
  EXPECT_EQ(spec.path, path);
  EXPECT_EQ(spec.name, path.stem().string());
  EXPECT_EQ(spec.text, text);
  EXPECT_EQ(spec.model, "chain4");
}

TEST(StudyFile, DiagnosticsOfAFileNameItsPath) {
  // Arrange
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lockstep-bad-study-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << "[model]\nname = \"pendulum\"\n[time]\nt1 = 1\n[solver]\nrtol = -1\n";

  // Act
  std::string diagnostic;
  try {
    (void)load_study_file(path);
  } catch (const study_error& error) {
    diagnostic = error.what();
  }
  std::filesystem::remove(path);

  // Assert
  EXPECT_EQ(diagnostic, path.string() + ":6:8: error: [solver] rtol must be > 0 (got -1)");
}

// A model file in TOML, not a study: an equations file (docs/EQUATIONS.md) has a [coordinates] table, a
// mechanism file (docs/reference/mechanism-file.md) a [mechanism] table.
bool is_model_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("[coordinates]", 0) == 0 || line.rfind("[mechanism]", 0) == 0) return true;
  return false;
}

TEST(StudyFile, EveryExampleStudyLoads) {
  // Arrange
  const std::filesystem::path examples = std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> studies;
  if (std::filesystem::is_directory(examples))
    for (const auto& file : std::filesystem::recursive_directory_iterator(examples))
      if (file.is_regular_file() && file.path().extension() == ".toml" && !is_model_file(file.path()))
        studies.push_back(file.path());
  if (studies.empty()) GTEST_SKIP() << "no examples/*.toml yet";

  // Act / Assert: a study of a model file is read up to its [model] source, which must name a file
  // that exists; compiling it is for tests/model_files (which runs those studies end to end).
  struct model_file_study {};
  const model_file_resolver refuse_to_compile = [](const model_reference& reference) -> resolved_model {
    EXPECT_TRUE(std::filesystem::is_regular_file(reference.path)) << reference.path;
    throw model_file_study{};
  };
  for (const auto& study : studies) {
    try {
      const study_spec spec = load_study_file(study, refuse_to_compile);
      EXPECT_FALSE(spec.save_times.empty()) << study;
    } catch (const study_error& error) {
      ADD_FAILURE() << error.what();
    } catch (const model_file_study&) {
    }
  }
}

// ---- did you mean ----------------------------------------------------------------------------------

TEST(ClosestName, FindsTyposSwapsAndCaseDifferences) {
  // Arrange
  const std::string_view names[] = {"bdf", "radau5", "radau3", "euler", "rhoinf"};

  // Act / Assert
  EXPECT_EQ(closest_name("radua5", names), "radau5");  // a swap is one edit
  EXPECT_EQ(closest_name("Radau5", names), "radau5");  // case is not a difference
  EXPECT_EQ(closest_name("radau", names), "radau5");   // ties go to the earlier name
  EXPECT_EQ(closest_name("eulr", names), "euler");
}

TEST(ClosestName, SuggestsNothingForUnrelatedWords) {
  // Arrange
  const std::string_view names[] = {"m1", "m2", "L1", "L2", "g"};
  const std::string_view methods[] = {"bdf", "radau5"};

  // Act / Assert
  EXPECT_EQ(closest_name("x", names), "");  // one edit, but a complete replacement
  EXPECT_EQ(closest_name("rk4", methods), "");
  EXPECT_EQ(closest_name("runge_kutta", methods), "");
}


// [events] of a model with event functions (a model file's, here the pendulum's tables with two): its
// settings reach the solver options and the spec, and bad values are refused at the value.
resolved_model with_events(const model_reference&) {
  model_info info = info_of<models::pendulum>();
  info.name = "with_events";
  info.n_events = 2;
  return {info, "with_events"};
}

TEST(StudyFileEvents, SettingsReachTheOptionsAndBadValuesAreRefusedAtTheValue) {
  const std::string base = "[model]\nsource = \"with_events.hpp\"\n[time]\nt1 = 1.0\n[events]\n";
  const study_spec defaults = parse_study(base, "s.toml", with_events);
  EXPECT_EQ(defaults.events.records, 16);
  EXPECT_EQ(defaults.solver.event_time_tolerance, 0.0);
  EXPECT_EQ(defaults.solver.event_interior_checks, 0);
  EXPECT_EQ(defaults.events.quantiles, (std::vector<double>{0.05, 0.25, 0.5, 0.75, 0.95}));
  const study_spec given =
      parse_study(base + "records = 3\ntime_tolerance = 1e-9\ninterior_checks = 5\nquantiles = [0.1, 0.9]\n", "s.toml",
                  with_events);
  EXPECT_TRUE(given.events.written);
  EXPECT_EQ(given.events.records, 3);
  EXPECT_EQ(given.solver.event_time_tolerance, 1e-9);
  EXPECT_EQ(given.solver.event_interior_checks, 5);
  EXPECT_EQ(given.events.quantiles, (std::vector<double>{0.1, 0.9}));
  const std::pair<std::string, std::string> refused[] = {
      {"records = -1\n", "s.toml:6:11: error: [events] records must be between 0 and 1000000 (got -1)"},
      {"time_tolerance = -1.0\n", "s.toml:6:18: error: [events] time_tolerance must be >= 0 (got -1)"},
      {"interior_checks = 2000\n", "s.toml:6:19: error: [events] interior_checks must be between 0 and 1000 (got 2000)"},
      {"recrods = 3\n", "s.toml:6:1: error: unknown key \"recrods\" in [events]; did you mean \"records\"?"},
      {"quantiles = [0.5, 0.2]\n", "s.toml:6:19: error: [events] quantiles must increase (0.2 after 0.5)"},
      {"quantiles = [1.5]\n", "s.toml:6:14: error: [events] quantiles[0] must be in (0, 1) (got 1.5)"},
      {"quantiles = []\n", "s.toml:6:13: error: [events] quantiles must be a non-empty array"},
  };
  for (const auto& [text, message] : refused) {
    try {
      (void)parse_study(base + text, "s.toml", with_events);
      ADD_FAILURE() << text << ": accepted";
    } catch (const study_error& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, message.size()), message) << e.what();
    }
  }
}

}  // namespace
}  // namespace lockstep::io
