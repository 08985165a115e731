"""lockstep.solve: an ensemble of one model's members from Python, without a study file."""

import math
import os
import sys
import time as _time
import warnings

import numpy as np

from . import _dataset, _lockstep
from ._model import hint, model as _model

METHODS = ("radau5", "bdf", "radau3", "euler", "rhoinf", "dopri5", "tsit5", "auto")
# The methods that take explicit steps, whose members report _dataset.EXPLICIT_COUNTERS too.
# The explicit pairs, which integrate index1 and project after every step.
EXPLICIT_PAIRS = ("dopri5", "tsit5")
EXPLICIT_METHODS = EXPLICIT_PAIRS + ("auto",)
STATUS_INCONSISTENT_INITIAL = tuple(_lockstep.status_names).index("inconsistent_initial")
FORMULATIONS = ("index3", "ggl", "index1", "projected-invariants")
PROJECTIONS = ("none", "coordinate", "post-stabilization")
BACKENDS = ("omp", "serial", "cuda")

# Further solver settings, named as the fields of lockstep::solver_options (method/options.hpp) and
# as the [solver] keys of a study file; the study file's checks of their combinations are left to the
# engine, which refuses what a method cannot run.
SOLVER_KEYS = ("metric", "init", "multipliers", "h_initial", "h_min", "h_max", "max_steps", "max_order", "fixed_h",
               "fixed_order", "rho_inf", "newton_tol", "newton_max_iterations", "consistent_multipliers",
               "init_tolerance", "baumgarte_alpha", "baumgarte_beta")


def _choice(argument, value, choices):
    if value not in choices:
        raise ValueError(f"{argument}={value!r} is not one of {', '.join(choices)}{hint(str(value), choices)}")
    return value


def _positive(argument, value):
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{argument} must be a finite number > 0 (got {value!r})")
    return value


def _atol(atol):
    """atol: a number, or a dict with some of q, v, lambda (the others keep 1e-6)."""
    groups = {"q": 1e-6, "v": 1e-6, "lambda": 1e-6}
    if isinstance(atol, dict):
        for key, value in atol.items():
            if key not in groups:
                raise ValueError(f"atol: unknown group {key!r}{hint(str(key), list(groups))} (q, v, lambda)")
            groups[key] = _positive(f"atol[{key!r}]", value)
    else:
        value = _positive("atol", atol)
        groups = {key: value for key in groups}
    return groups


def _vector(argument, values):
    a = np.asarray(values)
    if a.ndim != 1 or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise ValueError(f"{argument} must be a 1-D array of numbers (one per member), got shape {a.shape} "
                         f"and dtype {a.dtype}")
    return a.astype(float)


def _split(model, key, argument):
    """("params", index) or ("initial", index) of a vary key "params.NAME" / "initial.NAME"."""
    group, _, name = str(key).partition(".")
    valid = [f"params.{p}" for p in model.parameter_names] + [f"initial.{i}" for i in model.input_names]
    if group not in ("params", "initial") or not name:
        # A bare name of a parameter or input ("L2") is the most likely slip: suggest it with its group.
        bare = str(key)
        suggestion = (f"params.{bare}" if bare in model.parameter_names else
                      f"initial.{bare}" if bare in model.input_names else None)
        tail = f"; did you mean {suggestion!r}?" if suggestion else hint(bare, valid)
        raise ValueError(f"{argument}: {key!r} must be 'params.NAME' or 'initial.NAME'{tail}")
    names = model.parameter_names if group == "params" else model.input_names
    if name not in names:
        raise ValueError(f"{argument}: unknown {'parameter' if group == 'params' else 'initial input'} {key!r} of "
                         f"model {model.name!r}{hint(str(key), valid)}")
    return group, names.index(name)


class InitialCorrectionWarning(UserWarning):
    """The warning of ``solve`` about members whose start was corrected or refused.

    Members whose start was projected onto the constraints by more than the tolerance
    (``|dq| > atol_q + rtol |q0|``, likewise for v, max-norms), or refused for a gross violation
    (init "auto"): method/options.hpp, as the summary of ``lockstep run``. Each message gives the
    number of members, the largest correction and its member.
    """


