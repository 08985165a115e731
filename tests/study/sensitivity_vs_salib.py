#!/usr/bin/python3
"""Hand the outputs of lockstep's Saltelli design to SALib's analysis and compare the indices.

Usage: sensitivity_vs_salib.py PATH/TO/sensitivity_dump VENV

sensitivity_dump prints, for a test function, the outputs at the points of lockstep's design and
lockstep's first-order, total and second-order indices of them (lockstep/study/sensitivity_indices.hpp).
SALib.analyze.sobol.analyze (Herman & Usher 2017) reads the same outputs in the same order and must
give the same indices to 1e-12 relative (1e-14 absolute for an index near zero, whose estimate is a
difference of sums of order one). SALib comes from PyPI into the virtual environment VENV (salib_venv.py);
exits 77 (ctest: skipped) when PyPI cannot be reached to install it.
"""
import os
import subprocess
import sys

import salib_venv


def compare(dump, function, rows, order):
    import numpy as np
    from SALib.analyze import sobol

    text = subprocess.run([dump, function, str(rows), str(order)], check=True, capture_output=True, text=True).stdout
    lines = text.splitlines()
    head = lines[0].split()
    k = int(head[1])
    ours = {}
    at = 1
    for name in ("first", "total") + (("second",) if order == 2 else ()):
        fields = lines[at].split()
        assert fields[0] == name, lines[at]
        ours[name] = np.array([float(v) for v in fields[1:]])
        at += 1
    y = np.array([float(v) for v in lines[at:]])
    problem = {"num_vars": k, "names": [f"x{i}" for i in range(k)], "bounds": [[0.0, 1.0]] * k}
    theirs = sobol.analyze(problem, y, calc_second_order=order == 2, num_resamples=2, seed=1)
    pairs = [("first", ours["first"], theirs["S1"]), ("total", ours["total"], theirs["ST"])]
    if order == 2:
        upper = np.triu_indices(k, 1)
        pairs.append(("second", ours["second"].reshape(k, k)[upper], np.asarray(theirs["S2"])[upper]))
    worst = 0.0
    failed = False
    for name, a, b in pairs:
        error = np.abs(a - b)
        bound = np.maximum(1e-12 * np.abs(b), 1e-14)
        worst = max(worst, float(np.max(error / np.maximum(np.abs(b), 1e-2))))
        if np.any(error > bound):
            failed = True
            print(f"{function}, {rows} rows, order {order}: {name} differs:\n  lockstep {a!r}\n  SALib    {b!r}")
    print(f"{function}, {rows} rows, order {order}: {k} inputs, largest relative difference {worst:.1e}")
    return failed


def main():
    dump, venv = sys.argv[1], sys.argv[2]
    if not salib_venv.inside():
        return salib_venv.run_inside(venv, __file__, [dump, venv])
    import SALib
    print(f"SALib {SALib.__version__}")
    failed = False
    for function, rows, order in [("ishigami", 1 << 12, 1), ("ishigami", 1 << 12, 2), ("oscillator", 1 << 10, 1),
                                  ("offset", 1 << 10, 2)]:
        failed |= compare(dump, function, rows, order)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
