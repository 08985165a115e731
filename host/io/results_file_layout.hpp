// host/io/results_file_layout.hpp — every group, dataset and attribute results.h5 can hold, in one
// table: `lockstep reference results-file` prints the documentation site's reference from it, and
// tests/io/results_file_layout_check.py checks it against the files the program writes, both ways (an
// object a file holds that the table lacks fails, and so does an entry no file holds).
// docs/RESULTS-FORMAT.md is the guide (conventions, versions, reading the file); the writer is
// host/io/results_h5.cpp, which the root attributes of the run come to through host/cli/run_study_impl.hpp
// and host/cli/run_study_journaled.hpp.
//
// Paths name the object in the file; "@" names an attribute ("/@format_version": the root's,
// "/lyapunov@renormalize": the /lyapunov group's, "/members/status@names": the dataset's). A part in
// capitals stands for names the study chooses:
//   STAT  a statistic's group of /statistics: each name of [output] statistics (mean, std, min, max,
//         qNN, qNN.N) and mean_stderr, which has an entry of its own too (an entry without a
//         placeholder describes its object first).
//
// type: what a reader gets: "float64", "int32", "int64" (little-endian), or "string" (variable-length
// UTF-8; h5py reads str); empty for a group.
// shape: "scalar", or the dimensions in brackets, by name:
//   member    N, the members (/@members), in member order
//   save      S, the save times (/t)
//   q         n, the model's coordinates (/@n)
//   lambda    m, its holonomic constraints (/@m)
//   nu        k, its velocity (non-holonomic) constraints (/@k)
//   state     Y = 2n + 2m + k, the state layout q, v, lambda, mu, nu
//   quantity  Z, the model's derived quantities (/@quantity_names; 0 without them)
//   value     Y + Z, the values per save time: the state layout, then the quantities
//   input     V, the varied inputs ([ensemble.vary])
//   grid      G, the varied inputs that are grids
//   code      the status codes (member_status_count, include/lockstep/core/status.hpp)
//   exponent  p, the Lyapunov exponents kept (/lyapunov@exponents)
//   estimate  H, the running Lyapunov estimates kept per member (/lyapunov@history_length)
//   event     E, the model's event functions (/events@names)
//   record    C, the event records kept per member (/events@capacity)
//   quantile  P, the quantiles of the events' first times (/events@quantiles)
// when: the study settings (or the run) under which the object is written; "always" is every file,
// interrupted-results.h5 included.
//
// Every field is one string literal or adjacent ones (concatenated), each entry one brace-enclosed
// list of six: the check script reads the table from this file with a small parser that accepts only
// that (and comments), so keep to it.
#pragma once

#include <string_view>

