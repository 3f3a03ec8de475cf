"""The numba-compiled kernels: is their cache there, one announcement of a compile, and their plain-Python twins.

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

Plain-Python twins
------------------
A small input does not need compiled loops, and compiling them is most of a
first score's wait (seconds to tens of seconds on an empty numba cache).
:func:`twin` reads a kernel module's source, removes its ``@njit``
decorators, its numba imports and its compile announcement
(above), and runs the rest as an ordinary module
that never imports numba.  Its functions are the kernels' own code: the same
integer counts, the same floating-point operations in the same order, so the
values are the compiled kernels' bit for bit (numba compiles without
``fastmath``: no reordering, no fused multiply-add), as long as no integer
leaves int64 (the kernels are written for counts below 2**62) -- checked on
many random inputs by the tests.

:func:`call` chooses per kernel function, in each process, like renting
before buying: the twin runs (about :data:`SLOWDOWN` times slower than the
compiled loop) while the seconds spent in it, this call's estimate
included, stay below the price of the compiled function -- loading it from
numba's cache (:data:`LOAD_SECONDS`, numba imported and its dispatchers set
up) or compiling it (:data:`COMPILE_SECONDS`) when the cache has no entry
for its module.  From then on (or at once for a large call) the compiled
function runs, its first compile announced as before.  A process never
spends more than about twice what the better choice in hindsight would
have cost, a small first score compiles nothing (nor imports numba while the cache is empty), and a long-running
process ends up on the compiled loops.  Inside :func:`compiled_only` (used by
``daskbicl warm``) the compiled function always runs.

numba functions a kernel module imports for use inside its
loops need a plain stand-in here (:data:`STAND_INS`); a module importing
any other numba name is refused.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import logging
import os
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["COMPILE_SECONDS", "KERNEL_MODULES", "LOAD_SECONDS", "SLOWDOWN", "STAND_INS",
           "CompileWarning", "NOTIFY", "tell_client", "announce_compiles", "cached", "call", "compiled_only", "ready", "run", "twin"]

# Which measures run the compiled walk is a fact of their records (``Measure.compiled``).

#: Every module of daskbicl holding numba kernels, by group: (what the user is told compiles,
#: how long a first compile takes; measured with benchmarks/latency.py, see docs/guide/cluster.md).
KERNEL_MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "the micro-object kernels": (
        ("daskbicl.kernels.micro.family_walk", "daskbicl.kernels.micro.family_leaf",
         "daskbicl.kernels.micro.family_estimate", "daskbicl.kernels.micro.class_kernels",
         "daskbicl.kernels.micro.sampling"),
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
    return [v for v in vars(module).values()
            if isinstance(v, CPUDispatcher) and v.py_func.__module__ == module_name
            and v.targetoptions.get("inline") != "always"]


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


# --------------------------------------------------------------------------- plain-Python twins


def _trailing_zeros(x) -> int:
    """Zero bits below the lowest set bit of a non-zero integer (numba's ``trailing_zeros``)."""
    x = int(x)
    return (x & -x).bit_length() - 1


#: Plain-Python equivalents of the numba names the kernel modules use inside their loops.
STAND_INS: dict[str, Callable[..., Any]] = {"trailing_zeros": _trailing_zeros}

_TWINS: dict[str, types.ModuleType] = {}
_LOCK = threading.Lock()


def _is_njit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Name) and target.id == "njit"


class _Plain(ast.NodeTransformer):
    """Drops ``@njit``, the numba imports (checking their names have stand-ins) and the compile announcement."""

    def __init__(self, module_name: str):
        self.module_name = module_name

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.decorator_list = [d for d in node.decorator_list if not _is_njit(d)]
        return node

    def visit_Import(self, node: ast.Import) -> ast.Import | None:
        if any(alias.name.split(".")[0] == "numba" for alias in node.names):
            raise ImportError(f"{self.module_name} imports numba itself; it has no plain-Python twin")
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom | None:
        if node.level and node.module == "compiled":  # the compile announcement: nothing compiles here
            return None
        if node.level == 0 and (node.module or "").split(".")[0] == "numba":
            for alias in node.names:
                if alias.name != "njit" and alias.name not in STAND_INS:
                    raise ImportError(f"{self.module_name} uses numba's {alias.name}, which has no plain stand-in")
            return None
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.Expr | None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "announce_compiles":
            return None
        return node


