"""Kernels ready before the first score: :func:`warm` (``daskbicl warm``), :class:`WarmKernels` for Dask workers,
and what a client says of its workers' compiles (:func:`compile_notices`, :func:`warm_workers`).

daskbicl's numba kernels are compiled on their first use after an install
and cached (see :mod:`daskbicl.kernels.compiled`).  :func:`warm` runs every
one of them once on small inputs, through the same code paths a score takes,
so that the compile happens when chosen (an image build, an install step)
and a later process only loads them.  (A score runs a kernel as plain
Python while that costs less than compiling or loading it,
:mod:`daskbicl.kernels.compiled`; :func:`warm` always runs the compiled
ones.)  Where numba caches is numba's choice:
``NUMBA_CACHE_DIR`` when set, else beside the installed modules, else the
user's cache folder; a worker image pre-warmed with the same
``NUMBA_CACHE_DIR`` its workers use never compiles (docs/guide/cluster.md).

On a cluster a worker's compile is announced in the worker's log only;
:func:`compile_notices` (``score`` and ``batch`` on ``--scheduler``) says
it on the client's stderr, once per worker, and at the end how long each
worker compiled; :func:`warm_workers` (``daskbicl warm --scheduler``,
``batch --warm``) has every worker warm first, one line per worker.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from distributed import WorkerPlugin

__all__ = ["CompileNotices", "WarmKernels", "compile_notices", "kernel_groups", "warm", "warm_workers"]


def _micro() -> None:
    """Every micro-object measure on two small overlapping biclusterings, in this process."""
    import numpy as np

    from .io.inputs import biclustering_dataset
    from .measures import REGISTRY, score

    rng = np.random.default_rng(0)
    pair = [biclustering_dataset(rng.random((3, 40)) < 0.4, rng.random((3, 30)) < 0.4, role="warm")
            for _ in range(2)]
    compiled = sorted(name for name, m in REGISTRY.items() if m.compiled and m.family == "micro")
    score(*pair, measures=compiled)  # the exact engine, by the method its plan picks
    _both_exact_methods(rng)
    sampled = sorted(name for name, m in REGISTRY.items() if "method" in m.params)
    score(*pair, measures=sampled, method="sample")  # the sampling kernels


def _both_exact_methods(rng) -> None:
    """The family walk and the cell-class method, each forced, on one small pair (the plan picks one),
    in floats and in rational arithmetic (``MicroTables(exact=True)`` calls a kernel of its own)."""
    from .kernels.micro.memberships import signature_counts
    from .kernels.micro.micro_scores import MicroTables, micro_ce, mocice_bcubed, rnia

    masks = [rng.random((3, n)) < 0.4 for n in (40, 40, 30, 30)]  # truth rows, pred rows, truth cols, pred cols
    rows, cols = signature_counts(masks[0], masks[1]), signature_counts(masks[2], masks[3])
    for method in ("family", "classes"):
        tables = MicroTables(rows, cols, method=method)
        mocice_bcubed(tables)
        micro_ce(tables)
        rnia(tables)
        mocice_bcubed(MicroTables(rows, cols, method=method, exact=True))  # the rational path's kernels


def _overlap() -> None:
    """The omega index and CSI on cells of two small overlapping biclusterings, in this process."""
    import numpy as np

    from .io.inputs import biclustering_dataset
    from .measures import REGISTRY, score

    rng = np.random.default_rng(0)
    pair = [biclustering_dataset(rng.random((3, 40)) < 0.4, rng.random((3, 30)) < 0.4, role="warm")
            for _ in range(2)]
    score(*pair, measures=sorted(name for name, m in REGISTRY.items() if m.provider == "cover"))


def _strings() -> None:
    """Every string kernel, and the short-string one on a chunk large enough for it (smaller ones use numpy)."""
    import numpy as np

    from .engine.labels import warm_string_codes
    from .engine.spread_labels import SLOT_KERNEL_MIN, narrow_string_codes

    warm_string_codes()
    labels = (np.arange(SLOT_KERNEL_MIN) % 7).astype("U2")
    narrow_string_codes(labels)
    labels.flags.writeable = False  # a chunk read from a store
    narrow_string_codes(labels)


def _bytes() -> None:
    """A chunk of one-byte codes, writable and read-only (numba compiles each kind of array once)."""
    import numpy as np

    from .kernels.coclustering.contingency import BYTE_KERNEL_MIN, count_pairs

    codes = (np.arange(BYTE_KERNEL_MIN) % 5).astype(np.uint8)
    count_pairs(codes, codes[::-1].copy())
    codes.flags.writeable = False
    count_pairs(codes, codes)


def _masks() -> None:
    """A large sparse chunk of bicluster masks, writable and read-only (a chunk of a store is read-only)."""
    import numpy as np

    from .kernels.bicluster import mask_counting

    m = mask_counting.MASK_KERNEL_MIN // 4 + 1
    rng = np.random.default_rng(0)
    default = mask_counting.BY_POSITIONS
    try:
        for by_positions in (True, False):  # the kernel scores use, and the byte scan it replaced (benchmarks)
            mask_counting.BY_POSITIONS = by_positions
            t, p = rng.random((2, m)) < 0.01, rng.random((2, m)) < 0.01
            mask_counting.intersect_counts(t, p)
            t.flags.writeable = p.flags.writeable = False
            mask_counting.intersect_counts(t, p)
    finally:
        mask_counting.BY_POSITIONS = default


def _spread() -> None:
    """A large chunk of integer labels spread over a wide range, writable and read-only."""
    import numpy as np

    from .engine.spread_labels import SLOT_KERNEL_MIN, rank_codes

    values = (np.arange(SLOT_KERNEL_MIN) % 7) * 1_000_003 + 7
    rank_codes(values)
    values.flags.writeable = False
    rank_codes(values)


#: What :func:`warm` runs for each group of :data:`daskbicl.kernels.compiled.KERNEL_MODULES`.
WORKLOADS: dict[str, Callable[[], None]] = {
    "the micro-object kernels": _micro,
    "the string-label hash table": _strings,
    "the overlap pair counter (omega, csi)": _overlap,
    "the one-byte code counter": _bytes,
    "the sparse bicluster mask counter": _masks,
    "the spread-label lookup": _spread,
}


def kernel_groups(words=None) -> list[str]:
    """The groups of :data:`~daskbicl.kernels.compiled.KERNEL_MODULES` whose name holds one of ``words``
    (case ignored: ``byte``, ``micro``, ``string``); all of them when ``words`` is None or empty."""
    from .errors import InputError
    from .kernels.compiled import KERNEL_MODULES

    if not words:
        return list(KERNEL_MODULES)
    chosen = [g for g in KERNEL_MODULES if any(w.strip().lower() in g.lower() for w in words)]
    unknown = [w for w in words if not any(w.strip().lower() in g.lower() for g in KERNEL_MODULES)]
    if unknown or not chosen:
        raise InputError(f"--kernels {', '.join(map(repr, unknown or words))} names no kernel group: a word of "
                         + "; ".join(KERNEL_MODULES))
    return chosen


def warm(report: Callable[[str], object] | None = None, groups=None) -> dict[str, float]:
    """Compile, or load from numba's cache, every numba kernel of daskbicl (or the groups ``groups`` of
    :data:`~daskbicl.kernels.compiled.KERNEL_MODULES`); seconds taken per group.

    ``report`` (e.g. ``print``) is called with one line per group when it is
    done.  A first compile is also announced as usual (a
    :class:`~daskbicl.kernels.compiled.CompileWarning`).  Calling it again in
    the same process costs nothing.  Processes of one machine that warm at
    the same time with the same cache folder take turns, group by group
    (:func:`cache_turn`): the first compiles a group, the others then load it
    from the cache instead of compiling it too.
    """
    return _warm(report, groups)[0]


def _warm(report, groups) -> tuple[dict[str, float], list[str]]:
    """:func:`warm`, and the groups that were neither loaded nor in numba's cache when their turn came."""
    from .kernels.compiled import KERNEL_MODULES, announce_compiles, compiled_only, ready

    announce_compiles()
    seconds, cold = {}, []
    for group in KERNEL_MODULES if groups is None else groups:
        started = time.perf_counter()
        with cache_turn():
            if not ready(group):
                cold.append(group)
            with compiled_only():  # small inputs, but the compiled kernels (a score runs them as plain Python)
                WORKLOADS[group]()
        seconds[group] = time.perf_counter() - started
        if report is not None:
            report(f"{group}: ready in {seconds[group]:.1f} s")
    return seconds, cold


