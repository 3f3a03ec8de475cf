"""Signature classes of rows, columns and cells (numpy only).

For K true biclusters :math:`B_k = E_k \\times F_k` and L predicted biclusters
:math:`X_l = E'_l \\times F'_l`, the *signature* of a row i is the bit string
of its memberships

.. math::

    \\sigma(i) = (\\,[i \\in E_1], \\dots, [i \\in E_K],\\;
                  [i \\in E'_1], \\dots, [i \\in E'_L]\\,),

and likewise for a column j with the column sets.  A cell (i, j) lies in
bicluster k iff its row and its column both do, so the signature of a cell is
the bitwise AND :math:`\\sigma(i) \\wedge \\sigma(j)`: it names exactly
C(x) (the truth bits) and G(x) (the pred bits) of docs/measures/micro.md.

Layout
------
A signature of ``n_bits = K + L`` bits is packed into ``W = max(1,
ceil(n_bits / 64))`` little-endian ``uint64`` words: bit b lives in word
``b // 64`` at position ``b % 64``; truth bicluster k is bit k, pred
bicluster l is bit ``K + l``.  A :class:`SignatureClasses` holds distinct
signatures with int64 counts, canonically sorted, so that two equal
multisets of signatures give identical arrays.

Rows (or columns) in no bicluster at all are **kept**, as the all-zero class:
``SignatureClasses.total`` is then the number of rows (columns) seen, which
is a cheap consistency check for the engine.  They never contribute a cell
to any union (an all-zero row ANDed with anything is all-zero).

Chunk, combine, join
--------------------
* :func:`signature_counts` is the per-chunk function (masks of one block of
  rows or columns in, classes out) and :func:`merge_signature_counts` the
  exact, associative, commutative combine of a tree reduction.
* :func:`cell_signature_counts` joins the merged row and column classes into
  the exact cell classes (weights = numbers of cells) without materialising
  the R x C pairs of row and column classes when that is large.  For a bit
  set U let :math:`N_r(U) = \\#\\{i : \\sigma(i) \\supseteq U\\}` and
  :math:`N_c(U)` likewise; the cells containing U form the rectangle of
  those rows and columns, so :math:`N(U) = N_r(U) N_c(U)`.  The family F of
  the sets U with N(U) > 0 (every subset of some cell signature) is built
  level by level (apriori: U is extended by a higher bit of a row/column
  only while U is in F), and the exact counts are the Möbius inversion
  :math:`w(T) = \\sum_{U \\supseteq T} (-1)^{|U - T|} N(U)` on F, one bit
  at a time in int64 (every intermediate is a count of cells, so no
  overflow and no cancellation).  Cost: the number of (class, U) pairs,
  at most :math:`\\sum_r 2^{|r|} + \\sum_c 2^{|c|}` (r, c the row and column
  signatures), far less when rows and columns rarely share biclusters.
  With long signatures (heavy overlap) the direct AND of every row class
  with every column class, :math:`O(R C)`, is cheaper and used instead;
  :class:`~daskbicl.errors.TooLargeError` is raised when the work exceeds
  ``max_work`` (through :func:`daskbicl.score` and the CLI: the dask config
  key ``daskbicl.max_work``, :data:`MAX_WORK_KEY`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import InputError, TooLargeError
from .bits import (
    _CHUNK,
    SortedIndex,
    bit_positions,
    n_words,
    pack_bits,
    popcount,
    sortable_keys,
    subset_words,
    unique_sum,
    unpack_bits,
)
from .budget import DEFAULT_MAX_WORK, UNIT_CANDIDATE, UNIT_PAIR, UNIT_SUBSET, too_large

__all__ = [
    "SignatureClasses",
    "SubsetLattice",
    "cell_signature_counts",
    "col_signature_counts",
    "join_cost",
    "merge_signature_counts",
    "row_signature_counts",
    "signature_counts",
    "superset_lattice",
]


# --------------------------------------------------------------------------
# classes
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SignatureClasses:
    """Distinct signatures with their counts (rows, columns or cells).

    Attributes
    ----------
    words : ndarray of uint64, shape (n, W)
        Packed signatures (module docstring), distinct, canonically sorted.
    count : ndarray of int64, shape (n,)
        Number of rows / columns / cells with each signature (> 0).
    n_truth, n_pred : int
        K and L; bit k is truth bicluster k, bit ``K + l`` pred bicluster l.

    Examples
    --------
    >>> c = SignatureClasses.from_bits(np.array([[1], [0], [1]], bool),
    ...                                np.array([[0], [0], [0]], bool))
    >>> c.truth.ravel().tolist(), c.count.tolist(), c.total
    ([False, True], [1, 2], 3)
    """

    words: np.ndarray
    count: np.ndarray
    n_truth: int
    n_pred: int

    @classmethod
    def from_bits(cls, truth: np.ndarray, pred: np.ndarray,
                  count: np.ndarray | None = None) -> SignatureClasses:
        """Canonical classes from bool ``truth (n, K)``, ``pred (n, L)``."""
        truth = np.asarray(truth, dtype=bool)
        pred = np.asarray(pred, dtype=bool)
        n = truth.shape[0]
        if pred.shape[0] != n:
            raise InputError(f"truth has {n} signatures but pred has {pred.shape[0]}")
        count = np.ones(n, np.int64) if count is None else np.asarray(count, np.int64)
        words = pack_bits(np.concatenate([truth, pred], axis=1))
        return cls.from_words(words, count, truth.shape[1], pred.shape[1])

    @classmethod
    def from_words(cls, words: np.ndarray, count: np.ndarray, n_truth: int,
                   n_pred: int) -> SignatureClasses:
        """Canonical classes from packed words; equal words are summed."""
        words, count = unique_sum(np.asarray(words, np.uint64),
                                  np.asarray(count, np.int64))
        keep = count != 0
        return cls(words[keep], count[keep], int(n_truth), int(n_pred))

    @classmethod
    def empty(cls, n_truth: int, n_pred: int) -> SignatureClasses:
        """No classes at all (the identity of :func:`merge_signature_counts`)."""
        w = n_words(n_truth + n_pred)
        return cls(np.zeros((0, w), np.uint64), np.zeros(0, np.int64),
                   int(n_truth), int(n_pred))

    @property
    def n_bits(self) -> int:
        """K + L."""
        return self.n_truth + self.n_pred

    @property
    def n_classes(self) -> int:
        """Number of distinct signatures."""
        return len(self.count)

    @property
    def total(self) -> int:
        """Sum of the counts (exact Python int)."""
        return int(self.count.sum(dtype=np.int64))

    @cached_property
    def bits(self) -> np.ndarray:
        """Unpacked signatures, bool ``(n, K + L)``."""
        return unpack_bits(self.words, self.n_bits)

    @property
    def truth(self) -> np.ndarray:
        """Truth memberships, bool ``(n, K)``."""
        return self.bits[:, : self.n_truth]

    @property
    def pred(self) -> np.ndarray:
        """Pred memberships, bool ``(n, L)``."""
        return self.bits[:, self.n_truth :]

    @cached_property
    def popcount(self) -> np.ndarray:
        """Number of biclusters (truth + pred) of each class, int64."""
        return popcount(self.words)


def _check_mask(a: object, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 2 or a.dtype != np.bool_:
        raise InputError(
            f"{name} must be a 2-D bool array (biclusters x rows-or-columns); "
            f"got dtype {a.dtype} with shape {a.shape}. Convert it with "
            "mask.astype(bool).")
    return a


def signature_counts(truth_mask_block: np.ndarray,
                     pred_mask_block: np.ndarray) -> SignatureClasses:
    """Count the signature classes of one chunk of rows (or of columns).

    Parameters
    ----------
    truth_mask_block : ndarray of bool, shape (K, m)
        ``truth_mask_block[k, i]``: item i of the chunk is in truth bicluster k.
    pred_mask_block : ndarray of bool, shape (L, m)
        The same for the predicted biclusters.

    Returns
    -------
    SignatureClasses
        Distinct signatures :math:`(rowT(i), rowP(i))` of the m items with
        their counts (summing to m); the all-zero signature is kept.

    Examples
    --------
    >>> t = np.array([[1, 1, 0, 0]], bool)
    >>> p = np.array([[1, 1, 1, 0], [0, 0, 0, 0]], bool)
    >>> c = signature_counts(t, p)
    >>> c.truth.astype(int).tolist(), c.pred.astype(int).tolist(), c.count.tolist()
    ([[0], [0], [1]], [[0, 0], [1, 0], [1, 0]], [1, 1, 2])
    """
    t = _check_mask(truth_mask_block, "truth_mask_block")
    p = _check_mask(pred_mask_block, "pred_mask_block")
    if t.shape[1] != p.shape[1]:
        raise InputError(
            f"truth_mask_block covers {t.shape[1]} rows/columns but "
            f"pred_mask_block covers {p.shape[1]}; chunk both masks the same way.")
    words = pack_bits(np.concatenate([t, p], axis=0).T)
    return SignatureClasses.from_words(words, np.ones(len(words), np.int64),
                                       t.shape[0], p.shape[0])


#: The per-chunk function for rows (alias of :func:`signature_counts`).
row_signature_counts = signature_counts


#: The per-chunk function for columns (alias of :func:`signature_counts`).
col_signature_counts = signature_counts


def merge_signature_counts(*parts: SignatureClasses | list | tuple) -> SignatureClasses:
    """Exactly combine chunk results (sum of counts per signature).

    Accepts classes and (nested) lists/tuples of them, as a dask tree
    reduction passes them; associative and commutative, result canonical.

    Examples
    --------
    >>> t, p = np.array([[1, 0, 1]], bool), np.array([[1, 1, 0]], bool)
    >>> a = signature_counts(t[:, :1], p[:, :1])
    >>> b = signature_counts(t[:, 1:], p[:, 1:])
    >>> merge_signature_counts(a, [b]).count.tolist()
    [1, 1, 1]
    """
    flat: list[SignatureClasses] = []
    stack = list(parts)
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, SignatureClasses):
            flat.append(x)
        else:
            raise InputError(f"cannot merge a {type(x).__name__}; expected SignatureClasses")
    if not flat:
        raise InputError("merge_signature_counts needs at least one SignatureClasses")
    k, l_ = flat[0].n_truth, flat[0].n_pred
    for x in flat:
        if (x.n_truth, x.n_pred) != (k, l_):
            raise InputError(
                f"cannot merge signatures of {x.n_truth}+{x.n_pred} biclusters with "
                f"{k}+{l_}; every chunk must see all biclusters of both sides.")
    return SignatureClasses.from_words(np.concatenate([x.words for x in flat]),
                                       np.concatenate([x.count for x in flat]), k, l_)


# --------------------------------------------------------------------------
# the down-closed family of signatures (subset lattice)
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SubsetLattice:
    """Every bit set contained in some signature, with its superset count.

    ``count[u] = N(U) = sum of the class counts of the signatures that
    contain U``.  ``down[u, r]`` is the index of U minus its r-th lowest set
    bit (-1 past ``popcount[u]``); the family is down-closed, so it always
    exists.
    """

    words: np.ndarray
    count: np.ndarray
    n_truth: int
    n_pred: int
    index_type: type = SortedIndex

    @cached_property
    def popcount(self) -> np.ndarray:
        """Number of bits of each element, int64."""
        return popcount(self.words)

    @cached_property
    def positions(self) -> np.ndarray:
        """Ascending bit positions, int16 ``(n, maxpop)``, -1 padded."""
        pc = self.popcount
        width = int(pc.max()) if len(pc) else 0
        out = np.full((len(pc), width), -1, dtype=np.int16)
        for m in np.unique(pc).tolist():
            idx = np.flatnonzero(pc == m)
            for s in range(0, len(idx), _CHUNK // max(m, 1)):
                sl = idx[s : s + _CHUNK // max(m, 1)]
                out[sl, :m] = bit_positions(self.words[sl], m)
        return out

    @cached_property
    def down(self) -> np.ndarray:
        """``down[u, r]``: index of U without its r-th bit; int32/int64."""
        pos = self.positions
        n, width = pos.shape
        dt = np.int32 if n < 2**31 else np.int64
        out = np.full((n, width), -1, dtype=dt)
        index = self.index_type(self.words)
        for r in range(width):
            rows = np.flatnonzero(pos[:, r] >= 0)
            for s in range(0, len(rows), _CHUNK):
                sl = rows[s : s + _CHUNK]
                q = self.words[sl].copy()
                p = pos[sl, r].astype(np.int64)
                q[np.arange(len(sl)), p // 64] ^= np.left_shift(
                    np.uint64(1), (p % 64).astype(np.uint64))
                out[sl, r] = index.find(q)
        if (out[pos >= 0] < 0).any():  # pragma: no cover - internal invariant
            raise AssertionError("subset lattice is not down-closed")
        return out

    def exact_classes(self) -> SignatureClasses:
        """Möbius inversion :math:`w(T) = \\sum_{U \\supseteq T} (-1)^{|U-T|} N(U)`.

        Returns the classes of the signatures themselves (w > 0).  Performed
        one bit at a time; every intermediate value is a count of items
        (non-negative, at most ``N(empty)``), so int64 is exact.
        """
        w = self.count.copy()
        down = self.down
        for b in range(self.n_truth + self.n_pred):
            word, sh = self.words[:, b // 64], np.uint64(b % 64)
            src = np.flatnonzero(np.right_shift(word, sh) & np.uint64(1))
            if len(src) == 0:
                continue
            # rank of bit b in U = number of set bits of U below b
            below = word[src] & (np.left_shift(np.uint64(1), sh) - np.uint64(1))
            rank = np.bitwise_count(below).astype(np.int64)
            if b >= 64:
                rank += popcount(self.words[src, : b // 64])
            w[down[src, rank]] -= w[src]
        keep = w > 0
        return SignatureClasses(self.words[keep], w[keep], self.n_truth, self.n_pred)


def _cost_subsets(classes: SignatureClasses) -> float:
    """Number of subsets of all signatures, sum of 2^|s|."""
    return float(np.sum(np.exp2(classes.popcount.astype(np.float64))))


def superset_lattice(classes: SignatureClasses, *, max_work: float = DEFAULT_MAX_WORK,
                     index_type: type = SortedIndex) -> SubsetLattice:
    """The down-closure of ``classes`` with superset counts N(U).

    Enumerates all :math:`\\sum_s 2^{|s|}` subsets (in chunks) and sums the
    class counts per subset.

    Examples
    --------
    >>> c = SignatureClasses.from_bits(np.array([[1, 1], [1, 0]], bool),
    ...                                np.zeros((2, 0), bool))
    >>> lat = superset_lattice(c)
    >>> lat.words.ravel().tolist(), lat.count.tolist()
    ([0, 1, 2, 3], [2, 2, 1, 1])
    """
    cost = _cost_subsets(classes) * UNIT_SUBSET
    if cost > max_work:
        raise too_large(f"enumerating the subsets of {classes.n_classes} signatures",
                        cost, max_work)
    pc = classes.popcount
    acc_w: list[np.ndarray] = []
    acc_c: list[np.ndarray] = []
    pending = 0
    for m in np.unique(pc).tolist():
        idx = np.flatnonzero(pc == m)
        step = max(1, _CHUNK >> m)
        for s in range(0, len(idx), step):
            sl = idx[s : s + step]
            sub = subset_words(classes.words[sl], m).reshape(-1, classes.words.shape[1])
            cnt = np.repeat(classes.count[sl], 1 << m)
            uw, uc = unique_sum(sub, cnt)
            acc_w.append(uw)
            acc_c.append(uc)
            pending += len(uw)
            if pending > 4 * _CHUNK and len(acc_w) > 1:
                uw, uc = unique_sum(np.concatenate(acc_w), np.concatenate(acc_c))
                acc_w, acc_c, pending = [uw], [uc], len(uw)
    w = n_words(classes.n_bits)
    if not acc_w:
        return SubsetLattice(np.zeros((1, w), np.uint64), np.zeros(1, np.int64),
                             classes.n_truth, classes.n_pred, index_type)
    uw, uc = unique_sum(np.concatenate(acc_w), np.concatenate(acc_c))
    return SubsetLattice(uw, uc, classes.n_truth, classes.n_pred, index_type)


# --------------------------------------------------------------------------
# the join: cell classes from row classes and column classes
# --------------------------------------------------------------------------
def _join_pairs(rows: SignatureClasses, cols: SignatureClasses) -> SignatureClasses:
    """Direct join: AND of every nonzero row class with every column class."""
    rnz = rows.popcount > 0
    cnz = cols.popcount > 0
    rw, rc = rows.words[rnz], rows.count[rnz]
    cw, cc = cols.words[cnz], cols.count[cnz]
    acc_w, acc_c = [], []
    pending = 0
    step = max(1, _CHUNK // max(len(cw), 1))
    for s in range(0, len(rw), step):
        inter = (rw[s : s + step, None, :] & cw[None, :, :]).reshape(-1, rw.shape[1])
        wt = (rc[s : s + step, None] * cc[None, :]).ravel()
        nz = inter.any(axis=1)
        uw, uc = unique_sum(inter[nz], wt[nz])
        acc_w.append(uw)
        acc_c.append(uc)
        pending += len(uw)
        if pending > 4 * _CHUNK and len(acc_w) > 1:
            uw, uc = unique_sum(np.concatenate(acc_w), np.concatenate(acc_c))
            acc_w, acc_c, pending = [uw], [uc], len(uw)
    w = n_words(rows.n_bits)
    words = np.concatenate(acc_w) if acc_w else np.zeros((0, w), np.uint64)
    count = np.concatenate(acc_c) if acc_c else np.zeros(0, np.int64)
    empty = rows.total * cols.total - int(count.sum(dtype=np.int64))
    words = np.concatenate([words, np.zeros((1, w), np.uint64)])
    count = np.concatenate([count, np.array([empty], np.int64)])
    return SignatureClasses.from_words(words, count, rows.n_truth, rows.n_pred)


def _extend(pos: np.ndarray, pop: np.ndarray, item: np.ndarray, key: np.ndarray,
            rank: np.ndarray):
    """Children of (class, subset U, next rank) triples: U plus one higher bit."""
    nchild = pop[item] - rank
    parent = np.repeat(np.arange(len(item)), nchild)
    first = np.cumsum(nchild) - nchild
    q = rank[parent] + (np.arange(len(parent)) - np.repeat(first, nchild))
    it = item[parent]
    bit = pos.ravel()[it * pos.shape[1] + q].astype(np.uint64)
    if key.shape[1] == 1:
        new = (key[parent, 0] | np.left_shift(np.uint64(1), bit))[:, None]
    else:
        new = key[parent]
        new[np.arange(len(parent)), (bit // np.uint64(64)).astype(np.int64)] |= \
            np.left_shift(np.uint64(1), bit % np.uint64(64))
    return it, new, q + 1


def _positions(classes: SignatureClasses) -> np.ndarray:
    lat = SubsetLattice(classes.words, classes.count, classes.n_truth, classes.n_pred)
    return lat.positions


def _chunks(side: list) -> list[tuple[int, int]]:
    """Slices of the parents of a side with about _CHUNK children each."""
    _, pop, item, _, rank = side
    ends = np.cumsum(pop[item] - rank)
    total = int(ends[-1]) if len(ends) else 0
    cuts = np.searchsorted(ends, np.arange(_CHUNK, total, _CHUNK), side="right")
    bounds = [0, *np.unique(cuts).tolist(), len(item)]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if a < b]


def _grow(side: list, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The children keys of a side's (class, subset, rank) triples, summed."""
    pos, pop, item, key, rank = side
    acc_w, acc_c = [], []
    for a, b in _chunks(side):
        it, k, _ = _extend(pos, pop, item[a:b], key[a:b], rank[a:b])
        uw, uc = unique_sum(k, weights[it])
        acc_w.append(uw)
        acc_c.append(uc)
        if sum(map(len, acc_c)) > 4 * _CHUNK and len(acc_c) > 1:
            uw, uc = unique_sum(np.concatenate(acc_w), np.concatenate(acc_c))
            acc_w, acc_c = [uw], [uc]
    if not acc_w:
        return np.zeros((0, key.shape[1]), np.uint64), np.zeros(0, np.int64)
    return unique_sum(np.concatenate(acc_w), np.concatenate(acc_c))


