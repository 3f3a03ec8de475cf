"""Failing environments, for real: a full disk, a file size limit, permissions, signals, a cluster that fails.

Nothing here is simulated: the disk is a 300 kB tmpfs (when this runs as
root and may mount; otherwise that case is skipped and the file size limit,
``RLIMIT_FSIZE``, which raises EFBIG, covers writing failures), permissions
are checked by a process that is not root, schedulers and workers are
separate ``dask scheduler`` / ``dask worker`` processes that are killed, and
memory is a nanny's memory limit.  Each test is one class of the bad-input
catalogue (:data:`ENVIRONMENT`, counted by tests/test_bad_inputs.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dask
import numpy as np
import pytest
import xarray as xr

import daskbicl
from daskbicl.batch import ResultsDB, execute, load_manifest, plan, run_batch, survey
from daskbicl.errors import NoWorkersError, StoreReadError, StoreWriteError, WorkerKilledError

#: class of failing environment -> the test that shows what daskbicl does
ENVIRONMENT = {
    "disk full while generating (ENOSPC)": "test_disk_full_while_generating",
    "disk full while saving from Python": "test_disk_full_while_saving_from_python",
    "file size limit while converting (EFBIG)": "test_file_size_limit_while_converting",
    "failed generate leaves no empty folder": "test_a_failed_generate_leaves_no_empty_folder",
    "chunk without read permission": "test_permission_denied_on_a_chunk",
    "read-only results file": "test_read_only_results_file",
    "read-only figure folder": "test_read_only_figure_folder",
    "store deleted while it is read": "test_store_deleted_while_it_is_read",
    "failed save to a URL keeps the old store": "test_a_failed_save_to_a_url_keeps_the_old_store",
    "SIGTERM during generate": "test_sigterm_during_generate_leaves_nothing_hidden",
    "scheduler unreachable": "test_unreachable_scheduler_is_exit_3_one_line",
    "scheduler without workers (score)": "test_a_scheduler_without_workers",
    "scheduler without workers (batch)": "test_a_scheduler_without_workers",
    "scheduler lost during score": "test_scheduler_lost_during_score",
    "scheduler lost during batch": "test_scheduler_lost_during_batch",
    "worker killed for memory": "test_worker_killed_for_memory_names_the_step_and_the_memory",
    "worker that keeps dying": "test_a_worker_that_keeps_dying_is_an_infrastructure_error",
    "worker killed once during score": "test_a_worker_killed_during_score_changes_nothing",
    "SIGTERM during batch": "test_sigterm_during_batch_records_the_run_as_interrupted",
    "one damaged chunk through every command": "test_one_damaged_chunk_reads_the_same_through_every_command",
    "store replaced during a batch": "test_a_store_replaced_during_a_batch_is_not_recorded",
    "one measure of a pair fails in a batch": "test_batch_commits_the_measures_that_succeed",
}

DASKBICL = [sys.executable, "-m", "daskbicl"]
NOBODY = 65534


def cli(*args, **kw):
    proc = subprocess.run([*DASKBICL, *map(str, args)], capture_output=True, text=True, timeout=kw.pop("timeout", 300),
                          **kw)
    return proc.returncode, proc.stdout, proc.stderr


def one_error_line(err: str, message: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("daskbicl: error:")]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err, err
    return lines[0]


def hidden(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob(".*") if ".tmp-" in p.name or ".old-" in p.name]


# --------------------------------------------------------------------------- writing: disk full, size limit


@contextlib.contextmanager
def tiny_disk(size: str = "300k"):
    """A real tmpfs of ``size`` (needs root and mount; else the test is skipped)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    folder = Path(tempfile.mkdtemp(prefix="daskbicl-tiny-"))
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if proc.returncode:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)
        folder.rmdir()


def test_disk_full_while_generating():
    with tiny_disk() as disk:
        # labels are stored as one-byte codes, compressed: a few million rows pass 300 kB
        code, out, err = cli("generate", disk / "out", "--rows", 3_000_000, "--cols", 1000, "--chunk", 500_000)
        line = one_error_line(err, "no space left on the device")
        assert code == 2 and "cannot write" in line and "Errno 28" in line
        # the output folder goes too when nothing in it was completed
        left = sorted(p.name for p in (disk / "out").iterdir()) if (disk / "out").exists() else []
        assert left in (["truth.zarr"], [])  # a completed store stays; the failed one is gone entirely
        assert hidden(disk) == []
        if left:
            assert daskbicl.open(disk / "out" / "truth.zarr").sizes["row"] == 3_000_000


