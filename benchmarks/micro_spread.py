"""Does the micro path spread over the workers?  The share of wall time with fewer tasks than threads.

Scores the micro measures of 200 + 200 random biclusters at density 0.01
over 10^6 x 10^5 cells (issue 24, "Work that spreads") on a LocalCluster
of worker processes, records the Dask task stream, and prints: wall
seconds, the share of the wall time during which fewer tasks ran than the
cluster has threads (the serial part), and the task prefixes that ran
alone longest.  The wall time counts from the first task's start to the
last task's end (graph building and the client's finalize are outside).

Run:  python benchmarks/micro_spread.py [--workers 2] [--measures mocice_bcubed micro_ce micro_rnia e4sc]
      python benchmarks/micro_spread.py --quick      (2·10^5 x 2·10^4, 100 + 100: seconds)
      python benchmarks/micro_spread.py --one-block  (the membership pass in one block per axis, to compare)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import daskbicl  # noqa: E402


def busy(stream) -> float:
    """Seconds of task compute, added over every task (the work, however it was spread)."""
    return sum(s["stop"] - s["start"] for t in stream for s in t["startstops"] if s["action"] == "compute")


def underused(stream, threads: int) -> tuple[float, float, dict]:
    """(wall seconds, share of it with fewer than ``threads`` tasks running, prefix -> seconds alone)."""
    spans = []
    for t in stream:
        for s in t["startstops"]:
            if s["action"] == "compute":
                spans.append((s["start"], s["stop"], str(t["key"][0] if isinstance(t["key"], tuple) else t["key"])))
    events = sorted([(a, 1, k) for a, _, k in spans] + [(b, -1, k) for _, b, k in spans])
    start, stop = events[0][0], events[-1][0]
    running: dict = {}
    low = 0.0
    alone: dict = defaultdict(float)
    last = start
    for when, delta, key in events:
        if sum(running.values()) < threads:
            low += when - last
            for k in running:
                alone[k.split("-", 1)[0]] += when - last
        last = when
        running[key] = running.get(key, 0) + delta
        if running[key] == 0:
            del running[key]
    return stop - start, low / max(stop - start, 1e-12), dict(alone)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=10**6)
    ap.add_argument("--cols", type=int, default=10**5)
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--measures", nargs="+", default=["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"])
    ap.add_argument("--quick", action="store_true", help="a small case (2e5 x 2e4, 100 + 100 at 0.01)")
    ap.add_argument("--one-block", action="store_true",
                    help="count each axis's memberships in one block (the layout before the spread), to compare")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.k = 2 * 10**5, 2 * 10**4, 100
    from distributed import Client, LocalCluster, get_task_stream

    if args.one_block:
        from daskbicl.engine import micro_pass

        micro_pass.SPREAD_BLOCKS = 1  # read when the graph is built, on this process
    rng = np.random.default_rng(0)
    sides = [daskbicl.biclustering(rng.random((args.k, args.rows)) < args.density,
                                   rng.random((args.k, args.cols)) < args.density) for _ in range(2)]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        import dask

        with dask.config.set({"daskbicl.in_process_bytes": 0}):
            daskbicl.score(*(daskbicl.biclustering(rng.random((3, 50)) < 0.3, rng.random((3, 40)) < 0.3)
                             for _ in range(2)), measures=args.measures)  # compile on the workers
            started = time.perf_counter()
            with get_task_stream(client) as ts:
                result = daskbicl.score(*sides, measures=args.measures)
            total = time.perf_counter() - started
    wall, share, alone = underused(ts.data, args.workers)
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"{args.k}+{args.k} biclusters, density {args.density}, {args.rows:.0e} x {args.cols:.0e}, "
          f"{args.workers} worker processes x 1 thread{', membership pass in one block' if args.one_block else ''}; "
          f"load {load}")
    print(f"score() {total:.2f} s; tasks from first start to last end {wall:.2f} s; "
          f"fewer tasks than threads during {100 * share:.1f} % of it; task compute {busy(ts.data):.2f} s in all")
    for name, sec in sorted(alone.items(), key=lambda x: -x[1])[:8]:
        print(f"  {name:<28} ran with idle threads for {sec:.2f} s")
    print({k: (str(v.f1) if hasattr(v, "f1") else round(float(v), 6)) for k, v in result.items()})


if __name__ == "__main__":
    main()
