// lockstep/engine/lanes_engine.hpp — the lanes backend of a build for one instruction set: a method's
// `advance` in an engine table (methods[kind], for every method: lockstep/simd/member_inl.hpp) that
// runs the method's members in the SIMD lanes of the instruction set the translation unit is compiled
// for (lockstep/simd/member_kernels_inl.hpp, advance_in_lanes); every other entry stays as
// model_engine.hpp made it.
//
// Each member ends every call with the state, counters, status and outputs advance_member gives it
// (tests/simd/member_test.cpp), so the results are those of the build without lanes, bit for bit
// (docs/SIMD.md, "The lanes backend of a build for one instruction set"). The built-in engines use it in
// a build for avx2 or avx512 (host/engine/CMakeLists.txt): there every unit is compiled for that set, so
// Highway's static target is its widest vectors and nothing of another set is mixed in. LOCKSTEP_LANES=0
// in the environment turns it off, for comparisons; results do not change.
//
// Include only where the models run on packs (every built-in model does; a user's model file may not):
// use_lanes<Model, Method> replaces one entry of a table that holds Method (model_engine.hpp's
// add_method). A model too large for the lanes (fits_in_lanes) keeps running one member at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "hwy/highway.h"
#include "lockstep/engine/model_engine.hpp"
#include "lockstep/simd/member_kernels_inl.hpp"

