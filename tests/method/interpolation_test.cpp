// The Newton-form history of BDF (method/newton_form_generic.inc, method/bdf_history_generic.inc):
// prepend_node forms the divided-difference table's top row from the row over the older nodes, and BDF
// keeps its history as that row. The claim in both texts is "bitwise the table over the stored points",
// so these tests compare bit patterns (memcmp), never with a tolerance: against divided_differences over
// the same nodes, and, for a whole BDF run of Andrews' squeezer, against the table over every accepted
// point the run produced (recorded outside the method, through the window shifts and the confluent
// initial node leaving it).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "lockstep/method/bdf.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/method/initialize.hpp"

namespace lockstep::test {
namespace {

constexpr int ny = 5;
using vec_t = vec<double, ny>;

bool same_bits(const vec_t& a, const vec_t& b) { return std::memcmp(&a, &b, sizeof(vec_t)) == 0; }

// Decreasing nodes (newest first) with uneven gaps, values of unit size: a generic table.
struct random_history {
  std::vector<double> x;
  std::vector<vec_t> y;
  vec_t derivative;
};

random_history make_history(std::mt19937_64& rng, int count, bool confluent_last) {
  std::uniform_real_distribution<double> gap(0.01, 0.5), value(-2.0, 2.0);
  random_history h;
  double t = 3.0;
  for (int j = 0; j < count; ++j) {
    h.x.push_back(t);
    vec_t y;
    for (int i = 0; i < ny; ++i) y[i] = value(rng);
    h.y.push_back(y);
    t -= gap(rng);
  }
  if (confluent_last && count >= 2) h.x[count - 1] = h.x[count - 2];
  for (int i = 0; i < ny; ++i) h.derivative[i] = value(rng);
  return h;
}

TEST(PrependNode, IsBitwiseTheDividedDifferenceTableOverAllNodes) {
  std::mt19937_64 rng(20261122);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (int count = 1; count <= 8; ++count) {
      for (const bool confluent : {false, true}) {
        if (confluent && count < 2) continue;
        const random_history h = make_history(rng, count, confluent);
        std::vector<vec_t> full = h.y;
        divided_differences(count, h.x.data(), full.data(), confluent, h.derivative);
        // The row over x[1 ..]: a table of its own (its last node is the confluent one, if any).
        std::vector<vec_t> older(h.y.begin() + 1, h.y.end());
        const bool older_confluent = confluent && count - 1 >= 2;
        divided_differences(count - 1, h.x.data() + 1, older.data(), older_confluent, h.derivative);
        const bool confluent_next = confluent && count == 2;  // x[1] is the copy of x[0]
        std::vector<vec_t> dd(count);
        detail::prepend_node(0, count, count, h.x.data(), h.y[0], older.data(), confluent_next, h.derivative, dd.data());
        for (int j = 0; j < count; ++j) {
          EXPECT_TRUE(same_bits(dd[j], full[j])) << "count " << count << " level " << j << " confluent " << confluent;
          ++compared;
        }
        // The same row formed in two pieces (levels [0, 2) then [2, count)), as bdf_attempt extends it.
        std::vector<vec_t> two(count);
        const int split = count < 2 ? count : 2;
        detail::prepend_node(0, split, count, h.x.data(), h.y[0], older.data(), confluent_next, h.derivative,
                             two.data());
        detail::prepend_node(split, count, count, h.x.data(), h.y[0], older.data(), confluent_next, h.derivative,
                             two.data());
        for (int j = 0; j < count; ++j) EXPECT_TRUE(same_bits(two[j], full[j])) << "count " << count << " level " << j;
      }
    }
  }
  EXPECT_EQ(compared, 200 * (36 + 35));  // every level: counts 1..8 plain, 2..8 confluent
}

TEST(PrependNode, WritesOnlyTheRequestedComponents) {
  std::mt19937_64 rng(7);
  const random_history h = make_history(rng, 4, false);
  std::vector<vec_t> older(h.y.begin() + 1, h.y.end());
  divided_differences(3, h.x.data() + 1, older.data(), false, h.derivative);
  std::vector<vec_t> full = h.y;
  divided_differences(4, h.x.data(), full.data(), false, h.derivative);
  std::vector<vec_t> dd(4);
  for (auto& v : dd)
    for (int i = 0; i < ny; ++i) v[i] = 12345.0;  // sentinel
  detail::prepend_node(0, 4, 4, h.x.data(), h.y[0], older.data(), false, h.derivative, dd.data(), 1, 3);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < ny; ++i) {
      if (i >= 1 && i < 3) {
        EXPECT_EQ(std::memcmp(&dd[j][i], &full[j][i], sizeof(double)), 0) << j << ", " << i;
      } else {
        EXPECT_EQ(dd[j][i], 12345.0) << j << ", " << i;
      }
    }
}

