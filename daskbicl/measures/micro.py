"""Micro-object measures (SPEC §6), declared in the registry.

All four are finalized from the ``micro`` provider: row and column signature
classes counted in one chunked pass over each axis's masks; the
MOCICE-BCubed class-pair sum runs as blocks over the cluster.
"""

from __future__ import annotations

from ..engine.signatures import micro_graph
from ..kernels import micro as KM
from .registry import Measure, Provider, register, register_provider

register_provider(
    Provider(
        name="micro",
        build=lambda truth, pred: micro_graph(truth, pred),
        kinds=("partition", "biclustering"),
        description="row and column signature classes (one chunked pass per axis)",
    )
)

_REF_MOCICE = (
    "Rosales-Méndez & Ramírez-Cruz (2015), MOCICE-BCubed F1: a new evaluation measure for "
    "biclustering algorithms (arXiv:1512.00228)."
)

register(
    Measure(
        name="mocice_bcubed",
        summary="MOCICE-BCubed precision, recall and F1 over cells (extended BCubed, overlap-aware).",
        family="micro",
        needs="micro",
        finalize=lambda r: r.bcubed,
        symmetric=False,
        bounds=(0.0, 1.0),
        perfect=1.0,
        fields=("precision", "recall", "f1"),
        doc=f"""
For a cell x, G(x) and C(x) are the pred and truth biclusters containing it;

.. math::
    \\mathrm{{P}} = \\frac{{1}}{{|U_G|}} \\sum_{{x \\in U_G}} \\frac{{1}}{{|E_G(x)|}}
    \\sum_{{y \\in E_G(x)}} \\varsigma(x, y)

and recall likewise with τ over U_C; F1 is their harmonic mean (SPEC §6).
Computed over pairs of signature classes weighted by their sizes, never cell
by cell.  Returns a record ``(precision, recall, f1)``.

Reference: {_REF_MOCICE}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 1]], [[1, 1]])
>>> r = daskbicl.mocice_bcubed(truth, pred)   # 2 shared cells; J(B, X) = 2/8
>>> round(r.precision * 36, 9), round(r.recall * 16, 9)
(1.0, 1.0)
""",
    )
)

register(
    Measure(
        name="micro_ce",
        summary="Clustering error over cells (Patrikainen–Meila): (|U| − D_max)/|U| (0 = identical).",
        family="micro",
        needs="micro",
        finalize=lambda r, multiset=False: float(KM.micro_ce(r.tables, multiset=bool(multiset))),
        symmetric=True,
        bounds=(-float("inf"), 1.0),
        perfect=0.0,
        params={"multiset": False},
        doc="""
.. math::
    \\mathrm{CE} = \\frac{|U| - D_{\\max}}{|U|}

U = cells covered by truth or pred; D_max = the best one-to-one matching of
pred to truth biclusters by shared cells (an assignment problem, solved with
:func:`scipy.optimize.linear_sum_assignment` on the K x L table).

|U| is the set union, as SPEC §6 states.  With overlapping biclusters
D_max can exceed it and CE goes negative (even a perfect match scores
``1 − Σ|B_k|/|U| < 0``).  ``multiset=True`` counts each cell
``max(|G(x)|, |C(x)|)`` times, as Patrikainen & Meila publish it, which keeps
CE in [0, 1] and 0 for a perfect match.

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 1]], [[1, 1]])
>>> daskbicl.micro_ce(truth, pred)   # |U| = 4 + 6 - 2 = 8, D_max = 2
0.75
""",
    )
)

register(
    Measure(
        name="micro_rnia",
        summary="Relative non-intersecting area: (|U| − |I|)/|U| (0 = identical coverage).",
        family="micro",
        needs="micro",
        params={"multiset": False},
        finalize=lambda r, multiset=False: float(KM.rnia(r.tables, multiset=bool(multiset))),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=0.0,
        doc="""
.. math::
    \\mathrm{RNIA} = \\frac{|U| - |I|}{|U|}

U = cells covered by truth or pred, I = cells covered by both.

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 1]], [[1, 1]])
>>> daskbicl.micro_rnia(truth, pred)   # (8 - 2) / 8
0.75
""",
    )
)

register(
    Measure(
        name="e4sc",
        summary="E4SC: harmonic mean of macro-F1(pred→truth) and macro-F1(truth→pred) on cell sets.",
        family="micro",
        needs="micro",
        finalize=lambda r: float(KM.e4sc(r.tables)),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=1.0,
        doc="""
.. math::
    \\mathrm{E4SC} = \\mathrm{hm}\\big(\\mathrm{macroF1}(G \\to C),\\
    \\mathrm{macroF1}(C \\to G)\\big)

with macroF1(A → B) the mean over a ∈ A of the best F1 against b ∈ B, on
cell sets.

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 1]], [[1, 1]])
>>> round(daskbicl.e4sc(truth, pred), 12)   # F1 = 2·2/(4 + 6) both ways
0.4
""",
    )
)
