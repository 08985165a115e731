#!/usr/bin/env python3
"""tests/docs/equations_keys_test.py — the key table of equations files against the reader, both ways.

host/model_files/equations/keys.py lists every table and key of an equations file; the reader
(equations/model.py) takes its allowed keys from it and host/model_files/equations_reference.py prints
it as the key reference. This test holds the table to what the reader does:

- the reader, run on the example equations files (examples/models, examples/mbs), the restated models
  of tests/model_files/equations and the files below (which use the rare keys), looks up exactly the
  table's keys: its parsed TOML is replaced by dictionaries that record every key looked up, a name the
  file chose counts as the table's placeholder (<coordinate>, <row>, ...), and a key of the table that
  is never looked up fails, as does a key looked up that the table lacks;
- a key planted in each table of fixed keys is refused with the message the table makes: the allowed
  keys in the table's order and the closest one, also through equations_to_header.py;
- a required key left out is refused, and a file of only the required keys is accepted;
- the printed reference has a heading per table and a row per key, in the table's order, and parses
  as Markdown tables of four cells a row (where markdown-it, which MyST uses, is installed).

Usage: equations_keys_test.py   (Python's standard library and SymPy, as the generator; exits 1 on a
failure)
"""
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL_FILES = os.path.join(ROOT, "host", "model_files")
sys.dont_write_bytecode = True
sys.path.insert(0, MODEL_FILES)

import equations_reference  # noqa: E402  (after the path is set)
from equations import Diagnostic, keys, model  # noqa: E402


def toml(data):
    """TOML text of a dictionary of the shape of an equations file: its tables as [headers], the
    tables inside them inline, keys in dictionary order."""
    def value(v):
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v) if isinstance(v, str) else repr(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for name, table in data.items():
        if isinstance(table, dict):
            lines += [f"[{name}]"] + [f"{k} = {value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


# A file with every key of the table: a bead on a wire (constraints) with a knife edge (nonholonomic)
# and an event.
EVERY_KEY = {
    "model": {"name": "every_key", "description": "a file that uses every key"},
    "coordinates": {"x": {"unit": "m", "description": "abscissa"}, "y": {"unit": "m", "description": "height"},
                    "theta": {"unit": "rad", "description": "heading"}},
    "parameters": {"m": {"default": 1.0, "unit": "kg", "description": "mass"},
                   "g": {"default": 9.81, "unit": "m/s^2", "description": "gravity"}},
    "inputs": {"x0": {"default": 0.5, "unit": "m", "description": "initial abscissa"}},
    "definitions": {"w": "m*g"},
    "mass": {"matrix": [["m", 0, 0], [0, "m", 0], [0, 0, "m/10"]]},
    "force": {"y": "-w"},
    "constraints": {"on_wire": "y - x**2"},
    "nonholonomic": {"no_slip": "sin(theta)*x_dot - cos(theta)*y_dot"},
    "events": {"crossing": {"g": "x", "direction": "rising", "action": "stop", "description": "x passes 0"}},
    "initial": {"definitions": {"slope": "2*x0"}, "q": {"x": "x0", "y": "x0**2", "theta": "atan(slope)"},
                "v": {"x": 1, "y": "slope"}},
}

# Only the required keys (the four required tables, one coordinate, one parameter, a diagonal mass).
REQUIRED_ONLY = {
    "model": {"name": "required_only"},
    "coordinates": {"x": {}},
    "parameters": {"k": {"default": 1.0}},
    "mass": {"diagonal": [1]},
}


def example_files():
    """The equations files among the examples and tests/model_files/equations that read without
    error (the malformed test files excluded); study files are told apart by having no [coordinates]."""
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "models", "*.toml")) +
                   glob.glob(os.path.join(ROOT, "examples", "mbs", "*.toml")))
    paths += [os.path.join(ROOT, "tests", "model_files", "equations", name)
              for name in ("knife_edge.toml", "slider_crank.toml", "printer_forms.toml", "pendulum_events.toml")]
    found = []
    for path in paths:
        with open(path, "rb") as source:
            if "coordinates" in tomllib.load(source):
                found.append(path)
    return found


