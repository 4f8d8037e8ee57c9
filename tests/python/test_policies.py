# SPDX-License-Identifier: Apache-2.0
"""Policies written in Python, composed with the library's policies of the other families."""
import gc

import pytest

import gpusched as gs
from conftest import make_job


def ledger(nodes=4):
    return gs.Ledger(gs.cluster([gs.node(name=f"node-{i}", model="H100-SXM5-80GB", gpus=8,
                                         cores=112, memory_gib=2048)
                                 for i in range(1, nodes + 1)]))


def test_a_python_ordering_decides_who_goes_first():
    seen = []

    def largest_first(ctx, pending):
        seen.append((ctx.now_s, [j.id for j in pending]))
        return sorted(pending, key=lambda j: (-j.gpus, j.id))

    book = ledger(nodes=2)
    jobs = [make_job(1, gpus=2), make_job(2, gpus=8), make_job(3, gpus=4)]
    pipe = gs.pipeline(ordering=largest_first, admission="gang", preemption="none")
    assert pipe.names["ordering"] == "largest_first"
    cycle = pipe.schedule(book, jobs, now_s=42)
    assert seen == [(42.0, [1, 2, 3])]
    assert [d.job for d in cycle.decisions] == [2, 3, 1]
    assert all(d.kind == "admit" for d in cycle.decisions)


def test_an_ordering_may_return_ids():
    book = ledger(nodes=1)
    pipe = gs.pipeline(ordering=lambda ctx, pending: [3, 1, 2])
    cycle = pipe.schedule(book, [make_job(i, gpus=4) for i in (1, 2, 3)], now_s=0)
    assert [d.job for d in cycle.decisions] == [3, 1, 2]
    assert [d.kind for d in cycle.decisions] == ["admit", "admit", "defer"]


def test_a_python_packing_chooses_the_node():
    calls = []

    def last_node(ctx, request, candidates):
        calls.append((request.gpus, list(candidates)))
        return candidates[-1]

    book = ledger(nodes=3)
    pipe = gs.pipeline(packing=last_node, ordering="fifo")
    cycle = pipe.schedule(book, [make_job(1, gpus=8), make_job(2, gpus=2)], now_s=0)
    assert [d.describe() for d in cycle.decisions] == [
        "admit job 1 'j1' on node-3[gpu0-7]", "admit job 2 'j2' on node-2[gpu0-1]"]
    assert calls == [(8, [0, 1, 2]), (2, [0, 1])]
    assert gs.check_invariants(book)


def test_a_python_packing_may_choose_the_gpus_too():
    def last_gpus(ctx, request, candidates):
        node = candidates[0]
        free = [g for g, m in enumerate(ctx.gpu_free_milli(node)) if m == 1000]
        return node, free[-request.gpus:]

    book = ledger(nodes=1)
    pipe = gs.pipeline(packing=last_gpus, ordering="fifo")
    cycle = pipe.schedule(book, [make_job(1, gpus=2), make_job(2, gpus=3)], now_s=0)
    assert [d.describe() for d in cycle.decisions] == [
        "admit job 1 'j1' on node-1[gpu6-7]", "admit job 2 'j2' on node-1[gpu3-5]"]
    assert gs.check_invariants(book)


@pytest.mark.parametrize("answer, message", [
    ((0, [0]), r"returned 1 GPU\(s\); the task needs 2"),
    ((0, [1, 1]), r"returned GPU 1 twice"),
    ((0, [0, 9]), r"returned GPU 9, but the node has 8 GPUs"),
    ((0, [0, 1], 5), r"tuple of 3 items"),
    ((0, [6, 7]), r"returned GPU 6, which is not free enough \(0 milli free\)"),
])
def test_a_bad_gpu_choice_is_a_policy_error_and_changes_nothing(answer, message):
    book = ledger(nodes=1)
    # GPUs 6 and 7 busy: a first job takes them through a Python packing.
    gs.pipeline(packing=lambda ctx, r, c: (0, [6, 7])).schedule(book, [make_job(1, gpus=2)],
                                                                   now_s=0)
    before = state(book)
    with pytest.raises(gs.PolicyError, match=message):
        gs.pipeline(packing=lambda ctx, r, c: answer).schedule(book, [make_job(2, gpus=2)],
                                                               now_s=1)
    assert state(book) == before and gs.check_invariants(book)


def test_a_python_preemption_chooses_victims_with_the_probe():
    probes = []

    def youngest_low_priority(ctx, job, probe):
        cands = sorted((r for r in ctx.running() if r.job.priority < job.priority),
                       key=lambda r: -r.start_s)
        for k in range(1, len(cands) + 1):
            ids = [r.id for r in cands[:k]]
            ok = probe(ids)
            probes.append((ids, ok))
            if ok:
                return ids
        return []

    book = ledger(nodes=2)
    pipe = gs.pipeline(ordering="priority", preemption=youngest_low_priority)
    pipe.schedule(book, [make_job(1, gpus=8)], now_s=0)
    pipe.schedule(book, [make_job(2, gpus=8)], now_s=10)
    (d,) = pipe.schedule(book, [make_job(3, gpus=8, priority=5)], now_s=20).decisions
    assert d.kind == "admit" and d.victims == [2]
    assert probes == [([2], True)]
    assert book.running_ids == [1, 3] or sorted(book.running_ids) == [1, 3]
    assert gs.check_invariants(book)


