"""The A02 N-four-bar table of docs/MBS-BENCHMARKS.md: N = 2 over 10 s and N = 40 over the library's
20 s, one member, serial backend, rtol = atol, 100 saved points per second; errors against the
independent one-degree-of-freedom solution and the energy of tests/python/test_mbs_benchmarks.py.

    PYTHONPATH=build/python:python /usr/bin/python3 bench/mbs/a02_table.py
"""
import sys
import time
from pathlib import Path

import numpy as np

import lockstep

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
from test_mbs_benchmarks import energy_a02, parallel_branch_a02  # noqa: E402

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "mbs" / "a02_n_four_bar.hpp"
CASES = [(2, 10.0, "bdf", "ggl", "none", 1e-6), (2, 10.0, "bdf", "ggl", "none", 1e-8),
         (2, 10.0, "bdf", "ggl", "coordinate", 1e-8), (2, 10.0, "radau5", "index3", "none", 1e-8),
         (2, 10.0, "radau5", "ggl", "none", 1e-8),
         (40, 20.0, "bdf", "ggl", "none", 1e-6), (40, 20.0, "bdf", "ggl", "none", 1e-8)]

print("| N | method | formulation | projection | rtol | status (t reached) | steps | rejected | Jacobians | "
      "passes of the singular position | largest position error | largest energy error (J) | "
      "largest \\|y_i - y_0\\| | run time (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for N, t1, method, formulation, projection, tol in CASES:
    model = lockstep.model(str(SOURCE), name=f"n_four_bar_{N}", quiet=True)
    t = np.linspace(0.0, t1, int(100 * t1) + 1)
    started = time.perf_counter()
    ds = lockstep.solve(model, t=(0.0, t1), save=t, method=method, formulation=formulation, projection=projection,
                        rtol=tol, atol=tol, backend="serial", threads=1)
    wall = time.perf_counter() - started
    q, v = ds.q.values[0], ds.v.values[0]
    ok = ~np.isnan(q[:, 0])
    q, v, t_ok = q[ok], v[ok], t[ok]
    phi = parallel_branch_a02(N, t)[ok]
    error = np.max(np.hypot(q[:, 0] - np.cos(phi), q[:, 1] - np.sin(phi)))
    energy = energy_a02(N, q, v)
    passes = int(np.sum(np.diff(np.sign(q[:, 1])) != 0))
    print(f"| {N} | {method} | {formulation} | {projection} | {tol:.0e} | {ds.status_name.values[0]} "
          f"({float(ds.final_t.values[0]):.3f}) | {int(ds.steps.values[0])} | {int(ds.rejected.values[0])} | "
          f"{int(ds.jacobian_evaluations.values[0])} | {passes} | {error:.1e} | "
          f"{np.max(np.abs(energy - energy[0])):.1e} | {np.max(np.abs(q[:, 1::2] - q[:, 1:2])):.0e} | {wall:.2f} |",
          flush=True)
