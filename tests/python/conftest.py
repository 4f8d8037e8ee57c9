# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python module's tests (run by CTest with PYTHONPATH on the build
tree's package and the data directories in the environment)."""
import os

import pytest

import gpusched as gs


@pytest.fixture
def data_dir():
    """tests/data (GPUSCHED_TEST_DATA_DIR, set by CTest)."""
    return os.environ["GPUSCHED_TEST_DATA_DIR"]


@pytest.fixture
def two_dgx():
    """Two 8-GPU H100 nodes with 64 cores and 1 TiB each, as a fresh ledger."""
    nodes = [gs.node(name=n, model="H100-SXM5-80GB", gpus=8, cores=64, memory_gib=1024)
             for n in ("dgx-a", "dgx-b")]
    return gs.Ledger(gs.cluster(nodes))


def make_job(id, gpus, tenant=0, priority=0, count=1, name=None, submit_s=0.0, cores=1.0):
    """A job of `count` tasks of `gpus` GPUs each."""
    return gs.job(id=id, name=name or f"j{id}", tenant=tenant, priority=priority,
                  submit_s=submit_s,
                  groups=[gs.group(name="worker", gpus=gpus, cores=cores, memory_gib=1,
                                   count=count)])
