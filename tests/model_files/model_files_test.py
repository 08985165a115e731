#!/usr/bin/python3
"""tests/model_files/model_files_test.py — model files end to end, through the `lockstep` command.

Each case runs the built binary with its own empty model cache (LOCKSTEP_CACHE_DIR) in a temporary
directory. Every case but header_bitwise compiles its engines at -O1 (LOCKSTEP_MODEL_OPTIMIZATION=1:
about half the compile time of the build's -O3, and the same bits, which header_bitwise proves against
the built-in model); header_bitwise compiles with the build's own flags as well. Every case but those
about the lanes (LANES_CASES) compiles without SIMD lanes (LOCKSTEP_MODEL_LANES=0): a model file's lanes
give each member the bits it gets alone, which those cases prove, and elsewhere they would be about a
third of each compile; the cases that compare with a built-in model then compare with its lanes.

  parts             studies with Radau IIA 5, then BDF, then [lyapunov] by QR and by clone, on one
                    cache: each compiles the parts of the engine it needs that the cache lacks (the
                    model's part, Radau IIA 5 and its lanes; BDF and its lanes; Radau IIA 5's QR tangents; its
                    Lyapunov clone), each study's results bit for bit the built-in model's; describe
                    compiles nothing; one cache entry per part, one engine per set of parts
  header_bitwise    a copy of the built-in double_pendulum.hpp in another namespace, named by
                    [model] source, gives results.h5 bit for bit equal to the built-in model's, compiled
                    with the build's flags and at -O1 (LOCKSTEP_MODEL_OPTIMIZATION; one cache entry
                    each); the first run compiles, the second finds the engine in the cache; a level
                    the variable does not offer (fast, 4) is refused
  invalidation      editing a header the model includes recompiles it (the new default shows);
                    restoring it finds the first engine again without compiling; editing a formula of
                    the model file recompiles, editing a comment does not
  concurrent        four processes that need one model at once compile it once (one process makes its
                    headers and parts while the others wait), and all succeed
  compile_error     a compiler error names the model file and line; no engine is left in the cache, the
                    failed build is kept under failed/ with a compile.sh that fails again the same way;
                    a constraint of the wrong type is named as such at the line that declares it
  choose            a header with two models: refused without a name (both listed), picked by name
  doctor            `lockstep check` on a singular mass matrix (one defect; initialization and the
                    solve not run), a redundant constraint (named, no defect) and a derivative cut by
                    a plain double (named)
  mpi               two MPI ranks: one compile, results equal to one process's
  cuda              --backend cuda on a model file without a CUDA toolkit says why not
  equations_andrews Andrews' squeezer and the slider crank as equations files against the built-in
                    models: adaptive runs agree within 10 (atol + rtol |y|) with equal statuses (their
                    last bits may differ)
  equations_errors  a typo and an unknown symbol in an equations file are reported by `lockstep run`
                    as FILE:LINE:COLUMN of the equations file, before any compiler runs
  study_features    a model file in a study with samplers, statistics, [lyapunov], checkpoints and an
                    interrupted run resumed (bitwise the built-in model's results), a resume refused
                    after the model file changed, and the plots
  instruction_set   the engine compiled for the widest instruction set this CPU has (wider than the
                    baseline where g++ built lockstep for x86-64 and the CPU has SSE4) gives with BDF
                    and Radau IIA results bit for bit equal to the engine compiled for the build's own
                    set (LOCKSTEP_MODEL_INSTRUCTION_SET), one cache entry each; an unknown set, one this
                    CPU lacks and one narrower than the build's are refused
  lanes             where model files are compiled for avx2 or avx512, their engines run the members of
                    BDF and Radau IIA in SIMD lanes: a copy of the double pendulum so compiled gives, with
                    either method, the bits of the engine without lanes that LOCKSTEP_LANES=0
                    compiles (the method's whole part: an engine with lanes leaves the one-member
                    advance to them), and with BDF those of a copy with a branch on a
                    coordinate's value, which cannot compile on packs: its engine is compiled without
                    lanes, once, and the compile says why; `describe` says which engine has lanes;
                    LOCKSTEP_MODEL_LANES=0 turns them off in --version; the run's summary counts the
                    lanes' attempts, Newton iterations and factorizations: the members' own counts, in
                    whole packs
  heavy_top         the example model header (a spatial mechanism in Euler parameters) conserves what
                    its physics conserves: energy, the spin about the symmetry axis, |e| = 1

Usage: model_files_test.py --lockstep BIN --source-dir DIR [--mpirun MPIRUN] CASE
"""
import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import h5py
import numpy as np


