"""The expression language of equations files: ordinary mathematical notation, read by Python's own
parser and turned into SymPy trees node by node.

The text is never evaluated (no eval, exec, sympify or parse_expr): only the node types below are
accepted, so an equations file cannot run code, and every refusal names the construct and where it
is. The SymPy tree is built with SymPy's constructors from the syntax tree.
"""
import ast
import difflib
import math
import warnings

import sympy

# name -> (SymPy constructor, number of arguments)
FUNCTIONS = {
    "sin": (sympy.sin, 1), "cos": (sympy.cos, 1), "tan": (sympy.tan, 1),
    "asin": (sympy.asin, 1), "acos": (sympy.acos, 1), "atan": (sympy.atan, 1),
    "atan2": (sympy.atan2, 2),
    "sinh": (sympy.sinh, 1), "cosh": (sympy.cosh, 1), "tanh": (sympy.tanh, 1),
    "exp": (sympy.exp, 1), "log": (sympy.log, 1), "sqrt": (sympy.sqrt, 1), "abs": (sympy.Abs, 1),
}

# What SymPy calls the functions above, which the C++ printer knows.
PRINTABLE = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log", "Abs"}

BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
REFUSED_BINARY = {
    ast.BitXor: ("^", "use ** for powers"),
    ast.Mod: ("%", "the remainder operator % is not allowed"),
    ast.FloorDiv: ("//", "floor division // is not allowed; use /"),
    ast.MatMult: ("@", "the matrix product @ is not allowed"),
    ast.LShift: ("<<", "the shift operator << is not allowed"),
    ast.RShift: (">>", "the shift operator >> is not allowed"),
    ast.BitOr: ("|", "the operator | is not allowed"),
    ast.BitAnd: ("&", "the operator & is not allowed"),
}
# Readable names for the constructs that are refused as a whole.
CONSTRUCTS = {
    ast.Attribute: "attribute access (a.b)", ast.Subscript: "subscripts (a[i])",
    ast.Compare: "comparisons", ast.BoolOp: "and/or", ast.IfExp: "conditional expressions (a if c else b)",
    ast.Lambda: "lambda", ast.List: "lists", ast.Tuple: "tuples", ast.Dict: "dictionaries",
    ast.Set: "sets", ast.ListComp: "comprehensions", ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions", ast.GeneratorExp: "generator expressions",
    ast.NamedExpr: "assignment expressions (:=)", ast.JoinedStr: "f-strings", ast.Starred: "starred arguments",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield", ast.Slice: "slices",
}

LARGEST_DOUBLE = float.fromhex("0x1.fffffffffffffp+1023")


class Scope:
    """What a name means in one place of the file.

    `names`     name -> SymPy object it stands for (symbols, or a definition's expression)
    `forbidden` name -> why it cannot be used here (a velocity in a constraint, an input in a force)
    `symbols`   the SymPy symbols an expression here may depend on, through definitions too
    `section`   the table, for messages ("[force]")
    """

    def __init__(self, section, names, forbidden, symbols):
        self.section = section
        self.names = names
        self.forbidden = forbidden
        self.symbols = symbols
        self.definitions = {}  # definition name -> its expression, checked against `symbols` at use


class _Refusal(Exception):
    def __init__(self, index, message):
        super().__init__(message)
        self.index = index  # character index in the expression text
        self.message = message


def suggestion(name, candidates):
    """' (did you mean 'x'?)' for the closest candidate, or '' when none is close."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    return f"; did you mean '{close[0]}'?" if close else ""


def number(value):
    """A SymPy number for a finite Python int or float, or None when it is not representable."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        return sympy.Float(value) if math.isfinite(value) else None
    return sympy.Integer(value) if abs(value) <= LARGEST_DOUBLE else None


