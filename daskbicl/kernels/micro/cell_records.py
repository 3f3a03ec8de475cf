"""Records and cheap tables of the micro-object measures (numpy only).

The records the engine ships back (:class:`Overlap`, :class:`Coverage`,
:class:`PRF`, :class:`MicroResult`), the K x L shared-cell table from the
two Gram tables (:func:`bicluster_overlap`), and the coverage counts from
the factorial moments of the family (:func:`coverage_from_moments`).

Coverage by factorial moments
-----------------------------
A cell covered by a truth and b pred biclusters lies in exactly
C(a, p) C(b, q) sets of the family with p truth and q pred members, so the
moments ``m[p, q] = sum over those sets W of N(W)`` (accumulated while the
family is walked, :mod:`daskbicl.kernels.micro.family_walk`) are
``m[p, q] = sum_{a, b} h[a, b] C(a, p) C(b, q)`` for the histogram h of
(a, b) over the cells.  Binomial inversion recovers h exactly (Python
integers), and h gives |U|, |I|, |U_G|, |U_C| and the multiset counts.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import NamedTuple

import numpy as np

from ...errors import InputError
from .memberships import Memberships, signature_counts

__all__ = [
    "COCLUSTER_DENSE_LIMIT",
    "Coverage",
    "MicroResult",
    "Overlap",
    "PRF",
    "bicluster_overlap",
    "coverage_from_histogram",
    "same_biclusters",
    "coverage_from_moments",
    "example_memberships",
]


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

    ``overlap`` (E4SC, CE), ``coverage`` (CE, RNIA), ``bcubed`` (MOCICE-BCubed)
    and ``bcubed_error``, the bound on the relative float64 error of its
    precision and recall (0 in exact mode).
    """

    overlap: Overlap | None = None
    coverage: Coverage | None = None
    bcubed: PRF | None = None
    bcubed_error: float | None = None


def bicluster_overlap(rows: Memberships, cols: Memberships) -> Overlap:
    """The K x L shared-cell table and the bicluster sizes, exact int64 (from the Gram tables).

    Examples
    --------
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 0]], bool))
    >>> ov = bicluster_overlap(rows, cols)
    >>> ov.shared.tolist(), ov.truth_sizes.tolist(), ov.pred_sizes.tolist()
    ([[1]], [4], [2])
    """
    if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
        raise InputError(
            f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but column "
            f"signatures {cols.n_truth}+{cols.n_pred}; count both from the same truth and pred masks.")
    k = rows.n_truth
    rs, cs = rows.sizes(), cols.sizes()
    return Overlap(rows.gram[:k, k:] * cols.gram[:k, k:], rs[:k] * cs[:k], rs[k:] * cs[k:])


def same_biclusters(overlap: Overlap) -> bool:
    """Whether pred lists the same cell sets as truth, with the same multiplicities (any order).

    Then MOCICE-BCubed is exactly 1 (docs/measures/micro.md), which the float
    result reports without rounding.  Two biclusters have the same cells iff
    they share as many cells as each has.

    Examples
    --------
    >>> same_biclusters(Overlap(np.array([[0, 2], [4, 0]]), np.array([2, 4]), np.array([4, 2])))
    True
    """
    sh, st, sp = overlap.shared, overlap.truth_sizes, overlap.pred_sizes
    if sh.shape[0] != sh.shape[1]:
        return False
    equal = (sh == st[:, None]) & (sh == sp[None, :])
    # equality of cell sets is an equivalence: match the classes by their members
    cls_t = [frozenset(np.flatnonzero(equal[k]).tolist()) for k in range(len(st))]
    cls_p = [frozenset(np.flatnonzero(equal[:, l]).tolist()) for l in range(len(sp))]
    return all(len(c) == sum(1 for d in cls_t if d == c) for c in cls_t) and \
        all(len(c) == sum(1 for d in cls_p if d == c) for c in cls_p)


def coverage_from_histogram(hist, n_truth: int, n_pred: int) -> Coverage:
    """Coverage from ``hist[c, g]`` = number of cells with |C(x)| = c, |G(x)| = g.

    Examples
    --------
    >>> coverage_from_histogram([[4, 2], [3, 0]], 1, 1)   # 3 truth-only, 2 pred-only, 0 both
    Coverage(union=5, intersection=0, pred=2, truth=3, union_multiset=5, intersection_multiset=0)
    """
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