@contextlib.contextmanager
def cache_turn() -> Iterator[None]:
    """A lock held by one process at a time among those of this machine sharing daskbicl's numba cache folder.

    The folder is ``NUMBA_CACHE_DIR`` when set, else one that follows
    from where daskbicl is installed (beside its modules, or the user's
    cache folder when those are read-only), so the lock is named after
    that variable and the install path (:func:`turn_file`); its file lives
    in the temporary folder (the cache folder may be read-only).  numba
    has no such lock: without it, the workers of a machine warming at once
    (a cluster's start with :class:`WarmKernels`) would each compile every
    kernel, in parallel, for the same cache.  A lock of the operating
    system (``locket``, which ``distributed`` also uses): a process that
    dies holding it releases it.  When the lock file cannot be opened (a
    read-only temporary folder, another user's file) there are no turns:
    each process compiles what its cache lacks, as numba alone does.
    """
    import locket

    lock = locket.lock_file(turn_file())
    try:
        lock.acquire()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def turn_file() -> str:
    """The path of :func:`cache_turn`'s lock file: the temporary folder, a name from ``NUMBA_CACHE_DIR`` and the install."""
    import hashlib
    import os
    import tempfile

    where = f"{os.environ.get('NUMBA_CACHE_DIR', '')}|{os.path.dirname(os.path.abspath(__file__))}"
    return os.path.join(tempfile.gettempdir(), f"daskbicl-warm-{hashlib.sha1(where.encode()).hexdigest()[:16]}.lock")


