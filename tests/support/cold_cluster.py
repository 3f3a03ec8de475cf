"""A Dask cluster of cold workers: a ``dask scheduler`` process and ``dask worker`` processes whose numba cache
(``NUMBA_CACHE_DIR``) is a new empty folder, so their first use of a daskbicl kernel compiles it.

Used by tests/batch/test_nights.py (the first night of a lab compiles on its workers) and
tests/test_warmup_workers.py (``daskbicl warm --scheduler``, ``batch --warm``).  Each process runs in a
session of its own and is ended, with its children, by the process group this module started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path


class ColdCluster:
    """The scheduler's address, and :meth:`add_worker` for one more worker process (a new cache by default)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.file = folder / "scheduler.json"
        self.started: list[subprocess.Popen] = []
        self.address = ""

    def _start(self, *args: str, env: dict | None = None) -> None:
        self.started.append(subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})},
                                             start_new_session=True))

    def start_scheduler(self) -> None:
        from distributed import Client

        self._start("distributed.cli.dask_scheduler", "--port", "0", "--no-dashboard", "--scheduler-file",
                    str(self.file))
        with Client(scheduler_file=str(self.file), timeout=60) as c:  # the client waits for the file
            self.address = c.scheduler.address

    def add_worker(self, cache: Path | None = None, *, cold: bool = True) -> Path | None:
        """One more worker process (one thread) with ``cache`` as its numba cache (a new empty folder by
        default; with ``cold`` False, the cache of this process's environment); returns when the scheduler
        counts it."""
        from distributed import Client

        if cache is None and cold:
            cache = Path(os.path.realpath(self.folder)) / f"numba-cache-{len(self.started)}"
            cache.mkdir()
        with Client(self.address, timeout=60) as c:
            before = len(c.scheduler_info()["workers"])
            self._start("distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", "1",
                        "--no-dashboard", env={"NUMBA_CACHE_DIR": str(cache)} if cache else None)
            c.wait_for_workers(before + 1, timeout=120)
        return cache

    def stop(self) -> None:
        for p in reversed(self.started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in self.started:
            p.wait(timeout=30)


@contextlib.contextmanager
def cold_cluster(folder: Path, workers: int = 1, *, shared_cache: bool = False):
    """A scheduler and ``workers`` cold worker processes (each its own empty numba cache, or with
    ``shared_cache`` one empty cache for all, as workers of one image share theirs): a :class:`ColdCluster`."""
    folder.mkdir(parents=True, exist_ok=True)
    cluster = ColdCluster(folder)
    try:
        cluster.start_scheduler()
        shared = None
        for _ in range(workers):
            made = cluster.add_worker(shared)
            shared = made if shared_cache else None
        yield cluster
    finally:
        cluster.stop()