# The cases about a model file's SIMD lanes, which compile with them where this machine has them.
LANES_CASES = {"lanes", "instruction_set", "parts"}


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Context:
    def __init__(self, args, work):
        self.lockstep = args.lockstep
        self.source = args.source_dir
        self.mpirun = args.mpirun
        self.work = work
        self.cache = os.path.join(work, "cache")
        self.env = dict(os.environ, LOCKSTEP_CACHE_DIR=self.cache)
        self.env.pop("LOCKSTEP_MODEL_INSTRUCTION_SET", None)  # every case but instruction_set: the default
        self.env["LOCKSTEP_MODEL_OPTIMIZATION"] = "1"  # the module docstring says why
        if args.case not in LANES_CASES:
            self.env["LOCKSTEP_MODEL_LANES"] = "0"  # likewise
        self.cxx_id = args.cxx_id

    def run(self, *argv, cwd=None, expect=0, command=None):
        r = subprocess.run(command or [self.lockstep, *argv], cwd=cwd or self.work, env=self.env,
                           capture_output=True, text=True, timeout=600)
        if expect is not None and r.returncode != expect:
            raise Failure(f"{' '.join(argv)}: exit {r.returncode}, expected {expect}\n"
                          f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        return r

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def engines(self):
        d = os.path.join(self.cache, "engines")
        return sorted(e for e in os.listdir(d)) if os.path.isdir(d) else []

    def header(self, name):
        return os.path.join(self.source, "tests", "model_files", "headers", name)


def compiles(r):
    return len(re.findall(r"compiling model", r.stderr))


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def assert_same_results(a, b):
    x, y = datasets(a), datasets(b)
    check(x.keys() == y.keys(), f"datasets differ: {sorted(set(x) ^ set(y))}")
    for name in x:
        u, v = np.asarray(x[name]), np.asarray(y[name])
        same = (u.shape == v.shape and u.dtype == v.dtype and
                (u.tobytes() == v.tobytes()))  # bit for bit, NaN payloads included
        check(same, f"dataset {name} differs between {a} and {b}")


def member_attempts(path):
    """The step attempts of a results file's members: accepted steps and rejected ones."""
    with h5py.File(path, "r") as f:
        return int(np.sum(f["members/steps"][()]) + np.sum(f["members/rejected"][()]))


def member_counter_sum(path, counter):
    """A counter of a results file's members (members/COUNTER), summed over them."""
    with h5py.File(path, "r") as f:
        return int(np.sum(f["members/" + counter][()]))


def double_pendulum_copy(ctx, name="copied_pendulum"):
    """The built-in double pendulum's header, moved into another namespace and renamed."""
    text = open(os.path.join(ctx.source, "include", "lockstep", "model", "double_pendulum.hpp")).read()
    text = text.replace("namespace lockstep::models {", "namespace my_models {\nusing namespace lockstep;")
    text = text.replace('name = "double_pendulum"', f'name = "{name}"')
    check("namespace my_models" in text and f'"{name}"' in text, "the built-in header changed shape")
    return ctx.write("copied_pendulum.hpp", text)


STUDY = """[model]
{model}
[time]
t1 = 3.0
[ensemble]
members = 16
sampler = "sobol"
vary = {{ "initial.theta1" = {{ uniform = [1.0, 2.5] }}, "params.L2" = {{ normal = {{ mean = 1.0, std = 0.1 }} }} }}
[output]
trajectories = true
"""


def case_header_bitwise(ctx):
    double_pendulum_copy(ctx)
    ctx.write("mine.toml", STUDY.format(model='source = "copied_pendulum.hpp"'))
    ctx.write("builtin.toml", STUDY.format(model='name = "double_pendulum"'))
    ctx.run("run", "builtin.toml", "-o", "builtin")
    builtin = os.path.join(ctx.work, "builtin", "results.h5")
    # The build's own flags (what a user gets), then -O1: each its own cache entry, both the built-in bits.
    for level, out in ((None, "mine"), ("1", "mine_o1")):
        if level is None:
            ctx.env.pop("LOCKSTEP_MODEL_OPTIMIZATION")
        else:
            ctx.env["LOCKSTEP_MODEL_OPTIMIZATION"] = level
        first = ctx.run("run", "mine.toml", "-o", out)
        said = "" if level is None else f" at -O{level}"
        check(compiles(first) == 1 and re.search(rf"compiled model copied_pendulum \(copied_pendulum.hpp\)( for \w+)?{said} in [0-9.]+ s", first.stderr),
              f"the first run{said} should compile once and say how long it took:\n{first.stderr}")
        assert_same_results(os.path.join(ctx.work, out, "results.h5"), builtin)
        second = ctx.run("run", "mine.toml", "-o", out + "_again")
        check(compiles(second) == 0, f"the second run{said} should find the engine in the cache:\n{second.stderr}")
        assert_same_results(os.path.join(ctx.work, out, "results.h5"), os.path.join(ctx.work, out + "_again", "results.h5"))
    check(len([e for e in ctx.engines() if not e.endswith(".lock")]) == 2, f"two engines expected: {ctx.engines()}")
    records = [open(os.path.join(ctx.cache, "engines", e, "model.txt")).read() for e in ctx.engines()
               if not e.endswith(".lock")]
    check(sorted(bool(re.search(r"^compile .* -O1 ", r, re.M)) for r in records) == [False, True],
          f"one engine compiled at the build's level, one at -O1:\n" + "\n".join(records))
    # A level the compiler lacks, or -Ofast (which would drop the flags that keep the bits), is refused.
    for bad in ("fast", "4"):
        ctx.env["LOCKSTEP_MODEL_OPTIMIZATION"] = bad
        refused = ctx.run("run", "mine.toml", "-o", "refused", expect=2)
        check(f"LOCKSTEP_MODEL_OPTIMIZATION = '{bad}': expected 0, 1, 2, 3, s or g" in refused.stderr and
              not os.path.exists(os.path.join(ctx.work, "refused")),
              f"LOCKSTEP_MODEL_OPTIMIZATION={bad} should be refused with the levels named:\n{refused.stderr}")
    ctx.env["LOCKSTEP_MODEL_OPTIMIZATION"] = "1"


def version_line(ctx, prefix, env=None):
    r = subprocess.run([ctx.lockstep, "--version"], env=env or ctx.env, capture_output=True, text=True, timeout=60)
    line = next((l for l in r.stdout.splitlines() if l.startswith(prefix)), None)
    check(line is not None, f"--version printed no '{prefix}' line:\n{r.stdout}{r.stderr}")
    return line[len(prefix):]


# The CPU features of lockstep's sse4 set, as /proc/cpuinfo names them: a CPU with them all gets a
# wider set than the baseline, where g++ built lockstep for x86-64.
SSE4_SET_FLAGS = ("ssse3", "sse4_1", "sse4_2", "pclmulqdq", "aes")


def case_instruction_set(ctx):
    built = version_line(ctx, "instruction set: ").split()[0]
    wide = version_line(ctx, "model files compiled for: ")
    cpu = set()
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                cpu = set(line.split(":", 1)[1].split())
                break
    if platform.machine() == "x86_64" and ctx.cxx_id == "GNU" and all(f in cpu for f in SSE4_SET_FLAGS):
        check(wide in ("sse4", "avx2", "avx512"),
              f"model files should be compiled for a wider set than the baseline here, not '{wide}'")
    double_pendulum_copy(ctx)
    for method, form in (("bdf", "ggl"), ("radau5", "index3")):
        ctx.write(f"{method}.toml", STUDY.format(model='source = "copied_pendulum.hpp"') +
                  f'[solver]\nmethod = "{method}"\nformulation = "{form}"\n')
    runs = {}
    for chosen in ("widest", built):  # the build's own set: a build for avx2 refuses the baseline
        ctx.env["LOCKSTEP_MODEL_INSTRUCTION_SET"] = chosen
        for method in ("bdf", "radau5"):
            r = ctx.run("run", f"{method}.toml", "-o", f"{chosen}-{method}")
            if compiles(r):
                named = wide if chosen == "widest" else built
                expected = ("" if named == "baseline" else f" for {named}") + " at -O1"
                check(re.search(r"compiling model copied_pendulum \(copied_pendulum.hpp\)" + re.escape(expected) + r" \.\.\.",
                                r.stderr), f"the compile should name the instruction set '{chosen}' chose:\n{r.stderr}")
            runs[chosen, method] = os.path.join(ctx.work, f"{chosen}-{method}", "results.h5")
    check(len(model_identities(ctx)) == (1 if wide == built else 2),
          f"one model identity per instruction set expected: {engine_records(ctx)}")
    if wide in WIDTH_OF_SET and ctx.cxx_id == "GNU":  # the widest set's engine runs its methods in lanes
        check(WIDTH_OF_SET[wide] in engine_lanes(ctx).values(),
              f"the engine compiled for {wide} should run members in {WIDTH_OF_SET[wide]} lanes: {engine_lanes(ctx)}")
    for method in ("bdf", "radau5"):  # Radau IIA's complex Newton block is where FMA would show
        assert_same_results(runs["widest", method], runs[built, method])
    if built != "baseline":
        ctx.env["LOCKSTEP_MODEL_INSTRUCTION_SET"] = "baseline"
        r = ctx.run("run", "bdf.toml", "-o", "refused", expect=2)
        check(f"this lockstep is built for {built}" in r.stderr, f"a set narrower than the build's should be refused:\n{r.stderr}")
    ctx.env["LOCKSTEP_MODEL_INSTRUCTION_SET"] = "avx1024"
    r = ctx.run("run", "bdf.toml", "-o", "refused", expect=2)
    check("LOCKSTEP_MODEL_INSTRUCTION_SET = 'avx1024': expected widest" in r.stderr and "bdf.toml:" in r.stderr,
          f"an unknown instruction set should be refused, naming the study file and the variable:\n{r.stderr}")
    if platform.machine() == "x86_64" and ctx.cxx_id == "GNU" and "avx512f" not in cpu:
        ctx.env["LOCKSTEP_MODEL_INSTRUCTION_SET"] = "avx512"
        r = ctx.run("run", "bdf.toml", "-o", "refused", expect=2)
        check("this CPU lacks " in r.stderr and "avx512f" in r.stderr,
              f"a set this CPU lacks should be refused, naming what:\n{r.stderr}")
    del ctx.env["LOCKSTEP_MODEL_INSTRUCTION_SET"]


# The SIMD lanes of an engine compiled for a set (doubles per vector).
WIDTH_OF_SET = {"avx2": 4, "avx512": 8}


def engine_records(ctx):
    """Each cache entry's model.txt, by entry."""
    out = {}
    for entry in ctx.engines():
        record = os.path.join(ctx.cache, "engines", entry, "model.txt")
        if os.path.exists(record):
            out[entry] = open(record).read()
    return out


def engine_parts(record):
    """The parts an engine was linked from ("part KEY NAME" lines of its model.txt)."""
    return sorted(re.findall(r"^part [0-9a-f]+ (.+)$", record, re.M))


def engine_lanes(ctx):
    """The lanes each cache entry's engine with BDF runs BDF in, from its model.txt ("lanes N")."""
    out = {}
    for entry, record in engine_records(ctx).items():
        if "bdf" in engine_parts(record):
            found = re.search(r"^lanes (\d+)$", record, re.M)
            out[entry] = int(found.group(1)) if found else None
    return out


def model_identities(ctx):
    """The distinct models (their identity: the preprocessed source, compiler and flags) of the cache's engines."""
    return {re.search(r"^identity (\w+)$", record, re.M).group(1) for record in engine_records(ctx).values()}


def case_lanes(ctx):
    said = version_line(ctx, "SIMD lanes, model files: ")
    if said.startswith("off"):
        print(f"model_files_test: model files run without SIMD lanes here ({said}); skipped")
        sys.exit(77)
    width = int(said.split()[0])
    text = open(double_pendulum_copy(ctx)).read()
    # A branch on a coordinate's value, never taken: the same results on doubles, but a comparison of
    # SIMD packs gives a mask, not a bool, so the model's code cannot compile on them.
    signature = "force(const T&, const vec<T, n>&, const vec<T, n>&, const P* p) {"
    check(signature in text, "the built-in double pendulum's force changed shape")
    branched = text.replace('name = "copied_pendulum"', 'name = "branched_pendulum"').replace(
        signature, "force(const T&, const vec<T, n>& q, const vec<T, n>&, const P* p) {\n"
                   "    if (q[1] > 1.0e6) return vec<T, n>{};")
    ctx.write("branched_pendulum.hpp", branched)
    # 21 members: lanes refilled, the last pack not full.
    study = STUDY.replace("members = 16", "members = 21") + '[solver]\nmethod = "bdf"\nformulation = "ggl"\n'
    ctx.write("lanes.toml", study.format(model='source = "copied_pendulum.hpp"'))
    # Radau IIA 5 on index3 (the study's default method): its members in lanes too.
    ctx.write("lanes_radau5.toml", STUDY.replace("members = 16", "members = 21").format(model='source = "copied_pendulum.hpp"'))
    ctx.write("branched.toml", study.format(model='source = "branched_pendulum.hpp"'))

    lanes = ctx.run("run", "lanes.toml", "-o", "lanes")
    check(compiles(lanes) == 1 and "cannot run members in SIMD lanes" not in lanes.stderr,
          f"the copy should compile once, with lanes:\n{lanes.stderr}")
    check(sorted(engine_lanes(ctx).values()) == [width], f"one engine with {width} lanes expected: {engine_lanes(ctx)}")
    # The lanes' utilization in the run's summary (the engine's lanes_work): every step attempt of every
    # member is one lane-attempt of a member, and the pack attempts executed all `width` lanes.
    used = re.search(r"^lockstep: SIMD lanes: (\d+) of (\d+) lane-attempts advanced a member "
                     r"\(utilization ([0-9.]+)\)$", lanes.stderr, re.M)
    check(used is not None, f"the summary should give the lanes' utilization:\n{lanes.stderr}")
    of_members, executed = int(used.group(1)), int(used.group(2))
    attempts = member_attempts(os.path.join(ctx.work, "lanes", "results.h5"))
    check(of_members == attempts and executed % width == 0 and attempts <= executed < attempts * width and
          used.group(3) == f"{of_members / executed:.3f}",
          f"lane-attempts of members {of_members}, executed {executed}: the members made {attempts} step attempts"
          f" in packs of {width}")
    # The corrector's Newton iterations and factorizations likewise: the members' counts, in whole packs.
    corrector = re.search(r"^lockstep: SIMD lanes, the corrector: (\d+) of (\d+) lane-iterations of Newton's "
                          r"method were a member's \(utilization ([0-9.]+)\), (\d+) of (\d+) lane-factorizations "
                          r"\(utilization ([0-9.]+)\)$", lanes.stderr, re.M)
    check(corrector is not None, f"the summary should give the corrector's utilization:\n{lanes.stderr}")
    results = os.path.join(ctx.work, "lanes", "results.h5")
    for (useful, ran, ratio), counter in ((corrector.group(1, 2, 3), "newton_iterations"),
                                          (corrector.group(4, 5, 6), "lu_factorizations")):
        useful, ran, members_count = int(useful), int(ran), member_counter_sum(results, counter)
        check(useful == members_count > 0 and ran % width == 0 and useful <= ran <= useful * width and
              ratio == f"{useful / ran:.3f}",
              f"{counter}: {useful} of {ran} in lanes, the members' own count {members_count}, packs of {width}")

    ctx.env["LOCKSTEP_MODEL_LANES"] = "0"
    check(version_line(ctx, "SIMD lanes, model files: ").startswith("off"),
          "--version should say LOCKSTEP_MODEL_LANES=0 turns the model files' lanes off")
    del ctx.env["LOCKSTEP_MODEL_LANES"]
    # The lanes turned off: an engine without them, compiled once (its toolchain has no lanes, so every
    # part is its own), whose method part holds the one-member advance the lanes' part replaced; one
    # member at a time, the same bits.
    ctx.env["LOCKSTEP_LANES"] = "0"
    alone = ctx.run("run", "lanes.toml", "-o", "alone")
    told = ctx.run("describe", "copied_pendulum.hpp").stdout
    del ctx.env["LOCKSTEP_LANES"]
    check(compiles(alone) == 1 and compiled_parts(alone) == ["bdf", "model", "one member"] and
          "SIMD lanes: none, members one at a time" in told
          and "SIMD lanes:" not in alone.stderr,
          f"LOCKSTEP_LANES=0 should compile the method's whole part and run without lanes:\n{alone.stderr}\n{told}")
    assert_same_results(os.path.join(ctx.work, "lanes", "results.h5"), os.path.join(ctx.work, "alone", "results.h5"))
    # Radau IIA 5 likewise: its own part in lanes (compiled once, with the method), and the bits of its
    # members one at a time.
    radau = ctx.run("run", "lanes_radau5.toml", "-o", "lanes_radau5")
    check(compiles(radau) == 1 and compiled_parts(radau) == ["radau5", "radau5 in SIMD lanes"] and
          re.search(r"^lockstep: SIMD lanes: \d+ of \d+ lane-attempts advanced a member", radau.stderr, re.M),
          f"the Radau IIA 5 study should compile its method and its lanes, and run in them:\n{radau.stderr}")
    ctx.env["LOCKSTEP_LANES"] = "0"
    radau_alone = ctx.run("run", "lanes_radau5.toml", "-o", "alone_radau5")
    del ctx.env["LOCKSTEP_LANES"]
    check(compiled_parts(radau_alone) == ["radau5"] and "SIMD lanes:" not in radau_alone.stderr,
          f"LOCKSTEP_LANES=0 should run Radau IIA 5 one member at a time:\n{radau_alone.stderr}")
    assert_same_results(os.path.join(ctx.work, "lanes_radau5", "results.h5"),
                        os.path.join(ctx.work, "alone_radau5", "results.h5"))

    fallback = ctx.run("run", "branched.toml", "-o", "branched")
    check(compiles(fallback) == 1 and re.search(r"model branched_pendulum \(branched_pendulum.hpp\) for \w+ at -O1: its engine "
                                                r"cannot run members in SIMD lanes .*, so it runs them one at a time",
                                                fallback.stderr),
          f"the branched copy should compile once, without lanes, and say why:\n{fallback.stderr}")
    # (The engines with BDF: the copy's with lanes and without them, LOCKSTEP_LANES=0's, and the branched copy's.)
    check(sorted(engine_lanes(ctx).values()) == [0, 0, width], f"the branched copy's engine has no lanes: {engine_lanes(ctx)}")
    check("lockstep: SIMD lanes" not in fallback.stderr, f"an engine without lanes has no utilization:\n{fallback.stderr}")
    assert_same_results(os.path.join(ctx.work, "lanes", "results.h5"), os.path.join(ctx.work, "branched", "results.h5"))
    again = ctx.run("run", "branched.toml", "-o", "again")
    check(compiles(again) == 0 and "SIMD packs" not in again.stderr,
          f"the second run should load the engine without lanes from the cache, silently:\n{again.stderr}")
    # describe says how each engine runs its members (both from the cache).
    told = {f: ctx.run("describe", f).stdout for f in ("copied_pendulum.hpp", "branched_pendulum.hpp")}
    check(f"SIMD lanes: members in {width} lanes per core with every method" in told["copied_pendulum.hpp"]
          and "SIMD lanes: none, members one at a time" in told["branched_pendulum.hpp"],
          f"describe should name the lanes: {told}")


LENGTH_MODEL = """#pragma once
#include "lockstep/model/concept.hpp"
#include "length.hpp"
struct included_length_pendulum {
  static constexpr const char* name = "included_length_pendulum";
  static constexpr int n = 2, m = 1, k = 0;
  static constexpr int n_params = 1;
  static constexpr lockstep::named_value params[n_params] = {{"L", default_length, "rod length [m]"}};
  static constexpr int n_inputs = 0;
  template <class T, class P> static lockstep::mat<T, n, n> mass(const lockstep::vec<T, n>&, const P*) {
    return lockstep::mat<T, n, n>::identity();
  }
  template <class T, class P>
  static lockstep::vec<T, n> force(const T&, const lockstep::vec<T, n>&, const lockstep::vec<T, n>&, const P*) {
    lockstep::vec<T, n> Q;
    Q[1] = T(-9.81);
    return Q;
  }
  template <class T, class P> static lockstep::vec<T, m> constraint(const T&, const lockstep::vec<T, n>& q, const P* p) {
    lockstep::vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[0] * p[0]);
    return phi;
  }
  static void initial_state(const double* p, const double*, lockstep::vec<double, n>& q0, lockstep::vec<double, n>& v0) {
    q0[0] = p[0];
    q0[1] = 0.0;
    v0[0] = v0[1] = 0.0;
  }
};
"""


def compiled_parts(r):
    """The parts a run said it compiled ("compiling model ... (PART, PART)"), or None."""
    found = re.search(r"compiling model .* \.\.\. \((.*)\)$", r.stderr, re.M)
    return sorted(found.group(1).split(", ")) if found else None


def case_parts(ctx):
    double_pendulum_copy(ctx)
    studies = {
        "radau5": "",
        "projected": '[solver]\nprojection = "coordinate"\n',
        "bdf": '[solver]\nmethod = "bdf"\nformulation = "ggl"\n',
        "lyapunov": '[lyapunov]\nexponents = 2\nrenormalize = 0.5\n',
        "clone": '[lyapunov]\nmethod = "clone"\nrenormalize = 0.5\n',
        "dopri5": '[solver]\nmethod = "dopri5"\n',
        "auto": '[solver]\nmethod = "auto"\n',
    }
    for name, extra in studies.items():
        ctx.write(f"mine_{name}.toml", STUDY.format(model='source = "copied_pendulum.hpp"') + extra)
        ctx.write(f"builtin_{name}.toml", STUDY.format(model='name = "double_pendulum"') + extra)
    lanes = not version_line(ctx, "SIMD lanes, model files: ").startswith("off")
    # What each study compiles on the cache the studies before it left: its method (and the model's own
    # part and the one-member functions the parts share, once), with [lyapunov] the tangents of its
    # Lyapunov method (and what every method's tangents share, once); a describe compiles nothing more.
    # The projection after steps in lanes is a part of its own, for every method, compiled for the
    # first study that projects (none without lanes: the methods' own parts project one member at a
    # time), and the same bits as the built-in engine, which compiles it with each method's lanes.
    expected = {"radau5": ["model", "one member", "radau5"] + (["radau5 in SIMD lanes"] if lanes else []),
                "projected": ["projection in SIMD lanes"] if lanes else [],
                "bdf": ["bdf"] + (["bdf in SIMD lanes"] if lanes else []),
                "lyapunov": ["radau5 lyapunov", "tangents"],
                "clone": ["radau5 lyapunov clone"],
                "dopri5": ["dopri5"] + (["dopri5 in SIMD lanes"] if lanes else []),
                "auto": ["auto"] + (["auto in SIMD lanes"] if lanes else [])}
    for name, parts in expected.items():
        r = ctx.run("run", f"mine_{name}.toml", "-o", f"mine_{name}")
        check(compiles(r) == 1 and compiled_parts(r) == parts if parts else compiles(r) == 0,
              f"the {name} study should compile {parts or 'nothing'} alone:\n{r.stderr}")
        ctx.run("run", f"builtin_{name}.toml", "-o", f"builtin_{name}")
        # The engine of parts is the built-in engine's code: the same bits.
        assert_same_results(os.path.join(ctx.work, f"mine_{name}", "results.h5"),
                            os.path.join(ctx.work, f"builtin_{name}", "results.h5"))
    told = ctx.run("describe", "copied_pendulum.hpp")
    check(compiles(told) == 0 and "copied_pendulum" in told.stdout, f"describe should compile nothing:\n{told.stderr}")
    records = engine_records(ctx)
    linked = sorted(engine_parts(record) for record in records.values())
    shared = ["model", "one member"]
    radau5 = ["radau5"] + (["radau5 in SIMD lanes"] if lanes else [])
    projection = ["projection in SIMD lanes"] if lanes else []
    engines = [["model"], shared + radau5, sorted(shared + ["bdf"] + expected["bdf"][1:]),
               shared + radau5 + ["radau5 lyapunov", "tangents"],
               shared + radau5 + ["radau5 lyapunov clone", "tangents"],
               sorted(shared + expected["dopri5"] + projection), sorted(shared + expected["auto"] + projection)]
    if lanes:
        engines.append(sorted(shared + radau5 + projection))
    check(linked == sorted(engines), f"{len(engines)} engines, each linked from the parts its study needed: {linked}")
    check(len(model_identities(ctx)) == 1, f"one model behind every engine: {records}")
    # Each part compiled once, into parts/.
    parts_dir = os.path.join(ctx.cache, "parts")
    made = [e for e in os.listdir(parts_dir) if not e.endswith(".lock")]
    check(len(made) == sum(len(p) for p in expected.values()), f"one cache entry per part expected: {made}")
    # lockstep's elementary functions do not depend on the model: one object for the toolchain (at -O1,
    # not the build tree's own, so in the cache), linked into every engine.
    elementary = os.path.join(ctx.cache, "elementary")
    objects = [e for e in os.listdir(elementary) if not e.endswith(".lock")] if os.path.isdir(elementary) else []
    check(len(objects) == 1, f"one object of the elementary functions expected in {elementary}: {objects}")
    linking = [re.search(r"^compile (.*)$", record, re.M).group(1) for record in records.values()]
    check(all(os.path.join(elementary, objects[0], "elementary.o") in link for link in linking),
          f"every engine links the one object of the elementary functions: {linking}")


def case_invalidation(ctx):
    ctx.write("length.hpp", "#pragma once\ninline constexpr double default_length = 1.25;\n")
    ctx.write("pendulum_with_length.hpp", LENGTH_MODEL)
    first = ctx.run("describe", "pendulum_with_length.hpp")
    check(compiles(first) == 1 and "1.25" in first.stdout, f"first describe:\n{first.stdout}\n{first.stderr}")
    ctx.write("length.hpp", "#pragma once\ninline constexpr double default_length = 2.5;\n")
    edited = ctx.run("describe", "pendulum_with_length.hpp")
    check(compiles(edited) == 1 and "2.5" in edited.stdout,
          f"an edited included header must recompile:\n{edited.stdout}\n{edited.stderr}")
    ctx.write("length.hpp", "#pragma once\ninline constexpr double default_length = 1.25;\n")
    restored = ctx.run("describe", "pendulum_with_length.hpp")
    check(compiles(restored) == 0 and "1.25" in restored.stdout,
          f"the restored header is in the cache:\n{restored.stdout}\n{restored.stderr}")
    check(len([e for e in ctx.engines() if not e.endswith(".lock")]) == 2, f"two engines expected: {ctx.engines()}")
    # The model file itself: a changed formula recompiles; a changed comment does not (the key is
    # the preprocessed source).
    ctx.write("pendulum_with_length.hpp", LENGTH_MODEL + "// a comment of the user's\n")
    commented = ctx.run("describe", "pendulum_with_length.hpp")
    check(compiles(commented) == 0, f"a comment changes no engine:\n{commented.stderr}")
    ctx.write("pendulum_with_length.hpp", LENGTH_MODEL.replace("Q[1] = T(-9.81);", "Q[1] = T(-9.80665);"))
    edited = ctx.run("describe", "pendulum_with_length.hpp")
    check(compiles(edited) == 1, f"an edited model file must recompile:\n{edited.stderr}")


def case_concurrent(ctx):
    double_pendulum_copy(ctx)
    results = [None] * 4

    def one(i):
        results[i] = ctx.run("describe", "copied_pendulum.hpp", expect=None)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        check(r.returncode == 0 and "copied_pendulum" in r.stdout, f"a process failed:\n{r.stdout}\n{r.stderr}")
    total = sum(compiles(r) for r in results)
    check(total == 1, f"four processes compiled {total} times (one expected)")
    entries = ctx.engines()
    check(len([e for e in entries if not e.endswith(".lock")]) == 1 and not any(e.startswith(".build-") for e in entries),
          f"one complete engine and no build left over expected: {entries}")


def case_compile_error(ctx):
    r = ctx.run("describe", ctx.header("compile_error.hpp"), expect=2)
    check(re.search(r"compile_error\.hpp:24:\d+: error: .*qq", r.stderr),
          f"the compiler's message must point at compile_error.hpp:24:\n{r.stderr}")
    entries = ctx.engines()
    check(all(e.endswith(".lock") for e in entries), f"a failed compile must leave no engine or build: {entries}")
    # The failed build of the model's part (describe compiles it alone) is kept, with the command the
    # message names, which fails again the same way.
    failed = os.path.join(ctx.cache, "failed", "typo_pendulum-model")
    check(f"kept in {failed}: sh {failed}/compile.sh runs the command again" in r.stderr,
          f"the message names the kept build and how to re-run it:\n{r.stderr}")
    check(sorted(os.listdir(failed)) == ["compile.sh", "compiler.txt", "part.cpp"], f"kept: {os.listdir(failed)}")
    check(not os.listdir(os.path.join(ctx.cache, "parts")) or
          all(e.endswith(".lock") for e in os.listdir(os.path.join(ctx.cache, "parts"))),
          f"a failed compile must leave no part: {os.listdir(os.path.join(ctx.cache, 'parts'))}")
    again = ctx.run(command=["sh", os.path.join(failed, "compile.sh")], cwd="/", expect=None)
    check(again.returncode != 0 and re.search(r"compile_error\.hpp:24:\d+: error: .*qq", again.stderr),
          f"compile.sh compiles the kept unit again, from any directory:\n{again.stderr}")
    check("qq" in open(os.path.join(failed, "compiler.txt")).read(), "compiler.txt holds what the compiler said")
    # A function of the wrong type is named as such at the model's line that declares it, not as missing
    # from inside lockstep's headers.
    r = ctx.run("describe", ctx.header("wrong_constraint_type.hpp"), expect=2)
    check(re.search(r"^\S*wrong_constraint_type\.hpp:16:3: error: lockstep model: constraint returns the wrong type: "
                    r"it must return vec<T, m>", r.stderr, re.M) and "missing constraint" not in r.stderr,
          f"the concept's message must point at wrong_constraint_type.hpp:16:3, where constraint is declared:\n{r.stderr}")
    study = ctx.write("broken.toml", f'[model]\nsource = "{ctx.header("compile_error.hpp")}"\n[time]\nt1 = 1.0\n')
    r = ctx.run("run", study, "-o", "never", expect=2)
    check(re.search(r"broken\.toml:2:\d+: error: \[model\] source = .*compile_error\.hpp:24:", r.stderr, re.S),
          f"the study's diagnostic names the study line and the compiler's:\n{r.stderr}")
    check(not os.path.exists(os.path.join(ctx.work, "never")), "nothing is written for a model that does not compile")


def case_choose(ctx):
    header = ctx.header("two_pendulums.hpp")
    r = ctx.run("describe", header, expect=2)
    check("short_pendulum" in r.stderr and "long_pendulum" in r.stderr and "--name" in r.stderr,
          f"both models listed, and how to choose:\n{r.stderr}")
    r = ctx.run("describe", header, "--name", "long_pendulum")
    check(r.stdout.startswith("long_pendulum") and "2 " in r.stdout, f"--name long_pendulum:\n{r.stdout}")
    ctx.write("choose.toml", f'[model]\nsource = "{header}"\nname = "short_pendulum"\n[time]\nt1 = 1.0\n')
    r = ctx.run("run", "choose.toml", "-o", "chosen")
    with h5py.File(os.path.join(ctx.work, "chosen", "results.h5"), "r") as f:
        check(f.attrs["model"] in ("short_pendulum", b"short_pendulum"), f"results name the model: {f.attrs['model']}")
    r = ctx.run("describe", header, "--name", "medium_pendulum", expect=2)
    check("medium_pendulum" in r.stderr and "short_pendulum" in r.stderr, f"an unknown name lists the models:\n{r.stderr}")


def case_doctor(ctx):
    r = ctx.run("check", "double_pendulum")
    check("no defects found" in r.stdout, f"the built-in double pendulum is sound:\n{r.stdout}")
    r = ctx.run("check", ctx.header("singular_mass.hpp"), expect=1)
    check(re.search(r"DEFECT\s+mass\s+the mass matrix M is not positive definite", r.stdout),
          f"a singular mass matrix must be reported:\n{r.stdout}")
    # Once: initialization and the short solve, which factor M first, are not run rather than failed.
    check("1 defect found" in r.stdout and re.search(r"skip\s+initial\s+consistent initialization was not run", r.stdout)
          and re.search(r"skip\s+solve\s+the short solve was not run", r.stdout),
          f"a singular mass matrix is one defect, the checks that need M not run:\n{r.stdout}")
    # An exactly redundant constraint is named but is no defect: the solver leaves it out.
    r = ctx.run("check", ctx.header("redundant_constraint.hpp"))
    check(re.search(r"ok\s+rank\s+constraint Phi\[2\] is redundant: its row of G = dPhi/dq is a combination of Phi\[0\];"
                    r" G = dPhi/dq has rank 2 of 3; the solver leaves Phi\[2\] out", r.stdout),
          f"the redundant constraint must be named with the row it repeats:\n{r.stdout}")
    check("no defects found" in r.stdout, r.stdout)
    # And the solver runs it: Phi[2] dropped and reported, the multipliers in the convention asked for.
    # Phi[2] = 2 Phi[0], so the minimum-norm split of the rod's force lambda G_0 is (lambda / 5, 2 lambda / 5).
    ctx.write("redundant.toml", f'[model]\nsource = "{ctx.header("redundant_constraint.hpp")}"\n'
              '[solver]\nmethod = "radau5"\nformulation = "index3"\nmultipliers = "minimum-norm"\n'
              '[time]\nt1 = 1.0\nsave = { every = 0.1 }\n[output]\ntrajectories = true\n')
    ctx.run("run", "redundant.toml", "-o", "redundant", "-q")
    with h5py.File(os.path.join(ctx.work, "redundant", "results.h5"), "r") as f:
        check(f.attrs["multipliers"] in ("minimum-norm", b"minimum-norm"), f"the convention is recorded: {f.attrs['multipliers']}")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["members/status"].attrs["names"]]
        check([names[s] for s in f["members/status"][:]] == ["success"], f"the member succeeds: {f['members/status'][:]}")
        check(list(f["members/dropped_rows"][:]) == [0b100], f"Phi[2] is dropped: {f['members/dropped_rows'][:]}")
        check(list(f["members/rank_changes"][:]) == [0], f"and stays dropped: {f['members/rank_changes'][:]}")
        check(f["members/max_dropped_phi"][0] < 1e-6, f"and holds: {f['members/max_dropped_phi'][:]}")
        lam = f["lambda"][0]
        scale = 1e-9 * (1.0 + abs(lam).max())
        check(abs(lam[:, 2] - 2.0 * lam[:, 0]).max() < scale and abs(lam[:, 0]).max() > 1.0,
              f"the minimum-norm multipliers split the force 1 : 2:\n{lam}")
    r = ctx.run("check", ctx.header("lost_derivative.hpp"), expect=1)
    check(re.search(r"DEFECT\s+derivatives\s+a derivative disagrees with central differences .*dPhi\[0\]/dq\[0\] \(x\): "
                    r"automatic differentiation gives 0, central differences 0\.6", r.stdout),
          f"a derivative cut by a plain double must be named, with its coordinate:\n{r.stdout}")