// BDF's history after every accepted step of a whole run is the divided-difference table over the
// newest accepted points (with the confluent node at t0 while t0 is in the window of six points),
// recorded here from the outside: the incremental update, the window shift and the confluent node
// leaving are all checked, at every order the run visits.
TEST(BdfHistory, IsBitwiseTheTableOverTheAcceptedPointsThroughoutARun) {
  using Model = models::andrews;
  using sv = state_vector<Model>;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  static_assert(Model::n_inputs == 0, "andrews starts from its published state");
  vec<double, Model::n> q0, v0;
  Model::initial_state(p, nullptr, q0, v0);
  solver_options opt;
  opt.form = formulation::ggl;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-6;
  initial_values<Model> init;
  member_counters counters;
  ASSERT_EQ(consistent_initialization<Model>(0.0, q0, v0, p, opt, init, counters), member_status::success);
  bdf_state<Model> s;
  bdf_start(s, 0.0, 0.03, init, opt);
  const sv yp0 = s.yp0;
  std::vector<double> times{0.0};
  std::vector<sv> points{s.y_newest};
  member_status status = member_status::running;
  int accepted = 0, max_order_seen = 0, checked_levels = 0;
  bool saw_confluent_leave = false;
  for (int attempt = 0; attempt < 5000 && s.t < 0.03; ++attempt) {
    const bool had_confluent = s.initial_derivative;
    const attempt_result r = bdf_attempt<Model>(s, 0.03, p, opt, counters, status);
    ASSERT_NE(r, attempt_result::failed) << status_name(status);
    if (r != attempt_result::accepted) continue;
    ++accepted;
    saw_confluent_leave = saw_confluent_leave || (had_confluent && !s.initial_derivative);
    if (s.last_order > max_order_seen) max_order_seen = s.last_order;
    times.insert(times.begin(), s.t);
    points.insert(points.begin(), s.y_newest);
    // The independent table over the window: the newest past_count points, then t0 again.
    const int count = s.past_count + (s.initial_derivative ? 1 : 0);
    std::vector<double> x(count);
    std::vector<sv> full(count);
    for (int j = 0; j < count; ++j) {
      const int src = j < s.past_count ? j : s.past_count - 1;
      x[j] = times[src];
      full[j] = points[src];
    }
    divided_differences(count, x.data(), full.data(), s.initial_derivative, yp0);
    double xs[bdf_state<Model>::max_past + 2];
    sv dd[bdf_state<Model>::max_past + 2];
    detail::past_newton_form(s, 0, count, xs, dd);
    for (int j = 0; j < count; ++j) {
      ASSERT_EQ(xs[j], x[j]) << "step " << accepted << " node " << j;
      ASSERT_EQ(std::memcmp(&dd[j], &full[j], sizeof(sv)), 0) << "step " << accepted << " level " << j;
      ++checked_levels;
    }
  }
  ASSERT_EQ(s.t, 0.03);
  // The run must have exercised what the test is about: high orders, a full window, t0 leaving it.
  EXPECT_GE(max_order_seen, 4);
  EXPECT_TRUE(saw_confluent_leave);
  EXPECT_GT(accepted, 100);
  EXPECT_GT(checked_levels, 5 * accepted);
}

}  // namespace
}  // namespace lockstep::test
