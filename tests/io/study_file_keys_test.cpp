// The table of study-file keys (host/io/study_file_keys.hpp) against the reader (host/io/study_file.cpp),
// both ways: over studies that take every branch of the reader, the keys it looks up are exactly the
// table's. A key added to the table that the reader never reads fails here, and so does a key the
// reader reads that the table (and so the documentation site's reference) lacks.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "host/io/study_file.hpp"
#include "host/io/study_file_keys.hpp"
#include "lockstep/model/registry.hpp"

namespace {

using lockstep::io::parse_study;
using lockstep::io::study_error;
using lockstep::io::study_key_lookups;

// Studies that, together, reach every key the reader can look up: each branch of the solver's method
// and formulation checks, both kinds of save times and of atol, every distribution, every section.
const char* const studies[] = {
    // the defaults, every section left out but the required ones
    R"([model]
name = "pendulum"
[time]
t1 = 1.0
)",
    // BDF with everything it takes, overrides, save times, a grid and the output section
    R"([model]
name = "double_pendulum"
params = { L2 = 0.8 }
initial = { theta1 = 2.0 }
[solver]
method = "bdf"
formulation = "ggl"
projection = "coordinate"
metric = "euclidean"
init = "strict"
init_tolerance = 1e-8
multipliers = "minimum-norm"
rtol = 1e-7
atol = { q = 1e-7, v = 1e-6, lambda = 1e-5 }
max_steps = 1000
h_initial = 1e-4
h_min = 1e-12
h_max = 0.1
max_order = 4
newton_tol = 0.2
newton_max_iterations = 5
consistent_multipliers = false
[time]
t0 = 0.0
t1 = 1.0
save = { times = [0.5] }
[ensemble]
sampler = "grid"
vary = { "initial.theta1" = { grid = [1.0, 2.0] } }
[output]
trajectories = true
statistics = ["mean", "q50"]
quantile_memory_mb = 16
)",
    // fixed steps of BDF on index 3, randomized draws of every other distribution
    R"([model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "index3"
fixed_h = 0.01
fixed_order = 2
[time]
t1 = 1.0
save = { every = 0.5 }
[ensemble]
members = 4
sampler = "sobol"
seed = 3
replicates = 2
[ensemble.vary]
"params.L" = { uniform = [0.9, 1.1] }
"params.m" = { normal = { mean = 1.0, std = 0.01 } }
"params.g" = { lognormal = { mu = 2.28, sigma = 0.01 } }
)",
    // the rho_inf method
    R"([model]
name = "pendulum"
[solver]
method = "rhoinf"
formulation = "ggl"
rho_inf = 0.5
[time]
t1 = 1.0
)",
    // index 1 with Baumgarte's gains, one atol for all
    R"([model]
name = "pendulum"
[solver]
method = "radau5"
formulation = "index1"
atol = 1e-7
baumgarte = { alpha = 1.0, beta = 2.0 }
[time]
t1 = 1.0
)",
    // Lyapunov exponents by QR
    R"([model]
name = "double_pendulum"
[time]
t1 = 4.0
[lyapunov]
exponents = 2
renormalize = 0.5
transient = 1.0
method = "qr"
metric = "mass"
history = false
)",
    // the clone estimate
    R"([model]
name = "double_pendulum"
[time]
t1 = 4.0
[lyapunov]
method = "clone"
separation = 1e-7
)",
    // sensitivity indices, every key of [sensitivity]; an exceedance probability
    R"([model]
name = "double_pendulum"
[time]
t1 = 1.0
[ensemble.vary]
"params.L1" = { uniform = [0.9, 1.1] }
[output]
exceedance = { x1 = 0.5 }
[sensitivity]
base = 16
second_order = true
confidence = 0.9
resamples = 50
max_failed = 0.1
memory_mb = 64
)",
    // derivative-based measures, every key of [derivative_measures]
    R"([model]
name = "double_pendulum"
[time]
t1 = 1.0
[ensemble]
members = 8
[ensemble.vary]
"params.L1" = { uniform = [0.9, 1.1] }
[derivative_measures]
max_failed = 0.1
memory_mb = 64
)",
    // events, every key of [events]: a model file whose model declares events (events_resolver)
    R"([model]
