// tests/method/method_orders_test.cpp — every order in docs/METHODS.md, recomputed and asserted.
//
// One test per row of lockstep::orders::order_table() (tests/support/method_orders.hpp, the code that
// bench/method_orders.cpp writes the document with): the fixed-step runs succeed, their errors lie
// above round-off, and the fitted orders of q, v, lambda (pendulum) and q (knife edge) are within 0.3
// of the asserted orders — the proved ones, or, where the document's notes A and B explain why, the
// justified ones (index3 followed by a projection, where the size of the projections' velocity
// corrections, the cause given, is asserted too). Nothing is read from the .md.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "../support/method_orders.hpp"

namespace {

using namespace lockstep;
using namespace lockstep::orders;

const std::vector<order_row>& rows() {
  static const std::vector<order_row> table = order_table();
  return table;
}

class MethodOrders : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MethodOrders, MeasuredOrdersAreWithinThreeTenthsOfTheAssertedOnes) {
  const order_row& row = rows()[GetParam()];
  const row_measurement m = measure_row(row);
  ASSERT_TRUE(m.all_succeeded) << row.name() << ": " << m.failure;
  // Above round-off: the fits use errors of at least 1e3 ulps of O(1) quantities.
  const double floor = 1e3 * std::numeric_limits<double>::epsilon();
  for (double e : m.err_q) EXPECT_GT(e, floor) << row.name() << " q";
  for (double e : m.err_v) EXPECT_GT(e, floor) << row.name() << " v";
  for (double e : m.err_lambda) EXPECT_GT(e, floor) << row.name() << " lambda";
  for (double e : m.knife_err_q) EXPECT_GT(e, floor) << row.name() << " knife q";
  std::printf("[ measured ] %s: q %.2f  v %.2f  lambda %.2f  knife q %.2f (asserted %g %g %g / %g)\n", row.name().c_str(),
              m.q, m.v, m.lambda, m.knife_q, row.expected.q, row.expected.v, row.expected.lambda, row.expected.knife_q);
  EXPECT_NEAR(m.q, row.expected.q, 0.3) << row.name() << " q";
  EXPECT_NEAR(m.v, row.expected.v, 0.3) << row.name() << " v";
  EXPECT_NEAR(m.lambda, row.expected.lambda, 0.3) << row.name() << " lambda";
  EXPECT_NEAR(m.knife_q, row.expected.knife_q, 0.3) << row.name() << " knife q";
  // The cause docs/METHODS.md gives for the index3 + projection orders: each projection moves v by the
  // velocity-constraint residual, O(h^pv).
  if (std::isfinite(row.projection_v)) {
    for (double e : m.projection_v) EXPECT_GT(e, floor) << row.name() << " projection";
    EXPECT_NEAR(m.projection_v_order, row.projection_v, 0.3) << row.name() << " velocity correction";
  }
}

std::string row_test_name(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string s = rows()[info.param].name();
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Table, MethodOrders, ::testing::Range<std::size_t>(0, rows().size()), row_test_name);

// The table covers every method, formulation and projection the library has, in every combination
// check_method_options accepts with fixed steps, and leaves out exactly the refused ones.
TEST(MethodOrdersTable, CoversEveryAcceptedCombinationAndNoRefusedOne) {
  std::set<std::tuple<int, int, int>> covered;
  for (const order_row& row : rows()) {
    solver_options opt = row.options();
    opt.fixed_h = 0.01;
    EXPECT_STREQ(check_method_options(opt), "") << row.name();
    covered.insert({static_cast<int>(row.method.kind), static_cast<int>(row.form), static_cast<int>(row.projection)});
  }
  for (method_kind k : {method_kind::bdf, method_kind::radau5, method_kind::radau3, method_kind::euler, method_kind::rhoinf})
    for (formulation f : formulations())
      for (projection_kind p : projections())
        EXPECT_TRUE(covered.count({static_cast<int>(k), static_cast<int>(f), static_cast<int>(p)}))
            << method_name(k) << " / " << formulation_name(f) << " / " << projection_name(p);
  // The explicit pairs run on index1 alone, with every projection.
  for (method_kind k : {method_kind::dopri5, method_kind::tsit5})
    for (formulation f : formulations())
      for (projection_kind p : projections())
        EXPECT_EQ(covered.count({static_cast<int>(k), static_cast<int>(f), static_cast<int>(p)}),
                  f == formulation::index1 ? 1u : 0u)
            << method_name(k) << " / " << formulation_name(f) << " / " << projection_name(p);
  // The implicit variants: 12 x 4 formulations x 3 projections, less rho_inf = 1 on index3 (3), the only
  // fixed-step refusal among them; each explicit pair: index1 x 3 projections.
  EXPECT_EQ(rows().size(), (method_variants().size() - 2) * 12 - 3 + 2 * 3);
}

}  // namespace
