#!/usr/bin/env python3
"""tests/docs/repository_paths_check.py — every repository path a document or comment names exists.

What is read: the text files a clean checkout would hold (when ROOT is a git checkout, the tracked
files and the untracked ones git does not ignore; else every file below ROOT outside .git, build*,
lockstep-out and __pycache__): Markdown, C, C++ and CUDA sources and headers, Python, shell (by extension, or an extension-less file whose first line is a sh, bash or
python shebang, as .ci/run), CMake (CMakeLists.txt, *.cmake, *.cmake.in) and TOML. Records kept as
they were written (the logs under docs/gpu-runs/, *.txt) and binary files are not read.

What is a path, in any line of those files (comment, string or prose alike):
  * a token that begins with a top-level folder of the repository: include/ host/ kernels/ tests/
    bench/ docs/ scripts/ examples/ python/ tools/ fuzz/ cmake/ .ci/ — at the start of a word, so
    build/tests/x, ${PROJECT_SOURCE_DIR}/docs/x or /usr/bin/python3 are not read as one;
  * a top-level file by name: README.md CONTRIBUTING.md CHANGELOG.md LICENSE pyproject.toml;
  * a public header by its include path, lockstep/....hpp or lockstep/....h, found under include/;
  * the target of a Markdown link or image, [text](target) or a definition [id]: target, outside
    fenced code, relative to the file that holds it.
Trailing sentence punctuation (. , : ;), a Markdown "**" and a #fragment are not part of the path.

What counts as existing: a file or a folder at that path in what a clean checkout holds (in a git
checkout: the tracked files and the untracked ones git does not ignore, so an ignored file on this disk
does not count; outside git: every file below ROOT), where a trailing "/" asks for a folder; or, for a last part without an extension, a source of that name with one of the extensions
in SOURCE_EXTENSIONS: tests/core/linalg_test names the test program built from
tests/core/linalg_test.cpp, host/io/results_h5 the unit results_h5.hpp/.cpp. A glob (*) must match at
least one path, and a brace list (docs/{GPU,SIMD}.md) is read as each of its paths.

What is exempt, and why:
  * URLs (a scheme such as https:, or mailto:) and in-page links (#fragment): not repository paths.
  * Outputs the programs and the build write: paths whose first part begins with build (build/,
    build-asan/, ...) or is lockstep-out/ (the `lockstep` command's default output folder), and the
    GENERATED_FOLDERS inside the tree (docs/reference/_generated/, written by scripts/docs.sh). They
    appear in a clean checkout only after a build or a run.
  * Placeholders: a part in angle brackets (<target>), a shell or CMake variable ($target,
    ${VAR}), an elision (...), or a part whose name before its extension is one of PLACEHOLDER_WORDS
    (examples/python/NAME.py, OUT_DIR/...): each stands for many paths, none of them literally.
  * NOT_PATHS: words that look like a path but are not one (the CUDA term host/device).
  * CHANGELOG.md: the entries of a released version (below a heading "## [x.y.z] - YYYY-MM-DD") record
    the tree as it was then and are not read; the Unreleased section is read like any document.
  * A line that holds the marker "repository-paths: not-a-path" (MARKER) opts out. It is for a line
    that must name a path that does not exist (a test of a missing file), and that line says why:
    today the planted tree of tests/layers/include_rule_check.py's self-test.

Usage: repository_paths_check.py [ROOT]   (ROOT defaults to the repository root above this file)
       repository_paths_check.py --self-test
         builds a small tree in a temporary folder with one missing path in a C++ comment and one in a
         Markdown link, checks that both are reported and the exit status is 1, then that the tree
         passes once they are fixed, then (made a git checkout) that a path to a git-ignored file on
         the disk is reported.
Exit status: 0 when every path exists, 1 when one does not (each printed as file:line: path), 2 on a
usage error.
"""
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

from standalone_check import text_lines  # the same reading of a text file, beside this one

TOP_FOLDERS = ["include", "host", "kernels", "tests", "bench", "docs", "scripts", "examples", "python", "tools",
               "fuzz", "cmake", ".ci"]
