"""Every table and key of an equations file, in one place.

The reader (model.py) takes the keys it allows from here, so its "unknown key ... (allowed: ...)"
messages and their suggestions follow this table; equations_reference.py prints it as the generated
key reference; tests/docs/equations_keys_test.py checks that the reader looks up exactly these keys.

A section is one TOML table, named by its path: () is the top level, ("mass",) is [mass],
("coordinates", "<coordinate>") is the inline table of one coordinate. A key written in angle
brackets stands for names the file chooses (a coordinate, a row, a definition); a section with such a
key takes any number of them and no other key. Each section's keys are listed in the order the
reader's messages name them.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    name: str                 # as written in the file, or "<what>" for a name the file chooses
    type: str                 # the TOML type, as a reader of the file sees it
    description: str          # one or two sentences
    required: bool = False    # for a chosen name: at least one entry
    default: str = ""         # what leaving an optional key out means (Markdown)
    excludes: tuple = ()      # keys of the same section that must not stand beside this one

    @property
    def chosen(self):
        """Whether the file chooses the name (the key is a placeholder such as <coordinate>)."""
        return self.name.startswith("<")


@dataclass(frozen=True)
class Section:
    path: tuple
    description: str
    keys: tuple

    @property
    def title(self):
        """"the top level", or the section as a TOML table header: "[initial.q]"."""
        return f"[{'.'.join(self.path)}]" if self.path else "the top level"

    @property
    def names(self):
        """The keys' names in the table's order: the allowed keys of a section of fixed keys."""
        return [key.name for key in self.keys]

    @property
    def chosen(self):
        """The placeholder key of a section whose keys the file names, or None."""
        return next((key for key in self.keys if key.chosen), None)

    def key(self, name):
        return next(key for key in self.keys if key.name == name)


EXPRESSION = "expression (string or number)"
NO_TEXT = '`""`'


def _item_keys(what, default):
    """The keys of the inline table of one coordinate, parameter or input."""
    keys = []
    if default:
        keys.append(Key("default", "number", f"The {what}'s value unless a run sets another: a finite "
                                             f"number.", required=True))
    keys += [Key("unit", "string", f"The {what}'s unit; the struct's tables show it after the description "
                                   f"as `description [unit]`.", default=NO_TEXT),
             Key("description", "string", f"What the {what} is, in a few words.", default=NO_TEXT)]
    return tuple(keys)


SECTIONS = [
    Section((), "An equations file is a TOML document of these tables; any TOML spelling of them works "
                "(inline tables, `[initial.q]` or `q = { ... }` inside `[initial]`).", (
        Key("model", "table", "The model's name and description.", required=True),
        Key("coordinates", "table", "The coordinates q, in file order.", required=True),
        Key("parameters", "table", "The parameters p, in file order.", required=True),
        Key("inputs", "table", "Named initial inputs, in file order, used only by `[initial]`.",
            default="no inputs"),
        Key("definitions", "table", "Named subexpressions, in file order.", default="none"),
        Key("mass", "table", "The mass matrix M(q, p).", required=True),
        Key("force", "table", "The generalized force Q(t, q, v, p), by coordinate.", default="Q = 0"),
        Key("constraints", "table", "The holonomic constraints Phi(t, q, p) = 0, one named row each.",
            default="none (m = 0)"),
        Key("nonholonomic", "table", "The non-holonomic constraints A(t, q, p) v + a(t, q, p) = 0, one named "
                                     "row each.", default="none (k = 0)"),
        Key("events", "table", "Event functions g(t, q, v, p), whose zero crossings the solver locates, one "
                               "named entry each.", default="none"),
        Key("initial", "table", "The initial values q0 and v0, from the inputs and parameters.",
            default="q0 = v0 = 0"),
    )),
    Section(("model",), "The model's name and what it is.", (
        Key("name", "string", "Becomes the struct's name and the model's name in results: a C++ identifier, "
                              "not a C++ keyword and not one of the library's names in the generated code "
                              "(`vec`, `mat`, `dual`, `named_value`, ...).", required=True),
        Key("description", "string", "One line saying what the model is; the struct's `description`.",
            default=NO_TEXT),
    )),
    Section(("coordinates",), "The coordinates q, one key each, in file order; n is their number (n > 0).", (
        Key("<coordinate>", "inline table", "One coordinate, named by its key. The names label results "
                                            "(`coordinate_names` in results.h5, the `coordinate` dimension in "
                                            "Python); the velocity of coordinate `x` is `x_dot`.",
            required=True),
    )),
    Section(("coordinates", "<coordinate>"), "The inline table of one coordinate, as in "
                                             "`th1 = { unit = \"rad\", description = \"crank angle\" }`; "
                                             "both keys are optional, so `th1 = {}` will do.",
            _item_keys("coordinate", default=False)),
    Section(("parameters",), "The parameters p, one key each, in file order. A model needs one (C++ has no "
                             "zero-length arrays): give an unused `scale = { default = 1.0 }` if there is "
                             "nothing else.", (
        Key("<parameter>", "inline table", "One parameter, named by its key; every expression may use it.",
            required=True),
    )),
    Section(("parameters", "<parameter>"), "The inline table of one parameter, as in "
                                           "`L1 = { default = 0.10, unit = \"m\", description = \"crank "
                                           "length\" }`.",
            _item_keys("parameter", default=True)),
    Section(("inputs",), "Named initial inputs, one key each, in file order: values `[initial]` computes q0 "
                         "and v0 from, used nowhere else.", (
        Key("<input>", "inline table", "One input, named by its key.", default="none"),
    )),
    Section(("inputs", "<input>"), "The inline table of one input, as in `theta0 = { default = 1.0, unit = "
                                   "\"rad\", description = \"initial crank angle\" }`.",
            _item_keys("input", default=True)),
    Section(("definitions",), "Named subexpressions, in file order. Each may use the ones above it, and "
                              "`[mass]`, `[force]`, `[constraints]`, `[nonholonomic]` and `[events]` may use "
                              "them.", (
        Key("<name>", EXPRESSION, "A subexpression of t, q, the velocities and p, named by its key.",
            default="none"),
    )),
    Section(("mass",), "The mass matrix M(q, p), by exactly one of `matrix` and `diagonal`; its entries are "
                       "expressions of q and p (or numbers).", (
        Key("matrix", "array of n arrays of n expressions", "M row by row. It must be symmetric: entry "
                                                            "(i, j) minus entry (j, i) must expand to zero.",
            required=True, excludes=("diagonal",)),
        Key("diagonal", "array of n expressions", "The diagonal of a diagonal M, one entry per coordinate.",
            required=True, excludes=("matrix",)),
    )),
    Section(("force",), "The generalized force Q(t, q, v, p), keyed by coordinate.", (
        Key("<coordinate>", EXPRESSION, "The entry of Q for that coordinate.", default="0"),
    )),
    Section(("constraints",), "The holonomic constraints Phi(t, q, p) = 0: m rows, in file order.", (
        Key("<row>", EXPRESSION, "One row of Phi, named by its key (an identifier); it may not use the "
                                 "velocities.", default="none"),
    )),
    Section(("nonholonomic",), "The non-holonomic constraints A(t, q, p) v + a(t, q, p) = 0: k rows, in file "
                               "order (m + k <= n).", (
        Key("<row>", EXPRESSION, "One row, named by its key (an identifier). It must depend on the "
                                 "velocities, and affinely: every second derivative in two velocities is "
                                 "zero.", default="none"),
    )),
    Section(("events",), "Event functions, one key each, in file order: scalar functions g(t, q, v, p) whose "
                         "zero crossings the solver locates on every step (docs/how-to/events.md).", (
        Key("<event>", "inline table", "One event, named by its key (an identifier; the event's name in "
                                       "results).", default="none"),
    )),
    Section(("events", "<event>"), "The inline table of one event, as in `horizontal = { g = \"y\", direction = "
                                   "\"rising\", action = \"stop\" }`.", (
        Key("g", EXPRESSION, "The event function g(t, q, v, p), of what a `[force]` entry may use (t, the "
                             "coordinates, the velocities, the parameters, the definitions) and of the "
                             "accelerations `NAME_ddot` and multipliers `lambda_ROW` (`nu_ROW` of a "
                             "non-holonomic row) of the acceleration-level system; the event occurs where it "
                             "crosses zero.", required=True),
        Key("direction", "string", "The crossings reported: `\"rising\"` (from g < 0 to g >= 0), "
                                   "`\"falling\"` (from g > 0 to g <= 0) or `\"both\"`.", default='`"both"`'),
        Key("action", "string", "What a member does at the event: `\"record\"` (its time and state are "
                                "recorded, the member goes on), `\"stop\"` (recorded, and the member ends "
                                "there) or `\"count\"` (only counted, with its first time).",
            default='`"record"`'),
        Key("description", "string", "What the event is, in a few words.", default=NO_TEXT),
    )),
    Section(("initial",), "The initial values q0 and v0, computed from the inputs and parameters only. The "
                          "library projects them onto the constraints by default; values that satisfy "
                          "them start exactly.", (
        Key("definitions", "table", "Named steps towards q0 and v0.", default="none"),
        Key("q", "table", "q0, keyed by coordinate.", default="q0 = 0"),
        Key("v", "table", "v0, keyed by coordinate.", default="v0 = 0"),
    )),
    Section(("initial", "definitions"), "Named steps of the computation of q0 and v0 (a position analysis, "
                                        "say), in file order; `q` and `v` may use them.", (
        Key("<name>", EXPRESSION, "A step, from the inputs, the parameters and the steps above it; its name "
                                  "must be new to the model.", default="none"),
    )),
    Section(("initial", "q"), "The initial coordinates q0, keyed by coordinate.", (
        Key("<coordinate>", EXPRESSION, "That coordinate's initial value.", default="0"),
    )),
    Section(("initial", "v"), "The initial velocities v0, keyed by coordinate.", (
        Key("<coordinate>", EXPRESSION, "That coordinate's initial velocity.", default="0"),
    )),
]

BY_PATH = {section.path: section for section in SECTIONS}


def generic(path):
    """The table's path for a path of the file: the names the file chose become their placeholders
    (("parameters", "L1", "unit") -> ("parameters", "<parameter>", "unit")). A part the table does not
    know stays as it is."""
    result = ()
    for part in path:
        section = BY_PATH.get(result)
        if section is not None and part not in section.names and section.chosen is not None:
            part = section.chosen.name
        result += (part,)
    return result


def section(path):
    """The Section of the table at `path`, a path of the file (chosen names as the file wrote them)."""
    return BY_PATH[generic(path)]


def allowed(path):
    """The keys the table at `path` allows, in the table's order."""
    return section(path).names
