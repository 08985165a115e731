#!/usr/bin/env python3
"""The table of results.h5 (host/io/results_file_layout.hpp) against the files `lockstep run` writes.

Reads the table from the header's source (its initializer list of string literals), runs small studies
with built-in models that between them write every object the writer can (trajectories on and off,
GGL's mu and a velocity constraint's nu, exact and sketched quantiles, sobol replicates, the rho_inf
method, a grid, [lyapunov] with qr and history and with clone without, failing members, a run under
mpirun on two ranks, and a checkpointed run stopped by SIGINT, which writes interrupted-results.h5),
walks every file's groups, datasets and attributes with h5py, and checks both ways:

* every object in a file matches an entry of the table (an entry without a placeholder before one
  with), of the entry's kind; datasets and attributes of its type and of its shape, each named
  dimension the size the file implies (member: /@members, save: /t, q: /@n, ...);
* every entry of the table is held by at least one of the files.

Then it checks itself: the table with a made-up entry added, and with a real one taken out, must each
fail. About two seconds on two cores, the MPI and the interrupted runs included.

Usage: results_file_layout_check.py LOCKSTEP [--mpirun PATH] [--source-dir DIR] [--layout HEADER]
                                    [--keep DIR]
--mpirun: the mpirun of the MPI lockstep links; without it (or when empty) the entries only a run on
several ranks writes are reported as not checked. Exits 0 on success, 1 on a mismatch, 77 (skip)
when h5py or numpy is missing.
"""

import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import h5py
    import numpy as np
except ImportError as e:  # Debian's python3-h5py and python3-numpy (install-deps.sh)
    print(f"results_file_layout_check: skipped: {e}")
    sys.exit(77)

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
LAYOUT_HEADER = "host/io/results_file_layout.hpp"
STATUS_HEADER = "include/lockstep/core/status.hpp"

KINDS = {"group", "dataset", "attribute"}
TYPES = {"float64": np.dtype("<f8"), "int32": np.dtype("<i4"), "int64": np.dtype("<i8"), "uint8": np.dtype("u1"),
         "string": None}
DIMENSIONS = {"member", "save", "q", "lambda", "nu", "state", "quantity", "value", "input", "grid", "code", "exponent", "estimate", "event",
              "record", "quantile"}
# Entries only a particular run writes, and the run (a key of Run.provides) that must hold them.
NEEDS_RUN = {"/@mpi_ranks": "mpi"}


class LayoutError(Exception):
    pass


# ---- the table, from the header's source ----------------------------------------------------------

TOKEN = re.compile(r'''
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>[{},])
''', re.X | re.S)
ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "'": "'"}


def unescape(literal, line):
    def one(m):
        c = m.group(1)
        if c not in ESCAPES:
            raise LayoutError(f"line {line}: escape \\{c} in a string literal: the parser reads only \\\" \\\\ \\n \\t \\'")
        return ESCAPES[c]
    return re.sub(r"\\(.)", one, literal[1:-1])