def parse(text, scope):
    """(expression, None) or (None, (character index, message)) for one expression string."""
    # The parser reads one logical line: a multi-line TOML string becomes one line, character for
    # character, so indices still match the text; leading blanks would be an "unexpected indent".
    flat = text.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    lead = len(flat) - len(flat.lstrip(" "))
    source = flat[lead:]
    if not source.strip():
        return None, (0, "empty expression")
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: stderr carries errors only
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except SyntaxError as error:
        if not error.offset:  # Python gives no place when the text ends too early ("x +")
            return None, (lead + len(source.rstrip()), "syntax error: the expression ends too early")
        return None, (lead + max(0, min(error.offset - 1, len(source))), f"syntax error: {error.msg}")

    def index(node):  # ast offsets count UTF-8 bytes
        return lead + len(source.encode("utf-8")[:node.col_offset].decode("utf-8", "ignore"))

    def end_index(node):
        return lead + len(source.encode("utf-8")[:node.end_col_offset].decode("utf-8", "ignore"))

    def operator_index(node, symbol):
        """Where the operator between a binary node's operands is written."""
        start, stop = end_index(node.left) - lead, index(node.right) - lead
        found = source.find(symbol, start, stop)
        return lead + found if found >= 0 else index(node)

    def build(node):
        if isinstance(node, ast.BinOp):
            kind = type(node.op)
            if kind in REFUSED_BINARY:
                symbol, message = REFUSED_BINARY[kind]
                raise _Refusal(operator_index(node, symbol), message)
            left, right = build(node.left), build(node.right)
            if kind is ast.Add:
                return left + right
            if kind is ast.Sub:
                return left - right
            if kind is ast.Mult:
                return left * right
            if kind is ast.Div:
                if right == 0:
                    raise _Refusal(operator_index(node, "/"), "division by zero")
                return left / right
            return left ** right
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return -build(node.operand)
            if isinstance(node.op, ast.UAdd):
                return build(node.operand)
            what = "not" if isinstance(node.op, ast.Not) else "~"
            raise _Refusal(index(node), f"the operator '{what}' is not allowed")
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                raise _Refusal(index(node), "strings are not allowed inside an expression")
            if isinstance(value, complex):
                raise _Refusal(index(node), "complex numbers are not allowed")
            converted = number(value)
            if converted is None:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    raise _Refusal(index(node), "number is not finite in double precision")
                raise _Refusal(index(node), f"the constant {value!r} is not allowed")
            return converted
        if isinstance(node, ast.Name):
            return name(node)
        if isinstance(node, ast.Call):
            return call(node)
        what = CONSTRUCTS.get(type(node), type(node).__name__)
        raise _Refusal(index(node), f"{what} not allowed in an expression")

    def name(node):
        ident = node.id
        if ident in scope.names:
            if ident in scope.definitions:
                outside = sorted(str(s) for s in scope.definitions[ident].free_symbols - scope.symbols)
                if outside:
                    raise _Refusal(index(node), f"definition '{ident}' depends on '{outside[0]}', "
                                                f"which is not allowed in {scope.section}")
            return scope.names[ident]
        if ident in scope.forbidden:
            raise _Refusal(index(node), scope.forbidden[ident])
        if ident in FUNCTIONS:
            raise _Refusal(index(node), f"'{ident}' is a function; write {ident}(...)")
        allowed = sorted(scope.names, key=str.lower)
        listing = ", ".join(allowed) if allowed else "no names"
        raise _Refusal(index(node), f"unknown name '{ident}' in {scope.section}"
                                    f"{suggestion(ident, allowed)} (allowed here: {listing})")

    def call(node):
        if not isinstance(node.func, ast.Name):
            raise _Refusal(index(node), "only the named functions may be called")
        ident = node.func.id
        if ident not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise _Refusal(index(node), f"unknown function '{ident}'{suggestion(ident, FUNCTIONS)} "
                                        f"(functions: {known})")
        if node.keywords:
            raise _Refusal(index(node.keywords[0].value) - len(node.keywords[0].arg or "") - 1,
                           f"keyword arguments are not allowed in a call of '{ident}'")
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                raise _Refusal(index(argument), "starred arguments are not allowed")
        constructor, arity = FUNCTIONS[ident]
        if len(node.args) != arity:
            plural = "argument" if arity == 1 else "arguments"
            raise _Refusal(index(node), f"'{ident}' takes {arity} {plural}, got {len(node.args)}")
        return constructor(*[build(argument) for argument in node.args])

    try:
        expression = build(tree.body)
    except _Refusal as refusal:
        return None, (refusal.index, refusal.message)
    except (ZeroDivisionError, OverflowError, ValueError) as failure:  # e.g. 0**-1 folded by SymPy
        return None, (lead, f"cannot be evaluated: {failure}")
    # SymPy folds constants exactly: sqrt(-1) becomes I, 1/0 and log(0) become zoo.
    if expression.has(sympy.I, sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None, (lead, "the expression is not a finite real number (a negative square root, "
                            "a logarithm of zero or a division by zero among its constants)")
    # SymPy's automatic simplifications could in principle leave a function the printer cannot write.
    unknown = {f.func.__name__ for f in expression.atoms(sympy.Function)} - PRINTABLE
    if unknown:
        return None, (lead, f"SymPy rewrites this expression with {', '.join(sorted(unknown))}, which has no "
                            f"C++ form here; write it differently")
    return expression, None
