"""Out of core on memory-limited workers: daskbicl against the read floor of the same stores.

Starts a real cluster of separate processes on 127.0.0.1 (``dask scheduler``
and ``dask worker --nworkers W --nthreads 1 --memory-limit M``), writes
synthetic stores with ``daskbicl generate --cluster``, and for each case
reports, all measured on those workers in one run:

* ``score s``   -- wall time of the command a user runs
                   (``daskbicl score TRUTH PRED --scheduler ADDRESS``);
* ``start s``   -- the same command on two 1000 x 100 stores (Python
                   start-up, connection, planning), so ``vs floor, less
                   start`` is the pass itself against the floor;
* ``floor s``   -- the read floor: ``dask.array.from_zarr(...).sum()`` over
                   every array the score reads, on the same workers; floor
                   and score are measured alternately (``--repeat``, best
                   of each) because the load of a shared machine moves;
* ``decode s``  -- the decode floor: Zarr reading and decoding the same
                   arrays in this one process, no Dask (64 stored chunks
                   at a time), measured alternately with the others;
                   ``vs decode`` is the score against it (issue 38's
                   target: at most 1.3 at 10^9 labels);
* ``in process s`` -- co-clustering case: ``daskbicl.score(truth, pred)``
                   called from this process, already connected to the
                   cluster (no start-up), in the same rounds; ``in process
                   vs decode`` is the pass itself against the decode floor;
* ``read GB``   -- bytes on disk of those arrays (what both read);
* ``peak MB``   -- the peak RSS of every worker during the score, sampled
                   inside each worker process every 20 ms;
* ``spilled``   -- bytes the workers spilled to disk during the score, and
  ``restarts``  -- worker processes that died and were restarted.

Cases:

* ``coclustering``: ``--rows`` x ``--cols`` labels (default 10^9 x 10^8),
  ``--row-clusters`` x ``--col-clusters`` (default 100 x 10; stores of
  other counts in ``coclustering-RxC``), 10 % of labels redrawn;
* ``biclustering``: 10^6 x 10^5, 200 biclusters (``--kind biclustering``,
  density 1 %), the bicluster precision-recall measures;
* ``batch``: ``--batch-preds`` preds (default 20) of ``--batch-rows`` rows
  sharing one truth, scored by ``daskbicl batch``, against the same pairs
  scored one by one.

With ``--explain`` the co-clustering case also times ``daskbicl explain
TRUTH PRED --format json`` beside ``daskbicl score`` on the same stores and
workers, alternately (best of ``--repeat`` each), and reports ``explain s``,
``explain / score`` (issue 37's target: at most 1.1 at 10^9 labels per axis,
1,000 x 100 clusters, two 700 MB workers), explain's worker peaks and
restarts; both must give the same scores.

Run:  python benchmarks/out_of_core.py --dir /big/disk/ooc             (full: about 15 minutes)
      python benchmarks/out_of_core.py --dir D --cases coclustering --explain --cols 1e9 \
          --row-clusters 1000 --col-clusters 100                       (issue 37's explain target)
      python benchmarks/out_of_core.py --dir D --counting   (after a run wrote D/coclustering: the counting
                                                             kernels in this process against the read floor;
                                                             also with every chunk read by Zarr, as before)
      python benchmarks/out_of_core.py --dir D --mask-counting   (the biclustering stores, written in D when
                                                             missing: the mask counting in this process, compiled
                                                             kernel (positions; the byte scan before it; chunks
                                                             read by Zarr as before) and scipy, against the read
                                                             floor; ~a minute)
      python benchmarks/out_of_core.py --dir /tmp/ooc --quick          (seconds)
      python benchmarks/out_of_core.py --dir D --cases batch --batch-preds 20
Stores are kept in --dir (re-used when present; --fresh rewrites them);
remove the folder afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import header, machine, print_table  # noqa: E402

BIN = os.path.dirname(sys.executable)


def _dask(*args) -> list[str]:
    return [os.path.join(BIN, "dask"), *args] if os.path.exists(os.path.join(BIN, "dask")) else \
        [sys.executable, "-m", "dask", *args]


class Cluster:
    """``dask scheduler`` + ``dask worker`` as separate processes on 127.0.0.1."""

    def __init__(self, workers: int, memory_limit: str, folder: str):
        self.folder = folder
        self.file = os.path.join(folder, "scheduler.json")
        if os.path.exists(self.file):
            os.remove(self.file)
        log = open(os.path.join(folder, "cluster.log"), "w")  # noqa: SIM115 - kept open with the processes
        self.procs = [subprocess.Popen(_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                             "--scheduler-file", self.file), stdout=log, stderr=log,
                                       start_new_session=True)]
        deadline = time.time() + 60
        while not os.path.exists(self.file):
            if time.time() > deadline:
                raise RuntimeError("the scheduler did not start (see cluster.log)")
            time.sleep(0.2)
        self.procs.append(subprocess.Popen(
            _dask("worker", "--scheduler-file", self.file, "--nworkers", str(workers), "--nthreads", "1",
                  "--memory-limit", memory_limit, "--no-dashboard", "--local-directory", folder),
            stdout=log, stderr=log, start_new_session=True))
        from distributed import Client

        self.client = Client(scheduler_file=self.file, timeout=60)
        self.client.wait_for_workers(workers, timeout=120)
        with open(self.file) as fh:
            self.address = json.load(fh)["address"]
        self.workers = workers

    def pids(self) -> dict:
        return self.client.run(os.getpid)

    def close(self):
        try:
            self.client.close()
        finally:
            for p in reversed(self.procs):
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
            for p in self.procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)


# -- run inside the workers (client.run) ---------------------------------------------------------


def _start_sampler(dask_worker=None, interval=0.02):
    """A thread in the worker process that records its peak RSS until stopped."""
    import threading

    import psutil

    proc = psutil.Process()
    state = {"peak": proc.memory_info().rss, "stop": threading.Event()}

    def run():
        while not state["stop"].is_set():
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            state["stop"].wait(interval)

    state["thread"] = threading.Thread(target=run, daemon=True)
    state["thread"].start()
    dask_worker._bench_sampler = state
    return True


def _stop_sampler(dask_worker=None):
    import psutil

    state = getattr(dask_worker, "_bench_sampler", None)
    if state is None:
        return None
    state["stop"].set()
    state["thread"].join()
    return max(state["peak"], psutil.Process().memory_info().rss)


def _spilled(dask_worker=None):
    metrics = getattr(dask_worker.data, "cumulative_metrics", {})
    return metrics.get(("disk-write", "bytes"), 0.0)


class Phase:
    """Peak RSS (from the workers), spill and restarts over one timed phase."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def __enter__(self):
        c = self.cluster.client
        self.pids = self.cluster.pids()
        self.spill = c.run(_spilled)
        c.run(_start_sampler)
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        c = self.cluster.client
        try:
            c.wait_for_workers(self.cluster.workers, timeout=120)
        except Exception:
            pass
        peaks = c.run(_stop_sampler)
        spill = c.run(_spilled)
        pids = self.cluster.pids()
        self.peaks = [p / 2**20 for p in peaks.values() if p is not None]
        self.sampled = sum(p is not None for p in peaks.values())
        self.spilled = sum(spill.get(w, 0.0) - self.spill.get(w, 0.0) for w in spill)
        self.restarts = len(set(self.pids.values()) - set(pids.values()))
        return False


