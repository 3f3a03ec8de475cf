"""The micro-object plan's estimates, as tasks beside each other and spread over the workers.

Before the plan (:func:`~daskbicl.kernels.micro.planner.plan_micro`) picks
the exact method and splits the work, it reads estimates: the class
estimate, the family's profile and, for MOCICE-BCubed, the size of each
side's family.  :func:`_probe_graph` makes them tasks that run side by side
(and each side's union tables, which the family walk needs, beside them);
:mod:`daskbicl.engine.micro_pass` builds the rest of the micro graph.
"""

from __future__ import annotations

from ..errors import TooLargeError
from ..kernels.micro import family_tasks
from ..kernels.micro.planner import classes_ruled_out, estimate_classes, probe_family, probe_side, small_input
from ..scheduling import places
from .core import annotated, task

__all__ = ["EARLY_UNION", "PROBE_PRIORITY", "PROBE_WEIGHT", "PROBE_WORK"]


#: Work units an estimate task beside the plan may spend while the class method may still be taken:
#: it then stops, and the plan estimates again under its own limit.  Bounds the work wasted when the
#: classes win.  When the counts rule the classes out, the tasks run under the plan's own limit.
PROBE_WORK = 2e8


def _probe_limit(rows, cols, limit: float) -> float | None:
    """The work limit of the estimate tasks beside the plan; None on a small input (they do nothing)."""
    if small_input(rows, cols):
        return None
    return limit if classes_ruled_out(rows, cols) else min(limit, PROBE_WORK)


def _probe_family(rows, cols, limit: float):
    probe_limit = _probe_limit(rows, cols, limit)
    return None if probe_limit is None else probe_family(rows, cols, max_work=probe_limit)


def _probe_side(rows, cols, side: str, limit: float, after=None):
    """One side's family estimate.  ``after`` (unused: the shared-cell table), where the tasks are not placed
    (:func:`_probe_graph`), makes it ready a moment after the family's profile, so an idle worker, which
    starts the first task that reaches it, starts the longest estimate first."""
    probe_limit = _probe_limit(rows, cols, limit)
    return None if probe_limit is None else probe_side(rows, cols, side, max_work=probe_limit)


#: Scheduling priorities of the estimate tasks (higher first; the early union tables have 0, those made after
#: the plan 1: before the walking tasks that become ready with them): the longest
#: first, so the shorter ones fill the other threads around it instead of leaving it to run alone at the
#: end (a worker runs the tasks it holds in this order).  The class estimate is instant when the counts
#: rule the classes out, else the longest; the family's profile walks the whole family, a side's only one side.
PROBE_PRIORITY = {"plan": 4, "classes": 3, "family": 2, "side": 1, "union": 1}

#: Nominal durations of the tasks beside the plan, to spread them over the workers (:func:`~daskbicl.scheduling.places`):
#: measured on the spread benchmark's case (benchmarks/micro_spread.py: the family's profile 1.5 s, a side's
#: estimate 0.6-0.7 s, a side's union tables 0.7-0.9 s); the class estimate is instant there (the counts rule
#: the classes out) and, where it is not, the family's profile stops early (``PROBE_WORK``).  On two threads:
#: the family's profile on one; both sides' estimates, then the early union tables of one side, on the other.
PROBE_WEIGHT = {"family": 2.5, "side": 1.0, "union": 0.7, "classes": 0.5}


def _probe_graph(rows, cols, coverage: bool, bcubed: bool, limit: float, size: int, after=None):
    """The plan's estimates as tasks that run beside each other, and, for MOCICE-BCubed, the early union tables.

    Returns ``(probes, early, home)``: the class estimate, the family's
    profile and, for MOCICE-BCubed, the size of each side's family (before,
    the planning task ran them one after the other while the other workers
    waited; the plan made from them is the one made without them:
    :class:`~daskbicl.kernels.micro.planner.Estimates`); each side's
    :func:`_early_union_side` or None (``early`` is None without
    MOCICE-BCubed); and the worker annotations of the plan and of the union
    side computed after it (``{}`` where nothing is placed).

    They all read the two merged membership lists, which sit on one or two
    workers: left to itself, ``distributed`` queues them there while other
    workers wait (it gives a task to a worker holding one of its inputs).
    On a cluster of several worker threads they are placed
    (:func:`~daskbicl.scheduling.places`, by :data:`PROBE_WEIGHT`, longest
    first to the least loaded thread; a preference, stealing may still move
    them), each with its priority, declared on the task alone
    (:func:`~daskbicl.engine.core.annotated`).  One side's union tables
    (``pred``) start early, on the thread the LPT gives them (on two
    threads: after both sides' estimates, which end before the family's
    profile, whose thread would otherwise wait); the plan, which is instant
    once the estimates are in, and the other side's union tables are placed
    with the family's profile (``home``), so no early table holds the plan
    back (a worker starts what reaches it first; priorities order only its
    queue).  Without a placement (one thread, the local schedulers) both
    early tables wait for the sides' estimates and the sides for ``after``.
    """
    roles = ["classes", "family"] + (["side", "side", "union"] if bcubed else [])
    placed = places([PROBE_WEIGHT[role] for role in roles])
    where = placed or [{}] * len(roles)
    classes = annotated(lambda: task(estimate_classes)(rows, cols, coverage, bcubed),
                        priority=PROBE_PRIORITY["classes"], **where[0])
    family = annotated(lambda: task(_probe_family)(rows, cols, limit), priority=PROBE_PRIORITY["family"], **where[1])
    home = where[1]
    if not bcubed:
        return [classes, family, None, None], None, home
    sides = [annotated(lambda side=side: task(_probe_side)(rows, cols, side, limit, None if placed else after),
                       priority=PROBE_PRIORITY["side"], **where[2 + n]) for n, side in enumerate(("truth", "pred"))]
    if placed:  # one side's tables where the LPT puts them; the other after the (instant) plan, beside it
        early = {"truth": None, "pred": annotated(lambda: task(_early_union_side)(rows, cols, size, "pred", *sides),
                                                   **where[4])}
        return [classes, family, *sides], early, home
    early = {side: task(_early_union_side)(rows, cols, size, side, *sides) for side in ("truth", "pred")}
    return [classes, family, *sides], early, home


#: Sets a union side computed beside the planner may hold (``_early_union_side``): it bounds the work
#: wasted when the plan then takes the class method, samples or refuses.
EARLY_UNION = 1 << 20


def _early_union_side(rows, cols, size: int, side: str, *after):
    """One side's union tables computed while the planner runs (seed 0, the plan's); None if too large.

    The planner is one task; this keeps another worker busy meanwhile with
    work the family walk will need.  ``after`` (the estimates of both
    sides' families, unused here; given where the tasks are not placed,
    :func:`_probe_graph`) makes it wait for them: the plan waits for
    the estimates and not for this, so the estimates run first and this
    fills the threads they leave (a dependency, which no scheduler and no
    priority rule reorders; waiting for its own side only, it was picked
    before the other side's estimate on the same worker).  Holding at most ``min(size, EARLY_UNION)``
    sets, it either finishes or gives up (None) and the side is computed after
    the plan, as before; its result is the same either way.  Not on a small
    input (:func:`~daskbicl.kernels.micro.planner.small_input`), which plans
    at once and takes the class method first: its first score compiles none
    of the family walk.
    """
    if small_input(rows, cols):
        return None
    try:
        return family_tasks.union_side(rows, cols, side, min(size, EARLY_UNION), 0)
    except TooLargeError:
        return None
