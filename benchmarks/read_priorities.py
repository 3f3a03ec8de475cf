"""Read priorities on a cluster (issue 25): every scoring graph with them against the same graphs without.

One truth biclustering store and ``--preds`` pred stores on disk; every
pred is scored against the truth in one computation (the truth's chunks
shared by all pairs, as ``daskbicl batch`` and a list of plans do) on a
LocalCluster (2 worker processes, 1 thread each).  The same provider graphs
are computed with :func:`daskbicl.engine.provider_graph.read_first`'s
annotations (what every door sends now) and without (what ``score``,
``contingency`` and ``tradeoff`` sent before), alternating, ``--repeat``
times each; the values are checked equal.  Printed per variant: the best
and median wall time, the peak of the workers' summed memory
(``distributed.diagnostics.MemorySampler``), and the ratios
annotated / plain measured in this run, with the load (``uptime``).

Target: annotated time <= 1.05 x plain (the annotation costs nothing), and
peak memory no higher.

Run:  python3 benchmarks/read_priorities.py            (4 preds, 2.4e5 x 2e4 masks, 12 biclusters each)
      python3 benchmarks/read_priorities.py --quick    (seconds)
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import dask  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.engine.core import shared_passes  # noqa: E402
from daskbicl.engine.provider_graph import provider_graph, read_first  # noqa: E402
from daskbicl.measures.plan import ScorePlan  # noqa: E402
from daskbicl.measures.registry import PROVIDERS  # noqa: E402


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def stores(directory: str, n_preds: int, rows: int, cols: int, k: int, chunk: int) -> tuple[str, list[str]]:
    rng = np.random.default_rng(0)
    paths = []
    for i in range(n_preds + 1):
        ds = daskbicl.biclustering(rng.random((k, rows)) < 0.2, rng.random((k, cols)) < 0.2)
        path = os.path.join(directory, f"{i}.zarr")
        daskbicl.save(ds.chunk({"row": chunk, "col": chunk}), path)
        paths.append(path)
    return paths[0], paths[1:]


def graphs(plans: list[ScorePlan], annotate: bool) -> list:
    """Every plan's provider graphs, passes shared, with or without the read priorities."""
    out = []
    with shared_passes():
        for plan in plans:
            for name, opts in plan.options.items():
                graph = provider_graph(PROVIDERS[name], plan.truth, plan.pred, opts)
                out.append(read_first(graph) if annotate else graph)
    return out


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
    args = parser.parse_args()
    if args.quick:
        args.preds, args.rows, args.cols, args.chunk, args.repeat = 2, 8_000, 2_000, 1_000, 2
    from distributed import Client, LocalCluster
    from distributed.diagnostics import MemorySampler

    print(f"load before: {load()}")
    with tempfile.TemporaryDirectory() as directory, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        truth, preds = stores(directory, args.preds, args.rows, args.cols, args.biclusters, args.chunk)
        measures = args.measures.split(",")
        plans = [ScorePlan.build(truth, p, measures) for p in preds]
        sampler = MemorySampler()
        times: dict[bool, list[float]] = {False: [], True: []}
        values: dict[bool, str] = {}
        for r in range(args.repeat):
            for annotate in ((False, True) if r % 2 == 0 else (True, False)):
                label = f"{'annotated' if annotate else 'plain'}-{r}"
                todo = graphs(plans, annotate)
                with sampler.sample(label, interval=0.05):
                    start = time.perf_counter()
                    done = dask.compute(*todo)
                    times[annotate].append(time.perf_counter() - start)
                values[annotate] = repr(done)
                client.run(lambda: __import__("gc").collect())
        assert values[True] == values[False], "the annotated graphs computed other tables"
        peaks = sampler.to_pandas().max()
        peak = {a: max(peaks[f"{'annotated' if a else 'plain'}-{r}"] for r in range(args.repeat)) for a in times}
        print(f"{args.preds} preds x 1 truth, masks {args.biclusters} x ({args.rows:,} rows, {args.cols:,} cols), "
              f"chunks of {args.chunk:,}; measures {measures}; {args.repeat} runs each, alternating")
        for annotate in (False, True):
            t = times[annotate]
            print(f"  {'annotated' if annotate else 'plain':9s}: best {min(t):.2f} s, median {statistics.median(t):.2f} s,"
                  f" peak workers' memory {peak[annotate] / 2**20:.0f} MiB")
        print(f"  ratio annotated / plain: time (median) {statistics.median(times[True]) / statistics.median(times[False]):.3f}, "
              f"time (best) {min(times[True]) / min(times[False]):.3f}, peak memory {peak[True] / peak[False]:.3f}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