def _largest(corrections, members):
    """(count, largest correction, its member) over the members selected by the boolean array."""
    chosen = np.flatnonzero(members)
    worst = chosen[np.argmax(corrections[chosen])]
    return len(chosen), float(corrections[worst]), int(worst)


def initial_correction_messages(status, counters, q0, v0, options):
    """The warnings of `lockstep run`'s summary on initial corrections (host/cli/run_study_impl.hpp,
    initial_correction_lines): beyond the tolerance |dx| > atol + rtol |x0| (max-norms), in q and in
    v, and members refused with status inconsistent_initial."""
    refused = np.asarray(status) == STATUS_INCONSISTENT_INITIAL
    rtol, messages = options["rtol"], []
    dq, dv = np.asarray(counters["init_q_correction"]), np.asarray(counters["init_v_correction"])
    for what, x, d, x0, atol in (("positions", "q", dq, q0, options["atol_q"]),
                                 ("velocities", "v", dv, v0, options["atol_v"])):
        beyond = ~refused & (d > atol + rtol * np.abs(x0).max(axis=1, initial=0.0))
        if beyond.any():
            count, largest, member = _largest(d, beyond)
            messages.append(f"the initial {what} of {count} member{'s' if count != 1 else ''} violated the constraints "
                            f"by more than the tolerance (atol_{x} + rtol |{x}0|, max-norms) and were "
                            f"projected onto them: corrections up to {largest:.3g} (member {member})")
    if refused.any():
        count, largest, member = _largest(dq, refused)
        plural = "s" if count != 1 else ""
        if options.get("init") == "strict":
            _, largest_v, member_v = _largest(dv, refused)
            messages.append(f"{count} member{plural} refused (inconsistent_initial): initial values that need "
                            f"corrections above init_tolerance, up to {largest:.3g} in q (member {member}) and "
                            f"{largest_v:.3g} in v (member {member_v})")
        else:
            messages.append(f"{count} member{plural} refused (inconsistent_initial): initial positions off the "
                            f"constraints by up to {largest:.3g} (member {member}), more than 10 % of the "
                            "configuration's size (init=\"auto\"); correct the initial values, or pass "
                            "init=\"project\" to start from the projection onto the constraints")
    return messages


def _times(t, save):
    if np.ndim(t) == 0:
        t0, t1 = 0.0, float(t)
    else:
        if len(t) != 2:
            raise ValueError(f"t must be t1 or (t0, t1), got {t!r}")
        t0, t1 = float(t[0]), float(t[1])
    if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
        raise ValueError(f"t must be (t0, t1) with finite t0 < t1, got ({t0!r}, {t1!r})")
    if save is None:  # the study files' default: 100 intervals
        save_times = np.linspace(t0, t1, 101)
    else:
        save_times = np.asarray(save, dtype=float)
        if save_times.ndim == 0:
            save_times = save_times.reshape(1)
        if save_times.ndim != 1:
            raise ValueError(f"save must be a 1-D array of times, got shape {save_times.shape}")
        if save_times.size and not (np.all(save_times >= t0) and np.all(save_times <= t1)):
            raise ValueError(f"save: every time must lie in [t0, t1] = [{t0!r}, {t1!r}]")
        if np.any(np.diff(save_times) <= 0):
            raise ValueError("save: times must be strictly increasing")
    return t0, t1, save_times


def _threads(threads):
    if int(threads) != threads or threads < 0:
        raise ValueError(f"threads must be an integer >= 0 (0: OMP_NUM_THREADS, else the CPUs this process "
                         f"may run on), got {threads!r}")


def _threads_used(threads, backend="omp"):
    """The threads a run used, as its Dataset records them: those asked for, or the omp backend's
    default where 0 asks for it; one on the serial and cuda backends (as the command's results files)."""
    if backend != "omp":
        return 1
    return int(threads) if threads > 0 else int(_lockstep.default_threads())


