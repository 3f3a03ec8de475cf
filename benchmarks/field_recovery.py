"""Nicholls & Wallace's scores and the cells' ECS against their peers, in one run.

* ``recovered``, ``redundancy``, ``ce_sparse``, ``ce_dense``: daskbicl end to
  end (``daskbicl.score`` on in-memory masks: signature pass + finalize) on
  two biclusterings of ``--labels`` rows and ``--labels`` columns with
  ``--biclusters`` biclusters each, simulated as biclust_comp does (contiguous
  blocks of rows x columns at random offsets, sparse and dense); the peer is
  biclust_comp's own functions (``analysis/accuracy.py`` at commit 1b01d44,
  ported in tests/measures/test_field_recovery.py: the sparse/dense CE and the three
  redundancy columns in one call), on square matrices of growing size
  (300², 1000², 3000², ...) until it is predicted to need more than
  ``--budget`` seconds (time scaled by the number of cells) or ``--peer-memory``
  MB (its union builds two dense rows x columns count matrices).
* ``ecs`` on the cells of two co-clusterings: daskbicl on ``--labels`` rows and
  ``--labels`` columns, ``--clusters`` clusters per axis (pred keeps half of
  truth's labels); the peer is clusim's ``element_sim(alpha=0.9)`` on the
  cell memberships (two dense n x n affinity matrices, n cells), up to the
  memory limit.
* ``liu_wang`` and ``csi``: daskbicl on the same simulated biclusterings
  (``csi`` on at most 60,000 x 60,000: it counts pairs of cells in int64 and
  refuses above 4·10^9 cells); the peer is biclustlib's
  ``evaluation/liu_wang.py`` and ``csi.py`` as ported in
  tests/measures/test_field_bicluster.py (biclustlib installs only with ``--no-deps``).

The ratio is peer / daskbicl at the peer's largest size, daskbicl timed on the
same input.  Load (``uptime``) is printed with the numbers.

Run:  python benchmarks/field_recovery.py            (10^7 labels per axis; peers up to 60 s)
      python benchmarks/field_recovery.py --quick    (seconds; the test suite runs this)
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
from _common import load, machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

RECOVERY = ["recovered", "redundancy", "ce_sparse", "ce_dense"]


def biclusters(rng, k: int, n_rows: int, n_cols: int):
    """k biclusters as biclust_comp simulates them (``simulate/simple.py``): a contiguous block of rows times
    a contiguous block of columns at random offsets, each a share drawn from (0.05, 0.1, 0.2, 0.5) of its axis."""
    rows = np.zeros((k, n_rows), bool)
    cols = np.zeros((k, n_cols), bool)
    for b in range(k):
        for mask, n in ((rows, n_rows), (cols, n_cols)):
            size = max(1, int(rng.choice([0.05, 0.1, 0.2, 0.5]) * n))
            first = int(rng.integers(0, n - size + 1))
            mask[b, first:first + size] = True
    return rows, cols


def recovery_pair(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return biclusters(rng, k, n, n), biclusters(rng, k, n, n)


def _ours_recovery(truth, pred):
    return daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=RECOVERY)


def _peer_recovery():
    from tests.measures.test_field_recovery import biclust_comp_scores

    return biclust_comp_scores


def ladder(run, make, sizes, budget: float, memory_mb: float, bytes_per_unit: float, units):
    """(size, Measurement) of the largest size the peer finishes within budget and memory, or (None, None)."""
    best = (None, None)
    for i, n in enumerate(sizes):
        if bytes_per_unit * units(n) / 2**20 > memory_mb:
            break
        m = measure(run, *make(n))
        if m.seconds > budget:
            break
        best = (n, m)
        if i + 1 < len(sizes) and m.seconds * units(sizes[i + 1]) / units(n) > budget:
            break
    return best


def bench_recovery(labels: int, k: int, sizes, budget: float, memory_mb: float) -> list[dict]:
    truth, pred = recovery_pair(labels, k)
    _ours_recovery(*recovery_pair(200, k, seed=1))  # imports and compilation: not timed
    ours = measure(_ours_recovery, truth, pred)
    row = {"measure": ", ".join(RECOVERY), "input": f"{labels:,} x {labels:,}, {k}+{k} biclusters",
           "daskbicl s": f"{ours.seconds:.3f}", "peak MB": f"{ours.peak_mb:.0f}",
           "peer": "biclust_comp (ported)"}
    peer = _peer_recovery()
    peer(*recovery_pair(50, k, seed=2))  # imports: not timed
    # the peer's dense rows x columns count matrices: two int64 and their maximum
    n, m = ladder(peer, lambda s: recovery_pair(s, k, seed=s), sizes, budget, memory_mb, 24, lambda s: s * s)
    if n is None:
        return [row | {"peer n": "none in budget"}]
    small_t, small_p = recovery_pair(n, k, seed=n)
    small = measure(_ours_recovery, small_t, small_p, repeat=3)
    got, want = small.result, m.result
    check = all(math.isclose(got[f"ce_{c}"], want[c], abs_tol=1e-12) or (want[c] == -1 and math.isnan(got[f"ce_{c}"]))
                for c in ("sparse", "dense"))
    return [row | {"peer n": f"{n:,} x {n:,}", "peer s": f"{m.seconds:.3f}", "ours s (peer n)": f"{small.seconds:.4f}",
                   "peer / ours": f"{m.seconds / small.seconds:.1f}", "equal": "yes" if check else "NO"}]


def _ours(measure_name: str):
    def run(truth, pred):
        return daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred),
                              measures=measure_name)[measure_name]

    return run


#: daskbicl counts pairs of cells in int64 for ``csi``: it refuses above 4·10^9 cells, so its side is capped.
CSI_SIDE = 60_000


def bench_biclustlib(labels: int, k: int, liu_sizes, csi_sizes, budget: float, memory_mb: float) -> list[dict]:
    """``liu_wang`` and ``csi`` against biclustlib's ``evaluation/liu_wang.py`` and ``csi.py`` (Padilha), as
    ported in tests/measures/test_field_bicluster.py (biclustlib itself installs only with ``--no-deps``)."""
    from tests.measures.test_field_bicluster import csi_brute, liu_wang_brute

    rows = []
    # liu_wang: the peer loops over pairs of biclusters with set operations on index arrays (memory ~ the masks);
    # csi: the peer builds dense cells x cells co-association matrices (four int64 of n^4 entries).
    for name, peer, sizes, side, per_unit, units in (
            ("liu_wang", liu_wang_brute, liu_sizes, labels, 2.0, lambda s: s),
            ("csi", csi_brute, csi_sizes, min(labels, CSI_SIDE), 32.0, lambda s: s**4)):
        ours_run = _ours(name)
        ours_run(*recovery_pair(50, k, seed=1))  # imports and compilation: not timed
        ours = measure(ours_run, *recovery_pair(side, k))
        row = {"measure": name, "input": f"{side:,} x {side:,}, {k}+{k} biclusters", "daskbicl s": f"{ours.seconds:.3f}",
               "peak MB": f"{ours.peak_mb:.0f}", "peer": "biclustlib (ported)"}
        peer(*recovery_pair(8, k, seed=2))
        n, m = ladder(peer, lambda s: recovery_pair(s, k, seed=s), sizes, budget, memory_mb, per_unit, units)
        if n is None:
            rows.append(row | {"peer n": "none in budget"})
            continue
        small = measure(ours_run, *recovery_pair(n, k, seed=n), repeat=3)
        check = math.isclose(float(small.result), float(m.result), rel_tol=1e-12, abs_tol=1e-12)
        rows.append(row | {"peer n": f"{n:,} x {n:,}", "peer s": f"{m.seconds:.3f}",
                           "ours s (peer n)": f"{small.seconds:.4f}", "peer / ours": f"{m.seconds / small.seconds:.1f}",
                           "equal": "yes" if check else "NO"})
    return rows


def coclustering_pair(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)

    def axis():
        z = rng.integers(0, k, n)
        return z, np.where(rng.random(n) < 0.5, z, rng.integers(0, k, n))

    (z, zp), (w, wp) = axis(), axis()
    return (z, w), (zp, wp)


def _peer_ecs(truth, pred):
    from clusim import sim
    from clusim.clustering import Clustering

    def cells(z, w):
        return Clustering().from_membership_list((np.asarray(z)[:, None] * (int(np.max(w)) + 1)
                                                  + np.asarray(w)[None, :]).ravel().tolist())

    return sim.element_sim(cells(*truth), cells(*pred), alpha=0.9)


def bench_ecs(labels: int, k: int, sizes, budget: float, memory_mb: float) -> list[dict]:
    truth, pred = coclustering_pair(labels, k)
    daskbicl.ecs(*coclustering_pair(100, k, seed=1))
    ours = measure(daskbicl.ecs, truth, pred)
    row = {"measure": "ecs (cells)", "input": f"{labels:,} x {labels:,}, {k} clusters per axis",
           "daskbicl s": f"{ours.seconds:.3f}", "peak MB": f"{ours.peak_mb:.0f}", "peer": "clusim element_sim"}
    try:
        import clusim  # noqa: F401
    except ImportError:
        return [row | {"peer": "clusim (not installed)"}]

    def make(side):
        return coclustering_pair(side, max(2, min(k, side // 4)), seed=side)

    _peer_ecs(*make(3))  # clusim's imports (igraph): not timed

    # clusim holds two dense n x n float affinity matrices for n = side² cells
    n, m = ladder(_peer_ecs, make, sizes, budget, memory_mb, 16, lambda s: s**4)
    if n is None:
        return [row | {"peer n": "none in budget"}]
    small = measure(daskbicl.ecs, *make(n), repeat=3)
    check = math.isclose(small.result, m.result, abs_tol=1e-9)
    return [row | {"peer n": f"{n} x {n}", "peer s": f"{m.seconds:.3f}", "ours s (peer n)": f"{small.seconds:.4f}",
                   "peer / ours": f"{m.seconds / small.seconds:.1f}", "equal": "yes" if check else "NO"}]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--labels", type=int, default=10**7, help="rows and columns of the daskbicl inputs")
    ap.add_argument("--clusters", type=int, default=1000, help="clusters per axis of the co-clusterings (ecs)")
    ap.add_argument("--biclusters", type=int, default=10, help="biclusters per side (recovery measures)")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a peer may take at its largest size")
    ap.add_argument("--peer-memory", type=float, default=2000.0, help="MB a peer's dense matrices may take")
    args = ap.parse_args(argv)
    if args.quick:
        args.labels, args.clusters, args.biclusters, args.budget = 3000, 20, 5, 2.0
        rec_sizes, ecs_sizes, liu_sizes, csi_sizes = [100, 300], [6, 12], [100, 300], [6, 10]
    else:
        rec_sizes = [300, 1000, 3000, 10**4, 3 * 10**4]
        ecs_sizes = [10, 30, 60, 100, 200]
        liu_sizes = [10**3, 10**4, 10**5, 10**6, 10**7]
        csi_sizes = [10, 20, 30, 45, 60, 80]
    print(f"machine: {machine()}\nversions: {versions()}\nload before: {load()}\n")
    rows = bench_recovery(args.labels, args.biclusters, rec_sizes, args.budget, args.peer_memory)
    rows += bench_ecs(args.labels, args.clusters, ecs_sizes, args.budget, args.peer_memory)
    rows += bench_biclustlib(args.labels, args.biclusters, liu_sizes, csi_sizes, args.budget, args.peer_memory)
    print_table(rows, ["measure", "input", "daskbicl s", "peak MB", "peer", "peer n", "peer s", "ours s (peer n)",
                       "peer / ours", "equal"])
    print(f"\nload after: {load()}")
    return 0 if all(r.get("equal", "yes") == "yes" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
