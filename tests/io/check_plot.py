#!/usr/bin/python3
"""check_plot.py — the test of host/cli/lockstep_plot.py (ctest io_plot_script).

Writes sample results with write_sample_results (a 6 x 5 grid study, two failed members), runs the
plot script on them and checks that it writes exactly the expected PNGs, each a readable non-empty
image; then checks the variants (no grid, no trajectories, no statistics), outputs named by the model's
coordinate names (members.csv's columns and the figures alike, with index names as aliases, the index
name where a name would be ambiguous, a "did you mean" for a near miss), a model's derived quantities
by their names, the error exits (missing
file, a file that is not HDF5, an HDF5 file that is not a lockstep results file, another results
format version, unknown output or quantity: exit status 2 with a message) and that the writer's fault-injection variable
LOCKSTEP_IO_FAIL_AFTER_BYTES makes it fail naming the file and leave no results.h5 behind.
Exits 77 (ctest: skipped) when numpy, h5py or matplotlib are missing.
"""

import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

try:
    import numpy  # noqa: F401
    import h5py
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(SKIP)

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


def run(command, env=None):
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)


def plot(script, *args):
    return run([sys.executable, script, *args])


def check_images(result, directory, expected, what, others=()):
    """The script printed exactly the paths of `expected` PNGs, and DIR holds them and `others` only."""
    check(result.returncode == 0, f"{what}: exit status {result.returncode}, stderr: {result.stderr}")
    printed = [line for line in result.stdout.splitlines() if line]
    want = sorted(os.path.join(directory, name) for name in expected)
    check(sorted(printed) == want, f"{what}: printed {sorted(printed)}, expected {want}")
    held = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    check(held == sorted([*expected, *others]), f"{what}: directory holds {held}")
    for path in want:
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            check(f.read(8) == PNG_SIGNATURE, f"{path} is not a PNG")
        image = matplotlib.image.imread(path)
        check(image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100, f"{path}: image of shape {image.shape}")
        # Not a blank canvas: some pixels differ from the first one.
        check(numpy.any(image != image[0, 0]), f"{path} is blank")