def parse_layout(text, name=LAYOUT_HEADER):
    """The entries of `results_file_layout` as dicts with path, kind, type, shape, when, meaning."""
    start = re.search(r"\bresults_file_layout\s*\[\s*\]\s*=\s*\{", text)
    if not start:
        raise LayoutError(f"{name}: no `results_file_layout[] = {{` found")
    pos = start.end()
    line_of = lambda p: text.count("\n", 0, p) + 1  # noqa: E731
    tokens = []  # (kind, value, line) up to the list's closing brace
    depth = 1
    while depth > 0:
        m = TOKEN.match(text, pos)
        if not m:
            raise LayoutError(f"{name}:{line_of(pos)}: the parser reads only string literals, braces, commas and "
                              f"comments in the table, not {text[pos:pos + 30]!r}")
        pos = m.end()
        if m.lastgroup in ("space", "comment"):
            continue
        value = m.group(m.lastgroup)
        if value == "{":
            depth += 1
        elif value == "}":
            depth -= 1
        if depth > 0:
            tokens.append((m.lastgroup, value, line_of(m.start())))
    if not re.match(r"\s*;", text[pos:]):
        raise LayoutError(f"{name}:{line_of(pos)}: the table's closing brace is not followed by ';'")

    fields = ("path", "kind", "type", "shape", "when", "meaning")
    entries, i = [], 0
    while i < len(tokens):
        kind, value, line = tokens[i]
        if value != "{":
            raise LayoutError(f"{name}:{line}: expected '{{' to open an entry, found {value!r}")
        i += 1
        values = []
        while True:
            parts = []
            while i < len(tokens) and tokens[i][0] == "string":
                parts.append(unescape(tokens[i][1], tokens[i][2]))
                i += 1
            if not parts:
                raise LayoutError(f"{name}:{line}: an entry's field is not a string literal")
            values.append("".join(parts))
            if i < len(tokens) and tokens[i][1] == ",":
                i += 1
            if i < len(tokens) and tokens[i][1] == "}":
                i += 1
                break
            if i >= len(tokens):
                raise LayoutError(f"{name}:{line}: an entry is not closed")
        if len(values) != len(fields):
            raise LayoutError(f"{name}:{line}: an entry has {len(values)} fields, not {len(fields)}: {values[:1]}")
        entry = dict(zip(fields, values))
        entry["line"] = line
        entries.append(entry)
        if i < len(tokens):
            if tokens[i][1] != ",":
                raise LayoutError(f"{name}:{tokens[i][2]}: expected ',' after an entry, found {tokens[i][1]!r}")
            i += 1
    if not entries:
        raise LayoutError(f"{name}: the table has no entries")
    return entries


def check_entries(entries):
    """The table's own consistency; returns the entries with their path patterns compiled."""
    seen = {}
    for e in entries:
        where = f"{LAYOUT_HEADER}:{e['line']} {e['path']}"
        if e["path"] in seen:
            raise LayoutError(f"{where}: listed twice (also line {seen[e['path']]})")
        seen[e["path"]] = e["line"]
        if e["kind"] not in KINDS:
            raise LayoutError(f"{where}: kind {e['kind']!r} is not one of {sorted(KINDS)}")
        if not e["path"].startswith("/") or ("@" in e["path"]) != (e["kind"] == "attribute"):
            raise LayoutError(f"{where}: a path starts with '/', and names an attribute with '@' exactly when the "
                              "entry is one")
        if not e["when"].strip() or not e["meaning"].strip():
            raise LayoutError(f"{where}: 'when' and 'meaning' must not be empty")
        if e["kind"] == "group":
            if e["type"] or e["shape"]:
                raise LayoutError(f"{where}: a group has neither type nor shape")
            e["dims"] = None
        else:
            if e["type"] not in TYPES:
                raise LayoutError(f"{where}: type {e['type']!r} is not one of {sorted(TYPES)}")
            if e["shape"] == "scalar":
                e["dims"] = []
            else:
                m = re.fullmatch(r"\[([a-z_]+(?:, [a-z_]+)*)\]", e["shape"])
                if not m:
                    raise LayoutError(f"{where}: shape {e['shape']!r} is neither 'scalar' nor '[dim, ...]'")
                e["dims"] = m.group(1).split(", ")
                unknown = [d for d in e["dims"] if d not in DIMENSIONS]
                if unknown:
                    raise LayoutError(f"{where}: unknown dimension(s) {unknown}; known: {sorted(DIMENSIONS)}")
        owner = e["path"].split("@")[0] if e["kind"] == "attribute" else None
        if owner is not None and owner not in seen:
            raise LayoutError(f"{where}: its owner {owner} is not an entry before it")
        e["placeholders"] = len(re.findall(r"(?:^|/)[A-Z][A-Z0-9_]*(?=$|/|@)", e["path"]))
        pattern = "".join("[^/@]+" if re.fullmatch(r"[A-Z][A-Z0-9_]*", part) else re.escape(part)
                          for part in re.split(r"([/@])", e["path"]))
        e["regex"] = re.compile(pattern + r"\Z")
    return entries


