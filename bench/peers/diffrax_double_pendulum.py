"""bench/peers/diffrax_double_pendulum.py — the double pendulum's members in JAX + diffrax, for
bench/explicit_speed.py, which runs it in its own virtual environment (jax[cpu], diffrax) and reads
the JSON it prints.

The members are the double pendulum of lockstep's built-in model (m1 = m2 = L1 = L2 = 1, g = 9.81) as the
ODE in its two angles (Lagrange's equations of tests/support/reference.hpp, double_pendulum_accel),
released at rest from the angles given, integrated to t1 in float64:

- the reference: Dopri8 (diffrax's 8(7) pair of Prince & Dormand) at rtol = atol = 1e-13, vmapped;
- each tolerance: Tsit5 (Tsitouras 2011) with diffrax's PID controller as a plain I controller, rtol = atol
  = tol, jit-compiled and vmapped over the members, timed after a first call that compiles, best of
  `rounds` calls.

Input (argv[1], JSON): {"theta1": [...], "theta2": [...], "t1": 10.0, "tols": [...], "rounds": 3}.
Output (stdout, JSON): the reference's bob positions (x1, y1, x2, y2) per member, and per tolerance the
positions, the accepted steps per member and the fastest wall time in seconds.
"""

import json
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

G, L1, L2, M1, M2 = 9.81, 1.0, 1.0, 1.0, 1.0


def field(t, y, args):
    th1, th2, w1, w2 = y[0], y[1], y[2], y[3]
    d = th1 - th2
    cd, sd = jnp.cos(d), jnp.sin(d)
    a11, a12 = (M1 + M2) * L1, M2 * L2 * cd
    a21, a22 = L1 * cd, L2
    b1 = -M2 * L2 * w2 * w2 * sd - (M1 + M2) * G * jnp.sin(th1)
    b2 = L1 * w1 * w1 * sd - G * jnp.sin(th2)
    det = a11 * a22 - a12 * a21
    return jnp.stack([w1, w2, (b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det])


def positions(y):
    th1, th2 = y[..., 0], y[..., 1]
    x1, y1 = L1 * jnp.sin(th1), -L1 * jnp.cos(th1)
    return jnp.stack([x1, y1, x1 + L2 * jnp.sin(th2), y1 - L2 * jnp.cos(th2)], axis=-1)


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
    for tol in spec["tols"]:
        solve = solver_for(diffrax.Tsit5(), t1, float(tol))
        ys, steps = solve(y0)
        jax.block_until_ready(ys)  # the first call compiles
        best = float("inf")
        for _ in range(int(spec["rounds"])):
            start = time.perf_counter()
            ys, steps = solve(y0)
            jax.block_until_ready(ys)
            best = min(best, time.perf_counter() - start)
        out["runs"].append({"tol": tol, "seconds": best, "positions": positions(ys).tolist(),
                            "steps": [int(s) for s in steps]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
