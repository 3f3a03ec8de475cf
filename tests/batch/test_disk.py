"""A results file on a disk that fills up, for real: a small tmpfs (when this runs as root and may mount).

The batch runs through the CLI in a subprocess on the session LocalCluster;
the disk fills while it commits pairs.  It must say in words that the disk
is full, exit with status 2 and leave every pair complete or absent; once
space is freed the next run finishes the work without duplicating a row.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import daskbicl
from daskbicl.batch import ResultsDB

from ..support.manifests import write_manifest
from ..test_failures import hidden, tiny_disk

MEASURES = ["cari", "nce", "ari_rows"]
ROWS, COLS = 3_000, 400


def _cli(*args):
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` with one file until it is full, then free ``leave`` bytes of it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave))
    return filler


def _preds(folder: Path, first: int, count: int) -> None:
    truth = daskbicl.open(folder / "truth.zarr")
    for k in range(first, first + count):
        daskbicl.save(daskbicl.perturb(truth, 0.05 + 0.01 * k, seed=k), folder / f"pred-{k:02d}.zarr")


def _complete_or_absent(results: Path) -> dict[str, int]:
    """Rows per pred; every pred has a row for every measure or none; the file is intact."""
    with contextlib.closing(sqlite3.connect(results)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with ResultsDB(results, create=False) as db:
        rows = db.scores()
    per: dict[str, set] = {}
    for r in rows:
        per.setdefault(Path(r["pred"]).name, set()).add(r["measure"])
    assert all(found == set(MEASURES) for found in per.values()), per
    assert len(rows) == len({(r["pred"], r["measure"]) for r in rows})  # no duplicate
    return {name: len(found) for name, found in per.items()}


@pytest.mark.slow
def test_a_disk_that_fills_during_a_batch_is_said_in_words(tmp_path, local_cluster):
    data = tmp_path / "data"
    data.mkdir()
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 4, 3, seed=1, chunk=1024), data / "truth.zarr")
    _preds(data, 0, 2)
    manifest = write_manifest(data / "m.toml", {"sim": "truth.zarr"}, {"runs": "pred-*.zarr"},
                              [{"truth": "sim", "pred": "runs", "measures": list(MEASURES)}])
    address = local_cluster.scheduler_address
    with tiny_disk("1m") as disk:
        results = disk / "r.sqlite"
        code, _, err = _cli("batch", manifest, "--results", results, "--scheduler", address)
        assert code == 0, err
        _preds(data, 2, 14)  # night 2: 14 new preds, committed one by one onto a disk with little room left
        filler = _fill(disk, leave=48 * 1024)
        code, out, err = _cli("batch", manifest, "--results", results, "--scheduler", address)
        assert code == 2, (out, err)
        lines = err.strip().splitlines()
        assert "Traceback" not in err and len([x for x in lines if x.startswith("daskbicl: error:")]) == 1, err
        assert f"the results file {results}" in err and "the disk holding it is full" in err, err
        assert "free some space and run again" in err
        before = _complete_or_absent(results)
        assert 2 <= len(before) < 16  # night 1 kept; the disk filled before night 2 was done

        # reading it from the full disk says why it cannot, in the same words
        _fill(disk, leave=0)
        code, _, err = _cli("results", results, "--format", "csv")
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert f"cannot open the results file {results}" in err and "the disk holding it is full" in err, err
        (disk / "filler").unlink()
        # an export onto a full disk (from a copy of the file elsewhere) says so too, and leaves no partial file
        copy = tmp_path / "copy.sqlite"
        copy.write_bytes(results.read_bytes())
        filler = _fill(disk, leave=0)
        code, _, err = _cli("results", copy, "--format", "csv", "-o", disk / "out.csv")
        assert code == 2 and "Traceback" not in err, err
        assert "no space left" in err.lower(), err
        assert not (disk / "out.csv").exists()
        assert hidden(disk) == []  # no temporary file left behind

        filler.unlink()
        code, out, err = _cli("batch", manifest, "--results", results, "--scheduler", address)
        assert code == 0, err
        after = _complete_or_absent(results)
        assert len(after) == 16 and set(before) <= set(after)
        with ResultsDB(results, create=False) as db:
            assert [r["status"] for r in db.runs()][-1] == "ok"
