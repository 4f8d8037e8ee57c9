# SPDX-License-Identifier: Apache-2.0
"""gpusched.fgd_experiment against the command: the figures of
`gpusched-experiment packing` on its small fixture (benchmarks/experiment/fixtures, whose
golden output the experiment.packing-small-fixture test checks)."""
import os

import numpy as np
import pytest

import gpusched as gs

FIXTURES = os.path.join(os.environ["GPUSCHED_BENCH_DATA_DIR"], "..", "experiment", "fixtures")


def golden_rows():
    """policy, seed -> (pods, failed, alloc100, unalc100, unalc130, frag100) and the means, as
    the command printed them (%.2f)."""
    rows, means = {}, {}
    with open(os.path.join(FIXTURES, "packing-small.golden.txt")) as f:
        lines = f.read().splitlines()
    for line in lines[2:]:
        if not line:
            break
        p, seed, pods, failed, *fig = line.split()
        rows[(p, int(seed))] = (int(pods), int(failed), *fig)
    for line in lines[lines.index("policy             ours@100  ours@130") + 1:]:
        p, a, b = line.split()
        means[p] = (a, b)
    return rows, means


def test_the_small_fixture_gives_the_commands_figures():
    out = gs.fgd_experiment(os.path.join(FIXTURES, "nodes.csv"), os.path.join(FIXTURES, "pods.csv"),
                            policies="all", seeds=[1, 2], tune=1.3)
    assert (out["nodes"], out["gpus"], out["pods"], out["last_bin"]) == (4, 14, 12, 130)
    rows, means = golden_rows()
    r = out["runs"]
    got = {(r["policy"][i], int(r["seed"][i])): (
        int(r["pods"][i]), int(r["failed"][i]), f"{r['alloc100'][i]:.2f}",
        f"{r['unallocated100'][i]:.2f}", f"{r['unallocated_last'][i]:.2f}",
        f"{r['frag100'][i]:.2f}") for i in range(len(r["seed"]))}
    assert got == rows
    assert {k: (f"{a:.2f}", f"{b:.2f}") for k, (a, b) in out["mean"].items()} == means
    assert out["alloc"].shape == (12, 131)
    np.testing.assert_allclose(out["alloc"][:, 100], r["alloc100"])


def test_bad_arguments_raise():
    nodes, pods = os.path.join(FIXTURES, "nodes.csv"), os.path.join(FIXTURES, "pods.csv")
    with pytest.raises(gs.InvalidValueError, match="field 'policies' = 'best': unknown policy"):
        gs.fgd_experiment(nodes, pods, policies="best")
    with pytest.raises(gs.InvalidValueError, match="tune"):
        gs.fgd_experiment(nodes, pods, tune=0)
    with pytest.raises(gs.ParseError, match="pods-bad-milli.csv:3: field 'gpu_milli'"):
        gs.fgd_experiment(nodes, os.path.join(FIXTURES, "pods-bad-milli.csv"))
