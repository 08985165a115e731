"""lockstep.lyapunov and lockstep.sensitivities: the engine's tangent runs from Python.

lyapunov runs members through the same driver as a study's [lyapunov] section under `lockstep run`
(host/engine/lyapunov_batch.hpp), so the exponents are bitwise the command's; sensitivities is one
member's forward sensitivities (lockstep/lyapunov/sensitivity.hpp).
"""

import math
import time as _time

import numpy as np
import xarray as xr

from . import _dataset, _lockstep
from ._model import hint, model as _model
from ._solve import SOLVER_KEYS, _choice, _threads, _threads_used, _times, members_of, solver_options

LYAPUNOV_METHODS = ("qr", "clone")
LYAPUNOV_METRICS = ("mass", "euclidean")
# The [solver] settings lyapunov takes as **solver: `metric` is the Lyapunov metric there, so the
# solver's (projection) metric is solver_metric.
_LYAPUNOV_SOLVER_KEYS = tuple(k for k in SOLVER_KEYS if k != "metric")
# A study file refuses more re-orthonormalizations than save times (host/io/study_file.cpp): every
# member's history is padded to the longest possible.
_MAX_RENORMALIZATIONS = 1_000_000


def _number(argument, value, minimum, inclusive):
    value = float(value)
    if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
        raise ValueError(f"{argument} must be a finite number {'>=' if inclusive else '>'} {minimum!r} (got {value!r})")
    return value