def _disk(paths) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for p in paths for d, _, fs in os.walk(p) for f in fs
               if f != "zarr.json")


def _arrays(store: str) -> list[str]:
    """The arrays a score reads: label codes (and value tables), or masks."""
    import zarr

    group = zarr.open_group(store, mode="r")
    return [os.path.join(store, name) for name, _ in group.arrays() if name not in ("row", "col", "bicluster")]


def _floor(client, stores) -> float:
    import dask
    import dask.array as da

    arrays = [da.from_zarr(path) for store in stores for path in _arrays(store)]
    start = time.perf_counter()
    dask.compute(*[a.sum() for a in arrays], scheduler=client.get)
    return time.perf_counter() - start


def _decode(stores) -> float:
    """Seconds for Zarr to read and decode every array of ``stores`` in this process, without Dask."""
    import zarr

    start = time.perf_counter()
    for store in stores:
        for path in _arrays(store):
            array = zarr.open_array(path, mode="r")
            step = 64 * int(array.chunks[-1])
            for at in range(0, int(array.shape[-1]), step):
                array[..., at : at + step]
    return time.perf_counter() - start


def _cli(*args, timeout=7200) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"daskbicl {' '.join(map(str, args))} failed:\n{out.stderr[-3000:]}")
    return out


def _generate(folder, fresh, *args):
    if fresh or not os.path.exists(os.path.join(folder, "truth.zarr")):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        start = time.perf_counter()
        _cli("generate", folder, *args, "--overwrite")
        return time.perf_counter() - start
    return None


