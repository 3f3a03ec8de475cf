"""What opening and scoring stores on S3 costs in requests, counted at the server (moto's on loopback).

An object store answers each request after a round trip (tens of milliseconds on a real bucket), so the
number of requests, not the bytes, is what a small or medium store's read costs.  A store written by
:func:`daskbicl.save` holds every array's metadata in its root ``zarr.json`` (consolidated) and its
completion record; opening it costs exactly :data:`K` = 3 metadata requests:

* ``GET zarr.json``: the group, its attributes and every array's metadata;
* ``GET .daskbicl-written.json``: the completion record that publishes the store (checked on open: a store
  without it is an interrupted write);
* one listing of the store's objects (``list-type=2``, a page per thousand objects): every chunk of a
  store ``save`` wrote is present (a missing chunk would read as zeros).

Nothing else: no ``HEAD`` before a ``GET`` (s3fs asks an object's size first unless ``max_concurrency`` is 1),
no Zarr v2 probe (``.zgroup``, ``.zarray``...), no array's own ``zarr.json``, no second open by xarray or by
the chunk readers.  Scoring a pair then reads each chunk object of both stores once, with one ``GET``.
Nothing is patched: s3fs talks to the server over HTTP as to AWS; the server's access log counts.
"""

from __future__ import annotations

import collections

import fsspec
import pytest
import xarray as xr

import daskbicl
from daskbicl.errors import StoreReadError
from daskbicl.io.publish import RECORD_NAME

from ..support.s3_server import CHUNK_KEY, chunk_gets

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

#: Metadata requests of opening a store daskbicl wrote (see the module's docstring).
K = 3
ROWS, COLS, CHUNK = 6000, 2500, 1000
MEASURES = ["cari", "nce", "ari_rows"]


def _written_pair(s3, tmp_path):
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=11, chunk=CHUNK)
    pred = daskbicl.perturb(truth, 0.2, seed=12)
    urls = []
    for name, ds in (("truth.zarr", truth), ("pred.zarr", pred)):
        daskbicl.save(ds, tmp_path / name, chunk=CHUNK)
        urls.append(daskbicl.save(ds, f"{s3.root}/{name}", chunk=CHUNK, storage_options=s3.storage_options))
    return urls, (tmp_path / "truth.zarr", tmp_path / "pred.zarr")


def _chunk_objects(s3, *names: str) -> set[str]:
    fs = fsspec.filesystem("s3", **s3.storage_options)
    return {f"/{key}" for name in names for key in fs.find(f"{s3.bucket}/{name}") if CHUNK_KEY.search("/" + key)}


