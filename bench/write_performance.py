#!/usr/bin/python3
"""Writes docs/PERFORMANCE.md and its work-precision figures from one run of bench/run_performance.sh.

Input: the JSON of bench/peers/work_precision (one object per problem: the reference and its checks,
and per solver and tolerance the counters, the significant correct digits (scd) of every member's
final positions and the wall times of the repetitions), a machine description and, optionally, the
perf profiles the script recorded. Every number in the document comes from these files.

Speed is only ever a ratio measured in the same run: "IDA / lockstep at equal scd" is IDA's wall time
per member interpolated (log-linearly, on its work-precision front) at the accuracy lockstep reached,
divided by lockstep's time. Run with Debian's /usr/bin/python3 (python3-matplotlib, python3-numpy).
"""
import argparse
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from results_section import marked_sections  # noqa: E402

# lockstep-bdf-lanes: BDF with its members in SIMD lanes, in a build for avx2 or avx512 only.
SOLVERS = ("lockstep-bdf", "lockstep-radau5", "lockstep-bdf-lanes", "ida")
LOCKSTEP = ("lockstep-bdf", "lockstep-radau5", "lockstep-bdf-lanes")
LABEL = {
    "lockstep-bdf": "lockstep BDF (ggl)",
    "lockstep-radau5": "lockstep Radau IIA 5 (index3)",
    "lockstep-bdf-lanes": "lockstep BDF in SIMD lanes (ggl)",
    "ida": "SUNDIALS IDA (ggl)",
}
METHOD = {"lockstep-bdf": "BDF", "lockstep-radau5": "Radau", "lockstep-bdf-lanes": "BDF in lanes"}
STYLE = {"lockstep-bdf": ("tab:blue", "o"), "lockstep-radau5": ("tab:green", "s"),
         "lockstep-bdf-lanes": ("tab:purple", "D"), "ida": ("tab:red", "^")}
TARGET = 5.0
TITLES = {
    "andrews": "Andrews' squeezer, t in [0, 0.03]",
    "car_axis": "car axis, t in [0, 3]",
    "slider_crank": "slider crank, t in [0, 1]",
    "double_pendulum": "double pendulum, theta1 = theta2 = 0.5, t in [0, 10]",
}


