"""Model handles: a built-in model by name, or a model file (C++ header or equations file)."""

import difflib
import os
import re
import sys
from typing import NamedTuple

import numpy as np

from . import _lockstep


class Value(NamedTuple):
    """A parameter or named initial input of a model.

    ``Model.parameters`` and ``Model.inputs`` are lists of them. The models' tables write a value's
    text as "description [unit]"; the unit is split off so that it can be shown and compared on its
    own.

    Parameters
    ----------
    name : str
        The name, as the ``params`` and ``initial`` overrides and the ``vary`` keys ("params.NAME",
        "initial.NAME") use it.
    default : float
        The value where nothing overrides it.
    unit : str
        The unit, from the "[unit]" that ends the table's text ("" where there is none).
    description : str
        The table's text without the unit.
    """

    name: str
    default: float
    unit: str
    description: str


# The models' tables write "description [unit]" (the built-in models, and equations files through
# their generator); the unit is split off so that it can be shown and compared on its own.
_UNIT = re.compile(r"^(.*?)\s*\[([^\[\]]*)\]\s*$")


def _value(entry):
    name, default, text = entry
    match = _UNIT.match(text)
    unit, description = (match.group(2), match.group(1)) if match else ("", text)
    return Value(name, float(default), unit, description)


def closest(word, candidates):
    """The candidate closest to word, for a "did you mean" hint (None when nothing is close)."""
    candidates = list(candidates)
    for c in candidates:  # names differing in case only ("l2" for "L2")
        if c.lower() == word.lower():
            return c
    # difflib's ratio, the earlier candidate on ties (get_close_matches would take the greater string:
    # "theta2" before "theta1" for "theta").
    best, best_score = None, 0.6
    for c in candidates:
        score = difflib.SequenceMatcher(None, word, c).ratio()
        if score > best_score:
            best, best_score = c, score
    return best


def hint(word, candidates):
    """"; did you mean 'X'?" or ""."""
    best = closest(word, candidates)
    return f"; did you mean {best!r}?" if best else ""