source = "with_events.hpp"
[time]
t1 = 1.0
[events]
records = 4
time_tolerance = 1e-9
interior_checks = 3
quantiles = [0.1, 0.5]
)",
    // event functions a study adds to a built-in model, every key of an entry (the resolver compiles
    // the model with them: events_resolver stands in)
    R"([model]
name = "pendulum"
[time]
t1 = 1.0
[events.functions]
low = { g = "y + 0.5*L", direction = "falling", action = "stop", description = "the bob sinks below half the rod" }
)",
};

// A model file's model with two event functions, or a study's events on the built-in pendulum: the
// pendulum's tables (the reader needs no more).
lockstep::io::resolved_model events_resolver(const lockstep::io::model_reference& reference) {
  EXPECT_EQ(reference.study_events, !reference.builtin.empty());
  if (reference.study_events) {
    EXPECT_EQ(reference.builtin, "pendulum");
    EXPECT_EQ(reference.study_name, "study.toml");
    EXPECT_NE(reference.study_text.find("[events.functions]"), std::string::npos);
  }
  lockstep::model_info info = lockstep::info_of<lockstep::models::pendulum>();
  info.name = "with_events";
  info.n_events = 2;
  return {info, "with_events"};
}

TEST(StudyFileKeys, TheReaderLooksUpExactlyTheTablesKeys) {
  study_key_lookups looked_up;
  for (const char* text : studies) {
    SCOPED_TRACE(text);
    EXPECT_NO_THROW(parse_study(text, "study.toml", events_resolver, &looked_up));
  }
  study_key_lookups table;
  for (const lockstep::io::study_file_key& k : lockstep::io::study_file_keys)
    EXPECT_TRUE(table.insert({std::string(k.table), std::string(k.key)}).second)
        << "listed twice: [" << k.table << "] " << k.key;
  for (const auto& [t, key] : table)
    EXPECT_TRUE(looked_up.count({t, key})) << "the table lists [" << t << "] " << key
                                           << ", which the reader never reads (or no study above reaches it)";
  for (const auto& [t, key] : looked_up)
    EXPECT_TRUE(table.count({t, key})) << "the reader reads [" << t << "] " << key << ", which the table lacks";
}

TEST(StudyFileKeys, EveryTableRefusesAKeyItDoesNotList) {
  // A planted key in each kind of table: refused at its line and column, with the table's keys.
  const std::pair<const char*, const char*> planted[] = {
      {"[model]\nname = \"pendulum\"\nnmae = 1\n[time]\nt1 = 1.0\n", "unknown key \"nmae\" in [model]; did you mean \"name\"?"},
      {"[model]\nname = \"pendulum\"\n[solver]\nrtoll = 1e-6\n[time]\nt1 = 1.0\n", "did you mean \"rtol\"?"},
      {"[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\nsave = { evry = 0.1 }\n", "did you mean \"every\"?"},
      {"[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n[ensemble]\nmembers = 2\n[ensemble.vary]\n"
       "\"params.L\" = { normal = { mean = 1.0, sd = 0.1 } }\n",
       "unknown key \"sd\""},
      {"[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n[lyapunov]\nrenormalise = 1.0\n", "did you mean \"renormalize\"?"},
      {"[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n[outputs]\n", "unknown key \"outputs\" at the top level; did you mean \"output\"?"},
      // a hint prefers the keys the table lacks, the required ones first: "tl" is t1
      {"[model]\nname = \"pendulum\"\n[time]\nt0 = 0.0\ntl = 1.0\n", "unknown key \"tl\" in [time]; did you mean \"t1\"?"},
      {"[model]\nname = \"pendulum\"\n[time]\ntl = 1.0\n", "unknown key \"tl\" in [time]; did you mean \"t1\"?"},
      {"[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\ntl = 0.0\n", "unknown key \"tl\" in [time]; did you mean \"t0\"?"},
  };
  for (const auto& [text, message] : planted) {
    SCOPED_TRACE(text);
    try {
      parse_study(text, "study.toml");
      ADD_FAILURE() << "accepted";
    } catch (const study_error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_GT(e.line(), 1);
    }
  }
}

}  // namespace
