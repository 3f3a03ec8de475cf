"""The re-check of a completed pair's stores: by ``stat`` when that proves the store unchanged, else by bytes.

Real stores on disk, their files' times set with ``os.utime``; the batch
runs on the session LocalCluster.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

import daskbicl
from daskbicl.batch import ResultsDB, fingerprint_stores, run_batch
from daskbicl.batch.fingerprint import RACY_NS, stat_signature, unchanged_since
from daskbicl.batch.manifest import load_manifest
from daskbicl.batch.runner import execute, plan, survey


def _files(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file())


def _age(store: Path, seconds: float = 3600) -> None:
    """Every file of ``store`` last modified ``seconds`` ago (older than any racy window)."""
    then = time.time() - seconds
    for f in _files(store):
        os.utime(f, (then, then))


def _chunk(store: Path) -> Path:
    """The largest file of the store's row labels: a chunk."""
    return max((p for p in _files(store) if "row_labels" in p.parts), key=lambda p: p.stat().st_size)


def _store(path: Path, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    daskbicl.save(daskbicl.partition(rng.integers(0, 4, 5000), rng.integers(0, 3, 200)), path)
    return path


def test_stat_proves_an_old_unchanged_store_and_nothing_else(tmp_path):
    store = _store(tmp_path / "s.zarr")
    fresh = fingerprint_stores([str(store)])[str(store)].stat
    assert fresh is not None and not unchanged_since(fresh, str(store))  # just written: racy, not proven
    _age(store)
    info = fingerprint_stores([str(store)])[str(store)]
    assert unchanged_since(info.stat, str(store))
    assert stat_signature(str(store))[:2] == info.stat[:2]

    chunk = _chunk(store)
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0xFF
    chunk.write_bytes(bytes(data))  # rewritten in place: a new modification time
    assert not unchanged_since(info.stat, str(store))

    _age(store)
    info = fingerprint_stores([str(store)])[str(store)]
    st = chunk.stat()
    copy = chunk.with_name(chunk.name + ".new")
    copy.write_bytes(bytes(data))  # the same size in a new file renamed over it, its time set back: another inode
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(copy, chunk)
    assert chunk.stat().st_ino != st.st_ino and chunk.stat().st_mtime_ns == st.st_mtime_ns
    assert not unchanged_since(info.stat, str(store))

    extra = store / "row_labels" / "extra"
    extra.write_bytes(b"x")
    os.utime(extra, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not unchanged_since(info.stat, str(store))  # an object added
    assert not unchanged_since(None, str(store)) and stat_signature(str(tmp_path / "none.zarr")) is None
    assert RACY_NS >= 1_000_000_000


def _pair(tmp_path: Path) -> Path:
    _store(tmp_path / "truth.zarr", 1)
    _store(tmp_path / "pred.zarr", 2)
    (tmp_path / "m.toml").write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred.zarr"\n'
                                     '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\n')
    return tmp_path / "m.toml"


def test_an_old_store_replaced_during_a_batch_is_still_caught(tmp_path, client):
    """The stores are old (the stat check is used): a pred replaced after planning changes its stat, is hashed
    again, and nothing is filed under its old fingerprint."""
    manifest = load_manifest(_pair(tmp_path))
    for name in ("truth.zarr", "pred.zarr"):
        _age(tmp_path / name)
    with ResultsDB(tmp_path / "r.sqlite") as db:
        the_plan = plan(manifest, db, stores=survey(manifest))
        assert all(unchanged_since(info.stat, path) for path, info in the_plan.stores.items())
        rng = np.random.default_rng(9)
        daskbicl.save(daskbicl.partition(rng.integers(0, 4, 5000), rng.integers(0, 3, 200)), tmp_path / "pred.zarr",
                      overwrite=True)
        report = execute(the_plan, db, client)
        assert (report.scored, report.failed) == (0, 1)
        assert "pred" in report.failures[0][2] and "changed while it was being scored" in report.failures[0][2]
        assert db.scores() == []
    again = run_batch(tmp_path / "m.toml", tmp_path / "r.sqlite", client=client)
    assert (again.scored, again.failed) == (1, 0)
