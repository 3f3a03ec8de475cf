"""Where and how graphs run: the active Client, computing, scattering inputs.

The one module that both :mod:`daskbicl.io` (writing stores) and
:mod:`daskbicl.engine` (counting passes) use to run work, so neither imports
the other for it.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from concurrent.futures import CancelledError

import dask

from .errors import InfrastructureError

__all__ = ["active_client", "compute", "in_process", "scatter_blocks", "scatter_inputs"]


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
    on a cluster.
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
    from distributed import KilledWorker

    futures = client.compute(list(objs))
    if progress:
        from distributed import progress as show_progress

        # distributed's text bar writes to sys.stdout: send it to stderr
        with contextlib.redirect_stdout(sys.stderr):
            show_progress(futures, multi=False)
            sys.stderr.flush()
    try:
        return tuple(client.gather(futures))
    except KilledWorker as exc:
        raise InfrastructureError(
            f"a worker died running {exc.task!r} (it was retried and killed each time: out of memory, or "
            f"killed from outside); give the workers more memory (dask worker --memory-limit) or retry "
            f"[{exc}]"
        ) from None
    except (CancelledError, OSError, TimeoutError) as exc:
        if client.status in ("closed", "closing", "connecting"):
            raise InfrastructureError(
                f"lost the connection to the Dask scheduler ({type(exc).__name__}: {exc}); retry when it is back"
            ) from None
        raise
