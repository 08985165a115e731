#!/usr/bin/python3
"""bench/model_file_compile.py — the first run of a new model file, and the runs after it, of two lockstep
binaries side by side: how long a study waits for its model to compile, and how fast the engine then runs.

For each model file and study kind, alternating the two binaries REPS times, each time with an empty
model cache (LOCKSTEP_CACHE_DIR):

  first run     the wall time of `lockstep run STUDY` on a study of one member over a short interval:
                the equations file turned into a header (SymPy), the compile and the load, the solve
                negligible (the table gives the solve's own wall time beside it)
  new model     (where the first run made precompiled headers or the elementary functions' object in
                the cache, docs/MODEL-FILES.md "What is compiled": not in a build tree, which has its
                own) the first run again on a cache that holds only those: a new model after any
                earlier one
  next method   (where the binary compiles the parts a study needs, docs/MODEL-FILES.md "What is
                compiled") then a study of the same model with another method, on the cache the first
                run left: what a second study costs
  solve         then, on warm caches, the wall time of the solve (results.h5's wall_time_seconds) of a
                study of MEMBERS members, the two binaries alternating SOLVE_REPS times: the ratio after /
                before of the fastest solves (other processes can only slow a solve down) is the
                engines' speed; the results must be the same bits

Medians of the first runs are shown, with the ratios after / before; the table, with the command, the
date, the sources and the machine, is written to bench/MODEL-FILE-COMPILE.md (--results; "-": print
only). The compiler runs at the build's optimization
level (the default: no LOCKSTEP_MODEL_OPTIMIZATION), for the instruction set each binary picks (the
widest this CPU has). Run it on an idle machine: bench/model_file_compile.sh builds the binary of an
earlier commit and calls this script.

    /usr/bin/python3 bench/model_file_compile.py --before BEFORE/lockstep --after build/host/cli/lockstep \\
        [--reps 3] [--solve-reps 7] [--members 2000] [--models cart,andrews] [--studies bdf,radau5] \\
        [--command TEXT] [--results FILE]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

from model_files_speed import header_copy  # a copy of the double pendulum's header, renamed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# (label, model file, a varied input of it and its range, t1 of the timed study, its members / MEMBERS)
def models(work):
    return [
        ("cart pendulum (equations)", os.path.join(ROOT, "examples", "models", "cart_pendulum.toml"),
         '"initial.theta0"', "[0.5, 1.5]", 5.0, 1.0),
        ("double pendulum (header copy)", header_copy(work), '"initial.theta1"', "[1.5, 2.5]", 5.0, 1.0),
        ("heavy top (header)", os.path.join(ROOT, "examples", "models", "heavy_top.hpp"), '"initial.spin0"',
         "[50.0, 200.0]", 0.5, 0.25),
        ("andrews (equations)", os.path.join(ROOT, "examples", "mbs", "a03_andrews.toml"), '"params.c0"',
         "[4530.0, 4550.0]", 0.03, 0.1),
    ]


# The study kinds: the solver section, and the method of the second study on the same cache.
KINDS = [
    ("radau5, index3", '[solver]\nmethod = "radau5"\nformulation = "index3"\n', '[solver]\nmethod = "bdf"\nformulation = "ggl"\n'),
    ("bdf, ggl", '[solver]\nmethod = "bdf"\nformulation = "ggl"\n', '[solver]\nmethod = "radau3"\nformulation = "index3"\n'),
    ("radau5 with [lyapunov]", '[solver]\nmethod = "radau5"\nformulation = "ggl"\n'
     '[lyapunov]\nexponents = 1\nrenormalize = {renormalize}\n', None),
    ("bdf with [lyapunov]", '[solver]\nmethod = "bdf"\nformulation = "ggl"\n'
     '[lyapunov]\nexponents = 1\nrenormalize = {renormalize}\n', None),
]

STUDY = """[model]
source = "{source}"
{solver}
[time]
t1 = {t1}
[ensemble]
members = {members}
{vary}
"""


def study(work, name, source, solver, t1, members, varied, bounds):
    vary = "" if members == 1 else f'sampler = "sobol"\n[ensemble.vary]\n{varied} = {{ uniform = {bounds} }}\n'
    path = os.path.join(work, name + ".toml")
    open(path, "w").write(STUDY.format(source=source, solver=solver.format(renormalize=t1 / 5), t1=t1, members=members,
                                       vary=vary))
    return path


def run(lockstep, path, out, cache):
    env = dict(os.environ, LOCKSTEP_CACHE_DIR=cache)
    for variable in ("LOCKSTEP_MODEL_OPTIMIZATION", "LOCKSTEP_MODEL_INSTRUCTION_SET", "LOCKSTEP_MODEL_LANES", "LOCKSTEP_LANES"):
        env.pop(variable, None)
    start = time.perf_counter()
    r = subprocess.run([lockstep, "run", path, "-o", out], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"{lockstep} run {path} failed (exit {r.returncode}):\n{r.stderr}")
    with h5py.File(os.path.join(out, "results.h5"), "r") as f:
        finals = f["members/final_q"][()].tobytes() + f["members/status"][()].tobytes()
        return seconds, float(f.attrs["wall_time_seconds"]), finals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the lockstep binary to compare with")
    parser.add_argument("--after", required=True, help="the lockstep binary measured")
    parser.add_argument("--reps", type=int, default=3, help="first runs of each binary (medians)")
    parser.add_argument("--solve-reps", type=int, default=7, help="timed solves of each binary (fastest)")
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--models", default="", help="only the models whose label contains one of these, comma-separated")
    parser.add_argument("--studies", default="", help="only the study kinds that contain one of these, comma-separated")
    parser.add_argument("--command", default="", help="the command that ran this script, for the results file")
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "MODEL-FILE-COMPILE.md"),
                        help='the Markdown file written ("-": print only)')
    args = parser.parse_args()
    chosen = lambda text, wanted: not wanted or any(w and w in text for w in wanted.split(","))
    binaries = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    work = tempfile.mkdtemp(prefix="lockstep-bench-compile-")
    started, clock = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.perf_counter()
    command = args.command or (
        f"/usr/bin/python3 bench/model_file_compile.py --before {args.before} --after {args.after} --reps {args.reps} "
        f"--solve-reps {args.solve_reps} --members {args.members}" + (f" --models {args.models}" if args.models else "") +
        (f" --studies '{args.studies}'" if args.studies else ""))
    lines = []

    def out(text=""):
        lines.append(text)
        print(text, flush=True)

    load = os.getloadavg()
    versions = {}
    for which, lockstep in binaries.items():
        version = subprocess.run([lockstep, "--version"], capture_output=True, text=True).stdout.splitlines()
        versions[which] = (f"{version[0] if version else '?'}; "
                           f"{next((l.strip() for l in version if 'model files compiled' in l), '')}")
    rows = []
    out("| model | study | first run, before [s] | first run, after [s] | after / before | new model, after [s] |"
        " next method, after [s] | solve, before [s] | solve, after [s] | after / before | results |")
    out("|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    for label, source, varied, bounds, t1, share in models(work):
        if not chosen(label, args.models):
            continue
        for kind, solver, next_solver in KINDS:
            if not chosen(kind, args.studies):
                continue
            tag = f"{len(os.listdir(work))}"
            first = study(work, f"first{tag}", source, solver, min(t1, 0.01), 1, varied, bounds)
            second = study(work, f"second{tag}", source, next_solver, min(t1, 0.01), 1, varied, bounds) if next_solver else None
            members = max(1, int(args.members * share))
            timed = study(work, f"timed{tag}", source, solver, t1, members, varied, bounds)
            firsts = {w: [] for w in binaries}
            nexts, news = [], []
            for rep in range(args.reps):
                for which, lockstep in binaries.items():
                    cache = os.path.join(work, f"cache-{which}-{tag}-{rep}")
                    seconds, _, _ = run(lockstep, first, os.path.join(work, "out"), cache)
                    firsts[which].append(seconds)
                    # What the first model made for the toolchain, not for itself: the precompiled
                    # headers and the elementary functions (a build tree makes its own when built).
                    own = [d for d in ("headers", "elementary") if os.path.isdir(os.path.join(cache, d))]
                    if which == "after" and own:
                        fresh = os.path.join(work, f"cache-new-{tag}-{rep}")
                        for d in own:
                            shutil.copytree(os.path.join(cache, d), os.path.join(fresh, d))
                        news.append(run(lockstep, first, os.path.join(work, "out"), fresh)[0])
                        shutil.rmtree(fresh)
                    if which == "after" and second:
                        nexts.append(run(lockstep, second, os.path.join(work, "out"), cache)[0])
                    if rep + 1 < args.reps:
                        shutil.rmtree(cache)
            solves = {w: [] for w in binaries}
            results = {}
            for rep in range(args.solve_reps):
                for which, lockstep in (binaries.items() if rep % 2 == 0 else reversed(binaries.items())):
                    cache = os.path.join(work, f"cache-{which}-{tag}-{args.reps - 1}")
                    _, wall, finals = run(lockstep, timed, os.path.join(work, f"timed-{which}"), cache)
                    solves[which].append(wall)
                    results[which] = finals
            same = results["before"] == results["after"]
            failed = failed or not same
            fb, fa = statistics.median(firsts["before"]), statistics.median(firsts["after"])
            sb, sa = min(solves["before"]), min(solves["after"])
            fn = statistics.median(news) if news else None
            rows.append((label, kind, fa, sa / sb, fn))
            nxt = f"{statistics.median(nexts):.1f}" if nexts else "—"
            new = f"{fn:.1f}" if news else "—"
            out(f"| {label} | {kind}, {members} members, t1 = {t1} | {fb:.1f} | {fa:.1f} | {fa / fb:.2f} | {new} | {nxt} | "
                f"{sb:.3f} | {sa:.3f} | {sa / sb:.3f} | {'bitwise equal' if same else 'DIFFERENT'} |")
    shutil.rmtree(work, ignore_errors=True)
    if rows:
        worst_first = max(rows, key=lambda r: r[2])
        ratios = [r[3] for r in rows]
        out()
        news = [r for r in rows if r[4] is not None]
        worst_new = max(news, key=lambda r: r[4]) if news else None
        out(f"First run after: {min(r[2] for r in rows):.1f}-{worst_first[2]:.1f} s (the longest: {worst_first[0]}, "
            f"{worst_first[1]})" +
            (f"; a new model: {min(r[4] for r in news):.1f}-{worst_new[4]:.1f} s (the longest: {worst_new[0]}, "
             f"{worst_new[1]})" if worst_new else "") +
            f"; solve after / before: {min(ratios):.3f}-{max(ratios):.3f}.")
    if args.results != "-":
        write_results(args.results, command, started, time.perf_counter() - clock, load, versions, args, lines)
    return 1 if failed else 0


def write_results(path, command, started, seconds, load, versions, args, table):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    head = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    text = [
        "# The first run of a new model file",
        "",
        "Written by `bench/model_file_compile.py` from one run of `bench/model_file_compile.sh`; do not edit by",
        "hand, rerun the command (docs/MODEL-FILES.md, \"What is compiled\", says what is measured and why).",
        "",
        f"- Command, from the repository root: `{command}` (wall time {seconds:.0f} s, the builds not counted)",
        f"- Date: {started} (UTC, start of the run)",
        f"- Source: the working tree at {head}",
        f"- Binaries (`lockstep --version`; a build names the revision it was configured at): before "
        f"`{versions['before']}`; after, built from the working tree: `{versions['after']}`",
        f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu}\", Linux {os.uname().release}; load average "
        f"(1, 5, 15 min) at the start: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
        f"- first run: the wall time of `lockstep run` of a one-member study on an empty cache (the model",
        f"  compiled for it), the median of {args.reps} alternating runs of each binary; new model: the first",
        f"  run again on a cache holding only the precompiled headers and elementary functions the first run",
        f"  made (\"—\": none made);",
        f"  next method: then a study",
        f"  of the same model with another method on that cache (\"—\": none); solve: the fastest of",
        f"  {args.solve_reps} alternating solves of each binary on warm caches (results.h5's",
        f"  `wall_time_seconds`), whose final states must be the same bits.",
        "",
    ] + table
    with open(path, "w") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    sys.exit(main())
