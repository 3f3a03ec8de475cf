"""The issue's "done when", as one test: a week of nightly ``daskbicl batch`` runs on an S3 bucket.

Everything is real: moto's standalone S3 server on loopback (tests/support/s3_server.py) behind a loopback TCP
proxy that can be switched to accept-and-never-answer (a hung endpoint); ``daskbicl batch`` run each night as a
subprocess of the command line on a cluster, the S3 credentials and endpoint in the environment of both (the
secret key is the planted secret); stores written with ``daskbicl.save`` to the bucket; a write SIGKILLed midway
in a subprocess; one pred read over HTTP through a URL that carries the same secret as its password.  Each night
is checked for its exit status, the secret (nowhere in the results file's bytes, stdout, stderr; at the end, the
exports), no partial store that opens, no debris after the next write, and the chunk objects the server was
asked for (each at most once; none on a night with nothing new).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import fsspec
import pytest

import daskbicl
from daskbicl.errors import StoreError
from daskbicl.io.publish import RECORD_NAME, WRITING_NAME, read_record

from ..support.manifests import manifest_text
from ..support.s3_server import CHUNK_KEY, KEY, Proxy, chunk_gets

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

ROOT = Path(__file__).resolve().parents[2]
SECRET = "wk-SECRET-4e91c"
ROWS, COLS, CHUNK = 3_000, 400, 1_024
MEASURES = ["cari", "ari_rows"]
#: Short storage time-outs for the hung night (it ends in seconds, not minutes; the other nights keep the defaults:
#: a loaded moto server may take more than a second to answer): one attempt of 1 s, past the 0.5 s notice.
FAST = {"DASK_DASKBICL__STORAGE__CONNECT_TIMEOUT": "1s", "DASK_DASKBICL__STORAGE__READ_TIMEOUT": "1s",
        "DASK_DASKBICL__STORAGE__NOTICE_AFTER": "0.5s", "DASK_DASKBICL__STORAGE__ATTEMPTS": "1"}

#: A write in a subprocess: ``daskbicl.save`` of a seeded pred over an existing store (``overwrite=True``).
_SAVE = """
import json, sys
import daskbicl
a = json.loads(sys.argv[1])
truth = daskbicl.random_partition(a["rows"], a["cols"], 5, 4, seed=5, chunk=a["chunk"])
daskbicl.save(daskbicl.perturb(truth, 0.2, seed=a["seed"]), a["dest"], overwrite=True, chunk=a["chunk"],
              storage_options=a["options"])
