"""bench/study_runs.py — what the work-precision scripts of bench/ share (explicit_speed.py,
radau_steps.py): a study run by the `lockstep` command on one core, its members read back from
results.h5, a cost interpolated at equal digits, and times written for a table.
"""

import datetime
import math
import os
import shutil
import subprocess

import h5py
import numpy as np


def run_on_core(lockstep, core, study, out, environment=None):
    """Runs `study` into `out` with --threads 1 on CPU `core` (taskset), with the variables of
    `environment` added to this process's; every member must succeed. Returns the solve's wall time
    (`wall_time_seconds`), the SIMD lanes its members ran in (`simd_lanes`) and the members' final q and
    v, accepted and rejected steps and Newton iterations."""
    shutil.rmtree(out, ignore_errors=True)
    command = ["taskset", "-c", str(core), lockstep, "run", study, "-o", out, "--quiet", "--threads", "1"]
    r = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, **(environment or {})))
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {r.returncode}:\n{r.stderr}")
    with h5py.File(os.path.join(out, "results.h5"), "r") as f:
        m = f["members"]
        if not (m["status"][()] == 1).all():
            raise SystemExit(f"{study}: some members failed")
        run = {"seconds": float(f.attrs["wall_time_seconds"]), "lanes": int(f.attrs["simd_lanes"])}
        for name in ("final_q", "final_v", "steps", "rejected", "newton_iterations"):
            run[name] = m[name][()]
        return run


def significant_digits(values, reference):
    """Median over the members (rows) of -log10 max_i |x_i - ref_i| / (1 + |ref_i|)."""
    values, reference = np.asarray(values), np.asarray(reference)
    worst = np.max(np.abs(values - reference) / (1.0 + np.abs(reference)), axis=1)
    return float(np.median(-np.log10(np.maximum(worst, 1e-17))))


def at_digits(points, target):
    """A cost at `target` digits from (digits, cost) points: log-linear between the two that bracket it;
    None where none do."""
    points = sorted(points)
    for (d0, c0), (d1, c1) in zip(points, points[1:]):
        if d0 <= target <= d1 and d1 > d0:
            w = (target - d0) / (d1 - d0)
            return math.exp((1 - w) * math.log(c0) + w * math.log(c1))
    return None


def microseconds(s):
    """A time per member for a table: µs below a millisecond, ms above."""
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def double_pendulum_grid(solver, theta1, theta2, t1, model='name = "double_pendulum"'):
    """The study of the built-in double pendulum (or the model of the [model] line `model` with the same
    inputs) released at rest from the first angles `theta1` (a grid sampler, one member each) and the
    second `theta2`, to `t1` with one save at the end; `solver` is the body of [solver] (lines ending in
    a newline)."""
    grid = ", ".join(repr(float(x)) for x in theta1)
    return (f'[model]\n{model}\n\n[solver]\n{solver}\n'
            f'[time]\nt1 = {t1!r}\nsave = {{ every = {t1!r} }}\n\n[model.initial]\ntheta2 = {theta2!r}\n\n'
            f'[ensemble]\nsampler = "grid"\n[ensemble.vary]\n"initial.theta1" = {{ grid = [{grid}] }}\n')


def add_run_arguments(parser, members, results):
    """The options every work-precision script takes: --lockstep, --members (default `members`), --rounds,
    --core and --results (default `results`; "-" prints only)."""
    parser.add_argument("--lockstep", required=True)
    parser.add_argument("--members", type=int, default=members)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=0, help="the CPU every code runs on")
    parser.add_argument("--results", default=results, help='"-": print only')


def header_lines(command, seconds, start, revision, version, core):
    """A section's first items: the command and its wall time, the date and source, the machine (lockstep
    on core `core` alone, one thread) and `lockstep --version`'s first line with its built-in lanes."""
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    return [f"- Command, from the repository root: `{command}` (wall time {seconds:.0f} s)",
            f"- Date: {start} (UTC, start of the run); source: commit {revision}",
            f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; lockstep on core {core} "
            "(taskset), `--threads 1`",
            f"- lockstep: {version[0] if version else '?'}; "
            + "; ".join(l.strip() for l in version if "SIMD lanes, built-in" in l)]


def provenance(lockstep, root):
    """What a section's header records: the start (UTC), the source's `git describe` and the first
    lines of `lockstep --version`."""
    start = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    revision = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip()
    version = subprocess.run([lockstep, "--version"], capture_output=True, text=True).stdout.splitlines()
    return start, revision, version
