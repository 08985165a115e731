#!/usr/bin/python3
"""The distribution of an event's first time end to end: a Monte Carlo first passage against its closed
form, with members that never pass and members that fail early.

Usage: first_times_study_test.py LOCKSTEP

The oscillator of first_passage_oscillator.hpp, x'' = -x released at rest from x0 = A with A uniform on
[0, 2] (a = omega = 1), stops when x first falls below -1. x = A cos t passes -1 only where A >= 1,
at t = acos(-1/A), so the fraction of members that passed by t is

    F(t) = 0 before 2 pi / 3,   1 - 1 / (2 (-cos t)) on [2 pi / 3, pi],   1/2 after pi,

and the p-quantile of the first time is acos(-1 / (2 (1 - p))) for p <= 1/2 and does not exist above
(half the members never pass: they are censored at t1). Checks /events/fraction and its quantiles
against that, the summary line and members.csv; then the same study with every member failing at an
independent uniform time (the force turns NaN): the failed members are censored where they failed,
and the Kaplan-Meier estimate still follows F, while the share of all members that passed falls
short of it. Last, the plain study as 8 replicates of 512 Sobol' points: the interval is Student's
from the spread of the replicates' own fractions (recomputed here from /events/first_time, with
SciPy's t quantile), Wilson's where they agree, and far narrower than Wilson's elsewhere. Exits 77
(skipped) without h5py or SciPy.
"""
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    from scipy.stats import norm, t as student_t
except ImportError as error:
    print(f"first_times_study_test: skipped ({error})")
    sys.exit(77)

HERE = pathlib.Path(__file__).resolve().parent
STUDY = """
[model]
source = "first_passage_oscillator.hpp"
[solver]
rtol = 1e-8
[time]
t1 = 5.0
save = {{ every = 0.125 }}
[ensemble]
{ensemble}
sampler = "sobol"
[ensemble.vary]
"initial.x0" = {{ uniform = [0.0, 2.0] }}
{fail}
[events]
quantiles = [0.1, 0.25, 0.4, 0.6]
"""


def closed_form(t):
    c = -np.cos(t)
    return np.where(t < 2 * math.pi / 3, 0.0, np.where(t > math.pi, 0.5, 1.0 - 1.0 / (2.0 * np.maximum(c, 0.5))))


def run(lockstep, folder, fail, ensemble="members = 4096"):
    (folder / "s.toml").write_text(STUDY.format(fail=fail, ensemble=ensemble))
    shutil.copy(HERE / "first_passage_oscillator.hpp", folder)
    p = subprocess.run([lockstep, "run", "s.toml", "-o", "out"], cwd=folder, capture_output=True, text=True, timeout=600)
    if p.returncode not in (0, 1):
        raise SystemExit(f"lockstep run exited with {p.returncode}:\n{p.stderr}")
    return folder / "out", p.stderr


