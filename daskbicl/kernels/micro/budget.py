"""The work budget of the micro-object steps (numpy only; no dask config is read here).

Work is counted in units of about 10 ns of single-core numpy time; a step
whose work (bounded, or counted as it runs) exceeds ``max_work`` raises :class:`TooLargeError`
through :func:`too_large`, whose message names the dask config key the engine
reads (``daskbicl.max_work``, default in ``daskbicl/daskbicl.yaml``) and a value
to set.
"""

from __future__ import annotations

from ...errors import TooLargeError

__all__ = [
    "BUDGET_KEY",
    "DEFAULT_BUDGET",
    "MAX_WORK_KEY",
    "NODE_BYTES",
    "SECONDS_PER_UNIT",
    "NODE_STEPS",
    "UNIT_CELL_PAIR",
    "UNIT_PAIR",
    "UNIT_STEP",
    "budget_error",
    "too_large",
    "walk_advice",
]


#: Default limit on the work of the micro-object step, in units of
#: about 10 ns of single-core time (so ~1 minute).  Memory stays bounded
#: (:data:`DEFAULT_BUDGET`) whatever the work.
DEFAULT_MAX_WORK: float = 6e9


#: The dask config key of the largest number of sets one MOCICE-BCubed task
#: stores (``daskbicl.micro_budget``).
BUDGET_KEY = "daskbicl.micro_budget"

#: Default of :data:`BUDGET_KEY`: 8 Mi sets, about :data:`NODE_BYTES` each
#: (~850 MB), so a task fits a 1.5 GB worker.
DEFAULT_BUDGET: int = 1 << 23

#: Bytes a MOCICE-BCubed task holds per stored set (node arrays, the links to
#: the sets one member smaller, transform values), measured: 94 for sets of 7.
NODE_BYTES = 100


#: The dask config key through which :func:`daskbicl.score`, the CLI and
#: batch runs set ``max_work`` (kernels take it as an argument; this module
#: never imports dask).
MAX_WORK_KEY = "daskbicl.max_work"


#: Seconds of single-core time per work unit (the unit of ``max_work``).
SECONDS_PER_UNIT = 1e-8


# Work units (~10 ns each): a step of the family walk (a list entry delivered to a child, and
# NODE_STEPS per set walked: what the walks count against their allowance, kernels/micro/family_walk.py),
# a dense pair of co-clustering blocks, and a pair of row and column signatures of the coverage counts
# without the family.
UNIT_STEP, UNIT_PAIR, UNIT_CELL_PAIR = 1.2, 3.0, 0.6
#: Steps a set walked counts for against a walk's allowance, beside its deliveries.
NODE_STEPS = 16

# The class method (kernels/micro/class_traces.py), fitted with
# ``benchmarks/micro.py --calibrate`` (estimated vs measured over copy /
# independent / redundant inputs, densities 0.05-0.8, 5-100 biclusters): a
# pair of row and column signatures (per 64-bit word); a signature's trace
# on a class (per list entry read); a pair of traces (or a subset of the
# transform booked); each pred bicluster of the pair's set Q (the best
# Jaccard over Q's truth); a subset of the transform (per element); a class
# (its fixed cost, and per element squared: its sorted Jaccard lists).
UNIT_SIG_PAIR, UNIT_TRACE, UNIT_TRACE_PAIR, UNIT_PRED_STEP, UNIT_SUBSET = 0.5, 0.3, 2.5, 0.4, 0.12
UNIT_CLASS, UNIT_CLASS_SQ = 150.0, 0.5
# ... and a 64-bit word ANDed and counted (the classes counted from bit sets).
UNIT_WORD = 0.03


def _duration(work: float) -> str:
    sec = work * SECONDS_PER_UNIT
    if sec < 120:
        return f"{sec:.2g} s"
    if sec < 7200:
        return f"{sec / 60:.2g} min"
    if sec < 2 * 86400:
        return f"{sec / 3600:.2g} h"
    return f"{sec / 86400:.2g} days"


