# SPDX-License-Identifier: Apache-2.0
"""The Python examples run: drf_cycles.py prints its golden output, replay_compare.py writes
its plot."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.environ["GPUSCHED_EXAMPLES_DIR"]


def run(script, *args, cwd=None):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], check=True,
                          capture_output=True, text=True, cwd=cwd).stdout


def test_drf_cycles_prints_its_golden_output():
    with open(os.path.join(EXAMPLES, "golden", "drf_cycles.txt")) as f:
        golden = f.read()
    assert run("drf_cycles.py") == golden


def test_drf_cycles_ends_at_the_papers_allocation():
    out = run("drf_cycles.py")
    first = out.split("-- task A-1 finishes")[0]
    assert "user A: 3 tasks  cpu 0.333  mem 0.667  -> dominant 0.667" in first
    assert "user B: 2 tasks  cpu 0.667  mem 0.111  -> dominant 0.667" in first


def test_replay_compare_writes_the_plot(tmp_path, data_dir):
    png = tmp_path / "cdf.png"
    out = run("replay_compare.py", os.path.join(data_dir, "trace", "philly_200.csv"), str(png))
    assert "shortest-first (Python)" in out and "drf (library)" in out
    # the Python policy is the library's srtf rule: the same figures, and fewer than DRF's
    assert "the Python policy and the library's srtf give the same summary: yes" in out
    rows = {line[:26].strip(): line[26:].split() for line in out.splitlines()[1:4]}
    assert float(rows["shortest-first (Python)"][1]) < float(rows["drf (library)"][1])
    assert png.stat().st_size > 1000
