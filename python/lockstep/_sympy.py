"""Models from SymPy expressions: M(q), Q(t, q, v), Phi(t, q), non-holonomic rows and event functions,
written as an equations file (docs/EQUATIONS.md) and compiled through the same generator and cache as
any model file. Only M, Q and Phi are written: every Jacobian is taken by lockstep's automatic differentiation,
never symbolically (symbolic Jacobians of multibody equations grow fast; Featherstone, Rigid Body
Dynamics Algorithms, 2008, ch. 1, makes the point for symbolic dynamics in general)."""

import hashlib
import json
import os
import re
import sys
from typing import NamedTuple

import sympy
from sympy.printing.str import StrPrinter

# The functions an equations file's expressions may call (docs/EQUATIONS.md), by SymPy class name.
_FUNCTIONS = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log", "sqrt"}


class _EquationsPrinter(StrPrinter):
    """SymPy's str form is already the equations files' syntax (Python operators, sin(x), x**2, 1/2);
    what differs is printed here, and anything the language lacks is refused by name."""

    def _print_Abs(self, expr):
        return f"abs({self._print(expr.args[0])})"

    def _print_Exp1(self, expr):
        return "exp(1)"

    def _print_Float(self, expr):
        return repr(float(expr))  # every bit of the double

    def _print_Function(self, expr):
        name = type(expr).__name__
        if name not in _FUNCTIONS:
            raise ValueError(f"function {name!r} has no equivalent in equations files (allowed: abs, "
                             f"{', '.join(sorted(_FUNCTIONS))}); rewrite {expr}")
        return super()._print_Function(expr)

    def _print_Derivative(self, expr):
        raise ValueError(f"{expr}: pass plain Symbols for the coordinates and velocities (for dynamicsymbols "
                         "q(t), substitute Symbols for q and q' before calling from_sympy)")

    def emptyPrinter(self, expr):
        raise ValueError(f"{expr!r} ({type(expr).__name__}) cannot be written in an equations file")


def _entries(values):
    """(name, default, unit, description) rows from {Symbol or name: default | (default, description)
    | (default, description, unit)}."""
    rows = []
    for key, value in (values or {}).items():
        name = key.name if isinstance(key, sympy.Symbol) else str(key)
        default, description, unit = (tuple(value) + ("", ""))[:3] if isinstance(value, (tuple, list)) else (value, "", "")
        rows.append((name, float(default), str(unit), str(description)))
    return rows


def _event_rows(events):
    """(name, g, {key: text}) rows from {name: g | (g, direction[, action[, description]])}; the keys
    left out are not written (the equations file's defaults: both, record), and the generator checks
    the words."""
    rows = []
    for key, value in (events or {}).items():
        name = key.name if isinstance(key, sympy.Symbol) else str(key)
        fields = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if not 1 <= len(fields) <= 4:
            raise ValueError(f"events[{name}]: give g or (g, direction, action, description), not "
                             f"{len(fields)} items")
        texts = dict(zip(("direction", "action", "description"), fields[1:]))
        for what, text in texts.items():
            if not isinstance(text, str):
                raise ValueError(f"events[{name}]: the {what} must be a string, got {text!r}")
        rows.append((name, fields[0], texts))
    return rows