def case_mpi(ctx):
    if not ctx.mpirun:
        print("model_files_test: no mpirun; skipped")
        sys.exit(77)
    double_pendulum_copy(ctx)
    ctx.write("mine.toml", STUDY.format(model='source = "copied_pendulum.hpp"'))
    ranks = ctx.run(command=[ctx.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", ctx.lockstep, "run",
                             "mine.toml", "-o", "ranks"])
    check(compiles(ranks) == 1, f"rank 0 compiles, the other rank waits and loads:\n{ranks.stderr}")
    ctx.run("run", "mine.toml", "-o", "one")
    assert_same_results(os.path.join(ctx.work, "ranks", "results.h5"), os.path.join(ctx.work, "one", "results.h5"))


# The driven arm of examples/models (a header with two event functions, one stopping its member), and
# a third that the study adds (the rod pushing instead of pulling: an event of its multiplier), for
# events through checkpoints, resumes and MPI ranks. Damping makes some torques stop short of the
# horizontal (censored members); two records per member keep the turns as well as the stop.
EVENTS_STUDY = """[model]
source = "{header}"
[solver]
rtol = 1e-7
[time]
t1 = 6.0
save = {{ every = 1.0 }}
[ensemble]
members = {members}
sampler = "sobol"
replicates = 4
vary = {{ "params.tau" = {{ uniform = [4.0, 12.0] }}, "params.c" = {{ uniform = [0.0, 0.6] }} }}
[events]
records = 2
[events.functions]
pushing = {{ g = "-lambda_0", direction = "rising", action = "count" }}
"""