def _metadata_requests(s3, requests, chunks: set[str] = frozenset()) -> dict[str, list[str]]:
    """``{store: [request, ...]}`` of the requests that read no chunk object (v3 keys, or those in ``chunks``),
    listings by their prefix."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for method, path, _status in requests:
        key = path.split("?", 1)[0]
        if method == "GET" and (CHUNK_KEY.search(key) or key in chunks):
            continue
        if "prefix=" in path:  # a listing of the bucket: GET /bucket?list-type=2&prefix=STORE/...
            prefix = path.split("prefix=", 1)[1].split("&", 1)[0]
            out[prefix.split("/", 1)[0]].append(f"{method} list {prefix}")
        else:
            store, _, rest = key.removeprefix(f"/{s3.bucket}/").partition("/")
            out[store].append(f"{method} {rest}")
    return dict(out)


def test_opening_a_store_daskbicl_wrote_costs_k_metadata_requests(s3, tmp_path):
    (truth, _pred), _local = _written_pair(s3, tmp_path)
    s3.server.mark()
    ds = daskbicl.open(truth, storage_options=s3.storage_options)
    requests = s3.server.requests()
    assert {method for method, _, _ in requests} == {"GET"}, requests
    assert _metadata_requests(s3, requests) == {
        "truth.zarr": ["GET zarr.json", f"GET {RECORD_NAME}", "GET list truth.zarr/"]}, requests
    assert len(_metadata_requests(s3, requests)["truth.zarr"]) == K
    # the label values' tables, read to decode the labels, once each; no chunk of the labels yet
    assert chunk_gets(requests) == {f"/{s3.bucket}/truth.zarr/{var}/c/0": 1
                                    for var in ("row_label_values", "col_label_values")}, requests
    assert ds.sizes["row"] == ROWS and ds.sizes["col"] == COLS


def test_scoring_a_pair_costs_k_metadata_requests_per_store_and_one_get_per_chunk(s3, tmp_path):
    urls, local = _written_pair(s3, tmp_path)
    want = daskbicl.score(*local, measures=MEASURES)
    s3.server.mark()
    got = daskbicl.score(*urls, measures=MEASURES, storage_options=s3.storage_options)
    requests = s3.server.requests()
    assert got == want
    assert {method for method, _, _ in requests} == {"GET"}, requests
    metadata = _metadata_requests(s3, requests)
    assert sorted(metadata) == ["pred.zarr", "truth.zarr"]
    assert all(len(reqs) == K for reqs in metadata.values()), metadata
    chunks = _chunk_objects(s3, "truth.zarr", "pred.zarr")
    gets = chunk_gets(requests)
    assert set(gets) == chunks and set(gets.values()) == {1}, gets
    assert len(chunks) > 4 * 2  # several chunks per label array: the count above is not of a trivial store
    assert len(requests) == 2 * K + len(chunks)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_store_of_another_tool_is_opened_with_each_metadata_object_read_once(s3, tmp_path, zarr_format):
    """A plain ``to_zarr`` store (v3 without consolidated metadata; v2 with ``.zmetadata``, as xarray writes it):
    no object read twice, no ``HEAD``; a score reads every chunk once."""
    truth = daskbicl.random_partition(ROWS, COLS, 5, 4, seed=13, chunk=CHUNK)
    pred = daskbicl.perturb(truth, 0.2, seed=14)
    fs = fsspec.filesystem("s3", **s3.storage_options)
    names, local = [], []
    for side, ds in (("truth", truth), ("pred", pred)):
        plain = xr.Dataset({var: (ds[var].dims, ds[var].values) for var in ("row_labels", "col_labels")})
        names.append(f"{side}-v{zarr_format}.zarr")
        local.append(tmp_path / names[-1])
        plain.chunk(CHUNK).to_zarr(local[-1], zarr_format=zarr_format, consolidated=zarr_format == 2)
        fs.put(str(local[-1]), f"{s3.bucket}/{names[-1]}", recursive=True)
    objects = {f"/{s3.bucket}/{key.removeprefix(s3.bucket + '/')}" for name in names
               for key in fs.find(f"{s3.bucket}/{name}")}
    s3.server.mark()
    got = daskbicl.score(*(f"{s3.root}/{name}" for name in names), measures=MEASURES,
                         storage_options=s3.storage_options)
    requests = s3.server.requests()
    assert got == daskbicl.score(*local, measures=MEASURES)
    assert {method for method, _, _ in requests} == {"GET"}, requests
    reads = collections.Counter(path for _, path, _ in requests)
    assert max(reads.values()) == 1, reads
    chunks = {key for key in objects if key.rpartition("/")[2][0].isdigit() or CHUNK_KEY.search(key)}
    assert chunks <= set(reads) and len(chunks) > 8
    arrays = 2
    for name in names:
        metadata = _metadata_requests(s3, requests, chunks)[name]
        # v3: zarr.json, a listing of the group's members, each array's zarr.json;
        # v2: zarr.json (absent), .zgroup, .zattrs, .zmetadata
        assert len(metadata) == (2 + arrays if zarr_format == 3 else 4), metadata


def test_a_store_deleted_after_the_open_fails_naming_the_chunk_and_asks_nothing_more(s3, tmp_path):
    """The readers keep the arrays the open found (no request opens them again), so nothing reads the metadata
    that would show the store gone: a chunk object absent from a store whose every chunk was listed at the
    open is damage, not the fill value; finding it out costs only the chunk's own GET."""
    (truth, _pred), _local = _written_pair(s3, tmp_path)
    lazy = daskbicl.open(truth, storage_options=s3.storage_options)
    fsspec.filesystem("s3", **s3.storage_options).rm(f"{s3.bucket}/truth.zarr", recursive=True)
    s3.server.mark()
    with pytest.raises(StoreReadError, match=r"truth\.zarr \(variable row_labels chunk \d+\): a file is missing "
                                             r".*every chunk was there when the store was opened: 'row_labels/c/"):
        daskbicl.score(lazy, lazy, measures="cari")
    requests = s3.server.requests()
    assert requests and all(method == "GET" and CHUNK_KEY.search(path) and status == 404
                            for method, path, status in requests), requests
