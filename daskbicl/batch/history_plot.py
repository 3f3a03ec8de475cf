"""The figure a person checks after a nightly job: each measure of each pred across runs."""

from __future__ import annotations

from ..plot import plot_history
from .results import ResultsDB

__all__ = ["plot_results"]


def plot_results(file, path=None, *, truth=(), pred=(), measures=()):
    """Plot the history of a results file (``daskbicl results FILE --plot OUT.png``).

    Every score row of ``file`` (filtered like ``daskbicl results``) is drawn
    by :func:`daskbicl.plot.plot_history`: one panel per measure, one step
    line per (truth, pred, parameters) over the times the values were scored
    and seen.  Returns the Figure; ``path`` also writes it (PNG, SVG, PDF).
    """
    with ResultsDB(file, create=False) as db:
        rows = db.scores(truth=truth, pred=pred, measure=measures)
    return plot_history(rows, measures=list(dict.fromkeys(measures)) or None, path=path)
