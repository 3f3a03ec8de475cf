"""Fingerprints computed and stores opened in the cluster's workers (a batch run given a Client).

Real Zarr and NetCDF stores on disk, the session's LocalCluster (two worker
processes), the results file read back with sqlite3.  What is checked: the
workers' digest is the client's, byte for byte; a batch given a Client hashes
and opens every store in worker tasks and records the same scores and
fingerprints as a batch that hashes in the client; a changed chunk is seen;
a store that cannot be opened fails its pair with the client's message; the
decoded label arrays the workers send back are counted by their codes.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import daskbicl
from daskbicl.batch import fingerprint, fingerprint_stores, run_batch, runner
from daskbicl.batch.cluster_fingerprints import fingerprint_on_cluster, survey_task
from daskbicl.batch.fingerprint import fingerprint_task
from daskbicl.batch.manifest import load_manifest
from daskbicl.codes import coding_of

from ..support.manifests import write_manifest

ROWS, COLS, CHUNK = 3_000, 400, 1_024
MEASURES = ["cari", "nce", "ari_rows"]


@pytest.fixture
def cluster_client(local_cluster):
    from distributed import Client

    with Client(local_cluster) as client:
        yield client


def _lab(folder: Path, preds: int = 3) -> Path:
    """A truth and ``preds`` preds, every file of them modified at one instant (their write records as new as
    their chunks): the listing cannot vouch for a record, so the workers hash the bytes (the path tested here;
    tests/batch/test_object_store.py tests stores fingerprinted from their records)."""
    folder.mkdir(exist_ok=True)
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 5, 4, seed=5, chunk=CHUNK), folder / "truth.zarr")
    truth = daskbicl.open(folder / "truth.zarr")
    for k in range(preds):
        daskbicl.save(daskbicl.perturb(truth, 0.05 * (k + 1), seed=20 + k), folder / f"pred-{k}.zarr")
    instant = 1_700_000_000 * 10**9
    for file in folder.rglob("*"):
        if file.is_file():
            os.utime(file, ns=(instant, instant))
    return write_manifest(folder / "m.toml", {"sim": "truth.zarr"}, {"runs": "pred-*.zarr"},
                          [{"truth": "sim", "pred": "runs", "measures": list(MEASURES)}])


@contextlib.contextmanager
def _hashing_in(where: str):
    """Run batches with the stores hashed by the workers (the default with a Client) or in the client."""
    before = runner.FINGERPRINTS_ON_CLUSTER
    runner.FINGERPRINTS_ON_CLUSTER = where == "workers"
    try:
        yield
    finally:
        runner.FINGERPRINTS_ON_CLUSTER = before


def _scores(db: Path) -> dict:
    with contextlib.closing(sqlite3.connect(db)) as con:
        rows = con.execute("SELECT pred, measure, value, truth_fp, pred_fp FROM scores").fetchall()
    return {(Path(pred).name, measure): (value, tfp, pfp) for pred, measure, value, tfp, pfp in rows}


def _task_prefixes(stream) -> list[str]:
    from dask.utils import key_split

    return [key_split(task["key"]) for task in stream.data]


def test_a_workers_digest_is_the_clients(tmp_path, cluster_client):
    """Every kind of input: a daskbicl store, a biclustering, a plain to_zarr store, a NetCDF file."""
    paths = [
        daskbicl.save(daskbicl.random_partition(500, 60, 3, 2, seed=1, chunk=128), tmp_path / "p.zarr"),
        daskbicl.save(daskbicl.biclustering(np.eye(3, 40, dtype=bool), np.eye(3, 30, dtype=bool)),
                      tmp_path / "b.zarr"),
    ]
    plain = daskbicl.random_partition(300, 50, 3, 2, seed=2)
    plain.attrs.pop("daskbicl_kind", None)
    plain.to_zarr(tmp_path / "plain.zarr")
    plain.to_netcdf(tmp_path / "plain.nc")
    paths += [tmp_path / "plain.zarr", tmp_path / "plain.nc"]
    for path in map(str, paths):
        here = fingerprint(path)
        there = cluster_client.submit(fingerprint_task, path, pure=False).result()
        assert there.error is None and there.fingerprint == here, path
        assert there.stat is not None or path.endswith(".nc")
        light = fingerprint_stores([path], contents=False)[path]
        # without reading a chunk: known from a write record the listing vouches for, else left to the workers
        assert light.fingerprint in (None, here) and light.error is None
        assert light.kind in ("partition", "biclustering")
        assert light.objects == there.objects and light.nbytes == there.nbytes


def test_a_batch_given_a_client_hashes_and_opens_every_store_in_worker_tasks(tmp_path, cluster_client):
    from distributed import get_task_stream

    manifest = _lab(tmp_path / "lab")
    with get_task_stream(cluster_client) as stream:
        report = run_batch(manifest, tmp_path / "workers.sqlite", client=cluster_client)
    assert (report.scored, report.failed) == (3, 0)
    assert _task_prefixes(stream).count("survey_task") == 4  # one task per store, the truth once
    with _hashing_in("client"), get_task_stream(cluster_client) as stream:
        before = run_batch(manifest, tmp_path / "client.sqlite", client=cluster_client)
    assert before.scored == 3 and "survey_task" not in _task_prefixes(stream)
    by_workers, by_client = _scores(tmp_path / "workers.sqlite"), _scores(tmp_path / "client.sqlite")
    assert by_workers == by_client  # the same values under the same fingerprints, whoever hashed
    for k in range(3):
        oracle = daskbicl.score(tmp_path / "lab" / "truth.zarr", tmp_path / "lab" / f"pred-{k}.zarr",
                                measures=MEASURES)
        for measure, value in oracle.items():
            got, truth_fp, pred_fp = by_workers[(f"pred-{k}.zarr", measure)]
            assert got == value
            assert pred_fp == fingerprint(tmp_path / "lab" / f"pred-{k}.zarr")
            assert truth_fp == fingerprint(tmp_path / "lab" / "truth.zarr")

    again = run_batch(manifest, tmp_path / "workers.sqlite", client=cluster_client)
    assert (again.scored, again.skipped) == (0, 3)


def test_a_changed_chunk_is_rescored_with_the_workers_hashing(tmp_path, cluster_client):
    """One label changed in one chunk (same shape, same chunking): only that pair is scored again."""
    manifest = _lab(tmp_path / "lab")
    results = tmp_path / "r.sqlite"
    assert run_batch(manifest, results, client=cluster_client).scored == 3
    pred = tmp_path / "lab" / "pred-1.zarr"
    labels = daskbicl.open(pred).load()
    rows = labels["row_labels"].values.copy()
    rows[7] = (rows[7] + 1) % 5
    changed = labels.assign(row_labels=(("row",), rows))
    old = fingerprint(pred)
    daskbicl.save(changed, pred, overwrite=True)
    assert fingerprint(pred) != old
    report = run_batch(manifest, results, client=cluster_client)
    assert (report.scored, report.skipped) == (1, 2)
    now = _scores(results)
    expected = daskbicl.score(tmp_path / "lab" / "truth.zarr", pred, measures=MEASURES)
    assert {m: now[("pred-1.zarr", m)][0] for m in MEASURES} == expected
    assert now[("pred-1.zarr", "cari")][2] == fingerprint(pred)


def test_the_fingerprint_and_the_dataset_are_of_the_bytes_after_the_clients_listing(tmp_path, cluster_client):
    """A store rewritten between the client's listing and the workers' task: both see the new content."""
    manifest_path = _lab(tmp_path / "lab", preds=1)
    manifest = load_manifest(manifest_path)
    stores = runner.survey(manifest, contents=False)
    pred = tmp_path / "lab" / "pred-0.zarr"
    truth = daskbicl.open(tmp_path / "lab" / "truth.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.4, seed=99), pred, overwrite=True)
    opened: dict = {}
    done = fingerprint_on_cluster(cluster_client, manifest, stores, opened)
    assert done[str(pred)].fingerprint == fingerprint(pred)
    assert np.array_equal(opened[str(pred)]["row_labels"].values, daskbicl.open(pred)["row_labels"].values)
    # the decoded label arrays come back registered: the counting passes read their codes
    for ds in opened.values():
        for var in ("row_labels", "col_labels"):
            assert coding_of(ds[var].data) is not None


def test_a_store_that_cannot_be_opened_fails_its_pair_as_when_the_client_opens_it(tmp_path, cluster_client):
    manifest = _lab(tmp_path / "lab")
    (tmp_path / "lab" / "pred-2.zarr" / "row_labels" / "zarr.json").unlink()
    _, dataset, _ = cluster_client.submit(survey_task, str(tmp_path / "lab" / "pred-2.zarr"), "pred",
                                          pure=False).result()
    assert dataset is None  # the worker could not open it: the client opens it again to say why
    reports = {}
    for where in ("workers", "client"):
        with _hashing_in(where):
            reports[where] = run_batch(manifest, tmp_path / f"{where}.sqlite", client=cluster_client)
    assert [(r.scored, r.failed) for r in reports.values()] == [(2, 1), (2, 1)]
    assert reports["workers"].failures == reports["client"].failures
    (_, pred, reason), = reports["workers"].failures
    assert pred.endswith("pred-2.zarr") and "row_labels has lost its metadata" in reason


def test_fingerprinting_plain_stores_from_threads_leaves_the_warning_filters_alone(tmp_path, monkeypatch):
    """Plain stores are opened (to read their kind) in the calling thread, never in the hashing threads:
    opening a store swaps the process's warning filters (``warnings.catch_warnings``), not thread-safe."""
    module = importlib.import_module("daskbicl.batch.fingerprint")  # the package exports a function of that name
    plain = daskbicl.random_partition(200, 40, 3, 2, seed=4)
    plain.attrs.pop("daskbicl_kind", None)
    paths = []
    for k in range(12):
        plain.to_zarr(tmp_path / f"plain-{k}.zarr")
        paths.append(str(tmp_path / f"plain-{k}.zarr"))
    seen: set[str] = set()
    real = module._kind_by_variables

    def watched(path, storage_options):  # the real function, with the thread that calls it noted
        seen.add(threading.current_thread().name)
        return real(path, storage_options)

    monkeypatch.setattr(module, "_kind_by_variables", watched)
    from daskbicl.io.store import _quiet_zarr

    _quiet_zarr()  # the one filter a process has from import (pytest's collection dropped it)
    fingerprint_stores(paths[:1], threads=1)  # xarray adds its own filters on its first open
    filters = list(warnings.filters)
    for _ in range(3):
        info = fingerprint_stores(paths, threads=16)
        assert {i.kind for i in info.values()} == {"partition"}
        assert len({i.fingerprint for i in info.values()}) == 1  # the same content: the same digest
    assert seen == {threading.current_thread().name}
    assert warnings.filters == filters


