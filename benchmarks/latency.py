"""Fixed costs: import, the shell, small inputs, a Client, many clusters, and the bincount floor.

Every row is measured in this run against the reference named next to it:

1. ``python -c "import daskbicl"`` against ``python -c "import xarray, dask.array"``
   (fresh interpreters, best of 5).
2. ``daskbicl score`` on two 1000 x 100 stores (default scheduler) against
   ``python -c "import daskbicl"``; and the same command with
   ``--scheduler local`` (a LocalCluster), at two sizes, to show where
   starting a cluster pays (the default's rule: threads up to 2 GiB of inputs).
3. ``daskbicl.score`` (all 8 co-clustering measures) on in-memory labels
   against scikit-learn on the rows: ``adjusted_rand_score`` alone, and
   ARI + NMI on rows and on columns (4 calls).
4. The same with a ``distributed.Client`` (LocalCluster, 2 worker
   processes) active, against the no-client time.
5. 5·10^7 labels per axis: all 8 measures against one single-threaded
   ``np.bincount(z * K + z')`` per axis over the same labels (the floor the
   issue names; the machine has 2 cores, so it is a one-thread floor).

Run:  python benchmarks/latency.py            (the issue's sizes)
      python benchmarks/latency.py --quick    (seconds; the test suite runs this)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import machine, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402


def best_wall(cmd: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def per_call(func, *args, budget: float = 1.0, **kwargs) -> float:
    """Median seconds per call over as many calls as fit in ``budget`` seconds (at least 3)."""
    func(*args, **kwargs)
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 1000):
        t = time.perf_counter()
        func(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def labels(n: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    z = rng.integers(0, k, n)
    return z, np.where(rng.random(n) < 0.5, z, rng.integers(0, k, n))


def sklearn_ari_nmi(z, zp, w, wp):
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return (adjusted_rand_score(z, zp), adjusted_rand_score(w, wp),
            normalized_mutual_info_score(z, zp), normalized_mutual_info_score(w, wp))


def imports(repeat: int) -> float:
    py = sys.executable
    ours = best_wall([py, "-c", "import daskbicl"], repeat)
    ref = best_wall([py, "-c", "import xarray, dask.array"], repeat)
    print_table([{"what": "import daskbicl", "s": f"{ours:.3f}", "reference": "import xarray, dask.array",
                  "reference s": f"{ref:.3f}", "ratio": f"{ours / ref:.2f}"}],
                ["what", "s", "reference", "reference s", "ratio"])
    return ours


def shell(import_s: float, sizes, repeat: int) -> None:
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n_rows, n_cols in sizes:
            out = os.path.join(tmp, f"{n_rows}")
            subprocess.run([py, "-m", "daskbicl", "generate", out, "--rows", str(n_rows), "--cols", str(n_cols),
                            "--scheduler", "threads"], check=True, capture_output=True)
            for sched in ("default", "local"):
                cmd = [py, "-m", "daskbicl", "score", f"{out}/truth.zarr", f"{out}/pred.zarr", "--no-progress"]
                if sched == "local":
                    cmd += ["--scheduler", "local"]
                wall = best_wall(cmd, repeat)
                rows.append({"stores": f"{n_rows:,} x {n_cols:,}", "scheduler": sched, "wall s": f"{wall:.2f}",
                             "/ import daskbicl": f"{wall / import_s:.2f}"})
    print_table(rows, ["stores", "scheduler", "wall s", "/ import daskbicl"])


def in_memory(cases) -> None:
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    rows = []
    for n, m, k in cases:
        (z, zp), (w, wp) = labels(n, k, rng), labels(m, min(k, m), rng)
        ours = per_call(daskbicl.score, (z, w), (zp, wp))
        ari = per_call(adjusted_rand_score, z, zp)
        four = per_call(sklearn_ari_nmi, z, zp, w, wp)
        rows.append({"rows x cols": f"{n:,} x {m:,}", "clusters": k, "daskbicl 8 measures ms": f"{1e3 * ours:.2f}",
                     "sklearn ARI rows ms": f"{1e3 * ari:.2f}", "/ ARI": f"{ours / ari:.2f}",
                     "sklearn ARI+NMI rows+cols ms": f"{1e3 * four:.2f}", "/ ARI+NMI x2": f"{ours / four:.2f}"})
    print_table(rows, ["rows x cols", "clusters", "daskbicl 8 measures ms", "sklearn ARI rows ms", "/ ARI",
                       "sklearn ARI+NMI rows+cols ms", "/ ARI+NMI x2"])


def with_client(cases) -> None:
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(1)
    data = [(labels(n, 5, rng), labels(m, 5, rng)) for n, m in cases]
    alone = [per_call(daskbicl.score, (z, w), (zp, wp)) for (z, zp), (w, wp) in data]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        client = [per_call(daskbicl.score, (z, w), (zp, wp)) for (z, zp), (w, wp) in data]
    print_table([{"rows x cols": f"{n:,} x {m:,}", "no client ms": f"{1e3 * a:.2f}", "client ms": f"{1e3 * c:.2f}",
                  "ratio": f"{c / a:.2f}"} for (n, m), a, c in zip(cases, alone, client)],
                ["rows x cols", "no client ms", "client ms", "ratio"])


def floor(n: int, ks) -> None:
    rng = np.random.default_rng(2)
    rows = []
    for k in ks:
        (z, zp), (w, wp) = labels(n, k, rng), labels(n, k, rng)

        def bincount_floor():
            np.bincount(z * k + zp, minlength=k * k)
            np.bincount(w * k + wp, minlength=k * k)

        base = min(timed(bincount_floor) for _ in range(2))
        ours = min(timed(daskbicl.score, (z, w), (zp, wp)) for _ in range(2))
        rows.append({"labels per axis": f"{n:,}", "clusters": k, "daskbicl 8 measures s": f"{ours:.2f}",
                     "1-thread np.bincount per axis s": f"{base:.2f}", "ratio": f"{ours / base:.2f}"})
        del z, zp, w, wp
    print_table(rows, ["labels per axis", "clusters", "daskbicl 8 measures s", "1-thread np.bincount per axis s",
                       "ratio"])


def timed(func, *args) -> float:
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    quick = args.quick
    print(f"# {machine()}\n# {versions()}")
    print("\n## 1. import")
    import_s = imports(2 if quick else 5)
    print("\n## 2. daskbicl score on stores (wall, fresh process; default = threads below 2 GiB of inputs)")
    shell(import_s, [(1000, 100)] if quick else [(1000, 100), (10**7, 10**4), (10**8, 10**4)], 1 if quick else 3)
    print("\n## 3. in-memory labels: all 8 co-clustering measures against scikit-learn (median per call)")
    in_memory([(100, 50, 5), (10**4, 100, 5)] if quick else
              [(100, 50, 5), (10**4, 10**4, 5), (10**4, 10**4, 1000), (10**6, 10**6, 5), (10**6, 10**6, 1000),
               (10**7, 10**7, 10**5)])
    print("\n## 4. a distributed Client active (LocalCluster, 2 worker processes)")
    with_client([(100, 50), (10**4, 100)] if quick else [(100, 50), (10**4, 100), (10**6, 10**3)])
    print("\n## 5. against the bincount floor")
    floor(10**5 if quick else 5 * 10**7, [10] if quick else [10, 1000])


if __name__ == "__main__":
    main()