class Model:
    """A model ready to solve: its sizes, parameter and initial-input tables, and its engine.

    Obtain one with ``lockstep.model(...)``, or from SymPy with ``Model.from_sympy`` or
    ``Model.from_lagranges_method``. The model has n coordinates, m holonomic and k non-holonomic
    constraints.

    Attributes
    ----------
    name : str
        The model's name.
    description : str
        The model's description.
    n : int
        The number of coordinates.
    m : int
        The number of holonomic constraints.
    k : int
        The number of non-holonomic constraints.
    coordinates : list of str
        The coordinates' names: the model's names, else q0, q1, ...
    parameters : list of Value
        The parameters, each a ``Value(name, default, unit, description)``.
    inputs : list of Value
        The named initial inputs, each a ``Value(name, default, unit, description)``.
    source : str or None
        The model file, or None for a built-in model.
    """

    def __init__(self, engine):
        self._engine = engine
        self.name = engine.name
        self.description = engine.description
        self.n, self.m, self.k = engine.n, engine.m, engine.k
        self.coordinates = list(engine.coordinate_names)
        self.parameters = [_value(p) for p in engine.params]
        self.inputs = [_value(i) for i in engine.inputs]
        self.source = engine.source or None  # the model file, or None for a built-in model

    @property
    def parameter_names(self):
        """The parameters' names (list of str), in the order of ``parameters``."""
        return [p.name for p in self.parameters]

    @property
    def input_names(self):
        """The initial inputs' names (list of str), in the order of ``inputs``."""
        return [i.name for i in self.inputs]

    def initial_state(self, params=None, inputs=None):
        """One member's initial state (q0, v0), as the model's initial_state gives it.

        The member's parameters and initial inputs are the model's defaults, with the overrides
        given by name.

        Parameters
        ----------
        params : dict, optional
            Parameter overrides ``{name: value}``; the defaults for the rest.
        inputs : dict, optional
            Initial-input overrides ``{name: value}``; the defaults for the rest.

        Returns
        -------
        q0 : numpy.ndarray
            The initial positions [n].
        v0 : numpy.ndarray
            The initial velocities [n].

        Raises
        ------
        ValueError
            For a name that is not one of the model's parameters or initial inputs (the message
            names the closest one), or an initial input of a model that has none.
        """
        p = np.array([[v.default for v in self.parameters]], dtype=float)
        x = np.array([[v.default for v in self.inputs]], dtype=float).reshape(1, len(self.inputs))
        for name, value in (params or {}).items():
            p[0, self._index(name, "params")] = value
        for name, value in (inputs or {}).items():
            x[0, self._index(name, "initial")] = value
        q0, v0 = self._engine.initial_state(p, x)
        return q0[0], v0[0]

    def _index(self, name, group):
        """Index of a parameter (group "params") or initial input (group "initial"); ValueError with the
        closest name otherwise."""
        names = self.parameter_names if group == "params" else self.input_names
        if name in names:
            return names.index(name)
        what = "parameter" if group == "params" else "initial input"
        if group == "initial" and not names:
            raise ValueError(f"model {self.name!r} has no initial inputs (its initial state is fixed); "
                             f"remove {name!r}")
        raise ValueError(f"unknown {what} {name!r} of model {self.name!r}{hint(name, names)} "
                         f"(its {what}s: {', '.join(names)})")

    def evaluate(self, t=0.0, q=None, v=None, params=None):
        """The model's equations at one state, as the solver evaluates them.

        M, Q, Phi, G = dPhi/dq and Phi_t (for k > 0 also A v + a and A), the derivatives by
        automatic differentiation.

        Parameters
        ----------
        t : float, default 0.0
            The time.
        q, v : array_like, optional
            The positions and velocities [n]; each defaults to the default initial state (that of
            ``initial_state(params)``).
        params : dict, optional
            Parameter overrides ``{name: value}``; the defaults for the rest.

        Returns
        -------
        dict of numpy.ndarray
            "mass" M [n, n], "force" Q [n], "constraint" Phi [m], "constraint_jacobian"
            G = dPhi/dq [m, n], "constraint_rate" Phi_t [m], "velocity_constraint" A v + a [k] and
            "velocity_jacobian" A [k, n] (the last two empty for k = 0).

        Raises
        ------
        ValueError
            For an unknown parameter name (the message names the closest one), or q or v not of
            shape [n].
        """
        p = np.array([v_.default for v_ in self.parameters], dtype=float)
        for name, value in (params or {}).items():
            p[self._index(name, "params")] = value
        if q is None or v is None:
            q0, v0 = self.initial_state(params)
            q = q0 if q is None else q
            v = v0 if v is None else v
        return self._engine.evaluate(p, float(t), np.asarray(q, dtype=float), np.asarray(v, dtype=float))

    @classmethod
    def from_sympy(cls, name, *, coordinates, velocities, mass, force, parameters, constraints=(),
                   nonholonomic=(), events=None, time=None, inputs=None, initial_q=None, initial_v=None,
                   accelerations=None, multipliers=None, description="", quiet=None):
        """A model from SymPy expressions, compiled as an equations file.

        The expressions go through the equations-file generator and the model cache (docs/PYTHON.md,
        "Models from SymPy"). Only M, Q and Phi are written: every
        derivative comes from automatic differentiation.

        Parameters
        ----------
        name : str
            The model's name.
        coordinates, velocities : sequence of sympy.Symbol
            q and v = q'.
        mass : sympy.Matrix or nested lists
            M, n x n, in q and the parameters.
        force : sequence
            Q: n expressions in time, q, v and the parameters.
        parameters, inputs : dict
            ``{Symbol: default | (default, description) | (default, description, unit)}``; inputs
            (the named initial inputs) is optional.
        constraints, nonholonomic : sequence or dict, optional
            The holonomic constraints Phi(t, q) = 0 and the non-holonomic rows
            A(t, q) v + a(t, q) = 0: sequences of expressions, or ``{name: expression}``.
        events : dict, optional
            Event functions (docs/how-to/events.md): ``{name: g | (g, direction) | (g, direction,
            action) | (g, direction, action, description)}``, g an expression in time, q, v and the
            parameters, direction ``"rising"``, ``"falling"`` or ``"both"`` (the default), action
            ``"record"`` (the default), ``"stop"`` or ``"count"``; the ``[events]`` table of the
            equations file (docs/EQUATIONS.md). g may also use the symbols of ``accelerations`` and
            ``multipliers``.
        accelerations : sequence of sympy.Symbol, optional
            Symbols for q'', one per coordinate, that event functions may use.
        multipliers : sequence of sympy.Symbol, optional
            Symbols for the multipliers of M q'' + G^T lambda + A^T nu = Q, one per constraint row
            (the holonomic ones, then the non-holonomic ones), that event functions may use. Events
            see the accelerations and multipliers of the acceleration-level system at the state
            (docs/how-to/events.md).
        time : sympy.Symbol, optional
            The Symbol of t, if the expressions use it.
        initial_q, initial_v : dict, optional
            ``{coordinate: expression in the inputs and parameters}``; missing entries are 0.
        description : str, optional
            The model's description.
        quiet : bool or None, optional
            As ``lockstep.model``'s: None announces a compile on stderr only when it is a terminal.

        Returns
        -------
        Model

        Raises
        ------
        ValueError
            For an expression that cannot be written in an equations file (a string, a function the
            files lack). A model the equations generator or the compiler refuses raises ValueError at
            the caller's line, naming what the user gave for each place it refers to:
            "FILE:LINE: from_sympy model 'NAME', force for coordinate xb = <expression>: error: ...",
            then the generated equations file.
        """
        return _from_sympy(name, dict(coordinates=coordinates, velocities=velocities, mass=mass, force=force,
                                      parameters=parameters, constraints=constraints, nonholonomic=nonholonomic,
                                      events=events, time=time, inputs=inputs, initial_q=initial_q,
                                      initial_v=initial_v, accelerations=accelerations, multipliers=multipliers,
                                      description=description), quiet)

    @classmethod
    def from_lagranges_method(cls, name, method, *, parameters, inputs=None, initial_q=None, initial_v=None,
                              events=None, description="", quiet=None):
        """A model from a sympy.physics.mechanics LagrangesMethod.

        Its mass matrix and forcing (Lagrange's equations, M q'' = f + lam_coeffs^T lambda with
        lam_coeffs = -dPhi/dq; SymPy's LagrangesMethod documentation) become M and Q, its holonomic
        constraint equations Phi and its non-holonomic ones the velocity rows; the dynamicsymbols
        q(t) and q'(t) become plain Symbols; then as ``from_sympy``.

        Parameters
        ----------
        name : str
            The model's name.
        method : sympy.physics.mechanics.LagrangesMethod
            The equations; they are formed (``form_lagranges_equations``) if they have not been.
        parameters, inputs : dict
            As ``from_sympy``; inputs is optional.
        initial_q, initial_v : dict, optional
            ``{q(t) or its name: expression}``; missing entries are 0.
        events : dict, optional
            As ``from_sympy``'s, g in q(t), q'(t), t and the parameters, and in q''(t) and the
            LagrangesMethod's multipliers (its ``lam_vec``, whose sign is that of
            M q'' + G^T lambda = Q) for events of the accelerations and multipliers.
        description, quiet : optional
            As ``from_sympy``.

        Returns
        -------
        Model

        Raises
        ------
        ValueError
            For a key of initial_q or initial_v that is not a coordinate of the LagrangesMethod, a
            string given for an expression, and as ``from_sympy``; messages show the expressions as
            the LagrangesMethod holds them, in q(t) and q'(t).
        """
        import sympy
        from sympy.physics.mechanics import dynamicsymbols

        from . import _sympy

        if method.eom is None:
            method.form_lagranges_equations()
        t = dynamicsymbols._t
        qs = list(method.q)
        n = len(qs)
        names = [q.func.__name__ if isinstance(q, sympy.core.function.AppliedUndef) else str(q) for q in qs]
        coordinates = [sympy.Symbol(nm, real=True) for nm in names]
        velocities = [sympy.Symbol(f"{nm}__velocity", real=True) for nm in names]
        # Derivatives first: q'(t) contains q(t), and xreplace matches whole subtrees top-down.
        plain = {sympy.diff(q, t): v for q, v in zip(qs, velocities)}
        plain.update(dict(zip(qs, coordinates)))

        def to_plain(expr):
            if isinstance(expr, str):  # sympify would parse (evaluate) text: expressions only
                raise ValueError(f"give SymPy expressions or numbers, not a string ({expr!r})")
            return sympy.sympify(expr, strict=True).xreplace(plain)

        # LagrangesMethod keeps the holonomic equations as given in _hol_coneqs (SymPy 1.11) and puts
        # the non-holonomic ones after their time derivatives in coneqs.
        holonomic = list(getattr(method, "_hol_coneqs", sympy.Matrix()))
        nonholonomic = list(method.coneqs)[len(holonomic):]
        by_name = dict(zip(names, coordinates))

        def keyed(values):
            out = {}
            for key, expr in (values or {}).items():
                key_name = key.func.__name__ if isinstance(key, sympy.core.function.AppliedUndef) else str(key)
                if key_name not in by_name:
                    raise ValueError(f"{key_name!r} is not a coordinate of the LagrangesMethod ({', '.join(names)})")
                out[by_name[key_name]] = to_plain(expr)
            return out

        # Event functions may use q''(t) and the LagrangesMethod's multipliers lam_vec (holonomic rows,
        # then non-holonomic), whose sign is that of M q'' + G^T lambda = Q (above).
        accelerations = [sympy.Symbol(f"{nm}__acceleration", real=True) for nm in names]
        multipliers = [sympy.Symbol(f"{lam.func.__name__ if isinstance(lam, sympy.core.function.AppliedUndef) else lam}"
                                    f"__multiplier", real=True) for lam in method.lam_vec]
        in_events = {sympy.diff(q, t, 2): a for q, a in zip(qs, accelerations)}
        in_events.update(dict(zip(method.lam_vec, multipliers)))
        in_events.update(plain)

        def plain_events(values):
            out = {}
            for key, value in (values or {}).items():
                fields = tuple(value) if isinstance(value, (tuple, list)) else (value,)
                if fields and isinstance(fields[0], str):
                    raise ValueError(f"give SymPy expressions or numbers, not a string ({fields[0]!r})")
                g = sympy.sympify(fields[0], strict=True).xreplace(in_events) if fields else None
                out[key] = (g,) + fields[1:] if fields else fields
            return out

        # Messages show the expressions as the LagrangesMethod holds them, in q(t), q'(t), q''(t) and lam(t).
        display = {plain_symbol: original for original, plain_symbol in in_events.items()}
        return _from_sympy(name, dict(coordinates=coordinates, velocities=velocities,
                                      mass=method.mass_matrix[:, :n].applyfunc(to_plain),
                                      force=[to_plain(f) for f in method.forcing], parameters=parameters,
                                      constraints=[to_plain(c) for c in holonomic],
                                      nonholonomic=[to_plain(c) for c in nonholonomic],
                                      events=plain_events(events), time=t, inputs=inputs,
                                      initial_q=keyed(initial_q), initial_v=keyed(initial_v),
                                      accelerations=accelerations, multipliers=multipliers,
                                      description=description), quiet, display, "from_lagranges_method")

    def __repr__(self):
        return f"<lockstep.Model {self.name!r}: n={self.n}, m={self.m}, k={self.k}, " \
               f"{len(self.parameters)} parameters, {len(self.inputs)} initial inputs>"


