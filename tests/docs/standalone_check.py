#!/usr/bin/env python3
"""tests/docs/standalone_check.py — the repository must stand alone.

Comments and documents cite papers and books by author, year and equation (docs/BIBLIOGRAPHY.md) and
the repository's own docs/ for design facts. They never refer to material a reader of the repository
does not have: a background design document or seed papers outside the tree, the project's issues
or work sessions. This check walks the source and documentation trees and fails on any line that
matches one of the patterns below (case-insensitive), printing each hit as file:line: text.

Usage: standalone_check.py [ROOT]   (ROOT defaults to the repository root above this file)
Exit status: 0 when nothing matches, 1 when something does, 2 on a usage error.
"""
import os
import re
import sys

# The patterns are written so that this file's own text does not match them (and this file is
# skipped anyway): each is assembled from two pieces.
PATTERNS = [
    "seed" + r" 00",            # "seed 001 eq. 74": a background paper by its file number
    "issue" + r" [0-9]",        # "issue 9": the project's issue tracker
    "session" + r" [0-9]",      # "session 7": a working session
    "DESIGN" + r"\.md",         # the background design document outside the tree
    r"\.\./" + "shared",        # any path into the background material
]
REGEX = re.compile("|".join(f"(?:{p})" for p in PATTERNS), re.IGNORECASE)

# What is searched: the trees readers get, and the top-level documents and build files.
TREES = ["include", "host", "kernels", "tests", "bench", "scripts", "cmake", "fuzz", "docs", "examples",
         "tools", ".ci"]
TOP_FILES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "LICENSE", "CMakeLists.txt"]
SKIP_DIRS = {".git", "__pycache__"}


def text_lines(path):
    """The lines of a text file; None for a binary one (a NUL byte or not UTF-8)."""
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def files_to_check(root):
    for name in TOP_FILES:
        path = os.path.join(root, name)
        if os.path.isfile(path):
            yield path
    for tree in TREES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, tree)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                yield os.path.join(dirpath, name)


def main(argv):
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", ".."))
    if not os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        print(f"standalone_check: {root} is not the repository root (no CMakeLists.txt)", file=sys.stderr)
        return 2
    me = os.path.realpath(__file__)
    hits = 0
    checked = 0
    for path in files_to_check(root):
        if os.path.realpath(path) == me:
            continue
        lines = text_lines(path)
        if lines is None:
            continue
        checked += 1
        rel = os.path.relpath(path, root)
        for number, line in enumerate(lines, start=1):
            if REGEX.search(line):
                print(f"{rel}:{number}: {line.strip()}")
                hits += 1
    if hits:
        print(f"standalone_check: {hits} line(s) in {checked} files refer to material outside the repository; "
              "cite the work by author, year and equation (docs/BIBLIOGRAPHY.md) or the repository's docs/ instead")
        return 1
    print(f"standalone_check: {checked} files, no reference to material outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
