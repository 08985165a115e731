// The registry of built-in models: what front ends look up by name (model/registry.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

#include "lockstep/model/registry.hpp"
#include "model_test_support.hpp"

namespace lockstep::test {
namespace {

TEST(Registry, FindsDoublePendulumWithItsSizes) {
  const model_info* info = find_model("double_pendulum");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->name, "double_pendulum");
  EXPECT_EQ(info->n, 4);
  EXPECT_EQ(info->m, 2);
  EXPECT_EQ(info->k, 0);
}

TEST(Registry, UnknownNameGivesNullptr) {
  EXPECT_EQ(find_model("no_such_model"), nullptr);
  EXPECT_EQ(find_model(""), nullptr);
  EXPECT_EQ(find_model("chain"), nullptr);        // chains are registered by size
  EXPECT_EQ(find_model("double_pendulumx"), nullptr);
}

TEST(Registry, LookupWorksAtCompileTime) {
  static_assert(find_model("chain16") != nullptr && find_model("chain16")->n == 32);
  static_assert(find_model("knife_edge")->k == 1);
  static_assert(find_model("nope") == nullptr);
  SUCCEED();
}

TEST(Registry, ModelNamesAreUniqueAndChainNamesFollowTheirSize) {
  std::set<std::string_view> names;
  for (const model_info& info : builtin_model_table) EXPECT_TRUE(names.insert(info.name).second) << info.name;
  EXPECT_EQ(static_cast<int>(names.size()), builtin_models::size);
  EXPECT_STREQ(models::chain<2>::name, "chain2");
  EXPECT_STREQ(models::chain<4>::name, "chain4");
  EXPECT_STREQ(models::chain<8>::name, "chain8");
  EXPECT_STREQ(models::chain<16>::name, "chain16");
  EXPECT_STREQ(models::chain<16>::inputs[16].name, "theta_16");
}

TEST(Registry, VisitModelCallsTheNamedModelOnce) {
  int calls = 0, n = 0, m = 0;
  std::string name;
  const bool found = visit_model("chain8", [&]<class Model>() {
    ++calls;
    n = Model::n;
    m = Model::m;
    name = Model::name;
  });
  EXPECT_TRUE(found);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(name, "chain8");
  EXPECT_EQ(n, 16);
  EXPECT_EQ(m, 8);
}

TEST(Registry, VisitModelReturnsFalseForAnUnknownName) {
  int calls = 0;
  EXPECT_FALSE(visit_model("no_such_model", [&]<class Model>() { ++calls; }));
  EXPECT_EQ(calls, 0);
}

template <class Model>
class RegistryInfo : public ::testing::Test {};
TYPED_TEST_SUITE(RegistryInfo, all_models, model_names);

TYPED_TEST(RegistryInfo, MatchesTheModelsSizesAndTables) {
  using Model = TypeParam;
  const model_info* info = find_model(Model::name);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->name, std::string_view(Model::name));
  EXPECT_EQ(info->description, std::string_view(Model::description));
  EXPECT_FALSE(info->description.empty());
  EXPECT_EQ(info->n, Model::n);
  EXPECT_EQ(info->m, Model::m);
  EXPECT_EQ(info->k, Model::k);
  ASSERT_EQ(static_cast<int>(info->params.size()), Model::n_params);
  ASSERT_EQ(static_cast<int>(info->inputs.size()), Model::n_inputs);

  // Every entry is filled in (a table shorter than its declared size would leave null names) and
  // names are unique within parameters and within inputs.
  std::set<std::string> param_names, input_names;
  for (const named_value& v : info->params) {
    ASSERT_NE(v.name, nullptr);
    EXPECT_NE(v.description, nullptr);
    EXPECT_TRUE(std::isfinite(v.default_value)) << v.name;
    EXPECT_TRUE(param_names.insert(v.name).second) << "duplicate parameter " << v.name;
  }
  for (const named_value& v : info->inputs) {
    ASSERT_NE(v.name, nullptr);
    EXPECT_NE(v.description, nullptr);
    EXPECT_TRUE(input_names.insert(v.name).second) << "duplicate input " << v.name;
  }
  EXPECT_TRUE(lockstep_check_model<Model>());
}

// The sizes each model's description states.
TEST(Registry, BuiltInSizesMatchTheProblemFiles) {
  struct expected {
    const char* name;
    int n, m, k, n_params, n_inputs;
  };
  const expected table[] = {
      {"pendulum", 2, 1, 0, 3, 2},      {"double_pendulum", 4, 2, 0, 5, 4}, {"chain2", 4, 2, 0, 4, 3},
      {"chain4", 8, 4, 0, 4, 5},        {"chain8", 16, 8, 0, 4, 9},         {"chain16", 32, 16, 0, 4, 17},
      {"slider_crank", 9, 8, 0, 13, 2}, {"andrews", 7, 6, 0, 42, 0},        {"car_axis", 4, 2, 0, 7, 0},
      {"knife_edge", 3, 0, 1, 5, 5},    {"linear_oscillator", 3, 1, 0, 7, 4},
  };
  EXPECT_EQ(static_cast<int>(std::size(table)), builtin_models::size);
  for (const expected& e : table) {
    const model_info* info = find_model(e.name);
    ASSERT_NE(info, nullptr) << e.name;
    EXPECT_EQ(info->n, e.n) << e.name;
    EXPECT_EQ(info->m, e.m) << e.name;
    EXPECT_EQ(info->k, e.k) << e.name;
    EXPECT_EQ(static_cast<int>(info->params.size()), e.n_params) << e.name;
    EXPECT_EQ(static_cast<int>(info->inputs.size()), e.n_inputs) << e.name;
  }
}

}  // namespace
}  // namespace lockstep::test