# What the measurements above mean for the targets, and what would close the gaps: the reading of the
# per-step table and the profiles, with the code each item is about. Its own figures are the
# before/after comparisons of changes (each measured in one run against the named commit or setting),
# which a single run of this benchmark cannot show.
ANALYSIS = """### What would close the gaps

Where the ratio falls short: (a) BDF runs two Newton iterations per step where IDA runs 1.4-1.7
(table above), and every iteration costs a residual evaluation and a Newton solve; (b) Radau IIA
re-evaluates the Jacobian and refactors both of its matrices after almost every accepted step; (c) at
loose tolerances BDF re-evaluates its Jacobian on a quarter (andrews) to a third (slider crank) of its
steps, where IDA does on a seventh, and the Jacobian with its factorization is then the larger part of
the time; (d) per-step bookkeeping and the Newton solve's substitutions are what is left on the small
models (profiles above).

Done (the numbers above include them):

1. Bitwise the same results (968 datasets of 16 studies compared, 4 problems x 2 methods x
   rtol 1e-4 and 1e-8): `internal_tolerance_factor`'s pow once per member; pow(x, 1) skipped in the
   contraction rate; LTE_{k-1} and LTE_{k+1} of order selection from one divided-difference table over
   q and v only; order selection by exact integer-power comparisons, with pow only for a step that
   shrinks (`detail::choose_order`, shared with the tangent step).
2. Last bits changed: `lu_solve`'s back substitution runs by columns and multiplies by the
   pivots' reciprocals, O(N) latency per solve instead of O(N^2). With item 1, same run, one thread,
   fastest of 2 rounds against commit 122b263: BDF at rtol 1e-8 0.69 (double pendulum), 0.73
   (car_axis), 0.88 (slider_crank), 0.89 (andrews) of the time; Radau IIA at 1e-5 0.92-0.98.
3. LU reuse across shifts (method/corrector.hpp, `stale_shift_ratio_ok`): BDF keeps its
   factored Newton matrix while c / c_old stays in IDA's band [0.6, 5/3] and scales each increment by
   2 / (1 + c / c_old) (IDA's XRATE = 0.25 and its scaled solve). BDF's variable coefficient c moves at
   every step for k steps after a change of h, so refactoring at every change of c had factored on
   ~70 % of andrews' steps at rtol 1e-4. Same run against 2858c93, one thread, rtol 1e-4 ... 1e-8:
   1.8-3.9x fewer LU factorizations; time 0.90-0.94 (andrews), 0.90-0.93 (slider_crank), 0.92-1.0
   (double pendulum), 0.98-1.0 (car_axis); median scd within 0.16 digits. Without the scaled increment
   the scd fell by up to 0.4 digits (andrews, rtol 1e-6).
4. `record_constraint_residuals` takes Phi and G v + Phi_t from one evaluation along
   (q, v) with a one-direction dual number instead of two evaluations (bitwise the same counters).
5. BDF's history in Newton form (method/bdf.hpp, `older_differences`; `prepend_node` in
   method/interpolation.hpp): the divided-difference table was rebuilt from the stored points at every
   attempt (O(k^2) state vectors, again for the order estimates and for every dense output); the state
   now keeps the newest point and the Newton coefficients over the older nodes, and a step prepends its
   point in O(k), bitwise the same results (968 datasets, 0 differences; tests/method/
   interpolation_test.cpp compares bit patterns through a whole run). Same run, one thread, 200
   members, fastest of 2 rounds against 52b2dad (machine shared with a build): car_axis
   BDF 0.88 of the time at rtol 1e-4 ... 1e-6 and 1e-8, 0.96 at 1e-7; andrews within the noise.
6. `sin_cos` (core/math.hpp, with dual and hessian_dual overloads): sin(dual) and cos(dual)
   each evaluated both the sine and the cosine of the value; andrews' constraint asks for seven angle
   pairs on duals at every Newton iteration and in every Jacobian. The models that need both now call
   sin_cos, bitwise the same values (968 datasets, 0 differences). Same run as item 5 against its
   result: andrews BDF 0.81 (rtol 1e-4), 0.93, 0.90, 0.91, 0.90 (1e-8) of the time.
7. d(G^T lambda)/dq, the Hessian of lambda . Phi, was computed by nested dual numbers that
   formed both of its symmetric halves and a t column; it now forms one half on a second-order type
   (core/hessian.hpp), in blocks of at most 8 directions (bitwise the same matrices for every built-in
   model at 200 random states each). Against the binary before it (64 members, 256 for andrews and
   car_axis, 1 thread, rtol 1e-4 ... 1e-8, two alternating rounds, CPU time on a loaded machine):
   slider crank BDF 0.78 and Radau IIA 0.79 of the time before, andrews 0.96 and 0.89, car axis 1.0 and
   0.91, with steps, Jacobian counts and scd unchanged. The IDA peer's Jacobian calls the same function,
   so IDA gains from it too.

Measured and not adopted (same-run comparisons):

8. A contraction rate carried over to the next step's first iteration while the Newton matrix is
   unchanged (IDA's test, restricted to the same matrix): Newton iterations per step fell from 2.0 to
   1.2, but accepting the first iterate leaves an iteration error that is noise in the error estimate,
   whose controller works at the edge r = 1 between keeping and cutting h: steps rose 8-12 %,
   rejections 1.5-3x and LU factorizations 4-5x; the time changed by -7 % to +6 %. With the carried rate
   floored at 0.2 the first iterate is almost never accepted.
9. RADAU5's THET = 0.1 instead of 0.001 (keep the Jacobian unless the contraction was slow):
   car_axis 10-18 % faster at rtol 1e-4 ... 1e-6, andrews within the noise, slider_crank lost a digit at
   1e-6 (scd 2.42 -> 1.36).
10. BDF's Jacobian refresh at a contraction rate of 0.3 or 0.5 instead of 0.1 (re-measured with
   item 3, machine shared with a build): slider_crank 15-26 % faster at rtol 1e-4 ... 1e-6 and
   0.92-1.01 of the time at 1e-7 (Jacobians 830 -> 342 per member at 1e-4), but car_axis and the double
   pendulum up to 22 % slower at 0.5 (Newton iterations +15-55 %), andrews 0.80-1.05. Later: after a
   slow contraction with a stale shift (the matrix factored for another c), refactoring at the new c
   instead of re-evaluating the Jacobian cut andrews' Jacobians by 26-30 % but raised its LU
   factorizations by 44-72 % and the slider crank's steps by 1-3 %: no clear gain, not adopted.

What remains, by expected effect:

11. A Jacobian refresh rule that weighs a Jacobian's cost (known per model: its evaluation and
   factorization against a residual and a solve) against the iterations it saves, for (c) above;
   items 9 and 10 show that one fixed threshold cannot serve all four problems.
12. Radau IIA on the slider crank at loose tolerances rejects a quarter of its steps and runs 6-7 Newton
   iterations per step; at 1 digit, its cost, not IDA's, sets the ratio.
13. The Newton solve's forward substitution reads L by columns with a stride of N doubles and keeps the
   right-hand side in memory between columns (perf annotate, andrews BDF at rtol 1e-5: about a third
   of solve_corrector's samples). Item 14 found the cost to be failed store-to-load forwarding rather
   than the stride and addresses it from N = 12 on.

Items 14-17 (same-run A/B on one thread, the least CPU time of 3 repetitions per round, 100 members, on a
machine shared with a build; CPU time varied by 1-2 % between rounds):

14. Done: `lu_solve` substitutes four columns per sweep from N = 12 on (core/linalg.hpp,
   `substitution_block_min_size`). By single columns every b[r] was loaded and stored once per column,
   and the compiler's two-wide loads straddled the previous column's two-wide stores, so store-to-load
   forwarding failed on each (perf annotate, andrews BDF at rtol 1e-4: a tenth of solve_corrector's
   samples on the instruction after that load). Each b[i] still receives the textbook loop's
   operations in its order: bitwise the same results (tests/core/linalg_test.cpp compares bit
   patterns with the row-oriented loops for N = 1 ... 32, real and complex). Against 17a004f: andrews
   BDF 0.93-0.98 of the time (rtol 1e-4 ... 1e-8), Radau IIA 0.97-1.02; with blocks at N = 8
   car_axis BDF took 1.03 of the time, hence the threshold.
15. Measured, not adopted: two pivot steps per sweep in `lu_factor` (also bitwise the same factors):
   no gain beyond the noise for andrews, and Radau IIA on the slider crank took 1.01-1.13 of the time
   (its complex factorization).
16. Measured, not adopted: BDF's Jacobian refresh threshold raised by the stale shift's own contraction
   |1 - r| / (1 + r), r = c / c_old (corrector.hpp), so that a slow contraction the shift explains keeps
   the Jacobian (rtol 1e-4, 1e-6, 1e-8): 0.97-1.0 of the time on all four problems, Jacobians -6 to
   -30 %, Newton iterations +0.3 to +9 %. Thresholds 0.15 and 0.2 instead of 0.1 (cachegrind
   instruction counts, scd not measured): andrews -2 to -6 %, car_axis -2 to +3 %, the slider crank
   -8 to +0.3 %. Neither closes andrews' gap at 3-5 digits, which needs about 1.25x.
17. Measured, not adopted: compiling for the host's instruction set (-march=native, AVX-512, with
   -ffp-contract=off kept: the same steps and iterations): 0.92-1.02 of the time (andrews and car_axis,
   both methods). The IDA peer is Debian's generic build, so lockstep stays generic too.
"""


def fmt_time(seconds):
    if seconds is None or not math.isfinite(seconds):
        return "—"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def fmt_count(x):
    if x is None:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(r):
    if r is None:
        return "—"
    kind, value = r
    if kind == "below":
        return "(IDA less accurate)"
    if kind == "above":
        return f"> {value:.1f}"
    return f"{value:.1f}"


class Run:
    def __init__(self, problem, raw):
        self.solver = raw["solver"]
        self.tol = raw["tol"]
        self.exponent = round(-math.log10(self.tol))
        self.members = problem["members"]
        self.failed = raw["failed"]
        self.first_failure = raw.get("first_failure", "")
        self.times = raw["times"]
        self.cpu_times = raw.get("cpu_times", [])
        self.other_cores = raw.get("other_cores", [])
        self.best = raw["best_seconds"] / self.members  # wall time per member, fastest clean repetition
        self.clean = raw.get("clean", True)
        self.median = sorted(self.times)[len(self.times) // 2] / self.members
        self.cpu = (min(self.cpu_times) / self.members) if self.cpu_times else None
        self.steps, self.rejected, self.newton = raw["steps"], raw["rejected"], raw["newton"]
        self.lu, self.jac, self.model = raw["lu"], raw["jac"], raw["model"]
        self.scd = raw["scd"]  # count, min, p10, median, p90, max

    @property
    def usable(self):
        return self.failed == 0 and self.scd["median"] is not None


def nondominated(points):
    """(digits, time) points sorted by digits, without those another point beats: at least as accurate
    and no slower."""
    pts = sorted(points)
    return [(s, t) for s, t in pts if not any(s2 >= s and t2 <= t and (s2, t2) != (s, t) for s2, t2 in pts)]


def front(runs):
    """The work-precision front of one solver: (scd median, wall time per member) of its successful
    runs, sorted by scd, without dominated runs."""
    return nondominated((r.scd["median"], r.best) for r in runs if r.usable)


def time_at(pts, s):
    """Time per member the solver needs for s digits: log-linear interpolation on its front; None below
    its range, ('above', time of its most accurate run) above it."""
    if not pts:
        return None
    if s < pts[0][0]:
        return ("below", pts[0][1])
    if s > pts[-1][0]:
        return ("above", pts[-1][1])
    for (s0, t0), (s1, t1) in zip(pts, pts[1:]):
        if s0 <= s <= s1:
            if s1 == s0:
                return ("at", min(t0, t1))
            w = (s - s0) / (s1 - s0)
            return ("at", math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0))))
    return ("at", pts[-1][1])


