"""Micro-object measures from signature classes (numpy only): SPEC §6.

Every bicluster is turned into its set of cells ("micro-objects").  For a cell
x, G(x) / C(x) are the pred / truth biclusters containing it; a cell's
*signature* (G(x), C(x)) is the AND of its row's and its column's signatures
(:mod:`daskbicl.kernels.signatures`), and every quantity of SPEC §6 depends
on a cell only through it.  The engine counts row and column classes and
each measure reads only the table it needs:

* E4SC: the K x L shared-cell table (:func:`bicluster_overlap`, two small
  matrix products of the row and column classes);
* CE: that table (for D_max) and the coverage counts |U| (:class:`Coverage`);
* RNIA: the coverage counts;
* MOCICE-BCubed: the exact cell classes (the join
  :func:`~daskbicl.kernels.signatures.cell_signature_counts`) and a plan
  whose blocks can run in parallel (:func:`bcubed_plan`).

The coverage counts come from the cheaper of a stream over every pair of
row and column classes (:func:`coverage_pairs`, no join) and the join.

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
and ``E4SC`` = harmonic mean of the two macro-F1 (SPEC §6).  |U| and |I|
are counted with multiplicity by default, as Patrikainen & Meila define
them (:class:`Coverage`): a cell counts ``max(|G(x)|, |C(x)|)`` times in U
and ``min(|G(x)|, |C(x)|)`` times in I.  ``multiset=False`` reads them as
sets of cells; CE can then be negative (-0.5 for a perfect match of a
bicluster of two cells and one of its cells), because D_max counts a shared
cell once per matched pair.

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
:data:`~daskbicl.kernels.signatures.DEFAULT_MAX_WORK`; through
:func:`daskbicl.score` the dask config key ``daskbicl.max_work``).
:func:`bcubed_block` computes the sums of a slice of classes, so a cluster
can process blocks in parallel and :func:`bcubed_finalize` adds them up.

Two co-clusterings need no signature classes at all (:func:`coclustering_bcubed`,
:func:`coclustering_overlap`, :func:`coclustering_coverage`): every cell is
in exactly one truth block and one pred block, so ς(x, y) = J(G, C) when y
is in x's blocks G and C and 0 otherwise, and the cell class of the pair of
blocks ((h, l), (h', l')) has :math:`n^{zz'}_{hh'} n^{ww'}_{ll'}` cells:

.. math::

    P = \\frac{1}{IJ} \\sum \\frac{(n^{zz'}_{hh'} n^{ww'}_{ll'})^2}{|G|}\\, J(G, C),
    \\qquad R = \\frac{1}{IJ} \\sum \\frac{(n^{zz'}_{hh'} n^{ww'}_{ll'})^2}{|C|}\\, J(G, C),

over the non-zero entries of the two contingency tables.

Accuracy (float64)
------------------
With ``exact=True`` everything is computed in rational arithmetic
(:class:`fractions.Fraction`) and the result is exact.  In float64 every
count is an exact integer and every term is non-negative (no cancellation),
so relative errors add along the longest chain of roundings.  With
:math:`u = 2^{-53}` (about 1.1e-16), L pred biclusters and fewer than
:math:`2^{53}` cells:

* each J(G, C) is one division (error u); ς and τ sum at most L of them and
  scale twice: at most (L + 2) u;
* "subsets" method: a class sums :math:`2^{m}` products ς(T) M_s(T)
  (m = number of biclusters, truth and pred, containing the class's cells)
  with numpy's pairwise summation (at most :math:`\\lceil\\log_2 n\\rceil + 18`
  roundings for n terms), the class term w·Σ/|E| rounds twice, the block
  and the block totals are summed with :func:`math.fsum` and divided once:
  P and R have relative error at most :math:`(L + m_{max} + 26)\\,u`;
* "pairwise" method: a class sums S products (S = number of non-empty cell
  classes) pairwise in chunks of at most :math:`2^{20}` and adds the
  :math:`k = \\lceil S / 2^{20} \\rceil` chunk sums in sequence: P and R
  have relative error at most
  :math:`(L + \\lceil\\log_2 S\\rceil + k + 25)\\,u`;
* co-clusterings: each term rounds 4 times, one :func:`math.fsum`, one
  division: at most 6 u;
* F1 is the harmonic mean of the float P and R evaluated exactly and rounded
  once (relative error at most that of P or R, plus u), so identical inputs
  give exactly 1.0;
* CE and RNIA are exact integer ratios rounded once (error u; D_max is exact
  while the shared counts sum below :math:`2^{53}`); E4SC: each F1 is one
  division, each macro-F1 one :func:`math.fsum` and one division, the
  harmonic mean rounds once: at most 4 u.

For :math:`2^{53}` cells or more add 4 u (counts converted to float64).
For 20 + 20 biclusters the MOCICE-BCubed bound is about 1e-14.

Degenerate cases
----------------
* Truth and pred covering no cell at all (no biclusters, or only biclusters
  with no row or no column): every measure is 0/0 in SPEC §6 and raises
  :class:`~daskbicl.errors.InputError`.
* Only one side covers a cell: MOCICE-BCubed P = R = F1 = 0 (the side
  covering nothing has a 0/0 normaliser, reported as 0; the other side
  scores 0 since no pair of cells shares a bicluster of both); CE = RNIA = 1;
  E4SC = 0.
* A bicluster with no cell (no row or no column) is the empty cell set: it
  never appears in a cell signature; in E4SC it is still averaged over and
  contributes F1 = 0 (2|a∩b|/(|a|+|b|) is taken as 0 when both are empty).
"""

