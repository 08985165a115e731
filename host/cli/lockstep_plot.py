#!/usr/bin/python3
"""lockstep_plot.py — PNG plots of a lockstep results file (the `lockstep plot` command).

    lockstep_plot.py RESULTS.h5 [-o DIR] [--outputs xb,v.yb,...] [--quantity yb] [--member I]

Outputs are named as the model names its coordinates (the root attribute coordinate_names): a
coordinate's name is its position (yb), v.<name> its velocity (v.yb), and q.<name> its position too.
A coordinate the model does not name, or whose name would be ambiguous, is named q<j> as in
members.csv (coordinate_columns below, by the rule of host/io/members_csv.hpp). Index names are
aliases throughout: q<j>, v<j> (position and velocity of coordinate j), lambda<j>, mu<j>, nu<j> (the
multipliers, which have index names only). A model's derived quantities (a mechanism file's body poses,
points and joint reactions: the root attribute quantity_names) are outputs by their names
(crank.fx). Figures, titles and axes carry the names (band_yb.png, band_v.yb.png); a file without
coordinate_names is read with index names only.

Writes into DIR (default: the directory of RESULTS.h5) and prints the path of every file written:

  band_<out>.png      for each output (default: the first four coordinates' positions): the mean over
                      members against t, the 5-95 % quantile band shaded, the 25-75 % band darker and
                      the median dashed, from /statistics (quantile groups are found by their
                      `probability` attribute, whatever their names). Without statistics for that
                      output the same is computed from the stored trajectories, when they are small.
  hist_<out>.png      for each position or velocity output, and each quantity of a study that kept its
                      trajectories: a histogram of its final value (/members/final_q, /members/final_v,
                      /quantities at t1) over the members that succeeded.
  heatmap_<qty>.png   for a pure 2-D grid study (two grid dimensions and no other varied input): a final
                      quantity over the grid, axes labelled with the varied inputs' names. --quantity is
                      a position or velocity (final value; failed members left blank) or the name of
                      any one-dimensional /members dataset (steps, rejected, final_h, max_phi, status,
                      ...); default: the last coordinate's position.
  status.png          when any member did not succeed: how many members ended with each status.

With /exceedance (a study with [output] exceedance; docs/SENSITIVITY.md):

  exceedance_<out>.png   for each output with a threshold: the probability that it is above the
                      threshold against t, its 95 % interval shaded (Wilson's, or from the spread over
                      the replicates of Sobol' or LHS points).

With /sensitivity (a study with a [sensitivity] section; docs/SENSITIVITY.md):

  sensitivity_<out>.png  for each output: its first-order and total indices against t, each varied
                      input a colour with its interval shaded, and beside them a stacked bar of the
                      first-order indices at t1, the rest of the variance (the interactions) on top.

With /derivative_measures (a study with a [derivative_measures] section; docs/SENSITIVITY.md):

  derivative_measures.png  the bounds C nu / Var y on the total indices of the outputs at t1, a group
                      of bars per output, each varied input a colour, on a logarithmic axis: an input
                      whose bounds are small everywhere cannot matter for these outputs.

With /events (a model with event functions; docs/how-to/events.md):

  event_<name>.png    for each event: the fraction of members whose event occurred by t against t, its
                      95 % interval shaded (/events/fraction: Kaplan-Meier's estimate, members that
                      ended without the event censored where they ended; the interval Wilson's, or from
                      the spread over the replicates of Sobol' points or Latin hypercubes), the first
                      time's quantiles marked where the fraction reaches them.

With /lyapunov (a study with a [lyapunov] section; host/io/results_h5.hpp):

  lyapunov_convergence.png   the running estimate of the largest exponent against t for up to 8
                      members whose final values spread from the smallest to the largest
                      (/lyapunov/history), to judge convergence.
  lyapunov_spectrum.png      every running estimate lambda_1..lambda_p of one member (--member, default
                      the first whose Lyapunov run succeeded) against t.
  heatmap_lambda_1.png       for a pure 2-D grid study: the largest exponent over the grid (members
                      whose Lyapunov run failed left blank).

Needs numpy, h5py and matplotlib (Debian: python3-numpy python3-h5py python3-matplotlib; run with
/usr/bin/python3). Exit status 0 on success, 2 on any error (usage, missing file, not a lockstep results
file, a results format version other than RESULTS_FORMAT_VERSION, unknown output or quantity), with a
message on stderr.
"""

import argparse
import difflib
import os
import re
import sys

