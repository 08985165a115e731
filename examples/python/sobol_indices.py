"""Which uncertain input of the slider crank decides how far the crank turns? First-order and total
Sobol' indices from a study with a [sensitivity] section, run with lockstep.run_study.

    /usr/bin/python3 examples/python/sobol_indices.py [-o sobol_indices.png] [--n 512]

The output is the crank angle phi1 at t = 0.5 s, for a crank spun up at omega0 against a spring
(stiffness k) and a damper (c) on the slider, with an uncertain slider mass m3. lockstep runs
Saltelli's design, N (d + 2) members, and estimates the first-order indices (Saltelli et al. 2010)
and the total ones (Jansen 1999) with 95 % bootstrap intervals (docs/SENSITIVITY.md): the study is
written as a TOML file into a temporary directory and run as `lockstep run` runs it, and the indices
come back in the Dataset. S_i is what input i explains alone, S_Ti what it explains with all its
interactions: a gap between them is an interaction. Here the gaps are small (the sum of the S_i is
about 0.99): the angle turned is nearly a sum of an effect of the initial speed and one of the damper.
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

# Uniform ranges. At the upper end of its range the damper takes most of the crank's speed within
# the 0.5 s, so the output is far from linear in c; m3 is varied by +-33 % to show what an input that
# hardly matters looks like (both indices near zero, within their intervals).
INPUTS = {
    "initial.omega0": (100.0, 200.0),  # rad/s
    "params.c": (0.0, 2.0),            # N s/m
    "params.k": (0.0, 200.0),          # N/m
    "params.m3": (0.05, 0.10),         # kg
}
T_END = 0.5
CRANK_ANGLE = 2  # coordinates: (x, y, phi) of crank, rod, slider

STUDY = """\
[model]
name = "slider_crank"

[solver]
method = "bdf"
formulation = "ggl"
rtol = 1e-7
atol = 1e-7

[time]
t1 = {t1}
save = {{ times = [{t1}] }}

[ensemble]
seed = {seed}

[ensemble.vary]
{vary}

[sensitivity]
base = {n}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="sobol_indices.png", help="the figure (PNG)")
    parser.add_argument("--n", type=int, default=512, help="rows of Saltelli's design, a power of 2")
    parser.add_argument("--seed", type=int, default=11, help="seed of the Sobol' randomization and the bootstrap")
    args = parser.parse_args()

    names = list(INPUTS)
    vary = "\n".join(f'"{name}" = {{ uniform = [{lo}, {hi}] }}' for name, (lo, hi) in INPUTS.items())
    with tempfile.TemporaryDirectory() as work:
        study = pathlib.Path(work) / "sobol_indices.toml"
        study.write_text(STUDY.format(t1=T_END, seed=args.seed, vary=vary, n=args.n))
        start = time.perf_counter()
        ds = lockstep.run_study(study, out_dir=pathlib.Path(work) / "out")
        print(f"{ds.sizes['member']} members ({args.n} x ({len(names)} + 2)) solved in "
              f"{time.perf_counter() - start:.1f} s")
        # The indices of the crank angle at t1, over the varied inputs; NaN would mean they were refused
        # (too many design rows with a failed member), which the run's summary explains.
        at_t1 = dict(time=-1, coordinate=CRANK_ANGLE)
        s = ds.sensitivity_first_q.isel(**at_t1).sel(input=names).values
        st = ds.sensitivity_total_q.isel(**at_t1).sel(input=names).values
        s_conf = ds.sensitivity_first_conf_q.isel(**at_t1).sel(input=names).values
        st_conf = ds.sensitivity_total_conf_q.isel(**at_t1).sel(input=names).values
        y = ds.final_q.isel(coordinate=CRANK_ANGLE).values
        members = ds.sizes["member"]
    print(f"output: crank angle at t = {T_END} s, mean {y.mean():.2f} rad, std {y.std():.2f} rad")
    for i, name in enumerate(names):
        print(f"{name:16s} S = {s[i]:6.3f} +- {s_conf[i]:5.3f}   ST = {st[i]:6.3f} +- {st_conf[i]:5.3f}")
    print(f"sum of S = {s.sum():.3f} (1 minus this is the share of interactions)")

    pos = np.arange(len(names))
    width = 0.38
    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    ax.bar(pos - width / 2, s, width, yerr=s_conf, capsize=4, color="tab:blue",
           label="first order $S_i$ (Saltelli 2010)")
    ax.bar(pos + width / 2, st, width, yerr=st_conf, capsize=4, color="tab:orange",
           label="total effect $S_{Ti}$ (Jansen 1999)")
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xticks(pos, [f"{n}\n[{lo:g}, {hi:g}]" for n, (lo, hi) in INPUTS.items()], fontsize=9)
    ax.set_ylabel("Sobol' index")
    ax.set_title(f"Slider crank, crank angle at t = {T_END} s: N = {args.n}, "
                 f"{members} runs, 95 % bootstrap intervals", fontsize=10)
    ax.legend(fontsize=9)
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