"""


class Week:
    """The bucket, the proxy in front of it, the HTTP folder, the manifest and the night's checks."""

    def __init__(self, tmp_path: Path, s3, http_folder: Path, http_url: str):
        self.tmp, self.s3 = tmp_path, s3
        self.fs = fsspec.filesystem("s3", **s3.storage_options)
        self.proxy = Proxy(s3.server.endpoint)
        self.truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
        self.results = tmp_path / "scores.sqlite"
        self.seen: list[str] = []  # every text the week wrote or printed, searched for the secret
        self.texts_checked = 0
        self.checked_state: list | None = None  # the bucket's (key, ETag) at the last partial-store check
        host = http_url.removeprefix("http://")
        self.ref = f"http://alice:{SECRET}@{host}/ref.zarr"
        daskbicl.save(daskbicl.perturb(self.truth, 0.4, seed=77), http_folder / "ref.zarr", chunk=CHUNK)
        # credentials and endpoint the way a nightly job gets them: its environment (botocore reads it, in the
        # command and in the local cluster's workers); the manifest has no [storage_options], so its HTTP store
        # is read with none
        self.aws = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": self.proxy.endpoint,
                    "AWS_DEFAULT_REGION": "us-east-1"}
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **self.aws}
        self.scheduler = ""
        self.manifest = tmp_path / "nightly.toml"
        self.manifest.write_text(f'results = "{self.results}"\n\n' + manifest_text(
            {"sim": f"{s3.root}/truth.zarr"}, {"runs": f"{s3.root}/runs/pred-*.zarr", "ref": self.ref},
            [{"truth": "sim", "pred": ["runs", "ref"], "measures": MEASURES}]))

    # ------------------------------------------------------------------ the bucket

    def url(self, name: str) -> str:
        return f"{self.s3.root}/{name}"

    def save(self, name: str, seed: int, overwrite: bool = False) -> None:
        ds = self.truth if seed < 0 else daskbicl.perturb(self.truth, 0.2, seed=seed)
        daskbicl.save(ds, self.url(name), chunk=CHUNK, overwrite=overwrite, storage_options=self.s3.storage_options)

    def keys(self) -> list[str]:
        return sorted(p.split("/", 1)[1] for p in self.fs.find(self.s3.bucket))

    def chunks(self, *names: str) -> set[str]:
        return {f"/{self.s3.bucket}/{k}" for k in self.keys() for n in names if k.startswith(n + "/")
                and CHUNK_KEY.search("/" + k)}

    def debris(self) -> list[str]:
        """Objects no published store owns: staged prefixes, sentinels, a store's objects beyond its record's."""
        owned: set[str] = set()
        for name in self.stores():
            record = read_record(self.url(name), self.s3.storage_options)
            if record is not None:
                owned |= {f"{name}/{k}" for k in record.objects} | {f"{name}/{RECORD_NAME}"}
        return [k for k in self.keys() if k not in owned]

    def stores(self) -> list[str]:
        """The store-like prefixes of the bucket (``truth.zarr``, ``runs/NAME``), hidden ones included."""
        tops = {k.split("/", 1)[0] if not k.startswith("runs/") else "/".join(k.split("/", 2)[:2])
                for k in self.keys()}
        return sorted(tops)

    def no_partial_store_opens(self) -> None:
        """Every prefix that opens as a store holds every object of its record (a whole store); the others are
        refused with a StoreError.  Checked again only when the bucket changed (an object added, removed or
        rewritten: its ETag) since the last check: the answer depends on the bucket's objects alone."""
        state = sorted((k, d.get("ETag")) for k, d in self.fs.find(self.s3.bucket, detail=True).items())
        if state == self.checked_state:
            return
        self.checked_state = state
        for name in self.stores():
            try:
                daskbicl.open(self.url(name), storage_options=self.s3.storage_options)
            except StoreError:
                continue
            record = read_record(self.url(name), self.s3.storage_options)
            assert record is not None, name
            held = {k[len(name) + 1:] for k in self.keys() if k.startswith(name + "/")}
            assert set(record.objects) <= held and WRITING_NAME not in held, name

    def kill_overwrite(self, name: str, seed: int, moment: int) -> None:
        """An overwrite of ``name`` in a subprocess, SIGKILLed once the server has answered ``moment`` requests."""
        arg = json.dumps({"dest": self.url(name), "seed": seed, "rows": ROWS, "cols": COLS, "chunk": CHUNK,
                          "options": self.s3.storage_options})
        self.s3.server.mark()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-c", _SAVE, arg], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            while proc.poll() is None and len(self.s3.server.requests()) < moment:
                try:
                    proc.wait(timeout=0.002)  # polling the server's log, not a sleep for synchronisation
                except subprocess.TimeoutExpired:
                    pass
            assert proc.poll() is None, "the write ended before the moment to kill it"
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    # ------------------------------------------------------------------ a night

    def night(self, expect: int, *, gets: set[str] | None = None, env: dict | None = None,
              rechecked: set[str] = frozenset()) -> dict:
        """Run ``daskbicl batch`` as a nightly job; check its exit status, the secret, partial stores and the
        chunk objects read (``gets``: the chunks the night may read, each at most once but those ``rechecked``;
        empty: none)."""
        self.s3.server.mark()
        done = subprocess.run(
            [sys.executable, "-m", "daskbicl", "batch", str(self.manifest), "--json", "--scheduler", self.scheduler],
            capture_output=True, text=True, timeout=600, env={**self.env, **(env or {})})
        assert done.returncode == expect, (done.returncode, done.stderr[-3000:])
        self.seen += [done.stdout, done.stderr]
        self.seen += [p.read_bytes().decode("utf-8", "replace") for p in self.tmp.glob("scores.sqlite*")]
        read = chunk_gets(self.s3.server.requests())  # the night's, before this test opens any store
        if gets is not None:
            assert set(read) <= gets, sorted(set(read) - gets)[:5]
            assert all(n <= (3 if k in rechecked else 1) for k, n in read.items()), {k: n for k, n in read.items() if n > 1}
        self.no_secret()
        self.no_partial_store_opens()
        return {"report": json.loads(done.stdout) if done.stdout.strip() else None, "stderr": done.stderr,
                "chunks": read}

    def no_secret(self) -> None:
        leaks = [t[max(0, t.find(SECRET) - 200):t.find(SECRET) + 50] for t in self.seen if SECRET in t]
        assert not leaks, leaks
        self.texts_checked = len(self.seen)

    def exports(self) -> None:
        """Every export of the week's results: written, read back, and searched for the secret."""
        for args in (["--format", "csv", "-o", self.tmp / "scores.csv"], ["--format", "json", "-o",
                     self.tmp / "scores.json"], ["--failures", "--format", "csv", "-o", self.tmp / "failures.csv"],
                     ["--runs", "--format", "json"], ["--latest", "--format", "json"]):
            done = subprocess.run([sys.executable, "-m", "daskbicl", "results", str(self.results), *map(str, args)],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert done.returncode == 0, done.stderr
            self.seen += [done.stdout, done.stderr]
        self.seen += [(self.tmp / n).read_text() for n in ("scores.csv", "scores.json", "failures.csv")]
        self.no_secret()


def _counts(report: dict) -> tuple[int, int, int]:
    return report["scored"], report["skipped"], report["failed"]


def test_a_week_of_nights_on_s3(tmp_path, s3, http_folder):
    from distributed import LocalCluster

    (tmp_path / "lab").mkdir()
    week = Week(tmp_path / "lab", s3, *http_folder)
    try:
        # the team's cluster: its workers have the job's environment (the S3 credentials and endpoint)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          env={**week.aws, "PYTHONPATH": str(ROOT)}) as cluster:
            week.scheduler = cluster.scheduler_address
            _the_week(week)
    finally:
        week.proxy.close()


def _the_week(week: Week) -> None:
    # Monday: a truth and two preds on the bucket, one pred over HTTP (its URL carries a password)
    week.save("truth.zarr", -1)
    week.save("runs/pred-0.zarr", 10)
    week.save("runs/pred-1.zarr", 11)
    first = week.night(0, gets=week.chunks("truth.zarr", "runs/pred-0.zarr", "runs/pred-1.zarr"))
    assert _counts(first["report"]) == (3, 0, 0), first["report"]
    assert first["chunks"], "the first night read the chunks it scored"

    # Tuesday: nothing new: nothing scored, no chunk object read
    tuesday = week.night(0, gets=set())
    assert _counts(tuesday["report"]) == (0, 3, 0)

    # Wednesday: pred-2 added, pred-0 replaced, an overwrite of pred-1 killed while it stages the new store
    week.save("runs/pred-2.zarr", 12)
    week.s3.server.mark()
    week.save("runs/pred-0.zarr", 20, overwrite=True)
    whole = len(week.s3.server.requests())
    assert week.debris() == []
    old = read_record(week.url("runs/pred-1.zarr"), week.s3.storage_options).digest
    week.kill_overwrite("runs/pred-1.zarr", 21, whole // 4)
    assert read_record(week.url("runs/pred-1.zarr"), week.s3.storage_options).digest == old  # the old one, whole
    left = week.debris()
    assert left and all(k.startswith("runs/.pred-1.zarr.tmp-") for k in left), left
    wednesday = week.night(0, gets=week.chunks("truth.zarr", "runs/pred-0.zarr", "runs/pred-2.zarr"))
    assert _counts(wednesday["report"]) == (2, 2, 0), wednesday["report"]

    # Thursday: the overwrite of pred-1 run again (the debris goes), a chunk of pred-2 damaged (same size)
    week.save("runs/pred-1.zarr", 21, overwrite=True)
    assert week.debris() == []
    chunk = "runs/pred-2.zarr/row_labels/c/1"
    data = bytearray(week.fs.cat_file(f"{week.s3.bucket}/{chunk}"))
    data[len(data) // 2] ^= 0xFF
    week.fs.pipe_file(f"{week.s3.bucket}/{chunk}", bytes(data))
    # the damaged chunk, written after pred-2's record, is read 3 times: checked against the record before
    # scoring and again after it (the record does not vouch for an object newer than itself), and scored
    thursday = week.night(1, gets=week.chunks("truth.zarr", "runs/pred-1.zarr", "runs/pred-2.zarr"),
                          rechecked={f"/{week.s3.bucket}/{chunk}"})
    assert _counts(thursday["report"]) == (1, 2, 1), thursday["report"]
    (failure,) = thursday["report"]["failures"]
    assert failure["pred"].endswith("pred-2.zarr") and "damaged" in failure["reason"], failure

    # Friday: the endpoint hangs (accepts, never answers): retry later, quickly, the results file untouched
    runs_before = _runs(week)
    week.proxy.hang()
    friday = week.night(3, env=FAST)
    week.proxy.answer()
    lines = friday["stderr"].strip().splitlines()
    assert "retry later" in lines[-1] and "did not answer" in lines[-1], friday["stderr"]
    assert any(line.startswith("daskbicl: still ") for line in lines), friday["stderr"]
    assert _runs(week) == runs_before
    assert friday["chunks"] == {}

    # Saturday: pred-0 deleted, the damaged pred-2 replaced by a good store
    week.fs.rm(f"{week.s3.bucket}/runs/pred-0.zarr", recursive=True)
    week.save("runs/pred-2.zarr", 32, overwrite=True)
    assert week.debris() == []
    saturday = week.night(0, gets=week.chunks("truth.zarr", "runs/pred-2.zarr"))
    assert _counts(saturday["report"]) == (1, 2, 0) and saturday["report"]["missing"] == 1, saturday["report"]

    # Sunday: nothing new: no chunk object read; pred-0 is gone, not failed
    sunday = week.night(0, gets=set())
    assert _counts(sunday["report"]) == (0, 3, 0) and sunday["report"]["gone"] == 1, sunday["report"]

    week.exports()
    assert "***@" in (week.tmp / "scores.csv").read_text()  # the HTTP pred is named, its password is not
    assert week.texts_checked > 20


def _runs(week: Week) -> int:
    from daskbicl.batch import ResultsDB

    with ResultsDB(week.results, create=False) as db:
        return len(db.runs())