def ratio_at(ida_front, s, lockstep_time):
    """IDA's time at s digits over lockstep_time: ('at', r), ('above', lower bound) when IDA never
    reached s digits, ('below', None) when IDA's loosest run was already more accurate."""
    t = time_at(ida_front, s)
    if t is None:
        return None
    kind, value = t
    if kind == "below":
        return ("below", None)
    return (kind, value / lockstep_time)


def best_lockstep_at(fronts, s):
    """The fastest lockstep method's time for at least s digits, which method it is and the digits that
    time buys: on a method's front within its range (log-linear), or, below its range, its loosest run,
    which is already more accurate than s ("equal or better scd"). None if no method reaches s."""
    best = None
    for name in LOCKSTEP:
        t = time_at(fronts.get(name, []), s)
        if not t or t[0] == "above":
            continue
        digits = s if t[0] == "at" else fronts[name][0][0]
        if best is None or t[1] < best[0]:
            best = (t[1], name, digits)
    return best


def common_ratios(fronts):
    """Ratios IDA / best lockstep at equal or better scd, on a grid of 0.25 digits over the accuracies
    both reach (from the loosest run of lockstep's methods and of IDA to the most accurate): IDA's
    time at s digits (log-linear on its front, never extrapolated) over lockstep's least time for at
    least s digits (best_lockstep_at). Entries are (s, ratio, lockstep method, digits its run reached)."""
    lock_pts = [pt for name in LOCKSTEP for pt in fronts.get(name, [])]
    ida = fronts["ida"]
    if not lock_pts or not ida:
        return []
    lo = max(min(s for s, _ in lock_pts), ida[0][0])
    hi = min(max(s for s, _ in lock_pts), ida[-1][0])
    out = []
    s = math.ceil(lo * 4) / 4
    while s <= hi + 1e-12:
        b = best_lockstep_at(fronts, s)
        t = time_at(ida, s)
        if b and t and t[0] == "at":
            out.append((s, t[1] / b[0], b[1], b[2]))
        s += 0.25
    return out


def plot(problem, runs_by_solver, path, threads):
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    for name in SOLVERS:
        runs = [r for r in runs_by_solver[name] if r.usable]
        if not runs:
            continue
        color, marker = STYLE[name]
        x = [r.best for r in runs]
        y = [r.scd["median"] for r in runs]
        lo = [r.scd["median"] - r.scd["p10"] for r in runs]
        hi = [r.scd["p90"] - r.scd["median"] for r in runs]
        ax.errorbar(x, y, yerr=[lo, hi], color=color, marker=marker, capsize=2, label=LABEL[name])
        for r in runs:
            ax.annotate(f"{r.exponent}", (r.best, r.scd["median"]), textcoords="offset points", xytext=(4, -10),
                        fontsize=7, color=color)
    ax.set_xscale("log")
    ax.set_xlabel(f"wall time per member ({threads} threads, {problem['members']:,} members, fastest clean run)")
    ax.set_ylabel("significant correct digits (median; bars: 10-90 %)")
    ax.set_title(TITLES.get(problem["problem"], problem["problem"]) + ": work-precision", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.text(0.01, 0.01, "labels: -log10(rtol), rtol = atol", fontsize=7, color="gray")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# Where a profiled function's time belongs: (category, pattern on the symbol, pattern on the object).
PROFILE_CATEGORIES = [
    ("model and its residual (M, Q, Phi and AD duals)", r"evaluate_residual|::constraint<|::force<|::mass<|"
     r"constraint_linearize|velocity_constraint\b|dual<|sincos|__sin|__cos|sqrt|"
     r"elementary::(sin|cos|tan|asin|acos|atan)", None),
    ("Jacobian (AD blocks, d(G^T mu)/dq)", r"evaluate_jacobian|_jacobian<|force_linearize|inertia_jacobian|"
     r"ggl_iteration_matrix|jacobian\(", None),
    ("Newton linear algebra (LU, solves, Newton iteration)", r"lu_factor|lu_solve|solve_newton|factor_newton|"
     r"solve_corrector|newton_norm|denseGETRF|denseGETRS|SUNLinSol|SUNDlsMat|SUNMat", None),
    ("BDF/Radau bookkeeping (predictor, divided differences, error estimates, step control)",
     r"divided_differences|evaluate_newton_form|lte_estimate|bdf_attempt|radau_attempt|error_weights|"
     r"internal_tolerance|pow|exp|log|dense_output|interpolat", None),
    ("IDA internals (step, Newton, norms, interpolation)", r"^IDA|^ida|idaNls|IDANls", r"libsundials_ida"),
    ("N_Vector operations", r"N_V", r"libsundials_nvec"),
    ("ensemble engine (member state load/store, scheduler)", r"soa_|advance_member|begin_member|run_chunked|"
     r"member_advance|record_constraint|make_multipliers|accelerations_and_multipliers|consistent_initialization", None),
    ("memory (malloc, memcpy, memset)", r"malloc|free|memcpy|memset|memmove|_int_", r"libc"),
]


def parse_perf(path):
    """(percent, object, symbol) rows of `perf report --stdio --no-children --sort dso,symbol`."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"\s+([0-9.]+)%\s+(\S+)\s+\[\.\]\s+(.*?)(\s+-\s+-)?\s*$", line)
            if m:
                rows.append((float(m.group(1)), m.group(2), m.group(3).strip()))
    return rows


def categorize(rows):
    """Shares by category: the symbol decides first (a library may hold functions of several kinds), then
    the object; unresolved addresses in a library count for that library's category."""
    totals = {}
    for pct, obj, sym in rows:
        cat = next((name for name, sym_re, _ in PROFILE_CATEGORIES if re.search(sym_re, sym)), None)
        if cat is None:
            cat = next((name for name, _, obj_re in PROFILE_CATEGORIES if obj_re and re.search(obj_re, obj)), "other")
        totals[cat] = totals.get(cat, 0.0) + pct
    return sorted(totals.items(), key=lambda kv: -kv[1])


def shorten(sym, width=90):
    sym = re.sub(r"lockstep::models::", "", sym)
    sym = re.sub(r"lockstep::", "", sym)
    return sym if len(sym) <= width else sym[: width - 1] + "…"


def write_scaling(w, scaling, figures, fig_rel):
    """The scaling section from work_precision --scaling's JSON."""
    sc = scaling["scaling"]
    runs = sc["runs"]
    w("## Scaling with the ensemble size and the thread count")
    w("")
    w(f"Regular double pendulum (theta1 = theta2 = 0.5, members perturbed as above) over [0, {sc['t1']:g}] at"
      f" rtol = atol = {sc['tol']:g}, {sc['save_count']} save times; each (solver, N) solved once after a wait for"
      " an idle machine (`work_precision --scaling`, run by `bench/run_performance.sh`). Time per member = wall"
      " time / N. The horizon is short so that N = 10^5 fits in minutes.")
    w("")
    sizes = sorted({r["members"] for r in runs})
    keys = []
    for r in runs:
        k = (r["solver"], r["threads"])
        if k not in keys:
            keys.append(k)
    by = {(r["solver"], r["threads"], r["members"]): r for r in runs}
    header = ["solver", "threads"] + [f"N = {n:,}" for n in sizes] + ["largest / smallest N"]
    rows = []
    for solver, threads in keys:
        cells = []
        per = []
        for n in sizes:
            r = by.get((solver, threads, n))
            if r is None:
                cells.append("—")
                continue
            t = r["seconds"] / n
            per.append(t)
            note = "" if r["other_cores"] is None or r["other_cores"] < 0.1 else f" ({r['other_cores']:.1f} other cores)"
            cells.append(fmt_time(t) + (f", {r['failed']} failed" if r["failed"] else "") + note)
        rows.append([LABEL.get(solver, solver), str(threads)] + cells + [f"{per[-1] / per[0]:.2f}" if len(per) > 1 else "—"])
    w(table(header, rows))
    w("")
    ratios = []
    for n in sizes:
        two = by.get(("lockstep-radau5", sc["threads"], n))
        one = by.get(("lockstep-radau5", 1, n))
        ida = by.get(("ida", sc["threads"], n))
        parts = []
        if two and one and sc["threads"] != 1:
            speedup = one['seconds'] / two['seconds']
            # Each (solver, N) runs once: a speed-up above the thread count is a disturbed run, not a result.
            flag = f" (above the bound of {sc['threads']}: one of the two runs was disturbed)" if speedup > 1.02 * sc["threads"] else ""
            parts.append(f"{sc['threads']} threads over 1: {speedup:.2f}x{flag}")
        if two and ida:
            parts.append(f"IDA / lockstep Radau IIA 5: {ida['seconds'] / two['seconds']:.2f}")
        if parts:
            ratios.append(f"- N = {n:,}: " + "; ".join(parts))
    if ratios:
        w("Ratios in the same run (wall time):")
        w("")
        for line in ratios:
            w(line)
        w("")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for solver, threads in keys:
        pts = [(n, by[(solver, threads, n)]["seconds"] / n) for n in sizes if (solver, threads, n) in by]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{LABEL.get(solver, solver)}, {threads} thread(s)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("members N")
    ax.set_ylabel("wall time per member [s]")
    ax.set_title("double pendulum: time per member against the ensemble size", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "scaling.png"), dpi=120)
    plt.close(fig)
    w(f"![time per member against N]({fig_rel}/scaling.png)")
    w("")


