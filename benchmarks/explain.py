"""``explain`` beside ``score`` on the same pair, and the bootstrap's cost.

* ``explain / score``: the time of :func:`daskbicl.explain` over the time of
  :func:`daskbicl.score` (the same measures) on the same Zarr stores; the
  explanation reads the tables the scoring pass counts, so the ratio should
  stay near 1 (target <= 1.1 at 10^9 labels per axis on two 700 MB workers;
  this script runs what the machine allows, in this process);
* ``bootstrap``: ``score(tables, ci=0.95, replicates=999)`` on a counted
  1,000 x 1,000-cluster table pair (target <= 2 s), split into the
  vectorised measures (CARI, ARI, coMI, coNMI, ENMI) and the matching ones
  (CE, NCE), which run per replicate.

    python3 benchmarks/explain.py            # 10^7 labels per axis, 999 replicates
    python3 benchmarks/explain.py --quick    # tiny (the test runs this)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import daskbicl  # noqa: E402
from benchmarks._common import header, measure, noisy_labels, print_table  # noqa: E402


def explain_vs_score(args, folder) -> list[dict]:
    rng = np.random.default_rng(0)
    (tr, pr), (tc, pc) = noisy_labels(rng, args.rows, args.row_clusters, 0.1), noisy_labels(rng, args.cols, args.col_clusters, 0.1)
    truth, pred = os.path.join(folder, "t.zarr"), os.path.join(folder, "p.zarr")
    daskbicl.save(daskbicl.partition(tr, tc), truth, chunk=args.chunk)
    daskbicl.save(daskbicl.partition(pr, pc), pred, chunk=args.chunk)
    daskbicl.score(truth, pred)  # warm-up: imports and the first read are paid by neither timing
    scored = measure(daskbicl.score, truth, pred, repeat=args.repeat)
    explained = measure(daskbicl.explain, truth, pred, repeat=args.repeat)
    assert explained.result.score.values.tolist() == list(scored.result.values()), "explain's scores differ"
    return [{"case": f"{args.rows:,} x {args.cols:,} labels, {args.row_clusters} x {args.col_clusters} clusters",
             "score_s": f"{scored.seconds:.3f}", "explain_s": f"{explained.seconds:.3f}",
             "explain / score": f"{explained.seconds / scored.seconds:.2f}",
             "peak_MB": f"{max(scored.peak_mb, explained.peak_mb):.0f}"}]


def bootstrap_cost(args) -> list[dict]:
    rng = np.random.default_rng(1)
    (tr, pr), (tc, pc) = (noisy_labels(rng, args.boot_items, args.boot_clusters, 0.1) for _ in range(2))
    tables = daskbicl.contingency((tr, tc), (pr, pc))
    rows = []
    for label, names in (("vectorised (cari, ari_rows, ari_cols, comi, conmi, enmi)",
                          ["cari", "ari_rows", "ari_cols", "comi", "conmi", "enmi"]),
                         ("per replicate (ce, nce)", ["ce", "nce"])):
        m = measure(daskbicl.score, tables, measures=names, ci=0.95, replicates=args.replicates)
        rows.append({"measures": label, "table": f"{args.boot_clusters:,} x {args.boot_clusters:,} clusters, "
                     f"{args.boot_items:,} items, {tables.row_table.counts.size:,} non-zero cells",
                     "replicates": args.replicates, "seconds": f"{m.seconds:.2f}"})
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--cols", type=int, default=10_000)
    p.add_argument("--row-clusters", type=int, default=1000)
    p.add_argument("--col-clusters", type=int, default=100)
    p.add_argument("--chunk", type=int, default=1 << 20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--boot-items", type=int, default=100_000)
    p.add_argument("--boot-clusters", type=int, default=1000)
    p.add_argument("--replicates", type=int, default=999)
    p.add_argument("--bootstrap-only", action="store_true", help="skip explain / score")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.row_clusters, args.col_clusters, args.chunk = 20_000, 500, 20, 5, 4096
        args.repeat, args.boot_items, args.boot_clusters, args.replicates = 1, 2000, 50, 49
    print(header())
    if not args.bootstrap_only:
        with tempfile.TemporaryDirectory() as folder:
            rows = explain_vs_score(args, folder)
        print_table(rows, list(rows[0]))
    rows = bootstrap_cost(args)
    print_table(rows, list(rows[0]))


if __name__ == "__main__":
    main()