TOP_FILES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "LICENSE", "pyproject.toml"]
SOURCE_EXTENSIONS = [".cpp", ".cu", ".hpp", ".h", ".cuh", ".py", ".sh"]
PLACEHOLDER_WORDS = {"NAME", "KEY", "OUT_DIR", "DIR", "FILE", "TARGET", "ISA", "N"}
NOT_PATHS = {"host/device"}
# Assembled from two pieces so that this file's own text carries no marker.
MARKER = "repository-paths:" + " not-a-path"

TEXT_EXTENSIONS = (".md", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".py", ".sh", ".cmake",
                   ".cmake.in", ".toml")
SKIP_DIRS = {".git", "__pycache__", "lockstep-out"}

# A path character; a brace list {a,b} is one piece of a path.
_PIECE = r"(?:[\w.+\-/*<>$]|\{[^}\s]*\})"
_START = r"(?<![\w./\-$}<>*])"
TOKEN = re.compile(_START + r"(?:" + "|".join(re.escape(t) for t in TOP_FOLDERS) + r")/" + _PIECE + r"*")
TOP_FILE = re.compile(_START + r"(?:" + "|".join(re.escape(t) for t in TOP_FILES) + r")(?![\w.\-/])")
HEADER = re.compile(_START + r"lockstep/[\w.+\-/]+\.h(?:pp)?\b")
MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MD_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
RELEASED = re.compile(r"^## \[[^\]]+\] - \d{4}-\d{2}-\d{2}")


# Folders inside the source tree that a script writes and git ignores (so absent from a clean checkout).
GENERATED_FOLDERS = ("docs/reference/_generated",)


def is_output(rel):
    first = rel.split("/", 1)[0]
    return (first.startswith("build") or first == "lockstep-out"
            or any(rel == g or rel.startswith(g + "/") for g in GENERATED_FOLDERS))


def wanted(root, rel):
    """Whether a file of the tree is one this check reads."""
    name = os.path.basename(rel)
    if name == "CMakeLists.txt" or name.endswith(TEXT_EXTENSIONS):
        return True
    if "." in name:
        return False
    try:
        with open(os.path.join(root, rel), "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and re.search(rb"\b(sh|bash|python3?)\b", first) is not None


def files_to_check(root):
    """The repository-relative paths of the files to read, sorted."""
    if os.path.exists(os.path.join(root, ".git")):
        try:
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                 check=True, capture_output=True).stdout
            rels = [p for p in out.decode("utf-8", "replace").split("\0") if p]
            return sorted(p for p in rels if not is_output(p) and os.path.isfile(os.path.join(root, p))
                          and wanted(root, p))
        except (OSError, subprocess.CalledProcessError):
            pass
    rels = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not (dirpath == root and d.startswith("build")))
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if wanted(root, rel):
                rels.append(rel)
    return sorted(rels)


def is_placeholder(path):
    if "<" in path or ">" in path or "$" in path or "..." in path:
        return True
    return any(part.split(".", 1)[0] in PLACEHOLDER_WORDS for part in path.split("/"))


def expand_braces(path):
    """docs/{GPU,SIMD}.md -> [docs/GPU.md, docs/SIMD.md]; several lists multiply."""
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    head, tail = path[:match.start()], path[match.end():]
    return [p for choice in match.group(1).split(",") for p in expand_braces(head + choice + tail)]


