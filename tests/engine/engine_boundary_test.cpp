// The engine boundary: a model compiled into its own shared library and loaded by path through the C
// ABI (lockstep/engine/loader.hpp) gives bitwise the results of the same model compiled into the
// program; the loader refuses what is not an engine of this build, naming the library and the reason;
// an exception inside an engine comes back as an error, never across the C ABI; and the built-in
// engines are the registry's models.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "lockstep/engine/builtin.hpp"
#include "lockstep/engine/loader.hpp"
#include "lockstep/lockstep.hpp"
#include "tests/engine/cart_pendulum.hpp"

namespace {

using namespace lockstep;
using Model = tests::cart_pendulum;

ensemble_problem cart_ensemble(const engine& model, method_kind method, formulation form) {
  constexpr long members = 40;
  ensemble_problem e;
  e.members = members;
  e.t1 = 2.0;
  e.save_times = {0.5, 1.0, 2.0};
  e.options.method = method;
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-7;
  e.params.resize(members * model.n_params());
  e.q0.resize(members * model.n());
  e.v0.resize(members * model.n());
  for (long i = 0; i < members; ++i) {
    for (int j = 0; j < model.n_params(); ++j) e.params[i * model.n_params() + j] = model.params()[j].default_value;
    const double inputs[2] = {0.2 + 1.2 * static_cast<double>(i) / members, 0.05};
    model.initial_state(&e.params[i * model.n_params()], inputs, &e.q0[i * model.n()], &e.v0[i * model.n()]);
  }
  return e;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST(EngineBoundary, LoadedLibraryGivesBitwiseTheResultsOfTheSameModelCompiledIn) {
  // Arrange: the same model through its library and through the program's own table.
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const engine linked(model_engine<Model>());
  ASSERT_EQ(loaded.name(), "cart_pendulum");
  ASSERT_FALSE(loaded == linked) << "the library's table must be its own, not the program's";
  for (const auto& [method, form] : {std::pair{method_kind::radau5, formulation::index3},
                                     std::pair{method_kind::bdf, formulation::ggl},
                                     std::pair{method_kind::radau3, formulation::ggl}}) {
    for (const backend where : {backend::serial, backend::omp}) {
      run_options run;
      run.where = where;
      run.threads = 2;
      run.chunk_size = 7;
      // Act
      const ensemble_solution a = solve_ensemble(loaded, cart_ensemble(loaded, method, form), run);
      const ensemble_solution b = solve_ensemble(linked, cart_ensemble(linked, method, form), run);
      // Assert
      const std::string what = std::string(method_name(method)) + " on " + formulation_name(form) + ", " + backend_name(where);
      for (long i = 0; i < a.members; ++i) EXPECT_EQ(a.status[i], member_status::success) << what << ", member " << i;
      EXPECT_TRUE(same_bits(a.outputs, b.outputs)) << what;
      EXPECT_TRUE(same_bits(a.y_final, b.y_final)) << what;
      EXPECT_TRUE(same_bits(a.t_final, b.t_final)) << what;
      EXPECT_TRUE(same_bits(a.status, b.status)) << what;
      EXPECT_EQ(std::memcmp(a.counters.data(), b.counters.data(), a.counters.size() * sizeof(member_counters)), 0) << what;
    }
  }
}

TEST(EngineBoundary, TheTypedApiIsTheEngineOfTheModelCompiledIn) {
  // Arrange: solve_ensemble<Model> and the model-agnostic call on the model's own table.
  auto typed = ensemble<Model>::with_defaults(12);
  for (long i = 0; i < typed.members; ++i) {
    const double inputs[2] = {0.1 * static_cast<double>(i + 1), 0.0};
    typed.set_initial_inputs(i, inputs);
  }
  typed.t1 = 1.0;
  typed.save_times = {1.0};
  run_options run;
  // Act
  const ensemble_result<Model> r = solve_ensemble(typed, run);
  const ensemble_solution s = solve_ensemble(engine(model_engine<Model>()), typed, run);
  // Assert
  EXPECT_TRUE(same_bits(r.outputs, s.outputs));
  EXPECT_EQ(r.q(3, 0, 2), s.outputs[(3 * 1 + 0) * s.ny + 2]);
}

TEST(EngineBoundary, AnEngineOfSomeMethodsRunsThemAndRefusesTheOthersByName) {
  // Arrange: a table of the model, Radau IIA 5 and its QR Lyapunov tangents alone, as a model file's
  // engine for a Radau IIA 5 study with [lyapunov] is linked from its parts
  // (host/model_files/model_compiler.cpp).
  static const lockstep_engine table = [] {
    lockstep_engine t = engine_detail::model_table<Model>();
    engine_detail::add_one_member<Model>(t);
    engine_detail::add_method<Model, radau5_method>(t);
    engine_detail::add_lyapunov<Model, radau5_method>(t);
    return t;
  }();
  const engine some(&table);
  const engine all(model_engine<Model>());
  // Act
  const ensemble_solution radau5 = solve_ensemble(some, cart_ensemble(some, method_kind::radau5, formulation::index3), {});
  const ensemble_solution reference = solve_ensemble(all, cart_ensemble(all, method_kind::radau5, formulation::index3), {});
  // Assert: what it holds, it runs with the bits of the whole engine; what it lacks, it refuses by name.
  EXPECT_TRUE(some.has_method(method_kind::radau5));
  EXPECT_FALSE(some.has_method(method_kind::bdf));
  EXPECT_TRUE(some.has_lyapunov(method_kind::radau5, 0));
  EXPECT_FALSE(some.has_lyapunov(method_kind::radau5, 1));
  EXPECT_FALSE(some.has_sensitivities(method_kind::radau5));
  EXPECT_FALSE(some.has_split(method_kind::radau5));
  EXPECT_TRUE(all.has_method(method_kind::bdf) && all.has_lyapunov(method_kind::radau5, 0) &&
              all.has_lyapunov(method_kind::radau5, 1) && all.has_sensitivities(method_kind::radau5) &&
              all.has_split(method_kind::radau5));
  EXPECT_FALSE(all.has_split(method_kind::rhoinf));  // the rho_inf method has no split path
  EXPECT_TRUE(same_bits(radau5.outputs, reference.outputs));
  EXPECT_TRUE(same_bits(radau5.y_final, reference.y_final));
  try {
    solve_ensemble(some, cart_ensemble(some, method_kind::bdf, formulation::ggl), {});
    ADD_FAILURE() << "an engine without BDF ran BDF";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds no chunk functions for method bdf"), std::string::npos) << e.what();
  }
  const ensemble_problem e = cart_ensemble(some, method_kind::radau5, formulation::index3);
  lockstep_lyapunov_request request{};
  request.header = abi_header_for<lockstep_lyapunov_request>();
  request.exponents = 1;
  request.renormalize = 0.5;
  double exponent = 0.0, exponent_of_all = 1.0;
  lockstep_lyapunov_output out{};
  out.header = abi_header_for<lockstep_lyapunov_output>();
  out.exponents = &exponent;
  lockstep_lyapunov_output out_of_all = out;
  out_of_all.exponents = &exponent_of_all;
  some.lyapunov(e.params.data(), e.q0.data(), e.v0.data(), 0.0, 1.0, e.options, request, out);
  all.lyapunov(e.params.data(), e.q0.data(), e.v0.data(), 0.0, 1.0, e.options, request, out_of_all);
  EXPECT_TRUE(same_bits(std::vector<double>{exponent}, std::vector<double>{exponent_of_all}));
  EXPECT_EQ(out.exponent_count, 1);
  request.method = 1;  // the clone method: not in this engine
  request.separation = 1e-6;
  try {
    some.lyapunov(e.params.data(), e.q0.data(), e.v0.data(), 0.0, 1.0, e.options, request, out);
    ADD_FAILURE() << "an engine without the Lyapunov clone ran it";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("holds no Lyapunov clone for method radau5"), std::string::npos)
        << error.what();
  }
  // Each Lyapunov entry runs its own method and refuses a request for the other.
  lockstep_error error{};
  const lockstep_solver_options options = abi_options(e.options);
  EXPECT_EQ(table.methods[static_cast<int>(method_kind::radau5)].lyapunov(
                e.params.data(), e.q0.data(), e.v0.data(), 0.0, 1.0, &options, &request, &out, &error),
            LOCKSTEP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("this entry runs method 0 (qr)"), std::string::npos) << error.message;
}

TEST(EngineBoundary, AnEngineOfTheTablesAloneRefusesConsistentInitializationByName) {
  // Arrange: the model's part alone, as `lockstep describe` loads a model file.
  static const lockstep_engine table = engine_detail::model_table<Model>();
  const engine tables(&table);
  const ensemble_problem e = cart_ensemble(engine(model_engine<Model>()), method_kind::radau5, formulation::index3);
  lockstep_initial_values out{};
  out.header = abi_header_for<lockstep_initial_values>();
  // Act and assert
  try {
    tables.initialize(e.params.data(), 0.0, e.q0.data(), e.v0.data(), e.options, out);
    ADD_FAILURE() << "an engine of the tables alone initialized a member";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("initialize: this engine holds the model's tables alone"),
              std::string::npos)
        << error.what();
  }
}

