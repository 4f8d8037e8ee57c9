#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What replaying from Python costs: gpusched.replay against the gpusched-replay command on
Philly VC b436b2 (7,423 jobs, 32 x 4 GPUs), and the overhead of an ordering policy written in
Python, per pending job it orders.

Run (Release build of the module and the command, see benchmarks/README.md):
  PYTHONPATH=build/bench/python /usr/bin/python3 benchmarks/python/replay_overhead.py \
      build/bench/benchmarks/replay/gpusched-replay [REPEATS]
Prints the wall times (the minimum over REPEATS runs, default 3) and the derived figures.
"""
import os
import subprocess
import sys
import tempfile
import time

import gpusched as gs

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = "philly:" + os.path.join(HERE, "..", "data", "philly", "philly.csv")
OPTIONS = ["--tenant", "b436b2", "--cluster", "32x4"]
POLICY = "ordering=fifo,admission=gang,preemption=none"


def best(f, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    cli = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t_cli, _ = best(lambda: subprocess.run(
        [cli, "--trace", TRACE, *OPTIONS, "--policy", POLICY, "--quiet"], check=True), repeats)
    with tempfile.TemporaryDirectory() as out:
        t_cli_out, _ = best(lambda: subprocess.run(
            [cli, "--trace", TRACE, *OPTIONS, "--policy", POLICY, "--quiet", "--out", out],
            check=True), repeats)
    t_summary, _ = best(lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                          compare={"fifo": POLICY}, tables=False), repeats)
    t_lib, lib = best(lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                        compare={"fifo": POLICY}), repeats)
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

    t_py, py = best(run_python, repeats)
    fifo_calls, fifo_jobs = seen["calls"], seen["jobs"]

    def identity(ctx, pending):  # the crossing alone: jobs to Python and back, no sorting
        return pending

    t_id, ident = best(lambda: gs.replay(trace=TRACE, cluster="32x4", tenant="b436b2",
                                         compare={"id": {"ordering": identity, "admission": "gang",
                                                         "preemption": "none"}}), repeats)
    same = {k: v for k, v in py["fifo-py"]["summary"].items() if k != "label"} == {
        k: v for k, v in lib["fifo"]["summary"].items() if k != "label"}
    print(f"jobs {lib['fifo']['summary']['jobs']}, events {lib['fifo']['events']}, "
          f"cycles {lib['fifo']['summary']['cycles']}")
    print(f"gpusched-replay (CLI), table only              {t_cli:8.3f} s")
    print(f"gpusched-replay (CLI), --out (CSV files)       {t_cli_out:8.3f} s")
    print(f"gpusched.replay, library FIFO, tables=False   {t_summary:8.3f} s  "
          f"({100 * (t_summary / t_cli - 1):+.1f}% vs the CLI)")
    print(f"gpusched.replay, library FIFO, NumPy tables   {t_lib:8.3f} s  "
          f"({100 * (t_lib / t_cli_out - 1):+.1f}% vs the CLI with --out; the replay itself "
          f"{lib['fifo']['wall_s']:.3f} s)")
    print(f"gpusched.replay, Python FIFO, NumPy tables    {t_py:8.3f} s  (same summary as the "
          f"library FIFO: {same})")
    print(f"gpusched.replay, Python identity, tables     {t_id:8.3f} s  (returns the queue "
          f"unchanged)")
    per_job = 1e6 * (t_py - t_lib) / max(fifo_jobs, 1)
    print(f"Python FIFO: {fifo_calls} calls, {fifo_jobs} pending jobs ordered; overhead "
          f"{per_job:.2f} us per pending job ({1e6 * (t_py - t_lib) / max(fifo_calls, 1):.1f} us "
          f"per call), of which crossing (identity) {1e6 * (t_id - t_lib) / max(fifo_jobs, 1):.2f}"
          f" us and the Python sort {1e6 * (t_py - t_id) / max(fifo_jobs, 1):.2f} us")


if __name__ == "__main__":
    main()