def _toml_key(name):
    """`name` as a TOML key: bare when it can be, else quoted (the generator then says what is wrong)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


class Generated(NamedTuple):
    """An equations file's text, and what the user gave for each of its lines: origins[line] =
    (what, expression), e.g. ("force for coordinate xb", "-k*xb"), expression None for a name."""

    text: str
    origins: dict
    names: dict = {}  # {name in the file: the user's Symbol} for velocities, accelerations and multipliers


# Expressions longer than this are shortened in messages (a LagrangesMethod's forcing can run to pages).
_SHOWN_LENGTH = 200


def _shown(expr, display):
    text = str(expr.xreplace(display) if display and isinstance(expr, sympy.Basic) else expr)
    return text if len(text) <= _SHOWN_LENGTH else text[:_SHOWN_LENGTH - 3] + "..."


def equations_text(name, *, coordinates, velocities, mass, force, parameters, constraints=(), nonholonomic=(),
                   events=None, time=None, inputs=None, initial_q=None, initial_v=None, description="",
                   accelerations=None, multipliers=None, display=None):
    """The equations file (TOML text) of a model given as SymPy expressions (see Model.from_sympy), as a
    Generated: the text and where each line came from. Every expression is on a line of its own, so
    that a message about a line of the file (the generator's, or the compiler's through the header's
    #line directives) names one thing the user wrote. display: a substitution that shows an expression
    in the user's own terms (from_lagranges_method's dynamicsymbols)."""
    coordinates = list(coordinates)
    velocities = list(velocities)
    if len(velocities) != len(coordinates):
        raise ValueError(f"velocities: {len(velocities)} symbols for {len(coordinates)} coordinates")
    for s in coordinates + velocities:
        if not isinstance(s, sympy.Symbol):
            raise ValueError(f"coordinates and velocities must be sympy Symbols, got {s!r}")
    n = len(coordinates)
    # Velocities are written <coordinate>_dot, time t (the equations files' names).
    rename = {v: sympy.Symbol(f"{q.name}_dot", real=True) for q, v in zip(coordinates, velocities)}
    if time is not None:
        rename[time] = sympy.Symbol("t", real=True)
    # The rows as the file names them, holonomic then non-holonomic.
    row_keys = []
    for table, values, prefix in (("constraints", constraints, "phi"), ("nonholonomic", nonholonomic, "nonholonomic")):
        row_keys.append([(str(k), str(k), v) for k, v in values.items()] if isinstance(values, dict) else
                        [(f"{prefix}{i}", str(i), v) for i, v in enumerate(values)])
    # The event functions' accelerations (<coordinate>_ddot) and multipliers (lambda_<row>, nu_<row>).
    for argument, given, names, what in (
            ("accelerations", accelerations, [f"{q.name}_ddot" for q in coordinates], "coordinates"),
            ("multipliers", multipliers, [f"lambda_{key}" for key, _, _ in row_keys[0]] +
             [f"nu_{key}" for key, _, _ in row_keys[1]], "constraint rows (holonomic, then non-holonomic)")):
        given = [] if given is None else list(given)
        if given and len(given) != len(names):
            raise ValueError(f"{argument}: {len(given)} symbols for {len(names)} {what}")
        for symbol, generated in zip(given, names):
            if not isinstance(symbol, sympy.Symbol):
                raise ValueError(f"{argument} must be sympy Symbols, got {symbol!r}")
            rename[symbol] = sympy.Symbol(generated, real=True)
    printer = _EquationsPrinter({"order": "none"})

    def checked(expr, where):
        # Numbers and SymPy objects only: a string would be parsed by sympify, which evaluates text.
        if isinstance(expr, str):
            raise ValueError(f"{where}: give a SymPy expression or a number, not a string ({expr!r})")
        try:
            return sympy.sympify(expr, strict=True)
        except sympy.SympifyError as error:
            raise ValueError(f"{where}: {expr!r} is not a SymPy expression or a number") from error

    out, origins = [], {}

    def line(text, what=None, expr=None):
        out.append(text)
        if what is not None:
            origins[len(out)] = (what, None if expr is None else _shown(expr, display))

    def printed(expr, what):
        """The checked expression and its text in the file, a TOML string."""
        value = checked(expr, what)
        try:
            return value, json.dumps(printer.doprint(value.xreplace(rename)))
        except ValueError as error:  # what the language lacks, named with the entry it is in
            raise ValueError(f"{what} = {_shown(value, display)}: {error}") from None

    def entry(key, expr, what, suffix=""):
        """`key = "expression"` (or the bare expression when key is None), one line."""
        value, written = printed(expr, what)
        line(f"{key} = {written}" if key is not None else f"    {written}{suffix}", what, value)

    if not isinstance(mass, sympy.MatrixBase):  # Matrix() would sympify (parse) string entries
        for i, row in enumerate(mass):
            for j, item in enumerate(row if isinstance(row, (list, tuple)) else [row]):
                if isinstance(item, str):
                    raise ValueError(f"mass[{i}][{j}]: give a SymPy expression or a number, not a string ({item!r})")
    M = sympy.Matrix(mass)
    if M.shape != (n, n):
        raise ValueError(f"mass must be {n} x {n} (one row and column per coordinate), got {M.shape[0]} x {M.shape[1]}")
    Q = list(force)
    if len(Q) != n:
        raise ValueError(f"force must have {n} entries (one per coordinate), got {len(Q)}")

    line("# Generated by lockstep.Model.from_sympy; the equations-file form of a SymPy model.")
    line("[model]")
    line(f"name = {json.dumps(name)}", "the model's name")
    line(f"description = {json.dumps(description)}")
    line("")
    line("[coordinates]")
    for q in coordinates:
        line(f"{q.name} = {{}}", f"coordinate {q.name}")
    for table, what, entries in (("parameters", "parameter", _entries(parameters)), ("inputs", "input", _entries(inputs))):
        if entries:
            line("")
            line(f"[{table}]")
            for n_, d, u, t in entries:
                line(f"{n_} = {{ default = {d!r}, unit = {json.dumps(u)}, description = {json.dumps(t)} }}", f"{what} {n_}")
    line("")
    line("[mass]")
    line("matrix = [")
    for i in range(n):
        line("  [")
        for j in range(n):
            entry(None, M[i, j], f"mass[{i}][{j}]", ",")
        line("  ],")
    line("]")
    line("")
    line("[force]")
    for q, f in zip(coordinates, Q):
        entry(q.name, f, f"force for coordinate {q.name}")
    for table, rows in zip(("constraints", "nonholonomic"), row_keys):
        if rows:
            line("")
            line(f"[{table}]")
            for key, shown_key, expr in rows:
                entry(key, expr, f"{table}[{shown_key}]")
    event_rows = _event_rows(events)
    if event_rows:
        line("")
        line("[events]")
        for event, g, texts in event_rows:
            what = f"events[{event}]"
            value, written = printed(g, what)
            fields = [f"g = {written}"] + [f"{key} = {json.dumps(text)}" for key, text in texts.items()]
            line(f"{_toml_key(event)} = {{ {', '.join(fields)} }}", what, value)
    for key, values in (("q", initial_q), ("v", initial_v)):
        if values:
            line("")
            line(f"[initial.{key}]")
            for c, expr in values.items():
                coordinate = c.name if isinstance(c, sympy.Symbol) else str(c)
                entry(coordinate, expr, f"initial_{key}[{coordinate}]")
    names = {str(generated): user for user, generated in rename.items() if str(generated) != "t"}
    return Generated("\n".join(out) + "\n", origins, names)


def cache_root():
    """The model cache of the lockstep command (host/model_files/engine_cache.hpp): LOCKSTEP_CACHE_DIR,
    else $XDG_CACHE_HOME/lockstep, else ~/.cache/lockstep."""
    if os.environ.get("LOCKSTEP_CACHE_DIR"):
        return os.environ["LOCKSTEP_CACHE_DIR"]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "lockstep")
    return os.path.join(os.path.expanduser("~"), ".cache", "lockstep")


def write_equations_file(text):
    """The equations file in the cache (sympy/SHA-256.toml), written once per text; its path."""
    directory = os.path.join(cache_root(), "sympy")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, hashlib.sha256(text.encode()).hexdigest() + ".toml")
    if not os.path.exists(path):
        partial = f"{path}.partial-{os.getpid()}"
        with open(partial, "w") as f:
            f.write(text)
        os.replace(partial, path)
    return path


def caller():
    """"FILE:LINE" of the first frame outside this package: the user's call of from_sympy or
    from_lagranges_method, which a failure is reported at."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


