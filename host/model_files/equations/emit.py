"""The C++ header of a checked Model: one struct with the members model/concept.hpp asks for.

Each function is written as straight-line code for a generic scalar T: the coordinates, velocities
and parameters it uses bound to locals, common subexpressions of all its outputs computed once
(sympy.cse), then the outputs. The printer is ours, not SymPy's C printer, because the code must
type-check for T = double and for T = lockstep::dual (core/dual.hpp), which offers +, -, *, / with
itself and with double, unary minus, and the functions abs acos asin atan atan2 cos exp log pow sin
sqrt tan sin_cos -- called unqualified so that argument-dependent lookup finds the dual overloads.
"""
import heapq

import sympy

from .model import EVENT_NAMES, LIBRARY_NAMES, velocity

# Identifiers of the generated code itself. A user name equal to one of these is spelled differently
# in C++ (its table entry keeps the user's name), so the file format need not forbid them: the
# built-in slider crank, for one, has a parameter called T.
GENERATED_NAMES = {"T", "P", "t", "q", "v", "p", "in", "q0", "v0", "M", "Q", "phi", "r", "n", "m", "k",
                   "name", "description", "n_params", "params", "n_inputs", "inputs", "mass", "force",
                   "constraint", "nonholonomic", "initial_state", "sin", "cos", "tan", "asin", "acos",
                   "atan", "atan2", "exp", "log", "sqrt", "abs"} | LIBRARY_NAMES
# More of them in a model with events: the members n_events, events and event and the event function's
# result, ev. Only then, so that a file without events is spelled as before events existed.
GENERATED_EVENT_NAMES = EVENT_NAMES | {"ev"}
# And in a model whose event functions use the accelerations or multipliers, the event function's
# arguments that carry them.
GENERATED_MULTIPLIER_NAMES = {"a", "lambda", "nu"}
SMALL_POWERS = (2, 3, 4)  # written as repeated products: exact for double, cheaper than pow on duals


def cpp_string(text):
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def literal(value):
    """A double literal that reads back as exactly `value` (repr of a float is the shortest such)."""
    text = repr(float(value))
    return text if any(ch in text for ch in ".en") else text + ".0"


def integer_exponent(exponent):
    """The exponent as an int when it is an integer (also when written as a float), else None."""
    if exponent.is_Integer:
        return int(exponent)
    if exponent.is_Float and float(exponent).is_integer() and abs(float(exponent)) < 2**31:
        return int(float(exponent))
    return None


def half_exponent(exponent):
    """+1 for an exponent of 1/2, -1 for -1/2, else 0."""
    if exponent.is_number and exponent in (sympy.Rational(1, 2), sympy.Float(0.5)):
        return 1
    if exponent.is_number and exponent in (sympy.Rational(-1, 2), sympy.Float(-0.5)):
        return -1
    return 0


def named_value_tables(parameters, inputs):
    """The model's `params` and `inputs` tables (model/concept.hpp), one {name, default, description}
    per Item; no inputs array when there are none (a zero-length array is not C++)."""
    out = [f"  static constexpr int n_params = {len(parameters)};", "  static constexpr named_value params[n_params] = {"]
    out += [f"      {{{cpp_string(p.name)}, {literal(p.default)}, {cpp_string(p.described())}}}," for p in parameters]
    out += ["  };", f"  static constexpr int n_inputs = {len(inputs)};"]
    if inputs:
        out += ["  static constexpr named_value inputs[n_inputs] = {"]
        out += [f"      {{{cpp_string(x.name)}, {literal(x.default)}, {cpp_string(x.described())}}}," for x in inputs]
        out += ["  };"]
    return out


# Precedences of the C++ forms printed: higher binds tighter.
ADD, MUL, UNARY, ATOM = 1, 2, 3, 4


