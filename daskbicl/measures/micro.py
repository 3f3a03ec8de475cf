"""Micro-object measures (docs/measures/micro.md), declared in the registry.

All four are finalized from the ``micro`` provider: row and column
signatures counted as membership lists in one chunked pass over each axis's
masks (for two co-clusterings, the row and column contingency tables).
Each measure asks the provider only for the part it reads
(``provider_options``): E4SC the K x L shared-cell table, RNIA the coverage
counts, CE both, MOCICE-BCubed its sums over the family of bicluster sets,
walked as tasks over the cluster, or estimated by sampling
(``method``: docs/measures/micro.md, "Exact or sampled").
"""

from __future__ import annotations

from ..engine.micro_pass import METHODS, max_work, micro_bound, micro_finish, micro_of_tables
from ..kernels.micro import micro_scores
from ..kernels.micro.coverage_estimates import CoverageSample, sampled_ce, sampled_rnia
from .registry import Boolean, Measure, OneOf, Param, Provider, register, register_provider

register_provider(
    Provider(
        name="micro",
        kinds=("partition", "biclustering"),
        description="row and column membership lists (one chunked pass per axis), then the family "
        "walk or samples; options parts: what the selected measures read, method: MOCICE-BCubed's",
        tables="memberships",
        # more than one task after the reduction: the estimates, the plan, the walk and the samples
        finish=micro_finish,
        shorter_axis_later=True,
        from_tables=micro_of_tables,
        bind=micro_bound,
    )
)

_REF_MOCICE = (
    "Rosales-Méndez & Ramírez-Cruz (2015), MOCICE-BCubed F1: a new evaluation measure for "
    "biclustering algorithms (arXiv:1512.00228)."
)
_REF_PM = (
    "Patrikainen & Meila (2006), Comparing subspace clusterings, IEEE TKDE 18(7) "
    "(as implemented in biclustlib's evaluation/subspace.py)."
)

_NOTHING = """\
If neither truth nor pred covers a cell (no bicluster has both a row and a
column) the formula is 0/0 and :class:`~daskbicl.errors.InputError` is
raised."""

MULTISET = Param(
    True, Boolean(),
    "True: count each cell with multiplicity, max(|G(x)|, |C(x)|) times in U and "
    "min(...) times in I (Patrikainen & Meila). False: sets of covered cells.",
)

METHOD = Param(
    "auto", OneOf(METHODS),
    "'exact': the exact value or TooLargeError; 'sample': an estimate with its 95 % half-width; "
    "'auto': exact when its work fits daskbicl.max_work (a walk beyond it stops after a trial of "
    "a few seconds, or at once when it cannot finish in one), else sampled to "
    "daskbicl.micro_tolerance.",
    provider=True,
)


def _ce(r, multiset: bool):
    """CE exact (a float) or, from sampled coverage counts, a :class:`~daskbicl.Estimate`."""
    if isinstance(r.coverage, CoverageSample):
        return sampled_ce(r.coverage, r.overlap, multiset=multiset, max_work=max_work())
    return float(micro_scores.micro_ce(r, multiset=multiset, max_work=max_work()))


def _rnia(r, multiset: bool):
    if isinstance(r.coverage, CoverageSample):
        return sampled_rnia(r.coverage, multiset=multiset)
    return float(micro_scores.rnia(r, multiset=multiset))


_SAMPLED_COUNTS = """Exact or sampled (``method``, as for :func:`mocice_bcubed`): with ``"auto"``
(the default), when the exact cell counts behind |U| and |I| cost more than
``daskbicl.max_work``, they are estimated from cells drawn at random (each
bicluster by its size, then a cell in it) until the 95 % half-width is at
most ``daskbicl.micro_tolerance``, and the value is a
:class:`~daskbicl.Estimate`.{}  ``"exact"`` never samples;
``"sample"`` always does (docs/measures/micro.md, "Exact or sampled")."""

