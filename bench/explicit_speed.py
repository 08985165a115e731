#!/usr/bin/python3
"""bench/explicit_speed.py — lockstep's explicit pairs (tsit5, dopri5) and its implicit methods against JAX +
diffrax (Tsit5 and Kvaerno5, jit and vmap, float64) and SciPy's DOP853 in a Python loop on the double
pendulum, per core, in one run; writes its section of docs/PERFORMANCE.md.

Run with Debian's interpreter (/usr/bin/python3) and h5py (python3-h5py); the peers run in a virtual
environment this script makes on its first run (pip install "jax[cpu]" diffrax, which bring SciPy: a
few hundred MB).

    explicit_speed.py --lockstep build/host/cli/lockstep [--members 2000] [--slow-every 10] [--rounds 3]
                      [--core 0] [--venv DIR] [--results FILE]

The members: lockstep's built-in double pendulum (unit masses and lengths, g = 9.81) released at rest,
the first angle on a grid of --members points in [0.3, 0.6], the second 0.3; t = 0 ... 10. Digits: the
median over the members of -log10 max_i |q_i - ref_i| / (1 + |ref_i|) over the bobs' positions
(x1, y1, x2, y2) at t = 10, against diffrax's Dopri8 at rtol = atol = 1e-13 on the ODE in the two
angles (bench/peers/diffrax_double_pendulum.py), which shares no code with lockstep. Time: per member
and core — every code on one core (taskset), lockstep with --threads 1 and XLA with one thread;
lockstep's is the solve's wall time from results.h5 (`wall_time_seconds`), diffrax's the jitted call
after a first call that compiled it, SciPy's the loop over its members; the fastest of --rounds runs each
(lockstep's rounds taken in turn over the tolerances; at most 3 for the slow peers, diffrax's Kvaerno5
and SciPy's loop, which solve every --slow-every-th member: their time per member is that subset's).
The ratios at 5 ... 8 digits
interpolate each code's time linearly in log(time) between its two tolerances that bracket the digits.
tsit5, the explicit pair of the same coefficients as the peer's, runs five times: in the SIMD lanes of
the CPU at hand (the default), one member at a time (LOCKSTEP_LANES=0: the baseline build's code, the
same bits), in the lanes with post-stabilization instead of the coordinate projection, and in the lanes
and one member at a time on the same double pendulum written as a mechanism file
(tests/model_files/mechanisms/double_pendulum.toml: joint coordinates, no constraint, the peer's ODE),
whose bob positions are formed from its two angles here; dopri5 runs in the lanes beside it.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from results_section import publish
from study_runs import (add_run_arguments, at_digits, double_pendulum_grid, microseconds, provenance, run_on_core,
                        significant_digits)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- explicit_speed: begin -->"
END = "<!-- explicit_speed: end -->"
T1 = 10.0
THETA2 = 0.3
TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
# The slow peers' tolerances, enough to bracket 5 ... 8 digits: Kvaerno5 reaches about 6.4 digits at 1e-4
# and 8.6 at 1e-7, DOP853 about 9 at 1e-8.
KVAERNO_TOLS = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
SCIPY_TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8]
BUILTIN = 'name = "double_pendulum"'
# The same double pendulum as a mechanism file: joint coordinates (the shoulder's angle and the elbow's
# relative one), no constraint, so nothing to project.
MECHANISM = os.path.join(ROOT, "tests", "model_files", "mechanisms", "double_pendulum.toml")


def cartesian(q):
    """The built-in model's q: the bobs' positions (x1, y1, x2, y2)."""
    return np.asarray(q)


def from_joint_angles(q):
    """The bobs' positions of the mechanism file's q = (shoulder, elbow) (unit rods: its defaults)."""
    q = np.asarray(q)
    a1, a2 = q[:, 0], q[:, 0] + q[:, 1]
    x1, y1 = np.sin(a1), -np.cos(a1)
    return np.stack([x1, y1, x1 + np.sin(a2), y1 - np.cos(a2)], axis=1)


# (label, [solver] lines, environment, [model] line, positions of final q): the explicit pairs in the
# SIMD lanes of the CPU at hand and one member at a time, on the built-in model and on the mechanism
# file, and the implicit defaults a user would otherwise pick (in lanes).
LANES = "lockstep tsit5 (index1, coordinate projection; SIMD lanes)"
ALONE = "lockstep tsit5 (one member at a time: LOCKSTEP_LANES=0, the baseline build's code)"
POST = "lockstep tsit5 (index1, post-stabilization; SIMD lanes)"
JOINTS = "lockstep tsit5, mechanism file in joint coordinates (SIMD lanes)"
JOINTS_ALONE = "lockstep tsit5, mechanism file in joint coordinates (one member at a time: LOCKSTEP_LANES=0)"
DOPRI5 = "lockstep dopri5 (index1, coordinate projection; SIMD lanes)"
LOCKSTEP_METHODS = [
    (LANES, 'method = "tsit5"\n', {}, BUILTIN, cartesian),
    (ALONE, 'method = "tsit5"\n', {"LOCKSTEP_LANES": "0"}, BUILTIN, cartesian),
    (POST, 'method = "tsit5"\nprojection = "post-stabilization"\n', {}, BUILTIN, cartesian),
    (JOINTS, 'method = "tsit5"\n', {}, f"source = {MECHANISM!r}", from_joint_angles),
    (JOINTS_ALONE, 'method = "tsit5"\n', {"LOCKSTEP_LANES": "0"}, f"source = {MECHANISM!r}", from_joint_angles),
    (DOPRI5, 'method = "dopri5"\n', {}, BUILTIN, cartesian),
    ("lockstep radau5 (index3)", 'method = "radau5"\nformulation = "index3"\n', {}, BUILTIN, cartesian),
    ("lockstep radau5 (ggl)", 'method = "radau5"\nformulation = "ggl"\n', {}, BUILTIN, cartesian),
    ("lockstep bdf (ggl)", 'method = "bdf"\nformulation = "ggl"\n', {}, BUILTIN, cartesian),
]
PEER = "JAX + diffrax Tsit5 (jit, vmap)"
KVAERNO = "JAX + diffrax Kvaerno5 (jit, vmap)"
SCIPY = "SciPy DOP853, Python loop"
# The slow peers' rounds: each takes seconds per tolerance even on a tenth of the members.
SLOW_ROUNDS = 3


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    probe = [python, "-c", "import jax, diffrax"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making the peers' virtual environment in {venv} (jax[cpu], diffrax) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "jax[cpu]", "diffrax"], check=True)
    subprocess.run(probe, check=True)
    return python


def run_peer(python, script, spec, core, env):
    """Runs bench/peers/`script` with `spec` on CPU `core` and returns the JSON it printed."""
    r = subprocess.run(["taskset", "-c", str(core), python, os.path.join(ROOT, "bench", "peers", script), spec],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"the peer {script} failed:\n{r.stderr}")
    return json.loads(r.stdout)


def study_text(solver, tol, theta1, model):
    return double_pendulum_grid(f"{solver}rtol = {tol!r}\natol = {tol!r}\n", theta1, THETA2, T1, model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(ap, 2000, os.path.join(ROOT, "docs", "PERFORMANCE.md"))
    ap.add_argument("--slow-every", type=int, default=10,
                    help="the slow peers (diffrax's Kvaerno5, SciPy's loop) solve every N-th member")
    ap.add_argument("--venv", default=os.path.expanduser("~/.cache/lockstep-bench/diffrax-venv"))
    ap.add_argument("--command", default="bench/explicit_speed.py --lockstep build/host/cli/lockstep")
    args = ap.parse_args()

    python = ensure_venv(args.venv)
    start, revision, version = provenance(args.lockstep, ROOT)
    t0 = time.monotonic()
    theta1 = np.linspace(0.3, 0.6, args.members)

    env = dict(os.environ, XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    slow_rounds = min(args.rounds, SLOW_ROUNDS)
    spec = json.dumps({"theta1": theta1.tolist(), "theta2": [THETA2] * args.members, "t1": T1, "runs": [
        {"solver": "Tsit5", "tols": TOLS, "every": 1, "rounds": args.rounds},
        {"solver": "Kvaerno5", "tols": KVAERNO_TOLS, "every": args.slow_every, "rounds": slow_rounds}]})
    peer = run_peer(python, "diffrax_double_pendulum.py", spec, args.core, env)
    reference = np.asarray(peer["reference"])

    def peer_rows(runs):
        return [(r["tol"], significant_digits(r["positions"], reference[r["members"]]),
                 r["seconds"] / len(r["members"]), statistics.median(r["steps"])) for r in runs]

    rows = {PEER: peer_rows(r for r in peer["runs"] if r["solver"] == "Tsit5"),
            KVAERNO: peer_rows(r for r in peer["runs"] if r["solver"] == "Kvaerno5")}
    print(f"diffrax done at {time.monotonic() - t0:.0f} s", file=sys.stderr)
    scipy_spec = json.dumps({"theta1": theta1.tolist(), "theta2": [THETA2] * args.members, "t1": T1,
                             "tols": SCIPY_TOLS, "every": args.slow_every, "rounds": slow_rounds})
    scipy_peer = run_peer(python, "scipy_double_pendulum.py", scipy_spec, args.core, env)
    rows[SCIPY] = peer_rows(scipy_peer["runs"])
    print(f"SciPy done at {time.monotonic() - t0:.0f} s", file=sys.stderr)

    lanes = {}  # each lockstep variant's simd_lanes
    work = tempfile.mkdtemp(prefix="lockstep-explicit-speed-")
    try:
        for label, solver, environment, model, positions in LOCKSTEP_METHODS:
            studies = {}
            for tol in TOLS:
                studies[tol] = os.path.join(work, f"study-{tol!r}.toml")
                with open(studies[tol], "w") as f:
                    f.write(study_text(solver, tol, theta1, model))
            # The rounds go through the tolerances in turn, so that a slow spell of the machine (a shared
            # VM's lasts seconds, longer than all the rounds of a short run) costs one round of several
            # tolerances instead of every round of one.
            runs = {tol: [] for tol in TOLS}
            for _ in range(args.rounds):
                for tol in TOLS:
                    runs[tol].append(run_on_core(args.lockstep, args.core, studies[tol], os.path.join(work, "out"),
                                                 environment))
            rows[label] = []
            for tol in TOLS:
                lanes[label] = runs[tol][-1]["lanes"]
                best = min(r["seconds"] for r in runs[tol])
                digits = significant_digits(positions(runs[tol][-1]["final_q"]), reference)
                rows[label].append((tol, digits, best / args.members, float(np.median(runs[tol][-1]["steps"]))))
            print(f"{label} done at {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    explicit = (LANES, ALONE, POST, JOINTS, JOINTS_ALONE, DOPRI5)
    lines = [BEGIN, "## Non-stiff members: explicit steps against JAX + diffrax and SciPy", "",
             "Written by `bench/explicit_speed.py` (not by `bench/run_performance.sh`, whose rerun keeps this "
             "section); rerun its command to update it. The double pendulum is not stiff: an explicit method "
             "reaches the positions' digits in far fewer steps than an implicit one, and lockstep's explicit "
             "pairs (docs/explanation/formulations-and-methods.md) run against the explicit and implicit "
             "codes a user could pick instead.", "",
             f"- Command, from the repository root: `{args.command}` (wall time {time.monotonic() - t0:.0f} s)",
             f"- Date: {start} (UTC, start of the run); source: commit {revision}",
             f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; every code on core {args.core} "
             "(taskset), lockstep with `--threads 1`, XLA with one thread",
             f"- lockstep: {version[0] if version else '?'}; "
             + "; ".join(l.strip() for l in version if "SIMD lanes, built-in" in l),
             f"- Peers: JAX {peer['jax']}, diffrax {peer['diffrax']}, float64: Tsit5 (Tsitouras 2011) and "
             "Kvaerno5 (Kværnø 2004, implicit, with diffrax's chord-Newton iteration) with rtol = atol = tol, "
             "jit-compiled and vmapped over the members (bench/peers/diffrax_double_pendulum.py); SciPy "
             f"{scipy_peer['scipy']} `solve_ivp` with DOP853, rtol = atol = tol, in a Python loop over the "
             "members (bench/peers/scipy_double_pendulum.py); both on the ODE in the two angles",
             f"- Problem: the double pendulum, {args.members} members released at rest with the first angle on "
             f"a grid in [0.3, 0.6] and the second {THETA2}, t = 0 ... {T1:g}. Digits: median over the members "
             "of the significant correct digits of the bobs' positions at the end against diffrax's Dopri8 at "
             "rtol = atol = 1e-13 on the angles' ODE. Time per member and core: the fastest of "
             f"{args.rounds} runs ({slow_rounds} for Kvaerno5 and SciPy, which solve every {args.slow_every}th "
             "member of the grid), divided by the members solved; steps: accepted steps, median over the "
             "members.",
             "- SIMD lanes the lockstep runs' members advanced in (results.h5 `simd_lanes`; 0: one at a time): "
             + ", ".join(f"{label} {n}" for label, n in lanes.items()), "",
             "Time per member and core at equal digits (interpolated log-linearly between the two tolerances "
             "that bracket the digits; — where none do):", "",
             "| code | 5 digits | 6 digits | 7 digits | 8 digits |", "|---|---|---|---|---|"]
    targets = (5, 6, 7, 8)
    times = {label: [at_digits([(d, s) for _, d, s, _ in points], target) for target in targets]
             for label, points in rows.items()}
    for label, cells in times.items():
        lines.append(f"| {label} | " + " | ".join(microseconds(t) if t else "—" for t in cells) + " |")
    lines += ["", "diffrax's Tsit5's time over lockstep's explicit pairs' at equal digits (above 1: lockstep is "
              "faster):", "", "| lockstep | 5 digits | 6 digits | 7 digits | 8 digits |", "|---|---|---|---|---|"]
    for label in explicit:
        ratios = [f"{p / t:.2f}" if p and t else "—" for p, t in zip(times[PEER], times[label])]
        lines.append(f"| {label} | " + " | ".join(ratios) + " |")
    lines += ["", "Each run:", "", "| code | tol | digits | time per member | steps |", "|---|---|---|---|---|"]
    for label, points in rows.items():
        for tol, d, s, steps in points:
            lines.append(f"| {label} | {tol:.0e} | {d:.2f} | {microseconds(s)} | {steps:.0f} |")
    lines += ["", END]
    text = "\n".join(lines) + "\n"
    publish(text, args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
