"""Signature lookup in the micro-object lattices: numpy binary search vs pandas' hash table.

The kernels look packed signatures up through an index type they are given:
``SortedIndex`` (numpy ``searchsorted``, the kernels' default) or the
engine's ``PandasIndex`` (``pandas.Index.get_indexer``).  This prints the
time of building each index over N distinct keys and finding 1.5·N queries
(a third of them absent), and checks that both give the same positions.

Run:  python benchmarks/lookup.py            (N = 1e5, 1e6, 4e6)
      python benchmarks/lookup.py --quick    (seconds)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from daskbicl.engine.hashing import PandasIndex  # noqa: E402
from daskbicl.kernels.bits import SortedIndex  # noqa: E402


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6, 4e6])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    sizes = [1e4, 1e5] if args.quick else args.sizes
    rng = np.random.default_rng(0)
    print(f"{'keys':>10}  {'SortedIndex s':>14}  {'PandasIndex s':>14}  {'ratio':>6}  agree")
    for n in map(int, sizes):
        words = np.unique(rng.integers(0, 2**62, n, dtype=np.uint64))[:, None]
        query = np.concatenate([words[rng.integers(0, len(words), n)],
                                rng.integers(0, 2**62, (n // 2, 1), dtype=np.uint64)])
        ts, a = best_of(lambda w=words, q=query: SortedIndex(w).find(q))
        tp, b = best_of(lambda w=words, q=query: PandasIndex(w).find(q))
        print(f"{n:>10,}  {ts:>14.3f}  {tp:>14.3f}  {ts / tp:>6.2f}  {bool((a == b).all())}")


if __name__ == "__main__":
    main()