TEST(EngineBoundary, LoadingOneLibraryTwiceGivesOneTable) {
  const engine first = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const engine second = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  EXPECT_TRUE(first == second);
}

TEST(EngineBoundary, LoaderRefusesAnotherAbiVersionNamingTheLibrary) {
  try {
    (void)load_engine_library(LOCKSTEP_TEST_ENGINE_WRONG_ABI);
    FAIL() << "a table of another ABI version was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(LOCKSTEP_TEST_ENGINE_WRONG_ABI), std::string::npos) << message;
    EXPECT_NE(message.find("ABI version " + std::to_string(LOCKSTEP_ENGINE_ABI_VERSION + 1)), std::string::npos) << message;
  }
}

TEST(EngineBoundary, LoaderRefusesALibraryWithoutTheEntryPoint) {
  try {
    (void)load_engine_library(LOCKSTEP_TEST_ENGINE_NO_ENTRY);
    FAIL() << "a library without " << LOCKSTEP_ENGINE_ENTRY_POINT << " was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("no entry point ") + LOCKSTEP_ENGINE_ENTRY_POINT), std::string::npos)
        << e.what();
  }
}

TEST(EngineBoundary, LoaderRefusesAMissingFileWithTheSystemsReason) {
  try {
    (void)load_engine_library("/nonexistent/libengine.so");
    FAIL() << "a missing library was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libengine.so"), std::string::npos) << e.what();
  }
}

