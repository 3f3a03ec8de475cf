"""Tradeoff-space figures: index value against λ (the importance of recall).

Artists carry a ``gid``: ``curve`` (one per result), ``optimal`` (the bold
optimal tradeoff curve), ``breakpoints``, ``winner-label`` (the name of each
interval's winner, on the optimal curve), ``maximal`` / ``minimal`` (the
trivial results' curves), ``application-domain`` (shaded between them),
``uninformative`` (hatched, under the maximal curve), and
``algorithm:<name>`` / ``winner-band`` / ``winner-label`` in comparisons.
Legends sit below the axes so that they never cover a curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..kernels.tradeoff.indices import DEFAULT_INDEX
from ..tradeoffs.space import (
    ApplicationDomain,
    Comparison,
    Tradeoff,
    application_domain,
    optimal_tradeoff,
)
from ._common import LABELS as _LABELS
from ._common import legend_below, new_axes, panel_grid

__all__ = ["envelope_grid", "plot_comparison", "plot_tradeoff", "plot_tradeoff_space"]


def envelope_grid(breakpoints, n_grid: int = 501) -> np.ndarray:
    """Even λ grid on [0, 1] with the breakpoints inserted (sorted, unique).

    Examples
    --------
    >>> envelope_grid([0.3], 3).tolist()
    [0.0, 0.3, 0.5, 1.0]
    """
    if n_grid < 2:
        raise InputError(f"n_grid must be >= 2, got {n_grid}")
    return np.union1d(np.linspace(0, 1, n_grid), np.asarray(breakpoints, dtype=np.float64))


def plot_tradeoff(
    tradeoff: Tradeoff,
    *,
    domain: ApplicationDomain | None = None,
    ax=None,
    n_grid: int = 501,
    show_curves: bool = True,
    title: str | None = None,
):
    """Each result's curve, the optimal tradeoff curve and its breakpoints.

    Draws :math:`I_\\lambda(pre_i, rec_i)` for every result (thin), the
    optimal curve :math:`\\max_i I_\\lambda` in bold on a grid that contains
    the breakpoints, a marker at each breakpoint and the name of each
    interval's winner on the optimal curve (``winner-label``; so the winners
    are named even when a large sweep's curves have no legend entry).  With
    an :class:`~daskbicl.kernels.tradeoff.indices.ApplicationDomain` it also draws
    the maximal (X = D, dashed) and minimal (one true cell, dotted) results'
    curves, shades the application domain between them
    (``application-domain``) and hatches the region *under the maximal
    curve* (``uninformative``): a result whose curve enters it is
    uninformative at those λ (docs/measures/tradeoff.md).  The legend sits below the axes.

    Parameters
    ----------
    tradeoff : Tradeoff
        From :func:`daskbicl.kernels.tradeoff.indices.optimal_tradeoff`.
    domain : ApplicationDomain, optional
        Must use the same index.
    ax : matplotlib.axes.Axes, optional
    n_grid : int
        Points of the even λ grid (the breakpoints are added).
    show_curves : bool
        Draw each result's curve (turn off for huge sweeps).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from daskbicl.tradeoffs.space import optimal_tradeoff
    >>> t = optimal_tradeoff([0.9, 0.3], [0.2, 0.95], index="kulczynski")
    >>> ax = plot_tradeoff(t).axes[0]
    >>> [ln.get_gid() for ln in ax.lines]
    ['curve', 'curve', 'optimal', 'breakpoints']
    >>> ax.lines[-1].get_xdata().round(4).tolist()
    [0.4444]
    >>> [a.get_text() for a in ax.texts if a.get_gid() == "winner-label"]
    ['0', '1']
    """
    if domain is not None and domain.index != tradeoff.index:
        raise InputError(f"domain is for {domain.index!r}, tradeoff for {tradeoff.index!r}")
    fig, ax = new_axes(ax)
    lam = envelope_grid(tradeoff.breakpoints, n_grid)
    if domain is not None:
        mx = domain.maximal_curve(lam)
        mn = domain.minimal_curve(lam)
        ax.fill_between(
            lam,
            0,
            mx,
            facecolor="none",
            edgecolor="0.6",
            hatch="////",
            linewidth=0,
            zorder=0.5,
            gid="uninformative",
            label="uninformative: below predicting the whole matrix",
        )
        ax.plot(
            lam,
            mx,
            color="C3",
            ls="--",
            lw=1.2,
            gid="maximal",
            label=f"maximal result X = D ({domain.maximal[0]:.3g}, 1)",
        )
        ax.plot(
            lam,
            mn,
            color="C2",
            ls=":",
            lw=1.4,
            gid="minimal",
            label=f"minimal result (1, {domain.minimal[1]:.3g})",
        )
    if show_curves:
        curves = tradeoff.curves(lam)
        few = curves.shape[1] <= 8
        for name in curves.columns:
            ax.plot(
                lam,
                curves[name].to_numpy(),
                lw=0.9,
                alpha=0.7,
                gid="curve",
                label=f"result {name}" if few else None,
            )
        if not few:  # too many for the legend: name each curve at its right end
            _label_curve_ends(ax, [str(c) for c in curves.columns], curves.to_numpy()[-1], [ln.get_color() for ln in ax.lines if ln.get_gid() == "curve"])
    ax.plot(
        lam,
        tradeoff.envelope(lam),
        color="black",
        lw=3,
        gid="optimal",
        label=f"optimal tradeoff (AUC = {tradeoff.auc:.3f})",
    )
    bp = tradeoff.breakpoints
    ax.plot(
        bp,
        tradeoff.envelope(bp),
        ls="none",
        marker="o",
        ms=7,
        mfc="white",
        mec="black",
        zorder=6,
        gid="breakpoints",
        label="breakpoints",
    )
    _label_intervals(ax, tradeoff.intervals, "winner", lambda x: tradeoff.envelope(x))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("λ (importance of recall)")
    ax.set_ylabel(f"weighted {_LABELS[tradeoff.index]}")
    ax.set_title(title if title is not None else f"Tradeoff space — {_LABELS[tradeoff.index]}")
    legend_below(ax)
    return fig


def _label_curve_ends(ax, names, ends, colors, fontsize: float = 7):
    """Name curves just right of the axes at their value at λ = 1, spread so that no two labels overlap."""
    ends = np.asarray(ends, dtype=np.float64)
    y0, y1 = ax.get_ylim()
    _, height_pt = ax.figure.get_size_inches() * 72 * np.array([1, ax.get_position().height])
    gap = 1.6 * fontsize / max(height_pt, 1.0) * (y1 - y0)  # margin: constrained layout shrinks the axes later
    order = np.argsort(ends)
    placed = np.empty_like(ends)
    last = -np.inf
    for i in order:  # bottom-up: each label at its curve, or just above the previous label
        placed[i] = max(ends[i], last + gap)
        last = placed[i]
    overflow = last - (y1 - gap / 2)
    if overflow > 0:  # pushed past the top: shift the stack down, never below the bottom
        placed = np.maximum(placed - overflow, y0)
    for name, y_end, y_txt, color in zip(names, ends, placed, colors):
        ann = ax.annotate(name, (1.0, y_end), xytext=(1.012, y_txt), textcoords=("axes fraction", "data"),
                          fontsize=fontsize, color=color, va="center", ha="left", annotation_clip=False,
                          arrowprops={"arrowstyle": "-", "color": color, "lw": 0.5, "alpha": 0.7})
        ann.set_gid("curve-label")


def _label_intervals(ax, intervals, column: str, height, colors=None):
    """Name each interval's winner at its middle, on the curve ``height(λ)``.

    Labels of neighbouring intervals are staggered vertically so that
    narrow intervals stay readable.
    """
    mids = ((intervals["lam_lo"] + intervals["lam_hi"]) / 2).to_numpy()
    ys = np.asarray(height(mids), dtype=np.float64)
    for k, (x, y, name) in enumerate(zip(mids, ys, intervals[column])):
        ann = ax.annotate(
            str(name),
            (x, y),
            xytext=(0, 7 + 10 * (k % 2)),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            color=colors[name] if colors else "black",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "0.7", "lw": 0.5, "alpha": 0.85},
            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.5},
            zorder=7,
        )
        ann.set_gid("winner-label")


def plot_tradeoff_space(
    pre,
    rec,
    *,
    names=None,
    index: str | Sequence[str] = DEFAULT_INDEX,
    truth_size: int | None = None,
    n_cells: int | None = None,
    pre_min: float | None = None,
    rec_min: float | None = None,
    n_grid: int = 501,
    ax=None,
):
    """Tradeoff space of a set of results, one panel per index.

    Computes :func:`~daskbicl.kernels.tradeoff.indices.optimal_tradeoff` (and, when
    ``truth_size`` and ``n_cells`` are given,
    :func:`~daskbicl.kernels.tradeoff.indices.application_domain`) for each index and
    draws it with :func:`plot_tradeoff`.

    Parameters
    ----------
    pre, rec : array_like, shape (n,)
    names : sequence, optional
    index : str or sequence of str
        One panel per index, e.g. ``["fmeasure", "jaccard"]``.
    truth_size, n_cells : int, optional
        :math:`|B|`, :math:`|D|` for the application domain.
    pre_min, rec_min : float, optional
        Constraints on the results.
    n_grid : int
    ax : matplotlib.axes.Axes, optional
        Only with a single index.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_tradeoff_space([0.9, 0.5], [0.3, 0.8], index=["fmeasure", "jaccard"])
    >>> [a.get_title() for a in fig.axes]
    ['Tradeoff space — F-measure', 'Tradeoff space — Jaccard']
    """
    indices = [index] if isinstance(index, str) else list(index)
    if not indices:
        raise InputError("index: give at least one index")
    if ax is not None and len(indices) != 1:
        raise InputError("ax= can only be used with a single index")
    if (truth_size is None) != (n_cells is None):
        raise InputError("give both truth_size and n_cells, or neither")
    if ax is None:
        fig, axes = panel_grid(len(indices))
    else:
        fig, axes = ax.figure, [ax]
    for a, idx in zip(axes, indices):
        t = optimal_tradeoff(pre, rec, names=names, index=idx, pre_min=pre_min, rec_min=rec_min)
        dom = None
        if truth_size is not None:
            dom = application_domain(
                t.results["pre"],
                t.results["rec"],
                names=t.results["name"],
                truth_size=truth_size,
                n_cells=n_cells,
                index=idx,
            )
        plot_tradeoff(t, domain=dom, ax=a, n_grid=n_grid)
    return fig


def plot_comparison(comparison: Comparison, *, ax=None, n_grid: int = 501, title: str | None = None):
    """Optimal tradeoff curves of several algorithms and where each is best.

    Each algorithm's optimal curve is drawn (``gid = "algorithm:<name>"``);
    a coloured band under the axis marks, for each interval of
    ``comparison.intervals``, the algorithm whose curve is highest there
    (``gid = "winner-band"``), its name is written on the best curve at
    the middle of the interval (``gid = "winner-label"``), and dotted
    vertical lines mark the λ where the best algorithm changes.

    Parameters
    ----------
    comparison : Comparison
        From :func:`daskbicl.kernels.tradeoff.indices.compare_algorithms`.
    ax : matplotlib.axes.Axes, optional
    n_grid : int
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from daskbicl.tradeoffs.space import compare_algorithms
    >>> c = compare_algorithms({"A": ([0.9], [0.3]), "B": ([0.3], [0.9])})
    >>> ax = plot_comparison(c).axes[0]
    >>> [ln.get_gid() for ln in ax.lines]
    ['algorithm:A', 'algorithm:B', 'switch']
    """
    fig, ax = new_axes(ax)
    colors = {a: f"C{k % 10}" for k, a in enumerate(comparison.tradeoffs)}
    for name, t in comparison.tradeoffs.items():
        lam = envelope_grid(t.breakpoints, n_grid)
        ax.plot(
            lam,
            t.envelope(lam),
            lw=2.2,
            color=colors[name],
            gid=f"algorithm:{name}",
            label=f"{name} (AUC = {t.auc:.3f})",
        )
    for lo, hi, alg in comparison.intervals[["lam_lo", "lam_hi", "algorithm"]].itertuples(index=False):
        ax.axvspan(lo, hi, ymin=0, ymax=0.03, color=colors[alg], alpha=0.9, gid="winner-band")
    for x in comparison.breakpoints:
        ax.axvline(x, color="0.3", ls=":", lw=1, gid="switch")

    def best(x):
        return np.max([t.envelope(x) for t in comparison.tradeoffs.values()], axis=0)

    _label_intervals(ax, comparison.intervals, "algorithm", best, colors)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("λ (importance of recall)")
    ax.set_ylabel(f"weighted {_LABELS[comparison.index]}")
    ax.set_title(title if title is not None else f"Algorithm comparison — {_LABELS[comparison.index]}")
    legend_below(ax, fontsize=8)
    return fig