def lanes_pairs(problems):
    """(problem, exponent, BDF one member at a time, BDF in lanes, its raw run) of one run's problems."""
    pairs = []
    for p in problems:
        runs = {(r.solver, r.exponent): (r, raw) for raw in p["runs"] for r in [Run(p, raw)]}
        for (solver, e), (lanes, raw) in sorted(runs.items(), key=lambda kv: kv[0][1]):
            if solver == "lockstep-bdf-lanes" and ("lockstep-bdf", e) in runs:
                pairs.append((p["problem"], e, runs[("lockstep-bdf", e)][0], lanes, raw))
    return pairs


def write_lanes_table(w, pairs):
    """The speed-up of the lanes at each (problem, tolerance), their utilization and whether the bits
    were the same; then the summary line."""
    rows = []
    for problem, e, one, lanes, raw in pairs:
        speed = f"{one.best / lanes.best:.2f}x" if one.best and lanes.best else "—"
        use = raw.get("lane_utilization")
        rows.append((problem, f"1e-{e}", fmt_time(one.best), fmt_time(lanes.best), speed,
                     f"{use:.3f}" if use is not None else "—",
                     {True: "yes", False: "**no**"}.get(raw.get("bitwise_equal"), "not compared")))
    w(table(["problem", "rtol = atol", "one member at a time / member", "in lanes / member", "speed-up",
             "lane utilization", "same bits"], rows))
    w("")
    speeds = [one.best / lanes.best for _, _, one, lanes, _ in pairs if one.best and lanes.best]
    uses = [raw["lane_utilization"] for *_, raw in pairs if raw.get("lane_utilization") is not None]
    differ = sum(1 for *_, raw in pairs if raw.get("bitwise_equal") is False)
    use_text = f"; lane utilization {min(uses):.3f}-{max(uses):.3f}" if uses else ""
    w(f"Speed-up from {min(speeds):.2f}x to {max(speeds):.2f}x over {len(speeds)} cases{use_text};"
      f" {'every case gave the same bits' if differ == 0 else f'**{differ} cases gave other bits**'}.")
    w("")


def write_lanes(w, data, problems, also=None):
    """BDF with its members in SIMD lanes against BDF one member at a time, from the same run: the
    speed-up at each tolerance, the lanes' utilization and whether every member's results were the same
    bit for bit; `also`, where given, the same pair from a build for another instruction set."""
    pairs = lanes_pairs(problems)
    if not pairs:
        return
    w("## BDF in SIMD lanes against BDF one member at a time")
    w("")
    w(f"In this build the built-in engines run BDF's members in SIMD lanes, {data.get('bdf_lanes', '?')} per"
      " core (docs/SIMD.md, \"The lanes backend of a build for one instruction set\"): `lockstep BDF in SIMD"
      " lanes` is that engine through `solve_ensemble`, `lockstep BDF` the same method one member at a time,"
      " on the same members, threads and tolerances, interleaved in the same run. \"Same bits\": every member's"
      " status, counters and final positions equal bit for bit (`work_precision` compares them), so the accuracy"
      " columns of the two are one. \"Lane utilization\": the lane-attempts that advanced a member over those"
      " the lanes executed (the engine's own count, its table's `lanes_work`): below 1 where lanes idled at the end"
      " of a chunk or of a call of the engine, or held a member that had finished.")
    w("")
    write_lanes_table(w, pairs)
    if also:
        also_pairs = lanes_pairs(also["problems"])
        if also_pairs:
            w(f"### The same in a build for {also.get('instruction_set', '?')}, {also.get('bdf_lanes', '?')} lanes")
            w("")
            w(f"A second `work_precision`, built for `{also.get('instruction_set', '?')}`"
              " (`LOCKSTEP_INSTRUCTION_SET`), ran its own BDF one member at a time and in its lanes, interleaved, on"
              " the same members, threads and tolerances, after the runs above on the same machine (not"
              " interleaved with them): its speed-ups compare within its table.")
            w("")
            write_lanes_table(w, also_pairs)