namespace lockstep::engine_detail {

// Whether the lanes run (LOCKSTEP_LANES unset or anything but 0), read once.
inline bool lanes_enabled() {
  static const bool on = [] {
    const char* value = std::getenv("LOCKSTEP_LANES");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return on;
}

// The lanes: the widest vectors of doubles of the unit's instruction set (Highway's static target).
using lanes_tag = hwy::HWY_NAMESPACE::ScalableTag<double>;

// What Model's lanes executed since the program started, over every thread and every method: the pack
// attempts (each runs every lane) and the lane-attempts among them that advanced a member
// (member_lanes), whose ratio is the lanes' utilization (docs/SIMD.md, "Lane utilization"); the
// corrector's Newton iterations and LU factorizations likewise (corrector_work).
struct lanes_work_totals {
  std::atomic<std::uint64_t> pack_attempts{0}, lane_attempts{0};
  std::atomic<std::uint64_t> pack_iterations{0}, lane_iterations{0}, pack_factorizations{0}, lane_factorizations{0};
};
template <class Model>
lanes_work_totals& lanes_work_of() {
  static lanes_work_totals totals;
  return totals;
}

// Method's advance in lanes (the table's methods[Method::kind].advance where use_lanes put it).
template <class Model, class Method>
lockstep_result lanes_advance(const lockstep_chunk* c, const long* members, long count, int max_attempts,
                              lockstep_error* error) {
  return guarded(error, [&] {
    const chunk_view<Model> view = view_of<Model, Method>(c);
    using lanes_type = simd::HWY_NAMESPACE::member_lanes<Model, Method, lanes_tag>;
    // One workspace per thread, allocated at the thread's first call: later calls allocate nothing.
    thread_local std::unique_ptr<lanes_type> lanes;
    if (!lanes) lanes = std::make_unique<lanes_type>();
    const std::uint64_t packs_before = lanes->pack_attempts, lanes_before = lanes->lane_attempts;
    const simd::HWY_NAMESPACE::corrector_work work_before = simd::HWY_NAMESPACE::method_work(lanes->method);
    simd::HWY_NAMESPACE::advance_in_lanes(view, members, count, max_attempts, *lanes);
    lanes_work_totals& totals = lanes_work_of<Model>();
    const auto add = [](std::atomic<std::uint64_t>& total, std::uint64_t now, std::uint64_t before) {
      total.fetch_add(now - before, std::memory_order_relaxed);
    };
    add(totals.pack_attempts, lanes->pack_attempts, packs_before);
    add(totals.lane_attempts, lanes->lane_attempts, lanes_before);
    const simd::HWY_NAMESPACE::corrector_work& work = simd::HWY_NAMESPACE::method_work(lanes->method);
    add(totals.pack_iterations, work.pack_iterations, work_before.pack_iterations);
    add(totals.lane_iterations, work.lane_iterations, work_before.lane_iterations);
    add(totals.pack_factorizations, work.pack_factorizations, work_before.pack_factorizations);
    add(totals.lane_factorizations, work.lane_factorizations, work_before.lane_factorizations);
    return LOCKSTEP_OK;
  });
}

// Whether Model's members run in lanes. What grows as the square of the model's unknowns (its Jacobian
// blocks, Newton matrices and factors, per lane) lives in the thread's workspace of lanes on the heap
// (corrector_lanes, lockstep/simd/corrector_inl.hpp), but the model's evaluation on packs still holds
// about W times the one-member code's temporaries on the stack (the m x n constraint Jacobian of the
// residual's linearization among them). Measured at W = 8 (g++ 12, -O3; the smallest thread stack that
// ran the member): chain17, 68 unknowns in ggl form, 333 KB of Jacobian blocks on packs, under
// 640 KiB of stack; the n-four-bar of 40 loops, 326 unknowns, 2.6 MB of blocks, 3-4 MiB (one member
// at a time on doubles: 1-2 MiB). So a model runs in lanes where its Jacobian blocks on packs take at
// most 1 MiB (every built-in model; about 120-150 unknowns at W = 8), on less than 2 MiB of stack,
// and a larger one runs one member at a time, on less.
inline constexpr std::size_t lanes_max_jacobian_bytes = std::size_t{1} << 20;

template <class Model>
constexpr bool fits_in_lanes() {
  return sizeof(jacobian_values<Model, simd::HWY_NAMESPACE::pack<lanes_tag>>) <= lanes_max_jacobian_bytes;
}

// The table's lanes_work and lanes_corrector_work (lockstep/engine/abi.h): lanes_work_of<Model>() in
// lanes (W for each thing a pack ran).
template <class Model>
void lanes_work_report(std::uint64_t* executed, std::uint64_t* of_members) {
  const lanes_work_totals& totals = lanes_work_of<Model>();
  const std::uint64_t W = hwy::HWY_NAMESPACE::Lanes(lanes_tag());
  *executed = totals.pack_attempts.load(std::memory_order_relaxed) * W;
  *of_members = totals.lane_attempts.load(std::memory_order_relaxed);
}
template <class Model>
void lanes_corrector_work_report(std::uint64_t* iterations_executed, std::uint64_t* iterations_of_members,
                                 std::uint64_t* factorizations_executed, std::uint64_t* factorizations_of_members) {
  const lanes_work_totals& totals = lanes_work_of<Model>();
  const std::uint64_t W = hwy::HWY_NAMESPACE::Lanes(lanes_tag());
  *iterations_executed = totals.pack_iterations.load(std::memory_order_relaxed) * W;
  *iterations_of_members = totals.lane_iterations.load(std::memory_order_relaxed);
  *factorizations_executed = totals.pack_factorizations.load(std::memory_order_relaxed) * W;
  *factorizations_of_members = totals.lane_factorizations.load(std::memory_order_relaxed);
}

// The table t of Model's engine runs Method in lanes, where the model fits them (fits_in_lanes) and
// LOCKSTEP_LANES does not turn them off; otherwise Method keeps the advance add_method gave it, one
// member at a time. A table without that advance (add_method_around_lanes: a model file's engine, which
// its compiler makes only where the lanes are on) runs the lanes whatever LOCKSTEP_LANES says, with the
// same results. The lanes' counts are reported either way (zero when they never ran).
template <class Model, class Method>
void use_lanes(lockstep_engine& t) {
  if constexpr (fits_in_lanes<Model>()) {
    auto& advance = t.methods[static_cast<int>(Method::kind)].advance;
    if (lanes_enabled() || advance == nullptr) {
      advance = &lanes_advance<Model, Method>;
      t.lanes = static_cast<int>(hwy::HWY_NAMESPACE::Lanes(lanes_tag()));
    }
    t.lanes_work = &lanes_work_report<Model>;
    t.lanes_corrector_work = &lanes_corrector_work_report<Model>;
  }
}

// The part of a model file's engine that holds Model's projection of accepted points in lanes, for the
// runs that project after steps (engine_sources::parts_of; the lanes' parts of that engine declare
// simd::lanes_projection_apart<Model>): it registers the projection for them. An engine without this
// part refuses such a run (lanes_stepper::projection) rather than run it unprojected.
template <class Model>
void use_lanes_projection(lockstep_engine&) {
  if constexpr (fits_in_lanes<Model>()) {
    namespace lanes = simd::HWY_NAMESPACE;
    static_assert(lanes::lanes_projection_apart<Model>::value, "declared apart in the unit that compiles it apart");
    lanes::registered_lanes_projection<Model, lanes_tag> = &lanes::member_lanes_detail::project_points_in_lanes<Model, lanes_tag>;
  }
}

}  // namespace lockstep::engine_detail