TEST(EngineBoundary, AnExceptionInsideTheEngineComesBackAsAnErrorNamingTheModel) {
  // Arrange: a rod of length zero makes the model's initial_state throw inside the library.
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const double params[5] = {2.0, 1.0, 0.0, 10.0, 9.81};
  const double inputs[2] = {0.5, 0.0};
  double q0[3], v0[3];
  // Act, Assert
  try {
    loaded.initial_state(params, inputs, q0, v0);
    FAIL() << "the model's exception was lost";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cart_pendulum"), std::string::npos) << message;
    EXPECT_NE(message.find("the rod length L must be positive"), std::string::npos) << message;
  }
}

TEST(EngineBoundary, EngineRefusesOptionsTheMethodRefuses) {
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  solver_options bdf_on_index3;
  bdf_on_index3.method = method_kind::bdf;
  bdf_on_index3.form = formulation::index3;
  EXPECT_EQ(loaded.refusal(bdf_on_index3), std::string(check_method_options(bdf_on_index3)));
  EXPECT_FALSE(loaded.refusal(bdf_on_index3).empty());
  EXPECT_TRUE(loaded.refusal(solver_options{}).empty());
}

// The options cross as lockstep_solver_options and come back field for field: every field set to a value
// other than its default, the round trip compared with the options given.
TEST(EngineBoundary, SolverOptionsCrossAsTheirCStructFieldForField) {
  solver_options o;
  o.method = method_kind::rhoinf;
  o.form = formulation::projected_invariants;
  o.rtol = 1e-5;
  o.atol_q = 2e-5;
  o.atol_v = 3e-5;
  o.atol_lambda = 4e-5;
  o.h_initial = 1e-3;
  o.h_min = 1e-12;
  o.h_max = 0.5;
  o.max_steps = 1234;
  o.max_order = 3;
  o.fixed_h = 1e-2;
  o.fixed_order = 2;
  o.rho_inf = 0.25;
  o.newton_tol = 0.05;
  o.newton_max_iterations = 7;
  o.consistent_multipliers = false;
  o.multipliers = multiplier_convention::minimum_norm;
  o.init = init_mode::strict;
  o.metric = projection_metric::euclidean;
  o.init_tolerance = 1e-8;
  o.projection = projection_kind::post_stabilization;
  o.baumgarte_alpha = 3.0;
  o.baumgarte_beta = 4.0;
  const lockstep_solver_options c = abi_options(o);
  EXPECT_EQ(c.header.abi_version, LOCKSTEP_ENGINE_ABI_VERSION);
  EXPECT_EQ(c.header.struct_size, sizeof(lockstep_solver_options));
  const solver_options back = engine_detail::options_of(&c);
  EXPECT_EQ(back.method, o.method);
  EXPECT_EQ(back.form, o.form);
  EXPECT_EQ(back.rtol, o.rtol);
  EXPECT_EQ(back.atol_q, o.atol_q);
  EXPECT_EQ(back.atol_v, o.atol_v);
  EXPECT_EQ(back.atol_lambda, o.atol_lambda);
  EXPECT_EQ(back.h_initial, o.h_initial);
  EXPECT_EQ(back.h_min, o.h_min);
  EXPECT_EQ(back.h_max, o.h_max);
  EXPECT_EQ(back.max_steps, o.max_steps);
  EXPECT_EQ(back.max_order, o.max_order);
  EXPECT_EQ(back.fixed_h, o.fixed_h);
  EXPECT_EQ(back.fixed_order, o.fixed_order);
  EXPECT_EQ(back.rho_inf, o.rho_inf);
  EXPECT_EQ(back.newton_tol, o.newton_tol);
  EXPECT_EQ(back.newton_max_iterations, o.newton_max_iterations);
  EXPECT_EQ(back.consistent_multipliers, o.consistent_multipliers);
  EXPECT_EQ(back.multipliers, o.multipliers);
  EXPECT_EQ(back.init, o.init);
  EXPECT_EQ(back.metric, o.metric);
  EXPECT_EQ(back.init_tolerance, o.init_tolerance);
  EXPECT_EQ(back.projection, o.projection);
  EXPECT_EQ(back.baumgarte_alpha, o.baumgarte_alpha);
  EXPECT_EQ(back.baumgarte_beta, o.baumgarte_beta);
}

