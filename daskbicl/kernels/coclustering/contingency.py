"""Chunk-level contingency counting (numpy only).

A contingency table between two labelings of the same objects is kept in a
sparse *pair-count* form: the distinct ``(truth_label, pred_label)`` pairs
that occur and how often.  Labels are arbitrary non-negative integers up to
``2**63 - 1``; a table is never sized by the largest label.

* :func:`count_pairs` counts one chunk.  When the labels of the chunk span a
  small range it uses one ``np.bincount`` over ``(t - tmin) * width + (p -
  pmin)`` (the fast path, as fast as a plain contingency pass; the range is
  found with one ``max`` per side).  A side spread over a wider range than
  the chunk is compacted first (``factorize``), and a chunk with more
  distinct pairs than a dense table should hold counts its pair keys
  (``count_keys``); both default to sorting, and the engine passes hash-based
  versions, so spread labels cost about what compact ones do.
* :func:`merge_pairs` combines any number of chunk results exactly (int64
  sums); it is the ``combine``/``aggregate`` of the engine's tree reduction.
  Results whose labels span a small range stay *dense* (an offset and a 2-D
  count array) and merge by addition; the others are triplets and merge by
  a sort.
* :meth:`PairCounts.to_table` compacts the labels into a :class:`Table`, the
  small object every partition measure is finalized from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError, LabelError, TooLargeError

__all__ = [
    "POLICIES", "DEFAULT_POLICY", "UNASSIGNED_ATTR", "check_policy", "PairCounts", "DenseCounts", "LabelledCounts", "Table", "count_pairs", "merge_pairs", "check_label_bounds",
    "pair_keys", "sum_by", "worth_a_block",
]

#: Largest label value accepted (labels are stored and compared as int64).
MAX_LABEL = np.iinfo(np.int64).max

#: Dense bincount tables per chunk are limited to this many cells, and to a
#: small multiple of the chunk length, so a sparse labeling never allocates
#: more than it counts; merged tables stay dense up to this many cells.
DENSE_CELLS = _DENSE_CELLS = 1 << 22

#: Tables larger than this are not densified (CE needs the dense table).
DENSE_LIMIT = 1 << 26


#: What an unassigned label (NaN, None, pandas NA, a negative integer) means
#: (docs/guide/data-model.md): an error, one extra cluster per side and axis,
#: or a cluster of its own per entry.
POLICIES = ("error", "cluster", "singleton")
DEFAULT_POLICY = "error"
#: The Dataset attribute that carries the policy from the caller to the counting pass.
UNASSIGNED_ATTR = "daskbicl_unassigned"


def check_policy(policy) -> str:
    """``policy`` if it is one of :data:`POLICIES` (None: the default), else InputError.

    Examples
    --------
    >>> check_policy(None), check_policy("singleton")
    ('error', 'singleton')
    """
    if policy is None:
        return DEFAULT_POLICY
    if not isinstance(policy, str) or policy not in POLICIES:
        raise InputError(f"unassigned must be one of {', '.join(map(repr, POLICIES))}, got {policy!r}")
    return policy


#: Object label arrays longer than this are hashed before their distinct labels are sorted.
_HASH_FIRST = 1 << 10


def unique_labels(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct labels, inverse)`` like ``np.unique``, also for labels that cannot be ordered together.

    Object labels of mixed types (``[0, "a"]``) are valid labels but do not
    sort; they are ordered by type name, then value within a type (then
    first appearance when even that fails), which is deterministic.

    >>> unique_labels(np.array([0, "a", 0, "b"], dtype=object))[0].tolist()
    [0, 'a', 'b']
    """
    if values.dtype == object and values.size > _HASH_FIRST:
        # Many object labels (strings), few distinct: hash them first (a dict), then sort only the
        # distinct ones (np.unique would sort every Python object; the result is the same).
        position: dict = {}
        codes = np.fromiter((position.setdefault(v, len(position)) for v in values.tolist()), dtype=np.intp,
                            count=values.size)
        if len(position) < values.size:  # (all distinct: nothing to gain, sort them below)
            uniq, rank = unique_labels(np.fromiter(position, dtype=object, count=len(position)))
            return uniq, rank[codes]
    try:
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.reshape(-1)
    except TypeError:
        pass
    distinct = list(dict.fromkeys(values.tolist()))
    try:
        distinct.sort(key=lambda v: (type(v).__qualname__, v))
    except TypeError:
        distinct.sort(key=lambda v: type(v).__qualname__)  # stable: first appearance within a type
    position = {v: k for k, v in enumerate(distinct)}
    uniq = np.empty(len(distinct), dtype=object)
    uniq[:] = distinct
    return uniq, np.fromiter((position[v] for v in values.tolist()), dtype=np.intp, count=len(values))