EXIT_ERROR = 2
# The results format this script reads (docs/RESULTS-FORMAT.md; host/io/results_h5.hpp writes it).
RESULTS_FORMAT = "lockstep-results"
RESULTS_FORMAT_VERSION = 1
SUCCESS = 1  # member_status::success (include/lockstep/core/status.hpp)
STOPPED_BY_EVENT = 11  # member_status::stopped_by_event: a normal end, at a stopping event
DEFAULT_OUTPUTS = 4
# Beyond this many values, bands are not recomputed from trajectories (it would read them all).
MAX_TRAJECTORY_VALUES = 50_000_000
OUTPUT_PATTERN = re.compile(r"^(q|v|lambda|mu|nu)(\d+)$")
# The datasets of /members and the other columns of members.csv, whose names a coordinate's name may
# not take (host/io/members_csv.hpp, coordinate_columns; host/io/results_h5.hpp lists the datasets).
MEMBER_DATASETS = ("status", "steps", "rejected", "newton_iterations", "newton_failures", "jacobian_evaluations",
                   "lu_factorizations", "model_evaluations", "projections", "dropped_rows", "rank_changes", "final_t",
                   "final_h", "max_phi", "max_velocity_residual", "init_q_correction", "init_v_correction",
                   "max_projection_q", "max_projection_v", "max_dropped_phi", "final_q", "final_v", "inputs",
                   "explicit_steps", "method_switches", "stiffness_detections")
OTHER_COLUMNS = ("member", "lyapunov_status", "lyapunov_t_start", "lyapunov_t_end")
LYAPUNOV_COLUMN = re.compile(r"^lambda_\d+$")
UNSPEAKABLE = re.compile(r"[,.\"'\s]")  # --outputs separates names by commas; v.<name> is a velocity


class PlotError(Exception):
    """A problem the user can fix; reported as `lockstep plot: <message>` with exit status 2."""


def as_text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def as_texts(values):
    if values is None:
        return []
    return [as_text(v) for v in list(values)]