def _prune(side: list, index) -> None:
    """Replace a side's triples by their children that are in ``index``.

    The children are generated again, chunk by chunk, rather than kept from
    :func:`_grow`: twice the (cheap) extension, a fraction of the memory.
    """
    pos, pop, item, key, rank = side
    parts = []
    for a, b in _chunks(side):
        it, k, r = _extend(pos, pop, item[a:b], key[a:b], rank[a:b])
        keep = index.contains(k)
        parts.append((it[keep].astype(item.dtype), k[keep], r[keep].astype(rank.dtype)))
    if parts:
        side[2:] = [np.concatenate(x) for x in zip(*parts)]
    else:
        side[2:] = [item[:0], key[:0], rank[:0]]


def _levelwise_lattice(rows: SignatureClasses, cols: SignatureClasses,
                       max_work: float, index_type: type = SortedIndex) -> SubsetLattice:
    """Down-closed family of the cell signatures with N(U) = N_r(U) N_c(U).

    Apriori-style, one subset size at a time: a subset U of a row (column)
    signature is extended by a higher bit only if U is a subset of some row
    *and* some column signature, so only the family of the cells (and one
    level of candidates) is ever enumerated, not every subset of every row.
    """
    w = n_words(rows.n_bits)
    sides = []
    for c in (rows, cols):
        n = c.n_classes
        sides.append([_positions(c), c.popcount, np.arange(n, dtype=np.int32 if n < 2**31
                                                         else np.int64),
                      np.zeros((n, w), np.uint64), np.zeros(n, np.int16)])
    keys = [np.zeros((1, w), np.uint64)]
    counts = [np.array([rows.total * cols.total], np.int64)]
    work = 0.0
    while True:
        work += UNIT_CANDIDATE * sum(float(np.sum(s[1][s[2]] - s[4])) for s in sides)
        if work > max_work:
            raise too_large(f"joining {rows.n_classes} row classes with {cols.n_classes} "
                            "column classes into cell classes", None, max_work)
        (rk, rn), (ck, cn) = (_grow(s, c.count) for s, c in zip(sides, (rows, cols)))
        _, ia, ib = np.intersect1d(sortable_keys(rk), sortable_keys(ck), assume_unique=True,
                                   return_indices=True)
        if len(ia) == 0:
            break
        level = rk[ia]
        keys.append(level)
        counts.append(rn[ia] * cn[ib])
        del rk, rn, ck, cn
        index = index_type(level)
        for side in sides:
            _prune(side, index)
    words, count = unique_sum(np.concatenate(keys), np.concatenate(counts))
    return SubsetLattice(words, count, rows.n_truth, rows.n_pred, index_type)


