"""Element-centric similarity (ECS) of two hard partitions, in closed form from the table.

Gates, Wood, Hetrick & Ahn (2019), Element-centric clustering comparison
unifies overlaps and hierarchy, Scientific Reports 9:8574.  Each element
``i`` gets an affinity vector from a personalised PageRank on the
element–cluster graph; for a partition it is ``p_i(j) = α/|C(i)| + (1 −
α)[i = j]`` for ``j`` in the cluster ``C(i)`` of ``i``, else 0.  The score of
``i`` is ``S_i = 1 − ‖p_i − p'_i‖₁ / (2α)`` and ECS is the mean of ``S_i``.

For an element in truth cluster ``h`` (size ``a``) and pred cluster ``h'``
(size ``b``) with ``c = n_{hh'}`` elements in both, the L1 distance has three
parts: the ``c`` elements of both clusters (``|α/a − α/b|`` each, ``i``
included: the ``1 − α`` terms cancel), the ``a − c`` of truth only (``α/a``
each) and the ``b − c`` of pred only (``α/b`` each).  So

.. math::
    S = 1 - \\tfrac12\\big(c\\,|1/a - 1/b| + 2 - c/a - c/b\\big) = \\frac{c}{\\max(a, b)},
    \\qquad \\mathrm{ECS} = \\frac1n \\sum_{hh'} \\frac{n_{hh'}^2}{\\max(a_h, b_{h'})}.

α cancels: for hard partitions ECS does not depend on it (clusim's
``element_sim`` gives the same value for every α).  Every element of one
cell scores the same, so the per-element scores are the cell values
``c / max(a, b)`` spread over the cell's elements.

**On the cells of two co-clusterings** (:func:`cell_similarity`) the
elements are the cells and the clusters the blocks: block (h, l) has
``a^z_h a^w_l`` cells and shares ``n^z_{hh'} n^w_{ll'}`` with pred's block
(h', l'), so the sum runs over pairs (p, q) of a non-zero entry p of the row
table and q of the column table:

.. math::
    \\mathrm{ECS} = \\frac{1}{IJ} \\sum_{p, q} \\frac{c_p^2 c_q^2}{\\max(a_p a_q,\\ b_p b_q)} .

It is never summed pair by pair: ``a_p a_q >= b_p b_q`` exactly when
``a_p / b_p >= b_q / a_q``, so with the row entries sorted by ``a_p / b_p``
each column entry q splits them at one place (a binary search), and the
two sides are prefix sums of ``c_p²/a_p`` and ``c_p²/b_p``:
O((P + Q) log P) for P and Q non-zero entries.  Two distinct ratios differ
by at least ``1/(a_p a_q)`` relatively, far above the rounding of the
divisions for fewer than 4e15 cells, and at a tie both branches are equal,
so the split is exact.
"""

from __future__ import annotations

import math

import numpy as np

from .contingency import Table

__all__ = ["cell_scores", "cell_similarity", "element_centric_similarity"]


def cell_scores(table: Table) -> np.ndarray:
    """``S = n_{hh'} / max(a_h, b_{h'})`` per non-zero cell: the score of each of its elements.

    >>> cell_scores(Table.from_labels([0, 0, 1, 1], [0, 0, 0, 1])).tolist()
    [0.6666666666666666, 0.3333333333333333, 0.5]
    """
    a = table.truth_sizes()[table.rows]
    b = table.pred_sizes()[table.cols]
    return table.counts / np.maximum(a, b).astype(np.float64)


def element_centric_similarity(table: Table) -> float:
    """Mean element score, ``(1/n) Σ n_{hh'}² / max(a_h, b_{h'})`` (1 = identical).

    >>> round(element_centric_similarity(Table.from_labels([0, 0, 1, 1], [0, 0, 0, 1])), 12)
    0.541666666667
    """
    if table.n == 0:
        return 1.0
    terms = table.counts.astype(np.float64) * cell_scores(table)
    return min(math.fsum(terms.tolist()) / table.n, 1.0)


def cell_similarity(rows: Table, cols: Table) -> float:
    """ECS of the cells of two co-clusterings, from their row and column tables (module docstring).

    >>> rows = Table.from_labels([0, 0, 1, 1], [0, 0, 0, 1])
    >>> cols = Table.from_labels([0, 1, 1], [0, 1, 1])
    >>> round(cell_similarity(rows, cols), 12)   # cells of one column block each score as their row
    0.541666666667
    """
    n = rows.n * cols.n
    if n == 0:
        return 1.0
    c1 = rows.counts.astype(np.float64)
    a1 = rows.truth_sizes()[rows.rows].astype(np.float64)
    b1 = rows.pred_sizes()[rows.cols].astype(np.float64)
    c2 = cols.counts.astype(np.float64)
    a2 = cols.truth_sizes()[cols.rows].astype(np.float64)
    b2 = cols.pred_sizes()[cols.cols].astype(np.float64)
    # ties broken by the values, not the label order: the prefix sums (and so the last bit) are the same
    # whatever the labels are called
    order = np.lexsort((c1, b1, a1, a1 / b1))
    ratio = (a1 / b1)[order]
    over_a = np.concatenate([[0.0], np.cumsum((c1 * c1 / a1)[order])])  # prefix sums of c_p²/a_p
    over_b = np.concatenate([[0.0], np.cumsum((c1 * c1 / b1)[order])])
    split = np.searchsorted(ratio, b2 / a2, side="left")  # entries p at or after it have a_p a_q >= b_p b_q
    terms = (c2 * c2 / a2) * (over_a[-1] - over_a[split]) + (c2 * c2 / b2) * over_b[split]
    return min(math.fsum(terms.tolist()) / n, 1.0)