def open_results(h5py, path):
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if os.path.isdir(path):
        raise PlotError(f"{path}: is a directory, not a results file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise PlotError(f"{path}: not an HDF5 file ({e})") from None
    try:
        check_format(f, path)
    except PlotError:
        f.close()
        raise
    return f


def check_format(f, path):
    """Refuses a file that is not a lockstep results file of RESULTS_FORMAT_VERSION (host/io/results_h5.hpp,
    check_results_file, says the same in C++)."""
    fmt = f.attrs.get("format")
    version = f.attrs.get("format_version")
    # Files written before the root carried its format have version 1's layout: read as version 1.
    if fmt is None and version is None and "members/status" in f and "t" in f:
        return
    if fmt is None or as_text(fmt) != RESULTS_FORMAT:
        raise PlotError(f"{path}: not a lockstep results file (no format = '{RESULTS_FORMAT}' attribute)")
    try:
        version = int(version)
    except (TypeError, ValueError):
        raise PlotError(f"{path}: a lockstep results file without a readable integer format_version attribute") from None
    if version != RESULTS_FORMAT_VERSION:
        writer = f.attrs.get("lockstep_version")
        by = f" (written by lockstep {as_text(writer)})" if writer is not None else ""
        raise PlotError(f"{path}: results format version {version}{by}; this lockstep reads version "
                        f"{RESULTS_FORMAT_VERSION} (docs/RESULTS-FORMAT.md): read it with the lockstep that "
                        "wrote it, or run the study again")


def sizes(f):
    """(n, m, k) from the root attributes, or from the datasets of older files."""
    n = int(f.attrs["n"]) if "n" in f.attrs else f["members/final_q"].shape[1]
    m = int(f.attrs["m"]) if "m" in f.attrs else (f["lambda"].shape[2] if "lambda" in f else 0)
    k = int(f.attrs["k"]) if "k" in f.attrs else (f["nu"].shape[2] if "nu" in f else 0)
    return n, m, k


def coordinate_columns(names, n, varied):
    """The name of each coordinate: the model's (names), else q<j>, by members.csv's rule
    (host/io/members_csv.hpp, coordinate_columns): q<j> where the name is empty, shared with another
    coordinate, the name of another column of members.csv or of a /members dataset, another entry's
    index name, or holds a comma, period, quote or white space."""
    names = list(names)
    columns = []
    for j in range(n):
        name = names[j] if j < len(names) else ""
        alias = OUTPUT_PATTERN.match(name) is not None and name != f"q{j}"
        taken = name in MEMBER_DATASETS or name in OTHER_COLUMNS or LYAPUNOV_COLUMN.match(name) or name in varied
        usable = name and not alias and not taken and not UNSPEAKABLE.search(name) and names.count(name) == 1
        columns.append(name if usable else f"q{j}")
    return columns


def closest(word, candidates):
    """The candidate closest to word for a "did you mean" hint, or None (as lockstep's other hints)."""
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not close:
        close = [c for c in candidates if c.lower() == word.lower()][:1]
    return close[0] if close else None


class Names:
    """The outputs of a results file by name: (variable, index) of q, v, lambda, mu, nu and the model's
    derived quantities ("quantities", by their names), and back."""

    def __init__(self, f, n, m, k):
        # Files written since results.h5 holds the columns' names have them; older ones get the rule.
        self.columns = as_texts(f.attrs.get("coordinate_columns"))
        if len(self.columns) != n:
            inputs = as_texts(f["members/inputs"].attrs.get("names")) if "members/inputs" in f else []
            self.columns = coordinate_columns(as_texts(f.attrs.get("coordinate_names")), n, inputs)
        self.quantities = as_texts(f.attrs.get("quantity_names")) if "quantity_names" in f.attrs else []
        self.width = {"q": n, "v": n, "lambda": m, "mu": m, "nu": k, "quantities": len(self.quantities)}

    def label(self, variable, index):
        """The output's name: a position by its coordinate's name, a velocity as v.<name>, a quantity by
        its name."""
        if variable == "quantities":
            return self.quantities[index]
        if variable == "q":
            return self.columns[index]
        if variable == "v" and self.columns[index] != f"q{index}":
            return f"v.{self.columns[index]}"
        return f"{variable}{index}"

    def all_labels(self):
        return [self.label(variable, j) for variable in ("q", "v", "lambda", "mu", "nu", "quantities")
                for j in range(self.width[variable])]

    def resolve(self, text, option):
        """(variable, index) of an output name or alias; None when text names no output."""
        if text in self.quantities:
            return "quantities", self.quantities.index(text)
        for prefix, variable in (("", "q"), ("q.", "q"), ("v.", "v")):
            if text.startswith(prefix) and text[len(prefix):] in self.columns:
                return variable, self.columns.index(text[len(prefix):])
        match = OUTPUT_PATTERN.match(text)
        if not match:
            return None
        variable, index = match.group(1), int(match.group(2))
        if index >= self.width[variable]:
            raise PlotError(f"{option}: '{text}' is out of range (the model has {self.width[variable]} {variable} components)")
        return variable, index

    def unknown(self, text, option, datasets=()):
        """The error for a name that is no output (nor one of datasets): the closest name, and every valid
        one."""
        best = closest(text, self.all_labels() + list(datasets))
        listed = [("positions", "q"), ("velocities", "v"), ("lambda", "lambda"), ("mu", "mu"), ("nu", "nu"),
                  ("quantities", "quantities")]
        groups = [f"{what}: {', '.join(self.label(v, j) for j in range(self.width[v]))}"
                  for what, v in listed if self.width[v] > 0]
        if datasets:
            groups.append(f"/members: {', '.join(datasets)}")
        what = "an output of this model" + (" nor one of /members" if datasets else "")
        hint = f"; did you mean '{best}'?" if best else ""
        return PlotError(f"{option}: '{text}' is not {what}{hint} ({'; '.join(groups)}; aliases: q<j>, v<j>, q.<name>)")


def parse_outputs(text, names):
    if text is None:
        return [("q", j) for j in range(min(names.width["q"], DEFAULT_OUTPUTS))]
    outputs = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        output = names.resolve(item, "--outputs")
        if output is None:
            raise names.unknown(item, "--outputs")
        if output not in outputs:  # a name and its alias are one output, one figure
            outputs.append(output)
    if not outputs:
        raise PlotError("--outputs: no outputs named")
    return outputs


def statistic_series(np, f, variable, index):
    """{'mean', 'median', 0.05, 0.25, 0.75, 0.95 -> values over t} from /statistics, as available."""
    series = {}
    if "statistics" not in f:
        return series
    for name, group in f["statistics"].items():
        if variable not in group:
            continue
        values = np.asarray(group[variable][:, index], dtype=float)
        probability = group.attrs.get("probability")
        if probability is not None:
            p = float(probability)
            for wanted in (0.05, 0.25, 0.5, 0.75, 0.95):
                if abs(p - wanted) < 1e-9:
                    series["median" if wanted == 0.5 else wanted] = values
        elif name == "mean":
            series["mean"] = values
        elif name == "median":
            series["median"] = values
    return series


def trajectory_series(np, f, variable, index):
    """The same statistics computed from stored trajectories, over members with finite values."""
    if variable not in f:
        return {}
    data = f[variable]
    if data.shape[0] * data.shape[1] > MAX_TRAJECTORY_VALUES or data.shape[0] == 0:
        return {}
    values = np.asarray(data[:, :, index], dtype=float)  # [member, save]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)  # all-NaN save times
        series = {"mean": np.nanmean(values, axis=0), "median": np.nanmedian(values, axis=0)}
        for p in (0.05, 0.25, 0.75, 0.95):
            series[p] = np.nanquantile(values, p, axis=0)
    return series


def save(fig, directory, name, written):
    path = os.path.join(directory, name)
    fig.savefig(path, dpi=100)
    written.append(path)


def band_plot(np, plt, f, names, variable, index, directory, written):
    output = names.label(variable, index)
    t = np.asarray(f["t"][:], dtype=float)
    if t.size == 0:
        print(f"lockstep plot: no save times, no band plot for {output}", file=sys.stderr)
        return
    series = statistic_series(np, f, variable, index)
    source = "statistics"
    if not series:
        series, source = trajectory_series(np, f, variable, index), "trajectories"
    if not series:
        print(f"lockstep plot: no statistics or trajectories for {output}, no band plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    color = "C0"
    if 0.05 in series and 0.95 in series:
        ax.fill_between(t, series[0.05], series[0.95], color=color, alpha=0.2, linewidth=0, label="5-95 %")
    if 0.25 in series and 0.75 in series:
        ax.fill_between(t, series[0.25], series[0.75], color=color, alpha=0.45, linewidth=0, label="25-75 %")
    if "median" in series:
        ax.plot(t, series["median"], color=color, linestyle="--", linewidth=1.2, label="median")
    if "mean" in series:
        ax.plot(t, series["mean"], color="black", linewidth=1.5, label="mean")
    ax.set_xlabel("t")
    ax.set_ylabel(output)
    ax.set_title(f"{output} across members ({source})")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    save(fig, directory, f"band_{output}.png", written)
    plt.close(fig)


def final_values(np, f, variable, index):
    """Each member's final value of an output: /members/final_q or final_v, a quantity at the last save
    time (t1) of its trajectories; None where the file has none."""
    if variable in ("q", "v") and f"members/final_{variable}" in f:
        return np.asarray(f[f"members/final_{variable}"][:, index], dtype=float)
    if variable == "quantities" and "quantities" in f and f["quantities"].shape[1] > 0:
        return np.asarray(f["quantities"][:, -1, index], dtype=float)
    return None


def histogram(np, plt, f, names, variable, index, status, directory, written):
    output = names.label(variable, index)
    values = final_values(np, f, variable, index)
    if values is None:
        return
    values = values[(status == SUCCESS) & np.isfinite(values)]
    if values.size == 0:
        print(f"lockstep plot: no successful member has a final {output}, no histogram", file=sys.stderr)
        return
    t1 = float(np.max(np.asarray(f["members/final_t"][:])[status == SUCCESS])) if "members/final_t" in f else None
    bins = int(min(100, max(10, np.sqrt(values.size))))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(values, bins=bins, color="C0", edgecolor="white", linewidth=0.4)
    ax.set_xlabel(output)
    ax.set_ylabel("members")
    ax.set_title(f"{output} at t1 = {t1:g} ({values.size} members)" if t1 is not None else f"final {output}")
    fig.tight_layout()
    save(fig, directory, f"hist_{output}.png", written)
    plt.close(fig)


def grid_description(np, f):
    """(names, grid_dims, grid_shape) of /members/inputs; empty lists when absent."""
    if "members/inputs" not in f:
        return [], [], []
    attrs = f["members/inputs"].attrs
    names = as_texts(attrs.get("names"))
    dims = [int(d) for d in np.atleast_1d(attrs.get("grid_dims", []))]
    shape = [int(s) for s in np.atleast_1d(attrs.get("grid_shape", []))]
    return names, dims, shape


def quantity_label(names, quantity):
    """The canonical name of a --quantity: a position or velocity's name, else the dataset's."""
    output = names.resolve(quantity, "--quantity")
    return names.label(*output) if output is not None else quantity


def final_quantity(np, f, quantity, names, status):
    output = names.resolve(quantity, "--quantity")
    values = final_values(np, f, *output) if output is not None else None
    if values is not None:
        return np.where(status == SUCCESS, values, np.nan)
    if output is not None:
        raise PlotError(f"--quantity: '{quantity}' has no final value per member; name a position, a velocity, a "
                        "quantity of a study that kept its trajectories, or a /members dataset")
    path = f"members/{quantity}"
    if "/" in quantity or path not in f or not hasattr(f[path], "shape"):
        available = sorted(name for name, d in f["members"].items() if hasattr(d, "shape") and len(d.shape) == 1)
        raise names.unknown(quantity, "--quantity", available)
    if len(f[path].shape) != 1:
        raise PlotError(f"--quantity: /members/{quantity} has one value per coordinate; name a position or velocity")
    return np.asarray(f[path][:], dtype=float)


def cell_edges(np, centres):
    """Cell boundaries around strictly monotonic centres; None when they are not monotonic."""
    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    d = np.diff(c)
    if not (np.all(d > 0) or np.all(d < 0)):
        return None
    middle = (c[:-1] + c[1:]) / 2
    return np.concatenate(([c[0] - d[0] / 2], middle, [c[-1] + d[-1] / 2]))


def is_2d_grid(np, f, members):
    names, dims, shape = grid_description(np, f)
    return len(dims) == 2 and len(names) == 2 and len(shape) == 2 and shape[0] * shape[1] == members


def heat_map(np, plt, f, quantity, names, status, directory, written, explicit):
    if not is_2d_grid(np, f, status.size):
        if explicit:
            print("lockstep plot: --quantity: no heat map, the study is not a pure 2-D grid", file=sys.stderr)
        return
    values = final_quantity(np, f, quantity, names, status)
    label = quantity_label(names, quantity)
    grid_heat_map(np, plt, f, values, label, f"final {label}", f"heatmap_{label}.png", directory, written)


def grid_heat_map(np, plt, f, values, label, title, filename, directory, written):
    """values [members] of a pure 2-D grid study drawn over the grid."""
    names, dims, shape = grid_description(np, f)
    values = np.asarray(values, dtype=float).reshape(shape)
    inputs = np.asarray(f["members/inputs"][:], dtype=float)
    # Members enumerate the grid in row-major order of the grid dimensions, the last fastest
    # (include/lockstep/study/sampling_plan.hpp): axis 0 is grid_dims[0], axis 1 grid_dims[1].
    rows = inputs[:, dims[0]].reshape(shape)[:, 0]
    cols = inputs[:, dims[1]].reshape(shape)[0, :]
    row_edges, col_edges = cell_edges(np, rows), cell_edges(np, cols)
    fig, ax = plt.subplots(figsize=(6.5, 5))
    masked = np.ma.masked_invalid(values)
    if row_edges is not None and col_edges is not None:
        mesh = ax.pcolormesh(col_edges, row_edges, masked, shading="flat")
    else:  # unordered grid values: plot by index, label the ticks with the values
        mesh = ax.pcolormesh(masked, shading="flat")
        ax.set_xticks(np.arange(len(cols)) + 0.5, [f"{c:g}" for c in cols])
        ax.set_yticks(np.arange(len(rows)) + 0.5, [f"{r:g}" for r in rows])
    fig.colorbar(mesh, ax=ax, label=label)
    ax.set_xlabel(names[dims[1]])
    ax.set_ylabel(names[dims[0]])
    ax.set_title(title + (" (blank: no value, e.g. the member failed)" if np.ma.is_masked(masked) else ""))
    fig.tight_layout()
    save(fig, directory, filename, written)
    plt.close(fig)


def lyapunov_description(f):
    group = f["lyapunov"]
    method = as_text(group.attrs.get("method", "qr"))
    metric = as_text(group.attrs.get("metric", "mass"))
    renormalize = float(group.attrs.get("renormalize", float("nan")))
    transient = float(group.attrs.get("transient", float("nan")))
    return f"{method}, {metric} metric, renormalize {renormalize:g}, transient {transient:g}"


def lyapunov_member(np, f, requested):
    """The member whose spectrum is drawn: --member, or the first whose Lyapunov run succeeded."""
    status = np.asarray(f["lyapunov/status"][:], dtype=np.int64)
    if requested is not None:
        if not 0 <= requested < status.size:
            raise PlotError(f"--member: {requested} is out of range (the study has {status.size} members)")
        return requested
    good = np.flatnonzero(status == SUCCESS)
    return int(good[0]) if good.size else 0


def lyapunov_plots(np, plt, f, member, directory, written):
    """Convergence of the running estimates, and the largest exponent over a 2-D grid."""
    if "lyapunov" not in f:
        return
    exponents = np.asarray(f["lyapunov/exponents"][:], dtype=float)  # [member, p]
    members, p = exponents.shape
    description = lyapunov_description(f)
    if "lyapunov/history" in f and members > 0:
        history_t = f["lyapunov/history_t"]
        history = f["lyapunov/history"]
        # Up to 8 members spread over the range of the final largest exponent (from the smallest to the
        # largest, so regular and chaotic members both show), reading only their rows of the history.
        finite = np.flatnonzero(np.isfinite(exponents[:, 0]))
        ranked = finite[np.argsort(exponents[finite, 0], kind="stable")] if finite.size else np.arange(members)
        picks = sorted(set(int(ranked[int(round(k))]) for k in np.linspace(0, ranked.size - 1, min(8, ranked.size))))
        fig, ax = plt.subplots(figsize=(7, 4))
        drawn = 0
        for i in picks:
            t = np.asarray(history_t[i, :], dtype=float)
            y = np.asarray(history[i, :, 0], dtype=float)
            keep = np.isfinite(t) & np.isfinite(y)
            if np.any(keep):
                ax.plot(t[keep], y[keep], linewidth=1.0, label=f"member {i}")
                drawn += 1
        if drawn:
            ax.axhline(0.0, color="black", linewidth=0.6)
            ax.set_xlabel("t")
            ax.set_ylabel("running estimate of lambda_1")
            ax.set_title(f"convergence of lambda_1\n({description})", fontsize="medium")
            ax.legend(loc="best", fontsize="small", ncol=2)
            ax.grid(True, alpha=0.3)
            fig.tight_layout()
            save(fig, directory, "lyapunov_convergence.png", written)
        plt.close(fig)

        i = lyapunov_member(np, f, member)
        t = np.asarray(history_t[i, :], dtype=float)
        ys = np.asarray(history[i, :, :], dtype=float)  # [renormalization, p]
        keep = np.isfinite(t)
        if np.any(keep):
            fig, ax = plt.subplots(figsize=(7, 4))
            for j in range(p):
                final = exponents[i, j]
                label = f"lambda_{j + 1}" + (f" = {final:.5g}" if np.isfinite(final) else "")
                ax.plot(t[keep], ys[keep, j], linewidth=1.2, label=label)
            ax.axhline(0.0, color="black", linewidth=0.6)
            ax.set_xlabel("t")
            ax.set_ylabel("running estimate")
            ax.set_title(f"Lyapunov spectrum of member {i}\n({description})", fontsize="medium")
            ax.legend(loc="best", fontsize="small")
            ax.grid(True, alpha=0.3)
            fig.tight_layout()
            save(fig, directory, "lyapunov_spectrum.png", written)
            plt.close(fig)
    elif members > 0:
        print("lockstep plot: /lyapunov has no history (history = false), no convergence plots", file=sys.stderr)

    if is_2d_grid(np, f, members):
        grid_heat_map(np, plt, f, exponents[:, 0], "lambda_1", f"largest Lyapunov exponent\n({description})",
                      "heatmap_lambda_1.png", directory, written)


def sensitivity_plot(np, plt, f, names, variable, index, directory, written):
    """sensitivity_<out>.png: the output's first-order and total indices over time, each input a colour
    with its interval shaded, and at t1 a stacked bar of the first-order indices with the rest of the
    variance (1 - sum S_i: the inputs' interactions) on top."""
    if "sensitivity" not in f or variable not in f["sensitivity/first"]:
        return
    output = names.label(variable, index)
    group = f["sensitivity"]
    inputs = as_texts(group.attrs["inputs"])
    t = np.asarray(f["t"][:], dtype=float)
    first = np.asarray(group["first"][variable][:, index, :], dtype=float)
    total = np.asarray(group["total"][variable][:, index, :], dtype=float)
    first_conf = np.asarray(group["first_conf"][variable][:, index, :], dtype=float)
    total_conf = np.asarray(group["total_conf"][variable][:, index, :], dtype=float)
    fig, (lines, bars) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 1]})
    for i, name in enumerate(inputs):
        color = f"C{i % 10}"
        lines.plot(t, first[:, i], color=color, linewidth=1.5, label=f"S {name}")
        lines.fill_between(t, first[:, i] - first_conf[:, i], first[:, i] + first_conf[:, i], color=color, alpha=0.15,
                           linewidth=0)
        lines.plot(t, total[:, i], color=color, linewidth=1.2, linestyle="--", label=f"ST {name}")
        lines.fill_between(t, total[:, i] - total_conf[:, i], total[:, i] + total_conf[:, i], color=color, alpha=0.1,
                           linewidth=0)
    lines.set_xlabel("t")
    lines.set_ylabel("index")
    lines.set_ylim(-0.05, 1.05)
    level = float(group.attrs["confidence"])
    lines.set_title(f"{output}: first-order (solid) and total (dashed) indices, {100 * level:g} % intervals")
    lines.grid(True, alpha=0.3)
    lines.legend(loc="best", fontsize="x-small", ncol=2)
    bottom = 0.0
    last = first[-1]
    if np.all(np.isfinite(last)):
        for i, name in enumerate(inputs):
            share = max(float(last[i]), 0.0)
            bars.bar([0], [share], bottom=bottom, color=f"C{i % 10}", label=name)
            bottom += share
        bars.bar([0], [max(1.0 - bottom, 0.0)], bottom=bottom, color="lightgrey", label="interactions")
        bars.legend(loc="upper right", fontsize="x-small")
    else:
        bars.text(0, 0.5, "no indices at t1", ha="center")
    bars.set_xticks([0])
    bars.set_xticklabels([f"t1 = {t[-1]:g}"])
    bars.set_ylim(0, 1.05)
    bars.set_title("shares of the variance")
    fig.tight_layout()
    save(fig, directory, f"sensitivity_{output}.png", written)
    plt.close(fig)