def case_events_journaled(ctx):
    """A model's events, and those its study adds, come out of a checkpointed run, a run killed and
    resumed, and 2 and 3 MPI ranks bit for bit as out of the direct run: the journal keeps them
    (host/checkpoint/member_journal.hpp), and each run compiles the study's model alike.
    The study's 4 replicates of Sobol' points give the fractions' intervals from their spread, which
    each rank's share of the members must not change."""
    header = os.path.join(ctx.source, "examples", "models", "driven_arm.hpp")
    ctx.write("arm.toml", EVENTS_STUDY.format(header=header, members=1000))
    ctx.run("run", "arm.toml", "-o", "one", "-q")
    one = os.path.join(ctx.work, "one", "results.h5")
    with h5py.File(one, "r") as f:
        interval = f["events"].attrs["interval"]
        check((interval.decode() if isinstance(interval, bytes) else interval) == "replicates",
              f"/events@interval is {interval!r}: the intervals should come from the 4 replicates")

    def same_as_direct(out):
        assert_same_results(os.path.join(ctx.work, out, "results.h5"), one)
        with open(os.path.join(ctx.work, out, "members.csv"), "rb") as a, \
                open(os.path.join(ctx.work, "one", "members.csv"), "rb") as b:
            check(a.read() == b.read(), f"{out}/members.csv differs from the direct run's")

    with h5py.File(one, "r") as f:
        counts = f["events/count"][()]
        check(counts[:, 0].min() == 0 and counts[:, 0].max() == 1 and counts[:, 1].max() >= 1,
              "the study must hold members that reach the horizontal, members that do not, and turns: "
              f"horizontal {counts[:, 0].min()}..{counts[:, 0].max()}, turns up to {counts[:, 1].max()}")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["events"].attrs["names"]]
        check(names == ["horizontal", "turn", "pushing"], f"the model's events, then the study's: {names}")
    ctx.run("run", "arm.toml", "-o", "checkpointed", "--checkpoint-every", "1000", "-q")
    same_as_direct("checkpointed")

    # Interrupted (SIGINT) once the journal holds a record, then resumed (one thread, a checkpoint every
    # 0.1 s): the interrupted results hold the finished members' events and none for the others.
    out = os.path.join(ctx.work, "killed")
    journal = os.path.join(out, "checkpoint.journal")
    p = subprocess.Popen([ctx.lockstep, "run", "arm.toml", "-o", "killed", "--threads", "1", "--checkpoint-every", "0.1",
                          "-q"], cwd=ctx.work, env=ctx.env)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline and not (
            os.path.exists(journal) and os.path.getsize(journal) > 4096):
        time.sleep(0.01)
    check(p.poll() is None, "the run ended before it could be interrupted (make the study larger)")
    p.send_signal(signal.SIGINT)
    check(p.wait(timeout=120) == 128 + signal.SIGINT, "an interrupted run exits with 128 + SIGINT")
    check(os.path.exists(os.path.join(out, "checkpoint")) and not os.path.exists(os.path.join(out, "results.h5")),
          "an interrupted run leaves its checkpoint and no results")
    with h5py.File(os.path.join(out, "interrupted-results.h5"), "r") as f, h5py.File(one, "r") as g:
        counts, expected = f["events/count"][()], g["events/count"][()]
        done = int(f.attrs["members_finished"])
        check(0 < done < len(counts), f"{done} of {len(counts)} members finished before the interrupt")
        check(np.array_equal(counts[:done], expected[:done]) and not counts[done:].any(),
              "the interrupted results hold the finished members' event counts and none for the rest")
    r = ctx.run("run", "--resume", "killed")
    check("resuming" in r.stderr, f"the run must resume from its checkpoint:\n{r.stderr}")
    same_as_direct("killed")

    if not ctx.mpirun:
        print("model_files_test: no mpirun; the MPI part skipped")
        return
    for ranks in (2, 3):
        ctx.run(command=[ctx.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(ranks), ctx.lockstep, "run",
                         "arm.toml", "-o", f"ranks{ranks}", "-q"])
        same_as_direct(f"ranks{ranks}")


