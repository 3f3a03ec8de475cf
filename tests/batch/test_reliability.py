"""Batch runs that are interrupted: a worker killed, the batch process killed (SIGKILL)."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import daskbicl
from daskbicl.batch import ResultsDB, run_batch

N_PREDS, ROWS, COLS, CHUNK = 10, 200_000, 2_000, 12_500  # 16 row chunks per store: a few hundred tasks

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("reliability")
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 8, 4, seed=0, chunk=CHUNK), root / "truth.zarr")
    truth = daskbicl.open(root / "truth.zarr")
    for k in range(N_PREDS):
        daskbicl.save(daskbicl.perturb(truth, 0.05 * (k + 1), seed=k + 1), root / f"pred-{k:02d}.zarr")
    (root / "m.toml").write_text(
        '[truth]\nt = "truth.zarr"\n[pred]\np = "pred-*.zarr"\n'
        '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari", "nce", "ari_cols"]\n'
    )
    return root


def committed_pairs(path) -> int:
    try:
        with sqlite3.connect(path, timeout=30) as con:
            return con.execute("SELECT COUNT(DISTINCT pred) FROM scores").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for(predicate, timeout=120.0, every=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def values(path) -> dict:
    with ResultsDB(path, create=False) as db:
        return {(os.path.basename(r["pred"]), r["measure"]): r["value"] for r in db.scores()}


def held_work(dask_scheduler):
    """Per worker address: (tasks running on it, results that only it holds and that are still needed)."""
    pending = ("waiting", "queued", "no-worker", "processing")
    out = {}
    for address, ws in dask_scheduler.workers.items():
        sole = [ts for ts in ws.has_what if ts.who_has == {ws}
                and (ts.who_wants or any(d.state in pending for d in ts.dependents))]
        out[address] = (len(ws.processing), len(sole))
    return out


def test_worker_killed_mid_batch_completes_with_the_same_values(stores, tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        calm = run_batch(stores / "m.toml", tmp_path / "calm.sqlite", client=client)
        assert (calm.scored, calm.failed) == (N_PREDS, 0)

        outcome = {}
        runner = threading.Thread(
            target=lambda: outcome.update(report=run_batch(stores / "m.toml", tmp_path / "killed.sqlite", client=client))
        )
        runner.start()
        assert wait_for(lambda: committed_pairs(tmp_path / "killed.sqlite") >= 1)
        pids = client.run(os.getpid)  # worker address -> pid
        held = {}

        def victim_found():  # a worker that is running batch tasks or alone holds results still needed
            held.update(client.run_on_scheduler(held_work))
            return any(held.get(a, (0, 0)) != (0, 0) for a in pids)

        assert wait_for(victim_found, timeout=60, every=0.005), "no worker held batch work: nothing to kill"
        victim = max(pids, key=lambda a: held.get(a, (0, 0))[::-1])  # most needed results first
        os.kill(pids[victim], signal.SIGKILL)
        at_kill = committed_pairs(tmp_path / "killed.sqlite")
        runner.join(timeout=240)
        assert not runner.is_alive()
        running, needed = held[victim]
        assert running + needed > 0, held  # the killed worker had work the batch needed
        assert at_kill < N_PREDS, "the batch finished before the worker was killed: nothing was tested"
        report = outcome["report"]
        assert (report.scored, report.failed) == (N_PREDS, 0), report.failures
        assert values(tmp_path / "killed.sqlite") == values(tmp_path / "calm.sqlite")
        assert pids[victim] not in client.run(os.getpid).values()  # it really died (and the nanny replaced it)


def test_batch_process_killed_then_rerun_loses_and_duplicates_nothing(stores, tmp_path, local_cluster):
    db = tmp_path / "scores.sqlite"
    command = [sys.executable, "-m", "daskbicl", "batch", str(stores / "m.toml"), "--results", str(db),
               "--scheduler", local_cluster.scheduler_address]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: committed_pairs(db) >= 1 or first.poll() is not None)
        # Hold the write lock: the batch blocks in its next commit, with pairs still to write.
        lock = sqlite3.connect(db, timeout=60, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        before = lock.execute("SELECT id, pred, measure, value, run_id FROM scores ORDER BY id").fetchall()
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        lock.execute("ROLLBACK")
        lock.close()
    finally:
        if first.poll() is None:
            first.kill()
    done = len({row[1] for row in before})
    assert 0 < done < N_PREDS, f"{done} pairs committed when the batch was killed"
    assert len(before) == 3 * done  # whole pairs only: one transaction per pair

    second = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert second.returncode == 0, second.stderr
    assert f"{N_PREDS - done} scored, {done} already scored, 0 failed" in second.stdout

    with sqlite3.connect(db) as con:
        after = con.execute("SELECT id, pred, measure, value, run_id FROM scores ORDER BY id").fetchall()
        keys = con.execute("SELECT COUNT(DISTINCT truth || pred || measure || params) FROM scores").fetchone()[0]
        runs = con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()
    assert after[: len(before)] == before  # the pairs committed before the kill were not redone
    assert len(after) == keys == 3 * N_PREDS  # every pair, no row twice
    assert runs == [("killed",), ("ok",)]  # the killed run never finished: the next run says so
    expected = daskbicl.score(stores / "truth.zarr", stores / "pred-07.zarr", measures=["cari", "nce", "ari_cols"])
    assert {m: v for _, p, m, v, _ in after if p.endswith("pred-07.zarr")} == expected