# Hairer's RADAU5 on andrews, one core (the performance target: ten times its speed per core). Quoted,
# not measured by this command: (rtol, significant correct digits of the seven positions at t = 0.03
# against the IVP Test Set's published reference, seconds per solve).
RADAU5_ANDREWS = ((1e-8, 5.83, 1.88e-3), (1e-10, 6.85, 3.49e-3))


def write_radau5(w, problems, test_set):
    """lockstep's time per member and core on andrews at RADAU5's digits, against RADAU5's quoted times.
    test_set: method_orders --test-set-json (lockstep's digits on RADAU5's measure), or None."""
    andrews = next((p for p in problems if p["problem"] == "andrews"), None)
    if andrews is None:
        return
    runs = [Run(andrews, raw) for raw in andrews["runs"]]
    w("## Against Hairer's RADAU5, per core")
    w("")
    w("Hairer's RADAU5 (the Fortran code of Hairer and Wanner, *Solving Ordinary Differential Equations II*,"
      " 2nd ed., 1996) on Andrews' squeezer, driven as the IVP Test Set drives it (Mazzia and Magherini,"
      " *Test Set for IVP Solvers*, release 2.4, 2008: its andrews right-hand side and approximate Jacobian,"
      " index split 7/7/13, h0 = atol = rtol), one solve at a time on one core of this machine kind; digits"
      " are the significant correct digits of the seven positions at t = 0.03 against the Test Set's"
      " published end point, max |q_i - ref_i| / (1 + |ref_i|). These figures are quoted, not measured by this"
      " command (RADAU5 is not part of lockstep): they set the target of ten times RADAU5's speed per core,"
      " a tenth of its time per solve.")
    w("")
    if test_set is None:
        w("This run has no digits of lockstep's on that measure (`method_orders --test-set-json`), so it is"
          " not compared with them.")
        w("")
        return
    digits = test_set["digits"]
    digits["lockstep-bdf-lanes"] = digits.get("lockstep-bdf", {})  # the same bits (section above)
    w("lockstep's digits are on the same measure: the published problem (its parameters and start) solved"
      " once per tolerance by `build/bench/method_orders --test-set-json` (BDF in lanes gives BDF's bits, as"
      f" the section above checks). Its time is this run's: the CPU time per member of the {andrews['members']:,}"
      " perturbed members at that tolerance (one core's time: both threads' CPU time over the members), interpolated"
      " log-linearly in the digits between the tolerances around RADAU5's, on each method's front (a"
      " tolerance that is slower and less accurate than another is left out). RADAU5's times come from"
      " another instance of this machine kind, and instances of one kind have differed by up to 1.5x in one"
      " solver's time (section \"The same command on two machine instances\" below), so the ratios carry that"
      " uncertainty; docs/SIMD.md (\"The lanes backend of a build for one instruction set\") times RADAU5 and"
      " lockstep alternating on one core of one instance (with the plain relative error of the positions as"
      " its measure of digits).")
    w("")
    per_tol = []
    for r in runs:
        d = digits.get(r.solver, {}).get(str(r.exponent))
        if r.solver in LOCKSTEP and d is not None and r.failed == 0 and r.cpu is not None:
            per_tol.append((r.solver, r.exponent, d, r.cpu))
    rows = []
    for solver in LOCKSTEP:
        cells = [f"1e-{e}: {d:.2f}, {fmt_time(t)}" for s, e, d, t in sorted(per_tol, key=lambda x: x[1]) if s == solver]
        if cells:
            rows.append((LABEL[solver], "; ".join(cells)))
    w(table(["solver", "rtol: digits, CPU time per member"], rows))
    w("")
    rows = []
    for rtol, target_digits, seconds in RADAU5_ANDREWS:
        row = [f"{target_digits:.2f}", f"{fmt_time(seconds)} (rtol {rtol:.0e})", fmt_time(seconds / 10)]
        for solver in LOCKSTEP:
            at = time_at(nondominated((d, t) for s, _, d, t in per_tol if s == solver), target_digits)
            if at is None:
                row.append("not run")
            elif at[0] == "above":
                row.append("not reached")
            elif at[0] == "below":
                row.append(f"{fmt_time(at[1])} ({seconds / at[1]:.1f}x; its loosest run is more accurate)")
            else:
                row.append(f"{fmt_time(at[1])} ({seconds / at[1]:.1f}x)")
        rows.append(row)
    w(table(["digits", "RADAU5 per solve", "target per member"] + [f"{LABEL[s]} (RADAU5 / it)" for s in LOCKSTEP],
            rows))
    w("")


