"""``ecs`` on the cells of overlapping biclusterings against clusim's PageRank, in one run.

Inputs: two biclusterings of ``n`` x ``n`` cells with ``--biclusters``
random biclusters each (every row and column in a bicluster with
probability ``--density``, so biclusters overlap), pred a perturbed copy.
daskbicl: ``daskbicl.ecs`` end to end (signature pass, cell classes,
PageRank on the classes).  The peer: clusim 0.4's ``element_sim`` steps on
the cell memberships (its ``numerical_ppr_scores``, igraph's prpack, one
PageRank per group of cells, dense n² x n² affinity matrices, and ``cL1``),
with the element graph built as clusim's repository builds it since commit
2736a23 (released clusim 0.4 fails on overlapping clusterings with current
scipy: tests/kernels/bicluster/test_element_centric_overlap.py).  The peer runs on growing sizes
until it is predicted to need more than ``--budget`` seconds or
``--peer-memory`` MB; the ratio is peer / daskbicl on its largest size.
daskbicl then runs alone up to ``--labels`` rows and columns.

Run:  python benchmarks/field_ecs_overlap.py            (peer up to 60 s; daskbicl up to 10^6 x 10^6)
      python benchmarks/field_ecs_overlap.py --quick    (seconds; the test suite runs this)
Exits 1 when daskbicl and clusim differ by more than 1e-9.
Load (``uptime``) is printed with the numbers: take ratios, not times, from a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import load, machine, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402


def pair(n: int, k: int, density: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows, cols = rng.random((k, n)) < density, rng.random((k, n)) < density
    flip_r, flip_c = rng.random((k, n)) < 0.1 * density, rng.random((k, n)) < 0.1 * density
    return (rows, cols), (rows ^ flip_r, cols ^ flip_c)


def _peer(truth, pred) -> float:
    """clusim's ECS of the cells (its PageRank on the cell graph built as its repository's fix does)."""
    from tests.support.clusim_reference import clusim_scores

    def cells(rows, cols):
        return (rows[:, :, None] & cols[:, None, :]).reshape(len(rows), -1).T

    return float(np.mean(clusim_scores(cells(*truth), cells(*pred), 0.9)))


def _ours(truth, pred) -> float:
    return daskbicl.ecs(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred))


def _timed(func, *args):
    start = time.perf_counter()
    value = func(*args)
    return time.perf_counter() - start, value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--biclusters", type=int, default=5)
    ap.add_argument("--density", type=float, default=0.3)
    ap.add_argument("--labels", type=int, default=10**6, help="largest rows (= columns) daskbicl runs alone")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds the peer may take at its largest size")
    ap.add_argument("--peer-memory", type=float, default=2000.0, help="MB the peer's dense matrices may take")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    peer_sizes = [6, 10, 14] if args.quick else [10, 20, 30, 40, 50, 60, 70, 80]
    own_sizes = [100, 1000] if args.quick else [10**3, 10**4, 10**5, args.labels]
    print(f"# {machine()}; {versions()}")
    print(f"# {load()}")
    _ours(*pair(8, args.biclusters, args.density))  # compile and import outside the timings
    _peer(*pair(4, args.biclusters, args.density))
    rows, last, last_peer, worst = [], None, None, 0.0
    for n in peer_sizes:
        cells = n * n
        if 3 * 8 * cells * cells / 2**20 > args.peer_memory:
            break
        if last_peer is not None and last_peer[1] * (cells / last_peer[0]) ** 2 > args.budget:
            break
        truth, pred = pair(n, args.biclusters, args.density, args.seed)
        t_peer, v_peer = _timed(_peer, truth, pred)
        t_ours, v_ours = _timed(_ours, truth, pred)
        last_peer, last, worst = (cells, t_peer), (n, t_peer, t_ours), max(worst, abs(v_peer - v_ours))
        rows.append({"rows = cols": n, "cells": cells, "clusim s": f"{t_peer:.3g}", "daskbicl s": f"{t_ours:.3g}",
                     "clusim / daskbicl": f"{t_peer / t_ours:.1f}", "|difference|": f"{abs(v_peer - v_ours):.1e}"})
    print_table(rows, list(rows[0]))
    if last:
        print(f"# at clusim's largest size ({last[0]}^2 cells): clusim / daskbicl = {last[1] / last[2]:.1f}")
    print(f"# {load()}")
    alone = []
    for n in own_sizes:
        truth, pred = pair(n, args.biclusters, args.density, args.seed)
        t_ours, value = _timed(_ours, truth, pred)
        alone.append({"rows = cols": f"{n:.0e}", "cells": f"{n * n:.0e}", "daskbicl s": f"{t_ours:.3g}",
                      "ecs": f"{value:.6f}"})
    print_table(alone, list(alone[0]))
    print(f"# {load()}")
    if worst > 1e-9:
        print(f"# daskbicl and clusim differ by {worst:.1e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
