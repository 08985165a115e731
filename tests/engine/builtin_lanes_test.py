#!/usr/bin/python3
"""The built-in models in the lanes of the CPU at hand: the same bits whichever instruction set runs them.

Usage: builtin_lanes_test.py LOCKSTEP

A build whose own engines have no SIMD lanes (the default, baseline) loads, at the first use of a built-in
engine, the engine libraries of the widest instruction set the CPU has (avx2 or avx512) and runs every
method's members in their lanes (docs/SIMD.md, "The built-in models in the lanes of the CPU at hand").
LOCKSTEP_BUILTIN_INSTRUCTION_SET chooses a set. For every set this CPU can run, this runs studies of
four built-in models with BDF, Radau IIA 5 and 3, the rho_inf method, dopri5, tsit5 and auto (whose
oscillators switch to Radau IIA 5 where their damping is large, so that packs hold members of both of its
phases), members stopped by max_steps among them, and checks

  - that every dataset of results.h5 is bitwise the baseline's (members one at a time),
  - that the attributes instruction_set and simd_lanes name the set and its width (4, 8; 0 for the
    baseline and for LOCKSTEP_LANES=0),
  - that `lockstep --version` and `lockstep describe` say so,
  - that an unknown set, and a set this CPU lacks, are refused with the choices or the missing feature.

Exits 77 (skipped) without h5py, or where the build or the CPU offers no set with lanes.
"""
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as error:
    print(f"builtin_lanes_test: skipped ({error})")
    sys.exit(77)

# (model, method, formulation, max_steps): each study mixes members that finish with members that stop
# at max_steps (the slider crank's stiffer members need more steps than the budget allows).
STUDIES = [
    ("double_pendulum", "radau5", "index3", 100000),
    ("double_pendulum", "bdf", "ggl", 100000),
    ("andrews", "radau3", "index3", 100000),
    ("slider_crank", "bdf", "ggl", 445),
    ("slider_crank", "rhoinf", "index3", 100000),
    ("double_pendulum", "dopri5", "index1", 100000),
    ("andrews", "tsit5", "index1", 100000),
    ("linear_oscillator", "auto", "index3", 100000),  # both phases, in lanes
]

STUDY = """
[model]
name = "{model}"
[time]
t1 = {t1}
save = {{ every = {every} }}
[solver]
method = "{method}"
formulation = "{formulation}"
rtol = 1e-6
max_steps = {max_steps}
[ensemble]
members = 37
[ensemble.vary]
{vary}
[output]
trajectories = true
"""

VARY = {
    "double_pendulum": '"params.L2" = { uniform = [0.8, 1.2] }',
    "andrews": '"params.c0" = { uniform = [4.0e5, 5.0e5] }',
    "slider_crank": '"params.k" = { uniform = [0.0, 100.0] }',
    "linear_oscillator": '"params.d" = { lognormal = { mu = 3.0, sigma = 3.0 } }',
}
TIMES = {"double_pendulum": (3.0, 0.5), "andrews": (0.01, 0.002), "slider_crank": (0.1, 0.02),
         "linear_oscillator": (2.0, 0.5)}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


def env_with(instruction_set=None, lanes_off=False):
    env = dict(os.environ)
    env.pop("LOCKSTEP_BUILTIN_INSTRUCTION_SET", None)
    env.pop("LOCKSTEP_LANES", None)
    if instruction_set is not None:
        env["LOCKSTEP_BUILTIN_INSTRUCTION_SET"] = instruction_set
    if lanes_off:
        env["LOCKSTEP_LANES"] = "0"
    return env


def version(lockstep, env):
    return subprocess.run([lockstep, "--version"], capture_output=True, text=True, env=env, check=True).stdout


def builtin_line(text):
    return next(l for l in text.splitlines() if l.startswith("SIMD lanes, built-in models: "))


def datasets(path):
    """Every dataset of the file, by path, as arrays."""
    found = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                found[name] = obj[()]
        f.visititems(visit)
        attributes = {k: f.attrs[k] for k in ("instruction_set", "simd_lanes")}
    return found, attributes


def same_bits(a, b):
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        return a.shape == b.shape and a.tobytes() == b.tobytes()
    return np.array_equal(a, b)


