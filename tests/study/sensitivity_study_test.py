#!/usr/bin/python3
"""[sensitivity] end to end: a study's indices against the closed form and against SALib.

Usage: sensitivity_study_test.py LOCKSTEP VENV

A unit mass on a spring of stiffness omega^2, released at rest from x0: x(t) = x0 cos(omega t), with
x0 uniform on [1, 2] and omega on [1, 3]. With g = cos(omega t), V = E[x0^2] E[g^2] - E[x0]^2 E[g]^2,
V_x0 = Var(x0) E[g]^2 and V_omega = E[x0]^2 Var(g); their interaction Var(x0) Var(g) makes the total
indices exceed the first-order ones. Checks, on lockstep's results.h5:

* the indices of x at t = 1 and t = 2 against the closed form (within their intervals' width and
  0.02), and at t0, where x = x0: S_x0 = S_T,x0 = 1 and S_omega = 0; v = 0 there, which has no indices;
* the same outputs (the trajectories' x at t = 2, in member order) handed to SALib's analysis give the
  same first-order and total indices to 1e-12 relative (SALib from PyPI: salib_venv.py), and so do a
  double pendulum's largest Lyapunov exponents (/lyapunov/exponents against /sensitivity/lyapunov);
* `lockstep plot` draws an output's indices over time; a checkpointed run gives the same indices bit for bit; 10 replicates give intervals from the
  replicates, and the summary says how many members the design has;
* members that fail (max_steps) leave their rows out, and above max_failed the indices are refused,
  with the reason in the summary;
* [ensemble] members beside [sensitivity], and a base that is not a power of two, are refused at the key.
Exits 77 (skipped) when PyPI cannot be reached to install SALib.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

import salib_venv

MODEL = """
[model]
name = "harmonic_oscillator"
description = "a unit mass on a spring of stiffness omega^2, released at rest from x0"

[coordinates]
x = { unit = "m" }

[parameters]
omega = { default = 2.0, unit = "1/s" }

[inputs]
x0 = { default = 1.0, unit = "m" }

[mass]
matrix = [[1]]

[force]
x = "-omega**2*x"