def case_cuda(ctx):
    double_pendulum_copy(ctx)
    ctx.write("mine.toml", STUDY.format(model='source = "copied_pendulum.hpp"'))
    # LOCKSTEP_NVCC empty: no device compile, whether or not this build has the CUDA toolkit (a CPU
    # test never runs nvcc); the refusal must say why and what to use instead.
    ctx.env["LOCKSTEP_NVCC"] = ""
    r = ctx.run("run", "mine.toml", "-o", "gpu", "--backend", "cuda", expect=2)
    check("no CUDA toolkit" in r.stderr and "model file" in r.stderr and "--backend omp" in r.stderr,
          f"--backend cuda must say why not:\n{r.stderr}")
    check(not os.path.exists(os.path.join(ctx.work, "gpu")), "nothing is written")


def equations_file(ctx, name):
    if name == "andrews.toml":  # the multibody benchmark library's A03 lives with its examples
        return os.path.join(ctx.source, "examples", "mbs", "a03_andrews.toml")
    return os.path.join(ctx.source, "tests", "model_files", "equations", name)


# ggl for the reason given at SLIDER_CRANK below: on index 3 andrews' velocities (|v| ~ 1e3) move by
# 200 times 10 (atol + rtol |v|) when one step decision flips.
ANDREWS = """[model]
{model}
[solver]
formulation = "ggl"
rtol = {rtol}
atol = {rtol}
[time]
t1 = 0.03
save = {{ every = 0.003 }}
[ensemble]
members = 8
vary = {{ "params.c0" = {{ uniform = [4400.0, 4700.0] }} }}
[output]
trajectories = true
"""


