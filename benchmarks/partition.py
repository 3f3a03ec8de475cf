"""Co-clustering measures: daskbicl against its peers, measured in one run.

For each size (labels per axis) and number of clusters it times, on the same
in-memory labels:

* ``daskbicl``    — all 8 co-clustering measures together (``daskbicl.score``,
                    local threaded scheduler, both axes counted);
* ``floor``       — one single-threaded ``np.bincount`` contingency pass over
                    rows and columns (whole arrays), the practical floor;
* ``floor_chunk`` — the same bincount pass over 2**21-label chunks (faster:
                    the chunk's table stays in cache);
* ``floor_2t``    — ``floor_chunk`` on two threads (the chunks shared by a
                    thread pool), the floor with the same cores daskbicl uses;
* ``spread``      — daskbicl on the same labels spread out (label k becomes
                    k·1,000,003 + 7): the per-chunk rank coding, against the
                    compact labels' time (``spread_vs_compact``);
* ``sk_ari`` / ``sk_nmi`` — scikit-learn's ``adjusted_rand_score`` and
                    ``normalized_mutual_info_score`` on the row labels alone;
* ``kron_cari``   — CARI built the way the reference R package builds it: an
                    explicit Kronecker (cell) contingency table, at 100 and 1000
                    clusters per axis, to show where that stops working;
* ``many``        — many clusters (``--many-clusters``, default 10**5 per axis,
                    10 % of labels redrawn): every measure including CE/NCE, whose
                    matching then runs on the sparse table (the dense one would be
                    10**10 cells, 80 GB), against scikit-learn's ARI on rows alone;
* ``zarr``        — daskbicl reading two Zarr stores of ``--zarr-size`` labels
                    per axis out of core (peak RSS of a separate process):
                    stores written by ``daskbicl.save`` (uint8 codes), and a
                    plain ``to_zarr`` store of spread int64 pred labels (as
                    another tool would write them).

Run:  python benchmarks/partition.py               (full: ~5 minutes)
      python benchmarks/partition.py --spread --sizes 5e7 --clusters 1000   (spread and string labels against
                                                   compact ones, interleaved, best of 3; a few minutes)
      python benchmarks/partition.py --quick       (seconds; what the test runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(__file__))
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.kernels.coclustering.contingency import Table  # noqa: E402


def bincount_floor_threads(t_rows, p_rows, t_cols, p_cols, h, chunk=1 << 21, threads=2):
    """The chunked bincount pass with its chunks shared by ``threads`` threads (numpy releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    def count(args):
        t, p = args
        return np.bincount(t * h + p, minlength=h * h)

    out = []
    with ThreadPoolExecutor(threads) as pool:
        for t, p in ((t_rows, p_rows), (t_cols, p_cols)):
            parts = [(t[i : i + chunk], p[i : i + chunk]) for i in range(0, len(t), chunk)]
            out.append(sum(pool.map(count, parts)))
    return out


def bincount_floor(t_rows, p_rows, t_cols, p_cols, h, chunk=None):
    out = []
    for t, p in ((t_rows, p_rows), (t_cols, p_cols)):
        if chunk is None:
            out.append(np.bincount(t * h + p, minlength=h * h))
        else:
            acc = np.zeros(h * h, dtype=np.int64)
            for i in range(0, len(t), chunk):
                acc += np.bincount(t[i : i + chunk] * h + p[i : i + chunk], minlength=h * h)
            out.append(acc)
    return out


def kron_cari(t_rows, p_rows, t_cols, p_cols):
    """CARI as the R package computes it: ARI of the explicit Kronecker cell table."""
    rows = Table.from_labels(t_rows, p_rows).dense()
    cols = Table.from_labels(t_cols, p_cols).dense()
    need = rows.size * cols.size * 8
    if need > 8 * 2**30:
        raise MemoryError(f"the cell table has {rows.size * cols.size:.3g} entries ({need / 2**40:.1f} TiB)")
    cells = np.kron(rows, cols).astype(np.float64)
    comb = lambda x: x * (x - 1) / 2  # noqa: E731 - float64, as in the R code
    a = comb(cells).sum()
    r = comb(cells.sum(1)).sum()
    c = comb(cells.sum(0)).sum()
    n = comb(cells.sum())
    e = r * c / n
    return (a - e) / ((r + c) / 2 - e)


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def run_memory(size, clusters, sklearn_limit, repeat):
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    rng = np.random.default_rng(0)
    t_rows, p_rows = rng.integers(0, clusters, size), rng.integers(0, clusters, size)
    t_cols, p_cols = rng.integers(0, clusters, size), rng.integers(0, clusters, size)
    row = {"labels/axis": f"{size:.0e}", "clusters": clusters}
    ours = measure(daskbicl.score, (t_rows, t_cols), (p_rows, p_cols), repeat=repeat)
    floor = measure(bincount_floor, t_rows, p_rows, t_cols, p_cols, clusters, repeat=repeat)
    floor_c = measure(bincount_floor, t_rows, p_rows, t_cols, p_cols, clusters, 1 << 21, repeat=repeat)
    floor_2 = measure(bincount_floor_threads, t_rows, p_rows, t_cols, p_cols, clusters, repeat=repeat)
    spread = measure(daskbicl.score, tuple(x * 1_000_003 + 7 for x in (t_rows, t_cols)),
                     tuple(x * 1_000_003 + 7 for x in (p_rows, p_cols)), repeat=repeat)
    assert spread.result == ours.result  # an increasing relabelling: the same tables, the same scores
    row.update(
        daskbicl_s=fmt(ours.seconds), daskbicl_MB=fmt(ours.peak_mb, 0),
        floor_s=fmt(floor.seconds), floor_chunk_s=fmt(floor_c.seconds), floor_2t_s=fmt(floor_2.seconds),
        vs_floor=fmt(ours.seconds / floor.seconds, 2), vs_floor_chunk=fmt(ours.seconds / floor_c.seconds, 2),
        vs_floor_2t=fmt(ours.seconds / floor_2.seconds, 2),
        spread_s=fmt(spread.seconds), spread_vs_compact=fmt(spread.seconds / ours.seconds, 2),
    )
    if size <= sklearn_limit:
        ari = measure(adjusted_rand_score, t_rows, p_rows)
        nmi = measure(normalized_mutual_info_score, t_rows, p_rows)
        assert abs(ari.result - ours.result["ari_rows"]) < 1e-9
        row.update(
            sk_ari_s=fmt(ari.seconds), sk_ari_MB=fmt(ari.peak_mb, 0), sk_nmi_s=fmt(nmi.seconds),
            sk_ari_over_ours=fmt(ari.seconds / ours.seconds, 1),
        )
    return row


def run_kron(size, clusters):
    rng = np.random.default_rng(1)
    labels = [rng.integers(0, clusters, size) for _ in range(4)]
    row = {"clusters/axis": clusters, "cell table": f"{clusters**2}x{clusters**2}"}
    ours = measure(daskbicl.cari, (labels[0], labels[2]), (labels[1], labels[3]))
    row.update(daskbicl_s=fmt(ours.seconds), daskbicl_MB=fmt(ours.peak_mb, 0))
    try:
        kron = measure(kron_cari, *labels)
        assert abs(kron.result - ours.result) < 1e-6
        row.update(kron_s=fmt(kron.seconds), kron_MB=fmt(kron.peak_mb, 0), note="agrees")
    except MemoryError as exc:
        row.update(kron_s="fails", kron_MB="-", note=str(exc))
    return row


def run_many(size, clusters, repeat):
    """Many clusters: CE/NCE take the sparse matching path."""
    from sklearn.metrics import adjusted_rand_score

    from daskbicl.kernels.coclustering.cocluster_scores import matched_count

    rng = np.random.default_rng(2)
    t_rows, t_cols = rng.integers(0, clusters, size), rng.integers(0, clusters, size)

    def noisy(t):
        return np.where(rng.random(size) < 0.1, rng.integers(0, clusters, size), t)

    p_rows, p_cols = noisy(t_rows), noisy(t_cols)
    ours = measure(daskbicl.score, (t_rows, t_cols), (p_rows, p_cols), repeat=repeat)
    table = Table.from_labels(t_rows, p_rows)
    match = measure(matched_count, table)
    ari = measure(adjusted_rand_score, t_rows, p_rows)
    assert abs(ari.result - ours.result["ari_rows"]) < 1e-9
    return {
        "labels/axis": f"{size:.0e}", "clusters/axis": clusters,
        "table": f"{table.shape[0]}x{table.shape[1]}, {table.counts.size:,} non-zero",
        "daskbicl_s": fmt(ours.seconds), "daskbicl_MB": fmt(ours.peak_mb, 0),
        "one_matching_s": fmt(match.seconds), "sk_ari_rows_s": fmt(ari.seconds),
        "ce": fmt(ours.result["ce"], 6), "nce": fmt(ours.result["nce"], 6),
    }


# Peak RSS of the child is read from /proc/self/status (VmHWM, the high-water
# mark of this process's own address space).  ru_maxrss is NOT usable here: on
# Linux it survives execve, so a child started by a parent that once used 4 GB
# reports 4 GB whatever it does itself (an earlier version of this script did).
_CHILD = r"""
import json, sys, time, dask
import daskbicl
dask.config.set(scheduler="threads")
t0 = time.perf_counter()
s = daskbicl.score(sys.argv[1], sys.argv[2])
seconds = time.perf_counter() - t0
with open("/proc/self/status") as fh:
    hwm_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "maxrss_mb": hwm_kb / 1024, "cari": s["cari"]}))
"""


def run_zarr(size, clusters, folder, relabel=False):
    """relabel=True spreads pred's labels (k -> k*1_000_003+7) and writes them as int64 to a plain
    to_zarr store: every pred chunk is then rank-coded before counting."""
    t0 = time.perf_counter()
    truth = daskbicl.random_partition(size, size, clusters, clusters, seed=5, chunk=1 << 22)
    tpath = daskbicl.save(truth, os.path.join(folder, "truth.zarr"), overwrite=True)
    pred = daskbicl.perturb(daskbicl.open(tpath), 0.1, seed=6, relabel=relabel)
    if relabel:  # as another tool would write them: int64 spread labels, a plain to_zarr store
        ppath = os.path.join(folder, "pred-spread.zarr")
        plain = xr.Dataset({v: (pred[v].dims, pred[v].data.astype(np.int64)) for v in ("row_labels", "col_labels")})
        plain.to_zarr(ppath, mode="w", consolidated=False)
    else:
        ppath = daskbicl.save(pred, os.path.join(folder, "pred.zarr"), overwrite=True)
    gen = time.perf_counter() - t0
    out = subprocess.run([sys.executable, "-c", _CHILD, tpath, ppath], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    disk = sum(
        os.path.getsize(os.path.join(d, f)) for p in (tpath, ppath) for d, _, fs in os.walk(p) for f in fs
    )
    raw = 4 * size * 8
    return {
        "labels/axis": f"{size:.0e}", "clusters": clusters,
        "pred store": "plain to_zarr, spread int64" if relabel else "daskbicl.save (uint8 codes)",
        "raw int64 GB": fmt(raw / 1e9, 1),
        "on disk GB": fmt(disk / 1e9, 2), "generate_s": fmt(gen, 1), "score_s": fmt(res["seconds"], 2),
        "peak RSS MB": fmt(res["maxrss_mb"], 0), "cari": fmt(res["cari"], 6),
    }


def run_spread(size: int, clusters: int, repeat: int) -> dict:
    """``--spread``: one partition pair scored four ways, interleaved (best of ``repeat`` each, same run):
    compact integer labels; the same labels spread (``perm * 1000003 + 7``, ``perm`` a random permutation of
    the clusters) with the compiled rank lookup and with the numpy one it replaces; numpy ``U`` strings."""
    try:
        from daskbicl.engine import spread_labels as labels
    except ImportError:  # a daskbicl before the compiled lookup
        from daskbicl.engine import labels

    rng = np.random.default_rng(0)
    compact = [rng.integers(0, clusters, size) for _ in range(4)]  # truth rows, truth cols, pred rows, pred cols
    perm = rng.permutation(clusters)
    spread = [perm[x] * 1_000_003 + 7 for x in compact]
    names = np.array([f"c{i:05d}" for i in range(clusters)])
    strings = [names[x] for x in compact]
    default = getattr(labels, "SLOT_KERNEL_MIN", None)  # None: a daskbicl before the compiled lookup
    cases = {"compact": (compact, default), "spread, compiled lookup": (spread, default),
             "spread, numpy lookup": (spread, 1 << 62), "numpy U strings": (strings, default)}
    if default is None:
        del cases["spread, compiled lookup"]
    best = dict.fromkeys(cases, float("inf"))
    results = {}
    for _ in range(repeat):
        for name, (arrays, threshold) in cases.items():
            if default is not None:
                labels.SLOT_KERNEL_MIN = threshold
            started = time.perf_counter()
            results[name] = daskbicl.score((arrays[0], arrays[1]), (arrays[2], arrays[3]))
            best[name] = min(best[name], time.perf_counter() - started)
    if default is not None:
        labels.SLOT_KERNEL_MIN = default
    assert all(r == results["compact"] for r in results.values())  # relabellings: the same tables, the same scores
    row = {"labels/axis": f"{size:.0e}", "clusters": clusters, "load": f"{os.getloadavg()[0]:.1f}"}
    for name in cases:
        row[f"{name} s"] = fmt(best[name])
        row[f"{name} / compact"] = fmt(best[name] / best["compact"], 2)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 5e7])
    ap.add_argument("--clusters", type=int, nargs="+", default=[10, 1000])
    ap.add_argument("--sklearn-limit", type=float, default=5e7, help="largest size given to scikit-learn")
    ap.add_argument("--kron-size", type=float, default=1e6)
    ap.add_argument("--zarr-size", type=float, default=2e8, help="0 to skip the out-of-core case")
    ap.add_argument("--many-size", type=float, default=1e7, help="labels per axis of the many-clusters case")
    ap.add_argument("--many-clusters", type=int, default=100_000, help="0 to skip the many-clusters case")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, to check the script works")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--only-zarr", action="store_true", help="run only the out-of-core case")
    ap.add_argument("--spread", action="store_true",
                    help="only: compact, spread and string labels of the same partitions, interleaved (--sizes, "
                         "--clusters; best of --repeat, at least 3)")
    args = ap.parse_args(argv)
    if args.spread:
        sizes, clusters = ([2e4], [10]) if args.quick else (args.sizes, args.clusters)
        rows = [run_spread(int(n), h, max(args.repeat, 3)) for n in sizes for h in clusters]
        print_table(rows, list(rows[0]))
        return 0
    if args.quick:
        args.sizes, args.clusters, args.kron_size, args.zarr_size, args.repeat = [2e4], [10], 2e4, 5e4, 1
        args.many_size, args.many_clusters = 2e4, 5000

    print(f"machine: {machine()}\nversions: {versions()}\n")
    rows, kron, many = [], [], []
    if not args.only_zarr:
        rows, kron = run_in_memory(args)
        if args.many_clusters:
            print(f"\n== many clusters: {args.many_clusters:,} per axis, {args.many_size:.0e} labels/axis "
                  "(CE/NCE matched on the sparse table)")
            many = [run_many(int(args.many_size), args.many_clusters, args.repeat)]
            print_table(many, list(many[0]))
    zarr_rows = []
    if args.zarr_size:
        print(f"\n== out of core: two Zarr stores of {args.zarr_size:.0e} labels per axis (separate process)")
        with tempfile.TemporaryDirectory(prefix="daskbicl-bench-") as folder:
            zarr_rows = [run_zarr(int(args.zarr_size), 10, folder, relabel) for relabel in (False, True)]
        print_table(zarr_rows, list(zarr_rows[0]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"memory": rows, "kron": kron, "many": many, "zarr": zarr_rows, "machine": machine()}, fh, indent=1)
    return 0


