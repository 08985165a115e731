#!/usr/bin/python3
"""examples/models/plot_first_times.py — when did each member first meet an event (driven_arm_reach.toml)?

    /usr/bin/python3 examples/models/plot_first_times.py lockstep-out/driven_arm_reach/results.h5 -o reach.png

Draws, for the event named by --event (the first by default), the fraction of members whose event
occurred by each time t (/events/first_time), up to t1, and the first time against the first
varied input. Members that end without the event (they reached t1, or a stopping event of another kind
ended them) are right-censored: the fraction stops below 1, and the quantiles printed are only those
the fraction reaches. Members that failed are left out of both, and counted.
"""
import argparse

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def text(values):
    return [v.decode() if isinstance(v, bytes) else v for v in values]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--event", help="the event's name (default: the model's first)")
    parser.add_argument("-o", "--output", default="first_times.png")
    args = parser.parse_args()
    with h5py.File(args.results, "r") as f:
        names = text(f["events"].attrs["names"])
        k = names.index(args.event) if args.event else 0
        first = f["events/first_time"][()][:, k]
        status_names = text(f["members/status"].attrs["names"])
        status = f["members/status"][()]
        inputs = f["members/inputs"]
        varied = text(inputs.attrs["names"])
        x = inputs[()][:, 0] if varied else np.arange(len(first))
        save_times = f["t"][()]  # the save times end at t1
    ended = np.isin(status, [status_names.index("success"), status_names.index("stopped_by_event")])
    times = np.sort(first[ended & ~np.isnan(first)])
    n = int(ended.sum())
    t1 = float(save_times[-1])
    t0 = min(float(save_times[0]), float(times[0]) if len(times) else t1)
    print(f"event {names[k]}: occurred in {len(times)} of {n} members by t1 = {t1:g}"
          f" ({len(first) - n} failed members left out)")
    for p in (0.1, 0.5, 0.9):
        # The empirical quantile exists only where the fraction reaches p (censored members beyond t1).
        print(f"  q{round(100 * p)}: " + (f"{times[int(np.ceil(p * n)) - 1]:.6g}" if np.ceil(p * n) <= len(times) else "not reached"))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    steps_t = np.concatenate([[t0], times, [t1]])
    fraction = np.concatenate([[0.0], np.arange(1, len(times) + 1) / max(n, 1), [len(times) / max(n, 1)]])
    left.step(steps_t, fraction, where="post")
    left.set_xlabel("t [s]")
    left.set_ylabel(f"fraction of members with {names[k]} by t")
    left.set_ylim(0, 1)
    right.plot(x[ended], first[ended], ".", ms=3)
    right.set_xlabel(varied[0] if varied else "member")
    right.set_ylabel(f"first time of {names[k]} [s]")
    fig.suptitle(f"{args.results}: event {names[k]}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