# On ggl the velocities are differential components under full error control (on index 3 Radau IIA
# weighs their error by h, and a flipped step decision moves them by more than rtol: docs/METHODS.md).
SLIDER_CRANK = """[model]
{model}
[solver]
formulation = "ggl"
rtol = {rtol}
atol = {rtol}
[time]
t1 = 0.5
save = {{ every = 0.05 }}
[ensemble]
vary = {{ "initial.omega0" = {{ grid = [50.0, 100.0, 150.0, 200.0] }} }}
[output]
trajectories = true
"""


def case_equations_andrews(ctx):
    for label, study, rtol in (("andrews", ANDREWS, 1e-5), ("andrews", ANDREWS, 1e-8),
                               ("slider_crank", SLIDER_CRANK, 1e-6), ("slider_crank", SLIDER_CRANK, 1e-9)):
        ctx.write("builtin.toml", study.format(model=f'name = "{label}"', rtol=rtol))
        ctx.write("equations.toml", study.format(model=f'source = "{equations_file(ctx, label + ".toml")}"', rtol=rtol))
        r = ctx.run("run", "equations.toml", "-o", f"equations-{label}-{rtol}")
        first = rtol in (1e-5, 1e-6)
        check(compiles(r) == (1 if first else 0), f"one compile per model over both tolerances:\n{r.stderr}")
        ctx.run("run", "builtin.toml", "-o", f"builtin-{label}-{rtol}")
        a, b = (datasets(os.path.join(ctx.work, f"{kind}-{label}-{rtol}", "results.h5")) for kind in ("equations", "builtin"))
        check((a["members/status"] == b["members/status"]).all(), "statuses differ")
        check((a["members/status"] == 1).all(), f"every member succeeds: {a['members/status']}")
        for group in ("q", "v"):
            x, y = a[group], b[group]
            bound = 10 * (rtol + rtol * np.abs(y))
            worst = np.max(np.abs(x - y) / bound)
            check(worst <= 1.0, f"{label}, rtol {rtol}: {group} differs by {worst:.3g} of 10 (atol + rtol |y|)")
            print(f"equations: {label}, rtol {rtol}, {group}: largest difference {worst:.3g} of 10 (atol + rtol |y|)")


