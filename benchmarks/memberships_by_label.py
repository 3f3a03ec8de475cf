"""A co-clustering against a biclustering: its blocks' membership lists counted by label (round 5) vs by block mask.

The membership lists of rows and of columns (what the micro-object,
recovery, cell-ECS and overlap measures read) of a co-clustering (H x L
clusters, so H*L blocks) against a biclustering (K biclusters),
dask-chunked, on the local threaded scheduler:

* ``by label``: the engine's path (``provider_graph.axis_tables``): one pass
  per axis lists each item as (its label, the biclusters holding it)
  (``LABEL_MEMBERSHIPS``), one task numbers the labels and expands them into
  blocks; nothing is computed to build the graph;
* ``by mask``: the path before: the distinct labels computed first
  (``as_biclustering``), then the membership pass over the H*L block masks.

Both give the same lists, in the same order, counts and Gram tables
(asserted).  The ratio by label / by mask is measured in the same run,
draw by draw.

    PYTHONPATH=$PWD python3 benchmarks/memberships_by_label.py [--quick] [--seeds 2]

Target: by label no slower than by mask (ratio <= 1.0).
"""

from __future__ import annotations

import argparse
import os
import sys

import dask
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import machine, measure  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.engine.blocks import as_biclustering  # noqa: E402
from daskbicl.engine.core import shared_passes  # noqa: E402
from daskbicl.engine.micro_pass import memberships_graph  # noqa: E402
from daskbicl.engine.provider_graph import axis_tables  # noqa: E402
from daskbicl.measures.registry import PROVIDERS  # noqa: E402


def inputs(seed: int, n: int, m: int, h: int, l: int, k: int, chunk: int):
    rng = np.random.default_rng(seed)
    co = daskbicl.partition(rng.integers(0, h, n), rng.integers(0, l, m)).chunk({"row": chunk, "col": chunk})
    other = daskbicl.biclustering(rng.random((k, n)) < 0.2, rng.random((k, m)) < 0.2).chunk({"row": chunk,
                                                                                              "col": chunk})
    return co, other


def by_label(co, other):
    with shared_passes():
        rows, cols, _ = axis_tables(PROVIDERS["micro"], co, other)
    return dask.compute(rows, cols, scheduler="threads")


def by_mask(co, other):
    with shared_passes():
        blocks = as_biclustering(co, "truth")  # computes the distinct labels first
        rows = memberships_graph(blocks.row_mask.data, other.row_mask.data)
        cols = memberships_graph(blocks.col_mask.data, other.col_mask.data)
    return dask.compute(rows, cols, scheduler="threads")


def _same(a, b) -> bool:
    return (a.n_truth, a.n_pred, a.n_items) == (b.n_truth, b.n_pred, b.n_items) and all(
        getattr(a, f).dtype == getattr(b, f).dtype and np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("ptr", "el", "cnt", "gram"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run, seconds)")
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    size = dict(n=20_000, m=4_000, h=10, l=6, k=8, chunk=5_000) if args.quick else \
        dict(n=1_000_000, m=50_000, h=30, l=20, k=10, chunk=250_000)
    print(machine())
    print(f"load (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"co-clustering {size['n']:,} x {size['m']:,}, {size['h']} x {size['l']} clusters "
          f"({size['h'] * size['l']} blocks) vs {size['k']} biclusters, chunks of {size['chunk']:,}")
    print(f"{'seed':>4}  {'by label s':>10}  {'by mask s':>9}  {'label/mask':>10}  {'label MB':>8}  {'mask MB':>8}")
    for seed in range(args.seeds):
        data = inputs(seed, **size)
        by_label(*data)  # warm: imports
        new = measure(by_label, *data, repeat=2)
        old = measure(by_mask, *data, repeat=2)
        assert all(_same(got, want) for got, want in zip(new.result, old.result)), "the lists differ"
        print(f"{seed:>4}  {new.seconds:>10.3f}  {old.seconds:>9.3f}  {new.seconds / old.seconds:>10.2f}"
              f"  {new.peak_mb:>8.1f}  {old.peak_mb:>8.1f}")
    print(f"load after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
