"""The A04 Bricard table of docs/MBS-BENCHMARKS.md: the library's 10 s, one member at rest, serial
backend, rtol = atol, 100 saved points per second; the energy and the constraint checks of
tests/python/test_mbs_benchmarks.py.

    PYTHONPATH=build/python:python /usr/bin/python3 bench/mbs/a04_table.py
"""
import sys
import time
from pathlib import Path

import numpy as np

import lockstep

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
from test_mbs_benchmarks import bricard_constraints, bricard_energy  # noqa: E402

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "mbs" / "a04_bricard.hpp"
CASES = [("bdf", "ggl", "none", 1e-6), ("bdf", "ggl", "none", 1e-8), ("bdf", "ggl", "coordinate", 1e-8),
         ("radau5", "index3", "none", 1e-8), ("radau5", "index3", "coordinate", 1e-8), ("radau5", "ggl", "none", 1e-6),
         ("radau5", "ggl", "none", 1e-8)]

print("| method | formulation | projection | rtol | status | steps | rejected | Jacobians | dropped rows | "
      "largest \\|Phi\\| (all 24, restated) | largest energy error (J) | run time (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
model = lockstep.model(str(SOURCE), quiet=True)
t = np.linspace(0.0, 10.0, 1001)
for method, formulation, projection, tol in CASES:
    started = time.perf_counter()
    ds = lockstep.solve(model, t=(0.0, 10.0), save=t, method=method, formulation=formulation, projection=projection,
                        rtol=tol, atol=tol, backend="serial", threads=1)
    wall = time.perf_counter() - started
    q, v = ds.q.values[0], ds.v.values[0]
    dropped = int(ds.dropped_rows.values[0])
    rows = ", ".join(str(i) for i in range(64) if dropped >> i & 1)
    energy = bricard_energy(q, v)
    phi = max(np.abs(bricard_constraints(qs)).max() for qs in q)
    print(f"| {method} | {formulation} | {projection} | {tol:.0e} | {ds.status_name.values[0]} | "
          f"{int(ds.steps.values[0])} | {int(ds.rejected.values[0])} | {int(ds.jacobian_evaluations.values[0])} | "
          f"{rows} | {phi:.0e} | {np.max(np.abs(energy - energy[0])):.1e} | {wall:.2f} |", flush=True)
