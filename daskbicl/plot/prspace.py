"""Precision–recall space and corrected precision–recall space figures.

Both figures put recall on the x-axis and precision on the y-axis (the usual
PR convention).  Artists carry a ``gid`` so that they can be found again
(``results``, ``isolines``, ``random``, ``unreachable``, ``worse-than-random``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..measures.weighted_indices import DEFAULT_INDEX, get_index, weighted_index
from ._common import GREY, legend_below, new_axes, place_labels
from ._common import LABELS as _LABELS

__all__ = ["plot_corrected_pr_space", "plot_pr_space"]


def _points(pre, rec, names, lo: float, groups=None):
    p = np.asarray(pre, dtype=np.float64).ravel()
    r = np.asarray(rec, dtype=np.float64).ravel()
    if p.shape != r.shape or p.size == 0:
        raise InputError("pre and rec must be non-empty arrays of the same length")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(r))):
        raise InputError("pre and rec must be finite")
    if np.any(p > 1) or np.any(r > 1) or np.any(p < lo) or np.any(r < lo):
        raise InputError(f"pre and rec must lie within [{lo:g}, 1]")
    if names is not None and len(names) != p.size:
        raise InputError(f"got {len(names)} names for {p.size} results")
    if groups is not None and len(groups) != p.size:
        raise InputError(f"got {len(groups)} groups for {p.size} results")
    return p, r


def _draw_points(ax, p, r, names, groups=None, highlight=None):
    """Results as markers (one colour and shape per group); with ``highlight``, only those are named and
    the others are drawn faded, so that a sweep of dozens of results stays readable."""
    strong = np.ones(p.size, dtype=bool) if highlight is None else np.asarray(highlight, dtype=bool)
    if strong.shape != p.shape:
        raise InputError(f"got {strong.size} highlight flags for {p.size} results")
    groups = np.zeros(p.size, dtype=object) if groups is None else np.asarray(list(groups), dtype=object)
    one = groups.tolist() == [0] * p.size
    from matplotlib.colors import to_rgba

    keys = {}
    for k, g in enumerate(dict.fromkeys(groups.tolist())):
        sel = groups == g
        color = to_rgba("C0" if one else f"C{k % 10}")
        face = np.array([color if s_ else (*color[:3], 0.35) for s_ in strong[sel]])
        edge = np.array([to_rgba("black") if s_ else (0, 0, 0, 0) for s_ in strong[sel]])
        ax.scatter(r[sel], p[sel], s=np.where(strong[sel], 40, 22), facecolors=face, edgecolors=edge,
                   marker="osD^v<>"[k % 7], zorder=5, clip_on=False, gid="results",
                   label="results" if one else str(g))
        keys["results" if one else str(g)] = color
    if highlight is not None and not strong.all():
        ax.scatter([], [], s=22, color=GREY, alpha=0.6, edgecolor="none",
                   label="faded: never best for any λ")
    if names is not None:
        keep = np.flatnonzero(strong)
        place_labels(ax, r[keep], p[keep], [names[i] for i in keep], fontsize=8,
                     obstacles=getattr(ax, "_daskbicl_isoline_labels", ()))
    return keys


def _legend(ax, keys: dict) -> None:
    """The legend below the axes, each group's key drawn solid (not as its first, maybe faded, point)."""
    legend = legend_below(ax, fontsize=8)
    if legend is None:
        return
    for handle, text in zip(legend.legend_handles, legend.get_texts()):
        if text.get_text() in keys:
            handle.set_facecolor(keys[text.get_text()])
            handle.set_edgecolor("black")
            handle.set_alpha(1.0)


def _isoline_label_spots(cs, points, lo: float = 0.0) -> list[tuple[float, float]]:
    """One label position per isoline: the vertex farthest from every result point (and the frame)."""
    spots = []
    pts = np.column_stack(points) if len(points[0]) else np.zeros((0, 2))
    for segs in cs.allsegs:
        segs = [s for s in segs if len(s)]
        if not segs:
            continue
        v = np.concatenate(segs)
        span = 1.0 - lo
        inner = (v[:, 0] > lo + 0.06 * span) & (v[:, 0] < 0.94) & (v[:, 1] > lo + 0.06 * span) & (v[:, 1] < 0.94)
        cand = v[inner] if inner.any() else v
        if len(pts):
            d = np.min(np.hypot(cand[:, None, 0] - pts[None, :, 0], cand[:, None, 1] - pts[None, :, 1]), axis=1)
        else:
            d = -np.abs(cand[:, 0] - cand[:, 1])  # no points: label where the isoline crosses the diagonal
        spot = cand[int(np.argmax(d))]
        spots.append((float(spot[0]), float(spot[1])))
        pts = np.vstack([pts, spot[None, :]]) if len(pts) else spot[None, :]
    return spots