def too_large(what: str, work: float | None, max_work: float, advice: str = "", *,
              bound: bool = False) -> TooLargeError:
    """The :class:`TooLargeError` for a step whose work exceeds ``max_work``.

    ``work`` is the work (None when only "more than max_work" is known; an
    upper bound with ``bound``: the limit suggested runs it to its end);
    ``advice`` is appended.  The message names the dask config key that
    raises the limit.

    Examples
    --------
    >>> print(too_large("joining 3 x 4 classes", 3e12, 6e9))  # doctest: +NORMALIZE_WHITESPACE
    joining 3 x 4 classes needs ~3e+12 work units (about 8.3 h of single-core time),
    more than max_work=6e+09 (about 60 s). To run it anyway raise the limit, e.g.
    dask.config.set({'daskbicl.max_work': 3e+12}) around daskbicl.score, or
    DASK_DASKBICL__MAX_WORK=3e+12 in the environment of the CLI (the max_work
    argument of the kernel functions); or score fewer or less overlapping
    biclusters.
    """
    if work is None:
        need, suggest = f"more than max_work={max_work:.3g} work units", 10 * max_work
        head = f"{what} needs {need} (about {_duration(max_work)})"
    else:
        suggest = float(f"{work * 1.005:.2g}")
        suggest = suggest if suggest >= work else float(f"{work * 1.05:.2g}")
        head = (f"{what} needs {'at most ~' if bound else '~'}{work:.3g} work units "
                f"{'by its bound ' if bound else ''}(about {_duration(work)} of single-core "
                f"time), more than max_work={max_work:.3g} (about {_duration(max_work)})")
    env = "DASK_" + MAX_WORK_KEY.upper().replace(".", "__")
    return TooLargeError(
        f"{head}. To run it anyway raise the limit, e.g. "
        f"dask.config.set({{'{MAX_WORK_KEY}': {suggest:.3g}}}) around daskbicl.score, or "
        f"{env}={suggest:.3g} in the environment of the CLI (the max_work argument of the "
        "kernel functions); or score fewer or less overlapping biclusters."
        f"{' ' + advice if advice else ''}")


def walk_advice(closure: bool, then: str = "samples what the walk does not finish") -> str:
    """The way out named when a family walk (``closure``: MOCICE-BCubed's, else the coverage counts') is refused."""
    return ("CE, RNIA and E4SC do not need MOCICE-BCubed's walk: leave 'mocice_bcubed' out of measures to "
            "score them; " if closure else "E4SC does not need them; ") + f"method='auto' {then}."


def budget_error(required, nodes: float, budget: int) -> TooLargeError:
    """The :class:`TooLargeError` of a MOCICE-BCubed part larger than the memory budget.

    Examples
    --------
    >>> print(budget_error((0, 3), 9e6, 4194304))  # doctest: +NORMALIZE_WHITESPACE
    MOCICE-BCubed must hold the ~9e+06 sets of biclusters that contain biclusters (0, 3)
    at once (the sets it sums over), more than daskbicl.micro_budget=4194304 sets
    (about 100 bytes each). Raise it if a worker has the memory, e.g.
    dask.config.set({'daskbicl.micro_budget': 9.4e+06}), or
    DASK_DASKBICL__MICRO_BUDGET=9.4e+06 for the CLI; or leave 'mocice_bcubed' out of measures.
    """
    env = "DASK_" + BUDGET_KEY.upper().replace(".", "__")
    want = float(f"{nodes * 1.05:.2g}")
    what = (f"the ~{nodes:.3g} sets of biclusters that contain biclusters "
            f"{tuple(int(x) for x in required)}" if len(required) else
            f"the ~{nodes:.3g} sets of one side's biclusters that share a cell")
    return TooLargeError(
        f"MOCICE-BCubed must hold {what} at once (the sets it sums over), more than "
        f"{BUDGET_KEY}={budget} sets (about {NODE_BYTES} bytes each). Raise it if a worker has the "
        f"memory, e.g. dask.config.set({{'{BUDGET_KEY}': {want:.2g}}}), or {env}={want:.2g} for the "
        "CLI; or leave 'mocice_bcubed' out of measures.")