def main():
    lockstep = os.path.abspath(sys.argv[1])
    failures = []

    def check(condition, message):
        if not condition:
            failures.append(message)

    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        (work / "plain").mkdir()
        out, summary = run(lockstep, work / "plain", "")
        with h5py.File(out / "results.h5") as f:
            t = f["t"][()]
            e = f["events"]
            fraction, low, high = e["fraction"][()][:, 0], e["fraction_low"][()][:, 0], e["fraction_high"][()][:, 0]
            quantiles = e["first_time_quantiles"][()][:, 0]
            probabilities = e.attrs["quantiles"]
            first = e["first_time"][()][:, 0]
            status = f["members/status"][()]
        exact = closed_form(t)
        # 4096 Sobol' points: the share is within about 1/4096 of F (1.7e-4 measured), far inside the
        # Wilson interval (half-width up to 0.015).
        error = np.max(np.abs(fraction - exact))
        check(error < 1e-3, f"fraction differs from the closed form by {error:.2e}")
        check(np.all((low <= fraction) & (fraction <= high)), "an interval does not contain its estimate")
        check(np.all((low <= exact + 1e-3) & (exact - 1e-3 <= high)), "an interval misses the closed form")
        check(list(probabilities) == [0.1, 0.25, 0.4, 0.6], f"quantile probabilities {list(probabilities)}")
        for p, q in zip(probabilities[:3], quantiles[:3]):
            expected = math.acos(-1.0 / (2.0 * (1.0 - p)))
            check(abs(q - expected) < 2e-3, f"q{p}: {q}, closed form {expected}")
        check(math.isnan(quantiles[3]), f"q0.6 is {quantiles[3]}: F never reaches 0.6")
        passed = ~np.isnan(first)
        check(abs(passed.mean() - 0.5) < 1e-3, f"{passed.sum()} of 4096 members passed")
        check(np.all(status[passed] == 11) and np.all(status[~passed] == 1), "statuses: stopped_by_event, success")
        line = next((l for l in summary.splitlines() if l.startswith("lockstep: events:")), "")
        check("below 2048 times in 2048 members" in line, f"summary: {line!r}")
        check("by t1 0.5" in line, f"the summary gives the fraction by t1: {line!r}")
        columns = (out / "members.csv").read_text().splitlines()[0].split(",")
        check(columns[-1] == "first_below", f"members.csv's columns end with {columns[-1]!r}")
        p = subprocess.run([lockstep, "plot", str(out / "results.h5")], capture_output=True, text=True, timeout=300)
        check(p.returncode == 0 and "event_below.png" in p.stdout, f"lockstep plot: {p.returncode} {p.stdout} {p.stderr}")

        # Every member fails at t_fail, uniform on [1, 8], independent of A, unless it passed -1 or
        # reached t1 = 5 first: 4/7 of those that never pass, about a fifth of those that do (their
        # first times lie in [2.09, 3.14]), 39 % in all, each censored where it failed.
        (work / "failing").mkdir()
        out, _ = run(lockstep, work / "failing", '"params.t_fail" = { uniform = [1.0, 8.0] }')
        with h5py.File(out / "results.h5") as f:
            fraction = f["events/fraction"][()][:, 0]
            first = f["events/first_time"][()][:, 0]
            final_t = f["members/final_t"][()]
            status = f["members/status"][()]
        failed = (status != 1) & (status != 11)
        check(0.33 < failed.mean() < 0.45, f"{failed.sum()} of 4096 members failed")
        check(np.all(final_t[failed] < 5.0), "failed members end before t1")
        error = np.max(np.abs(fraction - exact))  # 2.6e-4 measured
        check(error < 3e-3, f"Kaplan-Meier's fraction differs from the closed form by {error:.2e}")
        share = np.array([np.mean(first <= s) for s in t])  # failed members counted as never passing
        check(share[-1] < 0.45, f"the plain share by t1 is {share[-1]:.3f}, the censoring should bias it low")

        # 8 replicates of 512 points: member i is of replicate i // 512 (study/samplers.hpp). Nothing is
        # censored before t1, so each replicate's fraction is its share.
        (work / "replicates").mkdir()
        out, _ = run(lockstep, work / "replicates", "", "members = 512\nreplicates = 8")
        with h5py.File(out / "results.h5") as f:
            e = f["events"]
            fraction, low, high = e["fraction"][()][:, 0], e["fraction_low"][()][:, 0], e["fraction_high"][()][:, 0]
            first = e["first_time"][()][:, 0]
            interval, replicates = e.attrs["interval"], e.attrs.get("replicates")
        interval = interval.decode() if isinstance(interval, bytes) else interval
        check(interval == "replicates" and replicates == 8, f"/events interval {interval!r}, replicates {replicates}")
        shares = np.array([[np.mean(first[r * 512:(r + 1) * 512] <= s) for s in t] for r in range(8)])
        spread = shares.std(axis=0, ddof=1)
        half = student_t.ppf(0.975, 7) * spread / math.sqrt(8)
        differ = spread > 0
        check(np.allclose(fraction, shares.mean(axis=0), rtol=0, atol=1e-15), "the fraction is not the replicates' mean")
        check(np.allclose(low[differ], np.maximum(0, fraction - half)[differ], rtol=0, atol=1e-12) and
              np.allclose(high[differ], np.minimum(1, fraction + half)[differ], rtol=0, atol=1e-12),
              "the interval is not Student's from the replicates' spread")
        # Wilson's score interval of k of n = 4096 (Wilson 1927), with SciPy's normal quantile.
        z, n, p = norm.ppf(0.975), 4096, fraction[~differ]
        centre, reach = (p + z * z / (2 * n)) / (1 + z * z / n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        wilson = np.isclose(low[~differ], centre - reach, rtol=0, atol=1e-12) & np.isclose(high[~differ], centre + reach, rtol=0, atol=1e-12)
        # In one dimension a replicate's 512 points put all but one or two in the same place the others' do,
        # so at most save times every replicate has the same share (7 of the 41 differ).
        check(differ.sum() >= 3 and np.all(wilson), f"{differ.sum()} save times with a spread; Wilson's elsewhere")
        narrower = np.median((high - low)[differ]) < 0.2 * 2 * 1.96 * math.sqrt(0.25 / 4096)
        check(narrower, f"median replicate half-width {np.median((high - low)[differ]) / 2:.2e}: not narrower than Wilson's")
        p = subprocess.run([lockstep, "plot", str(out / "results.h5")], capture_output=True, text=True, timeout=300)
        check(p.returncode == 0 and "event_below.png" in p.stdout, f"lockstep plot of replicates: {p.returncode} {p.stderr}")
    if failures:
        print("first_times_study_test: FAILED\n  " + "\n  ".join(failures))
        return 1
    print("first_times_study_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