def _isolines(ax, index, lam, levels, points=((), ()), lo: float = 0.0):
    """Contours of the weighted index (x = rec, y = pre), labelled away from the result points."""
    R, P = np.meshgrid(np.linspace(lo, 1, 201), np.linspace(lo, 1, 201))
    cs = ax.contour(
        R, P, weighted_index(P, R, lam, index), levels=list(levels), colors="0.45", linewidths=0.8
    )
    cs.set_gid("isolines")
    ax.plot([], [], color="0.45", lw=0.8, gid="isolines-key",  # a legend entry for the contours
            label=f"{_LABELS[index]} isolines, λ = {lam:g}")
    spots = _isoline_label_spots(cs, points, lo)
    ax.clabel(cs, fmt="%.2f", fontsize=7, manual=spots)
    ax._daskbicl_isoline_labels = [(x, y, 24.0, 9.0) for x, y in spots]  # boxes the point labels avoid
    return cs


def plot_pr_space(
    pre,
    rec,
    *,
    names=None,
    index: str = DEFAULT_INDEX,
    lam: float = 0.5,
    levels=(0.2, 0.4, 0.6, 0.8),
    truth_size: int | None = None,
    n_cells: int | None = None,
    groups=None,
    highlight=None,
    ax=None,
    title: str | None = None,
):
    """Results as points in precision–recall space, with index isolines.

    Draws each result at ``(rec, pre)``, the isolines
    :math:`I_\\lambda(pre, rec) = c` of the chosen weighted index for each
    ``c`` in ``levels`` and, when ``truth_size`` :math:`|B|` and ``n_cells``
    :math:`|D|` are given, the random-result line :math:`pre = |B|/|D|`
    (the expected precision of a random bicluster) and the shaded
    unreachable triangle :math:`pre < rec\\,|B|/|D|` (no X ⊆ D has
    :math:`|X| > |D|`; the thin strip :math:`0 < rec < 1/|B|` is not drawn).
    A point inside that triangle cannot come from a truth bicluster of size
    |B| in a matrix of |D| cells: it raises :class:`~daskbicl.InputError`.

    Parameters
    ----------
    pre, rec : array_like, shape (n,)
    names : sequence, optional
        Point annotations.
    index : {"kulczynski", "fmeasure", "folke", "jaccard"}
    lam : float
        Weight of recall for the isolines (0.5: unweighted index).
    levels : sequence of float
    truth_size, n_cells : int, optional
        :math:`|B|` and :math:`|D|` (both or neither).
    groups : sequence, optional
        One label per result (e.g. its algorithm): one colour and marker
        per group, named in the legend.
    highlight : sequence of bool, optional
        The results to name (e.g. those that win some λ); the others are
        drawn faded and not named.  Default: every result.
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        Bad shapes or values, or a point in the unreachable region.

    Examples
    --------
    >>> fig = plot_pr_space([0.5, 0.8], [0.9, 0.3], names=["a", "b"], truth_size=20,
    ...                     n_cells=400)
    >>> ax = fig.axes[0]
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('recall', 'precision')
    >>> sorted({a.get_gid() for a in ax.get_children() if a.get_gid()})
    ['isolines', 'isolines-key', 'point-label', 'random', 'results', 'unreachable']
    """
    index = get_index(index).name  # the canonical name (case ignored): the label's key
    p, r = _points(pre, rec, names, 0.0, groups)
    if (truth_size is None) != (n_cells is None):
        raise InputError("give both truth_size and n_cells, or neither")
    if truth_size is not None:
        b, D = int(truth_size), int(n_cells)
        if not 1 <= b <= D:
            raise InputError(f"need 1 <= truth_size <= n_cells, got {b} and {D}")
        _check_reachable(p, r, b, D, names)
    fig, ax = new_axes(ax)
    if truth_size is not None:
        ax.fill_between(
            [0, 1], [0, 0], [0, b / D], color="0.85", zorder=0, label="unreachable", gid="unreachable"
        )
        ax.axhline(
            b / D,
            color="C3",
            ls="--",
            lw=1.2,
            gid="random",
            label=f"random result (pre = |B|/|D| = {b / D:.3g})",
        )
    ax.set_xlim(-0.03, 1.03)  # a result at pre = 0 or rec = 0 shows whole, not half hidden by the frame
    ax.set_ylim(-0.03, 1.03)
    _isolines(ax, index, lam, levels, points=(r, p))
    keys = _draw_points(ax, p, r, names, groups, highlight)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title(title if title is not None else f"PR space — {_LABELS[index]} isolines (λ = {lam:g})")
    _legend(ax, keys)
    return fig


