// host/io/study_file_keys.hpp — every key of a study file, in one table: the reader takes the keys it
// allows from it (an unknown key is refused with the table's keys as the "did you mean" candidates),
// `lockstep reference study-file` prints the documentation site's reference from it, and
// tests/io/study_file_keys_test.cpp checks that the keys the reader looks up are exactly the table's.
//
// A table is named by its path in the file: "" the top level, "solver", "solver.atol", "time.save",
// "ensemble.vary.*" (the distribution of one varied input, whatever its name), "ensemble.vary.*.normal".
// A key "*" stands for names the model or the study chooses (a parameter's name in [model] params).
#pragma once

#include <string_view>
#include <vector>

namespace lockstep::io {

struct study_file_key {
  std::string_view table;        // the table's path, as above
  std::string_view key;          // the key, or "*"
  std::string_view value;        // what may be written: a type, a range, the choices
  std::string_view default_value;  // what leaving it out means; "required" where it may not be left out
  std::string_view meaning;      // one or two sentences (Markdown), the reference's text
};

// In the order of the reference: the sections as a study usually writes them.
inline constexpr study_file_key study_file_keys[] = {
    // ---- the top level ----
    {"", "model", "table", "required", "The model and the overrides of its parameters and initial inputs."},
    {"", "solver", "table", "the defaults below", "The method, the formulation and the error control, the same for every member."},
    {"", "time", "table", "required", "The interval of integration and the save times."},
    {"", "ensemble", "table", "one member", "The members: how many, and which inputs vary how."},
    {"", "output", "table", "the defaults below", "What results.h5 stores beside the members' summaries."},
    {"", "lyapunov", "table", "no exponents", "Lyapunov exponents of every member (docs/LYAPUNOV.md)."},
    {"", "sensitivity", "table", "no indices",
     "Variance-based sensitivity indices of every output over the varied inputs, from Saltelli's design "
     "(docs/SENSITIVITY.md)."},
    {"", "derivative_measures", "table", "no measures",
     "Derivative-based global sensitivity measures of the final state over the varied inputs, with their bounds on "
     "the total indices, from one forward-sensitivity solve per member (docs/SENSITIVITY.md)."},
    {"", "events", "table", "the defaults below",
     "How the model's event functions are located and what is kept of them (docs/how-to/events.md); only for a model "
     "that declares events."},

    // ---- [model] ----
    {"model", "name", "string", "required without source",
     "A built-in model (`lockstep models` lists them); with `source`, which model of a header that defines several."},
    {"model", "source", "string: a path", "a built-in model",
     "A model file, relative to the study file: a C++ header (.hpp, .h) or an equations file (.toml), compiled on "
     "first use and cached (docs/MODEL-FILES.md)."},
    {"model", "params", "table of numbers", "the model's defaults",
     "Overrides of the model's parameter defaults, by name (`lockstep describe MODEL` lists them)."},
    {"model", "initial", "table of numbers", "the model's defaults",
     "Overrides of the model's named initial inputs, by name."},
    {"model.params", "*", "number", "the model's default", "A parameter of the model, by its name."},
    {"model.initial", "*", "number", "the model's default", "An initial input of the model, by its name."},

    // ---- [solver] ----
    {"solver", "method", "`radau5` | `bdf` | `radau3` | `euler` | `rhoinf` | `dopri5` | `tsit5` | `auto`",
     "`radau5`",
     "The integration method: Radau IIA with 3, 2 or 1 stages (orders 5, 3, 1), BDF of variable order 1-5, the "
     "two-step rho_inf method of Mantegazza & Masarati (2012), the explicit pairs 5(4) of Dormand & Prince "
     "(`dopri5`) and Tsitouras (`tsit5`, the same digits in fewer steps) for members that are not stiff, or "
     "`auto`: dopri5 while a member is not stiff and Radau IIA 5 while it is, switching "
     "per member by a stiffness test (docs/METHODS.md). Radau IIA on index 3 is the default because it is "
     "the combination accepted with error control on every model."},
    {"solver", "formulation", "`index3` | `ggl` | `index1` | `projected-invariants`",
     "`index3`; `index1` with dopri5 and tsit5",
     "The form of the equations the method solves. BDF needs `ggl` (or fixed steps on `index3`); dopri5 and "
     "tsit5 `index1`; "
     "with auto it names the implicit phases' (`index3` or `ggl`: the explicit phases run `index1`)."},
    {"solver", "projection", "`none` | `coordinate` | `post-stabilization`", "`none`; `coordinate` with dopri5, tsit5 and auto",
     "A projection onto the constraints after every accepted step."},
    {"solver", "metric", "`mass` | `euclidean`", "`mass`", "The metric of the initial and the step projections."},
    {"solver", "init", "`auto` | `project` | `strict`", "`auto`",
     "Initial values off the constraints: `auto` projects them, refusing a member whose position correction is "
     "gross (above the tolerance and above 10 % of the configuration's size); `project` accepts any correction; "
     "`strict` refuses one above `init_tolerance`. The run's summary warns of corrections beyond the tolerance."},
    {"solver", "multipliers", "`independent` | `minimum-norm`", "`independent`",
     "The multipliers reported where the solver drops dependent constraint rows (docs/CONSTRAINT-RANK.md)."},
    {"solver", "rtol", "number > 0", "1e-6",
     "The relative tolerance: about -log10 rtol correct digits of the positions for every method and formulation "
     "(docs/METHODS.md, \"What rtol means\")."},
    {"solver", "atol", "number > 0, or a table `{ q, v, lambda }`", "1e-6",
     "The absolute tolerance, one for all, or per group (groups left out keep the default)."},
    {"solver", "max_steps", "integer >= 1", "500000", "Step attempts per member, accepted or not, before it stops with status `max_steps`."},
    {"solver", "h_initial", "number >= 0, <= h_max", "0: chosen from the initial derivatives", "The first step size."},
    {"solver", "h_min", "number >= 0, <= h_max", "0", "The smallest step size; the effective one is the larger of this and 16 eps max(|t|, |t1|)."},
    {"solver", "h_max", "number > 0", "no limit", "The largest step size."},
    {"solver", "max_order", "integer 1-5", "5", "BDF only: the highest order."},
    {"solver", "newton_tol", "number > 0", "0.1",
     "BDF and rhoinf only: the simplified Newton iteration's convergence test, in units of the error weights."},
    {"solver", "newton_max_iterations", "integer >= 1", "4", "BDF and rhoinf only: Newton iterations per attempt."},
    {"solver", "consistent_multipliers", "true | false", "true",
     "Recompute the saved multipliers from the saved positions and velocities (their error then follows "
     "theirs); false reports the method's own."},
    {"solver", "init_tolerance", "number > 0", "1e-10", "`init = \"strict\"` only: the largest admissible correction (max-norm)."},
    {"solver", "fixed_h", "number > 0, dividing [t0, t1]", "adaptive steps",
     "Fixed steps of this size, without error control (order studies; BDF on index3). Refused with h_initial, "
     "h_min and h_max, and where it does not divide the interval into whole steps."},
    {"solver", "fixed_order", "integer 1-5", "1", "BDF with fixed_h only: the order."},
    {"solver", "rho_inf", "number in [0, 1]", "0.6",
     "Method rhoinf only: its spectral radius at infinity; 1 (no damping) is refused on index3 and needs fixed_h "
     "elsewhere."},
    {"solver", "baumgarte", "table `{ alpha, beta }`", "no stabilization",
     "Formulation index1 only: Baumgarte's gains (non-zero gains with another formulation are refused)."},
    {"solver.atol", "q", "number > 0", "1e-6", "The absolute tolerance of the positions."},
    {"solver.atol", "v", "number > 0", "1e-6", "The absolute tolerance of the velocities."},
    {"solver.atol", "lambda", "number > 0", "1e-6", "The absolute tolerance of the multipliers."},
    {"solver.baumgarte", "alpha", "number >= 0", "0", "The damping gain: Phi'' + 2 alpha Phi' + beta^2 Phi = 0."},
    {"solver.baumgarte", "beta", "number >= 0", "0", "The stiffness gain of the same equation."},

    // ---- [time] ----
    {"time", "t0", "number", "0", "The start of every member."},
    {"time", "t1", "number > t0", "required", "The end of every member."},
    {"time", "save", "table `{ every }` or `{ times }`", "every = (t1 - t0) / 100",
     "The save times; t1 is always one of them."},
    {"time.save", "every", "number > 0", "(t1 - t0) / 100",
     "t0, t0 + every, t0 + 2 every, ... below t1, then t1 itself; a point within 1e-12 (t1 - t0) of t1 gives way "
     "to t1 (at most 1,000,000 save times). Exclusive with times."},
    {"time.save", "times", "array of numbers in [t0, t1]", "—",
     "The save times, each inside [t0, t1]: sorted, duplicates removed, t1 appended if absent (the same rule). "
     "Exclusive with every."},

    // ---- [ensemble] ----
    {"ensemble", "members", "integer >= 1", "1",
     "Drawn points per replicate; with nothing varied, that many identical members. The study has G x members x "
     "replicates members (G: the product of the grids' sizes; G alone for a pure grid), at most 2^53 and at most "
     "what the machine's memory holds. Refused with a pure grid (every varied input a grid), where it has no "
     "effect."},
    {"ensemble", "sampler", "`random` | `sobol` | `lhs` | `grid`", "`random`",
     "How the varied inputs are drawn: Philox random numbers, randomized Sobol' points, Latin hypercube, or grids "
     "(every varied input a grid). Refused when nothing is varied."},
    {"ensemble", "seed", "integer >= 0", "1",
     "The seed of the random numbers and of the randomizations. Refused with a pure grid and when nothing is "
     "varied, where it has no effect."},
    {"ensemble", "replicates", "integer >= 1", "1",
     "Independent randomizations, for error bars of quasi-Monte Carlo estimates: the standard errors of the "
     "statistics and the intervals of the events' fractions (sampler sobol or lhs), the intervals of the "
     "sensitivity indices (saltelli). Refused with a pure grid."},
    {"ensemble", "vary", "table", "nothing varied",
     "The varied inputs, `\"params.NAME\"` or `\"initial.NAME\"`, each with its distribution, in the order written "
     "(which fixes the numbering of grids)."},
    {"ensemble.vary", "*", "table: one distribution", "—", "A varied input, `params.NAME` or `initial.NAME` (quoted, or as a dotted key); a fixed override of "
     "the same input in [model] gives way to it."},
    {"ensemble.vary.*", "uniform", "array `[lower, upper]`", "—", "Uniform on [lower, upper], lower <= upper."},
    {"ensemble.vary.*", "normal", "table `{ mean, std }`", "—", "Normal with this mean and standard deviation (std >= 0)."},
    {"ensemble.vary.*", "lognormal", "table `{ mu, sigma }`", "—", "exp of a normal with mean mu and standard deviation sigma (sigma >= 0)."},
    {"ensemble.vary.*", "grid", "array of numbers, non-empty", "—", "Every value of the list; a study of grids alone has one member per grid point."},
    {"ensemble.vary.*.normal", "mean", "number", "required", "The mean."},
    {"ensemble.vary.*.normal", "std", "number >= 0", "required", "The standard deviation."},
    {"ensemble.vary.*.lognormal", "mu", "number", "required", "The mean of the logarithm."},
    {"ensemble.vary.*.lognormal", "sigma", "number >= 0", "required", "The standard deviation of the logarithm."},

    // ---- [output] ----
    {"output", "trajectories", "true | false", "false", "Store q, v and lambda of every member at every save time."},
    {"output", "statistics", "array of `mean` | `std` | `min` | `max` | `qNN` | `qNN.N`",
     "`[mean, std, min, max, q05, q50, q95]`",
     "The statistics over the members at every save time; qNN is the NN percent quantile (0-100), exact within "
     "quantile_memory_mb, else from a deterministic sketch whose rank error the file states."},
    {"output", "quantile_memory_mb", "integer >= 1", "1024", "The memory budget of the quantile estimators; refused without a qNN statistic."},
    {"output", "exceedance", "table `{ OUTPUT = threshold }`", "none",
     "The probability that an output exceeds a threshold, at every save time, with its 95 % Wilson interval "
     "(results.h5 /exceedance; the summary gives it at t1 and warns of rare events)."},
    {"output.exceedance", "*", "number", "—",
     "OUTPUT named as `lockstep plot --outputs` names it: a coordinate's name (its position), `v.NAME` (its "
     "velocity), or q<j>, v<j>, lambda<j>, mu<j>, nu<j>; or a derived quantity of the model by its name "
     "(`lockstep describe` lists them; a mechanism file's joint reactions, `\"crank.fx\"`, quoted for the dot)."},

    // ---- [lyapunov] ----
    {"lyapunov", "exponents", "integer 1-d, or `\"all\"`", "`\"all\"`; 1 with method clone",
     "The p leading exponents; d = 2 (n - m) - k is the dimension of the model's constraint manifold."},
    {"lyapunov", "renormalize", "number > 0", "1.0", "Time between re-orthonormalizations (at most 1,000,000 over [t0, t1])."},
    {"lyapunov", "transient", "number >= 0, < t1 - t0", "0", "Time discarded before the averages start."},
    {"lyapunov", "method", "`qr` | `clone`", "`qr`",
     "`qr`: discrete QR on p tangent directions (BDF, or Radau IIA on ggl or index3, without projection); "
     "`clone`: the two-trajectory estimate of the largest exponent (any solver)."},
    {"lyapunov", "separation", "number > 0", "1e-6", "Method clone only: the clone's distance from the member, in the metric."},
    {"lyapunov", "metric", "`mass` | `euclidean`", "`mass`", "The inner product on the tangent space."},
    {"lyapunov", "history", "true | false", "true", "Keep the running estimates at every re-orthonormalization (/lyapunov/history)."},

    // ---- [sensitivity] ----
    {"sensitivity", "base", "integer >= 2, a power of two", "required",
     "N, the rows of Saltelli's design. A row is k + 2 members (2k + 2 with second_order) for the k varied "
     "inputs, so the study has N (k + 2) members per replicate: [ensemble] members and sampler follow from it and "
     "are refused."},
    {"sensitivity", "second_order", "true | false", "false", "Also the second-order indices S_ij, i < j (a row is then 2k + 2 members)."},
    {"sensitivity", "confidence", "number in (0, 1)", "0.95",
     "The confidence level of the indices' intervals: from the spread of the replicates' own indices with "
     "[ensemble] replicates >= 10, else from the bootstrap."},
    {"sensitivity", "resamples", "integer >= 2", "100",
     "The bootstrap's resamples of the design's rows; refused with 10 replicates or more, whose spread gives the intervals."},
    {"sensitivity", "max_failed", "number in [0, 1)", "0.05",
     "The largest fraction of the design's rows with a failed member from which an output's indices are estimated "
     "(those rows left out); above it they are refused: NaN, and the summary says why."},
    {"sensitivity", "memory_mb", "integer >= 1", "1024",
     "The memory for every member's outputs at every save time, which the indices are computed from at the end; a "
     "study whose outputs need more is refused before it runs."},

    // ---- [derivative_measures] ----
    {"derivative_measures", "max_failed", "number in [0, 1)", "0.05",
     "The largest fraction of members whose sensitivity solve fails from which the measures are estimated (those "
     "members left out); above it they are refused: NaN, and the summary says why."},
    {"derivative_measures", "memory_mb", "integer >= 1", "1024",
     "The memory for every member's final state and its derivatives, which the measures are computed from at the "
     "end; a study that needs more is refused before it runs."},

    // ---- [events] ----
    {"events", "records", "integer 0-1000000", "16",
     "The event records (time, event, state) kept per member, in time order: those of `record` and `stop` "
     "events. A member's later records are counted (`/events/records`) but not kept; every event's count and "
     "first time are kept whatever it is."},
    {"events", "time_tolerance", "number >= 0", "0: 100 eps (abs(t) + abs(h)), as SUNDIALS IDA",
     "The length of the bracket at which an event's location stops; t* is its end past the crossing."},
    {"events", "interior_checks", "integer 0-1000", "0",
     "Points inside each step where the event functions are evaluated too, so that two crossings of one event "
     "within a step (a grazing approach) are found; 0 looks at the steps' ends only."},
    {"events", "quantiles", "array of increasing numbers in (0, 1)", "`[0.05, 0.25, 0.5, 0.75, 0.95]`",
     "The quantiles of each event's first time written to `/events/first_time_quantiles`: NaN where the fraction "
     "of members with the event never reaches it (docs/how-to/events.md)."},
    {"events", "functions", "table", "none",
     "Event functions the study adds to its model, built-in or a model file's, after the model's own: one inline "
     "table each, named by its key (docs/how-to/events.md, \"Events a study adds\"). The model is then compiled "
     "with them, as a model file is."},
    {"events.functions", "*", "inline table", "—",
     "One event function, its key the event's name (an identifier): `horizontal = { g = \"y\", direction = "
     "\"rising\", action = \"stop\" }`."},
    {"events.functions.*", "g", "string (an expression)", "required",
     "The event function in the equations file's notation: t, the model's coordinates by name, their velocities "
     "`NAME_dot` and accelerations `NAME_ddot`, its parameters by name, and the multipliers `lambda_0`, `lambda_1`, "
     "... of its holonomic constraint rows and `nu_0`, ... of its non-holonomic ones, by row index. The event "
     "occurs where it crosses zero."},
    {"events.functions.*", "direction", "`rising` | `falling` | `both`", "`both`",
     "The crossings reported: rising (from g < 0 to g >= 0), falling (from g > 0 to g <= 0) or both."},
    {"events.functions.*", "action", "`record` | `stop` | `count`", "`record`",
     "What a member does at the event: record its time and state and go on, stop there (status "
     "`stopped_by_event`), or only count it."},
    {"events.functions.*", "description", "string", "none", "What the event is, in a few words."},
};

// The keys of one table, in the table's order.
inline std::vector<std::string_view> study_file_keys_of(std::string_view table) {
  std::vector<std::string_view> keys;
  for (const study_file_key& k : study_file_keys)
    if (k.table == table) keys.push_back(k.key);
  return keys;
}

}  // namespace lockstep::io