def _start_cost(cluster, args) -> float:
    """Wall time of ``daskbicl score`` on two tiny stores on the same cluster: start-up, connection, planning."""
    folder = os.path.join(args.dir, "tiny")
    _generate(folder, False, "--rows", 1000, "--cols", 100, "--row-clusters", 5, "--col-clusters", 3)
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        _cli("score", os.path.join(folder, "truth.zarr"), os.path.join(folder, "pred.zarr"), "--scheduler",
             cluster.address, "--json")
        best = min(best, time.perf_counter() - start)
    return best


#: Best decode floor of each case's stores (:func:`_decode`), measured alternately with the read floor and score.
DECODE: dict[tuple, float] = {}


#: Best in-process score of each case's stores (:func:`_timed` with ``in_process``), and its scores.
IN_PROCESS: dict[tuple, tuple[float, dict]] = {}


def _timed(cluster, repeat, floor_stores, command, in_process=None
           ) -> tuple[Phase, float, float, subprocess.CompletedProcess]:
    """Floor, decode floor and score measured alternately ``repeat`` times (best of each): the load moves.

    ``in_process`` (a callable returning scores) is timed in the same rounds: the score called from this
    process, already connected to the cluster, so without the command's start-up."""
    floor = score = float("inf")
    key = tuple(floor_stores)
    with Phase(cluster) as phase:
        for _ in range(repeat):
            floor = min(floor, _floor(cluster.client, floor_stores))
            DECODE[key] = min(DECODE.get(key, float("inf")), _decode(floor_stores))
            start = time.perf_counter()
            out = _cli(*command)
            score = min(score, time.perf_counter() - start)
            if in_process is not None:
                start = time.perf_counter()
                scores = in_process()
                took = time.perf_counter() - start
                IN_PROCESS[key] = (min(took, IN_PROCESS.get(key, (float("inf"),))[0]), scores)
    return phase, floor, score, out


def _sec(t: float) -> str:
    """Seconds, with 3 significant digits (the --quick stores take milliseconds)."""
    return f"{t:.1f}" if t >= 10 else f"{t:.3g}"


def _row(case, cluster, phase, floor, stores, gen, limit_mb, extra=None, score=None, start=0.0):
    peaks = phase.peaks
    score = phase.seconds if score is None else score
    row = {
        "case": case, "score s": _sec(score), "start s": _sec(start), "floor s": _sec(floor),
        "vs floor": f"{score / floor:.2f}", "vs floor, less start": f"{(score - start) / floor:.2f}",
        **({"decode s": _sec(DECODE[tuple(stores)]), "vs decode": f"{score / DECODE[tuple(stores)]:.2f}"}
           if tuple(stores) in DECODE else {}),
        **({"in process s": _sec(IN_PROCESS[tuple(stores)][0]),
            "in process vs decode": f"{IN_PROCESS[tuple(stores)][0] / DECODE[tuple(stores)]:.2f}"}
           if tuple(stores) in IN_PROCESS and tuple(stores) in DECODE else {}),
        "read GB": f"{_disk(stores) / 1e9:.2f}",
        "peak MB": "/".join(f"{p:.0f}" for p in sorted(peaks)), "limit MB": f"{limit_mb:.0f}",
        "below limit": "yes" if peaks and max(peaks) < limit_mb else "NO",
        "spilled MB": f"{phase.spilled / 2**20:.0f}", "restarts": phase.restarts,
        "generate s": "-" if gen is None else f"{gen:.0f}",
    }
    row.update(extra or {})
    return row