def test_pairs_built_while_the_workers_hash_are_used_only_for_the_work_the_plan_leaves(tmp_path, cluster_client):
    """Night 1 asks two measures, night 2 three: night 2's pairs, built ahead for all three, are built again
    for the one left, and each measure is scored once, equal to daskbicl.score."""
    manifest = _lab(tmp_path / "lab")
    text = manifest.read_text()
    manifest.write_text(text.replace(f"measures = {MEASURES!r}".replace("'", '"'),
                                     f"measures = {MEASURES[:2]!r}".replace("'", '"')))
    results = tmp_path / "r.sqlite"
    first = run_batch(manifest, results, client=cluster_client)
    assert (first.scored, first.rows) == (3, 6)
    manifest.write_text(text)
    second = run_batch(manifest, results, client=cluster_client)
    assert (second.scored, second.rows, second.failed) == (3, 3, 0)
    with contextlib.closing(sqlite3.connect(results)) as con:
        counts = con.execute("SELECT pred, measure, COUNT(*) FROM scores GROUP BY pred, measure").fetchall()
    assert sorted(n for _, _, n in counts) == [1] * 9  # nothing scored twice
    got = _scores(results)
    for k in range(3):
        oracle = daskbicl.score(tmp_path / "lab" / "truth.zarr", tmp_path / "lab" / f"pred-{k}.zarr",
                                measures=MEASURES)
        assert {m: got[(f"pred-{k}.zarr", m)][0] for m in MEASURES} == oracle


