#!/usr/bin/python3
"""bench/radau_steps.py — where Radau IIA 5's steps go on a non-stiff mechanism: the index-3 and the
GGL formulation side by side, adaptive and with fixed steps, in one run; writes section 8 of
bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) with h5py and SciPy (python3-h5py, python3-scipy):

    radau_steps.py --lockstep build/host/cli/lockstep [--members 200] [--rounds 3] [--core 0] [--results FILE]

The members: lockstep's built-in double pendulum (unit masses and lengths, g = 9.81) released at rest,
the first angle on a grid of --members points in [0.3, 0.6], the second 0.3; t = 0 ... 10 (the problem
of docs/PERFORMANCE.md, "Non-stiff members"). Digits: the median over the members of
-log10 max_i |x_i - ref_i| / (1 + |ref_i|), for
the bobs' positions (q) and velocities (v) at t = 10 against SciPy's DOP853 at rtol = atol = 1e-13 on
the ODE in the two angles, which shares no code with lockstep. Steps: accepted steps, median over the
members; rejected: error-test failures and Newton-failure cuts; Newton: iterations per accepted step.
Time: per member, lockstep's wall time from results.h5 on one core (taskset, --threads 1), the fastest
of --rounds runs. With fixed steps (`fixed_h`) there is no error test: rtol = atol = 1e-12 set only the
Newton tolerance.
"""

import argparse
import math
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from scipy.integrate import solve_ivp

from results_section import publish
from study_runs import (add_run_arguments, at_digits, double_pendulum_grid, header_lines, microseconds, provenance,
                        run_on_core, significant_digits)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- radau_steps: begin -->"
END = "<!-- radau_steps: end -->"
T1 = 10.0
THETA2 = 0.3
G = 9.81
ADAPTIVE = {"index3": [1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10], "ggl": [1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11]}
FIXED_H = [0.02, 0.01, 0.005, 0.0025]


