"""Where and how graphs run: the active Client, computing, scattering inputs.

The one module that both :mod:`daskbicl.io` (writing stores) and
:mod:`daskbicl.engine` (counting passes) use to run work, so neither imports
the other for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import re
import sys
import time
from concurrent.futures import CancelledError

import dask

from . import config
from .errors import DaskbiclError, NoWorkersError, SchedulerError, WorkerKilledError, one_line

logger = logging.getLogger("daskbicl")

__all__ = [
    "InlineRead", "active_client", "compute", "in_process", "inline_reader", "inline_reads", "inlining", "read_inline", "read_tasks_used", "infrastructure_failure", "lost_scheduler", "read_order", "READ_ORDER", "ReadOrder",
    "scatter_blocks", "scatter_inputs", "task_bytes", "task_chunks", "thread_memory", "wait_watched", "worker_killed",
]


#: Set by :func:`scatter_inputs` while a graph is built that is computed at once.
_SCATTER = contextvars.ContextVar("daskbicl_scatter_inputs", default=False)


@contextlib.contextmanager
def scatter_inputs():
    """Within this block, in-memory blocks are scattered to the active cluster.

    Embedding numpy data in a task graph makes the scheduler carry it (dask
    warns "Sending large graph") and is slower; scattered blocks enter the
    graph as Futures.  A Future lives only as long as the graph that holds it
    and belongs to the Client that made it, so only a caller that builds
    *and* computes the graph inside the block may use it (:func:`daskbicl.score`
    does); graphs built elsewhere embed their blocks.
    """
    token = _SCATTER.set(True)
    try:
        yield
    finally:
        _SCATTER.reset(token)


def scatter_blocks(blocks: list[tuple]) -> list[tuple]:
    """Blocks as Futures on the active cluster inside :func:`scatter_inputs`, else unchanged."""
    if not _SCATTER.get() or not blocks:
        return blocks
    client = active_client()
    if client is None:
        return blocks
    width = len(blocks[0])
    flat = client.scatter([a for block in blocks for a in block], hash=False)
    return [tuple(flat[i : i + width]) for i in range(0, len(flat), width)]


#: Set by :func:`in_process` while small inputs are scored in this process.
_IN_PROCESS = contextvars.ContextVar("daskbicl_in_process", default=False)


@contextlib.contextmanager
def in_process():
    """Within this block, :func:`compute` runs on dask's synchronous scheduler in this process.

    Even with a ``distributed`` Client active (:func:`active_client` is None
    here): small in-memory inputs cost more to ship and schedule than to
    count (:func:`daskbicl.measures.plan.in_process`).
    """
    token = _IN_PROCESS.set(True)
    try:
        yield
    finally:
        _IN_PROCESS.reset(token)


def active_client():
    """The current ``dask.distributed`` Client, or None (always None inside :func:`in_process`).

    A Client exists only if ``distributed`` was imported, so this never
    imports it (``import daskbicl`` stays light).
    """
    if _IN_PROCESS.get() or "distributed" not in sys.modules:
        return None
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - distributed is a core dependency
        return None
    try:
        return default_client()
    except ValueError:
        return None


def read_order(key) -> int:
    """The ``priority`` annotation of a read task (:func:`dask.annotate` takes it per key): -k for block k.

    A store's arrays are built under ``dask.annotate(priority=read_order)``
    (:func:`daskbicl.io.store.open_store`), so on a ``distributed`` cluster
    every graph that reads them asks for block 0 first, then block 1, ...,
    and every other task (counting, merging: no annotation, priority 0)
    runs ahead of any further read.  A block is then counted, and its
    memory released, soon after it is read, also when graphs submitted one
    after another read the same store (a batch's waves of pairs sharing a
    truth), where dask's own order holds only within one submission.  The
    local schedulers ignore it.

    >>> read_order(("read-row_labels", 3)), read_order(("read-row_mask", 0, 2)), read_order("other")
    (-3, -2, 0)
    """
    if isinstance(key, tuple) and len(key) > 1 and isinstance(key[-1], int):
        return -key[-1]
    return 0


class ReadOrder:
    """:func:`read_order` as a ``priority`` annotation value that dask's layer fusion accepts.

    When dask fuses blockwise layers (``dask.array``'s graph optimisation, in
    any computation a user makes of an opened store's arrays) it combines
    their ``priority`` annotations with ``max``; plain functions cannot be
    compared, so two fused reads annotated with :func:`read_order` itself
    raised ``TypeError``.  Instances compare equal to each other and to no
    priority as larger (``max`` keeps the first value), and are called per
    key like the function (distributed expands a callable annotation per
    task key).
    """

    def __call__(self, key) -> int:
        return read_order(key)

    def __eq__(self, other) -> bool:
        return isinstance(other, ReadOrder)

    def __hash__(self) -> int:
        return hash(ReadOrder)

    def __lt__(self, other) -> bool:
        return False

    def __gt__(self, other) -> bool:
        return False

    def __repr__(self) -> str:
        return "ReadOrder()"


#: The annotation value of every store read (:func:`daskbicl.io.store.open_store`).
READ_ORDER = ReadOrder()


#: The attribute :func:`read_inline` sets on a store array: the reader its blocks can be read through.
_READER = "_daskbicl_inline_reader"


def read_inline(array, reader) -> None:
    """Let a counting task read ``array``'s blocks itself, through ``reader`` (``reader[slices]``).

    ``array`` is a store read made by ``dask.array.from_array(reader, ...)``
    (:func:`daskbicl.io.store.open_store` does this for a pred).  Where a
    counting pass consumes it in its own blocks, the task reads the block
    it counts instead of depending on a read task: no read task to place,
    and no block sent from the worker that read it to the worker that
    counts it beside the other side's block.  A truth is never read so: its
    read tasks are shared by every pair of a batch.

    The reader is kept on this very array object, not under its name: the
    same store opened as a truth makes an array of the same name, which
    keeps its read tasks (and its own role in error messages).
    """
    setattr(array, _READER, reader)


#: While :func:`inline_reads` is active: the arrays whose blocks counting tasks read themselves.
_INLINED = contextvars.ContextVar("daskbicl_inlined_reads", default=None)


@contextlib.contextmanager
def inline_reads():
    """Within this block, counting passes read the blocks of :func:`read_inline` arrays themselves.

    Yields the list of the arrays so read (nested blocks share the outer
    one's list).  Outside such a block every array is read by its own read
    tasks.
    """
    used = _INLINED.get()
    if used is not None:
        yield used
        return
    token = _INLINED.set([])
    try:
        yield _INLINED.get()
    finally:
        _INLINED.reset(token)


def inlining() -> bool:
    """Whether :func:`inline_reads` is active (a pass built so differs from one built outside)."""
    return _INLINED.get() is not None


def inline_reader(array):
    """The reader of ``array`` when a counting task may read its blocks itself, else None.

    Only inside :func:`inline_reads`, for the very array :func:`read_inline`
    was given (not another of the same name: the same store opened as a
    truth); the array is added to the block's list.
    """
    used = _INLINED.get()
    reader = None if used is None else getattr(array, _READER, None)
    if reader is not None:
        used.append(array)
    return reader


def read_tasks_used(graphs, arrays) -> bool:
    """Whether the graphs of ``graphs`` (dask collections) also hold read tasks of ``arrays``."""
    from dask.base import is_dask_collection
    from dask.core import flatten

    keys = {k for a in arrays for k in flatten(a.__dask_keys__())}
    for graph in graphs:
        if is_dask_collection(graph):
            dsk = graph.__dask_graph__()
            if any(k in dsk for k in keys):
                return True
    return False


class InlineRead:
    """One block of a store array, read by the task that receives it (:func:`read_inline`)."""

    __slots__ = ("reader", "index")

    def __init__(self, reader, index: tuple):
        self.reader, self.index = reader, index

    def read(self):
        """The block as a numpy array."""
        import numpy as np

        return np.asarray(self.reader[self.index])

    def __dask_tokenize__(self):
        from dask.base import tokenize

        return ("daskbicl-inline-read", tokenize(self.reader), repr(self.index))


def cluster_threads() -> int:
    """Worker threads of the active cluster, else of dask's local scheduler (``num_workers``, else the CPUs).

    A cluster that has no worker yet (an adaptive one scaling up) counts as
    this machine's CPUs.
    """
    import os

    client = active_client()
    threads = 0
    if client is not None:
        try:
            threads = sum(int(n) for n in client.nthreads().values())
        except Exception:  # noqa: BLE001 - a scheduler that does not answer: size for this machine
            threads = 0
    return threads or int(dask.config.get("num_workers", None) or os.cpu_count() or 1)


def task_chunks(stored: tuple[int, ...], item_bytes: int, threads: int | None = None,
                memory: int | None = None) -> tuple[int, ...]:
    """Block lengths along one axis for read tasks that each cover a range of ``stored`` chunks.

    A task per stored chunk costs the scheduler a round trip each (1-2 ms
    in ``distributed``), while a pass needs only a few tasks per worker
    thread to keep them all busy.  Consecutive stored chunks are grouped,
    as many per task as leave at least ``daskbicl.tasks_per_thread`` times
    the cluster's threads (:func:`cluster_threads`, or ``threads``) tasks,
    and at most :func:`task_bytes` bytes per task (``item_bytes``: the
    bytes of one position along the axis, all other axes included; ``memory``:
    the memory of a worker thread, default the cluster's).  Whole stored
    chunks only: a task reads each of its chunks whole.

    >>> task_chunks((4,) * 10, 1, threads=1), task_chunks((4,) * 10, 1 << 24, threads=1)
    ((8, 8, 8, 8, 8), (4, 4, 4, 4, 4, 4, 4, 4, 4, 4))
    >>> len(task_chunks((4,) * 40, 1 << 20, threads=1)), len(task_chunks((4,) * 40, 1 << 20, threads=1, memory=2**29))
    (4, 20)
    """
    stored = tuple(int(c) for c in stored)
    if len(stored) < 2:
        return stored
    want = max(1, int(config.get("tasks_per_thread")) * (threads or cluster_threads()))
    fits = task_bytes(memory) // max(1, max(stored) * int(item_bytes))
    group = max(1, min(fits, len(stored) // want))
    return tuple(sum(stored[i : i + group]) for i in range(0, len(stored), group))


#: A read task's block of one array takes at most this share of a worker thread's memory: a pass holds the
#: blocks of two to four arrays per thread, with the next tasks' blocks read while the last are counted,
#: beside the worker's own ~300 MB (Python, NumPy, pandas with pyarrow, numba and its kernels, xarray),
#: below distributed's spill threshold (70 % of the limit).  Measured at 10^9 labels per axis on two 700 MB
#: one-thread workers (benchmarks/out_of_core.py): 8 MiB tasks spilled nothing (peak 351 MB), 20 MiB
#: tasks spilled 7 GB (peak 587 MB); this share gives 10 MiB there, two stored chunks of uint8 codes.
TASK_MEMORY_SHARE = 64


def task_bytes(memory: int | None = None) -> int:
    """Bytes of one array a read task covers at most: ``daskbicl.task_bytes``, and at most a
    :data:`TASK_MEMORY_SHARE`-th of ``memory`` (default: the memory limit per thread of the active
    cluster's smallest worker, :func:`thread_memory`; no limit known: the setting alone).

    >>> task_bytes(700 * 10**6) // 2**20  # a worker thread of 700 MB
    10
    """
    limit = int(config.get("task_bytes"))
    memory = thread_memory() if memory is None else memory
    return max(1, min(limit, memory // TASK_MEMORY_SHARE)) if memory else limit


def thread_memory() -> int | None:
    """The memory limit per thread of the active cluster's smallest worker (bytes); None without a cluster
    or a limit (dask's local schedulers share this process's memory: no limit is set)."""
    client = active_client()
    if client is None:
        return None
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
        limits = [int(w.get("memory_limit") or 0) // max(1, int(w.get("nthreads") or 1)) for w in workers]
    except Exception:  # noqa: BLE001 - a scheduler that does not answer: the setting alone
        return None
    limits = [n for n in limits if n > 0]
    return min(limits) if limits else None


def _local_scheduler(name):
    """The ``get`` function of dask's single-machine scheduler ``name`` (None: threads), when no Client can exist.

    ``dask.compute`` given a scheduler *name* imports ``distributed`` to look
    for a Client (0.5 s, most of a small ``daskbicl score`` in the shell);
    given the function it does not.  With ``distributed`` imported, or a
    scheduler that is not a single-machine name, dask decides as usual.
    """
    from dask.base import named_schedulers

    if "distributed" in sys.modules and not _IN_PROCESS.get():
        return name
    if name is None:
        return named_schedulers["threads"]
    return named_schedulers.get(name, name) if isinstance(name, str) else name


def compute(*objs, progress: bool = False):
    """Compute dask objects together on the active Client (or the local scheduler).

    With ``progress=True`` a text progress bar is written to stderr: dask's
    :class:`~dask.diagnostics.ProgressBar` locally, ``distributed.progress``
    on a cluster.  On a cluster the wait is watched (:func:`wait_watched`):
    a scheduler lost, no worker for ``daskbicl.worker_timeout`` or a worker
    killed each time it runs a task ends the computation with an
    :class:`~daskbicl.errors.InfrastructureError` that says so.
    """
    if _IN_PROCESS.get():
        return dask.compute(*objs, scheduler=_local_scheduler("sync"))
    client = active_client()
    if client is None:
        scheduler = _local_scheduler(dask.config.get("scheduler", None))
        if not progress:
            return dask.compute(*objs, scheduler=scheduler)
        from dask.diagnostics import ProgressBar

        with ProgressBar(out=sys.stderr, minimum=1.0):
            return dask.compute(*objs, scheduler=scheduler)
    started = time.time()
    limit = worker_memory(client)
    from distributed.client import ClosedClientError

    try:
        futures = client.compute(list(objs))
    except (CancelledError, OSError, ClosedClientError) as exc:
        raise lost_scheduler(client, exc) from None
    if progress:
        from distributed import progress as show_progress

        # The text bar blocks until the work is done: first make sure there is a worker to do it.
        try:
            wait_for_a_worker(client)
        except BaseException:
            client.cancel(futures)
            raise
        # distributed's text bar writes to sys.stdout: send it to stderr
        with contextlib.redirect_stdout(sys.stderr):
            show_progress(futures, multi=False)
            sys.stderr.flush()
    try:
        wait_watched(client, futures)
        return tuple(client.gather(futures))
    except BaseException as exc:
        if progress:  # the bar's line is unfinished: the error starts on a line of its own
            sys.stderr.write("\n")
        raise infrastructure_failure(client, exc, started, limit) from None


def worker_memory(client) -> int | None:
    """The memory limit (bytes) of the cluster's largest worker now; None when unknown or unlimited."""
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
        return max((w.get("memory_limit") or 0 for w in workers), default=0) or None
    except Exception:  # no answer: the message says less
        return None


def _address(client) -> str:
    try:
        return str(client.scheduler.address)
    except Exception:  # the scheduler object is gone with the connection
        return "the scheduler"


def lost_scheduler(client, exc: BaseException) -> SchedulerError:
    # A cancelled future's text lists every key: the cause is the connection, say only that.
    detail = "" if isinstance(exc, CancelledError) else f" ({type(exc).__name__}: {one_line(exc)[:200]})"
    return SchedulerError(
        f"lost the connection to the Dask scheduler at {_address(client)}{detail}; the work in flight is "
        "lost (nothing was recorded for it): run again when the scheduler is back"
    )


def _connected(client) -> bool:
    return getattr(client, "status", "running") == "running"


def infrastructure_failure(client, exc: BaseException, started: float, limit: int | None = None) -> BaseException:
    """``exc`` as the :class:`InfrastructureError` it means, or ``exc`` itself (a task's own error).

    A task's error (a damaged chunk, bad labels) is the inputs' and passes
    through; a scheduler connection lost, or a worker killed each time it ran
    a task, is the cluster's.  ``started`` (``time.time()``) bounds the
    scheduler events searched for memory restarts; ``limit`` is the workers'
    memory limit when the computation started (:func:`worker_memory`).
    """
    from distributed import KilledWorker
    from distributed.client import ClosedClientError

    if isinstance(exc, KilledWorker):
        return worker_killed(client, exc, started, limit)
    if isinstance(exc, ClosedClientError):  # the connection went while a graph was being sent
        return lost_scheduler(client, exc)
    if isinstance(exc, (CancelledError, OSError, TimeoutError)) and not isinstance(exc, DaskbiclError):
        if not _connected(client) or "connection" in str(exc).lower():
            return lost_scheduler(client, exc)
    return exc


def _bytes(n: float) -> str:
    from dask.utils import format_bytes

    return format_bytes(int(n))


def describe_step(key) -> str:
    """What a task does, from its key: ``reading row_labels chunk 3``, ``running step 'bincount' (block 2)``,
    ``reading and counting row_labels block 0`` (a counting task that reads its pred block itself)."""
    from dask.utils import key_split

    name = key[0] if isinstance(key, tuple) else key
    index = ".".join(map(str, key[1:])) if isinstance(key, tuple) and len(key) > 1 else None
    text = str(name)
    for var in ("row_labels", "col_labels", "row_mask", "col_mask"):
        read_here = re.search(rf"-{var}-block-(\d+)-", text)  # a counting task that reads its block itself
        if read_here:
            return f"reading and counting {var} block {read_here.group(1)}"
        if f"open_dataset-{var}" in text or f"-{var}-" in text:
            return f"reading {var}" + (f" chunk {index}" if index else "")
    return f"running step {key_split(name)!r}" + (f" (block {index})" if index else "")


def worker_killed(client, exc, started: float, limit: int | None = None) -> WorkerKilledError:
    """A :class:`WorkerKilledError` naming the step, and the memory it needs when the workers ran out of it."""
    key = exc.task
    step = describe_step(key)
    rss = None
    restarts = 0
    try:
        events = client.get_events("worker-restart-memory")
        mine = [msg for when, msg in events if when >= started - 1 and isinstance(msg, dict)]
        restarts = len(mine)
        rss = max((m.get("rss") or 0 for m in mine), default=None) or None
    except Exception:  # the scheduler cannot say: report what is known
        pass
    limit = limit or worker_memory(client)
    attempts = exc.allowed_failures + 1
    if restarts:
        terminate = dask.config.get("distributed.worker.memory.terminate", 0.95) or 0.95
        have = f"{_bytes(limit)} memory limit" if limit else "memory limit"
        who = "1 worker was restarted by its nanny" if attempts == 1 else \
            f"{attempts} workers were restarted by their nanny"
        text = (
            f"workers ran out of memory {step} (task {key!r}): {who} for passing {terminate:.0%} of "
            f"{'its' if attempts == 1 else 'their'} {have}"
            + (f" (the largest at {_bytes(rss)})" if rss else "")
            + f"; this step needs more than {_bytes(limit) if limit else 'that'} per worker: start workers with "
            "a larger --memory-limit (or fewer threads each), or write the stores with smaller chunks"
        )
    else:
        text = (
            f"a worker died each time it was {step} (task {key!r}; {attempts} attempt{'s' * (attempts > 1)}, no memory "
            "restart recorded: killed from outside, or a crash); see the workers' logs, then retry"
        )
    error = WorkerKilledError(text)
    error.task, error.step, error.memory_limit, error.rss = str(key), step, limit, rss
    return error


class _Watch:
    """Says what a wait waits for: raises when the scheduler is gone, or has had no worker that runs tasks
    (none at all, or every one paused over its memory) for ``daskbicl.worker_timeout``."""

    def __init__(self, client):
        self.client = client
        self.timeout = dask.utils.parse_timedelta(config.get("worker_timeout"))
        self.since: float | None = None  # since when no worker (None: there is one)
        self.paused_since: float | None = None  # since when every worker is paused
        self.paused_checked = -float("inf")
        self.warned = False

    def check(self) -> None:
        if not _connected(self.client):
            raise lost_scheduler(self.client, CancelledError("the client is " + str(self.client.status)))
        try:
            workers = self.client.scheduler_info(n_workers=1).get("n_workers", 1)
        except (OSError, TimeoutError, CancelledError) as exc:
            raise lost_scheduler(self.client, exc) from None
        now = time.monotonic()
        if workers:
            self.since = None
            self._check_paused(now)
            return
        self.paused_since = None
        if self.since is None:
            self.since = now
        # Said once, and not for the moment a nanny takes to restart a worker.
        if not self.warned and now - self.since >= min(10.0, self.timeout / 2):
            self.warned = True
            logger.warning("daskbicl: waiting for a worker: the Dask scheduler at %s has none (giving up after "
                           "%g s (daskbicl.worker_timeout))", _address(self.client), self.timeout)
        if now - self.since > self.timeout:
            address = _address(self.client)
            raise NoWorkersError(
                f"the Dask scheduler at {address} has had no worker for {self.timeout:g} s "
                f"(daskbicl.worker_timeout): start workers (dask worker {address}) or check that they can "
                "reach the scheduler, then run again"
            )

    def _check_paused(self, now: float) -> None:
        """A worker pauses above ``distributed.worker.memory.pause`` of its memory and starts no task until
        its memory falls; memory that cannot be spilled never falls: every worker paused with no task
        running for ``daskbicl.worker_timeout`` ends the wait (looked at every tenth of it, at most every
        10 s: the list of workers is fetched then, not at each poll)."""
        if now - self.paused_checked < min(10.0, self.timeout / 10):
            return
        self.paused_checked = now
        try:
            workers = self.client.scheduler_info(n_workers=-1)["workers"]
        except (OSError, TimeoutError, CancelledError) as exc:
            raise lost_scheduler(self.client, exc) from None
        if not workers or any(w.get("status") != "paused" or _executing(w) for w in workers.values()):
            self.paused_since = None  # a worker runs tasks, or a paused one still runs its task
            return
        if self.paused_since is None:
            self.paused_since = now
        if not self.warned and now - self.paused_since >= min(10.0, self.timeout / 2):
            self.warned = True
            logger.warning("daskbicl: every worker of the Dask scheduler at %s is paused over its memory with no "
                           "task running (giving up after %g s (daskbicl.worker_timeout))", _address(self.client),
                           self.timeout)
        if now - self.paused_since > self.timeout:
            raise self._all_paused(workers)

    def _all_paused(self, workers: dict) -> NoWorkersError:
        limit = max((w.get("memory_limit") or 0 for w in workers.values()), default=0)
        try:
            keys = [k for ks in self.client.processing(list(workers)).values() for k in ks]
        except Exception:  # the scheduler cannot say: the message says less
            keys = []
        step = f" {describe_step(keys[0])} (task {keys[0]!r})" if keys else ""
        n = len(workers)
        who = "the one worker" if n == 1 else f"every one of the {n} workers"
        return NoWorkersError(
            f"workers ran out of memory{step}: {who} of the Dask scheduler at {_address(self.client)} has been "
            f"paused with no task running for {self.timeout:g} s (daskbicl.worker_timeout), over the share of "
            f"{'its' if n == 1 else 'their'} {_bytes(limit) + ' ' if limit else ''}memory limit at which a worker "
            "pauses (distributed.worker.memory.pause, 80% by default) with memory it cannot spill; this step "
            "needs more memory than a worker has: start workers with a larger --memory-limit (or fewer threads "
            "each), or write the stores with smaller chunks"
        )


def _executing(worker: dict) -> int:
    """Tasks a worker is running, from its last heartbeat (0 when it does not say)."""
    counts = (worker.get("metrics") or {}).get("task_counts") or {}
    return int(counts.get("executing", 0) or 0)


def wait_for_a_worker(client, poll: float = 1.0) -> None:
    """Return once the scheduler has a worker; :class:`NoWorkersError` after ``daskbicl.worker_timeout``."""
    watch = _Watch(client)
    watch.check()
    while watch.since is not None:
        time.sleep(poll)
        watch.check()


def wait_watched(client, futures, *, return_when: str = "ALL_COMPLETED", poll: float = 1.0):
    """``distributed.wait`` that never waits silently.

    Returns ``(done, not_done)`` as :func:`distributed.wait` does.  Every
    ``poll`` seconds without progress, checks that the scheduler is still
    connected (else :class:`~daskbicl.errors.SchedulerError`) and has a
    worker (else, after ``daskbicl.worker_timeout``,
    :class:`~daskbicl.errors.NoWorkersError`; a warning says what it waits
    for from the first poll with no worker).
    """
    from distributed import wait

    watch = _Watch(client)
    while True:
        try:
            return wait(futures, timeout=poll, return_when=return_when)
        except (TimeoutError, asyncio.TimeoutError):  # distinct types before Python 3.11
            watch.check()
        except CancelledError as exc:  # distributed.wait raises when a future is cancelled
            if not _connected(client) or "connection" in str(exc).lower():
                raise lost_scheduler(client, exc) from None
            done = [f for f in futures if f.done()]  # cancelled by someone else: each caller sees its own
            return done, [f for f in futures if not f.done()]


#: The Dask event topic on which a worker's numba compiles are told to its clients (``Client.subscribe_topic``).
COMPILE_TOPIC = "daskbicl-compile"


def _tell_clients(what: str, group: str, seconds: float) -> None:
    """In a Dask worker: an event on :data:`COMPILE_TOPIC` (``{what, group, seconds, worker}``), so a client
    subscribed to it says on its own stderr that the worker compiles (the ``CompileWarning`` goes to the
    worker's log only).  Elsewhere: nothing."""
    if "distributed" not in sys.modules:
        return
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # not in a worker
        return
    worker.log_event(COMPILE_TOPIC, {"what": what, "group": group, "seconds": round(seconds, 3),
                                     "worker": worker.address})


def _listen_for_compiles() -> None:
    from .kernels import compiled

    if _tell_clients not in compiled.NOTIFY:
        compiled.NOTIFY.append(_tell_clients)


_listen_for_compiles()
