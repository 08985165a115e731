"""Peak memory of a 10^5-member solve that keeps three save points: within a bound computed from the
sizes of what the solve must hold.

The solve runs in a child of a child: the outer child starts it and reports
getrusage(RUSAGE_CHILDREN).ru_maxrss, the peak resident size of its only child, so nothing else this
test session started (the lockstep command of other tests) enters the number. A child that only
imports the package and builds the model gives the interpreter's baseline the same way. Run by ctest
with the rest of tests/python (python_api); about 3 s.
"""

import os
import subprocess
import sys
import textwrap

import lockstep

MEMBERS = 100_000
SAVES = 3
MiB = 1 << 20
CHUNK_CAP = 256 * MiB  # host chunk storage when chunk_size = 0: at most 256 MiB (lockstep/ensemble.hpp)

CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import xarray
    import lockstep
    model = lockstep.model("pendulum")
    if sys.argv[1] == "solve":
        ds = lockstep.solve(model, vary={"initial.theta0": np.linspace(0.1, 1.0, %d)}, t=(0.0, 0.1),
                            save=np.linspace(0.0, 0.1, %d), threads=2)
        assert (ds.status == 1).all()
""" % (MEMBERS, SAVES))

# Runs CHILD with argv[1] and prints the peak resident size of that child in KiB (Linux: ru_maxrss).
OUTER = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")


def peak_bytes(what):
    out = subprocess.run([sys.executable, "-c", OUTER, CHILD, what], capture_output=True, text=True,
                         env=os.environ.copy(), timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1]) * 1024


def expected_bytes():
    """What the solve must hold at its peak, beyond the interpreter, from the sizes."""
    model = lockstep.model("pendulum")
    N, ny = MEMBERS, 2 * model.n + 2 * model.m + model.k
    n_params, n_inputs = len(model.parameters), len(model.inputs)
    chunk = min(N * lockstep._lockstep.bytes_per_member(model._engine, SAVES, "radau5"), CHUNK_CAP)
    outputs = N * SAVES * ny * 8            # [members, saves, ny], handed to NumPy without a copy
    finals = N * (ny + 1) * 8               # y_final, t_final
    counters = 2 * N * 16 * 8               # the engine's member_counters and the Dataset's 16 arrays
    status = N * (4 + 4 + 8)                # the engine's codes, the int32 array, status_name's pointers
    inputs = N * 8 * (2 * (n_params + 2 * model.n) + n_inputs + 1)  # P, q0, v0 in Python and C++, X, vary
    return chunk + outputs + finals + counters + status + inputs


def test_solve_of_100000_members_stays_within_its_memory_bound():
    baseline = peak_bytes("import")
    peak = peak_bytes("solve")
    expected = expected_bytes()
    # 20 % and 16 MiB over the sizes: the allocator's slack, the thread team's stacks, xarray's indexes.
    bound = baseline + 1.2 * expected + 16 * MiB
    print(f"baseline {baseline / MiB:.0f} MiB, solve {peak / MiB:.0f} MiB, sizes {expected / MiB:.0f} MiB, "
          f"bound {bound / MiB:.0f} MiB")
    assert peak > baseline + 0.5 * expected, "the solve ran and held its chunk"
    assert peak < bound