def test_disk_full_while_saving_from_python():
    rng = np.random.default_rng(0)
    big = daskbicl.partition(rng.integers(0, 1000, 400_000), rng.integers(0, 5, 100))
    with tiny_disk() as disk:
        daskbicl.save(([1, 2, 3], [0]), disk / "old.zarr")
        with pytest.raises(StoreWriteError, match=f"cannot write {disk / 'old.zarr'}.*no space left"):
            daskbicl.save(big, disk / "old.zarr", overwrite=True)
        assert sorted(os.listdir(disk)) == ["old.zarr"]  # the old store, untouched; no temporary folder
        assert daskbicl.open(disk / "old.zarr").row_labels.values.tolist() == [1, 2, 3]


def _file_size_limit(limit: int):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_file_size_limit_while_converting(tmp_path):
    rng = np.random.default_rng(1)
    np.save(tmp_path / "rows.npy", rng.integers(0, 10**6, 300_000))
    np.save(tmp_path / "cols.npy", rng.integers(0, 3, 100))
    code, out, err = cli("convert", tmp_path / "o.zarr", "--rows", tmp_path / "rows.npy", "--cols",
                         tmp_path / "cols.npy", preexec_fn=_file_size_limit(100_000))
    line = one_error_line(err, "file too large")
    assert code == 2 and f"cannot write {tmp_path / 'o.zarr'}" in line
    assert sorted(os.listdir(tmp_path)) == ["cols.npy", "rows.npy"]


def test_a_failed_generate_leaves_no_empty_folder(tmp_path):
    code, out, err = cli("generate", tmp_path / "new" / "out", "--rows", 300_000, "--cols", 100,
                         preexec_fn=_file_size_limit(50_000))
    one_error_line(err, "file too large")
    assert code == 2 and os.listdir(tmp_path) == []  # neither out/ nor new/ is left behind


# --------------------------------------------------------------------------- permissions (a process that is not root)