@dataclass(frozen=True)
class PairCounts:
    """Sparse pair counts: ``count[k]`` objects have labels ``(truth[k], pred[k])``.

    Pairs are unique (sorted by ``(truth, pred)`` when the kernels made them,
    in any order when the engine counted them by hashing); ``count`` is
    int64 and positive.
    """

    truth: np.ndarray
    pred: np.ndarray
    count: np.ndarray

    @property
    def total(self) -> int:
        return int(self.count.sum(dtype=np.int64))

    def to_pairs(self) -> PairCounts:
        return self

    def to_table(self) -> Table:
        """Compact the labels and return the contingency :class:`Table`."""
        truth_labels, rows = unique_labels(self.truth)
        pred_labels, cols = unique_labels(self.pred)
        return Table(
            rows=rows.astype(np.intp, copy=False),
            cols=cols.astype(np.intp, copy=False),
            counts=self.count.astype(np.int64, copy=False),
            truth_labels=truth_labels,
            pred_labels=pred_labels,
        )


@dataclass(frozen=True)
class DenseCounts:
    """Pair counts as a dense block: ``table[a, b]`` objects have labels
    ``(truth_lo + a, pred_lo + b)``.  Used while the label ranges are small."""

    truth_lo: int
    pred_lo: int
    table: np.ndarray

    @property
    def total(self) -> int:
        return int(self.table.sum(dtype=np.int64))

    @property
    def truth_hi(self) -> int:
        return self.truth_lo + self.table.shape[0] - 1

    @property
    def pred_hi(self) -> int:
        return self.pred_lo + self.table.shape[1] - 1

    def to_pairs(self) -> PairCounts:
        r, c = np.nonzero(self.table)
        return PairCounts(
            (r + self.truth_lo).astype(np.int64),
            (c + self.pred_lo).astype(np.int64),
            self.table[r, c].astype(np.int64),
        )

    def to_table(self) -> Table:
        keep_r = np.flatnonzero(self.table.any(axis=1))
        keep_c = np.flatnonzero(self.table.any(axis=0))
        dense = self.table[np.ix_(keep_r, keep_c)]
        r, c = np.nonzero(dense)
        return Table(
            r.astype(np.intp),
            c.astype(np.intp),
            dense[r, c].astype(np.int64),
            (keep_r + self.truth_lo).astype(np.int64),
            (keep_c + self.pred_lo).astype(np.int64),
        )


@dataclass(frozen=True)
class LabelledCounts:
    """Pair counts as a dense block over a chunk's own labels: ``table[a, b]`` objects
    have labels ``(truth_labels[a], pred_labels[b])``.

    What a chunk of labels spread over a wide range (or of strings) gives
    once its labels are compacted: the labels of each side are distinct
    (in any order; the unassigned marker is -1, or None for object labels)
    and ``table`` is int64.  Chunks merge by adding their blocks where their
    label vectors agree (:mod:`daskbicl.engine.label_grids`), with no work
    per pair.
    """

    truth_labels: np.ndarray
    pred_labels: np.ndarray
    table: np.ndarray

    @property
    def total(self) -> int:
        return int(self.table.sum(dtype=np.int64))

    def to_pairs(self) -> PairCounts:
        r, c = np.nonzero(self.table)
        return PairCounts(self.truth_labels[r], self.pred_labels[c], self.table[r, c].astype(np.int64))

    def to_table(self) -> Table:
        keep_r = np.flatnonzero(self.table.any(axis=1))
        keep_c = np.flatnonzero(self.table.any(axis=0))
        truth_labels, row_of = unique_labels(self.truth_labels[keep_r])
        pred_labels, col_of = unique_labels(self.pred_labels[keep_c])
        dense = self.table[np.ix_(keep_r, keep_c)]
        r, c = np.nonzero(dense)
        return Table(row_of[r].astype(np.intp), col_of[c].astype(np.intp), dense[r, c].astype(np.int64),
                     truth_labels, pred_labels)


