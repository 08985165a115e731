#!/usr/bin/python3
"""[output] exceedance end to end: the probabilities and intervals of results.h5 against the members'
own values and SciPy's Wilson interval.

Usage: exceedance_study_test.py LOCKSTEP

A double pendulum study with trajectories and three thresholds (one crossed by about a third of the
members, two by none). Checks that /exceedance's counts are those of the trajectories at every save
time, that its probabilities and intervals equal scipy.stats.binomtest(k, n).proportion_ci(method=
"wilson") (Wilson 1927) to 1e-12 (for 8 replicates of Sobol' points, Student's interval from the
spread of the replicates' own fractions), that the summary prints them at t1 and warns of the rare events, that
`lockstep plot` draws them, and that an output the model lacks, or one named twice, is refused at its key. Exits 77 (skipped) without
SciPy or h5py.
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    from scipy.optimize import brentq
    from scipy.stats import binomtest, t as student_t
except ImportError as error:
    print(f"exceedance_study_test: skipped ({error})")
    sys.exit(77)

STUDY = """
[model]
name = "double_pendulum"
initial = {{ theta1 = 0.5, theta2 = 0.7 }}
[time]
t1 = 3.0
save = {{ every = 0.5 }}
[ensemble]
{ensemble}
[ensemble.vary]
"params.L2" = {{ uniform = [0.9, 1.1] }}
[output]
trajectories = true
exceedance = {{ {entries} }}
"""

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


def run(lockstep, work, name, entries, expect, ensemble="members = 400"):
    with open(os.path.join(work, name + ".toml"), "w") as f:
        f.write(STUDY.format(entries=entries, ensemble=ensemble))
    r = subprocess.run([lockstep, "run", name + ".toml", "-o", name], cwd=work, capture_output=True, text=True)
    if r.returncode != expect:
        raise SystemExit(f"lockstep run {name}.toml exited {r.returncode}, expected {expect}:\n{r.stderr}")
    return r


def main():
    lockstep = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="lockstep-exceedance-")
    r = run(lockstep, work, "plain", 'y2 = -1.8, "v.x1" = 1.5, q2 = 1.2', 0)
    with h5py.File(os.path.join(work, "plain", "results.h5"), "r") as f:
        n = int(f.attrs["n"])
        x = f["exceedance"]
        threshold = x["threshold"][()]
        # y2 is coordinate 3 (x1, y1, x2, y2); v.x1 is the velocity of coordinate 0; q2 is x2.
        expected = {3: -1.8, n + 0: 1.5, 2: 1.2}
        for j, value in enumerate(threshold):
            check(value == expected[j] if j in expected else np.isnan(value), f"threshold of value {j}: {value}")
        values = {j: (f["q"][:, :, j] if j < n else f["v"][:, :, j - n]) for j in expected}
        for j, limit in expected.items():
            above = np.sum(values[j] > limit, axis=0)
            check(np.array_equal(x["above"][:, j], above), f"value {j}: above {x['above'][:, j]} against {above}")
            check(np.all(x["count"][:, j] == 400), f"value {j}: every member entered")
            for s in range(x["probability"].shape[0]):
                k = int(above[s])
                ci = binomtest(k, 400).proportion_ci(confidence_level=0.95, method="wilson")
                check(x["probability"][s, j] == k / 400, f"value {j}, save {s}: probability")
                check(abs(x["low"][s, j] - ci.low) <= 1e-12 and abs(x["high"][s, j] - ci.high) <= 1e-12,
                      f"value {j}, save {s}: interval [{x['low'][s, j]}, {x['high'][s, j]}], SciPy [{ci.low}, {ci.high}]")
        check(np.all(np.isnan(x["probability"][:, 0])), "a value without a threshold has no probability")
        k = int(x["above"][-1, 3])
    check(0 < k < 400, f"about a third of the members end below y2 = -1.8 ({k})")
    check(re.search(rf"P\(y2 > -1.8\) at t1 = 3: [0-9.]+, 95 % interval \[[0-9.]+, [0-9.]+\] \({k} of 400 members\)",
                    r.stderr) is not None, f"the summary gives P(y2 > -1.8):\n{r.stderr}")
    check("warning: P(v.x1 > 1.5): only 0 members exceed the threshold" in r.stderr,
          f"the summary warns of the rare event:\n{r.stderr}")

    # lockstep plot draws each thresholded output's probability over time.
    figures = os.path.join(work, "figures")
    r = subprocess.run([lockstep, "plot", os.path.join(work, "plain", "results.h5"), "-o", figures],
                       capture_output=True, text=True)
    for png in ("exceedance_y2.png", "exceedance_v.x1.png", "exceedance_x2.png"):
        path = os.path.join(figures, png)
        check(r.returncode == 0 and os.path.exists(path) and os.path.getsize(path) > 1000 and path in r.stdout,
              f"lockstep plot writes and lists {png}:\n{r.stdout}{r.stderr}")

    # 8 replicates of 64 Sobol' points: Student's interval from the spread of the replicates' own fractions
    # (members are numbered replicate-major), Wilson's where they all agree. Student's t_{7, 0.975} as the
    # root of SciPy's t distribution function (its t.ppf here is Cephes' stdtri, off by 6e-10).
    t_975 = brentq(lambda x: student_t.cdf(x, 7) - 0.975, 2.0, 3.0, xtol=1e-15)
    r = run(lockstep, work, "replicates", "y2 = -1.8, q2 = 1.2", 0, 'members = 64\nsampler = "sobol"\nreplicates = 8')
    with h5py.File(os.path.join(work, "replicates", "results.h5"), "r") as f:
        x = f["exceedance"]
        check(x.attrs["interval"] == "replicates" and x.attrs["replicates"] == 8,
              f"/exceedance says its intervals come from 8 replicates: {dict(x.attrs)}")
        spread_seen = agreed_seen = False
        for j, limit in ((3, -1.8), (2, 1.2)):
            beyond = f["q"][:, :, j] > limit  # [member, save]
            for s in range(x["probability"].shape[0]):
                k = int(beyond[:, s].sum())
                fractions = beyond[:, s].reshape(8, 64).mean(axis=1)
                spread = float(np.std(fractions, ddof=1))
                if spread > 0:
                    spread_seen = True
                    half = t_975 * spread / np.sqrt(8)
                    low, high = max(0.0, k / 512 - half), min(1.0, k / 512 + half)
                else:
                    agreed_seen = True
                    ci = binomtest(k, 512).proportion_ci(confidence_level=0.95, method="wilson")
                    low, high = ci.low, ci.high
                check(x["probability"][s, j] == k / 512, f"replicates, value {j}, save {s}: probability")
                check(abs(x["low"][s, j] - low) <= 1e-12 and abs(x["high"][s, j] - high) <= 1e-12,
                      f"replicates, value {j}, save {s}: interval [{x['low'][s, j]}, {x['high'][s, j]}], "
                      f"expected [{low}, {high}]")
        check(spread_seen and agreed_seen, "the replicates' fractions spread at some save times and agree at others")
    check(re.search(r"P\(y2 > -1.8\) at t1 = 3: .*of 512 members; the interval from 8 replicates\)", r.stderr)
          is not None, f"the summary says the interval comes from the replicates:\n{r.stderr}")

    r = run(lockstep, work, "unknown", "y3 = 0.5", 2)
    check(re.search(r'unknown\.toml:\d+:\d+: error: \[output\.exceedance\] model "double_pendulum" has no output "y3"; '
                    r'did you mean "y\d"\?', r.stderr) is not None, f"an unknown output:\n{r.stderr}")
    r = run(lockstep, work, "twice", "x2 = 0.5, q2 = 0.7", 2)
    check(re.search(r'twice\.toml:\d+:\d+: error: \[output\.exceedance\] "q2" names an output an earlier entry names too',
                    r.stderr) is not None, f"an output named twice:\n{r.stderr}")
    print(f"exceedance_study_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