def _explain_vs_score(cluster, repeat, stores) -> dict:
    """``--explain``: ``daskbicl explain --format json`` and ``daskbicl score --json`` on the same stores and
    workers, alternately ``repeat`` times (best of each: the load moves); their ratio, explain's peak and
    restarts, and a check that both gave the same scores."""
    explain = score = float("inf")
    with Phase(cluster) as phase:
        for _ in range(repeat):
            start = time.perf_counter()
            scored = json.loads(_cli("score", *stores, "--scheduler", cluster.address, "--json").stdout)
            score = min(score, time.perf_counter() - start)
            start = time.perf_counter()
            explained = json.loads(_cli("explain", *stores, "--scheduler", cluster.address, "--format", "json").stdout)
            explain = min(explain, time.perf_counter() - start)
    if explained["scores"] != scored:
        raise RuntimeError(f"explain's scores differ from score's: {explained['scores']} != {scored}")
    return {"score s (beside explain)": _sec(score), "explain s": _sec(explain),
            "explain / score": f"{explain / score:.2f}",
            "explain peak MB": "/".join(f"{p:.0f}" for p in sorted(phase.peaks)),
            "explain restarts": phase.restarts}


def case_coclustering(cluster, args, limit_mb):
    clusters = (args.row_clusters, args.col_clusters)
    folder = os.path.join(args.dir, "coclustering" if clusters == (100, 10) else "coclustering-{}x{}".format(*clusters))
    gen = _generate(folder, args.fresh, "--rows", args.rows, "--cols", args.cols, "--row-clusters", clusters[0],
                    "--col-clusters", clusters[1], "--noise", 0.1, "--preds", 1, "--cluster", "--scheduler",
                    cluster.address)
    stores = [os.path.join(folder, "truth.zarr"), os.path.join(folder, "pred.zarr")]
    import daskbicl

    phase, floor, score, out = _timed(cluster, args.repeat, stores,
                                      ["score", *stores, "--scheduler", cluster.address, "--json"],
                                      in_process=lambda: daskbicl.score(*stores))  # on cluster.client, the default
    scores = json.loads(out.stdout)
    same = {k: float(v) for k, v in IN_PROCESS[tuple(stores)][1].items()}
    if any(same[k] != v for k, v in scores.items() if isinstance(v, float)):
        raise RuntimeError(f"the in-process scores differ from the command's: {same} != {scores}")
    extra = {"cari": f"{scores['cari']:.6f}", **(_explain_vs_score(cluster, args.repeat, stores) if args.explain else {})}
    return _row(f"co-clustering {args.rows:.0e} x {args.cols:.0e}, {clusters[0]} x {clusters[1]} clusters", cluster,
                phase, floor, stores, gen, limit_mb, extra, score, args.start)


#: The bicluster precision-recall measures (one shared-rows/shared-columns pass over the masks).
BICLUSTER_MEASURES = ["fmeasure", "fmeasure_corrected", "goodness", "goodness_corrected", "dice", "dice_corrected",
                      "jaccard", "jaccard_corrected", "prelic_recovery", "prelic_relevance"]


