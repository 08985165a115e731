#!/usr/bin/python3
"""bench/explicit_andrews.py — the explicit method on Andrews' squeezer, Brasey and Hairer's own test of
their half-explicit method HEM5, against the IVP Test Set's reference and lockstep's implicit methods in
the same run; writes section 12 of bench/RESULTS.md.

Run with Debian's interpreter (/usr/bin/python3) with h5py and matplotlib (python3-h5py,
python3-matplotlib: bench/write_performance.py holds RADAU5's quoted figures):

    explicit_andrews.py --lockstep build/host/cli/lockstep [--hem5 DIR] [--members 500] [--rounds 3] [--core 0]
                        [--results FILE]

The members: --members copies of the built-in andrews, the Test Set's problem (its parameters and start),
t = 0 ... 0.03. Digits: -log10 max_i |q_i - ref_i| / (1 + |ref_i|) over the seven positions at t = 0.03
against the Test Set's published end point (Mazzia and Magherini, Test Set for IVP Solvers, release 2.4,
2008: andrews.f, computed by PSIDE at rtol = atol = 1e-14), the measure of docs/PERFORMANCE.md and
tests/method/test_set_reference_test.cpp; every member must end with the same bits. Time: per member,
lockstep's wall time from results.h5 on one core (taskset, --threads 1), the fastest of --rounds runs.
dopri5 runs as a study file gets it by default (index1, the coordinate projection after each step), in
SIMD lanes and one member at a time (LOCKSTEP_LANES=0); Radau IIA 5 on index3 and BDF on ggl in lanes.
The copies make every pack's lanes busy alike: a study of perturbed members may keep its lanes less busy.

--hem5 DIR adds Brasey's HEM5, the half-explicit Runge-Kutta code of order 5 for index 2 (Brasey and
Hairer 1993), in the same run: DIR holds its Fortran sources as distributed with it (hem5.f, the MA28
routines it calls, Hairer's DEC/SOL), which are not part of lockstep; every .f file there is compiled by
gfortran with bench/peers/hem5_andrews.cpp, which gives HEM5 lockstep's own andrews (bench/peers says
how), both at -O3 -march=native. It solves one member at a time, --members solves per run, on the same
core; its tolerances reach one step looser than the others' (1e-3), so that its time at RADAU5's lower
digits is bracketed too.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from results_section import publish
from study_runs import add_run_arguments, at_digits, header_lines, microseconds, provenance, run_on_core
from write_performance import RADAU5_ANDREWS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- explicit_andrews: begin -->"
END = "<!-- explicit_andrews: end -->"
T1 = 0.03
# The Test Set's reference positions at t = 0.03 (andrews.f, subroutine SOLN), in models/andrews.hpp's
# order (beta, Theta, gamma, Phi, delta, Omega, epsilon).
REFERENCE = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1, -0.5347301163226948e+0,
                      0.5244099658805304e+0, 0.5347301163226948e+0, 0.1048080741042263e+1])
TOLERANCES = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
# label, [solver] lines, environment
CODES = [
    ("dopri5 (index1, coordinate projection; SIMD lanes)", 'method = "dopri5"\n', {}),
    ("dopri5 (one member at a time: LOCKSTEP_LANES=0)", 'method = "dopri5"\n', {"LOCKSTEP_LANES": "0"}),
    ("radau5 (index3; SIMD lanes)", 'method = "radau5"\nformulation = "index3"\n', {}),
    ("bdf (ggl; SIMD lanes)", 'method = "bdf"\nformulation = "ggl"\n', {}),
]


def digits(q):
    """The Test Set's significant correct digits of one member's positions."""
    worst = np.max(np.abs(q - REFERENCE) / (1.0 + np.abs(REFERENCE)))
    return float(-np.log10(max(worst, 1e-17)))


HEM5_LABEL = "HEM5 (index 2; one solve at a time, Brasey's Fortran code)"
HEM5_TOLERANCES = [1e-3] + TOLERANCES


def build_hem5(sources, work):
    """The driver bench/peers/hem5_andrews.cpp linked with the Fortran sources in `sources`."""
    fortran = sorted(glob.glob(os.path.join(sources, "*.f")))
    if not any(os.path.basename(f) == "hem5.f" for f in fortran):
        raise SystemExit(f"--hem5 {sources}: no hem5.f there (the folder of HEM5's Fortran sources)")
    objects = []
    for f in fortran:
        o = os.path.join(work, os.path.basename(f) + ".o")
        # HEM5 and its linear algebra are FORTRAN 77, which passes arrays and scalars to one dummy.
        subprocess.run(["gfortran", "-O3", "-march=native", "-std=legacy", "-fallow-argument-mismatch", "-w", "-c", f,
                        "-o", o], check=True)
        objects.append(o)
    driver = os.path.join(work, "hem5_andrews")
    subprocess.run(["c++", "-O3", "-march=native", "-std=c++20", "-ffp-contract=off", "-I", os.path.join(ROOT, "include"),
                    os.path.join(ROOT, "bench", "peers", "hem5_andrews.cpp"), *objects, "-llapack", "-lgfortran", "-o",
                    driver], check=True)
    return driver


def run_hem5(driver, core, tol, solves):
    """Seconds per solve, accepted and rejected steps and the final positions of one run of the driver."""
    r = subprocess.run(["taskset", "-c", str(core), driver, repr(tol), str(solves)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"hem5_andrews {tol:g} exited {r.returncode}:\n{r.stderr}")
    fields = r.stdout.split()
    return {"seconds": float(fields[0]), "steps": float(fields[1]), "rejected": float(fields[2]),
            "q": np.array([float(x) for x in fields[4:]])}


def study_text(solver, tol, members):
    return (f'[model]\nname = "andrews"\n\n[solver]\n{solver}rtol = {tol!r}\natol = {tol!r}\nmax_steps = 1000000\n\n'
            f'[time]\nt1 = {T1!r}\nsave = {{ every = {T1!r} }}\n\n[ensemble]\nmembers = {members}\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(ap, 500, os.path.join(ROOT, "bench", "RESULTS.md"))
    ap.add_argument("--hem5", metavar="DIR", help="the folder of HEM5's Fortran sources: adds HEM5 (see above)")
    ap.add_argument("--command", default="bench/explicit_andrews.py --lockstep build/host/cli/lockstep")
    args = ap.parse_args()
    codes = [label for label, _, _ in CODES] + ([HEM5_LABEL] if args.hem5 else [])

    start, revision, version = provenance(args.lockstep, ROOT)
    t0 = time.monotonic()
    runs = []  # (label, tol, measurements)
    work = tempfile.mkdtemp(prefix="lockstep-explicit-andrews-")
    try:
        for label, solver, environment in CODES:
            for tol in TOLERANCES:
                study = os.path.join(work, "study.toml")
                with open(study, "w") as f:
                    f.write(study_text(solver, tol, args.members))
                rounds = [run_on_core(args.lockstep, args.core, study, os.path.join(work, "out"), environment)
                          for _ in range(args.rounds)]
                r = rounds[-1]
                q = r["final_q"]
                if any(not np.array_equal(x["final_q"], q) for x in rounds) or not (q == q[0]).all():
                    raise SystemExit(f"{label}, tol {tol:g}: the members or the rounds ended at different bits")
                measured = {"seconds": min(x["seconds"] for x in rounds) / args.members, "digits": digits(q[0]),
                            "steps": float(r["steps"][0]), "lanes": r["lanes"]}
                runs.append((label, tol, measured))
                print(f"{label} tol {tol:.0e}: {measured['digits']:.2f} digits, {measured['steps']:.0f} steps, "
                      f"{microseconds(measured['seconds'])} at {time.monotonic() - t0:.0f} s", file=sys.stderr)
        if args.hem5:
            driver = build_hem5(args.hem5, work)
            for tol in HEM5_TOLERANCES:
                rounds = [run_hem5(driver, args.core, tol, args.members) for _ in range(args.rounds)]
                if any(not np.array_equal(x["q"], rounds[0]["q"]) for x in rounds):
                    raise SystemExit(f"HEM5, tol {tol:g}: the rounds ended at different bits")
                measured = {"seconds": min(x["seconds"] for x in rounds), "digits": digits(rounds[0]["q"]),
                            "steps": rounds[0]["steps"], "lanes": 0}
                runs.append((HEM5_LABEL, tol, measured))
                print(f"HEM5 tol {tol:.0e}: {measured['digits']:.2f} digits, {measured['steps']:.0f} steps "
                      f"({rounds[0]['rejected']:.0f} rejected), {microseconds(measured['seconds'])}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lanes = ", ".join(f"{label} {r['lanes']}" for label, tol, r in runs if tol == TOLERANCES[0])
    lines = [BEGIN, "## 12. The explicit method on Andrews' squeezer, against the IVP Test Set's reference", "",
             "Written by `bench/explicit_andrews.py` (not by `bench/run_scale.sh`, whose rerun keeps this section); "
             "rerun its command to update it.", ""]
    lines += header_lines(args.command, time.monotonic() - t0, start, revision, version, args.core)
    lines += [f"- Problem: Andrews' squeezer as the IVP Test Set states it (the built-in `andrews`: its parameters "
              f"and start), t = 0 ... {T1:g}, {args.members} copies in one study (every member ends with the same "
              "bits, so every pack's lanes are busy alike). Brasey and Hairer tested their half-explicit method "
              "HEM5 on it (Brasey and Hairer, \"Half-explicit Runge-Kutta methods for differential-algebraic "
              "systems of index 2\", SIAM J. Numer. Anal. 30, 1993). Digits: -log10 max_i |q_i - ref_i| / "
              "(1 + |ref_i|) over the seven positions at the end against the Test Set's published end point "
              "(Mazzia and Magherini, release 2.4, 2008); steps: accepted steps; time per member: the fastest of "
              f"{args.rounds} runs.",
              f"- SIMD lanes the runs' members advanced in (results.h5 `simd_lanes`; 0: one at a time): {lanes}"]
    if args.hem5:
        lines += [f"- {HEM5_LABEL}: Brasey's code (its version of June 8, 1994, described in V. Brasey's thesis, "
                  "Geneva 1994) with full linear algebra (DEC and SOL), no projection, h0 = rtol = atol, "
                  "compiled by gfortran at -O3 -march=native with bench/peers/hem5_andrews.cpp, which evaluates "
                  "lockstep's own andrews for it (M, f, and G by the same automatic differentiation as lockstep's "
                  f"engines); {args.members} solves one after another per run, the fastest of {args.rounds} runs. "
                  "Not part of lockstep: the sources are the user's (`--hem5`)."]
    lines += ["",
              "| code | rtol = atol | digits | steps | time per member |", "|---|---|---|---|---|"]
    for label, tol, r in runs:
        lines.append(f"| {label} | {tol:.0e} | {r['digits']:.2f} | {r['steps']:.0f} | {microseconds(r['seconds'])} |")
    lines += ["", "Time per member at the digits of Hairer's RADAU5 (interpolated log-linearly between the two runs of a "
              "code that bracket them; \"—\" where none do). RADAU5's times are quoted from docs/PERFORMANCE.md (one "
              "solve at a time, driven as the Test Set drives it, on another instance of the bench machine kind), not "
              "measured by this command, so their ratios carry the spread between instances that section states:", "",
              "| digits | RADAU5 per solve (quoted) | " + " | ".join(codes) + " |",
              "|---|---|" + "---|" * len(codes)]
    for rtol, target, radau5_seconds in RADAU5_ANDREWS:
        cells = []
        for label in codes:
            at = at_digits([(r["digits"], r["seconds"]) for l, _, r in runs if l == label], target)
            cells.append(f"{microseconds(at)} ({radau5_seconds / at:.1f}x)" if at else "—")
        lines.append(f"| {target:.2f} | {microseconds(radau5_seconds)} (rtol {rtol:.0e}) | " + " | ".join(cells) + " |")
    lines += ["", END]
    publish("\n".join(lines) + "\n", args.results, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
