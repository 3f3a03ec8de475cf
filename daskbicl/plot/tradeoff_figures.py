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
from ..measures.weighted_indices import DEFAULT_INDEX
from ..tradeoffs.space import (
    ApplicationDomain,
    Comparison,
    Tradeoff,
    application_domain,
    optimal_tradeoff,
)
from ._common import GREY, identity_colors, legend_below, new_axes, panel_grid
from ._common import LABELS as _LABELS

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
    an :class:`~daskbicl.tradeoffs.space.ApplicationDomain` it also draws
    the maximal (X = D, dashed) and minimal (one true cell, dotted) results'
    curves, shades the application domain between them
    (``application-domain``) and hatches the region *under the maximal
    curve* (``uninformative``): a result whose curve enters it is
    uninformative at those λ (docs/measures/tradeoff.md).  The legend sits below the axes.

    Parameters
    ----------
    tradeoff : Tradeoff
        From :func:`daskbicl.tradeoffs.space.optimal_tradeoff`.
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
        _draw_domain(ax, lam, domain)
    colors = identity_colors((str(w) for w in tradeoff.intervals["winner"]), palette="Dark2")
    if show_curves:
        _draw_curves(ax, lam, tradeoff, colors)
    _draw_optimal(ax, lam, tradeoff)
    _label_intervals(ax, tradeoff.intervals, "winner", lambda x: tradeoff.envelope(x), colors)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("λ (importance of recall)")
    ax.set_ylabel(f"weighted {_LABELS[tradeoff.index]}")
    ax.set_title(title if title is not None else f"Tradeoff space — {_LABELS[tradeoff.index]}")
    legend_below(ax)
    return fig


def _draw_domain(ax, lam: np.ndarray, domain: ApplicationDomain) -> None:
    """The maximal (X = D, dashed) and minimal (dotted) results' curves, the region under the maximal one hatched."""
    mx = domain.maximal_curve(lam)
    ax.fill_between(lam, 0, mx, facecolor="none", edgecolor="0.6", hatch="////", linewidth=0, zorder=0.5,
                    gid="uninformative", label="uninformative: below X = D")
    ax.plot(lam, mx, color="0.25", ls="--", lw=1.2, gid="maximal",
            label=f"maximal result X = D ({domain.maximal[0]:.3g}, 1)")
    ax.plot(lam, domain.minimal_curve(lam), color="0.25", ls=":", lw=1.4, gid="minimal",
            label=f"minimal result (1, {domain.minimal[1]:.3g})")


def _draw_optimal(ax, lam: np.ndarray, tradeoff: Tradeoff) -> None:
    """The optimal curve in bold and a marker at each breakpoint."""
    ax.plot(lam, tradeoff.envelope(lam), color="black", lw=3, gid="optimal",
            label=f"optimal tradeoff (AUC = {tradeoff.auc:.3f})")
    bp = tradeoff.breakpoints
    ax.plot(bp, tradeoff.envelope(bp), ls="none", marker="o", ms=7, mfc="white", mec="black", zorder=6,
            gid="breakpoints", label="breakpoints")


def _winning_spans(intervals) -> dict[str, str]:
    """``{winner: "0–0.31, 0.8–1"}``: where on λ each winner is best."""
    spans: dict[str, list[str]] = {}
    for lo, hi, name in intervals[["lam_lo", "lam_hi", "winner"]].itertuples(index=False):
        spans.setdefault(str(name), []).append(f"{lo:.2g}–{hi:.2g}")
    return {name: ", ".join(parts) for name, parts in spans.items()}


def _draw_curves(ax, lam, tradeoff: Tradeoff, colors: dict) -> None:
    """Every result's curve: the winners in their own colour, named in the legend; the others grey.

    However many results a sweep has, only the few that win an interval are
    named (in the legend and on the optimal curve); the rest form one grey
    legend entry.
    """
    curves = tradeoff.curves(lam)
    spans = _winning_spans(tradeoff.intervals)
    others = [c for c in curves.columns if str(c) not in colors]
    for name in curves.columns:  # in the results' order; zorder puts the winners on top
        if str(name) in colors:
            style = {"color": colors[str(name)], "lw": 1.6, "zorder": 2,
                     "label": f"result {name}: best for λ in {spans[str(name)]}"}
        else:
            first = name == others[0]
            style = {"color": GREY, "lw": 0.8, "zorder": 1,
                     "label": f"{len(others)} other result{'s' if len(others) > 1 else ''}, never best" if first
                     else None}
        ax.plot(lam, curves[name].to_numpy(), gid="curve", **style)


def _label_intervals(ax, intervals, column: str, height, colors=None):
    """Name each interval's winner at its middle, on the curve ``height(λ)``.

    Labels of neighbouring intervals are staggered vertically so that
    narrow intervals stay readable.
    """
    mids = ((intervals["lam_lo"] + intervals["lam_hi"]) / 2).to_numpy()
    ys = np.asarray(height(mids), dtype=np.float64)
    for k, (x, y, name) in enumerate(zip(mids, ys, intervals[column])):
        color = colors.get(str(name), "black") if colors else "black"
        ann = ax.annotate(
            str(name),
            (x, y),
            xytext=(0, 7 + 10 * (k % 2)),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            color="black",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": color, "lw": 1.2, "alpha": 0.9},
            arrowprops={"arrowstyle": "-", "color": color, "lw": 0.8},
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

    Computes :func:`~daskbicl.tradeoffs.space.optimal_tradeoff` (and, when
    ``truth_size`` and ``n_cells`` are given,
    :func:`~daskbicl.tradeoffs.space.application_domain`) for each index and
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
        From :func:`daskbicl.tradeoffs.space.compare_algorithms`.
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
    colors = identity_colors(str(a) for a in comparison.tradeoffs)
    colors = {a: colors[str(a)] for a in comparison.tradeoffs}
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
    from matplotlib.patches import Rectangle

    # a legend entry for the strip (an empty rectangle: its colours are the algorithms' line colours)
    ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="0.55", gid="winner-band-key",
                           label="bottom strip: best algorithm per λ interval"))
    for k, x in enumerate(comparison.breakpoints):
        ax.axvline(x, color="0.3", ls=":", lw=1, gid="switch",
                   label="λ where the best algorithm changes" if k == 0 else None)

    def best(x):
        return np.max([t.envelope(x) for t in comparison.tradeoffs.values()], axis=0)

    _label_intervals(ax, comparison.intervals, "algorithm", best, {str(a): c for a, c in colors.items()})
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("λ (importance of recall)")
    ax.set_ylabel(f"weighted {_LABELS[comparison.index]}")
    ax.set_title(title if title is not None else f"Algorithm comparison — {_LABELS[comparison.index]}")
    legend_below(ax, fontsize=8)
    return fig
