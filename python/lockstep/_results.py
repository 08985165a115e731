"""results.h5 (docs/RESULTS-FORMAT.md) as the Dataset of lockstep.solve, and studies run as by
`lockstep run`."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib

import h5py
import numpy as np
import xarray as xr
from xarray.backends import BackendArray
from xarray.core import indexing

from . import _dataset, _lockstep

RESULTS_FORMAT_VERSION = 1  # the version this package reads (host/io/results_h5.hpp, results_format_version)


class _H5Dataset(BackendArray):
    """One HDF5 dataset, read only when indexed: the file is opened for each read and closed again,
    so a Dataset holds no file handle and trajectories of any size cost nothing until used."""

    def __init__(self, path, name, shape, dtype):
        self.path, self.name, self.shape, self.dtype = path, name, shape, np.dtype(dtype)

    def __getitem__(self, key):
        # BASIC: h5py takes slices and integers; xarray applies any fancier indexing to what they read.
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._read)

    def _read(self, key):
        with h5py.File(self.path, "r") as f:
            return np.asarray(f[self.name][key])


def _lazy(path, dataset):
    return indexing.LazilyIndexedArray(_H5Dataset(path, dataset.name, dataset.shape, dataset.dtype))


def _attribute(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_attribute(v) for v in value] if value.dtype == object else value
    return value


def open_results(path):
    """A results.h5 file as an xarray.Dataset, the layout of lockstep.solve's.

    Member values (status, counters, final states, varied inputs) are read at once; trajectories
    (q, v, lam, mu, nu) and statistics are read from the file only when they are used, so the file
    must stay where it is while the Dataset is in use.

    Parameters
    ----------
    path : str or path-like
        The results.h5 file (docs/RESULTS-FORMAT.md).

    Returns
    -------
    xarray.Dataset
        The variables of ``lockstep.solve``'s Dataset that the file holds. Statistics come as
        ``<stat>_<group>`` [time, ...] ("mean_q", "q95_lam") and ``<stat>_count`` [time, state]. A
        study with [lyapunov] adds lyapunov_exponents [member, exponent], lyapunov_status,
        lyapunov_t_start, lyapunov_t_end (the interval each estimate averages over),
        lyapunov_renormalizations, lyapunov_steps and, when kept, the running estimates
        lyapunov_history_t [member, estimate] and lyapunov_history [member, estimate, exponent].
        A study with [output] exceedance adds exceedance_threshold [state] and exceedance_probability,
        exceedance_low, exceedance_high (its interval: Wilson's, or Student's from the replicates, as the
        attribute exceedance_interval says), exceedance_above and exceedance_count
        [time, state], in the state layout (q, v, lam, mu, nu), NaN where a value has no threshold.
        A study with [sensitivity] adds the indices sensitivity_first_q, sensitivity_total_q, ... and
        their intervals' half-widths sensitivity_first_conf_q, ... [time, coordinate, input] (the
        input coordinate names the varied inputs), with sensitivity_rows_used [time, state] and,
        with second_order, sensitivity_second [time, state, input, input2].
        A model with event functions adds the variables lockstep.solve gives it (event_count,
        event_first_time, event_records, stop_event, event_t, event_index, event_q, event_v,
        event_lam, event_nu; /events of docs/RESULTS-FORMAT.md), and the distribution of each event's
        first time over the members: event_fraction, event_fraction_low, event_fraction_high [time,
        event] (the interval's attributes: confidence, interval "wilson" or "replicates", replicates)
        and event_first_time_quantiles [probability, event] (the probability coordinate holds the
        quantiles' probabilities).
        A study with [derivative_measures] adds, for the final state at t1, derivative_nu_q,
        derivative_nu_stderr_q, derivative_total_bound_q, ... [coordinate, input] and
        derivative_variance, derivative_members_used [state].
        Root attributes of the file become the Dataset's, with t0 and t1 from the study it
        records, and results_path, the file's absolute path.

    Raises
    ------
    ValueError
        For a file that is not a lockstep results file, or one of another results format version
        than this lockstep reads (the message names both).
    """
    path = os.path.abspath(os.fspath(path))
    with h5py.File(path, "r") as f:
        attrs = {key: _attribute(value) for key, value in f.attrs.items()}
        if attrs.get("format", "lockstep-results") != "lockstep-results" or "t" not in f:
            raise ValueError(f"{path!r} is not a lockstep results file")
        version = attrs.get("format_version", 1)  # files before the attribute have version 1's layout
        if version != RESULTS_FORMAT_VERSION:
            raise ValueError(f"{path!r}: results format version {version} (written by lockstep "
                             f"{attrs.get('lockstep_version', '?')}); this lockstep reads version "
                             f"{RESULTS_FORMAT_VERSION} (docs/RESULTS-FORMAT.md)")
        time = f["t"][:]
        members = f["members"]
        N = int(members["status"].shape[0])
        trajectories = {}
        for name, dataset in (("q", "q"), ("v", "v"), ("lam", "lambda"), ("mu", "mu"), ("nu", "nu"),
                              ("quantities", "quantities")):
            if dataset in f:
                trajectories[name] = _lazy(path, f[dataset])
        counters = {name: members[name][:] for name in _dataset.MEMBER_COUNTERS + _dataset.EXPLICIT_COUNTERS
                    if name in members}
        inputs = {}
        if "inputs" in members:
            names = [_attribute(n) for n in members["inputs"].attrs.get("names", [])]
            values = members["inputs"][:]
            inputs = {name: values[:, j] for j, name in enumerate(names)}
        statistics = {}
        if "statistics" in f:
            for stat, group in f["statistics"].items():
                for part, dims in (("q", "coordinate"), ("v", "coordinate"), ("lambda", "constraint"),
                                   ("mu", "constraint"), ("nu", "nonholonomic"), ("quantities", "quantity"),
                                   ("count", "value")):
                    if part in group:
                        label = "lam" if part == "lambda" else part
                        extra = {"probability": float(group.attrs["probability"])} if "probability" in group.attrs else {}
                        statistics[f"{stat}_{label}"] = (("time", dims), _lazy(path, group[part]), extra)
        # The coordinate names label the coordinate dimension rather than repeat as an attribute.
        coordinate_names = attrs.pop("coordinate_names", None)
        # Likewise the quantities' names label the quantity dimension; their descriptions stay.
        quantity_names = attrs.pop("quantity_names", None)
        ds = _dataset.build(time=time, members=N, trajectories=trajectories, status=members["status"][:],
                            counters=counters, final_q=members["final_q"][:], final_v=members["final_v"][:],
                            inputs=inputs, attrs=attrs, statistics=statistics, coordinate_names=coordinate_names,
                            quantity_names=quantity_names)
        if "events" in f:
            e = f["events"]
            variables, coords = _dataset.event_variables(
                names=[_attribute(x) for x in e.attrs["names"]], directions=[_attribute(x) for x in e.attrs["directions"]],
                actions=[_attribute(x) for x in e.attrs["actions"]],
                descriptions=[_attribute(x) for x in e.attrs["descriptions"]], count=e["count"][()],
                first_time=e["first_time"][()], records=e["records"][()], stop_event=e["stop_event"][()],
                t=e["t"][()], event=e["event"][()], q=e["q"][()], v=e["v"][()], lam=e["lambda"][()],
                nu=e["nu"][()] if "nu" in e else None)
            ds = ds.assign(variables).assign_coords(coords)
            if "fraction" in e:  # the distribution over the members (not in interrupted-results.h5)
                # The interval's kind: "wilson", or "replicates" (from their spread, with their number).
                interval = {key: _attribute(e.attrs[key]) for key in ("confidence", "interval", "replicates")
                            if key in e.attrs}
                ds = ds.assign({"event_fraction": (("time", "event"), e["fraction"][()]),
                                "event_fraction_low": (("time", "event"), e["fraction_low"][()], interval),
                                "event_fraction_high": (("time", "event"), e["fraction_high"][()], interval),
                                "event_first_time_quantiles": (("probability", "event"), e["first_time_quantiles"][()])})
                ds = ds.assign_coords(probability=np.asarray(e.attrs["quantiles"], dtype=float))
        if "lyapunov" in f:
            ds = ds.assign(_lyapunov_variables(path, f["lyapunov"]))
        if "exceedance" in f:
            x = f["exceedance"]
            attrs_x = {f"exceedance_{key}": _attribute(value) for key, value in x.attrs.items()}
            ds = ds.assign({"exceedance_threshold": (("value",), x["threshold"][()], attrs_x)})
            for name in ("probability", "low", "high", "above", "count"):
                ds = ds.assign({f"exceedance_{name}": (("time", "value"), x[name][()], attrs_x)})
        if "sensitivity" in f:
            ds = ds.assign(_sensitivity_variables(f["sensitivity"])).assign_coords(
                input=[_attribute(n) for n in f["sensitivity"].attrs["inputs"]])
        if "derivative_measures" in f:
            ds = ds.assign(_derivative_variables(f["derivative_measures"])).assign_coords(
                input=[_attribute(n) for n in f["derivative_measures"].attrs["inputs"]])
    try:
        study = tomllib.loads(attrs.get("study", ""))
        ds.attrs.setdefault("t0", float(study.get("time", {}).get("t0", 0.0)))
    except (tomllib.TOMLDecodeError, TypeError, ValueError):
        pass
    if len(time):
        ds.attrs.setdefault("t1", float(time[-1]))  # t1 is always saved
    ds.attrs["results_path"] = path
    return ds


def _lyapunov_variables(path, group):
    """The /lyapunov group of a study with [lyapunov] (docs/RESULTS-FORMAT.md): per member the exponents,
    the status of its Lyapunov run and the interval [t_start, t_end] its estimate averages over (a run
    stopped by max_steps keeps the estimate it reached, so t_end < t1), its re-orthonormalizations and
    steps; the running estimates (history) are read only when used. The group's attributes become
    lyapunov_<name> attributes of the variables."""
    attrs = {f"lyapunov_{key}": _attribute(value) for key, value in group.attrs.items()}
    variables = {
        "lyapunov_exponents": (("member", "exponent"), group["exponents"][:], attrs),
        "lyapunov_status": (("member",), group["status"][:], {"names": list(_dataset.STATUS_NAMES)}),
    }
    for name in ("t_start", "t_end", "renormalizations", "steps"):
        if name in group:
            variables[f"lyapunov_{name}"] = (("member",), group[name][:])
    if "history_t" in group and group["history_t"].shape[1] > 0:
        variables["lyapunov_history_t"] = (("member", "estimate"), _lazy(path, group["history_t"]))
        variables["lyapunov_history"] = (("member", "estimate", "exponent"), _lazy(path, group["history"]))
    return variables


def _sensitivity_variables(group):
    """The /sensitivity group of a study with [sensitivity] (docs/SENSITIVITY.md): each index of each
    part, sensitivity_<index>_<part> [time, coordinate|constraint|nonholonomic|quantity, input] (index:
    first, first_conf, total, total_conf; part: q, v, lam, mu, nu, quantities), the second-order indices
    sensitivity_second [time, value, input, input2] where asked for, sensitivity_rows_used
    [time, value] (value: the state layout, then the quantities), and with [lyapunov] sensitivity_lyapunov_<index> [exponent, input] of the Lyapunov
    exponents. The group's attributes become sensitivity_<name> attributes of the variables."""
    attrs = {f"sensitivity_{key}": _attribute(value) for key, value in group.attrs.items()}
    variables = {}
    for index in ("first", "first_conf", "total", "total_conf"):
        for part, dims in (("q", "coordinate"), ("v", "coordinate"), ("lambda", "constraint"), ("mu", "constraint"),
                           ("nu", "nonholonomic"), ("quantities", "quantity")):
            if part in group[index]:
                label = "lam" if part == "lambda" else part
                variables[f"sensitivity_{index}_{label}"] = (("time", dims, "input"), group[index][part][()], attrs)
    for name in ("second", "second_conf"):
        if name in group:
            variables[f"sensitivity_{name}"] = (("time", "value", "input", "input2"), group[name][()], attrs)
    variables["sensitivity_rows_used"] = (("time", "value"), group["rows_used"][()], attrs)
    if "lyapunov" in group:
        for name in ("first", "first_conf", "total", "total_conf"):
            variables[f"sensitivity_lyapunov_{name}"] = (("exponent", "input"), group["lyapunov"][name][()], attrs)
        variables["sensitivity_lyapunov_rows_used"] = (("exponent",), group["lyapunov"]["rows_used"][()], attrs)
    return variables


def _derivative_variables(group):
    """The /derivative_measures group of a study with [derivative_measures] (docs/SENSITIVITY.md): each
    measure of each part of the final state, derivative_<measure>_<part> [coordinate|constraint|
    nonholonomic, input] (measure: nu, nu_stderr, total_bound; part: q, v, lam, mu, nu), and
    derivative_variance and derivative_members_used [state]. The group's attributes become
    derivative_<name> attributes of the variables."""
    attrs = {f"derivative_{key}": _attribute(value) for key, value in group.attrs.items()}
    variables = {}
    for measure in ("nu", "nu_stderr", "total_bound"):
        for part, dims in (("q", "coordinate"), ("v", "coordinate"), ("lambda", "constraint"), ("mu", "constraint"),
                           ("nu", "nonholonomic")):
            if part in group[measure]:
                label = "lam" if part == "lambda" else part
                variables[f"derivative_{measure}_{label}"] = ((dims, "input"), group[measure][part][()], attrs)
    for name in ("variance", "members_used"):
        variables[f"derivative_{name}"] = (("state",), group[name][()], attrs)
    return variables


def _executable():
    """The lockstep command: LOCKSTEP_EXECUTABLE, else the one built beside this module, else PATH's."""
    given = os.environ.get("LOCKSTEP_EXECUTABLE")
    if given:
        return given
    if os.path.isfile(_lockstep.lockstep_executable):
        return _lockstep.lockstep_executable
    found = shutil.which("lockstep")
    if not found:
        raise FileNotFoundError("the lockstep command was not found: build it (target lockstep_cli), put it on "
                                "PATH or set LOCKSTEP_EXECUTABLE")
    return found


def run_study(path, out_dir=None, backend=None, threads=None, chunk_size=None, progress=None):
    """Runs a study file exactly as ``lockstep run STUDY -o OUT_DIR`` does and returns its results.

    The command is LOCKSTEP_EXECUTABLE, else the one built beside this module, else ``lockstep`` on
    PATH. A study whose members partly failed returns normally (see ds.status).

    Parameters
    ----------
    path : str or path-like
        The study file.
    out_dir : str or path-like, optional
        With out_dir, the files stay there (results.h5, members.csv, study.toml) and the Dataset
        reads the trajectories from them when used; without, the run goes to a temporary directory
        whose results are loaded into memory before it is removed (and the Dataset has no
        results_path attribute).
    backend, threads, chunk_size : optional
        Passed on (--backend, --threads, --chunk-size) when given.
    progress : bool or None, optional
        The command's progress bar; by default only when stderr is a terminal.

    Returns
    -------
    xarray.Dataset
        ``open_results`` of the run's results.h5.

    Raises
    ------
    ValueError
        For a bad study file, with the command's diagnostic.
    OSError
        For a failed write.
    FileNotFoundError
        When the lockstep command is not found.
    RuntimeError
        When the command fails otherwise (with its exit status and message).
    KeyboardInterrupt
        On Ctrl-C; an interrupt sent to this process alone is passed on to the command, which is
        given time to exit.
    """
    command = [_executable(), "run", os.fspath(path)]
    temporary = out_dir is None
    out = tempfile.mkdtemp(prefix="lockstep-study-") if temporary else os.fspath(out_dir)
    command += ["-o", out]
    if backend is not None:
        command += ["--backend", str(backend)]
    if threads is not None:
        command += ["--threads", str(int(threads))]
    if chunk_size is not None:
        command += ["--chunk-size", str(int(chunk_size))]
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        command.append("--quiet")
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=None if progress else subprocess.PIPE,
                                   text=True)
        try:
            stdout, stderr = process.communicate()
        except KeyboardInterrupt:
            # A terminal's Ctrl-C reaches the command too (same process group); a signal sent to this
            # process alone is passed on, and the command is given time to exit (it writes what it finished).
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            process.wait()
            raise
        rc = process.returncode
        message = (stderr or "").strip()
        if rc == 2:
            raise ValueError(message or f"lockstep run {path}: bad study file or command line")
        if rc == 3:
            raise OSError(message or f"lockstep run {path}: the results could not be written")
        if rc in (130, -signal.SIGINT):
            raise KeyboardInterrupt
        if rc not in (0, 1):
            raise RuntimeError(f"lockstep run {path} failed with exit status {rc}" + (f":\n{message}" if message else ""))
        ds = open_results(os.path.join(out, "results.h5"))
        if temporary:
            ds = ds.load()
            del ds.attrs["results_path"]
        return ds
    finally:
        if temporary:
            shutil.rmtree(out, ignore_errors=True)
