"""The scores of Nicholls & Wallace's comparison of biclustering methods (docs/measures/recovery.md).

``recovered``, ``redundancy``, ``ce_sparse`` and ``ce_dense`` read the
``recovery`` provider: the joint membership signatures of the rows and of
the columns (the pass the micro-object and cover measures count, shared
with them within one score call), turned on the cluster into a small
:class:`~daskbicl.kernels.bicluster.recovery_scores.RecoveryTables`.
"""

from __future__ import annotations

import math

from ..engine.micro_pass import max_work
from ..kernels.bicluster import recovery_scores
from ..kernels.bicluster.block_memberships import block_memberships_of_tables
from .registry import Interval, Measure, OneOf, Param, Provider, register, register_provider

__all__: list[str] = []


def _recovery_tables(rows, cols, share: float = 0.4, classes: bool = False, *, max_work: float):
    return recovery_scores.recovery_tables(rows, cols, share, max_work, classes)


def _recovery_of_tables(row_table, col_table, share: float = 0.4, classes: bool = False, *, max_work: float):
    """Two co-clusterings: the blocks' membership signatures from the contingency tables, no one-hot block masks."""
    rows, cols = block_memberships_of_tables(row_table, col_table)
    return recovery_scores.recovery_tables(rows, cols, share, max_work, classes)


register_provider(
    Provider(
        name="recovery",
        kinds=("partition", "biclustering"),
        tables="memberships",
        finalize=_recovery_tables,
        from_tables=_recovery_of_tables,
        bind=lambda: {"max_work": max_work()},
        description="row and column membership signatures (one chunked pass per axis), then the sparse and "
        "dense classes' matchings and multiset unions and pred's pairwise shared cells; option share: "
        "the sparse threshold; classes: count the sparse and dense classes (the CE measures)",
    )
)

_REF = ("Nicholls & Wallace (2021), Comparison of sparse biclustering algorithms for gene expression "
        "datasets, Briefings in Bioinformatics 22(6) bbab140; their code biclust_comp "
        "(analysis/accuracy.py).")

SHARE = Param(0.4, Interval(0.0, 1.0, closed="right"),
              "A bicluster is sparse when it has fewer than this share of the rows and of the columns "
              "(compared exactly, as the decimal written).", provider=True)
STATISTIC = Param("mean", OneOf(recovery_scores.STATISTICS),
                  "'mean': over ordered pairs of distinct pred biclusters (MBR); 'average_max': the mean of "
                  "each bicluster's largest Jaccard with another; 'max': the largest.")

register(Measure(
    name="recovered",
    summary="Number of non-empty pred biclusters (biclust_comp's recovered K), to set beside truth's.",
    family="bicluster", provider="recovery", default=False,
    finalize=lambda t: float(t.recovered),
    symmetric=False, bounds=(0.0, math.inf), perfect=math.nan, empty_pred=0.0,
    doc=f"""
The number of biclusters pred returned that have at least one row and one
column: what Nicholls & Wallace plot as the recovered number of factors K
against the true K.  It reads pred only; scored on pred = truth it gives
truth's number of non-empty biclusters.  A pred with no bicluster scores 0.

Reference: {_REF}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
>>> pred = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]], [[1, 0, 0], [0, 1, 1], [1, 1, 1]])
>>> daskbicl.recovered(truth, pred)   # the third has no row
2.0
""",
))

register(Measure(
    name="redundancy",
    summary="Mean bicluster redundancy of pred: mean cell Jaccard of two of its biclusters (biclust_comp's MBR).",
    family="bicluster", provider="recovery", default=False,
    finalize=lambda t, statistic: recovery_scores.redundancy(t, statistic),
    symmetric=False, bounds=(0.0, 1.0), perfect=math.nan, empty_pred=0.0,
    params={"statistic": STATISTIC},
    doc=f"""
With J(X_k, X_l) = |X_k ∩ X_l| / |X_k ∪ X_l| the Jaccard index of the cell
sets of two pred biclusters (|X_k ∩ X_l| = shared rows × shared columns),

.. math::
    \\mathrm{{MBR}} = \\frac{{1}}{{L(L-1)}} \\sum_{{k \\ne l}} J(X_k, X_l)

over the L non-empty pred biclusters (``statistic="mean"``, the paper's
mean bicluster redundancy).  ``"average_max"``: the mean over k of
max_l J(X_k, X_l); ``"max"``: the largest J.  It reads pred only (0: no two
biclusters share a cell; 1: all biclusters are the same).  Fewer than two
biclusters score 0, as biclust_comp does.  Computed from the pred x pred
blocks of the row and column Gram tables (exact integers, each ratio
rounded once).

Reference: {_REF}

Examples
--------
>>> import daskbicl
>>> pred = daskbicl.biclustering([[1, 1, 0, 0], [1, 0, 0, 0]], [[1, 1], [1, 1]])
>>> daskbicl.redundancy(pred, pred)   # 2 shared cells of 4
0.5
""",
))

_CE_DOC = """
biclust_comp's clustering error (Patrikainen & Meila's D_max / |U|, a
similarity: 1 for a perfect match) on the {name} biclusters only.  A
bicluster is *sparse* when it has fewer than ``share`` (0.4) of the rows
and fewer than ``share`` of the columns; the others are dense.  Truth and
pred are split alike; then

.. math::
    \\mathrm{{CE}}_{{{name}}} = \\frac{{D_{{\\max}}}}{{|U|}}

where D_max is the largest total of shared cells over one-to-one matchings
of the {name} truth and pred biclusters, and |U| counts every cell max(a, b)
times, a and b the {name} truth and pred biclusters containing it.  Without
the split it is 1 − ``micro_ce``.  nan when truth has no {name} bicluster
(biclust_comp writes -1 there as a placeholder); 0 when truth has some and
pred none; a pred with no bicluster at all gives nan (biclust_comp leaves the
value out).  Biclusters with no row or no column are left out.

Exact integers, one rounding.  |U| needs the cells' memberships: the row
and column signatures are projected on the class and intersected (the work
is their product, checked against the dask config ``daskbicl.max_work``,
:class:`~daskbicl.errors.TooLargeError` beyond it).

Reference: {ref}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]], [[1, 0, 0, 0, 0], [1, 1, 1, 1, 0]])
>>> pred = daskbicl.biclustering([[1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]], [[1, 0, 0, 0, 0], [1, 1, 1, 1, 1]])
>>> daskbicl.ce_{name}(truth, pred)
{value}
"""

for _name, _value in (("sparse", "0.5"), ("dense", "0.6666666666666666")):
    register(Measure(
        name=f"ce_{_name}",
        summary=f"Clustering error D_max/|U| (1 = perfect) on the {_name} biclusters only (biclust_comp).",
        family="bicluster", provider="recovery", default=False,
        finalize=lambda t, _c=_name: recovery_scores.ce_of_class(t, _c),
        symmetric=False, bounds=(0.0, 1.0), perfect=1.0, empty_pred=math.nan,
        params={"share": SHARE}, provider_options={"classes": True}, compiled=True,
        doc=_CE_DOC.format(name=_name, ref=_REF, value=_value),
    ))