from __future__ import annotations

import itertools
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
    UNIT_PAIR,
    UNIT_SUBSET,
    HashIndex,
    SignatureClasses,
    SubsetLattice,
    cell_signature_counts,
    join_cost,
    pack_bits,
    popcount,
    sortable_keys,
    superset_lattice,
    too_large,
    unpack_bits,
)

__all__ = [
    "PRF",
    "BCubedPartial",
    "BCubedPlan",
    "Coverage",
    "MicroResult",
    "MicroScores",
    "MicroTables",
    "Overlap",
    "bcubed_block",
    "bcubed_finalize",
    "bcubed_plan",
    "bicluster_overlap",
    "COCLUSTER_DENSE_LIMIT",
    "coclustering_bcubed",
    "coclustering_coverage",
    "coclustering_overlap",
    "coverage",
    "coverage_pairs",
    "e4sc",
    "jaccard_table",
    "micro_ce",
    "micro_measures",
    "mocice_bcubed",
    "rnia",
]

_CHUNK = 1 << 20

# Work units (~10 ns, see DEFAULT_MAX_WORK) per pair of row and column
# classes of the coverage stream, and per term of the co-clustering sum
# (measured: 5-10 ns, and 124 ns with the per-chunk exact sum: 12.8 M terms
# of 60 x 60-cluster co-clusterings in 1.6 s).
_UNIT_COVER_PAIR, _UNIT_COCLUSTER_TERM = 1.0, 12.0
# ... per K L min(K, L) of CE's assignment (scipy's linear_sum_assignment,
# measured: 0.4 s for 1600 x 1600, 2.4 s for 2500 x 2500).
_UNIT_ASSIGNMENT = 0.02
#: Largest dense block table of two co-clusterings (entries; 512 MiB of
#: int64), the limit the bicluster measures use for co-clusterings too.
COCLUSTER_DENSE_LIMIT = 1 << 26


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


class MicroResult(NamedTuple):
    """What the engine ships back for one pair: only the parts asked for (else None).

    ``overlap`` (E4SC, CE), ``coverage`` (CE, RNIA), ``bcubed`` (MOCICE-BCubed).
    :func:`micro_ce`, :func:`rnia` and :func:`e4sc` accept it like a
    :class:`MicroTables`.
    """

    overlap: Overlap | None = None
    coverage: Coverage | None = None
    bcubed: PRF | None = None


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


