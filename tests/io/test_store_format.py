"""What ``save``, ``generate`` and ``convert`` write: label codes, value tables, checksums, chunk sizes.

* Labels are stored as the smallest unsigned integer codes plus the sorted
  label values; ``open`` gives the labels back, and every form scores to
  the last bit like the labels it came from (and like its integer coding).
* Every chunk of every array carries a CRC32C checksum: a real bit flipped
  in a real store file is a StoreError naming the variable and chunk, never
  a score.
* Old stores (int64 labels, strings with a missing-entry marker) and plain
  ``to_zarr`` stores of any dtype are still read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dask.array as da
import numpy as np
import pytest
import xarray as xr
import zarr

import daskbicl
from daskbicl.codes import coding_of
from daskbicl.errors import StoreError
from daskbicl.io import coding
from daskbicl.io.synthetic_biclustering import random_biclustering

ALL = [name for name, m in daskbicl.MEASURES.items() if m.family == "partition"]


def _meta(path, var) -> dict:
    with open(os.path.join(path, var, "zarr.json"), encoding="utf-8") as fh:
        return json.load(fh)


FORMS = {
    "int64 0..k-1": lambda c: c,
    "int64 spread": lambda c: c * 1_000_003 + 7,
    "int64 near 2**63": lambda c: np.int64(2**63 - 1) - c * 3,
    "uint64 beyond int64": lambda c: np.uint64(2**63) + c.astype(np.uint64),
    "int8": lambda c: c.astype(np.int8),
    "float": lambda c: c * 0.5,
    "str object": lambda c: np.array([f"g{x:04d}" for x in c], dtype=object),
    "str U": lambda c: np.array([f"cluster-{x}" for x in c]),
    "str StringDType": lambda c: np.array([f"é{x}" for x in c]).astype(np.dtypes.StringDType()),
    "bool": lambda c: c % 2 == 1,
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("lazy", [False, True])
def test_every_storable_form_round_trips_and_scores_like_its_labels(tmp_path, form, lazy):
    rng = np.random.default_rng(len(form))
    z, w = rng.integers(0, 40, 5000), rng.integers(0, 7, 300)
    zp, wp = rng.integers(0, 40, 5000), rng.integers(0, 7, 300)
    f = FORMS[form]
    truth, pred = (f(z), f(w)), (f(zp), f(wp))
    if lazy:  # dask input: one pass finds the distinct labels, a second writes the codes
        truth = tuple(da.from_array(x, chunks=997) for x in truth)
    path = daskbicl.save(truth, tmp_path / "t.zarr", chunk=1024)
    back = daskbicl.open(path)
    np.testing.assert_array_equal(back.row_labels.values, np.asarray(f(z)))
    meta = _meta(path, "row_labels")
    assert meta["data_type"] == "uint8" and meta["attributes"]["daskbicl_label_values"] == "row_label_values"
    assert coding_of(back.row_labels.data) is not None  # counted as codes
    want = daskbicl.score((f(z), f(w)), pred, measures=ALL)
    assert daskbicl.score(back, pred, measures=ALL) == want
    assert daskbicl.score(path, pred, measures=ALL) == want


def test_unassigned_entries_get_their_own_code(tmp_path):
    z = np.array([3, -1, 7, -5, 3, 7])
    s = np.array(["a", None, "b", float("nan"), "a", "b"], dtype=object)
    path = daskbicl.save((z, s), tmp_path / "u.zarr")
    meta = _meta(path, "row_labels")["attributes"]
    assert meta["daskbicl_unassigned_code"] == 2
    back = daskbicl.open(path)
    assert back.row_labels.values.tolist() == [3, -1, 7, -1, 3, 7]  # every negative reads back as -1
    assert back.col_labels.values.tolist() == ["a", None, "b", None, "a", "b"]
    pred = (np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 0, 0, 1]))
    for policy in ("cluster", "singleton"):
        assert daskbicl.score(back, pred, unassigned=policy) == daskbicl.score((z, s), pred, unassigned=policy)
    tables = daskbicl.contingency(back, pred, unassigned="cluster")
    assert list(tables.col_table.truth_labels) == ["a", "b", None]
    assert list(tables.row_table.truth_labels) == [-1, 3, 7]


def test_contingency_shows_the_labels_not_the_codes(tmp_path):
    ids = np.array([10**15 + 3, 10**15 + 3, 42, 42, 7])
    path = daskbicl.save((ids, np.array(["x", "y", "y"])), tmp_path / "ids.zarr")
    tables = daskbicl.contingency(path, (np.array([0, 1, 1, 1, 0]), np.array([1, 1, 2])))
    assert tables.rows.coords["truth"].values.tolist() == [7, 42, 10**15 + 3]
    assert tables.cols.coords["truth"].values.tolist() == ["x", "y"]


def test_codes_widen_with_the_number_of_labels(tmp_path):
    z = np.arange(300) * 11
    path = daskbicl.save((z, np.zeros(5, dtype=np.int64)), tmp_path / "w.zarr")
    assert _meta(path, "row_labels")["data_type"] == "uint16"
    assert _meta(path, "col_labels")["data_type"] == "uint8"
    np.testing.assert_array_equal(daskbicl.open(path).row_labels.values, z)


def test_too_many_distinct_labels_are_stored_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setattr(coding, "MAX_VALUES", 50)
    z = np.arange(200) * 3
    path = daskbicl.save((z, np.zeros(5, dtype=np.int64)), tmp_path / "many.zarr")
    assert "daskbicl_label_values" not in _meta(path, "row_labels")["attributes"]
    np.testing.assert_array_equal(daskbicl.open(path).row_labels.values, z)
    lazy = da.from_array(z, chunks=30)
    path = daskbicl.save((lazy, np.zeros(5, dtype=np.int64)), tmp_path / "many-lazy.zarr")
    np.testing.assert_array_equal(daskbicl.open(path).row_labels.values, z)


def test_generated_stores_hold_codes_and_spread_preds_stay_compact(tmp_path):
    out = subprocess.run([sys.executable, "-m", "daskbicl", "generate", str(tmp_path), "--rows", "30000", "--cols",
                          "500", "--row-clusters", "100", "--col-clusters", "10", "--noise", "0.2",
                          "--scheduler", "synchronous"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for store in ("truth.zarr", "pred.zarr"):
        assert _meta(tmp_path / store, "row_labels")["data_type"] == "uint8"
        codecs = [c["name"] for c in _meta(tmp_path / store, "row_labels")["codecs"]]
        assert codecs[-1] == "crc32c"
    pred = daskbicl.open(tmp_path / "pred.zarr")
    assert int(pred.row_labels.max()) > 1_000_000  # spread labels (k·1,000,003 + 7) ...
    assert coding_of(pred.row_labels.data).codes.dtype == np.uint8  # ... counted as one-byte codes
    truth = daskbicl.open(tmp_path / "truth.zarr")
    assert daskbicl.score(truth, pred) == daskbicl.score(
        (truth.row_labels.values, truth.col_labels.values), (pred.row_labels.values, pred.col_labels.values))


def test_convert_writes_codes_with_checksums(tmp_path):
    np.save(tmp_path / "rows.npy", np.array([5, 5, 2**40, 9]))
    (tmp_path / "cols.txt").write_text("u\nv\nu\n")
    out = subprocess.run([sys.executable, "-m", "daskbicl", "convert", str(tmp_path / "c.zarr"), "--rows",
                          str(tmp_path / "rows.npy"), "--cols", str(tmp_path / "cols.txt")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for var in ("row_labels", "col_labels", "row_label_values", "col_label_values"):
        assert [c["name"] for c in _meta(tmp_path / "c.zarr", var)["codecs"]][-1] == "crc32c", var
    back = daskbicl.open(tmp_path / "c.zarr")
    assert back.row_labels.values.tolist() == [5, 5, 2**40, 9]
    assert back.col_labels.values.tolist() == ["u", "v", "u"]


def test_masks_are_bool_with_bounded_chunks_and_checksums(tmp_path):
    truth = random_biclustering(50_000, 3000, 600, density=0.05, seed=1)
    path = daskbicl.save(truth, tmp_path / "b.zarr")
    meta = _meta(path, "row_mask")
    assert meta["data_type"] == "bool"
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [600, 27962]  # 16 MiB / 600 biclusters
    assert [c["name"] for c in meta["codecs"]][-1] == "crc32c"
    assert daskbicl.score(path, truth, measures=["fmeasure"]) == daskbicl.score(truth, truth, measures=["fmeasure"])


def _flip_a_bit(path, var, chunk="0", byte=None) -> str:
    """Flip one bit in the middle of a stored chunk file (as a failing disk would)."""
    folder = os.path.join(path, var, "c")
    name = os.path.join(folder, *chunk.split("."))
    with open(name, "r+b") as fh:
        data = bytearray(fh.read())
        at = len(data) // 2 if byte is None else byte
        data[at] ^= 0x10
        fh.seek(0)
        fh.write(data)
    return name


@pytest.mark.parametrize("var, chunk", [("row_labels", "1"), ("col_labels", "0"), ("row_label_values", "0")])
def test_a_flipped_bit_in_a_label_store_is_a_named_error(tmp_path, var, chunk):
    rng = np.random.default_rng(0)
    z = rng.integers(0, 50, 20_000) * 13
    w = np.array([f"s{x}" for x in rng.integers(0, 4, 600)])
    path = daskbicl.save((z, w), tmp_path / "t.zarr", chunk=8192)
    pred = (rng.integers(0, 3, 20_000), rng.integers(0, 3, 600))
    before = daskbicl.score(path, pred)
    _flip_a_bit(path, var, chunk)
    with pytest.raises(StoreError) as info:
        daskbicl.score(path, pred)
    text = str(info.value)
    assert var in text and "checksum" in text.lower()
    if var != "row_label_values":
        assert f"chunk {chunk}" in text
    _flip_a_bit(path, var, chunk)  # flipped back: the same scores again
    assert daskbicl.score(path, pred) == before


def test_a_flipped_bit_in_a_mask_is_a_named_error_on_a_cluster(tmp_path, client):
    truth = random_biclustering(20_000, 900, 5, density=0.2, seed=3, chunk=4096)
    path = daskbicl.save(truth, tmp_path / "b.zarr")
    _flip_a_bit(path, "row_mask", "0.2", byte=40)
    with pytest.raises(StoreError, match=r"variable row_mask chunk 0\.2.*checksum"):
        daskbicl.score(path, truth, measures=["fmeasure"])


def test_a_flipped_bit_in_every_byte_position_is_caught(tmp_path):
    """Not only mid-file: the codec header, the compressed data and the checksum itself."""
    path = daskbicl.save((np.arange(5000) % 17, np.arange(40) % 3), tmp_path / "t.zarr", chunk=5000)
    size = os.path.getsize(os.path.join(path, "row_labels", "c", "0"))
    for byte in sorted({0, 1, 5, size // 3, size // 2, size - 5, size - 1}):
        _flip_a_bit(path, "row_labels", "0", byte=byte)
        with pytest.raises(StoreError, match="row_labels chunk 0"):
            daskbicl.open(path).row_labels.compute()
        _flip_a_bit(path, "row_labels", "0", byte=byte)


def test_old_int64_and_marker_string_stores_still_read(tmp_path):
    """Stores written before label codes: int64 labels, strings with the '' missing marker."""
    z = np.array([5, 5, 2**62, 9], dtype=np.int64)
    s = np.array(["a", "", "b", "a"]).astype(np.dtypes.StringDType())
    ds = xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", s)})
    ds.col_labels.attrs["daskbicl_missing"] = ""
    ds.to_zarr(tmp_path / "old.zarr", consolidated=False)
    group = zarr.open_group(tmp_path / "old.zarr", mode="r+")
    group.attrs.update({"daskbicl_chunks": "complete", "daskbicl_kind": "partition"})
    back = daskbicl.open(tmp_path / "old.zarr")
    assert back.row_labels.values.tolist() == z.tolist()
    assert back.col_labels.values.tolist() == ["a", None, "b", "a"]
    pred = (np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]))
    assert daskbicl.score(back, pred, unassigned="cluster") == daskbicl.score(
        (z, np.array(["a", None, "b", "a"], dtype=object)), pred, unassigned="cluster")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64", "float32", "U", "bool"])
def test_plain_to_zarr_stores_of_any_dtype(tmp_path, dtype):
    rng = np.random.default_rng(1)
    c = rng.integers(0, 5, 3000)
    z = c.astype(str) if dtype == "U" else (c % 2 == 0 if dtype == "bool" else c.astype(dtype))
    xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", c[:40])}).chunk({"row": 700}).to_zarr(
        tmp_path / "p.zarr", consolidated=False)
    pred = (rng.integers(0, 3, 3000), rng.integers(0, 3, 40))
    assert daskbicl.score(tmp_path / "p.zarr", pred) == daskbicl.score((z, c[:40]), pred)
