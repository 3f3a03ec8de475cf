"""The figure a person checks after a nightly job: each measure of each pred across the nights."""

from __future__ import annotations

from ..plot import plot_history
from .results import ResultsDB
from .runlog import _filtered

__all__ = ["plot_results"]


def plot_results(file, path=None, *, truth=(), pred=(), measures=()):
    """Plot the history of a results file (``daskbicl results FILE --plot OUT.png``).

    What every batch run saw (filtered like ``daskbicl results``) is drawn
    by :func:`daskbicl.plot.plot_history`: one panel per measure label, one
    line per (truth, pred) over the runs, a point for every run that scored
    or reused a value.  Returns the Figure; ``path`` also writes it (PNG,
    SVG, PDF).
    """
    with ResultsDB(file, create=False) as db:
        rows = _filtered(db.observations(), truth, pred, ())
    rows = [r for r in rows if r["measure"] != "*"]
    return plot_history(rows, measures=list(dict.fromkeys(measures)) or None, path=path)
