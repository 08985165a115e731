#!/usr/bin/python3
"""Golden hashes of lockstep's results over a corpus of small studies.

Every study of corpus.py is run through the `lockstep` binary; the numbers it writes (every dataset of
results.h5 with its shape and type, the attributes that describe the results, and members.csv) are
hashed with SHA-256. The hashes must equal those recorded in hashes.txt, and every variant of a study
(other thread counts, chunk sizes, the serial backend, checkpoints, an interrupted and resumed run,
1-3 MPI ranks) must give its study's hash exactly: results are bitwise independent of how the work
is sliced.

The hashes hold for the toolchain recorded in hashes.txt (compiler, C library, and whether the CPU
has FMA). The solvers' elementary functions are lockstep's own (lockstep/core/elementary.hpp), but the
study samplers' quantiles (Boost.Math) still call glibc's libm, which picks FMA code paths for exp, log
and pow at run time. On
another toolchain the digests are still compared between variants, but not against hashes.txt, and the
script says so and exits with 77, which ctest reports as skipped.

A change that alters results on purpose regenerates the file in the same commit and says why:

    /usr/bin/python3 tests/golden/golden_hashes.py --lockstep build/host/cli/lockstep --update

Usage: golden_hashes.py --lockstep PATH [--mpirun PATH] [--toolchain "GNU 12.2.0"] [--update]
                        [--only NAME ...] [--work DIR]
--toolchain names the compiler that built lockstep as CMake does ("<compiler id> <version>", what ctest
passes); by default it is read from what CMake recorded of the compiler in the build that holds --lockstep.
Exit codes: 0 all equal, 1 a difference (each is printed), 77 another toolchain, 2 bad usage.
"""

import argparse
import hashlib
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CASES  # noqa: E402

HERE = Path(__file__).resolve().parent
HASH_FILE = HERE / "hashes.txt"
SKIPPED = 77

# Root attributes that describe the results; the others (the study's text, versions, revision,
# backend, threads, wall time) describe the run and differ between variants by design.
ROOT_ATTRIBUTES = ("format", "format_version", "model", "n", "m", "k", "coordinate_names", "members", "trajectories",
                   "multipliers")


def cpu_has_fma():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return " fma " in line + " "
    except OSError:
        pass
    return False


def build_compiler(lockstep):
    """The compiler of the CMake build that holds the binary `lockstep`, as "<id> <version>" (the form
    ctest passes as --toolchain), from what CMake recorded of it (CMakeFiles/<cmake version>/
    CMakeCXXCompiler.cmake) in the first folder above the binary with a CMakeCache.txt; None where
    there is none."""
    for folder in Path(lockstep).resolve().parents:
        if not (folder / "CMakeCache.txt").is_file():
            continue
        for recorded in sorted(folder.glob("CMakeFiles/*/CMakeCXXCompiler.cmake")):
            text = recorded.read_text()
            compiler_id = re.search(r'^set\(CMAKE_CXX_COMPILER_ID "([^"]+)"\)', text, re.MULTILINE)
            version = re.search(r'^set\(CMAKE_CXX_COMPILER_VERSION "([^"]+)"\)', text, re.MULTILINE)
            if compiler_id and version:
                return f"{compiler_id.group(1)} {version.group(1)}"
        return None
    return None


def toolchain_key(compiler):
    libc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else "unknown libc"
    return f"{compiler}; {libc}; {platform.machine()}{' with FMA' if cpu_has_fma() else ' without FMA'}"


def hash_attribute(h, name, value):
    h.update(name.encode())
    if isinstance(value, (bytes, str)):
        h.update(value.encode() if isinstance(value, str) else value)
    else:
        a = np.asarray(value)
        if a.dtype.kind == "O":
            for item in a.ravel():
                h.update(item.encode() if isinstance(item, str) else bytes(item))
        else:
            h.update(a.dtype.str.encode() + repr(a.shape).encode() + np.ascontiguousarray(a).tobytes())


def hash_results(out_dir):
    """SHA-256 over results.h5's datasets and describing attributes, and members.csv."""
    h = hashlib.sha256()
    with h5py.File(out_dir / "results.h5", "r") as f:
        for name in ROOT_ATTRIBUTES:
            if name in f.attrs:
                hash_attribute(h, "/@" + name, f.attrs[name])
        items = []
        f.visititems(lambda name, obj: items.append((name, obj)))
        for name, obj in sorted(items, key=lambda item: item[0]):
            h.update(b"\0" + name.encode())
            for key in sorted(obj.attrs.keys()):
                hash_attribute(h, "@" + key, obj.attrs[key])
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                a = np.asarray(data)
                if a.dtype.kind == "O":
                    hash_attribute(h, "data", a)
                else:
                    h.update(a.dtype.str.encode() + repr(a.shape).encode())
                    h.update(np.ascontiguousarray(a).tobytes())
    h.update(b"\0members.csv\0" + (out_dir / "members.csv").read_bytes())
    return h.hexdigest()[:32]


class RunFailed(Exception):
    pass


def run(command, cwd, expect_exit, timeout=300):
    p = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode not in expect_exit:
        raise RunFailed(f"{' '.join(map(str, command))} exited with {p.returncode}\n{p.stderr[-2000:]}")
    return p