def _invert(m: list[list[int]]) -> list[list[int]]:
    """h[a][b] = sum_{p >= a, q >= b} (-1)^(p-a+q-b) C(p, a) C(q, b) m[p][q], one axis at a time."""
    np_, nq = len(m), len(m[0]) if m else 0
    half = [[sum((-1) ** (p - a) * comb(p, a) * m[p][q] for p in range(a, np_)) for q in range(nq)]
            for a in range(np_)]
    return [[sum((-1) ** (q - b) * comb(q, b) * half[a][q] for q in range(b, nq)) for b in range(nq)]
            for a in range(np_)]


def coverage_from_moments(moments, n_truth: int, n_pred: int) -> Coverage:
    """Exact coverage counts from the factorial moments ``m[p, q]`` (module docstring).

    ``moments`` is a (K + 1) x (L + 1) table of Python integers, ``m[0, 0]``
    being the number of cells I·J.

    Examples
    --------
    >>> # one truth bicluster of 4 cells and one pred of 6 sharing 2, in 3 x 4 cells
    >>> coverage_from_moments([[12, 6], [4, 2]], 1, 1)
    Coverage(union=8, intersection=2, pred=6, truth=4, union_multiset=8, intersection_multiset=2)
    """
    table = np.asarray(moments, dtype=object).reshape(n_truth + 1, n_pred + 1)
    # only the rows and columns that are not all zero carry information
    nz = np.argwhere(table != 0)
    p_max, q_max = (int(nz[:, 0].max()), int(nz[:, 1].max())) if len(nz) else (0, 0)
    m = [[int(x) for x in row[: q_max + 1]] for row in table[: p_max + 1]]
    h = _invert(m)
    hist = np.zeros((n_truth + 1, n_pred + 1), dtype=object)
    for a in range(p_max + 1):
        for b in range(q_max + 1):
            if h[a][b] < 0:  # pragma: no cover - an internal invariant
                raise AssertionError("negative cell count from the moments")
            hist[a, b] = h[a][b]
    return coverage_from_histogram(hist, n_truth, n_pred)


