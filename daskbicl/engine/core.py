"""Building blocks of every counting pass: aligned blocks, per-block tasks, tree reductions.

A counting pass maps a numpy kernel over aligned chunks of its inputs and
combines the small per-chunk results with a tree reduction.  A pass is
declared as a :class:`ChunkPass` record (as flox declares an aggregation:
its chunk kernel and how partial results combine) and run by the one
function :func:`counting_pass`, in process or on a cluster.  The per-chunk
results are small objects (pair counts, fixed-shape integer tables), so the
pass is written with :func:`dask.delayed` over ``Array.to_delayed()`` blocks:
public API only, any intermediate type, one graph per pass, and every pass of
a ``score`` call is computed together so each input is read once.

Inside :func:`eager` the same pass code runs at once instead (:func:`task`):
small in-memory inputs are counted without building a graph.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np
from dask.base import is_dask_collection

from .. import config
from ..scheduling import InlineRead, inline_reader, inlining, scatter_blocks

__all__ = ["ChunkPass", "counting_pass", "aligned_blocks", "annotated", "any_lazy", "eager", "map_blocks_delayed", "task", "task_map", "tree_reduce", "shared_pass", "shared_passes",
           "DEFAULT_CHUNK"]

#: Chunk length used when a numpy array enters the engine (16 MiB of int64):
#: small enough that a chunk's bincount stays in cache, large enough that
#: scheduling overhead is negligible.  The dask config key ``daskbicl.chunk``
#: overrides it (see :mod:`daskbicl.config`).
DEFAULT_CHUNK = config.DEFAULTS["daskbicl"]["chunk"]


def aligned_blocks(*arrays, axis: int = -1, chunk: int | None = None) -> list[tuple]:
    """Per-block tuples of arrays chunked identically along ``axis``.

    numpy inputs are cut into views of ``chunk`` elements (no copy: dask's
    ``from_array`` would copy the whole array first); on a distributed
    cluster the views are scattered to the workers inside
    :func:`scatter_inputs`.  When any input is a
    dask array, the others are rechunked to the chunks along ``axis`` of
    the dask array with the most bytes per position (masks before labels),
    and to a single chunk along every other axis, and the blocks are
    Delayed objects (their graphs unoptimized, so the reads keep their
    annotations, :func:`daskbicl.scheduling.read_order`).
    """
    if not any(isinstance(a, da.Array) for a in arrays):
        chunk = int(chunk or config.get("chunk"))
        numpy_arrays = [np.asarray(a) for a in arrays]
        length = numpy_arrays[0].shape[axis]
        out = []
        for start in range(0, length, chunk):
            sl = slice(start, min(start + chunk, length))
            out.append(tuple(a[(slice(None),) * (axis % a.ndim) + (sl,)] for a in numpy_arrays))
        return scatter_blocks(out)
    # the blocks of the array with the most bytes per position (its read tasks sized by ``daskbicl.task_bytes``):
    # labels counted against masks take the masks' blocks, so no block of masks grows to the labels' length
    first = max((a for a in arrays if isinstance(a, da.Array)), key=_position_bytes)
    dask_arrays = [a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=-1) for a in arrays]
    target = first.chunks[axis % first.ndim]  # arrays may differ in ndim: ``axis`` counts from each one's end
    unified = []
    names = [arr.name for arr in dask_arrays]
    for arr in dask_arrays:
        chunks = tuple(target if i == axis % arr.ndim else (arr.shape[i],) for i in range(arr.ndim))
        # a store counted against itself keeps its read tasks: they serve both sides
        reader = inline_reader(arr) if arr.chunks == chunks and names.count(arr.name) == 1 else None
        if reader is not None:  # read by the counting task itself (scheduling.read_inline)
            unified.append(_inline_blocks(reader, arr, axis % arr.ndim))
            continue
        if arr.chunks != chunks:
            arr = arr.rechunk(chunks)
        unified.append(arr.to_delayed(optimize_graph=False).reshape(-1))  # keeps the reads' annotations
    return list(zip(*unified))


def _inline_blocks(reader, arr, axis: int) -> list:
    """The blocks of ``arr`` along ``axis`` as :class:`~daskbicl.scheduling.InlineRead` values."""
    whole = tuple(slice(0, n) for n in arr.shape)
    edges = np.cumsum((0, *arr.chunks[axis]))
    return [InlineRead(reader, whole[:axis] + (slice(int(a), int(b)),) + whole[axis + 1 :])
            for a, b in zip(edges[:-1], edges[1:])]


def _position_bytes(array) -> int:
    """Bytes of one position along the last axis (a mask's column: every bicluster)."""
    return int(array.dtype.itemsize * np.prod(array.shape[:-1], dtype=np.int64))


#: While :func:`shared_passes` is active: (pass name, id of inputs...) -> (inputs, graph).
_SHARED = contextvars.ContextVar("daskbicl_shared_passes", default=None)


@contextlib.contextmanager
def shared_passes():
    """Within this block, a counting pass asked for twice over the same arrays is built once.

    The co-clustering, bicluster and micro-object providers start from the
    same passes (the contingency tables of two co-clusterings; the mask
    passes of two biclusterings); :meth:`daskbicl.measures.plan.ScorePlan.build` and the
    batch runner build their graphs inside this block, so however many
    measures and requests a pair has, each of its arrays is read once.
    """
    if _SHARED.get() is not None:  # nested: join the enclosing block
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared_pass(name: str, inputs: tuple, build: Callable):
    """``build()``, or the graph already built for ``name`` over the same ``inputs``.

    Inputs are compared by identity; they are kept alive with the graph so
    that an identity cannot be reused by another object within the block.
    """
    shared = _SHARED.get()
    if shared is None:
        return build()
    key = (name, inlining(), *map(id, inputs))  # built with inline reads or not: two graphs
    if key not in shared:
        shared[key] = (inputs, build())
    return shared[key][1]


#: While :func:`eager` is active, :func:`task` calls functions at once instead of building Delayed objects.
_EAGER = contextvars.ContextVar("daskbicl_eager", default=False)


@contextlib.contextmanager
def eager():
    """Within this block the counting passes run as they are built: no graph, no scheduler.

    The same pass code serves both: :func:`task` (and so
    :func:`map_blocks_delayed` and :func:`tree_reduce`) calls the function
    at once on concrete arguments.  A step whose arguments are still lazy (a
    dask array made while building, such as the block masks of a
    co-clustering read as a biclustering) stays a Delayed object, exactly as
    outside the block; the caller computes what is left
    (:func:`daskbicl.measures.plan.run_tables` does, in this process).
    """
    token = _EAGER.set(True)
    try:
        yield
    finally:
        _EAGER.reset(token)


def any_lazy(*values) -> bool:
    """Whether any value (or an item of a list, tuple or dict value) is a dask collection."""
    for value in values:
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
        if any(is_dask_collection(v) for v in items):
            return True
    return False


def task(func, nout: int | None = None):
    """``dask.delayed(func, pure=False, nout=nout)``; inside :func:`eager`, ``func`` called at once.

    Inside :func:`eager`, a call with a lazy argument still builds a Delayed
    object (see :func:`eager`), so the result has the same value either way.
    """
    if not _EAGER.get():
        return dask.delayed(func, pure=False, nout=nout)

    def call(*args, **kwargs):
        if any_lazy(*args, *kwargs.values()):
            return dask.delayed(func, pure=False, nout=nout)(*args, **kwargs)
        return func(*args, **kwargs)

    return call


def annotated(build: Callable, **annotations):
    """``build()`` (one :func:`task` call) built inside ``dask.annotate(**annotations)``: its task carries them.

    Public dask only: the annotations go to the layer of the task ``build``
    makes.  Its lazy arguments must be passed directly, not inside a list,
    tuple or dict: dask flattens the graphs of a container's items into the
    new task's layer, and they would be annotated too.  Without annotations
    (or inside :func:`eager`) it is ``build()``.
    """
    if not annotations:
        return build()
    with dask.annotate(**annotations):
        return build()


def task_map(func, calls: Sequence[tuple]) -> list:
    """``[task(func)(*args) for args in calls]``, the eager calls spread over threads.

    Inside :func:`eager` with concrete arguments the calls would run one
    after another on one core; kernels that release the GIL (the numba
    micro-object walk is compiled ``nogil``) then run on a thread pool as
    wide as dask's threaded scheduler (``num_workers``, else the CPU count),
    as they would in a task graph.  An exception in a call is raised here.
    """
    if not _EAGER.get() or any(any_lazy(*args) for args in calls):
        return [task(func)(*args) for args in calls]
    width = min(len(calls), int(dask.config.get("num_workers", None) or os.cpu_count() or 1))
    if width <= 1:
        return [func(*args) for args in calls]
    with ThreadPoolExecutor(max_workers=width) as pool:
        return list(pool.map(lambda args: func(*args), calls))


def map_blocks_delayed(func, blocks, *args):
    """``[delayed(func)(*args, *block) for block in blocks]`` without hashing data.

    Keys are random (``pure=False``): hashing numpy blocks to name tasks would
    read every byte once more.  A task that reads a block itself
    (:class:`~daskbicl.scheduling.InlineRead`) is named after the variable
    and block it reads, so an error about it says which.
    """
    out = []
    for i, block in enumerate(blocks):
        reads = [b.reader.var for b in block if isinstance(b, InlineRead)]
        if reads and (not _EAGER.get() or any_lazy(*args, *block)):
            # a task that reads its block itself is named after what it reads (scheduling.describe_step)
            name = f"{getattr(func, '__name__', 'chunk')}-{reads[0]}-block-{i}-{uuid.uuid4().hex}"
            out.append(task(func)(*args, *block, dask_key_name=name))
        else:
            out.append(task(func)(*args, *block))
    return out


def tree_reduce(parts: Sequence, combine: Callable, split_every: int = 8):
    """Combine delayed ``parts`` with ``combine(*group)`` in a tree of fan-in ``split_every``.

    ``combine`` must accept one or more partial results and be associative.
    """
    level = list(parts)
    if not level:
        raise ValueError("nothing to reduce")
    if split_every < 2:
        raise ValueError("split_every must be at least 2")
    while True:
        level = [
            task(combine)(*level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
        if len(level) == 1:
            return level[0]


@dataclass(frozen=True)
class ChunkPass:
    """One counting pass, declared: what runs on each chunk and how the partial results combine.

    Attributes
    ----------
    name : str
        Names the pass's graphs (and shares them, :func:`shared_pass`).
    chunk : callable
        ``chunk(*args, *block) -> partial``: a kernel on one block of the
        aligned input arrays (numpy views), ``args`` the pass's constants.
    combine : callable
        ``combine(*partials) -> partial``, associative: the tree reduction's step.
    axis : int
        The axis along which the inputs are aligned and cut into blocks.
    """

    name: str
    chunk: Callable
    combine: Callable
    axis: int = -1


#: Bytes of the inputs (all arrays of a block together) one call of a chunk kernel counts at most: a read
#: task's block (``daskbicl.task_bytes`` per array) is counted in steps of this size and the steps' results
#: combined in the task, so a kernel's temporaries stay those of a stored chunk (the mask kernel's are about
#: 4x its inputs; the label kernel's negligible).
STEP_BYTES = 1 << 24


class _Stepped:
    """A pass's chunk kernel over a block in steps along ``spec.axis`` (:data:`STEP_BYTES` each), combined.

    Named after the kernel (``__name__``), so a task is named as the
    kernel's own would be.  ``combine`` is associative, so the block's
    result is the one of its steps counted as blocks of their own.
    """

    def __init__(self, spec: ChunkPass, n_args: int):
        self.spec, self.n_args = spec, n_args
        self.__name__ = getattr(spec.chunk, "__name__", "chunk")

    def __call__(self, *values):
        spec = self.spec
        args, block = values[: self.n_args], values[self.n_args :]
        block = tuple(b.read() if isinstance(b, InlineRead) else b for b in block)
        arrays = [a for a in block if isinstance(a, np.ndarray) and a.ndim]
        if not arrays:
            return spec.chunk(*args, *block)
        length = arrays[0].shape[spec.axis % arrays[0].ndim]
        per_position = sum(a.nbytes // max(1, a.shape[spec.axis % a.ndim]) for a in arrays)
        step = max(1, STEP_BYTES // max(1, per_position))
        if length <= step or len(arrays) != len(block):
            return spec.chunk(*args, *block)
        parts = [spec.chunk(*args, *(a[(slice(None),) * (spec.axis % a.ndim) + (slice(start, start + step),)]
                                      for a in block))
                 for start in range(0, length, step)]
        return spec.combine(*parts)


def counting_pass(spec: ChunkPass, arrays: Sequence, *args, split_every: int = 8, chunk: int | None = None,
                  last: Callable | None = None):
    """The combined partial result of ``spec`` over ``arrays``: map its chunk kernel, tree-reduce with combine.

    The one place a pass's graph is built.  ``arrays`` (numpy or dask, the
    same length along ``spec.axis``) are cut into aligned blocks
    (:func:`aligned_blocks`: views of numpy arrays, scattered to the workers
    on a cluster; a dask array's own chunks), ``spec.chunk(*args, *block)``
    runs per block and the partial results are combined in a tree of
    fan-in ``split_every``.  Inside :func:`eager` it runs at once (no graph);
    otherwise it returns one Delayed object.  ``chunk`` sets the block
    length of numpy inputs (default: the dask config ``daskbicl.chunk``;
    a dask array keeps its own chunks).  ``last(parts)``, when given, builds
    the last combine of a graph's tree (at most ``split_every`` partial
    results) its own way, returning the same value (the membership pass
    merges in hash partitions side by side).

    Examples
    --------
    >>> import numpy as np
    >>> total = ChunkPass("sum", chunk=lambda scale, x: scale * int(x.sum()), combine=lambda *p: sum(p))
    >>> with eager():
    ...     counting_pass(total, (np.arange(10),), 2, split_every=2)
    90
    """
    blocks = aligned_blocks(*arrays, axis=spec.axis, chunk=chunk)
    parts = map_blocks_delayed(_Stepped(spec, len(args)), blocks, *args)
    if last is None or len(parts) < 2 or not any_lazy(*parts):
        return tree_reduce(parts, spec.combine, split_every=split_every)
    while len(parts) > split_every:
        parts = [task(spec.combine)(*parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    return last(parts)
