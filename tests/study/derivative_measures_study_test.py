#!/usr/bin/python3
"""[derivative_measures] end to end: a study's measures against the exact derivatives and the closed form.

Usage: derivative_measures_study_test.py LOCKSTEP

A unit mass on a spring of stiffness omega^2 starts at x0 with velocity u0 omega (u0 = 0.5, an initial
input held fixed): x(t) = x0 cos(omega t) + u0 sin(omega t), with x0 uniform on [1, 2] and omega on
[1, 3]. omega moves the initial velocity, so lockstep's derivative by it is the total one, the
parameter's sensitivity plus that along d(q0, v0)/d omega. Checks, on lockstep's results.h5:

* nu, its standard error, Var y and the bounds of x(t1) and v(t1) equal those of the same estimators
  applied to the exact derivatives and values at the members' own inputs (/members/inputs), to 1e-6
  relative: what the solves and the chain rule add is their error only;
* a lognormal input's measures are taken in its logarithm, E[(omega dx/domega)^2] and C = sigma^2,
  against the exact derivatives too;
* the bounds are at least the total indices S_T of x(t1), computed by Gauss-Legendre quadrature of the
  closed form (Lamboni et al. 2013: C nu / V >= S_T), and nu is the quadrature's E[(dx/dx_i)^2] within
  2 %;
* one thread, two threads and a checkpointed run give the same bits; the summary prints the table, and
  `lockstep plot` draws the bounds;
* failed members (max_steps) above max_failed: NaN with the reason in the summary, exit status 1;
  tangents that are not finite (an initial_state undefined a difference step away) fail their members;
* a grid input, [sensitivity] beside it and a method without tangents are refused at the section.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

MODEL = """
[model]
name = "oscillator"
description = "a unit mass on a spring of stiffness omega^2, started at x0 with velocity u0 omega"

[coordinates]
x = { unit = "m" }

[parameters]
omega = { default = 2.0, unit = "1/s" }

[inputs]
x0 = { default = 1.0, unit = "m" }
u0 = { default = 0.5, unit = "m" }

[mass]
matrix = [[1]]

[force]
x = "-omega**2*x"