def run_in_memory(args):
    print("== all co-clustering measures vs peers (in memory; seconds, peak RSS increase in MB)")
    rows = [run_memory(int(s), h, args.sklearn_limit, args.repeat) for s in args.sizes for h in args.clusters]
    print("floors: floor = one thread, whole arrays; floor_chunk = one thread, 2^21 chunks; "
          "floor_2t = 2^21 chunks on two threads")
    print_table(rows, ["labels/axis", "clusters", "daskbicl_s", "floor_s", "floor_chunk_s", "floor_2t_s", "vs_floor",
                       "vs_floor_chunk", "vs_floor_2t", "spread_s", "spread_vs_compact", "daskbicl_MB", "sk_ari_s",
                       "sk_nmi_s", "sk_ari_MB", "sk_ari_over_ours"])

    print(f"\n== CARI via an explicit Kronecker cell table (R package method), {args.kron_size:.0e} labels/axis")
    kron = [run_kron(int(args.kron_size), h) for h in (100, 1000)] if not args.quick else [run_kron(int(args.kron_size), 10)]
    print_table(kron, ["clusters/axis", "cell table", "daskbicl_s", "daskbicl_MB", "kron_s", "kron_MB", "note"])
    return rows, kron


if __name__ == "__main__":
    sys.exit(main())
