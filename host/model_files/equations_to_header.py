#!/usr/bin/env python3
"""equations_to_header.py — an equations file (docs/EQUATIONS.md) or a mechanism file
(docs/reference/mechanism-file.md: bodies, joints, forces; the package mechanism/) to a lockstep model
header. A TOML file with a [mechanism] table is a mechanism file.

Usage: equations_to_header.py MODEL.toml -o OUT.hpp
       equations_to_header.py MODEL.toml --rows     (the constraint rows' names, for `lockstep check`)
       equations_to_header.py STUDY.toml --study-events MODEL.json --struct NAME [--name SHOWN] -o OUT.hpp
           (the model MODEL.json describes with the event functions of the study's [events.functions]:
           equations/study_events.py; SHOWN names the study in messages and #line directives)

Exit status 0: OUT.hpp written (atomically: a temporary file in its folder, then renamed, so a reader
never sees half a header). 1: the file has errors, printed to stderr as `PATH:LINE:COLUMN: error:
MESSAGE`, one per line, and nothing is written; a file that cannot be read or written is reported the
same way, at 1:1. 2: a usage error.
"""
import argparse
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # run from the source tree at build time: leave no __pycache__ there
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from equations import Diagnostic, study_events  # noqa: E402  (after the path is set)
from equations.emit import Header  # noqa: E402
from equations.model import read_model  # noqa: E402
from mechanism import emit as mechanism_emit  # noqa: E402
from mechanism.model import is_mechanism_file, read_mechanism  # noqa: E402


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".equations-", suffix=".hpp.tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def main(argv):
    parser = argparse.ArgumentParser(description="Turn an equations file into a lockstep model header.")
    parser.add_argument("model", help="the equations file (TOML)")
    parser.add_argument("-o", "--output", help="the header to write")
    parser.add_argument("--rows", action="store_true",
                        help="write no header: print a line `row NAME` per constraint row (holonomic, then "
                             "non-holonomic) and, for a mechanism file, `count N`, its Grubler-Kutzbach count "
                             "n - m, and `drives D`, how many of its rows are drives (for `lockstep check`)")
    parser.add_argument("--study-events", metavar="MODEL.json",
                        help="read the event functions of the study file's [events.functions] and write the "
                             "model MODEL.json describes with them (equations/study_events.py)")
    parser.add_argument("--struct", help="with --study-events: the name of the struct written")
    parser.add_argument("--name", help="with --study-events: the study file's name in messages and #line directives")
    arguments = parser.parse_args(argv)  # exits with status 2 on a usage error
    if not arguments.rows and not arguments.output:
        parser.error("the header to write (-o) is required")
    if arguments.study_events and not arguments.struct:
        parser.error("--study-events needs --struct")

    try:
        with open(arguments.model, "rb") as source:
            raw = source.read()
    except OSError as error:
        print(f"{arguments.model}:1:1: error: cannot read: {error.strerror}", file=sys.stderr)
        return 1
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        print(f"{arguments.model}:{line}:{column}: error: the file is not UTF-8", file=sys.stderr)
        return 1
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte order mark is not part of the TOML
    text = text.replace("\r\n", "\n")

    if arguments.study_events:
        return write_study_events(arguments, text)
    mechanism = is_mechanism_file(text)
    try:
        model = read_mechanism(text) if mechanism else read_model(text)
    except Diagnostic as diagnostic:
        for line, column, message in diagnostic.errors:
            print(f"{arguments.model}:{line}:{column}: error: {message}", file=sys.stderr)
        return 1
    if arguments.rows:
        if mechanism:
            print(f"count {len(model.coordinates) - model.rows()}")
            print(f"drives {sum(1 for joint in model.tree if joint.drive is not None)}")
            names = mechanism_emit.Header(model, os.path.basename(arguments.model), "").row_names()
        else:
            names = [name for name, _ in model.constraints] + [name for name, _ in model.nonholonomic]
        for name in names:
            print(f"row {name}")
        return 0
    make = mechanism_emit.Header if mechanism else Header
    return write_header(arguments.output, arguments.model,
                        lambda: make(model, os.path.basename(arguments.model), os.path.abspath(arguments.model)).text())


def write_header(output, shown, make_text):
    """Writes the header that make_text() returns to `output`: 0, or 1 after saying why not (`shown`: the
    input, as messages name it)."""
    try:
        header = make_text()
    except Exception as failure:  # checked input that cannot be printed is the generator's fault
        print(f"{shown}:1:1: error: internal error of the generator: {failure}", file=sys.stderr)
        return 1
    try:
        write_atomically(output, header)
    except OSError as error:
        print(f"{output}:1:1: error: cannot write: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def write_study_events(arguments, text):
    """--study-events: the study's event functions on the model MODEL.json describes."""
    shown = arguments.name or arguments.model
    try:
        with open(arguments.study_events, encoding="utf-8") as description:
            names = json.load(description)
        study_events.check_names(names)
    except (OSError, ValueError) as error:
        print(f"{arguments.study_events}:1:1: error: {error}", file=sys.stderr)
        return 2
    try:
        model = study_events.read_study_events(text, names)
    except Diagnostic as diagnostic:
        for line, column, message in diagnostic.errors:
            print(f"{shown}:{line}:{column}: error: {message}", file=sys.stderr)
        return 1
    return write_header(arguments.output, shown,
                        lambda: study_events.header(model, names, os.path.abspath(shown), arguments.struct))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
