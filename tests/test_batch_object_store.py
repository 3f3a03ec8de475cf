"""Cheap nights on an object store: fingerprints from listings and write records, counted at the server.

Real parts only: moto's standalone S3 server on loopback (tests/s3_server.py; its access log lists every
request it answered), stores written with ``daskbicl.save`` to a local folder and uploaded with s3fs, the
session's LocalCluster, the results file on disk.  What is measured is what the *server* answered: a GET of a
chunk object is a read of that chunk, whoever made it (the client, a worker, the fingerprinting).

Also here: a store holding a link to a device is refused by name (the batch goes on), and ``https://``/``http://``
stores are read by ``batch`` as by ``score`` (a read-only HTTP server in a thread, serving a folder).
"""

from __future__ import annotations

import collections
import functools
import http.server
import os
import re
import threading
from pathlib import Path

import fsspec
import numpy as np
import pytest

import daskbicl
from daskbicl.batch import ResultsDB, fingerprint_stores, run_batch

from .manifests import manifest_text

ROWS, COLS, CHUNK = 3_000, 400, 1_024
MEASURES = ["cari", "ari_rows"]

#: a Zarr v3 chunk object's key (``.../c/0``, ``.../c/1/0``), query string aside
_CHUNK_KEY = re.compile(r"/c(/\d+)+$")


def _chunk_gets(requests) -> collections.Counter:
    """``{object path: GETs}`` of the chunk objects among the server's answered requests."""
    out: collections.Counter = collections.Counter()
    for method, path, _status in requests:
        key = path.split("?", 1)[0]
        if method == "GET" and _CHUNK_KEY.search(key):
            out[key] += 1
    return out


def _fs(s3):
    return fsspec.filesystem("s3", **s3.storage_options)


def _put(s3, local: Path, name: str) -> str:
    """Upload the local store ``local`` as ``s3.root/name`` (an s3fs recursive put); its URL."""
    _fs(s3).put(str(local), f"{s3.bucket}/{name}", recursive=True)
    return f"{s3.root}/{name}"


def _chunk_keys(s3, name: str) -> set[str]:
    """The server paths (``/bucket/name/...``) of every chunk object of the store ``name``."""
    found = _fs(s3).find(f"{s3.bucket}/{name}")
    return {"/" + key for key in found if _CHUNK_KEY.search("/" + key)}


def _lab(tmp_path: Path, s3, preds: int = 2) -> Path:
    """A truth and ``preds`` perturbed preds on the bucket; the manifest over them (a glob), results on disk."""
    local = tmp_path / "local"
    local.mkdir()
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK)
    daskbicl.save(truth, local / "truth.zarr")
    _put(s3, local / "truth.zarr", "truth.zarr")
    for k in range(preds):
        daskbicl.save(daskbicl.perturb(truth, 0.05 * (k + 1), seed=20 + k), local / f"pred-{k}.zarr")
        _put(s3, local / f"pred-{k}.zarr", f"runs/pred-{k}.zarr")
    return _manifest(tmp_path, s3, {"sim": f"{s3.root}/truth.zarr"}, {"runs": f"{s3.root}/runs/pred-*.zarr"})


def _manifest(tmp_path: Path, s3, truth: dict, pred: dict) -> Path:
    opts = s3.storage_options
    head = (f'results = "{tmp_path / "scores.sqlite"}"\n\n[storage_options]\nkey = "{opts["key"]}"\n'
            f'secret = "{opts["secret"]}"\nuse_listings_cache = false\nskip_instance_cache = true\n\n'
            f'[storage_options.client_kwargs]\nendpoint_url = "{opts["client_kwargs"]["endpoint_url"]}"\n'
            f'region_name = "us-east-1"\n\n')
    path = tmp_path / "m.toml"
    path.write_text(head + manifest_text(truth, pred, [{"truth": "sim", "pred": "runs", "measures": MEASURES}]))
    return path


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
    gets = _chunk_gets(s3.server.requests())
    assert set(gets) == chunks  # every chunk object, each once
    assert max(gets.values()) == 1, {k: n for k, n in gets.items() if n > 1}

    s3.server.mark()
    again = run_batch(manifest, client=client)
    assert (again.scored, again.skipped, again.failed) == (0, 2, 0)
    assert _chunk_gets(s3.server.requests()) == {}