class Printer:
    def __init__(self, names):
        self.names = names  # sympy.Symbol -> C++ identifier

    def __call__(self, expr):
        return self.print(expr)[0]

    def wrapped(self, expr, at_least):
        text, precedence = self.print(expr)
        return text if precedence >= at_least else f"({text})"

    def print(self, expr):
        """(C++ text, precedence) of a SymPy expression."""
        if expr.is_Symbol:
            return self.names[expr], ATOM
        if expr.is_number:
            return self.number(expr)
        if expr.is_Add:
            return self.add(expr)
        if expr.is_Mul:
            return self.mul(expr)
        if expr.is_Pow:
            return self.power(expr)
        return self.function(expr)

    def number(self, expr):
        if expr.is_Rational and not expr.is_Integer:  # p/q divides once, correctly rounded
            text = f"{literal(abs(expr.p))}/{literal(expr.q)}"
            return (f"-{text}", UNARY) if expr.p < 0 else (text, MUL)
        value = float(expr.evalf(30))  # constants such as pi/2 or sqrt(2), rounded once
        text = literal(value)
        return text, (UNARY if text.startswith("-") else ATOM)

    def add(self, expr):
        terms = expr.as_ordered_terms()
        # "1.0 - x" reads better than "-x + 1.0": start with a term that has no minus sign.
        positive = [term for term in terms if not term.could_extract_minus_sign()]
        if positive:
            terms.remove(positive[0])
            terms.insert(0, positive[0])
        text = self.wrapped(terms[0], ADD)
        for term in terms[1:]:
            if term.could_extract_minus_sign():
                text += " - " + self.wrapped(-term, MUL)
            else:
                text += " + " + self.wrapped(term, MUL)
        return text, ADD

    def mul(self, expr):
        coefficient, factors = expr.as_coeff_mul()
        if coefficient < 0:
            text = self.wrapped(-expr, UNARY)
            return f"-{text}", UNARY
        numerator, denominator = [], []  # texts; denominator entries as (text, precedence)
        if coefficient.is_Rational:
            if coefficient.p != 1:
                numerator.append(literal(coefficient.p))
            if coefficient.q != 1:
                denominator.append((literal(coefficient.q), ATOM))
        elif coefficient != 1:
            numerator.append(self.wrapped(coefficient, MUL))
        for factor in factors:
            if factor.is_Pow and factor.exp.is_number and factor.exp < 0:
                denominator.append(self.print(sympy.Pow(factor.base, -factor.exp)))
            else:
                numerator.append(self.wrapped(factor, MUL))
        text = "*".join(numerator) if numerator else "1.0"
        if not denominator:
            return text, (MUL if len(numerator) > 1 else self.print_precedence(factors, numerator))
        if len(denominator) == 1 and denominator[0][1] == ATOM:
            return f"{text}/{denominator[0][0]}", MUL
        if len(denominator) == 1:
            return f"{text}/({denominator[0][0]})", MUL
        return f"{text}/({'*'.join(t if p >= MUL else f'({t})' for t, p in denominator)})", MUL

    def print_precedence(self, factors, numerator):
        """A one-factor product has that factor's own precedence."""
        return self.print(factors[0])[1] if len(factors) == 1 and len(numerator) == 1 else MUL

    def power(self, expr):
        base, exponent = expr.base, expr.exp
        whole = integer_exponent(exponent)
        if whole is not None and whole < 0:
            positive = self.wrapped(sympy.Pow(base, -whole), ATOM) if -whole != 1 else self.wrapped(base, ATOM)
            if -whole in SMALL_POWERS:
                positive = f"({self.power_text(base, -whole)})"
            return f"1.0/{positive}", MUL
        if whole is not None:
            return (self.power_text(base, whole), MUL) if whole in SMALL_POWERS else (
                f"pow({self(base)}, {literal(whole)})", ATOM)
        half = half_exponent(exponent)
        if half == 1:
            return f"sqrt({self(base)})", ATOM
        if half == -1:
            return f"1.0/sqrt({self(base)})", MUL
        return f"pow({self(base)}, {self(exponent)})", ATOM

    def power_text(self, base, times):
        factor = self.wrapped(base, ATOM)
        return "*".join([factor] * times)

    def function(self, expr):
        names = {sympy.sin: "sin", sympy.cos: "cos", sympy.tan: "tan", sympy.asin: "asin",
                 sympy.acos: "acos", sympy.atan: "atan", sympy.atan2: "atan2", sympy.exp: "exp",
                 sympy.log: "log", sympy.Abs: "abs"}
        name = names.get(expr.func)
        if name is None:
            raise ValueError(f"no C++ form for {expr.func} (in {expr})")
        arguments = ", ".join(self(argument) for argument in expr.args)
        return f"{name}({arguments})", ATOM