def solve(case, variant, args, work):
    """Runs one variant of a case in a fresh folder; returns the results' hash."""
    folder = work / f"{case.name}.{variant.name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "s.toml").write_text(case.study)
    expect = (case.exit_code,)
    lockstep = [args.lockstep]
    if variant.ranks > 1:
        if not args.mpirun:
            return None
        lockstep = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(variant.ranks), args.lockstep]
    command = lockstep + ["run", "s.toml", "-o", "out", "-q"] + list(variant.flags)
    if variant.interrupt_after is None:
        run(command, folder, expect)
    else:
        # Stopped by SIGINT soon after its first checkpoint exists (exit 130 once the run's handlers are
        # in place, killed by the signal before that), or done before the signal came; in every case
        # `--resume` must end with the uninterrupted run's results.
        p = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + variant.interrupt_after
        while p.poll() is None and not (folder / "out" / "checkpoint").exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=300)
        # A signal that lands after the results were committed (the run removes its checkpoint first)
        # finds nothing to resume: that run completed.
        interrupted = p.returncode in (128 + signal.SIGINT, -signal.SIGINT)
        if interrupted and (folder / "out" / "checkpoint").exists():
            solve.resumed += 1
            run(lockstep + ["run", "--resume", "out", "-q"], folder, expect)
        elif interrupted and not (folder / "out" / "results.h5").exists():
            raise RunFailed(f"interrupted run left neither a checkpoint nor results\n{err.decode()[-2000:]}")
        elif not interrupted and p.returncode != case.exit_code:
            raise RunFailed(f"interrupted run exited with {p.returncode}\n{err.decode()[-2000:]}")
    digest = hash_results(folder / "out")
    shutil.rmtree(folder, ignore_errors=True)
    return digest


solve.resumed = 0


def read_hash_file():
    toolchain, hashes = None, {}
    if HASH_FILE.exists():
        for line in HASH_FILE.read_text().splitlines():
            if line.startswith("# toolchain: "):
                toolchain = line[len("# toolchain: "):]
            elif line and not line.startswith("#"):
                name, digest = line.split()
                hashes[name] = digest
    return toolchain, hashes


def write_hash_file(toolchain, hashes):
    lines = [
        "# Golden hashes of the results of tests/golden/corpus.py (tests/golden/golden_hashes.py says how",
        "# they are computed). Regenerate with --update only in a commit that changes results on purpose,",
        "# and say why in its message.",
        f"# toolchain: {toolchain}",
    ]
    lines += [f"{name} {hashes[name]}" for name in sorted(hashes)]
    HASH_FILE.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lockstep", required=True, help="the lockstep binary")
    parser.add_argument("--mpirun", default="", help="mpirun of the MPI lockstep links (empty: no MPI variants)")
    parser.add_argument("--toolchain", default=None,
                        help='the compiler that built lockstep, e.g. "GNU 12.2.0" (default: what CMake recorded '
                             'of the compiler in the build that holds --lockstep)')
    parser.add_argument("--update", action="store_true", help="rewrite hashes.txt with this build's hashes")
    parser.add_argument("--only", nargs="*", default=None, help="run only these cases")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    if not Path(args.lockstep).is_file():
        parser.error(f"no lockstep binary at {args.lockstep}")
    args.lockstep = str(Path(args.lockstep).resolve())
    if args.toolchain is None:
        args.toolchain = build_compiler(args.lockstep)
        if args.toolchain is None:
            parser.error(f"no CMake build above {args.lockstep} records its compiler: give --toolchain, "
                         'e.g. "GNU 12.2.0"')

    toolchain = toolchain_key(args.toolchain)
    recorded_toolchain, recorded = read_hash_file()
    same_toolchain = recorded_toolchain == toolchain
    cases = [c for c in CASES if args.only is None or c.name in args.only]
    if args.only is not None and len(cases) != len(args.only):
        parser.error(f"unknown case in --only; the cases: {', '.join(c.name for c in CASES)}")

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="lockstep-golden-"))
    failures, computed = [], {}
    start = time.monotonic()
    for case in cases:
        digests = {}
        for variant in case.variants:
            try:
                digest = solve(case, variant, args, work)
            except (RunFailed, subprocess.TimeoutExpired, OSError) as e:
                failures.append(f"{case.name} [{variant.name}]: {e}")
                continue
            if digest is not None:
                digests[variant.name] = digest
        if not digests:
            continue
        base = next(iter(digests.values()))
        computed[case.name] = base
        for variant, digest in digests.items():
            if digest != base:
                failures.append(f"{case.name}: variant {variant} gives {digest}, {case.variants[0].name} gives {base}")
        expected = recorded.get(case.name)
        status = "new" if expected is None else ("ok" if expected == base else "CHANGED")
        if same_toolchain and not args.update and expected != base:
            failures.append(f"{case.name}: results hash {base}, hashes.txt records {expected}")
        print(f"{case.name:40s} {base} {status:8s} ({len(digests)} variant(s))", flush=True)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(computed)} cases in {time.monotonic() - start:.1f} s; {solve.resumed} interrupted run(s) resumed")

    if args.update:
        if failures:
            print("not updated: variants disagree or runs failed:\n  " + "\n  ".join(failures))
            return 1
        merged = dict(recorded) if args.only is not None and same_toolchain else {}
        merged.update(computed)
        write_hash_file(toolchain, merged)
        print(f"wrote {HASH_FILE} for toolchain {toolchain}")
        return 0
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    if not same_toolchain:
        print(f"hashes.txt was recorded with [{recorded_toolchain}]; this build is [{toolchain}]: the variants agree, "
              f"but the hashes are not compared (results may differ in the last bit on another toolchain)")
        return SKIPPED
    missing = sorted(set(c.name for c in cases) - set(recorded))
    if missing:
        print("FAILED: no recorded hash for " + ", ".join(missing) + " (run with --update)")
        return 1
    print(f"all {len(computed)} result hashes equal hashes.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