def _from_sympy(name, equations, quiet, display=None, api="from_sympy"):
    """Model.from_sympy's work: the equations file written into the cache and loaded, and a failure
    told at the caller's line in the terms of the user's model (display: a substitution showing the
    expressions as the user has them; api: the method the user called)."""
    from . import _sympy

    generated = _sympy.equations_text(name, **equations, display=display)
    path = _sympy.write_equations_file(generated.text)
    try:
        return model(path, quiet=quiet)
    except ValueError as error:
        # Messages name velocities, accelerations and multipliers as the user does, not by the file's
        # <coordinate>_dot, <coordinate>_ddot, lambda_<row>.
        shown = {written: str(user.xreplace(display) if display else user) for written, user in generated.names.items()}
        raise ValueError(_sympy.explain(str(error), path, generated, f"{api} model {name!r}", _sympy.caller(),
                                        shown)) from None


def builtin_models():
    """The names of the built-in models.

    Returns
    -------
    list of str
        Each a name ``lockstep.model`` takes.
    """
    return list(_lockstep.builtin_models())


_MODEL_FILE_EXTENSIONS = (".hpp", ".h", ".hh", ".hxx", ".toml")


def model(name_or_path, name=None, quiet=None):
    """A built-in model by name, or a model file (C++ header or equations .toml) by path.

    A model file is compiled on first use (seconds) and cached (LOCKSTEP_CACHE_DIR, else
    ~/.cache/lockstep), as by the lockstep command.

    Parameters
    ----------
    name_or_path : str, path-like or Model
        A built-in model's name (``builtin_models()``), or a model file's path: a path-like object,
        or a string that contains "/" or ends in .hpp, .h, .hh, .hxx or .toml. A Model is returned
        as it is.
    name : str, optional
        Picks one model of a header that defines several (model files only).
    quiet : bool or None, optional
        None announces a compile on stderr only when it is a terminal; True never, False always.

    Returns
    -------
    Model

    Raises
    ------
    ValueError
        For an unknown built-in model (the message names the closest one and lists them), a name
        given with a built-in model, or a model file that cannot be used (the diagnostics as the
        command prints them).

    Examples
    --------
    >>> import lockstep
    >>> pend = lockstep.model("double_pendulum")
    >>> pend.parameter_names
    ['m1', 'm2', 'L1', 'L2', 'g']
    """
    if isinstance(name_or_path, Model):
        return name_or_path
    text = os.fspath(name_or_path)
    is_file = "/" in text or text.endswith(_MODEL_FILE_EXTENSIONS) or isinstance(name_or_path, os.PathLike)
    if is_file:
        if quiet is None:
            quiet = not sys.stderr.isatty()
        announce = None if quiet else (lambda line: print(f"lockstep: {line}", file=sys.stderr, flush=True))
        return Model(_lockstep.load_model_file(text, name or "", announce))
    if name is not None:
        raise ValueError(f"name picks a model of a model file; {text!r} is a built-in model")
    engine = _lockstep.builtin_model(text)
    if engine is None:
        names = builtin_models()
        raise ValueError(f"unknown model {text!r}{hint(text, names)} (built-in models: {', '.join(names)}; "
                         "a model file is a path ending in .hpp, .h or .toml)")
    return Model(engine)
