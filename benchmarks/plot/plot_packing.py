#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the FGD or MIG packing experiment (`gpusched-experiment packing|mig --out DIR`) the way
the FGD paper (Weng et al., ATC'23, Fig. 9) shows it: unallocated GPU % against the arrived
workload (% of the cluster's GPU capacity), one line per policy (the mean over seeds) with the
seeds' spread (min to max) shaded. Writes DIR/unallocated.png.

  --published ALLO_CSV   also draw the published means of the same workload (dashed), from the
                         FGD artifact's analysis_allo_discrete.csv (packing only: same labels)
  --xmin P               start the x axis at P % arrived (default 70: below it every policy
                         places everything and the lines coincide)

Every figure is titled with the run's metadata from DIR/run.json, when the folder has one.
Needs Debian's python3-matplotlib. Usage:
  benchmarks/plot/plot_packing.py DIR [--published ALLO_CSV] [--xmin 50]
"""
import argparse
import csv
import json
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_packing.py needs matplotlib: on Debian `sudo apt-get install "
             "python3-matplotlib` and run it with Debian's /usr/bin/python3")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_allo(path, workload=None):
    """{policy label: [per seed: [allocated % per arrived-% bin]]} and the workload name."""
    runs, name = {}, None
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        bins = [int(h) for h in header if h.isdigit()]
        first = header.index(str(bins[0]))
        for row in rows:
            if not row or (workload is not None and row[0] != workload):
                continue
            name = row[0]
            runs.setdefault(row[1], []).append([float(v) for v in row[first:first + len(bins)]])
    return runs, bins, name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--published", default=None)
    ap.add_argument("--xmin", type=float, default=70)
    a = ap.parse_args()
    path = os.path.join(a.dir, "analysis_allo_discrete.csv")
    if not os.path.exists(path):
        sys.exit(f"no {path}: run gpusched-experiment packing|mig with --out {a.dir}")
    runs, bins, workload = read_allo(path)
    if not runs:
        sys.exit(f"{path} has no rows")
    run = {}
    if os.path.exists(os.path.join(a.dir, "run.json")):
        with open(os.path.join(a.dir, "run.json")) as f:
            run = json.load(f)
    experiment = "MIG" if run.get("program", "").endswith("mig") else "FGD"

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    xs = bins
    top = 0.0
    for i, (label, seeds) in enumerate(runs.items()):
        color = colors[i % len(colors)]
        unalloc = [[100.0 - v for v in s] for s in seeds]
        mean = [sum(col) / len(col) for col in zip(*unalloc)]
        lo = [min(col) for col in zip(*unalloc)]
        hi = [max(col) for col in zip(*unalloc)]
        top = max([top] + [h for x, h in zip(xs, hi) if x >= a.xmin])
        ax.plot(xs, mean, color=color, linewidth=1.4,
                label=f"{label} ({mean[-1]:.1f}% at {xs[-1]})")
        if len(seeds) > 1:
            ax.fill_between(xs, lo, hi, color=color, alpha=0.18, linewidth=0)
    if a.published:
        pub, pbins, _ = read_allo(a.published, workload)
        for i, (label, seeds) in enumerate(runs.items()):
            if label not in pub:
                continue
            p = [[100.0 - v for v in s] for s in pub[label]]
            mean = [sum(col) / len(col) for col in zip(*p)]
            ax.plot(pbins, mean, color=colors[i % len(colors)], linestyle="--", linewidth=0.9)
        ax.plot([], [], color="0.3", linestyle="--", linewidth=0.9,
                label="published (FGD artifact), same colour")
    ax.set_xlim(a.xmin, xs[-1])
    ax.set_ylim(0, top * 1.08)
    ax.set_xlabel("arrived workload (% of the cluster's GPU capacity)")
    ax.set_ylabel("unallocated GPUs (% of all GPUs)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    nseeds = max(len(s) for s in runs.values())
    fig.suptitle(f"{experiment} packing experiment: unallocated GPU % vs arrived workload\n"
                 f"(lines: mean of {nseeds} seed(s); shaded: min to max over the seeds)",
                 fontsize=10)
    meta = [f"workload {workload}"]
    if "nodes" in run:
        meta.append(f"{run['nodes']} nodes, {run['gpus']:,} GPUs, {run['pods']:,} pods")
    if run.get("model"):
        meta.append(f"{run['model']}, cover {run.get('cover', '')}")
    if "seeds" in run:
        seeds = run["seeds"]
        meta.append(f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}")
    if "tune" in run:
        meta.append(f"tune {run['tune']}")
    if run:
        meta.append(f"gpusched {run.get('gpusched_version', '?')}, {run.get('started_utc', '')}")
    half = (len(meta) + 1) // 2
    fig.text(0.5, 0.005, "; ".join(meta[:half]) + "\n" + "; ".join(meta[half:]), ha="center",
             va="bottom", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    out = os.path.join(a.dir, "unallocated.png")
    fig.savefig(out, dpi=120)
    print("wrote", out)


if __name__ == "__main__":
    main()
