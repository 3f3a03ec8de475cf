"""Zarr stores on disk: round trips, laziness, atomic writes."""

from __future__ import annotations

import os
import shutil

import dask.array as da
import numpy as np
import pytest
import xarray as xr

import daskbicl
from daskbicl.errors import StoreError, StoreReadError


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


def test_a_plain_to_zarr_store_is_read_by_its_variables(tmp_path):
    """A store written by Dataset.to_zarr, without the daskbicl_kind attribute, scores like the Dataset."""
    import subprocess
    import sys

    import xarray as xr

    rng = np.random.default_rng(5)
    z, w, zp, wp = rng.integers(0, 4, 500), rng.integers(0, 3, 60), rng.integers(0, 4, 500), rng.integers(0, 3, 60)
    xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", w)}).to_zarr(tmp_path / "t.zarr")
    xr.Dataset({"row_labels": ("row", zp), "col_labels": ("col", wp)}).chunk(100).to_zarr(tmp_path / "p.zarr")
    rm, cm = rng.random((3, 500)) < 0.3, rng.random((3, 60)) < 0.3
    xr.Dataset({"row_mask": (("bicluster", "row"), rm), "col_mask": (("bicluster", "col"), cm)}).to_zarr(tmp_path / "b.zarr")
    assert daskbicl.score(tmp_path / "t.zarr", tmp_path / "p.zarr") == daskbicl.score((z, w), (zp, wp))
    assert daskbicl.open(tmp_path / "b.zarr").attrs["daskbicl_kind"] == "biclustering"
    want = daskbicl.score((z, w), daskbicl.biclustering(rm, cm), measures=["fmeasure", "e4sc"])
    assert daskbicl.score(tmp_path / "t.zarr", tmp_path / "b.zarr", measures=["fmeasure", "e4sc"]) == want
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"),
                           "--json", "--measure", "cari", "--scheduler", "synchronous"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"cari": ' in proc.stdout


def test_save_creates_missing_folders(tmp_path):
    """As ``Dataset.to_zarr`` does; a file in the way is refused."""
    daskbicl.save(([0], [0]), tmp_path / "nope" / "deeper" / "t.zarr")
    assert daskbicl.open(tmp_path / "nope" / "deeper" / "t.zarr").row_labels.values.tolist() == [0]
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a folder"):
        daskbicl.save(([0], [0]), tmp_path / "file" / "t.zarr")


def test_generated_data_is_deterministic(tmp_path):
    a = daskbicl.random_partition(5000, 300, 4, 3, seed=3)
    b = daskbicl.random_partition(5000, 300, 4, 3, seed=3)
    np.testing.assert_array_equal(a.row_labels.values, b.row_labels.values)
    p = daskbicl.perturb(a, 0.0, seed=1)  # relabeling only
    assert daskbicl.score(a, p)["cari"] == 1.0
    noisy = daskbicl.score(a, daskbicl.perturb(a, 0.3, seed=1))["cari"]
    assert 0.0 < noisy < 1.0


def test_a_deleted_chunk_is_an_error_not_zeros(tmp_path):
    """Zarr reads a missing chunk as its fill value (0, a valid label): a store
    written by save() has every chunk, and open() says which are missing."""
    path = daskbicl.save((np.zeros(100, dtype=np.int64), np.arange(10)), tmp_path / "t.zarr", chunk=10)
    assert len(os.listdir(os.path.join(path, "row_labels", "c"))) == 10  # all-zero chunks written too
    daskbicl.open(path)
    os.remove(os.path.join(path, "row_labels", "c", "3"))
    with pytest.raises(StoreError, match="'row_labels' is missing 1 of its 10 chunks"):
        daskbicl.open(path)


