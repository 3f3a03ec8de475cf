"""Pair-counting measures, on cells and per axis, in exact integer arithmetic.

Of the ``C(n, 2)`` pairs of objects, ``a`` are together in both partitions,
``r`` together in truth, ``c`` together in pred:

.. math::
    a = \\sum_{hh'} \\binom{n_{hh'}}{2},\\quad r = \\sum_h \\binom{n_{h\\cdot}}{2},\\quad
    c = \\sum_{h'} \\binom{n_{\\cdot h'}}{2}.

For the cells of a co-clustering the sums of squares factor over the
Kronecker product of the row and column tables (as for CARI), so the cell
pair counts cost O(non-zero cells) whatever I·J.  The counts are Python
integers (exact at any size) and every ratio is rounded once, through
:class:`fractions.Fraction`.

Conventions (0/0): when neither partition puts any two objects together
(``r = c = 0``, all singletons, or one object) the two agree on every pair
and every measure here is 1.  When only one side has pairs, precision
(``c = 0``) or recall (``r = 0``) is 0, as is Fowlkes–Mallows.  scikit-learn's
``fowlkes_mallows_score`` returns 0 rather than 1 in the all-singletons case.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

from .cocluster_scores import sum_squares
from .contingency import Table

__all__ = ["PairCounts", "axis_pairs", "cell_pairs", "fowlkes_mallows", "pair_f1", "pair_jaccard",
           "pair_precision", "pair_recall", "rand"]


class PairCounts(NamedTuple):
    """Exact pair counts: together in both (``a``), in truth (``r``), in pred (``c``), all pairs."""

    a: int
    r: int
    c: int
    pairs: int


def _from_squares(both: int, truth: int, pred: int, n: int) -> PairCounts:
    return PairCounts((both - n) // 2, (truth - n) // 2, (pred - n) // 2, n * (n - 1) // 2)


def axis_pairs(table: Table) -> PairCounts:
    """Pair counts of one axis.

    >>> axis_pairs(Table.from_labels([0, 0, 1, 1], [0, 0, 0, 1]))
    PairCounts(a=1, r=2, c=3, pairs=6)
    """
    return table.memo("pair_counts", lambda: _from_squares(
        sum_squares(table.counts), sum_squares(table.truth_sizes()), sum_squares(table.pred_sizes()), table.n))


def cell_pairs(rows: Table, cols: Table) -> PairCounts:
    """Pair counts of the I·J cells (the Kronecker product of the tables, never built).

    >>> t = Table.from_labels([0, 0, 1], [0, 0, 1])
    >>> cell_pairs(t, Table.from_labels([0, 1], [0, 0]))
    PairCounts(a=2, r=2, c=7, pairs=15)
    """
    return _from_squares(
        sum_squares(rows.counts) * sum_squares(cols.counts),
        sum_squares(rows.truth_sizes()) * sum_squares(cols.truth_sizes()),
        sum_squares(rows.pred_sizes()) * sum_squares(cols.pred_sizes()),
        rows.n * cols.n,
    )


def _none_together(p: PairCounts) -> bool:
    return p.r == 0 and p.c == 0


def rand(p: PairCounts) -> float:
    """Rand index: the fraction of pairs on which the partitions agree, ``(pairs + 2a − r − c) / pairs``.

    >>> rand(PairCounts(a=1, r=2, c=3, pairs=6))
    0.5
    """
    if p.pairs == 0:
        return 1.0
    return float(Fraction(p.pairs + 2 * p.a - p.r - p.c, p.pairs))


def fowlkes_mallows(p: PairCounts) -> float:
    """Fowlkes–Mallows index ``a / sqrt(r c)``, the geometric mean of pair precision and recall.

    >>> round(fowlkes_mallows(PairCounts(a=1, r=2, c=3, pairs=6)), 12)
    0.408248290464
    """
    if _none_together(p):
        return 1.0
    if p.a == 0:
        return 0.0
    return math.sqrt(Fraction(p.a * p.a, p.r * p.c))


def pair_precision(p: PairCounts) -> float:
    """Of the pairs pred puts together, the fraction truth puts together: ``a / c``.

    >>> pair_precision(PairCounts(a=1, r=2, c=4, pairs=6))
    0.25
    """
    if _none_together(p):
        return 1.0
    return float(Fraction(p.a, p.c)) if p.c else 0.0


def pair_recall(p: PairCounts) -> float:
    """Of the pairs truth puts together, the fraction pred puts together: ``a / r``.

    >>> pair_recall(PairCounts(a=1, r=2, c=4, pairs=6))
    0.5
    """
    if _none_together(p):
        return 1.0
    return float(Fraction(p.a, p.r)) if p.r else 0.0


def pair_f1(p: PairCounts) -> float:
    """Harmonic mean of pair precision and recall: ``2a / (r + c)``.

    >>> round(pair_f1(PairCounts(a=1, r=2, c=4, pairs=6)), 12)
    0.333333333333
    """
    if _none_together(p):
        return 1.0
    return float(Fraction(2 * p.a, p.r + p.c))


def pair_jaccard(p: PairCounts) -> float:
    """Pairs together in both over pairs together in either: ``a / (r + c − a)``.

    >>> pair_jaccard(PairCounts(a=1, r=2, c=4, pairs=6))
    0.2
    """
    if _none_together(p):
        return 1.0
    return float(Fraction(p.a, p.r + p.c - p.a))