def entry_of(entries, path):
    """The entry whose pattern matches `path`, the one with the fewest placeholders first; None if none."""
    matches = [e for e in entries if e["regex"].match(path)]
    if not matches:
        return None
    fewest = min(e["placeholders"] for e in matches)
    best = [e for e in matches if e["placeholders"] == fewest]
    if len(best) > 1:
        raise LayoutError(f"{path} matches {[e['path'] for e in best]} alike")
    return best[0]


# ---- the studies -----------------------------------------------------------------------------------

def pendulum_varied(members):
    return f'[ensemble]\nmembers = {members}\n[ensemble.vary]\n"initial.theta0" = {{ uniform = [0.2, 0.6] }}\n'


class Run:
    def __init__(self, name, study, flags=(), provides=(), mpi=False, interrupt=False, results="results.h5", files=None):
        self.name, self.study, self.flags = name, study, list(flags)
        self.provides, self.mpi, self.interrupt, self.results = set(provides), mpi, interrupt, results
        self.files = files or {}  # beside the study: name -> text


# The knife edge with events and derived quantities (a model header): /events, with /events/nu (k = 1),
# and the quantities' datasets.
KNIFE_EDGE_EVENTS = """
#include <cmath>

#include "lockstep/model/knife_edge.hpp"
struct knife_edge_events {
  using base = lockstep::models::knife_edge;
  template <class T, int N> using vec = lockstep::vec<T, N>;
  static constexpr const char* name = "knife_edge_events";
  static constexpr const char* description = "the built-in knife edge with two events";
  static constexpr int n = base::n, m = base::m, k = base::k, n_params = base::n_params, n_inputs = base::n_inputs;
  static constexpr const auto& params = base::params;
  static constexpr const auto& inputs = base::inputs;
  static constexpr int n_events = 2;
  static constexpr lockstep::event_declaration events[n_events] = {
      {"half_turn", lockstep::event_direction::rising, lockstep::event_action::record, "theta passes pi/2"},
      {"heading", lockstep::event_direction::both, lockstep::event_action::count, "sin(theta) changes sign"}};
  template <class T, class P>
  LOCKSTEP_HD static auto mass(const vec<T, n>& q, const P* p) { return base::mass<T, P>(q, p); }
  template <class T, class P>
  LOCKSTEP_HD static auto force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    return base::force<T, P>(t, q, v, p);
  }
  template <class T, class P>
  LOCKSTEP_HD static auto constraint(const T& t, const vec<T, n>& q, const P* p) { return base::constraint<T, P>(t, q, p); }
  template <class T, class P>
  LOCKSTEP_HD static auto nonholonomic(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    return base::nonholonomic<T, P>(t, q, v, p);
  }
  static constexpr int n_quantities = 2;
  static constexpr lockstep::quantity_declaration quantities[n_quantities] = {
      {"speed", "m/s, the edge's speed"}, {"side_force", "N, the velocity constraint's multiplier"}};
  static void quantity_values(double, const vec<double, n>&, const vec<double, n>& v, const vec<double, n>&,
                              const vec<double, m>&, const vec<double, k>& nu, const double*, double* z) {
    z[0] = std::sqrt(v[0] * v[0] + v[1] * v[1]);
    z[1] = nu[0];
  }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const P*) {
    vec<T, n_events> g;
    g[0] = q[2] - 1.5707963267948966;
    g[1] = sin(q[2]);
    return g;
  }
  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    base::initial_state(p, in, q0, v0);
  }
};
"""


