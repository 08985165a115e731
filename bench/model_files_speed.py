#!/usr/bin/python3
"""bench/model_files_speed.py — a model file runs at the speed of the same model built in.

Runs one study per model pair through the `lockstep` binary — the built-in model by [model] name and
the same model as a model file by [model] source, the latter compiled twice: for the baseline
instruction set (LOCKSTEP_MODEL_INSTRUCTION_SET=baseline) and for the widest this CPU has (the
default, which `lockstep --version` names) — alternating, REPS times each, and reports the median wall
time of the solve (results.h5's wall_time_seconds: the ensemble, not the compile or the I/O) and the
ratios model file / built-in and widest / baseline. The model file is compiled once per set, before the
timings (its own cache directory); its two engines must give the same bits, and the built-in model's
results must be the same (bit for bit for a header copy; within 10 (atol + rtol |y|) for an equations
file).

    /usr/bin/python3 bench/model_files_speed.py --lockstep build/host/cli/lockstep [--reps 5] [--members 20000]

Pairs: double_pendulum and a copy of its header in another namespace; andrews and
examples/mbs/a03_andrews.toml when that file exists.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def header_copy(work):
    text = open(os.path.join(ROOT, "include", "lockstep", "model", "double_pendulum.hpp")).read()
    text = text.replace("namespace lockstep::models {", "namespace bench_models {\nusing namespace lockstep;")
    text = text.replace('name = "double_pendulum"', 'name = "double_pendulum_file"')
    path = os.path.join(work, "double_pendulum_file.hpp")
    open(path, "w").write(text)
    return path


STUDY = """[model]
{model}
[solver]
rtol = {rtol}
atol = {rtol}
[time]
t1 = {t1}
[ensemble]
members = {members}
sampler = "sobol"
vary = {{ {vary} }}
"""


def widest_set(lockstep, env):
    r = subprocess.run([lockstep, "--version"], env=env, capture_output=True, text=True, check=True)
    return next(l.split(": ", 1)[1] for l in r.stdout.splitlines() if l.startswith("model files compiled for: "))


def run(lockstep, study, out, env):
    r = subprocess.run([lockstep, "run", study, "-o", out, "-q"], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"lockstep run {study} failed (exit {r.returncode}):\n{r.stderr}")
    with h5py.File(os.path.join(out, "results.h5"), "r") as f:
        return float(f.attrs["wall_time_seconds"]), f["members/final_q"][()], f["members/status"][()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lockstep", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--members", type=int, default=20000)
    args = parser.parse_args()
    lockstep = os.path.abspath(args.lockstep)
    work = tempfile.mkdtemp(prefix="lockstep-bench-model-files-")
    env = dict(os.environ, LOCKSTEP_CACHE_DIR=os.path.join(work, "cache"))
    env.pop("LOCKSTEP_MODEL_INSTRUCTION_SET", None)
    envs = {"builtin": env, "file-baseline": dict(env, LOCKSTEP_MODEL_INSTRUCTION_SET="baseline"), "file": env}
    widest = widest_set(lockstep, env)
    pairs = [("double_pendulum", 'name = "double_pendulum"', f'source = "{header_copy(work)}"', 10.0, 1e-6,
              '"initial.theta1" = { uniform = [1.5, 2.5] }', args.members, True)]
    andrews_toml = os.path.join(ROOT, "examples", "mbs", "a03_andrews.toml")
    if os.path.exists(andrews_toml):
        pairs.append(("andrews", 'name = "andrews"', f'source = "{andrews_toml}"', 0.03, 1e-6,
                      '"params.c0" = { uniform = [4530.0, 4550.0] }', max(1, args.members // 10), False))
    print(f"command: /usr/bin/python3 bench/model_files_speed.py --lockstep {args.lockstep} --reps {args.reps} "
          f"--members {args.members}")
    print(f"| model | members | built in [s] | model file, baseline [s] | model file, {widest} [s] | "
          f"ratio (file, {widest} / built in) | ratio ({widest} / baseline) | results |")
    print("|---|---|---|---|---|---|---|---|")
    for label, builtin, own, t1, rtol, vary, members, bitwise in pairs:
        studies = {}
        for kind, model in (("builtin", builtin), ("file-baseline", own), ("file", own)):
            path = os.path.join(work, f"{label}_{kind}.toml")
            open(path, "w").write(STUDY.format(model=model, rtol=rtol, t1=t1, members=members, vary=vary))
            studies[kind] = path
        for kind in ("file-baseline", "file"):  # compiles once per instruction set
            run(lockstep, studies[kind], os.path.join(work, "warm"), envs[kind])
        times = {kind: [] for kind in studies}
        finals = {}
        for r in range(args.reps):
            for kind in studies:
                seconds, q, status = run(lockstep, studies[kind], os.path.join(work, f"{label}_{kind}_{r}"), envs[kind])
                times[kind].append(seconds)
                finals[kind] = (q, status)
        qb, sb = finals["builtin"]
        qf, sf = finals["file"]
        q0, s0 = finals["file-baseline"]
        if q0.tobytes() != qf.tobytes() or not (s0 == sf).all():
            print(f"{label}: the model file's engines for the baseline and for {widest} differ", file=sys.stderr)
            return 1
        if bitwise:
            same = "bitwise equal" if qb.tobytes() == qf.tobytes() and (sb == sf).all() else "DIFFERENT"
        else:
            ok = (sb == sf).all() and np.all(np.abs(qb - qf) <= 10 * (rtol + rtol * np.abs(qb)))
            same = "within 10 (atol + rtol |y|), equal statuses" if ok else "DIFFERENT"
        b, f0, f = (statistics.median(times[kind]) for kind in ("builtin", "file-baseline", "file"))
        print(f"| {label} | {members} | {b:.3f} | {f0:.3f} | {f:.3f} | {f / b:.3f} | {f / f0:.3f} | {same}; "
              f"the two engines bitwise equal |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
