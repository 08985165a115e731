"""Where is the double pendulum chaotic? The largest Lyapunov exponent over a grid of release angles,
from a study run with lockstep.run_study.

    /usr/bin/python3 examples/python/lyapunov_map.py [-o lyapunov_map.png] [--grid 16] [--t1 40]

The exponents come from the study file's [lyapunov] section (the engine's discrete-QR driver in the
mass metric), which lockstep.solve cannot ask for yet: so the study is written as a TOML file into
a temporary directory and run as `lockstep run` runs it. A coarse, short version of
examples/double_pendulum_lyapunov_map.toml (128 x 128, t = 100): regular motion has lambda_1 -> 0
like log(t)/t, chaotic motion lambda_1 of order 1/s, and the short horizon here blurs the border.
"""

import argparse
import pathlib
import tempfile
import time

import matplotlib

matplotlib.use("Agg")  # a file, never a window: the script must run without a display
import matplotlib.pyplot as plt
import numpy as np

import lockstep

STUDY = """\
[model]
name = "double_pendulum"

[solver]
method = "radau5"
formulation = "index3"
rtol = 1e-7
atol = 1e-7

[time]
t1 = {t1}
save = {{ every = {t1} }}

[ensemble]
sampler = "grid"
[ensemble.vary]
"initial.theta1" = {{ grid = {angles} }}
"initial.theta2" = {{ grid = {angles} }}

[lyapunov]
exponents = 1          # only the largest: what the map shows, at about half the cost of all four
renormalize = 1.0
transient = {transient}
method = "qr"
metric = "mass"
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="lyapunov_map.png", help="the figure (PNG)")
    parser.add_argument("--grid", type=int, default=16, help="points per angle on [-3, 3]")
    parser.add_argument("--t1", type=float, default=40.0, help="end time [s]")
    parser.add_argument("--transient", type=float, default=5.0, help="discarded before averaging [s]")
    parser.add_argument("--threads", type=int, default=None, help="threads of the lockstep command")
    args = parser.parse_args()

    angles = np.linspace(-3.0, 3.0, args.grid)
    text = STUDY.format(t1=args.t1, transient=args.transient,
                        angles="[" + ", ".join(f"{a:.6g}" for a in angles) + "]")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        study = pathlib.Path(tmp) / "lyapunov_map.toml"
        study.write_text(text)
        # Without out_dir the results are loaded into memory before the directory is removed.
        ds = lockstep.run_study(study, threads=args.threads)
    print(f"{ds.sizes['member']} members, to t = {args.t1:g}, in {time.perf_counter() - start:.1f} s")

    # Place each member by its own inputs rather than by an assumed order of the grid sampler.
    th1, th2 = ds["initial.theta1"].values, ds["initial.theta2"].values
    i = np.abs(th1[:, None] - angles[None, :]).argmin(axis=1)
    j = np.abs(th2[:, None] - angles[None, :]).argmin(axis=1)
    ok = ds.lyapunov_status.values == 1  # a failed spectrum is NaN: left blank in the map
    print(f"{int(ok.sum())} of {ok.size} spectra succeeded")
    lam = np.full((args.grid, args.grid), np.nan)
    lam[j, i] = np.where(ok, ds.lyapunov_exponents.isel(exponent=0).values, np.nan)

    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")
    step = angles[1] - angles[0]
    extent = [angles[0] - step / 2, angles[-1] + step / 2] * 2
    image = ax.imshow(lam, origin="lower", extent=extent, cmap="magma", vmin=0.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, label=r"$\lambda_1$ [1/s]")
    ax.set_xlabel(r"$\theta_1(0)$ [rad]")
    ax.set_ylabel(r"$\theta_2(0)$ [rad]")
    ax.set_title(f"Double pendulum from rest: largest Lyapunov exponent\n"
                 f"{args.grid} x {args.grid} grid, average over t = {args.transient:g} ... {args.t1:g} s",
                 fontsize=10)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
