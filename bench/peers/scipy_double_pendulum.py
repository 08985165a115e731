"""bench/peers/scipy_double_pendulum.py — the double pendulum's members one after another in SciPy, for
bench/explicit_speed.py, which runs it with the Python of the diffrax peer's virtual environment (JAX
depends on SciPy) and reads the JSON it prints.

What a user without a batch solver writes: a Python loop over the members, each solved by
`scipy.integrate.solve_ivp` with Dormand & Prince's 8(5,3) pair (`method="DOP853"`, Hairer, Nørsett &
Wanner 1993, II.10), rtol = atol = tol, on the ODE in the two angles of the double pendulum of lockstep's
built-in model (bench/peers/double_pendulum_ode.py), released at rest, to t1; the right-hand side in
plain Python on floats, as such a user writes it.

Input (argv[1], JSON): {"theta1": [...], "theta2": [...], "t1": 10.0, "tols": [...], "every": 10,
"rounds": 3}: every `every`-th member is solved, the whole loop timed, best of `rounds` (taken in
turn over the tolerances).
Output (stdout, JSON): SciPy's version and per tolerance the members solved (indices), their bob positions
(x1, y1, x2, y2) at t1, the accepted steps per member and the fastest wall time of the loop in seconds.
"""

import json
import math
import sys
import time

import scipy
from scipy.integrate import solve_ivp

from double_pendulum_ode import accelerations, bobs


def field(t, y):
    th1, th2, w1, w2 = y
    return [w1, w2, *accelerations(th1, th2, w1, w2, math.sin, math.cos)]


def main():
    spec = json.loads(sys.argv[1])
    t1 = float(spec["t1"])
    members = list(range(0, len(spec["theta1"]), int(spec["every"])))
    out = {"scipy": scipy.__version__, "runs": []}
    best = {tol: float("inf") for tol in spec["tols"]}
    solutions = {}
    # The rounds go through the tolerances in turn (as bench/explicit_speed.py times lockstep).
    for _ in range(int(spec["rounds"])):
        for tol in spec["tols"]:
            start = time.perf_counter()
            solutions[tol] = [solve_ivp(field, (0.0, t1), [spec["theta1"][i], spec["theta2"][i], 0.0, 0.0],
                                        method="DOP853", rtol=tol, atol=tol) for i in members]
            best[tol] = min(best[tol], time.perf_counter() - start)
    for tol in spec["tols"]:
        if not all(s.success for s in solutions[tol]):
            raise SystemExit(f"solve_ivp failed at tol {tol}")
        out["runs"].append({"tol": tol, "members": members, "seconds": best[tol],
                            "positions": [list(bobs(s.y[0, -1], s.y[1, -1], math.sin, math.cos)) for s in solutions[tol]],
                            # solve_ivp keeps every accepted step's end point in s.t (no t_eval)
                            "steps": [len(s.t) - 1 for s in solutions[tol]]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