def test_a_chunk_deleted_after_the_open_is_an_error_naming_it_not_zeros(tmp_path):
    """The reader keeps the array the open found (no second read of metadata): Zarr would read a chunk object
    deleted since as its fill value (0, a valid label); a store save() wrote had every chunk when opened."""
    path = daskbicl.save((np.zeros(100, dtype=np.int64), np.arange(10)), tmp_path / "t.zarr", chunk=10)
    lazy = daskbicl.open(path)
    os.remove(os.path.join(path, "row_labels", "c", "3"))
    with pytest.raises(StoreReadError, match=r"t\.zarr \(variable row_labels chunk 3\): a file is missing .*"
                                             r"every chunk was there when the store was opened: 'row_labels/c/3'"):
        daskbicl.score(lazy, lazy, measures="cari")


def test_a_plain_store_reads_its_unwritten_chunks_as_fill_values_until_it_is_deleted(tmp_path):
    """A plain to_zarr writes no chunk of fill values: those read as the fill value while the array's metadata
    is there; once the store is deleted, a read fails instead of scoring zeros."""
    labels = np.r_[np.zeros(500, dtype=np.int64), np.arange(500) % 3]
    plain = xr.Dataset({"row_labels": ("row", labels), "col_labels": ("col", np.arange(50) % 3)})
    plain.chunk({"row": 250}).to_zarr(tmp_path / "p.zarr", consolidated=False)
    assert sorted(os.listdir(tmp_path / "p.zarr" / "row_labels" / "c")) == ["2", "3"]  # chunks 0, 1: fill values
    lazy = daskbicl.open(tmp_path / "p.zarr")
    np.testing.assert_array_equal(lazy.row_labels.values, labels)
    shutil.rmtree(tmp_path / "p.zarr")
    with pytest.raises(StoreReadError, match=r"p\.zarr \(variable row_labels chunk \d\): a file is missing .*"
                                             r"and so is the array's metadata"):
        daskbicl.score(lazy, lazy, measures="cari")


def test_a_store_opened_twice_has_the_same_read_tasks_whatever_the_order_zarr_listed_it(tmp_path):
    """xarray names the read tasks by a token of its store object; the members' metadata arrive in the order
    Zarr's concurrent reads answer, which must not change the names (a batch reads a shared truth once)."""
    import dataclasses

    import zarr
    from dask.base import tokenize
    from zarr.core.group import ConsolidatedMetadata

    from daskbicl.io.groups import dataset_of, open_group, with_members

    path = daskbicl.save(daskbicl.random_partition(3000, 200, 4, 3, seed=1, chunk=1000), tmp_path / "t.zarr")
    group = with_members(open_group(str(path), None, remote=False))
    members = group.metadata.consolidated_metadata.metadata
    backwards = dataclasses.replace(group.metadata, consolidated_metadata=ConsolidatedMetadata(
        metadata=dict(reversed(members.items()))))
    other = zarr.Group(zarr.AsyncGroup(metadata=backwards, store_path=group.store_path))
    assert list(other.metadata.consolidated_metadata.metadata) != list(members)
    names = [{var: ds[var].data.name for var in ds.data_vars} for ds in (dataset_of(str(path), g)
                                                                        for g in (group, other))]
    assert names[0] == names[1]
    a, b = daskbicl.open(path), daskbicl.open(path)
    assert a.row_labels.data.name == b.row_labels.data.name
    readers = [next(v for v in ds.row_labels.data.dask.values() if type(v).__name__ == "_ChunkReader")
               for ds in (a, b)]
    assert readers[0] is not readers[1] and tokenize(readers[0]) == tokenize(readers[1])
    assert dataset_of(str(path), group, "digest-1")["row_labels"].data.name != names[0]["row_labels"]


def test_all_false_mask_chunks_are_written_and_checked(tmp_path):
    rm = np.zeros((2, 40), dtype=bool)
    rm[0, :3] = True
    path = daskbicl.save(daskbicl.biclustering(rm, np.ones((2, 5), dtype=bool)), tmp_path / "b.zarr", chunk=10)
    assert len(os.listdir(os.path.join(path, "row_mask", "c", "0"))) == 4
    os.remove(os.path.join(path, "row_mask", "c", "0", "2"))
    with pytest.raises(StoreError, match="'row_mask' is missing 1"):
        daskbicl.score(path, path)


