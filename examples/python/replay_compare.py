#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Replay a Philly trace under a policy written in Python, the library's SRTF and the library's
DRF, and plot the job-completion-time CDFs.

The Python policy orders the queue shortest estimated job first (then first come): it is one
slot of a composition whose other slots are the library's (gang admission with EASY backfill,
first-fit packing and placement, no preemption). The library's `srtf` ordering (shortest
remaining time first, without preemption) is the same rule written in C++, so the two must give
the same figures: the example checks it. DRF, which orders by the tenants' dominant shares, is
the baseline; on this trace most jobs come from one virtual cluster, so DRF serves them first
come, first served, and shortest-first cuts the mean wait. The replay is gpusched-replay's own
code, so the summary holds the command's summary.csv columns.

Run: PYTHONPATH=<build>/python python3 examples/python/replay_compare.py TRACE.csv [OUT.png]
(default trace: tests/data/trace/philly_200.csv on 4 x 8 GPUs; default plot: jct_cdf.png)
"""
import os
import sys

import numpy as np

import gpusched as gs


def shortest_first(ctx, pending):
    """Shortest estimated job first, then first come; jobs without an estimate last."""
    return sorted(pending, key=lambda j: (j.estimate_s if j.estimate_s is not None
                                          else float("inf"), j.submit_s, j.id))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    trace = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "..", "tests", "data", "trace", "philly_200.csv")
    out_png = sys.argv[2] if len(sys.argv) > 2 else "jct_cdf.png"
    common = {"admission": "gang-easy", "preemption": "none"}
    runs = gs.replay(trace="philly:" + trace, cluster="4x8",
                     compare={"shortest-first (Python)": {"ordering": shortest_first, **common},
                              "srtf (library)": {"ordering": "srtf", **common},
                              "drf (library)": {"ordering": "drf", **common}})
    print(f"{'composition':<26}{'finished':>9}{'jct mean s':>12}{'jct p95 s':>12}"
          f"{'queue mean s':>14}")
    for label, run in runs.items():
        s = run["summary"]
        print(f"{label:<26}{s['finished']:>9}{s['jct_mean_s']:>12.0f}{s['jct_p95_s']:>12.0f}"
              f"{s['queue_mean_s']:>14.0f}")
    python, library = runs["shortest-first (Python)"], runs["srtf (library)"]
    same = all(python["summary"][k] == library["summary"][k]
               for k in python["summary"] if k != "label")
    print("the Python policy and the library's srtf give the same summary: "
          + ("yes" if same else "NO"))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, run in runs.items():
        jct = np.sort(run["jobs"]["jct_s"][~np.isnan(run["jobs"]["jct_s"])]) / 3600
        # the library's srtf dashed over the Python policy's line: the two coincide
        ax.step(jct, np.arange(1, len(jct) + 1) / len(jct), where="post", label=label,
                linestyle="--" if label == "srtf (library)" else "-")
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (hours)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"{os.path.basename(trace)} on 4 x 8 GPUs: JCT CDF")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    print(f"wrote {out_png}")


if __name__ == "__main__":
    main()
