#!/usr/bin/env python3
"""tests/docs/mechanism_keys_test.py — the mechanism file's reference against the reader's tables.

docs/reference/mechanism-file.md is written by hand (the equations file's reference is printed from its
key table; this one is not). This test holds it to what the reader takes its keys and joint types from
(host/model_files/mechanism/keys.py and model.py):

- each table of keys.ALLOWED has its section, and that section's key tables list exactly the table's
  keys, in the table's order (a force type's table leaves out `type` and `description`, which the
  forces' introduction names; the inline tables of inertia, initial values and rotations are named in
  their key's row);
- the table of joint types has a row per type of JOINT_TYPES, in order, with the coordinates of CHAINS
  and SUFFIXES and the cut rows of CUT_ROWS (a dash where the type cannot be that, as in a planar
  mechanism for the types outside PLANAR_TYPES); the table of cut-joint conditions numbers, per type,
  as many rows as CUT_ROWS; and the how-to's short table of joint types agrees with both.

Usage: mechanism_keys_test.py   (Python's standard library and SymPy, as the generator; exits 1 on a
failure)
"""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "host", "model_files"))

from mechanism import keys, model  # noqa: E402  (after the path is set)

REFERENCE = os.path.join(ROOT, "docs", "reference", "mechanism-file.md")
HOW_TO = os.path.join(ROOT, "docs", "how-to", "mechanisms.md")
DASH = "—"

# The reference's section of each table of keys.ALLOWED.
SECTIONS = {
    (): "## The top level",
    ("mechanism",): "## `[mechanism]`",
    ("parameters", "*"): "## `[parameters]` and `[inputs]`",
    ("inputs", "*"): "## `[parameters]` and `[inputs]`",
    ("ground",): "## `[ground]`",
    ("bodies", "*"): "## `[bodies.NAME]`",
    ("joints", "*"): "## `[joints.NAME]`",
}
# Inline tables whose keys the row of the key that holds them names.
NAMED_IN_ROW = {
    ("bodies", "*", "inertia"): (("bodies", "*"), "inertia"),
    ("joints", "*", "initial"): (("joints", "*"), "initial"),
    ("joints", "*", "parent_rotation"): (("joints", "*"), "parent_rotation"),
    ("joints", "*", "child_rotation"): (("joints", "*"), "child_rotation"),
}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def section(text, heading):
    """The text from a heading (a whole line) to the next heading of the same or a higher level."""
    lines = text.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        raise AssertionError(f"no heading {heading!r} in {os.path.relpath(REFERENCE, ROOT)}")
    end = len(lines)
    for i in range(start + 1, len(lines)):
        marks = len(lines[i]) - len(lines[i].lstrip("#"))
        if 0 < marks <= level and lines[i][marks:marks + 1] == " ":
            end = i
            break
    return "\n".join(lines[start + 1:end])


def tables(text):
    """The Markdown tables of `text`: lists of rows, each a list of cell strings (header row first,
    the delimiter row left out)."""
    found, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def key_rows(text):
    """The keys of the key tables (first column `key`) of `text`, in order, placeholders included."""
    keys_found = []
    for table in tables(text):
        if table[0][0] != "key":
            continue
        for row in table[1:]:
            match = re.fullmatch(r"`([^`]+)`", row[0])
            if match:
                keys_found.append((match.group(1), row))
    return keys_found


