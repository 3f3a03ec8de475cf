"""Shared helpers of the plot subpackage: figure creation and saving."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

__all__ = ["save"]

#: Display names of the weighted indices.
LABELS = {"kulczynski": "Kulczynski", "fmeasure": "F-measure", "folke": "Folke", "jaccard": "Jaccard"}

_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def new_axes(ax=None, figsize=(5.5, 4.5)):
    """``(fig, ax)``: the given axes and its figure, or a new pyplot-free Figure."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def legend_below(ax, *, fontsize: int = 7):
    """The axes' legend, centred under the axes (it never covers the data).

    Constrained layout (used by every daskbicl figure) makes room for it.
    """
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    ncol = 2 if len(handles) > 3 else 1
    return ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
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
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=fmt, dpi=dpi, **kwargs)
    return path
