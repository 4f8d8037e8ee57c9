# SPDX-License-Identifier: Apache-2.0
"""The library's pipeline by registry names, one cycle at a time, with decisions as objects."""
import itertools
import os

import pytest

import gpusched as gs
from conftest import make_job

PRIOR = os.path.join(os.environ["GPUSCHED_BENCH_DATA_DIR"], "tiresias", "yarn-gput1000.csv")
QUOTAS = os.path.join(os.path.dirname(__file__), "..", "data", "quota", "three_tenants.txt")


def four_h100():
    nodes = [gs.node(name=f"node-{i}", model="H100-SXM5-80GB", gpus=8, cores=112,
                     memory_gib=2048) for i in range(1, 5)]
    return gs.Ledger(gs.cluster(nodes))


def test_the_readme_gang_is_admitted_whole():
    book = four_h100()
    job = gs.job(id=1, name="train", tenant=1,
                 groups=[gs.group(name="worker", gpus=8, cores=32, memory_gib=256, count=3)])
    pipe = gs.pipeline(admission="gang-strict")
    cycle = pipe.schedule(book, [job], now_s=0)
    (d,) = cycle.decisions
    assert d.kind == "admit" and d.job == 1 and d.why.code == "placed"
    assert d.describe() == "admit job 1 'train' on node-1[gpu0-7], node-2[gpu0-7], node-3[gpu0-7]"
    assert [a.node for a in d.placement] == [0, 1, 2]
    assert len(d.placement[0].gpus) == 8
    assert book.running_ids == [1] and book.free_gpus == 8
    assert gs.check_invariants(book)


def test_a_deferral_carries_the_structured_reason():
    book = four_h100()
    big = make_job(1, gpus=8, count=3)
    other = make_job(2, gpus=8, count=2)
    cycle = gs.pipeline().schedule(book, [big, other], now_s=10)
    admit, defer = cycle.decisions
    assert admit.kind == "admit"
    assert defer.kind == "defer" and defer.why.code == "insufficient"
    assert (defer.why.resource, defer.why.needed, defer.why.available) == ("GPUs", 16, 8)
    assert defer.describe() == "defer job 2 'j2': needs 16 GPUs in all, only 8 free in the cluster"
    assert defer.why.describe() in defer.describe()
    assert cycle.count("admit") == 1 and cycle.count("defer") == 1


def test_priority_preemption_evicts_and_reports_victims():
    book = four_h100()
    low = [make_job(i, gpus=8, priority=0) for i in range(1, 5)]
    pipe = gs.pipeline(ordering="priority", preemption="priority")
    assert pipe.schedule(book, low, now_s=0).count("admit") == 4
    urgent = make_job(9, gpus=8, priority=10)
    (d,) = pipe.schedule(book, [urgent], now_s=60).decisions
    assert d.kind == "admit" and d.why.code == "placed_by_preemption"
    assert len(d.victims) == 1 and not book.is_running(d.victims[0])
    assert book.is_running(9) and gs.check_invariants(book).ok


def test_release_frees_the_gpus():
    book = four_h100()
    pipe = gs.pipeline(ordering="drf")
    pipe.schedule(book, [make_job(1, gpus=8)], now_s=0)
    pipe.release(book, 1, now_s=5)
    assert book.running_ids == [] and book.free_gpus == 32
    with pytest.raises(gs.InvalidValueError):
        book.release(1)


def test_every_builtin_name_of_every_family_runs_a_cycle():
    names = gs.policy_names()
    assert "drf" in names["ordering"] and "gang-easy" in names["admission"]
    assert "fgd-best-fit" in names["packing"] and "topology" in names["placement"]
    assert "checkpoint-aware" in names["preemption"]
    for family, family_names in names.items():
        for name in family_names:
            book = four_h100()
            prior = {"gittins_prior": PRIOR} if name == "2d-gittins" else {}
            if name in ("quota", "kueue-drs", "fair-tree", "checkpoint-aware-reclaim"):
                prior["quotas"] = QUOTAS  # the run's quota and tenant trees
            pipe = gs.pipeline(**{family: name}, **prior)
            assert pipe.names[family] == name
            jobs = [make_job(i, gpus=g, tenant=i % 3, priority=i % 2, submit_s=i)
                    for i, g in zip(range(1, 8), itertools.cycle([1, 2, 4, 8]))]
            cycle = pipe.schedule(book, jobs, now_s=100)
            assert len(cycle.decisions) == len(jobs), (family, name)
            assert cycle.count("admit") >= 1, (family, name)
            assert gs.check_invariants(book), (family, name, str(gs.check_invariants(book)))


def test_the_drf_composition_of_the_issue():
    book = four_h100()
    pipe = gs.pipeline(ordering="drf", admission="gang-easy", placement="topology",
                       preemption="checkpoint-aware")
    jobs = [make_job(i, gpus=8, tenant=i % 2, count=2) for i in range(1, 4)]
    cycle = pipe.schedule(book, jobs, now_s=0)
    assert [d.kind for d in cycle.decisions].count("admit") == 2
    assert gs.check_invariants(book)


def test_unknown_names_and_bad_jobs_raise_before_anything_changes():
    with pytest.raises(gs.InvalidValueError, match=r"unknown_name.*field 'ordering' = nope: unknown policy \(known: fifo"):
        gs.pipeline(ordering="nope")
    with pytest.raises(gs.InvalidValueError, match="2d-gittins.*needs a GPU-time prior"):
        gs.pipeline(ordering="2d-gittins")
    with pytest.raises(gs.InvalidValueError, match="admission"):
        gs.pipeline(admission=lambda ctx, jobs: jobs)
    book = four_h100()
    pipe = gs.pipeline()
    pipe.schedule(book, [make_job(1, gpus=8)], now_s=0)
    # job 1 is running: scheduling it again is invalid, and nothing is admitted
    with pytest.raises(gs.InvalidValueError, match=r"duplicate_id.*field 'id' = 1: job is already running"):
        pipe.schedule(book, [make_job(2, gpus=8), make_job(1, gpus=8)], now_s=1)
    assert book.running_ids == [1]


def test_decisions_and_reasons_are_plain_values():
    book = four_h100()
    (d,) = gs.pipeline().schedule(book, [make_job(1, gpus=8, count=5)], now_s=0).decisions
    assert d.kind in ("defer", "reject")
    r = d.why.as_dict()
    assert r["code"] == d.why.code and r["needed"] == d.why.needed
    assert repr(d).startswith("<Decision: ")