def lyapunov(model, vary=None, params=None, initial=None, t=(0.0, 1.0), exponents=None, renormalize=1.0,
             transient=0.0, method="qr", metric="mass", separation=None, history=False, members=None,
             solver_method="radau5", formulation="index3", rtol=1e-6, atol=1e-6, projection="none",
             solver_metric=None, threads=0, **solver):
    """Lyapunov exponents of an ensemble's members, as ``lockstep run`` computes a study's [lyapunov].

    The members run through the same driver as a study's [lyapunov] section under ``lockstep run``
    (host/engine/lyapunov_batch.hpp), so the exponents are bitwise the command's.

    Parameters
    ----------
    model, vary, params, initial, members, t
        As ``lockstep.solve`` (members built exactly as a study builds them).
    exponents : str or int, optional
        "all" (the manifold dimension d = 2 (n - m) - k) or p in [1, d]; default "all" for "qr", 1
        for "clone" (the clone estimate gives the largest exponent only).
    renormalize : float, default 1.0
        Time between re-orthonormalizations (QR) or clone rescalings.
    transient : float, default 0.0
        Time from t0 whose growth is discarded before the averages start.
    method : str, default "qr"
        "qr" (discrete QR on p tangents) or "clone" (a perturbed clone, any solver settings).
    metric : str, default "mass"
        "mass" (the kinetic-energy metric) or "euclidean", for the tangents' lengths.
    separation : float, optional
        The clone's initial distance (method "clone" only; default 1e-6).
    history : bool, default False
        Keep the running estimates: lyapunov_history_t [member, estimate] and lyapunov_history
        [member, estimate, exponent] (NaN past a member's last estimate).
    solver_method, formulation, rtol, atol, projection, solver_metric, **solver
        The [solver] settings, as ``lockstep.solve``'s method, formulation, rtol, atol, projection
        and ``**solver`` (defaults "radau5", "index3", 1e-6, 1e-6, "none"): solver_method and
        solver_metric are [solver] method and metric. "qr" needs tangents: bdf or the Radau IIA
        methods, index3 or ggl, no projection.
    threads : int, default 0
        Threads over members (0: OMP_NUM_THREADS, else the CPUs this process may run on); the
        results do not depend on it.

    Returns
    -------
    xarray.Dataset
        The variables open_results gives for a study's /lyapunov group: lyapunov_exponents
        [member, exponent], lyapunov_status, lyapunov_t_start, lyapunov_t_end,
        lyapunov_renormalizations, lyapunov_steps (QR; -1 for clone) and lyapunov_message [member]
        (why a member's run failed, or ""), plus the varied inputs.

    Raises
    ------
    ValueError
        For a bad argument (the message names the closest valid value; a solver method given as
        method names solver_method), or solver settings the tangents cannot follow.
    TypeError
        For an unknown keyword argument in ``**solver``.

    Notes
    -----
    A member whose run fails keeps its status and NaN exponents; nothing is raised for it.

    Examples
    --------
    >>> import lockstep
    >>> ly = lockstep.lyapunov("double_pendulum", vary={"initial.theta1": [1.9, 2.0]}, t=(0.0, 100.0))
    >>> ly.lyapunov_exponents.dims
    ('member', 'exponent')
    """
    model = _model(model)
    if method not in LYAPUNOV_METHODS:
        extra = (f"; {method!r} is a solver method: pass it as solver_method={method!r}"
                 if method in ("radau5", "bdf", "radau3", "euler", "rhoinf", "dopri5", "tsit5", "auto") else hint(str(method), LYAPUNOV_METHODS))
        raise ValueError(f"method={method!r} is not one of {', '.join(LYAPUNOV_METHODS)}{extra}")
    metric = _choice("metric", metric, LYAPUNOV_METRICS)
    clone = method == "clone"
    _threads(threads)
    if solver_metric is not None:
        solver = {**solver, "metric": solver_metric}
    options = solver_options("lyapunov", solver_method, formulation, projection, rtol, atol, solver,
                             keys=_LYAPUNOV_SOLVER_KEYS + ("metric",))
    t0, t1, _ = _times(t, None)
    span = t1 - t0

    d = 2 * (model.n - model.m) - model.k
    if exponents is None:
        p = 1 if clone else d
    elif isinstance(exponents, str):
        if exponents != "all":
            raise ValueError(f"exponents must be 'all' or an integer between 1 and {d} (the dimension "
                             f"2 (n - m) - k of model {model.name!r}'s state manifold){hint(exponents, ['all'])}")
        p = d
    else:
        if int(exponents) != exponents or not 1 <= exponents <= d:
            raise ValueError(f"exponents must be 'all' or an integer between 1 and {d} (the dimension "
                             f"2 (n - m) - k of model {model.name!r}'s state manifold), got {exponents!r}")
        p = int(exponents)
    if clone and p != 1:
        raise ValueError(f"method='clone' estimates the largest exponent only: exponents must be 1 (got {p}); "
                         "use method='qr' for more")
    renormalize = _number("renormalize", renormalize, 0.0, False)
    if span / renormalize > _MAX_RENORMALIZATIONS:
        raise ValueError(f"renormalize={renormalize!r} gives more than {_MAX_RENORMALIZATIONS} "
                         f"re-orthonormalizations over [t0, t1]")
    transient = _number("transient", transient, 0.0, True)
    if not transient < span:
        raise ValueError(f"transient must be < t1 - t0 = {span!r} (got {transient!r})")
    # The averages start at the first re-orthonormalization at or after t0 + transient, whose own
    # logarithms are discarded (lyapunov/spectrum.hpp): one must come after it for an estimate.
    first = max(1.0, math.ceil(transient / renormalize)) * renormalize
    if transient > 0.0 and not first < span:
        raise ValueError(f"transient={transient!r} leaves no re-orthonormalization to average over: the first at "
                         f"or after it (t0 + {first!r}) is not before t1; shorten transient or renormalize")
    if separation is not None and not clone:
        raise ValueError("separation applies to method='clone' only (method is 'qr')")
    separation = 1e-6 if separation is None else _number("separation", separation, 0.0, False)
    # As io::lyapunov_history_length: at most floor((t1 - t0) / renormalize) + 1 estimates, and one
    # more for the rounding of the drivers' running sums.
    capacity = int(math.floor(span / renormalize)) + 2 if history else 0

    # What the call keeps of each member: the initial state, the exponents, and with history the
    # running estimates (capacity of them, with their times).
    kept = 8 * (2 * model.n + p + capacity * (p + 1))
    P, X, columns, count = members_of(model, vary, params, initial, members, kept,
                                      "initial state, exponents and their history")
    q0, v0 = model._engine.initial_state(P, X)
    started = _time.time()
    r = _lockstep.lyapunov(model._engine, P, q0, v0, t0, t1, options, int(clone), p, renormalize, transient,
                           LYAPUNOV_METRICS.index(metric), separation, capacity, int(threads))
    wall = _time.time() - started

    group = {"lyapunov_method": method, "lyapunov_metric": metric, "lyapunov_renormalize": renormalize,
             "lyapunov_transient": transient, "lyapunov_dimension": d, "lyapunov_exponents": p,
             "lyapunov_history_length": capacity}
    if clone:
        group["lyapunov_separation"] = separation
    status = np.asarray(r["status"], dtype=np.int32)
    data = {
        "lyapunov_exponents": (("member", "exponent"), r["exponents"], group),
        "lyapunov_status": (("member",), status, {"names": list(_dataset.STATUS_NAMES)}),
        "lyapunov_t_start": (("member",), r["t_start"]),
        "lyapunov_t_end": (("member",), r["t_end"]),
        "lyapunov_renormalizations": (("member",), r["renormalizations"]),
        "lyapunov_steps": (("member",), r["steps"]),
        "lyapunov_message": (("member",), np.array(r["messages"], dtype=object)),
    }
    if history:
        data["lyapunov_history_t"] = (("member", "estimate"), r["history_t"])
        data["lyapunov_history"] = (("member", "estimate", "exponent"), r["history"])
    for name, values in columns.items():
        data[name] = (("member",), values)
    attrs = {"model": model.name, "n": model.n, "m": model.m, "k": model.k, "members": count, "t0": t0, "t1": t1,
             "method": options["method"], "formulation": options["formulation"],
             "projection": options["projection"], "rtol": options["rtol"], "atol_q": options["atol_q"],
             "atol_v": options["atol_v"], "atol_lambda": options["atol_lambda"], "threads": _threads_used(threads),
             "lockstep_version": _lockstep.__version__, "wall_time_seconds": wall}
    for key, value in solver.items():
        attrs[key] = value
    for name, value in dict(params or {}).items():
        attrs[f"params.{name}"] = float(value)
    for name, value in dict(initial or {}).items():
        attrs[f"initial.{name}"] = float(value)
    return xr.Dataset(data, coords={"member": np.arange(count), "exponent": np.arange(p)}, attrs=attrs)


