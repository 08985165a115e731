"""bench/peers/diffrax_double_pendulum.py — the double pendulum's members in JAX + diffrax, for
bench/explicit_speed.py, which runs it in its own virtual environment (jax[cpu], diffrax) and reads
the JSON it prints.

The members are the double pendulum of lockstep's built-in model (m1 = m2 = L1 = L2 = 1, g = 9.81) as the
ODE in its two angles (bench/peers/double_pendulum_ode.py),
released at rest from the angles given, integrated to t1 in float64:

- the reference: Dopri8 (diffrax's 8(7) pair of Prince & Dormand) at rtol = atol = 1e-13, vmapped;
- each solver and tolerance: Tsit5 (Tsitouras 2011) or Kvaerno5 (Kværnø 2004, an ESDIRK method of order 5
  with diffrax's default Newton iteration, the chord method) with diffrax's PID controller as a plain I
  controller, rtol = atol = tol, jit-compiled and vmapped over every `every`-th member, timed after a first
  call that compiles, best of `rounds` calls (the rounds taken in turn over the tolerances).

Input (argv[1], JSON): {"theta1": [...], "theta2": [...], "t1": 10.0, "runs": [{"solver": "Tsit5",
"tols": [...], "every": 1, "rounds": 3}, ...]}.
Output (stdout, JSON): the reference's bob positions (x1, y1, x2, y2) per member, and per solver and
tolerance the members solved (indices), their positions, the accepted steps per member and the fastest
wall time in seconds.
"""

import json
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from double_pendulum_ode import accelerations, bobs  # noqa: E402


def field(t, y, args):
    th1, th2, w1, w2 = y[0], y[1], y[2], y[3]
    return jnp.stack([w1, w2, *accelerations(th1, th2, w1, w2, jnp.sin, jnp.cos)])


def positions(y):
    return jnp.stack(bobs(y[..., 0], y[..., 1], jnp.sin, jnp.cos), axis=-1)


def solver_for(solver, t1, tol):
    term = diffrax.ODETerm(field)

    def one(y0):
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=t1, dt0=None, y0=y0,
                                  stepsize_controller=diffrax.PIDController(rtol=tol, atol=tol),
                                  saveat=diffrax.SaveAt(t1=True), max_steps=1_000_000)
        return sol.ys[-1], sol.stats["num_accepted_steps"]

    return jax.jit(jax.vmap(one))


def main():
    spec = json.loads(sys.argv[1])
    t1 = float(spec["t1"])
    theta1, theta2 = jnp.asarray(spec["theta1"]), jnp.asarray(spec["theta2"])
    y0 = jnp.stack([theta1, theta2, jnp.zeros_like(theta1), jnp.zeros_like(theta1)], axis=-1)
    reference, _ = solver_for(diffrax.Dopri8(), t1, 1e-13)(y0)
    out = {"reference": positions(reference).tolist(), "jax": jax.__version__, "diffrax": diffrax.__version__,
           "runs": []}
    for run in spec["runs"]:
        members = list(range(0, len(theta1), int(run["every"])))
        y0_run = y0[jnp.asarray(members)]
        solvers, results = {}, {}
        for tol in run["tols"]:
            solvers[tol] = solver_for(getattr(diffrax, run["solver"])(), t1, float(tol))
            results[tol] = solvers[tol](y0_run)  # the first call compiles; its results are every call's
            jax.block_until_ready(results[tol])
        # The rounds go through the tolerances in turn, so that a slow spell of the machine costs one
        # round of several tolerances instead of every round of one (as bench/explicit_speed.py times
        # lockstep).
        best = {tol: float("inf") for tol in run["tols"]}
        for _ in range(int(run["rounds"])):
            for tol in run["tols"]:
                start = time.perf_counter()
                jax.block_until_ready(solvers[tol](y0_run))
                best[tol] = min(best[tol], time.perf_counter() - start)
        for tol in run["tols"]:
            ys, steps = results[tol]
            out["runs"].append({"solver": run["solver"], "tol": tol, "members": members, "seconds": best[tol],
                                "positions": positions(ys).tolist(), "steps": [int(s) for s in steps]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
