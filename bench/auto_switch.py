#!/usr/bin/python3
"""bench/auto_switch.py — a study whose members are stiff or not by their inputs: method auto against
the methods it chooses between, and BDF, in one run; writes section 9 of bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) with h5py and SciPy (python3-h5py, python3-scipy):

    auto_switch.py --lockstep build/host/cli/lockstep [--members 200] [--rounds 3] [--core 0] [--results FILE]

The members: lockstep's built-in linear oscillator (a particle on the plane z = a x + b y, springs k1,
k2, k3 to the origin, isotropic damping d; its defaults otherwise) released from x0 = 1 at rest, the
damping on a logarithmic grid of --members points from 0.1 to 10^4, t = 0 ... 20. A member with damping
d has an eigenvalue near -d: above a few hundred it is stiff for an explicit method at these
tolerances, below it is not. Digits: the median over the members of -log10 max_i |q_i - ref_i| /
(1 + |ref_i|) of the positions at t = 20 against the exact solution, the matrix exponential of the
oscillator's linear equations in (x, y) (SciPy's expm), which shares no code with lockstep. Steps: the
members' accepted steps, median; explicit: the median share of them taken by dopri5 (auto). Time: per
member, lockstep's wall time from results.h5 on one core (taskset, --threads 1), the fastest of
--rounds runs; radau5 and bdf run in the SIMD lanes of the CPU at hand where the build has them, dopri5
and auto one member at a time.
"""

import argparse
import os
import sys
import tempfile
import time

import h5py
import numpy as np
from scipy.linalg import expm

from results_section import publish
from study_runs import add_run_arguments, at_digits, microseconds, provenance, run_on_core, significant_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- auto_switch: begin -->"
END = "<!-- auto_switch: end -->"
T1 = 20.0
DAMPING = (0.1, 1e4)
# The built-in model's defaults (include/lockstep/model/linear_oscillator.hpp).
M, K1, K2, K3, A, B = 1.0, 1.0, 4.0, 9.0, 0.3, -0.2
METHODS = {
    "auto": ('method = "auto"\n', [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]),
    "dopri5": ('method = "dopri5"\n', [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]),
    "radau5": ('method = "radau5"\nformulation = "index3"\n', [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]),
    "bdf": ('method = "bdf"\nformulation = "ggl"\n', [1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]),
}
TARGETS = (6, 7, 8, 9, 10)


def reference(damping):
    """The exact positions (x, y, z) at T1 of each member: s' = [[0, I], [-Mr^-1 Kr, -(d / m) I]] s
    with s = (x, y, x', y'), Mr = m (I + g g^T), Kr = diag(k1, k2) + k3 g g^T, g = (a, b)."""
    g = np.array([A, B])
    mass = M * (np.eye(2) + np.outer(g, g))
    stiffness = np.diag([K1, K2]) + K3 * np.outer(g, g)
    out = []
    for d in damping:
        system = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(mass, stiffness), -d / M * np.eye(2)]])
        s = expm(system * T1) @ np.array([1.0, 0.0, 0.0, 0.0])
        out.append([s[0], s[1], g @ s[:2]])
    return np.array(out)


