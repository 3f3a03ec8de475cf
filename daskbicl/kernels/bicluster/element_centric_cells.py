"""Element-centric similarity (Gates et al. 2019) of the cells of two biclusterings whose biclusters do not overlap.

The elements are the cells; each bicluster is a cluster of cells and every
cell no bicluster covers is a cluster of its own (clusim's ``Clustering``
needs every element in a cluster).  With no two biclusters of a side
sharing a cell, each side is a partition of the cells and ECS has the
closed form of :mod:`daskbicl.kernels.coclustering.element_centric`: a cell
in truth cluster A and pred cluster B scores ``|A ∩ B| / max(|A|, |B|)``.
Summed over the cells, by kind of cell:

* in truth bicluster k and pred bicluster l: ``s_kl² / max(|B_k|, |X_l|)``
  over the pairs, ``s_kl`` = shared rows × shared columns;
* in B_k and no pred bicluster: ``(|B_k| − Σ_l s_kl) / |B_k|`` (the pred
  cluster is the cell alone), and symmetrically for pred;
* in no bicluster of either side: 1 each.

So the K x L tables of shared rows and columns and the sizes suffice
(from the Gram tables of the signature pass); the same tables tell whether
two biclusters of a side overlap.  Overlapping biclusters are refused: their
affinities have no closed form (clusim solves a personalised PageRank).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...errors import InputError

__all__ = ["cell_similarity_of_biclusterings"]


def _overlap(rows, cols, idx: np.ndarray) -> bool:
    r = rows.gram[np.ix_(idx, idx)].astype(object)
    c = cols.gram[np.ix_(idx, idx)].astype(object)
    shared = r * c
    np.fill_diagonal(shared, 0)
    return bool((shared != 0).any())


def cell_similarity_of_biclusterings(rows, cols) -> float:
    """ECS of the cells from the row and column :class:`~daskbicl.kernels.micro.memberships.Memberships`.

    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[1, 0, 0]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> cell_similarity_of_biclusterings(rows, cols)   # 2 cells score 2/4, 2 score 1/4, 2 uncovered score 1
    0.5833333333333334
    """
    k = rows.n_truth
    sizes = rows.sizes().astype(object) * cols.sizes().astype(object)
    truth = np.flatnonzero(sizes[:k] != 0)
    pred = np.flatnonzero(sizes[k:] != 0) + k
    for side, idx in (("truth", truth), ("pred", pred)):
        if _overlap(rows, cols, idx):
            raise InputError(f"ecs on cells needs biclusters that do not overlap, but two {side} biclusters share "
                             "a cell (ecs_rows and ecs_cols compare the row and column partitions of co-clusterings)")
    n_cells = int(rows.n_items) * int(cols.n_items)
    if n_cells == 0:
        return 1.0
    shared = rows.gram[np.ix_(truth, pred)].astype(object) * cols.gram[np.ix_(truth, pred)].astype(object)
    a, b = sizes[truth], sizes[pred]
    terms = [Fraction(int(s) * int(s), max(int(a[i]), int(b[j]))) for (i, j), s in np.ndenumerate(shared) if s]
    terms += [Fraction(int(a[i] - shared[i].sum()), int(a[i])) for i in range(len(a))]
    terms += [Fraction(int(b[j] - shared[:, j].sum()), int(b[j])) for j in range(len(b))]
    uncovered = n_cells - int(a.sum()) - int(b.sum()) + int(shared.sum())
    total = math.fsum(float(t) for t in terms) + uncovered
    return min(total / n_cells, 1.0)