def derivative_measures_plot(np, plt, f, names, outputs, directory, written):
    """derivative_measures.png: the outputs' bounds on their total indices at t1 (/derivative_measures),
    a group of bars per output and a colour per input, on a logarithmic axis (the bounds of one input
    often span decades across outputs); an output without measures is left out."""
    if "derivative_measures" not in f:
        return
    group = f["derivative_measures"]
    inputs = as_texts(group.attrs["inputs"])
    drawn = [(names.label(variable, index), np.asarray(group["total_bound"][variable][index, :], dtype=float))
             for variable, index in outputs if variable in group["total_bound"]]
    drawn = [(label, bound) for label, bound in drawn if np.any(np.isfinite(bound) & (bound > 0))]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.3 * len(drawn) * max(len(inputs), 1) + 2.0), 4))
    width = 0.8 / max(len(inputs), 1)
    for i, name in enumerate(inputs):
        x = np.arange(len(drawn)) + (i - (len(inputs) - 1) / 2) * width
        heights = [bound[i] if np.isfinite(bound[i]) and bound[i] > 0 else np.nan for _, bound in drawn]
        ax.bar(x, heights, width=width, color=f"C{i % 10}", label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(np.arange(len(drawn)))
    ax.set_xticklabels([label for label, _ in drawn])
    ax.set_yscale("log")
    ax.set_ylabel("C nu / Var y  (>= total index)")
    refused = as_text(group.attrs.get("refused", ""))
    title = f"bounds on the total indices at t = {float(group.attrs['t']):g}"
    ax.set_title(title + (f"\n(none: {refused})" if refused else ""))
    ax.grid(True, axis="y", alpha=0.3)
    if drawn:
        ax.legend(loc="best", fontsize="x-small")
    fig.tight_layout()
    save(fig, directory, "derivative_measures.png", written)
    plt.close(fig)


def exceedance_plots(np, plt, f, names, n, m, directory, written):
    """exceedance_<out>.png for each output with a threshold ([output] exceedance): the probability that
    it is above the threshold against t, with its 95 % interval shaded."""
    if "exceedance" not in f:
        return
    group = f["exceedance"]
    t = np.asarray(f["t"][:], dtype=float)
    thresholds = np.asarray(group["threshold"][:], dtype=float)
    # The value order: the state layout q, v, lambda, mu, nu, then the model's quantities
    # (docs/RESULTS-FORMAT.md).
    quantities = [str(x.decode() if isinstance(x, bytes) else x) for x in f.attrs.get("quantity_names", [])]
    k = len(thresholds) - 2 * n - 2 * m - len(quantities)
    interval = f"{100 * float(group.attrs['confidence']):g} % interval"
    if "replicates" in group.attrs:  # from the spread over the replicates (Sobol' points, Latin hypercubes)
        interval += f" (over {int(group.attrs['replicates'])} replicates)"
    parts = [("q", n), ("v", n), ("lambda", m), ("mu", m), ("nu", k), ("quantities", len(quantities))]
    start = 0
    for variable, count in parts:
        for index in range(count):
            j = start + index
            if np.isnan(thresholds[j]):
                continue
            output = quantities[index] if variable == "quantities" else names.label(variable, index)
            fig, ax = plt.subplots(figsize=(7, 4))
            ax.fill_between(t, group["low"][:, j], group["high"][:, j], color="C3", alpha=0.25, linewidth=0,
                            label=interval)
            ax.plot(t, group["probability"][:, j], color="C3", linewidth=1.5, label="members above")
            ax.set_xlabel("t")
            ax.set_ylabel(f"P({output} > {thresholds[j]:g})")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"the probability that {output} exceeds {thresholds[j]:g}")
            ax.grid(True, alpha=0.3)
            ax.legend(loc="best", fontsize="small")
            fig.tight_layout()
            save(fig, directory, f"exceedance_{output}.png", written)
            plt.close(fig)
        start += count


