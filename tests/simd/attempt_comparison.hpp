// tests/simd/attempt_comparison.hpp — what the tests of a method's step attempt in lanes share
// (bdf_attempt_test.cpp, radau_attempt_test.cpp): the record of one attempt of one member, and the
// comparison of the lanes' records with the members' alone, at every instruction set and width, with
// the check that the members' attempts cover what they must (accepted and rejected attempts, failed
// members, members that reached their end while others went on).
#pragma once

#include <gtest/gtest.h>

#include <cfenv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lockstep/formulation/euler_lagrange.hpp"
#include "lockstep/method/attempt.hpp"
#include "lockstep/method/options.hpp"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {

// A member after one attempt: the attempt's result (-1: none, the member had finished), its status,
// time and next step (for the message), and the digest of its whole method state and counters.
struct attempt_record {
  double result, status, t, h, order;  // order: BDF's (0 for a method without one)
  std::uint64_t digest;
};

// The options of the tests' adaptive runs on formulation f.
inline solver_options adaptive(formulation f) {
  solver_options opt;
  opt.form = f;
  opt.rtol = 1e-6;
  return opt;
}

// A member's attempts alone, as a test drives its lane: attempt(s, counters, status) makes one attempt
// of the member's state s (an attempt_result), until it fails or reaches t_end; out[a] records each:
// its result and status, and record(s, counters)'s time, step, order and digest.
template <class State, class Attempt, class Record>
void attempts_alone(State s, double t_end, int attempts, const Attempt& attempt, const Record& record,
                    attempt_record* out) {
  member_counters counters;
  member_status status = member_status::running;
  bool done = false;
  for (int a = 0; a < attempts; ++a) {
    double result = -1.0;
    if (!done) {
      const attempt_result r = attempt(s, counters, status);
      result = double(int(r));
      done = r == attempt_result::failed || (r == attempt_result::accepted && s.t >= t_end);
    }
    out[a] = record(s, counters);
    out[a].result = result;
    out[a].status = double(status);
  }
}

// Requires that run(lanes, out) — the members' attempts in lanes, out[m * attempts + a] — gives every
// member at every variant the records alone_run(m, out + m * attempts) gives it alone (raising no
// floating-point flag the members alone do not), and that the members' attempts alone cover what they
// must (rejections: adaptive steps only). t_end[m]: member m's end. label names the kind in the summary
// line ("bdf attempts").
template <class Alone, class Run>
void expect_attempts_equal_alone(const std::string& label, const std::string& name, int attempts,
                                 const std::vector<double>& t_end, bool fixed, const Alone& alone_run,
                                 const Run& run) {
  const size_t count = t_end.size();
  std::vector<attempt_record> alone(count * attempts);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (size_t m = 0; m < count; ++m) alone_run(m, &alone[m * attempts]);
  const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);

  size_t accepted = 0, rejected = 0, failed = 0, finished = 0, running = 0;
  for (size_t m = 0; m < count; ++m) {
    for (int a = 0; a < attempts; ++a) {
      const double r = alone[m * attempts + a].result;
      accepted += r == double(int(attempt_result::accepted)), rejected += r == double(int(attempt_result::rejected));
      failed += r == double(int(attempt_result::failed));
    }
    const attempt_record& last = alone[m * attempts + attempts - 1];
    finished += last.t >= t_end[m], running += last.t < t_end[m] && last.status == 0.0;
  }
  EXPECT_GT(accepted, 0u) << name;
  EXPECT_GT(failed, 0u) << name;
  EXPECT_GT(finished, 0u) << name;
  EXPECT_GT(running, 0u) << name;
  if (!fixed) {
    EXPECT_GT(rejected, 0u) << name;
  }

  std::vector<attempt_record> out;
  const size_t variants = expect_every_variant_equal(
      name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
      [&](size_t lanes) {
        out.assign(count * attempts, attempt_record{});  // nothing of the previous variant stays
        return run(lanes, out.data());
      },
      [&](const std::string& variant) {
        size_t differ = 0;
        for (size_t m = 0; m < count; ++m)
          for (int a = 0; a < attempts; ++a) {
            const attempt_record &x = out[m * attempts + a], &y = alone[m * attempts + a];
            if (same_bits(x.result, y.result) && same_bits(x.status, y.status) && x.digest == y.digest) continue;
            if (differ++ == 0)
              ADD_FAILURE() << name << ", " << variant << ": member " << m << ", attempt " << a << ": result "
                            << x.result << ", status " << x.status << ", t " << x.t << ", h " << x.h << ", order "
                            << x.order << "; alone " << y.result << ", " << y.status << ", " << y.t << ", " << y.h
                            << ", " << y.order << (x.digest != y.digest ? " (digests differ)" : "");
            break;
          }
        return differ;
      },
      1);  // one per build; tests/simd/pack_model_test.sh runs the builds for every instruction set
  std::printf("[ %s ] %s: %zu members x %d attempts (%zu accepted, %zu rejected, %zu failed; %zu finished, %zu "
              "still running), %zu variants equal\n",
              label.c_str(), name.c_str(), count, attempts, accepted, rejected, failed, finished, running, variants);
}

}  // namespace lockstep::simd_test