def without_hyperbolic(expr):
    """sinh, cosh and tanh through exp: the dual numbers of core/dual.hpp have no hyperbolic functions.

    tanh(x) = 1 - 2/(exp(2x) + 1) stays finite for large |x| (exp overflowing to inf gives 1).
    """
    return expr.replace(sympy.sinh, lambda a: (sympy.exp(a) - sympy.exp(-a)) / 2).replace(
        sympy.cosh, lambda a: (sympy.exp(a) + sympy.exp(-a)) / 2).replace(
        sympy.tanh, lambda a: 1 - 2 / (sympy.exp(2 * a) + 1))


class Names:
    """Fresh C++ identifiers for temporaries, distinct from every name the user wrote."""

    def __init__(self, taken):
        self.taken = set(taken)

    def fresh(self, stem):
        index = 0
        while f"{stem}{index}" in self.taken:
            index += 1
        name = f"{stem}{index}"
        self.taken.add(name)
        return sympy.Symbol(name)


class Function:
    """Straight-line code for one model function: bindings, temporaries, output assignments."""

    def __init__(self, scalar, bindings, names, cpp_names, toml_path):
        self.scalar = scalar          # "T" or "double"
        self.bindings = bindings      # list of (sympy.Symbol, C++ right-hand side), in binding order
        self.names = names            # Names, for temporaries
        self.cpp_names = dict(cpp_names)
        self.toml_path = toml_path

    def body(self, outputs, indent="    "):
        """C++ lines computing `outputs`, a list of (target text, Expr)."""
        expressions = [without_hyperbolic(expr.value) for _, expr in outputs]
        expressions, pairs = self.pair_sines(expressions)
        arguments = [argument for argument, _, _ in pairs]
        replacements, reduced = sympy.cse(expressions + arguments,
                                          symbols=iter(lambda: self.names.fresh("cse"), None))
        reduced_outputs, reduced_arguments = reduced[:len(expressions)], reduced[len(expressions):]
        statements = [(symbol, value) for symbol, value in replacements]
        statements += [((sine, cosine), argument) for (_, sine, cosine), argument in
                       zip(pairs, reduced_arguments)]
        statements, reduced_outputs = self.hoist_powers(statements, reduced_outputs)
        statements = self.ordered(statements)
        lines_of = self.lines_of(statements, reduced_outputs, [expr.line for _, expr in outputs])

        for symbol, _ in statements:
            for one in (symbol if isinstance(symbol, tuple) else (symbol,)):
                self.cpp_names[one] = str(one)
        printer = Printer(self.cpp_names)
        used = set()
        for _, value in statements:
            used |= value.free_symbols
        for value in reduced_outputs:
            used |= value.free_symbols
        lines = [f"{indent}const {self.scalar} {self.cpp_names[symbol]} = {code};"
                 for symbol, code in self.bindings if symbol in used]
        for symbol, value in statements:
            lines += filter(None, [self.line_directive(lines_of[symbol])])
            if isinstance(symbol, tuple):
                lines.append(f"{indent}const auto [{symbol[0]}, {symbol[1]}] = sin_cos({printer(value)});")
            else:
                lines.append(f"{indent}const {self.scalar} {symbol} = {printer(value)};")
        for (target, expr), value in zip(outputs, reduced_outputs):
            lines += filter(None, [self.line_directive(expr.line)])
            lines.append(f"{indent}{target} = {printer(value)};")
        return lines, used

    def line_directive(self, line):
        """A #line pointing into the equations file; none for an entry the file left out (a zero)."""
        return f"#line {line} {cpp_string(self.toml_path)}" if line else None

    def pair_sines(self, expressions):
        """Replaces sin(a) and cos(a) of one argument by the two results of one sin_cos(a) call, which
        on dual numbers costs one sine and one cosine instead of two of each (core/math.hpp)."""
        sines, cosines = set(), set()
        for expr in expressions:
            sines |= {f.args[0] for f in expr.atoms(sympy.sin)}
            cosines |= {f.args[0] for f in expr.atoms(sympy.cos)}
        pairs, substitution = [], {}
        for argument in sorted(sines & cosines, key=sympy.default_sort_key):
            sine, cosine = self.names.fresh("sin"), self.names.fresh("cos")
            substitution[sympy.sin(argument)] = sine
            substitution[sympy.cos(argument)] = cosine
            pairs.append((argument, sine, cosine))
        if not pairs:
            return expressions, pairs
        # Innermost first, so a sine inside another paired argument is replaced there too.
        return [expr.xreplace(substitution) for expr in expressions], [
            (argument.xreplace(substitution), sine, cosine) for argument, sine, cosine in pairs]

    def hoist_powers(self, statements, outputs):
        """Gives a compound base of a small integer power its own temporary, so that x*x does not
        evaluate the base twice."""
        hoisted, made = [], {}

        def visit(expr):
            if expr.is_Atom:
                return expr
            args = [visit(argument) for argument in expr.args]
            if args != list(expr.args):
                expr = expr.func(*args)
            if expr.is_Pow and not expr.base.is_Symbol and not expr.base.is_number:
                whole = integer_exponent(expr.exp)
                if whole is not None and abs(whole) in SMALL_POWERS:
                    if expr.base not in made:
                        made[expr.base] = self.names.fresh("cse")
                        hoisted.append((made[expr.base], expr.base))
                    return sympy.Pow(made[expr.base], expr.exp)
            return expr

        statements = [(symbol, visit(value)) for symbol, value in statements]
        outputs = [visit(value) for value in outputs]
        return statements + hoisted, outputs

    def ordered(self, statements):
        """Statements in an order where each follows what it uses; otherwise as close to the given order
        as possible, sin_cos pairs first (they come last in the given list)."""
        defines = {}
        for index, (symbol, _) in enumerate(statements):
            for one in (symbol if isinstance(symbol, tuple) else (symbol,)):
                defines[one] = index
        priority = [(0 if isinstance(symbol, tuple) else 1, index) for index, (symbol, _) in enumerate(statements)]
        needs = [{defines[s] for s in value.free_symbols if s in defines} for _, value in statements]
        users = [[] for _ in statements]
        for index, needed in enumerate(needs):
            for other in needed:
                users[other].append(index)
        waiting = [len(needed) for needed in needs]
        ready = [priority[index] for index in range(len(statements)) if not waiting[index]]
        heapq.heapify(ready)
        order = []
        while ready:
            _, index = heapq.heappop(ready)
            order.append(statements[index])
            for user in users[index]:
                waiting[user] -= 1
                if not waiting[user]:
                    heapq.heappush(ready, priority[user])
        return order

    def lines_of(self, statements, outputs, output_lines):
        """Each temporary's line: that of the first output (in file order) that needs it."""
        defined = {}
        for symbol, value in statements:
            for one in (symbol if isinstance(symbol, tuple) else (symbol,)):
                defined[one] = (symbol, value)
        result = {}
        for value, line in sorted(zip(outputs, output_lines), key=lambda pair: pair[1] or 0):
            pending = list(value.free_symbols)
            while pending:
                one = pending.pop()
                if one not in defined:
                    continue
                symbol, dependency = defined[one]
                if symbol in result:
                    continue
                result[symbol] = line
                pending.extend(dependency.free_symbols)
        for symbol, _ in statements:
            result.setdefault(symbol, None)
        return result