RUNS = [
    # Trajectories with GGL's mu; exact quantiles (their probability attribute).
    Run("trajectories_ggl", """
[model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "ggl"
[time]
t1 = 0.5
save = { every = 0.1 }
""" + pendulum_varied(4) + """
[output]
trajectories = true
statistics = ["mean", "q50"]
"""),
    # A velocity constraint (k = 1: /nu), the rho_inf method, randomized Sobol' with replicates, whose
    # exceedance intervals come from them (/exceedance@replicates).
    Run("knife_edge_rhoinf_sobol", """
[model]
name = "knife_edge"
[solver]
method = "rhoinf"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble]
sampler = "sobol"
members = 2
replicates = 2
[ensemble.vary]
"initial.omega0" = { uniform = [1.0, 3.0] }
"params.alpha" = { normal = { mean = 0.3, std = 0.05 } }
[output]
trajectories = true
statistics = ["mean", "std"]
exceedance = { x = 0.0 }
"""),
    # No trajectories; every kind of statistic, quantiles from the sketch (members x save times x Y
    # doubles exceed quantile_memory_mb).
    Run("sketched_quantiles", """
[model]
name = "pendulum"
[time]
t1 = 0.5
save = { every = 0.001 }
""" + pendulum_varied(48) + """
[output]
statistics = ["mean", "std", "min", "max", "q05", "q97.5"]
quantile_memory_mb = 1
"""),
    # Members that fail (status max_steps): the same objects, with their values.
    Run("failing_members", """
[model]
name = "pendulum"
[solver]
max_steps = 5
[time]
t1 = 1.0
""" + pendulum_varied(3)),
    # A grid (grid_shape, grid_dims) and [lyapunov] qr with history.
    Run("grid_lyapunov_qr", """
[model]
name = "pendulum"
[time]
t1 = 1.0
save = { every = 0.5 }
[ensemble]
sampler = "grid"
[ensemble.vary]
"initial.theta0" = { grid = [0.3, 0.6] }
"params.L" = { grid = [1.0, 1.5] }
[output]
statistics = ["mean"]
[lyapunov]
renormalize = 0.25
"""),
    # [lyapunov] clone (separation) without history; no varied input (V = 0).
    Run("lyapunov_clone", """
[model]
name = "pendulum"
[time]
t1 = 1.0
[ensemble]
members = 2
[output]
statistics = ["max"]
[lyapunov]
method = "clone"
renormalize = 0.5
history = false
"""),
    # [sensitivity] with second-order indices and the bootstrap, of a velocity constraint (nu); and with
    # intervals from 10 replicates, on GGL (mu), of the Lyapunov exponents too.
    Run("sensitivity_second_order", """
[model]
name = "knife_edge"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble.vary]
"initial.omega0" = { uniform = [1.0, 3.0] }
"params.alpha" = { uniform = [0.2, 0.4] }
[output]
exceedance = { x = 0.1, "v.theta" = 0.5 }
[sensitivity]
base = 4
second_order = true
resamples = 10
"""),
    Run("sensitivity_replicates_ggl", """
[model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "ggl"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble]
replicates = 10
[ensemble.vary]
"initial.theta0" = { uniform = [0.2, 0.6] }
[lyapunov]
renormalize = 0.25
[sensitivity]
base = 2
"""),
    # [derivative_measures] of a velocity constraint (nu) on index 3, and on GGL (mu) with a parameter that
    # moves the initial state (L).
    Run("derivative_measures_index3", """
[model]
name = "knife_edge"
[time]
t1 = 0.5
[ensemble]
members = 4
[ensemble.vary]
"initial.omega0" = { uniform = [1.0, 3.0] }
"params.alpha" = { uniform = [0.2, 0.4] }
[derivative_measures]
"""),
    Run("derivative_measures_ggl", """
[model]
name = "pendulum"
[solver]
method = "bdf"
formulation = "ggl"
[time]
t1 = 0.5
[ensemble]
members = 4
[ensemble.vary]
"initial.theta0" = { uniform = [0.2, 0.6] }
"params.L" = { normal = { mean = 1.0, std = 0.1 } }
[derivative_measures]
"""),
    # Method auto: the explicit method's counters.
    Run("auto_method", """
[model]
name = "pendulum"
[solver]
method = "auto"
[time]
t1 = 0.5
""" + pendulum_varied(2)),
    # A model header with events and a velocity constraint: /events with /events/nu, and Sobol' points in
    # replicates, whose fractions' intervals come from them (/events@replicates).
    Run("events", """
[model]
source = "knife_edge_events.hpp"
[time]
t1 = 2.0
[ensemble]
members = 2
sampler = "sobol"
replicates = 2
[ensemble.vary]
"initial.omega0" = { uniform = [1.0, 3.0] }
[events]
records = 3
""", files={"knife_edge_events.hpp": KNIFE_EDGE_EVENTS}),
    # The same model's quantities in trajectories, statistics, exceedance and sensitivity indices.
    Run("quantities", """
[model]
source = "knife_edge_events.hpp"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble.vary]
"initial.omega0" = { uniform = [1.0, 3.0] }
[output]
trajectories = true
statistics = ["mean"]
exceedance = { speed = 1.0 }
[sensitivity]
base = 2
resamples = 10
""", files={"knife_edge_events.hpp": KNIFE_EDGE_EVENTS}),
    # Two MPI ranks: the root attribute mpi_ranks.
    Run("mpi_two_ranks", """
[model]
name = "pendulum"
[time]
t1 = 0.5
""" + pendulum_varied(4), mpi=True, provides={"mpi"}),
    # A checkpointed run stopped by SIGINT: interrupted-results.h5 (complete, members_finished, statistics).
    Run("interrupted", """
[model]
name = "pendulum"
[time]
t1 = 2.0
save = { every = 0.5 }
""" + pendulum_varied("MEMBERS") + """
[output]
statistics = ["mean"]
""", flags=["--threads", "1", "--checkpoint-every", "0.5"], interrupt=True, results="interrupted-results.h5"),
]


