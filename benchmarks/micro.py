"""Micro-object measures (MOCICE-BCubed, CE, RNIA, E4SC): daskbicl against its peers.

* ``scale``     — all four measures on a 10^5 x 10^5 matrix (10^10 cells) with
                  20 truth + 20 pred overlapping biclusters (random row and
                  column subsets), time and peak RSS;
* ``growth``    — how that time grows with the number of biclusters and with
                  their density (overlap -> number of signature classes);
* ``oracle``    — the pair-by-pair rational oracle (tests/oracles_micro.py,
                  written from the SPEC) on sizes it can finish;
* ``bcubed``    — the ``bcubed`` package's extended BCubed precision (a pairwise
                  loop over items; a different formula, timed as the cost of the
                  pairwise approach) with cells as items;
* ``biclustlib``— biclustlib's clustering_error and RNIA (dense cell counts);
                  its CE similarity equals 1 - daskbicl's ``micro_ce`` (the
                  multiset union, the default);
* ``overlap``   — heavy overlap (every cell in most biclusters): CE, RNIA and
                  E4SC alone, which never build the MOCICE-BCubed plan;
* ``cocluster`` — two co-clusterings with many clusters: all four from the
                  row and column contingency tables (no block masks), checked
                  against the mask path on a small size.

Run:  python benchmarks/micro.py            (full, a few minutes)
      python benchmarks/micro.py --quick    (seconds; what the test runs)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

MICRO = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]
CHEAP = ["micro_ce", "micro_rnia", "e4sc"]


def random_masks(k, n_rows, n_cols, lo, hi, seed):
    rng = np.random.default_rng(seed)
    rd = rng.uniform(lo, hi, k)
    cd = rng.uniform(lo, hi, k)
    rows = rng.random((k, n_rows)) < rd[:, None]
    cols = rng.random((k, n_cols)) < cd[:, None]
    rows[np.arange(k), rng.integers(0, n_rows, k)] = True
    cols[np.arange(k), rng.integers(0, n_cols, k)] = True
    return rows, cols


def ours(truth, pred):
    return daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=MICRO)


def n_classes(truth, pred):
    from daskbicl.kernels.signatures import signature_counts

    r = signature_counts(truth[0], pred[0])
    c = signature_counts(truth[1], pred[1])
    return len(r.count), len(c.count)


def run_scale(n, k, lo, hi):
    truth = random_masks(k, n, n, lo, hi, 1)
    pred = random_masks(k, n, n, lo, hi, 2)
    m = measure(ours, truth, pred)
    nr, nc = n_classes(truth, pred)
    s = m.result
    return {
        "matrix": f"{n:.0e} x {n:.0e}", "K+L": f"{k}+{k}", "density": f"{lo}-{hi}",
        "row/col classes": f"{nr}/{nc}", "seconds": f"{m.seconds:.2f}", "peak MB": f"{m.peak_mb:.0f}",
        "bcubed F1": f"{s['mocice_bcubed'].f1:.4f}", "CE": f"{s['micro_ce']:.4f}", "E4SC": f"{s['e4sc']:.4f}",
    }


def run_oracle(n, k):
    from tests import oracles_micro as OM

    truth = random_masks(k, n, n, 0.2, 0.5, 3)
    pred = random_masks(k, n, n, 0.2, 0.5, 4)
    o = measure(OM.mocice_bcubed, truth[0], truth[1], pred[0], pred[1])
    m = measure(ours, truth, pred)
    exact = tuple(float(x) for x in o.result)
    assert np.allclose(tuple(m.result["mocice_bcubed"]), exact, atol=1e-12)
    return {"matrix": f"{n}x{n}", "cells": n * n, "K+L": f"{k}+{k}", "oracle_s": f"{o.seconds:.2f}",
            "daskbicl_s": f"{m.seconds:.3f}", "ratio": f"{o.seconds / m.seconds:.0f}x", "agree": "yes"}


def run_bcubed(n, k):
    import bcubed

    truth = random_masks(k, n, n, 0.2, 0.5, 5)
    pred = random_masks(k, n, n, 0.2, 0.5, 6)
    cells = [(i, j) for i in range(n) for j in range(n)]
    def label_sets(masks):
        r, c = masks
        return {x: {b for b in range(k) if r[b, x[0]] and c[b, x[1]]} for x in cells}
    ldict = {x: s for x, s in label_sets(pred).items() if s}
    cdict = {x: label_sets(truth)[x] or {-1} for x in ldict}  # bcubed needs a label per item
    b = measure(bcubed.precision, cdict, ldict)
    m = measure(ours, truth, pred)
    return {"items (cells)": len(ldict), "K+L": f"{k}+{k}", "bcubed precision_s": f"{b.seconds:.2f}",
            "daskbicl all four_s": f"{m.seconds:.3f}", "ratio": f"{b.seconds / m.seconds:.0f}x"}


def run_biclustlib(n, k):
    from biclustlib.evaluation.external import clustering_error, relative_non_intersecting_area
    from biclustlib.models import Bicluster, Biclustering

    if not hasattr(np, "int"):  # biclustlib 0.0.13 predates NumPy 1.24, which removed np.int
        np.int = int

    truth = random_masks(k, n, n, 0.05, 0.3, 7)
    pred = random_masks(k, n, n, 0.05, 0.3, 8)
    def model(masks):
        return Biclustering([Bicluster(np.flatnonzero(r), np.flatnonzero(c)) for r, c in zip(*masks)])
    b = measure(lambda: (clustering_error(model(pred), model(truth), n, n),
                         relative_non_intersecting_area(model(pred), model(truth), n, n)))
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    m = measure(lambda: daskbicl.score(t, p, measures=["micro_ce", "micro_rnia"]))
    assert abs((1 - b.result[0]) - m.result["micro_ce"]) < 1e-9
    assert abs((1 - b.result[1]) - m.result["micro_rnia"]) < 1e-9
    return {"matrix": f"{n}x{n}", "K+L": f"{k}+{k}", "biclustlib_s": f"{b.seconds:.2f}",
            "biclustlib_MB": f"{b.peak_mb:.0f}", "daskbicl_s": f"{m.seconds:.3f}",
            "daskbicl_MB": f"{m.peak_mb:.0f}", "ratio": f"{b.seconds / m.seconds:.0f}x", "CE, RNIA agree": "yes"}


def run_overlap(n, k, density):
    """CE, RNIA, E4SC where MOCICE-BCubed is out of reach (it would raise TooLargeError)."""
    truth = random_masks(k, n, n, density, density, 9)
    pred = random_masks(k, n, n, density, density, 10)
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    m = measure(lambda: daskbicl.score(t, p, measures=CHEAP))
    nr, nc = n_classes(truth, pred)
    s = m.result
    return {"matrix": f"{n}x{n}", "K+L": f"{k}+{k}", "density": density, "row/col classes": f"{nr}/{nc}",
            "seconds": f"{m.seconds:.2f}", "peak MB": f"{m.peak_mb:.0f}", "CE": f"{s['micro_ce']:.4f}",
            "RNIA": f"{s['micro_rnia']:.4f}", "E4SC": f"{s['e4sc']:.4f}"}


def run_cocluster(n, h, check=False):
    """Two random co-clusterings with h x h clusters each (h*h blocks a side)."""
    from daskbicl.engine.blocks import as_biclustering

    rng = np.random.default_rng(11)
    truth = (rng.integers(0, h, n), rng.integers(0, h, n))
    pred = (rng.integers(0, h, n), rng.integers(0, h, n))
    m = measure(lambda: daskbicl.score(truth, pred, measures=MICRO))
    row = {"matrix": f"{n}x{n}", "clusters": f"{h}x{h}", "blocks a side": h * h, "seconds": f"{m.seconds:.2f}",
           "peak MB": f"{m.peak_mb:.0f}", "bcubed F1": f"{m.result['mocice_bcubed'].f1:.4f}",
           "CE": f"{m.result['micro_ce']:.4f}"}
    if check:  # the same numbers through block masks and signature classes
        t, p = (as_biclustering(daskbicl.as_dataset(x)) for x in (truth, pred))
        via_masks = daskbicl.score(t, p, measures=MICRO)
        assert np.allclose(tuple(via_masks["mocice_bcubed"]), tuple(m.result["mocice_bcubed"]), rtol=1e-12)
        assert all(abs(via_masks[k] - m.result[k]) < 1e-12 for k in CHEAP)
        row["agree with masks"] = "yes"
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n = int(args.n)
    print(f"machine: {machine()}\nversions: {versions()}\n")
    if args.quick:
        scale = [run_scale(2000, 5, 0.05, 0.2)]
        growth = []
        oracle = [run_oracle(5, 2)]
        bc = [run_bcubed(10, 3)] if _has("bcubed") else []
        bl = [run_biclustlib(30, 3)] if _has("biclustlib") and _has("munkres") else []
        heavy = [run_overlap(200, 20, 0.8)]
        cocl = [run_cocluster(300, 4, check=True)]
    else:
        scale = [run_scale(n, 20, 0.05, 0.2)]
        # cost grows like prod(1 + density_k): keep the grid where it finishes
        growth = [run_scale(n // 10, k, lo, hi) for k, lo, hi in
                  ((10, 0.05, 0.2), (20, 0.05, 0.2), (20, 0.01, 0.05), (40, 0.01, 0.05), (80, 0.002, 0.01))]
        oracle = [run_oracle(s, 3) for s in (6, 9, 12)]
        bc = [run_bcubed(s, 5) for s in (50, 100)] if _has("bcubed") else []
        bl = [run_biclustlib(s, k) for s, k in ((300, 10), (1000, 20))] if _has("biclustlib") and _has("munkres") else []
        heavy = [run_overlap(600, 40, 0.8), run_overlap(2000, 40, 0.5)]
        cocl = [run_cocluster(2000, 10, check=True), run_cocluster(20_000, 30), run_cocluster(20_000, 40),
                run_cocluster(n, 20)]
    print("== all four measures at scale")
    print_table(scale, list(scale[0]))
    if growth:
        print(f"\n== growth with the number of biclusters and their density ({n // 10:.0e} x {n // 10:.0e})")
        print_table(growth, list(growth[0]))
    print("\n== pair-by-pair rational oracle (MOCICE-BCubed only) vs daskbicl (all four)")
    print_table(oracle, list(oracle[0]))
    print("\n== heavy overlap: CE, RNIA, E4SC alone (MOCICE-BCubed would exceed daskbicl.max_work)")
    print_table(heavy, list(heavy[0]))
    print("\n== co-clusterings: all four from the contingency tables")
    print_table(cocl, list(cocl[0]))
    for title, rows in (("bcubed package (extended BCubed precision, pairwise)", bc),
                        ("biclustlib clustering_error + RNIA", bl)):
        print(f"\n== {title}")
        if rows:
            print_table(rows, list(rows[0]))
        else:
            print("not installed: pip install bcubed biclustlib munkres (biclustlib with --no-deps)")
    return 0


def _has(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = main()
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    sys.exit(code)