def solver_options(function, method, formulation, projection, rtol, atol, solver, keys=SOLVER_KEYS):
    """The options dict of the module from the solver arguments of `function` (checked, with hints)."""
    method = _choice("method", method, METHODS)
    # None: the method's default, as in a study file (the explicit pairs integrate index1 and project
    # every step; auto projects every step and runs its implicit phases on index3).
    if formulation is None:
        formulation = "index1" if method in EXPLICIT_PAIRS else "index3"
    if projection is None:
        projection = "coordinate" if method in EXPLICIT_METHODS else "none"
    formulation = _choice("formulation", formulation, FORMULATIONS)
    projection = _choice("projection", projection, PROJECTIONS)
    for key in solver:
        if key not in keys:
            raise TypeError(f"{function}() got an unexpected keyword argument {key!r}"
                            f"{hint(key, tuple(keys) + ('method', 'formulation', 'rtol', 'atol', 'projection'))}")
    atol_groups = _atol(atol)
    return {"method": method, "formulation": formulation, "projection": projection,
            "rtol": _positive("rtol", rtol), "atol_q": atol_groups["q"], "atol_v": atol_groups["v"],
            "atol_lambda": atol_groups["lambda"], **solver}


def _physical_memory():
    """The machine's physical memory in bytes, or 0 where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def _check_members_fit(members, count, per_member, what):
    """Refuses a member count whose arrays, `per_member` bytes each for the whole call, would not fit in
    the machine's physical memory: a ValueError before anything is allocated, rather than NumPy's
    MemoryError or the system's out-of-memory killer."""
    physical = _physical_memory()
    needed = count * per_member
    if physical and needed > physical:
        gib = 1024.0 ** 3
        raise ValueError(f"members={members!r}: {count} members would need {needed / gib:.3g} GiB for the per-member "
                         f"arrays alone ({per_member} bytes each: {what}); this machine has {physical / gib:.3g} GiB")


def members_of(model, vary, params, initial, members, kept_per_member=0, kept_what=""):
    """(P [count, n_params], X [count, n_inputs], the varied columns, count): each member's parameters
    and initial inputs as a study builds them: the defaults, then the fixed overrides, then its varied
    values. kept_per_member: the bytes the caller keeps of each member beyond P and X (kept_what says
    what they are); a count that cannot fit in memory is refused before P and X are made."""
    vary = dict(vary or {})
    params = dict(params or {})
    initial = dict(initial or {})
    columns = {key: _vector(f"vary[{key!r}]", values) for key, values in vary.items()}
    lengths = {len(c) for c in columns.values()}
    if len(lengths) > 1:
        shapes = ", ".join(f"{key!r}: ({len(c)},)" for key, c in columns.items())
        raise ValueError(f"vary: every array must have the same length (one value per member), got {shapes}")
    count = lengths.pop() if lengths else (1 if members is None else int(members))
    if members is not None and int(members) != count:
        raise ValueError(f"members={members!r} disagrees with the length of the vary arrays ({count})")
    if count < 1:
        raise ValueError(f"members must be >= 1, got {count}")
    _check_members_fit(members, count, 8 * (len(model.parameters) + len(model.inputs)) + kept_per_member,
                       "parameters and initial inputs" + (", " + kept_what if kept_what else ""))

    P = np.tile([p.default for p in model.parameters], (count, 1)).astype(float)
    X = np.tile([i.default for i in model.inputs], (count, 1)).astype(float).reshape(count, len(model.inputs))
    for name, value in params.items():
        P[:, model._index(name, "params")] = float(value)
    for name, value in initial.items():
        X[:, model._index(name, "initial")] = float(value)
    for key, column in columns.items():
        group, index = _split(model, key, "vary")
        (P if group == "params" else X)[:, index] = column
    return P, X, columns, count


