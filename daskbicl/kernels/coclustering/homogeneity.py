"""Homogeneity, completeness and V-measure of one axis (Rosenberg & Hirschberg 2007).

With truth ``z`` and pred ``z'`` of one axis, ``H(z|z') = H(z) − MI``:

* homogeneity ``h = 1 − H(z|z')/H(z) = MI / H(z)`` (1 when ``H(z) = 0``):
  each pred cluster holds members of a single truth class;
* completeness ``c = MI / H(z')`` (1 when ``H(z') = 0``): each truth class
  is in a single pred cluster;
* V-measure ``V_β = (1 + β) h c / (β h + c)`` (0 when ``β h + c = 0``, i.e.
  ``h = c = 0`` for β > 0, the values the registry accepts).

These are scikit-learn's ``homogeneity_completeness_v_measure``; here MI
and the entropies are the accurate sums of
:mod:`~daskbicl.kernels.coclustering.information_terms`, so the ratios keep
their digits on near-trivial tables.  Values are clipped to [0, 1] against
rounding (MI equals an entropy when one partition refines the other).
"""

from __future__ import annotations

from .contingency import Table
from .information_terms import entropy, mutual_info

__all__ = ["completeness", "homogeneity", "v_measure"]


def _share(mi: float, h: float) -> float:
    return 1.0 if h == 0.0 else min(max(mi / h, 0.0), 1.0)


def homogeneity(table: Table) -> float:
    """``MI / H(truth)``; 1 when truth has a single cluster.

    >>> homogeneity(Table.from_labels([0, 0, 1, 1], [0, 0, 1, 2]))   # pred refines truth
    1.0
    """
    return _share(mutual_info(table), entropy(table.truth_sizes()))


def completeness(table: Table) -> float:
    """``MI / H(pred)``; 1 when pred has a single cluster.

    >>> completeness(Table.from_labels([0, 0, 1, 2], [0, 0, 1, 1]))   # truth refines pred
    1.0
    """
    return _share(mutual_info(table), entropy(table.pred_sizes()))


def v_measure(table: Table, beta: float = 1.0) -> float:
    """``(1 + β) h c / (β h + c)``, 0 when ``β h + c = 0`` (then ``h c = 0``; for β = 0 and c = 0 < h, 0/0).

    >>> round(v_measure(Table.from_labels([0, 0, 1, 1], [0, 0, 1, 2])), 6)   # sklearn: 0.8
    0.8
    """
    h, c = homogeneity(table), completeness(table)
    if beta * h + c == 0.0:
        return 0.0
    return (1.0 + beta) * h * c / (beta * h + c)