class KeysOfTheReference(unittest.TestCase):
    def setUp(self):
        self.text = read(REFERENCE)

    def test_each_section_lists_exactly_its_tables_keys(self):
        for path, heading in SECTIONS.items():
            with self.subTest(table=path):
                rows = [name for name, _ in key_rows(section(self.text, heading)) if not name.startswith("<")]
                wanted = keys.ALLOWED[path].names
                if path in (("parameters", "*"), ("inputs", "*")):
                    self.assertEqual(rows, wanted)
                else:
                    self.assertEqual(rows, wanted, f"{heading}: the key table differs from keys.py")

    def test_the_inline_tables_keys_are_named_in_their_row(self):
        for path, (holder, key) in NAMED_IN_ROW.items():
            with self.subTest(table=path):
                row = dict(key_rows(section(self.text, SECTIONS[holder])))[key]
                for name in keys.ALLOWED[path].names:
                    self.assertRegex(" ".join(row), rf"\b{name}\b", f"'{name}' is not named in the row of '{key}'")

    def test_each_force_type_has_its_table(self):
        forces = section(self.text, "## `[forces.NAME]`")
        for kind in keys.FORCE_TYPES:
            with self.subTest(force=kind):
                rows = [name for name, _ in key_rows(section(forces, f"### `{kind}`"))]
                wanted = [k for k in keys.ALLOWED[("forces", kind)].names if k not in ("type", "description")]
                self.assertEqual(rows, wanted)
                for name, row in key_rows(section(forces, f"### `{kind}`")):
                    self.assertEqual(row[2].startswith("required"), name in keys.ALLOWED[("forces", kind)].required,
                                     f"'{name}': required or not, as keys.py says")

    def test_required_keys_say_so(self):
        for path, heading in SECTIONS.items():
            if path in (("parameters", "*"), ("inputs", "*")):
                continue
            for name, row in key_rows(section(self.text, heading)):
                with self.subTest(table=path, key=name):
                    if name in keys.ALLOWED[path].required:
                        self.assertTrue(row[2].startswith("required"), row)


def coordinates_cell(kind):
    if kind not in model.CHAINS:
        return DASH
    count = len(model.CHAINS[kind])
    if count == 0:
        return "0"
    if count == 1:
        return "1: `NAME`"
    return f"{count}: " + ", ".join(f"`NAME_{suffix}`" for suffix in model.SUFFIXES[kind])


def cut_rows(kind):
    """(spatial, planar) rows as a cut joint, None where the type cannot close a loop that way."""
    spatial, planar = model.CUT_ROWS.get(kind, (None, None))
    if kind not in model.PLANAR_TYPES:
        planar = None
    return spatial, planar


def cell(value):
    return DASH if value is None else str(value)


class JointTypes(unittest.TestCase):
    def setUp(self):
        self.joints = section(read(REFERENCE), "### Joint types")

    def test_the_table_of_joint_types_is_the_readers(self):
        table = next(t for t in tables(self.joints) if t[0][0] == "type" and len(t[0]) == 5)
        rows = {re.fullmatch(r"`(\w+)`", row[0]).group(1): row for row in table[1:]}
        self.assertEqual(list(rows), list(keys.JOINT_TYPES), "one row per joint type, in keys.py's order")
        for kind, row in rows.items():
            with self.subTest(type=kind):
                self.assertTrue(row[1].startswith(coordinates_cell(kind)), f"coordinates: {row[1]!r}")
                spatial, planar = cut_rows(kind)
                self.assertEqual((row[3], row[4]), (cell(spatial), cell(planar)))

    def test_the_conditions_of_a_cut_joint_count_its_rows(self):
        table = next(t for t in tables(self.joints) if t[0] == ["type", "spatial rows", "planar rows"])
        rows = {re.fullmatch(r"`(\w+)`", row[0]).group(1): row for row in table[1:]}
        self.assertEqual(list(rows), [k for k in keys.JOINT_TYPES if k in model.CUT_ROWS])
        for kind, row in rows.items():
            with self.subTest(type=kind):
                counted = [sum(int(n) for n in re.findall(r"\((\d+)\)", text)) if text != DASH else None
                           for text in row[1:]]
                self.assertEqual(tuple(counted), cut_rows(kind))

    def test_the_how_to_agrees(self):
        text = read(HOW_TO)
        table = next(t for t in tables(text) if t[0][0] == "type" and "closes a loop" in t[0][2])
        seen = []
        for row in table[1:]:
            for kind in re.findall(r"`(\w+)`", row[0]):
                seen.append(kind)
                with self.subTest(type=kind):
                    count = len(model.CHAINS[kind]) if kind in model.CHAINS else None
                    self.assertEqual(row[1].split()[0], cell(count))
                    if row[2] == DASH:
                        self.assertEqual(cut_rows(kind), (None, None))
                    else:
                        self.assertEqual(tuple(x.strip() for x in row[2].split("/")), tuple(map(cell, cut_rows(kind))))
        self.assertEqual(sorted(seen), sorted(keys.JOINT_TYPES))


if __name__ == "__main__":
    unittest.main(verbosity=1)