[initial]
q = { x = "x0" }
v = { x = "u0*omega" }
"""

STUDY = """
[model]
source = "oscillator.toml"
[solver]
rtol = 1e-10
atol = 1e-10
{solver}
[time]
t1 = {t1}
[ensemble]
{ensemble}
seed = 5
[ensemble.vary]
"initial.x0" = {{ {x0} }}
"params.omega" = {{ {omega} }}
{extra}
[derivative_measures]
{measures}
"""

U0 = 0.5
T1 = 2.0
POINCARE = ((2.0 - 1.0) ** 2 / math.pi ** 2, (3.0 - 1.0) ** 2 / math.pi ** 2)  # (b - a)^2 / pi^2


def solution(x0, omega, t):
    """x, v and their derivatives by x0 and omega (total: v0 = u0 omega moves with omega)."""
    c, s = np.cos(omega * t), np.sin(omega * t)
    x = x0 * c + U0 * s
    v = -x0 * omega * s + U0 * omega * c
    dx = (c, -x0 * t * s + U0 * t * c)
    dv = (-omega * s, -x0 * s - x0 * omega * t * c + U0 * c - U0 * omega * t * s)
    return x, v, dx, dv


def measures(y, dy):
    """The estimators of study/derivative_measures.hpp in NumPy: nu, its standard error, V, C nu / V."""
    n = len(y)
    variance = np.var(y, ddof=1)
    nu = np.array([np.mean(d ** 2) for d in dy])
    stderr = np.array([np.std(d ** 2, ddof=1) / math.sqrt(n) for d in dy])
    return nu, stderr, variance, np.array(POINCARE) * nu / variance


def quadrature(t, points=200):
    """S_T of x(t) and E[(dx/dx_i)^2] over x0 ~ U[1, 2], omega ~ U[1, 3], by Gauss-Legendre quadrature."""
    z, w = np.polynomial.legendre.leggauss(points)
    x0, wx = 1.5 + 0.5 * z, w / 2
    omega, wo = 2.0 + z, w / 2
    X0, OM = np.meshgrid(x0, omega, indexing="ij")
    W = np.outer(wx, wo)
    f, _, d, _ = solution(X0, OM, t)
    mean = np.sum(W * f)
    variance = np.sum(W * (f - mean) ** 2)
    # E[Var(f | all but x0)]: the variance over x0 (axis 0) at each omega, averaged over omega.
    var_x0 = np.sum(wx[:, None] * (f - np.sum(wx[:, None] * f, axis=0)) ** 2, axis=0)
    var_omega = np.sum(wo[None, :] * (f - np.sum(wo[None, :] * f, axis=1)[:, None]) ** 2, axis=1)
    total = (np.sum(wo * var_x0) / variance, np.sum(wx * var_omega) / variance)
    nu = (np.sum(W * d[0] ** 2), np.sum(W * d[1] ** 2))
    return total, nu


failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


def run(lockstep, work, name, solver="", t1=T1, ensemble='members = 1024\nsampler = "sobol"',
        x0="uniform = [1.0, 2.0]", omega="uniform = [1.0, 3.0]", extra="", measures_keys="", expect=(0,), flags=()):
    with open(os.path.join(work, name + ".toml"), "w") as f:
        f.write(STUDY.format(solver=solver, t1=t1, ensemble=ensemble, x0=x0, omega=omega, extra=extra,
                             measures=measures_keys))
    env = dict(os.environ, LOCKSTEP_CACHE_DIR=os.path.join(work, "cache"))
    r = subprocess.run([lockstep, "run", name + ".toml", "-o", name] + list(flags), cwd=work, env=env,
                       capture_output=True, text=True)
    if r.returncode not in expect:
        raise SystemExit(f"lockstep run {name}.toml exited {r.returncode}, expected {expect}:\n{r.stderr}")
    return r


def relative(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.maximum(np.abs(np.asarray(b)), 1e-300)))


def main():
    lockstep = sys.argv[1]
    work = tempfile.mkdtemp(prefix="lockstep-derivative-measures-")
    with open(os.path.join(work, "oscillator.toml"), "w") as f:
        f.write(MODEL)

    # ---- the measures against the same estimators on the exact derivatives at the members' inputs ----
    r = run(lockstep, work, "plain", flags=["--threads", "2"])
    check("derivative measures at t1 = 2 from 1024 members" in r.stderr and re.search(r"q\.x\s+nu ", r.stderr),
          f"the summary prints the table:\n{r.stderr}")
    with h5py.File(os.path.join(work, "plain", "results.h5"), "r") as f:
        g = f["derivative_measures"]
        check([n.decode() if isinstance(n, bytes) else n for n in g.attrs["inputs"]] == ["initial.x0", "params.omega"],
              f"inputs {list(g.attrs['inputs'])}")
        check(float(g.attrs["t"]) == T1 and int(g.attrs["members"]) == 1024, "t and members")
        check(np.all(g["members_used"][()] == 1024), f"members used {g['members_used'][()]}")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["members/inputs"].attrs["names"]]
        inputs = f["members/inputs"][()]
        x0, omega = inputs[:, names.index("initial.x0")], inputs[:, names.index("params.omega")]
        x, v, dx, dv = solution(x0, omega, T1)
        for part, y, dy in (("q", x, dx), ("v", v, dv)):
            nu, stderr, variance, bound = measures(y, dy)
            ours = g["nu"][part][0], g["nu_stderr"][part][0], g["variance"][()][0 if part == "q" else 1], \
                g["total_bound"][part][0]
            for name, a, b in zip(("nu", "nu_stderr", "variance", "total_bound"), ours, (nu, stderr, variance, bound)):
                error = relative(a, b)
                check(error < 1e-6, f"{part} {name}: lockstep {a!r}, exact derivatives {b!r} (relative {error:.1e})")
            print(f"{part}(t1): nu {ours[0]} (exact derivatives {nu}), bound {ours[3]}")
        # The bound holds, and nu is the distribution's E[(dx/dx_i)^2].
        total, nu_exact = quadrature(T1)
        bound, nu = g["total_bound"]["q"][0], g["nu"]["q"][0]
        for i in range(2):
            check(bound[i] >= 0.98 * total[i], f"input {i}: bound {bound[i]:.4f} below S_T {total[i]:.4f}")
            check(abs(nu[i] - nu_exact[i]) < 0.02 * nu_exact[i], f"input {i}: nu {nu[i]:.5f}, quadrature {nu_exact[i]:.5f}")
        print(f"x(t1): S_T {total}, bounds {bound}; nu {nu}, quadrature {nu_exact}")
        plain = {(key, part): g[key][part][()].tobytes() for key in ("nu", "nu_stderr", "total_bound") for part in ("q", "v")}

    # ---- a lognormal input is taken in its logarithm: nu = E[(omega dx/domega)^2], C = sigma^2 ----
    run(lockstep, work, "lognormal", omega="lognormal = { mu = 0.7, sigma = 0.2 }")
    with h5py.File(os.path.join(work, "lognormal", "results.h5"), "r") as f:
        g = f["derivative_measures"]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["members/inputs"].attrs["names"]]
        inputs = f["members/inputs"][()]
        x0, omega = inputs[:, names.index("initial.x0")], inputs[:, names.index("params.omega")]
        x, _, dx, _ = solution(x0, omega, T1)
        nu = np.mean((omega * dx[1]) ** 2)
        bound = 0.2 ** 2 * nu / np.var(x, ddof=1)
        for name, ours, exact_value in (("nu", g["nu"]["q"][0, 1], nu), ("total_bound", g["total_bound"]["q"][0, 1], bound)):
            error = relative(ours, exact_value)
            check(error < 1e-6, f"lognormal omega {name}: lockstep {ours!r}, exact derivatives {exact_value!r} ({error:.1e})")

    # ---- lockstep plot draws the bounds of the outputs at t1 ----
    figures = os.path.join(work, "figures")
    r = subprocess.run([lockstep, "plot", os.path.join(work, "plain", "results.h5"), "--outputs", "x,v.x", "-o", figures],
                       capture_output=True, text=True)
    path = os.path.join(figures, "derivative_measures.png")
    check(r.returncode == 0 and os.path.exists(path) and os.path.getsize(path) > 1000 and path in r.stdout,
          f"lockstep plot writes and lists derivative_measures.png:\n{r.stdout}{r.stderr}")

    # ---- one thread and a checkpointed run give the same bits ----
    for name, flags in (("one_thread", ["--threads", "1"]), ("checkpointed", ["--checkpoint-every", "0.05"])):
        run(lockstep, work, name, flags=flags)
        with h5py.File(os.path.join(work, name, "results.h5"), "r") as f:
            g = f["derivative_measures"]
            same = all(g[key][part][()].tobytes() == plain[key, part] for key in ("nu", "nu_stderr", "total_bound")
                       for part in ("q", "v"))
            check(same, f"{name}: the measures differ from the two-thread run's")

    # ---- failed members above max_failed: NaN, the reason, exit status 1 ----
    r = run(lockstep, work, "failing", solver="max_steps = 150", t1=20.0, omega="uniform = [1.0, 8.0]",
            measures_keys="max_failed = 0.01", expect=(1,))
    with h5py.File(os.path.join(work, "failing", "results.h5"), "r") as f:
        g = f["derivative_measures"]
        check(np.all(np.isnan(g["nu"]["q"][()])) and "failed" in g.attrs["refused"],
              f"refused: {g.attrs['refused']!r}, nu {g['nu']['q'][()]}")
    check(re.search(r"no derivative measures: \d+ of 1024 members' sensitivity solves failed", r.stderr) is not None,
          f"the summary says why:\n{r.stderr}")

    # ---- tangents that are not finite: an initial velocity sqrt(x0 - 1) with x0 within a difference
    # step of 1, where the state direction's difference is NaN: each member's sensitivity solve fails
    # (model_not_finite), and the measures are refused ----
    with open(os.path.join(work, "oscillator.toml"), "w") as f:
        f.write(MODEL.replace('v = { x = "u0*omega" }', 'v = { x = "sqrt(x0 - 1)" }'))
    r = run(lockstep, work, "not_finite", ensemble="members = 64", x0="uniform = [1.0, 1.0000001]", t1=1.0,
            expect=(1,))
    with h5py.File(os.path.join(work, "not_finite", "results.h5"), "r") as f:
        g = f["derivative_measures"]
        check(np.all(np.isnan(g["nu"]["q"][()])) and "64 of 64" in g.attrs["refused"],
              f"not finite: refused {g.attrs['refused']!r}, nu {g['nu']['q'][()]}")
    check("derivative measures: 64 of 64 members' sensitivity solves failed" in r.stderr,
          f"the summary says so:\n{r.stderr}")
    with open(os.path.join(work, "oscillator.toml"), "w") as f:
        f.write(MODEL)

    # ---- refused at the section ----
    for name, kwargs, pattern in (
            ("grid", {"omega": "grid = [1.0, 2.0]"}, r"\[derivative_measures\] averages derivatives over the inputs' "
                                                     r"distribution; \"params.omega\" is a grid"),
            ("with_sensitivity", {"ensemble": "", "extra": "[sensitivity]\nbase = 4"}, r"rows of \[sensitivity\]'s design"),
            ("explicit", {"solver": 'method = "dopri5"'}, r"\[derivative_measures\] takes the forward sensitivities of "
                                                          r"\[solver\] method \"dopri5\"")):
        r = run(lockstep, work, name, expect=(2,), **kwargs)
        check(re.search(rf"{name}\.toml:\d+:\d+: error: .*{pattern}", r.stderr) is not None, f"{name}:\n{r.stderr}")

    print(f"derivative_measures_study_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