# --------------------------------------------------------------------------
# coverage: |U|, |I|, |U_G|, |U_C| and the multiset counts
# --------------------------------------------------------------------------
def _coverage_from_hist(hist: np.ndarray, n_truth: int, n_pred: int) -> Coverage:
    """Coverage from ``hist[c, g]`` = number of cells with |C(x)| = c, |G(x)| = g."""
    hist = np.asarray(hist, dtype=object).reshape(n_truth + 1, n_pred + 1)
    c, g = np.indices(hist.shape)

    def tot(x) -> int:
        return int(np.sum(x * hist))

    return Coverage(
        union=tot((c + g) > 0),
        intersection=tot((c > 0) & (g > 0)),
        pred=tot(g > 0),
        truth=tot(c > 0),
        union_multiset=tot(np.maximum(c, g)),
        intersection_multiset=tot(np.minimum(c, g)),
    )


def coverage(cells: SignatureClasses) -> Coverage:
    """Cell coverage counts (:class:`Coverage`) from the cell classes.

    Examples
    --------
    >>> cells = SignatureClasses.from_bits(np.array([[1], [1], [0]], bool),
    ...                                    np.array([[1], [0], [1]], bool), [2, 3, 4])
    >>> coverage(cells)[:4]
    (9, 2, 6, 5)
    """
    nc, ng = _part_counts(cells.words, cells.n_truth, cells.n_pred)
    hist = np.zeros((cells.n_truth + 1) * (cells.n_pred + 1), np.int64)
    np.add.at(hist, nc * (cells.n_pred + 1) + ng, cells.count)
    return _coverage_from_hist(hist, cells.n_truth, cells.n_pred)


def _cover_cost(rows: SignatureClasses, cols: SignatureClasses) -> float:
    nr = int(np.count_nonzero(rows.popcount))
    nc = int(np.count_nonzero(cols.popcount))
    return _UNIT_COVER_PAIR * float(nr) * float(nc) * (1 + rows.words.shape[1] / 4)


