"""Equations files (docs/EQUATIONS.md): a mechanism written as TOML, turned into a lockstep model header.

locate       where keys and values sit in the raw text (tomllib reports no positions)
expressions  the expression language: Python's own parser, a whitelist of node types, SymPy trees
keys         every table and key of the file: what the reader allows, what the key reference prints
model        the file's tables checked and gathered into one validated description
emit         the C++ header text
"""


class Diagnostic(Exception):
    """One or more errors in the equations file, each (line, column, message), 1-based.

    Raised with every error found in one pass, so a user fixes a file in as few rounds as possible.
    """

    def __init__(self, errors):
        super().__init__("; ".join(message for _, _, message in errors))
        self.errors = list(errors)