def test_overwrite_replaces_only_a_daskbicl_store(tmp_path):
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "file.txt").write_text("precious")
    with pytest.raises(StoreError, match="is not a daskbicl store"):
        daskbicl.save(([0, 1], [0]), victim, overwrite=True)
    assert (victim / "sub" / "file.txt").read_text() == "precious"
    (tmp_path / "empty").mkdir()
    daskbicl.save(([0, 1], [0]), tmp_path / "empty", overwrite=True)  # an empty folder is fine
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError, match="is a file"):
        daskbicl.save(([0, 1], [0]), tmp_path / "f", overwrite=True)


def test_user_attributes_are_kept(tmp_path):
    ds = daskbicl.partition([0, 1], [0]).assign_attrs(algorithm="LBM", seed=3)
    back = daskbicl.open(daskbicl.save(ds, tmp_path / "t.zarr"))
    assert back.attrs["algorithm"] == "LBM" and back.attrs["seed"] == 3
    assert back.attrs["daskbicl_kind"] == "partition"


def test_a_fill_value_does_not_mask_label_zero(tmp_path):
    """A store written by other tools with _FillValue = 0 keeps label 0 (no CF masking)."""
    import xarray as xr

    ds = xr.Dataset({"row_labels": ("row", np.array([0, 1, 0])), "col_labels": ("col", np.array([0, 0]))})
    ds.row_labels.encoding = {"_FillValue": 0}
    ds.attrs["daskbicl_kind"] = "partition"
    ds.to_zarr(tmp_path / "x.zarr", consolidated=False)
    back = daskbicl.open(tmp_path / "x.zarr")
    assert back.row_labels.dtype.kind == "i"
    np.testing.assert_array_equal(back.row_labels.values, [0, 1, 0])


