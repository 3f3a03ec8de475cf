"""Read priorities on a cluster (issues 25, 38): many preds sharing one truth, each truth chunk read once.

One truth biclustering store and ``--preds`` pred stores on disk; every
pred is scored against the truth in one computation (the truth's read
tasks shared by all pairs, as ``daskbicl batch`` and a list of plans do) on
a LocalCluster (2 worker processes, 1 thread each, ``--memory-limit`` each).

The reads carry their priority from where a store's arrays are built
(``dask.annotate(priority=read_order)``, public dask) and each read task
covers a range of stored chunks sized to the cluster (issue 38).  With
``--base PATH`` (another source tree, e.g. ``git archive main | tar -x -C
/tmp/base``: there every graph was rebuilt with ``read_first``'s priorities,
one read task per stored chunk) the same stores are scored by both trees,
each in a fresh process, alternating, ``--repeat`` times each; the values are
checked equal.  Printed per tree: best and median wall time, the peak of the
workers' summed memory (``distributed.diagnostics.MemorySampler``), the read
tasks run against the distinct read tasks of the graph (equal: every chunk
read once), the bytes spilled to disk, and the ratios branch / base, with
the load (``uptime``).

Run:  python3 benchmarks/read_priorities.py --base /tmp/base      (4 preds, 2.4e5 x 2e4 masks, 12 biclusters each)
      python3 benchmarks/read_priorities.py --preds 20 --memory-limit 700MB --base /tmp/base   (the issue's batch)
      python3 benchmarks/read_priorities.py --quick                (this tree only: seconds)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _common import alternating, load, run_in_tree  # noqa: E402


def stores(directory: str, n_preds: int, rows: int, cols: int, k: int, chunk: int) -> tuple[str, list[str]]:
    import numpy as np

    import daskbicl

    rng = np.random.default_rng(0)
    paths = []
    for i in range(n_preds + 1):
        ds = daskbicl.biclustering(rng.random((k, rows)) < 0.2, rng.random((k, cols)) < 0.2)
        path = os.path.join(directory, f"{i}.zarr")
        daskbicl.save(ds.chunk({"row": chunk, "col": chunk}), path)
        paths.append(path)
    return paths[0], paths[1:]


def _spilled(dask_worker=None) -> float:
    return getattr(dask_worker.data, "cumulative_metrics", {}).get(("disk-write", "bytes"), 0.0)


def child(truth: str, preds: list[str], measures: list[str], memory_limit: str) -> dict:
    """Score every pred against the truth in one computation on a fresh cluster: the numbers as a dict."""
    import dask
    from distributed import Client, LocalCluster, get_task_stream
    from distributed.diagnostics import MemorySampler

    from daskbicl.engine.core import shared_passes
    from daskbicl.measures.plan import ScorePlan

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        plans = [ScorePlan.build(truth, p, measures) for p in preds]
        with shared_passes():
            graphs = [g for plan in plans for g in plan.graphs().values()]
        keys: set = set()
        for graph in graphs:
            keys.update(graph.__dask_graph__().keys())
        reads = {key for key in keys if isinstance(key, tuple) and str(key[0]).startswith("open_dataset-")}
        sampler = MemorySampler()
        before = sum(client.run(_spilled).values())
        with sampler.sample("run", interval=0.05), get_task_stream() as stream:
            start = time.perf_counter()
            done = dask.compute(*graphs)
            seconds = time.perf_counter() - start
        ran = sum(1 for record in stream.data if record["key"] in reads)
        spilled = sum(client.run(_spilled).values()) - before
        peak = float(sampler.to_pandas()["run"].max())
    return {"seconds": seconds, "peak": peak, "reads": len(reads), "ran": ran, "spilled": spilled,
            "values": repr(done)}


def run(tree: str, args, truth: str, preds: list[str]) -> dict:
    return run_in_tree(tree, __file__, ["--measures", args.measures, "--memory-limit", args.memory_limit,
                                        truth, *preds])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--preds", type=int, default=4)
    parser.add_argument("--rows", type=int, default=240_000)
    parser.add_argument("--cols", type=int, default=20_000)
    parser.add_argument("--biclusters", type=int, default=12)
    parser.add_argument("--chunk", type=int, default=8_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measures", default="fmeasure,e4sc")
    parser.add_argument("--memory-limit", default="2GB", help="per worker (the issue's batch: 700MB)")
    parser.add_argument("--base", help="another source tree (e.g. main) measured in the same run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.paths[0], args.paths[1:], args.measures.split(","), args.memory_limit)))
        return
    if args.quick:
        args.preds, args.rows, args.cols, args.chunk, args.repeat = 2, 8_000, 2_000, 1_000, 1
    trees = {"branch": ROOT, **({"base": os.path.abspath(args.base)} if args.base else {})}
    print(f"load before: {load()}")
    with tempfile.TemporaryDirectory() as directory:
        truth, preds = stores(directory, args.preds, args.rows, args.cols, args.biclusters, args.chunk)
        results = alternating(trees, args.repeat, lambda tree: run(tree, args, truth, preds))
    values = {runs[0]["values"] for runs in results.values()}
    assert len(values) == 1, "the trees computed other tables"
    print(f"{args.preds} preds x 1 truth, masks {args.biclusters} x ({args.rows:,} rows, {args.cols:,} cols), "
          f"chunks of {args.chunk:,}; measures {args.measures}; 2 workers x 1 thread, {args.memory_limit} each; "
          f"{args.repeat} run(s) each, alternating")
    for name, runs in results.items():
        t = [r["seconds"] for r in runs]
        print(f"  {name:6s}: best {min(t):.2f} s, median {statistics.median(t):.2f} s, peak workers' memory "
              f"{max(r['peak'] for r in runs) / 2**20:.0f} MiB, read tasks run {runs[0]['ran']} of "
              f"{runs[0]['reads']} (each chunk once: {all(r['ran'] == r['reads'] for r in runs)}), spilled "
              f"{max(r['spilled'] for r in runs) / 2**20:.0f} MiB")
    if "base" in results:
        b, a = results["branch"], results["base"]
        print(f"  ratio branch / base: time (median) "
              f"{statistics.median(r['seconds'] for r in b) / statistics.median(r['seconds'] for r in a):.3f}, "
              f"time (best) {min(r['seconds'] for r in b) / min(r['seconds'] for r in a):.3f}, peak memory "
              f"{max(r['peak'] for r in b) / max(r['peak'] for r in a):.3f}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
