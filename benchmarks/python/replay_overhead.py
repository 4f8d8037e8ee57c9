#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What replaying from Python costs: gpusched.replay against the gpusched-replay command on
Philly VC b436b2 (7,423 jobs, 32 x 4 GPUs), and the overhead of an ordering policy written in
Python, per pending job it orders.

Run (Release build of the module and the command, see benchmarks/README.md):
  PYTHONPATH=build/bench/python /usr/bin/python3 benchmarks/python/replay_overhead.py \
      build/bench/benchmarks/replay/gpusched-replay [REPEATS]
Prints, for each variant, the wall time and the CPU time (user + system; the command's from the
child's resource usage, Python's from the process) as the median over REPEATS runs (default 3).
The variants are run interleaved (one run of each, REPEATS times), so that load from other
programs on the machine falls on all of them alike; the CPU time is the steadier figure.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import gpusched as gs

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = "philly:" + os.path.join(HERE, "..", "data", "philly", "philly.csv")
OPTIONS = ["--tenant", "b436b2", "--cluster", "32x4"]
POLICY = "ordering=fifo,admission=gang,preemption=none"


def cpu_now():
    """User + system CPU seconds of this process and of its waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(variants, repeats):
    """Runs every variant once per round, `repeats` rounds; returns name -> (median wall s,
    median CPU s, last result)."""
    walls = {name: [] for name in variants}
    cpus = {name: [] for name in variants}
    results = {}
    for _ in range(repeats):
        for name, f in variants.items():
            c0, t0 = cpu_now(), time.perf_counter()
            results[name] = f()
            walls[name].append(time.perf_counter() - t0)
            cpus[name].append(cpu_now() - c0)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]), results[name])
            for name in variants}


def main():
    cli = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seen = {"calls": 0, "jobs": 0}

    def fifo(ctx, pending):
        seen["calls"] += 1
        seen["jobs"] += len(pending)
        return sorted(pending, key=lambda j: (j.submit_s, j.id))

    def run_python():
        seen["calls"] = seen["jobs"] = 0
        return gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                         compare={"fifo-py": {"ordering": fifo, "admission": "gang",
                                              "preemption": "none"}})

    def identity(ctx, pending):  # the crossing alone: jobs to Python and back, no sorting
        return pending

    with tempfile.TemporaryDirectory() as out:
        m = measure({
            "cli": lambda: subprocess.run(
                [cli, "--trace", TRACE, *OPTIONS, "--policy", POLICY, "--quiet"], check=True),
            "cli_out": lambda: subprocess.run(
                [cli, "--trace", TRACE, *OPTIONS, "--policy", POLICY, "--quiet", "--out", out],
                check=True),
            "summary": lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                         compare={"fifo": POLICY}, tables=False),
            "lib": lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                     compare={"fifo": POLICY}),
            "py": run_python,
            "id": lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                    compare={"id": {"ordering": identity, "admission": "gang",
                                                    "preemption": "none"}}),
        }, repeats)
    fifo_calls, fifo_jobs = seen["calls"], seen["jobs"]
    (t_cli, c_cli, _), (t_cli_out, c_cli_out, _) = m["cli"], m["cli_out"]
    (t_summary, c_summary, _), (t_lib, c_lib, lib) = m["summary"], m["lib"]
    (t_py, c_py, py), (t_id, c_id, _) = m["py"], m["id"]
    same = {k: v for k, v in py["fifo-py"]["summary"].items() if k != "label"} == {
        k: v for k, v in lib["fifo"]["summary"].items() if k != "label"}
    print(f"jobs {lib['fifo']['summary']['jobs']}, events {lib['fifo']['events']}, "
          f"cycles {lib['fifo']['summary']['cycles']}")
    def row(text, wall, cpu, note=""):
        print(f"{text:<46} wall {wall:7.3f} s  CPU {cpu:7.3f} s{note}")

    row("gpusched-replay (CLI), table only", t_cli, c_cli)
    row("gpusched-replay (CLI), --out (CSV files)", t_cli_out, c_cli_out)
    row("gpusched.replay, library FIFO, tables=False", t_summary, c_summary,
        f"  (CPU {100 * (c_summary / c_cli - 1):+.1f}% vs the CLI)")
    row("gpusched.replay, library FIFO, NumPy tables", t_lib, c_lib,
        f"  (CPU {100 * (c_lib / c_cli_out - 1):+.1f}% vs the CLI with --out; the replay "
        f"itself {lib['fifo']['wall_s']:.3f} s wall)")
    row("gpusched.replay, Python FIFO, NumPy tables", t_py, c_py,
        f"  (same summary as the library FIFO: {same})")
    row("gpusched.replay, Python identity, tables", t_id, c_id, "  (returns the queue unchanged)")
    per_job = 1e6 * (c_py - c_lib) / max(fifo_jobs, 1)
    print(f"Python FIFO (CPU): {fifo_calls} calls, {fifo_jobs} pending jobs ordered; overhead "
          f"{per_job:.2f} us per pending job ({1e6 * (c_py - c_lib) / max(fifo_calls, 1):.1f} us "
          f"per call), of which crossing (identity) {1e6 * (c_id - c_lib) / max(fifo_jobs, 1):.2f}"
          f" us and the Python sort {1e6 * (c_py - c_id) / max(fifo_jobs, 1):.2f} us")

if __name__ == "__main__":
    main()
