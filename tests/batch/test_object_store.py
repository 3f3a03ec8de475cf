"""Cheap nights on an object store: fingerprints from listings and write records, counted at the server.

Real parts only: moto's standalone S3 server on loopback (tests/support/s3_server.py; its access log lists every
request it answered), stores written with ``daskbicl.save`` to a local folder and uploaded with s3fs, the
session's LocalCluster, the results file on disk.  What is measured is what the *server* answered: a GET of a
chunk object is a read of that chunk, whoever made it (the client, a worker, the fingerprinting).

Also here: a store holding a link to a device is refused by name (the batch goes on), and ``https://``/``http://``
stores are read by ``batch`` as by ``score`` (a read-only HTTP server in a thread, serving a folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fsspec
import pytest

import daskbicl
from daskbicl.batch import ResultsDB, fingerprint, fingerprint_stores, run_batch
from daskbicl.io.publish import RECORD_NAME

from ..support.manifests import manifest_text
from ..support.s3_server import CHUNK_KEY, chunk_gets, put_store, s3_manifest

ROWS, COLS, CHUNK = 3_000, 400, 1_024
MEASURES = ["cari", "ari_rows"]


def _fs(s3):
    return fsspec.filesystem("s3", **s3.storage_options)


def _chunk_keys(s3, name: str) -> set[str]:
    """The server paths (``/bucket/name/...``) of every chunk object of the store ``name``."""
    found = _fs(s3).find(f"{s3.bucket}/{name}")
    return {"/" + key for key in found if CHUNK_KEY.search("/" + key)}


def _lab(tmp_path: Path, s3, preds: int = 2) -> Path:
    """A truth and ``preds`` perturbed preds on the bucket; the manifest over them (a glob), results on disk."""
    local = tmp_path / "local"
    local.mkdir()
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
    daskbicl.save(truth, local / "truth.zarr")
    put_store(s3, local / "truth.zarr", "truth.zarr")
    for k in range(preds):
        daskbicl.save(daskbicl.perturb(truth, 0.05 * (k + 1), seed=20 + k), local / f"pred-{k}.zarr")
        put_store(s3, local / f"pred-{k}.zarr", f"runs/pred-{k}.zarr")
    return _manifest(tmp_path, s3, {"sim": f"{s3.root}/truth.zarr"}, {"runs": f"{s3.root}/runs/pred-*.zarr"})


def _manifest(tmp_path: Path, s3, truth: dict, pred: dict) -> Path:
    return s3_manifest(tmp_path / "m.toml", s3, truth, pred, [{"truth": "sim", "pred": "runs", "measures": MEASURES}],
                       results=tmp_path / "scores.sqlite")


def _values(results: Path) -> dict:
    with ResultsDB(results) as db:
        return {(Path(r["pred"]).name, r["measure"]): r["value"] for r in db.scores(latest=True)}


def test_nights_on_a_bucket_read_each_chunk_once_then_none(tmp_path, s3, client):
    """The first night reads every chunk object once (fingerprints from the listing, the re-check after the
    pairs complete too); a night with nothing new reads no chunk object at all."""
    manifest = _lab(tmp_path, s3)
    chunks = _chunk_keys(s3, "truth.zarr") | _chunk_keys(s3, "runs/pred-0.zarr") | _chunk_keys(s3, "runs/pred-1.zarr")
    s3.server.mark()
    first = run_batch(manifest, client=client)
    assert (first.scored, first.failed) == (2, 0)
    gets = chunk_gets(s3.server.requests())
    assert set(gets) == chunks  # every chunk object, each once
    assert max(gets.values()) == 1, {k: n for k, n in gets.items() if n > 1}

    s3.server.mark()
    again = run_batch(manifest, client=client)
    assert (again.scored, again.skipped, again.failed) == (0, 2, 0)
    assert chunk_gets(s3.server.requests()) == {}


def test_a_written_store_is_fingerprinted_from_its_record_and_a_foreign_one_from_its_listing(tmp_path, s3):
    """A store daskbicl wrote: one small read (its record), the same fingerprint as on a local disk.  A foreign
    store (no record): from the objects' ETags, no object read; a copy keeps it, a rewritten chunk changes it."""
    local = daskbicl.save(daskbicl.random_partition(ROWS, COLS, 5, 4, seed=1, chunk=CHUNK), tmp_path / "w.zarr")
    url = put_store(s3, Path(local), "w.zarr")
    s3.server.mark()
    info = fingerprint_stores([url], s3.storage_options, kinds=False)[url]
    assert info.error is None and info.fingerprint == fingerprint(local)  # wherever it is
    # one listing, then one small read (s3fs asks its size first): the record
    seen = [(m, p.split("?")[0]) for m, p, _ in s3.server.requests()]
    assert seen[0] == ("GET", f"/{s3.bucket}") and {path for _, path in seen[1:]} == {f"/{s3.bucket}/w.zarr/{RECORD_NAME}"}
    assert [m for m, _ in seen].count("GET") == 2

    plain = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=2, chunk=CHUNK)
    plain.attrs.pop("daskbicl_kind", None)
    plain.to_zarr(tmp_path / "plain.zarr", consolidated=False)
    url = put_store(s3, tmp_path / "plain.zarr", "plain.zarr")
    fs = _fs(s3)
    fs.copy(f"{s3.bucket}/plain.zarr", f"{s3.bucket}/copy.zarr", recursive=True)
    s3.server.mark()
    info = fingerprint_stores([url, f"{s3.root}/copy.zarr"], s3.storage_options, kinds=False)
    assert info[url].error is None and info[url].fingerprint == info[f"{s3.root}/copy.zarr"].fingerprint
    assert [m for m, _, _ in s3.server.requests()] == ["GET", "GET"]  # one listing each, no object read

    chunk = f"{s3.bucket}/plain.zarr/row_labels/c/1"
    data = bytearray(fs.cat_file(chunk))
    data[-1] ^= 0xFF  # the same size, one byte flipped: a new ETag
    fs.pipe_file(chunk, bytes(data))
    assert fingerprint(url, s3.storage_options) != info[url].fingerprint