class _ProgressBar:
    """Members done, steps per second and time left on stderr, redrawn in place."""

    def __init__(self):
        self.drawn = False

    def __call__(self, finished, total, steps, seconds):
        fraction = finished / total if total else 1.0
        filled = int(fraction * 30)
        rate = steps / seconds if seconds > 0 else 0.0
        eta = f"{seconds * (1 - fraction) / fraction:.0f} s" if 0 < fraction < 1 else ("0 s" if fraction >= 1 else "?")
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {finished}/{total} members  "
                         f"{rate:.3g} steps/s  ETA {eta}   ")
        sys.stderr.flush()
        self.drawn = True

    def close(self):
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def solve(model, vary=None, params=None, initial=None, t=(0.0, 1.0), save=None, method="radau5",
          formulation=None, rtol=1e-6, atol=1e-6, projection=None, backend="omp", threads=0, members=None,
          progress=None, chunk_size=0, events=None, **solver):
    """Solves an ensemble of one model's members and returns an xarray.Dataset.

    Each member's parameters are the model's defaults, then ``params``, then its ``vary`` values;
    its initial inputs likewise, mapped to (q0, v0) by the model's initial_state, as a study file
    builds its members.

    Parameters
    ----------
    model : Model, str or path-like
        A lockstep.Model, or what ``lockstep.model()`` takes (a built-in name, a model file).
    vary : dict, optional
        ``{"params.NAME" or "initial.NAME": 1-D array}``: one value per member, all the same length.
    params : dict, optional
        ``{NAME: value}``: fixed parameter overrides for every member (defaults otherwise).
    initial : dict, optional
        ``{NAME: value}``: fixed initial-input overrides; the model's initial_state maps each
        member's inputs to (q0, v0), as a study file does.
    t : float or tuple of float, default (0.0, 1.0)
        (t0, t1), or t1 (t0 = 0).
    save : array_like, optional
        The save times (1-D, increasing, within [t0, t1]); default 101 points from t0 to t1.
    method : str, default "radau5"
        "radau5", "bdf", "radau3", "euler", "rhoinf", "dopri5" or "tsit5" (the explicit pairs of Dormand &
        Prince and of Tsitouras, for members that are not stiff) or "auto" (dopri5 while a member is not stiff, Radau IIA 5 while it is; the Dataset's explicit_steps,
        method_switches and stiffness_detections say what each member did).
    formulation : str, optional
        "index3", "ggl", "index1" or "projected-invariants"; default "index3" ("index1" with dopri5 and tsit5; with
        auto it names the implicit phases' formulation, index3 or ggl).
    rtol : float, default 1e-6
        The relative tolerance.
    atol : float or dict, default 1e-6
        A number, or ``{"q": .., "v": .., "lambda": ..}`` (the groups not given keep 1e-6).
    projection : str, optional
        "none", "coordinate" or "post-stabilization"; default "none" ("coordinate" with dopri5, tsit5 and auto).
    backend : str, default "omp"
        "omp" (the CPU cores' thread team), "serial" or "cuda".
    threads : int, default 0
        The omp backend's threads (0: OMP_NUM_THREADS, else the CPUs this process may run on).
    members : int, optional
        The number of members when nothing is varied (identical members; default 1); when vary is
        given, it may repeat their length. A count whose arrays would not fit in the machine's
        physical memory is refused (ValueError) before anything is allocated.
    progress : bool or None, optional
        True/False, or None: a progress bar on stderr only when it is a terminal.
    chunk_size : int, default 0
        Members per chunk of the scheduler (0: from the memory budget).
    events : dict, optional
        For a model with event functions (docs/how-to/events.md), the keys of a study's [events]
        table: ``{"records": 16, "time_tolerance": 0.0, "interior_checks": 0}`` (those given replace
        these defaults). Refused (ValueError) for a model without events.
    **solver
        The further solver settings, by their [solver] keys in a study file: h_initial, h_min,
        h_max, max_steps, max_order, fixed_h, fixed_order, rho_inf, newton_tol,
        newton_max_iterations, consistent_multipliers, multipliers, init ("auto", the default,
        "project" or "strict"), init_tolerance, metric, baumgarte_alpha, baumgarte_beta. With
        method, formulation, rtol, atol and projection they are the solver settings.

    Returns
    -------
    xarray.Dataset
        q, v [member, time, coordinate], lam [member, time, constraint] (and mu, nu where the
        formulation or the model has them), status and status_name [member], the counters
        [member], final_q and final_v [member, coordinate], one variable per varied input, and the
        settings as attributes (docs/PYTHON.md, "The Dataset"); for a model with events, event_count,
        event_first_time [member, event], event_records, stop_event [member] and the kept records
        event_t, event_index [member, record], event_q, event_v, event_lam (event_nu) [member, record, ...].

    Raises
    ------
    ValueError
        For a bad argument (the message names it, with the closest valid name), a member count
        that would not fit in memory, or settings the engine refuses.
    TypeError
        For an unknown keyword argument in ``**solver`` (with the closest valid name).
    KeyboardInterrupt
        Ctrl-C stops the solve within one launch of the scheduler.

    Warns
    -----
    InitialCorrectionWarning
        Starts projected onto the constraints by more than the tolerance, and members refused for a
        start grossly off them (init="auto", the default; init="project" accepts it).

    Notes
    -----
    A member that fails keeps its status (ds.status, ds.status_name) and NaN where it never
    reached; nothing is raised for it. The serial and omp backends, any thread count and any
    chunk size give bitwise the same results.

    Examples
    --------
    >>> import lockstep
    >>> ds = lockstep.solve("double_pendulum", vary={"params.L2": [0.8, 0.9, 1.0]}, t=(0.0, 10.0))
    >>> ds.q.sel(coordinate="y2").shape  # [member, time]
    (3, 101)
    """
    model = _model(model)
    vary = dict(vary or {})
    params = dict(params or {})
    initial = dict(initial or {})
    backend = _choice("backend", backend, BACKENDS)
    _threads(threads)
    options = solver_options("solve", method, formulation, projection, rtol, atol, solver)
    method, formulation, projection = options["method"], options["formulation"], options["projection"]
    t0, t1, save_times = _times(t, save)
    event_records = _event_settings(model, events, options)
    # What the solve keeps of each member to its end: the initial state, and the engine's copies of it
    # and of the parameters; outputs at every save time, the final state and time; status and counters.
    ny = 2 * model.n + 2 * model.m + model.k
    kept = 8 * (2 * model.n + len(model.parameters) + 2 * model.n + (len(save_times) + 1) * ny + 1) + 8 * (
        2 * (len(_dataset.MEMBER_COUNTERS) + len(_dataset.EXPLICIT_COUNTERS)) + 1)
    P, X, columns, count = members_of(model, vary, params, initial, members, kept,
                                      "initial state, outputs at every save time, final state, status and counters")
    q0, v0 = model._engine.initial_state(P, X)

    if progress is None:
        progress = sys.stderr.isatty()
    bar = _ProgressBar() if progress else None
    started = _time.time()
    try:
        r = _lockstep.solve(model._engine, P, q0, v0, t0, t1, save_times, options, backend, int(threads),
                            int(chunk_size), 32, bar, event_records=event_records)
    finally:
        if bar:
            bar.close()
    wall = _time.time() - started

    n, m, k = model.n, model.m, model.k
    y = r["outputs"]
    groups = {"q": (0, n), "v": (n, n), "lam": (2 * n, m)}
    if r["has_mu"]:
        groups["mu"] = (2 * n + m, m)
    if k > 0:
        groups["nu"] = (2 * n + 2 * m, k)
    trajectories = {name: y[:, :, start:start + size] for name, (start, size) in groups.items()}
    if r["quantities"] is not None:  # the model's derived quantities (docs/reference/mechanism-file.md)
        trajectories["quantities"] = r["quantities"]
    counters = dict(r["counters"])
    counters = {name: (r["t_final"] if name == "final_t" else counters[name]) for name in _dataset.MEMBER_COUNTERS
                + (_dataset.EXPLICIT_COUNTERS if method in EXPLICIT_METHODS else ())}
    for message in initial_correction_messages(r["status"], counters, q0, v0, options):
        warnings.warn(message, InitialCorrectionWarning, stacklevel=2)
    attrs = {"model": model.name, "n": n, "m": m, "k": k, "members": count, "method": method,
             "formulation": formulation, "projection": projection, "rtol": options["rtol"],
             "atol_q": options["atol_q"], "atol_v": options["atol_v"], "atol_lambda": options["atol_lambda"],
             "t0": t0, "t1": t1, "backend": backend, "threads": _threads_used(threads, backend),
             "lockstep_version": _lockstep.__version__, "wall_time_seconds": wall,
             "multipliers": solver.get("multipliers", "independent")}
    if model.source:
        attrs["model_source"] = model.source
    if r["quantities"] is not None:
        attrs["quantity_descriptions"] = [description for _, description in model._engine.quantities]
    executed, of_members = r["lane_attempts"]
    if executed > 0:  # members in SIMD lanes: how busy they were (docs/SIMD.md, "The lanes count their own work")
        attrs["lane_attempts"] = int(executed)
        attrs["lane_attempts_of_members"] = int(of_members)
        attrs["lane_utilization"] = of_members / executed
        for name in ("newton_iterations", "factorizations"):  # the corrector's, likewise
            ran, useful = r["lane_" + name]
            attrs[f"lane_{name}"] = int(ran)
            attrs[f"lane_{name}_of_members"] = int(useful)
            attrs[f"lane_{name}_utilization"] = useful / ran if ran > 0 else 0.0
    for key, value in solver.items():
        attrs[key] = value
    for name, value in params.items():
        attrs[f"params.{name}"] = float(value)
    for name, value in initial.items():
        attrs[f"initial.{name}"] = float(value)
    ds = _dataset.build(time=save_times, members=count, trajectories=trajectories, status=r["status"],
                        counters=counters, final_q=r["y_final"][:, :n], final_v=r["y_final"][:, n:2 * n],
                        inputs=columns, attrs=attrs, coordinate_names=model.coordinates,
                        quantity_names=[name for name, _ in model._engine.quantities])
    if "events" in r:
        e = r["events"]
        declared = model._engine.events
        y = e["y"]
        variables, coords = _dataset.event_variables(
            names=[d[0] for d in declared], directions=[d[1] for d in declared], actions=[d[2] for d in declared],
            descriptions=[d[3] for d in declared], count=e["count"], first_time=e["first_time"],
            records=e["records"], stop_event=e["stop_event"], t=e["t"], event=e["event"], q=y[:, :, :n],
            v=y[:, :, n:2 * n], lam=y[:, :, 2 * n:2 * n + m], nu=y[:, :, 2 * n + 2 * m:] if k > 0 else None)
        ds = ds.assign(variables).assign_coords(coords)
    return ds