def twin(module_name: str) -> types.ModuleType:
    """The plain-Python twin of the numba kernel module ``module_name`` (made once per process; numba not imported)."""
    with _LOCK:
        found = _TWINS.get(module_name)
        if found is not None:
            return found
        spec = importlib.util.find_spec(module_name)
        if spec is None or spec.origin is None or spec.loader is None:
            raise ImportError(f"no module {module_name}")
        source = spec.loader.get_source(module_name)  # type: ignore[attr-defined]
        tree = ast.fix_missing_locations(_Plain(module_name).visit(ast.parse(source, spec.origin)))
        module = types.ModuleType(f"{module_name}[interpreted]", ast.get_docstring(tree))
        module.__dict__.update(STAND_INS)
        module.__dict__.update(__file__=spec.origin, __package__=spec.parent)
        exec(compile(tree, spec.origin, "exec"), module.__dict__)
        _TWINS[module_name] = module
        return module


def run(function: Callable[..., Any], *args: Any) -> Any:
    """Call a twin's function: unsigned 64-bit scalar products wrap silently, as in the compiled kernel."""
    with np.errstate(over="ignore"):
        return function(*args)


#: How many times slower a twin runs than the compiled loop (measured 600-700x on the class kernels).
SLOWDOWN = 700.0

#: Seconds to load a compiled function from numba's cache in a new process (numba's import included).
LOAD_SECONDS = 0.5

#: Seconds to compile a kernel function (the smallest are ~1 s, the micro-object ones 1.5-7 s on a quiet machine).
COMPILE_SECONDS = 5.0

_SPENT: dict[tuple[str, str], float] = {}
_FORCED = [0]


@contextlib.contextmanager
def compiled_only() -> Iterator[None]:
    """Within this block (any thread), :func:`call` always runs the compiled functions (``daskbicl warm``)."""
    with _LOCK:
        _FORCED[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _FORCED[0] -= 1


def _in_cache(module_name: str) -> bool:
    """True when numba's cache seems to hold an index of ``module_name`` (a file look-up; numba not imported)."""
    stem = module_name.rsplit(".", 1)[-1]
    spec = importlib.util.find_spec(module_name)
    beside = Path(spec.origin).parent if spec is not None and spec.origin else Path(__file__).parent
    return any(folder.is_dir() and next(folder.rglob(f"{stem}.*.nbi"), None) is not None
               for folder in _cache_folders(beside))


def _compiled_ready(module_name: str, function: str) -> bool:
    # another thread may be importing the module: listed in sys.modules, its kernels not yet defined
    dispatcher = getattr(sys.modules.get(module_name), function, None)
    return bool(getattr(dispatcher, "signatures", ()))


_CACHED: dict[str, bool] = {}


def _price(module_name: str) -> float:
    if module_name not in _CACHED:  # looked up once per process (a compile here makes the function ready)
        _CACHED[module_name] = _in_cache(module_name)
    return LOAD_SECONDS if _CACHED[module_name] else COMPILE_SECONDS


def call(module_name: str, function: str, seconds: float, *args: Any) -> Any:
    """``module_name.function(*args)``: its twin or the compiled kernel, whichever the rule above picks.

    ``seconds``: the estimated time of this call in the compiled kernel.
    The values are the same either way.
    """
    key = (module_name, function)
    if _FORCED[0] or _compiled_ready(module_name, function) or \
            _SPENT.get(key, 0.0) + SLOWDOWN * seconds > _price(module_name):
        return getattr(importlib.import_module(module_name), function)(*args)
    start = time.perf_counter()
    try:
        return run(getattr(twin(module_name), function), *args)
    finally:
        with _LOCK:
            _SPENT[key] = _SPENT.get(key, 0.0) + time.perf_counter() - start