// An engine refuses options of another ABI and an enum value it does not know, naming the field, through
// the loaded library's table (the C functions a host of another build would call).
TEST(EngineBoundary, EngineRefusesSolverOptionsOfAnotherAbiOrWithAnUnknownValueNamingTheField) {
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const lockstep_engine& table = loaded.table();
  const auto refusal = [&](const lockstep_solver_options& c) {
    lockstep_error error{};
    const lockstep_result r = table.check_options(&c, &error);
    return std::make_pair(r, std::string(error.message));
  };
  EXPECT_EQ(refusal(abi_options(solver_options{})).first, LOCKSTEP_OK);
  lockstep_solver_options older = abi_options(solver_options{});
  older.header.abi_version = LOCKSTEP_ENGINE_ABI_VERSION - 1;
  auto [r, message] = refusal(older);
  EXPECT_EQ(r, LOCKSTEP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("the solver options struct comes from another engine ABI (version " +
                         std::to_string(LOCKSTEP_ENGINE_ABI_VERSION - 1)), std::string::npos) << message;
  lockstep_solver_options unknown = abi_options(solver_options{});
  unknown.formulation = 9;
  std::tie(r, message) = refusal(unknown);
  EXPECT_EQ(r, LOCKSTEP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("formulation = 9"), std::string::npos) << message;
  lockstep_solver_options flag = abi_options(solver_options{});
  flag.consistent_multipliers = 2;
  std::tie(r, message) = refusal(flag);
  EXPECT_EQ(r, LOCKSTEP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("consistent_multipliers = 2"), std::string::npos) << message;
}

TEST(EngineBoundary, ModelValuesAreTheModelsFunctionsAndTheirDerivatives) {
  // Arrange
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const double p[5] = {2.0, 1.0, 1.5, 10.0, 9.81};
  const double q[3] = {0.3, 0.9, -1.2}, v[3] = {0.1, -0.2, 0.4};
  double M[9], Q[3], phi[1], G[3], phi_t[1];
  lockstep_model_values out{};
  out.header = abi_header_for<lockstep_model_values>();
  out.mass = M;
  out.force = Q;
  out.constraint = phi;
  out.constraint_jacobian = G;
  out.constraint_rate = phi_t;
  // Act
  loaded.evaluate(p, 0.0, q, v, out);
  // Assert: by hand, Phi = ((x_b - x_c)^2 + y_b^2 - L^2) / 2, G = (-(x_b - x_c), x_b - x_c, y_b).
  EXPECT_EQ(M[0], 2.0);
  EXPECT_EQ(M[4], 1.0);
  EXPECT_EQ(M[1], 0.0);
  EXPECT_EQ(Q[0], -10.0 * 0.3);
  EXPECT_EQ(Q[2], -9.81);
  EXPECT_DOUBLE_EQ(phi[0], 0.5 * (0.6 * 0.6 + 1.44 - 2.25));
  EXPECT_DOUBLE_EQ(G[0], -0.6);
  EXPECT_DOUBLE_EQ(G[1], 0.6);
  EXPECT_DOUBLE_EQ(G[2], -1.2);
  EXPECT_EQ(phi_t[0], 0.0);
}

