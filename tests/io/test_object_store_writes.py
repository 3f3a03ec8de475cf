"""Writes to an object store (moto's S3 server on loopback) with the guarantees of a local disk.

A store is published by its completion record (daskbicl/io/publish.py): a
write killed at any moment leaves nothing :func:`daskbicl.open` accepts as a
valid store (the old store, intact, when it was an overwrite), and the next
write to that location leaves no debris.  The kills are real: a process
running ``daskbicl.save`` (forked from a forkserver with daskbicl imported, tests/support/writer.py), SIGKILLed once the server has answered (or the
folder holds) a seeded number of requests (files), found by polling.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import daskbicl
from daskbicl.errors import StoreError, StoreReadError
from daskbicl.io.publish import RECORD_NAME, WRITING_NAME, read_record

from ..support import writer
from ..support.writer import dataset

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")



def same(opened, seed: int) -> bool:
    want = dataset(seed)
    return (np.array_equal(opened.row_labels.values, want.row_labels.values)
            and np.array_equal(opened.col_labels.values, want.col_labels.values))


class Local:
    """A destination folder on the local disk: objects are files."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.dest = str(folder / "t.zarr")
        self.options = None

    def objects(self) -> list[str]:
        # os.walk, not Path.rglob: a folder may vanish while it is listed (a write is running)
        return sorted(os.path.relpath(os.path.join(top, name), self.folder)
                      for top, _dirs, files in os.walk(self.folder) for name in files)

    def mark(self) -> None:
        self.before = set(self.objects())

    def clear(self) -> None:
        import shutil

        shutil.rmtree(self.dest)

    def progress(self) -> int:
        """Files created since ``mark()`` (a write creates every file of its store in a temporary folder)."""
        return len(set(self.objects()) - self.before)

    def total(self) -> int:
        """Files a write creates: those of the store, and its lock file."""
        return len(self.objects()) + 1


class Bucket:
    """A destination prefix in a fresh bucket of the loopback S3 server: progress is its request count."""

    def __init__(self, s3):
        import s3fs

        self.s3 = s3
        self.dest = f"{s3.root}/t.zarr"
        self.options = s3.storage_options
        self.fs = s3fs.S3FileSystem(**s3.storage_options)

    def objects(self) -> list[str]:
        return sorted(p.split("/", 1)[1] for p in self.fs.find(self.s3.bucket))

    def mark(self) -> None:
        self.s3.server.mark()

    def clear(self) -> None:
        self.fs.rm(f"{self.s3.bucket}/t.zarr", recursive=True)

    def progress(self) -> int:
        return len(self.s3.server.requests())

    def total(self) -> int:
        return self.progress()


@pytest.fixture(params=["local", "s3"])
def where(request, tmp_path):
    if request.param == "local":
        return Local(tmp_path)
    return Bucket(request.getfixturevalue("s3"))


def start(where, seed: int, overwrite: bool):
    """The write in a process of its own (forked from a forkserver that has imported daskbicl once)."""
    return writer.start(where.dest, seed, overwrite, where.options)


def full_write(where, seed: int, overwrite: bool) -> int:
    """Run a write to the end; the number of requests (files) it took."""
    where.mark()
    proc = start(where, seed, overwrite)
    proc.join(timeout=300)
    assert proc.exitcode == 0, proc.exitcode  # the write's traceback, if any, is on stderr
    return where.total()


def kill_at(where, seed: int, overwrite: bool, moment: int) -> int | None:
    """Start a write and SIGKILL it once ``moment`` requests (files) are seen; its exit status if it ended first."""
    where.mark()
    proc = start(where, seed, overwrite)
    try:
        while proc.is_alive() and where.progress() < moment:
            proc.join(timeout=0.002)  # polling the server's log (the folder), not a sleep for synchronisation
        if proc.is_alive():
            os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=120)
    finally:
        if proc.is_alive():
            proc.kill()
    return proc.exitcode


def one_store(where, digest: str) -> None:
    """The destination holds one store, whose record has ``digest``, and nothing else (no debris)."""
    record = read_record(where.dest, where.options)
    assert record is not None and record.digest == digest
    assert where.objects() == sorted([f"t.zarr/{k}" for k in record.objects] + [f"t.zarr/{RECORD_NAME}"])


