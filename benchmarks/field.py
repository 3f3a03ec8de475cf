"""The per-axis measures the field reports (docs/measures/field.md) against their peers, in one run.

For each measure: daskbicl end to end (``daskbicl.score`` on in-memory
labels: counting pass + finalize) at ``--labels`` labels and ``--clusters``
clusters (pred keeps half of truth's labels), then its peer on a ladder of
sizes (10^3, 3·10^3, 10^4, ...), stopping before the size it is predicted to need
more than ``--budget`` seconds for (the last time scaled by the size ratio,
squared for clusim's element_sim), or more memory than
``--peer-memory`` MB (clusim's ``element_sim`` builds two dense n x n
affinity matrices).  The ratio is peer / daskbicl at the peer's largest
size, daskbicl timed on the same labels.  Peers:

* homogeneity, completeness, V: scikit-learn ``homogeneity_completeness_v_measure``
  (one call gives all three; timed once, listed under each);
* NCA, PSI: genieclust ``normalized_clustering_accuracy``, ``pair_sets_index``
  (on label vectors, as users call them);
* RMI, normalised RMI, ECS, omega (of the rows as a cover): clusim ``rmi``,
  ``element_sim``, ``omega_index``, the ``Clustering`` objects built from the
  label lists included (users must build them);
* ONMI (of the rows as a cover, LFK): cdlib's ``onmi`` as ported line for line
  into ``tests/support/ported_cdlib_onmi.py`` (cdlib, about 60 packages, is not
  installed; the tests check the copy against cdlib where it is), the
  covers built from the label vectors included.

A peer that is not installed is reported as such.  Load (``uptime``) is
printed with the numbers: the machine may be shared.

Run:  python benchmarks/field.py            (10^7 labels, 1000 clusters; peers up to 60 s)
      python benchmarks/field.py --quick    (seconds; the test suite runs this)
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import load, machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

ONE = np.zeros(1, dtype=np.int64)


def pair(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.integers(0, k, n)
    return z, np.where(rng.random(n) < 0.5, z, rng.integers(0, k, n))


def _sklearn_hcv(x, y):
    from sklearn.metrics import homogeneity_completeness_v_measure

    return homogeneity_completeness_v_measure(x, y)


def _clusim(func):
    def run(x, y):
        from clusim.clustering import Clustering

        c1 = Clustering().from_membership_list(x.tolist())
        c2 = Clustering().from_membership_list(y.tolist())
        return func(c1, c2)
    return run


def peers() -> dict:
    """Measure stem -> (peer description, callable(x, y) -> value(s), bytes per label², module)."""
    out = {}
    hcv = ("scikit-learn homogeneity_completeness_v_measure", _sklearn_hcv, 0, "sklearn")
    for stem in ("homogeneity", "completeness", "v_measure"):
        out[stem] = hcv
    try:
        import genieclust.compare_partitions as gc

        out["nca"] = ("genieclust normalized_clustering_accuracy", gc.normalized_clustering_accuracy, 0, "genieclust")
        out["psi"] = ("genieclust pair_sets_index", gc.pair_sets_index, 0, "genieclust")
    except ImportError:
        out["nca"] = out["psi"] = ("genieclust (not installed)", None, 0, "genieclust")
    try:
        import numpy as _np
        from clusim import sim

        out["rmi"] = ("clusim rmi", _clusim(lambda a, b: sim.rmi(a, b, norm_type="none", logbase=_np.e)), 0, "clusim")
        out["nrmi"] = ("clusim rmi(normalized)", _clusim(lambda a, b: sim.rmi(a, b, norm_type="normalized")), 0,
                       "clusim")
        out["ecs"] = ("clusim element_sim", _clusim(lambda a, b: sim.element_sim(a, b, alpha=0.9)), 16, "clusim")
        out["omega"] = ("clusim omega_index", _clusim(sim.omega_index), 0, "clusim")
    except ImportError:
        out["rmi"] = out["nrmi"] = out["ecs"] = out["omega"] = ("clusim (not installed)", None, 0, "clusim")
    out["onmi"] = ("cdlib onmi (LFK), as ported in tests/support/ported_cdlib_onmi.py", _cdlib_onmi, 0, "cdlib")
    return out


def _cdlib_onmi(x, y):
    """cdlib's overlapping NMI of the two partitions as covers (one set of labels per cluster).  cdlib itself is
    not installed here (about 60 packages); its function is ported line for line into the tests, which check
    the copy against cdlib where it is installed and daskbicl's ``onmi_rows`` against the copy."""
    from tests.support.ported_cdlib_onmi import onmi

    def cover(z):
        order = np.argsort(z, kind="stable")
        cuts = np.flatnonzero(np.diff(z[order])) + 1
        return [set(part.tolist()) for part in np.split(order, cuts)]

    return onmi(cover(x), cover(y), variant="LFK")


