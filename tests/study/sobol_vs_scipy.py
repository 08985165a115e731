#!/usr/bin/python3
"""Compare lockstep's unrandomized Sobol points with scipy.stats.qmc.Sobol(d, scramble=False).

Usage: sobol_vs_scipy.py PATH/TO/sobol_dump [N] [MAX_D]
Compares the first N (default 1024) points in every dimension count d = 1..MAX_D (default 8)
exactly: the coordinates are dyadic rationals with at most log2(N) bits, printed with %.17g, so
parsing gives the exact double. Exits 0 when all agree, 1 on a difference, 77 (ctest skip) when
scipy is not installed.
"""
import subprocess
import sys

try:
    import numpy as np
    from scipy.stats import qmc
except ImportError as error:
    print(f"sobol_vs_scipy: skipped, scipy not available ({error})")
    sys.exit(77)


def main():
    dump = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    max_d = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    failures = 0
    for d in range(1, max_d + 1):
        text = subprocess.run([dump, str(n), str(d)], check=True, capture_output=True, text=True).stdout
        ours = np.array([[float(v) for v in line.split()] for line in text.splitlines()]).reshape(n, d)
        theirs = qmc.Sobol(d, scramble=False).random(n)
        if ours.shape != theirs.shape or not np.array_equal(ours, theirs):
            bad = np.argwhere(ours != theirs)
            k, s = bad[0]
            print(f"d={d}: {len(bad)} coordinates differ; first at point {k} dim {s}: "
                  f"lockstep {ours[k, s]!r} scipy {theirs[k, s]!r}")
            failures += 1
        else:
            print(f"d={d}: first {n} points equal")
    print(f"scipy {sys.modules['scipy'].__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
