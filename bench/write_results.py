#!/usr/bin/python3
"""bench/write_results.py — turns the JSON of one bench/run_scale.sh run into bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3); standard library only.

    write_results.py --json-dir DIR --build-dir DIR --command CMD --start ISO --seconds S --out RESULTS.md
    write_results.py --check-threads threads.json     exit 0 if the thread-ratio cases were undisturbed

Every figure is computed from the JSON of the same run: a case's time is the fastest of its
repetitions (other processes can only slow a case down), and every speed is reported as a ratio
against a bound measured in that run (the 2-thread bound is the ratio the omp backend's launch reaches on
pure arithmetic; the single-member bound is solve_member on the same inputs).
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

from results_section import marked_sections

NAME = re.compile(r"^(?P<group>scale|threads|path)/(?P<model>\w+)/(?P<path>\w+)(?:/T:(?P<threads>\d+))?(?:/N:(?P<n>\d+))?")
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

# Targets from the project's brief.
THREAD_TARGET = 1.8      # omp 2 threads over 1 thread, N >= 1000
FLAT_TARGET = 1.20       # max/min cost per member, pendulum N = 1e3 .. 1e6
PATH_TARGET = 1.15       # ensemble path time over solve_member time, andrews N = 1000
# A thread-ratio measurement counts as undisturbed when the arithmetic bound reaches this ratio and
# other processes kept less than this many cores busy during the 2-thread cases.
BOUND_OK = 1.8
OTHER_CORES_OK = 0.2


class Case:
    """All repetitions of one benchmark, from one JSON file."""

    def __init__(self, key, runs, source):
        self.key = key
        self.runs = runs
        self.source = source
        self.seconds = [r["real_time"] * UNIT[r["time_unit"]] for r in runs]
        self.best = runs[min(range(len(runs)), key=lambda i: self.seconds[i])]

    @property
    def time(self):  # seconds per pass, fastest repetition
        return min(self.seconds)

    @property
    def median(self):
        return statistics.median(self.seconds)

    def counter(self, name, default=float("nan")):
        return self.best.get(name, default)

    @property
    def passes(self):
        return sum(int(r["iterations"]) for r in self.runs)


def load(path):
    with open(path) as f:
        data = json.load(f)
    groups = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        m = NAME.match(b["run_name"])
        if not m:
            continue
        key = (m["group"], m["model"], m["path"], int(m["threads"] or 0), int(m["n"] or 0))
        groups.setdefault(key, []).append(b)
    cases = {k: Case(k, v, os.path.basename(path)) for k, v in groups.items()}
    return data.get("context", {}), cases


def thread_figures(cases):
    """T:1 / T:2 time ratios of one threads JSON: {model: (t1 case, t2 case, ratio)}."""
    out = {}
    for model in ("spin", "pendulum", "andrews"):
        one = [c for k, c in cases.items() if k[0] == "threads" and k[1] == model and k[3] == 1]
        two = [c for k, c in cases.items() if k[0] == "threads" and k[1] == model and k[3] == 2]
        if one and two:
            out[model] = (one[0], two[0], one[0].time / two[0].time)
    return out


def threads_undisturbed(fig):
    if "spin" not in fig:
        return False
    bound = fig["spin"][2]
    other = max(fig[m][1].counter("other_cores", 0.0) for m in fig)
    return bound >= BOUND_OK and other < OTHER_CORES_OK


def check_threads(path):
    _, cases = load(path)
    fig = thread_figures(cases)
    ok = threads_undisturbed(fig)
    parts = [f"{m} {r:.3f}" for m, (_, _, r) in fig.items()]
    other = max((fig[m][1].counter("other_cores", 0.0) for m in fig), default=float("nan"))
    print(f"{os.path.basename(path)}: T1/T2 ratios {', '.join(parts)}; other cores during T:2 up to {other:.2f}: "
          f"{'undisturbed' if ok else 'DISTURBED'}")
    return 0 if ok else 1


# ---- machine description -----------------------------------------------------------------------------

def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def hypervisor():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " hypervisor" in line for line in f)
    except OSError:
        return False


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def mem_total():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def cmake_cache(build_dir, key):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


# ---- formatting ----------------------------------------------------------------------------------------

def si(x, digits=3):
    if x != x:
        return "n/a"
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= scale:
            return f"{x / scale:.{digits}g}{suffix}"
    return f"{x:.{digits}g}"


def duration(s):
    if s >= 1.0:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def nice_n(n):
    e = len(str(n)) - 1
    return f"1e{e}" if n == 10 ** e and n >= 1000 else str(n)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def verdict(ok):
    return "met" if ok else "**missed**"


# ---- the report ----------------------------------------------------------------------------------------

def write(args):
    files = sorted(glob.glob(os.path.join(args.json_dir, "*.json")))
    contexts, cases = {}, {}
    threads_runs = []
    for path in files:
        ctx, cs = load(path)
        name = os.path.basename(path)
        contexts[name] = ctx
        if name.startswith("threads-"):
            threads_runs.append((name, cs))
        else:
            cases.update(cs)
    if not cases:
        sys.exit(f"write_results.py: no benchmark results in {args.json_dir}")

    # The thread-ratio attempt reported: the last undisturbed one, else the one with the best bound.
    attempts = [(name, thread_figures(cs)) for name, cs in threads_runs]
    chosen = None
    for name, fig in attempts:
        if threads_undisturbed(fig):
            chosen = (name, fig)
    if chosen is None and attempts:
        chosen = max(attempts, key=lambda a: a[1].get("spin", (None, None, 0.0))[2])

    def case(group, model, path, n, t=0):
        return cases.get((group, model, path, t, n))

    lines = []
    w = lines.append
    w("# Ensemble scaling on the CPU backends")
    w("")
    w("Generated by `bench/write_results.py` from one run of `bench/run_scale.sh` (Google Benchmark program")
    w("`bench/ensemble_scale.cpp`); do not edit by hand, rerun the command. Every speed figure is a ratio")
    w("against a bound measured in the same run; a case's time is the fastest of its repetitions (other")
    w("processes can only slow a case down), the median is shown beside it. Section 6 comes from a run of")
    w("`bench/thread_wait.sh` of its own, which says how it was made; a rerun of `bench/run_scale.sh` keeps it.")
    w("")
    w("## Run")
    w("")
    any_ctx = next(iter(contexts.values()), {})
    compiler = cmake_cache(args.build_dir, "CMAKE_CXX_COMPILER") or "c++"
    compiler_version = sh([compiler, "--version"]).splitlines()
    gb_version = sh(["dpkg-query", "-W", "-f=${Version}", "libbenchmark-dev"]) or "unknown"
    w(f"- Command, from the repository root: `{args.command}` (wall time {args.seconds} s, including waits"
      f" for an idle machine)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = sh(["git", "-C", root, "log", "-1", "--format=%h"])  # the hash alone: the document quotes it
    # "XY path" lines; the first one's leading blank is stripped by sh(), so split instead of slicing.
    dirty = [l.split(None, 1)[1] for l in sh(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"]).splitlines() if l.strip()]
    w(f"- Date: {args.start} (UTC, start of the run)")
    w(f"- Source: commit {commit or 'unknown (not a git checkout)'}"
      + (f", with uncommitted changes to {', '.join('`' + l + '`' for l in dirty)}" if dirty else ""))
    w(f"- Machine: `nproc` = {sh(['nproc']) or os.cpu_count()}, CPU model \"{cpu_model()}\""
      f" ({any_ctx.get('mhz_per_cpu', '?')} MHz reported{', virtual machine' if hypervisor() else ''}),"
      f" memory {mem_total()}, Linux {os.uname().release}")
    w(f"- Compiler: {compiler_version[0] if compiler_version else compiler}; flags"
      f" `{cmake_cache(args.build_dir, 'CMAKE_CXX_FLAGS_RELEASE')}` (Release) plus the project's `-ffp-contract=off`")
    w(f"- Google Benchmark {gb_version} (Debian package; it reports its own library build type as"
      f" \"{any_ctx.get('library_build_type', '?')}\", which concerns the harness, not the code measured)")
    w("- Other work may share the two cores. Load average (1, 5, 15 min) when each benchmark process started:")
    for name, ctx in contexts.items():
        la = ", ".join(f"{x:.2f}" for x in ctx.get("load_avg", []))
        w(f"  `{name}`: {la}")
    w("  Each case also records `other cores`: the mean number of cores other processes kept busy while it ran")
    w("  (machine busy time from /proc/stat minus this process's CPU time, over the case's wall time).")
    log_path = os.path.join(args.json_dir, "run.log")
    if os.path.exists(log_path):
        w("- Run log (idle waits, load averages, thread-ratio checks):")
        w("")
        w("```")
        with open(log_path) as f:
            w(f.read().rstrip())
        w("```")
    w("")

    # ---- targets --------------------------------------------------------------------------------------
    summary = []
    thread_rows, bound = [], float("nan")
    if chosen:
        fig = chosen[1]
        bound = fig["spin"][2] if "spin" in fig else float("nan")
        for model in ("pendulum", "andrews"):
            if model in fig:
                one, two, ratio = fig[model]
                n = int(one.counter("members"))
                summary.append((f"omp 2 threads / 1 thread, {model} N = {nice_n(n)}", f">= {THREAD_TARGET}",
                                f"{ratio:.2f} (bound {bound:.2f}, {ratio / bound:.0%} of it"
                                + ("" if threads_undisturbed(fig) else "; machine shared, see section 2") + ")",
                                verdict(ratio >= THREAD_TARGET)))
    flat_ns = [n for n in (1000, 10000, 100000, 1000000) if case("scale", "pendulum", "serial", n)]
    per_member = {n: case("scale", "pendulum", "serial", n).time / n for n in flat_ns}
    flat = max(per_member.values()) / min(per_member.values()) if per_member else float("nan")
    if per_member:
        summary.append((f"pendulum cost per member, max/min over N = {', '.join(nice_n(n) for n in flat_ns)}",
                        f"<= {FLAT_TARGET:.2f}", f"{flat:.3f}", verdict(flat <= FLAT_TARGET)))
    pe, ps = case("path", "andrews", "ensemble", 1000), case("path", "andrews", "solve_member", 1000)
    if pe and ps:
        summary.append(("ensemble path / 1000 solve_member calls, andrews N = 1000 (serial)", f"<= {PATH_TARGET}",
                        f"{pe.time / ps.time:.3f}", verdict(pe.time / ps.time <= PATH_TARGET)))
        summary.append(("ensemble and solve_member results bitwise equal", "yes",
                        "yes" if pe.counter("bitwise_equal", 0) == 1 and ps.counter("bitwise_equal", 0) == 1 else "no",
                        verdict(pe.counter("bitwise_equal", 0) == 1)))
    w("## Targets")
    w("")
    w(table(["measure", "target", "measured", "verdict"], summary))
    w("")

    # ---- 1. throughput ----------------------------------------------------------------------------------
    w("## 1. Throughput and wall time per member (serial backend, one core)")
    w("")
    w("pendulum: ggl BDF, rtol = atol = 1e-6, t in [0, 0.5], theta0 spread evenly over [0.9, 1.1] rad.")
    w("andrews: ggl BDF, rtol = atol = 1e-5, t in [0, 0.003], motor torque spread over [1, 1.001] x default")
    w("(the published start is the only consistent one). Both save 4 points (t1/4 .. t1). `passes` counts")
    w("the timed solves of the whole ensemble over all repetitions.")
    w("")
    rows = []
    for model in ("pendulum", "andrews"):
        for n in sorted(k[4] for k in cases if k[:3] == ("scale", model, "serial")):
            c = case("scale", model, "serial", n)
            steps = c.counter("steps")
            rows.append((model, nice_n(n), c.passes, duration(c.time), duration(c.median), f"{steps / n:.1f}",
                         f"{(c.counter('attempts') - steps) / n:.2f}", si(steps / c.time), duration(c.time / n),
                         f"{int(c.counter('failed'))}", f"{c.counter('other_cores', float('nan')):.2f}"))
    w(table(["model", "N", "passes", "time (fastest)", "time (median)", "steps / member", "rejected / member",
             "member-steps / s", "wall time / member", "failed", "other cores"], rows))
    w("")
    big_andrews = case("scale", "andrews", "serial", 100000)
    if big_andrews:
        w(f"Andrews ran up to N = 1e5 ({duration(big_andrews.time)} per pass, under the 3-minute limit).")
    else:
        w("Andrews N = 1e5 was not run.")
    w("")

    # ---- 2. threads -------------------------------------------------------------------------------------
    w("## 2. omp backend: 2 threads against 1 thread")
    w("")
    w("The bound is the omp backend's launch (`lockstep_omp_launch`, dynamic schedule) over 4096 items of pure")
    w("register arithmetic: its T:1 / T:2 ratio is what the two cores delivered at that moment (2.0 on an")
    w("otherwise idle machine; lower when other processes hold a core). `of bound` = ratio / bound.")
    w("")
    if chosen:
        rows = []
        for model in ("spin", "pendulum", "andrews"):
            if model not in chosen[1]:
                continue
            one, two, ratio = chosen[1][model]
            n = "-" if model == "spin" else nice_n(int(one.counter("members")))
            rows.append((model if model != "spin" else "bound: arithmetic", n, duration(one.time), duration(two.time),
                         f"{ratio:.3f}", f"{ratio / bound:.0%}" if model != "spin" else "-",
                         f"{one.counter('other_cores', float('nan')):.2f} / {two.counter('other_cores', float('nan')):.2f}"))
        if threads_undisturbed(chosen[1]):
            w(f"From `{chosen[0]}` (undisturbed: bound >= {BOUND_OK}, other processes below {OTHER_CORES_OK} cores):")
        else:
            w(f"From `{chosen[0]}`, the least disturbed attempt. **Other processes held part of the machine during"
              f" every attempt** (bound {bound:.2f} < {BOUND_OK}, or other cores >= {OTHER_CORES_OK}), so these"
              " ratios measure the contended machine, not the backend's scaling on two free cores.")
        w("")
        w(table(["case", "N", "1 thread", "2 threads", "T1 / T2", "of bound", "other cores (T1 / T2)"], rows))
        w("")
        if len(attempts) > 1:
            w("All attempts (an attempt is rerun when the bound is below "
              f"{BOUND_OK} or other processes kept {OTHER_CORES_OK} cores or more busy during a 2-thread case):")
            w("")
            rows = []
            for name, fig in attempts:
                rows.append((name,) + tuple(f"{fig[m][2]:.3f}" if m in fig else "n/a" for m in ("spin", "pendulum", "andrews"))
                            + ("undisturbed" if threads_undisturbed(fig) else "disturbed",))
            w(table(["attempt", "bound", "pendulum", "andrews", "state"], rows))
            w("")
    else:
        w("No thread-ratio results.")
        w("")

    # ---- 3. flatness ---------------------------------------------------------------------------------------
    w("## 3. Cost per member against N (pendulum, serial)")
    w("")
    if per_member:
        cheapest = min(per_member.values())
        rows = []
        for n in flat_ns:
            c = case("scale", "pendulum", "serial", n)
            rows.append((nice_n(n), c.source, duration(per_member[n]), f"{per_member[n] / cheapest:.3f}",
                         f"{c.counter('steps') / n:.2f}", duration(c.time / c.counter("steps")),
                         f"{int(c.counter('chunk'))}", f"{c.counter('other_cores', float('nan')):.2f}"))
        w(table(["N", "from", "wall time / member", "relative to cheapest", "steps / member", "time / step",
                 "chunk (members)", "other cores"], rows))
        w("")
        w(f"max/min = {flat:.3f} (target <= {FLAT_TARGET:.2f}: {verdict(flat <= FLAT_TARGET)}).")
    w("")

    # ---- 4. memory -----------------------------------------------------------------------------------------
    w("## 4. Memory per member")
    w("")
    w("`bytes_per_member` is the API's `bytes_per_member<Model>(save_count)` (chunk storage, save_count = 4);")
    w("`host I/O` is the ensemble's inputs and the result arrays per member, which live outside the chunk.")
    w("Peak RSS is getrusage's ru_maxrss of a process that ran only that case; `before` is the peak when the")
    w("case started (the program, and the 1000-member bitwise check run at start-up).")
    w("")
    rows = []
    for model, n in (("pendulum", 100000), ("pendulum", 1000000), ("andrews", 100000)):
        c = case("scale", model, "serial", n)
        if not c:
            continue
        bpm, io = c.counter("bytes_per_member"), c.counter("io_bytes_per_member")
        # The first repetition starts from the program's own peak; later ones from the case's.
        peak = max(r.get("peak_rss", float("nan")) for r in c.runs)
        before = min(r.get("peak_rss_before", float("nan")) for r in c.runs)
        rows.append((model, nice_n(n), f"{bpm:.0f}", f"{io:.0f}", f"{int(c.counter('chunk'))}", si(peak) + "B",
                     f"{peak / n:.0f}", f"{(peak - before) / n:.0f}", f"{(peak - before) / n / (bpm + io):.2f}"))
    w(table(["model", "N", "bytes_per_member (API)", "host I/O bytes / member", "chunk", "peak RSS",
             "peak RSS / N [B]", "(peak - before) / N [B]", "(peak - before) / N over API + I/O"], rows))
    w("")

    # ---- 5. ensemble vs single member -------------------------------------------------------------------------
    w("## 5. Ensemble path against the single-member path (andrews, N = 1000, serial)")
    w("")
    if pe and ps:
        w(table(["path", "passes", "time (fastest)", "time (median)", "per member", "other cores"],
                [("solve_ensemble (serial)", pe.passes, duration(pe.time), duration(pe.median), duration(pe.time / 1000),
                  f"{pe.counter('other_cores', float('nan')):.2f}"),
                 ("1000 x solve_member", ps.passes, duration(ps.time), duration(ps.median), duration(ps.time / 1000),
                  f"{ps.counter('other_cores', float('nan')):.2f}")]))
        w("")
        w(f"ratio ensemble / single = {pe.time / ps.time:.3f} (fastest), {pe.median / ps.median:.3f} (medians);"
          f" target <= {PATH_TARGET}: {verdict(pe.time / ps.time <= PATH_TARGET)}.")
        w("The program checks, before timing and again after each timed case, that both paths give bitwise")
        w("identical status, counters, final t and state and saved outputs for all 1000 members, and aborts")
        w("otherwise; it " + ("passed." if pe.counter("bitwise_equal", 0) == 1 else "did NOT pass."))
    else:
        w("No results.")
    w("")

    # Sections 6 and later are other scripts' (bench/thread_wait.py, builtin_lanes_speed.py and the
    # scripts named in each write them between their markers): kept as they are.
    kept = "".join("\n" + section + "\n" for section in marked_sections(args.out))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + kept)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-threads", metavar="JSON")
    ap.add_argument("--json-dir")
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--command", default="bench/run_scale.sh")
    ap.add_argument("--start", default="")
    ap.add_argument("--seconds", default="?")
    ap.add_argument("--out", default="bench/RESULTS.md")
    args = ap.parse_args()
    if args.check_threads:
        return check_threads(args.check_threads)
    if not args.json_dir:
        ap.error("--json-dir is required")
    write(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