def sensitivities(model, params=None, initial=None, t=(0.0, 1.0), parameters=(), directions=None, method="radau5",
                  formulation="index3", rtol=1e-6, atol=1e-6, projection="none", **solver):
    """One member's final state and its forward sensitivities.

    The derivatives are those of the method's own solution with its step sizes held (exact for what
    it computes, and the exact solution's to the method's accuracy); the tangents' error takes part
    in the step choice, so the steps, and final state, differ slightly from lockstep.solve's.

    Parameters
    ----------
    model, params, initial, t
        As ``lockstep.solve``, for one member.
    parameters : sequence of str, default ()
        Names of parameters: d y(t1) / d p for each, the initial state (q0, v0) held (the model's
        initial_state is not differentiated: a parameter that moves it, like a rod length, needs
        its initial-state direction added).
    directions : array_like, optional
        None, or an array [D, 2n] of initial-state directions (dq0, dv0): d y(t1) / d epsilon for
        (q0, v0) + epsilon (dq0, dv0), taken through consistent initialization.
    method, formulation, rtol, atol, projection, **solver
        As ``lockstep.solve``; the tangents need bdf or the Radau IIA methods on index3 or ggl
        without projection (else ValueError).

    Returns
    -------
    xarray.Dataset
        final_q, final_v [coordinate], final_lam [constraint] (final_mu, final_nu where the
        formulation or model has them); dq_dp, dv_dp [parameter, coordinate], dlam_dp [parameter,
        constraint] (dmu_dp, dnu_dp), with the coordinate ``parameter`` holding the names; with
        directions, dq_dx0, dv_dx0, dlam_dx0 (...) [direction, ...] and directions
        [direction, phase]. Attributes: status, status_name, t_final, steps, rejected and the
        settings.

    Raises
    ------
    ValueError
        For an unknown or repeated parameter name, directions not of shape [D, 2n], more than
        2 n + n_params directions and parameters together, or settings the tangents cannot follow.
    TypeError
        For an unknown keyword argument in ``**solver``.

    Notes
    -----
    A member that fails keeps its status; nothing is raised for it.

    Examples
    --------
    >>> import lockstep
    >>> se = lockstep.sensitivities("double_pendulum", initial={"theta1": 0.3, "theta2": 0.2},
    ...                             t=(0.0, 2.0), parameters=["g", "m2"], rtol=1e-10, atol=1e-10)
    >>> se.dq_dp.sel(parameter="g").dims  # d q(t1) / d g
    ('coordinate',)
    """
    model = _model(model)
    options = solver_options("sensitivities", method, formulation, projection, rtol, atol, solver)
    t0, t1, _ = _times(t, None)
    P, X, _, _ = members_of(model, None, params, initial, None)
    q0, v0 = model._engine.initial_state(P, X)
    names = [str(name) for name in parameters] if not isinstance(parameters, str) else [parameters]
    indices = [model._index(name, "params") for name in names]
    if len(set(names)) != len(names):
        raise ValueError(f"parameters: each name at most once, got {names!r}")
    n, m, k = model.n, model.m, model.k
    if directions is None:
        directions = np.zeros((0, 2 * n))
    directions = np.asarray(directions, dtype=float)
    if directions.ndim == 1:
        directions = directions.reshape(1, -1)
    if directions.ndim != 2 or directions.shape[1] != 2 * n:
        raise ValueError(f"directions must be an array [D, 2n] = [D, {2 * n}] of (dq0, dv0), got shape "
                         f"{directions.shape}")
    if directions.shape[0] + len(indices) > 2 * n + len(model.parameters):
        raise ValueError(f"at most 2 n + n_params = {2 * n + len(model.parameters)} directions and parameters")
    r = _lockstep.sensitivities(model._engine, P[0], q0[0], v0[0], t0, t1, options, directions, indices)

    has_mu = options["formulation"] in ("ggl", "projected-invariants") and m > 0
    groups = {"q": (0, n, "coordinate"), "v": (n, n, "coordinate"), "lam": (2 * n, m, "constraint")}
    if has_mu:
        groups["mu"] = (2 * n + m, m, "constraint")
    if k > 0:
        groups["nu"] = (2 * n + 2 * m, k, "nonholonomic")
    y, S = r["y_final"], r["sensitivities"]
    D = directions.shape[0]
    data = {}
    for label, (start, size, dim) in groups.items():
        data[f"final_{label}"] = ((dim,), y[start:start + size])
        data[f"d{label}_dp"] = (("parameter", dim), S[D:, start:start + size])
        if D > 0:
            data[f"d{label}_dx0"] = (("direction", dim), S[:D, start:start + size])
    coords = {"parameter": np.array(names, dtype=object), "coordinate": np.array(model.coordinates)}
    if D > 0:
        data["directions"] = (("direction", "phase"), directions)
    status = int(r["status"])
    attrs = {"model": model.name, "n": n, "m": m, "k": k, "status": status,
             "status_name": _dataset.STATUS_NAMES[status] if 0 <= status < len(_dataset.STATUS_NAMES) else "unknown",
             "t0": t0, "t1": t1, "t_final": float(r["t_final"]), "steps": int(r["steps"]),
             "rejected": int(r["rejected"]), "method": options["method"], "formulation": options["formulation"],
             "rtol": options["rtol"], "atol_q": options["atol_q"], "atol_v": options["atol_v"],
             "atol_lambda": options["atol_lambda"], "lockstep_version": _lockstep.__version__}
    for name, value in dict(params or {}).items():
        attrs[f"params.{name}"] = float(value)
    for name, value in dict(initial or {}).items():
        attrs[f"initial.{name}"] = float(value)
    return xr.Dataset(data, coords=coords, attrs=attrs)
