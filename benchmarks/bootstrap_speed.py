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

    python3 benchmarks/bootstrap_speed.py            # the targets' sizes, 999 replicates
    python3 benchmarks/bootstrap_speed.py --quick    # tiny (the test runs this)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import daskbicl  # noqa: E402
from benchmarks._common import header, noisy_labels, print_table  # noqa: E402
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
    args = p.parse_args(argv)
    if args.quick:
        args.replicates, args.items, args.clusters = 49, 2000, 50
        args.biclusters, args.bicluster_rows, args.bicluster_cols, args.density = 20, 300, 200, 0.1
    print(header())
    rows = coclustering_cost(args) + bicluster_cost(args)
    print_table(rows, list(rows[0]))


if __name__ == "__main__":
    main()