def test_a_replaced_store_is_rescored_and_a_moved_one_is_not(tmp_path, s3, client):
    manifest = _lab(tmp_path, s3)
    assert run_batch(manifest, client=client).scored == 2
    before = _values(tmp_path / "scores.sqlite")
    fs = _fs(s3)
    src, dst = f"{s3.bucket}/runs/pred-0.zarr", f"{s3.bucket}/runs/pred-7.zarr"
    # moved object by object (s3fs' recursive mv copies prefixes), the record last: no object newer than it
    for key in sorted(fs.find(src), key=lambda key: key.endswith(RECORD_NAME)):
        fs.copy(key, dst + key[len(src):])
    fs.rm(src, recursive=True)
    fs.rm(f"{s3.bucket}/runs/pred-1.zarr", recursive=True)
    truth = daskbicl.open(tmp_path / "local" / "truth.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.3, seed=99), tmp_path / "other.zarr")
    put_store(s3, tmp_path / "other.zarr", "runs/pred-1.zarr")
    s3.server.mark()
    night = run_batch(manifest, client=client)
    assert (night.scored, night.skipped, night.failed) == (1, 1, 0)  # pred-7 is pred-0, moved: reused
    gets = chunk_gets(s3.server.requests())
    # the new pred and the truth, read once to be scored; the moved pred not at all
    assert gets == dict.fromkeys(_chunk_keys(s3, "runs/pred-1.zarr") | _chunk_keys(s3, "truth.zarr"), 1)
    after = _values(tmp_path / "scores.sqlite")
    assert after[("pred-1.zarr", "cari")] != before[("pred-1.zarr", "cari")]
    assert after.keys() == before.keys()  # pred-7's scores are pred-0's rows, reused: none computed again
    assert after[("pred-0.zarr", "cari")] == before[("pred-0.zarr", "cari")]


def _linked_lab(tmp_path: Path) -> Path:
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
    daskbicl.save(truth, tmp_path / "truth.zarr")
    for k in range(2):
        daskbicl.save(daskbicl.perturb(truth, 0.1, seed=k), tmp_path / f"pred-{k}.zarr")
    (tmp_path / "pred-1.zarr" / "row_labels" / "c" / "9").symlink_to("/dev/zero")
    path = tmp_path / "m.toml"
    path.write_text(manifest_text({"sim": "truth.zarr"}, {"runs": "pred-*.zarr"},
                                  [{"truth": "sim", "pred": "runs", "measures": MEASURES}]))
    return path


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_a_device_in_a_store_fails_its_pair_by_name_and_the_batch_goes_on(tmp_path, client):
    manifest = _linked_lab(tmp_path)
    report = run_batch(manifest, tmp_path / "r.sqlite", client=client)
    assert (report.scored, report.failed) == (1, 1)
    (reason,) = {why for _, pred, why in report.failures if pred.endswith("pred-1.zarr")}
    assert "row_labels/c/9" in reason and "/dev/zero" in reason and "not a regular file" in reason


def test_batch_reads_stores_over_http_as_score_does(tmp_path, http_folder, client):
    folder, url = http_folder
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
    daskbicl.save(truth, folder / "truth.zarr")
    for k in range(2):
        daskbicl.save(daskbicl.perturb(truth, 0.1 * (k + 1), seed=k), folder / f"pred-{k}.zarr")
    preds = [f"{url}/pred-{k}.zarr" for k in range(2)]
    manifest = tmp_path / "m.toml"
    manifest.write_text(manifest_text({"sim": f"{url}/truth.zarr"}, {"runs": preds},
                                      [{"truth": "sim", "pred": "runs", "measures": MEASURES}]))
    report = run_batch(manifest, tmp_path / "r.sqlite", client=client)
    assert (report.scored, report.failed) == (2, 0), report.failures
    got = _values(tmp_path / "r.sqlite")
    for k in range(2):
        want = daskbicl.score(folder / "truth.zarr", folder / f"pred-{k}.zarr", measures=["cari"])
        assert got[(f"pred-{k}.zarr", "cari")] == want["cari"]
    again = run_batch(manifest, tmp_path / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.failed) == (0, 2, 0)


def test_the_object_store_benchmark_runs_quick(tmp_path):
    """benchmarks/object_store.py --quick: it cannot rot; its night with nothing new reads no chunk object."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "benchmarks/object_store.py", "--quick", "--dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "score 2e+04 labels/axis, s3://" in done.stdout and "night 1: 3 pairs" in done.stdout
    assert "# night with nothing new: 0 chunk GETs (target 0)" in done.stdout, done.stdout


def test_a_hung_bucket_leaves_its_pairs_unscored_the_others_scored_and_exits_3(tmp_path, s3):
    """A night whose bucket hangs (a loopback proxy that accepts and never answers): the local pair is scored,
    the bucket's pair is recorded ``unavailable`` with no value (not failed), exit code 3; the next night, the
    bucket answering, scores it."""
    import dask

    from daskbicl.batch import ResultsDB

    from ..support.s3_server import Proxy

    local = tmp_path / "local"
    local.mkdir()
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
    daskbicl.save(truth, local / "truth.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.1, seed=1), local / "pred.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.2, seed=2), local / "other.zarr")
    put_store(s3, local / "truth.zarr", "truth.zarr")
    put_store(s3, local / "other.zarr", "pred.zarr")  # not a copy of the local pred: scored on its own
    proxy = Proxy(s3.server.endpoint)
    try:
        manifest = s3_manifest(tmp_path / "m.toml", s3,
                               {"disk": str(local / "truth.zarr"), "bucket": f"{s3.root}/truth.zarr"},
                               {"disk": str(local / "pred.zarr"), "bucket": f"{s3.root}/pred.zarr"},
                               [{"truth": "disk", "pred": "disk", "measures": MEASURES},
                                {"truth": "bucket", "pred": "bucket", "measures": MEASURES}],
                               results=tmp_path / "r.sqlite", endpoint=proxy.endpoint)
        proxy.hang()
        fast = {"daskbicl.storage.connect_timeout": "0.2s", "daskbicl.storage.read_timeout": "0.2s",
                "daskbicl.storage.attempts": 1, "daskbicl.storage.notice_after": "60s"}
        with dask.config.set(fast):
            night = run_batch(manifest)
        assert (night.scored, night.failed, len(night.unavailable), night.exit_code) == (1, 0, 1, 3), night
        (truth_url, pred_url, reason) = night.unavailable[0]
        assert pred_url == f"{s3.root}/pred.zarr" and "the storage did not answer" in reason and "retry later" in reason
        assert any(w.startswith("not scored: ") for w in night.warnings) and "not scored" in night.summary()
        with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
            seen = db.conn.execute("SELECT status, score_id FROM observations WHERE run_id = ? AND pred = ?",
                                   (night.run_id, pred_url)).fetchall()
            assert seen and {status for status, _ in seen} == {"unavailable"} and {i for _, i in seen} == {None}
            (status,) = db.conn.execute("SELECT status FROM runs WHERE run_id = ?", (night.run_id,)).fetchone()
            assert status == "unavailable"
        proxy.answer()
        again = run_batch(manifest)
        assert (again.scored, again.skipped, again.failed, again.exit_code) == (1, 1, 0, 0), again
    finally:
        proxy.close()