class Tree:
    """Existence questions about the files and folders below the root.

    In a git checkout the tree is what a clean checkout holds: the tracked files plus the untracked
    ones git does not ignore (a new file counts before it is added). An ignored file does not count
    even when it is on this disk, since a clean checkout would lack it: the check then gives the same
    answer here as in CI. Outside git, every file on the disk counts."""

    def __init__(self, root):
        self.root = root
        self.files = set(self._file_list())
        self.folders = {""}
        for path in self.files:
            parts = path.split("/")[:-1]
            for n in range(1, len(parts) + 1):
                self.folders.add("/".join(parts[:n]))

    def _file_list(self):
        if os.path.exists(os.path.join(self.root, ".git")):
            try:
                out = subprocess.run(["git", "-C", self.root, "ls-files", "-z", "--cached", "--others",
                                      "--exclude-standard"], check=True, capture_output=True).stdout
                rels = [p for p in out.decode("utf-8", "replace").split("\0") if p]
                return [p for p in rels if os.path.isfile(os.path.join(self.root, p))]
            except (OSError, subprocess.CalledProcessError):
                pass
        rels = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames
                           if d not in SKIP_DIRS and not (dirpath == self.root and d.startswith("build"))]
            rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            prefix = "" if rel == "." else rel + "/"
            rels.extend(prefix + f for f in filenames)
        return rels

    def all_paths(self):
        return sorted([f + "/" for f in self.folders if f] + list(self.files))

    def exists(self, rel):
        """rel: repository-relative, "/"-separated, without a glob or brace list."""
        folder = rel.endswith("/")
        rel = rel.rstrip("/")
        if rel in self.folders:
            return True
        if folder:
            return False
        if rel in self.files:
            return True
        last = rel.rsplit("/", 1)[-1]
        return "." not in last and any(rel + ext in self.files for ext in SOURCE_EXTENSIONS)

    def matches(self, pattern):
        """Whether a glob names at least one path ("*" stays within one part of the path)."""
        folder = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        parts = pattern.split("/")
        for path in self.all_paths():
            is_dir = path.endswith("/")
            path = path.rstrip("/")
            if folder and not is_dir:
                continue
            names = path.split("/")
            if len(names) == len(parts) and all(fnmatch.fnmatchcase(n, p) for n, p in zip(names, parts)):
                return True
        return False


def clean(token, markdown):
    """The path a token names: sentence punctuation, Markdown emphasis and a fragment taken off."""
    token = token.split("#", 1)[0]
    while True:
        before = token
        if markdown and token.endswith("**"):
            token = token[:-2]
        if not token.endswith("...") and token[-1:] in (".", ",", ":", ";"):
            token = token[:-1]
        if token == before:
            return token


def normalize(rel):
    """A "/"-separated path without . and .. parts; None when it leaves the root."""
    folder = rel.endswith("/")
    parts = []
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) + ("/" if folder and parts else "")


def missing(tree, rel):
    """Whether rel (repository-relative, possibly a glob or brace list) names nothing in the tree."""
    if not rel or is_output(rel) or is_placeholder(rel):
        return False
    for path in expand_braces(rel):
        if "*" in path:
            if not tree.matches(path):
                return True
        elif not tree.exists(path):
            return True
    return False


def paths_in_line(line, rel_file, markdown, in_fence):
    """(path as written, repository-relative path) for each path the line names."""
    found = []
    for regex in (TOKEN, TOP_FILE):
        for m in regex.finditer(line):
            path = clean(m.group(0), markdown)
            if path not in NOT_PATHS:
                found.append((path, path))
    for m in HEADER.finditer(line):
        found.append((m.group(0), "include/" + m.group(0)))
    if markdown and not in_fence:
        targets = [m.group(1) for m in MD_LINK.finditer(line)]
        definition = MD_DEFINITION.match(line)
        if definition:
            targets.append(definition.group(1))
        base = os.path.dirname(rel_file)
        for target in targets:
            if URL.match(target) or target.startswith("#"):
                continue
            target = target.split("#", 1)[0].split("?", 1)[0]
            if not target:
                continue
            rel = normalize(target.lstrip("/") if target.startswith("/") else (base + "/" + target if base else target))
            found.append((target, rel if rel is not None else target))
    return found


def check(root, out=None):
    """Prints each missing path as file:line: path; returns (missing count, files read)."""
    out = out or sys.stdout
    tree = Tree(root)
    count = 0
    files = files_to_check(root)
    for rel_file in files:
        lines = text_lines(os.path.join(root, rel_file))
        if lines is None:
            continue
        markdown = rel_file.endswith(".md")
        changelog = rel_file == "CHANGELOG.md"
        in_fence = False
        released = False
        for number, line in enumerate(lines, start=1):
            if markdown and line.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
            if changelog and line.startswith("## "):
                released = RELEASED.match(line) is not None
            if released or MARKER in line:
                continue
            seen = set()
            for written, rel in paths_in_line(line, rel_file, markdown, in_fence):
                if written in seen:
                    continue
                seen.add(written)
                if missing(tree, rel):
                    print(f"{rel_file}:{number}: {written}", file=out)
                    count += 1
    return count, len(files)


