"""Stores on an S3 object store (moto's standalone server on loopback) against the same stores on a local disk.

Starts ``python -m moto.server`` on a free loopback port (as tests/support/s3_server.py does: s3fs talks to it over HTTP
as it talks to AWS; the server's access log counts every request it answered), writes the stores with
``daskbicl.save`` to a local folder and uploads them with s3fs, then measures:

* ``score``: ``daskbicl.score(truth, pred)`` of two ``--rows`` x ``--rows`` co-clusterings, from ``s3://`` and
  from the local folder (in this process, no cluster; each once untimed first), median of ``--repeat`` runs
  each, and their ratio (the issue's target: <= 1.5x local at 10^7 labels per axis);
* ``requests/chunk``: the server's answered requests during one score from ``s3://``, per chunk object of the
  two stores (and the chunk GETs among them: each chunk is read once; the others are 3 metadata requests per
  store, docs/guide/object-stores.md);
* ``night``: ``--pairs`` preds of ``--night-rows`` labels per axis against one truth, scored once by
  ``run_batch``, then the night with nothing new timed: its requests, its seconds, and its chunk GETs (the
  target: 0, every store fingerprinted from its write record or its listing).

Peak memory is this process's peak RSS above its RSS before the step (the server is another process).  The
endpoint and keys reach s3fs through the environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``...), as a
nightly job would set them; the batch manifest has them as ``[storage_options]`` too.

Run:  python benchmarks/object_store.py              (10^7 labels per axis, 20 pairs of 10^6; minutes)
      python benchmarks/object_store.py --quick      (3 small pairs; what the test runs)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, str(ROOT))
from _common import machine, measure, print_table, versions  # noqa: E402

from tests.support.s3_server import CHUNK_KEY, KEY, SECRET, chunk_gets, start_server, stop_server  # noqa: E402


def put(fs, local: Path, remote: str) -> None:
    """Upload a store, its write record last (as daskbicl's own writes put it)."""
    from daskbicl.io.publish import RECORD_NAME

    fs.put(str(local), remote, recursive=True)
    if (local / RECORD_NAME).exists():
        fs.pipe_file(f"{remote}/{RECORD_NAME}", (local / RECORD_NAME).read_bytes())


def chunk_objects(fs, remote: str) -> int:
    return sum(1 for key in fs.find(remote) if CHUNK_KEY.search("/" + key))


def transfer_floor(fs, bucket: str, repeat: int) -> tuple[float, int]:
    """Seconds (median of ``repeat``) for s3fs to fetch every object of the two stores at once, no decoding:
    what the server itself costs to hand over the bytes a score reads, and their size."""
    objects = [path for name in ("truth.zarr", "pred.zarr") for path in fs.find(f"{bucket}/{name}")]
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        got = fs.cat(objects)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), sum(len(v) for v in got.values())


