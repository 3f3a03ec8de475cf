"""The micro-object plan's estimates, as tasks beside each other, placed by the scheduler.

Before the plan (:func:`~daskbicl.kernels.micro.planner.plan_micro`) picks
the exact method and splits the work, it reads estimates: the class
estimate and the family's profile.  :func:`_probe_graph` makes them tasks
that run side by side,
wherever the scheduler puts them;
:mod:`daskbicl.engine.micro_pass` builds the rest of the micro graph.
"""

from __future__ import annotations

from ..kernels.micro.planner import classes_ruled_out, estimate_classes, probe_family, small_input
from .core import task

__all__ = ["PROBE_WORK"]


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


def _probe_graph(rows, cols, coverage: bool, bcubed: bool, limit: float) -> list:
    """The plan's estimates as tasks that run beside each other, placed by the scheduler.

    The class estimate and the family's profile: the plan made from them is
    the one made without them
    (:class:`~daskbicl.kernels.micro.planner.Estimates`).
    """
    return [task(estimate_classes)(rows, cols, coverage, bcubed), task(_probe_family)(rows, cols, limit)]
