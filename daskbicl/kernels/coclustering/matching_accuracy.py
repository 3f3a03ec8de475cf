"""Matching-based scores of one axis: normalised clustering accuracy (NCA) and the pair sets index (PSI).

Both match truth clusters to pred clusters one-to-one (an assignment
problem, padded with empty clusters when the counts differ) on a weight
derived from the contingency table:

* **NCA** (Gagolewski 2022, Normalised clustering accuracy: an asymmetric
  external cluster validity measure, J. Classification) weighs cell
  ``(h, h')`` by the share of truth cluster ``h`` it holds, ``n_{hh'}/a_h``;
  with ``K`` truth clusters,
  ``NCA = (max_σ (1/K) Σ_h n_{hσ(h)}/a_h − 1/K) / (1 − 1/K)``:
  the mean per-class recall above the 1/K of a uniform assignment.
  Asymmetric (truth's classes weigh equally whatever their size).
* **PSI** (Rezaei & Fränti 2016, Set matching measures for external cluster
  validity, IEEE TKDE 28(8)) weighs it by ``n_{hh'}/max(a_h, b_{h'})``;
  ``S`` is the best matching's total, ``E = Σ_{i ≤ min(K, K')} a_(i) b_(i) /
  (n max(a_(i), b_(i)))`` its expectation with both size lists sorted in
  decreasing order, and ``PSI = (S − E)/(max(K, K') − E)`` when ``S ≥ E``,
  else 0; 1 when both sides have a single cluster.  Symmetric.

The matching runs dense (:func:`scipy.optimize.linear_sum_assignment`) on
tables of at most ``dense_limit`` cells and on the non-zero cells only
(:func:`scipy.sparse.csgraph.min_weight_full_bipartite_matching`, with a
private dummy partner per vertex so a full matching always exists) above.
"""

from __future__ import annotations

import math

import numpy as np

from .contingency import Table

__all__ = ["best_matching_weight", "nca", "psi"]

#: Tables of at most this many cells are matched dense.
DENSE_LIMIT = 1 << 22


def best_matching_weight(table: Table, weights: np.ndarray, dense_limit: int = DENSE_LIMIT) -> float:
    """``max_σ Σ_h w_{hσ(h)}`` over one-to-one matchings, ``weights`` (> 0) given per non-zero cell.

    >>> t = Table.from_dense([[5, 1], [2, 3]])
    >>> best_matching_weight(t, t.counts.astype(float))
    8.0
    """
    h, hp = table.shape
    rows, cols = table.rows, table.cols
    if h * hp <= dense_limit:
        from scipy.optimize import linear_sum_assignment

        dense = np.zeros((h, hp))
        dense[rows, cols] = weights
        r, c = linear_sum_assignment(dense, maximize=True)
        return math.fsum(dense[r, c].tolist())
    import scipy.sparse as sp
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    if h > hp:  # every vertex of the smaller side is matched (to a real or its dummy partner)
        rows, cols, h, hp = cols, rows, hp, h
    own = np.arange(h)
    shift = 1.0 + float(weights.max())  # keeps every edge weight positive, as the solver requires
    graph = sp.csr_array(
        (np.concatenate([weights + shift, np.full(h, shift)]),
         (np.concatenate([rows, own]), np.concatenate([cols, hp + own]))),
        shape=(h, hp + h),
    )
    r, c = min_weight_full_bipartite_matching(graph, maximize=True)
    real = c < hp
    lookup = sp.csr_array((weights, (rows, cols)), shape=(h, hp))
    return math.fsum(np.asarray(lookup[r[real], c[real]]).tolist())


def nca(table: Table, dense_limit: int = DENSE_LIMIT) -> float:
    """Normalised clustering accuracy of pred against truth (rows of the table); 1 = identical.

    With one truth cluster the normaliser ``1 − 1/K`` is 0: NCA is then 1
    when pred has one cluster too, else 0.  Can be below 0 (down to
    ``−1/(K − 1)``).

    >>> nca(Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0]))
    1.0
    >>> round(nca(Table.from_labels([0, 0, 0, 1], [0, 0, 1, 1])), 12)   # recalls 2/3 and 1: (5/6 − 1/2)/(1/2)
    0.666666666667
    """
    k = table.shape[0]
    if k == 1:
        return 1.0 if table.shape[1] == 1 else 0.0
    share = table.counts / table.truth_sizes()[table.rows].astype(np.float64)
    recall = best_matching_weight(table, share, dense_limit) / k
    return (recall - 1.0 / k) / (1.0 - 1.0 / k)


def psi(table: Table, dense_limit: int = DENSE_LIMIT) -> float:
    """Pair sets index (clipped at 0); 1 = identical, 0 = no better than chance.

    >>> psi(Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0]))
    1.0
    >>> psi(Table.from_labels([0, 0, 1, 1], [0, 1, 0, 1]))
    0.0
    """
    k, kp = table.shape
    if k == kp == 1:
        return 1.0
    a, b = table.truth_sizes(), table.pred_sizes()
    weight = table.counts / np.maximum(a[table.rows], b[table.cols]).astype(np.float64)
    s = best_matching_weight(table, weight, dense_limit)
    m = min(k, kp)
    sa, sb = np.sort(a)[::-1][:m].astype(np.float64), np.sort(b)[::-1][:m].astype(np.float64)
    e = math.fsum((sa * sb / (table.n * np.maximum(sa, sb))).tolist())
    if s < e:
        return 0.0
    return min((s - e) / (max(k, kp) - e), 1.0)
