#!/usr/bin/python3
"""examples/models/plot_heavy_top.py — nutation of the heavy tops of heavy_top_spin.toml.

    /usr/bin/python3 examples/models/plot_heavy_top.py lockstep-out/heavy_top_spin/results.h5 -o top.png

The tilt of the symmetry axis, theta = acos(e0^2 - e1^2 - e2^2 + e3^2), over time for every member,
coloured by its spin rate: fast tops nod little and quickly (the gyroscopic limit), slow ones deeply.
"""
import argparse

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("-o", "--output", default="heavy_top_nutation.png")
    args = parser.parse_args()
    with h5py.File(args.results, "r") as f:
        t, q = f["t"][()], f["q"][()]
        inputs = f["members/inputs"]
        names = [n.decode() if isinstance(n, bytes) else n for n in inputs.attrs["names"]]
        spin = inputs[()][:, names.index("initial.spin0")]
    cos_tilt = q[:, :, 0] ** 2 - q[:, :, 1] ** 2 - q[:, :, 2] ** 2 + q[:, :, 3] ** 2
    tilt = np.degrees(np.arccos(np.clip(cos_tilt, -1.0, 1.0)))
    fig, ax = plt.subplots(figsize=(7, 4))
    norm = matplotlib.colors.Normalize(spin.min(), spin.max())
    for i in np.argsort(spin):
        ax.plot(t, tilt[i], color=plt.cm.viridis(norm(spin[i])), lw=0.8)
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=ax, label="spin rate psi'(0) [rad/s]")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("tilt of the symmetry axis [deg]")
    ax.set_title("heavy symmetric top (examples/models/heavy_top.hpp): nutation")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(args.output)


if __name__ == "__main__":
    main()