def case_biclustering(cluster, args, limit_mb):
    folder = os.path.join(args.dir, "biclustering")
    gen = _generate(folder, args.fresh, "--kind", "biclustering", "--rows", args.bic_rows, "--cols", args.bic_cols,
                    "--biclusters", args.biclusters, "--density", 0.01, "--noise", 0.1, "--preds", 1, "--cluster",
                    "--scheduler", cluster.address)
    stores = [os.path.join(folder, "truth.zarr"), os.path.join(folder, "pred.zarr")]
    phase, floor, score, out = _timed(cluster, args.repeat, stores, ["score", *stores, "--scheduler", cluster.address,
                                                                     "--json", "--measures", *BICLUSTER_MEASURES])
    scores = json.loads(out.stdout)
    return _row(f"biclustering {args.bic_rows:.0e} x {args.bic_cols:.0e}, {args.biclusters} biclusters", cluster,
                phase, floor, stores, gen, limit_mb, {"cari": f"F={scores['fmeasure']:.6f}"}, score, args.start)


def case_batch(cluster, args, limit_mb):
    folder = os.path.join(args.dir, "batch")
    gen = _generate(folder, args.fresh, "--rows", args.batch_rows, "--cols", args.batch_cols, "--row-clusters", 100,
                    "--col-clusters", 10, "--noise", 0.1, "--preds", args.batch_preds, "--cluster", "--scheduler",
                    cluster.address)
    truth = os.path.join(folder, "truth.zarr")
    preds = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("pred"))
    manifest = os.path.join(folder, "batch.toml")
    with open(manifest, "w") as fh:
        fh.write(f'[truth]\nt = "{truth}"\n[pred]\np = "{os.path.join(folder, "pred*.zarr")}"\n'
                 '[[pairs]]\ntruth = "t"\npred = "p"\n')
    results = os.path.join(folder, "results.sqlite")
    one_by_one = time.perf_counter()
    for pred in preds:
        _cli("score", truth, pred, "--scheduler", cluster.address, "--json")
    one_by_one = time.perf_counter() - one_by_one
    if os.path.exists(results):
        os.remove(results)
    phase, floor, score, _ = _timed(cluster, 1, [truth, *preds],
                                    ["batch", manifest, "--results", results, "--scheduler", cluster.address, "--force"])
    return _row(f"batch: {len(preds)} preds sharing a truth, {args.batch_rows:.0e} x {args.batch_cols:.0e}",
                cluster, phase, floor, [truth, *preds], gen, limit_mb,
                {"cari": f"one by one {one_by_one:.1f} s ({score / one_by_one:.2f})"}, score, args.start)


CASES = {"coclustering": case_coclustering, "biclustering": case_biclustering, "batch": case_batch}


def _chunk_files(value=None):
    """``daskbicl.io.store.CHUNK_FILES`` (None in a daskbicl without it), set to ``value`` when given."""
    from daskbicl.io import store

    if value is not None and hasattr(store, "CHUNK_FILES"):
        store.CHUNK_FILES = value
    return getattr(store, "CHUNK_FILES", None)