def test_python_policies_in_every_python_slot_at_once():
    book = ledger(nodes=2)
    pipe = gs.pipeline(ordering=lambda c, p: p[::-1], packing=lambda c, r, cand: cand[0],
                       preemption=lambda c, j, probe: [], admission="gang-easy",
                       placement="gang")
    cycle = pipe.schedule(book, [make_job(i, gpus=4) for i in range(1, 6)], now_s=0)
    assert [d.job for d in cycle.decisions] == [5, 4, 3, 2, 1]
    assert cycle.count("admit") == 4
    assert gs.check_invariants(book)


def state(book):
    return [(r.id, [(a.node, [g["gpu"] for g in a.gpus]) for a in r.tasks]) for r in book.running]


def test_an_exception_in_an_ordering_is_raised_with_the_jobs_named_and_nothing_changes():
    def broken(ctx, pending):
        return 1 / 0

    book = ledger(nodes=1)
    gs.pipeline().schedule(book, [make_job(1, gpus=2)], now_s=0)
    before = state(book)
    pipe = gs.pipeline(ordering=broken)
    with pytest.raises(gs.PolicyError) as e:
        pipe.schedule(book, [make_job(2, gpus=2, name="bert")], now_s=1)
    assert "ordering policy 'broken'" in str(e.value)
    assert "job 2 'bert'" in str(e.value)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert state(book) == before and gs.check_invariants(book)


def test_an_exception_in_a_packing_names_the_job_and_changes_nothing():
    def broken(ctx, request, candidates):
        raise KeyError("no luck")

    book = ledger(nodes=1)
    before = state(book)
    with pytest.raises(gs.PolicyError, match=r"packing policy 'broken'.*job 1 'j1'.*no luck") as e:
        gs.pipeline(packing=broken).schedule(book, [make_job(1, gpus=2)], now_s=0)
    assert isinstance(e.value.__cause__, KeyError)
    assert state(book) == before and gs.check_invariants(book)


def test_an_exception_in_a_preemption_names_the_job_and_changes_nothing():
    def broken(ctx, job, probe):
        raise RuntimeError("victims unknown")

    book = ledger(nodes=1)
    gs.pipeline().schedule(book, [make_job(1, gpus=8)], now_s=0)
    before = state(book)
    with pytest.raises(gs.PolicyError,
                       match=r"preemption policy 'broken'.*job 2 'urgent'.*victims unknown"):
        gs.pipeline(preemption=broken).schedule(
            book, [make_job(2, gpus=8, priority=9, name="urgent")], now_s=1)
    assert state(book) == before and gs.check_invariants(book)


def test_a_bad_return_value_is_a_policy_error():
    book = ledger(nodes=1)
    with pytest.raises(gs.PolicyError, match="leaves out job 2") as e:
        gs.pipeline(ordering=lambda c, p: [1]).schedule(
            book, [make_job(1, gpus=1), make_job(2, gpus=1)], now_s=0)
    assert isinstance(e.value.__cause__, ValueError)
    with pytest.raises(gs.PolicyError, match="not one of the candidates"):
        gs.pipeline(packing=lambda c, r, cand: 7).schedule(book, [make_job(3, gpus=1)], now_s=0)
    assert book.running_ids == []


def test_an_exception_later_in_the_cycle_leaves_the_ledger_unchanged():
    # job 1 is placed, then the packing policy raises for job 2: the whole cycle must be undone
    def second_fails(ctx, request, candidates):
        if request.gpus == 2:
            raise RuntimeError("second job")
        return candidates[0]

    book = ledger(nodes=1)
    before = state(book)
    with pytest.raises(gs.PolicyError, match="job 2"):
        gs.pipeline(packing=second_fails).schedule(
            book, [make_job(1, gpus=4), make_job(2, gpus=2)], now_s=0)
    assert state(book) == before


def test_the_context_is_valid_during_the_call_only():
    kept = []

    def keep(ctx, pending):
        kept.append(ctx)
        assert ctx.node_count == 1 and ctx.free_gpus() == 8 and ctx.free_gpus(0) == 8
        assert ctx.uniform_index(10) < 10
        return pending

    gs.pipeline(ordering=keep).schedule(ledger(nodes=1), [make_job(1, gpus=1)], now_s=0)
    with pytest.raises(ValueError, match="valid only during"):
        kept[0].now_s


def test_a_pipeline_keeps_its_python_policy_alive_and_releases_it():
    class Order:
        def __call__(self, ctx, pending):
            return pending

    import weakref
    o = Order()
    ref = weakref.ref(o)
    pipe = gs.pipeline(ordering=o)
    del o
    gc.collect()
    assert ref() is not None
    pipe.schedule(ledger(nodes=1), [make_job(1, gpus=1)], now_s=0)
    del pipe
    gc.collect()
    assert ref() is None
