#!/usr/bin/python3
"""bench/thread_wait.py — runs the studies of bench/thread_wait.sh and writes section 6 of bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3); standard library only.

    thread_wait.py --team LOCKSTEP --openmp LOCKSTEP_OPENMP_LAUNCH [--rounds 5] [--results FILE | -]
                   [--command CMD]

Three commands run the same studies, each with its default thread count (the CPUs this process may run
on): `openmp` (lockstep_openmp_launch: the omp backend's launch as an OpenMP loop, libgomp's default
wait policy), `openmp passive` (the same with OMP_WAIT_POLICY=passive in its environment) and `team`
(the `lockstep` command: the thread team). OMP_* and GOMP_* variables are removed from every command's
environment but that one. Two conditions: `idle` (no load from this script) and `loaded` (one
`yes > /dev/null` per core, started before and killed after the condition's runs). Rounds interleave
everything: in each round the idle runs, then the loaded ones, the commands in an order that rotates
from case to case and round to round. A time is the fastest of a case's runs (other processes can only
slow a run down); every ratio divides two times of this run.
"""

import argparse
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from results_section import publish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- begin bench/thread_wait.sh -->"
END = "<!-- end bench/thread_wait.sh -->"

# The reported cases: one member and 500 members of a small model with BDF (ggl): the pendulum of
# examples/pendulum_grid.toml (BDF, ggl, rtol 1e-8, trajectories kept) with its grid replaced by Sobol
# points; and the README's default study with fewer members (it must lose nothing on an idle machine).
PENDULUM_ENSEMBLE = """[ensemble]
members = {members}
sampler = "sobol"
seed = 1
[ensemble.vary]
"initial.theta0" = {{ uniform = [0.1, 2.8] }}
"params.L" = {{ uniform = [0.5, 2.5] }}
"""
DEFAULT_STUDY_MEMBERS = 100  # per replicate: 4 x 100 members of examples/double_pendulum_monte_carlo.toml


def example(name):
    with open(os.path.join(ROOT, "examples", name)) as f:
        return f.read()


def cases(study_dir):
    """(label, study file) of every case, written into study_dir."""
    out = []
    grid = example("pendulum_grid.toml")
    if "\n[ensemble]\n" not in grid or "\n[output]\n" not in grid:
        sys.exit("thread_wait.py: examples/pendulum_grid.toml no longer has an [ensemble] and an [output] table")
    for members in (1, 500):
        path = os.path.join(study_dir, f"pendulum_{members}.toml")
        with open(path, "w") as f:
            f.write(grid[:grid.index("\n[ensemble]\n") + 1] + PENDULUM_ENSEMBLE.format(members=members)
                    + grid[grid.index("\n[output]\n"):])
        out.append((f"pendulum, BDF (ggl), {members} member{'s' if members > 1 else ''}", path))
    text = example("double_pendulum_monte_carlo.toml")
    if "\nmembers = 2500\n" not in text:
        sys.exit("thread_wait.py: examples/double_pendulum_monte_carlo.toml no longer says members = 2500")
    path = os.path.join(study_dir, "double_pendulum_monte_carlo.toml")
    with open(path, "w") as f:
        f.write(text.replace("\nmembers = 2500\n", f"\nmembers = {DEFAULT_STUDY_MEMBERS}\n"))
    out.append((f"examples/double_pendulum_monte_carlo.toml, {4 * DEFAULT_STUDY_MEMBERS} members (Radau IIA 5)", path))
    return out


