"""The Liu–Wang match score of two biclusterings (numpy only).

For a pred bicluster X = E' × F' and a truth bicluster B = E × F,

    s(X, B) = (|E ∩ E'| + |F ∩ F'|) / (|E ∪ E'| + |F ∪ F'|),

a Jaccard index of rows and columns pooled (Liu & Wang 2007, as written in
biclustlib's ``evaluation/liu_wang.py``), and the score is the mean over pred
biclusters of the best s against truth.  It reads only the K x L tables of
shared rows and shared columns and the bicluster sizes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["liu_wang_score"]


def liu_wang_score(shared_rows, shared_cols, truth_rows, truth_cols, pred_rows, pred_cols) -> float:
    """Mean over pred biclusters of the best pooled row-and-column Jaccard against truth.

    Parameters
    ----------
    shared_rows, shared_cols : arrays (K, L)
        Rows (columns) in both truth bicluster k and pred bicluster l.
    truth_rows, truth_cols : arrays (K,)
        Sizes |E_k|, |F_k|.
    pred_rows, pred_cols : arrays (L,)
        Sizes |E'_l|, |F'_l|.

    Examples
    --------
    >>> liu_wang_score([[2]], [[1]], [3], [1], [2], [2])   # (2 + 1) / (3 + 2)
    0.6
    """
    sr = np.asarray(shared_rows, np.int64)
    sc = np.asarray(shared_cols, np.int64)
    if sr.shape[1] == 0:
        return 0.0
    union = (np.asarray(truth_rows, np.int64)[:, None] + np.asarray(pred_rows, np.int64)[None, :] - sr
             + np.asarray(truth_cols, np.int64)[:, None] + np.asarray(pred_cols, np.int64)[None, :] - sc)
    score = (sr + sc) / np.where(union > 0, union, 1)
    return float(score.max(axis=0).mean())
