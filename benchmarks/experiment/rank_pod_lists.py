#!/usr/bin/python3
"""Run the FGD packing experiment on every openb pod list and compare policy rankings.

For each pod list this runs
    gpusched-experiment packing --nodes NODES --pods LIST --policy all --seeds S --tune T --out DIR
(six policies x seeds), reads DIR/analysis_allo_discrete.csv and prints, per list and policy,
the mean unallocated-GPU % (100 - allocation %) at arrived 100% and at arrived 130% (tune 1.3),
next to the published means of the FGD artifact where a published CSV covers that list, and
whether the ranking of the six policies matches.

Published input: any CSV in the published layout (workload,sc_policy,tune,seed,[total_gpus,]
0..130, or only some of the numbered columns, e.g. just "130"); several may be given. Ranks are
compared pairwise: a pair of policies whose published order we reverse is called "within spread"
when the published gap is no larger than the larger of the two published cross-seed standard
deviations (the two policies are tied at the paper's resolution).

Standard library only; run with Debian's /usr/bin/python3. Example (from the repository root):
    cmake --preset bench -B build/bench
    cmake --build build/bench --target gpusched-experiment -j1
    benchmarks/experiment/rank_pod_lists.py --csv-dir ../shared/data/alibaba-gpu-v2023/csv
"""

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ["01-Random", "02-DotProd", "03-GpuClustering", "04-GpuPacking", "05-BestFit", "06-FGD"]
SHORT = {
    "01-Random": "Random",
    "02-DotProd": "DotProd",
    "03-GpuClustering": "Clustering",
    "04-GpuPacking": "Packing",
    "05-BestFit": "BestFit",
    "06-FGD": "FGD",
}
DEFAULT_PUBLISHED = [
    ROOT / "benchmarks/data/openb/fgd-expected/analysis_allo_discrete.csv",
    ROOT / "benchmarks/data/openb/fgd-expected/analysis_allo_130_pod_lists.csv",
]


def fail(msg):
    sys.exit("rank_pod_lists.py: " + msg)


def read_runs(path, cols):
    """{(workload, policy): {col: [unallocated % per seed]}} from a published-layout CSV."""
    out = {}
    with open(path, newline="") as f:
        rd = csv.reader(f)
        try:
            header = next(rd)
        except StopIteration:
            fail(f"{path}: empty file")
        for need in ("workload", "sc_policy", "seed"):
            if need not in header:
                fail(f"{path}:1: missing column '{need}'")
        idx = {name: i for i, name in enumerate(header)}
        for lineno, row in enumerate(rd, start=2):
            if not row:
                continue
            if len(row) != len(header):
                fail(f"{path}:{lineno}: {len(row)} fields, header has {len(header)}")
            key = (row[idx["workload"]], row[idx["sc_policy"]])
            slot = out.setdefault(key, {})
            for c in cols:
                if c not in idx:
                    continue
                try:
                    v = float(row[idx[c]])
                except ValueError:
                    fail(f"{path}:{lineno}: column '{c}': not a number: {row[idx[c]]!r}")
                slot.setdefault(c, []).append(100.0 - v)
    return out


def mean_sd(xs):
    if not xs:
        return None, None
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def order(means):
    """Policies sorted best (least unallocated) first; ties broken by policy number."""
    return sorted(means, key=lambda p: (means[p], p))