[initial]
q = { x = "x0" }
v = { x = "0" }
"""

STUDY = """
[model]
source = "oscillator.toml"
[solver]
rtol = 1e-10
atol = 1e-10
{solver}
[time]
t1 = 2.0
save = {{ every = 1.0 }}
[ensemble]
seed = 3
{ensemble}
[ensemble.vary]
"initial.x0" = {{ uniform = [1.0, 2.0] }}
"params.omega" = {{ uniform = [1.0, 3.0] }}
[output]
trajectories = true
[sensitivity]
{sensitivity}
"""


def exact(t):
    """(S_x0, S_omega), (S_T,x0, S_T,omega) of x0 cos(omega t), x0 ~ U[1, 2], omega ~ U[1, 3]."""
    mean_g = (math.sin(3 * t) - math.sin(t)) / (2 * t)
    mean_g2 = 0.5 + (math.sin(6 * t) - math.sin(2 * t)) / (8 * t)
    v = (1 / 12 + 2.25) * mean_g2 - 2.25 * mean_g ** 2
    v_x0, v_omega = mean_g ** 2 / 12, 2.25 * (mean_g2 - mean_g ** 2)
    return (v_x0 / v, v_omega / v), (1 - v_omega / v, 1 - v_x0 / v)


failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


def run(lockstep, work, name, solver="", ensemble="", sensitivity="base = 1024", expect=(0,), flags=()):
    with open(os.path.join(work, name + ".toml"), "w") as f:
        f.write(STUDY.format(solver=solver, ensemble=ensemble, sensitivity=sensitivity))
    env = dict(os.environ, LOCKSTEP_CACHE_DIR=os.path.join(work, "cache"))
    r = subprocess.run([lockstep, "run", name + ".toml", "-o", name] + list(flags), cwd=work, env=env,
                       capture_output=True, text=True)
    if r.returncode not in expect:
        raise SystemExit(f"lockstep run {name}.toml exited {r.returncode}, expected {expect}:\n{r.stderr}")
    return r


def main():
    lockstep, venv = sys.argv[1], sys.argv[2]
    if not salib_venv.inside():
        return salib_venv.run_inside(venv, __file__, [os.path.abspath(lockstep), venv])
    import h5py
    import numpy as np
    from SALib.analyze import sobol

    work = tempfile.mkdtemp(prefix="lockstep-sensitivity-")
    with open(os.path.join(work, "oscillator.toml"), "w") as f:
        f.write(MODEL)

    # ---- the indices against the closed form, and against SALib on the same outputs ----
    r = run(lockstep, work, "plain")
    check("Saltelli's design: 1024 rows x (2 + 2) = 4096 members" in r.stderr,
          f"the summary names the design's members:\n{r.stderr}")
    with h5py.File(os.path.join(work, "plain", "results.h5"), "r") as f:
        s = f["sensitivity"]
        check(list(s.attrs["inputs"]) == ["initial.x0", "params.omega"], f"inputs {list(s.attrs['inputs'])}")
        check(s.attrs["intervals"] == "bootstrap" and int(s.attrs["resamples"]) == 100, "bootstrap intervals, 100 resamples")
        first, total = s["first/q"][()], s["total/q"][()]  # [save, q, input]
        first_conf, total_conf = s["first_conf/q"][()], s["total_conf/q"][()]
        check(first.shape == (3, 1, 2), f"first/q has shape {first.shape}")
        for save, t in ((1, 1.0), (2, 2.0)):
            (s1, s2), (t1, t2) = exact(t)
            for i, (e_first, e_total) in enumerate(((s1, t1), (s2, t2))):
                tolerance = max(0.02, 3 * first_conf[save, 0, i])
                check(abs(first[save, 0, i] - e_first) < tolerance,
                      f"S_{i} at t = {t}: {first[save, 0, i]:.4f}, exact {e_first:.4f}")
                tolerance = max(0.02, 3 * total_conf[save, 0, i])
                check(abs(total[save, 0, i] - e_total) < tolerance,
                      f"S_T{i} at t = {t}: {total[save, 0, i]:.4f}, exact {e_total:.4f}")
            check(total[save, 0, 0] > first[save, 0, 0] + 0.01, f"the interaction shows at t = {t}")
        # At t0 x = x0: A_B^(omega) is A there, so S_omega and S_T,omega vanish exactly; the estimates of
        # S_x0 = S_T,x0 = 1 differ from 1 by the sample's V.
        check(abs(first[0, 0, 0] - 1) < 1e-3 and abs(total[0, 0, 0] - 1) < 1e-3 and first[0, 0, 1] == 0
              and total[0, 0, 1] == 0, f"at t0 x = x0: S = {first[0, 0]}, S_T = {total[0, 0]}")
        check(np.all(np.isnan(s["first/v"][0])), "v = 0 at t0 has no indices")
        check(np.all(s["rows_used"][()][1:] == 1024), "every row entered")
        y = f["q"][:, 2, 0]  # x at t = 2, member order: the design's rows
        problem = {"num_vars": 2, "names": ["x0", "omega"], "bounds": [[1.0, 2.0], [1.0, 3.0]]}
        theirs = sobol.analyze(problem, y, calc_second_order=False, num_resamples=2, seed=1)
        for name, ours, salib in (("first", first[2, 0], theirs["S1"]), ("total", total[2, 0], theirs["ST"])):
            check(np.all(np.abs(ours - salib) <= 1e-12 * np.abs(salib)),
                  f"{name} at t = 2: lockstep {ours!r}, SALib {salib!r}")
        print(f"SALib at t = 2: S1 {theirs['S1']}, ST {theirs['ST']}; lockstep {first[2, 0]}, {total[2, 0]}")

    # ---- the Lyapunov exponents' indices: SALib on /lyapunov/exponents gives the same ----
    lyapunov_study = os.path.join(work, "lyapunov.toml")
    with open(lyapunov_study, "w") as f:
        f.write('[model]\nname = "double_pendulum"\ninitial = { theta1 = 0.5, theta2 = 0.7 }\n[time]\nt1 = 2.0\n'
                '[ensemble.vary]\n"params.L2" = { uniform = [0.9, 1.1] }\n"initial.theta1" = { uniform = [0.4, 0.6] }\n'
                '[lyapunov]\nexponents = 1\nrenormalize = 0.5\n[sensitivity]\nbase = 64\n')
    r = subprocess.run([lockstep, "run", "lyapunov.toml", "-o", "lyapunov"], cwd=work, capture_output=True, text=True)
    check(r.returncode == 0 and "lambda_1" in r.stderr, f"the Lyapunov study and its summary:\n{r.stderr}")
    with h5py.File(os.path.join(work, "lyapunov", "results.h5"), "r") as f:
        exponents = f["lyapunov/exponents"][:, 0]
        ours = f["sensitivity/lyapunov/first"][0], f["sensitivity/lyapunov/total"][0]
        check(f["sensitivity/lyapunov/rows_used"][0] == 64, "every row's exponent entered")
    problem = {"num_vars": 2, "names": ["L2", "theta1"], "bounds": [[0.9, 1.1], [0.4, 0.6]]}
    theirs = sobol.analyze(problem, exponents, calc_second_order=False, num_resamples=2, seed=1)
    for name, a, b in (("first", ours[0], theirs["S1"]), ("total", ours[1], theirs["ST"])):
        check(np.all(np.abs(a - b) <= 1e-12 * np.abs(b)), f"lambda_1 {name}: lockstep {a!r}, SALib {b!r}")

    # ---- lockstep plot draws the indices of an output over time ----
    figures = os.path.join(work, "figures")
    r = subprocess.run([lockstep, "plot", os.path.join(work, "plain", "results.h5"), "--outputs", "x,v.x", "-o", figures],
                       capture_output=True, text=True)
    for png in ("sensitivity_x.png", "sensitivity_v.x.png"):
        path = os.path.join(figures, png)
        check(r.returncode == 0 and os.path.exists(path) and os.path.getsize(path) > 1000 and path in r.stdout,
              f"lockstep plot writes and lists {png}:\n{r.stdout}{r.stderr}")

    # ---- a checkpointed run (members journaled, the statistics' state saved) gives the same bits ----
    run(lockstep, work, "checkpointed", flags=["--checkpoint-every", "0.05", "--threads", "1"])
    with h5py.File(os.path.join(work, "plain", "results.h5"), "r") as a, \
         h5py.File(os.path.join(work, "checkpointed", "results.h5"), "r") as b:
        for index in ("first", "first_conf", "total", "total_conf"):
            for part in ("q", "v"):
                check(a[f"sensitivity/{index}/{part}"][()].tobytes() == b[f"sensitivity/{index}/{part}"][()].tobytes(),
                      f"{index}/{part} of the checkpointed run differs")

    # ---- replicates give the intervals ----
    run(lockstep, work, "replicates", ensemble="replicates = 10", sensitivity="base = 128")
    with h5py.File(os.path.join(work, "replicates", "results.h5"), "r") as f:
        s = f["sensitivity"]
        check(s.attrs["intervals"] == "replicates" and "resamples" not in s.attrs, "intervals from 10 replicates")
        check(np.all(np.isfinite(s["first_conf/q"][2])), "the replicates' intervals are numbers")

    # ---- failed members: rows left out, and refused above max_failed ----
    def failed_rows(f):
        names = [n.decode() if isinstance(n, bytes) else n for n in f["members/status"].attrs["names"]]
        status = f["members/status"][()]
        return int(np.sum(np.any(status.reshape(-1, 4) != names.index("success"), axis=1)))

    # max_steps = 600 stops the members of a few rows (0.7 % of them), 500 of 41 %: below and above
    # max_failed = 5 %.
    run(lockstep, work, "few_failing", solver="max_steps = 600", expect=(1,))
    with h5py.File(os.path.join(work, "few_failing", "results.h5"), "r") as f:
        failed = failed_rows(f)
        check(0 < failed < 0.05 * 1024, f"max_steps = 600 stops the members of a few rows ({failed})")
        check(f["sensitivity/rows_used"][2, 0] == 1024 - failed,
              f"rows used at t1: {f['sensitivity/rows_used'][2, 0]}, expected {1024 - failed}")
        check(np.all(np.isfinite(f["sensitivity/first/q"][2])), "estimated from the rows left below max_failed")
    r = run(lockstep, work, "many_failing", solver="max_steps = 500", expect=(1,))
    with h5py.File(os.path.join(work, "many_failing", "results.h5"), "r") as f:
        failed = failed_rows(f)
        check(failed > 0.05 * 1024, f"max_steps = 500 stops the members of many rows ({failed})")
        check(np.all(np.isnan(f["sensitivity/first/q"][2])), "refused above max_failed: NaN")
        check(re.search(rf"no indices: {failed} of 1024 design rows have a failed member", r.stderr) is not None,
              f"the summary says why:\n{r.stderr}")

    # ---- refused at the key ----
    r = run(lockstep, work, "with_members", ensemble="members = 10", expect=(2,))
    check(re.search(r"with_members\.toml:\d+:\d+: error: \[ensemble\] members has no effect with \[sensitivity\]", r.stderr)
          is not None, f"members beside [sensitivity]:\n{r.stderr}")
    r = run(lockstep, work, "odd_base", sensitivity="base = 1000", expect=(2,))
    check(re.search(r"odd_base\.toml:\d+:\d+: error: \[sensitivity\] base must be a power of two", r.stderr) is not None,
          f"base = 1000:\n{r.stderr}")

    print(f"sensitivity_study_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