class Recorded(dict):
    """A table of the parsed file that notes each key the reader looks up: by indexing, get, `in`, pop,
    setdefault, or items() and values() (which read every entry). Listing the keys alone (iterating,
    as the check for unknown keys does) is not a look-up."""

    def __init__(self, table, path, log):
        super().__init__({key: wrap(value, path + (key,), log) for key, value in table.items()})
        self.path, self.log = path, log

    def note(self, key):
        self.log.add(self.path + (key,))

    def __getitem__(self, key):
        self.note(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.note(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.note(key)
        return super().__contains__(key)

    def pop(self, key, *default):
        self.note(key)
        return super().pop(key, *default)

    def setdefault(self, key, default=None):
        self.note(key)
        return super().setdefault(key, default)

    def items(self):
        for key in self:
            self.note(key)
        return super().items()

    def values(self):
        for key in self:
            self.note(key)
        return super().values()


def wrap(value, path, log):
    if isinstance(value, dict):
        return Recorded(value, path, log)
    if isinstance(value, list):
        return [wrap(item, path + (index,), log) for index, item in enumerate(value)]
    return value


class RecordingReader(model.Reader):
    def __init__(self, text, log):
        super().__init__(text)
        self.data = wrap(self.data, (), log)


def looked_up(text):
    """The (table, key) pairs of the key table's form that the reader looks up reading `text`, and the
    Diagnostic it raised (None when the file is sound)."""
    log = set()
    try:
        RecordingReader(text, log).read()
        failure = None
    except Diagnostic as diagnostic:
        failure = diagnostic
    pairs = set()
    for path in log:
        generic = keys.generic(path)
        pairs.add((generic[:-1], generic[-1]))
    return pairs, failure


def table_pairs():
    return {(section.path, key.name) for section in keys.SECTIONS for key in section.keys}


def show(pairs):
    return ", ".join(sorted(f"'{key}' in {keys.Section(path, '', ()).title}" for path, key in pairs))


def read(data):
    """The Diagnostic reading the file of `data` raises, or None."""
    try:
        model.read_model(toml(data))
    except Diagnostic as diagnostic:
        return diagnostic
    return None


def concrete(data, path):
    """The path of the file `data` for a table's path: each placeholder becomes the first name the file
    chose there."""
    result, table = (), data
    for part in path:
        if part.startswith("<"):
            part = next(iter(table))
        result += (part,)
        table = table[part]
    return result


def table_at(data, path):
    for part in path:
        data = data[part]
    return data


class TheReaderReadsTheTable(unittest.TestCase):
    def test_the_reader_looks_up_exactly_the_tables_keys(self):
        files = example_files()
        self.assertGreaterEqual(len(files), 5, files)
        seen = set()
        texts = []
        for path in files:
            with open(path, encoding="utf-8") as source:
                texts.append((path, source.read()))
        texts += [("EVERY_KEY", toml(EVERY_KEY)), ("REQUIRED_ONLY", toml(REQUIRED_ONLY))]
        for name, text in texts:
            pairs, failure = looked_up(text)
            self.assertIsNone(failure, f"{name} does not read: {failure}")
            seen |= pairs
        table = table_pairs()
        self.assertFalse(table - seen, f"in the key table (keys.py) but never looked up by the reader "
                                       f"(model.py): {show(table - seen)}")
        self.assertFalse(seen - table, f"looked up by the reader (model.py) but missing from the key table "
                                       f"(keys.py): {show(seen - table)}")

    def test_every_key_file_alone_uses_every_key(self):
        # The examples may change; the file of this test keeps the check above complete without them.
        pairs, failure = looked_up(toml(EVERY_KEY))
        self.assertIsNone(failure)
        self.assertEqual(pairs, table_pairs(), show(pairs ^ table_pairs()))


class UnknownKeys(unittest.TestCase):
    def planted(self, section):
        """A misspelling of the section's first key (its last letter doubled), planted in EVERY_KEY."""
        key = section.names[0]
        wrong = key + key[-1]
        data = copy.deepcopy(EVERY_KEY)
        path = concrete(data, section.path)
        table_at(data, path)[wrong] = "1"
        where = f"[{'.'.join(path)}]" if path else "the top level"
        return data, (f"unknown key '{wrong}' in {where}; did you mean '{key}'? "
                      f"(allowed: {', '.join(section.names)})")

    def test_a_planted_key_is_refused_with_the_tables_keys(self):
        fixed = [section for section in keys.SECTIONS if section.chosen is None]
        self.assertGreaterEqual(len(fixed), 6)
        for section in fixed:
            with self.subTest(section=section.title):
                data, message = self.planted(section)
                failure = read(data)
                self.assertIsNotNone(failure, "the planted key was accepted")
                self.assertIn(message, [text for _, _, text in failure.errors])

    def test_the_generator_refuses_a_planted_key(self):
        data, message = self.planted(keys.BY_PATH[("parameters", "<parameter>")])
        text = toml(data)
        line = next(number for number, written in enumerate(text.splitlines(), 1) if "defaultt" in written)
        column = text.splitlines()[line - 1].index("defaultt") + 1
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "m.toml"), "w", encoding="utf-8") as out:
                out.write(text)
            done = subprocess.run([sys.executable, os.path.join(MODEL_FILES, "equations_to_header.py"), "m.toml",
                                   "-o", "m.hpp"], cwd=folder, capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertFalse(os.path.exists(os.path.join(folder, "m.hpp")))
        self.assertIn(f"m.toml:{line}:{column}: error: {message}", done.stderr.splitlines())


class RequiredKeys(unittest.TestCase):
    def test_a_required_key_left_out_is_refused(self):
        for section in keys.SECTIONS:
            path = concrete(EVERY_KEY, section.path)
            for key in section.keys:
                if not key.required or key.excludes:
                    continue
                with self.subTest(section=section.title, key=key.name):
                    data = copy.deepcopy(EVERY_KEY)
                    table = table_at(data, path)
                    if key.chosen:
                        table.clear()
                    else:
                        del table[key.name]
                    self.assertIsNotNone(read(data), "accepted without it")

    def test_keys_that_exclude_each_other_are_refused_together_and_needed_alone(self):
        for section in keys.SECTIONS:
            group = [key for key in section.keys if key.excludes]
            if not group:
                continue
            with self.subTest(section=section.title):
                for key in group:
                    self.assertTrue(set(key.excludes) <= set(section.names))
                none, every = copy.deepcopy(EVERY_KEY), copy.deepcopy(EVERY_KEY)
                path = concrete(EVERY_KEY, section.path)
                present = [key.name for key in group if key.name in table_at(EVERY_KEY, path)]
                self.assertEqual(len(present), 1, "EVERY_KEY should hold one key of the group")
                for key in group:
                    table_at(none, path).pop(key.name, None)
                    table_at(every, path).setdefault(key.name, table_at(EVERY_KEY, path)[present[0]])
                self.assertIsNotNone(read(none), "accepted with none of the group")
                self.assertIsNotNone(read(every), "accepted with all of the group")

    def test_a_file_of_only_the_required_keys_is_accepted(self):
        self.assertIsNone(read(REQUIRED_ONLY))
        # REQUIRED_ONLY holds the required keys of each table it has, one of a group, and nothing else.
        def tables(data, path=()):
            yield path, data
            for key, value in data.items():
                if isinstance(value, dict):
                    yield from tables(value, path + (key,))
        for path, table in tables(REQUIRED_ONLY):
            section = keys.section(path)
            present = {keys.generic(path + (key,))[-1] for key in table}
            required = {key.name for key in section.keys if key.required and not key.excludes}
            with self.subTest(section=section.title):
                self.assertTrue(required <= present, f"missing {required - present}")
                for key in section.keys:
                    if key.name in present:
                        self.assertTrue(key.required, f"'{key.name}' is optional")
                        self.assertFalse(present & set(key.excludes), f"'{key.name}' beside {key.excludes}")


class Reference(unittest.TestCase):
    def test_a_heading_per_table_and_a_row_per_key_in_order(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "reference", "_generated", "equations-file-keys.md")
            subprocess.run([sys.executable, os.path.join(MODEL_FILES, "equations_reference.py"), "-o", out],
                           check=True, timeout=60)
            with open(out, encoding="utf-8") as text:
                lines = text.read().splitlines()
        headings = [line for line in lines if line.startswith("## ")]
        self.assertEqual(len(headings), len(keys.SECTIONS))
        rows = [line for line in lines if line.startswith("| `")]
        expected = [f"| `{key.name}` | " for section in keys.SECTIONS for key in section.keys]
        self.assertEqual([row[:len(start)] for row, start in zip(rows, expected)], expected)
        self.assertEqual(len(rows), len(expected))

    def test_cells_escape_the_bar(self):
        self.assertEqual(equations_reference.cell("a | b\n c"), "a \\| b c")

    def test_the_tables_parse_as_markdown(self):
        try:
            from markdown_it import MarkdownIt
        except ImportError:
            self.skipTest("markdown-it is not installed")
        tokens = MarkdownIt("commonmark").enable("table").parse(equations_reference.reference())
        tables, cells = [], None
        for token in tokens:
            if token.type == "table_open":
                tables.append([])
            elif token.type == "tr_open":
                cells = 0
            elif token.type in ("th_open", "td_open"):
                cells += 1
            elif token.type == "tr_close":
                tables[-1].append(cells)
        self.assertEqual(len(tables), len(keys.SECTIONS))
        for section, rows in zip(keys.SECTIONS, tables):
            self.assertEqual(rows, [4] * (len(section.keys) + 1), section.title)


if __name__ == "__main__":
    unittest.main()