def write(args):
    with open(args.json) as f:
        data = json.load(f)
    machine = json.load(open(args.machine)) if args.machine else {}
    os.makedirs(args.figures, exist_ok=True)
    fig_rel = os.path.relpath(args.figures, os.path.dirname(os.path.abspath(args.out)))
    threads = data["threads"]
    problems_all = data["problems"]

    lines = []
    w = lines.append
    w("# lockstep against its peers: work-precision on the hard problems and on a non-stiff one")
    w("")
    w("Generated by `bench/write_performance.py` from one run of `bench/run_performance.sh` (program")
    w("`bench/peers/work_precision.cpp`, IDA peer `bench/peers/ida_peer.hpp`), except the section \"Non-stiff")
    w("members\", which `bench/explicit_speed.py` writes (peers JAX + diffrax and SciPy); do not edit by hand,")
    w("rerun the command. Speed is only ever a ratio measured in the same run, on the same cores.")
    w("")
    w("## Run")
    w("")
    w(f"- Command, from the repository root: `{machine.get('command', 'bench/run_performance.sh')}`"
      f" (wall time {machine.get('seconds', '?')} s, including the build check, idle waits and profiles)")
    w(f"- Date: {machine.get('start', '?')} (UTC, start of the run)")
    w(f"- Source: {machine.get('revision', '?')}")
    w(f"- Machine: `nproc` = {machine.get('nproc', '?')}, CPU model \"{machine.get('cpu_model', '?')}\","
      f" Linux {machine.get('kernel', '?')}")
    w(f"- Compiler: {machine.get('compiler', '?')}; flags `{machine.get('flags', '-O3 -DNDEBUG')}` plus the project's"
      " `-ffp-contract=off` and `-fopenmp`; lockstep built for the instruction set"
      f" `{machine.get('instruction_set', 'baseline')}` (`LOCKSTEP_INSTRUCTION_SET`)")
    w(f"- SUNDIALS {data.get('sundials_version', '?')} (Debian package {machine.get('sundials_package', '?')},"
      " its own build flags)")
    reps = ", ".join(f"{p['problem']} {p.get('reps', data['reps'])}" for p in data["problems"])
    w(f"- {threads} threads for every solver (lockstep's omp backend: its thread team; IDA: an OpenMP loop); each (solver, tolerance) solved the whole ensemble"
      f" several times ({reps}), interleaved (repetition, tolerance, solver); the tables show the fastest"
      f" clean run (other processes can only slow a run down): before each run the program waits up to"
      f" {data.get('idle_wait', 20):g} s for an idle machine, a run is clean when other processes kept fewer than"
      f" {data.get('max_other_cores', 0.1):g} cores busy meanwhile (from /proc/stat), and a case without a clean run is"
      f" repeated up to {data.get('retries', 3)} times. `other cores (least)` is the fewest cores other processes kept"
      " busy during any run of the case.")
    all_runs = [Run(p, raw) for p in problems_all for raw in p["runs"]]
    disturbed = [r for r in all_runs if not r.clean]
    if all_runs and len(disturbed) == len(all_runs):
        w("- **Every timed run shared the machine with other processes** (other builds kept about"
          f" {min(min(r.other_cores) for r in all_runs if r.other_cores):.1f} or more cores busy: see `other cores` in"
          " the tables and the load log below). The solvers ran interleaved under the same load, so the ratios"
          " compare like with like, but absolute times are slower than on an idle machine and the thread scaling"
          " below is distorted. Rerun the command on an idle machine for clean figures.")
    elif disturbed:
        w(f"- {len(disturbed)} of {len(all_runs)} cases had no clean run (marked †).")
    if machine.get("load_log"):
        w("- Machine load while the benchmark ran (run log):")
        w("")
        w("```")
        for entry in machine["load_log"]:
            w(entry)
        w("```")
    w("")

    w("## What is compared")
    w("")
    w("- **lockstep BDF** (variable order 1-5) on the stabilized index-2 form ggl, and **lockstep Radau IIA 5** on")
    w("  the index-3 form, through `solve_ensemble` on the omp backend.")
    if data.get("bdf_lanes", 0) > 0:
        w(f"- **lockstep BDF in SIMD lanes**: the same BDF on ggl through the built-in engine, which in this build runs"
          f" {data['bdf_lanes']} members per core in SIMD lanes (section \"BDF in SIMD lanes against BDF one member at"
          " a time\" below), on the same omp backend.")
    w("- **SUNDIALS IDA** on the same ggl residual (the function lockstep's methods evaluate), one `IDASolve`")
    w("  per member, members spread over as many threads by an OpenMP loop (dynamic schedule, one IDA workspace per")
    w("  thread re-initialized with `IDAReInit`). Its setting: multipliers marked algebraic (`IDASetId`) and")
    w("  left out of the error test (`IDASetSuppressAlg`); dense direct solver (`SUNDenseMatrix` +")
    w("  `SUNLinSol_Dense`) with the exact iteration matrix dF/dy + c_j dF/dy' from lockstep's automatic")
    w("  differentiation (`IDASetJacFn`); consistent initial values from lockstep's consistent initialization;")
    w("  the same rtol and atol; lockstep's first step (`IDASetInitStep`) and the multipliers' Newton weights")
    w("  scaled by h (`IDAWFtolerances`) — without these two IDA fails at t = 0 on andrews at rtol <= 1e-6 and")
    w("  <= 1e-8 (`bench/peers/ida_peer.hpp` says why); everything else at IDA's defaults.")
    w(f"- rtol = atol = 1e-{data['tol_min']} … 1e-{data['tol_max']} for q, v and the multipliers; the same"
      " save times for all solvers (10, evenly spaced, t1 included; outputs by dense output, no step shortened"
      " for them).")
    sizes = ", ".join(f"{p['problem']} {p['members']:,} ({p.get('reps', data['reps'])})" for p in problems_all)
    w(f"- Ensembles (members, timed repetitions): {sizes}. The slider crank's members take many times the steps"
      " of the others (tables), so its ensemble is smaller, to keep the whole run near 20 minutes; 128 members"
      " keep both threads of lockstep's omp backend busy (its dynamic schedule hands out 64 members at a time).")
    w("- Members differ: every model parameter is its default times (1 + 0.01 (2u - 1)), u from Philox keyed by"
      " (seed 1, member) (`bench/peers/peer_problems.hpp`); andrews and car_axis start from their published"
      " point, projected onto each member's constraints by the consistent initialization.")
    w("- Accuracy, measured per member: significant correct digits of the final positions,")
    w("  scd = -log10(max_i |q_i - ref_i| / (atol/rtol + |ref_i|)), against a reference for every member:")
    w("  lockstep Radau IIA 5 at rtol = atol = 1e-13 (there every method works at the internal-tolerance floor of")
    w("  1000 eps, method/tolerance_calibration.hpp, and Radau IIA 5 keeps order 5). Tables give the median over members and the")
    w("  worst member; figures the median with the 10-90 % range.")
    w("- Counters are per-member means: accepted steps, rejected steps (error test and Newton failures),")
    w("  Newton iterations, LU factorizations (Radau: its real and complex matrices count as two; IDA: linear")
    w("  solver setups, each with a Jacobian evaluation), Jacobian evaluations, model (residual) evaluations.")
    w("")

    problems = data["problems"]
    # ---- the reference ----
    w("### The reference and its cross-checks")
    w("")
    w("Agreement digits (the same measure with floor 1) between the reference and other accurate solutions on a"
      " sample of members. The reference can certify an scd only up to about its agreement with independent"
      " solutions; scd values above that (marked * in the tables) measure the reference as much as the solver.")
    w("")
    rows = []
    ceiling = {}
    for p in problems:
        ref = p["reference"]
        independent = []
        for c in ref["checks"]:
            d = c["digits"]
            rows.append((p["problem"], f"{ref['solver']} rtol {ref['rtol']:.0e} ({ref['failed']} of {p['members']} failed,"
                         f" {ref['mean_steps']:,.0f} steps/member)" if c is ref["checks"][0] else "",
                         c["what"], f"{c['sample']}", f"{c['failed']}",
                         "—" if d["min"] is None else f"{d['min']:.2f}",
                         "—" if d["median"] is None else f"{d['median']:.2f}"))
            if d["min"] is not None and not c["what"].startswith("lockstep-radau5"):
                independent.append(d["median"])
        ceiling[p["problem"]] = max(independent) if independent else None
    w(table(["problem", "reference", "checked against", "members", "failed", "agreement digits (min)",
             "(median)"], rows))
    w("")
    w("The target: the reference and IDA at its tightest setting agree to 8 digits:")
    w("")
    for p in problems:
        ida_checks = [c for c in p["reference"]["checks"] if c["what"].startswith("ida")]
        for c in ida_checks:
            d = c["digits"]
            failed = (f" ({c['failed']} of {c['sample']} sampled members failed at this tolerance: "
                      f"`{c['first_failure']}`)") if c["failed"] else ""
            if d["min"] is None:
                w(f"- {p['problem']}: {c['what']} failed on every sampled member — not checked{failed}.")
            elif d["min"] >= 8.0:
                w(f"- {p['problem']}: yes — {c['what']} agrees to {d['min']:.1f} digits or more (median"
                  f" {d['median']:.1f}) on the {d['count']} members it solved{failed}.")
            else:
                bdf = next((b["digits"] for b in p["reference"]["checks"] if b["what"].startswith("lockstep-bdf")), None)
                if bdf and bdf["min"] is not None and bdf["min"] < 8.0:
                    why = (f" lockstep's BDF at the reference tolerance agrees with it to only {bdf['min']:.1f} digits"
                           f" (median {bdf['median']:.1f}) as well, so the solutions of this problem are limited to about"
                           f" {ceiling[p['problem']]:.1f} digits by its conditioning and round-off, not by one solver;"
                           " scd values above that limit are marked * in the tables.")
                else:
                    why = " lockstep's BDF agrees with the reference to 8 digits or more, so IDA's is the less accurate solution."
                w(f"- {p['problem']}: **no** — {c['what']} agrees to only {d['min']:.1f} digits (median"
                  f" {d['median']:.1f}) with the reference on the {d['count']} members it solved{failed};{why}")
    w("")

    # ---- IDA variants ----
    if any(p.get("ida_variants") for p in problems):
        w("### IDA without the peer's two settings")
        w("")
        w("The same IDA on a sample of members, with IDA's own first step and/or plain (unscaled) multiplier"
          " weights in its Newton test: members that failed of those run, and the median scd of the others."
          " The last row is the peer's setting on the whole ensemble (from the tables below).")
        w("")
        tols = list(range(data["tol_min"], data["tol_max"] + 1))
        for p in problems:
            variants = p.get("ida_variants", [])
            if not variants:
                continue
            names = []
            for v in variants:
                if v["variant"] not in names:
                    names.append(v["variant"])
            rows = []
            for name in names:
                cells = []
                for e in tols:
                    v = next((v for v in variants if v["variant"] == name and round(-math.log10(v["tol"])) == e), None)
                    if v is None:
                        cells.append("—")
                        continue
                    med = v["scd"]["median"]
                    cells.append(f"{v['failed']}/{v['sample']} failed" + (f", {med:.1f}" if med is not None else ""))
                rows.append([name] + cells)
            peer = {Run(p, raw).exponent: Run(p, raw) for raw in p["runs"] if raw["solver"] == "ida"}
            rows.append(["the peer: lockstep's first step, h-scaled weights"] + [
                (f"{peer[e].failed}/{peer[e].members} failed" + (f", {peer[e].scd['median']:.1f}" if peer[e].scd["median"]
                                                                 is not None else "")) if e in peer else "—"
                for e in tols])
            w(f"{p['problem']}:")
            w("")
            w(table(["IDA setting"] + [f"1e-{e}" for e in tols], rows))
            w("")
        first = [v for p in problems for v in p.get("ida_variants", []) if v["failed"] and v["first_failure"]]
        if first:
            w(f"A typical failure: `{first[0]['first_failure']}`.")
            w("")

    # ---- targets ----
    w("## Throughput targets: IDA time / lockstep time at equal scd")
    w("")
    w(f"Target: lockstep (the fastest of its methods at each accuracy) at least {TARGET:.0f}x faster than IDA,"
      " at equal or better scd. At s digits (median scd), on a grid of 0.25 digits over the accuracies both"
      " reach: IDA's wall time per member interpolated at s (log-linear"
      " between its runs, on its work-precision front, never extrapolated) over lockstep's least time for"
      " at least s digits (the same interpolation on each method's front; below a method's range, its"
      " loosest run, which is already more accurate: the table then names the digits that run reached).")
    w("")
    rows = []
    verdicts = {}
    for p in problems:
        runs = [Run(p, r) for r in p["runs"]]
        fronts = {name: front([r for r in runs if r.solver == name]) for name in SOLVERS}
        cr = common_ratios(fronts)
        if not cr:
            rows.append((p["problem"], "—", "—", "—", "—", "no common accuracy range", "not measured"))
            verdicts[p["problem"]] = "not measured"
            continue
        ratios = [r for _, r, _, _ in cr]
        below = [s for s, r, _, _ in cr if r < TARGET]
        at_int = []
        for s, r, who, digits in cr:
            if abs(s - round(s)) < 1e-9:
                method = METHOD[who]
                run = f"{method} at {digits:.2f} digits" if digits > s + 1e-9 else method
                at_int.append(f"{s:.0f}: {r:.1f} ({run})")
        if not below:
            verdict = "met"
        elif len(below) == len(cr):
            verdict = "missed"
        else:
            verdict = f"met above {max(below) + 0.25:.2f} digits, missed below" if all(
                s < min(s2 for s2, r2, _, _ in cr if r2 >= TARGET) for s in below) else "met in part"
        verdicts[p["problem"]] = verdict
        rows.append((p["problem"], f"{cr[0][0]:.2f} … {cr[-1][0]:.2f}", f"{min(ratios):.1f}",
                     f"{sorted(ratios)[len(ratios) // 2]:.1f}", f"{max(ratios):.1f}", "; ".join(at_int), verdict))
    w(table(["problem", "common scd range", "min ratio", "median ratio", "max ratio",
             "ratio at whole digits (fastest lockstep method)", f"target >= {TARGET:.0f}"], rows))
    w("")
    write_lanes(w, data, problems, json.load(open(args.lanes_also)) if args.lanes_also else None)
    write_radau5(w, problems, json.load(open(args.test_set_digits)) if args.test_set_digits else None)

    # ---- per problem ----
    for p in problems:
        name = p["problem"]
        runs = [Run(p, r) for r in p["runs"]]
        by_solver = {s: sorted([r for r in runs if r.solver == s], key=lambda r: r.exponent) for s in SOLVERS}
        fronts = {s: front(by_solver[s]) for s in SOLVERS}
        fig_name = f"wp_{name}.png"
        plot(p, by_solver, os.path.join(args.figures, fig_name), threads)
        w(f"## {TITLES.get(name, name)}")
        w("")
        extra = ""
        if "inputs" in p:
            extra = " Initial inputs: " + ", ".join(f"{k} = {v:g}" for k, v in p["inputs"].items()) + "."
        w(f"{p['members']:,} members (n = {p['n']}, m = {p['m']}), {p.get('reps', data['reps'])} timed repetitions.{extra}")
        w("")
        w(f"![work-precision, {name}]({fig_rel}/{fig_name})")
        w("")
        rows = []
        cap = ceiling.get(name)
        for s in SOLVERS:
            for r in by_solver[s]:
                scd = r.scd
                if scd["median"] is None:
                    digits = "—"
                else:
                    star = "*" if cap is not None and scd["median"] > cap else ""
                    digits = f"{scd['median']:.2f}{star} [{scd['min']:.2f}]"
                ratio = "—"
                if s in LOCKSTEP and r.usable:
                    ratio = fmt_ratio(ratio_at(fronts["ida"], r.scd["median"], r.best))
                failed = f"{r.failed}" if r.failed == 0 else f"**{r.failed}**"
                other = min(r.other_cores) if r.other_cores else float("nan")
                best = fmt_time(r.best) + ("" if r.clean else " †")
                rows.append((LABEL[s], f"1e-{r.exponent}", failed, fmt_count(r.steps), fmt_count(r.rejected),
                             fmt_count(r.newton), fmt_count(r.lu), fmt_count(r.jac), fmt_count(r.model), digits,
                             best, fmt_time(r.median), fmt_time(r.cpu), f"{other:.2f}", ratio))
        w(table(["solver", "rtol = atol", "failed", "steps", "rejected", "Newton it.", "LU", "Jacobians", "model evals",
                 "scd median [worst]", "wall / member", "(median run)", "CPU / member", "other cores (least)",
                 "IDA / this at equal scd"], rows))
        w("")
        if any(not r.clean for r in runs):
            w("† other processes kept at least 0.1 cores busy during every run of this case, retries included: its"
              " time is the fastest disturbed run, an upper bound.")
            w("")
        fails = [r for r in runs if r.failed]
        for r in fails:
            w(f"- {LABEL[r.solver]} at 1e-{r.exponent}: {r.failed} of {r.members} members failed; first: {r.first_failure}")
        if fails:
            w("")

    # ---- where the time goes ----
    w("## Where the time goes")
    w("")
    w("Per step, at each problem's rtol = atol = 1e-8 (wall time of the fastest clean run, per accepted"
      " step; Newton iterations, model evaluations, LU factorizations and Jacobians per accepted step):")
    w("")
    rows = []
    for p in problems:
        for r in (Run(p, raw) for raw in p["runs"]):
            if r.exponent != 8 or not r.usable or not r.steps:
                continue
            rows.append((p["problem"], LABEL[r.solver], fmt_time(r.best / r.steps), f"{r.newton / r.steps:.2f}",
                         f"{r.model / r.steps:.2f}", f"{r.lu / r.steps:.3f}", f"{r.jac / r.steps:.3f}",
                         fmt_time(r.best / r.model), f"{r.scd['median']:.2f}"))
    w(table(["problem", "solver", "time / step", "Newton it. / step", "model evals / step", "LU / step",
             "Jacobians / step", "time / model eval", "scd"], rows))
    w("")
    per_step = []
    for p in problems:
        at8 = {r.solver: r for r in (Run(p, raw) for raw in p["runs"]) if r.exponent == 8 and r.usable and r.steps}
        if "ida" in at8 and "lockstep-bdf" in at8:
            ida, bdf = at8["ida"], at8["lockstep-bdf"]
            per_step.append(f"{p['problem']} {(ida.best / ida.steps) / (bdf.best / bdf.steps):.1f}x per step and"
                            f" {(ida.best / ida.model) / (bdf.best / bdf.model):.1f}x per model evaluation")
    if per_step:
        w("IDA's cost over lockstep BDF's at rtol 1e-8: " + "; ".join(per_step) + ". IDA's time goes to its own"
          " machinery (N_Vector operations, norms, its dense solve, step bookkeeping: profiles below) more than to"
          " the model, which both codes evaluate with the same function.")
        w("")
    profiles = machine.get("profiles", [])
    if profiles:
        w("`perf record` (cpu-clock samples; the virtual machine exposes no hardware counters) of one thread solving"
          " the profiled case, each solver in its own process without the reference; shares of the samples by"
          " function, grouped by what the function does (functions below 0.05 % are not listed, so a column may"
          " sum to less than 100 %). The commands are in `bench/run_performance.sh`.")
        w("")
        for prof in profiles:
            rows_p = parse_perf(prof["report"])
            if not rows_p:
                continue
            w(f"### {prof['title']}")
            w("")
            cats = categorize(rows_p)
            w(table(["where", "share of samples"], [(c, f"{v:.1f} %") for c, v in cats if v >= 0.5]))
            w("")
            w(table(["share", "object", "function (top 10)"],
                    [(f"{pct:.1f} %", obj, "`" + shorten(sym) + "`") for pct, obj, sym in rows_p[:10]]))
            w("")
    w(ANALYSIS)
    w("")
    if args.scaling:
        with open(args.scaling) as f:
            write_scaling(w, json.load(f), args.figures, fig_rel)
    # Sections other scripts write between their markers (bench/explicit_speed.py): kept as they are.
    for section in marked_sections(args.out):
        w("")
        w(section)
    # Measurements of earlier changes, kept with the document: recorded once from the commits they
    # compare, not rerun by this command (bench/performance_history.md says how each was made).
    history = os.path.join(os.path.dirname(os.path.abspath(__file__)), "performance_history.md")
    if os.path.exists(history):
        w("")
        with open(history) as f:
            w(f.read().rstrip("\n"))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}; targets: " + ", ".join(f"{k} {v}" for k, v in verdicts.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--machine", help="JSON: command, seconds, start, revision, nproc, cpu_model, ...")
    ap.add_argument("--out", default="docs/PERFORMANCE.md")
    ap.add_argument("--figures", default="docs/figures/performance")
    ap.add_argument("--scaling", help="JSON of work_precision --scaling: adds the scaling section")
    ap.add_argument("--test-set-digits", help="JSON of method_orders --test-set-json: lockstep's digits on andrews"
                    " on RADAU5's measure, for the section against RADAU5")
    ap.add_argument("--lanes-also", help="JSON of work_precision (BDF and BDF in lanes) built for another"
                    " instruction set, with its \"instruction_set\": adds its table to the lanes section")
    write(ap.parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
