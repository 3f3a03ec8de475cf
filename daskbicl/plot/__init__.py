"""Matplotlib figures: precision–recall and tradeoff spaces, the history of batch results, the match matrix.

Importing this package does not import matplotlib; each function imports it
when called and builds a :class:`matplotlib.figure.Figure` without pyplot,
so no GUI backend or global state is involved.  Every function returns the
Figure (and draws into ``ax=`` when given one); :func:`save` writes it to
PNG, SVG or PDF according to the path's suffix.
"""

from ._common import save
from .history_figure import plot_history
from .match_matrix import plot_match_matrix
from .prspace import plot_corrected_pr_space, plot_pr_space
from .tradeoff_figures import plot_comparison, plot_tradeoff, plot_tradeoff_space

__all__ = [
    "plot_comparison",
    "plot_corrected_pr_space",
    "plot_history",
    "plot_match_matrix",
    "plot_pr_space",
    "plot_tradeoff",
    "plot_tradeoff_space",
    "save",
]
