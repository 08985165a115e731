#!/usr/bin/env python3
"""tests/layers/include_rule_check.py [ROOT] — the layers hold: nothing includes from a layer above it.

The layers of docs/ARCHITECTURE.md, section 1, lowest first, as folders of include/lockstep:

    core (with core/vector_math, the elementary functions every lane and member shares)
    model -> formulation -> method (with the solver's options and consistent initialization)
    -> stepper (one member) -> lyapunov (its tangents) -> detail (batch kernels over chunks)
    -> simd (the members in SIMD lanes) -> engine (the C table of one model's kernels)
    -> the C++ API (lockstep.hpp, ensemble.hpp, typed_ensemble.hpp) and study (samplers, statistics)
    -> chunks (the chunk loop's shared pieces over the API's types, for the scheduler and backends)

A header may include its own layer and those below it; version.hpp sits with core. Outside the
public headers: the backends (kernels/) implement what the host asks of them and never include host/;
the public headers include neither host/ nor kernels/. tests/, bench/, tools/, fuzz/, python/ and
host/ may include anything below them.

Prints every include that breaks the rule as file:line: the include (from LAYER into LAYER) and exits 1;
exits 0 when there is none. --self-test plants one upward include in a copy of a small tree and
checks that it is reported.
"""
import os
import re
import shutil
import sys
import tempfile

ORDER = ["core", "model", "formulation", "method", "stepper", "lyapunov", "detail", "simd", "engine", "api", "chunks"]
RANK = {name: i for i, name in enumerate(ORDER)}
TOP_LEVEL = {"version.hpp": "core", "lockstep.hpp": "api", "ensemble.hpp": "api", "typed_ensemble.hpp": "api"}
FOLDERS = {"study": "api"}  # the study layer sits beside the API, above the engine boundary
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".hpp", ".h", ".cpp", ".cu", ".cuh")


def layer_of(path):
    """The layer of a path under include/lockstep/ (relative to it), or None."""
    parts = path.split("/")
    if len(parts) == 1:
        return TOP_LEVEL.get(parts[0])
    folder = parts[0]
    if folder in RANK:
        return folder
    return FOLDERS.get(folder)


def violations(root):
    found = []
    public = os.path.join(root, "include", "lockstep")
    checked = 0
    for tree in ("include", "kernels"):
        for folder, _, names in os.walk(os.path.join(root, tree)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root)
                checked += 1
                here = layer_of(os.path.relpath(path, public)) if tree == "include" else None
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        where = f"{relative}:{number}: #include \"{target}\""
                        if target.startswith("host/"):
                            found.append(f"{where} (the host, from {'a public header' if tree == 'include' else 'a backend'})")
                        elif tree == "include" and target.startswith("kernels/"):
                            found.append(f"{where} (a backend, from a public header)")
                        elif tree == "include" and target.startswith("lockstep/") and here is not None:
                            there = layer_of(target[len("lockstep/"):])
                            if there is not None and RANK[there] > RANK[here]:
                                found.append(f"{where} (from {here} into {there}, a layer above it)")
    return found, checked


def self_test():
    work = tempfile.mkdtemp(prefix="include-rule-")
    try:
        def write(relative, text):
            path = os.path.join(work, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        write("include/lockstep/core/a.hpp", '#include "lockstep/core/b.hpp"\n')  # repository-paths: not-a-path (a planted tree)
        write("include/lockstep/method/m.hpp", '#include "lockstep/model/x.hpp"\n')  # repository-paths: not-a-path (a planted tree)
        found, _ = violations(work)
        assert not found, found
        write("include/lockstep/method/m.hpp", '#include "lockstep/model/x.hpp"\n#include "lockstep/stepper/member.hpp"\n')  # repository-paths: not-a-path (a planted tree)
        write("kernels/omp/launch.cpp", '#include "host/scheduler/x.hpp"\n')  # repository-paths: not-a-path (a planted tree)
        found, _ = violations(work)
        assert len(found) == 2, found
        assert "method/m.hpp:2" in found[0] or "method/m.hpp:2" in found[1], found
    finally:
        shutil.rmtree(work)
    print("include_rule_check: self-test passed (clean tree passes; an upward include and a backend's host include are found)")
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found, checked = violations(root)
    for line in found:
        print(line)
    print(f"include_rule_check: {checked} files of include/ and kernels/, "
          f"{'the layers hold' if not found else f'{len(found)} includes break the rule'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