def case_equations_errors(ctx):
    for name, pattern in (("typo.toml", r"typo\.toml:\d+:\d+: error: "),
                          ("unknown_symbol.toml", r"unknown_symbol\.toml:17:\d+: error: .*thta1.*theta1")):
        ctx.write("study.toml", f'[model]\nsource = "{equations_file(ctx, name)}"\n[time]\nt1 = 1.0\n')
        r = ctx.run("run", "study.toml", "-o", "never", expect=2)
        check(re.search(pattern, r.stderr), f"{name}: the equations file's line and column expected:\n{r.stderr}")
        check(compiles(r) == 0 and not ctx.engines(), f"{name}: no compiler may run:\n{r.stderr}")
        check(not os.path.exists(os.path.join(ctx.work, "never")), "nothing is written")
    # A source named relative to the study (resolved to an absolute path inside) is shown in the
    # generator's message as the user named it from the working directory, not as /abs/path.
    os.makedirs(os.path.join(ctx.work, "mine"), exist_ok=True)
    shutil.copy(equations_file(ctx, "unknown_symbol.toml"), os.path.join(ctx.work, "mine", "unknown_symbol.toml"))
    ctx.write("relative.toml", '[model]\nsource = "mine/unknown_symbol.toml"\n[time]\nt1 = 1.0\n')
    r = ctx.run("run", "relative.toml", "-o", "never", expect=2)
    check(re.search(r'source = "mine/unknown_symbol\.toml": mine/unknown_symbol\.toml:17:\d+: error: ', r.stderr)
          and ctx.work not in r.stderr, f"the equations file as the user named it expected:\n{r.stderr}")