namespace lockstep::io {

struct results_file_entry {
  std::string_view path;     // as above
  std::string_view kind;     // "group", "dataset" or "attribute"
  std::string_view type;     // what a reader gets: "float64", "int32", "int64", "uint8", "string", ...
  std::string_view shape;    // "[member, save, q]", "scalar", ...
  std::string_view when;     // "always", "[output] trajectories = true", "[lyapunov]", ...
  std::string_view meaning;  // one or two sentences (Markdown)
};

// In the order the writer creates them: the root and its attributes, the trajectories, /members,
// /statistics, /events, /lyapunov.
inline constexpr results_file_entry results_file_layout[] = {
    // ---- the root ----
    {"/", "group", "", "", "always", "The file's root: its attributes describe the model, the study and the run."},
    {"/@format", "attribute", "string", "scalar", "always", "`\"lockstep-results\"`: the file is a lockstep results file."},
    {"/@format_version", "attribute", "int64", "scalar", "always",
     "The version of the layout, 1. A reader refuses another version (docs/RESULTS-FORMAT.md says when it is raised); "
     "a file without format and format_version but with `/t` and `/members/status` is read as version 1."},
    {"/@model", "attribute", "string", "scalar", "always",
     "The model's name: a built-in model's as `lockstep models` lists it, or the one a model file declares."},
    {"/@n", "attribute", "int64", "scalar", "always", "n, the model's coordinates: the size of q and v."},
    {"/@m", "attribute", "int64", "scalar", "always", "m, the model's holonomic constraints: the size of lambda and mu."},
    {"/@k", "attribute", "int64", "scalar", "always", "k, the model's velocity (non-holonomic) constraints: the size of nu."},
    {"/@coordinate_names", "attribute", "string", "[q]", "always",
     "The names of the positions' (and velocities') entries as the model gives them (`coordinate_names` of a "
     "model, `[coordinates]` of an equations file), else `q0`, `q1`, ...; files written before it have none."},
    {"/@coordinate_columns", "attribute", "string", "[q]", "always",
     "Each coordinate's name in members.csv and `lockstep plot`: its entry of `coordinate_names` where that is "
     "usable as a column, else `q<j>` (the rule: docs/RESULTS-FORMAT.md); files written before it have none."},
    {"/@quantity_names", "attribute", "string", "[quantity]", "a model with derived quantities",
     "The names of the model's derived quantities (body poses, points, joint reactions of a mechanism file: "
     "docs/reference/mechanism-file.md), the entries of `/quantities` and of every statistic's `quantities`."},
    {"/@quantity_descriptions", "attribute", "string", "[quantity]", "a model with derived quantities",
     "What each quantity is, with its units."},
    {"/@members", "attribute", "int64", "scalar", "always", "N, the members of the study."},
    {"/@trajectories", "attribute", "int64", "scalar", "always",
     "1 when `/q`, `/v`, `/lambda` (and `/mu`, `/nu`, `/quantities`) are stored, else 0."},
    {"/@multipliers", "attribute", "string", "scalar", "always",
     "The convention of `/lambda` and `/nu` on the constraint rows the solver drops as redundant "
     "(`/members/dropped_rows`; the `[solver]` key multipliers): `\"independent\"` (those of the rows kept, 0 on the "
     "dropped ones) or `\"minimum-norm\"` (the smallest multipliers with the same constraint force). Without "
     "dropped rows both are the one solution; files written before it have none."},
    {"/@study", "attribute", "string", "scalar", "always", "The study file's text, verbatim."},
    {"/@lockstep_version", "attribute", "string", "scalar", "always", "The version of the lockstep that wrote the file, e.g. `\"0.1.0\"`."},
    {"/@git_revision", "attribute", "string", "scalar", "always",
     "The source revision of that lockstep (`git describe --always --dirty` at its build), or `\"unknown\"`."},
    {"/@backend", "attribute", "string", "scalar", "always", "The backend that solved the members: `\"serial\"`, `\"omp\"` or `\"cuda\"`."},
    {"/@threads", "attribute", "int64", "scalar", "always", "The threads of the run (1 with the serial and cuda backends)."},
    {"/@wall_time_seconds", "attribute", "float64", "scalar", "always",
     "The wall time of the run up to writing its results, in seconds (a resumed run's sessions together)."},
    {"/@study_name", "attribute", "string", "scalar", "always", "The study's name: its file's name without the extension."},
    {"/@instruction_set", "attribute", "string", "scalar", "always",
     "The x86-64 instruction set of the code that advanced the members on the host: `\"baseline\"`, `\"sse4\"`, "
     "`\"avx2\"` or `\"avx512\"` (docs/SIMD.md). The results do not depend on it; files written before it have none."},
    {"/@simd_lanes", "attribute", "int64", "scalar", "always",
     "The members per SIMD pack that advanced them (4 with avx2, 8 with avx512), or 0 where they ran one at a time "
     "(the cuda backend, `LOCKSTEP_LANES=0`); the same for a run resumed from a checkpoint. Files written before "
     "it have none; before method `auto` ran in lanes, its runs' was 0."},
    {"/@method", "attribute", "string", "scalar", "always",
     "The `[solver]` method: `\"radau5\"`, `\"bdf\"`, `\"radau3\"`, `\"euler\"`, `\"rhoinf\"`, `\"dopri5\"`, "
     "`\"tsit5\"` or `\"auto\"`."},
    {"/@rho_inf", "attribute", "float64", "scalar", "[solver] method = \"rhoinf\"",
     "The rho_inf method's spectral radius at infinity (`[solver]` rho_inf)."},
    {"/@formulation", "attribute", "string", "scalar", "always",
     "The `[solver]` formulation: `\"index3\"`, `\"ggl\"`, `\"index1\"` or `\"projected-invariants\"`."},
    {"/@projection", "attribute", "string", "scalar", "always",
     "The `[solver]` projection: `\"none\"`, `\"coordinate\"` or `\"post-stabilization\"`."},
    {"/@mean_stderr_method", "attribute", "string", "scalar", "always",
     "How `/statistics/mean_stderr` is estimated: `\"replicates\"` (from the spread of the replicates' means: sampler "
     "sobol or lhs with replicates > 1) or `\"std/sqrt(n)\"`."},
    {"/@mpi_ranks", "attribute", "int64", "scalar", "a run under mpirun on more than one rank",
     "The MPI ranks that solved the members (the results are bitwise those of one process)."},
    {"/@complete", "attribute", "int64", "scalar", "interrupted-results.h5 only",
     "0: the checkpointed run was stopped by SIGINT or SIGTERM before every member finished; the members not "
     "finished have status running (0) and NaN values."},
    {"/@members_finished", "attribute", "int64", "scalar", "interrupted-results.h5 only",
     "The members finished when the run stopped: members 0 to members_finished - 1."},
    {"/@statistics", "attribute", "string", "scalar", "interrupted-results.h5 only",
     "`\"not computed: the run was interrupted\"`: `/statistics` is empty."},

    // ---- save times and trajectories ----
    {"/t", "dataset", "float64", "[save]", "always", "The save times ([time] save), t1 the last."},
    {"/q", "dataset", "float64", "[member, save, q]", "[output] trajectories = true",
     "Each member's positions at the save times."},
    {"/v", "dataset", "float64", "[member, save, q]", "[output] trajectories = true",
     "Each member's velocities at the save times."},
    {"/lambda", "dataset", "float64", "[member, save, lambda]", "[output] trajectories = true",
     "The multipliers of the holonomic constraints at the save times (on dropped rows: the root attribute "
     "multipliers)."},
    {"/mu", "dataset", "float64", "[member, save, lambda]",
     "[output] trajectories = true, formulation ggl or projected-invariants, m > 0",
     "The stabilizing multipliers of the formulations that have them (q' = v - G^T mu)."},
    {"/nu", "dataset", "float64", "[member, save, nu]", "[output] trajectories = true, k > 0",
     "The multipliers of the velocity constraints at the save times."},
    {"/quantities", "dataset", "float64", "[member, save, quantity]",
     "[output] trajectories = true, a model with derived quantities",
     "The model's derived quantities at the save times, evaluated from the saved (t, q, v) and the "
     "acceleration-level system (minimum-norm multipliers where constraint rows are dependent); NaN where "
     "a member never reached the save time."},

    // ---- /members: one value (or row) per member ----
    {"/members", "group", "", "", "always",
     "One value or row per member, in member order whatever order the members were computed in; chunked along "
     "the member axis and, when compression is on, shuffled and deflated."},
    {"/members/status", "dataset", "int32", "[member]", "always",
     "How each member ended: a code of include/lockstep/core/status.hpp (1 = success; 0 = running, a member "
     "not finished, in interrupted-results.h5 only)."},
    {"/members/status@names", "attribute", "string", "[code]", "always",
     "The name of each status code, `names[code]`: `\"running\"`, `\"success\"`, `\"max_steps\"`, ..."},
    {"/members/steps", "dataset", "int64", "[member]", "always", "Accepted steps."},
    {"/members/rejected", "dataset", "int64", "[member]", "always", "Rejected steps: error-test failures and step cuts after Newton failures."},
    {"/members/newton_iterations", "dataset", "int64", "[member]", "always", "Newton iterations."},
    {"/members/newton_failures", "dataset", "int64", "[member]", "always", "Step attempts cut because Newton's method failed (with a Jacobian evaluated at that step)."},
    {"/members/jacobian_evaluations", "dataset", "int64", "[member]", "always", "Jacobian evaluations."},
    {"/members/lu_factorizations", "dataset", "int64", "[member]", "always", "LU factorizations."},
    {"/members/model_evaluations", "dataset", "int64", "[member]", "always",
     "Residual evaluations (each evaluates the model's M, Q, Phi and their kin once)."},
    {"/members/projections", "dataset", "int64", "[member]", "always", "Accepted steps followed by a projection ([solver] projection)."},
    {"/members/dropped_rows", "dataset", "int64", "[member]", "always",
     "The constraint rows the solver left out as redundant at some point of the run, as bits: bit a (a < m) "
     "holonomic row a, bit m + a velocity-constraint row a (bit 63 makes it negative); 0 for a member whose "
     "[G; A] kept full rank (docs/CONSTRAINT-RANK.md)."},
    {"/members/rank_changes", "dataset", "int64", "[member]", "always", "How often the choice of dropped rows changed after the initial one."},
    {"/members/final_t", "dataset", "float64", "[member]", "always",
     "Where each member stopped: t1 on success; t0 for a member that never started (options refused, "
     "initialization failed or refused)."},
    {"/members/final_h", "dataset", "float64", "[member]", "always", "The last step size; 0 for a member that never started."},
    {"/members/max_phi", "dataset", "float64", "[member]", "always", "The largest constraint residual |Phi| at an accepted step."},
    {"/members/max_velocity_residual", "dataset", "float64", "[member]", "always",
     "The largest velocity-constraint residual |G v + Phi_t| (and |A v + a|) at an accepted step."},
    {"/members/init_q_correction", "dataset", "float64", "[member]", "always",
     "The size (max-norm) of the consistent initialization's position correction; a member refused for its "
     "start (inconsistent_initial) keeps the correction it would have needed."},
    {"/members/init_v_correction", "dataset", "float64", "[member]", "always",
     "The same for the velocities (0 for a member init \"auto\" refused on its positions)."},
    {"/members/max_projection_q", "dataset", "float64", "[member]", "always", "The largest position correction (max-norm) of a projection."},
    {"/members/max_projection_v", "dataset", "float64", "[member]", "always", "The largest velocity correction (max-norm) of a projection."},
    {"/members/max_dropped_phi", "dataset", "float64", "[member]", "always",
     "The largest |Phi| of a dropped holonomic row at an accepted point: dropped rows are monitored, not imposed."},
    {"/members/explicit_steps", "dataset", "int64", "[member]", "[solver] method = \"dopri5\", \"tsit5\" or \"auto\"",
     "The accepted steps the explicit method (dopri5, tsit5) took; steps - explicit_steps were Radau IIA 5's (auto)."},
    {"/members/method_switches", "dataset", "int64", "[member]", "[solver] method = \"dopri5\", \"tsit5\" or \"auto\"",
     "How often the member switched between the explicit and the implicit method (auto; 0 with dopri5 and tsit5)."},
    {"/members/stiffness_detections", "dataset", "int64", "[member]",
     "[solver] method = \"dopri5\", \"tsit5\" or \"auto\"",
     "How often the explicit method's stiffness test found its steps held by its stability limit (15 steps with "
     "h lambda above 2.5 before 6 below it): with auto each starts an implicit phase; with dopri5 and tsit5 the "
     "member goes on, stiff."},
    {"/members/final_q", "dataset", "float64", "[member, q]", "always",
     "The positions at final_t; for a member that never started, the q0 it was given, as given (not projected "
     "onto the constraints)."},
    {"/members/final_v", "dataset", "float64", "[member, q]", "always", "The velocities at final_t (v0 as given for a member that never started)."},
    {"/members/inputs", "dataset", "float64", "[member, input]", "always",
     "Each member's varied inputs, in the order of [ensemble.vary] (V = 0: no columns)."},
    {"/members/inputs@names", "attribute", "string", "[input]", "always",
     "The varied inputs' names, e.g. `params.L2`, `initial.theta1`."},
    {"/members/inputs@grid_shape", "attribute", "int64", "[grid]", "always",
     "The lengths of the grid dimensions, in grid order (the last varies fastest over members); empty without grids."},
    {"/members/inputs@grid_dims", "attribute", "int32", "[grid]", "always",
     "The grid dimensions' indices among names, in the same order; empty without grids."},

    // ---- /statistics: over the members at every save time ----
    {"/statistics", "group", "", "", "always",
     "One group per statistic over the members at every save time; summed in fixed blocks of members in a fixed "
     "order, so bitwise the same for any chunking, thread count and number of MPI ranks."},
    {"/statistics@quantile_rank_error", "attribute", "float64", "scalar",
     "a qNN statistic whose exact quantiles would not fit in [output] quantile_memory_mb",
     "A proven bound on the quantiles' rank error (as a fraction of the members): they come from the mergeable "
     "sketch, not from exact order statistics."},
    {"/statistics/STAT", "group", "", "", "each name of [output] statistics; not in interrupted-results.h5",
     "The statistic STAT (`mean`, `std`, `min`, `max`, or the quantile `qNN`) of each value over the members "
     "that entered it."},
    {"/statistics/STAT@probability", "attribute", "float64", "scalar", "the quantiles (qNN) only",
     "The quantile's probability, e.g. 0.05 for `q05`."},
    {"/statistics/mean_stderr", "group", "", "", "always but in interrupted-results.h5",
     "The standard error of the mean, with the datasets of a statistic's group; the root attribute "
     "mean_stderr_method says how it is estimated."},
    {"/statistics/STAT/q", "dataset", "float64", "[save, q]", "in every statistic's group", "The statistic of the positions."},
    {"/statistics/STAT/v", "dataset", "float64", "[save, q]", "in every statistic's group", "The statistic of the velocities."},
    {"/statistics/STAT/lambda", "dataset", "float64", "[save, lambda]", "in every statistic's group",
     "The statistic of the holonomic multipliers."},
    {"/statistics/STAT/mu", "dataset", "float64", "[save, lambda]", "formulation ggl or projected-invariants, m > 0",
     "The statistic of the stabilizing multipliers."},
    {"/statistics/STAT/nu", "dataset", "float64", "[save, nu]", "k > 0", "The statistic of the velocity-constraint multipliers."},
    {"/statistics/STAT/quantities", "dataset", "float64", "[save, quantity]", "a model with derived quantities",
     "The statistic of the derived quantities."},
    {"/statistics/STAT/count", "dataset", "int64", "[save, value]", "in every statistic's group",
     "The members that entered each value, columns in the state layout (q, v, lambda, mu, nu), then the "
     "quantities."},

    // ---- /events ----
    {"/events", "group", "", "", "a model with event functions",
     "The zero crossings of the model's event functions, per member (docs/how-to/events.md), and the settings "
     "they were located with."},
    {"/events@names", "attribute", "string", "[event]", "a model with event functions", "The events' names, in the model's order."},
    {"/events@directions", "attribute", "string", "[event]", "a model with event functions",
     "Each event's direction: `\"rising\"`, `\"falling\"` or `\"both\"`."},
    {"/events@actions", "attribute", "string", "[event]", "a model with event functions",
     "Each event's action: `\"record\"`, `\"stop\"` or `\"count\"`."},
    {"/events@descriptions", "attribute", "string", "[event]", "a model with event functions", "The events' descriptions."},
    {"/events@capacity", "attribute", "int64", "scalar", "a model with event functions",
     "C, the records kept per member ([events] records)."},
    {"/events@time_tolerance", "attribute", "float64", "scalar", "a model with event functions",
     "[events] time_tolerance (0: the default, 100 eps (abs(t) + abs(h)))."},
    {"/events@interior_checks", "attribute", "int64", "scalar", "a model with event functions", "[events] interior_checks."},
    {"/events@confidence", "attribute", "float64", "scalar", "a model with event functions; not in interrupted-results.h5",
     "The level of the fraction's intervals: 0.95."},
    {"/events@interval", "attribute", "string", "scalar", "a model with event functions; not in interrupted-results.h5",
     "The fraction's intervals: `\"wilson\"`, or `\"replicates\"` (Student's, from the spread of the replicates' own "
     "fractions: sampler sobol or lhs with replicates > 1; Wilson's where they all agree)."},
    {"/events@replicates", "attribute", "int64", "scalar",
     "a model with event functions, sampler sobol or lhs with replicates > 1; not in interrupted-results.h5",
     "The replicates the intervals come from."},
    {"/events@quantiles", "attribute", "float64", "[quantile]", "a model with event functions; not in interrupted-results.h5",
     "The probabilities of /events/first_time_quantiles ([events] quantiles)."},
    {"/events/fraction", "dataset", "float64", "[save, event]", "a model with event functions; not in interrupted-results.h5",
     "The fraction of members whose event occurred by each save time: Kaplan-Meier's estimate, members that ended "
     "without the event censored where they ended (the plain share where none ended before that time)."},
    {"/events/fraction_low", "dataset", "float64", "[save, event]", "a model with event functions; not in interrupted-results.h5",
     "The lower end of the fraction's 95 % interval (Wilson's, with Dorey and Korn's effective sample size under censoring; "
     "or from the replicates: /events@interval)."},
    {"/events/fraction_high", "dataset", "float64", "[save, event]", "a model with event functions; not in interrupted-results.h5",
     "The upper end of that interval."},
    {"/events/first_time_quantiles", "dataset", "float64", "[quantile, event]", "a model with event functions; not in interrupted-results.h5",
     "The quantiles of each event's first time: the first time at which the fraction reaches each probability; NaN "
     "where it never does."},
    {"/events/count", "dataset", "int64", "[member, event]", "a model with event functions",
     "How often each event occurred in each member."},
    {"/events/first_time", "dataset", "float64", "[member, event]", "a model with event functions",
     "When each event first occurred; NaN where it never did (a member without it is censored at its final_t)."},
    {"/events/records", "dataset", "int64", "[member]", "a model with event functions",
     "The records (of record and stop events) each member made; those beyond C were counted, not kept."},
    {"/events/stop_event", "dataset", "int32", "[member]", "a model with event functions",
     "The event that stopped the member (status stopped_by_event), or -1."},
    {"/events/t", "dataset", "float64", "[member, record]", "a model with event functions",
     "Each kept record's time, in time order; NaN past the member's records."},
    {"/events/event", "dataset", "int32", "[member, record]", "a model with event functions",
     "Each kept record's event; -1 past the member's records."},
    {"/events/q", "dataset", "float64", "[member, record, q]", "a model with event functions",
     "The positions at each record, projected onto the constraints."},
    {"/events/v", "dataset", "float64", "[member, record, q]", "a model with event functions",
     "The velocities at each record, projected onto the velocity constraints."},
    {"/events/lambda", "dataset", "float64", "[member, record, lambda]", "a model with event functions",
     "The multipliers at each record, from the acceleration-level (index-1) system."},
    {"/events/nu", "dataset", "float64", "[member, record, nu]", "a model with event functions and k > 0",
     "The velocity constraints' multipliers at each record, likewise."},

    // ---- /lyapunov ----
    {"/lyapunov", "group", "", "", "[lyapunov]", "The Lyapunov exponents of every member (docs/LYAPUNOV.md), and the settings they were computed with."},
    {"/lyapunov@method", "attribute", "string", "scalar", "[lyapunov]", "`\"qr\"` (discrete QR on p tangent directions) or `\"clone\"` (two trajectories)."},
    {"/lyapunov@metric", "attribute", "string", "scalar", "[lyapunov]", "The inner product on the tangent space: `\"mass\"` or `\"euclidean\"`."},
    {"/lyapunov@renormalize", "attribute", "float64", "scalar", "[lyapunov]", "The time between re-orthonormalizations."},
    {"/lyapunov@transient", "attribute", "float64", "scalar", "[lyapunov]", "The time discarded before the averages start."},
    {"/lyapunov@separation", "attribute", "float64", "scalar", "[lyapunov] method = \"clone\"",
     "The clone's distance from the member, in the metric."},
    {"/lyapunov@dimension", "attribute", "int64", "scalar", "[lyapunov]",
     "d = 2 (n - m) - k, the dimension of the model's constraint manifold: the most exponents there are."},
    {"/lyapunov@exponents", "attribute", "int64", "scalar", "[lyapunov]", "p, the exponents kept."},
    {"/lyapunov@history_length", "attribute", "int64", "scalar", "[lyapunov]",
     "H, the running estimates kept per member: floor((t1 - t0) / renormalize) + 2, or 0 with history = false."},
    {"/lyapunov/exponents", "dataset", "float64", "[member, exponent]", "[lyapunov]",
     "The p leading exponents in decreasing order (up to the finite-time error of nearly equal ones); NaN for a "
     "member whose Lyapunov run failed."},
    {"/lyapunov/status", "dataset", "int32", "[member]", "[lyapunov]", "How each member's Lyapunov run ended (the codes of `/members/status`)."},
    {"/lyapunov/status@names", "attribute", "string", "[code]", "[lyapunov]", "The name of each status code, as `/members/status@names`."},
    {"/lyapunov/t_start", "dataset", "float64", "[member]", "[lyapunov]", "Where the averages started (after the transient)."},
    {"/lyapunov/t_end", "dataset", "float64", "[member]", "[lyapunov]",
     "Where the Lyapunov run stopped: t1, or earlier for a run stopped by max_steps (whose exponents are the "
     "estimate it reached, averaged over [t_start, t_end]) or one that failed."},
    {"/lyapunov/renormalizations", "dataset", "int64", "[member]", "[lyapunov]",
     "Re-orthonormalizations done (method clone: intervals)."},
    {"/lyapunov/steps", "dataset", "int64", "[member]", "[lyapunov]",
     "Accepted steps of the Lyapunov run (-1 with method clone, which solves the member once per interval)."},
    {"/lyapunov/history_t", "dataset", "float64", "[member, estimate]", "[lyapunov] history = true (the default)",
     "The times of the running estimates; NaN past a member's last estimate."},
    {"/lyapunov/history", "dataset", "float64", "[member, estimate, exponent]", "[lyapunov] history = true (the default)",
     "The running estimates of the exponents; NaN past a member's last estimate."},

    // ---- /exceedance ----
    {"/exceedance", "group", "", "", "[output] exceedance; not in interrupted-results.h5",
     "The probability that each output named in [output] exceedance is above its threshold, at every save time, "
     "over the members whose value entered (failed members' NaN do not)."},
    {"/exceedance@confidence", "attribute", "float64", "scalar", "[output] exceedance", "The intervals' confidence level, 0.95."},
    {"/exceedance@interval", "attribute", "string", "scalar", "[output] exceedance",
     "How the intervals are made: `\"wilson\"` (Wilson's score interval), or `\"replicates\"` (Student's, from the "
     "spread of the replicates' own fractions: sampler sobol or lhs with replicates > 1; Wilson's where they all "
     "agree) (docs/SENSITIVITY.md, Exceedance)."},
    {"/exceedance@replicates", "attribute", "int64", "scalar",
     "[output] exceedance, sampler sobol or lhs with replicates > 1", "The replicates the intervals come from."},
    {"/exceedance/threshold", "dataset", "float64", "[value]", "[output] exceedance",
     "Each value's threshold, in the state layout, then the quantities; NaN for a value without one."},
    {"/exceedance/probability", "dataset", "float64", "[save, value]", "[output] exceedance",
     "above / count; NaN for a value without a threshold."},
    {"/exceedance/low", "dataset", "float64", "[save, value]", "[output] exceedance", "The interval's lower end."},
    {"/exceedance/high", "dataset", "float64", "[save, value]", "[output] exceedance", "The interval's upper end."},
    {"/exceedance/above", "dataset", "int64", "[save, value]", "[output] exceedance",
     "The members whose value is above the threshold (0 for a value without one)."},
    {"/exceedance/count", "dataset", "int64", "[save, value]", "[output] exceedance", "The members whose value entered."},

    // ---- /sensitivity ----
    {"/sensitivity", "group", "", "", "[sensitivity]; not in interrupted-results.h5",
     "Variance-based sensitivity indices of every value at every save time over the varied inputs (docs/SENSITIVITY.md), "
     "from Saltelli's design, which the members are."},
    {"/sensitivity@inputs", "attribute", "string", "[input]", "[sensitivity]",
     "The varied inputs the indices are of, in the order of the datasets' input dimensions."},
    {"/sensitivity@design", "attribute", "string", "scalar", "[sensitivity]", "`\"saltelli\"`: the design's rows are the members."},
    {"/sensitivity@estimators", "attribute", "string", "scalar", "[sensitivity]",
     "The estimators: first order Saltelli et al. (2010), total Jansen (1999), second order Saltelli (2002), on "
     "outputs centred by their mean."},
    {"/sensitivity@base", "attribute", "int64", "scalar", "[sensitivity]", "N, the design's rows per replicate."},
    {"/sensitivity@replicates", "attribute", "int64", "scalar", "[sensitivity]", "The design's independent randomizations."},
    {"/sensitivity@confidence", "attribute", "float64", "scalar", "[sensitivity]", "The confidence level of the intervals."},
    {"/sensitivity@intervals", "attribute", "string", "scalar", "[sensitivity]",
     "`\"replicates\"` (t intervals from the spread of 10 or more replicates' own indices) or `\"bootstrap\"`."},
    {"/sensitivity@resamples", "attribute", "int64", "scalar", "[sensitivity] with the bootstrap",
     "The bootstrap's resamples of the design's rows."},
    {"/sensitivity@max_failed", "attribute", "float64", "scalar", "[sensitivity]",
     "The largest fraction of rows with a failed member from which indices were estimated."},
    {"/sensitivity/INDEX", "group", "", "", "[sensitivity]",
     "One index, with the datasets of a statistic's group: `first` (S_i) and `total` (S_Ti), and their intervals' "
     "half-widths `first_conf` and `total_conf`; NaN where a value has no indices (a constant output, too many "
     "failed rows)."},
    {"/sensitivity/INDEX/q", "dataset", "float64", "[save, q, input]", "[sensitivity]", "The index of the positions."},
    {"/sensitivity/INDEX/v", "dataset", "float64", "[save, q, input]", "[sensitivity]", "The index of the velocities."},
    {"/sensitivity/INDEX/lambda", "dataset", "float64", "[save, lambda, input]", "[sensitivity]",
     "The index of the holonomic multipliers."},
    {"/sensitivity/INDEX/mu", "dataset", "float64", "[save, lambda, input]",
     "[sensitivity], formulation ggl or projected-invariants, m > 0", "The index of the stabilizing multipliers."},
    {"/sensitivity/INDEX/nu", "dataset", "float64", "[save, nu, input]", "[sensitivity], k > 0",
     "The index of the velocity-constraint multipliers."},
    {"/sensitivity/INDEX/quantities", "dataset", "float64", "[save, quantity, input]",
     "[sensitivity], a model with derived quantities", "The index of the derived quantities."},
    {"/sensitivity/second", "dataset", "float64", "[save, value, input, input]", "[sensitivity] second_order = true",
     "The second-order indices S_ij (at [..., i, j], i < j; NaN elsewhere) of every value, in the state layout, "
     "then the quantities."},
    {"/sensitivity/second_conf", "dataset", "float64", "[save, value, input, input]", "[sensitivity] second_order = true",
     "The half-widths of their intervals."},
    {"/sensitivity/lyapunov", "group", "", "", "[sensitivity] with [lyapunov]",
     "The indices of the Lyapunov exponents (/lyapunov/exponents) over the varied inputs."},
    {"/sensitivity/lyapunov/INDEX", "dataset", "float64", "[exponent, input]", "[sensitivity] with [lyapunov]",
     "`first`, `total`, `first_conf`, `total_conf` of each exponent, as the datasets of /sensitivity/INDEX."},
    {"/sensitivity/lyapunov/rows_used", "dataset", "int64", "[exponent]", "[sensitivity] with [lyapunov]",
     "The design rows each exponent's indices came from (a member whose Lyapunov run failed has NaN exponents)."},
    {"/sensitivity/rows_used", "dataset", "int64", "[save, value]", "[sensitivity]",
     "The design rows (over all replicates) that entered each value's indices: those without a failed member."},

    // ---- /derivative_measures ----
    {"/derivative_measures", "group", "", "", "[derivative_measures]; not in interrupted-results.h5",
     "Derivative-based global sensitivity measures of every value of the final state over the varied inputs, from "
     "each member's forward sensitivities (docs/SENSITIVITY.md), with the bounds they give on the total indices."},
    {"/derivative_measures@inputs", "attribute", "string", "[input]", "[derivative_measures]",
     "The varied inputs' names, in the order of the datasets' input dimension."},
    {"/derivative_measures@t", "attribute", "float64", "scalar", "[derivative_measures]",
     "The time of the final state the measures are of: t1."},
    {"/derivative_measures@members", "attribute", "int64", "scalar", "[derivative_measures]",
     "The members solved with their sensitivities: the study's (members_used says which entered each value)."},
    {"/derivative_measures@max_failed", "attribute", "float64", "scalar", "[derivative_measures]",
     "The largest fraction of failed members from which the measures are estimated."},
    {"/derivative_measures@estimators", "attribute", "string", "scalar", "[derivative_measures]",
     "The estimators and the Poincare constants of the bounds, with their sources."},
    {"/derivative_measures@refused", "attribute", "string", "scalar", "[derivative_measures]",
     "Why there are no measures (every value NaN: too many failed members); empty when there are."},
    {"/derivative_measures/MEASURE", "group", "", "", "[derivative_measures]",
     "One measure, with a dataset per part of the state: `nu` (E[(dy/dx_i)^2], for a lognormal input "
     "E[(x_i dy/dx_i)^2]), `nu_stderr` (its standard error) and `total_bound` (C_i nu_i / Var y, an upper bound "
     "on the total index S_Ti)."},
    {"/derivative_measures/MEASURE/q", "dataset", "float64", "[q, input]", "[derivative_measures]",
     "The measure of the positions."},
    {"/derivative_measures/MEASURE/v", "dataset", "float64", "[q, input]", "[derivative_measures]",
     "The measure of the velocities."},
    {"/derivative_measures/MEASURE/lambda", "dataset", "float64", "[lambda, input]", "[derivative_measures]",
     "The measure of the holonomic multipliers."},
    {"/derivative_measures/MEASURE/mu", "dataset", "float64", "[lambda, input]",
     "[derivative_measures], formulation ggl or projected-invariants, m > 0", "The measure of the stabilizing multipliers."},
    {"/derivative_measures/MEASURE/nu", "dataset", "float64", "[nu, input]", "[derivative_measures], k > 0",
     "The measure of the velocity-constraint multipliers."},
    {"/derivative_measures/variance", "dataset", "float64", "[state]", "[derivative_measures]",
     "Var y of each value over the members used, the bounds' denominator."},
    {"/derivative_measures/members_used", "dataset", "int64", "[state]", "[derivative_measures]",
     "The members that entered each value's measures: those whose value and derivatives are finite."},
};

}  // namespace lockstep::io