def _check_reachable(p, r, b: int, D: int, names) -> None:
    """Every point must satisfy pre >= rec |B|/|D| (i.e. |X| = rec |B| / pre <= |D|)."""
    bad = np.flatnonzero(p * D < r * b * (1 - 1e-9))
    if bad.size:
        k = int(bad[0])
        which = f"result {names[k]!r}" if names is not None else f"result {k}"
        raise InputError(
            f"{bad.size} result(s) lie in the unreachable region pre < rec·|B|/|D| "
            f"(first: {which} with pre = {p[k]:.6g}, rec = {r[k]:.6g}): the inputs do not match "
            f"|B| = {b:,} and |D| = {D:,} (a result of size |X| = rec·|B|/pre would exceed |D|)"
        )


def plot_corrected_pr_space(
    pre_c,
    rec_c,
    *,
    names=None,
    index: str = DEFAULT_INDEX,
    lam: float = 0.5,
    levels=(0.2, 0.4, 0.6, 0.8),
    groups=None,
    highlight=None,
    ax=None,
    title: str | None = None,
):
    """Results in the corrected precision–recall space.

    Each result is drawn at :math:`(rec^c, pre^c)` with

    .. math::

        pre^c = \\frac{|D|\\,pre - |B|}{|D| - |B|}, \\qquad
        rec^c = \\frac{|D|\\,rec - |X|}{|D| - |X|}

    (see :func:`daskbicl.kernels.bicluster.precision_recall.corrected_precision_recall`).  A
    random result sits at the origin (the two ``random`` lines
    :math:`pre^c = 0`, :math:`rec^c = 0`); results worse than random on an axis
    fall in the shaded ``worse-than-random`` region.  The isolines are those
    of the corrected-space index, i.e. the index applied to
    :math:`(pre^c, rec^c)` in the positive quadrant.

    Parameters
    ----------
    pre_c, rec_c : array_like, shape (n,)
        Corrected precision and recall (<= 1, may be negative).
    names, index, lam, levels, groups, highlight, ax, title
        As in :func:`plot_pr_space`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_corrected_pr_space([0.4, -0.1], [0.7, -0.05])
    >>> fig.axes[0].get_xlabel()
    'corrected recall  rec$^c$'
    """
    index = get_index(index).name  # the canonical name (case ignored): the label's key
    p, r = _points(pre_c, rec_c, names, -np.inf, groups)
    fig, ax = new_axes(ax)
    lo = min(-0.1, 1.1 * float(min(p.min(), r.min())))
    ax.axvspan(lo, 0, color="0.88", zorder=0, gid="worse-than-random", label="worse than random")
    ax.axhspan(lo, 0, color="0.88", zorder=0)
    ax.axhline(0, color="C3", ls="--", lw=1.2, gid="random", label="random result")
    ax.axvline(0, color="C3", ls="--", lw=1.2, gid="random")
    ax.set_xlim(lo, 1.03)
    ax.set_ylim(lo, 1.03)
    _isolines(ax, index, lam, levels, points=(r, p))
    keys = _draw_points(ax, p, r, names, groups, highlight)
    ax.set_xlabel("corrected recall  rec$^c$")
    ax.set_ylabel("corrected precision  pre$^c$")
    ax.set_title(
        title if title is not None else f"Corrected PR space — {_LABELS[index]} isolines (λ = {lam:g})"
    )
    _legend(ax, keys)
    return fig
