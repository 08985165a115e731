"""The multibody benchmark library's problems written as model files (examples/mbs/), against what is
known of them independently of lockstep.

A01, the simple pendulum released at rest from the horizontal: its exact motion in Jacobi elliptic
functions (the large-amplitude pendulum; e.g. Lawden, "Elliptic Functions and Applications", 1989,
section 5.2): with k = sin(theta0 / 2), m = k^2, omega = sqrt(g / L) and K = K(m),

    sin(theta(t) / 2) = k sn(K - omega t | m),    x = L sin theta,    y = -L cos theta,

theta measured from the downward vertical (sn(K) = 1 gives theta(0) = theta0). The mechanical energy
m |v|^2 / 2 + m g y is conserved. scipy.special.ellipk and ellipj evaluate K and sn.
"""

import numpy as np
import pytest

import lockstep

scipy_special = pytest.importorskip("scipy.special")


def exact_a01(t, theta0=np.pi / 2, L=1.0, g=9.81):
    m = np.sin(theta0 / 2) ** 2
    K = scipy_special.ellipk(m)
    sn, _, _, _ = scipy_special.ellipj(K - np.sqrt(g / L) * np.asarray(t), m)
    theta = 2.0 * np.arcsin(np.sqrt(m) * sn)
    return L * np.sin(theta), -L * np.cos(theta)


# Bounds: ten times the errors measured on this machine (docs/MBS-BENCHMARKS.md: 2.9e-9, 8.7e-8 and
# 3.7e-8 in position over 10 s).
@pytest.mark.parametrize("method,formulation,tol,bound", [
    ("radau5", "ggl", 1e-8, 3e-8),
    ("radau5", "index3", 1e-9, 1e-6),
    ("bdf", "ggl", 1e-8, 4e-7),
])
def test_a01_simple_pendulum_follows_its_exact_motion_and_conserves_energy(source_dir, model_cache, method, formulation,
                                                                            tol, bound):
    a01 = lockstep.model(str(source_dir / "examples/mbs/a01_simple_pendulum.toml"))
    assert a01.coordinates == ["x", "y"]
    t = np.linspace(0.0, 10.0, 1001)
    ds = lockstep.solve(a01, t=(0.0, 10.0), save=t, method=method, formulation=formulation, rtol=tol, atol=tol,
                        backend="serial")
    assert list(ds.status_name.values) == ["success"]
    x, y = ds.q.sel(coordinate="x").values[0], ds.q.sel(coordinate="y").values[0]
    x_exact, y_exact = exact_a01(t)
    error = np.max(np.hypot(x - x_exact, y - y_exact))
    assert error < bound, f"{method}/{formulation}: largest position error {error:.3e} over 10 s"
    # The benchmark's own measure: the mechanical energy stays at its initial value 0.
    vx, vy = ds.v.sel(coordinate="x").values[0], ds.v.sel(coordinate="y").values[0]
    energy = 0.5 * (vx ** 2 + vy ** 2) + 9.81 * y
    assert np.max(np.abs(energy)) < 10 * bound, f"{method}/{formulation}: energy drift {np.max(np.abs(energy)):.3e}"
    # The exact solution is not a straw man: after one period the mass is back at (1, 0).
    period = 4.0 * scipy_special.ellipk(0.5) / np.sqrt(9.81)
    assert np.hypot(*(np.array(exact_a01(period)) - [1.0, 0.0])) < 1e-12