# The keys of solve's `events` and their defaults (a study's [events] table).
EVENT_SETTINGS = {"records": 16, "time_tolerance": 0.0, "interior_checks": 0}


def _event_settings(model, events, options):
    """Checks solve's `events` against the model; puts the location's settings into `options` and
    returns the records kept per member."""
    if events is None:
        return EVENT_SETTINGS["records"]
    if not model._engine.events:
        raise ValueError(f"events={events!r}: model {model.name} declares no event functions "
                         "(docs/how-to/events.md says how a model declares them)")
    settings = dict(EVENT_SETTINGS)
    for key, value in dict(events).items():
        if key not in settings:
            raise ValueError(f"events: unknown key {key!r} (one of {', '.join(settings)}){hint(key, tuple(settings))}")
        settings[key] = value
    records, tolerance, checks = settings["records"], settings["time_tolerance"], settings["interior_checks"]
    if not isinstance(records, (int, np.integer)) or not 0 <= records <= 1000000:
        raise ValueError(f"events: records={records!r} must be an integer from 0 to 1000000")
    if not isinstance(tolerance, (int, float, np.floating)) or not tolerance >= 0:
        raise ValueError(f"events: time_tolerance={tolerance!r} must be a number >= 0")
    if not isinstance(checks, (int, np.integer)) or not 0 <= checks <= 1000:
        raise ValueError(f"events: interior_checks={checks!r} must be an integer from 0 to 1000")
    options["event_time_tolerance"] = float(tolerance)
    options["event_interior_checks"] = int(checks)
    return int(records)
