#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The DRF paper's example (Ghodsi et al., NSDI'11, section 4), cycle by cycle.

A cluster of 9 CPUs and 18 GB; user A runs tasks of <1 CPU, 4 GB>, user B tasks of
<3 CPU, 1 GB>. Dominant Resource Fairness equalises the users' dominant shares: A's dominant
resource is memory, B's is CPU, and progressive filling ends with A running 3 tasks and B 2,
both at a dominant share of 2/3. Then tasks finish and the freed room goes to the user furthest
below its fair share.

Run: PYTHONPATH=<build>/python python3 examples/python/drf_cycles.py
"""
import gpusched as gs

CPU, MEM = 9, 18  # the paper's cluster: 9 CPUs, 18 GB (here one node, GiB)
USERS = {1: ("A", 1, 4), 2: ("B", 3, 1)}  # tenant: name, CPUs per task, GB per task


def shares(book):
    """Each user's CPU and memory share and its dominant share, from the ledger."""
    out = {}
    for tenant, (name, _, _) in USERS.items():
        cpu = sum(a.cpu_millis for r in book.running if r.job.tenant == tenant for a in r.tasks)
        mem = sum(a.memory_mib for r in book.running if r.job.tenant == tenant for a in r.tasks)
        c, m = cpu / 1000 / CPU, mem / 1024 / MEM
        tasks = sum(1 for r in book.running if r.job.tenant == tenant)
        out[name] = (tasks, c, m, max(c, m))
    return out


def run_cycle(title, pipe, book, pending, now_s):
    print(f"== {title}: {len(pending)} tasks pending")
    cycle = pipe.schedule(book, pending, now_s=now_s)
    for d in cycle.decisions:
        print("   ", d.describe())
    print(f"  after the cycle (invariants {'hold' if gs.check_invariants(book) else 'VIOLATED'}):")
    for name, (tasks, c, m, dom) in shares(book).items():
        print(f"    user {name}: {tasks} tasks  cpu {c:.3f}  mem {m:.3f}  -> dominant {dom:.3f}")
    return [j for j in pending if not book.is_running(j.id)]


def main():
    book = gs.Ledger(gs.cluster([gs.node(name="box", cores=CPU, memory_gib=MEM)]))
    pending = []
    for tenant, (name, cpu, mem) in USERS.items():
        for k in range(1, 6):
            pending.append(gs.job(id=tenant * 100 + k, name=f"{name}-{k}", tenant=tenant,
                                  submit_s=k, groups=[gs.group(name="task", cores=cpu,
                                                               memory_gib=mem)]))
    pipe = gs.pipeline(ordering="drf", preemption="none")
    print(f"cluster: {CPU} CPUs, {MEM} GB; user A tasks <1 CPU, 4 GB>, user B tasks <3 CPU, 1 GB>")
    pending = run_cycle("cycle 1 at t=10s", pipe, book, pending, 10)

    print("-- task A-1 finishes")
    pipe.release(book, 101, now_s=60)
    pending = run_cycle("cycle 2 at t=60s", pipe, book, pending, 60)

    print("-- task B-1 finishes")
    pipe.release(book, 201, now_s=120)
    run_cycle("cycle 3 at t=120s", pipe, book, pending, 120)


if __name__ == "__main__":
    main()