@pytest.fixture
def shared(tmp_path):
    """A folder any user can read (tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="daskbicl-perm-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def as_user():
    """The command prefix that runs the CLI as a user that permissions apply to.

    Root reads any file, so as root the CLI runs as 'nobody' through
    ``setpriv`` (util-linux); when that cannot start daskbicl here (the
    interpreter under a private home folder), the test is skipped.
    """
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot check permissions")
    probe = subprocess.run([*prefix, *DASKBICL, "--version"], capture_output=True, text=True, cwd="/")
    if probe.returncode:
        pytest.skip(f"daskbicl cannot run as nobody here: {probe.stderr.strip()[-200:]}")
    return prefix


def cli_as(prefix, *args, cwd):
    proc = subprocess.run([*prefix, *DASKBICL, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def readable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def test_permission_denied_on_a_chunk(shared, as_user):
    daskbicl.save(daskbicl.partition(np.arange(1000) % 7, np.arange(50) % 3), shared / "t.zarr", chunk=256)
    shutil.copytree(shared / "t.zarr", shared / "p.zarr")
    readable(shared)
    (shared / "p.zarr" / "row_labels" / "c" / "2").chmod(0)
    code, out, err = cli_as(as_user, "score", shared / "t.zarr", shared / "p.zarr", cwd=shared)
    line = one_error_line(err, "permission denied")
    assert code == 2 and f"cannot read pred {shared / 'p.zarr'} (variable row_labels chunk 2)" in line


def test_read_only_results_file(shared, as_user):
    daskbicl.save(daskbicl.partition(np.arange(100) % 7, np.arange(10) % 3), shared / "t.zarr")
    (shared / "m.toml").write_text('[truth]\nt = "t.zarr"\n[pred]\np = "t.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\n')
    with ResultsDB(shared / "m.sqlite"):
        pass
    readable(shared)
    (shared / "m.sqlite").chmod(0o444)
    shared.chmod(0o555)  # nor can the journal be created beside it
    try:
        code, out, err = cli_as(as_user, "batch", shared / "m.toml", cwd=shared)
    finally:
        shared.chmod(0o755)
    one_error_line(err, str(shared / "m.sqlite"))
    assert code == 2 and "readonly" in err.replace("read-only", "readonly").replace(" ", "")
    with ResultsDB(shared / "m.sqlite", create=False) as db:
        assert db.runs() == []


def test_read_only_figure_folder(shared, as_user):
    rng = np.random.default_rng(2)
    daskbicl.save(daskbicl.biclustering(rng.random((1, 300)) < 0.3, rng.random((1, 40)) < 0.3), shared / "t.zarr")
    (shared / "figs").mkdir()
    readable(shared)
    (shared / "figs").chmod(0o555)
    code, out, err = cli_as(as_user, "tradeoff", shared / "t.zarr", shared / "t.zarr", "--plot",
                            shared / "figs" / "f.png", cwd=shared)
    one_error_line(err, f"--plot {shared / 'figs' / 'f.png'}: cannot write in {shared / 'figs'}")
    assert code == 2 and os.listdir(shared / "figs") == []


# --------------------------------------------------------------------------- stores that go away or fail to be replaced


def test_store_deleted_while_it_is_read(tmp_path):
    daskbicl.save(daskbicl.partition(np.arange(1000) % 7, np.arange(50) % 3), tmp_path / "t.zarr", chunk=256)
    lazy = daskbicl.open(tmp_path / "t.zarr")
    shutil.rmtree(tmp_path / "t.zarr")
    with pytest.raises(StoreReadError, match=r"cannot read .*t\.zarr \(variable (row|col)_labels chunk \d+\): a file "
                                             r"is missing \(deleted or moved while in use\?\)"):
        daskbicl.score(lazy, lazy, measures="cari")


def test_a_failed_save_to_a_url_keeps_the_old_store(tmp_path):
    """The write fails midway (a damaged chunk read while saving); the old store at the URL is untouched."""
    import fsspec

    daskbicl.save(daskbicl.partition(np.arange(1000) % 7, np.arange(50) % 3), tmp_path / "src.zarr", chunk=256)
    (tmp_path / "src.zarr" / "row_labels" / "c" / "3").write_bytes(b"\x00 not zstd")
    damaged = daskbicl.open(tmp_path / "src.zarr")
    fs = fsspec.filesystem("memory")
    for url in ("memory://keep-old/t.zarr", f"file://{tmp_path}/old.zarr"):
        daskbicl.save(([4, 5, 6], [0]), url)
        with pytest.raises(StoreReadError, match="src.zarr \\(variable row_labels chunk 3\\)"):
            daskbicl.save(damaged, url, overwrite=True)
        assert daskbicl.open(url).row_labels.values.tolist() == [4, 5, 6]
    daskbicl.save(([4, 5, 6], [0]), "memory://fresh/t.zarr")  # what a store of the same labels holds
    assert sorted(p.replace("/keep-old/", "/") for p in fs.find("/keep-old")) == sorted(
        p.replace("/fresh/", "/") for p in fs.find("/fresh"))
    assert sorted(os.listdir(tmp_path)) == ["old.zarr", "src.zarr"]
    daskbicl.save(([7, 8, 9], [0]), "memory://keep-old/t.zarr", overwrite=True)  # a good write replaces it
    assert daskbicl.open("memory://keep-old/t.zarr").row_labels.values.tolist() == [7, 8, 9]
    assert not [p for p in fs.find("/keep-old") if ".tmp-" in p or ".old-" in p]


@pytest.mark.parametrize("scheduler", ["threads", "cluster"])
def test_one_damaged_chunk_reads_the_same_through_every_command(tmp_path, scheduler, local_cluster, capfd):
    """score, tradeoff, batch, save and the API name the same store, variable and chunk, in and out of a cluster."""
    from daskbicl.cli import main

    rng = np.random.default_rng(4)
    daskbicl.save(daskbicl.biclustering(rng.random((1, 3000)) < 0.3, rng.random((1, 300)) < 0.3),
                  tmp_path / "t.zarr", chunk=256)
    shutil.copytree(tmp_path / "t.zarr", tmp_path / "bad.zarr")
    chunk = sorted((tmp_path / "bad.zarr" / "row_mask" / "c").rglob("*"))
    victim = [p for p in chunk if p.is_file()][2]
    victim.write_bytes(victim.read_bytes()[:7])
    index = ".".join(victim.relative_to(tmp_path / "bad.zarr" / "row_mask" / "c").parts)
    where = f"{tmp_path / 'bad.zarr'} (variable row_mask chunk {index})"
    (tmp_path / "m.toml").write_text('[truth]\nt = "t.zarr"\n[pred]\np = "bad.zarr"\n'
                                     '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["fmeasure"]\n')
    address = local_cluster.scheduler_address if scheduler == "cluster" else "threads"
    runs = {
        "score": ["score", tmp_path / "t.zarr", tmp_path / "bad.zarr", "--measure", "fmeasure", "--scheduler", address],
        "tradeoff": ["tradeoff", tmp_path / "t.zarr", tmp_path / "bad.zarr", "--scheduler", address],
    }
    for command, args in runs.items():
        capfd.readouterr()
        assert main(list(map(str, args))) == 2, command
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and where in err and "the chunk is damaged" in err, (command, err)
    if scheduler == "cluster":
        capfd.readouterr()
        assert main(["batch", str(tmp_path / "m.toml"), "--scheduler", address]) == 1
        err = capfd.readouterr().err
        assert f"cannot read pred {where}: the chunk is damaged" in err, err
    with pytest.raises(StoreReadError, match=re.escape(where)):
        daskbicl.save(daskbicl.open(tmp_path / "bad.zarr"), tmp_path / "copy.zarr")
    assert not (tmp_path / "copy.zarr").exists() and hidden(tmp_path) == []


# --------------------------------------------------------------------------- signals


def test_sigterm_during_generate_leaves_nothing_hidden(tmp_path):
    proc = subprocess.Popen([*DASKBICL, "generate", str(tmp_path / "out"), "--rows", "30000000", "--cols", "1000",
                             "--preds", "2"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not hidden(tmp_path):  # a store is being written
        time.sleep(0.01)
    assert hidden(tmp_path), "generate finished before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 128 + 15 and "terminated (SIGTERM)" in err and "Traceback" not in err
    assert hidden(tmp_path) == []
    out = tmp_path / "out"
    assert not out.exists() or (os.listdir(out) and all(daskbicl.open(out / n) is not None for n in os.listdir(out)))


ZARR_BUSY_AT_EXIT = """
import atexit, sys, time
import zarr.core.sync as zsync
from daskbicl.cli import script

