"""An equations file read into one checked description of the model.

Every table is checked against the format of docs/EQUATIONS.md, its keys against the key table
(keys.py); errors are collected with the place they refer to (the key, or the character inside an
expression) and raised together as a Diagnostic.
Checks that need earlier tables to be sound (expressions need the names) run only when those are.
"""
import re
import tomllib

import sympy

from . import Diagnostic, keys
from .expressions import FUNCTIONS, Scope, number, parse, suggestion
from .locate import Locator

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
CPP_KEYWORDS = set("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while xor xor_eq final override import module
""".split())
# Names the expression language itself gives a meaning.
LANGUAGE_NAMES = {"t": "time", "pi": "the constant pi", **{f: "a function" for f in FUNCTIONS}}
# A model name becomes a struct in namespace lockstep::equations; these would hide what the generated
# code and the library refer to there.
LIBRARY_NAMES = {"vec", "mat", "dual", "named_value", "lockstep", "equations", "models", "std", "sin_cos",
                 "pow", "min", "max", "value_of", "is_finite", "floor", "ldexp", "sine_cosine"}


# The members of a generated model struct (model/concept.hpp): a model of one of these names would be a
# struct declaring a member of its own name, which C++ reads as a constructor or refuses.
MEMBER_NAMES = {"n", "m", "k", "name", "description", "params", "inputs", "n_params", "n_inputs",
                "coordinate_names", "mass", "force", "constraint", "nonholonomic", "initial_state"}

# An event's direction and action as written in the file, in the order messages list them; the values
# of lockstep::event_direction and lockstep::event_action (model/concept.hpp) have these names.
EVENT_DIRECTIONS = ("rising", "falling", "both")
EVENT_ACTIONS = ("record", "stop", "count")
# Names the generated struct and its event table use once a model has events: a model of one of these
# names would hide them (or clash with a member of the same name).
EVENT_NAMES = {"n_events", "events", "event", "event_declaration", "event_direction", "event_action"}


# Tables of a study file (docs/reference/study-file.md) that no equations file has.
STUDY_TABLES = ("time", "solver", "ensemble", "output", "lyapunov")


class Item:
    """A coordinate, parameter or input: its name, default (not for coordinates), unit, description."""

    def __init__(self, name, default=None, unit="", description=""):
        self.name, self.default, self.unit, self.description = name, default, unit, description

    def described(self):
        """"description [unit]", the form the built-in models' tables use."""
        text = self.description
        if self.unit:
            text = f"{text} [{self.unit}]" if text else f"[{self.unit}]"
        return text


class Expr:
    """A checked expression and the line of the file it was written on (None for an implicit zero)."""

    def __init__(self, value, line):
        self.value, self.line = value, line


class Event:
    """An event function: its name, g (an Expr), direction and action (as written) and description."""

    def __init__(self, name, g, direction="both", action="record", description=""):
        self.name, self.g, self.direction, self.action, self.description = name, g, direction, action, description


class Model:
    """The checked content of an equations file (see docs/EQUATIONS.md for each field)."""

    def __init__(self):
        self.name = ""
        self.description = ""
        self.coordinates, self.parameters, self.inputs = [], [], []
        self.mass = []          # n rows of n Expr (zero entries as Expr(0))
        self.force = []         # n Expr
        self.constraints = []   # (name, Expr)
        self.nonholonomic = []  # (name, Expr)
        self.initial_q, self.initial_v = [], []  # n Expr each
        self.events = []        # Event, in file order
        self.symbols = {}       # name -> sympy.Symbol for coordinates, velocities, t, parameters, inputs
        # The names only event functions may use, name -> (argument, index): the accelerations
        # NAME_ddot ("a"), the multipliers lambda_ROW ("lambda") and nu_ROW ("nu"); their symbols are
        # in `symbols` too. Empty in a file without [events].
        self.event_arguments = {}

    @property
    def events_of_multipliers(self):
        """Whether an event function uses an acceleration or a multiplier: the header's event function
        then takes them (include/lockstep/model/concept.hpp)."""
        used = {self.symbols[name] for name in self.event_arguments}
        return any(e.g is not None and e.g.value.free_symbols & used for e in self.events)

    @property
    def n(self):
        return len(self.coordinates)


def velocity(name):
    return f"{name}_dot"


def acceleration(name):
    return f"{name}_ddot"


def multiplier(row, nonholonomic=False):
    """The name of a constraint row's multiplier in event functions: lambda_ROW, or nu_ROW for a
    non-holonomic row (M q'' + G^T lambda + A^T nu = Q)."""
    return f"{'nu' if nonholonomic else 'lambda'}_{row}"


def symbols_of(coordinates, parameters, inputs):
    """The SymPy symbol of every name a model's expressions may use: coordinates, their velocities
    (NAME_dot), t, parameters and inputs. Real symbols: otherwise SymPy rewrites abs(exp(x)) as
    exp(re(x)), which has no C++ form."""
    names = list(coordinates) + [velocity(c) for c in coordinates] + ["t"] + list(parameters) + list(inputs)
    return {name: sympy.Symbol(name, real=True) for name in names}


def scope_of(section, symbols, coordinates, parameters, inputs, use_coordinates, use_velocities, use_time,
             use_inputs, why, rate, inputs_belong):
    """The Scope of one place of a model file: the parameters always, the coordinates, their velocities
    (called `rate` in messages), t and the inputs where allowed; each name not allowed there is
    forbidden with a sentence saying why (`why`; inputs belong only in `inputs_belong`)."""
    names, forbidden, allowed = {"pi": sympy.pi}, {}, set()

    def offer(name, ok, reason):
        if ok:
            names[name] = symbols[name]
            allowed.add(symbols[name])
        else:
            forbidden[name] = reason

    for c in coordinates:
        offer(c, use_coordinates, f"coordinate '{c}' cannot be used in {section}: {why}")
        offer(velocity(c), use_velocities, f"{rate} '{velocity(c)}' cannot be used in {section}: {why}")
    offer("t", use_time, f"time 't' cannot be used in {section}: {why}")
    for p in parameters:
        offer(p, True, "")
    for i in inputs:
        offer(i, use_inputs, f"input '{i}' can only be used in {inputs_belong}")
    return Scope(section, names, forbidden, allowed)


class Reader:
    def __init__(self, text):
        self.errors = []
        self.reserved = {}  # event_names(), once the names are checked
        try:
            self.data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            # tomllib ends its message with "(at line L, column C)"; move that to the front.
            found = re.search(r"\(at line (\d+), column (\d+)\)\s*$", str(error))
            where = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
            message = str(error)[:found.start()].strip() if found else str(error)
            raise Diagnostic([(where[0], where[1], f"invalid TOML: {message}")])
        self.locate = Locator(text)
        self.model = Model()
        self.definitions = {}  # name -> expression, filled in file order by read_definitions

    # ---- reporting -----------------------------------------------------------------------------

    def error_at_key(self, path, message):
        self.errors.append((*self.locate.key(path), message))

    def error_at_value(self, path, message):
        self.errors.append((*self.locate.value(path), message))

    def stop_if_errors(self):
        if self.errors:
            raise Diagnostic(sorted(set(self.errors)))

    # ---- shapes of tables ----------------------------------------------------------------------

    def table(self, path, required=False):
        """The table at `path` ({} when absent and optional), or None after reporting a wrong type."""
        value = self.data
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            if required:
                self.errors.append((1, 1, f"missing table [{'.'.join(path)}]"))
            return {}
        if not isinstance(value, dict):
            self.error_at_key(path, f"'{'.'.join(path)}' must be a table")
            return None
        return value

    def known_keys(self, path, table):
        """Reports each key of `table` that the key table (keys.py) does not allow at `path`."""
        allowed = keys.allowed(path)
        for key in table:
            if key not in allowed:
                where = f"[{'.'.join(path)}]" if path else "the top level"
                self.error_at_key(path + (key,), f"unknown key '{key}' in {where}{suggestion(key, allowed)} "
                                                 f"(allowed: {', '.join(allowed)})")

    def string(self, path, value, what):
        if not isinstance(value, str):
            self.error_at_value(path, f"{what} must be a string")
            return ""
        return value

    def identifier(self, path, name, what):
        """Reports a name that cannot be a C++ identifier or that the language already uses."""
        if not IDENTIFIER.match(name):
            self.error_at_key(path, f"{what} '{name}' is not an identifier (letters, digits and _, not "
                                    f"starting with a digit)")
        elif name in CPP_KEYWORDS:
            self.error_at_key(path, f"{what} '{name}' is a C++ keyword")
        elif name.startswith("_") or "__" in name:
            self.error_at_key(path, f"{what} '{name}' is reserved in C++ (a leading underscore or a double "
                                    f"underscore)")
        else:
            return True
        return False

    # ---- the tables ----------------------------------------------------------------------------

    def read(self):
        self.refuse_a_study_file()
        self.known_keys((), self.data)
        self.read_model_table()
        self.read_items("coordinates", self.model.coordinates, required=True)
        self.read_items("parameters", self.model.parameters, required=True)
        self.read_items("inputs", self.model.inputs, required=False)
        self.check_names()
        self.stop_if_errors()
        self.make_symbols()
        self.read_definitions()
        self.read_mass()
        self.read_force()
        self.model.constraints = self.read_rows("constraints", self.scope_constraints)
        self.model.nonholonomic = self.read_rows("nonholonomic", self.scope_velocities)
        self.check_nonholonomic()
        self.read_events()
        self.read_initial()
        m, k = len(self.model.constraints), len(self.model.nonholonomic)
        if m + k > self.model.n:
            path = ("nonholonomic",) if k else ("constraints",)
            self.error_at_key(path, f"{m} constraints and {k} non-holonomic rows exceed the {self.model.n} "
                                    f"coordinates (m + k <= n)")
        self.stop_if_errors()
        return self.model

    def refuse_a_study_file(self):
        """A study file given where an equations file belongs (both are TOML: `lockstep check s.toml`, or
        a study's [model] source naming another study) gets one message saying so, not a list of what an
        equations file lacks."""
        if "coordinates" in self.data:
            return
        model = self.data.get("model")
        study_keys = [(t,) for t in STUDY_TABLES if t in self.data]
        if isinstance(model, dict):
            study_keys += [("model", k) for k in ("source", "params", "initial") if k in model]
        if not study_keys:
            return
        found = ", ".join("[" + ".".join(k[:1]) + "]" + (" " + k[1] if len(k) > 1 else "") for k in study_keys)
        self.error_at_key(study_keys[0], f"this is a study file (it has {found}), not an equations file: "
                                         f"`lockstep run` runs a study; `lockstep check` and `lockstep describe` "
                                         f"take its model, the file or built-in name of its [model] source or name")
        self.stop_if_errors()

    def read_model_table(self):
        table = self.table(("model",), required=True)
        if table is None:
            return
        self.known_keys(("model",), table)
        if "name" not in table:
            self.error_at_key(("model",), "[model] needs a name")
        else:
            name = self.string(("model", "name"), table["name"], "the model name")
            if name and self.identifier(("model", "name"), name, "model name"):
                if name in LIBRARY_NAMES:
                    self.error_at_value(("model", "name"), f"model name '{name}' would hide a name of the "
                                                           f"library in the generated code")
                elif name in MEMBER_NAMES:
                    self.error_at_value(("model", "name"), f"model name '{name}' is the name of a member of "
                                                           f"the generated struct; choose another")
            self.model.name = name
        if "description" in table:
            self.model.description = self.string(("model", "description"), table["description"],
                                                 "the description")

    def read_items(self, section, items, required):
        table = self.table((section,), required=False)
        if table is None:
            return
        if not table:
            if section == "coordinates":
                self.error_at_key((section,), "[coordinates] must name at least one coordinate (n > 0)")
            elif section == "parameters":
                self.error_at_key((section,), "[parameters] must name at least one parameter: a model without "
                                              "parameters would declare a zero-length C++ array (add an unused "
                                              "one, e.g. scale = { default = 1.0 })")
            return
        for name, spec in table.items():
            path = (section, name)
            if not isinstance(spec, dict):
                self.error_at_value(path, f"{section[:-1] if section != 'inputs' else 'input'} '{name}' must be "
                                          f"an inline table such as {{ unit = \"m\", description = \"...\" }}")
                continue
            self.known_keys(path, spec)
            item = Item(name)
            if "default" in keys.allowed(path):
                if "default" not in spec:
                    self.error_at_key(path, f"'{name}' needs a default value")
                elif number(spec["default"]) is None:
                    self.error_at_value(path + ("default",), "the default must be a finite number")
                else:
                    item.default = float(spec["default"])
            for key in ("unit", "description"):
                if key in spec:
                    setattr(item, key, self.string(path + (key,), spec[key], f"'{key}'"))
            items.append(item)

    def event_names(self):
        """The names only an event function may use, name -> what it is, (argument, index): each
        coordinate's acceleration, each constraint row's multiplier; none in a file without [events]."""
        if not isinstance(self.data.get("events"), dict):
            return {}
        names = {}
        for i, c in enumerate(self.data.get("coordinates") or {}):
            names[acceleration(c)] = (f"the acceleration of coordinate '{c}'", ("a", i))
        for section, what, argument in (("constraints", "constraint", "lambda"),
                                        ("nonholonomic", "non-holonomic row", "nu")):
            table = self.data.get(section)
            rows = [row for row in table if IDENTIFIER.match(row)] if isinstance(table, dict) else []
            for i, row in enumerate(rows):
                names[multiplier(row, argument == "nu")] = (f"the multiplier of {what} '{row}'", (argument, i))
        return names

    def check_names(self):
        """Coordinates, velocities, parameters, inputs and definitions share one namespace, and with
        [events] the accelerations and multipliers their functions may use."""
        seen = {}
        reserved = self.event_names()
        groups = [("coordinates", "coordinate"), ("parameters", "parameter"), ("inputs", "input"),
                  ("definitions", "definition")]
        for section, what in groups:
            table = self.table((section,)) or {}
            for name in table:
                path = (section, name)
                if not self.identifier(path, name, what):
                    continue
                if name in LANGUAGE_NAMES:
                    self.error_at_key(path, f"{what} '{name}' clashes with {LANGUAGE_NAMES[name]} of the "
                                            f"expression language")
                elif name in seen:
                    self.error_at_key(path, f"{what} '{name}' is already defined as {seen[name]}")
                elif name in reserved:
                    self.error_at_key(path, f"{what} '{name}' clashes with {reserved[name][0]}, a name the event "
                                            f"functions use ([events])")
                elif section == "coordinates" and name.endswith("_dot"):
                    self.error_at_key(path, f"coordinate '{name}' ends in _dot, which names velocities")
                else:
                    seen[name] = f"a {what}"
                    if section == "coordinates":
                        seen[velocity(name)] = f"the velocity of coordinate '{name}'"

    def make_symbols(self):
        model = self.model
        model.symbols = symbols_of([c.name for c in model.coordinates], [p.name for p in model.parameters],
                                   [i.name for i in model.inputs])
        self.reserved = self.event_names()
        for name, (_, argument) in self.reserved.items():
            model.symbols[name] = sympy.Symbol(name, real=True)
            model.event_arguments[name] = argument

    # ---- scopes: which names each table may use --------------------------------------------------

    def scope(self, section, coordinates, velocities, time, inputs, definitions, why):
        model = self.model
        scope = scope_of(section, model.symbols, [c.name for c in model.coordinates],
                         [p.name for p in model.parameters], [i.name for i in model.inputs], coordinates,
                         velocities, time, inputs, why, rate="velocity", inputs_belong="[initial]")
        names, forbidden = scope.names, scope.forbidden
        for name, value in self.definitions.items():
            if definitions:
                names[name] = value
                scope.definitions[name] = value
            else:
                forbidden[name] = f"definition '{name}' cannot be used in {section}: {why}"
        for name, (what, _) in self.reserved.items():
            forbidden[name] = f"'{name}', {what}, can be used only in [events]"
        return scope

    def scope_mass(self):
        return self.scope("[mass]", True, False, False, False, True, "the mass matrix depends on q and p only")

    def scope_velocities(self, section):
        return self.scope(section, True, True, True, False, True, "")

    def scope_constraints(self, section):
        return self.scope(section, True, False, True, False, True,
                          "holonomic constraints depend on t, q and p only")

    # ---- expressions ----------------------------------------------------------------------------

    def expression(self, path, value, scope):
        """The SymPy expression of the string or number at `path`, or None after reporting an error."""
        line = self.locate.value(path)[0]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            converted = number(value)
            if converted is None:
                self.error_at_value(path, "number is not finite")
                return None
            return Expr(converted, line)
        if not isinstance(value, str):
            self.error_at_value(path, "expected an expression (a string) or a number")
            return None
        result, failure = parse(value, scope)
        if failure is not None:
            index, message = failure
            written = self.locate.string(path)
            where = written.at(index) if written else self.locate.value(path)
            self.errors.append((*where, message))
            return None
        return Expr(result, line)

    def read_definitions(self):
        table = self.table(("definitions",)) or {}
        for name, value in table.items():
            scope = self.scope_velocities("[definitions]")
            later = [other for other in table if other not in self.definitions and other != name]
            for other in later:
                scope.forbidden[other] = (f"definition '{other}' comes later in [definitions]; a definition "
                                          f"may use only the ones above it")
            scope.forbidden[name] = f"definition '{name}' cannot refer to itself"
            found = self.expression(("definitions", name), value, scope)
            # A failed definition still gets a name, so its uses do not report "unknown name" again.
            self.definitions[name] = found.value if found else sympy.Symbol(name)

    def read_mass(self):
        n, path = self.model.n, ("mass",)
        table = self.table(path, required=True)
        if table is None:
            return
        self.known_keys(path, table)
        scope = self.scope_mass()
        zero = Expr(sympy.Integer(0), None)
        rows = [[zero] * n for _ in range(n)]
        if ("matrix" in table) == ("diagonal" in table):
            self.error_at_key(path, "[mass] needs exactly one of 'matrix' (n rows of n entries) and 'diagonal' "
                                    "(n entries)")
            return
        if "diagonal" in table:
            entries = table["diagonal"]
            if not isinstance(entries, list) or len(entries) != n:
                self.error_at_value(path + ("diagonal",), f"'diagonal' must be an array of {n} entries, one "
                                                          f"per coordinate")
                return
            for i, entry in enumerate(entries):
                rows[i][i] = self.expression(path + ("diagonal", i), entry, scope) or zero
        else:
            matrix = table["matrix"]
            if not isinstance(matrix, list) or len(matrix) != n:
                self.error_at_value(path + ("matrix",), f"'matrix' must have {n} rows (one per coordinate)")
                return
            for i, row in enumerate(matrix):
                if not isinstance(row, list) or len(row) != n:
                    self.error_at_value(path + ("matrix", i), f"row {i + 1} of 'matrix' must have {n} entries")
                    continue
                for j, entry in enumerate(row):
                    rows[i][j] = self.expression(path + ("matrix", i, j), entry, scope) or zero
            for i in range(n):
                for j in range(i + 1, n):
                    if sympy.expand(rows[i][j].value - rows[j][i].value) != 0:
                        self.error_at_value(path + ("matrix", j, i), f"the mass matrix must be symmetric: entry "
                                                                     f"({j + 1}, {i + 1}) differs from ({i + 1}, "
                                                                     f"{j + 1})")
        self.model.mass = rows

    def read_force(self):
        table = self.table(("force",)) or {}
        coordinates = [c.name for c in self.model.coordinates]
        scope = self.scope_velocities("[force]")
        self.model.force = [Expr(sympy.Integer(0), None) for _ in coordinates]
        for name, value in table.items():
            if name not in coordinates:
                self.error_at_key(("force", name), f"'{name}' is not a coordinate{suggestion(name, coordinates)}"
                                                   f" ([force] is keyed by coordinate: {', '.join(coordinates)})")
                continue
            found = self.expression(("force", name), value, scope)
            if found:
                self.model.force[coordinates.index(name)] = found

    def read_rows(self, section, make_scope):
        table = self.table((section,)) or {}
        scope = make_scope(f"[{section}]")
        rows = []
        for name, value in table.items():
            if not IDENTIFIER.match(name):
                self.error_at_key((section, name), f"row name '{name}' is not an identifier")
                continue
            found = self.expression((section, name), value, scope)
            rows.append((name, found or Expr(sympy.Integer(0), self.locate.key((section, name))[0])))
        return rows

    def check_nonholonomic(self):
        """Rows A(t, q) v + a(t, q): every second derivative in the velocities vanishes."""
        velocities = [self.model.symbols[velocity(c.name)] for c in self.model.coordinates]
        for name, row in self.model.nonholonomic:
            path = ("nonholonomic", name)
            used = [v for v in velocities if row.value.has(v)]
            if not used:
                self.error_at_value(path, f"non-holonomic row '{name}' does not depend on the velocities; a "
                                          f"condition on t and q belongs in [constraints]")
                continue
            for i, first in enumerate(used):
                for second in used[i:]:
                    curvature = sympy.diff(row.value, first, second)
                    if curvature != 0 and sympy.simplify(curvature) != 0:
                        self.error_at_value(path, f"non-holonomic row '{name}' is not affine in the velocities: "
                                                  f"its second derivative in {first} and {second} is "
                                                  f"{sympy.simplify(curvature)}, not 0")
                        break
                else:
                    continue
                break

    def read_events(self):
        """[events]: one inline table per event function, in file order."""
        table = self.table(("events",)) or {}
        self.read_event_entries(("events",), table, self.scope_velocities("[events]"))
        if table and self.model.name in EVENT_NAMES:
            self.error_at_value(("model", "name"), f"model name '{self.model.name}' is a name the generated "
                                                   f"code uses for the events")

    def read_event_entries(self, section, table, scope):
        """The event functions of `table`, the table at path `section`, into the model's events, in file
        order: `scope` with the accelerations and multipliers (self.reserved) allowed as well."""
        for name in self.reserved:  # the accelerations and multipliers (docs/EQUATIONS.md, "Events")
            scope.forbidden.pop(name, None)
            scope.names[name] = self.model.symbols[name]
            scope.symbols.add(self.model.symbols[name])
        for name, spec in table.items():
            path = section + (name,)
            if not self.identifier(path, name, "event"):
                continue
            if not isinstance(spec, dict):
                self.error_at_value(path, f"event '{name}' must be an inline table such as "
                                          f"{{ g = \"...\", direction = \"rising\", action = \"stop\" }}")
                continue
            self.known_keys(path, spec)
            event = Event(name, None)
            if "g" not in spec:
                self.error_at_key(path, f"event '{name}' needs 'g', its event function (an expression)")
            else:
                event.g = self.expression(path + ("g",), spec["g"], scope)
            for key, choices in (("direction", EVENT_DIRECTIONS), ("action", EVENT_ACTIONS)):
                if key in spec and self.choice(path + (key,), spec[key], choices, f"the {key} of event '{name}'"):
                    setattr(event, key, spec[key])
            if "description" in spec:
                event.description = self.string(path + ("description",), spec["description"], "'description'")
            self.model.events.append(event)

    def choice(self, path, value, choices, what):
        """Whether `value` is one of the strings `choices`; reports an error when not."""
        if isinstance(value, str) and value in choices:
            return True
        listing = ", ".join(f"'{c}'" for c in choices)
        if not isinstance(value, str):
            self.error_at_value(path, f"{what} must be a string: one of {listing}")
        else:
            self.error_at_value(path, f"{what} must be one of {listing}, not '{value}'"
                                      f"{suggestion(value, choices)}")
        return False

    def read_initial(self):
        path = ("initial",)
        table = self.table(path) or {}
        self.known_keys(path, table)
        coordinates = [c.name for c in self.model.coordinates]
        scope = self.scope("[initial]", False, False, False, True, False,
                           "initial values are computed from the inputs and parameters only")
        self.read_initial_definitions(table.get("definitions", {}), scope)
        for key in ("q", "v"):
            values = [Expr(sympy.Integer(0), None) for _ in coordinates]
            entries = table.get(key, {})
            if not isinstance(entries, dict):
                self.error_at_value(path + (key,), f"'{key}' must be a table keyed by coordinate, e.g. "
                                                   f"{key} = {{ {coordinates[0]} = \"...\" }}")
                entries = {}
            for name, value in entries.items():
                if name not in coordinates:
                    self.error_at_key(path + (key, name), f"'{name}' is not a coordinate"
                                                          f"{suggestion(name, coordinates)}")
                    continue
                found = self.expression(path + (key, name), value, scope)
                if found:
                    values[coordinates.index(name)] = found
            setattr(self.model, f"initial_{key}", values)

    def read_initial_definitions(self, table, scope):
        """[initial.definitions]: named steps of the computation of q0 and v0 (a position analysis,
        say), in order, each from the inputs, parameters and earlier ones. They join `scope`."""
        path = ("initial", "definitions")
        if not isinstance(table, dict):
            self.error_at_value(path, "'definitions' must be a table of named expressions")
            return
        taken = set(self.model.symbols) | set(self.definitions) | set(LANGUAGE_NAMES)
        for name, value in table.items():
            if not self.identifier(path + (name,), name, "definition"):
                continue
            if name in taken:
                self.error_at_key(path + (name,), f"definition '{name}' is already a name of the model")
                continue
            found = self.expression(path + (name,), value, scope)
            scope.names[name] = found.value if found else sympy.Symbol(name)
            scope.forbidden.pop(name, None)
            taken.add(name)


def read_model(text):
    """The checked Model of an equations file's text; raises Diagnostic listing every error found."""
    return Reader(text).read()
