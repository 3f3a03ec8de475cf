"""Batch scoring: N pred stores against one truth, against scoring them one by one.

Writes one truth co-clustering and N perturbed copies (``--rows`` x ``--cols``)
as Zarr stores, starts one LocalCluster (2 worker processes, 1 thread each)
and times, end to end as a user runs them:

* ``batch_s``         — ``daskbicl batch MANIFEST --scheduler ADDR``: every pair in
                        one Dask computation, the truth read once;
* ``rerun_s``         — the same command again with nothing changed: fingerprints
                        only, no computation;
* ``batch_local_s``   — ``daskbicl batch MANIFEST`` starting its own local cluster
                        (what a cron line without ``--scheduler`` does);
* ``score_each_s``    — ``daskbicl score TRUTH PRED --json --scheduler ADDR`` run N
                        times (one process each: what a shell loop does);
* ``score_api_s``     — ``daskbicl.score(truth, pred)`` N times in one Python
                        process on the same cluster (no interpreter start-up:
                        what batching saves beyond process start-up);
* ``score_local_each_s`` — ``daskbicl score TRUTH PRED`` starting a local cluster
                        each time, timed on ``--local-sample`` preds and scaled
                        to N (marked ``~``).

Every way computes the 8 co-clustering measures; the batch values are checked
against ``daskbicl.score``.

Run:  python benchmarks/batch.py                  (100 preds, 10^6 x 10^4; ~15 minutes)
      python benchmarks/batch.py --quick          (seconds; what the test runs)
      python benchmarks/batch.py --profile-client --preds 20 --rows 1000000 --cols 1000
                                                  (one batch run under cProfile: the client's share)
      python benchmarks/batch.py --profile-client --preds 20 --rows 20000000 --cols 1000 \
          --dir /tmp/batch-bench --repeat 6 --compare both
                                                  (six runs alternating this branch's client with the one before)
      python benchmarks/batch.py --profile-client --quick  (the same in seconds)
      python benchmarks/batch.py --profile-client --preds 20 --rows 20000000 --cols 1000 \
          --dir /tmp/batch-bench --repeat 4 --compare fingerprint --workers 1 2
                                                  (this round: stores hashed and opened by the workers
                                                  against hashed and opened in the client, on 1 then 2
                                                  workers; --compare both: against the first round's client)

``--profile-client`` runs one batch in this process on the same cluster under
cProfile and prints, per phase of the client's own work (fingerprinting the
stores, planning, opening the stores and building the graphs, submitting,
re-fingerprinting completed pairs, finalizing and committing), its time and
its share of the run's wall time.  Time the client spends waiting for the
cluster is not in any phase.  It also prints, from distributed's task stream,
how long no task was running on any worker during the run: the time the
cluster waited for the client (its serial work, plus scheduler latency),
the number the target (<= 10 % of the run) is about.  A warm-up run (not
reported) comes first on each cluster, so the workers' first loading of the
compiled kernels is in no run.  The summary table ends with ``read_s``: the
time to open every store and read every chunk of its stored arrays on the
same cluster, and ``batch/read``, the batch's wall time over it (the issue's
target on 16 cores: within 2x).  Set ``BATCH_BENCH_TASKS=1`` to print, per
run, the task time by key prefix and the idle stretches of the cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _common import machine, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402


def cli(*args) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"daskbicl {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def generate(folder: str, n_preds: int, rows: int, cols: int) -> tuple[str, list[str]]:
    truth = daskbicl.save(daskbicl.random_partition(rows, cols, 10, 5, seed=0), os.path.join(folder, "truth.zarr"))
    lazy = daskbicl.open(truth)
    preds = []
    for k in range(n_preds):
        pred = daskbicl.perturb(lazy, 0.1, seed=k + 1)
        preds.append(daskbicl.save(pred, os.path.join(folder, "preds", f"pred-{k:03d}.zarr")))
    return truth, preds


def _store_shape(path: str) -> tuple[int, int]:
    """(rows, columns) of a co-clustering store, from its metadata."""
    ds = daskbicl.open(path)
    return int(ds.sizes["row"]), int(ds.sizes["col"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preds", type=int, default=100, help="number of pred stores (default 100)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--cols", type=int, default=10_000)
    parser.add_argument("--local-sample", type=int, default=5,
                        help="preds scored with a fresh local cluster each, scaled to --preds (0: skip)")
    parser.add_argument("--no-local", action="store_true", help="skip the ways that start a local cluster")
    parser.add_argument("--quick", action="store_true",
                        help="2 preds of 20,000 x 1,000, no local-cluster ways (what the test runs)")
    parser.add_argument("--dir", help="folder for the stores (default: a temporary folder)")
    parser.add_argument("--profile-client", action="store_true",
                        help="only one batch run in this process under cProfile: the client's serial share")
    parser.add_argument("--repeat", type=int, default=1, help="--profile-client: number of runs")
    parser.add_argument("--compare", choices=("recheck", "wave", "both", "fingerprint", "build", "all"),
                        help="--profile-client: every other run does this part as before (an A/B in one go): "
                        "recheck = completed pairs' stores hashed again (no stat check), wave = every pair "
                        "built before any is sent to the cluster, both = both (the first round's client, "
                        "fingerprints in the client too), fingerprint = the stores hashed in the client "
                        "before planning, the rest as now (the second round's client), build = the pairs built after the "
                        "plan instead of as their stores arrive, all = recheck, wave and fingerprint")
    parser.add_argument("--workers", type=int, nargs="+", default=[2],
                        help="worker processes (1 thread each) of the cluster; several: one cluster each, "
                        "in turn (default 2)")
    args = parser.parse_args(argv)
    if args.quick:
        args.preds, args.rows, args.cols, args.no_local = 2, 20_000, 1_000, True
    args.local_sample = 0 if args.no_local else min(args.local_sample, args.preds)

    from distributed import Client, LocalCluster

    folder = args.dir or tempfile.mkdtemp(prefix="daskbicl-bench-batch-")
    os.makedirs(os.path.join(folder, "preds"), exist_ok=True)
    start = time.perf_counter()
    existing = sorted(os.listdir(os.path.join(folder, "preds")))
    if args.dir and os.path.exists(os.path.join(folder, "truth.zarr")) and len(existing) == args.preds:
        truth = os.path.join(folder, "truth.zarr")  # stores of an earlier run with --dir: reused
        shape = _store_shape(truth)
        if shape != (args.rows, args.cols):  # a folder of another size: the run would be labelled wrongly
            sys.exit(f"{folder} holds stores of {shape[0]:,} x {shape[1]:,} labels, not --rows {args.rows:,} "
                     f"--cols {args.cols:,}: give another --dir (or the same sizes)")
        preds = [os.path.join(folder, "preds", p) for p in existing]
    else:
        truth, preds = generate(folder, args.preds, args.rows, args.cols)
    generate_s = time.perf_counter() - start
    manifest = os.path.join(folder, "manifest.toml")
    with open(manifest, "w") as f:
        f.write('[truth]\nsim = "truth.zarr"\n\n[pred]\nruns = "preds/pred-*.zarr"\n\n'
                '[[pairs]]\ntruth = "sim"\npred = "runs"\n')
    results = os.path.join(folder, "scores.sqlite")

    if args.profile_client:
        summary = []
        for workers in args.workers:
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                              silence_logs=logging.ERROR) as lc, Client(lc) as client:
                client.run(lambda: __import__("daskbicl"))  # warm the workers' imports for every way alike
                summary += profile_runs(manifest, results, client, args, [truth, *preds], workers)
        print("\nsummary (share = no task running on the cluster / batch wall time; read = every chunk of the "
              "stores read on the same cluster, stores opened included):")
        print_table(summary, list(summary[0]))
        return

    with LocalCluster(n_workers=args.workers[0], threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as lc, Client(lc) as client:
        address = lc.scheduler_address
        client.run(lambda: __import__("daskbicl"))  # warm the workers' imports for every way alike

        batch_s = cli("batch", manifest, "--scheduler", address, "--results", results)
        rerun_s = cli("batch", manifest, "--scheduler", address, "--results", results)
        with sqlite3.connect(results) as con:
            n_rows = con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
            sample = dict(con.execute("SELECT measure, value FROM scores WHERE pred = ?", (preds[-1],)).fetchall())
        expected = daskbicl.score(truth, preds[-1])
        assert sample == expected, (sample, expected)
        assert n_rows == 8 * args.preds, n_rows

        score_each_s = sum(cli("score", truth, p, "--json", "--scheduler", address) for p in preds)
        start = time.perf_counter()
        for p in preds:
            daskbicl.score(truth, p)
        score_api_s = time.perf_counter() - start

    batch_local_s = None
    if not args.no_local:
        os.remove(results)
        batch_local_s = cli("batch", manifest, "--results", results)
    local = [cli("score", truth, p, "--json") for p in preds[: args.local_sample]]
    local_each = sum(local) / len(local) * args.preds if local else None

    print(f"machine: {machine()}\nversions: {versions()}")
    print(f"{args.preds} pred stores of {args.rows:,} x {args.cols:,} against one truth; "
          f"stores written in {generate_s:.1f} s to {folder}\n")
    row = {
        "preds": args.preds,
        "batch_s": f"{batch_s:.1f}",
        "rerun_s": f"{rerun_s:.1f}",
        "batch_local_s": "-" if batch_local_s is None else f"{batch_local_s:.1f}",
        "score_each_s": f"{score_each_s:.1f}",
        "score_api_s": f"{score_api_s:.1f}",
        "score_local_each_s": "-" if local_each is None else f"~{local_each:.0f}",
        "speedup": f"{score_each_s / batch_s:.1f}x",
    }
    print_table([row], list(row))
    print(f"\nbatch values equal daskbicl.score; {n_rows} rows; speedup = score_each_s / batch_s")
    if args.quick and not args.dir:
        shutil.rmtree(folder, ignore_errors=True)


def _old_ways(k: int, compare: str | None) -> dict:
    """The switches of run ``k``: every other run does the parts ``compare`` names as before."""
    from daskbicl.batch import runner

    old = bool(k % 2) and compare is not None
    parts = {"recheck": {"recheck"}, "wave": {"wave"}, "both": {"recheck", "wave", "fingerprint"},
             "fingerprint": {"fingerprint"}, "build": {"build"},
             "all": {"recheck", "wave", "fingerprint"}}.get(compare or "", set())
    runner.RECHECK_BY_STAT = not (old and "recheck" in parts)
    runner.FIRST_WAVE = 0 if old and "wave" in parts else 1
    runner.FINGERPRINTS_ON_CLUSTER = not (old and "fingerprint" in parts)
    runner.EARLY_BUILD = not (old and "build" in parts)
    return {"recheck": "stat" if runner.RECHECK_BY_STAT else "hash",
            "waves": "yes" if runner.FIRST_WAVE else "no",
            "fingerprints": "workers" if runner.FINGERPRINTS_ON_CLUSTER else "client",
            "early build": "yes" if runner.FINGERPRINTS_ON_CLUSTER and runner.EARLY_BUILD else "no"}


def profile_runs(manifest: str, results: str, client, args, stores: list[str], workers: int) -> list[dict]:
    """``--repeat`` profiled batch runs on ``client`` (alternating with the old ways), then one read of the stores."""
    rows = []
    _old_ways(0, None)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        profile_client(manifest, results, client, args)  # warm-up, not reported: the workers load their kernels
    for k in range(args.repeat):
        ways = _old_ways(k, args.compare)
        print(f"\n--- {workers} worker(s), run {k + 1}: completed pairs re-checked by {ways['recheck']}; "
              f"pairs sent in waves: {ways['waves']}; stores hashed by the {ways['fingerprints']}")
        share, wall = profile_client(manifest, results, client, args)
        rows.append({"workers": workers, "run": k + 1, **ways, "wall_s": f"{wall:.2f}", "share": f"{share:.1%}",
                     "load": f"{os.getloadavg()[0]:.1f}"})
    read = read_stores(client, stores)
    for row in rows:
        row["read_s"] = f"{read:.2f}"
        row["batch/read"] = f"{float(row['wall_s']) / read:.1f}x"
    return rows


def read_stores(client, stores: list[str]) -> float:
    """Seconds to open every store and read every chunk of its stored arrays on ``client``'s cluster (one sum
    per array: the chunks are read and decompressed, nothing decoded or counted)."""
    import xarray as xr

    start = time.perf_counter()
    sums = []
    for path in stores:
        ds = xr.open_zarr(path, chunks={})  # the stored arrays as they are (label codes), no decoding
        sums += [ds[name].data.sum() for name in ds.variables if hasattr(ds[name].data, "dask")]
    client.gather(client.compute(sums))
    return time.perf_counter() - start


#: Phases of the client's work: (label, module suffix, function name); cumulative times from cProfile.
PHASES = (
    ("list stores, read kinds, hash in client (survey)", "batch/runner.py", "survey"),
    ("plan (results file)", "batch/runner.py", "plan"),
    ("open stores", "io/store.py", "open_store"),
    ("build graphs", "batch/runner.py", "_build"),
    ("submit (client.compute)", "distributed/client.py", "compute"),
    ("re-fingerprint completed pairs", "batch/collect.py", "_changed"),
    ("finalize + commit", "batch/collect.py", "_finish"),
    ("record reused pairs", "batch/results.py", "reuse"),
)


def profile_client(manifest: str, results: str, client, args) -> tuple[float, float]:
    """One batch run in this process under cProfile: each client phase's time and share of the wall time."""
    import cProfile
    import pstats

    from daskbicl.batch import run_batch

    if os.path.exists(results):
        os.remove(results)
    from distributed import get_task_stream

    profiler = cProfile.Profile()
    with get_task_stream(client) as stream:
        t0 = time.time()
        start = time.perf_counter()
        profiler.enable()
        report = run_batch(manifest, results, client=client)
        profiler.disable()
        wall = time.perf_counter() - start
        t1 = time.time()
    busy = _busy_seconds(stream.data, t0, t1)
    if os.environ.get("BATCH_BENCH_TASKS"):
        from collections import Counter

        from dask.utils import key_split
        spent = Counter()
        for task in stream.data:
            for ss in task.get("startstops", ()):
                spent[(key_split(task["key"]), ss.get("action"))] += ss["stop"] - ss["start"]
        print("task time by prefix:", [(k, round(v, 2)) for k, v in spent.most_common(8)])
        print("idle gaps (start after t0, seconds):", [(round(a - t0, 2), round(b - a, 2))
                                                      for a, b in _gaps(stream.data, t0, t1) if b - a > 0.02])
    starts = [ss["start"] for task in stream.data for ss in task.get("startstops", ()) if ss.get("action") == "compute"]
    stops = [ss["stop"] for task in stream.data for ss in task.get("startstops", ()) if ss.get("action") == "compute"]
    head, tail = (min(starts) - t0, t1 - max(stops)) if starts else (0.0, 0.0)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows, serial = [], 0.0
    for label, suffix, name in PHASES:
        cumulative = sum(v[3] for (path, _, func), v in stats.items() if func == name and path.endswith(suffix))
        serial += cumulative
        rows.append({"phase": label, "seconds": f"{cumulative:.2f}", "share": f"{cumulative / wall:.1%}"})
    rows.append({"phase": "client work, all phases", "seconds": f"{serial:.2f}", "share": f"{serial / wall:.1%}"})
    print(f"machine: {machine()}\nload (uptime): {os.getloadavg()}")
    print(f"{report.pairs} pairs ({args.rows:,} x {args.cols:,}), {report.rows} rows, {report.tasks} tasks; "
          f"batch wall time {wall:.2f} s\n")
    print_table(rows, ["phase", "seconds", "share"])
    idle = wall - busy
    print(f"\ntask stream: some task running on the cluster {busy:.2f} s of {wall:.2f} s; no task running "
          f"{idle:.2f} s = {idle / wall:.1%} of the run (the client's serial work, scheduler latency included): "
          f"{head:.2f} s before the first task, {tail:.2f} s after the last, {idle - head - tail:.2f} s between")
    gaps = [b - a for a, b in _gaps(stream.data, t0 + head, t1 - tail)]
    long_gaps = [g for g in gaps if g >= LONG_GAP]
    print(f"the {idle - head - tail:.2f} s between: {len(long_gaps)} gaps of {LONG_GAP * 1000:.0f} ms or more, "
          f"{sum(long_gaps):.2f} s = {sum(long_gaps) / wall:.1%} of the run (the cluster waiting for "
          f"the client: its next graphs, its checks; or, on a loaded machine, for a CPU), and {len(gaps) - len(long_gaps)} shorter ones, {sum(gaps) - sum(long_gaps):.2f} s "
          f"(between one task and the next: the scheduler's round trip, with tasks of a few ms)")
    print(f"the client's serial share (before the first task, after the last, gaps of {LONG_GAP * 1000:.0f} ms or "
          f"more): {(head + tail + sum(long_gaps)) / wall:.1%}")
    waited = _called_from(stats, "wait_watched", "fingerprint_on_cluster")
    print(f"(the client waited {waited:.2f} s for the workers' fingerprints, opening stores meanwhile; "
          "not client work)")
    print(f"CLIENT_SERIAL_SHARE {idle / wall:.4f} WAITING_FOR_CLIENT {(head + tail + sum(long_gaps)) / wall:.4f} "
          f"PROFILED_CLIENT_SHARE {serial / wall:.4f} WALL {wall:.3f} "
          f"LOAD {os.getloadavg()[0]:.2f}")
    return idle / wall, wall


