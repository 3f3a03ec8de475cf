"""Cell statistics of two biclusterings from their row and column signature classes (numpy only).

The records the engine ships back (:class:`Overlap`, :class:`Coverage`,
:class:`PRF`, :class:`MicroResult`), the K x L shared-cell table
(:func:`bicluster_overlap`), the coverage counts |U|, |I| with and without
multiplicity (:func:`coverage`, :func:`coverage_pairs`), and
:class:`MicroTables`, which computes each of them on first use.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from .bits import SortedIndex, pack_bits, popcount
from .budget import DEFAULT_MAX_WORK
from .signatures import (
    SignatureClasses,
    SubsetLattice,
    cell_signature_counts,
    join_cost,
    signature_counts,
)

__all__ = [
    "example_classes",
    "example_tables",
    "COCLUSTER_DENSE_LIMIT",
    "Coverage",
    "MicroResult",
    "MicroTables",
    "Overlap",
    "PRF",
    "bicluster_overlap",
    "coverage",
    "coverage_pairs",
]


_CHUNK = 1 << 20


# Work units (~10 ns, see DEFAULT_MAX_WORK) per pair of row and column
# classes of the coverage stream, and per term of the co-clustering sum
# (measured: 5-10 ns, and 124 ns with the per-chunk exact sum: 12.8 M terms
# of 60 x 60-cluster co-clusterings in 1.6 s).
_UNIT_COVER_PAIR, _UNIT_COCLUSTER_TERM = 1.0, 12.0


#: Largest dense block table of two co-clusterings (entries; 512 MiB of
#: int64), the limit the bicluster measures use for co-clusterings too.
COCLUSTER_DENSE_LIMIT = 1 << 26


class PRF(NamedTuple):
    """Precision, recall and their harmonic mean (floats; Fractions if exact)."""

    precision: float | Fraction
    recall: float | Fraction
    f1: float | Fraction


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
    index_type : type, optional
        How signatures are looked up (see
        :class:`~daskbicl.kernels.bits.SortedIndex`, the default).

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
                 max_work: float = DEFAULT_MAX_WORK, index_type: type = SortedIndex) -> None:
        if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
            raise InputError(
                f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but "
                f"column signatures {cols.n_truth}+{cols.n_pred}; count both from the "
                "same truth and pred masks.")
        self.rows, self.cols, self.max_work = rows, cols, float(max_work)
        self.index_type = index_type

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
        return cell_signature_counts(self.rows, self.cols, max_work=self.max_work, index_type=self.index_type)

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
def _hmean(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    """Harmonic mean 2ab/(a+b), 0 when a + b = 0 (exact; round once)."""
    return 2 * a * b / (a + b) if a + b else Fraction(0)


def _ratio(num: int, den: int, exact: bool):
    q = Fraction(num, den)
    return q if exact else float(q)


def _nothing_covered(measure: str, what: str) -> InputError:
    return InputError(
        f"truth and pred cover no cell (no bicluster has both a row and a column), so "
        f"{what} 0/0 and {measure} is undefined (docs/measures/micro.md). Check the inputs: every "
        "bicluster needs at least one row and one column to cover a cell.")


def _check_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


# --------------------------------------------------------------------------
# two co-clusterings: from the row and column contingency tables
# --------------------------------------------------------------------------
# ``rows`` and ``cols`` below are contingency tables in coordinate form
# (:class:`daskbicl.kernels.contingency.Table`): non-zero entries
# ``counts[e]`` at (truth cluster ``rows[e]``, pred cluster ``cols[e]``),
# cluster sizes ``truth_sizes()`` / ``pred_sizes()``.  Block (h, l) of a
# co-clustering is bicluster ``h * L + l`` (row-cluster major, as
# :func:`daskbicl.engine.blocks.as_biclustering` numbers them).
def _dense(table) -> np.ndarray:
    out = np.zeros((len(table.truth_sizes()), len(table.pred_sizes())), np.int64)
    out[table.rows, table.cols] = table.counts
    return out


def example_classes() -> tuple[SignatureClasses, SignatureClasses]:
    """The docs' example: 4 x 3 matrix, truth {0,1,2}x{0,1}, {2,3}x{1,2};
    pred {0,1}x{0,1}, {1,2,3}x{1,2}."""
    rows = signature_counts(np.array([[1, 1, 1, 0], [0, 0, 1, 1]], bool),
                            np.array([[1, 1, 0, 0], [0, 1, 1, 1]], bool))
    cols = signature_counts(np.array([[1, 1, 0], [0, 1, 1]], bool),
                            np.array([[1, 1, 0], [0, 1, 1]], bool))
    return rows, cols


def example_tables() -> MicroTables:
    """:class:`MicroTables` of :func:`example_classes` (used by the examples in the docstrings)."""
    return MicroTables(*example_classes())