@dataclass(frozen=True)
class Table:
    """A contingency table in coordinate form, with the original labels.

    ``counts[k]`` objects are in truth cluster ``truth_labels[rows[k]]`` and
    pred cluster ``pred_labels[cols[k]]``.  Only non-zero cells are stored;
    every truth and pred cluster has at least one object.
    """

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    truth_labels: np.ndarray
    pred_labels: np.ndarray

    @classmethod
    def from_dense(cls, table) -> Table:
        """Build from a dense 2-D count array (empty rows/columns are dropped)."""
        dense = np.asarray(table)
        if dense.ndim != 2:
            raise ValueError("a contingency table is 2-D")
        keep_r = np.flatnonzero(dense.sum(axis=1))
        keep_c = np.flatnonzero(dense.sum(axis=0))
        dense = dense[np.ix_(keep_r, keep_c)]
        r, c = np.nonzero(dense)
        return cls(r, c, dense[r, c].astype(np.int64), keep_r, keep_c)

    @classmethod
    def from_labels(cls, truth, pred) -> Table:
        """Count two in-memory label arrays (reference path for tests)."""
        return count_pairs(np.asarray(truth), np.asarray(pred)).to_table()

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.truth_labels), len(self.pred_labels))

    @property
    def n(self) -> int:
        """Number of objects counted (exact)."""
        return int(self.counts.sum(dtype=np.int64))

    def memo(self, key, compute):
        """Cache a derived quantity on this (immutable) table.

        Every measure finalized from the same table shares margins, mutual
        information and assignments instead of recomputing them.
        """
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def truth_sizes(self) -> np.ndarray:
        return self.memo("truth_sizes", lambda: sum_by(self.rows, self.counts, self.shape[0]))

    def pred_sizes(self) -> np.ndarray:
        return self.memo("pred_sizes", lambda: sum_by(self.cols, self.counts, self.shape[1]))

    def dense(self, limit: int = DENSE_LIMIT) -> np.ndarray:
        """The dense ``(H, H')`` int64 table; refuses tables above ``limit`` cells."""
        h, hp = self.shape
        if h * hp > limit:
            raise TooLargeError(
                f"the contingency table has {h} x {hp} = {h * hp:,} cells, more than the "
                f"{limit:,} allowed for a dense copy of it"
            )
        out = np.zeros((h, hp), dtype=np.int64)
        out[self.rows, self.cols] = self.counts
        return out

    def transpose(self) -> Table:
        return Table(self.cols, self.rows, self.counts, self.pred_labels, self.truth_labels)


