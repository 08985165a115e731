#!/usr/bin/python3
"""bench/mechanisms.py — mechanism files (bodies and joints, joint coordinates formed by the tree
algorithms) against the same mechanisms written by hand in absolute or natural coordinates, in one run;
writes section 11 of bench/RESULTS.md.

Run with Debian's interpreter and the lockstep Python package on PYTHONPATH (it reads results.h5):

    PYTHONPATH=build/python:python bench/mechanisms.py --lockstep build/host/cli/lockstep \\
        [--members 256] [--rounds 3] [--core 0] [--results FILE]

Each pair is one study run twice, once per model, with the same members (a grid of one initial input),
interval, method (Radau IIA 5), formulation (GGL for mechanisms with loops, as docs/how-to/mechanisms.md
advises; index 3 for trees, and Bricard's linkage in GGL as examples/mbs runs it) and tolerances, on one core (taskset, --threads 1), in the SIMD lanes
of the CPU at hand where the build has them; the time per member is lockstep's wall time from
results.h5, the fastest of --rounds runs. N is the order of the Newton matrix (n + m on index 3, n + 2m
on GGL), whose LU costs about (2/3) N^3 per factorization. tests/python/test_mechanisms.py shows that each pair computes
the same motion; the mechanisms without a hand-written counterpart are timed alone.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from results_section import publish
from study_runs import microseconds, provenance

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- mechanisms: begin -->"
END = "<!-- mechanisms: end -->"
MECHANISMS = os.path.join(ROOT, "tests", "model_files", "mechanisms")
EXAMPLES = os.path.join(ROOT, "examples")


def source(path_or_name):
    return f'name = "{path_or_name}"' if "/" not in path_or_name else f'source = "{path_or_name}"'


# label, (bodies source, its [model.params]), (hand source or None, its params), input varied and its
# range, other inputs of each, t1, rtol, formulation.
CASES = [
    ("double pendulum", (os.path.join(MECHANISMS, "double_pendulum.toml"), {}), ("double_pendulum", {}),
     ("theta1", 0.3, 2.0), ({}, {}), 10.0, 1e-8, "index3"),
    ("slider crank", (os.path.join(MECHANISMS, "slider_crank.toml"), {}), ("slider_crank", {}),
     ("phi1_0", 0.0, 1.0), ({}, {}), 0.1, 1e-8, "ggl"),
    ("four-bar", (os.path.join(EXAMPLES, "mechanisms", "fourbar.toml"), {}),
     (os.path.join(EXAMPLES, "models", "fourbar.toml"), {}), ("theta0", 0.5, 1.5), ({}, {}), 3.0, 1e-8, "ggl"),
    ("Bricard's linkage", (os.path.join(MECHANISMS, "bricard.toml"), {}),
     (os.path.join(EXAMPLES, "mbs", "a04_bricard.hpp"), {}), ("omega", 0.5, 6.0), ({}, {}), 10.0, 1e-8, "ggl"),
    # The heavy top: Cardan angles on a spherical joint against examples/models/heavy_top.hpp's Euler
    # parameters (Haug 1989). Its A is about the tip, the mechanism's about the centre of mass:
    # A - m l^2 = 2e-3 - 1.6e-3. The spin 150 rad/s is the third Cardan angle's rate at the start.
    ("heavy top", (os.path.join(MECHANISMS, "heavy_top.toml"), {"mass": 1.0, "l": 0.04, "A": 4e-4, "C": 1e-3}),
     (os.path.join(EXAMPLES, "models", "heavy_top.hpp"), {}), ("theta0", 0.2, 0.6),
     ({"rate_y": 0.0, "rate_z": 150.0}, {"spin0": 150.0}), 2.0, 1e-8, "index3"),
    ("Andrews' squeezer", (os.path.join(MECHANISMS, "andrews.toml"), {}), ("andrews", {}), None, ({}, {}),
     0.03, 1e-8, "ggl"),
    ("RSSR spatial four-bar", (os.path.join(MECHANISMS, "rssr.toml"), {}), (None, {}), ("omega0", 1.0, 3.0),
     ({}, {}), 0.1, 1e-8, "ggl"),
    ("double-wishbone suspension", (os.path.join(EXAMPLES, "mechanisms", "suspension.toml"), {}), (None, {}),
     ("lower_pivot", 0.0, 0.0), ({}, {}), 2.0, 1e-8, "ggl"),
]


def study_text(model, params, initial, varied, members, t1, rtol, formulation):
    name, low, high = varied or (None, 0.0, 0.0)
    lines = [f"[model]\n{source(model)}\n"]
    if params:
        lines.append("[model.params]\n" + "".join(f"{k} = {v!r}\n" for k, v in params.items()))
    if initial:
        lines.append("[model.initial]\n" + "".join(f"{k} = {v!r}\n" for k, v in initial.items()))
    lines.append(f'[solver]\nmethod = "radau5"\nformulation = "{formulation}"\nrtol = {rtol!r}\natol = {rtol!r}\n')
    lines.append(f"[time]\nt1 = {t1!r}\nsave = {{ every = {t1!r} }}\n")
    if low == high:  # nothing to vary: copies of the default member
        lines.append(f"[ensemble]\nmembers = {members}\n")
    else:
        grid = ", ".join(repr(float(x)) for x in np.linspace(low, high, members))
        lines.append(f'[ensemble]\nsampler = "grid"\n[ensemble.vary]\n"initial.{name}" = {{ grid = [{grid}] }}\n')
    return "\n".join(lines)


def timed(lockstep, core, text, folder, label, rounds):
    """The fastest wall time per member of `rounds` runs of the study `text`, and the model's n and m."""
    import lockstep as api  # the Python package: results.h5 as an xarray Dataset

    study = os.path.join(folder, f"{label}.toml")
    with open(study, "w") as f:
        f.write(text)
    best = None
    for _ in range(rounds):
        out = os.path.join(folder, f"{label}-out")
        shutil.rmtree(out, ignore_errors=True)
        command = ["taskset", "-c", str(core), lockstep, "run", study, "-o", out, "--quiet", "--threads", "1"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
        ds = api.open_results(os.path.join(out, "results.h5"))
        if not (ds.status_name.values == "success").all():
            raise SystemExit(f"{label}: some members failed: {set(ds.status_name.values)}")
        seconds = float(ds.attrs["wall_time_seconds"]) / ds.sizes["member"]
        best = seconds if best is None else min(best, seconds)
        shape = (ds.sizes["coordinate"], ds.sizes.get("constraint", 0))
        steps = float(np.median(ds.steps.values))
    return best, shape, steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lockstep", required=True)
    parser.add_argument("--members", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"), help='"-": print only')
    args = parser.parse_args()
    lockstep = os.path.abspath(args.lockstep)
    start, revision, version = provenance(lockstep, ROOT)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, bodies, hand, varied, (initial_bodies, initial_hand), t1, rtol, formulation in CASES:
            key = label.replace(" ", "_").replace("'", "")
            text = study_text(bodies[0], bodies[1], initial_bodies, varied, args.members, t1, rtol, formulation)
            ours = timed(lockstep, args.core, text, folder, key + "-bodies", args.rounds)
            theirs = None
            if hand[0] is not None:
                text = study_text(hand[0], hand[1], initial_hand, varied, args.members, t1, rtol, formulation)
                theirs = timed(lockstep, args.core, text, folder, key + "-hand", args.rounds)
            rows.append((label, ours, theirs, formulation))
            print(label, ours, theirs, file=sys.stderr)

    def shape(result, formulation):
        """n, m and the order of the Newton matrix: n + m on index 3, n + 2m on GGL."""
        (n, m) = result[1]
        return f"{n}, {m} (N = {n + (2 * m if formulation == 'ggl' else m)})"

    text = [BEGIN, "## 11. Mechanisms as bodies and joints: joint coordinates against equations by hand", "",
            f"`PYTHONPATH=build/python:python bench/mechanisms.py --lockstep build/host/cli/lockstep --members "
            f"{args.members} --rounds {args.rounds} --core {args.core}`, started {start} at `{revision}` "
            f"({'; '.join(version[:1])}). One core, Radau IIA 5 (formulation as the table says), rtol = atol = 1e-8, {args.members} members "
            f"per study, the fastest of {args.rounds} runs; the mechanism files of tests/model_files/mechanisms/ "
            f"and examples/mechanisms/ against their hand-written counterparts (the built-in models, "
            f"examples/models/ and examples/mbs/), which tests/python/test_mechanisms.py shows move alike.", "",
            "| mechanism | formulation | bodies and joints: n, m | by hand: n, m | bodies: time per member (median steps) "
            "| by hand: time per member (median steps) | hand / bodies |",
            "|---|---|---|---|---|---|---|"]
    for label, ours, theirs, formulation in rows:
        hand_shape = shape(theirs, formulation) if theirs else "—"
        hand_time = f"{microseconds(theirs[0])} ({theirs[2]:.0f})" if theirs else "—"
        ratio = f"{theirs[0] / ours[0]:.2f}" if theirs else "—"
        text.append(f"| {label} | {formulation} | {shape(ours, formulation)} | {hand_shape} | {microseconds(ours[0])} "
                    f"({ours[2]:.0f}) | {hand_time} | {ratio} |")
    text += ["", END]
    publish("\n".join(text) + "\n", args.results, BEGIN, END)


if __name__ == "__main__":
    main()
