"""Zarr stores on disk: round trips, laziness, atomic writes."""

from __future__ import annotations

import os

import dask.array as da
import numpy as np
import pytest

import daskbicl
from daskbicl.errors import StoreError


def test_round_trip_keeps_labels_and_coordinates(tmp_path):
    ds = daskbicl.partition([5, 5, 2**62], [0, 1], row=["g1", "g2", "g3"], col=["s1", "s2"])
    path = daskbicl.save(ds, tmp_path / "t.zarr")
    back = daskbicl.open(path)
    assert back.attrs["daskbicl_kind"] == "partition"
    assert isinstance(back.row_labels.data, da.Array)  # lazy
    np.testing.assert_array_equal(back.row_labels.values, [5, 5, 2**62])
    assert list(back.indexes["row"]) == ["g1", "g2", "g3"]
    assert daskbicl.score(path, ds)["cari"] == 1.0


def test_chunked_on_disk(tmp_path):
    z = np.arange(10_000) % 7
    path = daskbicl.save((z, z[:50]), tmp_path / "c.zarr", chunk=1000)
    back = daskbicl.open(path)
    assert back.row_labels.data.chunks == ((1000,) * 10,)


def test_refuses_to_overwrite_unless_asked(tmp_path):
    target = tmp_path / "t.zarr"
    daskbicl.save(([0, 1], [0]), target)
    with pytest.raises(StoreError, match="already exists"):
        daskbicl.save(([1, 1], [0]), target)
    daskbicl.save(([1, 2], [0]), target, overwrite=True)
    np.testing.assert_array_equal(daskbicl.open(target).row_labels.values, [1, 2])
    assert sorted(os.listdir(tmp_path)) == ["t.zarr"]  # no temporary left behind


def test_failed_write_leaves_nothing_half_written(tmp_path):
    """A computation that fails midway leaves no store and no temporary folder,
    and an existing store at the target is untouched."""
    def explode(block):
        if block[0] >= 500:
            raise RuntimeError("disk on fire")
        return block

    bad = da.arange(1000, chunks=100).map_blocks(explode, dtype=np.int64)
    with pytest.raises(RuntimeError, match="disk on fire"):
        daskbicl.save((bad, np.zeros(3, dtype=np.int64)), tmp_path / "new.zarr")
    assert os.listdir(tmp_path) == []

    daskbicl.save(([7, 7], [0]), tmp_path / "old.zarr")
    with pytest.raises(RuntimeError, match="disk on fire"):
        daskbicl.save((bad, np.zeros(3, dtype=np.int64)), tmp_path / "old.zarr", overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["old.zarr"]
    np.testing.assert_array_equal(daskbicl.open(tmp_path / "old.zarr").row_labels.values, [7, 7])


def test_a_store_without_its_kind_attribute_is_rejected(tmp_path):
    """The kind attribute is written last: a store whose writer died before it is invalid."""
    import zarr

    path = daskbicl.save(([0, 1], [0]), tmp_path / "t.zarr")
    group = zarr.open_group(path, mode="r+")
    del group.attrs["daskbicl_kind"]
    with pytest.raises(StoreError, match="not a daskbicl store"):
        daskbicl.open(path)


def test_save_into_missing_folder(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        daskbicl.save(([0], [0]), tmp_path / "nope" / "t.zarr")


def test_generated_data_is_deterministic(tmp_path):
    a = daskbicl.random_partition(5000, 300, 4, 3, seed=3)
    b = daskbicl.random_partition(5000, 300, 4, 3, seed=3)
    np.testing.assert_array_equal(a.row_labels.values, b.row_labels.values)
    p = daskbicl.perturb(a, 0.0, seed=1)  # relabeling only
    assert daskbicl.score(a, p)["cari"] == 1.0
    noisy = daskbicl.score(a, daskbicl.perturb(a, 0.3, seed=1))["cari"]
    assert 0.0 < noisy < 1.0