def discordant(ours, pub, pub_sd):
    """Pairs (a, b) that the published means order a < b but ours order b < a."""
    out = []
    pols = [p for p in POLICIES if p in ours and p in pub]
    for i, a in enumerate(pols):
        for b in pols[i + 1 :]:
            lo, hi = (a, b) if pub[a] <= pub[b] else (b, a)
            if ours[lo] > ours[hi]:
                gap = pub[hi] - pub[lo]
                spread = max(pub_sd[lo], pub_sd[hi])
                out.append((lo, hi, gap, spread, ours[lo] - ours[hi]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", help="gpusched-experiment binary (default: build/bench or build/demo)")
    ap.add_argument(
        "--csv-dir",
        default=str(ROOT.parent / "shared/data/alibaba-gpu-v2023/csv"),
        help="folder with openb_node_list_gpu_node.csv and openb_pod_list_*.csv",
    )
    ap.add_argument("--lists", help="comma-separated pod-list names (default: every list found)")
    ap.add_argument("--published", action="append", help="published-layout CSV (repeatable)")
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--tune", default="1.3")
    ap.add_argument("--out", default=str(ROOT / "build/experiments/rank-pod-lists"))
    ap.add_argument("--reuse", action="store_true", help="reuse DIR/<list>/ results already there")
    ap.add_argument("--long", action="store_true", help="one row per list and policy, with spreads")
    a = ap.parse_args()

    last = str(round(float(a.tune) * 100))
    cols = ["100", last]
    exe = a.exe
    if exe is None:
        for cand in ("build/bench/benchmarks/gpusched-experiment",
                     "build/demo/benchmarks/gpusched-experiment"):
            if (ROOT / cand).is_file():
                exe = str(ROOT / cand)
                break
        else:
            fail("no gpusched-experiment under build/bench or build/demo; build it or pass --exe")
    csv_dir = Path(a.csv_dir)
    nodes = csv_dir / "openb_node_list_gpu_node.csv"
    if not nodes.is_file():
        fail(f"{nodes}: not found (pass --csv-dir)")
    if a.lists:
        names = [s.strip() for s in a.lists.split(",") if s.strip()]
    else:
        names = sorted(p.stem for p in csv_dir.glob("openb_pod_list_*.csv"))
    names = [n if n.startswith("openb_pod_list_") else "openb_pod_list_" + n for n in names]

    published = {}
    for p in a.published or [str(x) for x in DEFAULT_PUBLISHED if x.is_file()]:
        for key, v in read_runs(p, cols).items():
            slot = published.setdefault(key, {})
            for c, xs in v.items():
                slot.setdefault(c, xs)  # first file that has this column wins

    out_root = Path(a.out)
    results = {}
    for n in names:
        pods = csv_dir / (n + ".csv")
        if not pods.is_file():
            fail(f"{pods}: not found")
        d = out_root / n
        allo = d / "analysis_allo_discrete.csv"
        if not (a.reuse and allo.is_file()):
            d.mkdir(parents=True, exist_ok=True)
            cmd = [exe, "packing", "--nodes", str(nodes), "--pods", str(pods), "--policy", "all",
                   "--seeds", a.seeds, "--tune", a.tune, "--out", str(d), "--no-timing"]
            print("running", n, file=sys.stderr, flush=True)
            with open(d / "stdout.txt", "w") as log:
                r = subprocess.run(cmd, stdout=log, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                fail(f"{n}: gpusched-experiment failed ({r.returncode}): {r.stderr.strip()}")
        results[n] = read_runs(allo, cols)

    def stats(src, n, c):
        m, s = {}, {}
        for p in POLICIES:
            xs = src.get((n, p), {}).get(c)
            if xs:
                m[p], s[p] = mean_sd(xs)
        return m, s

    # The default trace's published order, for the "same ordering as default" count.
    dflt_pub, _ = stats(published, "openb_pod_list_default", last)
    dflt_order = order(dflt_pub) if len(dflt_pub) == 6 else None

    summary = []
    for n in names:
        short = n.replace("openb_pod_list_", "")
        o100, _ = stats(results[n], n, "100")
        ol, ol_sd = stats(results[n], n, last)
        p100, _ = stats(published, n, "100")
        pl, pl_sd = stats(published, n, last)
        summary.append((short, ol, ol_sd, pl, pl_sd, p100, o100))

    f = lambda d, k: f"{d[k]:.2f}" if k in d else "-"
    print(f"## Unallocated GPU % (mean over seeds {a.seeds}, tune {a.tune})\n")
    if a.long:
        print(f"| pod list | policy | ours@100 | pub@100 | ours@{last} | pub@{last} | "
              f"ours sd@{last} | pub sd@{last} |")
        print("|---|---|---|---|---|---|---|---|")
        for short, ol, ol_sd, pl, pl_sd, p100, o100 in summary:
            for p in POLICIES:
                print(f"| {short} | {SHORT[p]} | {f(o100, p)} | {f(p100, p)} | {f(ol, p)} | "
                      f"{f(pl, p)} | {f(ol_sd, p)} | {f(pl_sd, p)} |")
    else:
        print(f"Cell: ours@100 / ours@{last}, and [published@100 / published@{last}] where a "
              "published file covers the list.\n")
        print("| pod list | " + " | ".join(SHORT[p] for p in POLICIES) + " |")
        print("|---|" + "---|" * len(POLICIES))
        for short, ol, ol_sd, pl, pl_sd, p100, o100 in summary:
            cells = []
            for p in POLICIES:
                c = f"{f(o100, p)} / {f(ol, p)}"
                if p in pl or p in p100:
                    c += f" [{f(p100, p)} / {f(pl, p)}]"
                cells.append(c)
            print(f"| {short} | " + " | ".join(cells) + " |")

    print(f"\n## Policy order at arrived {last}% (least unallocated first)\n")
    print("| pod list | ours | published | FGD best (ours / pub) | pairs we reverse "
          "(published gap / larger published sd) | ours = default's published order |")
    print("|---|---|---|---|---|---|")
    n_fgd = n_pub = n_match = n_spread_only = n_dflt = 0
    for short, ol, ol_sd, pl, pl_sd, p100, o100 in summary:
        ours_o = order(ol)
        fgd_ours = ours_o[0] == "06-FGD"
        n_fgd += fgd_ours
        same_dflt = dflt_order is not None and ours_o == dflt_order
        n_dflt += same_dflt
        if len(pl) == 6:
            n_pub += 1
            pub_o = order(pl)
            pairs = discordant(ol, pl, pl_sd)
            n_match += not pairs
            n_spread_only += bool(pairs) and all(g <= s for _, _, g, s, _ in pairs)
            txt = "; ".join(
                f"{SHORT[lo]}<{SHORT[hi]} ({g:.2f} / {s:.2f}{', within' if g <= s else ''})"
                for lo, hi, g, s, _ in pairs) or "none"
            pub_s = " < ".join(SHORT[p] for p in pub_o)
            fgd_s = f"{'yes' if fgd_ours else 'no'} / {'yes' if pub_o[0] == '06-FGD' else 'no'}"
        else:
            txt, pub_s, fgd_s = "-", "-", f"{'yes' if fgd_ours else 'no'} / -"
        print(f"| {short} | {' < '.join(SHORT[p] for p in ours_o)} | {pub_s} | {fgd_s} | {txt} | "
              f"{'yes' if same_dflt else 'no'} |")
    print(f"\nFGD best (ours): {n_fgd} of {len(summary)} lists. Lists with published results: "
          f"{n_pub}; our order equals the published order on {n_match}, and on "
          f"{n_spread_only} more every reversed pair is within the published spread. Our order "
          f"equals the default trace's published order on {n_dflt} of {len(summary)}.")


if __name__ == "__main__":
    main()
