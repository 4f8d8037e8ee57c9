#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the output directory of `gpusched-replay --out DIR` as PNG files in DIR:

  jct_cdf.png       CDF of job completion time, one line per composition (log x axis), with
                    each composition's mean marked
  allocation.png    allocated GPUs / GPUs in service over time: one panel per composition
                    (small multiples on shared axes), days from the first sample
  tenant_share.png  per-tenant share of allocated GPU-time vs entitlement (first composition,
                    or --label); skipped, with a note, when the run has one tenant

Every figure is titled with the run's metadata from DIR/run.json (trace, cluster, seed, job
count), when the folder has one.

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib). Usage:
  benchmarks/plot/plot_replay.py DIR [--label LABEL]
"""
import argparse
import csv
import json
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


def run_metadata(directory):
    """One line saying how the folder was made (run.json), or '' without one."""
    path = os.path.join(directory, "run.json")
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        run = json.load(f)
    trace = run.get("trace", "")
    kind, _, file = trace.partition(":")
    parts = [f"{kind}:{os.path.basename(file)}" if file else trace]
    opts = run.get("options", {})
    if "tenant" in opts:
        parts.append(f"tenant {opts['tenant']}")
    if "trace_jobs" in run:
        parts.append(f"{run['trace_jobs']:,} jobs")
    if "cluster_nodes" in run:
        parts.append(f"{run['cluster_nodes']} nodes, {run['cluster_gpus']:,} GPUs")
    if "seed" in run:
        parts.append(f"seed {run['seed']}")
    parts.append(f"gpusched {run.get('gpusched_version', '?')}, {run.get('started_utc', '')}")
    return "; ".join(parts)


def titled(fig, title, meta):
    fig.suptitle(title, fontsize=11)
    if meta:
        fig.text(0.5, 0.005, meta, ha="center", va="bottom", fontsize=7, color="0.35")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--label", default=None)
    a = ap.parse_args()
    summary = read_csv(os.path.join(a.dir, "summary.csv"))
    labels = [row["label"] for row in summary]
    if not labels:
        sys.exit("no runs in summary.csv")
    meta = run_metadata(a.dir)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    wrote = []

    # JCT CDF, one line per composition, the mean as a dashed vertical line of the same colour.
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for i, lab in enumerate(labels):
        jct = sorted(float(r["jct_s"]) for r in read_csv(os.path.join(a.dir, lab, "jobs.csv"))
                     if r["jct_s"])
        if not jct:
            continue
        color = colors[i % len(colors)]
        ys = [(k + 1) / len(jct) for k in range(len(jct))]
        mean = sum(jct) / len(jct)
        ax.step([max(x, 1e-3) for x in jct], ys, where="post", color=color,
                label=f"{lab} (mean {mean:,.0f} s)")
        ax.axvline(max(mean, 1e-3), color=color, linestyle="--", linewidth=0.8, alpha=0.7)
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s, log scale); dashed: mean")
    ax.set_ylabel("fraction of finished jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    titled(fig, "Job completion time, CDF per composition", meta)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(os.path.join(a.dir, "jct_cdf.png"), dpi=120)
    plt.close(fig)
    wrote.append("jct_cdf.png")

    # Allocation over time: small multiples, one panel per composition, shared axes.
    series = {lab: read_csv(os.path.join(a.dir, lab, "samples.csv")) for lab in labels}
    t0 = min((float(rows[0]["t_s"]) for rows in series.values() if rows), default=0.0)
    n = len(labels)
    fig, axes = plt.subplots(n, 1, figsize=(7.5, 1.35 * n + 1.3), sharex=True, sharey=True,
                             squeeze=False)
    for i, lab in enumerate(labels):
        ax = axes[i][0]
        rows = series[lab]
        xs = [(float(r["t_s"]) - t0) / 86400 for r in rows]
        ys = [float(r["allocation"]) for r in rows]
        ax.plot(xs, ys, color=colors[i % len(colors)], linewidth=0.6)
        mean = next((float(s["allocation"]) for s in summary if s["label"] == lab), None)
        ax.text(0.995, 0.92, f"{lab}" + (f"  (mean {mean:.3f})" if mean is not None else ""),
                transform=ax.transAxes, ha="right", va="top", fontsize=8,
                bbox=dict(facecolor="white", alpha=0.8, linewidth=0))
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
    axes[-1][0].set_xlabel("simulated time (days since the first sample)")
    fig.text(0.01, 0.5, "allocated / in-service GPUs", rotation=90, va="center", fontsize=9)
    titled(fig, "GPU allocation over time, one panel per composition", meta)
    fig.tight_layout(rect=(0.03, 0.03, 1, 1))
    fig.savefig(os.path.join(a.dir, "allocation.png"), dpi=120)
    plt.close(fig)
    wrote.append("allocation.png")

    lab = a.label or labels[0]
    rows = read_csv(os.path.join(a.dir, lab, "tenants.csv"))
    share_png = os.path.join(a.dir, "tenant_share.png")
    if len(rows) < 2:
        if os.path.exists(share_png):
            os.remove(share_png)  # a stale picture of an earlier run would mislead
        print(f"tenant_share.png skipped: '{lab}' has {len(rows)} tenant(s), so share and "
              "entitlement are both 1")
    else:
        fig, ax = plt.subplots(figsize=(max(7.5, 0.45 * len(rows) + 2), 4.6))
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [float(r["share"]) for r in rows], width=0.4,
               label="share of allocated GPU-time")
        ax.bar([x + 0.2 for x in xs], [float(r["entitlement"]) for r in rows], width=0.4,
               label="entitlement (weight / sum of weights)")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["tenant"] for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_xlabel("tenant")
        ax.set_ylabel("fraction (0-1)")
        top = max(max(float(r["share"]), float(r["entitlement"])) for r in rows)
        ax.set_ylim(0, top * 1.25)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
        titled(fig, f"Per-tenant share vs entitlement: composition '{lab}'", meta)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        fig.savefig(share_png, dpi=120)
        plt.close(fig)
        wrote.append("tenant_share.png")
    print("wrote", ", ".join(wrote), "in", a.dir)


if __name__ == "__main__":
    main()
