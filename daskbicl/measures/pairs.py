"""Pair-counting measures on cells and per axis (docs/measures/more.md), declared in the registry.

Rand, Fowlkes–Mallows and pair precision/recall/F1/Jaccard, from exact
pair counts of the ``partition`` provider's tables (the cell counts factor
over the Kronecker product, as for CARI).  None is scored unless named.
"""

from __future__ import annotations

from ..kernels.coclustering import pair_counting
from . import coclustering as _partition  # noqa: F401  (registers the partition provider first)
from .registry import Measure, register

_COUNTS = {
    "": (lambda t: pair_counting.cell_pairs(*t), "the I·J cells", "cells"),
    "_rows": (lambda t: pair_counting.axis_pairs(t[0]), "the rows", "rows"),
    "_cols": (lambda t: pair_counting.axis_pairs(t[1]), "the columns", "columns"),
}

_FORMULAS = {
    "rand": (pair_counting.rand, "Rand index: share of pairs of {what} on which truth and pred agree", r"\frac{N_2 + 2a - r - c}{N_2}",
             True, (0.0, 1.0)),
    "fowlkes_mallows": (pair_counting.fowlkes_mallows, "Fowlkes–Mallows index of {what}, a / sqrt(r·c)", r"\frac{a}{\sqrt{r\,c}}",
                        True, (0.0, 1.0)),
    "pair_precision": (pair_counting.pair_precision, "Of the pairs of {what} pred puts together, the share truth does",
                       r"\frac{a}{c}", False, (0.0, 1.0)),
    "pair_recall": (pair_counting.pair_recall, "Of the pairs of {what} truth puts together, the share pred does",
                    r"\frac{a}{r}", False, (0.0, 1.0)),
    "pair_f1": (pair_counting.pair_f1, "Harmonic mean of pair precision and recall on {what}", r"\frac{2a}{r + c}",
                True, (0.0, 1.0)),
    "pair_jaccard": (pair_counting.pair_jaccard, "Jaccard index of the together-pairs of {what}", r"\frac{a}{r + c - a}",
                     True, (0.0, 1.0)),
}

#: (measure, axis suffix) pairs registered: the whole family on cells, Rand and Fowlkes–Mallows also per axis.
_REGISTERED = [(m, "") for m in _FORMULAS] + [(m, s) for m in ("rand", "fowlkes_mallows") for s in ("_rows", "_cols")]

for _measure, _suffix in _REGISTERED:
    _fn, _summary, _formula, _symmetric, _bounds = _FORMULAS[_measure]
    _counts, _what, _objects = _COUNTS[_suffix]
    _name = _measure + _suffix
    register(Measure(
        name=_name,
        summary=_summary.format(what=_objects) + ".",
        family="partition", provider="partition",
        finalize=lambda t, _fn=_fn, _counts=_counts: _fn(_counts(t)),
        symmetric=_symmetric, bounds=_bounds, perfect=1.0, default=False,
        doc=rf"""
.. math::
    {_formula}

over the :math:`N_2 = \binom{{n}}{{2}}` pairs of {_what}: :math:`a` pairs are
together in both truth and pred, :math:`r` together in truth, :math:`c`
together in pred (:math:`a = \sum \binom{{n_{{hh'}}}}{{2}}` over the
contingency table).  Counts are exact integers at any size (for cells,
sums of squares factor over the Kronecker product of the row and column
tables); the ratio is rounded once.  When neither side puts two objects
together the value is 1; when only one side does, precision or recall
(and Fowlkes–Mallows) is 0.

Examples
--------
>>> import daskbicl
>>> daskbicl.{_name}(([0, 0, 1, 1], [0, 0, 1]), ([1, 1, 0, 0], [5, 5, 4]))
1.0
""",
    ))