loop = zsync._get_loop()  # Zarr's exit handler, registered at import, closes this loop
# Registered after Zarr's, so run before it: Zarr's I/O thread is still busy when its handler runs
# (as when SIGTERM lands in a chunk write) and its loop.close() raises "Cannot close a running event loop".
atexit.register(lambda: loop.call_soon_threadsafe(time.sleep, 2))
sys.argv = ["daskbicl", *sys.argv[1:]]
script()
"""


def test_sigterm_with_zarr_still_writing_says_one_line(tmp_path):
    """Zarr's exit handler failing on a busy I/O thread after SIGTERM prints nothing after daskbicl's line."""
    proc = subprocess.Popen([sys.executable, "-c", ZARR_BUSY_AT_EXIT, "generate", str(tmp_path / "out"), "--rows",
                             "30000000", "--cols", "1000", "--preds", "2"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not hidden(tmp_path):
        time.sleep(0.01)
    assert hidden(tmp_path), "generate finished before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 128 + 15, err
    assert err.strip().splitlines() == ["daskbicl: terminated (SIGTERM); nothing half-written was left"], err
    assert hidden(tmp_path) == []


# --------------------------------------------------------------------------- the cluster failing (exit 3)


def test_unreachable_scheduler_is_exit_3_one_line(tmp_path):
    daskbicl.save(([0, 1], [0]), tmp_path / "t.zarr")
    env = {**os.environ, "DASK_DASKBICL__CONNECT_TIMEOUT": "1s"}
    code, out, err = cli("score", tmp_path / "t.zarr", tmp_path / "t.zarr", "--scheduler", "tcp://127.0.0.1:9", env=env)
    assert code == 3
    one_error_line(err, "cannot connect to the Dask scheduler at 'tcp://127.0.0.1:9'")
    code, out, err = cli("score", tmp_path / "t.zarr", tmp_path / "t.zarr", "--scheduler", "nonsense")
    assert code == 2 and "--scheduler takes an address" in err  # a malformed address is the user's to fix


@contextlib.contextmanager
def processes(folder: Path, workers: int = 0, memory: str | None = None, env: dict | None = None):
    """A ``dask scheduler`` process (and ``dask worker`` processes): (address, scheduler Popen)."""
    file = Path(tempfile.mkdtemp(dir=folder)) / "scheduler.json"  # a new one: a killed scheduler leaves its file
    # Each in a session of its own, so cleaning up ends the nanny's worker processes too.
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(file)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})},
                                 start_new_session=True)
    started = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        if workers:
            args = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", str(workers),
                    "--nthreads", "1", "--no-dashboard"] + (["--memory-limit", memory] if memory else [])
            started.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            env={**os.environ, **(env or {})}, start_new_session=True))
            from distributed import Client

            with Client(address, timeout=30) as c:
                c.wait_for_workers(workers, timeout=60)
        yield address, scheduler
    finally:
        # A worker whose scheduler is gone can take long to give up: end each process group for good.
        for p in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in started:
            p.wait(timeout=30)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """truth.zarr and 6 preds of 3e6 rows in 30 chunks: each pair takes about a second to score."""
    root = tmp_path_factory.mktemp("cluster")
    code, out, err = cli("generate", root, "--rows", 3_000_000, "--cols", 3000, "--preds", 6, "--chunk", 100_000)
    assert code == 0, err
    (root / "m.toml").write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred-*.zarr"\n'
                                 '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari", "nce"]\n')
    return root


@pytest.mark.slow
def test_a_scheduler_without_workers(pairs, tmp_path):
    env = {**os.environ, "DASK_DASKBICL__WORKER_TIMEOUT": "3s"}
    with processes(tmp_path) as (address, _):
        for progress in ("--no-progress", "--progress"):  # the progress bar does not wait forever either
            code, out, err = cli("score", pairs / "truth.zarr", pairs / "pred-000.zarr", "--scheduler", address,
                                 progress, env=env)
            assert code == 3
            one_error_line(err, f"the Dask scheduler at {address} has had no worker for 3 s (daskbicl.worker_timeout)")
        assert "waiting for a worker" in err  # said while waiting, not only at the end
        code, out, err = cli("batch", pairs / "m.toml", "--results", tmp_path / "r.sqlite", "--scheduler", address,
                             env=env)
        assert code == 3
        one_error_line(err, "has had no worker for 3 s")
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        assert db.failures() == [] and [r["status"] for r in db.runs()] == ["interrupted"]
    with pytest.raises(NoWorkersError), processes(tmp_path) as (address, _):
        import dask
        from distributed import Client

        with dask.config.set({"daskbicl.worker_timeout": "2s"}), Client(address):
            daskbicl.score(pairs / "truth.zarr", pairs / "pred-000.zarr", measures="cari")


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 120.0, signal_=signal.SIGKILL) -> None:
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready(), "the condition to kill the process never came"
    assert proc.poll() is None, "it ended before it could be killed"
    proc.send_signal(signal_)


@pytest.mark.slow
def test_scheduler_lost_during_score(pairs, tmp_path):
    """Deterministic: the cluster has no worker, so the score cannot finish before its scheduler goes."""
    with processes(tmp_path, workers=0) as (address, scheduler):
        score = subprocess.Popen([*DASKBICL, "score", str(pairs / "truth.zarr"), str(pairs / "pred-000.zarr"),
                                  "--scheduler", address, "--progress"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        # the scheduler goes once the score's graph is on it
        _kill_when(scheduler, lambda: score.poll() is not None or _scheduler_has_tasks(address))
        out, err = score.communicate(timeout=120)
    assert score.returncode == 3, err
    one_error_line(err, f"lost the connection to the Dask scheduler at {address}")


def test_a_commands_client_keeps_distributed_quiet_on_a_remote_scheduler(local_cluster):
    # When the scheduler goes, distributed's client logs "Batched Comm Closed"
    # with a traceback (INFO, `distributed.batched`) before daskbicl's one line:
    # seen once in CI, timing-dependent, so here is its cause held directly.
    from daskbicl.clitools import cluster

    names = ("distributed", "distributed.client", "distributed.batched", "distributed.core")
    before = {name: logging.getLogger(name).level for name in names}
    try:
        with cluster(local_cluster.scheduler_address, quiet=True):
            for name in names:
                assert not logging.getLogger(name).isEnabledFor(logging.ERROR), name
    finally:
        for name, level in before.items():
            logging.getLogger(name).setLevel(level)


def _scheduler_has_tasks(address: str) -> bool:
    """Whether the scheduler at ``address`` holds any task (a graph was submitted to it)."""
    from distributed import Client

    with Client(address, timeout=30) as c:
        return bool(c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))


@pytest.mark.slow
def test_scheduler_lost_during_batch(pairs, tmp_path):
    """The scheduler is killed while a batch waits on it: exit 3, the pairs scored before kept, the pairs in
    flight not failures, the run interrupted, and the next run scores only the rest.

    Deterministic: one pair is scored by an earlier run; the interrupted run's cluster has no worker, so none
    of its pairs can finish, and the scheduler is killed once the run's first graph is on it."""
    results = tmp_path / "r.sqlite"
    (pairs / "one.toml").write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred-000.zarr"\n'
                                    '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari", "nce"]\n')
    code, out, err = cli("batch", pairs / "one.toml", "--results", results, "--workers", 1)
    assert code == 0, err
    with processes(tmp_path, workers=0) as (address, scheduler):
        batch = subprocess.Popen([*DASKBICL, "batch", str(pairs / "m.toml"), "--results", str(results),
                                  "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _kill_when(scheduler, lambda: batch.poll() is not None or _scheduler_has_tasks(address))
        out, err = batch.communicate(timeout=120)
    assert batch.returncode == 3, err
    one_error_line(err, "lost the connection to the Dask scheduler")
    assert "daskbicl: failed:" not in err
    with ResultsDB(results, create=False) as db:
        done = {r["pred"] for r in db.scores()}
        assert len(done) == 1 and db.failures() == []  # the earlier run's pair kept, in-flight pairs not failures
        assert [r["status"] for r in db.runs()][-1] == "interrupted"
    code, out, err = cli("batch", pairs / "m.toml", "--results", results, "--workers", 2)
    assert code == 0, err
    assert "6 pairs: 5 scored, 1 already scored, 0 failed" in out


@pytest.mark.slow
def test_worker_killed_for_memory_names_the_step_and_the_memory(tmp_path):
    rng = np.random.default_rng(0)
    z = rng.integers(0, 3, 32_000_000)
    # A plain to_zarr store of int64 labels in one 256 MB chunk (daskbicl.save would write 32 MB of codes).
    # A worker holds ~200 MiB once its tasks' imports are loaded: with a 400 MB limit it does not pause
    # (80%, 305 MiB) before the read starts, and the chunk takes it past 95% (362 MiB) for as long as the
    # read lasts, whatever the release of distributed (a 96 MB chunk on a 250 MB worker was killed on
    # one release and paused the worker before the read on another).
    xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", np.arange(10) % 2)}).to_zarr(
        tmp_path / "t.zarr", encoding={"row_labels": {"chunks": (32_000_000,)}}, consolidated=False)
    # One death is enough to call it (faster than the default 3 retries), and one task at a time on the
    # worker's one thread, so the task blamed for the death is the one that was running.
    once = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"}
    with processes(tmp_path, workers=1, memory="400MB", env=once) as (address, _):
        code, out, err = cli("score", tmp_path / "t.zarr", tmp_path / "t.zarr", "--scheduler", address,
                             "--measure", "cari")
    assert code == 3, err
    line = one_error_line(err, "workers ran out of memory reading row_labels chunk 0")
    assert "1 worker was restarted by its nanny for passing 95% of its 381.47 MiB memory limit" in line
    assert "this step needs more than 381.47 MiB per worker" in line


@pytest.mark.slow
def test_workers_paused_over_memory_end_the_wait(tmp_path):
    """A worker paused over its memory (distributed.worker.memory.pause) starts no task until its memory
    falls; memory it cannot spill never falls: after daskbicl.worker_timeout the score stops (exit 3)."""
    daskbicl.save(([0, 1, 1], [0, 1]), tmp_path / "t.zarr")
    # 1% of 2 GB (19 MiB) is below what any worker process holds from its start: the worker pauses at once.
    paused = {"DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE": "0.01", "DASK_DISTRIBUTED__WORKER__MEMORY__SPILL": "False",
              "DASK_DISTRIBUTED__WORKER__MEMORY__TARGET": "False"}
    with processes(tmp_path, workers=1, memory="2GB", env=paused) as (address, _):
        from distributed import Client

        with Client(address, timeout=30) as c:  # the worker's memory monitor has paused it
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and [w["status"] for w in c.scheduler_info()["workers"].values()] != ["paused"]:
                time.sleep(0.1)
            assert [w["status"] for w in c.scheduler_info()["workers"].values()] == ["paused"]
            with dask.config.set({"daskbicl.worker_timeout": "3s"}), \
                    pytest.raises(daskbicl.NoWorkersError, match="has been paused with no task running for 3 s"):
                daskbicl.score(tmp_path / "t.zarr", tmp_path / "t.zarr", measures=["cari"])
        code, out, err = cli("score", tmp_path / "t.zarr", tmp_path / "t.zarr", "--scheduler", address,
                             "--measure", "cari", env={**os.environ, "DASK_DASKBICL__WORKER_TIMEOUT": "3s"})
    assert code == 3, err
    line = one_error_line(err, "workers ran out of memory")
    assert "the one worker of the Dask scheduler at" in line and "has been paused with no task running for 3 s" in line
    assert "1.86 GiB memory limit" in line and "start workers with a larger --memory-limit" in line
    assert "is paused over its memory with no task running (giving up after 3 s" in err  # said while waiting


def _die():
    os._exit(1)


def test_a_worker_that_keeps_dying_is_an_infrastructure_error():
    """KilledWorker reaches the user as WorkerKilledError (exit 3 on the CLI), naming the step."""
    import dask
    from distributed import Client, LocalCluster

    from daskbicl.scheduling import compute

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.CRITICAL) as cluster, Client(cluster):
            with pytest.raises(WorkerKilledError, match="a worker died each time it was running step 'die'") as info:
                compute(dask.delayed(_die, pure=False)())
    assert info.value.step == "running step 'die'" and info.value.memory_limit