def busy_seconds():
    """CPU seconds all cores have been busy since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def wait_idle(limit):
    """Waits, at most `limit` seconds, until other processes keep under 10 % of the machine busy (2 s
    windows); returns a line saying what it found."""
    waited = 0
    while True:
        b0, t0 = busy_seconds(), time.monotonic()
        time.sleep(2)
        fraction = (busy_seconds() - b0) / ((time.monotonic() - t0) * os.cpu_count())
        if fraction < 0.10:
            return f"the machine was idle (busy fraction {fraction:.2f}) after waiting {waited} s"
        if waited >= limit:
            return f"the machine was still busy (busy fraction {fraction:.2f}) after waiting {waited} s; run anyway"
        time.sleep(8)
        waited += 10


def run_once(binary, study, out_dir, env):
    """Wall seconds, CPU seconds (user + system) and other processes' busy cores of one `run`."""
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryFile() as err:
        busy0 = busy_seconds()
        t0 = time.perf_counter()
        p = subprocess.Popen([binary, "run", study, "-o", out_dir, "-q"], env=env, stdout=subprocess.DEVNULL,
                             stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        busy1 = busy_seconds()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"thread_wait.py: {binary} run {study} failed ({p.returncode}):\n{err.read().decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, max(0.0, (busy1 - busy0 - cpu) / wall)


class Hogs:
    """One `yes > /dev/null` per core while the `with` block runs."""

    def __init__(self, count):
        self.count = count
        self.procs = []

    def __enter__(self):
        self.procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(self.count)]
        if self.procs:
            time.sleep(0.5)  # let the scheduler spread them
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []
        return False


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def fmt(seconds):
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def section(args, variants, conditions, case_list, results, start, seconds, loadavg, idle):
    nproc = os.cpu_count()
    commit = sh(["git", "-C", ROOT, "log", "-1", "--format=%h"])
    dirty = [l.split(None, 1)[1] for l in
             sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).splitlines() if l.strip()]
    threads = len(os.sched_getaffinity(0))
    lines = [BEGIN, "## 6. Idle threads between launches: the thread team against an OpenMP launch", "",
             "Written by `bench/thread_wait.py` from one run of `bench/thread_wait.sh` (not by `bench/run_scale.sh`,",
             "whose rerun keeps this section); rerun that command to update it.", "",
             f"- Command, from the repository root: `{args.command}` (wall time {seconds:.0f} s, the build not counted)",
             f"- Date: {start} (UTC, start of the run)",
             f"- Source: commit {commit or 'unknown (not a git checkout)'}"
             + (f", with uncommitted changes to {', '.join('`' + l + '`' for l in dirty)}" if dirty else ""),
             f"- Machine: `nproc` = {nproc}, CPU model \"{cpu_model()}\", Linux {os.uname().release}."
             f" Before the runs {idle}; load average (1, 5, 15 min) then: {loadavg}",
             f"- Commands, each with its default thread count ({threads} here: the CPUs it may run on):",
             "  `openmp` is `lockstep_openmp_launch`, the command with the omp backend's launch as an OpenMP loop",
             "  (bench/openmp_launch.cpp: how lockstep ran its launches before the thread team; libgomp's default",
             "  wait policy, whose idle threads spin after every launch); `openmp passive` is the same with",
             "  `OMP_WAIT_POLICY=passive` in its environment (set before the process starts, as libgomp requires);",
             "  `team` is the `lockstep` command (kernels/omp/thread_team.hpp).",
             f"- Conditions: `idle`, no load from this script; `loaded`, {nproc} `yes > /dev/null` processes (one per",
             "  core) running during the condition's runs. `other cores`: the mean number of cores other processes",
             "  kept busy during the runs (the machine's busy time from /proc/stat minus the command's CPU time,",
             "  over its wall time); under `loaded` it counts the hogs, under `idle` above 0.1 it says that other",
             "  work shared the machine.",
             f"- {args.rounds} rounds, interleaved (each round: the idle runs, then the loaded ones; the commands in an",
             "  order rotating from case to case and round to round). A time is the fastest of a case's runs",
             "  (other processes can only slow a run down); `CPU` is that run's user + system time; a ratio",
             "  divides two fastest times of this run (above 1: the team is faster).", ""]
    head = ["case", "condition"] + [f"{v} (CPU)" for v, _, _ in variants] + \
           [f"{v} / team" for v, _, _ in variants if v != "team"] + ["other cores"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for label, _ in case_list:
        for cond, _ in conditions:
            best = {v: min(results[(label, cond, v)]) for v, _, _ in variants}
            row = [label, cond]
            row += [f"{fmt(best[v][0])} ({fmt(best[v][1])})" for v, _, _ in variants]
            row += [f"{best[v][0] / best['team'][0]:.2f}" for v, _, _ in variants if v != "team"]
            others = [r[2] for v, _, _ in variants for r in results[(label, cond, v)]]
            row.append(f"{sum(others) / len(others):.2f}")
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", END]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--team", required=True, help="the lockstep command")
    ap.add_argument("--openmp", required=True, help="lockstep_openmp_launch")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"))
    ap.add_argument("--command", default="bench/thread_wait.sh")
    ap.add_argument("--idle-wait", type=int, default=240, help="seconds to wait for an idle machine first")
    args = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    variants = [("openmp", args.openmp, base), ("openmp passive", args.openmp, dict(base, OMP_WAIT_POLICY="passive")),
                ("team", args.team, base)]
    nproc = os.cpu_count()
    conditions = [("idle", 0), ("loaded", nproc)]
    # A kill of this script still kills the hogs (Hogs.__exit__ runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    start = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    idle = wait_idle(args.idle_wait)
    print(idle, file=sys.stderr)
    with open("/proc/loadavg") as f:
        loadavg = ", ".join(f.read().split()[:3])
    t_start = time.monotonic()
    work = tempfile.mkdtemp(prefix="lockstep-thread-wait-")
    try:
        case_list = cases(work)
        out_dir = os.path.join(work, "out")
        for _, binary, env in variants:  # untimed: page cache, and each command's first start
            for _, study in case_list:
                run_once(binary, study, out_dir, env)
        results = {(label, cond, v): [] for label, _ in case_list for cond, _ in conditions for v, _, _ in variants}
        for r in range(args.rounds):
            for cond, hogs in conditions:
                with Hogs(hogs):
                    for c, (label, study) in enumerate(case_list):
                        k = (r + c) % len(variants)
                        for v, binary, env in variants[k:] + variants[:k]:
                            results[(label, cond, v)].append(run_once(binary, study, out_dir, env))
            print(f"round {r + 1}/{args.rounds} done at {time.monotonic() - t_start:.0f} s; loadavg "
                  f"{open('/proc/loadavg').read().strip()}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = section(args, variants, conditions, case_list, results, start, time.monotonic() - t_start, loadavg, idle)
    publish(text, args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
