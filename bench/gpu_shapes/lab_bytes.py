#!/usr/bin/env python3
"""bench/gpu_shapes/lab_bytes.py — bytes per member-attempt of each kernel shape, from Nsight Compute.

Reads the CSV that `ncu --csv --print-units base --metrics ...` wrote for one run of
`kernel_shape_lab --once --attempts A --members M` and prints, per shape, N and method, the DRAM bytes
read and written, the L2 bytes (what leaves the SMs: the proxy docs/GPU.md section 3 models) per
member-attempt, and the achieved occupancy and duration of its kernels. A launch of cuBLAS (the batched
shape's LU and solves) counts towards the lab kernel launched before it.

    python3 lab_bytes.py NCU_CSV --members M --attempts A

Python's standard library only (it runs on the GPU machine).
"""
import argparse
import csv
import re
import sys
from collections import OrderedDict

METRICS = {
    "dram__bytes_read.sum": "dram_read",
    "dram__bytes_write.sum": "dram_write",
    "lts__t_bytes.sum": "l2",
    "gpu__time_duration.sum": "ns",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy",
}

# Lab kernels by (demangled) name: frame_bdf<19, true> -> registers; team_radau<32, 8> -> team T=8;
# rows_bdf<19, 32> -> rows R=32 ...
LAB_KERNEL = re.compile(r"lab::(frame|global|team|rows|batched)_(bdf|radau)\w*<(\d+)(?:,\s*(\w+))?>")


def configuration(name):
    """(shape, N, method) of a lab kernel's name, or None for another kernel."""
    m = LAB_KERNEL.search(name)
    if not m:
        return None
    kind, method, n, extra = m.group(1), m.group(2), int(m.group(3)), m.group(4)
    method = "bdf" if method == "bdf" else "radau5"
    if kind == "frame":
        shape = "registers" if extra in ("true", "1") else "stack"  # ncu names a bool argument 0 or 1
    elif kind == "team":
        shape = f"team T={extra}"
    elif kind == "rows":
        shape = f"rows R={extra}"
    else:
        shape = kind
    return shape, n, method


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--members", type=int, required=True)
    parser.add_argument("--attempts", type=int, required=True)
    args = parser.parse_args()

    launches = OrderedDict()  # launch id -> {"name": ..., metric: value}
    with open(args.csv, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # the CSV rows; ncu's own messages start otherwise
    for row in csv.DictReader(lines):
        key = METRICS.get(row.get("Metric Name", ""))
        if key is None:
            continue
        launch = launches.setdefault(row["ID"], {"name": row["Kernel Name"]})
        value = number(row["Metric Value"])
        if value is not None:
            launch[key] = value
    if not launches:
        print("lab_bytes: no kernel launch with the expected metrics in", args.csv, file=sys.stderr)
        return 1

    totals = OrderedDict()
    current = None
    for launch in launches.values():
        if "pointers_into" in launch["name"]:
            continue
        config = configuration(launch["name"])
        if config is not None:
            current = config
        elif current is None or not current[0] == "batched":
            continue  # a library kernel before any lab kernel, or after a non-batched one: not the lab's
        t = totals.setdefault(current, {"dram_read": 0.0, "dram_write": 0.0, "l2": 0.0, "ns": 0.0, "occ": [], "launches": 0})
        for k in ("dram_read", "dram_write", "l2", "ns"):
            t[k] += launch.get(k, 0.0)
        if "occupancy" in launch:
            t["occ"].append((launch.get("ns", 0.0), launch["occupancy"]))
        t["launches"] += 1

    per = float(args.members) * args.attempts
    print(f"bytes per member-attempt ({args.members} members, {args.attempts} attempt(s) per launch; "
          "the member's state read and written once per launch is included)")
    print(f"{'shape':<12} {'N':>3} {'method':<6} {'launches':>8} {'DRAM read':>10} {'DRAM write':>10} "
          f"{'L2 bytes':>10} {'occupancy':>9} {'ms':>9}")
    for (shape, n, method), t in totals.items():
        weight = sum(ns for ns, _ in t["occ"])
        occ = sum(ns * o for ns, o in t["occ"]) / weight if weight > 0 else float("nan")
        print(f"{shape:<12} {n:>3} {method:<6} {t['launches']:>8} {t['dram_read'] / per:>10.0f} "
              f"{t['dram_write'] / per:>10.0f} {t['l2'] / per:>10.0f} {occ:>8.1f}% {t['ns'] * 1e-6:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