def check_after_kill(where, digests: dict[str, str]) -> str:
    """Nothing at the destination opens as a valid store but the old or the new one, whole.

    A store that opens is identified by its record, and its objects are the record's (a mix of
    two stores would differ from both).
    """
    try:
        daskbicl.open(where.dest, storage_options=where.options)
    except StoreReadError as exc:
        assert "interrupted write" in str(exc) and "removes what is left" in str(exc), exc
        return "interrupted"
    except StoreError as exc:  # killed before anything reached the destination
        assert "old" not in digests, f"the old store is gone without a trace: {exc}"
        return "nothing"
    record = read_record(where.dest, where.options)
    which = [name for name, digest in digests.items() if digest == record.digest]
    assert which, "a store that is neither the old nor the new one opened as valid"
    listed = {k.split("/", 1)[1] for k in where.objects() if k.startswith("t.zarr/")}
    assert set(record.objects) <= listed, "a store missing some of its objects opened as valid"
    return which[0]


def test_a_write_killed_at_10_moments_leaves_no_readable_partial_store_and_no_debris(where):
    """10 seeded moments, 5 in a write to an empty destination and 5 in an overwrite of store 1 by store 2."""
    opts = {"chunk": 100, "storage_options": where.options}
    totals = {False: full_write(where, 2, False)}
    digests = {"new": read_record(where.dest, where.options).digest}
    where.clear()
    daskbicl.save(dataset(1), where.dest, **opts)
    digests["old"] = read_record(where.dest, where.options).digest
    totals[True] = full_write(where, 2, True)
    rng = np.random.default_rng(35)
    # one seeded moment in each fifth of each write: early checks, the chunks, the record, the swap
    plan = [(overwrite, int(rng.integers(1 + k * totals[overwrite] // 5, 1 + (k + 1) * totals[overwrite] // 5)))
            for overwrite in (False, True) for k in range(5)]
    where.clear()
    seen = []
    for overwrite, moment in plan:
        status = kill_at(where, 2, overwrite, moment)
        outcome = check_after_kill(where, digests if overwrite else {"new": digests["new"]})
        seen.append((overwrite, moment, status, outcome))
        # the next write, without overwrite unless a valid store is there: leftovers are not "a store";
        # it writes the old store of the next overwrite, or a store removed before the next fresh write
        daskbicl.save(dataset(1), where.dest, overwrite=outcome in ("old", "new"), **opts)
        one_store(where, digests["old"])
        if len(seen) < len(plan) and not plan[len(seen)][0]:  # the next write starts from nothing
            where.clear()
    print(type(where).__name__, totals, seen)
    assert same(daskbicl.open(where.dest, storage_options=where.options), 1)
    # the moments fell inside the writes: on S3 some kills left an unpublished write behind
    assert any(o == "interrupted" for *_, o in seen) or isinstance(where, Local), seen


# --------------------------------------------------------------------------- round trips, failures, guards on S3


def test_save_open_overwrite_round_trips_on_s3_as_on_a_local_folder(s3, tmp_path):
    import xarray as xr

    rng = np.random.default_rng(7)
    stores = {"partition": dataset(5),
              "biclustering": daskbicl.biclustering(rng.random((3, 400)) < 0.3, rng.random((3, 90)) < 0.4)}
    for name, ds in stores.items():
        url, local = f"{s3.root}/{name}.zarr", tmp_path / f"{name}.zarr"
        assert daskbicl.save(ds, url, storage_options=s3.storage_options, chunk=100) == url
        daskbicl.save(ds, local, chunk=100)
        xr.testing.assert_identical(daskbicl.open(url, storage_options=s3.storage_options).load(),
                                    daskbicl.open(local).load())
        remote_record, local_record = read_record(url, s3.storage_options), read_record(local)
        assert remote_record == local_record  # the same bytes, wherever they are
    url = f"{s3.root}/partition.zarr"
    daskbicl.save(dataset(6), url, storage_options=s3.storage_options, chunk=100, overwrite=True)
    assert same(daskbicl.open(url, storage_options=s3.storage_options), 6)
    record = read_record(url, s3.storage_options)
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    listed = sorted(p.split("/", 1)[1] for p in fs.find(s3.bucket) if "/partition.zarr" in f"/{p.split('/', 1)[1]}")
    # one store, the new one: every object its record lists and the record, nothing else
    assert listed == sorted([f"partition.zarr/{k}" for k in record.objects] + [f"partition.zarr/{RECORD_NAME}"])
    assert sorted(fs.ls(s3.bucket, detail=False)) == sorted(f"{s3.bucket}/{n}.zarr" for n in stores)


def test_a_copied_store_keeps_its_digest_and_a_plain_store_has_no_record(s3):
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    daskbicl.save(dataset(5), f"{s3.root}/a.zarr", storage_options=s3.storage_options, chunk=100)
    fs.copy(f"{s3.bucket}/a.zarr", f"{s3.bucket}/copies/b.zarr", recursive=True)
    a = read_record(f"{s3.root}/a.zarr", s3.storage_options)
    assert a.format == 1 and a.digest == read_record(f"{s3.root}/copies/b.zarr", s3.storage_options).digest
    assert same(daskbicl.open(f"{s3.root}/copies/b.zarr", storage_options=s3.storage_options), 5)
    dataset(5).to_zarr(f"{s3.root}/plain.zarr", storage_options=s3.storage_options, consolidated=False)
    assert read_record(f"{s3.root}/plain.zarr", s3.storage_options) is None
    assert same(daskbicl.open(f"{s3.root}/plain.zarr", storage_options=s3.storage_options), 5)


def test_an_unpublished_store_is_refused_as_an_interrupted_write_and_the_next_write_removes_it(s3):
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    url, so = f"{s3.root}/t.zarr", s3.storage_options
    daskbicl.save(dataset(5), url, storage_options=so, chunk=100)
    fs.rm_file(f"{s3.bucket}/t.zarr/{RECORD_NAME}")  # metadata marked for a record, no record
    with pytest.raises(StoreReadError, match=r"t\.zarr is an interrupted write: .*next daskbicl write to this "
                                             r"location removes what is left, with or without overwrite"):
        daskbicl.open(url, storage_options=so)
    for name in ("zarr.json", "row_labels/zarr.json"):  # no group at all: the sentinel says whose it is
        fs.rm_file(f"{s3.bucket}/t.zarr/{name}")
    fs.pipe_file(f"{s3.bucket}/t.zarr/{WRITING_NAME}", b"")
    with pytest.raises(StoreReadError, match="interrupted write"):
        daskbicl.open(url, storage_options=so)
    fs.pipe_file(f"{s3.bucket}/.t.zarr.tmp-0123456789ab/row_labels/c/0", b"left by a killed overwrite")
    daskbicl.save(dataset(6), url, storage_options=so, chunk=100)  # no overwrite needed: it is not a store
    assert same(daskbicl.open(url, storage_options=so), 6)
    record = read_record(url, so)
    assert sorted(p.split("/", 1)[1] for p in fs.find(s3.bucket)) == sorted(
        [f"t.zarr/{k}" for k in record.objects] + [f"t.zarr/{RECORD_NAME}"])


def test_a_failed_overwrite_on_s3_keeps_the_old_store_and_a_retry_works(s3, tmp_path):
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    url, so = f"{s3.root}/t.zarr", s3.storage_options
    daskbicl.save(dataset(5), tmp_path / "src.zarr", chunk=100)
    (tmp_path / "src.zarr" / "row_labels" / "c" / "3").write_bytes(b"\x00 not zstd")
    damaged = daskbicl.open(tmp_path / "src.zarr")
    before = None
    for overwrite in (False, True):  # nothing there, then an old store to keep
        with pytest.raises(StoreReadError, match=r"src\.zarr \(variable row_labels chunk 3\)"):
            daskbicl.save(damaged, url, storage_options=so, overwrite=overwrite)
        assert sorted(fs.find(s3.bucket)) == (before or [])  # nothing left by the failed write
        if not overwrite:
            daskbicl.save(dataset(6), url, storage_options=so, chunk=100)
            before = sorted(fs.find(s3.bucket))
    assert same(daskbicl.open(url, storage_options=so), 6)
    daskbicl.save(dataset(5), url, storage_options=so, chunk=100, overwrite=True)  # the retry
    assert same(daskbicl.open(url, storage_options=so), 5)


def test_writes_inside_a_store_and_over_other_data_are_refused_on_s3(s3):
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    so = s3.storage_options
    daskbicl.save(dataset(5), f"{s3.root}/dk.zarr", storage_options=so, chunk=100)
    for inner in ("dk.zarr/row_labels/inner.zarr", "dk.zarr/inner.zarr"):
        with pytest.raises(StoreError, match=rf"cannot write {s3.root}/{inner} inside the Zarr store s3://"):
            daskbicl.save(dataset(6), f"{s3.root}/{inner}", storage_options=so)
    fs.pipe_file(f"{s3.bucket}/other/x.csv", b"1")
    with pytest.raises(StoreError, match="is not a daskbicl store"):
        daskbicl.save(dataset(6), f"{s3.root}/other", storage_options=so, overwrite=True)
    with pytest.raises(StoreError, match="already exists; pass overwrite=True"):
        daskbicl.save(dataset(6), f"{s3.root}/dk.zarr", storage_options=so)
    assert fs.cat_file(f"{s3.bucket}/other/x.csv") == b"1"
    assert not [p for p in fs.find(s3.bucket) if "inner" in p or ".tmp-" in p or ".daskbicl-writing" in p]


def test_generate_and_convert_to_s3_create_no_local_folder(s3, tmp_path):
    """``daskbicl generate s3://b/p``: the stores on the server, nothing named after the URL on the disk."""
    env = dict(os.environ, AWS_ACCESS_KEY_ID=s3.storage_options["key"],
               AWS_SECRET_ACCESS_KEY=s3.storage_options["secret"],
               AWS_ENDPOINT_URL=s3.storage_options["client_kwargs"]["endpoint_url"], AWS_DEFAULT_REGION="us-east-1")
    np.save(tmp_path / "rows.npy", np.arange(50) % 4)
    np.save(tmp_path / "cols.npy", np.arange(20) % 3)
    for args in (["generate", f"{s3.root}/gen", "--rows", "300", "--cols", "40", "--preds", "2", "--chunk", "100"],
                 ["convert", f"{s3.root}/conv.zarr", "--rows", "rows.npy", "--cols", "cols.npy"]):
        proc = subprocess.run([sys.executable, "-m", "daskbicl", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["cols.npy", "rows.npy"]
    so = s3.storage_options
    for name in ("gen/truth.zarr", "gen/pred-000.zarr", "gen/pred-001.zarr", "conv.zarr"):
        assert read_record(f"{s3.root}/{name}", so) is not None
    assert daskbicl.open(f"{s3.root}/conv.zarr", storage_options=so).row_labels.values.tolist() == (
        (np.arange(50) % 4).tolist())
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "generate", f"{s3.root}/gen", "--rows", "300", "--preds", "2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "gen/truth.zarr (and 2 more) already exists; pass --overwrite" in proc.stderr


# --------------------------------------------------------------------------- a local folder


def test_a_running_writers_temporary_folder_is_left_alone_a_dead_ones_is_removed(tmp_path):
    import fcntl

    tmp = tmp_path / ".t.zarr.tmp-0123456789ab"
    (tmp / "row_labels").mkdir(parents=True)
    lock = open(tmp_path / ".t.zarr.tmp-0123456789ab.lock", "wb")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a writer running in another process holds it
    (tmp_path / ".t.zarr.tmp-ba9876543210").mkdir()  # left by a daskbicl without lock files
    daskbicl.save(dataset(5), tmp_path / "t.zarr", chunk=100)
    assert sorted(os.listdir(tmp_path)) == [".t.zarr.tmp-0123456789ab", ".t.zarr.tmp-0123456789ab.lock", "t.zarr"]
    lock.close()  # the writer died
    daskbicl.save(dataset(6), tmp_path / "t.zarr", chunk=100, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["t.zarr"]
    assert same(daskbicl.open(tmp_path / "t.zarr"), 6)
    record = read_record(tmp_path / "t.zarr")
    files = sorted(str(p.relative_to(tmp_path / "t.zarr")) for p in (tmp_path / "t.zarr").rglob("*") if p.is_file())
    assert files == sorted([*record.objects, RECORD_NAME])
