"""The numba-compiled kernels: is their cache there, and one announcement of a compile.

Kernels compiled with numba (``@njit(cache=True)``) are compiled on their
first use after an install and cached: beside their modules
(``__pycache__``) when that folder is writable, under ``NUMBA_CACHE_DIR``
when it is set (then only there), else in the user's cache folder.  A later
process loads them from that cache instead of compiling.

Nothing here imports numba at module level (``import daskbicl`` must not
pay for it): :func:`announce_compiles` and :func:`ready` import it when
called, which only happens on the way to running a kernel anyway.

Any numba kernel module hooks itself in with one call at import::

    from ..compiled import announce_compiles   # (``from .compiled`` in kernels/)
    announce_compiles()

From then on, in that process, the first real compile (not a load from the
cache) of a function of a module listed in :data:`KERNEL_MODULES` emits one
:class:`CompileWarning` naming what compiles and how long it usually takes,
and logs how long each compile took (logger ``daskbicl.compile``, level DEBUG).

Small inputs
------------
A small input does not need compiled loops, and compiling them is most of a
first score's wait (seconds to tens of seconds on an empty numba cache).  So
the callers of a kernel take a plain path below a size, as the string codes
and the one-byte counter take numpy: the cell-class method runs its loops
(:mod:`~daskbicl.kernels.micro.class_loops`, plain Python over numpy arrays,
the very functions numba compiles) as they are for small work
(:func:`~daskbicl.kernels.micro.class_traces.run_kernel`).  Inside
:func:`compiled_only` (used by ``daskbicl warm``) the compiled kernels always run.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["KERNEL_MODULES", "CompileWarning", "NOTIFY", "tell_client", "announce_compiles", "cached",
           "compiled_only", "forced", "ready"]

# Which measures run the compiled walk is a fact of their records (``Measure.compiled``).

#: Every module of daskbicl holding numba kernels, by group: (what the user is told compiles,
#: how long a first compile takes; measured with benchmarks/latency.py, see docs/guide/cluster.md).
KERNEL_MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "the micro-object kernels": (
        ("daskbicl.kernels.micro.family_walk", "daskbicl.kernels.micro.family_leaf",
         "daskbicl.kernels.micro.class_kernels",
         "daskbicl.kernels.micro.class_loops", "daskbicl.kernels.micro.sampling"),
        "20 s to a minute"),
    "the string-label hash table": (
        ("daskbicl.kernels.coclustering.string_codes",),
        "about a second for labels of up to 8 Latin-1 characters; about 2 s for other labels, then under a "
        "second for each new label width up to 8 words"),
    "the overlap pair counter (omega, csi)": (
        ("daskbicl.kernels.bicluster.signature_pairs",),
        "a few seconds"),
    "the one-byte code counter": (
        ("daskbicl.kernels.coclustering.byte_counting",),
        "a few seconds"),
    "the sparse bicluster mask counter": (
        ("daskbicl.kernels.bicluster.mask_positions", "daskbicl.kernels.bicluster.mask_pairs"),
        "a few seconds"),
    "the spread-label lookup": (
        ("daskbicl.kernels.coclustering.slot_lookup",),
        "a second or two"),
}

log = logging.getLogger("daskbicl.compile")


class CompileWarning(UserWarning):
    """A numba kernel of daskbicl is being compiled (first use after an install; cached afterwards)."""


def group_of(module: str) -> str | None:
    """The :data:`KERNEL_MODULES` group a module belongs to, or None."""
    for group, (modules, _) in KERNEL_MODULES.items():
        if module in modules:
            return group
    return None


class _Announcer:
    """Process-wide state of the numba compile listener: the groups already announced, the running compile."""

    def __init__(self):
        self.lock = threading.Lock()
        self.installed = False
        self.announced: set[str] = set()
        self.depth = 0
        self.started = 0.0
        self.group: str | None = None

    def start(self, module: str) -> None:
        self.depth += 1
        group = group_of(module)
        if self.depth != 1 or group is None:
            return
        self.started = time.perf_counter()
        self.group = group
        if group not in self.announced:
            self.announced.add(group)
            tell_client("start", group)
            try:
                warnings.warn_explicit(message(group), CompileWarning, "daskbicl", 0, module="daskbicl")
            except CompileWarning:  # warnings turned into errors: a notice must not fail the compile
                log.warning(message(group))

    def end(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self.group is not None:
            log.debug("daskbicl: compiled a function of %s in %.1f s", self.group, time.perf_counter() - self.started)
            tell_client("end", self.group, time.perf_counter() - self.started)
            self.group = None


#: Called as ``hook(what, group, seconds)`` when a first compile of a group starts (``"start"``) and when a
#: compile ends (``"end"``): :mod:`daskbicl.scheduling` adds one that tells a Dask worker's clients.
NOTIFY: list = []


def tell_client(what: str, group: str, seconds: float = 0.0) -> None:
    """Call every :data:`NOTIFY` hook; a notice never fails the compile."""
    for hook in NOTIFY:
        try:
            hook(what, group, seconds)
        except Exception:  # pragma: no cover - the notice is a courtesy
            log.debug("daskbicl: a compile notice failed", exc_info=True)


_STATE = _Announcer()


def message(group: str) -> str:
    """The one line announcing a first compile of ``group``."""
    estimate = KERNEL_MODULES[group][1]
    return (f"daskbicl: compiling {group} (first use after installing, {estimate}; cached afterwards; "
            "`daskbicl warm` compiles every kernel ahead)")


def announce_compiles() -> None:
    """Listen (once per process) to numba's compile events: see the module docstring."""
    with _STATE.lock:
        if _STATE.installed:
            return
        from numba.core import event

        class Listener(event.Listener):
            def on_start(self, ev):
                _STATE.start(getattr(ev.data["dispatcher"].py_func, "__module__", ""))

            def on_end(self, ev):
                _STATE.end()

        event.register("numba:compile", Listener())
        _STATE.installed = True


