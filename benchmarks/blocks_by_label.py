"""A co-clustering scored against a biclustering: its blocks counted by label (round 4) vs by block mask (before).

The ``bicluster`` provider's tables of a co-clustering (H x L clusters, so
H*L blocks) against a biclustering (K biclusters), dask-chunked, on the
local threaded scheduler:

* ``by label``: the engine's path (``provider_graph``): one pass per axis sums
  the biclustering's masks over each distinct label (``SUM_BY_LABEL``), one
  task expands the labels into blocks; nothing is computed to build the graph;
* ``by mask``: the path before: the distinct labels computed first
  (``as_biclustering``), then the mask pass over the H*L block masks.

Both give the same tables (asserted).  The ratio by label / by mask is
measured in the same run, draw by draw.

    PYTHONPATH=$PWD python3 benchmarks/blocks_by_label.py [--quick] [--seeds 2]

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
from daskbicl.engine.bicluster_pass import mask_counts_graph  # noqa: E402
from daskbicl.engine.blocks import as_biclustering  # noqa: E402
from daskbicl.engine.core import shared_passes  # noqa: E402
from daskbicl.engine.provider_graph import provider_graph  # noqa: E402
from daskbicl.measures.registry import PROVIDERS  # noqa: E402


def inputs(seed: int, n: int, m: int, h: int, l: int, k: int, chunk: int):
    rng = np.random.default_rng(seed)
    co = daskbicl.partition(rng.integers(0, h, n), rng.integers(0, l, m)).chunk({"row": chunk, "col": chunk})
    other = daskbicl.biclustering(rng.random((k, n)) < 0.2, rng.random((k, m)) < 0.2).chunk({"row": chunk,
                                                                                              "col": chunk})
    return co, other


def by_label(co, other):
    with shared_passes():
        graph = provider_graph(PROVIDERS["bicluster"], co, other, {})
    return dask.compute(graph, scheduler="threads")[0]


def by_mask(co, other):
    with shared_passes():
        blocks = as_biclustering(co, "truth")  # computes the distinct labels first
        rows = mask_counts_graph(blocks.row_mask.data, other.row_mask.data)
        cols = mask_counts_graph(blocks.col_mask.data, other.col_mask.data)
    return dask.compute(rows, cols, scheduler="threads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run, seconds)")
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    size = dict(n=20_000, m=4_000, h=10, l=6, k=8, chunk=5_000) if args.quick else \
        dict(n=2_000_000, m=50_000, h=30, l=20, k=10, chunk=250_000)
    print(machine())
    print(f"load (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"co-clustering {size['n']:,} x {size['m']:,}, {size['h']} x {size['l']} clusters "
          f"({size['h'] * size['l']} blocks) vs {size['k']} biclusters, chunks of {size['chunk']:,}")
    print(f"{'seed':>4}  {'by label s':>10}  {'by mask s':>9}  {'label/mask':>10}  {'label MB':>8}  {'mask MB':>8}")
    for seed in range(args.seeds):
        data = inputs(seed, **size)
        by_label(*data)  # warm: imports, compiled kernels
        new = measure(by_label, *data, repeat=2)
        old = measure(by_mask, *data, repeat=2)
        tables = new.result
        for got, want in ((tables.rows, old.result[0]), (tables.cols, old.result[1])):
            assert np.array_equal(got.shared, want.shared) and np.array_equal(got.truth_sizes, want.truth_sizes)
            assert np.array_equal(got.pred_sizes, want.pred_sizes) and got.length == want.length
        print(f"{seed:>4}  {new.seconds:>10.3f}  {old.seconds:>9.3f}  {new.seconds / old.seconds:>10.2f}"
              f"  {new.peak_mb:>8.1f}  {old.peak_mb:>8.1f}")
    print(f"load after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
