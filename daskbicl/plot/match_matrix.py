"""The match matrix of a :func:`daskbicl.explain` Dataset: truth x pred, ordered by the matching.

Co-clusterings: one panel per axis, cell (h, h') the share of truth cluster
h that pred cluster h' holds (``n_hh' / n_h``, 0 to 1).  Biclusterings: the
cell Jaccard index of every truth and pred bicluster.  Truth clusters are
ordered by size, pred clusters by the truth cluster they are matched to
(their best match, for biclusters), so a good result is a bright diagonal,
a split a row with two bright cells and a merge a column with two.  Tick
labels are thinned to at most ``max_labels`` per axis, so a 1,000-cluster
matrix stays readable; the colour scale is stated on the colour bar.
"""

from __future__ import annotations

import numpy as np

from ._common import new_axes

__all__ = ["match_order", "plot_match_matrix"]


def match_order(match: np.ndarray, truth_order: np.ndarray, n_pred: int) -> np.ndarray:
    """Pred indices in the order of the truth clusters they are matched to, the unmatched ones last.

    ``match[h]`` is the pred index matched to truth ``h`` (-1: none).

    >>> match_order(np.array([2, -1, 0]), np.array([1, 2, 0]), 4).tolist()
    [0, 2, 1, 3]
    """
    first = [int(match[h]) for h in truth_order if match[h] >= 0]
    seen = set(first)
    out: list[int] = []
    for k in first:  # a pred can be the best match of several truth biclusters: keep its first place
        if k in seen:
            out.append(k)
            seen.discard(k)
    return np.array(out + [k for k in range(n_pred) if k not in set(out)], dtype=np.intp)


def _ticks(ax, labels, axis: str, max_labels: int) -> None:
    n = len(labels)
    step = max(1, -(-n // max_labels))
    pos = np.arange(0, n, step)
    names = [str(labels[i]) for i in pos]
    fontsize = 7 if len(pos) > 20 else 8
    if axis == "x":
        ax.set_xticks(pos, names, rotation=90, fontsize=fontsize)
    else:
        ax.set_yticks(pos, names, fontsize=fontsize)
    if step > 1:
        getattr(ax, f"set_{axis}label")(getattr(ax, f"get_{axis}label")() + f" (every {step}th labelled)")


def _panel(fig, ax, matrix, truth_labels, pred_labels, title, scale, max_labels):
    image = ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xlabel(f"pred ({len(pred_labels):,})")
    ax.set_ylabel(f"truth ({len(truth_labels):,})")
    _ticks(ax, truth_labels, "y", max_labels)
    _ticks(ax, pred_labels, "x", max_labels)
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, label=scale, shrink=0.9)


def _index_match(ds, a: str) -> np.ndarray:
    """Pred index matched to each truth cluster (-1: none), from the labels ``a_match`` holds."""
    position = {v: i for i, v in enumerate(ds[f"{a}_pred"].values.tolist())}
    return np.array([position[v] if ok else -1 for v, ok in
                     zip(ds[f"{a}_match"].values.tolist(), ds[f"{a}_matched"].values.tolist())], dtype=np.intp)


def plot_match_matrix(ds, *, max_labels: int = 40, figsize=None):
    """The match matrix of an explanation (module docstring); returns the Figure.

    Examples
    --------
    >>> import daskbicl
    >>> ds = daskbicl.explain(([0, 0, 1, 1], [0, 1]), ([1, 1, 0, 2], [0, 1]), measures="cari")
    >>> fig = plot_match_matrix(ds)
    >>> [ax.get_title() for ax in fig.axes if ax.get_title()]
    ['rows: share of each truth cluster', 'columns: share of each truth cluster']
    """
    from matplotlib.figure import Figure

    if ds.attrs.get("kind") == "partition":
        fig = Figure(figsize=figsize or (12, 5.5), layout="constrained")
        for i, (a, name) in enumerate((("row", "rows"), ("col", "columns"))):
            sizes = ds[f"{a}_truth_size"].values
            truth_order = np.argsort(-sizes, kind="stable")
            pred_order = match_order(_index_match(ds, a), truth_order, ds.sizes[f"{a}_pred"])
            share = ds[f"{a}_count"].values / sizes[:, None].astype(np.float64)
            _panel(fig, fig.add_subplot(1, 2, i + 1), share[np.ix_(truth_order, pred_order)],
                   ds[f"{a}_truth"].values[truth_order], ds[f"{a}_pred"].values[pred_order],
                   f"{name}: share of each truth cluster", "share of the truth cluster, n_hh' / n_h (0 to 1)",
                   max_labels)
        return fig
    fig, ax = new_axes(figsize=figsize or (7, 6))
    jac = ds.jaccard.values
    truth_order = np.argsort(-ds.truth_cells.values, kind="stable")
    pred_order = match_order(np.argmax(jac, axis=1), truth_order, jac.shape[1])
    _panel(fig, ax, jac[np.ix_(truth_order, pred_order)], ds.truth_bicluster.values[truth_order],
           ds.pred_bicluster.values[pred_order], "biclusters: cell Jaccard index, ordered by best match",
           "cell Jaccard index |B∩X| / |B∪X| (0 to 1)", max_labels)
    return fig
