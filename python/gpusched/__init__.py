# SPDX-License-Identifier: Apache-2.0
"""gpusched: GPU-cluster scheduling from Python, over the header-only C++ library.

Build a cluster and jobs with keyword arguments, run the library's pipeline one cycle at a
time with policies chosen by name (or written in Python), replay traces with the
gpusched-replay command's own code (replay()), getting its tables back as NumPy arrays, and run
the FGD packing experiment of gpusched-experiment (fgd_experiment()).

    import gpusched as gs
    nodes = [gs.node(name=f"node-{i}", model="H100-SXM5-80GB", gpus=8, cores=112,
                     memory_gib=2048) for i in range(1, 5)]
    book = gs.Ledger(gs.cluster(nodes))
    job = gs.job(id=1, name="train", tenant=1,
                 groups=[gs.group(name="worker", gpus=8, cores=32, memory_gib=256, count=3)])
    pipe = gs.pipeline(ordering="drf", admission="gang-strict")
    for d in pipe.schedule(book, [job], now_s=0).decisions:
        print(d.describe())   # admit job 1 'train' on node-1[gpu0-7], ...

Errors: every error of the library is a gpusched.Error whose message starts with
[gpusched.<id>] and names the object, the field and the value; bad values are
InvalidValueError and malformed text ParseError (both also ValueError). A policy written in
Python that raises makes the call raise PolicyError (naming the policy and the job) from the
original exception.

Policies written in Python (any callable, in the slot of its family):
  ordering(ctx, pending) -> the pending jobs (or their ids) in order, first served first;
  packing(ctx, request, candidates) -> one of the candidate node indices (nodes where the
      task fits), or None; the GPUs on that node are then chosen first fit, or the policy
      returns (node, [gpu, ...]) with local GPU indices for a whole-GPU or share demand
      (ctx.gpu_free_milli(node) gives each GPU's free share);
  preemption(ctx, job, probe) -> the ids of running jobs to evict (probe(ids) tells whether
      evicting them lets `job` fit), or [] / None.
`ctx` (a Context) and `probe` are valid during the call only. The GIL is taken for each call
and released while the library's own policies run.
"""
from ._gpusched import *  # noqa: F401,F403
from ._gpusched import __version__, _replay_tables  # noqa: F401
from . import _tables

__all__ = [name for name in dir() if not name.startswith("_")] + ["replay", "fgd_experiment",
                                                                  "to_frame"]

_FAMILIES = ("ordering", "admission", "packing", "placement", "preemption")
_PYTHON_FAMILIES = ("ordering", "packing", "preemption")