def counting_kernels(folder: str, repeat: int) -> None:
    """``--counting``: the co-clustering stores in ``folder/coclustering`` scored in this process (threads,
    2 workers) with the one-byte code counter and with numpy's bincount, against the read floor of the
    same four arrays; the three interleaved, best of ``repeat``.  No cluster start-up in the numbers."""
    import dask
    import dask.array as da
    import zarr

    import daskbicl
    from daskbicl.kernels.coclustering import contingency

    truth, pred = (os.path.join(folder, "coclustering", f"{n}.zarr") for n in ("truth", "pred"))
    arrays = []
    for store in (truth, pred):
        group = zarr.open_group(store, mode="r")
        arrays += [da.from_zarr(group[k]) for k in group.array_keys() if group[k].ndim == 1]

    def floor():
        dask.compute(*[a.sum() for a in arrays])

    def score():
        daskbicl.score(truth, pred, measures=["cari", "nmi_rows"])

    files = _chunk_files()
    cases = {"read floor": (floor, contingency.BYTE_KERNEL_MIN, files), "score, byte counter": (score, 1 << 16, files),
             "score, byte counter, chunks read by Zarr (before)": (score, 1 << 16, False),
             "score, numpy bincount": (score, 1 << 62, files)}
    if files is None:  # a daskbicl before the chunk files: every chunk is read by Zarr
        del cases["score, byte counter, chunks read by Zarr (before)"]
    best = dict.fromkeys(cases, float("inf"))
    with dask.config.set(scheduler="threads", num_workers=2):
        score()  # kernels loaded, stores' metadata cached
        for _ in range(repeat):
            for name, (run, threshold, by_files) in cases.items():
                contingency.BYTE_KERNEL_MIN = threshold
                _chunk_files(by_files)
                started = time.perf_counter()
                run()
                best[name] = min(best[name], time.perf_counter() - started)
        _chunk_files(files)
    print_table([{"case": name, "best s": f"{best[name]:.2f}", "vs floor": f"{best[name] / best['read floor']:.2f}",
                  "load": f"{os.getloadavg()[0]:.1f}"} for name in cases], ["case", "best s", "vs floor", "load"])