def check_error(result, what, *fragments):
    check(result.returncode == 2, f"{what}: exit status {result.returncode}, expected 2")
    check(result.stderr.startswith("lockstep plot: "), f"{what}: message {result.stderr!r}")
    for fragment in fragments:
        check(fragment in result.stderr, f"{what}: message {result.stderr!r} lacks {fragment!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)

    def sample(name, *flags):
        directory = os.path.join(args.workdir, name)
        os.makedirs(directory)
        result = run([args.writer, directory, *flags])
        check(result.returncode == 0, f"write_sample_results {name}: {result.stderr}")
        return os.path.join(directory, "results.h5")

    # The full sample: bands and histograms of q0, q1; a heat map of q1 (the last q) over the grid;
    # the status chart (two members failed).
    grid = sample("grid")
    out = os.path.join(args.workdir, "grid_plots")
    check_images(plot(args.script, grid, "-o", out), out,
                 ["band_q0.png", "band_q1.png", "hist_q0.png", "hist_q1.png", "heatmap_q1.png", "status.png"], "grid")
    with open(os.path.join(os.path.dirname(grid), "members.csv")) as f:
        lines = f.read().splitlines()
    check(len(lines) == 31 and lines[0] == "member,params.omega,initial.amplitude,status,steps,final_t,q0,q1",
          f"members.csv: {len(lines)} lines, header {lines[0] if lines else None!r}")

    # Chosen outputs and a counter as the heat-map quantity; default directory: beside the file.
    out = os.path.join(args.workdir, "chosen_plots")
    shutil.copytree(os.path.dirname(grid), out)
    check_images(plot(args.script, os.path.join(out, "results.h5"), "--outputs", "v0,lambda0,mu0", "--quantity", "steps"), out,
                 ["band_v0.png", "band_lambda0.png", "band_mu0.png", "hist_v0.png", "heatmap_steps.png", "status.png"],
                 "chosen outputs", others=["results.h5", "members.csv"])

    # Coordinates the model names: members.csv's columns, the default figures, --outputs and --quantity
    # by name (a position by its name, a velocity as v.<name>) and by index name (an alias: the figure
    # carries the name).
    named = sample("named", "--coordinate-names", "xb,yb")
    with open(os.path.join(os.path.dirname(named), "members.csv")) as f:
        header = f.readline().strip()
    check(header == "member,params.omega,initial.amplitude,status,steps,final_t,xb,yb", f"named members.csv: {header!r}")
    out = os.path.join(args.workdir, "named_plots")
    check_images(plot(args.script, named, "-o", out), out,
                 ["band_xb.png", "band_yb.png", "hist_xb.png", "hist_yb.png", "heatmap_yb.png", "status.png"], "named")
    out = os.path.join(args.workdir, "named_chosen_plots")
    check_images(plot(args.script, named, "-o", out, "--outputs", "yb,v.xb,q0,q.yb", "--quantity", "v.yb"), out,
                 ["band_yb.png", "band_v.xb.png", "band_xb.png", "hist_yb.png", "hist_v.xb.png", "hist_xb.png",
                  "heatmap_v.yb.png", "status.png"], "named, chosen")
    out = os.path.join(args.workdir, "named_alias_plots")
    check_images(plot(args.script, named, "-o", out, "--outputs", "v1", "--quantity", "q1"), out,
                 ["band_v.yb.png", "hist_v.yb.png", "heatmap_yb.png", "status.png"], "named, by index names")
    check_error(plot(args.script, named, "--quantity", "ybb"), "named, near miss", "'ybb'", "did you mean 'yb'?",
                "positions: xb, yb", "velocities: v.xb, v.yb")
    check_error(plot(args.script, named, "--outputs", "xb,zz"), "named, unknown output", "'zz'", "positions: xb, yb")
    # A name that is another column's (steps) falls back to its index name in members.csv and the figures
    # alike; --quantity steps is the counter.
    clash = sample("named_clash", "--coordinate-names", "xb,steps")
    with open(os.path.join(os.path.dirname(clash), "members.csv")) as f:
        header = f.readline().strip()
    check(header == "member,params.omega,initial.amplitude,status,steps,final_t,xb,q1", f"clashing members.csv: {header!r}")
    out = os.path.join(args.workdir, "named_clash_plots")
    check_images(plot(args.script, clash, "-o", out, "--quantity", "steps"), out,
                 ["band_xb.png", "band_q1.png", "hist_xb.png", "hist_q1.png", "heatmap_steps.png", "status.png"],
                 "named, a clash")
    # results.h5 holds the names members.csv gave the columns; a file written before it held them gets
    # the same names from the plot's own reading of the rule.
    with h5py.File(clash, "r") as f:
        columns = [c.decode() if isinstance(c, bytes) else str(c) for c in f.attrs.get("coordinate_columns", [])]
    check(columns == ["xb", "q1"], f"clashing results.h5 coordinate_columns: {columns!r}")
    older_clash = os.path.join(args.workdir, "named_clash_older", "results.h5")
    os.makedirs(os.path.dirname(older_clash))
    shutil.copy(clash, older_clash)
    with h5py.File(older_clash, "r+") as f:
        del f.attrs["coordinate_columns"]
    out = os.path.join(args.workdir, "named_clash_older_plots")
    check_images(plot(args.script, older_clash, "-o", out, "--quantity", "steps"), out,
                 ["band_xb.png", "band_q1.png", "hist_xb.png", "hist_q1.png", "heatmap_steps.png", "status.png"],
                 "named, a clash, without coordinate_columns")

    # A Monte Carlo-like file (no grid) keeping statistics only: no heat map; empty grid attributes.
    monte_carlo = sample("monte_carlo", "--no-grid", "--no-trajectories")
    with h5py.File(monte_carlo, "r") as f:
        check(len(f["members/inputs"].attrs["grid_shape"]) == 0, "grid_shape should be empty")
        check("q" not in f, "/q should be absent")
    out = os.path.join(args.workdir, "monte_carlo_plots")
    check_images(plot(args.script, monte_carlo, "-o", out), out,
                 ["band_q0.png", "band_q1.png", "hist_q0.png", "hist_q1.png", "status.png"], "monte carlo")

    # Trajectories but no statistics: the bands come from the trajectories.
    trajectories = sample("trajectories", "--no-statistics")
    out = os.path.join(args.workdir, "trajectory_plots")
    result = plot(args.script, trajectories, "-o", out, "--outputs", "q1")
    check_images(result, out, ["band_q1.png", "hist_q1.png", "heatmap_q1.png", "status.png"], "trajectories")

    # A model's derived quantities (a mechanism's joint reactions, say) are outputs by their names: bands
    # from their statistics, histograms and the heat map from their values at t1 in the trajectories; a
    # near miss gets the closest name, and without trajectories a quantity has no final value.
    derived = sample("quantities", "--quantities")
    out = os.path.join(args.workdir, "quantity_plots")
    check_images(plot(args.script, derived, "-o", out, "--outputs", "point.height,q0", "--quantity", "point.speed"), out,
                 ["band_point.height.png", "band_q0.png", "hist_point.height.png", "hist_q0.png",
                  "heatmap_point.speed.png", "status.png"], "quantities")
    check_error(plot(args.script, derived, "--outputs", "point.heigth"), "quantities, near miss", "'point.heigth'",
                "did you mean 'point.height'?", "quantities: point.speed, point.height")
    derived_statistics = sample("quantities_statistics", "--quantities", "--no-trajectories")
    check_error(plot(args.script, derived_statistics, "--quantity", "point.speed"), "quantity without trajectories",
                "'point.speed' has no final value per member")

    # Errors: exit status 2 and a message naming the problem.
    missing = os.path.join(args.workdir, "missing.h5")
    check_error(plot(args.script, missing), "missing file", missing, "no such file")
    text = os.path.join(args.workdir, "grid", "members.csv")
    check_error(plot(args.script, text), "not HDF5", "not an HDF5 file")
    foreign = os.path.join(args.workdir, "foreign.h5")
    with h5py.File(foreign, "w") as f:
        f["x"] = [1.0, 2.0]
    check_error(plot(args.script, foreign), "foreign HDF5", "not a lockstep results file")

    # The results format version (docs/RESULTS-FORMAT.md): another version is refused naming the file,
    # the version found and the version read; a lockstep file without a version is refused; a file
    # from before the root carried its format is read as version 1.
    def variant(name, change):
        path = os.path.join(args.workdir, name, "results.h5")
        os.makedirs(os.path.dirname(path))
        shutil.copy(grid, path)
        with h5py.File(path, "r+") as f:
            change(f.attrs)
        return path

    def version_2(attrs):
        attrs["format_version"] = numpy.int64(2)
        attrs["lockstep_version"] = "9.9.9"

    newer = variant("version_2", version_2)
    check_error(plot(args.script, newer), "version 2", newer, "results format version 2 (written by lockstep 9.9.9)",
                "this lockstep reads version 1")
    unversioned = variant("unversioned", lambda attrs: attrs.__delitem__("format_version"))
    check_error(plot(args.script, unversioned), "no version", unversioned, "without a readable integer format_version")

    def before_format(attrs):
        del attrs["format"]
        del attrs["format_version"]

    old = variant("before_format", before_format)
    out = os.path.join(args.workdir, "before_format_plots")
    check_images(plot(args.script, old, "-o", out, "--outputs", "q0"), out,
                 ["band_q0.png", "hist_q0.png", "heatmap_q1.png", "status.png"], "file from before the format attributes")
    check_error(plot(args.script, grid, "--outputs", "q9"), "bad output", "q9")
    check_error(plot(args.script, grid, "--quantity", "nonsense"), "bad quantity", "nonsense")
    check(run([sys.executable, args.script]).returncode == 2, "no arguments: exit status 2")

    # The fault-injection seam, end to end: a write fails as if the disk were full.
    full = os.path.join(args.workdir, "disk_full")
    os.makedirs(full)
    env = dict(os.environ, LOCKSTEP_IO_FAIL_AFTER_BYTES="2000")
    result = run([args.writer, full], env=env)
    check(result.returncode == 1, f"injected failure: exit status {result.returncode}")
    check(os.path.join(full, "results.h5") in result.stderr and "No space left on device" in result.stderr,
          f"injected failure: message {result.stderr!r}")
    check(os.listdir(full) == [], f"injected failure left {os.listdir(full)}")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all plot checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