def event_plots(np, plt, f, directory, written):
    """event_<name>.png for each event: the fraction of members with it by t, its interval shaded, and
    the first time's quantiles marked."""
    if "events" not in f or "fraction" not in f["events"]:
        return
    group = f["events"]
    t = np.asarray(f["t"][:], dtype=float)
    names = as_texts(group.attrs["names"])
    probabilities = np.asarray(group.attrs["quantiles"], dtype=float)
    interval = f"{100 * float(group.attrs['confidence']):g} % interval"
    if "replicates" in group.attrs:  # from the spread over the replicates (Sobol' points, Latin hypercubes)
        interval += f" (over {int(group.attrs['replicates'])} replicates)"
    for k, name in enumerate(names):
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.fill_between(t, group["fraction_low"][:, k], group["fraction_high"][:, k], step="post", color="C0",
                        alpha=0.25, linewidth=0, label=interval)
        ax.step(t, group["fraction"][:, k], where="post", color="C0", linewidth=1.5, label="members with the event")
        for p, q in zip(probabilities, group["first_time_quantiles"][:, k]):
            if np.isfinite(q):
                ax.plot([q], [p], "o", color="C3", markersize=4)
                ax.annotate(f"q{100 * p:g}", (q, p), textcoords="offset points", xytext=(4, -10), fontsize="x-small")
        ax.set_xlabel("t")
        ax.set_ylabel(f"fraction with {name} by t")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"event {name}: when members first meet it")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        fig.tight_layout()
        save(fig, directory, f"event_{name}.png", written)
        plt.close(fig)


