#!/usr/bin/python3
"""bench/default_study_methods.py — the README's default study (examples/double_pendulum_monte_carlo.toml)
with each method at several tolerances, its statistics against a tight reference while the members are
still predictable, and the time each takes; writes section 10 of bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) with h5py (python3-h5py):

    default_study_methods.py --lockstep build/host/cli/lockstep [--rounds 3] [--threads 2] [--results FILE]

The study as the README runs it (10,000 chaotic double pendulums, statistics only), with [solver]
replaced by each variant. Its members are chaotic: a difference of 1e-12 in a member grows by about
e^(3 t) (its largest Lyapunov exponent is near 3 per second, docs/LYAPUNOV.md), so after a few seconds
every variant's statistics differ from any other's by sampling noise, not by accuracy. Accuracy is
therefore measured on the predictable part of the run: two references that share no method, Radau IIA
5 on ggl and dopri5, both at rtol = atol = 1e-11, define it as the save times up to the last one at
which their statistics agree within 1e-8 (every statistic of the study, the four positions). There a
variant's error is the largest difference of its statistics from the Radau reference's; over the whole
run the same difference is shown beside the quasi-Monte Carlo standard error of the means
(mean_stderr), to show where noise takes over. Time: the run's wall time (results.h5
wall_time_seconds) with --threads, the fastest of --rounds runs; steps: the median of the members'.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

from results_section import publish
from study_runs import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDY = os.path.join(ROOT, "examples", "double_pendulum_monte_carlo.toml")
BEGIN = "<!-- default_study_methods: begin -->"
END = "<!-- default_study_methods: end -->"
STATISTICS = ("mean", "std", "min", "max", "q05", "q25", "q50", "q75", "q95")
AGREEMENT = 1e-8
# (method, formulation, rtol, projection after each step: "" for none)
REFERENCES = (("radau5", "ggl", 1e-11, ""), ("dopri5", "index1", 1e-11, "coordinate"))
VARIANTS = [("radau5", "index3", 1e-6, ""), ("radau5", "index3", 1e-7, ""), ("radau5", "ggl", 1e-6, ""),
            ("radau5", "ggl", 1e-7, ""), ("bdf", "ggl", 1e-6, ""), ("bdf", "ggl", 1e-7, ""),
            ("auto", "index3", 1e-6, "coordinate"), ("auto", "index3", 1e-7, "coordinate"),
            ("auto", "index3", 1e-8, "coordinate"), ("dopri5", "index1", 1e-6, "coordinate"),
            ("dopri5", "index1", 1e-7, "coordinate"), ("dopri5", "index1", 1e-6, "post-stabilization"),
            ("dopri5", "index1", 1e-7, "post-stabilization"), ("dopri5", "index1", 1e-8, "post-stabilization"),
            ("tsit5", "index1", 1e-6, "post-stabilization"), ("tsit5", "index1", 1e-7, "post-stabilization"),
            ("tsit5", "index1", 1e-8, "post-stabilization")]


def variant_study(method, formulation, rtol, projection):
    """The default study's text with [solver] replaced by this variant's."""
    with open(STUDY) as f:
        text = f.read()
    projection = f'projection = "{projection}"\n' if projection else ""
    solver = (f'[solver]\nmethod = "{method}"\nformulation = "{formulation}"\n{projection}'
              f'rtol = {rtol!r}\natol = {rtol!r}\n\n')
    return re.sub(r"\[solver\]\n(?:[^\[\n].*\n|\n)*", solver, text, count=1)


def run(lockstep, text, work, threads, rounds):
    """The variant's statistics of q [statistic][time, 4], mean_stderr of q, best wall time, median steps."""
    path = os.path.join(work, "study.toml")
    with open(path, "w") as f:
        f.write(text)
    best = None
    for _ in range(rounds):
        out = os.path.join(work, "out")
        command = [lockstep, "run", path, "-o", out, "--quiet", "--threads", str(threads)]
        r = subprocess.run(command, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {r.returncode}:\n{r.stderr}")
        with h5py.File(os.path.join(out, "results.h5"), "r") as f:
            seconds = float(f.attrs["wall_time_seconds"])
            if best is None or seconds < best["seconds"]:
                best = {"seconds": seconds, "t": f["t"][()],
                        "stats": {s: f["statistics"][s]["q"][()] for s in STATISTICS},
                        "stderr": f["statistics"]["mean_stderr"]["q"][()],
                        "steps": float(np.median(f["members"]["steps"][()]))}
    return best


def difference(a, b):
    """The largest difference of two runs' statistics at each save time."""
    return np.max([np.max(np.abs(a["stats"][s] - b["stats"][s]), axis=1) for s in STATISTICS], axis=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lockstep", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"), help='"-": print only')
    args = parser.parse_args()
    start, revision, version = provenance(args.lockstep, ROOT)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lockstep-default-study-") as work:
        refs = [run(args.lockstep, variant_study(*r), work, args.threads, 1) for r in REFERENCES]
        agree = difference(refs[0], refs[1])
        t = refs[0]["t"]
        predictable = int(np.argmax(agree > AGREEMENT)) if (agree > AGREEMENT).any() else len(t)
        horizon = t[predictable - 1]
        print(f"references agree within {AGREEMENT:g} up to t = {horizon:g}", file=sys.stderr)
        rows = []
        for method, formulation, rtol, projection in VARIANTS:
            r = run(args.lockstep, variant_study(method, formulation, rtol, projection), work, args.threads,
                    args.rounds)
            d = difference(r, refs[0])
            early = float(np.max(d[:predictable]))
            rows.append((method, formulation, projection or "none", rtol, r["seconds"], r["steps"], early,
                         float(np.max(d))))
            print(f"{method} {formulation} {rtol:g}: {r['seconds']:.2f} s, error {early:.2e} up to t = {horizon:g}",
                  file=sys.stderr)
        stderr = float(np.max(refs[0]["stderr"]))
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines = [BEGIN, "## 10. The README's default study, method by method", "",
             "Written by `bench/default_study_methods.py`; rerun its command to update it. docs/how-to/choose-method.md, "
             "\"Members that turn stiff: auto\", reads it.", "",
             f"- Command, from the repository root: `bench/default_study_methods.py --lockstep {args.lockstep} "
             f"--rounds {args.rounds} --threads {args.threads}` (wall time {time.monotonic() - t0:.0f} s)",
             f"- Date: {start} (UTC, start of the run); source: commit {revision}",
             f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; `--threads {args.threads}`",
             f"- lockstep: {version[0] if version else '?'}; "
             + "; ".join(l.strip() for l in version if "SIMD lanes, built-in" in l),
             "- Problem: examples/double_pendulum_monte_carlo.toml as it is (10,000 members, t = 0 ... 10, 201 save "
             "times, statistics of the four positions) with its [solver] replaced. The two references (Radau IIA 5 "
             f"on ggl and dopri5, rtol = atol = 1e-11) agree within {AGREEMENT:g} in every statistic up to "
             f"t = {horizon:g}: the error up to there is each variant's largest difference from the Radau "
             "reference over those save times; over the whole run, for comparison, the same to t = 10, where "
             f"chaos has made it sampling noise (the reference's largest mean_stderr is {stderr:.1e}).", "",
             f"| method | formulation | projection | rtol | wall time | median steps | error to t = {horizon:g} "
             "| difference to t = 10 |",
             "|---|---|---|---|---|---|---|---|"]
    for method, formulation, projection, rtol, seconds, steps, early, whole in rows:
        lines.append(f"| {method} | {formulation} | {projection} | {rtol:g} | {seconds:.2f} s | {steps:.0f} | "
                     f"{early:.1e} | {whole:.1e} |")
    lines.append(END)
    publish("\n".join(lines), args.results, BEGIN, END)


if __name__ == "__main__":
    main()
