"""Bicluster scores that match both ways: consensus (one-to-one) and Prelić relevance/recovery.

Both are finalized from the K x L tables of shared rows and shared columns
(:class:`~daskbicl.kernels.bicluster.mask_counting.BiclusterTables`), so they cost O(K·L)
after the one counting pass the other bicluster measures share.

* **consensus** (Hochreiter et al. 2010; scikit-learn's ``consensus_score``):
  the Jaccard index of the cell sets of every truth/pred pair,
  ``|B ∩ X| / (|B| + |X| − |B ∩ X|)``, the one-to-one matching of largest
  total (``scipy.optimize.linear_sum_assignment``), divided by the larger
  number of biclusters, so that unmatched biclusters on either side cost.
* **Prelić relevance and recovery** (Prelić et al. 2006, in the
  two-dimensional form of Horta & Campello 2014 that biclustlib computes):
  with ``S_rows`` the mean over pred biclusters of the best row-set Jaccard
  against truth and ``S_cols`` the same on column sets, relevance is
  ``sqrt(S_rows · S_cols)``; recovery is the same with truth and pred
  swapped (the mean over truth biclusters).  Rows and columns are matched
  separately: a pred bicluster may take its row match from one truth
  bicluster and its column match from another.

Cell intersections and unions are exact integers (Python integers when
``|D|²`` could overflow int64) divided once.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["consensus", "jaccard_table", "prelic"]

_INT64_SAFE = 1 << 62


def jaccard_table(shared, truth_sizes, pred_sizes) -> np.ndarray:
    """``shared / (truth + pred − shared)`` for every (truth, pred) pair, from exact integers.

    >>> jaccard_table(np.array([[2, 0]]), np.array([3]), np.array([2, 4])).tolist()
    [[0.6666666666666666, 0.0]]
    """
    shared = np.asarray(shared)
    union = np.asarray(truth_sizes)[:, None] + np.asarray(pred_sizes)[None, :] - shared
    return np.asarray(shared, dtype=np.float64) / np.asarray(union, dtype=np.float64)


def _cell_jaccard(tables) -> np.ndarray:
    big = tables.n_cells >= _INT64_SAFE
    dtype = object if big else np.int64

    def as_ints(x):
        return np.asarray(x).astype(dtype)

    shared = as_ints(tables.rows.shared) * as_ints(tables.cols.shared)
    truth = as_ints(tables.rows.truth_sizes) * as_ints(tables.cols.truth_sizes)
    pred = as_ints(tables.rows.pred_sizes) * as_ints(tables.cols.pred_sizes)
    if big:  # exact Python-integer ratios, rounded once each
        union = truth[:, None] + pred[None, :] - shared
        return np.vectorize(lambda s, u: s / u, otypes=[np.float64])(shared, union)
    return jaccard_table(shared, truth, pred)


def consensus(tables) -> float:
    """scikit-learn's ``consensus_score`` of a :class:`BiclusterTables` record.

    0 when pred has no bicluster.

    >>> from daskbicl.kernels.bicluster.mask_counting import BiclusterTables, MaskCounts
    >>> rows = MaskCounts(np.array([[2, 0]]), np.array([2]), np.array([2, 1]), 4)
    >>> cols = MaskCounts(np.array([[2, 1]]), np.array([2]), np.array([2, 1]), 3)
    >>> consensus(BiclusterTables(rows, cols, np.array([0]), np.array([0, 1])))   # 1 / max(1, 2)
    0.5
    """
    k, l_ = tables.rows.shared.shape
    if k == 0 or l_ == 0:
        return 0.0
    from scipy.optimize import linear_sum_assignment

    sim = _cell_jaccard(tables)
    r, c = linear_sum_assignment(sim, maximize=True)
    return math.fsum(sim[r, c].tolist()) / max(k, l_)


def prelic(tables, direction: str) -> float:
    """Prelić relevance (``direction="relevance"``: over pred biclusters) or recovery (over truth).

    0 when pred has no bicluster.

    >>> from daskbicl.kernels.bicluster.mask_counting import BiclusterTables, MaskCounts
    >>> rows = MaskCounts(np.array([[2, 0]]), np.array([2]), np.array([2, 1]), 4)
    >>> cols = MaskCounts(np.array([[2, 1]]), np.array([2]), np.array([2, 1]), 3)
    >>> t = BiclusterTables(rows, cols, np.array([0]), np.array([0, 1]))
    >>> prelic(t, "recovery"), round(prelic(t, "relevance"), 6)   # relevance: sqrt(0.5 * 0.75)
    (1.0, 0.612372)
    """
    k, l_ = tables.rows.shared.shape
    if k == 0 or l_ == 0:
        return 0.0
    axis = 0 if direction == "relevance" else 1  # best truth match of each pred bicluster, or the reverse
    scores = []
    for counts in (tables.rows, tables.cols):
        sim = jaccard_table(counts.shared, counts.truth_sizes, counts.pred_sizes)
        scores.append(math.fsum(sim.max(axis=axis).tolist()) / sim.shape[1 - axis])
    return math.sqrt(scores[0] * scores[1])