@pytest.mark.slow
def test_a_worker_killed_during_score_changes_nothing(pairs):
    """A worker dies once mid-score (SIGKILL); its tasks are recomputed elsewhere and the values are exact."""
    import threading

    from distributed import Client, LocalCluster

    truth, pred = pairs / "truth.zarr", pairs / "pred-001.zarr"
    calm = daskbicl.score(truth, pred, measures=["cari", "nce", "ari_rows"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        pids = client.run(os.getpid)
        outcome = {}
        scoring = threading.Thread(target=lambda: outcome.update(
            value=daskbicl.score(truth, pred, measures=["cari", "nce", "ari_rows"])))
        scoring.start()

        def busy():
            return any(client.run_on_scheduler(lambda dask_scheduler: [len(ws.processing) for ws in
                                                                         dask_scheduler.workers.values()]))
        deadline = time.monotonic() + 60
        while not busy() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(next(iter(pids.values())), signal.SIGKILL)
        scoring.join(timeout=240)
        assert not scoring.is_alive() and outcome["value"] == calm
        assert next(iter(pids.values())) not in client.run(os.getpid).values()  # it really died


@pytest.mark.slow
def test_sigterm_during_batch_records_the_run_as_interrupted(pairs, tmp_path):
    """Deterministic: the cluster has no worker, so no pair can finish before the batch is terminated
    (with a worker, the batch could end before the signal: seen in a fresh-clone run)."""
    results = tmp_path / "r.sqlite"
    with processes(tmp_path, workers=0) as (address, _):
        batch = subprocess.Popen([*DASKBICL, "batch", str(pairs / "m.toml"), "--results", str(results),
                                  "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def started():
            try:
                with contextlib.closing(sqlite3.connect(results, timeout=30)) as con:
                    return bool(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
            except sqlite3.Error:
                return False
        _kill_when(batch, lambda: batch.poll() is not None or (started() and _scheduler_has_tasks(address)),
                   signal_=signal.SIGTERM)
        out, err = batch.communicate(timeout=120)
    assert batch.returncode == 128 + 15 and "terminated (SIGTERM)" in err and "Traceback" not in err, err
    with ResultsDB(results, create=False) as db:
        assert [r["status"] for r in db.runs()] == ["interrupted"] and db.failures() == []


# --------------------------------------------------------------------------- batch: what is recorded


def test_a_store_replaced_during_a_batch_is_not_recorded(tmp_path, client):
    """Fingerprinted when planned, replaced before the workers read it: nothing is filed under the old fingerprint."""
    rng = np.random.default_rng(3)
    z, w = rng.integers(0, 4, 5000), rng.integers(0, 3, 200)
    daskbicl.save(daskbicl.partition(z, w), tmp_path / "truth.zarr")
    daskbicl.save(daskbicl.perturb(daskbicl.partition(z, w), 0.3, seed=1), tmp_path / "pred.zarr")
    (tmp_path / "m.toml").write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred.zarr"\n'
                                     '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\n')
    manifest = load_manifest(tmp_path / "m.toml")
    with ResultsDB(tmp_path / "r.sqlite") as db:
        the_plan = plan(manifest, db, stores=survey(manifest))
        old_fp = the_plan.jobs[0].pred_fp
        daskbicl.save(daskbicl.perturb(daskbicl.partition(z, w), 0.6, seed=2), tmp_path / "pred.zarr", overwrite=True)
        report = execute(the_plan, db, client)
        assert (report.scored, report.failed) == (0, 1)
        assert "pred" in report.failures[0][2] and "changed while it was being scored" in report.failures[0][2]
        assert db.scores() == []  # nothing under the old fingerprint
    again = run_batch(tmp_path / "m.toml", tmp_path / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.failed) == (1, 0, 0)
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        (row,) = db.scores()
    assert row["pred_fp"] != old_fp
    assert row["value"] == daskbicl.cari(str(tmp_path / "truth.zarr"), str(tmp_path / "pred.zarr"))


def test_batch_commits_the_measures_that_succeed(tmp_path, client):
    """The micro-object step of a pair fails (too much work for the exact method it is held to); its 12 bicluster
    measures are kept.  (Under the default ``method="auto"`` the micro measures would be sampled instead.)"""
    import dask

    rng = np.random.default_rng(0)
    for name in ("truth.zarr", "pred.zarr"):
        daskbicl.save(daskbicl.biclustering(rng.random((4, 3000)) < 0.3, rng.random((4, 400)) < 0.3), tmp_path / name)
    micro = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]
    bicluster = [f"{m}{s}" for m in ("dice", "fmeasure", "goodness", "jaccard") for s in ("", "_corrected", "_space")]
    (tmp_path / "m.toml").write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred.zarr"\n'
                                     '[[pairs]]\ntruth = "t"\npred = "p"\n'
                                     f'measures = {bicluster}\n'
                                     f'[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = {micro}\n'
                                     'params = { method = "exact" }\n')
    with dask.config.set({"daskbicl.max_work": 1e3}):
        report = run_batch(tmp_path / "m.toml", tmp_path / "r.sqlite", client=client)
    assert (report.scored, report.failed, report.exit_code) == (0, 1, 1)
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        kept = {r["measure"] for r in db.scores()}
        (failure,) = db.failures()
    assert kept == set(bicluster)
    assert failure["measures"] == "mocice_bcubed,micro_ce,micro_rnia,e4sc" and "max_work" in failure["reason"]
    again = run_batch(tmp_path / "m.toml", tmp_path / "r.sqlite", client=client)  # only the failed ones are redone
    assert (again.scored, again.failed) == (1, 0)
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        assert {r["measure"].split(".")[0] for r in db.scores()} == kept | {"mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"}
