"""Bicluster precision–recall measures: the K x L table pass against its peers.

* ``daskbicl``   — all 12 bicluster aggregates (``daskbicl.score``) from two
                   Zarr biclusterings with K = L biclusters (local threaded
                   scheduler): one pass over the row masks, one over the
                   column masks;
* ``floor``      — reading and decompressing every mask once (``mask.sum()``
                   over the four Zarr arrays): no pass can be faster;
* ``sklearn``    — ``sklearn.metrics.consensus_score`` (Jaccard per pair in a
                   Python loop, then an assignment), in memory, at a size it
                   can finish, against daskbicl on the same in-memory masks.

Run:  python benchmarks/bicluster.py            (full: 10^6 x 10^5, K = L = 1000)
      python benchmarks/bicluster.py --quick
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import dask
import dask.array as da
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

#: The 12 bicluster aggregates (score's default for biclusterings also adds the
#: micro-object measures, timed in benchmarks/micro.py).
BICLUSTER = [n for n, m in daskbicl.MEASURES.items() if m.family == "bicluster"]


def random_biclustering(k, n_rows, n_cols, row_density, col_density, seed, chunk):
    """Lazy random masks: each bicluster a random subset of rows x random subset of columns."""
    rng = da.random.default_rng(seed)
    rows = rng.random((k, n_rows), chunks=(k, chunk)) < row_density
    cols = rng.random((k, n_cols), chunks=(k, chunk)) < col_density
    return rows, cols


def noisy_copy(masks, keep, add_density, seed):
    """pred = truth with (1 - keep) of the memberships dropped and random ones added."""
    rng = da.random.default_rng(seed)
    out = []
    for m, dens in zip(masks, add_density):
        drop = rng.random(m.shape, chunks=m.chunks) < keep
        add = rng.random(m.shape, chunks=m.chunks) < dens
        out.append((m & drop) | add)
    return out


def write(masks, path):
    ds = daskbicl.biclustering(masks[0], masks[1])
    return daskbicl.save(ds, path)


def floor(paths):
    arrays = []
    for p in paths:
        ds = daskbicl.open(p)
        arrays += [ds.row_mask.data.sum(), ds.col_mask.data.sum()]
    return dask.compute(*arrays)


def run_zarr(k, n_rows, n_cols, rd, cd, chunk, folder):
    t0 = time.perf_counter()
    truth = random_biclustering(k, n_rows, n_cols, rd, cd, seed=1, chunk=chunk)
    pred = noisy_copy(truth, 0.9, (rd / 10, cd / 10), seed=2)
    tp = write(truth, os.path.join(folder, "truth.zarr"))
    pp = write(pred, os.path.join(folder, "pred.zarr"))
    gen = time.perf_counter() - t0
    with dask.config.set(scheduler="threads"):
        ours = measure(daskbicl.score, tp, pp, measures=BICLUSTER)
        fl = measure(floor, [tp, pp])
    return {
        "K=L": k, "rows x cols": f"{n_rows:.0e} x {n_cols:.0e}", "density r/c": f"{rd}/{cd}",
        "generate_s": f"{gen:.1f}", "daskbicl_s": f"{ours.seconds:.2f}", "read-once floor_s": f"{fl.seconds:.2f}",
        "vs_floor": f"{ours.seconds / fl.seconds:.2f}", "daskbicl_MB": f"{ours.peak_mb:.0f}",
        "jaccard": f"{ours.result['jaccard']:.4f}",
    }


def run_sklearn(k, n_rows, n_cols, rd, cd):
    from sklearn.metrics import consensus_score

    rng = np.random.default_rng(3)
    t = (rng.random((k, n_rows)) < rd, rng.random((k, n_cols)) < cd)
    p = (rng.random((k, n_rows)) < rd, rng.random((k, n_cols)) < cd)
    sk = measure(consensus_score, t, p)
    ours = measure(daskbicl.score, daskbicl.biclustering(*t), daskbicl.biclustering(*p), measures=BICLUSTER, repeat=2)
    return {
        "K=L": k, "rows x cols": f"{n_rows:.0e} x {n_cols:.0e}", "sklearn_s": f"{sk.seconds:.2f}",
        "sklearn_MB": f"{sk.peak_mb:.0f}", "daskbicl_s (12 measures)": f"{ours.seconds:.3f}",
        "daskbicl_MB": f"{ours.peak_mb:.0f}", "speed-up": f"{sk.seconds / ours.seconds:.0f}x",
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--cols", type=float, default=1e5)
    ap.add_argument("--row-density", type=float, default=0.005)
    ap.add_argument("--col-density", type=float, default=0.01)
    ap.add_argument("--chunk", type=int, default=1 << 16)
    ap.add_argument("--sklearn", type=float, nargs=3, default=[300, 1e5, 1e4], metavar=("K", "ROWS", "COLS"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.k, args.rows, args.cols, args.chunk, args.sklearn = 20, 2e4, 2e3, 4096, [20, 2e3, 500]
    print(f"machine: {machine()}\nversions: {versions()}\n")
    print("== scikit-learn consensus_score vs daskbicl, same in-memory masks")
    k, r, c = int(args.sklearn[0]), int(args.sklearn[1]), int(args.sklearn[2])
    rows = [run_sklearn(k, r, c, args.row_density * 4, args.col_density * 4)]
    print_table(rows, list(rows[0]))
    print(f"\n== Zarr biclusterings, K = L = {args.k}, {args.rows:.0e} x {args.cols:.0e}")
    with tempfile.TemporaryDirectory(prefix="daskbicl-bench-") as folder:
        z = [run_zarr(args.k, int(args.rows), int(args.cols), args.row_density, args.col_density, args.chunk, folder)]
    print_table(z, list(z[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