def study(solver, rtol, damping):
    grid = ", ".join(repr(float(d)) for d in damping)
    return (f'[model]\nname = "linear_oscillator"\n\n[solver]\n{solver}rtol = {rtol!r}\natol = {rtol!r}\n'
            f'max_steps = 10000000\n\n[time]\nt1 = {T1!r}\nsave = {{ every = {T1!r} }}\n\n'
            f'[ensemble]\nsampler = "grid"\n[ensemble.vary]\n"params.d" = {{ grid = [{grid}] }}\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_arguments(parser, 200, os.path.join(ROOT, "bench", "RESULTS.md"))
    args = parser.parse_args()
    damping = np.geomspace(DAMPING[0], DAMPING[1], args.members)
    ref = reference(damping)
    start, revision, version = provenance(args.lockstep, ROOT)
    t0 = time.monotonic()
    rows, points = [], {}
    with tempfile.TemporaryDirectory(prefix="lockstep-auto-switch-") as work:
        for name, (solver, tolerances) in METHODS.items():
            points[name] = []
            for rtol in tolerances:
                path = os.path.join(work, f"{name}-{rtol:g}.toml")
                with open(path, "w") as f:
                    f.write(study(solver, rtol, damping))
                best = None
                for _ in range(args.rounds):
                    run = run_on_core(args.lockstep, args.core, path, os.path.join(work, "out"))
                    if best is None or run["seconds"] < best["seconds"]:
                        best = run
                with h5py.File(os.path.join(work, "out", "results.h5"), "r") as f:
                    members = f["members"]
                    explicit = members["explicit_steps"][()] if "explicit_steps" in members else None
                digits = significant_digits(best["final_q"], ref)
                per_member = best["seconds"] / args.members
                points[name].append((digits, per_member))
                share = "—" if explicit is None else f"{float(np.median(explicit / best['steps'])):.2f}"
                stiff = "—" if explicit is None else f"{int(np.sum(explicit < best['steps']))}"
                rows.append(f"| {name} | {rtol:g} | {digits:.2f} | {int(np.median(best['steps']))} | "
                            f"{int(np.max(best['steps']))} | {share} | {stiff} | {microseconds(per_member)} |")
                print(rows[-1], file=sys.stderr)
    at_equal = []
    for target in TARGETS:
        costs = {name: at_digits(points[name], target) for name in METHODS}
        cells = [microseconds(costs[n]) if costs[n] else "—" for n in METHODS]
        best_other = min((costs[n] for n in METHODS if n != "auto" and costs[n]), default=None)
        ratio = f"{best_other / costs['auto']:.2f}" if costs["auto"] and best_other else "—"
        at_equal.append(f"| {target} | " + " | ".join(cells) + f" | {ratio} |")
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    text = "\n".join([
        BEGIN,
        "## 9. Members stiff or not by their inputs: method auto",
        "",
        "Written by `bench/auto_switch.py`; rerun its command to update it. docs/how-to/choose-method.md, "
        "\"Members that turn stiff: auto\", reads it.",
        "",
        f"- Command, from the repository root: `bench/auto_switch.py --lockstep {args.lockstep} --members "
        f"{args.members} --rounds {args.rounds} --core {args.core}` (wall time {time.monotonic() - t0:.0f} s)",
        f"- Date: {start} (UTC, start of the run); source: commit {revision}",
        f"- Machine: `nproc` = {os.cpu_count()}, CPU model \"{cpu_model}\"; lockstep on core {args.core} "
        "(taskset), `--threads 1`",
        f"- lockstep: {version[0] if version else '?'}; "
        + "; ".join(l.strip() for l in version if "SIMD lanes, built-in" in l),
        f"- Problem: the built-in linear oscillator, {args.members} members, its damping d on a logarithmic grid "
        f"from {DAMPING[0]:g} to {DAMPING[1]:g} (an eigenvalue near -d), released from x0 = 1 at rest, "
        f"t = 0 ... {T1:g}. Digits of the positions at the end, median over the members, against the exact "
        "solution (the matrix exponential); steps: the members' accepted steps; explicit: the median share of "
        "a member's steps that dopri5 took; switched: the members that ran Radau IIA 5; time per member: "
        f"the fastest of {args.rounds} runs.",
        "",
        "| method | rtol | digits | median steps | most steps | explicit | switched | time per member |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Time per member at equal digits (log-linear between the runs that bracket them), and the best of "
        "the other three over auto's:",
        "",
        "| digits | " + " | ".join(METHODS) + " | best other / auto |",
        "|---|" + "---|" * len(METHODS) + "---|",
        *at_equal,
        END,
    ])
    publish(text, args.results, BEGIN, END)


if __name__ == "__main__":
    main()