def _packed(m: Memberships, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """Signatures ``lo:hi`` as bit words, uint64 (n, ceil((K + L) / 64))."""
    hi = m.n_signatures if hi is None else hi
    w = max(1, -(-m.n_elem // 64))
    out = np.zeros((hi - lo, w), np.uint64)
    el = m.el[m.ptr[lo] : m.ptr[hi]].astype(np.int64)
    owner = np.repeat(np.arange(hi - lo), np.diff(m.ptr[lo : hi + 1]))
    np.bitwise_or.at(out, (owner, el // 64), np.left_shift(np.uint64(1), (el % 64).astype(np.uint64)))
    return out


def pair_histogram(rows: Memberships, cols: Memberships, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """The cells of row signatures ``lo:hi`` by their (truth, pred) counts: every (row, column) pair.

    ``hist[a, b]`` += n_i n_j for each row signature i and column signature
    j sharing a truth and b pred biclusters (exact int64; cells in no
    bicluster are not counted).  The alternative to the family walk when
    biclusters overlap so much that pairs of signatures are fewer than the
    family's sets (about 1 ns per pair and word); it holds blocks of at most
    2**14 column and 2**16 / 2**14 row signatures at a time.

    Examples
    --------
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> pair_histogram(rows, cols).tolist()
    [[0, 2], [2, 2]]
    """
    k, l_ = rows.n_truth, rows.n_pred
    hi = rows.n_signatures if hi is None else hi
    nb = (k + 1) * (l_ + 1)
    hist = np.zeros(nb, np.int64)
    if hi <= lo or cols.n_signatures == 0:
        return hist.reshape(k + 1, l_ + 1)
    n_words = max(1, -(-rows.n_elem // 64))
    bits = np.arange(n_words * 64)
    one = np.left_shift(np.uint64(1), (bits % 64).astype(np.uint64))
    tm = np.bitwise_or.reduce(np.where(bits < k, one, np.uint64(0)).reshape(n_words, 64), axis=1)
    pm = np.bitwise_or.reduce(np.where((bits >= k) & (bits < k + l_), one, np.uint64(0))
                              .reshape(n_words, 64), axis=1)
    # blocks of column signatures, then of row signatures: every temporary is bounded
    c_step = 1 << 14
    for c0 in range(0, cols.n_signatures, c_step):
        c1 = min(cols.n_signatures, c0 + c_step)
        cw = _packed(cols, c0, c1)
        ccf = cols.cnt[c0:c1].astype(np.float64)
        step = max(1, (1 << 16) // (c1 - c0))
        for s in range(lo, hi, step):
            e = min(hi, s + step)
            x = _packed(rows, s, e)
            nt = np.zeros((e - s, c1 - c0), np.int64)
            ng = np.zeros_like(nt)
            for w in range(n_words):  # word by word: no (n, m, W) temporaries
                iw = x[:, None, w] & cw[None, :, w]
                if tm[w]:
                    nt += np.bitwise_count(iw & tm[w])
                if pm[w]:
                    ng += np.bitwise_count(iw & pm[w])
            key = (nt * (l_ + 1) + ng + (np.arange(e - s) * nb)[:, None]).ravel()
            # exact: per row signature, sums of column counts (below 2**53 in float64), times the row count
            per = np.bincount(key, weights=np.broadcast_to(ccf, (e - s, c1 - c0)).ravel(),
                              minlength=(e - s) * nb)
            hist += rows.cnt[s:e] @ np.rint(per).astype(np.int64).reshape(e - s, nb)
    return hist.reshape(k + 1, l_ + 1)


# --------------------------------------------------------------------------
# helpers shared by the measures
# --------------------------------------------------------------------------
def _hmean(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    """Harmonic mean 2ab/(a+b), 0 when a + b = 0 (exact; round once)."""
    return 2 * a * b / (a + b) if a + b else Fraction(0)


def _ratio(num: int, den: int, exact: bool):
    q = Fraction(num, den)
    return q if exact else float(q)


def _nothing_covered(formula: str, what: str) -> InputError:
    """The error of a formula that is 0/0 because no bicluster covers a cell.

    ``formula`` is the formula's published name (as docs/measures/micro.md
    heads it), not a registry name: which measures exist is said by their
    records in :mod:`daskbicl.measures` only.
    """
    return InputError(
        f"truth and pred cover no cell (no bicluster has both a row and a column), so "
        f"{what} 0/0 and {formula} is undefined (docs/measures/micro.md). Check the inputs: every "
        "bicluster needs at least one row and one column to cover a cell.")


def bcubed_nothing_covered() -> InputError:
    """MOCICE-BCubed's error when neither side covers a cell (its P and R are 0/0)."""
    return _nothing_covered("MOCICE-BCubed", "P = (...) / |U_G| and R = (...) / |U_C| are")


def _check_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


# ``rows`` and ``cols`` of two co-clusterings are contingency tables in
# coordinate form (:class:`daskbicl.kernels.coclustering.contingency.Table`): non-zero
# entries ``counts[e]`` at (truth cluster ``rows[e]``, pred cluster
# ``cols[e]``), cluster sizes ``truth_sizes()`` / ``pred_sizes()``.  Block
# (h, l) of a co-clustering is bicluster ``h * L + l`` (row-cluster major, as
# :func:`daskbicl.engine.blocks.as_biclustering` numbers them).
def _dense(table) -> np.ndarray:
    out = np.zeros((len(table.truth_sizes()), len(table.pred_sizes())), np.int64)
    out[table.rows, table.cols] = table.counts
    return out


def example_memberships() -> tuple[Memberships, Memberships]:
    """The docs' example: 4 x 3 matrix, truth {0,1,2}x{0,1}, {2,3}x{1,2};
    pred {0,1}x{0,1}, {1,2,3}x{1,2}."""
    rows = signature_counts(np.array([[1, 1, 1, 0], [0, 0, 1, 1]], bool),
                       np.array([[1, 1, 0, 0], [0, 1, 1, 1]], bool))
    cols = signature_counts(np.array([[1, 1, 0], [0, 1, 1]], bool),
                       np.array([[1, 1, 0], [0, 1, 1]], bool))
    return rows, cols