def test_repeated_failed_writes_leave_no_temporary_folders(tmp_path):
    """The failing chunk raises while another thread still writes the next one:
    that writer must not re-create the temporary folder after it was removed."""

    def explode(block, block_info=None):
        if block_info[0]["chunk-location"][0] == 2:
            raise RuntimeError("disk on fire")
        return block

    bad = da.from_array(np.arange(8) % 3, chunks=2).map_blocks(explode, dtype=np.int64)
    lazy = daskbicl.partition(bad, da.from_array(np.array([0, 1]), chunks=1))
    daskbicl.save(([7, 7, 7, 7, 7, 7, 7, 7], [0, 1]), tmp_path / "s.zarr")
    for _ in range(8):
        with pytest.raises(RuntimeError, match="disk on fire"):
            daskbicl.save(lazy, tmp_path / "s.zarr", overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["s.zarr"]


def test_damaged_array_metadata_is_named(tmp_path):
    path = daskbicl.save(([0, 1], [0]), tmp_path / "t.zarr")
    with open(os.path.join(path, "row_labels", "zarr.json"), "w") as fh:
        fh.write("{not json")
    with pytest.raises(StoreError, match="row_labels/zarr.json is damaged"):
        daskbicl.open(path)


def test_chunk_reads_leave_the_warning_filters_alone_and_threads_share_one_open(tmp_path, monkeypatch):
    """A store variable's reader opens its Zarr array once per process; neither the open nor the chunk
    reads enter ``warnings.catch_warnings``, which swaps the process's filters and is not thread-safe.
    Eight threads reading a fresh reader at once get their chunks."""
    import pickle
    import threading
    import warnings

    from daskbicl.io import store

    labels = (np.arange(40_000) * 7919) % 13
    path = daskbicl.save((labels, labels[:30]), tmp_path / "s.zarr", chunk=4096)
    data = daskbicl.open(path).row_labels.data
    reader = pickle.loads(pickle.dumps(store._ChunkReader(path, "row_labels", None, data.shape, data.dtype,
                                                          data.chunks)))
    entered = []
    real = warnings.catch_warnings

    def counted(*args, **kwargs):
        entered.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(warnings, "catch_warnings", counted)
    keys = [(slice(start, min(start + 4096, labels.size)),) for start in range(0, labels.size, 4096)]
    got: dict = {}
    threads = [threading.Thread(target=lambda k=k: got.__setitem__(k[0].start, reader[k])) for k in keys[:8]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for key in keys[8:]:
        got[key[0].start] = reader[key]
    assert entered == []  # no swap of the process's filters: neither the open nor the reads
    back = np.concatenate([got[start] for start in sorted(got)])
    assert back.dtype == np.uint8  # the stored codes
    np.testing.assert_array_equal(back, labels)  # codes 0..12 are the labels 0..12 here
    before = len(entered)
    for key in keys:
        reader[key]
    assert len(entered) == before


def test_zarr_stays_quiet_while_threads_open_stores_and_other_warnings_show(tmp_path, monkeypatch):
    """One filter, installed once, keeps Zarr's warnings quiet: sixteen threads opening stores at once
    leave the filter list as it was (no swapped copies restored over each other), every other warning
    is still seen, and a removed filter comes back once."""
    import sys
    import threading
    import warnings

    from daskbicl.io import store

    path = daskbicl.save(((np.arange(3000) * 7) % 5, np.arange(40) % 3), tmp_path / "s.zarr", chunk=1000)
    store._quiet_zarr()  # as at import (pytest collects inside catch_warnings, which drops what import added)
    int(daskbicl.open(path).row_labels.sum().compute(scheduler="sync"))  # xarray adds its own filters once
    before = list(warnings.filters)
    ours = [f for f in before if f[0] == "ignore" and f[3] is not None and f[3].pattern == r"zarr\..*"]
    assert len(ours) == 1
    errors: list = []
    barrier = threading.Barrier(16)
    entered = []
    real = warnings.catch_warnings

    def counted(*args, **kwargs):  # noted when daskbicl's own code enters it (dask and xarray do, elsewhere)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("daskbicl"):
            entered.append(caller)
        return real(*args, **kwargs)

    monkeypatch.setattr(warnings, "catch_warnings", counted)

    def opener():
        try:
            barrier.wait()
            ds = daskbicl.open(path)
            # the dask array's sum: xarray's reductions enter catch_warnings themselves, which, run in
            # sixteen threads at once, can leave their own filters behind (xarray's race, not the reads')
            int(ds.row_labels.data.sum().compute(scheduler="sync"))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    monkeypatch.setattr(warnings, "catch_warnings", real)
    assert errors == []
    assert entered == []  # no open swapped the process's filters
    # the same filters (as a set: xarray's own decode re-adds a filter of its own on every open, which
    # threads can briefly duplicate; that is xarray's, not ours)
    assert set(warnings.filters) == set(before)
    store._quiet_zarr()  # a later open checks the filter is still there
    assert sum(f == ours[0] for f in warnings.filters) == 1  # never added twice
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", module=r"zarr\..*")  # as the process has it
        warnings.warn_explicit("zarr says", UserWarning, "group.py", 1, module="zarr.core.group")
        warnings.warn_explicit("someone else says", UserWarning, "mine.py", 1, module="mine")
    assert [str(w.message) for w in got] == ["someone else says"]
    removed = [f for f in warnings.filters if f != ours[0]]
    with warnings.catch_warnings():
        warnings.filters[:] = removed  # something dropped it: the next open puts it back, once
        store._quiet_zarr()
        store._quiet_zarr()
        assert sum(f[3] is not None and getattr(f[3], "pattern", None) == r"zarr\..*" for f in warnings.filters) == 1