def run_study(lockstep, mpirun, run, folder):
    """Runs `run` in `folder`; returns the results file's path (None when the run is not possible here)."""
    folder.mkdir(parents=True)
    out = folder / "out"
    if run.interrupt:
        return run_interrupted(lockstep, run, folder)
    (folder / "s.toml").write_text(run.study)
    for name, text in run.files.items():
        (folder / name).write_text(text)
    command = [lockstep, "run", "s.toml", "-o", "out", "-q"] + run.flags
    if run.mpi:
        if not mpirun:
            return None
        command = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2"] + command
    p = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if p.returncode not in (0, 1):  # 1: some member failed, every result written
        raise LayoutError(f"study {run.name}: `{' '.join(command)}` exited with {p.returncode}:\n"
                          f"{p.stdout.decode(errors='replace')[-2000:]}")
    return out / run.results


def run_interrupted(lockstep, run, folder):
    """SIGINT once the run is past its first checkpoint and has journaled a chunk (its handlers are in
    place then), so that it stops at the next chunk and writes interrupted-results.h5. A run that
    finished first is tried again with more members."""
    members = 8000
    for attempt in range(3):
        work = folder / f"attempt{attempt}"
        work.mkdir()
        (work / "s.toml").write_text(run.study.replace("MEMBERS", str(members)))
        out = work / "out"
        p = subprocess.Popen([lockstep, "run", "s.toml", "-o", "out", "-q"] + run.flags, cwd=work,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        checkpoint, journal = out / "checkpoint", out / "checkpoint.journal"
        deadline = time.monotonic() + 60
        while p.poll() is None and not checkpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        size = journal.stat().st_size if journal.exists() else 0
        while p.poll() is None and (not journal.exists() or journal.stat().st_size <= size) and time.monotonic() < deadline:
            time.sleep(0.001)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if p.returncode == 128 + signal.SIGINT and (out / run.results).exists():
            return out / run.results
        if p.returncode not in (0, -signal.SIGINT):
            raise LayoutError(f"study {run.name}: the checkpointed run exited with {p.returncode}:\n"
                              f"{err.decode(errors='replace')[-2000:]}")
        members *= 4
    raise LayoutError(f"study {run.name}: three runs finished before SIGINT stopped them")


# ---- the files -------------------------------------------------------------------------------------

def objects_of(path):
    """Every object of the file: (path, kind, dtype, shape) with '@' paths for attributes."""
    found = []

    def attributes(owner, obj):
        for name in obj.attrs:
            a = h5py.h5a.open(obj.id, name.encode())
            found.append((("/@" if owner == "/" else owner + "@") + name, "attribute", a.dtype, tuple(a.shape)))

    with h5py.File(path, "r") as f:
        found.append(("/", "group", None, None))
        attributes("/", f)

        def visit(name, obj):
            p = "/" + name
            if isinstance(obj, h5py.Dataset):
                found.append((p, "dataset", obj.dtype, tuple(obj.shape)))
            elif isinstance(obj, h5py.Group):
                found.append((p, "group", None, None))
            else:
                found.append((p, f"other ({type(obj).__name__})", None, None))
            attributes(p, obj)

        f.visititems(visit)
        sizes = dimension_sizes(f)
    return found, sizes


def dimension_sizes(f):
    """The size of each named dimension in this file (absent where the file does not say)."""
    attrs = f.attrs
    sizes = {"code": status_count()}
    if "members" in attrs:
        sizes["member"] = int(attrs["members"])
    if "t" in f:
        sizes["save"] = f["t"].shape[0]
    if all(k in attrs for k in ("n", "m", "k")):
        n, m, k = (int(attrs[x]) for x in ("n", "m", "k"))
        quantities = len(attrs["quantity_names"]) if "quantity_names" in attrs else 0
        sizes.update(q=n, **{"lambda": m}, nu=k, state=2 * n + 2 * m + k, quantity=quantities,
                     value=2 * n + 2 * m + k + quantities)
    if "members/inputs" in f:
        inputs = f["members/inputs"].attrs
        if "names" in inputs:
            sizes["input"] = len(inputs["names"])
        if "grid_shape" in inputs:
            sizes["grid"] = len(inputs["grid_shape"])
    if "events" in f:
        ev = f["events"].attrs
        if "names" in ev:
            sizes["event"] = len(ev["names"])
        if "capacity" in ev:
            sizes["record"] = int(ev["capacity"])
        if "quantiles" in ev:
            sizes["quantile"] = len(ev["quantiles"])
    if "lyapunov" in f:
        ly = f["lyapunov"].attrs
        if "exponents" in ly:
            sizes["exponent"] = int(ly["exponents"])
        if "history_length" in ly:
            sizes["estimate"] = int(ly["history_length"])
    return sizes


def status_count():
    m = re.search(r"member_status_count\s*=\s*(\d+)", (SOURCE_DIR / STATUS_HEADER).read_text())
    if not m:
        raise LayoutError(f"{STATUS_HEADER}: no member_status_count")
    return int(m.group(1))


def type_matches(name, dtype):
    if name == "string":
        info = h5py.check_string_dtype(dtype)
        return info is not None and info.length is None and info.encoding == "utf-8"
    return dtype == TYPES[name]


def compare(entries, files, not_checked=()):
    """The mismatches between the table and the files' objects, both ways, as lines."""
    errors, held = [], {e["path"]: [] for e in entries}
    for label, (objects, sizes) in files.items():
        for path, kind, dtype, shape in objects:
            e = entry_of(entries, path)
            if e is None:
                errors.append(f"{label}: {path} ({kind}) is not in the table")
                continue
            held[e["path"]].append(label)
            if kind != e["kind"]:
                errors.append(f"{label}: {path} is a {kind}, the table's {e['path']} a {e['kind']}")
                continue
            if kind == "group":
                continue
            if not type_matches(e["type"], dtype):
                errors.append(f"{label}: {path} has type {dtype}, the table says {e['type']}")
            if len(shape) != len(e["dims"]):
                errors.append(f"{label}: {path} has shape {shape}, the table says {e['shape']}")
                continue
            for d, (dim, size) in enumerate(zip(e["dims"], shape)):
                if dim not in sizes:
                    errors.append(f"{label}: {path}: the file does not say the size of dimension {dim}")
                elif sizes[dim] != size:
                    errors.append(f"{label}: {path} has shape {shape}: dimension {d} ({dim}) should be {sizes[dim]}")
    for e in entries:
        if not held[e["path"]] and e["path"] not in not_checked:
            errors.append(f"{LAYOUT_HEADER}:{e['line']}: {e['path']} ({e['kind']}) is in no file the studies wrote")
    return errors, held


def self_check(text, files, not_checked):
    """The check must fail on a table with a made-up entry and on one without a real entry."""
    problems = []
    bogus = '    {"/members/made_up", "dataset", "int64", "[member]", "always", "Made up."},\n'
    opening = re.search(r"results_file_layout\s*\[\s*\]\s*=\s*\{\n", text)
    with_bogus = text[:opening.end()] + bogus + text[opening.end():]
    # An entry on one line of its own, to take out.
    real = re.search(r'^ *\{"/members/rank_changes",[^\n]*\},\n', text, re.M)
    if not real:
        return ["self-check: the entry /members/rank_changes is not on one line of its own"]
    without = text[:real.start()] + text[real.end():]
    for what, table, expect in (("a made-up entry added", with_bogus, "/members/made_up"),
                                ("/members/rank_changes taken out", without, "/members/rank_changes")):
        errors, _ = compare(check_entries(parse_layout(table)), files, not_checked)
        if not any(expect in line for line in errors):
            problems.append(f"self-check: with {what}, the check did not fail on {expect}")
    return problems


def main():
    global SOURCE_DIR
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lockstep", help="the lockstep binary")
    parser.add_argument("--mpirun", default="", help="mpirun of the MPI lockstep links (empty: no MPI run)")
    parser.add_argument("--source-dir", type=pathlib.Path, default=SOURCE_DIR)
    parser.add_argument("--layout", type=pathlib.Path, help=f"the table's header (default: SOURCE/{LAYOUT_HEADER})")
    parser.add_argument("--keep", type=pathlib.Path, help="write the studies' outputs here and keep them")
    args = parser.parse_args()
    SOURCE_DIR = args.source_dir.resolve()
    header = args.layout or SOURCE_DIR / LAYOUT_HEADER
    start = time.monotonic()
    try:
        text = header.read_text()
        entries = check_entries(parse_layout(text))
        work = args.keep or pathlib.Path(tempfile.mkdtemp(prefix="results_layout_"))
        if args.keep:
            shutil.rmtree(work, ignore_errors=True)
        files, skipped = {}, set()
        try:
            for run in RUNS:
                results = run_study(os.path.abspath(args.lockstep), args.mpirun, run, work / run.name)
                if results is None:
                    skipped |= run.provides
                    print(f"results_file_layout_check: {run.name} not run (no --mpirun)")
                    continue
                files[run.name] = objects_of(results)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
        not_checked = {path for path, needs in NEEDS_RUN.items() if needs in skipped}
        errors, held = compare(entries, files, not_checked)
        if not errors:
            errors = self_check(text, files, not_checked)
    except LayoutError as e:
        print(f"results_file_layout_check: {e}", file=sys.stderr)
        return 1
    objects = sum(len(o) for o, _ in files.values())
    if errors:
        print("\n".join(errors), file=sys.stderr)
        print(f"results_file_layout_check: FAILED: {len(errors)} mismatch(es) between {header} and the files",
              file=sys.stderr)
        return 1
    for path in sorted(not_checked):
        print(f"results_file_layout_check: {path} not checked: no run writes it here")
    print(f"results_file_layout_check: {len(entries)} entries, {objects} objects in {len(files)} files agree "
          f"both ways ({time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