def ladder(func, k: int, sizes, budget: float, memory_mb: float, per_label_sq: int):
    """The largest size of ``sizes`` the peer runs within ``budget``: (size, Measurement) or (None, None).

    The next size is tried only when the last time, scaled by the size ratio
    (squared for peers with n x n matrices), stays within the budget; a run
    over the budget anyway is discarded.
    """
    best = (None, None)
    power = 2 if per_label_sq else 1
    for i, n in enumerate(sizes):
        if per_label_sq and per_label_sq * n * n / 2**20 > memory_mb:
            break
        x, y = pair(n, min(k, max(2, n // 10)), seed=n)
        m = measure(func, x, y)
        if m.seconds > budget:
            break
        best = (n, m)
        if i + 1 < len(sizes) and m.seconds * (sizes[i + 1] / n) ** power > budget:
            break
    return best


def bench(labels: int, k: int, sizes, budget: float, memory_mb: float) -> None:
    table = peers()
    z, zp = pair(labels, k)
    names = [f"{stem}_rows" for stem in table]
    daskbicl.score((z[:1000], ONE), (zp[:1000], ONE), measures=names)  # imports, first-call set-up: not timed
    rows = []
    peer_cache: dict = {}
    for stem, (desc, func, per_sq, _module) in table.items():
        name = f"{stem}_rows"
        ours = measure(daskbicl.score, (z, ONE), (zp, ONE), measures=[name])
        row = {"measure": name, "labels": f"{labels:,}", "clusters": k, "daskbicl s": f"{ours.seconds:.3f}",
               "peak MB": f"{ours.peak_mb:.0f}", "peer": desc}
        if func is None:
            rows.append(row | {"peer n": "-", "peer s": "-", "ours s (peer n)": "-", "peer / ours": "-"})
            continue
        key = (desc, per_sq)
        if key not in peer_cache:
            peer_cache[key] = ladder(func, k, sizes, budget, memory_mb, per_sq)
        n, m = peer_cache[key]
        if n is None:
            rows.append(row | {"peer n": "none in budget", "peer s": "-", "ours s (peer n)": "-", "peer / ours": "-"})
            continue
        x, y = pair(n, min(k, max(2, n // 10)), seed=n)
        small = measure(daskbicl.score, (x, ONE), (y, ONE), measures=[name], repeat=3)
        rows.append(row | {"peer n": f"{n:,}", "peer s": f"{m.seconds:.3f}",
                           "ours s (peer n)": f"{small.seconds:.4f}",
                           "peer / ours": f"{m.seconds / small.seconds:.1f}"})
    print_table(rows, ["measure", "labels", "clusters", "daskbicl s", "peak MB", "peer", "peer n", "peer s",
                       "ours s (peer n)", "peer / ours"])


def bench_information(labels: int, k: int) -> None:
    """NMI on the issue's near-trivial example: textbook sums vs daskbicl vs 50-digit mpmath; MI/AMI CPU time."""
    import math
    import time

    import mpmath

    from daskbicl.kernels.coclustering import cocluster_scores, information_terms, information_theory
    from daskbicl.kernels.coclustering.contingency import Table

    mpmath.mp.dps = 50
    n = 10**7
    t = Table.from_dense(np.array([[n - 2, 1], [1, 0]], dtype=np.int64))
    xl = cocluster_scores.xlogx_sum
    textbook_mi = math.fsum([xl(t.counts), -xl(t.truth_sizes()), -xl(t.pred_sizes()), n * math.log(n)]) / n
    textbook_h = (n * math.log(n) - xl(t.truth_sizes())) / n
    big = mpmath.mpf(n)
    exact_mi = ((big - 2) / big * mpmath.log(big * (big - 2) / (big - 1) ** 2)
                + 2 / big * mpmath.log(big / (big - 1)))
    exact_h = -((big - 1) / big * mpmath.log((big - 1) / big) + 1 / big * mpmath.log(1 / big))
    print(f"NMI, 10^7 labels, one odd label per side: exact {float(exact_mi / exact_h):.6e}, "
          f"textbook sums {textbook_mi / textbook_h:.6e}, daskbicl {information_theory.nmi(t):.6e}")
    z, zp = pair(labels, k)
    table = Table.from_labels(z, zp)
    for name, func in (("MI", information_terms.mutual_info), ("AMI", information_theory.ami)):
        fresh = Table(table.rows, table.cols, table.counts, table.truth_labels, table.pred_labels)
        start = time.process_time()
        func(fresh)
        print(f"{name} finalize on {labels:,} labels, {k} clusters ({len(table.counts):,} cells): "
              f"{time.process_time() - start:.3f} s CPU")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--labels", type=int, default=10**7)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a peer may take at its largest size")
    ap.add_argument("--peer-memory", type=float, default=2000.0, help="MB a peer's dense matrices may take")
    args = ap.parse_args(argv)
    if args.quick:
        args.labels, args.clusters, args.budget = 20_000, 20, 2.0
        sizes = [300, 3000]
    else:
        sizes = [10**3, 3 * 10**3, 10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6, 3 * 10**6, 10**7]
    print(f"machine: {machine()}\nversions: {versions()}\nload before: {load()}\n")
    bench_information(args.labels, args.clusters)
    print()
    bench(args.labels, args.clusters, sizes, args.budget, args.peer_memory)
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
