"""Does the micro path spread over the workers?  The share of wall time with fewer tasks than threads.

Scores the micro measures of 200 + 200 random biclusters at density 0.01
over 10^6 x 10^5 cells (issue 24, "Work that spreads") on a LocalCluster
of worker processes, records the Dask task stream, and prints: wall
seconds, the share of the wall time during which fewer tasks ran than the
cluster has threads (the serial part), and the task prefixes that ran
alone longest.  The wall time is the WHOLE score: from the call of
``daskbicl.score`` to its result (graph building, the client's planning,
shipping the masks and the client's finalize are inside it and count as
time with no task running); the share of the task span alone (first task's
start to last task's end, the round-3 figure) is printed beside it.

Run:  python benchmarks/micro_spread.py [--workers 2] [--measures mocice_bcubed micro_ce micro_rnia e4sc]
      python benchmarks/micro_spread.py --quick      (2·10^5 x 2·10^4, 100 + 100: seconds)
      python benchmarks/micro_spread.py --one-block  (the membership pass in one block per axis, to compare)
      python benchmarks/micro_spread.py --runs 3     (three scores on the one cluster: every share, median, worst)

To compare two versions of daskbicl, run this script alternately with each on PYTHONPATH.

Target (issue 24): the share is at most 10 % on the default case.
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


def underused(stream, threads: int, window: tuple[float, float] | None = None) -> tuple[float, float, dict]:
    """(wall seconds, share of it with fewer than ``threads`` tasks running, prefix -> seconds alone).

    ``window``: (start, stop) wall-clock times (``time.time()``, the clock of the task stream: the workers
    run on this machine) of the whole call; without it, the task span (first start to last end).
    """
    spans = []
    for t in stream:
        for s in t["startstops"]:
            if s["action"] == "compute":
                spans.append((s["start"], s["stop"], str(t["key"][0] if isinstance(t["key"], tuple) else t["key"])))
    events = sorted([(a, 1, k) for a, _, k in spans] + [(b, -1, k) for _, b, k in spans])
    start, stop = events[0][0], events[-1][0]
    if window is not None:
        late = sorted({k for a, b, k in spans if a < window[0] or b > window[1]})
        assert not late, f"tasks outside the call's window (clocks disagree, or tasks ran on after the result): {late}"
        start, stop = window
        events.append((stop, 0, ""))
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
        if not key:
            continue
        running[key] = running.get(key, 0) + delta
        if running[key] == 0:
            del running[key]
    return stop - start, low / max(stop - start, 1e-12), dict(alone)


def _one_run(client, sides, measures):
    """(score() call window, task stream, result)."""
    from distributed import get_task_stream

    with get_task_stream(client) as ts:
        called = time.time()
        result = daskbicl.score(*sides, measures=measures)
        returned = time.time()
    return (called, returned), ts.data, result


def _report(label: str, window: tuple[float, float], stream, threads: int) -> float:
    """Print the run's shares; return the share of the whole call (the issue's metric)."""
    wall, share, alone = underused(stream, threads, window)
    span, span_share, _ = underused(stream, threads)
    starts = [s["start"] for t in stream for s in t["startstops"] if s["action"] == "compute"]
    stops = [s["stop"] for t in stream for s in t["startstops"] if s["action"] == "compute"]
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"[{label}] score() {wall:.2f} s, fewer tasks than threads during {100 * share:.1f} % of it "
          f"(before the first task {min(starts) - window[0]:.2f} s, after the last {window[1] - max(stops):.2f} s); "
          f"task span {span:.2f} s, {100 * span_share:.1f} % of it; task compute {busy(stream):.2f} s in all; "
          f"load {load}")
    for name, sec in sorted(alone.items(), key=lambda x: -x[1])[:6]:
        print(f"  {name:<28} ran with idle threads for {sec:.2f} s")
    return share


def _values(result) -> dict:
    return {k: (str(v.f1) if hasattr(v, "f1") else repr(float(v))) for k, v in result.items()}


def timeline(stream, window: tuple[float, float] | None = None) -> None:
    """Every task's compute span, in start order (seconds from the call): where the threads wait."""
    spans = sorted((s["start"], s["stop"], t["worker"], str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]))
                   for t in stream for s in t["startstops"] if s["action"] == "compute")
    first = spans[0][0] if window is None else window[0]
    if window is not None:
        print(f"    {0:7.2f} {0:7.2f}  client  score() called")
    for a, b, worker, key in spans:
        print(f"    {a - first:7.2f} {b - first:7.2f}  {worker.rsplit(':', 1)[-1]:>6}  {key.rsplit('-', 5)[0]}")
    if window is not None:
        print(f"    {window[1] - first:7.2f} {window[1] - first:7.2f}  client  score() returned")


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
    ap.add_argument("--runs", type=int, default=1,
                    help="score the case this many times on the one cluster and print every run's share, the "
                         "median and the worst (the placement of a few tasks varies from run to run)")
    ap.add_argument("--seed", type=int, default=0, help="the random draw of the biclusters (0: the recorded one)")
    ap.add_argument("--timeline", action="store_true",
                    help="print every task's start and end (seconds from the first start) and its worker")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.cols, args.k = 2 * 10**5, 2 * 10**4, 100
    from distributed import Client, LocalCluster

    if args.one_block:
        from daskbicl.engine import micro_pass

        micro_pass.SPREAD_BLOCKS = 1  # read when the graph is built, on this process
    rng = np.random.default_rng(args.seed)
    sides = [daskbicl.biclustering(rng.random((args.k, args.rows)) < args.density,
                                   rng.random((args.k, args.cols)) < args.density) for _ in range(2)]
    print(f"{args.k}+{args.k} biclusters, density {args.density}, {args.rows:.0e} x {args.cols:.0e}, "
          f"{args.workers} worker processes x 1 thread, draw {args.seed}"
          f"{', membership pass in one block' if args.one_block else ''}")
    shares: list[float] = []
    values = set()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        import dask

        with dask.config.set({"daskbicl.in_process_bytes": 0}):
            # compile on the workers (a case of the same shape, smaller)
            warm = [daskbicl.biclustering(rng.random((args.k, 40_000)) < args.density,
                                          rng.random((args.k, 4000)) < args.density) for _ in range(2)]
            _one_run(client, warm, args.measures)
            for run in range(args.runs):
                window, stream, result = _one_run(client, sides, args.measures)
                shares.append(_report(f"run {run + 1}", window, stream, args.workers))
                if args.timeline:
                    timeline(stream, window)
                values.add(tuple(sorted(_values(result).items())))
    print(dict(next(iter(values))))
    if len(values) > 1:
        print("VALUES DIFFER between the runs:", values)
    if args.runs > 1:
        runs = sorted(shares)
        print(f"idle-thread share of the whole score() call over {len(runs)} runs: "
              f"{', '.join(f'{100 * x:.1f} %' for x in shares)}; median "
              f"{100 * float(np.median(runs)):.1f} %, worst {100 * runs[-1]:.1f} % (target <= 10 %)")


if __name__ == "__main__":
    main()
