"""The cost of the bootstrap intervals, ``score(..., ci=0.95, replicates=999)``, once the tables are counted.

* co-clusterings: a counted 1,000 x 1,000-cluster table pair
  (``daskbicl.contingency``), the vectorised measures (CARI, ARI x 2, coMI,
  coNMI, ENMI; target <= 2 s for 999 replicates) and the matching ones
  (CE, NCE, one matching per replicate and axis);
* biclusterings: 200 + 200 biclusters, the twelve precision–recall measures
  (target <= 10 s for 999 replicates), the counting pass excluded (its
  tables, overlaps and membership patterns, are counted once beforehand).

Wall and CPU time (user + system of this process) are printed: on a loaded
machine the CPU time is the better guide, and both are indicative only.

``--base PATH`` measures the co-clustering cases (and all seven measures
together) in this tree and in another one (e.g. ``git archive main | tar -x
-C /tmp/base``), each run in a fresh process, alternating, ``--repeat``
times; it prints the median times and whether both trees gave the same
digits (values and interval ends).

    python3 benchmarks/bootstrap_speed.py            # the targets' sizes, 999 replicates
    python3 benchmarks/bootstrap_speed.py --quick    # tiny (the test runs this)
    python3 benchmarks/bootstrap_speed.py --base /tmp/base --draw 2 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
if "--child" not in sys.argv:  # a child (--base) measures the daskbicl of its PYTHONPATH
    sys.path.insert(0, ROOT)
from _common import alternating, header, load, noisy_labels, print_table, run_in_tree  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.measures import ScorePlan, run_tables  # noqa: E402
from daskbicl.measures.bootstrap import resampling_plan, with_intervals  # noqa: E402

#: The twelve bicluster precision–recall measures.
PRECISION_RECALL = [f"{index}{form}" for index in ("goodness", "fmeasure", "dice", "jaccard")
                    for form in ("", "_corrected", "_space")]


def _timed(func, *args, **kwargs) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    func(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def coclustering_cost(args) -> list[dict]:
    rng = np.random.default_rng(1 if not args.draw else [1, args.draw])
    (tr, pr), (tc, pc) = (noisy_labels(rng, args.items, args.clusters, 0.1) for _ in range(2))
    tables = daskbicl.contingency((tr, tc), (pr, pc))
    out = []
    for label, names in (("cari, ari_rows, ari_cols, comi, conmi, enmi", ["cari", "ari_rows", "ari_cols", "comi",
                                                                          "conmi", "enmi"]),
                         ("ce, nce", ["ce", "nce"])):
        wall, cpu = _timed(daskbicl.score, tables, measures=names, ci=0.95, replicates=args.replicates)
        out.append({"case": f"{args.clusters:,} x {args.clusters:,} clusters, {args.items:,} items "
                    f"({tables.row_table.counts.size:,} cells)", "measures": label, "replicates": args.replicates,
                    "wall s": f"{wall:.2f}", "cpu s": f"{cpu:.2f}"})
    return out


#: The co-clustering cases compared with ``--base``: label -> measures.
COCLUSTERING_CASES = {
    "vectorised": ["cari", "ari_rows", "ari_cols", "comi", "conmi", "enmi"],
    "ce, nce": ["ce", "nce"],
    "all seven": ["cari", "ari_rows", "ari_cols", "comi", "conmi", "enmi", "ce", "nce"],
}


def child(args) -> dict:
    """The co-clustering cases in this process (the daskbicl on ``sys.path``): times and digits, as a dict."""
    rng = np.random.default_rng(1 if not args.draw else [1, args.draw])
    (tr, pr), (tc, pc) = (noisy_labels(rng, args.items, args.clusters, 0.1) for _ in range(2))
    tables = daskbicl.contingency((tr, tc), (pr, pc))
    out: dict = {"daskbicl": os.path.dirname(os.path.dirname(os.path.abspath(daskbicl.__file__))), "cases": {}}
    for label, names in COCLUSTERING_CASES.items():
        cpu, wall = time.process_time(), time.perf_counter()
        got = daskbicl.score(tables, measures=names, ci=0.95, replicates=args.replicates)
        out["cases"][label] = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                               "digits": {k: [float(v), v.low, v.high] for k, v in sorted(got.items())}}
    return out


def compare(args) -> None:
    """This tree and ``args.base``, alternating, each run in a fresh process: median times, same digits?"""
    argv = ["--replicates", str(args.replicates), "--items", str(args.items), "--clusters", str(args.clusters),
            "--draw", str(args.draw)]
    trees = {"branch": ROOT, "base": os.path.abspath(args.base)}
    print(f"load before: {load()}")
    results = alternating(trees, args.repeat, lambda tree: run_in_tree(tree, __file__, argv))
    for name, runs in results.items():
        assert all(r["daskbicl"] == trees[name] for r in runs), f"{name} did not import its own daskbicl"
    print(f"{args.clusters:,} x {args.clusters:,} clusters, {args.items:,} items, draw {args.draw}, "
          f"{args.replicates} replicates; {args.repeat} run(s) per tree, alternating; median seconds")
    rows = []
    for label in COCLUSTERING_CASES:
        row = {"measures": label}
        for name, runs in results.items():
            row[f"{name} wall"] = f"{statistics.median(r['cases'][label]['wall'] for r in runs):.2f}"
            row[f"{name} cpu"] = f"{statistics.median(r['cases'][label]['cpu'] for r in runs):.2f}"
        digits = [r["cases"][label]["digits"] for runs in results.values() for r in runs]
        row["same digits"] = "yes" if all(d == digits[0] for d in digits) else "NO"
        rows.append(row)
    print_table(rows, list(rows[0]))
    print(f"load after: {load()}")


def bicluster_cost(args) -> list[dict]:
    rng = np.random.default_rng(2 if not args.draw else [2, args.draw])
    k, n_rows, n_cols = args.biclusters, args.bicluster_rows, args.bicluster_cols
    t_rows, t_cols = rng.random((k, n_rows)) < args.density, rng.random((k, n_cols)) < args.density

    def noisy(mask):  # pred: truth with about 30 % of each bicluster's members moved
        return mask ^ (rng.random(mask.shape) < 0.3 * mask.mean())

    truth = daskbicl.biclustering(t_rows, t_cols)
    pred = daskbicl.biclustering(noisy(t_rows), noisy(t_cols))
    plan = resampling_plan(ScorePlan.build(truth, pred, PRECISION_RECALL))
    tables = run_tables([plan])[0]
    values = plan.finalize(tables)
    patterns = plan.tables_of(tables, "patterns")
    wall, cpu = _timed(with_intervals, plan, tables, values, ci=0.95, replicates=args.replicates, seed=0)
    return [{"case": f"{k} + {k} biclusters, {n_rows:,} x {n_cols:,} "
             f"({patterns[0].counts.size:,} + {patterns[1].counts.size:,} patterns)",
             "measures": "12 precision-recall", "replicates": args.replicates, "wall s": f"{wall:.2f}",
             "cpu s": f"{cpu:.2f}"}]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replicates", type=int, default=999)
    p.add_argument("--items", type=int, default=100_000)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--biclusters", type=int, default=200)
    p.add_argument("--bicluster-rows", type=int, default=5000)
    p.add_argument("--bicluster-cols", type=int, default=2000)
    p.add_argument("--density", type=float, default=0.02)
    p.add_argument("--quick", action="store_true", help="tiny sizes, 49 replicates")
    p.add_argument("--draw", type=int, default=0,
                   help="another random draw of the same shapes (0: the recorded one), to check a number is not the seed's")
    p.add_argument("--base", help="another source tree (e.g. main): the co-clustering cases measured in both, "
                   "alternating")
    p.add_argument("--repeat", type=int, default=3, help="runs per tree with --base")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return
    if args.base:
        compare(args)
        return
    if args.quick:
        args.replicates, args.items, args.clusters = 49, 2000, 50
        args.biclusters, args.bicluster_rows, args.bicluster_cols, args.density = 20, 300, 200, 0.1
    print(header())
    rows = coclustering_cost(args) + bicluster_cost(args)
    print_table(rows, list(rows[0]))


if __name__ == "__main__":
    main()