def mask_counting(folder: str, repeat: int) -> None:
    """``--mask-counting``: the biclustering stores in ``folder/biclustering`` scored in this process (threads,
    2 workers; the bicluster precision-recall measures) with the compiled mask kernel and with the scipy
    sparse product it replaces, against the read floor of the same four masks; the three interleaved, best
    of ``repeat``.  No cluster start-up in the numbers."""
    import dask
    import dask.array as da
    import zarr

    import daskbicl
    from daskbicl.kernels.bicluster import mask_counting as masks

    truth, pred = (os.path.join(folder, "biclustering", f"{n}.zarr") for n in ("truth", "pred"))
    arrays = []
    for store in (truth, pred):
        group = zarr.open_group(store, mode="r")
        arrays += [da.from_zarr(group[k]) for k in ("row_mask", "col_mask")]

    def floor():
        dask.compute(*[a.sum() for a in arrays])

    results = {}

    def score(name):
        results[name] = daskbicl.score(truth, pred, measures=BICLUSTER_MEASURES)

    default, by_positions = masks.MASK_KERNEL_MIN, getattr(masks, "BY_POSITIONS", None)
    files = _chunk_files()
    cases = {"read floor": (floor, default, by_positions, files),
             "score, compiled mask kernel": (score, 0, True, files),
             "score, compiled mask kernel, chunks read by Zarr (before)": (score, 0, True, False),
             "score, byte-scan kernel (before)": (score, 0, False, files),
             "score, scipy sparse product": (score, 1 << 62, by_positions, files)}
    if by_positions is None:  # a daskbicl before the positions kernel: its kernel is the byte scan
        del cases["score, byte-scan kernel (before)"]
    if files is None:  # a daskbicl before the chunk files: every chunk is read by Zarr
        del cases["score, compiled mask kernel, chunks read by Zarr (before)"]
    best = dict.fromkeys(cases, float("inf"))
    with dask.config.set(scheduler="threads", num_workers=2):
        score("warm-up")  # kernels loaded, stores' metadata cached
        for _ in range(repeat):
            for name, (run, threshold, positions, by_files) in cases.items():
                masks.MASK_KERNEL_MIN = threshold
                if by_positions is not None:
                    masks.BY_POSITIONS = positions
                _chunk_files(by_files)
                started = time.perf_counter()
                run() if run is floor else run(name)
                best[name] = min(best[name], time.perf_counter() - started)
    masks.MASK_KERNEL_MIN = default
    _chunk_files(files)
    if by_positions is not None:
        masks.BY_POSITIONS = by_positions
    assert all(r == results["score, scipy sparse product"] for r in results.values())  # identical values
    print_table([{"case": name, "best s": f"{best[name]:.2f}", "vs floor": f"{best[name] / best['read floor']:.2f}",
                  "load": f"{os.getloadavg()[0]:.1f}"} for name in cases], ["case", "best s", "vs floor", "load"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="folder for the stores (default: a temporary folder, removed at the end)")
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["coclustering", "biclustering", "batch"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="700MB")
    ap.add_argument("--rows", type=float, default=1e9)
    ap.add_argument("--cols", type=float, default=1e8)
    ap.add_argument("--row-clusters", type=int, default=100, help="co-clustering case (default 100)")
    ap.add_argument("--col-clusters", type=int, default=10, help="co-clustering case (default 10)")
    ap.add_argument("--explain", action="store_true",
                    help="co-clustering case: also time `daskbicl explain` beside `daskbicl score` on the same "
                         "stores and workers, alternately, and print explain / score")
    ap.add_argument("--bic-rows", type=float, default=1e6)
    ap.add_argument("--bic-cols", type=float, default=1e5)
    ap.add_argument("--biclusters", type=int, default=200)
    ap.add_argument("--batch-preds", type=int, default=20)
    ap.add_argument("--batch-rows", type=float, default=1e8)
    ap.add_argument("--batch-cols", type=float, default=1e6)
    ap.add_argument("--fresh", action="store_true", help="rewrite the stores even when present")
    ap.add_argument("--repeat", type=int, default=2, help="floor and score measured alternately, best of N")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, to check the script works")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--counting", action="store_true",
                    help="only: the co-clustering stores already in --dir scored in this process with the byte "
                         "counter and with numpy, against their read floor (no cluster)")
    ap.add_argument("--mask-counting", action="store_true",
                    help="only: the biclustering stores in --dir (written when missing, without a cluster) scored "
                         "in this process with the compiled mask kernel and with scipy, against their read floor")
    args = ap.parse_args(argv)
    if args.mask_counting:
        if args.quick:
            args.bic_rows, args.bic_cols, args.biclusters = 2e5, 2e4, 50
        _generate(os.path.join(args.dir, "biclustering"), args.fresh, "--kind", "biclustering", "--rows",
                  int(args.bic_rows), "--cols", int(args.bic_cols), "--biclusters", args.biclusters, "--density", 0.01,
                  "--noise", 0.1, "--preds", 1)
        mask_counting(args.dir, max(args.repeat, 3))
        return 0
    if args.counting:
        counting_kernels(args.dir, max(args.repeat, 3))
        return 0
    if args.quick:
        args.rows, args.cols, args.bic_rows, args.bic_cols, args.biclusters = 2e5, 2e4, 2e4, 2e3, 10
        args.batch_preds, args.batch_rows, args.batch_cols = 3, 5e4, 1e3
    for name in ("rows", "cols", "bic_rows", "bic_cols", "batch_rows", "batch_cols"):
        setattr(args, name, int(getattr(args, name)))
    temporary = args.dir is None
    args.dir = args.dir or tempfile.mkdtemp(prefix="daskbicl-ooc-")
    os.makedirs(args.dir, exist_ok=True)
    from dask.utils import parse_bytes

    limit_mb = parse_bytes(args.memory_limit) / 2**20
    print(header("at start; numbers under load are indicative only"))
    print(f"# cluster: scheduler + {args.workers} workers x 1 thread, --memory-limit {args.memory_limit}, "
          f"separate processes on 127.0.0.1; stores in {args.dir}")
    rows = []
    cluster = Cluster(args.workers, args.memory_limit, args.dir)
    try:
        args.start = _start_cost(cluster, args)
        print(f"# daskbicl score on two 1000 x 100 stores on this cluster (start-up, connection, planning): "
              f"{args.start:.1f} s")
        for case in args.cases:
            rows.append(CASES[case](cluster, args, limit_mb))
            print_table(rows[-1:], list(rows[-1]))
            print()
    finally:
        cluster.close()
        if temporary:
            shutil.rmtree(args.dir, ignore_errors=True)
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    print_table(rows, list(rows[0]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "machine": machine()}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