class WarmKernels(WorkerPlugin):
    """A Dask worker plugin: each worker runs :func:`warm` when it starts (or when the plugin is registered).

    ``client.register_plugin(WarmKernels())``.  The kernels are then loaded
    (or compiled once, and cached for the next workers sharing the cache
    folder) before the worker's first task, in a thread: the worker keeps
    answering the scheduler meanwhile.  The seconds per group are kept on
    that worker's copy of the plugin (:attr:`seconds`).
    """

    name = "daskbicl-warm-kernels"

    def __init__(self, groups=None):
        self.groups = None if groups is None else list(groups)
        self.seconds: dict[str, float] = {}
        self.compiled: list[str] = []

    async def setup(self, worker) -> None:
        import asyncio

        self.seconds, self.compiled = await asyncio.to_thread(_warm, None, self.groups)

    def report(self) -> dict:
        """What this worker's warm did: seconds in all, and the groups it compiled (not in numba's cache)."""
        return {"seconds": sum(self.seconds.values()), "compiled": list(self.compiled)}


class CompileNotices:
    """Workers' compiles said on the client's stderr: once per worker when it starts compiling numba kernels
    (the worker's ``CompileWarning`` reaches only its own log), and at the end how long each worker compiled.
    Fed by the workers' events (:data:`~daskbicl.scheduling.COMPILE_TOPIC`); workers warmed by
    :func:`warm_workers` were reported there and are not told again."""

    def __init__(self, out=None):
        self.out = out or sys.stderr
        self.started: dict[str, list[str]] = {}
        self.seconds: dict[str, float] = {}
        self.warmed: set[str] = set()

    def __call__(self, event) -> None:
        _, msg = event
        if not isinstance(msg, dict):
            return
        worker, group = str(msg.get("worker", "a worker")), str(msg.get("group", "kernels"))
        if worker in self.warmed:
            return
        if msg.get("what") == "start":
            first = worker not in self.started
            self.started.setdefault(worker, []).append(group)
            if first:
                print(f"daskbicl: worker {worker} is compiling numba kernels ({group}; first use on that worker, "
                      "cached afterwards): this run is slower; `daskbicl warm --scheduler`, `batch --warm` or a "
                      "pre-warmed worker image compiles ahead", file=self.out, flush=True)
        elif msg.get("what") == "end":
            self.seconds[worker] = self.seconds.get(worker, 0.0) + float(msg.get("seconds") or 0.0)

    def summary(self) -> str | None:
        if not self.started:
            return None
        each = ", ".join(f"{w} {self.seconds.get(w, 0.0):.1f} s" for w in sorted(self.started))
        return f"daskbicl: workers compiled numba kernels this run: {each}"


def warm_workers(client, out=None, groups=None) -> dict[str, dict]:
    """Every worker of ``client``'s cluster compiles (or loads) every numba kernel (or the groups ``groups``)
    now, and so does every worker that joins later (:class:`WarmKernels` stays registered on the scheduler);
    one line per worker on ``out`` (stderr).

    Returns ``{worker address: {"seconds": s, "compiled": [groups compiled, not found in numba's cache]}}``.
    """
    out = out or sys.stderr
    workers = len(client.scheduler_info()["workers"])
    print(f"daskbicl: warming {workers} worker{'s' * (workers != 1)} (numba kernels compiled where not cached: "
          "a minute or more the first time)", file=out, flush=True)
    client.register_plugin(WarmKernels(groups))
    done = client.run(lambda dask_worker: dask_worker.plugins["daskbicl-warm-kernels"].report())
    for worker, did in sorted(done.items()):
        what = (f"compiled {len(did['compiled'])} kernel group{'s' * (len(did['compiled']) != 1)} "
                f"({', '.join(did['compiled'])})") if did["compiled"] else "kernels loaded (nothing compiled)"
        print(f"daskbicl: worker {worker} warm in {did['seconds']:.1f} s: {what}", file=out, flush=True)
    return done


@contextlib.contextmanager
def compile_notices(client, *, warm: bool = False, out=None) -> Iterator[CompileNotices | None]:
    """While the block runs, the compiles of ``client``'s workers said on ``out`` (stderr), once per worker, and
    at the end for how long; with ``warm``, :func:`warm_workers` first.  ``client`` None (an in-process
    scheduler, whose compiles are announced in this process): nothing to do."""
    if client is None:
        yield None
        return
    from .scheduling import COMPILE_TOPIC

    notices = CompileNotices(out)
    client.subscribe_topic(COMPILE_TOPIC, notices)
    try:
        if warm:  # the warm says, per worker, what compiled: its compile events are not told again
            notices.warmed.update(client.scheduler_info()["workers"])
            notices.warmed.update(warm_workers(client, notices.out))
        yield notices
    finally:
        with contextlib.suppress(Exception):
            client.unsubscribe_topic(COMPILE_TOPIC)
        if notices.summary():
            print(notices.summary(), file=notices.out, flush=True)
