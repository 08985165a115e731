// bench/engine_overhead.cpp — what the engine boundary costs: the same ensemble solved through the
// model-agnostic scheduler and the engine's C table (solve_ensemble), and by the member functors
// called directly in a loop of the program's own (begin_member / advance_member on the same chunk
// storage, the same K and compaction, no table, no indirect call), on one thread.
//
//     build/bench/engine_overhead [members] [repeats]
//
// Prints, per model and method, the best of `repeats` wall times of both paths and their ratio, the
// engine calls the solve made (on the serial backend one per launch, and one finish per chunk), the
// measured cost of one engine call that has no member to work on (the boundary alone: the C call,
// the chunk view, the method dispatch, the exception net; best of 5 rounds of 10^5 calls), and that
// cost times the calls as a fraction of the solve. Outputs are compared bitwise: the boundary must
// not change a bit. The two paths' times differ also by what only the scheduler does (final states
// with consistent multipliers, member-major results), so the call cost is the boundary's measure.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "lockstep/detail/member_kernels.hpp"
#include "lockstep/chunks/typed_chunks.hpp"
#include "lockstep/lockstep.hpp"

namespace {

using namespace lockstep;
using clock_type = std::chrono::steady_clock;

template <class Model>
ensemble<Model> make_ensemble(long members, method_kind method, formulation form, double t1) {
  auto e = ensemble<Model>::with_defaults(members);
  e.t1 = t1;
  e.save_times = {t1 / 2, t1};
  e.options.method = method;
  e.options.form = form;
  e.options.rtol = e.options.atol_q = e.options.atol_v = e.options.atol_lambda = 1e-6;
  for (long i = 0; i < members; ++i) e.params_of(i)[0] *= 1.0 + 0.1 * static_cast<double>(i) / static_cast<double>(members);
  return e;
}

// The scheduler's chunk loop with the functors called directly: one chunk holding every member.
template <class Model, class Method>
std::vector<double> solve_direct(const ensemble<Model>& e, int K, long& launches) {
  constexpr int ny = state_layout<Model>::size;
  const long C = e.members;
  const int S = static_cast<int>(e.save_times.size());
  std::vector<std::uint64_t> states(static_cast<std::size_t>(soa_image<member_state<Model, Method>>::words) * C);
  std::vector<double> params(static_cast<std::size_t>(Model::n_params) * C), q0(Model::n * C), v0(Model::n * C);
  std::vector<double> outputs(static_cast<std::size_t>(S) * ny * C, std::numeric_limits<double>::quiet_NaN());
  std::vector<unsigned char> finished(C, 0);
  std::vector<long> active(C);
  detail::scatter_inputs(e, 0, C, C, params.data(), q0.data(), v0.data());
  const chunk_view<Model> view = detail::chunk_view_of(e, C, states.data(), params.data(), q0.data(), v0.data(),
                                                       outputs.data(), finished.data(), e.save_times.data());
  std::iota(active.begin(), active.end(), 0L);
  long n_active = C;
  const begin_member<Model, Method> begin{view};
  for (long a = 0; a < n_active; ++a) begin(active[a]);
  launches = 1;
  auto compact = [&] {
    n_active = std::partition(active.begin(), active.begin() + n_active, [&](long i) { return finished[i] == 0; }) -
               active.begin();
  };
  compact();
  const advance_member<Model, Method> advance{view, K};
  while (n_active > 0) {
    for (long a = 0; a < n_active; ++a) advance(active[a]);
    ++launches;
    compact();
  }
  // Final states, as the scheduler's finish computes them (consistent multipliers).
  double checksum = 0.0;
  for (long i = 0; i < C; ++i) {
    member_state<Model, Method> ms;
    soa_load(view.states, C, i, ms);
    checksum += member_final_state<Model>(ms, e.params_of(i), e.options)[0];
  }
  volatile double sink = checksum;
  (void)sink;
  // Member-major, as the scheduler returns them.
  std::vector<double> member_major(outputs.size());
  for (long i = 0; i < C; ++i)
    for (int s = 0; s < S; ++s)
      for (int j = 0; j < ny; ++j) member_major[(i * S + s) * ny + j] = outputs[(static_cast<long>(s) * ny + j) * C + i];
  return member_major;
}

template <class Model, class Method>
void measure(const char* label, long members, int repeats, formulation form, double t1) {
  const auto e = make_ensemble<Model>(members, Method::kind, form, t1);
  run_options run;
  run.where = backend::serial;
  run.chunk_size = members;
  double best_engine = 1e300, best_direct = 1e300;
  long launches = 0, steps = 0;
  bool same = true;
  for (int r = 0; r < repeats; ++r) {
    auto t = clock_type::now();
    const ensemble_result<Model> through = solve_ensemble(e, run);
    best_engine = std::min(best_engine, std::chrono::duration<double>(clock_type::now() - t).count());
    t = clock_type::now();
    const std::vector<double> direct = solve_direct<Model, Method>(e, run.attempts_per_sync, launches);
    best_direct = std::min(best_direct, std::chrono::duration<double>(clock_type::now() - t).count());
    same = same && direct.size() == through.outputs.size() &&
           std::memcmp(direct.data(), through.outputs.data(), direct.size() * sizeof(double)) == 0;
    steps = 0;
    for (const auto& c : through.counters) steps += c.steps;
  }
  // On the serial backend every launch is one engine call (begin, advance) plus one finish per chunk.
  const long calls = launches + 1;
  // One engine call with no member: the boundary's own cost.
  const engine model(model_engine<Model>());
  lockstep_chunk chunk{};
  chunk.header = abi_header_for<lockstep_chunk>();
  chunk.method = static_cast<int>(e.options.method);
  const lockstep_solver_options options = abi_options(e.options);
  chunk.options = &options;
  constexpr long rounds = 100000;
  double best_call = 1e300;
  for (int r = 0; r < 5; ++r) {
    const auto t = clock_type::now();
    for (long c = 0; c < rounds; ++c) model.advance(chunk, nullptr, 0, run.attempts_per_sync);
    best_call = std::min(best_call, std::chrono::duration<double>(clock_type::now() - t).count() / rounds);
  }
  std::printf("| %-28s | %7ld | %9ld | %8.4f | %8.4f | %6.3f | %6ld | %7.1f | %.1e | %s |\n", label, members, steps,
              best_direct, best_engine, best_engine / best_direct, calls, best_call * 1e9,
              best_call * static_cast<double>(calls) / best_engine, same ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  const long members = argc > 1 ? std::atol(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  std::printf("| model, method | members | steps | direct [s] | engine [s] | ratio | engine calls | ns per call | "
              "calls x cost / solve | same bits |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  measure<models::pendulum, bdf_method>("pendulum, bdf on ggl", members, repeats, formulation::ggl, 2.0);
  measure<models::pendulum, radau5_method>("pendulum, radau5 on index3", members, repeats, formulation::index3, 2.0);
  measure<models::double_pendulum, radau5_method>("double pendulum, radau5", members, repeats, formulation::index3, 1.0);
  measure<models::andrews, bdf_method>("andrews, bdf on ggl", members / 10, repeats, formulation::ggl, 0.003);
  return 0;
}
