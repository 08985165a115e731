"""The event functions a study file adds to its model ([events.functions], docs/how-to/events.md): read
from the study file in the equations file's notation, checked against the model's own names, and written
as a model header whose struct derives from the model and declares the model's events, if any, and then
the study's.

The model is described by a JSON object (written by lockstep: host/model_files/model_compiler.cpp,
load_with_study_events): `type` (its C++ type), `name` (its name), `include` (the header that defines
it), `coordinates` and `parameters` (their names, in order), `m`, `k` (its constraint rows) and
`events` (how many event functions it declares itself). An event function may use t, the coordinates, their velocities NAME_dot, the parameters, and
(as in an equations file's [events]) the accelerations NAME_ddot and the multipliers lambda_0 ...
lambda_{m-1} of the holonomic rows and nu_0 ... nu_{k-1} of the non-holonomic ones, by row index: a
model's rows have no names that every kind of model file shares.
"""
import sympy

from . import Diagnostic, keys
from .emit import Function, Names, cpp_string, spelling
from .expressions import suggestion
from .model import IDENTIFIER, Item, Reader, acceleration, symbols_of, velocity

SECTION = ("events", "functions")
# The generated struct's own names: a user's name that is one of them is spelled otherwise in C++.
GENERATED = {"T", "P", "t", "q", "v", "a", "lambda", "nu", "p", "ev", "base", "b", "i", "n", "m", "k", "n_events",
             "mass", "force", "constraint", "initial_state",
             "events", "event", "base_events", "events_use_forces", "study_event_values", "name"}


class StudyEventsReader(Reader):
    """Reader's checks, on the [events.functions] table of a study file, in the names of `names`."""

    def __init__(self, text, names):
        super().__init__(text)
        model = self.model
        model.coordinates = [Item(c) for c in names["coordinates"]]
        model.parameters = [Item(p) for p in names["parameters"]]
        model.symbols = symbols_of(names["coordinates"], names["parameters"], [])
        self.reserved = {}
        for i, c in enumerate(names["coordinates"]):
            self.reserved[acceleration(c)] = (f"the acceleration of coordinate '{c}'", ("a", i))
        for argument, count, what in (("lambda", names["m"], "holonomic"), ("nu", names["k"], "non-holonomic")):
            for i in range(count):
                self.reserved[f"{argument}_{i}"] = (f"the multiplier of {what} constraint row {i}", (argument, i))
        # A name the model gives a coordinate or parameter keeps the model's meaning.
        self.reserved = {name: what for name, what in self.reserved.items() if name not in model.symbols}
        for name, (_, argument) in self.reserved.items():
            model.symbols[name] = sympy.Symbol(name, real=True)
            model.event_arguments[name] = argument

    def known_keys(self, path, table):
        """An event's inline table, [events.functions.NAME], allows what an equations file's event allows."""
        if len(path) == 3 and path[:2] == SECTION:
            allowed = keys.allowed(("events", path[2]))
            for key in table:
                if key not in allowed:
                    self.error_at_key(path + (key,), f"unknown key '{key}' in [events.functions.{path[2]}]"
                                                     f"{suggestion(key, allowed)} (allowed: {', '.join(allowed)})")
            return
        super().known_keys(path, table)

    def read(self):
        events = self.data.get("events")
        table = events.get("functions") if isinstance(events, dict) else None
        if not isinstance(table, dict) or not table:
            self.error_at_key(SECTION if table is not None else ("events",),
                              "[events.functions] must be a table of event functions, at least one, each an inline "
                              "table such as { g = \"...\", direction = \"rising\", action = \"stop\" }")
            self.stop_if_errors()
        self.read_event_entries(SECTION, table, self.scope("[events.functions]", True, True, True, False, False, ""))
        self.stop_if_errors()
        return self.model


def read_study_events(text, names):
    """The checked event functions of a study file's text (a Model holding them); raises Diagnostic."""
    return StudyEventsReader(text, names).read()