def score_rows(server, fs, bucket: str, work: Path, rows: int, repeat: int) -> list[dict]:
    import daskbicl

    truth = daskbicl.random_partition(rows, rows, 20, 20, seed=1)
    daskbicl.save(truth, work / "truth.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.1, seed=2), work / "pred.zarr")
    for name in ("truth.zarr", "pred.zarr"):
        put(fs, work / name, f"{bucket}/{name}")
    local = (work / "truth.zarr", work / "pred.zarr")
    remote = (f"s3://{bucket}/truth.zarr", f"s3://{bucket}/pred.zarr")
    measures = ["cari", "nce"]
    want = daskbicl.score(*local, measures=measures)
    # untimed, as the local score above: the process's first S3 client (botocore's service models, its
    # session) is not part of reading a store
    daskbicl.score(*remote, measures=measures)
    times: dict[str, list[float]] = {"local": [], "s3": []}
    peaks: dict[str, float] = {"local": 0.0, "s3": 0.0}
    requests: list = []
    for _ in range(repeat):
        for where, pair in (("local", local), ("s3", remote)):
            server.mark()
            m = measure(daskbicl.score, *pair, measures=measures)
            if m.result != want:
                raise SystemExit(f"scores from {where} differ: {m.result} != {want}")
            times[where].append(m.seconds)
            peaks[where] = max(peaks[where], m.peak_mb)
            if where == "s3":
                requests = server.requests()
    chunks = sum(chunk_objects(fs, f"{bucket}/{name}") for name in ("truth.zarr", "pred.zarr"))
    gets = chunk_gets(requests)
    local_s, s3_s = statistics.median(times["local"]), statistics.median(times["s3"])
    floor_s, size = transfer_floor(fs, bucket, repeat)
    return [
        dict(step=f"fetch every object of both stores, s3:// ({size / 2**20:.1f} MiB, one concurrent cat)",
             seconds=f"{floor_s:.2f}", ratio=f"{floor_s / local_s:.2f}x"),
        dict(step=f"score {rows:.0e} labels/axis, local", seconds=f"{local_s:.2f}", peak_mb=f"{peaks['local']:.0f}"),
        dict(step=f"score {rows:.0e} labels/axis, s3://", seconds=f"{s3_s:.2f}", peak_mb=f"{peaks['s3']:.0f}",
             ratio=f"{s3_s / local_s:.2f}x", requests=len(requests), chunk_gets=sum(gets.values()),
             per_chunk=f"{len(requests) / chunks:.2f} ({chunks} chunks, max {max(gets.values(), default=0)} GET each)"),
    ]


def night_rows(server, fs, bucket: str, work: Path, rows: int, pairs: int) -> list[dict]:
    import daskbicl
    from daskbicl.batch import run_batch

    truth = daskbicl.random_partition(rows, max(rows // 100, 10), 10, 5, seed=3)
    daskbicl.save(truth, work / "night-truth.zarr")
    put(fs, work / "night-truth.zarr", f"{bucket}/night/truth.zarr")
    for k in range(pairs):
        daskbicl.save(daskbicl.perturb(truth, 0.05, seed=100 + k), work / f"night-pred-{k}.zarr")
        put(fs, work / f"night-pred-{k}.zarr", f"{bucket}/night/runs/pred-{k:03d}.zarr")
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    manifest = work / "night.toml"
    manifest.write_text(
        f'results = "{work / "night.sqlite"}"\n\n[storage_options]\nkey = "{KEY}"\nsecret = "{SECRET}"\n'
        f'use_listings_cache = false\n\n[storage_options.client_kwargs]\n'
        f'endpoint_url = "{endpoint}"\nregion_name = "us-east-1"\n\n'
        f'[truth]\nsim = "s3://{bucket}/night/truth.zarr"\n\n[pred]\nruns = "s3://{bucket}/night/runs/pred-*.zarr"\n\n'
        '[[pairs]]\ntruth = "sim"\npred = "runs"\nmeasures = ["cari", "nce"]\n')
    server.mark()
    first = measure(run_batch, manifest)
    first_requests = server.requests()
    if (first.result.scored, first.result.failed) != (pairs, 0):
        raise SystemExit(f"the first night scored {first.result.scored} of {pairs} pairs: {first.result.failures}")
    server.mark()
    night = measure(run_batch, manifest)
    requests = server.requests()
    if (night.result.scored, night.result.skipped) != (0, pairs):
        raise SystemExit(f"the night with nothing new scored {night.result.scored} pairs")
    first_gets = chunk_gets(first_requests)
    return [
        dict(step=f"night 1: {pairs} pairs of {rows:.0e} labels", seconds=f"{first.seconds:.2f}",
             peak_mb=f"{first.peak_mb:.0f}", requests=len(first_requests), chunk_gets=sum(first_gets.values()),
             per_chunk=f"max {max(first_gets.values(), default=0)} GET each"),
        dict(step="night 2: nothing new", seconds=f"{night.seconds:.2f}", peak_mb=f"{night.peak_mb:.0f}",
             requests=len(requests), chunk_gets=sum(chunk_gets(requests).values())),
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**7, help="labels per axis of the scored pair")
    parser.add_argument("--night-rows", type=int, default=10**6, help="row labels of each store of the night")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--dir", help="work folder (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.night_rows, args.pairs, args.repeat = 20_000, 5_000, 3, 1
    work = Path(args.dir or tempfile.mkdtemp(prefix="daskbicl-object-store-"))
    work.mkdir(parents=True, exist_ok=True)
    server = start_server(work)
    os.environ.update(AWS_ENDPOINT_URL=server.endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                      AWS_DEFAULT_REGION="us-east-1")
    try:
        import fsspec

        fs = fsspec.filesystem("s3", **server.storage_options)
        bucket = server.make_bucket()
        started = time.perf_counter()
        rows = score_rows(server, fs, bucket, work, args.rows, args.repeat)
        rows += night_rows(server, fs, bucket, work, args.night_rows, args.pairs)
    finally:
        stop_server(server)
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    print(f"# {machine()}\n# {versions()}\n# loopback moto server; {time.perf_counter() - started:.0f} s in all")
    print_table(rows, ["step", "seconds", "ratio", "peak_mb", "requests", "chunk_gets", "per_chunk"])
    night = rows[-1]
    print(f"# night with nothing new: {night['chunk_gets']} chunk GETs (target 0), {night['requests']} requests, "
          f"{night['seconds']} s")


if __name__ == "__main__":
    main()
