// tests/model_files/model_doctor_test.cpp — the model doctor (`lockstep check`, host/model_files/
// model_doctor.hpp) in process, on models compiled into the test: a constraint whose gradient vanishes
// at the initial state is a defect, not a redundancy the solver handles; a mass matrix that is not
// positive definite is one defect, with initialization and the short solve reported as not run
// because of it. (Exactly redundant constraints, which are no defect, are checked end to end by
// model_files_test.py's doctor case.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/model_files/model_doctor.hpp"
#include "lockstep/engine/model_engine.hpp"
#include "lockstep/model/pendulum.hpp"
#include "tests/engine/cart_pendulum.hpp"

namespace lockstep::model_files {
namespace {

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
  const engine model(model_engine<bob_at_pivot>());

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
  const engine model(model_engine<massless_cart>());

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