def angles_field(t, y):
    """Lagrange's equations of the double pendulum in its angles (m1 = m2 = L1 = L2 = 1)."""
    th1, th2, w1, w2 = y
    d = th1 - th2
    cd, sd = math.cos(d), math.sin(d)
    a11, a12, a21, a22 = 2.0, cd, cd, 1.0
    b1 = -w2 * w2 * sd - 2.0 * G * math.sin(th1)
    b2 = w1 * w1 * sd - G * math.sin(th2)
    det = a11 * a22 - a12 * a21
    return [w1, w2, (b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det]


def reference(theta1):
    """The bobs' positions and velocities (x1, y1, x2, y2, x1', y1', x2', y2') at T1, per member."""
    out = []
    for th in theta1:
        s = solve_ivp(angles_field, (0.0, T1), [th, THETA2, 0.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13)
        a, b, wa, wb = s.y[:, -1]
        x1, y1 = math.sin(a), -math.cos(a)
        out.append([x1, y1, x1 + math.sin(b), y1 - math.cos(b),
                    wa * math.cos(a), wa * math.sin(a), wa * math.cos(a) + wb * math.cos(b),
                    wa * math.sin(a) + wb * math.sin(b)])
    return np.array(out)


def study_text(formulation, tol, fixed_h, theta1):
    fixed = f"fixed_h = {fixed_h!r}\n" if fixed_h else ""
    solver = (f'method = "radau5"\nformulation = "{formulation}"\n{fixed}rtol = {tol!r}\natol = {tol!r}\n'
              "max_steps = 1000000\n")
    return double_pendulum_grid(solver, theta1, THETA2, T1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(ap, 200, os.path.join(ROOT, "bench", "RESULTS.md"))
    ap.add_argument("--command", default="bench/radau_steps.py --lockstep build/host/cli/lockstep")
    args = ap.parse_args()

    start, revision, version = provenance(args.lockstep, ROOT)
    t0 = time.monotonic()
    theta1 = np.linspace(0.3, 0.6, args.members)
    ref = reference(theta1)

    runs = []  # (formulation, tol, fixed_h, measurements)
    work = tempfile.mkdtemp(prefix="lockstep-radau-steps-")
    try:
        cases = [(f, tol, 0.0) for f, tols in ADAPTIVE.items() for tol in tols]
        cases += [(f, 1e-12, h) for f in ADAPTIVE for h in FIXED_H]
        for form, tol, fixed_h in cases:
            study = os.path.join(work, "study.toml")
            with open(study, "w") as f:
                f.write(study_text(form, tol, fixed_h, theta1))
            rounds = [run_on_core(args.lockstep, args.core, study, os.path.join(work, "out"))
                      for _ in range(args.rounds)]
            r = rounds[-1]
            if any(not np.array_equal(x["final_q"], r["final_q"]) for x in rounds):
                raise SystemExit(f"{form}, tol {tol:g}, fixed_h {fixed_h:g}: the rounds ended at different bits")
            steps = r["steps"]
            measured = {"seconds": min(x["seconds"] for x in rounds), "steps": float(np.median(steps)),
                    "rejected": float(np.median(r["rejected"])),
                    "newton": float(np.median(r["newton_iterations"] / steps)),
                    "q": significant_digits(r["final_q"], ref[:, :4]),
                    "v": significant_digits(r["final_v"], ref[:, 4:])}
            runs.append((form, tol, fixed_h, measured))
            print(f"{form} tol {tol:.0e} fixed_h {fixed_h}: {measured['q']:.2f} digits, {measured['steps']:.0f} steps "
                  f"at {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [BEGIN, "## 8. Radau IIA 5's steps on a non-stiff mechanism: index 3 against GGL", "",
             "Written by `bench/radau_steps.py` (not by `bench/run_scale.sh`, whose rerun keeps this section); "
             "rerun its command to update it. docs/explanation/formulations-and-methods.md, \"Radau IIA 5's steps on "
             "a non-stiff mechanism\", reads it.", ""]
    lines += header_lines(args.command, time.monotonic() - t0, start, revision, version, args.core)
    lines += ["- Problem: the double pendulum of docs/PERFORMANCE.md, \"Non-stiff members\", "
              f"{args.members} members (first angle on a grid in [0.3, 0.6], second {THETA2}, at rest), "
              f"t = 0 ... {T1:g}, method radau5. Digits of the bobs' "
              "positions (q) and velocities (v) at the end, median over the members, against SciPy's DOP853 at "
              "rtol = atol = 1e-13 on the angles' ODE; steps, rejected steps and Newton iterations per step: "
              f"medians over the members; time per member: the fastest of {args.rounds} runs. Fixed steps: "
              "`fixed_h` with rtol = atol = 1e-12 (the Newton tolerance only).", "",
              "| formulation | steps chosen by | digits q | digits v | steps | rejected | Newton per step | time per member |",
              "|---|---|---|---|---|---|---|---|"]
    for form, tol, fixed_h, r in runs:
        how = f"fixed h = {fixed_h:g}" if fixed_h else f"rtol = atol = {tol:.0e}"
        lines.append(f"| {form} | {how} | {r['q']:.2f} | {r['v']:.2f} | {r['steps']:.0f} | {r['rejected']:.0f} | "
                     f"{r['newton']:.2f} | {microseconds(r['seconds'] / args.members)} |")
    lines += ["", "Adaptive steps at equal digits of the positions (interpolated between the two tolerances that "
              "bracket them, log-linear): steps and time per member, and index3's over ggl's:", "",
              "| digits q | index3 steps | ggl steps | index3 / ggl steps | index3 time | ggl time | index3 / ggl time |",
              "|---|---|---|---|---|---|---|"]
    for target in (6, 7, 8, 9):
        cells = []
        steps = {f: at_digits([(r["q"], r["steps"]) for g, _, h, r in runs if g == f and not h], target)
                 for f in ADAPTIVE}
        seconds = {f: at_digits([(r["q"], r["seconds"] / args.members) for g, _, h, r in runs if g == f and not h],
                                target) for f in ADAPTIVE}
        cells += [f"{steps[f]:.0f}" if steps[f] else "—" for f in ADAPTIVE]
        cells.append(f"{steps['index3'] / steps['ggl']:.2f}" if steps["index3"] and steps["ggl"] else "—")
        cells += [microseconds(seconds[f]) if seconds[f] else "—" for f in ADAPTIVE]
        cells.append(f"{seconds['index3'] / seconds['ggl']:.2f}" if seconds["index3"] and seconds["ggl"] else "—")
        lines.append(f"| {target} | " + " | ".join(cells) + " |")
    lines += ["", END]
    publish("\n".join(lines) + "\n", args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