def status_chart(np, plt, f, status, directory, written):
    ended = (status == SUCCESS) | (status == STOPPED_BY_EVENT)
    if status.size == 0 or np.all(ended):
        return
    names = as_texts(f["members/status"].attrs.get("names"))
    codes, counts = np.unique(status, return_counts=True)
    labels = [names[c] if 0 <= c < len(names) else f"code {c}" for c in codes]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(codes) + 2), 4))
    bars = ax.bar(range(len(codes)), counts, color=["C2" if c in (SUCCESS, STOPPED_BY_EVENT) else "C3" for c in codes])
    ax.bar_label(bars)
    ax.set_xticks(range(len(codes)), labels, rotation=20, ha="right")
    ax.set_ylabel("members")
    ax.set_title(f"member status ({int(np.sum(~ended))} of {status.size} did not succeed)")
    fig.tight_layout()
    save(fig, directory, "status.png", written)
    plt.close(fig)


def run(args):
    try:
        import numpy as np
        import h5py
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise PlotError(f"needs numpy, h5py and matplotlib ({e}); on Debian install python3-h5py and "
                        "python3-matplotlib and run with /usr/bin/python3") from None

    directory = args.output_dir or os.path.dirname(os.path.abspath(args.results))
    with open_results(h5py, args.results) as f:
        n, m, k = sizes(f)
        names = Names(f, n, m, k)
        outputs = parse_outputs(args.outputs, names)
        status = np.asarray(f["members/status"][:], dtype=np.int64)
        quantity = args.quantity or (names.label("q", n - 1) if n > 0 else "steps")
        # Check --quantity before drawing anything, so a typo costs no time.
        if args.quantity is not None:
            final_quantity(np, f, quantity, names, status)
        if args.member is not None:
            if "lyapunov" not in f:
                raise PlotError("--member: the results have no /lyapunov (the study had no [lyapunov] section)")
            lyapunov_member(np, f, args.member)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise PlotError(f"cannot create {directory}: {e.strerror}") from None
        written = []
        try:
            for variable, index in outputs:
                band_plot(np, plt, f, names, variable, index, directory, written)
            for variable, index in outputs:
                histogram(np, plt, f, names, variable, index, status, directory, written)
            for variable, index in outputs:
                sensitivity_plot(np, plt, f, names, variable, index, directory, written)
            exceedance_plots(np, plt, f, names, n, m, directory, written)
            derivative_measures_plot(np, plt, f, names, outputs, directory, written)
            heat_map(np, plt, f, quantity, names, status, directory, written, args.quantity is not None)
            event_plots(np, plt, f, directory, written)
            status_chart(np, plt, f, status, directory, written)
            lyapunov_plots(np, plt, f, args.member, directory, written)
        except OSError as e:
            raise PlotError(f"cannot write into {directory}: {e.strerror or e}") from None
    for path in written:
        print(path)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="lockstep plot", description="PNG plots of a lockstep results file.")
    parser.add_argument("results", help="results.h5 written by `lockstep run`")
    parser.add_argument("-o", "--output-dir", help="where to write the PNGs (default: beside the results file)")
    parser.add_argument("--outputs", help="comma-separated outputs: a coordinate's name (its position), v.<name> (its "
                        "velocity), a derived quantity's name (a mechanism's joint reaction, say); aliases q<j>, v<j>, "
                        "lambda<j>, mu<j>, nu<j> (default: the first four positions)")
    parser.add_argument("--quantity", help="heat-map quantity for 2-D grids: a position, velocity or derived quantity "
                        "(with trajectories) as in --outputs, steps or any /members dataset (default: the last position)")
    parser.add_argument("--member", type=int, help="the member whose Lyapunov spectrum is drawn (default: the first that succeeded)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except PlotError as e:
        print(f"lockstep plot: {e}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
