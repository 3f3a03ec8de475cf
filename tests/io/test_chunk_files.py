"""Whole chunks of a local store's one-byte arrays read from their files (daskbicl/io/chunk_files.py).

The same values as Zarr's read, chunk by chunk (edge chunks, 1-D codes and
2-D masks), whole scores equal with and without it (threads and a real
cluster), and every case it does not know or cannot read (other dtypes,
codecs, Zarr v2, part of a chunk, a bad checksum, a damaged or missing
chunk file) left to Zarr, which reads or fails as before.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import daskbicl
from daskbicl.errors import StoreReadError
from daskbicl.io import store
from daskbicl.io.chunk_files import ChunkFiles


def _stores(tmp_path):
    rng = np.random.default_rng(28)
    rows, cols = rng.integers(0, 7, 10_001), rng.integers(0, 3, 2997)
    noisy = np.where(rng.random(rows.size) < 0.2, rng.integers(0, 9, rows.size), rows)
    daskbicl.save((rows, cols), tmp_path / "t.zarr", chunk=1024)
    daskbicl.save((noisy, cols[::-1].copy()), tmp_path / "p.zarr", chunk=1000)
    bt, bp = rng.random((5, 3001)) < 0.05, rng.random((4, 3001)) < 0.3
    daskbicl.save(daskbicl.biclustering(bt, rng.random((5, 1501)) < 0.2), tmp_path / "bt.zarr", chunk=512)
    daskbicl.save(daskbicl.biclustering(bp, rng.random((4, 1501)) < 0.5), tmp_path / "bp.zarr", chunk=700)
    return tmp_path


def _chunk_keys(shape, chunks):
    grids = [range(0, n, c) for n, c in zip(shape, chunks)]
    for starts in np.array(np.meshgrid(*grids, indexing="ij")).reshape(len(shape), -1).T:
        yield tuple(slice(int(s), int(min(s + c, n))) for s, c, n in zip(starts, chunks, shape))


@pytest.mark.parametrize("name,var", [("t", "row_labels"), ("p", "row_labels"), ("p", "col_labels"),
                                      ("bt", "row_mask"), ("bp", "col_mask")])
def test_every_chunk_read_from_its_file_equals_zarrs_read(tmp_path, name, var):
    _stores(tmp_path)
    folder = str(tmp_path / f"{name}.zarr" / var)
    array = zarr.open_array(folder, mode="r")
    files = ChunkFiles.of(array, folder)
    assert files is not None and array.dtype.itemsize == 1
    keys = list(_chunk_keys(array.shape, array.chunks))
    assert any(k[-1].stop - k[-1].start < array.chunks[-1] for k in keys)  # an edge chunk is among them
    kept = [files.read(key) for key in keys]  # all read first: no result shares the reused file buffer
    for key, got in zip(keys, kept):
        want = array[key]
        assert got is not None and got.dtype == want.dtype and got.shape == want.shape and got.flags.writeable
        np.testing.assert_array_equal(got, want)
    # not one whole chunk: left to zarr
    first = keys[0]
    assert files.read(first[:-1] + (slice(first[-1].start, first[-1].stop - 1),)) is None  # part of a chunk
    assert files.read((slice(1, 1 + array.chunks[0]),) + first[1:]) is None  # across two chunks
    assert files.read(first[:-1]) is None and files.read(first + (slice(0, 1),)) is None  # other dimensions
    assert files.read((slice(0, array.chunks[0], 2),) + first[1:]) is None  # a step


def test_scores_are_equal_with_and_without_the_chunk_files(tmp_path, monkeypatch):
    _stores(tmp_path)
    pairs = [("t", "p"), ("bt", "bp")]
    with_files = [daskbicl.score(tmp_path / f"{a}.zarr", tmp_path / f"{b}.zarr") for a, b in pairs]
    monkeypatch.setattr(store, "CHUNK_FILES", False)
    through_zarr = [daskbicl.score(tmp_path / f"{a}.zarr", tmp_path / f"{b}.zarr") for a, b in pairs]
    for got, want in zip(with_files, through_zarr):
        assert list(got) == list(want) and len(got) > 5
        for key in want:
            assert got[key] == want[key] or (np.isnan(got[key]) and np.isnan(want[key])), key


def test_a_cluster_reads_the_chunk_files_and_scores_the_same(tmp_path, client):
    _stores(tmp_path)
    on_cluster = daskbicl.score(tmp_path / "t.zarr", tmp_path / "p.zarr")
    used = client.run(lambda: __import__("daskbicl.io.store", fromlist=["CHUNK_FILES"]).CHUNK_FILES)
    assert set(used.values()) == {True}
    truth, pred = (daskbicl.open(tmp_path / f"{n}.zarr") for n in "tp")
    in_memory = daskbicl.score((truth.row_labels.values, truth.col_labels.values),
                               (pred.row_labels.values, pred.col_labels.values))
    assert list(on_cluster) == list(in_memory)
    for key in in_memory:
        assert on_cluster[key] == in_memory[key] or (np.isnan(on_cluster[key]) and np.isnan(in_memory[key])), key


def test_what_it_does_not_know_is_left_to_zarr(tmp_path):
    rng = np.random.default_rng(3)
    wide = rng.integers(0, 2**40, 3000)  # too many distinct labels to code: stored as int64 (zstd)
    daskbicl.save((wide, np.arange(5)), tmp_path / "w.zarr", chunk=1000)
    folder = str(tmp_path / "w.zarr" / "row_labels")
    assert zarr.open_array(folder, mode="r").dtype != np.uint8
    assert ChunkFiles.of(zarr.open_array(folder, mode="r"), folder) is None
    v2 = zarr.create_array(str(tmp_path / "v2"), shape=(100,), chunks=(10,), dtype="u1", zarr_format=2)
    v2[:] = np.arange(100)
    assert ChunkFiles.of(v2, str(tmp_path / "v2")) is None
    zstd = zarr.create_array(str(tmp_path / "z"), shape=(100,), chunks=(10,), dtype="u1")  # zarr's default codecs
    zstd[:] = np.arange(100)
    assert ChunkFiles.of(zstd, str(tmp_path / "z")) is None


def test_a_bad_checksum_or_a_damaged_chunk_is_read_by_zarr_and_named(tmp_path):
    labels = np.arange(5000) % 11
    daskbicl.save((labels, np.arange(7)), tmp_path / "d.zarr", chunk=1000)
    folder = tmp_path / "d.zarr" / "row_labels"
    array = zarr.open_array(str(folder), mode="r")
    files = ChunkFiles.of(array, str(folder))
    assert files is not None
    chunk = folder / "c" / "2"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0x01  # the stored checksum no longer matches
    chunk.write_bytes(bytes(data))
    assert files.read((slice(2000, 3000),)) is None
    assert files.read((slice(1000, 2000),)) is not None
    with pytest.raises(StoreReadError, match=r"row_labels chunk 2.*checksum"):
        daskbicl.score(tmp_path / "d.zarr", (labels, np.arange(7)))
    (folder / "c" / "3").write_bytes(b"\x00garbage")
    assert files.read((slice(3000, 4000),)) is None
    (folder / "c" / "4").unlink()  # gone after the store was opened: zarr reads the fill value, as before
    assert files.read((slice(4000, 5000),)) is None


#: Read tasks as large as they can be: one thread, one task per thread (each task covers many stored chunks).
FEW_TASKS = {"num_workers": 1, "daskbicl.tasks_per_thread": 1}


@pytest.mark.parametrize("files_on", [True, False])
@pytest.mark.parametrize("name,var", [("t", "row_labels"), ("p", "col_labels"), ("bt", "row_mask"),
                                      ("bp", "col_mask")])
def test_a_read_task_covers_a_range_of_stored_chunks_with_zarrs_values(tmp_path, monkeypatch, name, var, files_on):
    """A store opened for few threads reads several stored chunks per task (whole chunks, the last maybe short),
    each from its file or through zarr: the block is zarr's read of the same range, and the array is the same."""
    import dask

    _stores(tmp_path)
    monkeypatch.setattr(store, "CHUNK_FILES", files_on)
    path = tmp_path / f"{name}.zarr"
    stored = zarr.open_array(str(path / var), mode="r")
    with dask.config.set({"num_workers": 1, "daskbicl.tasks_per_thread": 2}):
        ds = daskbicl.open(path)
    blocks, n = ds[var].data.chunks[-1], stored.nchunks
    group = max(1, n // 2)  # at least two tasks, as many stored chunks each as that leaves
    assert len(blocks) == -(-n // group) and blocks[0] == group * stored.chunks[-1]
    reader = store._ChunkReader(str(path), var, None, stored.shape, stored.dtype, tuple(
        tuple(min(c, n - s) for s in range(0, n, c)) for n, c in zip(stored.shape, stored.chunks)))
    whole = (slice(None),) * (stored.ndim - 1)
    for key in [whole + (slice(0, blocks[0]),), whole + (slice(blocks[0], stored.shape[-1]),),
                whole + (slice(stored.chunks[-1] - 3, 2 * stored.chunks[-1] + 5),)]:  # across edges: zarr's too
        np.testing.assert_array_equal(reader[key], stored[key])
    assert ds[var].data.compute(scheduler="sync").shape == stored.shape


def test_a_damaged_chunk_inside_a_read_task_is_named_by_its_own_index(tmp_path):
    import dask

    labels = np.arange(5000) % 11
    daskbicl.save((labels, np.arange(7)), tmp_path / "d.zarr", chunk=1000)
    folder = tmp_path / "d.zarr" / "row_labels"
    chunk = folder / "c" / "2"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0x01
    chunk.write_bytes(bytes(data))
    with dask.config.set(FEW_TASKS):
        ds = daskbicl.open(tmp_path / "d.zarr")
        assert ds.row_labels.data.numblocks == (1,)  # one task reads the five stored chunks
        with pytest.raises(StoreReadError, match=r"row_labels chunk 2.*checksum"):
            daskbicl.score(ds, (labels, np.arange(7)))


def test_scores_are_equal_whatever_the_read_tasks_cover(tmp_path):
    import dask

    _stores(tmp_path)
    rng = np.random.default_rng(5)  # a co-clustering against a biclustering: labels aligned to the masks' blocks
    daskbicl.save((rng.integers(0, 4, 3001), rng.integers(0, 3, 1501)), tmp_path / "c.zarr", chunk=600)
    pairs = [("t", "p"), ("bt", "bp"), ("c", "bp")]
    per_chunk = {"daskbicl.task_bytes": 1}  # a task per stored chunk, as before tasks were sized to the cluster
    for a, b in pairs:
        with dask.config.set(per_chunk):
            want = daskbicl.score(tmp_path / f"{a}.zarr", tmp_path / f"{b}.zarr")
        with dask.config.set(FEW_TASKS):
            got = daskbicl.score(tmp_path / f"{a}.zarr", tmp_path / f"{b}.zarr")
        assert list(got) == list(want) and len(got) > 5
        for key in want:
            assert got[key] == want[key] or (np.isnan(got[key]) and np.isnan(want[key])), (a, b, key)


def test_a_store_written_again_keeps_its_chunks_not_its_read_tasks(tmp_path):
    """Read in tasks of many stored chunks, a store saved again has the chunks it had (labels and masks)."""
    import dask

    _stores(tmp_path)
    for name, var in [("t", "row_labels"), ("bt", "row_mask")]:
        with dask.config.set(FEW_TASKS):
            ds = daskbicl.open(tmp_path / f"{name}.zarr")
            assert ds[var].data.numblocks[-1] == 1
            daskbicl.save(ds, tmp_path / f"{name}-again.zarr")
        before, after = (zarr.open_array(str(tmp_path / f"{n}.zarr" / var), mode="r") for n in (name, f"{name}-again"))
        assert after.chunks == before.chunks
        np.testing.assert_array_equal(after[...], before[...])