def explain(message, path, generated, model, call_site, names=None):
    """A failure to load the generated equations file, told in the user's terms: each reference
    `<path>:LINE:COLUMN` (the generator's, or the compiler's through the header's #line directives)
    becomes `CALL_SITE: MODEL, <what the user gave for that line> = <expression>` (MODEL e.g.
    "from_sympy model 'cart'"), with the generated names of velocities, accelerations and multipliers
    (<coordinate>_dot, <coordinate>_ddot, lambda_<row>) the user's own (names: {generated: shown}); a
    last line keeps the generated file and the places in it."""
    reference = re.compile(r"(?:\S*/)?" + re.escape(os.path.basename(path)) + r":(\d+):(\d+)")
    renamed = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
    lines, places = [], []
    for text in message.splitlines():
        found = reference.match(text)
        if not found:
            lines.append(text)
            continue
        number = int(found.group(1))
        places.append(f"{number}:{found.group(2)}")
        what, expr = generated.origins.get(number, (f"line {number} of its equations file", None))
        rest = text[found.end():]
        if renamed is not None:
            rest = renamed.sub(lambda m: names[m.group(1)], rest)
        lines.append(f"{call_site}: {model}, {what}" + (f" = {expr}" if expr is not None else "") + rest)
    if not places:  # a failure of no one line (the compiler missing, the cache unwritable)
        lines = [f"{call_site}: {model}: {message}"]
    lines.append(f"(generated equations file: {path}" + (f", at {', '.join(places)})" if places else ")"))
    return "\n".join(lines)