TEST(EngineBoundary, BuiltinEnginesAreTheRegistrysModelsInItsOrder) {
  const auto engines = builtin_engines();
  ASSERT_EQ(engines.size(), builtin_model_table.size());
  for (std::size_t i = 0; i < engines.size(); ++i) {
    const model_info& info = builtin_model_table[i];
    EXPECT_EQ(engines[i].name(), info.name);
    EXPECT_EQ(engines[i].n(), info.n);
    EXPECT_EQ(engines[i].m(), info.m);
    EXPECT_EQ(engines[i].k(), info.k);
    ASSERT_EQ(engines[i].params().size(), info.params.size());
    for (std::size_t j = 0; j < info.params.size(); ++j) {
      EXPECT_STREQ(engines[i].params()[j].name, info.params[j].name);
      EXPECT_EQ(engines[i].params()[j].default_value, info.params[j].default_value);
    }
    EXPECT_EQ(find_builtin_engine(info.name), &engines[i]);
  }
  EXPECT_EQ(find_builtin_engine("no_such_model"), nullptr);
}

TEST(EngineBoundary, AnEngineInLanesCountsEveryAttemptIterationAndFactorizationOfEveryMemberOnce) {
  // Arrange: 21 double pendulums (packs refilled, the last not full), BDF, chunks of 7 on two threads.
  const engine& model = *find_builtin_engine("double_pendulum");
  const int lanes = builtin_lanes("double_pendulum");
  ASSERT_TRUE(lanes == 0 || (model.table().lanes_work != nullptr && model.table().lanes_corrector_work != nullptr))
      << "an engine in lanes reports their work";
  constexpr long members = 21;
  ensemble_problem e;
  e.members = members;
  e.t1 = 1.0;
  e.options.method = method_kind::bdf;
  e.options.form = formulation::ggl;
  e.params.resize(members * model.n_params());
  e.q0.resize(members * model.n());
  e.v0.resize(members * model.n());
  std::vector<double> inputs;
  for (const lockstep_value_info& in : model.inputs()) inputs.push_back(in.default_value);
  for (long i = 0; i < members; ++i) {
    for (int j = 0; j < model.n_params(); ++j)
      e.params[i * model.n_params() + j] = model.params()[j].default_value * (1.0 + 0.01 * double(i) / members);
    model.initial_state(&e.params[i * model.n_params()], inputs.data(), &e.q0[i * model.n()], &e.v0[i * model.n()]);
  }
  run_options run;
  run.where = backend::omp;
  run.threads = 2;
  run.chunk_size = 7;
  // Act
  const lanes_work_counts before = model.lanes_work();
  const ensemble_solution s = solve_ensemble(model, e, run);
  const lanes_work_counts work = model.lanes_work() - before;
  // Assert: every step attempt (accepted or rejected) of every member is one lane-attempt of a member,
  // every Newton iteration and factorization of its corrector one lane's, and each pack executes every
  // lane; nothing is counted without lanes.
  long attempts = 0, iterations = 0, factorizations = 0;
  for (long i = 0; i < members; ++i) {
    ASSERT_EQ(s.status[i], member_status::success) << "member " << i;
    attempts += s.counters[i].steps + s.counters[i].rejected_steps;
    iterations += s.counters[i].newton_iterations;
    factorizations += s.counters[i].lu_factorizations;
  }
  const std::pair<const char*, lane_counts> kinds[] = {{"step attempts", work.attempts},
                                                       {"Newton iterations", work.newton_iterations},
                                                       {"LU factorizations", work.factorizations}};
  for (const auto& [kind, count] : kinds)
    std::printf("[ lanes ] double pendulum, %d lanes, %s: %llu of %llu in lanes were a member's\n", lanes, kind,
                static_cast<unsigned long long>(count.of_members), static_cast<unsigned long long>(count.executed));
  if (lanes == 0) {
    for (const auto& [kind, count] : kinds) {
      EXPECT_EQ(count.executed, 0u) << kind;
      EXPECT_EQ(count.of_members, 0u) << kind;
    }
    return;
  }
  EXPECT_EQ(work.attempts.of_members, std::uint64_t(attempts));
  EXPECT_EQ(work.newton_iterations.of_members, std::uint64_t(iterations));
  EXPECT_EQ(work.factorizations.of_members, std::uint64_t(factorizations));
  for (const auto& [kind, count] : kinds) {
    EXPECT_GT(count.of_members, 0u) << kind;
    EXPECT_EQ(count.executed % std::uint64_t(lanes), 0u) << kind;
    EXPECT_GE(count.executed, count.of_members) << kind;
    EXPECT_LE(count.executed, count.of_members * std::uint64_t(lanes)) << kind;
  }
  EXPECT_LT(work.attempts.executed, work.attempts.of_members * std::uint64_t(lanes));
}

}  // namespace