#: A stretch with no task on the cluster at least this long is counted as waiting for the client; shorter ones
#: sit between one task and the next (a scheduler round trip is 1-3 ms on this machine).
LONG_GAP = 0.010


def _called_from(stats: dict, name: str, caller: str) -> float:
    """Cumulative seconds of function ``name`` when called by function ``caller`` (cProfile's caller table)."""
    total = 0.0
    for (_, _, func), value in stats.items():
        if func == name:
            total += sum(v[3] for (_, _, c), v in value[4].items() if c == caller)
    return total


def _gaps(stream: list[dict], t0: float, t1: float) -> list[tuple[float, float]]:
    """The (start, end) of every stretch of [t0, t1] with no task computing on any worker."""
    spans = sorted((max(t0, ss["start"]), min(t1, ss["stop"])) for task in stream
                   for ss in task.get("startstops", ()) if ss.get("action") == "compute")
    out, end = [], t0
    for a, b in spans:
        if a > end:
            out.append((end, a))
        end = max(end, b)
    return out + ([(end, t1)] if t1 > end else [])


def _busy_seconds(stream: list[dict], t0: float, t1: float) -> float:
    """Seconds of [t0, t1] during which at least one task was computing on some worker (from the task stream)."""
    spans = sorted((max(t0, ss["start"]), min(t1, ss["stop"])) for task in stream
                   for ss in task.get("startstops", ()) if ss.get("action") == "compute")
    busy, end = 0.0, t0
    for a, b in spans:
        if b <= end:
            continue
        busy += b - max(a, end)
        end = b
    return busy


if __name__ == "__main__":
    main()
