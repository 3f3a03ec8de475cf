"""Graph size (issue 38): tasks and the client's time to build and submit the graph of one pair of huge stores.

Two co-clustering stores of ``--labels`` row labels each (codes of one byte,
daskbicl's chunks of 2^22 labels, Blosc + CRC32C as :func:`daskbicl.save`
writes them) are created with their metadata only: no chunk is written, and
nothing is read, so the size costs nothing on disk.  A scheduler with no
worker (``LocalCluster(n_workers=0)``) takes the graph: the tasks wait there
until the futures are cancelled.  ``--threads`` stands for the threads of
the cluster the graph is sized for (dask's ``num_workers``: a cluster with
no worker counts as that many; the code before this issue ignores it).

Measured per code tree, each in a fresh process: opening both stores, building
the graph of ``--measures`` (``ScorePlan.build`` then its graphs), the number of
tasks and of read tasks in it, the time ``Client.compute`` takes to return
(the client's share: converting and sending the graph), and the time until the
scheduler holds every task.  ``--base PATH`` measures a second tree too (e.g.
``git archive main | tar -x -C /tmp/base``), alternating with this one.

Run:  python3 benchmarks/graph_size.py --base /tmp/base              (10^11 labels, 400 threads)
      python3 benchmarks/graph_size.py --quick                       (10^9 labels, this tree only: seconds)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _common import alternating, load, run_in_tree  # noqa: E402


def metadata_store(path: str, labels: int) -> None:
    """A co-clustering store of ``labels`` row labels (codes, daskbicl's chunks and codecs), no chunk written."""
    import numpy as np
    import zarr
    from zarr.codecs import BloscCodec, Crc32cCodec

    group = zarr.open_group(path, mode="w", zarr_format=3)
    codecs = (BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle", typesize=1), Crc32cCodec())
    group.create_array("row_labels", shape=(labels,), chunks=(1 << 22,), dtype="uint8", compressors=codecs,
                       dimension_names=["row"], fill_value=0)
    cols = group.create_array("col_labels", shape=(1000,), chunks=(1000,), dtype="uint8",
                              dimension_names=["col"], fill_value=0)
    cols[:] = np.arange(1000) % 7


def child(labels: int, threads: int, measures: list[str]) -> dict:
    """One measurement in this process (the daskbicl on ``sys.path``): the numbers as a dict."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    import daskbicl
    from daskbicl.measures.plan import ScorePlan

    out: dict = {"daskbicl": os.path.dirname(os.path.dirname(os.path.abspath(daskbicl.__file__)))}
    with tempfile.TemporaryDirectory() as directory, dask.config.set({"num_workers": threads}), \
            LocalCluster(n_workers=0, processes=False, dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        paths = [os.path.join(directory, f"{role}.zarr") for role in ("truth", "pred")]
        for path in paths:
            metadata_store(path, labels)
        start = time.perf_counter()
        truth, pred = (daskbicl.open(path, role) for path, role in zip(paths, ("truth", "pred")))
        out["open"] = time.perf_counter() - start
        start = time.perf_counter()
        graphs = list(ScorePlan.build(truth, pred, measures).graphs().values())
        out["build"] = time.perf_counter() - start
        keys: set = set()
        for graph in graphs:
            keys.update(graph.__dask_graph__().keys())
        out["tasks"] = len(keys)
        out["reads"] = sum(1 for key in keys if isinstance(key, tuple) and str(key[0]).startswith("open_dataset-"))
        start = time.perf_counter()
        futures = client.compute(graphs)
        out["submit"] = time.perf_counter() - start
        while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) < len(keys):
            if time.perf_counter() - start > 900:
                raise SystemExit("the scheduler did not take the graph within 900 s")
            time.sleep(0.01)
        out["accepted"] = time.perf_counter() - start
        client.cancel(futures)
    return out


def run(tree: str, args) -> dict:
    return run_in_tree(tree, __file__, ["--labels", str(args.labels), "--threads", str(args.threads),
                                        "--measures", args.measures])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10^9 labels, this tree only, once")
    parser.add_argument("--labels", type=float, default=1e11)
    parser.add_argument("--threads", type=int, default=400, help="threads of the cluster the graph is sized for")
    parser.add_argument("--measures", default="ari_rows")
    parser.add_argument("--base", help="another source tree (e.g. main) measured in the same run")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.labels = int(args.labels)
    if args.child:
        print(json.dumps(child(args.labels, args.threads, args.measures.split(","))))
        return
    if args.quick:
        args.labels, args.repeat = 10**9, 1
    trees = {"branch": ROOT, **({"base": os.path.abspath(args.base)} if args.base else {})}
    print(f"load before: {load()}")
    results = alternating(trees, args.repeat, lambda tree: run(tree, args))
    print(f"one pair of co-clusterings, {args.labels:.0e} row labels each (chunks of 2^22), measures {args.measures}; "
          f"graph sized for {args.threads} threads; {args.repeat} run(s) each, alternating; median seconds")
    print(f"  {'tree':7s} {'tasks':>9s} {'reads':>8s} {'open':>7s} {'build':>7s} {'submit':>7s} {'accepted':>9s}")
    for name, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("open", "build", "submit", "accepted")}
        print(f"  {name:7s} {runs[0]['tasks']:9,d} {runs[0]['reads']:8,d} {med['open']:7.2f} {med['build']:7.2f} "
              f"{med['submit']:7.2f} {med['accepted']:9.2f}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
