"""AMI, consensus and the null model against scikit-learn, measured in one run.

* AMI of the row partitions, ``daskbicl.ami_rows`` (counting pass + windowed
  expected MI) against ``sklearn.metrics.adjusted_mutual_info_score``, at
  10^5 – 5·10^7 labels and 10 – 1000 clusters (pred keeps half of truth's
  labels).  scikit-learn is run only up to ``--sklearn-limit`` labels per
  cluster count (its expected MI grows with N · clusters and takes minutes
  to hours beyond); skipped rows say so.  The last column is
  ``|ours − scikit-learn|``.
* ``daskbicl.consensus`` against ``sklearn.metrics.consensus_score`` on
  random biclusterings (K + K biclusters at 20 % density).
* ``daskbicl.null(model=...)`` against clusim's ``corrected_chance`` (Rand
  index, each random model of Gates & Ahn 2017), same labels and draws.
* ``daskbicl.null``: seconds per draw for the 8 published co-clustering
  measures and for CARI alone, on the tables of a co-clustering of
  ``--null-size`` labels per axis (the cost does not depend on that size,
  only on the numbers of clusters).

Run:  python benchmarks/information.py             (the issue's sizes; sklearn up to 10^6 labels)
      python benchmarks/information.py --quick     (seconds; the test suite runs this)
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

AMI_CASES = [(10**5, 10), (10**5, 1000), (10**6, 10), (10**6, 100), (10**6, 1000), (10**7, 1000),
             (5 * 10**7, 10), (5 * 10**7, 1000)]
QUICK_AMI = [(10**4, 10), (2 * 10**4, 100)]


def pair(n: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    z = rng.integers(0, k, n)
    return z, np.where(rng.random(n) < 0.5, z, rng.integers(0, k, n))


def bench_ami(cases, sklearn_limit: int) -> None:
    from sklearn.metrics import adjusted_mutual_info_score

    rng = np.random.default_rng(0)
    one = np.zeros(1, dtype=np.int64)
    warm = pair(5000, 10, rng)
    daskbicl.ami_rows((warm[0], one), (warm[1], one))  # imports and first-call set-up, not timed
    adjusted_mutual_info_score(*warm)
    rows = []
    for n, k in cases:
        z, zp = pair(n, k, rng)
        ours = measure(daskbicl.ami_rows, (z, one), (zp, one))
        row = {"labels": f"{n:,}", "clusters": k, "daskbicl s": f"{ours.seconds:.3f}",
               "daskbicl peak MB": f"{ours.peak_mb:.0f}", "AMI": f"{ours.result:.12f}"}
        if n <= sklearn_limit:
            sk = measure(adjusted_mutual_info_score, z, zp)
            row.update({"sklearn s": f"{sk.seconds:.3f}", "sklearn / daskbicl": f"{sk.seconds / ours.seconds:.1f}",
                        "|difference|": f"{abs(sk.result - ours.result):.1e}"})
        else:
            row.update({"sklearn s": "not run", "sklearn / daskbicl": "", "|difference|": ""})
        rows.append(row)
        del z, zp
    print_table(rows, ["labels", "clusters", "daskbicl s", "daskbicl peak MB", "sklearn s", "sklearn / daskbicl",
                       "AMI", "|difference|"])


def random_biclusters(k: int, n_rows: int, n_cols: int, rng):
    return rng.random((k, n_rows)) < 0.2, rng.random((k, n_cols)) < 0.2


def bench_consensus(cases) -> None:
    from sklearn.metrics import consensus_score

    rng = np.random.default_rng(1)
    rows = []
    for k, n_rows, n_cols in cases:
        a, b = random_biclusters(k, n_rows, n_cols, rng), random_biclusters(k, n_rows, n_cols, rng)
        ours = measure(daskbicl.consensus, daskbicl.biclustering(*a), daskbicl.biclustering(*b))
        sk = measure(consensus_score, a, b)
        rows.append({"biclusters": f"{k} + {k}", "matrix": f"{n_rows:,} x {n_cols:,}",
                     "daskbicl s": f"{ours.seconds:.3f}", "sklearn s": f"{sk.seconds:.3f}",
                     "sklearn / daskbicl": f"{sk.seconds / ours.seconds:.1f}",
                     "|difference|": f"{abs(sk.result - ours.result):.1e}"})
    print_table(rows, ["biclusters", "matrix", "daskbicl s", "sklearn s", "sklearn / daskbicl", "|difference|"])


def bench_null(n: int, cases) -> None:
    rng = np.random.default_rng(2)
    rows = []
    for h, l_, draws in cases:
        z, zp = pair(n, h, rng)
        w, wp = pair(max(l_ * 10, 1000), l_, rng)
        tables = daskbicl.contingency((z, w), (zp, wp))
        del z, zp
        for measures in (None, ["cari"]):
            m = measure(daskbicl.null, tables, measures=measures, n=draws, seed=0)
            rows.append({"row x col clusters": f"{h} x {l_}", "measures": "8 published" if measures is None else "cari",
                         "draws": draws, "total s": f"{m.seconds:.2f}",
                         "ms per draw": f"{1000 * m.seconds / draws:.2f}"})
    print_table(rows, ["row x col clusters", "measures", "draws", "total s", "ms per draw"])


#: daskbicl's (model, one_sided) -> clusim's random_model name (clusim: clustering 2 is the gold standard).
CLUSIM_MODELS = {("perm", True): "perm", ("num", True): "num1", ("all", True): "all1", ("num", False): "num",
                 ("all", False): "all"}


def _clusim_chance(sim, clustering, pred, truth_c, random_model: str, draws: int):
    """clusim's call as a user makes it (the pred's Clustering built from its labels included)."""
    return sim.corrected_chance(clustering().from_membership_list(pred.tolist()), truth_c, measure="rand_index",
                                random_model=random_model, n_samples=draws)


def bench_chance(cases) -> None:
    """The Rand index corrected for chance under each random model: ``daskbicl.null`` (draws; the adjusted
    value from their mean) against clusim's ``corrected_chance`` (its own expectation or draws), same labels."""
    try:
        from clusim import sim
        from clusim.clustering import Clustering
    except ImportError:
        print("clusim not installed: skipped")
        return
    rng = np.random.default_rng(3)
    rows = []
    for n, k, draws in cases:
        z, zp = pair(n, k, rng)
        truth_c = Clustering().from_membership_list(z.tolist())
        for (model, one_sided), theirs in CLUSIM_MODELS.items():
            try:
                ours = measure(daskbicl.null, (z, [0]), (zp, [0]), measures=["rand_rows"], n=draws, seed=0,
                               model=model, one_sided=one_sided)
            except daskbicl.TooLargeError as exc:  # a documented limit of the null model (docs/measures/more.md)
                rows.append({"labels": f"{n:,}", "clusters": k, "model": theirs, "draws": draws,
                             "daskbicl s": "refused", "clusim s": "-", "clusim / ours": "-",
                             "E[rand] ours": str(exc).split(";")[0][:60]})
                continue
            peer = measure(_clusim_chance, sim, Clustering, zp, truth_c, theirs, draws)
            r = ours.result["rand_rows"]
            rows.append({"labels": f"{n:,}", "clusters": k, "model": theirs, "draws": draws,
                         "daskbicl s": f"{ours.seconds:.3f}", "clusim s": f"{peer.seconds:.3f}",
                         "clusim / ours": f"{peer.seconds / ours.seconds:.1f}",
                         "E[rand] ours": f"{r.mean:.6f} ± {2 * r.std / np.sqrt(draws):.1e}"})
    print_table(rows, ["labels", "clusters", "model", "draws", "daskbicl s", "clusim s", "clusim / ours",
                       "E[rand] ours"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sklearn-limit", type=float, default=1e6, help="largest N scikit-learn's AMI is run at")
    ap.add_argument("--null-size", type=float, default=5e7, help="labels per axis of the null model's input")
    ap.add_argument("--chance-only", action="store_true", help="only the chance correction against clusim")
    args = ap.parse_args(argv)
    print(f"# {machine()}\n# {versions()}")
    if args.chance_only:
        print("\n## chance correction under a random model: daskbicl.null vs clusim corrected_chance (Rand index)")
        bench_chance([(500, 5, 20)] if args.quick else [(10**4, 10, 99), (10**5, 100, 99)])
        return
    print("\n## AMI of the row partitions (pred keeps half of truth's labels), average_method='arithmetic'")
    bench_ami(QUICK_AMI if args.quick else AMI_CASES, int(args.sklearn_limit))
    print("\n## consensus score, random biclusters at 20 % density")
    bench_consensus([(5, 200, 50)] if args.quick else [(20, 10**4, 10**3), (200, 10**4, 10**3)])
    print("\n## null model: daskbicl.null on a Contingency (local threaded scheduler)")
    bench_null(2000 if args.quick else int(args.null_size),
               [(10, 5, 20)] if args.quick else [(10, 5, 999), (100, 10, 999), (1000, 10, 99)])
    print("\n## chance correction under a random model: daskbicl.null vs clusim corrected_chance (Rand index)")
    bench_chance([(500, 5, 20)] if args.quick else [(10**4, 10, 99), (10**5, 100, 99)])


if __name__ == "__main__":
    main()
