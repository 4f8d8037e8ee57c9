#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the output directory of `gpusched-replay --out DIR` as PNG files in DIR:

  jct_cdf.png       CDF of job completion time, one line per composition (log x axis)
  allocation.png    allocated GPUs / GPUs in service over time, one line per composition
  tenant_share.png  per-tenant share of allocated GPU-time vs entitlement (first composition,
                    or --label)

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib). Usage:
  benchmarks/plot/plot_replay.py DIR [--label LABEL]
"""
import argparse
import csv
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_replay.py needs matplotlib: on Debian `sudo apt-get install python3-matplotlib` "
             "and run it with Debian's /usr/bin/python3 (another python3 first on PATH, e.g. "
             "pyenv's, does not see Debian's packages)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--label", default=None)
    a = ap.parse_args()
    summary = read_csv(os.path.join(a.dir, "summary.csv"))
    labels = [row["label"] for row in summary]
    if not labels:
        sys.exit("no runs in summary.csv")

    fig, ax = plt.subplots(figsize=(7, 4))
    for lab in labels:
        jct = sorted(float(r["jct_s"]) for r in read_csv(os.path.join(a.dir, lab, "jobs.csv"))
                     if r["jct_s"])
        if not jct:
            continue
        ys = [(i + 1) / len(jct) for i in range(len(jct))]
        ax.step([max(x, 1e-3) for x in jct], ys, where="post", label=lab)
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.dir, "jct_cdf.png"), dpi=120)

    fig, ax = plt.subplots(figsize=(7, 4))
    for lab in labels:
        rows = read_csv(os.path.join(a.dir, lab, "samples.csv"))
        ax.plot([float(r["t_s"]) / 86400 for r in rows], [float(r["allocation"]) for r in rows],
                label=lab, linewidth=0.8)
    ax.set_xlabel("simulated time (days)")
    ax.set_ylabel("allocated / in-service GPUs")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.dir, "allocation.png"), dpi=120)

    lab = a.label or labels[0]
    rows = read_csv(os.path.join(a.dir, lab, "tenants.csv"))
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [float(r["share"]) for r in rows], width=0.4, label="share")
    ax.bar([x + 0.2 for x in xs], [float(r["entitlement"]) for r in rows], width=0.4,
           label="entitlement")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["tenant"] for r in rows], rotation=45, ha="right")
    ax.set_ylabel("fraction of allocated GPU-time")
    ax.set_title(lab)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.dir, "tenant_share.png"), dpi=120)
    print("wrote jct_cdf.png, allocation.png, tenant_share.png in", a.dir)


if __name__ == "__main__":
    main()