def _dispatchers(module_name: str) -> list:
    from numba.core.registry import CPUDispatcher

    module = importlib.import_module(module_name)
    # inline="always" helpers are compiled into their callers, never on their own: no cache entry of their own
    # (the class kernels compile functions of class_loops: a dispatcher's function may live in another module)
    return [v for v in vars(module).values()
            if isinstance(v, CPUDispatcher) and v.targetoptions.get("inline") != "always"]


def ready(group: str) -> bool:
    """True when every kernel of ``group`` is in numba's cache where this process will look, and current.

    Asks numba itself (its cache locator, its index with the source's time
    stamp), so ``NUMBA_CACHE_DIR``, a read-only install and an edited
    source are all seen as numba sees them.  Imports numba and the modules.
    """
    for module_name in KERNEL_MODULES[group][0]:
        for dispatcher in _dispatchers(module_name):
            cache = dispatcher._cache
            if dispatcher.signatures:  # compiled or loaded in this process already
                continue
            if not getattr(cache, "_cache_file", None) or not cache._cache_file._load_index():
                return False
    return True


def _cache_folders(package: Path = Path(__file__).parent / "micro") -> list[Path]:
    """Where numba caches the kernels of the modules in ``package`` (a folder)."""
    if os.environ.get("NUMBA_CACHE_DIR"):  # numba then caches there and nowhere else
        return [Path(os.environ["NUMBA_CACHE_DIR"])]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [package / "__pycache__", Path(base) / "numba"]


def cached() -> bool:
    """True when an index of the family walk is found where numba caches (a quick look, numba not imported)."""
    for folder in _cache_folders():
        if folder.is_dir() and next(folder.rglob("family_walk.*.nbi"), None) is not None:
            return True
    return False


_FORCED = [0]
_LOCK = threading.Lock()


@contextlib.contextmanager
def compiled_only() -> Iterator[None]:
    """Within this block (any thread), kernels run compiled whatever their input's size (``daskbicl warm``)."""
    with _LOCK:
        _FORCED[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _FORCED[0] -= 1


def forced() -> bool:
    """True inside :func:`compiled_only`."""
    return _FORCED[0] > 0