namespace {

TEST(EngineBoundary, SensitivitiesThroughTheLibraryAreBitwiseTheTemplateDrivers) {
  // Arrange: one member, one state direction (a nudge of the rod angle) and d/d(stiffness c).
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const double p[5] = {2.0, 1.0, 1.0, 10.0, 9.81};
  const double inputs[2] = {0.4, 0.1};
  vec<double, 3> q0, v0;
  Model::initial_state(p, inputs, q0, v0);
  solver_options opt;  // BDF on ggl
  phase_vector<Model> direction{};
  direction[1] = 1e-3;
  const int parameter = 3;
  lockstep_sensitivity_request request{};
  request.header = abi_header_for<lockstep_sensitivity_request>();
  request.state_directions = 1;
  request.directions = &direction[0];
  request.parameter_count = 1;
  request.parameters = &parameter;
  constexpr int ny = state_layout<Model>::size;
  double y_final[ny], sensitivities[2 * ny];
  member_counters counters;
  lockstep_sensitivity_output out{};
  out.header = abi_header_for<lockstep_sensitivity_output>();
  out.y_final = y_final;
  out.sensitivities = sensitivities;
  out.counters = &counters;

  // Act
  loaded.sensitivities(p, &q0[0], &v0[0], 0.0, 1.0, opt, request, out);
  const auto direct = solve_member_with_sensitivities<Model>(p, q0, v0, 0.0, 1.0, opt, {direction}, {parameter});

  // Assert
  ASSERT_EQ(out.status, static_cast<int>(member_status::success)) << out.message;
  EXPECT_EQ(out.status, static_cast<int>(direct.status));
  EXPECT_EQ(out.t_final, direct.t_final);
  EXPECT_EQ(std::memcmp(y_final, &direct.y_final[0], sizeof y_final), 0);
  ASSERT_EQ(direct.sensitivities.size(), 2u);
  for (int d = 0; d < 2; ++d)
    EXPECT_EQ(std::memcmp(sensitivities + d * ny, &direct.sensitivities[d][0], ny * sizeof(double)), 0) << "direction " << d;
  EXPECT_EQ(counters.steps, direct.counters.steps);
}

TEST(EngineBoundary, ConsistentInitializationThroughTheLibraryProjectsOntoTheConstraints) {
  // Arrange: a start off the rod's circle and with a velocity along the rod.
  const engine loaded = load_engine_library(LOCKSTEP_TEST_ENGINE_LIBRARY);
  const double p[5] = {2.0, 1.0, 1.0, 10.0, 9.81};
  const double q0[3] = {0.0, 0.5, -0.95}, v0[3] = {0.0, 0.3, 0.2};
  double q[3], v[3], a[3], lambda[1];
  member_counters counters;
  lockstep_initial_values out{};
  out.header = abi_header_for<lockstep_initial_values>();
  out.q = q;
  out.v = v;
  out.a = a;
  out.lambda = lambda;
  out.counters = &counters;
  // The start is 7 % off the rod, a correction init "auto" makes with a warning (below its gross
  // threshold, method/options.hpp); "project" asks for it outright.
  solver_options options;
  options.init = init_mode::project;
  // Act
  loaded.initialize(p, 0.0, q0, v0, options, out);
  // Assert: on the circle (x_b - x_c)^2 + y_b^2 = L^2 and tangent to it, after a correction it reports.
  ASSERT_EQ(out.status, static_cast<int>(member_status::success));
  const double dx = q[1] - q[0];
  EXPECT_NEAR(dx * dx + q[2] * q[2], 1.0, 1e-12);
  EXPECT_NEAR(dx * (v[1] - v[0]) + q[2] * v[2], 0.0, 1e-12);
  EXPECT_GT(counters.init_q_correction, 0.01);
}

}  // namespace
