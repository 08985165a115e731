// tests/model_files/model_doctor_test.cpp — the model doctor (`lockstep check`, host/model_files/
// model_doctor.hpp) in process, on models compiled into the test: a constraint whose gradient vanishes
// at the initial state is a defect, not a redundancy the solver handles; a mass matrix that is not
// positive definite is one defect, with initialization and the short solve reported as not run
// because of it; a start on the constraints is ok, one corrected by more than the default tolerance a
// warning, one grossly off (init "auto" refuses it: method/options.hpp) a defect that says how to
// accept it. (Exactly redundant constraints, which are no defect, are checked end to end by
// model_files_test.py's doctor case.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/model_files/model_doctor.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/model_engine.hpp"
#include "lockstep/model/pendulum.hpp"
#include "tests/engine/cart_pendulum.hpp"

namespace lockstep::model_files {
namespace {

// The engine `lockstep check` compiles for a model file (engine_contents with Radau IIA 5): the model's
// tables, the one-member functions and Radau IIA 5, whose short solve the doctor runs; not the other
// methods, the split path and the tangents of model_engine, which would make this the largest unit of
// the sanitizer build for code the doctor never calls.
template <class Model>
const lockstep_engine* check_engine() {
  static_assert(lockstep_check_model<Model>());
  static const lockstep_engine table = [] {
    lockstep_engine t = engine_detail::model_table<Model>();
    engine_detail::add_one_member<Model>(t);
    engine_detail::add_method<Model, radau5_method>(t);
    return t;
  }();
  return &table;
}

// The built-in pendulum with a rod of length 0: the bob starts at the pivot, where
// Phi = (x^2 + y^2 - L^2) / 2 has the gradient G = q = 0.
struct bob_at_pivot : models::pendulum {
  static constexpr const char* name = "bob_at_pivot";
  static constexpr named_value params[n_params] = {{"m", 1.0, "kg"}, {"L", 0.0, "m"}, {"g", 9.81, "m/s^2"}};
};

// The engine tests' pendulum on a cart held by a spring, with a cart of mass 0: M = diag(0, mb, mb).
struct massless_cart : tests::cart_pendulum {
  static constexpr const char* name = "massless_cart";
  static constexpr named_value params[n_params] = {
      {"M", 0.0, "kg"}, {"mb", 1.0, "kg"}, {"L", 1.0, "m"}, {"c", 10.0, "N/m"}, {"g", 9.81, "m/s^2"}};
};

std::vector<doctor_finding> of_topic(const doctor_report& r, const std::string& topic) {
  std::vector<doctor_finding> found;
  for (const doctor_finding& f : r.findings)
    if (f.topic == topic) found.push_back(f);
  return found;
}

std::string listed(const doctor_report& r) {
  std::string text;
  for (const doctor_finding& f : r.findings)
    text += "  " + std::to_string(static_cast<int>(f.kind)) + " " + f.topic + " " + f.sentence + "\n";
  return text;
}

TEST(ModelDoctor, ConstraintWithoutGradientAtTheInitialStateIsADefectNotARedundancy) {
  // Arrange
  const engine model(check_engine<bob_at_pivot>());

  // Act
  const doctor_report report = examine_model(model);

  // Assert: the zero row is a defect that says why, never the "ok ... redundant" of a repeated constraint.
  const std::vector<doctor_finding> rank = of_topic(report, "rank");
  ASSERT_EQ(rank.size(), 1u) << listed(report);
  EXPECT_EQ(rank[0].kind, finding_kind::defect) << listed(report);
  EXPECT_NE(rank[0].sentence.find("constraint Phi[0] has no gradient at the initial state: its row of G = dPhi/dq is zero"),
            std::string::npos)
      << rank[0].sentence;
  EXPECT_EQ(rank[0].sentence.find("is redundant"), std::string::npos) << rank[0].sentence;
}

TEST(ModelDoctor, MassMatrixNotPositiveDefiniteIsOneDefectAndInitializationAndSolveAreNotRun) {
  // Arrange
  const engine model(check_engine<massless_cart>());

  // Act
  const doctor_report report = examine_model(model);

  // Assert: one defect, M's, found first; initialization and the solve say they did not run because of it.
  EXPECT_EQ(report.defects(), 1) << listed(report);
  ASSERT_GE(report.findings.size(), 2u) << listed(report);
  EXPECT_EQ(report.findings[1].topic, "mass") << listed(report);
  EXPECT_TRUE(report.findings[1].defect()) << listed(report);
  EXPECT_NE(report.findings[1].sentence.find("not positive definite"), std::string::npos) << listed(report);
  for (const char* topic : {"initial", "solve"}) {
    const std::vector<doctor_finding> found = of_topic(report, topic);
    ASSERT_EQ(found.size(), 1u) << topic << "\n" << listed(report);
    EXPECT_EQ(found[0].kind, finding_kind::not_run) << listed(report);
    EXPECT_NE(found[0].sentence.find("not run"), std::string::npos) << found[0].sentence;
    EXPECT_NE(found[0].sentence.find("M positive definite"), std::string::npos) << found[0].sentence;
    EXPECT_EQ(found[0].sentence.find("cannot be projected"), std::string::npos) << found[0].sentence;
  }
  // The checks that need no M still run, at the initial state as given.
  ASSERT_EQ(of_topic(report, "rank").size(), 1u) << listed(report);
  EXPECT_EQ(of_topic(report, "rank")[0].kind, finding_kind::ok) << listed(report);
}

}  // namespace
}  // namespace lockstep::model_files