def join_cost(rows: SignatureClasses, cols: SignatureClasses) -> dict[str, float]:
    """Estimated work of the two join methods (units of :data:`DEFAULT_MAX_WORK`).

    "subsets" is an upper bound: the level-wise join only enumerates the
    subsets shared by some row and some column.
    """
    nr = int(np.count_nonzero(rows.popcount))
    nc = int(np.count_nonzero(cols.popcount))
    return {"subsets": UNIT_CANDIDATE * (_cost_subsets(rows) + _cost_subsets(cols)),
            "pairs": UNIT_PAIR * float(nr) * float(nc)}


def cell_signature_counts(rows: SignatureClasses, cols: SignatureClasses, *,
                          max_work: float = DEFAULT_MAX_WORK, index_type: type = SortedIndex,
                          method: str | None = None,
                          ) -> tuple[SignatureClasses, SubsetLattice | None]:
    """Exact cell classes from the merged row and column classes.

    Parameters
    ----------
    rows, cols : SignatureClasses
        Row and column classes of the same K truth and L pred biclusters.
    max_work : float, optional
        Limit on the work (units of :data:`DEFAULT_MAX_WORK`);
        :class:`TooLargeError` above.
    method : {None, "subsets", "pairs"}
        Force a method (tests).  By default "pairs" when its work (exact,
        :func:`join_cost`) fits and is below the bound of "subsets".

    Returns
    -------
    cells : SignatureClasses
        Distinct cell signatures :math:`(C(x), G(x))` with their numbers of
        cells, summing to I * J (the all-zero class, present when some cell
        is covered by no bicluster, counts those cells).
    lattice : SubsetLattice or None
        The family F (every subset of a cell signature) with the superset
        counts :math:`N(U) = N_r(U) N_c(U)` when the level-wise ("subsets")
        method ran (reused by the MOCICE-BCubed finalize), else None.

    Examples
    --------
    >>> tr = np.array([[1, 1, 0]], bool); pr = np.array([[0, 1, 1]], bool)
    >>> rows = signature_counts(tr, pr)                    # 3 rows
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> cells, _ = cell_signature_counts(rows, cols)
    >>> cells.truth.ravel().tolist(), cells.pred.ravel().tolist(), cells.count.tolist()
    ([True, False, True], [False, True, True], [2, 2, 2])
    """
    if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
        raise InputError(
            f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but column "
            f"signatures {cols.n_truth}+{cols.n_pred}; count both from the same masks.")
    if rows.total * cols.total >= 2**62:
        raise TooLargeError(
            f"{rows.total} x {cols.total} cells overflow the exact int64 cell counts "
            "(limit 2**62 cells).")
    cost = join_cost(rows, cols)
    if method is None:
        fits = cost["pairs"] <= max_work and cost["pairs"] <= cost["subsets"]
        method = "pairs" if fits else "subsets"
    if method not in cost:
        raise InputError(f"method must be 'subsets' or 'pairs', got {method!r}")
    if method == "pairs" and cost[method] > max_work:
        raise too_large(f"joining {rows.n_classes} row classes with {cols.n_classes} "
                        "column classes into cell classes", cost[method], max_work)
    if method == "pairs":
        cells = _join_pairs(rows, cols)
        cells = SignatureClasses(cells.words, cells.count, rows.n_truth, rows.n_pred)
        return cells, None
    lat = _levelwise_lattice(rows, cols, max_work, index_type)
    return lat.exact_classes(), lat