def header(model, names, study_path, struct):
    """The model header of struct `struct`: `names["type"]` with the study's event functions added."""
    symbols, base_events = model.symbols, int(names["events"])
    user = list(names["coordinates"]) + [velocity(c) for c in names["coordinates"]] + list(names["parameters"])
    user += list(model.event_arguments)
    taken = set(user) | GENERATED | {struct}
    spellings = {symbols[name]: spelling(name, GENERATED | {struct}, taken) for name in user}
    spellings[symbols["t"]] = "t"
    bindings = [(symbols[c], f"q[{i}]") for i, c in enumerate(names["coordinates"])]
    bindings += [(symbols[velocity(c)], f"v[{i}]") for i, c in enumerate(names["coordinates"])]
    bindings += [(symbols[name], f"{argument}[{i}]") for name, (argument, i) in model.event_arguments.items()]
    bindings += [(symbols[p], f"T(p[{i}])") for i, p in enumerate(names["parameters"])]
    function = Function("T", bindings, Names(taken), spellings, study_path)
    outputs = [(f"ev[{base_events + j}]", e.g) for j, e in enumerate(model.events)]
    body, _ = function.body(outputs)
    forces = "true" if model.events_of_multipliers else "false"
    declarations = [f"base::events[{i}]," for i in range(base_events)]
    declarations += [f"{{{cpp_string(e.name)}, event_direction::{e.direction}, event_action::{e.action}, "
                     f"{cpp_string(e.description)}}}," for e in model.events]
    base_values = []
    if base_events:
        base_values = [
            "    vec<T, base_events> b;",
            "    if constexpr (events_of_multipliers<base>)",
            "      b = base::template event<T, P>(t, q, v, a, lambda, nu, p);",
            "    else",
            "      b = base::template event<T, P>(t, q, v, p);",
            "    for (int i = 0; i < base_events; ++i) ev[i] = b[i];"]
    lines = [
        f"// Generated by lockstep from the [events.functions] of {study_path}; do not edit.",
        "#pragma once", "",
        f"#include {cpp_string(names['include'])}",
        '#include "lockstep/core/dual.hpp"', '#include "lockstep/core/math.hpp"',
        '#include "lockstep/model/concept.hpp"', "",
        "namespace lockstep::study_events {", "",
        f"// {names['type']} with the study's event functions after its own.",
        f"struct {struct} : {names['type']} {{",
        f"  using base = {names['type']};",
        f"  static constexpr const char* name = {cpp_string(names['name'])};",
        "  // The model's own functions, as they are.",
        "  using base::mass;", "  using base::force;", "  using base::constraint;", "  using base::initial_state;",
        f"  static constexpr int base_events = {base_events};",
        f"  static constexpr int n_events = {base_events + len(model.events)};",
        "  static constexpr event_declaration events[n_events] = {",
        *[f"      {d}" for d in declarations],
        "  };",
        "  // The form of the event function: of the accelerations and multipliers where the study's or the",
        "  // model's own events use them (model/concept.hpp).",
        f"  static constexpr bool events_use_forces = {forces} || events_of_multipliers<base>;", "",
        "  template <class T, class P>",
        "    requires(!events_use_forces)",
        "  LOCKSTEP_HD static vec<T, n_events> event(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {",
        "    return study_event_values<T, P>(t, q, v, vec<T, n>{}, vec<T, m>{}, vec<T, k>{}, p);",
        "  }",
        "  template <class T, class P>",
        "    requires(events_use_forces)",
        "  LOCKSTEP_HD static vec<T, n_events> event(const T& t, const vec<T, n>& q, const vec<T, n>& v,",
        "                                            const vec<T, n>& a, const vec<T, m>& lambda, const vec<T, k>& nu,",
        "                                            const P* p) {",
        "    return study_event_values<T, P>(t, q, v, a, lambda, nu, p);",
        "  }", "",
        "  template <class T, class P>",
        "  LOCKSTEP_HD static vec<T, n_events> study_event_values([[maybe_unused]] const T& t,",
        "                                                         [[maybe_unused]] const vec<T, n>& q,",
        "                                                         [[maybe_unused]] const vec<T, n>& v,",
        "                                                         [[maybe_unused]] const vec<T, n>& a,",
        "                                                         [[maybe_unused]] const vec<T, m>& lambda,",
        "                                                         [[maybe_unused]] const vec<T, k>& nu,",
        "                                                         [[maybe_unused]] const P* p) {",
        "    vec<T, n_events> ev;",
        *base_values,
        *body,
        "    return ev;",
        "  }",
        "};", "",
        "}  // namespace lockstep::study_events", ""]
    return "\n".join(lines)


def check_names(names):
    """The JSON description's shape, or ValueError (it is lockstep's own, not the user's)."""
    for key, kind in (("type", str), ("name", str), ("include", str), ("coordinates", list), ("parameters", list),
                      ("m", int), ("k", int), ("events", int)):
        if not isinstance(names.get(key), kind):
            raise ValueError(f"the model's description lacks '{key}' ({kind.__name__})")
    for name in names["coordinates"] + names["parameters"]:
        if not isinstance(name, str) or not IDENTIFIER.match(name):
            raise ValueError(f"the model's name {name!r} is not an identifier")


__all__ = ["Diagnostic", "read_study_events", "header", "check_names"]