def run(root):
    if not os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        print(f"repository_paths_check: {root} is not the repository root (no CMakeLists.txt)", file=sys.stderr)
        return 2
    count, files = check(root)
    if count:
        print(f"repository_paths_check: {count} path(s) in {files} files name nothing in the tree; point them at "
              "the file that is there now (or see this script's docstring for what is exempt)")
        return 1
    print(f"repository_paths_check: {files} files, every repository path they name exists")
    return 0


def self_test():
    """The check fails on a planted missing path in a comment and in a Markdown link, and passes without."""
    import io
    # The tree's paths are assembled from their parts so that this file's own text names none of them.
    unit, notes, gone_unit = "/".join(("host", "unit.cpp")), "/".join(("docs", "NOTES.md")), "/".join(("host", "gone.cpp"))
    gone_doc = "GONE" + ".md"
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            path = os.path.join(root, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        write("CMakeLists.txt", f"add_subdirectory(host)  # {unit}, docs/\n")
        write("README.md", f"See [the notes]({notes}) and CONTRIBUTING.md.\n")
        write("CONTRIBUTING.md", "Outputs: build/x, lockstep-out/; examples/python/NAME.py; host/" + "*.cpp.\n")
        write(notes, f"Back to the [readme](../README.md); [missing]({gone_doc}).\n"
                     f"```\n[not a link]({gone_doc})\n```\n")
        write(unit, f"// The unit moved from {gone_unit}; see {notes}.\nint x;\n")
        buffer = io.StringIO()
        count, _ = check(root, out=buffer)
        report = buffer.getvalue().splitlines()
        expected = {f"{unit}:1: {gone_unit}", f"{notes}:1: {gone_doc}"}
        failures = []
        if set(report) != expected or count != 2:
            failures.append(f"planted tree: expected {sorted(expected)}, got {report}")
        if run_quietly(root) != 1:
            failures.append("planted tree: exit status is not 1")
        write(unit, f"// The unit; see {notes}.\nint x;\n")
        write(notes, "Back to the [readme](../README.md).\n")
        buffer = io.StringIO()
        count, _ = check(root, out=buffer)
        if count != 0:
            failures.append(f"fixed tree: expected nothing, got {buffer.getvalue().splitlines()}")
        if run_quietly(root) != 0:
            failures.append("fixed tree: exit status is not 0")
        # As a git checkout: a file git ignores is on this disk but not in a clean checkout, so a
        # document naming it fails here as it would in CI; the untracked, unignored notes still count.
        ignored = "/".join(("docs", "local", "draft.md"))
        write(".gitignore", ignored.rsplit("/", 1)[0] + "/\n")
        write(ignored, "a draft\n")
        write("README.md", f"See [the notes]({notes}), CONTRIBUTING.md and {ignored}.\n")
        try:
            subprocess.run(["git", "init", "-q", root], check=True, capture_output=True)
            have_git = True
        except (OSError, subprocess.CalledProcessError):
            have_git = False
        if have_git:
            buffer = io.StringIO()
            count, _ = check(root, out=buffer)
            if buffer.getvalue().splitlines() != [f"README.md:1: {ignored}"] or count != 1:
                failures.append(f"git tree: expected only the ignored {ignored}, got {buffer.getvalue().splitlines()}")
        else:
            print("repository_paths_check --self-test: git is not available; the ignored-file case is not run")
    for failure in failures:
        print(f"repository_paths_check --self-test: {failure}")
    if failures:
        return 1
    print("repository_paths_check --self-test: the planted missing paths are reported (status 1); "
          "the fixed tree passes; a git-ignored file does not count as present")
    return 0


def run_quietly(root):
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        return run(root)


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", ".."))
    return run(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