def sum_by(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 group sums.

    ``np.bincount`` with weights sums in float64, exact while the total stays
    below 2**53; beyond that the slower exact ``np.add.at`` is used.
    """
    if values.size == 0 or int(values.max()) * values.size < (1 << 53):
        return np.rint(np.bincount(index, weights=values, minlength=size)).astype(np.int64)
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, index, values)
    return out


def check_label_bounds(lo: int, hi: int, name: str) -> None:
    """Raise :class:`~daskbicl.errors.LabelError` unless ``0 <= lo <= hi <= 2**63 - 1``."""
    if lo < 0:
        raise LabelError(
            f"{name} contains the negative label {lo}; labels must be non-negative integers"
        )
    if hi > MAX_LABEL:
        raise LabelError(
            f"{name} contains the label {hi}, larger than the largest supported label "
            f"2**63 - 1 = {MAX_LABEL}; relabel the clusters (any distinct non-negative "
            "integers work)"
        )


def _top(values: np.ndarray, name: str) -> tuple[int | None, int]:
    """``(lo, hi)`` of one chunk of integer labels in as few passes as possible.

    ``lo`` is None when the chunk is known to hold no negative value but its
    minimum was not computed: one ``max`` over the unsigned view answers both
    "any negative?" (the sign bit makes a negative value the largest) and,
    when there is none, "largest label?".  Only a chunk with negative values
    pays for a ``min`` and a second ``max``.
    """
    kind = values.dtype.kind
    if kind not in "iu":
        raise LabelError(f"{name} must hold integers, got dtype {values.dtype}")
    if kind == "u":
        hi = int(values.max())
        if hi > MAX_LABEL:
            check_label_bounds(0, hi, name)
        return None, hi
    top = int(values.view(values.dtype.str.replace("i", "u")).max())
    if top >> (8 * values.dtype.itemsize - 1) == 0:  # sign bit never set: no negative label
        return None, top
    return int(values.min()), int(values.max())


def _np_factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, distinct values)`` of integer labels by sorting (the numpy-only default)."""
    uniq, codes = np.unique(values, return_inverse=True)
    return codes.reshape(-1), uniq


def _np_count_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys, their counts)`` by sorting (the numpy-only default)."""
    return np.unique(keys, return_counts=True)


def pair_keys(t: np.ndarray, t_lo: int, width_p: int, p: np.ndarray, p_lo: int, out=None) -> np.ndarray:
    """``(t - t_lo)·width_p + (p - p_lo)`` as int64 (into ``out`` when given), without intermediate overflow.

    ``t - t_lo < width_t`` and the key ends in ``[0, width_t·width_p)``;
    ``p_lo`` is subtracted before ``p`` is added, so the partial value stays
    above ``-(2**63 - 1)`` even for labels near ``2**63``.  8-byte labels
    are read through an int64 view (unsigned ones were checked to be at most
    ``2**63 - 1``); narrower ones are widened inside the arithmetic.
    """
    if t.dtype.itemsize == 8:
        t = t.view(np.int64)
    if p.dtype.itemsize == 8:
        p = p.view(np.int64)
    if t_lo:
        key = np.subtract(t, t_lo, out=out, dtype=np.int64)
        key *= width_p
    else:
        key = np.multiply(t, width_p, out=out, dtype=np.int64)
    if p_lo:
        key -= p_lo
    key += p
    return key


#: Dense counting works through a chunk in blocks of at least this many labels, so
#: the int64 keys stay in cache and no chunk-sized temporary is allocated.
_BLOCK = 1 << 18


#: Chunks of one-byte codes of at least this many labels are counted by the compiled kernel
#: (:mod:`~daskbicl.kernels.coclustering.byte_counting`); smaller ones never load numba.
BYTE_KERNEL_MIN = 1 << 16


def _byte_table(t: np.ndarray, t_lo: int, width_t: int, p: np.ndarray, p_lo: int, width_p: int) -> np.ndarray | None:
    """The dense table of a large chunk of one-byte codes from the compiled kernel, flattened; else None."""
    if not (t.dtype == p.dtype == np.uint8 and BYTE_KERNEL_MIN <= t.size):
        return None
    from .byte_counting import MAX_LABELS, count_byte_pairs

    if t.size > MAX_LABELS:
        return None
    t, p = np.ascontiguousarray(t), np.ascontiguousarray(p)
    return count_byte_pairs(t, t_lo, width_t, p, p_lo, width_p).reshape(-1)


def _dense_table(t: np.ndarray, t_lo: int, width_t: int, p: np.ndarray, p_lo: int, width_p: int) -> np.ndarray:
    """The dense ``width_t·width_p`` count table of a chunk: a bincount of its pair keys, block by block."""
    by_bytes = _byte_table(t, t_lo, width_t, p, p_lo, width_p)
    if by_bytes is not None:
        return by_bytes
    cells = width_t * width_p
    block = max(_BLOCK, 8 * cells)  # adding a block's table costs at most 1/8 of making its keys
    if t.size <= block:
        return np.bincount(pair_keys(t, t_lo, width_p, p, p_lo), minlength=cells)
    out = np.zeros(cells, dtype=np.int64)
    buffer = np.empty(block, dtype=np.int64)
    for start in range(0, t.size, block):
        ts, ps = t[start : start + block], p[start : start + block]
        out += np.bincount(pair_keys(ts, t_lo, width_p, ps, p_lo, out=buffer[: ts.size]), minlength=cells)
    return out


def count_pairs(
    truth: np.ndarray, pred: np.ndarray, names: tuple[str, str] = ("truth labels", "pred labels"),
    unassigned: bool = False, *, factorize=_np_factorize, count_keys=_np_count_keys,
) -> PairCounts | DenseCounts | LabelledCounts:
    """Count the ``(truth, pred)`` label pairs of one chunk.

    Parameters
    ----------
    truth, pred : 1-D integer arrays of the same length
        Labels of the same objects in the two labelings.
    names : pair of str
        How to name the two arrays in error messages.
    unassigned : bool
        Accept negative labels as *unassigned* entries: they are all counted
        as the label -1 (:mod:`daskbicl.engine.labels` decides what they mean).
    factorize, count_keys : callables, optional
        How a side whose labels are spread over a wide range is turned into
        compact codes (``values -> (codes, distinct values)``), and how the
        distinct pair keys of a chunk with many pairs are counted
        (``keys -> (distinct keys, counts)``).  The defaults sort (numpy
        only); the engine passes hash-based ones (pandas), which cost the
        same whatever the spread of the labels.

    Returns
    -------
    DenseCounts, LabelledCounts or PairCounts
        Dense when the chunk's labels span a small range (one
        ``np.bincount``, the cost of a plain contingency pass); a dense block
        over the chunk's own labels when they fit one once compacted;
        otherwise the distinct pairs with their int64 counts.

    Examples
    --------
    >>> pc = count_pairs(np.array([0, 0, 7, 7]), np.array([5, 5, 5, 2**62])).to_pairs()
    >>> pc.truth.tolist(), pc.pred.tolist(), pc.count.tolist()
    ([0, 7, 7], [5, 5, 4611686018427387904], [2, 1, 1])
    >>> count_pairs(np.array([3, 3, 4]), np.array([1, 2, 2])).to_table().dense().tolist()
    [[1, 1], [0, 1]]
    """
    truth = np.asarray(truth).reshape(-1)
    pred = np.asarray(pred).reshape(-1)
    if truth.shape != pred.shape:
        raise ValueError(f"chunk lengths differ: {truth.shape[0]} vs {pred.shape[0]}")
    if truth.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PairCounts(empty, empty, empty)
    sides = [_side(truth, names[0], unassigned), _side(pred, names[1], unassigned)]
    budget = min(_DENSE_CELLS, max(1 << 12, 4 * truth.size))
    if sides[0].width(zero=True) * sides[1].width(zero=True) > budget:
        for side in sides:
            side.find_lo()
    (t, p) = sides
    if t.width() * p.width() <= budget:
        counts = _dense_table(t.values, t.lo, t.width(), p.values, p.lo, p.width())
        return DenseCounts(t.lo, p.lo, counts.astype(np.int64, copy=False).reshape(t.width(), p.width()))
    # Sparse: compact the sides spread over a range wider than the chunk, then count
    # the pairs densely if they now fit, else count the distinct pair keys.
    for side in sides:
        if side.width() > max(truth.size, 1 << 12):
            side.compact(factorize)
    if t.width() * p.width() <= budget:
        table = _dense_table(t.values, t.lo, t.width(), p.values, p.lo, p.width())
        nz = np.flatnonzero(table)
        if worth_a_block(nz.size, table.size):
            return LabelledCounts(t.label(np.arange(t.width())), p.label(np.arange(p.width())),
                                  table.astype(np.int64, copy=False).reshape(t.width(), p.width()))
        keys, cnt = nz, table[nz]
    else:
        if t.width() * p.width() > MAX_LABEL:  # keys would overflow: compact the other side too
            for side in sides:
                side.compact(factorize)
        keys, cnt = count_keys(pair_keys(t.values, t.lo, p.width(), p.values, p.lo))
    width_p = p.width()
    return PairCounts(t.label(keys // width_p), p.label(keys % width_p), np.asarray(cnt).astype(np.int64, copy=False))


class _side:
    """One side of a chunk while it is counted: its values, offset and (after compacting) its labels."""

    def __init__(self, values: np.ndarray, name: str, unassigned: bool):
        lo, hi = _top(values, name)
        if lo is not None and lo < 0:
            if not unassigned:
                check_label_bounds(lo, hi, name)
            if lo < -1:
                values, lo, hi = np.maximum(values, -1), -1, max(hi, -1)
        self.values, self._lo, self.hi = values, lo, hi
        self.uniques: np.ndarray | None = None

    @property
    def lo(self) -> int:
        return 0 if self._lo is None else self._lo

    def width(self, zero: bool = False) -> int:
        return self.hi - (0 if zero and self._lo is None else self.lo) + 1

    def find_lo(self) -> None:
        if self._lo is None:
            self._lo = int(self.values.min())

    def compact(self, factorize) -> None:
        if self.uniques is not None:
            return
        codes, uniques = factorize(self.values)
        self.values, self.uniques = np.asarray(codes).reshape(-1), np.asarray(uniques).astype(np.int64)
        self._lo, self.hi = 0, len(uniques) - 1

    def label(self, offsets: np.ndarray) -> np.ndarray:
        """The labels of the given offsets from ``lo`` (or of the given codes)."""
        if self.uniques is not None:
            return self.uniques[offsets]
        return (offsets + self.lo).astype(np.int64, copy=False)


def worth_a_block(nonzero: int, cells: int) -> bool:
    """Whether counts with ``nonzero`` non-zero cells of ``cells`` are handed on as a block (8 bytes a cell)
    rather than as their pairs (three 8-byte values a pair): a sparse block would cost more to send and merge."""
    return 3 * nonzero >= cells


def merge_pairs(*parts: PairCounts | DenseCounts | LabelledCounts) -> PairCounts | DenseCounts:
    """Exactly combine pair counts of disjoint sets of objects.

    Examples
    --------
    >>> a = count_pairs(np.array([1, 1]), np.array([2, 3]))
    >>> b = count_pairs(np.array([1, 9]), np.array([3, 3]))
    >>> m = merge_pairs(a, b).to_pairs()
    >>> list(zip(m.truth.tolist(), m.pred.tolist(), m.count.tolist()))
    [(1, 2, 1), (1, 3, 2), (9, 3, 1)]
    """
    dense = [p for p in parts if isinstance(p, DenseCounts)]
    if len(dense) == len(parts) and dense:
        lo_t = min(p.truth_lo for p in dense)
        lo_p = min(p.pred_lo for p in dense)
        shape = (max(p.truth_hi for p in dense) - lo_t + 1, max(p.pred_hi for p in dense) - lo_p + 1)
        if shape[0] * shape[1] <= _DENSE_CELLS:
            out = np.zeros(shape, dtype=np.int64)
            for p in dense:
                r0, c0 = p.truth_lo - lo_t, p.pred_lo - lo_p
                out[r0 : r0 + p.table.shape[0], c0 : c0 + p.table.shape[1]] += p.table
            return DenseCounts(lo_t, lo_p, out)
    pairs: list[PairCounts] = [p.to_pairs() for p in parts]
    pairs = [p for p in pairs if p.count.size]
    if not pairs:
        empty = np.zeros(0, dtype=np.int64)
        return PairCounts(empty, empty, empty)
    if len(pairs) == 1:
        return pairs[0]
    truth = np.concatenate([p.truth for p in pairs])
    pred = np.concatenate([p.pred for p in pairs])
    count = np.concatenate([p.count for p in pairs])
    order = np.lexsort((pred, truth))
    truth, pred, count = truth[order], pred[order], count[order]
    start = np.ones(truth.size, dtype=bool)
    start[1:] = (truth[1:] != truth[:-1]) | (pred[1:] != pred[:-1])
    idx = np.flatnonzero(start)
    return PairCounts(truth[idx], pred[idx], np.add.reduceat(count, idx))