def run(lockstep, work, name, text, env):
    path = os.path.join(work, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    r = subprocess.run([lockstep, "run", path, "-o", out, "--threads", "2"], capture_output=True, text=True, env=env)
    if r.returncode not in (0, 1) or not os.path.exists(os.path.join(out, "results.h5")):  # 1: members failed
        raise SystemExit(f"lockstep run {name} exited {r.returncode}:\n{r.stderr}")
    return datasets(os.path.join(out, "results.h5")) + (r.stderr,)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    lockstep = sys.argv[1]

    # Which sets this build and this CPU offer: a set the CPU lacks is refused, naming the feature.
    offered = {}
    for name, width in (("avx2", 4), ("avx512", 8)):
        r = subprocess.run([lockstep, "describe", "pendulum"], capture_output=True, text=True, env=env_with(name))
        if r.returncode == 0:
            offered[name] = width
        else:
            check("this CPU lacks" in r.stderr or "runs the built-in models' members with" in r.stderr,
                  f"LOCKSTEP_BUILTIN_INSTRUCTION_SET={name} refused without a reason: {r.stderr}")
    if not offered:
        print("builtin_lanes_test: skipped (this build or this CPU offers no instruction set with lanes)")
        sys.exit(77)
    print("sets with lanes:", offered)

    # --version: the widest set by default, none with LOCKSTEP_LANES=0 or the build's own set.
    widest = max(offered, key=offered.get)
    line = builtin_line(version(lockstep, env_with()))
    check(line.startswith(f"SIMD lanes, built-in models: {offered[widest]} per core ({widest})"), line)
    check("off (LOCKSTEP_LANES=0)" in builtin_line(version(lockstep, env_with(lanes_off=True))), "LOCKSTEP_LANES=0")
    line = builtin_line(version(lockstep, env_with("baseline")))
    check("off (LOCKSTEP_BUILTIN_INSTRUCTION_SET=baseline)" in line, line)

    # Refusals: an unknown set names the choices, on every route.
    r = subprocess.run([lockstep, "describe", "pendulum"], capture_output=True, text=True, env=env_with("avx3"))
    check(r.returncode != 0 and "LOCKSTEP_BUILTIN_INSTRUCTION_SET=avx3" in r.stderr and '"avx512"' in r.stderr,
          f"an unknown set: {r.returncode} {r.stderr}")
    check("refused: LOCKSTEP_BUILTIN_INSTRUCTION_SET=avx3" in builtin_line(version(lockstep, env_with("avx3"))),
          "--version with an unknown set")

    with tempfile.TemporaryDirectory() as work:
        for model, method, formulation, max_steps in STUDIES:
            t1, every = TIMES[model]
            text = STUDY.format(model=model, method=method, formulation=formulation, max_steps=max_steps, t1=t1,
                                every=every, vary=VARY[model])
            name = f"{model}-{method}"
            reference, attributes, _ = run(lockstep, work, name + "-baseline", text, env_with("baseline"))
            check(attributes["instruction_set"] == "baseline" and attributes["simd_lanes"] == 0,
                  f"{name}, baseline: attributes {attributes}")
            status = reference["members/status"]
            print(f"{name}: {int(np.sum(status == 1))} of {status.size} members reached t1")
            runs = [(s, env_with(s), w) for s, w in offered.items()] + [("lanes off", env_with(lanes_off=True), 0)]
            for label, env, width in runs:
                values, attributes, summary = run(lockstep, work, f"{name}-{label.replace(' ', '-')}", text, env)
                expected_set = label if width else "baseline"
                check(attributes["instruction_set"] == expected_set and attributes["simd_lanes"] == width,
                      f"{name}, {label}: attributes {attributes}")
                check(sorted(values) == sorted(reference), f"{name}, {label}: other datasets")
                if method in ("dopri5", "tsit5") and width:  # the summary counts an explicit method's stage systems
                    check("the stages' saddle-point systems: " in summary and "the corrector" not in summary,
                          f"{name}, {label}: the summary of the lanes' work:\n{summary}")
                differ = [k for k in reference if k in values and not same_bits(reference[k], values[k])]
                check(not differ, f"{name}, {label}: datasets differ from the baseline's: {differ}")
        # Some members of the slider crank's BDF study stop at max_steps; most finish.
        status = datasets(os.path.join(work, "slider_crank-bdf-baseline", "results.h5"))[0]["members/status"]
        check(0 < np.sum(status != 1) < status.size, f"the slider crank's BDF study: statuses {status}")


    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("builtin_lanes_test: passed")


main()