def coverage_pairs(rows: SignatureClasses, cols: SignatureClasses) -> Coverage:
    """Coverage counts straight from row and column classes, without the join.

    Streams every pair of non-empty row and column classes, counts the truth
    and pred bits of their AND and adds the pair's cells (the product of the
    two counts) to a (K+1) x (L+1) histogram: :math:`O(R C)` popcounts and
    no sort.  Exact (float64 sums of integers below :math:`2^{53}`, int64
    otherwise).

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> coverage_pairs(rows, cols) == coverage(cell_signature_counts(rows, cols)[0])
    True
    """
    k, l_ = rows.n_truth, rows.n_pred
    tm, pm = _part_masks(k, l_)
    rnz, cnz = rows.popcount > 0, cols.popcount > 0
    rw, rc = rows.words[rnz], rows.count[rnz]
    cw, cc = cols.words[cnz], cols.count[cnz]
    nb = (k + 1) * (l_ + 1)
    exact_float = rows.total * cols.total < 2**53
    hist = np.zeros(nb, np.float64 if exact_float else np.int64)
    step = max(1, (_CHUNK >> 4) // max(len(cw), 1))
    if not exact_float:  # per-row bins: float sums stay below the number of columns
        step = max(1, min(step, (_CHUNK >> 4) // nb))
    ccf, rcf = cc.astype(np.float64), rc.astype(np.float64)
    for s in range(0, len(rw), step):
        x = rw[s : s + step]
        nt = np.zeros((len(x), len(cw)), np.int64)
        ng = np.zeros_like(nt)
        for w in range(rw.shape[1]):  # word by word: no (n, m, W) temporaries
            iw = x[:, None, w] & cw[None, :, w]
            if tm[w]:
                nt += np.bitwise_count(iw & tm[w])
            if pm[w]:
                ng += np.bitwise_count(iw & pm[w])
        key = nt * (l_ + 1) + ng
        if exact_float:
            hist += np.bincount(key.ravel(), minlength=nb,
                                weights=(rcf[s : s + step, None] * ccf[None, :]).ravel())
        else:
            key += (np.arange(len(x)) * nb)[:, None]
            per = np.bincount(key.ravel(), minlength=len(x) * nb,
                              weights=np.broadcast_to(ccf, key.shape).ravel())
            hist += rc[s : s + step] @ np.rint(per).astype(np.int64).reshape(len(x), nb)
    covered = int(np.rint(hist.sum())) if exact_float else int(hist.sum())
    hist = np.rint(hist).astype(np.int64) if exact_float else hist
    hist[0] += rows.total * cols.total - covered  # cells of no bicluster
    return _coverage_from_hist(hist, k, l_)


class MicroTables:
    """Every table the micro-object measures need, each computed on first use.

    Parameters
    ----------
    rows, cols : SignatureClasses
        Merged row and column classes (:func:`~daskbicl.kernels.signatures.\
merge_signature_counts`) of the same K truth and L pred biclusters.
    max_work : float, optional
        Limit on the estimated work of the join, of the coverage stream and
        of the MOCICE-BCubed finalize (:class:`TooLargeError` above).

    Attributes
    ----------
    overlap : Overlap
        K x L shared cells and sizes (cheap: CE's matching and E4SC).
    cells : SignatureClasses
        Exact cell classes (MOCICE-BCubed).
    coverage : Coverage
        |U|, |I|, |U_G|, |U_C| and the multiset counts: from the cell classes
        when they were built, else from the cheaper of :func:`coverage_pairs`
        and the join.
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
        """See :func:`coverage` and :func:`coverage_pairs`."""
        if "_join" not in self.__dict__:
            stream = _cover_cost(self.rows, self.cols)
            join = join_cost(self.rows, self.cols)
            pairs = join["pairs"] if join["pairs"] <= self.max_work else math.inf
            if stream <= self.max_work and stream <= min(pairs, join["subsets"]):
                return coverage_pairs(self.rows, self.cols)
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


def _nothing_covered(measure: str, what: str) -> InputError:
    return InputError(
        f"truth and pred cover no cell (no bicluster has both a row and a column), so "
        f"{what} 0/0 and {measure} is undefined (SPEC §6). Check the inputs: every "
        "bicluster needs at least one row and one column to cover a cell.")


def _check_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


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
    tables' own, else :data:`~daskbicl.kernels.signatures.DEFAULT_MAX_WORK`).

    Examples
    --------
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> micro_ce(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    u, _ = _unions(tables, multiset)
    if u == 0:
        raise _nothing_covered("micro_ce", "(|U| - D_max) / |U| is")
    sh = tables.overlap.shared
    limit = getattr(tables, "max_work", DEFAULT_MAX_WORK) if max_work is None else max_work
    work = _UNIT_ASSIGNMENT * sh.size * min(sh.shape, default=0)
    if work > limit:
        raise too_large(f"CE's one-to-one matching of {sh.shape[0]} truth and {sh.shape[1]} "
                        "pred biclusters (an assignment problem)", work, limit,
                        "RNIA, E4SC and MOCICE-BCubed do not need it.")
    d = 0
    if sh.size:
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
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> rnia(MicroTables(rows, cols), exact=True)
    Fraction(2, 3)
    """
    u, i = _unions(tables, multiset)
    if u == 0:
        raise _nothing_covered("micro_rnia", "(|U| - |I|) / |U| is")
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
    >>> from daskbicl.kernels.signatures import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> e4sc(MicroTables(rows, cols), exact=True)
    Fraction(1, 2)
    """
    ov = tables.overlap
    sh, st, sp = ov.shared, ov.truth_sizes, ov.pred_sizes
    covers_t, covers_p = bool((st > 0).any()), bool((sp > 0).any())
    if not covers_t and not covers_p:
        raise _nothing_covered("e4sc", "every F1(a, b) = 2|a ∩ b| / (|a| + |b|) is")
    if not covers_t or not covers_p:
        return Fraction(0) if exact else 0.0
    den = st[:, None] + sp[None, :]
    if exact:
        f1 = [[Fraction(2 * int(sh[k, l]), int(den[k, l])) if den[k, l] else Fraction(0)
               for l in range(len(sp))] for k in range(len(st))]
        a = sum(max(f1[k][l] for k in range(len(st))) for l in range(len(sp))) / len(sp)
        b = sum(max(row) for row in f1) / len(st)
        return _hmean(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(den > 0, 2.0 * sh / np.where(den > 0, den, 1).astype(np.float64), 0.0)
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
    n_cells: int = 0

    @property
    def n_classes(self) -> int:
        """Number of classes to process (the range of block indices)."""
        return len(self.count)

    @property
    def error_bound(self) -> float:
        """Bound on the relative float64 error of P and R (module docstring; 0 if exact).

        ``(L + m + 26) u`` for "subsets" (m = most biclusters on one cell),
        ``(L + ceil(log2 S) + ceil(S / 2**20) + 25) u`` for "pairwise" (S =
        non-empty cell classes), plus 4 u from :math:`2^{53}` cells on.
        """
        if self.exact:
            return 0.0
        if self.method == "subsets":
            m = int(self.popcount.max()) if len(self.popcount) else 0
            n = self.n_pred + m + 26
        else:
            s = max(1, len(self.all_count))
            n = self.n_pred + math.ceil(math.log2(s)) + -(-s // _CHUNK) + 25
        return (n + (4 if self.n_cells >= 2**53 else 0)) * 2.0**-53

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
    cov = tables.coverage
    if cov.pred == 0 and cov.truth == 0:
        raise _nothing_covered("mocice_bcubed", "P = (...) / |U_G| and R = (...) / |U_C| are")
    if cost[method] > tables.max_work:
        raise too_large(f"MOCICE-BCubed on {cells.n_classes} cell classes ({method} method)",
                        cost[method], tables.max_work,
                        "CE, RNIA and E4SC do not need this step: leave 'mocice_bcubed' "
                        "out of measures to score them.")
    idx = np.flatnonzero(both)
    idx = idx[np.argsort(cells.popcount[idx], kind="stable")]
    jac = jaccard_table(tables.overlap, exact=exact)
    common = dict(method=method, exact=exact, n_truth=k, n_pred=l_,
                  words=cells.words[idx], count=cells.count[idx],
                  popcount=cells.popcount[idx], n_truth_bits=nc[idx],
                  union_pred=cov.pred, union_truth=cov.truth, jaccard=jac,
                  work=cost[method], n_cells=cells.total)
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
    zero = Fraction(0) if plan.exact else 0.0
    if up == 0 and ut == 0:
        raise _nothing_covered("mocice_bcubed", "P = (...) / |U_G| and R = (...) / |U_C| are")
    if up == 0 or ut == 0:  # documented convention: the 0/0 side counts as 0
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
                   exact: bool = False, multiset: bool = True,
                   max_work: float = DEFAULT_MAX_WORK) -> MicroScores:
    """MOCICE-BCubed, CE, RNIA and E4SC from merged row and column classes.

    Examples
    --------
    >>> s = micro_measures(*_tiny_classes(), exact=True)
    >>> s.ce, s.rnia, s.e4sc
    (Fraction(1, 3), Fraction(1, 3), Fraction(4, 5))
    >>> micro_measures(*_tiny_classes()).e4sc
    0.8
    """
    t = MicroTables(rows, cols, max_work=max_work)
    return MicroScores(mocice_bcubed(t, exact=exact), micro_ce(t, exact=exact, multiset=multiset),
                       rnia(t, exact=exact, multiset=multiset), e4sc(t, exact=exact))


# --------------------------------------------------------------------------
# two co-clusterings: from the row and column contingency tables
# --------------------------------------------------------------------------
# ``rows`` and ``cols`` below are contingency tables in coordinate form
# (:class:`daskbicl.kernels.contingency.Table`): non-zero entries
# ``counts[e]`` at (truth cluster ``rows[e]``, pred cluster ``cols[e]``),
# cluster sizes ``truth_sizes()`` / ``pred_sizes()``.  Block (h, l) of a
# co-clustering is bicluster ``h * L + l`` (row-cluster major, as
# :func:`daskbicl.io.convert.as_biclustering` numbers them).
def _dense(table) -> np.ndarray:
    out = np.zeros((len(table.truth_sizes()), len(table.pred_sizes())), np.int64)
    out[table.rows, table.cols] = table.counts
    return out


def coclustering_overlap(rows, cols, *, max_work: float = DEFAULT_MAX_WORK) -> Overlap:
    """The block-by-block shared-cell table of two co-clusterings (Kronecker product).

    ``shared[(h, l), (h', l')] = n^{zz'}_{hh'} n^{ww'}_{ll'}``; block sizes are
    products of cluster sizes.  Dense (H L) x (H' L'), as CE's assignment
    needs it: :class:`~daskbicl.errors.TooLargeError` above
    :data:`COCLUSTER_DENSE_LIMIT` entries or ``max_work``.

    Examples
    --------
    >>> from daskbicl.kernels.contingency import Table
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
    >>> from daskbicl.kernels.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> coclustering_coverage(r, c)
    Coverage(union=6, intersection=6, pred=6, truth=6, union_multiset=6, intersection_multiset=6)
    """
    n = rows.n * cols.n
    return Coverage(n, n, n, n, n, n)


def coclustering_bcubed(rows, cols, *, exact: bool = False,
                        max_work: float = DEFAULT_MAX_WORK) -> PRF:
    """MOCICE-BCubed of two co-clusterings from their contingency tables.

    For a cell x in truth block C and pred block G, ς(x, y) = J(G, C) when y
    is in both and 0 otherwise, and E_G(x) = G, so with t = |G ∩ C| =
    :math:`n^{zz'}_{hh'} n^{ww'}_{ll'}`:
    :math:`P = \\frac{1}{IJ}\\sum t^3 / (|G| (|G| + |C| - t))` and R alike
    with |C|, over the non-zero entries of both tables (module docstring).
    O(nnz(rows) x nnz(cols)) terms; no mask, no signature.

    Examples
    --------
    >>> from daskbicl.kernels.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> coclustering_bcubed(r, c, exact=True)   # (8/8 + 8/24 + 8/16) / 6
    PRF(precision=Fraction(11, 36), recall=Fraction(11, 36), f1=Fraction(11, 36))
    """
    a, ap = rows.truth_sizes(), rows.pred_sizes()
    b, bp = cols.truth_sizes(), cols.pred_sizes()
    n = rows.n * cols.n
    if n >= 2**62:
        raise TooLargeError(
            f"MOCICE-BCubed of two co-clusterings of {rows.n:,} x {cols.n:,} cells: 2**62 cells "
            "or more would overflow its int64 cell counts (no setting raises this limit)"
        )
    n_terms = len(rows.counts) * len(cols.counts)
    if _UNIT_COCLUSTER_TERM * n_terms > max_work:
        raise too_large(f"MOCICE-BCubed of two co-clusterings ({len(rows.counts)} x "
                        f"{len(cols.counts)} pairs of blocks)",
                        _UNIT_COCLUSTER_TERM * n_terms, max_work)
    # per non-zero entry: shared count, |C| and |G| factors of each axis
    rt, rc, rg = rows.counts, a[rows.rows], ap[rows.cols]
    ct, cc, cg = cols.counts, b[cols.rows], bp[cols.cols]
    if exact:
        p = r = Fraction(0)
        for (t1, c1, g1), (t2, c2, g2) in itertools.product(zip(rt, rc, rg), zip(ct, cc, cg)):
            t, c, g = int(t1) * int(t2), int(c1) * int(c2), int(g1) * int(g2)
            jt = Fraction(t * t * t, g + c - t)
            p += jt / g
            r += jt / c
        p, r = p / n, r / n
        return PRF(p, r, _hmean(p, r))
    # Each chunk is summed exactly (fsum) at once, so memory stays one chunk;
    # the exact partial sums are then summed exactly again.
    partial_p: list[float] = []
    partial_r: list[float] = []
    step = max(1, _CHUNK // max(len(ct), 1))
    for s in range(0, len(rt), step):
        t = rt[s : s + step, None] * ct[None, :]           # exact int64 (< 2**62)
        c = rc[s : s + step, None] * cc[None, :]
        g = rg[s : s + step, None] * cg[None, :]
        tf = t.astype(np.float64)
        tj = tf / (g + c - t) * tf                           # t J(G, C)
        partial_p.append(math.fsum((tf / g * tj).ravel().tolist()))
        partial_r.append(math.fsum((tf / c * tj).ravel().tolist()))
    p = math.fsum(partial_p) / n
    r = math.fsum(partial_r) / n
    return PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))


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
