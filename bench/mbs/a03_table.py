"""The A03 Andrews table of docs/MBS-BENCHMARKS.md: examples/mbs/a03_andrews.toml (an equations file)
over the library's 0.05 s, one member, serial backend, rtol = atol, 5,001 saved points; the error at
0.03 s against the IVP Test Set's reference and the work-energy balance of
tests/python/test_mbs_benchmarks.py.

    PYTHONPATH=build/python:python /usr/bin/python3 bench/mbs/a03_table.py
"""
import sys
import time
from pathlib import Path

import numpy as np

import lockstep

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
from test_mbs_benchmarks import ANDREWS_AT_0_03, work_energy_balance  # noqa: E402

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "mbs" / "a03_andrews.toml"
CASES = [("radau5", "index3", 1e-8), ("radau5", "index3", 1e-10), ("radau5", "ggl", 1e-8), ("radau5", "ggl", 1e-10),
         ("bdf", "ggl", 1e-6), ("bdf", "ggl", 1e-9)]

print("| method | formulation | rtol | status (t reached) | steps | rejected | Jacobians | largest relative error at "
      "0.03 s | largest \\|work-energy balance\\| (J) | run time (s) |")
print("|---|---|---|---|---|---|---|---|---|---|")
model = lockstep.model(str(SOURCE), quiet=True)
t = np.linspace(0.0, 0.05, 5001)
for method, formulation, tol in CASES:
    started = time.perf_counter()
    ds = lockstep.solve(model, t=(0.0, 0.05), save=t, method=method, formulation=formulation, rtol=tol, atol=tol,
                        backend="serial", threads=1)
    wall = time.perf_counter() - started
    q, v = ds.q.values[0], ds.v.values[0]
    status = f"{ds.status_name.values[0]} ({float(ds.final_t.values[0]):.4f})"
    counts = f"{int(ds.steps.values[0])} | {int(ds.rejected.values[0])} | {int(ds.jacobian_evaluations.values[0])}"
    if ds.status_name.values[0] != "success":
        print(f"| {method} | {formulation} | {tol:.0e} | {status} | {counts} | - | - | {wall:.3f} |", flush=True)
        continue
    error = np.max(np.abs(q[3000] - ANDREWS_AT_0_03) / np.abs(ANDREWS_AT_0_03))
    balance, _ = work_energy_balance(model, t, q, v)
    print(f"| {method} | {formulation} | {tol:.0e} | {status} | {counts} | {error:.1e} | {np.max(np.abs(balance)):.1e} | "
          f"{wall:.3f} |", flush=True)
