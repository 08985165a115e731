// host/cli/phase_progress.hpp — the progress line of a phase that solves a study's members once more
// after their plain solves (the Lyapunov driver of a chunk, the derivative measures' sensitivity solves).
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace lockstep::cli::detail {

// on_done(finished) for a member batch (host/engine/member_batch.hpp): redraws "LABEL: k/N UNIT" on
// stderr at most every 0.1 s and at the last member, padded to the width of the plain solve's bar, which
// it overwrites. Called on one thread only (the batch's calling thread).
inline std::function<void(long)> phase_progress(std::string label, std::string unit, long count) {
  auto last_draw = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  return [label = std::move(label), unit = std::move(unit), count, last_draw](long finished) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw < std::chrono::milliseconds(100) && finished != count) return;
    last_draw = now;
    std::fprintf(stderr, "\r%s: %ld/%ld %s%-40s", label.c_str(), finished, count, unit.c_str(), "");
    std::fflush(stderr);
  };
}

}  // namespace lockstep::cli::detail