def _option_args(options):
    """gpusched-replay options from keyword arguments: seed=3 -> --seed 3, flags as True."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        else:
            args += [flag, str(value)]
    return args


def _composition_spec(label, composition, python_policies):
    """One --compare entry 'LABEL:slot=name,...'; Python callables get registry names."""
    for bad in ":;,=":
        if bad in label:
            raise InvalidValueError(  # noqa: F405
                f"[gpusched.invalid_value] replay: field 'compare' = '{label}': a label must not "
                f"contain '{bad}'")
    if composition is None:
        composition = {}
    if isinstance(composition, str):
        slots = {}
        for kv in composition.split(","):
            if not kv.strip():
                continue
            slot, _, name = kv.partition("=")
            slots[slot.strip()] = name.strip()
        composition = slots
    parts = []
    for slot, policy in composition.items():
        if callable(policy) and not isinstance(policy, str):
            if slot not in _PYTHON_FAMILIES:
                raise InvalidValueError(  # noqa: F405
                    f"[gpusched.invalid_value] replay '{label}': field '{slot}' = "
                    f"{policy!r}: Python policies are ordering, packing or preemption")
            name = f"python-{len(python_policies)}-{getattr(policy, '__name__', slot)}"
            name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
            python_policies.append((slot, name, policy))
            policy = name
        parts.append(f"{slot}={policy}")
    return f"{label}:" + ",".join(parts)


def replay(trace, cluster="250x8:V100-SXM2-32GB", compare=None, tables=True, **options):
    """Replays a trace with gpusched-replay's own code and returns its figures.

    trace    'philly:PATH', 'tiresias:PATH', 'openb:PATH' or 'synthetic:JOBS:PER_HOUR[:TENANTS]'
    cluster  'NODESxGPUS[:MODEL]' or 'openb:NODE_CSV' (the command's --cluster)
    compare  {label: composition}: a composition is 'slot=name,...' (the command's --policy
             text) or a dict {slot: name or Python callable}; None: the library's defaults
             under the label 'default'
    tables   also return the per-job, per-sample and per-tenant tables (dicts of NumPy arrays)
    options  any other option of the command, with underscores: tenant='vc', limit=100,
             seed=1, arrival_scale=0.5, graceful_preemption=True, gittins_prior=PATH, ...

    Returns {label: {'summary': {column: value} (exactly summary.csv's row: the same columns,
    the same values), 'jobs': {column: array}, 'samples': {...}, 'tenants': {...},
    'events': int, 'wall_s': float}}. With pandas importable, the tables are also available
    as DataFrames through gpusched.to_frame(table).
    Raises InvalidValueError for a bad option (the command's message) or policy name, and
    PolicyError when a Python policy raises.
    """
    args = ["--trace", str(trace), "--cluster", str(cluster)]
    python_policies = []
    if compare:
        specs = [_composition_spec(str(label), c, python_policies) for label, c in compare.items()]
        args += ["--compare", ";".join(specs)]
    args += _option_args(options)
    out = {}
    for run in _replay_tables(args, python_policies):
        entry = {"summary": _tables.summary_row(run["summary_csv"]),
                 "events": run["events"], "wall_s": run["wall_s"]}
        if tables:
            entry["jobs"] = _tables.columns(run["jobs_csv"])
            entry["samples"] = _tables.columns(run["samples_csv"])
            entry["tenants"] = _tables.columns(run["tenants_csv"])
        out[run["label"]] = entry
    return out


def fgd_experiment(nodes, pods, policies="all", seeds=range(42, 52), tune=1.3, popularity=95,
                   random_ties=False, name_order=False):
    """Runs the FGD packing experiment (the code of `gpusched-experiment packing`).

    nodes, pods  paths of an openb node list and pod list (Alibaba clusterdata GPU traces)
    policies     'all' or a list of random, dotprod, clustering, packing, bestfit, fgd
    seeds        the seeds (one run per policy and seed); tune, popularity, random_ties,
                 name_order as the command's --tune, --popularity, --random-ties, --name-order

    Returns a dict: 'nodes', 'gpus', 'pods', 'last_bin' (round(tune x 100)); 'runs', the
    command's per-run table as NumPy columns (policy, seed, pods, placed, failed, alloc100,
    unallocated100, unallocated_last, frag100, wall_s); 'alloc', 'frag', 'frag_ratio': arrays
    of shape (runs, bins) per arrived-% bin (the analysis_*_discrete.csv rows); 'mean':
    {policy label: (unallocated % at 100, at last_bin)} averaged over the seeds.
    """
    import numpy as np

    from ._gpusched import _fgd_runs

    if isinstance(policies, str):
        policies = [p for p in policies.split(",") if p]
    info, runs = _fgd_runs(str(nodes), str(pods), list(policies), [int(s) for s in seeds],
                           float(tune), float(popularity), bool(random_ties), bool(name_order))
    out = dict(info)
    columns = ["policy", "seed", "pods", "placed", "failed", "alloc100", "unallocated100",
               "unallocated_last", "frag100", "wall_s"]
    out["runs"] = {c: np.array([r[c] for r in runs],
                               dtype=object if c == "policy" else None) for c in columns}
    for series in ("alloc", "frag", "frag_ratio"):
        out[series] = np.array([r[series] for r in runs], dtype=float)
    mean = {}
    seeds_n = len(runs) // max(len(set(r["policy"] for r in runs)), 1)
    for r in runs:  # summed as the command sums them (each run / seeds), for the same digits
        m = mean.setdefault(r["policy"], [0.0, 0.0])
        m[0] += r["unallocated100"] / seeds_n
        m[1] += r["unallocated_last"] / seeds_n
    out["mean"] = {k: (a, b) for k, (a, b) in mean.items()}
    return out


def to_frame(table):
    """A table (dict of NumPy columns) as a pandas DataFrame (needs pandas)."""
    import pandas

    return pandas.DataFrame(table)
