"""bench/results_section.py — one section of bench/RESULTS.md or docs/PERFORMANCE.md, written by the benchmark that
measured it.

A section lies between an HTML comment `<!-- NAME: begin -->` and `<!-- NAME: end -->` (the markers are
part of the text each script writes); rewriting it leaves the rest of the file as it was.
"""

import re
import sys

# A section another script owns: `<!-- NAME: begin -->` ... `<!-- NAME: end -->`, or the older form
# `<!-- begin NAME -->` ... `<!-- end NAME -->`.
MARKED = re.compile(r"<!-- (?:begin (?P<a>\S+)|(?P<b>\S+): begin) -->.*?<!-- (?:end (?P=a)|(?P=b): end) -->", re.S)


def write_section(path, text, begin, end):
    """Replaces the section between `begin` and `end` in `path` by `text`, or appends `text`."""
    with open(path) as f:
        old = f.read()
    if begin in old and end in old:
        new = old[:old.index(begin)] + text + old[old.index(end) + len(end):].lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


def publish(text, path, begin, end):
    """Prints the section and writes it into `path` ("-": print only)."""
    print(text)
    if path != "-":
        write_section(path, text, begin, end)
        print(f"written to {path}", file=sys.stderr)


def marked_sections(path):
    """The sections of `path` that their own scripts wrote (with their markers), in file order; none when
    the file does not exist."""
    try:
        with open(path) as f:
            return [m.group(0) for m in MARKED.finditer(f.read())]
    except FileNotFoundError:
        return []
