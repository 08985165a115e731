#!/usr/bin/python3
"""The A01 table of docs/MBS-BENCHMARKS.md: the simple pendulum of the multibody benchmark library
(examples/mbs/a01_simple_pendulum.toml) over 10 s with 1,001 saved points, one member, serial backend,
against its exact motion in Jacobi elliptic functions (tests/python/test_mbs_benchmarks.py).

    PYTHONPATH=build/python:python /usr/bin/python3 bench/mbs/a01_table.py
"""

import pathlib
import sys

import numpy as np

import lockstep

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from test_mbs_benchmarks import exact_a01  # noqa: E402

CASES = [("radau5", "index3", 1e-6), ("radau5", "index3", 1e-9), ("radau5", "ggl", 1e-6), ("radau5", "ggl", 1e-8),
         ("bdf", "ggl", 1e-6), ("bdf", "ggl", 1e-8)]


def main():
    a01 = lockstep.model(str(ROOT / "examples/mbs/a01_simple_pendulum.toml"), quiet=True)
    t = np.linspace(0.0, 10.0, 1001)
    x_exact, y_exact = exact_a01(t)
    print("| method | formulation | rtol | steps | largest position error | largest energy error (J) | largest \\|Phi\\| |")
    print("|---|---|---|---|---|---|---|")
    for method, formulation, tol in CASES:
        ds = lockstep.solve(a01, t=(0.0, 10.0), save=t, method=method, formulation=formulation, rtol=tol, atol=tol,
                            backend="serial")
        x, y = ds.q.sel(coordinate="x").values[0], ds.q.sel(coordinate="y").values[0]
        vx, vy = ds.v.sel(coordinate="x").values[0], ds.v.sel(coordinate="y").values[0]
        error = np.max(np.hypot(x - x_exact, y - y_exact))
        energy = np.max(np.abs(0.5 * (vx ** 2 + vy ** 2) + 9.81 * y))
        status = str(ds.status_name.values[0])
        steps = f"{int(ds.steps.values[0])}" if status == "success" else status
        print(f"| {method} | {formulation} | {tol:g} | {steps} | {error:.1e} | {energy:.1e} | {float(ds.max_phi.values[0]):.1e} |")


if __name__ == "__main__":
    main()
