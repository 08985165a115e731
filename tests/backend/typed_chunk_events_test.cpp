// The typed chunk path's events (lockstep/chunks/typed_chunks.hpp: empty_result, gather_results), which
// the CUDA backend's executor runs (kernels/cuda/ensemble_cuda_impl.cuh): the member functors over
// chunks with a pause every few attempts, as the device launches them, the event records in the
// chunk's SoA storage, then gathered. Every member's counts, first times, records made, stopping
// event, kept records, status and final state equal the single-member driver's bit for bit, with a
// capacity that keeps fewer records than some members make, and with none kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/model/pendulum.hpp"
#include "lockstep/stepper/solve_member.hpp"

namespace {

using namespace lockstep;

// The pendulum with three events: the bob crossing x = 0 (recorded), the same crossing counted, and a
// stop at t = 2.5 L (rising), which ends the members whose rod is shorter than t1 / 2.5.
struct pendulum_with_events final : models::pendulum {
  static constexpr const char* name = "pendulum_with_events";
  static constexpr int n_events = 3;
  static constexpr event_declaration events[n_events] = {
      {"x_recorded", event_direction::both, event_action::record, "x, recorded"},
      {"x_counted", event_direction::falling, event_action::count, "x falling, counted"},
      {"late", event_direction::rising, event_action::stop, "t - 2.5 L"}};
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T& t, const vec<T, n>& q, const vec<T, n>&, const P* p) {
    vec<T, n_events> g;
    g[0] = q[0];
    g[1] = q[0];
    g[2] = t - T(2.5 * p[1]);
    return g;
  }
};
using Model = pendulum_with_events;
constexpr int ny = state_layout<Model>::size;
constexpr int E = Model::n_events;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The typed chunk path on the host: begin, then advance with `attempts` attempts per launch until
// every member of the chunk has finished, members taken in reverse order (a device's threads take
// them in any), then gather_results.
template <class Method>
ensemble_result<Model> solve_typed_chunks(const ensemble<Model>& e, long chunk, int attempts) {
  run_options ro;
  ro.keep_outputs = true;
  constexpr int words = soa_image<member_state<Model, Method>>::words;
  const int save_count = static_cast<int>(e.save_times.size());
  std::vector<std::uint64_t> states(static_cast<std::size_t>(words) * chunk);
  std::vector<double> params(static_cast<std::size_t>(Model::n_params) * chunk), q0(Model::n * chunk),
      v0(Model::n * chunk), outputs(static_cast<std::size_t>(save_count) * ny * chunk),
      records(static_cast<std::size_t>(e.event_capacity) * (2 + ny) * chunk), member_outputs, member_records;
  std::vector<unsigned char> finished(chunk);
  ensemble_result<Model> r = detail::empty_result(e, ro);
  for (long first = 0; first < e.members; first += chunk) {
    const long count = std::min(chunk, e.members - first);
    detail::scatter_inputs(e, first, count, chunk, params.data(), q0.data(), v0.data());
    std::fill(outputs.begin(), outputs.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(records.begin(), records.end(), std::numeric_limits<double>::quiet_NaN());
    std::fill(finished.begin(), finished.end(), 0);
    chunk_view<Model> view = detail::chunk_view_of(e, chunk, states.data(), params.data(), q0.data(), v0.data(),
                                                   outputs.data(), finished.data(), e.save_times.data());
    view.event_records = e.event_capacity > 0 ? records.data() : nullptr;
    view.event_capacity = e.event_capacity;
    const begin_member<Model, Method> begin{view};
    const advance_member<Model, Method> advance{view, attempts};
    for (long i = count - 1; i >= 0; --i) begin(i);
    for (bool running = true; running;) {
      running = false;
      for (long i = count - 1; i >= 0; --i)
        if (finished[i] == 0) {
          advance(i);
          running = running || finished[i] == 0;
        }
    }
    detail::gather_results<Model, Method>(e, ro, first, count, chunk, states.data(), outputs.data(), member_outputs, r,
                                          e.event_capacity > 0 ? records.data() : nullptr, member_records);
  }
  return r;
}

// 11 members with rods from 0.8 to 1.3 (those under 1.2 stop at t = 2.5 L < t1 = 3), released at
// angles from 0.4 to 1.4.
ensemble<Model> spread(method_kind method, formulation form, int capacity) {
  auto e = ensemble<Model>::with_defaults(11);
  for (long i = 0; i < e.members; ++i) {
    e.params_of(i)[1] = 0.8 + 0.05 * static_cast<double>(i);
    const double inputs[2] = {0.4 + 0.1 * static_cast<double>(i), 0.0};
    e.set_initial_inputs(i, inputs);
  }
  e.t1 = 3.0;
  e.save_times = {1.0, 2.0, 3.0};
  e.options.method = method;
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-8;
  e.event_capacity = capacity;
  return e;
}

template <class Method>
void expect_typed_chunks_equal_single_members(method_kind method, formulation form, int capacity) {
  const ensemble<Model> e = spread(method, form, capacity);
  const ensemble_result<Model> r = solve_typed_chunks<Method>(e, 4, 3);
  ASSERT_EQ(r.n_events, E);
  ASSERT_EQ(r.event_capacity, capacity);
  long stopped = 0, beyond_capacity = 0;
  for (long i = 0; i < e.members; ++i) {
    SCOPED_TRACE("member " + std::to_string(i));
    vec<double, Model::n> q0, v0;
    for (int j = 0; j < Model::n; ++j) {
      q0[j] = e.q0[i * Model::n + j];
      v0[j] = e.v0[i * Model::n + j];
    }
    const member_result<Model> one = solve_member<Model>(e.params_of(i), q0, v0, e.t0, e.t1, e.options, e.save_times);
    ASSERT_EQ(r.status[i], one.status);
    EXPECT_TRUE(same_bits(r.t_final[i], one.t_final));
    for (int j = 0; j < ny; ++j) EXPECT_TRUE(same_bits(r.y_final[i * ny + j], one.y_final[j])) << "y_final " << j;
    for (int k = 0; k < E; ++k) {
      EXPECT_EQ(r.event_counts[i * E + k], one.event_counts[k]) << "event " << k;
      EXPECT_TRUE(same_bits(r.event_first_times[i * E + k], one.event_first_times[k])) << "event " << k;
    }
    EXPECT_EQ(r.stop_event[i], one.stop_event);
    ASSERT_EQ(r.event_records_made[i], static_cast<long>(one.events.size()));
    stopped += one.stop_event >= 0;
    beyond_capacity += r.event_records_made[i] > capacity;
    // The first `capacity` records as (t, k, y), NaN past the member's records.
    for (int rec = 0; rec < capacity; ++rec) {
      const double* kept = r.event_records.data() + (static_cast<std::size_t>(i) * capacity + rec) * (2 + ny);
      if (rec < r.event_records_made[i]) {
        EXPECT_TRUE(same_bits(kept[0], one.events[rec].t)) << "record " << rec;
        EXPECT_EQ(kept[1], static_cast<double>(one.events[rec].event)) << "record " << rec;
        for (int j = 0; j < ny; ++j) EXPECT_TRUE(same_bits(kept[2 + j], one.events[rec].y[j])) << "record " << rec;
      } else {
        for (int j = 0; j < 2 + ny; ++j) EXPECT_TRUE(std::isnan(kept[j])) << "record " << rec;
      }
    }
  }
  // The spread makes the cases the test is for: members that stop and members that do not, and
  // members with more records than the capacity keeps (where it keeps any).
  EXPECT_GT(stopped, 0);
  EXPECT_LT(stopped, e.members);
  if (capacity > 0) {
    EXPECT_GT(beyond_capacity, 0);
  }
}

TEST(TypedChunkEvents, BdfEqualsTheSingleMemberDriver) {
  expect_typed_chunks_equal_single_members<bdf_method>(method_kind::bdf, formulation::ggl, 2);
}

TEST(TypedChunkEvents, RadauEqualsTheSingleMemberDriver) {
  expect_typed_chunks_equal_single_members<radau5_method>(method_kind::radau5, formulation::index3, 2);
}

TEST(TypedChunkEvents, Tsit5EqualsTheSingleMemberDriver) {
  expect_typed_chunks_equal_single_members<tsit5_method>(method_kind::tsit5, formulation::index1, 2);
}

TEST(TypedChunkEvents, NoRecordsKeptWithCapacityZero) {
  expect_typed_chunks_equal_single_members<dopri5_method>(method_kind::dopri5, formulation::index1, 0);
}

TEST(TypedChunkEvents, NegativeCapacityIsRefused) {
  ensemble<Model> e = spread(method_kind::bdf, formulation::ggl, -1);
  try {
    detail::check_ensemble(e, run_options{});
    FAIL() << "a negative event_capacity was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("event_capacity = -1 is negative"), std::string::npos) << error.what();
  }
}

}  // namespace