def test_a_cluster_without_workers_while_hashing_ends_the_run_as_retry_later(tmp_path):
    """No worker to hash on: after daskbicl.worker_timeout, NoWorkersError (exit status 3); the run is
    recorded as interrupted, nothing is scored, and the results file stays usable (the next run scores all)."""
    import dask
    from distributed import Client, LocalCluster

    from daskbicl.errors import InfrastructureError

    manifest = _lab(tmp_path / "lab", preds=1)
    results = tmp_path / "r.sqlite"
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty, Client(empty) as client, \
            dask.config.set({"daskbicl.worker_timeout": "1s"}):
        with pytest.raises(InfrastructureError, match="no worker"):
            run_batch(manifest, results, client=client)
    with contextlib.closing(sqlite3.connect(results)) as con:
        assert con.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
        assert con.execute("SELECT COUNT(*) FROM scores").fetchone() == (0,)
    assert not results.with_name("r.sqlite.lock").exists()


def test_the_command_with_a_scheduler_address_has_its_workers_hash_the_stores(tmp_path, cluster_client,
                                                                                  local_cluster, capsys):
    """``daskbicl batch --scheduler ADDRESS``: the cluster is entered before planning and its workers hash
    (one survey task per store); same scores and fingerprints as a run hashed in the client."""
    from distributed import get_task_stream

    from daskbicl.cli import main

    manifest = _lab(tmp_path / "lab")
    with get_task_stream(cluster_client) as stream:
        code = main(["batch", str(manifest), "--results", str(tmp_path / "cli.sqlite"),
                     "--scheduler", local_cluster.scheduler_address])
    assert code == 0, capsys.readouterr().err
    assert _task_prefixes(stream).count("survey_task") == 4
    with _hashing_in("client"):
        run_batch(manifest, tmp_path / "client.sqlite", client=cluster_client)
    assert _scores(tmp_path / "cli.sqlite") == _scores(tmp_path / "client.sqlite")
    with get_task_stream(cluster_client) as stream:  # nothing new: hashed on the workers again, nothing scored
        assert main(["batch", str(manifest), "--results", str(tmp_path / "cli.sqlite"),
                     "--scheduler", local_cluster.scheduler_address]) == 0
    assert _task_prefixes(stream).count("survey_task") == 4
