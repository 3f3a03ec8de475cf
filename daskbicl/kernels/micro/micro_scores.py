"""Micro-object measures from the row and column signatures: docs/measures/micro.md.

Every bicluster is turned into its set of cells ("micro-objects").  For a cell
x, G(x) / C(x) are the pred / truth biclusters containing it, and every
quantity of the definitions depends on a cell only through them.  Each
measure reads only the table it needs:

* E4SC: the K x L shared-cell table (:func:`~daskbicl.kernels.micro.cell_records.bicluster_overlap`,
  from the Gram tables the chunked pass counts);
* CE: that table (for D_max) and the coverage counts |U| (:class:`Coverage`);
* RNIA: the coverage counts;
* MOCICE-BCubed: the family walk with superset sums
  (:mod:`daskbicl.kernels.micro.family_tasks`).

The coverage counts and MOCICE-BCubed come from one of two exact methods,
chosen from bounds by the plan (:mod:`daskbicl.kernels.micro.planner`):
the *family* of bicluster sets that share a cell
(:mod:`daskbicl.kernels.micro.family_walk`, walked in parts; its cost does not
grow with the pairs of row and column signatures), or the *cell classes* and
their traces (:mod:`daskbicl.kernels.micro.class_traces`; its cost does not
grow with the number of biclusters sharing a cell, copies merged).

Measures
--------
With :math:`J(G, C) = |G \\cap C| / |G \\cup C|`, for cells x, y with
:math:`g = G(x) \\cap G(y)`, :math:`c = C(x) \\cap C(y)`:

.. math::

    \\Phi = \\frac{1}{|g|} \\sum_{G \\in g} \\max_{C \\in c} J(G, C),\\quad
    \\varsigma = \\frac{\\min(|g|, |c|)}{|g|}\\,\\Phi,\\quad
    \\tau = \\frac{\\min(|g|, |c|)}{|c|}\\,\\Phi
    \\quad (\\text{all } 0 \\text{ if } g = \\emptyset \\text{ or } c = \\emptyset),

.. math::

    P = \\frac{1}{|U_G|} \\sum_{x \\in U_G} \\frac{1}{|E_G(x)|}
        \\sum_{y \\in E_G(x)} \\varsigma(x, y),\\qquad
    R = \\frac{1}{|U_C|} \\sum_{x \\in U_C} \\frac{1}{|E_C(x)|}
        \\sum_{y \\in E_C(x)} \\tau(x, y),

(MOCICE-BCubed), ``CE = (|U| - D_max) / |U|``, ``RNIA = (|U| - |I|) / |U|``
and ``E4SC`` = harmonic mean of the two macro-F1 (docs/measures/micro.md).  |U| and |I|
are counted with multiplicity by default, as Patrikainen & Meila define
them (:class:`Coverage`): a cell counts ``max(|G(x)|, |C(x)|)`` times in U
and ``min(|G(x)|, |C(x)|)`` times in I.  ``multiset=False`` reads them as
sets of cells; CE can then be negative (-0.5 for a perfect match of a
bicluster of two cells and one of its cells), because D_max counts a shared
cell once per matched pair.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ...errors import InputError, TooLargeError
from .budget import DEFAULT_BUDGET, DEFAULT_MAX_WORK, UNIT_PAIR, too_large
from .cell_records import (
    COCLUSTER_DENSE_LIMIT,
    PRF,
    Coverage,
    MicroResult,
    Overlap,
    _check_bool,
    _dense,
    _hmean,
    _nothing_covered,
    _ratio,
    bicluster_overlap,
    same_biclusters,
)
from .family_tasks import coclustering_bcubed, finish, jaccard_table, run_task, union_tables
from .memberships import Memberships
from .planner import plan_micro

__all__ = [
    "COCLUSTER_DENSE_LIMIT",
    "Coverage",
    "MicroResult",
    "MicroScores",
    "MicroTables",
    "Overlap",
    "PRF",
    "bicluster_overlap",
    "coclustering_bcubed",
    "coclustering_coverage",
    "coclustering_overlap",
    "e4sc",
    "jaccard_table",
    "micro_ce",
    "micro_measures",
    "mocice_bcubed",
    "rnia",
]


class MicroTables:
    """Every table the micro-object measures need, each computed on first use, in this process.

    Parameters
    ----------
    rows, cols : Memberships
        Merged row and column signatures (:func:`~daskbicl.kernels.micro.memberships.\\
merge_memberships`) of the same K truth and L pred biclusters.
    max_work : float, optional
        Limit on the work of the exact step (:class:`TooLargeError` above; a family walk whose bound
        is beyond it runs as a trial, :mod:`daskbicl.kernels.micro.planner`).
    budget : int, optional
        Largest number of sets a MOCICE-BCubed part holds.
    exact : bool, optional
        MOCICE-BCubed in rational arithmetic.
    n_tasks : int, optional
        Tasks the parts are dealt into (run one after the other here).
    union_budget : int, optional
        Largest one-sided family of the normalisers (default: ``budget``).
    coverage_by : {None, "family", "pairs"}, optional
        How the coverage counts are made by the family walk (default: the cheaper).
    method : {None, "family", "classes"}, optional
        The exact method (default: chosen from bounds;
        :func:`~daskbicl.kernels.micro.planner.plan_micro`).

    Attributes
    ----------
    overlap : Overlap
        K x L shared cells and sizes (cheap: CE's matching and E4SC).
    coverage : Coverage
        |U|, |I|, |U_G|, |U_C| and the multiset counts (the family walk).
    bcubed : PRF
        MOCICE-BCubed (the family walk with its superset sums).
    """

    def __init__(self, rows: Memberships, cols: Memberships, *, max_work: float = DEFAULT_MAX_WORK,
                 budget: int = DEFAULT_BUDGET, exact: bool = False, n_tasks: int = 4,
                 union_budget: int | None = None, coverage_by: str | None = None,
                 method: str | None = None) -> None:
        if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
            raise InputError(
                f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but "
                f"column signatures {cols.n_truth}+{cols.n_pred}; count both from the "
                "same truth and pred masks.")
        self.rows, self.cols, self.max_work = rows, cols, float(max_work)
        self.budget, self.exact, self.n_tasks = int(budget), bool(exact), int(n_tasks)
        self.union_budget = int(budget if union_budget is None else union_budget)
        self.coverage_by = coverage_by
        self.method = method

    @property
    def n_truth(self) -> int:
        """K."""
        return self.rows.n_truth

    @property
    def n_pred(self) -> int:
        """L."""
        return self.rows.n_pred

    @cached_property
    def overlap(self) -> Overlap:
        """See :func:`~daskbicl.kernels.micro.cell_records.bicluster_overlap`."""
        return bicluster_overlap(self.rows, self.cols)

    def _walk(self, coverage: bool, bcubed: bool):
        plan = plan_micro(self.rows, self.cols, coverage=coverage, bcubed=bcubed, max_work=self.max_work,
                          budget=self.budget, n_tasks=self.n_tasks, coverage_by=self.coverage_by,
                          method=self.method)
        jac = tables = None
        if bcubed:
            jac = jaccard_table(self.overlap, exact=self.exact)
            if plan.method == "family":
                tables = union_tables(self.rows, self.cols, budget=self.union_budget, max_work=self.max_work,
                                      plan=plan)
        results = [run_task(plan, i, self.rows, self.cols, jac, tables, exact=self.exact)
                   for i in range(plan.n_tasks)]
        return finish(plan, results, tables, exact=self.exact,
                      identical=bcubed and same_biclusters(self.overlap))

    @cached_property
    def coverage(self) -> Coverage:
        """Coverage counts (a family walk without stored sets)."""
        cov, _, _ = self._walk(True, False)
        assert cov is not None
        return cov

    @cached_property
    def _bcubed(self):
        _, prf, err = self._walk(False, True)
        return prf, err

    @property
    def bcubed(self) -> PRF:
        """MOCICE-BCubed precision, recall and F1."""
        return self._bcubed[0]

    @property
    def bcubed_error(self) -> float:
        """Bound on the relative error of :attr:`bcubed`'s precision and recall (0 if exact)."""
        return self._bcubed[1]


def mocice_bcubed(tables: MicroTables) -> PRF:
    """MOCICE-BCubed precision, recall and F1 (docs/measures/micro.md).

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> mocice_bcubed(MicroTables(*example_memberships(), exact=True))
    PRF(precision=Fraction(2203, 4860), recall=Fraction(2189, 4860), f1=Fraction(4822367, 10672560))
    >>> p, r, f = mocice_bcubed(MicroTables(*example_memberships()))
    >>> round(p, 12), round(r, 12), round(f, 12)
    (0.45329218107, 0.450411522634, 0.451847260638)
    """
    return tables.bcubed


# ... per K L min(K, L) of CE's assignment (scipy's linear_sum_assignment,
# measured: 0.4 s for 1600 x 1600, 2.4 s for 2500 x 2500).
_UNIT_ASSIGNMENT = 0.02


def _unions(tables, multiset) -> tuple[int, int]:
    cov = tables.coverage
    if _check_bool("multiset", multiset):
        return cov.union_multiset, cov.intersection_multiset
    return cov.union, cov.intersection


def micro_ce(tables, *, multiset: bool = True, exact: bool = False, max_work: float | None = None):
    """Clustering error of Patrikainen & Meila on cells, an error in [0, 1].

    .. math:: CE = \\frac{|U| - D_{max}}{|U|}

    D_max is the largest total of shared cells over one-to-one matchings of
    pred to truth biclusters (:func:`scipy.optimize.linear_sum_assignment`
    on ``overlap.shared``, exact while counts sum below 2**53).  By default
    |U| counts each covered cell ``max(|G(x)|, |C(x)|)`` times (the
    published multiset union; D_max <= |I| <= |U| so CE is in [0, 1] and 0
    for a perfect match); ``multiset=False`` uses the set of covered cells,
    which D_max can exceed when biclusters overlap (CE < 0).

    ``tables`` is a :class:`MicroTables` or anything with ``coverage`` and
    ``overlap`` (:class:`MicroResult`).  Raises
    :class:`~daskbicl.errors.InputError` when neither side covers a cell, and
    :class:`~daskbicl.errors.TooLargeError` when the assignment (about
    0.2·K·L·min(K, L) ns) exceeds ``max_work`` (default: the
    tables' own, else :data:`~daskbicl.kernels.micro.budget.DEFAULT_MAX_WORK`).

    Examples
    --------
    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> micro_ce(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    u, _ = _unions(tables, multiset)
    if u == 0:
        raise _nothing_covered("the clustering error (CE)", "(|U| - D_max) / |U| is")
    sh = tables.overlap.shared
    limit = getattr(tables, "max_work", DEFAULT_MAX_WORK) if max_work is None else max_work
    work = _UNIT_ASSIGNMENT * sh.size * min(sh.shape, default=0)
    if work > limit:
        raise too_large(f"CE's one-to-one matching of {sh.shape[0]} truth and {sh.shape[1]} "
                        "pred biclusters (an assignment problem)", work, limit,
                        "RNIA, E4SC and MOCICE-BCubed do not need it.")
    d = 0
    if sh.size:
        from scipy.optimize import linear_sum_assignment  # imported when needed (0.1 s at import)

        r, c = linear_sum_assignment(sh, maximize=True)
        d = int(sh[r, c].sum(dtype=np.int64))
    return _ratio(u - d, u, exact)


def rnia(tables, *, multiset: bool = True, exact: bool = False):
    """Relative non-intersecting area, ``(|U| - |I|) / |U|``, an error in [0, 1].

    By default with multiplicity (:class:`Coverage`), as :func:`micro_ce`;
    ``multiset=False`` counts covered cells as sets.  Raises
    :class:`~daskbicl.errors.InputError` when neither side covers a cell.

    Examples
    --------
    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> rnia(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    u, i = _unions(tables, multiset)
    if u == 0:
        raise _nothing_covered("the relative non-intersecting area (RNIA)", "(|U| - |I|) / |U| is")
    return _ratio(u - i, u, exact)


def e4sc(tables, *, exact: bool = False):
    """E4SC: harmonic mean of macroF1(pred -> truth) and macroF1(truth -> pred).

    .. math::

        F1(a, b) = \\frac{2 |a \\cap b|}{|a| + |b|},\\qquad
        macroF1(A \\to B) = \\frac{1}{|A|} \\sum_{a \\in A} \\max_{b \\in B} F1(a, b)

    over every bicluster as a cell set: an empty one (no row or no column)
    contributes F1 = 0 to its side's mean (F1 of two empty sets is taken as
    0).  0 when only one side covers a cell; raises
    :class:`~daskbicl.errors.InputError` when neither does.  Reads only
    ``tables.overlap``.

    Examples
    --------
    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> e4sc(MicroTables(rows, cols), exact=True)
    Fraction(1, 2)
    """
    ov = tables.overlap
    sh, st, sp = ov.shared, ov.truth_sizes, ov.pred_sizes
    covers_t, covers_p = bool((st > 0).any()), bool((sp > 0).any())
    if not covers_t and not covers_p:
        raise _nothing_covered("the E4SC score", "every F1(a, b) = 2|a ∩ b| / (|a| + |b|) is")
    if not covers_t or not covers_p:
        return Fraction(0) if exact else 0.0
    den = st[:, None] + sp[None, :]
    if exact:
        exact_f1 = [[Fraction(2 * int(sh[k, l]), int(den[k, l])) if den[k, l] else Fraction(0)
                     for l in range(len(sp))] for k in range(len(st))]
        ea = sum(max(exact_f1[k][l] for k in range(len(st))) for l in range(len(sp))) / Fraction(len(sp))
        eb = sum(max(row) for row in exact_f1) / Fraction(len(st))
        return _hmean(ea, eb)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(den > 0, 2.0 * sh / np.where(den > 0, den, 1).astype(np.float64), 0.0)
    a = math.fsum(f1.max(axis=0)) / len(sp)
    b = math.fsum(f1.max(axis=1)) / len(st)
    return float(_hmean(Fraction(a), Fraction(b)))


class MicroScores(NamedTuple):
    """All micro-object measures of one truth/pred pair."""

    bcubed: PRF
    ce: float
    rnia: float
    e4sc: float


def micro_measures(rows: Memberships, cols: Memberships, *,
                   exact: bool = False, multiset: bool = True,
                   max_work: float = DEFAULT_MAX_WORK) -> MicroScores:
    """MOCICE-BCubed, CE, RNIA and E4SC from merged row and column classes.

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> s = micro_measures(*example_memberships(), exact=True)
    >>> s.ce, s.rnia, s.e4sc
    (Fraction(1, 3), Fraction(1, 3), Fraction(4, 5))
    >>> micro_measures(*example_memberships()).e4sc
    0.8
    """
    t = MicroTables(rows, cols, max_work=max_work, exact=exact)
    return MicroScores(mocice_bcubed(t), micro_ce(t, exact=exact, multiset=multiset),
                       rnia(t, exact=exact, multiset=multiset), e4sc(t, exact=exact))


def coclustering_overlap(rows, cols, *, max_work: float = DEFAULT_MAX_WORK) -> Overlap:
    """The block-by-block shared-cell table of two co-clusterings (Kronecker product).

    ``shared[(h, l), (h', l')] = n^{zz'}_{hh'} n^{ww'}_{ll'}``; block sizes are
    products of cluster sizes.  Dense (H L) x (H' L'), as CE's assignment
    needs it: :class:`~daskbicl.errors.TooLargeError` above
    :data:`COCLUSTER_DENSE_LIMIT` entries or ``max_work``.

    Examples
    --------
    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> ov = coclustering_overlap(r, c)
    >>> ov.shared.tolist(), ov.truth_sizes.tolist(), ov.pred_sizes.tolist()
    ([[2, 2], [0, 2]], [4, 2], [2, 4])
    """
    nk = len(rows.truth_sizes()) * len(cols.truth_sizes())
    nl = len(rows.pred_sizes()) * len(cols.pred_sizes())
    if nk * nl > COCLUSTER_DENSE_LIMIT:
        raise TooLargeError(
            f"two co-clusterings with {nk:,} and {nl:,} blocks need a dense {nk:,} x {nl:,} "
            f"table of shared cells for CE and E4SC, more than {COCLUSTER_DENSE_LIMIT:,} "
            "entries (512 MiB); MOCICE-BCubed and RNIA do not need it.")
    if UNIT_PAIR * nk * nl > max_work:
        raise too_large(f"the {nk} x {nl} table of shared cells of the blocks of two "
                        "co-clusterings (CE and E4SC)", UNIT_PAIR * nk * nl, max_work,
                        "MOCICE-BCubed and RNIA do not need it.")
    return Overlap(np.kron(_dense(rows), _dense(cols)),
                   np.kron(rows.truth_sizes(), cols.truth_sizes()),
                   np.kron(rows.pred_sizes(), cols.pred_sizes()))


def coclustering_coverage(rows, cols) -> Coverage:
    """Coverage of two co-clusterings: every cell is in exactly one block of each.

    Examples
    --------
    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> coclustering_coverage(r, c)
    Coverage(union=6, intersection=6, pred=6, truth=6, union_multiset=6, intersection_multiset=6)
    """
    n = rows.n * cols.n
    return Coverage(n, n, n, n, n, n)
