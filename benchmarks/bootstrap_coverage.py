"""Coverage of the bootstrap intervals of ``score(..., ci=...)``, by simulation.

A fixed population of rows and columns carries a truth and a pred
co-clustering (pred: truth with a share of labels redrawn).  Each draw
samples ``--rows`` rows and ``--cols`` columns from it (with replacement,
as the bootstrap assumes), scores the sample with ``ci=--level`` and checks
whether the interval holds the population's value.  Coverage is the share
of draws whose interval does; its binomial standard error is printed next
to it.  What the interval is meant to cover is exactly this: another draw
of the items from the same population.  Each draw's replicates are
computed once and give both intervals, the percentile one
(``ci_method="percentile"``) and the bias-corrected one (``"bc"``); the
corrected F-measure is the co-clusterings' blocks scored as biclusters.

    python3 benchmarks/bootstrap_coverage.py               # 500 draws, 999 replicates
    python3 benchmarks/bootstrap_coverage.py --quick       # a few draws (the test runs this)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import daskbicl  # noqa: E402
from benchmarks._common import header, noisy_labels  # noqa: E402
from daskbicl.measures import ScorePlan, run_tables  # noqa: E402
from daskbicl.measures.bootstrap import all_replicate_values, interval, resampling_plan  # noqa: E402

#: The measures whose coverage the issue asks for.
MEASURES = ["cari", "ari_rows", "nmi_rows", "nce", "fmeasure_corrected"]

#: The interval methods compared on the same replicates.
METHODS = ("percentile", "bc")


def intervals(truth, pred, args, seed: int) -> dict:
    """(measure, method) -> the interval of one drawn sample, both methods from the same replicates."""
    plan = resampling_plan(ScorePlan.build(truth, pred, MEASURES))
    tables = run_tables([plan])[0]
    values = plan.finalize(tables)
    replicated = all_replicate_values(plan, tables, replicates=args.replicates, seed=seed)
    return {(m, method): interval(replicated[m], values[m], args.level, method) for m in MEASURES
            for method in METHODS}


def population(args, rng):
    """Truth and pred labels of the population's rows and columns."""
    (tr, pr), (tc, pc) = (noisy_labels(rng, args.population_rows, args.row_clusters, args.noise),
                          noisy_labels(rng, args.population_cols, args.col_clusters, args.noise))
    return (tr, tc), (pr, pc)


def simulate(args) -> list[dict]:
    rng = np.random.default_rng(args.seed)
    truth, pred = population(args, rng)
    target = daskbicl.score(truth, pred, measures=MEASURES)
    keys = [(m, method) for m in MEASURES for method in METHODS]
    hits = dict.fromkeys(keys, 0)
    widths: dict = {k: [] for k in keys}
    started = time.perf_counter()
    for draw in range(args.draws):
        r = rng.integers(0, truth[0].size, args.rows)
        c = rng.integers(0, truth[1].size, args.cols)
        out = intervals((truth[0][r], truth[1][c]), (pred[0][r], pred[1][c]), args, draw)
        for key in keys:
            hits[key] += out[key].low <= target[key[0]] <= out[key].high
            widths[key].append(out[key].high - out[key].low)
    seconds = time.perf_counter() - started
    rows = []
    for m, method in keys:
        cover = hits[m, method] / args.draws
        rows.append({"measure": m, "population": f"{target[m]:.4f}", "coverage": f"{cover:.3f}",
                     "se": f"{math.sqrt(cover * (1 - cover) / args.draws):.3f}", "nominal": f"{args.level:g}",
                     "method": method, "mean_width": f"{np.mean(widths[m, method]):.4f}"})
    print(header(f"{args.draws} draws of {args.rows} rows x {args.cols} cols, {args.replicates} replicates each, "
                 f"seed {args.seed}, {seconds:.1f} s; coverage does not depend on the load"))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--replicates", type=int, default=999)
    p.add_argument("--rows", type=int, default=400)
    p.add_argument("--cols", type=int, default=120)
    p.add_argument("--population-rows", type=int, default=100_000)
    p.add_argument("--population-cols", type=int, default=20_000)
    p.add_argument("--row-clusters", type=int, default=5)
    p.add_argument("--col-clusters", type=int, default=4)
    p.add_argument("--noise", type=float, default=0.3)
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="8 draws of 99 replicates")
    args = p.parse_args(argv)
    if args.quick:
        args.draws, args.replicates = 8, 99
    rows = simulate(args)
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(str(row[c]) for c in columns))


if __name__ == "__main__":
    main()