def spelling(name, generated, taken):
    """The C++ identifier of a user's `name`: the name itself unless it is one of `generated` (names the
    generated code uses), else the name with the first suffix _, _1, _2, ... that is not `taken` (every
    name in use, to which it is added)."""
    if name not in generated:
        return name
    for suffix in ["_"] + [f"_{i}" for i in range(1, 1000)]:
        if name + suffix not in taken:
            taken.add(name + suffix)
            return name + suffix
    raise ValueError(f"no C++ spelling for '{name}'")


class Header:
    def __init__(self, model, source_name, toml_path):
        self.model = model
        self.source_name = source_name
        self.toml_path = toml_path
        user = [c.name for c in model.coordinates] + [velocity(c.name) for c in model.coordinates]
        user += [p.name for p in model.parameters] + [i.name for i in model.inputs] + list(model.event_arguments)
        self.generated = GENERATED_NAMES | (GENERATED_EVENT_NAMES if model.events else set()) | \
            (GENERATED_MULTIPLIER_NAMES if model.events_of_multipliers else set())
        self.taken = set(user) | self.generated | {model.name}
        self.cpp_names = {}
        for name in user:
            self.cpp_names[model.symbols[name]] = self.spelling(name)
        self.cpp_names[model.symbols["t"]] = "t"

    def spelling(self, name):
        """The C++ identifier of a user name: the name itself unless the generated code uses it."""
        return spelling(name, self.generated | {self.model.name}, self.taken)

    def function(self, scalar, q, v, inputs, multipliers=False):
        """A Function with the bindings available to one model function (`multipliers`: the event
        function's accelerations and multipliers too)."""
        model, symbols, bindings = self.model, self.model.symbols, []
        convert = (lambda code: f"T({code})") if scalar == "T" else (lambda code: code)
        if q:
            bindings += [(symbols[c.name], f"q[{i}]") for i, c in enumerate(model.coordinates)]
        if v:
            bindings += [(symbols[velocity(c.name)], f"v[{i}]") for i, c in enumerate(model.coordinates)]
        if multipliers:
            bindings += [(symbols[name], f"{argument}[{i}]") for name, (argument, i) in model.event_arguments.items()]
        bindings += [(symbols[p.name], convert(f"p[{i}]")) for i, p in enumerate(model.parameters)]
        if inputs:
            bindings += [(symbols[x.name], f"in[{i}]") for i, x in enumerate(model.inputs)]
        return Function(scalar, bindings, Names(self.taken), self.cpp_names, self.toml_path)

    def member(self, head, arguments, declaration, outputs, function, tail=()):
        """One static member function. `arguments` are (type, name, symbols it carries); an argument
        none of whose symbols is used stays unnamed, as -Wunused-parameter asks."""
        body, used = function.body(outputs)
        named = []
        for kind, name, carried in arguments:
            named.append(f"{kind} {name}" if carried is None or used & set(carried) else kind)
        text = f"{head}({', '.join(named)}) {{\n"
        if declaration:
            text += f"    {declaration};\n"
        return text + "".join(line + "\n" for line in list(body) + list(tail)) + "  }\n"

    def text(self):
        model, n = self.model, self.model.n
        m, k = len(model.constraints), len(model.nonholonomic)
        out = [f"// Generated by lockstep (host/model_files/equations_to_header.py) from {self.source_name}; "
               f"do not edit.",
               "#pragma once", "",
               '#include "lockstep/core/dual.hpp"', '#include "lockstep/core/math.hpp"',
               '#include "lockstep/model/concept.hpp"', "",
               "namespace lockstep::equations {", "",
               f"struct {model.name} {{",
               f"  static constexpr const char* name = {cpp_string(model.name)};",
               f"  static constexpr const char* description = {cpp_string(model.description)};",
               f"  static constexpr int n = {n};",
               f"  static constexpr const char* coordinate_names[n] = "
               f"{{{', '.join(cpp_string(c.name) for c in model.coordinates)}}};",
               f"  static constexpr int m = {m};",
               f"  static constexpr int k = {k};", "",
               ] + named_value_tables(model.parameters, model.inputs)
        if model.events:
            out += [f"  static constexpr int n_events = {len(model.events)};",
                    "  static constexpr event_declaration events[n_events] = {"]
            out += [f"      {{{cpp_string(e.name)}, event_direction::{e.direction}, event_action::{e.action}, "
                    f"{cpp_string(e.description)}}}," for e in model.events]
            out += ["  };"]
        out.append("")
        text = "\n".join(out) + "\n"

        symbols = model.symbols
        q = ("const vec<T, n>&", "q", [symbols[c.name] for c in model.coordinates])
        v = ("const vec<T, n>&", "v", [symbols[velocity(c.name)] for c in model.coordinates])
        t = ("const T&", "t", [symbols["t"]])
        p = ("const P*", "p", [symbols[x.name] for x in model.parameters])
        template = "  template <class T, class P>\n  LOCKSTEP_HD static "

        mass_outputs = [(f"M({i}, {j})", model.mass[i][j]) for i in range(n) for j in range(i + 1)
                        if model.mass[i][j].value != 0]
        # The upper triangle mirrors the lower one (the file's matrix was checked symmetric).
        mirror = [f"    M({j}, {i}) = M({i}, {j});" for i in range(n) for j in range(i)
                  if model.mass[i][j].value != 0]
        text += self.member(template + "mat<T, n, n> mass", [q, p], "mat<T, n, n> M", mass_outputs,
                            self.function("T", q=True, v=False, inputs=False), mirror + ["    return M;"])

        force_outputs = [(f"Q[{i}]", e) for i, e in enumerate(model.force) if e.value != 0]
        text += "\n" + self.member(template + "vec<T, n> force", [t, q, v, p], "vec<T, n> Q", force_outputs,
                                   self.function("T", q=True, v=True, inputs=False), ["    return Q;"])

        constraint_outputs = [(f"phi[{i}]", e) for i, (_, e) in enumerate(model.constraints)]
        text += "\n" + self.member(template + "vec<T, m> constraint", [t, q, p], "vec<T, m> phi",
                                   constraint_outputs, self.function("T", q=True, v=False, inputs=False),
                                   ["    return phi;"])
        if k:
            rows = [(f"r[{i}]", e) for i, (_, e) in enumerate(model.nonholonomic)]
            text += "\n" + self.member(template + "vec<T, k> nonholonomic", [t, q, v, p], "vec<T, k> r", rows,
                                       self.function("T", q=True, v=True, inputs=False), ["    return r;"])

        if model.events:
            values = [(f"ev[{i}]", e.g) for i, e in enumerate(model.events)]
            arguments, multipliers = [t, q, v, p], model.events_of_multipliers
            if multipliers:  # event(t, q, v, a, lambda, nu, p): include/lockstep/model/concept.hpp
                carried = {"a": [], "lambda": [], "nu": []}
                for name, (argument, _) in model.event_arguments.items():
                    carried[argument].append(symbols[name])
                arguments = [t, q, v, ("const vec<T, n>&", "a", carried["a"]),
                             ("const vec<T, m>&", "lambda", carried["lambda"]),
                             ("const vec<T, k>&", "nu", carried["nu"]), p]
            text += "\n" + self.member(template + "vec<T, n_events> event", arguments, "vec<T, n_events> ev",
                                       values, self.function("T", q=True, v=True, inputs=False,
                                                             multipliers=multipliers), ["    return ev;"])

        initial = [(f"q0[{i}]", e) for i, e in enumerate(model.initial_q)]
        initial += [(f"v0[{i}]", e) for i, e in enumerate(model.initial_v)]
        arguments = [("const double*", "p", p[2]), ("const double*", "in", [symbols[x.name] for x in model.inputs]),
                     ("vec<double, n>&", "q0", None), ("vec<double, n>&", "v0", None)]
        text += "\n" + self.member("  LOCKSTEP_HD static void initial_state", arguments, None, initial,
                                   self.function("double", q=False, v=False, inputs=True))
        return text + "};\n\n}  // namespace lockstep::equations\n"