namespace lockstep::model_files {
namespace {

// The initial state's correction: the cart pendulum of the engine tests with its default start moved
// off the rod, along it, by a set length.

// How far beyond the rod's end the default start puts the bob [m]. A variable rather than a parameter:
// the doctor examines the default start, and one engine serves every test.
double bob_beyond_rod = 0.0;

struct cart_pendulum_off_its_rod : tests::cart_pendulum {
  static constexpr const char* name = "cart_pendulum_off_its_rod";
  static constexpr const char* description = "the engine tests' cart pendulum, its bob started beyond the rod";
  using cart_pendulum::constraint;
  using cart_pendulum::force;
  using cart_pendulum::mass;
  static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    cart_pendulum::initial_state(p, in, q0, v0);
    const double stretch = 1.0 + bob_beyond_rod / p[2];
    q0[1] = q0[0] + (q0[1] - q0[0]) * stretch;
    q0[2] *= stretch;
  }
};

// The doctor's "initial" finding with the bob `beyond` the rod's end, and the report's counts.
struct initial_finding {
  doctor_finding finding;
  int defects = 0, warnings = 0;
};

initial_finding examine_with_bob_beyond_rod(double beyond) {
  bob_beyond_rod = beyond;
  const doctor_report report = examine_model(engine(check_engine<cart_pendulum_off_its_rod>()));
  initial_finding out;
  for (const doctor_finding& f : report.findings)
    if (f.topic == "initial") out.finding = f;
  out.defects = report.defects();
  out.warnings = report.warnings();
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ModelDoctor, FindsAStartOnTheConstraintsOk) {
  // Act
  const initial_finding r = examine_with_bob_beyond_rod(0.0);

  // Assert
  EXPECT_FALSE(r.finding.defect()) << r.finding.sentence;
  EXPECT_NE(r.finding.kind, finding_kind::warning) << r.finding.sentence;
  EXPECT_EQ(r.defects, 0);
  EXPECT_EQ(r.warnings, 0);
}

TEST(ModelDoctor, WarnsOfAStartCorrectedBeyondTheDefaultTolerance) {
  // Act: 1 mm off a 1 m rod, beyond atol + rtol |q0| = 2e-6 and below 10 % of the configuration
  const initial_finding r = examine_with_bob_beyond_rod(1e-3);

  // Assert: a warning, not a defect, that names the tolerance
  EXPECT_FALSE(r.finding.defect()) << r.finding.sentence;
  EXPECT_EQ(r.finding.kind, finding_kind::warning) << r.finding.sentence;
  EXPECT_TRUE(contains(r.finding.sentence, "corrected by more than the default tolerance (atol + rtol |x0| with rtol = "
                                           "atol = 1e-6) in q"))
      << r.finding.sentence;
  EXPECT_EQ(r.defects, 0);
  EXPECT_EQ(r.warnings, 1);
}

TEST(ModelDoctor, FindsAStartGrosslyOffTheConstraintsADefectAndSaysHowToAcceptIt) {
  // Act: 0.34 m off a 1 m rod
  const initial_finding r = examine_with_bob_beyond_rod(0.34);

  // Assert
  EXPECT_TRUE(r.finding.defect()) << r.finding.sentence;
  EXPECT_TRUE(contains(r.finding.sentence, "the default initial positions are off the constraints by ")) << r.finding.sentence;
  EXPECT_TRUE(contains(r.finding.sentence, "more than 10 % of the configuration's size")) << r.finding.sentence;
  EXPECT_TRUE(contains(r.finding.sentence, "unless it sets init = \"project\"")) << r.finding.sentence;
  EXPECT_EQ(r.defects, 1);
}

}  // namespace
}  // namespace lockstep::model_files
