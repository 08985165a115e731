#!/usr/bin/python3
"""bench/builtin_lanes_speed.py — the built-in models' studies with their members one at a time against
the SIMD lanes of each instruction set the CPU has, in one run; writes section 7 of bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) and h5py (python3-h5py).

    builtin_lanes_speed.py --lockstep build/host/cli/lockstep [--rounds 3] [--threads N] [--results FILE]

A default build (baseline) runs the built-in models' members in the lanes of the widest instruction set
the CPU has, from the libraries it built for avx2 and avx512 (docs/SIMD.md, "The built-in models in the
lanes of the CPU at hand"). LOCKSTEP_BUILTIN_INSTRUCTION_SET=baseline runs them one at a time, as every
default build did before. For each example study (the README's default study first) this runs the
command under each choice in interleaved rounds, rotating the order; a time is the fastest run of a case
(other processes can only slow a run down), a ratio divides two such times of this run. Every dataset of
results.h5 must be the same bits under every choice, or the script fails.
"""

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

from results_section import publish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- builtin_lanes_speed: begin -->"
END = "<!-- builtin_lanes_speed: end -->"
STUDIES = [
    "examples/double_pendulum_monte_carlo.toml",  # the README's default study
    "examples/andrews_uncertain_spring.toml",
    "examples/car_axis_bumps.toml",
    "examples/knife_edge_spin.toml",
    "examples/slider_crank_sweep.toml",
]


def study_line(path, attributes):
    """`model, method (formulation), N members`: the model from the study file, the rest from the
    results' attributes (what ran, defaults included)."""
    text = open(os.path.join(ROOT, path)).read()
    name = (re.search(r'^name\s*=\s*"?([\w.-]+)"?', text, re.M) or [None, ""])[1]
    _, _, members, method, formulation = attributes
    return f"{name}, {method} ({formulation}), {members} members"


def datasets(path):
    """Every dataset's bytes (numbers) or text, by path, and the attributes saying what ran."""
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            value = obj[()]
            numeric = isinstance(value, np.ndarray) and value.dtype.kind in "biufc"
            found[name] = value.tobytes() if numeric else repr(value)

    with h5py.File(path, "r") as f:
        f.visititems(visit)
        attributes = (str(f.attrs["instruction_set"]), int(f.attrs["simd_lanes"]), int(f.attrs["members"]),
                      str(f.attrs["method"]), str(f.attrs["formulation"]))
    return found, attributes


def run_once(lockstep, study, out, env, threads):
    shutil.rmtree(out, ignore_errors=True)
    command = [lockstep, "run", os.path.join(ROOT, study), "-o", out, "--quiet"]
    if threads:
        command += ["--threads", str(threads)]
    start = time.monotonic()
    before = os.times()
    r = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = os.times()
    if r.returncode > 1:
        raise SystemExit(f"{' '.join(command)} exited {r.returncode}:\n{r.stderr}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, datasets(os.path.join(out, "results.h5"))


def seconds(s):
    return f"{s:.2f} s" if s >= 1 else f"{s * 1000:.0f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="--threads of each run (0: the command's default)")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"), help='"-": print only')
    ap.add_argument("--command", default="bench/builtin_lanes_speed.py --lockstep build/host/cli/lockstep")
    args = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if k not in ("LOCKSTEP_LANES", "LOCKSTEP_BUILTIN_INSTRUCTION_SET")}
    variants = [("one at a time", dict(base, LOCKSTEP_BUILTIN_INSTRUCTION_SET="baseline"))]
    for name in ("avx2", "avx512"):
        env = dict(base, LOCKSTEP_BUILTIN_INSTRUCTION_SET=name)
        if subprocess.run([args.lockstep, "describe", "pendulum"], env=env, capture_output=True).returncode == 0:
            variants.append((name, env))
    if len(variants) < 2:
        raise SystemExit("this build or this CPU offers no instruction set with lanes for the built-in models")
    start = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    revision = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip()
    version = subprocess.run([args.lockstep, "--version"], capture_output=True, text=True).stdout
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="lockstep-builtin-lanes-")
    times = {(s, v): [] for s in STUDIES for v, _ in variants}
    seen = {}
    try:
        for r in range(args.rounds):
            for c, study in enumerate(STUDIES):
                k = (r + c) % len(variants)
                for label, env in variants[k:] + variants[:k]:
                    wall, cpu, (values, attributes) = run_once(args.lockstep, study, os.path.join(work, "out"), env,
                                                               args.threads)
                    times[(study, label)].append((wall, cpu, attributes))
                    if study in seen and seen[study] != values:
                        differ = [n for n in values if values[n] != seen[study].get(n)]
                        raise SystemExit(f"{study}: results.h5 differs with {label}: {differ}")
                    seen[study] = values
            print(f"round {r + 1}/{args.rounds} done at {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lanes_labels = [v for v, _ in variants[1:]]
    lines = [BEGIN, "## 7. The built-in models in the lanes of the CPU at hand", "",
             "Written by `bench/builtin_lanes_speed.py` (not by `bench/run_scale.sh`, whose rerun keeps this "
             "section); rerun its command to update it.", "",
             f"- Command, from the repository root: `{args.command}` (wall time {time.monotonic() - t0:.0f} s)",
             f"- Date: {start} (UTC, start of the run); source: commit {revision}",
             f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; threads per run: "
             f"{args.threads or 'the command default (one per CPU)'}",
             "- `--version` of the command: " + "; ".join(l for l in version.splitlines() if "SIMD lanes, built-in" in l),
             "- Each study as in examples/, `lockstep run STUDY --quiet`, under `LOCKSTEP_BUILTIN_INSTRUCTION_SET` = "
             "`baseline` (members one at a time, as a default build ran them before its libraries of lanes) and "
             + ", ".join(f"`{v}`" for v in lanes_labels) + f"; {args.rounds} interleaved rounds in a rotating "
             "order; a time is the fastest wall time of a case's runs (CPU: that run's user + system time); a "
             "ratio divides two fastest times of this run (above 1: the lanes are faster). Every dataset of "
             "results.h5 was the same bits in every run of a study.", "",
             "| study | one at a time (CPU) | " + " | ".join(f"{v} (CPU)" for v in lanes_labels) + " | " +
             " | ".join(f"one at a time / {v}" for v in lanes_labels) + " |",
             "|---|---|" + "---|" * (2 * len(lanes_labels))]
    for study in STUDIES:
        best = {v: min(times[(study, v)]) for v, _ in variants}
        row = [f"`{study}`: {study_line(study, best['one at a time'][2])}", f"{seconds(best['one at a time'][0])} ({seconds(best['one at a time'][1])})"]
        row += [f"{seconds(best[v][0])} ({seconds(best[v][1])}), {best[v][2][1]} lanes" for v in lanes_labels]
        row += [f"{best['one at a time'][0] / best[v][0]:.2f}" for v in lanes_labels]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", END]
    text = "\n".join(lines) + "\n"
    publish(text, args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
