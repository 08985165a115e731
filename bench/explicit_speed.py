#!/usr/bin/python3
"""bench/explicit_speed.py — lockstep's explicit method (dopri5) and its implicit ones against JAX + diffrax
(Tsit5, jit and vmap, float64) on the double pendulum, per core, in one run; writes section 8 of
bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) and h5py (python3-h5py); the peer runs in a virtual
environment this script makes on its first run (pip install "jax[cpu]" diffrax: a few hundred MB).

    explicit_speed.py --lockstep build/host/cli/lockstep [--members 2000] [--rounds 3] [--core 0]
                      [--venv DIR] [--results FILE]

The members: lockstep's built-in double pendulum (unit masses and lengths, g = 9.81) released at rest,
the first angle on a grid of --members points in [0.3, 0.6], the second 0.3; t = 0 ... 10. Digits: the
median over the members of -log10 max_i |q_i - ref_i| / (1 + |ref_i|) over the bobs' positions
(x1, y1, x2, y2) at t = 10, against diffrax's Dopri8 at rtol = atol = 1e-13 on the ODE in the two
angles (bench/peers/diffrax_double_pendulum.py), which shares no code with lockstep. Time: per member
and core — every code on one core (taskset), lockstep with --threads 1 and XLA with one thread;
lockstep's is the solve's wall time from results.h5 (`wall_time_seconds`), diffrax's the jitted call
after a first call that compiled it; the fastest of --rounds runs each. The ratios at 5 ... 8 digits
interpolate each code's time linearly in log(time) between its two tolerances that bracket the digits.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

from results_section import publish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- explicit_speed: begin -->"
END = "<!-- explicit_speed: end -->"
T1 = 10.0
THETA2 = 0.3
TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
# (label, [solver] lines): the explicit method and the implicit defaults a user would otherwise pick.
LOCKSTEP_METHODS = [
    ("lockstep dopri5 (index1, coordinate projection)", 'method = "dopri5"\n'),
    ("lockstep radau5 (index3)", 'method = "radau5"\nformulation = "index3"\n'),
    ("lockstep bdf (ggl)", 'method = "bdf"\nformulation = "ggl"\n'),
]
PEER = "JAX + diffrax Tsit5 (jit, vmap)"


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    probe = [python, "-c", "import jax, diffrax"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making the peer's virtual environment in {venv} (jax[cpu], diffrax) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "jax[cpu]", "diffrax"], check=True)
    subprocess.run(probe, check=True)
    return python


def digits(positions, reference):
    """Median over the members of the significant correct digits of the bob positions."""
    p, r = np.asarray(positions), np.asarray(reference)
    worst = np.max(np.abs(p - r) / (1.0 + np.abs(r)), axis=1)
    return float(np.median(-np.log10(np.maximum(worst, 1e-17))))


def study_text(solver, tol, theta1):
    grid = ", ".join(repr(float(x)) for x in theta1)
    return (f'[model]\nname = "double_pendulum"\n\n[solver]\n{solver}rtol = {tol!r}\natol = {tol!r}\n\n'
            f'[time]\nt1 = {T1!r}\nsave = {{ every = {T1!r} }}\n\n[model.initial]\ntheta2 = {THETA2!r}\n\n'
            f'[ensemble]\nsampler = "grid"\n[ensemble.vary]\n"initial.theta1" = {{ grid = [{grid}] }}\n')


def run_lockstep(lockstep, core, study, out):
    shutil.rmtree(out, ignore_errors=True)
    command = ["taskset", "-c", str(core), lockstep, "run", study, "-o", out, "--quiet", "--threads", "1"]
    r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {r.returncode}:\n{r.stderr}")
    with h5py.File(os.path.join(out, "results.h5"), "r") as f:
        if not (f["members/status"][()] == 1).all():
            raise SystemExit(f"{study}: some members failed")
        return (float(f.attrs["wall_time_seconds"]), f["members/final_q"][()], float(np.median(f["members/steps"][()])))


def at_digits(points, target):
    """log-linear interpolation of time at `target` digits between the bracketing (digits, seconds)."""
    points = sorted(points)
    for (d0, s0), (d1, s1) in zip(points, points[1:]):
        if d0 <= target <= d1 and d1 > d0:
            w = (target - d0) / (d1 - d0)
            return math.exp((1 - w) * math.log(s0) + w * math.log(s1))
    return None


def microseconds(s):
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--members", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--core", type=int, default=0, help="the CPU every code runs on")
    ap.add_argument("--venv", default=os.path.expanduser("~/.cache/lockstep-bench/diffrax-venv"))
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"), help='"-": print only')
    ap.add_argument("--command", default="bench/explicit_speed.py --lockstep build/host/cli/lockstep")
    args = ap.parse_args()

    python = ensure_venv(args.venv)
    start = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    revision = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip()
    version = subprocess.run([args.lockstep, "--version"], capture_output=True, text=True).stdout.splitlines()
    t0 = time.monotonic()
    theta1 = np.linspace(0.3, 0.6, args.members)

    env = dict(os.environ, XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    spec = json.dumps({"theta1": theta1.tolist(), "theta2": [THETA2] * args.members, "t1": T1, "tols": TOLS,
                       "rounds": args.rounds})
    peer = subprocess.run(["taskset", "-c", str(args.core), python,
                           os.path.join(ROOT, "bench", "peers", "diffrax_double_pendulum.py"), spec],
                          env=env, capture_output=True, text=True)
    if peer.returncode != 0:
        raise SystemExit(f"the diffrax peer failed:\n{peer.stderr}")
    peer = json.loads(peer.stdout)
    reference = peer["reference"]
    rows = {PEER: [(r["tol"], digits(r["positions"], reference), r["seconds"] / args.members,
                    statistics.median(r["steps"])) for r in peer["runs"]]}
    print(f"diffrax done at {time.monotonic() - t0:.0f} s", file=sys.stderr)

    work = tempfile.mkdtemp(prefix="lockstep-explicit-speed-")
    try:
        for label, solver in LOCKSTEP_METHODS:
            rows[label] = []
            for tol in TOLS:
                study = os.path.join(work, "study.toml")
                with open(study, "w") as f:
                    f.write(study_text(solver, tol, theta1))
                best, q, steps = math.inf, None, 0.0
                for _ in range(args.rounds):
                    seconds, q, steps = run_lockstep(args.lockstep, args.core, study, os.path.join(work, "out"))
                    best = min(best, seconds)
                rows[label].append((tol, digits(q, reference), best / args.members, steps))
            print(f"{label} done at {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    explicit = LOCKSTEP_METHODS[0][0]
    lines = [BEGIN, "## 8. Explicit steps on a non-stiff mechanism: lockstep against JAX + diffrax", "",
             "Written by `bench/explicit_speed.py` (not by `bench/run_scale.sh`, whose rerun keeps this section); "
             "rerun its command to update it.", "",
             f"- Command, from the repository root: `{args.command}` (wall time {time.monotonic() - t0:.0f} s)",
             f"- Date: {start} (UTC, start of the run); source: commit {revision}",
             f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; every code on core {args.core} "
             "(taskset), lockstep with `--threads 1`, XLA with one thread",
             f"- lockstep: {version[0] if version else '?'}; "
             + "; ".join(l.strip() for l in version if "SIMD lanes, built-in" in l),
             f"- Peer: JAX {peer['jax']}, diffrax {peer['diffrax']}, float64; Tsit5 with rtol = atol = tol, "
             "jit-compiled and vmapped over the members (bench/peers/diffrax_double_pendulum.py)",
             f"- Problem: the double pendulum, {args.members} members released at rest with the first angle on "
             f"a grid in [0.3, 0.6] and the second {THETA2}, t = 0 ... {T1:g}. Digits: median over the members "
             "of the significant correct digits of the bobs' positions at the end against diffrax's Dopri8 at "
             "rtol = atol = 1e-13 on the angles' ODE. Time per member and core: the fastest of "
             f"{args.rounds} runs, divided by the members; steps: accepted steps, median over the members.", "",
             "| code | tol | digits | time per member | steps |", "|---|---|---|---|---|"]
    for label, points in rows.items():
        for tol, d, s, steps in points:
            lines.append(f"| {label} | {tol:.0e} | {d:.2f} | {microseconds(s)} | {steps:.0f} |")
    lines += ["", "Time per member at equal digits (interpolated, see the script), and diffrax's time over "
              "lockstep dopri5's (above 1: lockstep is faster):", "",
              "| digits | " + " | ".join(rows) + f" | {PEER} / dopri5 |", "|---|" + "---|" * (len(rows) + 1)]
    for target in (5, 6, 7, 8):
        times = {label: at_digits([(d, s) for _, d, s, _ in points], target) for label, points in rows.items()}
        cells = [microseconds(t) if t else "—" for t in times.values()]
        ratio = f"{times[PEER] / times[explicit]:.2f}" if times[PEER] and times[explicit] else "—"
        lines.append(f"| {target} | " + " | ".join(cells) + f" | {ratio} |")
    lines += ["", END]
    text = "\n".join(lines) + "\n"
    publish(text, args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
