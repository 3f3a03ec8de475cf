"""Micro-object measures from signature classes (numpy only): SPEC §6.

Every bicluster is turned into its set of cells ("micro-objects").  For a cell
x, G(x) / C(x) are the pred / truth biclusters containing it; a cell's
*signature* (G(x), C(x)) is the AND of its row's and its column's signatures
(:mod:`daskbicl.kernels.signatures`), and every quantity of SPEC §6 depends
on a cell only through it.  The engine counts row and column classes;
:class:`MicroTables` joins them into exact cell classes and everything below
is finalized from those small tables.

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
and ``E4SC`` = harmonic mean of the two macro-F1 (SPEC §6).

Algorithm (MOCICE-BCubed)
-------------------------
Let the cell classes be s with weights w(s) (numbers of cells) and
:math:`N(U) = \\#\\{y : sig(y) \\supseteq U\\}`.  For a class s, the cells
y split by :math:`T = sig(y) \\cap s` into
:math:`M_s(T) = \\sum_{T \\subseteq U \\subseteq s} (-1)^{|U - T|} N(U)`
cells (exact int64 Möbius inversion over the subsets of s; every
intermediate is a count), and

.. math::

    \\sum_y \\varsigma(s, y) = \\sum_{T \\subseteq s} \\varsigma(T)\\, M_s(T),
    \\qquad |E_G(s)| = \\sum_{T \\subseteq s,\\ T_G \\neq \\emptyset} M_s(T),

so the precision numerator is
:math:`\\sum_s w(s) \\sum_T \\varsigma(T) M_s(T) / |E_G(s)|` (recall alike).
ς and τ are tabulated once per element of the down-closed family of cell
signatures.  Cost: :math:`O(\\sum_s |s| 2^{|s|})` over the classes s with
both a truth and a pred bit ("subsets" method).  When signatures are long
(heavy overlap) the "pairwise" method sums :math:`w(t)\\,\\varsigma(s \\cap t)`
over all pairs of classes instead, :math:`O(S^2)` word ANDs plus ς of the
distinct intersections (~100 ns per pair); the cheaper is chosen, and
:class:`~daskbicl.errors.TooLargeError` is raised when the estimated work
exceeds ``max_work`` (units of ~10 ns,
:data:`~daskbicl.kernels.signatures.DEFAULT_MAX_WORK`).  :func:`bcubed_block` computes the sums of a slice of classes,
so a cluster can process blocks in parallel and :func:`bcubed_finalize` adds
them up.

Accuracy
--------
With ``exact=True`` everything is computed in rational arithmetic
(:class:`fractions.Fraction`) and the result is exact.  In float64 all
counts are exact integers, every term is non-negative (no cancellation):
ς(T) has relative error <= (|g| + 3) eps, each class sum <= 2^|s| terms
(numpy pairwise summation) adds <= |s| eps, the class terms of a block are
summed with :func:`math.fsum` (correctly rounded) and the block sums again
with :func:`math.fsum`, so the relative error of P and R is below
:math:`(L + 2 \\max|s| + 10) \\epsilon \\approx 10^{-14}` for 20+20
biclusters (counts are converted to float64 exactly below 2**53 cells; above,
add one eps).  F1 is the harmonic mean of the float P and R evaluated
exactly and rounded once, so identical inputs give exactly 1.0.  CE and RNIA
are exact ratios rounded once; E4SC has a few ulps.

Degenerate cases (documented choices)
-------------------------------------
* Biclusters with no cell (no row or no column) are not micro-objects: they
  never appear in a cell signature and E4SC ignores them.
* MOCICE-BCubed: if neither side covers a cell, P = R = F1 = 1 (identical);
  if only one side does, P = R = F1 = 0.  F1 = 0 when P + R = 0.
* CE and RNIA: 0 when ``|U| = 0``.  E4SC: 1 when both sides are empty, 0
  when exactly one is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import InputError, TooLargeError
from .signatures import (
    DEFAULT_MAX_WORK,
    UNIT_SUBSET,
    HashIndex,
    SignatureClasses,
    SubsetLattice,
    cell_signature_counts,
    pack_bits,
    popcount,
    sortable_keys,
    superset_lattice,
    unpack_bits,
)

__all__ = [
    "PRF",
    "BCubedPartial",
    "BCubedPlan",
    "Coverage",
    "MicroScores",
    "MicroTables",
    "Overlap",
    "bcubed_block",
    "bcubed_finalize",
    "bcubed_plan",
    "bicluster_overlap",
    "coverage",
    "e4sc",
    "jaccard_table",
    "micro_ce",
    "micro_measures",
    "mocice_bcubed",
    "rnia",
]

_CHUNK = 1 << 20


class PRF(NamedTuple):
    """Precision, recall and their harmonic mean (floats; Fractions if exact)."""

    precision: float
    recall: float
    f1: float


class Overlap(NamedTuple):
    """Cell overlaps of every truth/pred pair and the bicluster sizes.

    ``shared[k, l] = |B_k ∩ X_l| = |E_k ∩ E'_l| |F_k ∩ F'_l|`` (int64, K x L),
    ``truth_sizes[k] = |B_k|``, ``pred_sizes[l] = |X_l|``.
    """

    shared: np.ndarray
    truth_sizes: np.ndarray
    pred_sizes: np.ndarray


class Coverage(NamedTuple):
    """Numbers of cells (exact ints) covered by the two biclusterings.

    ``union`` = |U| (covered by truth or pred), ``intersection`` = |I| (by
    both), ``pred`` = |U_G|, ``truth`` = |U_C|; ``union_multiset`` =
    sum over cells of max(|G(x)|, |C(x)|) and ``intersection_multiset`` = sum of
    min(|G(x)|, |C(x)|) (Patrikainen & Meila's counts with multiplicity).
    """

    union: int
    intersection: int
    pred: int
    truth: int
    union_multiset: int
    intersection_multiset: int


def _part_masks(n_truth: int, n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Packed words selecting the truth bits and the pred bits."""
    bits = np.zeros((2, n_truth + n_pred), bool)
    bits[0, :n_truth] = True
    bits[1, n_truth:] = True
    w = pack_bits(bits)
    return w[0], w[1]


def _part_counts(words: np.ndarray, n_truth: int, n_pred: int):
    """(|C|, |G|): numbers of truth and pred bits of each signature."""
    tm, pm = _part_masks(n_truth, n_pred)
    return popcount(words & tm), popcount(words & pm)


def bicluster_overlap(rows: SignatureClasses, cols: SignatureClasses) -> Overlap:
    """The K x L shared-cell table and the bicluster sizes, exact int64.

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 0]], bool))
    >>> ov = bicluster_overlap(rows, cols)
    >>> ov.shared.tolist(), ov.truth_sizes.tolist(), ov.pred_sizes.tolist()
    ([[1]], [4], [2])
    """

    def side(c: SignatureClasses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t, p = c.truth, c.pred
        if c.total < 2**53:  # float BLAS products of integers are exact here
            sh = np.rint((t.T * c.count.astype(np.float64)) @ p).astype(np.int64)
        else:
            sh = (t.T.astype(np.int64) * c.count) @ p.astype(np.int64)
        return sh, c.count @ t.astype(np.int64), c.count @ p.astype(np.int64)

    rs, rt, rp = side(rows)
    cs, ct, cp = side(cols)
    return Overlap(rs * cs, rt * ct, rp * cp)


def coverage(cells: SignatureClasses) -> Coverage:
    """Cell coverage counts (:class:`Coverage`) from the cell classes.

    Examples
    --------
    >>> cells = SignatureClasses.from_bits(np.array([[1], [1], [0]], bool),
    ...                                    np.array([[1], [0], [1]], bool), [2, 3, 4])
    >>> coverage(cells)[:4]
    (9, 2, 6, 5)
    """
    nt, np_ = _part_counts(cells.words, cells.n_truth, cells.n_pred)
    cnt = cells.count
    big = cells.total * max(cells.n_truth, cells.n_pred, 1) >= 2**62
    c = cnt.astype(object) if big else cnt

    def tot(x) -> int:
        return int(np.sum(x))

    return Coverage(
        union=tot(cnt[(nt + np_) > 0]),
        intersection=tot(cnt[(nt > 0) & (np_ > 0)]),
        pred=tot(cnt[np_ > 0]),
        truth=tot(cnt[nt > 0]),
        union_multiset=tot(c * np.maximum(nt, np_)),
        intersection_multiset=tot(c * np.minimum(nt, np_)),
    )


class MicroTables:
    """Every table the micro-object measures need, computed lazily.

    Parameters
    ----------
    rows, cols : SignatureClasses
        Merged row and column classes (:func:`~daskbicl.kernels.signatures.\
merge_signature_counts`) of the same K truth and L pred biclusters.
    max_work : float, optional
        Limit on the estimated table entries of the join and of the
        MOCICE-BCubed finalize (:class:`TooLargeError` above).

    Attributes
    ----------
    overlap : Overlap
        K x L shared cells and sizes (cheap: CE's matching and E4SC).
    cells : SignatureClasses
        Exact cell classes (RNIA, CE's union, MOCICE-BCubed).
    coverage : Coverage
        |U|, |I|, |U_G|, |U_C| and the multiset counts.
    """

    def __init__(self, rows: SignatureClasses, cols: SignatureClasses, *,
                 max_work: float = DEFAULT_MAX_WORK) -> None:
        if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
            raise InputError(
                f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but "
                f"column signatures {cols.n_truth}+{cols.n_pred}; count both from the "
                "same truth and pred masks.")
        self.rows, self.cols, self.max_work = rows, cols, float(max_work)

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
        """See :func:`bicluster_overlap`."""
        return bicluster_overlap(self.rows, self.cols)

    @cached_property
    def _join(self) -> tuple[SignatureClasses, SubsetLattice | None]:
        return cell_signature_counts(self.rows, self.cols, max_work=self.max_work)

    @property
    def cells(self) -> SignatureClasses:
        """Exact cell classes."""
        return self._join[0]

    @property
    def lattice(self) -> SubsetLattice | None:
        """Down-closure of the cell signatures, if the join built it."""
        return self._join[1]

    @cached_property
    def coverage(self) -> Coverage:
        """See :func:`coverage`."""
        return coverage(self.cells)


# --------------------------------------------------------------------------
# CE, RNIA, E4SC
# --------------------------------------------------------------------------
def _hmean(a: Fraction, b: Fraction) -> Fraction:
    """Harmonic mean 2ab/(a+b), 0 when a + b = 0 (exact; round once)."""
    return 2 * a * b / (a + b) if a + b else Fraction(0)


def _ratio(num: int, den: int, exact: bool):
    q = Fraction(num, den)
    return q if exact else float(q)


def micro_ce(tables: MicroTables, *, multiset: bool = False, exact: bool = False):
    """Clustering error of Patrikainen & Meila on cells, an error in [0, 1].

    .. math:: CE = \\frac{|U| - D_{max}}{|U|}

    D_max is the largest total of shared cells over one-to-one matchings of
    pred to truth biclusters (:func:`scipy.optimize.linear_sum_assignment`
    on ``overlap.shared``, exact while counts are below 2**53).  ``|U|`` is
    the set union of covered cells (SPEC); ``multiset=True`` counts a cell
    ``max(|G(x)|, |C(x)|)`` times, the published definition, which keeps CE
    >= 0 for overlapping biclusters.  0 when ``|U| = 0``.

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> micro_ce(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    cov = tables.coverage
    u = cov.union_multiset if multiset else cov.union
    if u == 0:
        return Fraction(0) if exact else 0.0
    sh = tables.overlap.shared
    d = 0
    if sh.size:
        r, c = linear_sum_assignment(sh, maximize=True)
        d = int(sh[r, c].sum(dtype=np.int64))
    return _ratio(u - d, u, exact)


def rnia(tables: MicroTables, *, multiset: bool = False, exact: bool = False):
    """Relative non-intersecting area, ``(|U| - |I|) / |U|``, an error in [0, 1].

    ``multiset=True`` uses the counts with multiplicity (see
    :class:`Coverage`).  0 when ``|U| = 0``.

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> rnia(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    cov = tables.coverage
    u = cov.union_multiset if multiset else cov.union
    i = cov.intersection_multiset if multiset else cov.intersection
    if u == 0:
        return Fraction(0) if exact else 0.0
    return _ratio(u - i, u, exact)


def e4sc(tables: MicroTables, *, exact: bool = False):
    """E4SC: harmonic mean of macroF1(pred -> truth) and macroF1(truth -> pred).

    .. math::

        F1(a, b) = \\frac{2 |a \\cap b|}{|a| + |b|},\\qquad
        macroF1(A \\to B) = \\frac{1}{|A|} \\sum_{a \\in A} \\max_{b \\in B} F1(a, b)

    over the non-empty biclusters (as cell sets).  1 when both sides are
    empty, 0 when exactly one is.

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> e4sc(MicroTables(rows, cols), exact=True)
    Fraction(1, 2)
    """
    ov = tables.overlap
    kt, kp = ov.truth_sizes > 0, ov.pred_sizes > 0
    sh = ov.shared[kt][:, kp]
    st, sp = ov.truth_sizes[kt], ov.pred_sizes[kp]
    if len(st) == 0 and len(sp) == 0:
        return Fraction(1) if exact else 1.0
    if len(st) == 0 or len(sp) == 0:
        return Fraction(0) if exact else 0.0
    if exact:
        f1 = [[Fraction(2 * int(sh[k, l]), int(st[k]) + int(sp[l]))
               for l in range(len(sp))] for k in range(len(st))]
        a = sum(max(f1[k][l] for k in range(len(st))) for l in range(len(sp))) / len(sp)
        b = sum(max(row) for row in f1) / len(st)
        return _hmean(a, b)
    f1 = 2.0 * sh / (st[:, None].astype(np.float64) + sp[None, :])
    a = math.fsum(f1.max(axis=0)) / len(sp)
    b = math.fsum(f1.max(axis=1)) / len(st)
    return float(_hmean(Fraction(a), Fraction(b)))


# --------------------------------------------------------------------------
# MOCICE-BCubed
# --------------------------------------------------------------------------
def jaccard_table(overlap: Overlap, *, exact: bool = False) -> np.ndarray:
    """``J[l, k] = |X_l ∩ B_k| / |X_l ∪ B_k|`` (pred x truth; 0 for 0/0).

    Examples
    --------
    >>> ov = Overlap(np.array([[2]]), np.array([4]), np.array([3]))
    >>> jaccard_table(ov).tolist(), jaccard_table(ov, exact=True).tolist()
    ([[0.4]], [[Fraction(2, 5)]])
    """
    sh = overlap.shared.T
    den = overlap.pred_sizes[:, None] + overlap.truth_sizes[None, :] - sh
    if exact:
        out = np.empty(sh.shape, dtype=object)
        for (l, k), v in np.ndenumerate(sh):
            out[l, k] = Fraction(int(v), int(den[l, k])) if den[l, k] else Fraction(0)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, sh / np.where(den > 0, den, 1), 0.0)


def _sigma_tau(words: np.ndarray, n_truth: int, n_pred: int, jac: np.ndarray,
               exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """ς and τ of intersection signatures T = (c, g) (SPEC §6), per row."""
    n = len(words)
    dt = object if exact else np.float64
    sig, tau = np.zeros(n, dt), np.zeros(n, dt)
    nc, ng = _part_counts(words, n_truth, n_pred)
    code = ng * (n_truth + 1) + nc
    both = np.flatnonzero((nc > 0) & (ng > 0))
    if len(both) == 0:
        return sig, tau
    order = both[np.argsort(code[both], kind="stable")]
    cs = code[order]
    bounds = np.flatnonzero(np.concatenate([[True], cs[1:] != cs[:-1], [True]]))
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a, b = int(ng[order[lo]]), int(nc[order[lo]])
        step = max(1, _CHUNK // (a * b + n_truth + n_pred))
        for s in range(lo, hi, step):
            idx = order[s : min(hi, s + step)]
            bits = unpack_bits(words[idx], n_truth + n_pred)
            tp = np.nonzero(bits[:, :n_truth])[1].reshape(len(idx), b)
            pp = np.nonzero(bits[:, n_truth:])[1].reshape(len(idx), a)
            tot = jac[pp[:, :, None], tp[:, None, :]].max(axis=2).sum(axis=1)
            mn = min(a, b)
            if exact:
                sig[idx] = tot * Fraction(mn, a * a)
                tau[idx] = tot * Fraction(mn, a * b)
            else:
                sig[idx] = tot * mn / (a * a)
                tau[idx] = tot * mn / (a * b)
    return sig, tau


class BCubedPartial(NamedTuple):
    """Sums over a block of cell classes x of
    :math:`w(x) \\sum_y \\varsigma(x, y) / |E_G(x)|` (precision) and the τ
    analogue (recall); floats, or Fractions in exact mode."""

    precision: float
    recall: float


@dataclass(frozen=True, eq=False)
class BCubedPlan:
    """Precomputed tables of the MOCICE-BCubed finalize (picklable).

    ``words``/``count``/``popcount``/``n_pred_bits`` describe the n_classes
    cell classes with both a truth and a pred bit, sorted by popcount (the
    only ones with a non-zero term); blocks are slices of them.
    """

    method: str
    exact: bool
    n_truth: int
    n_pred: int
    words: np.ndarray
    count: np.ndarray
    popcount: np.ndarray
    n_truth_bits: np.ndarray
    union_pred: int
    union_truth: int
    jaccard: np.ndarray
    work: float
    lattice: SubsetLattice | None = None
    lattice_index: np.ndarray | None = None
    sigma: np.ndarray | None = None
    tau: np.ndarray | None = None
    all_words: np.ndarray | None = None
    all_count: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        """Number of classes to process (the range of block indices)."""
        return len(self.count)

    def block_bounds(self, n_blocks: int) -> list[tuple[int, int]]:
        """Split ``range(n_classes)`` into ≤ n_blocks slices of similar work.

        Examples
        --------
        >>> plan = bcubed_plan(_tiny_tables())
        >>> plan.block_bounds(4)[0][0], plan.block_bounds(4)[-1][1] == plan.n_classes
        (0, True)
        """
        if self.method == "subsets":
            w = np.exp2(self.popcount.astype(np.float64)) * (self.popcount + 2)
        else:
            w = np.ones(self.n_classes)
        cum = np.concatenate([[0.0], np.cumsum(w)])
        cuts = np.searchsorted(cum, np.linspace(0, cum[-1], max(1, n_blocks) + 1))
        cuts[0], cuts[-1] = 0, self.n_classes
        cuts = np.unique(cuts)
        return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


# Work units (~10 ns, see DEFAULT_MAX_WORK) per subset entry of a class and
# per pair of classes (measured).
_UNIT_CLASS_SUBSET, _UNIT_CLASS_PAIR = 2.0, 10.0


def _plan_cost(cells: SignatureClasses, both: np.ndarray, has_lattice: bool):
    pc = cells.popcount[both].astype(np.float64)
    sub = _UNIT_CLASS_SUBSET * float(np.sum(np.exp2(pc) * (pc + 2)))
    if not has_lattice:
        sub += UNIT_SUBSET * float(np.sum(np.exp2(cells.popcount.astype(np.float64))))
    nonempty = float(np.count_nonzero(cells.popcount))
    pair = _UNIT_CLASS_PAIR * float(len(pc)) * nonempty * (1 + cells.n_bits / 64)
    return {"subsets": sub, "pairwise": pair}


def bcubed_plan(tables: MicroTables, *, exact: bool = False,
                method: str | None = None) -> BCubedPlan:
    """Build the MOCICE-BCubed finalize plan (choose method, tabulate ς, τ).

    Parameters
    ----------
    tables : MicroTables
    exact : bool
        Rational arithmetic throughout (tests, small inputs).
    method : {None, "subsets", "pairwise"}
        Force a method; by default the cheaper (module docstring).

    Examples
    --------
    >>> plan = bcubed_plan(_tiny_tables())
    >>> plan.method, plan.n_classes          # tiny: pairs of classes are cheaper
    ('pairwise', 4)
    >>> bcubed_plan(_tiny_tables(), method="subsets").n_classes
    4
    """
    cells = tables.cells
    k, l_ = cells.n_truth, cells.n_pred
    nc, ng = _part_counts(cells.words, k, l_)
    both = (nc > 0) & (ng > 0)
    lat = tables.lattice
    cost = _plan_cost(cells, both, lat is not None)
    if method is None:
        method = min(cost, key=cost.__getitem__)
    if method not in cost:
        raise InputError(f"method must be 'subsets' or 'pairwise', got {method!r}")
    if cost[method] > tables.max_work:
        raise TooLargeError(
            f"MOCICE-BCubed on {cells.n_classes} cell classes needs ~{cost[method]:.3g} "
            f"table entries (max_work={tables.max_work:.3g}); the biclusters overlap "
            "too heavily. Raise max_work or score fewer biclusters.")
    idx = np.flatnonzero(both)
    idx = idx[np.argsort(cells.popcount[idx], kind="stable")]
    cov = tables.coverage
    jac = jaccard_table(tables.overlap, exact=exact)
    common = dict(method=method, exact=exact, n_truth=k, n_pred=l_,
                  words=cells.words[idx], count=cells.count[idx],
                  popcount=cells.popcount[idx], n_truth_bits=nc[idx],
                  union_pred=cov.pred, union_truth=cov.truth, jaccard=jac,
                  work=cost[method])
    if method == "pairwise":
        nz = cells.popcount > 0
        return BCubedPlan(**common, all_words=cells.words[nz], all_count=cells.count[nz])
    if lat is None:
        lat = superset_lattice(cells, max_work=tables.max_work)
    sig, tau = _sigma_tau(lat.words, k, l_, jac, exact)
    li = HashIndex(lat.words).find(cells.words[idx])
    _ = lat.down  # build once, before the plan is shipped to workers
    return BCubedPlan(**common, lattice=lat, lattice_index=li, sigma=sig, tau=tau)


def _terms(plan: BCubedPlan, w, vs, vt, eg, ec):
    """Per-class precision and recall terms."""
    if plan.exact:
        tp = [Fraction(int(a)) * b / int(c) for a, b, c in zip(w, vs, eg)]
        tr = [Fraction(int(a)) * b / int(c) for a, b, c in zip(w, vt, ec)]
        return tp, tr
    wf = w.astype(np.float64)
    return list(wf * vs / eg), list(wf * vt / ec)


def _block_subsets(plan: BCubedPlan, start: int, stop: int):
    lat = plan.lattice
    down, cnt = lat.down, lat.count
    tp_all: list = []
    tr_all: list = []
    pc = plan.popcount
    s = start
    while s < stop:
        m = int(pc[s])
        e = min(stop, int(np.searchsorted(pc, m, side="right")), s + max(1, _CHUNK >> m))
        n = e - s
        cur = plan.lattice_index[s:e, None]
        for i in range(m - 1, -1, -1):
            cur = np.stack([down[cur, i], cur], axis=-1).reshape(n, -1)
        mm = cnt[cur]
        for i in range(m):
            v = mm.reshape(n, 1 << (m - 1 - i), 2, 1 << i)
            v[:, :, 0, :] -= v[:, :, 1, :]
        j = np.arange(1 << m)
        b = plan.n_truth_bits[s:e, None]
        has_p = j[None, :] >= (1 << b)
        has_t = (j[None, :] & ((1 << b) - 1)) != 0
        eg = np.where(has_p, mm, 0).sum(axis=1)
        ec = np.where(has_t, mm, 0).sum(axis=1)
        mv = mm.astype(object) if plan.exact else mm.astype(np.float64)
        vs = (plan.sigma[cur] * mv).sum(axis=1)
        vt = (plan.tau[cur] * mv).sum(axis=1)
        tp, tr = _terms(plan, plan.count[s:e], vs, vt, eg, ec)
        tp_all += tp
        tr_all += tr
        s = e
    return tp_all, tr_all


def _block_pairwise(plan: BCubedPlan, start: int, stop: int):
    k, l_ = plan.n_truth, plan.n_pred
    tm, pm = _part_masks(k, l_)
    ws, wt, ct = plan.words[start:stop], plan.all_words, plan.all_count
    nw = ws.shape[1]
    tp_all: list = []
    tr_all: list = []
    ns = max(1, min(len(ws), _CHUNK // max(len(wt), 1)))
    nt = max(1, _CHUNK // ns)
    ctv = ct.astype(object) if plan.exact else ct.astype(np.float64)
    for a in range(0, len(ws), ns):
        x = ws[a : a + ns]
        zero = 0 if plan.exact else 0.0
        vs = np.full(len(x), zero, dtype=object if plan.exact else np.float64)
        vt, eg, ec = vs.copy(), np.zeros(len(x), np.int64), np.zeros(len(x), np.int64)
        for b in range(0, len(wt), nt):
            y, cy = wt[b : b + nt], ct[b : b + nt]
            inter = (x[:, None, :] & y[None, :, :]).reshape(-1, nw)
            uk, inv = np.unique(sortable_keys(inter), return_inverse=True)
            u = np.ascontiguousarray(uk).view(np.uint64).reshape(len(uk), nw)
            inv = inv.reshape(len(x), len(y))
            su, tu = _sigma_tau(u, k, l_, plan.jaccard, plan.exact)
            hp = (u & pm).any(axis=1)[inv]
            ht = (u & tm).any(axis=1)[inv]
            eg += np.where(hp, cy[None, :], 0).sum(axis=1)
            ec += np.where(ht, cy[None, :], 0).sum(axis=1)
            cyv = ctv[b : b + nt][None, :]
            vs = vs + (su[inv] * cyv).sum(axis=1)
            vt = vt + (tu[inv] * cyv).sum(axis=1)
        tp, tr = _terms(plan, plan.count[a + start : a + start + len(x)], vs, vt, eg, ec)
        tp_all += tp
        tr_all += tr
    return tp_all, tr_all


def bcubed_block(plan: BCubedPlan, start: int, stop: int) -> BCubedPartial:
    """Partial MOCICE-BCubed sums over the cell classes ``start:stop``.

    Independent blocks; ``bcubed_finalize(plan, [bcubed_block(plan, a, b)
    for a, b in plan.block_bounds(n)])`` equals the single-block result (to
    one rounding per block in float mode, exactly in exact mode).

    Examples
    --------
    >>> plan = bcubed_plan(_tiny_tables(), exact=True)
    >>> bcubed_block(plan, 0, plan.n_classes)
    BCubedPartial(precision=Fraction(2203, 540), recall=Fraction(2189, 540))
    """
    if not 0 <= start <= stop <= plan.n_classes:
        raise InputError(f"block {start}:{stop} outside 0:{plan.n_classes}")
    fn = _block_subsets if plan.method == "subsets" else _block_pairwise
    tp, tr = fn(plan, start, stop)
    if plan.exact:
        return BCubedPartial(sum(tp, Fraction(0)), sum(tr, Fraction(0)))
    return BCubedPartial(math.fsum(tp), math.fsum(tr))


def bcubed_finalize(plan: BCubedPlan, partials) -> PRF:
    """Precision, recall and F1 from the block sums (see module doc).

    Examples
    --------
    >>> plan = bcubed_plan(_tiny_tables(), exact=True)
    >>> parts = [bcubed_block(plan, a, b) for a, b in plan.block_bounds(2)]
    >>> bcubed_finalize(plan, parts)
    PRF(precision=Fraction(2203, 4860), recall=Fraction(2189, 4860), f1=Fraction(4822367, 10672560))
    """
    partials = list(partials)
    up, ut = plan.union_pred, plan.union_truth
    one, zero = (Fraction(1), Fraction(0)) if plan.exact else (1.0, 0.0)
    if up == 0 and ut == 0:
        return PRF(one, one, one)
    if up == 0 or ut == 0:
        return PRF(zero, zero, zero)
    if plan.exact:
        p = sum((x.precision for x in partials), Fraction(0)) / up
        r = sum((x.recall for x in partials), Fraction(0)) / ut
    else:
        p = math.fsum(x.precision for x in partials) / up
        r = math.fsum(x.recall for x in partials) / ut
    if plan.exact:
        return PRF(p, r, _hmean(p, r))
    return PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))


def mocice_bcubed(tables: MicroTables, *, exact: bool = False,
                  method: str | None = None) -> PRF:
    """MOCICE-BCubed precision, recall and F1 (SPEC §6), in one block.

    Examples
    --------
    >>> mocice_bcubed(_tiny_tables(), exact=True)
    PRF(precision=Fraction(2203, 4860), recall=Fraction(2189, 4860), f1=Fraction(4822367, 10672560))
    >>> p, r, f = mocice_bcubed(_tiny_tables())
    >>> round(p, 12), round(r, 12), round(f, 12)
    (0.45329218107, 0.450411522634, 0.451847260638)
    """
    plan = bcubed_plan(tables, exact=exact, method=method)
    return bcubed_finalize(plan, [bcubed_block(plan, 0, plan.n_classes)])


class MicroScores(NamedTuple):
    """All micro-object measures of one truth/pred pair."""

    bcubed: PRF
    ce: float
    rnia: float
    e4sc: float


def micro_measures(rows: SignatureClasses, cols: SignatureClasses, *,
                   exact: bool = False,
                   max_work: float = DEFAULT_MAX_WORK) -> MicroScores:
    """MOCICE-BCubed, CE, RNIA and E4SC from merged row and column classes.

    Examples
    --------
    >>> s = micro_measures(*_tiny_classes(), exact=True)
    >>> s.ce, s.rnia, s.e4sc
    (Fraction(1, 5), Fraction(1, 5), Fraction(4, 5))
    >>> micro_measures(*_tiny_classes()).e4sc
    0.8
    """
    t = MicroTables(rows, cols, max_work=max_work)
    return MicroScores(mocice_bcubed(t, exact=exact), micro_ce(t, exact=exact),
                       rnia(t, exact=exact), e4sc(t, exact=exact))


def _tiny_classes() -> tuple[SignatureClasses, SignatureClasses]:
    """Example: 4 x 3 matrix, truth {0,1,2}x{0,1}, {2,3}x{1,2};
    pred {0,1}x{0,1}, {1,2,3}x{1,2}."""
    from .signatures import signature_counts

    rows = signature_counts(np.array([[1, 1, 1, 0], [0, 0, 1, 1]], bool),
                            np.array([[1, 1, 0, 0], [0, 1, 1, 1]], bool))
    cols = signature_counts(np.array([[1, 1, 0], [0, 1, 1]], bool),
                            np.array([[1, 1, 0], [0, 1, 1]], bool))
    return rows, cols


def _tiny_tables() -> MicroTables:
    return MicroTables(*_tiny_classes())