register(
    Measure(
        name="mocice_bcubed",
        summary="MOCICE-BCubed precision, recall and F1 over cells (extended BCubed, overlap-aware).",
        empty_pred=micro_scores.PRF(0.0, 0.0, 0.0),
        family="micro",
        provider="micro",
        finalize=lambda r: r.bcubed,
        symmetric=False,
        bounds=(0.0, 1.0),
        perfect=1.0,
        fields=("precision", "recall", "f1"),
        params={"method": METHOD},
        provider_options={"parts": frozenset({"bcubed"})},
        compiled=True,  # the numba-compiled family walk
        doc=f"""
For a cell x, G(x) and C(x) are the pred and truth biclusters containing it;

.. math::
    \\mathrm{{P}} = \\frac{{1}}{{|U_G|}} \\sum_{{x \\in U_G}} \\frac{{1}}{{|E_G(x)|}}
    \\sum_{{y \\in E_G(x)}} \\varsigma(x, y)

and recall likewise with τ over U_C; F1 is their harmonic mean (docs/measures/micro.md).
Computed from the family of bicluster sets that share a cell, never cell
by cell or pair of signatures by pair: exact cell counts by
inclusion–exclusion, then the weight of the pairs of cells sharing each
set, in parts spread over the cluster (docs/measures/micro.md, "How the
engine works"; for two co-clusterings, over pairs of non-zero entries of
the row and column contingency tables).  Returns a record
``(precision, recall, f1)``.

{_NOTHING.replace("the formula is", "P and R are")}  When only one side
covers a cell, its normaliser (1/|U_G| or 1/|U_C|) is 0/0 and that score is
reported as 0 (a convention); the other is 0 too (no two cells share a
bicluster of both sides), so P = R = F1 = 0.

Accuracy (float64, u = 2**-53): every count is an exact integer; P and R
have relative error at most (2d + L + 12)·u·κ + 4u, d being the largest
number of biclusters sharing a cell, L the pred biclusters and κ ≥ 1 the
cancellation of the one signed sum, which each run measures (κ stayed
below 1.2 on every benchmark: about 1e-14 for 20 + 20 biclusters; at most
6·u for two co-clusterings).  F1 adds u.  The cost grows with the family
(docs/measures/micro.md, "Cost"); when its bound is beyond the dask config
``daskbicl.max_work``, the walk runs as a trial of a few seconds, and if
that runs out it raises :class:`~daskbicl.errors.TooLargeError` (naming the
bound; at once, with no trial, when the sets the walk is sure to visit
already cost more than the trial), as does a part of the family larger than ``daskbicl.micro_budget``
sets (the memory of one task).  CE, RNIA and E4SC never need this step.

Exact or sampled (``method``): with ``"auto"`` (the default), when the
exact walk does not fit ``daskbicl.max_work`` (or its trial), precision and recall are
estimated by sampling pairs of cells until the 95 % half-width of P, R and
F1 is at most the dask config ``daskbicl.micro_tolerance`` (1e-3).  Each
field of a sampled record is then a :class:`~daskbicl.Estimate`: a float
with ``half_width``, ``samples`` and ``exact = False`` (exact fields are
plain floats).  ``"sample"`` always samples; ``"exact"`` never does.  The
same inputs and version give the same digits on any cluster
(docs/measures/micro.md, "Exact or sampled").

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
        summary="Clustering error over cells (Patrikainen–Meila): share of covered cells outside the best bicluster matching (0 = identical).",
        empty_pred=1.0,
        family="micro",
        provider="micro",
        finalize=_ce,
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=0.0,
        params={"multiset": MULTISET, "method": METHOD},
        provider_options={"parts": frozenset({"overlap", "coverage"})},
        compiled=True,  # the numba-compiled family walk
        doc=f"""
.. math::
    \\mathrm{{CE}} = \\frac{{|U| - D_{{\\max}}}}{{|U|}}

D_max = the best one-to-one matching of pred to truth biclusters by shared
cells (an assignment problem, solved with
:func:`scipy.optimize.linear_sum_assignment` on the K x L table of shared
cells).  U = the cells covered by truth or pred, each counted
max(|G(x)|, |C(x)|) times (the number of pred and truth biclusters
containing it), as Patrikainen & Meila define it: D_max ≤ |U|, so CE is in
[0, 1] and 0 for a perfect match, overlapping biclusters included.

``multiset=False`` counts U as a set of cells.  Then D_max, which counts a
cell once per matched pair containing it, can exceed |U| when biclusters
overlap: CE is unbounded below (a bicluster of two cells and one of its
cells, matched perfectly, score -0.5; see the example).  The two readings
agree when no cell is in two biclusters of the same side (co-clusterings,
for example).

{_NOTHING}  Exact ratio of integers rounded once.  The
assignment costs about 0.2·K·L·min(K, L) ns; above the dask config
``daskbicl.max_work`` it raises :class:`~daskbicl.errors.TooLargeError`.

{_SAMPLED_COUNTS.format("  The matching D_max stays exact: only |U| is estimated.")}

Reference: {_REF_PM}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 1]], [[1, 1]])
>>> daskbicl.micro_ce(truth, pred)   # |U| = 4 + 6 - 2 = 8, D_max = 2
0.75
>>> both = daskbicl.biclustering([[1, 1], [0, 1]], [[1], [1]])   # overlap on one cell
>>> daskbicl.micro_ce(both, both), daskbicl.micro_ce(both, both, multiset=False)
(0.0, -0.5)
""",
    )
)

register(
    Measure(
        name="micro_rnia",
        summary="Relative non-intersecting area: share of covered cells not covered alike by both sides (0 = identical coverage).",
        empty_pred=1.0,
        family="micro",
        provider="micro",
        params={"multiset": MULTISET, "method": METHOD},
        finalize=_rnia,
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=0.0,
        provider_options={"parts": frozenset({"coverage"})},
        compiled=True,  # the numba-compiled family walk
        doc=f"""
.. math::
    \\mathrm{{RNIA}} = \\frac{{|U| - |I|}}{{|U|}}

U = cells covered by truth or pred, I = cells covered by both, each counted
with multiplicity by default (max and min of |G(x)| and |C(x)|, as for
:func:`micro_ce`); ``multiset=False`` counts sets of cells.  Both readings
are in [0, 1].

{_NOTHING}  Exact ratio of integers rounded once.

{_SAMPLED_COUNTS.format("")}

Reference: {_REF_PM}

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
        empty_pred=0.0,
        family="micro",
        provider="micro",
        finalize=lambda r: float(micro_scores.e4sc(r)),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=1.0,
        provider_options={"parts": frozenset({"overlap"})},
        doc=f"""
.. math::
    \\mathrm{{E4SC}} = \\mathrm{{hm}}\\big(\\mathrm{{macroF1}}(G \\to C),\\
    \\mathrm{{macroF1}}(C \\to G)\\big)

with macroF1(A → B) the mean over every a ∈ A of the best
F1(a, b) = 2|a ∩ b| / (|a| + |b|) against b ∈ B, on cell sets.  A bicluster
with no row or no column is the empty cell set: it is averaged over like
any other and contributes F1 = 0 (also against an empty bicluster, where the
formula is 0/0), so a perfect match scores 1 only without empty biclusters.
E4SC = 0 when only one side covers a cell.  {_NOTHING}

Relative error at most 4·u (u = 2**-53).

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
