"""Shared helpers of the plot subpackage: figure creation and saving."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InputError, store_failure
from ..measures.weighted_indices import INDEX_RECORDS

__all__ = ["GREY", "identity_colors", "legend_below", "new_axes", "panel_grid", "panel_rows", "place_labels", "save"]

#: Colour of everything that is drawn but not named (results that never win).
GREY = "0.72"

#: Display names of the weighted indices.
LABELS = {name: record.label for name, record in INDEX_RECORDS.items()}

_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def new_axes(ax=None, figsize=(5.5, 4.5)):
    """``(fig, ax)``: the given axes and its figure, or a new pyplot-free Figure."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


#: Candidate label offsets (points) around a marker, in order of preference.
_OFFSETS = ((8, 6), (8, -14), (-8, 6), (-8, -14), (12, -4), (-12, -4), (0, 12), (0, -19), (14, 14), (-14, 14),
            (14, -22), (-14, -22), (20, 0), (-20, 0), (22, 18), (-22, 18), (22, -26), (-22, -26))


def _axes_points(ax) -> tuple[float, float]:
    """Approximate size of the axes in points (before constrained layout runs)."""
    w, h = ax.figure.get_size_inches()
    pos = ax.get_position()
    return max(w * 72 * pos.width, 1.0), max(h * 72 * pos.height, 1.0)


def _overlap(a, b) -> float:
    dx = min(a[2], b[2]) - max(a[0], b[0])
    dy = min(a[3], b[3]) - max(a[1], b[1])
    return dx * dy if dx > 0 and dy > 0 else 0.0


def place_labels(ax, xs, ys, names, *, fontsize: float = 8, obstacles=(), gid: str = "point-label"):
    """Name points without collisions: each label takes the first free spot around its marker.

    A thin leader line joins each label to its point, so that a label
    between two points still says which one it names.

    Boxes are estimated in points from the text length (0.75 em per
    character), so this works before the figure is drawn.  ``obstacles`` are
    extra ``(x, y, width_pt, height_pt)`` boxes in data coordinates (e.g.
    isoline labels) that labels must avoid.  Returns the annotations.
    """
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    W, H = _axes_points(ax)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()

    def to_pt(x, y):
        return (x - x0) / (x1 - x0) * W, (y - y0) / (y1 - y0) * H

    boxes = []
    for x, y in zip(xs, ys):  # every marker is an obstacle (about 7 pt across)
        px, py = to_pt(x, y)
        boxes.append((px - 3.5, py - 3.5, px + 3.5, py + 3.5))
    for x, y, w, h in obstacles:
        px, py = to_pt(x, y)
        boxes.append((px - w / 2, py - h / 2, px + w / 2, py + h / 2))
    out = []
    order = np.lexsort((xs, -ys))  # top to bottom, left to right
    for i in order:
        text = str(names[i])
        w, h = 0.75 * fontsize * max(len(text), 1) + 2, fontsize + 1  # generous: layout shrinks the axes later
        px, py = to_pt(xs[i], ys[i])
        best, best_cost = None, None
        for dx, dy in _OFFSETS:
            left = px + dx if dx >= 0 else px + dx - w
            box = (left, py + dy, left + w, py + dy + h)
            outside = max(0.0, -box[0]) + max(0.0, box[2] - W) + max(0.0, -box[1]) + max(0.0, box[3] - H)
            cost = sum(_overlap(box, b) for b in boxes) + 50 * outside
            if best_cost is None or cost < best_cost:
                best, best_cost = (dx, dy, box), cost
            if cost == 0:
                break
        dx, dy, box = best
        boxes.append(box)
        ann = ax.annotate(text, (xs[i], ys[i]), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                          ha="left" if dx >= 0 else "right", va="bottom", zorder=6,
                          arrowprops={"arrowstyle": "-", "color": "0.35", "lw": 0.6, "shrinkA": 0, "shrinkB": 3})
        ann.set_gid(gid)
        out.append(ann)
    return out


#: Panels per row of a multi-panel figure: more makes a figure too wide to read at page width.
MAX_COLUMNS = 2


def panel_grid(n: int, *, width: float = 6.0, height: float = 5.4):
    """``(fig, axes)``: ``n`` panels in rows of at most :data:`MAX_COLUMNS`; unused cells removed."""
    from matplotlib.figure import Figure

    ncols = min(n, MAX_COLUMNS)
    nrows = -(-n // ncols)
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for extra in grid[n:]:
        fig.delaxes(extra)
    return fig, list(grid[:n])


def panel_rows(nrows: int, ncols: int, *, width: float = 6.0, height: float = 5.4):
    """``(fig, rows)``: an ``nrows`` x ``ncols`` grid, ``rows[i]`` the list of row ``i``'s axes.

    One row per index (or per whatever repeats), so that a row reads as one
    question; nothing is left empty.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False)
    return fig, [list(row) for row in grid]


def identity_colors(names, *, palette: str = "tab10") -> dict:
    """One colour per name, distinct up to 20 names (``palette``, then tab20); they repeat only beyond that.

    Only what is named (winners, algorithms) gets a colour; the rest is :data:`GREY`.  Algorithms use
    tab10 and a panel's winning results Dark2, so a colour never means both in one figure.
    """
    from matplotlib import colormaps

    names = list(dict.fromkeys(names))
    cmap = colormaps[palette if len(names) <= colormaps[palette].N else "tab20"]
    return {name: cmap(k % cmap.N) for k, name in enumerate(names)}


def legend_below(ax, *, fontsize: int = 8):
    """The axes' legend, centred under the axes (it never covers the data).

    Constrained layout (used by every daskbicl figure) makes room for it.
    """
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    ncol = 2 if len(handles) > 3 else 1
    longest = 0.6 * fontsize * max(len(text) for text in labels) + 3.5 * fontsize  # text + key + gap, in pt
    if ncol * longest > 0.98 * ax.figure.get_size_inches()[0] * 72:
        ncol = 1  # two columns would run off the figure
    from matplotlib.transforms import offset_copy

    return ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),  # a fixed distance in points under the axes: clear of the x label
        bbox_transform=offset_copy(ax.transAxes, fig=ax.figure, y=-3.6 * fontsize - 6, units="points"),
        ncol=ncol,
        fontsize=fontsize,
        frameon=False,
        borderaxespad=0.0,
    )


def save(fig, path, *, dpi: int = 150, **kwargs) -> Path:
    """Write ``fig`` to ``path``; the format follows the suffix (.png, .svg, .pdf).

    Missing parent folders are created.  Extra keyword arguments go to
    :meth:`matplotlib.figure.Figure.savefig`.

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from daskbicl.plot import plot_pr_space
    >>> out = save(plot_pr_space([0.5], [0.8]), pathlib.Path(tempfile.mkdtemp()) / "pr.svg")
    >>> out.suffix, out.stat().st_size > 0
    ('.svg', True)
    """
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"cannot tell the image format of {str(path)!r}: use a .png, .svg or .pdf suffix")
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(tmp, format=fmt, dpi=dpi, **kwargs)
        os.replace(tmp, path)  # a failed write (disk full) never leaves half a figure at path
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise store_failure(exc, doing="write", store=str(path)) from None
    return path
