"""Monte Carlo with quasi-random inputs: how uncertainty in the release angle and in the second rod's
length of the double pendulum spreads over time.

    /usr/bin/python3 examples/python/monte_carlo_qmc.py [-o monte_carlo_qmc.png] [--members 1024]

The two uncertain inputs are drawn from a scrambled Sobol sequence (scipy.stats.qmc) instead of
pseudo-random numbers: the points fill the input square evenly, so the quantiles of a smooth output
converge faster than with plain random sampling, while the scrambling keeps the estimate unbiased and
lets independent seeds give error bars. The whole sample is one ensemble solve.
"""

import argparse
import time

import matplotlib

matplotlib.use("Agg")  # a file, never a window: the script must run without a display
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import qmc

import lockstep

# Uniform ranges of the two inputs. The band is narrow at first (the initial spread of the height is
# only what theta1 and L2 give) and widens as the chaotic motion separates neighbouring members.
INPUTS = {"initial.theta1": (1.9, 2.1), "params.L2": (0.95, 1.05)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="monte_carlo_qmc.png", help="the figure (PNG)")
    parser.add_argument("--members", type=int, default=1024, help="sample size, a power of 2 (Sobol balance)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the scrambling")
    args = parser.parse_args()

    low, high = zip(*INPUTS.values())
    u = qmc.Sobol(d=len(INPUTS), scramble=True, seed=args.seed).random(args.members)
    x = qmc.scale(u, low, high)

    start = time.perf_counter()
    ds = lockstep.solve("double_pendulum", vary={name: x[:, i] for i, name in enumerate(INPUTS)},
                        t=(0.0, 10.0), save=np.linspace(0.0, 10.0, 401),
                        method="radau5", formulation="index3", rtol=1e-8, atol=1e-8)
    print(f"{args.members} members solved in {time.perf_counter() - start:.1f} s")

    # A failed member would be NaN from where it stopped; dropping it (rather than letting a NaN poison
    # the quantiles) is honest only if it is rare, so say how many there were.
    ok = ds.status_name == "success"
    print(f"{int(ok.sum())} of {ds.sizes['member']} members succeeded")
    y2 = ds.q.isel(coordinate=3).where(ok)  # height of the lower bob, [member, time]
    band = y2.quantile([0.05, 0.5, 0.95], dim="member", skipna=True)

    fig, ax = plt.subplots(figsize=(8, 4.2), layout="constrained")
    for j in range(8):  # a few members, to show that the band is not itself a trajectory
        ax.plot(ds.time, y2.isel(member=j), color="0.6", lw=0.5, label="members" if j == 0 else None)
    ax.fill_between(ds.time, band.sel(quantile=0.05), band.sel(quantile=0.95), color="tab:blue",
                    alpha=0.3, label="5-95 %")
    ax.plot(ds.time, band.sel(quantile=0.5), color="tab:blue", lw=1.8, label="median")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("height of the lower bob y2 [m]")
    ax.set_title(f"Double pendulum, {args.members} scrambled Sobol samples: "
                 f"theta1 ~ U{INPUTS['initial.theta1']}, L2 ~ U{INPUTS['params.L2']}", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