FEATURES = """[model]
{model}
[time]
t1 = 20.0
save = {{ every = 0.5 }}
[ensemble]
members = 96
sampler = "lhs"
vary = {{ "initial.theta1" = {{ uniform = [0.5, 2.5] }}, "params.m2" = {{ lognormal = {{ mu = 0.0, sigma = 0.1 }} }} }}
[output]
statistics = ["mean", "std", "q05", "q95"]
[lyapunov]
exponents = 2
renormalize = 1.0
history = true
"""


def interrupted_run(ctx, study, out):
    """Runs the study with checkpoints and stops it with SIGINT once its first checkpoint exists;
    True when a checkpoint was left to resume (False: the run finished before the signal, which the
    caller treats as a failure)."""
    import signal
    import time

    command = [ctx.lockstep, "run", study, "-o", out, "-q", "--checkpoint-every", "0.01", "--chunk-size", "8"]
    p = subprocess.Popen(command, cwd=ctx.work, env=ctx.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    checkpoint = os.path.join(ctx.work, out, "checkpoint")
    deadline = time.monotonic() + 120
    while p.poll() is None and not os.path.exists(checkpoint) and time.monotonic() < deadline:
        time.sleep(0.002)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=300)
    return p.returncode in (130, -signal.SIGINT) and os.path.exists(checkpoint)


def case_study_features(ctx):
    double_pendulum_copy(ctx)
    ctx.write("mine.toml", FEATURES.format(model='source = "copied_pendulum.hpp"'))
    ctx.write("builtin.toml", FEATURES.format(model='name = "double_pendulum"'))
    ctx.run("run", "builtin.toml", "-o", "builtin", "-q")
    ctx.run("run", "mine.toml", "-o", "mine", "-q")
    reference = os.path.join(ctx.work, "builtin", "results.h5")
    with h5py.File(reference, "r") as f:
        check("lyapunov/exponents" in f and "statistics/q95/q" in f, "the study writes /lyapunov and the quantiles")
    assert_same_results(os.path.join(ctx.work, "mine", "results.h5"), reference)
    # Interrupted and resumed: the same bits. The run takes about a second in 12 chunks and the signal
    # follows its first checkpoint within milliseconds: a run that finished first fails the case.
    check(interrupted_run(ctx, "mine.toml", "resumed"), "the run must be stopped after its first checkpoint")
    ctx.run("run", "--resume", "resumed", "-q")
    assert_same_results(os.path.join(ctx.work, "resumed", "results.h5"), reference)
    # A checkpoint of the model file as it was; the file changes; --resume refuses to continue. The
    # study runs 100 times longer, never to its end.
    ctx.write("slow.toml", FEATURES.format(model='source = "copied_pendulum.hpp"').replace("t1 = 20.0", "t1 = 2000.0"))
    check(interrupted_run(ctx, "slow.toml", "edited"), "the long run must be stopped after its first checkpoint")
    header = os.path.join(ctx.work, "copied_pendulum.hpp")
    text = open(header).read()
    edited = text.replace('{"m2", 1.0,', '{"m2", 1.25,')
    check(edited != text, "the copied header's default of m2 changed shape")
    open(header, "w").write(edited)
    r = ctx.run("run", "--resume", "edited", expect=2)
    check("another version of the model file" in r.stderr, f"an edited model file must be refused:\n{r.stderr}")
    open(header, "w").write(text)
    r = ctx.run("plot", os.path.join(ctx.work, "mine", "results.h5"), "-o", os.path.join(ctx.work, "figures"))
    figures = os.listdir(os.path.join(ctx.work, "figures"))
    check(any(f.startswith("band_") for f in figures) and any("lyapunov" in f for f in figures),
          f"plots of the trajectories' statistics and of the Lyapunov estimates expected: {figures}")


def case_heavy_top(ctx):
    study = os.path.join(ctx.source, "examples", "models", "heavy_top_spin.toml")
    ctx.run("run", study, "-o", "top")
    with h5py.File(os.path.join(ctx.work, "top", "results.h5"), "r") as f:
        q, v = f["q"][()], f["v"][()]
        params = {"mass": 1.0, "l": 0.04, "A": 2.0e-3, "C": 1.0e-3, "g": 9.81}
    check(q.shape[0] == 16 and q.shape[2] == 4, f"16 members of 4 coordinates expected: {q.shape}")
    J = np.diag([params["A"], params["A"], params["C"]])

    def body_map(e):  # w' = 2 L(e) e' (Haug 1989, section 6.3)
        e0, e1, e2, e3 = e
        return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])

    energy_drift = spin_drift = vertical_drift = norm_error = 0.0
    for i in range(q.shape[0]):
        e0, e1, e2, e3 = (q[i, :, j] for j in range(4))
        w = np.array([2.0 * body_map(q[i, s]) @ v[i, s] for s in range(q.shape[1])])
        height = e0 ** 2 - e1 ** 2 - e2 ** 2 + e3 ** 2
        energy = 0.5 * np.einsum("si,ij,sj->s", w, J, w) + params["mass"] * params["g"] * params["l"] * height
        energy_drift = max(energy_drift, np.max(np.abs(energy - energy[0])) / abs(energy[0]))
        # The angular momentum about the vertical, (A(e) J' w')_z with the rotation matrix's third row
        # (Haug 1989, section 6.3): gravity has no moment about the vertical through the fixed point.
        row3 = np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), height], axis=1)
        vertical = np.einsum("si,si->s", row3, w @ J)
        vertical_drift = max(vertical_drift, np.max(np.abs(vertical - vertical[0])) / np.max(np.abs(w @ J)))
        spin_drift = max(spin_drift, np.max(np.abs(w[:, 2] - w[0, 2])) / abs(w[0, 2]))
        norm_error = max(norm_error, np.max(np.abs(np.einsum("si,si->s", q[i], q[i]) - 1.0)))
    # rtol = 1e-8 in the study: drifts of a few 1e-8 (1e-7 measured); a wrong gyroscopic term would
    # give O(1).
    check(energy_drift < 1e-6, f"energy drifts by {energy_drift:.3g} (relative)")
    check(spin_drift < 1e-6, f"the spin about the symmetry axis drifts by {spin_drift:.3g} (relative)")
    check(vertical_drift < 1e-6, f"the angular momentum about the vertical drifts by {vertical_drift:.3g}")
    check(norm_error < 1e-7, f"|e|^2 - 1 reaches {norm_error:.3g}")
    print(f"heavy_top: energy drift {energy_drift:.3g}, spin drift {spin_drift:.3g}, vertical angular momentum drift "
          f"{vertical_drift:.3g}, |e|^2 - 1 {norm_error:.3g}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lockstep", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--mpirun", default="")
    parser.add_argument("--cxx-id", default="", help="CMAKE_CXX_COMPILER_ID of the build")
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix=f"lockstep-model-files-{args.case}-")
    try:
        CASES[args.case](Context(args, work))
    except Failure as e:
        print(f"model_files_test {args.case}: FAILED: {e}", file=sys.stderr)
        print(f"(work directory kept: {work})", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"model_files_test {args.case}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
