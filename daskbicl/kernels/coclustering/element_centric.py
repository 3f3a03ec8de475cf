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
"""

from __future__ import annotations

import math

import numpy as np

from .contingency import Table

__all__ = ["cell_scores", "element_centric_similarity"]


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
