"""Membership lists of rows and columns, counted chunk by chunk (numpy only).

A row's *signature* is the set of biclusters whose row set contains it
(truth biclusters numbered 0..K-1, pred biclusters K..K+L-1, one numbering
for both sides); a column's likewise.  A cell lies in exactly the
biclusters its row and its column share, so every cell statistic follows
from the row and column signatures (docs/measures/micro.md).

:class:`Memberships` keeps one axis as sparse lists: the distinct non-empty
signatures as ascending element lists (CSR: ``ptr``, ``el``) with the number
of rows (columns) that have each (``cnt``), the number of items of the axis
(empty ones included), and the *Gram table* ``gram[a, b]`` = number of items
in both a and b (``gram[a, a]`` = the size of a's row or column set).  Its
memory grows with the number of memberships, never with rows × biclusters;
the truth × pred block of the two Gram tables gives the K × L shared-cell
table (E4SC, CE), and the whole tables the bounds of the plan.

* :func:`signature_counts` is the per-chunk function (masks of one block of rows
  or columns in), :func:`merge_memberships` the exact, associative combine;
* :func:`subproblem` takes the items that contain a set B of elements, with
  B's elements removed: the input of one part of the family enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...errors import InputError

__all__ = ["Memberships", "MembershipsPart", "join_parts", "memberships_of_table", "merge_memberships", "merge_part",
           "one_side", "pack_masks", "signature_counts", "subproblem"]

# Columns of a mask block turned into lists at once (bounds the temporaries).
_SUB = 1 << 17

# Items x elements above which the Gram table is a dense product (BLAS).
_DENSE_GRAM = 0.02


def _words(n: int) -> np.ndarray:
    """Fixed random 64-bit words of elements 0..n-1 (hashing lists; same in every process)."""
    return np.random.default_rng(0x5EED5).integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)


@dataclass(frozen=True, eq=False)
class Memberships:
    """The signatures of one axis (module docstring).

    Attributes
    ----------
    n_truth, n_pred : int
        K and L.
    n_items : int
        Rows (columns) seen, including those in no bicluster.
    ptr, el, cnt : ndarray
        Distinct non-empty signatures: signature s has the ascending
        elements ``el[ptr[s]:ptr[s + 1]]`` (int32) and ``cnt[s]`` items (int64).
    gram : ndarray of int64, shape (K + L, K + L)
        Items in both a and b.

    Examples
    --------
    >>> m = signature_counts(np.array([[1, 1, 0]], bool), np.array([[0, 1, 1]], bool))
    >>> m.lists(), m.cnt.tolist(), m.gram.tolist()
    ([[0], [0, 1], [1]], [1, 1, 1], [[2, 1], [1, 2]])
    """

    n_truth: int
    n_pred: int
    n_items: int
    ptr: np.ndarray
    el: np.ndarray
    cnt: np.ndarray
    gram: np.ndarray

    @property
    def n_elem(self) -> int:
        """K + L."""
        return self.n_truth + self.n_pred

    @property
    def n_signatures(self) -> int:
        """Number of distinct non-empty signatures."""
        return len(self.cnt)

    @property
    def nbytes(self) -> int:
        """Memory of the arrays."""
        return int(self.ptr.nbytes + self.el.nbytes + self.cnt.nbytes + self.gram.nbytes)

    def __sizeof__(self) -> int:
        """The arrays' bytes (``dask.sizeof``: a worker's memory accounting and the scheduler's transfer costs)."""
        return object.__sizeof__(self) + self.nbytes

    def lists(self) -> list[list[int]]:
        """The signatures as Python lists (small inputs, tests)."""
        return [self.el[a:b].tolist() for a, b in zip(self.ptr[:-1], self.ptr[1:])]

    def sizes(self) -> np.ndarray:
        """Items in each bicluster (the diagonal of the Gram table)."""
        return np.diagonal(self.gram).copy()

    @cached_property
    def index(self) -> tuple[np.ndarray, np.ndarray]:
        """The signatures containing each element: ``sig[ptr[e]:ptr[e + 1]]`` (built on first use)."""
        owner = np.repeat(np.arange(len(self.cnt)), np.diff(self.ptr))
        order = np.argsort(self.el, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(self.el, minlength=self.n_elem))]).astype(np.int64)
        return ptr, owner[order]

    def __getstate__(self):  # the index is rebuilt where it is used, never shipped
        state = dict(self.__dict__)
        state.pop("index", None)
        return state


def _check_mask(a: object, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 2 or a.dtype != np.bool_:
        raise InputError(
            f"{name} must be a 2-D bool array (biclusters x rows-or-columns); "
            f"got dtype {a.dtype} with shape {a.shape}. Convert it with "
            "mask.astype(bool).")
    return a


def _hashes(ptr: np.ndarray, el: np.ndarray, n_elem: int) -> np.ndarray:
    """A 64-bit hash of each (non-empty) list: equal lists, equal hashes."""
    words = _words(n_elem)
    return np.add.reduceat(words[el], ptr[:-1]) + np.diff(ptr).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def _dedupe_kept(ptr: np.ndarray, el: np.ndarray, cnt: np.ndarray, n_elem: int):
    """(the lists that stay, ascending indices into the input; their summed counts).

    Identical non-empty lists merge into the first of them; lists a hash
    cannot separate stay apart (a group of equal hashes merges only if
    every member equals its first); empty lists are dropped.
    """
    n = len(cnt)
    lengths = np.diff(ptr)
    idx = np.flatnonzero(lengths > 0)
    if len(idx) < n:
        ptr, el, cnt = _take(ptr, el, cnt, idx)
        n, lengths = len(cnt), lengths[idx]
    if n <= 1:
        return idx, cnt
    h = _hashes(ptr, el, n_elem)
    order = np.argsort(h)  # equal hashes in any order: a group's representative is its first list
    hs = h[order]
    first = np.concatenate([[True], hs[1:] != hs[:-1]])
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    rep = np.minimum.reduceat(order, starts)[group]  # representative of each item's group
    # verify: same length and same elements as the representative
    same = lengths[order] == lengths[rep]
    pos = np.flatnonzero(same)
    if len(pos):
        it, rp = order[pos], rep[pos]
        ln = lengths[it]
        offs = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
        eq = el[np.repeat(ptr[it], ln) + offs] == el[np.repeat(ptr[rp], ln) + offs]
        ok = np.ones(len(it), bool)
        bad = np.flatnonzero(~eq)
        if len(bad):
            ok[np.searchsorted(np.cumsum(ln), bad, side="right")] = False
        same[pos] = ok
    # a group merges only if all its members match the representative
    bad_group = np.zeros(len(starts), bool)
    bad_group[group[~same]] = True
    target = np.where(bad_group[group], order, rep)
    kept = np.zeros(n, bool)  # the lists that stay, in their first order (no sort: they are positions)
    kept[target] = True
    counts = np.zeros(int(kept.sum()), np.int64)
    np.add.at(counts, (np.cumsum(kept) - 1)[target], cnt[order])
    return idx[np.flatnonzero(kept)], counts


def _dedupe(ptr: np.ndarray, el: np.ndarray, cnt: np.ndarray, n_elem: int):
    """Merge identical lists (summing counts); lists a hash cannot separate stay apart."""
    kept, counts = _dedupe_kept(ptr, el, cnt, n_elem)
    return (*_take(ptr, el, np.zeros(len(cnt), np.int64), kept)[:2], counts)


def _take(ptr, el, cnt, idx):
    """The lists ``idx`` (in that order)."""
    ln = np.diff(ptr)[idx]
    nptr = np.concatenate([[0], np.cumsum(ln)]).astype(np.int64)
    offs = np.arange(int(nptr[-1])) - np.repeat(nptr[:-1], ln)
    return nptr, el[np.repeat(ptr[idx], ln) + offs].astype(np.int32), cnt[idx].astype(np.int64)


def _lists_of_block(mask: np.ndarray):
    """CSR lists (one per column of ``mask``, elements ascending) of a (n_elem, m) bool block."""
    e, item = np.nonzero(mask)
    order = np.argsort(item, kind="stable")
    ln = np.bincount(item, minlength=mask.shape[1])
    ptr = np.concatenate([[0], np.cumsum(ln)]).astype(np.int64)
    return ptr, e[order].astype(np.int32), ln


def _gram_of_lists(ptr, el, cnt, n_elem: int) -> np.ndarray:
    """``gram[a, b] = sum of cnt over lists containing a and b`` (blocks of at most ~32 MB)."""
    ln = np.diff(ptr)
    out = np.zeros((n_elem, n_elem), np.int64)
    step = max(1, (1 << 22) // max(n_elem, 1))
    for s in range(0, len(cnt), step):
        lo, hi = s, min(len(cnt), s + step)
        lb = ln[lo:hi]
        pairs = float(np.sum(lb.astype(np.float64) ** 2))
        if pairs == 0:
            continue
        e = el[ptr[lo] : ptr[hi]]
        owner = np.repeat(np.arange(hi - lo), lb)
        w = cnt[lo:hi]
        if pairs > _DENSE_GRAM * n_elem * n_elem * (hi - lo):  # BLAS; exact below 2**53
            a = np.zeros((hi - lo, n_elem), np.float64)
            a[owner, e] = 1.0
            out += np.rint((a * w[:, None].astype(np.float64)).T @ a).astype(np.int64)
            continue
        flat = out.reshape(-1)
        for length in np.unique(lb).tolist():  # every pair of elements of every list
            if length == 0:
                continue
            sel = np.flatnonzero(lb == length)
            sub = max(1, (1 << 20) // (length * length))
            for t in range(0, len(sel), sub):
                part = sel[t : t + sub]
                rows = el[ptr[lo + part][:, None] + np.arange(length)]
                pa = np.repeat(rows, length, axis=1).ravel().astype(np.int64)
                pb = np.tile(rows, (1, length)).ravel()
                keys = pa * n_elem + pb
                wts = np.repeat(w[part], length * length)
                if n_elem * n_elem <= 4 * len(keys):
                    flat += np.bincount(keys, weights=wts, minlength=n_elem * n_elem).astype(np.int64)
                else:  # few pairs among many biclusters: no n x n temporary
                    np.add.at(flat, keys, wts)
    return out


def pack_masks(truth_mask: np.ndarray, pred_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two (biclusters x items) bool masks packed eight items to a byte, and each byte's number of items.

    What :func:`signature_counts` takes as ``(truth, pred, items)``: a
    cluster ships an eighth of the bytes (in-memory masks are sent to the
    workers).  Cut the three arrays along their last axis at the same byte
    positions; every byte holds 8 items but the last one.

    Examples
    --------
    >>> t, p = np.array([[1, 0, 1]], bool), np.array([[0, 1, 1]], bool)
    >>> m = signature_counts(*pack_masks(t, p))
    >>> m.lists() == signature_counts(t, p).lists(), m.n_items
    (True, 3)
    """
    t = _check_mask(truth_mask, "truth_mask")
    p = _check_mask(pred_mask, "pred_mask")
    if t.shape[1] != p.shape[1]:
        raise InputError(f"truth_mask covers {t.shape[1]} items but pred_mask covers {p.shape[1]}")
    items = np.full(-(-t.shape[1] // 8), 8, np.uint8)
    if t.shape[1] % 8:
        items[-1] = t.shape[1] % 8
    return np.packbits(t, axis=1), np.packbits(p, axis=1), items


def _unpacked(block: np.ndarray, n: int, name: str) -> np.ndarray:
    block = np.asarray(block)
    if block.ndim != 2 or block.dtype != np.uint8:
        raise InputError(f"{name} must be a 2-D uint8 array of packed bits (pack_masks) when the items per byte "
                         f"are given; got dtype {block.dtype} with shape {block.shape}")
    return np.unpackbits(block, axis=1, count=n).view(np.bool_)


def signature_counts(truth_mask_block: np.ndarray, pred_mask_block: np.ndarray,
                     items: np.ndarray | None = None) -> Memberships:
    """The signatures of one chunk of rows (or columns) and its Gram table.

    Parameters
    ----------
    truth_mask_block : ndarray of bool, shape (K, m)
        ``truth_mask_block[k, i]``: item i of the chunk is in truth bicluster k.
    pred_mask_block : ndarray of bool, shape (L, m)
        The same for the predicted biclusters.
    items : ndarray of uint8, optional
        With it, both blocks are packed bits (:func:`pack_masks`: uint8,
        eight items a byte) and ``items`` holds each byte's number of items.

    Examples
    --------
    >>> t = np.array([[1, 1, 0, 0]], bool)
    >>> p = np.array([[1, 1, 1, 0], [0, 0, 0, 0]], bool)
    >>> m = signature_counts(t, p)
    >>> m.lists(), m.cnt.tolist(), m.n_items
    ([[0, 1], [1]], [2, 1], 4)
    """
    if items is not None:
        n = int(np.sum(items, dtype=np.int64))
        truth_mask_block = _unpacked(truth_mask_block, n, "truth_mask_block")
        pred_mask_block = _unpacked(pred_mask_block, n, "pred_mask_block")
    t = _check_mask(truth_mask_block, "truth_mask_block")
    p = _check_mask(pred_mask_block, "pred_mask_block")
    if t.shape[1] != p.shape[1]:
        raise InputError(
            f"truth_mask_block covers {t.shape[1]} rows/columns but "
            f"pred_mask_block covers {p.shape[1]}; chunk both masks the same way.")
    k, l_, m = t.shape[0], p.shape[0], t.shape[1]
    n = k + l_
    ptrs: list[np.ndarray] = [np.zeros(1, np.int64)]
    els: list[np.ndarray] = []
    cnts: list[np.ndarray] = []
    offset = 0
    gram = np.zeros((n, n), np.int64)
    for s in range(0, m, _SUB):
        block = np.concatenate([t[:, s : s + _SUB], p[:, s : s + _SUB]], axis=0)
        ptr, el, _ = _lists_of_block(block)
        ptr, el, cnt = _dedupe(ptr, el, np.ones(len(ptr) - 1, np.int64), n)
        gram += _gram_of_lists(ptr, el, cnt, n)
        ptrs.append(ptr[1:] + offset)
        offset += len(el)
        els.append(el)
        cnts.append(cnt)
    ptr = np.concatenate(ptrs)
    el = np.concatenate(els) if els else np.zeros(0, np.int32)
    cnt = np.concatenate(cnts) if cnts else np.zeros(0, np.int64)
    if len(cnts) > 1:
        ptr, el, cnt = _dedupe(ptr, el, cnt, n)
    return Memberships(k, l_, m, ptr, el, cnt, gram)


def _flat(parts) -> list[Memberships]:
    """The Memberships of (nested) lists/tuples, in order, checked to count the same biclusters."""
    flat: list[Memberships] = []
    stack = list(parts)
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Memberships):
            flat.append(x)
        else:
            raise InputError(f"cannot merge a {type(x).__name__}; expected Memberships")
    if not flat:
        raise InputError("merge_memberships needs at least one Memberships")
    flat.reverse()
    k, l_ = flat[0].n_truth, flat[0].n_pred
    for x in flat:
        if (x.n_truth, x.n_pred) != (k, l_):
            raise InputError(
                f"cannot merge signatures of {x.n_truth}+{x.n_pred} biclusters with "
                f"{k}+{l_}; every chunk must see all biclusters of both sides.")
    return flat


def _concatenated(flat: list[Memberships]):
    offsets = np.cumsum([0] + [len(x.el) for x in flat])
    ptr = np.concatenate([np.zeros(1, np.int64)] + [x.ptr[1:] + o for x, o in zip(flat, offsets)])
    el = np.concatenate([x.el for x in flat]).astype(np.int32)
    cnt = np.concatenate([x.cnt for x in flat]).astype(np.int64)
    return ptr, el, cnt


def merge_memberships(*parts) -> Memberships:
    """Exactly combine chunk results (sums of counts and Gram tables).

    Accepts :class:`Memberships` and (nested) lists/tuples of them, as a dask
    tree reduction passes them; associative and commutative.

    Examples
    --------
    >>> t, p = np.array([[1, 0, 1]], bool), np.array([[1, 1, 0]], bool)
    >>> m = merge_memberships(signature_counts(t[:, :1], p[:, :1]), [signature_counts(t[:, 1:], p[:, 1:])])
    >>> m.lists(), m.cnt.tolist(), m.n_items
    ([[0, 1], [1], [0]], [1, 1, 1], 3)
    """
    flat = _flat(parts)
    k, l_ = flat[0].n_truth, flat[0].n_pred
    ptr, el, cnt = _concatenated(flat)
    ptr, el, cnt = _dedupe(ptr, el, cnt, k + l_)
    gram = sum((x.gram for x in flat), np.zeros((k + l_, k + l_), np.int64))
    return Memberships(k, l_, sum(x.n_items for x in flat), ptr, el, cnt, gram)


@dataclass(frozen=True)
class MembershipsPart:
    """One hash partition of a merge (:func:`merge_part`): its distinct lists, their counts and the position
    of each one's first occurrence in the merged parts; the first partition carries the totals."""

    n_truth: int
    n_pred: int
    ptr: np.ndarray
    el: np.ndarray
    cnt: np.ndarray
    first: np.ndarray
    n_items: int | None = None
    gram: np.ndarray | None = None


def merge_part(index: int, n_parts: int, *parts) -> MembershipsPart:
    """The lists of partition ``index`` of ``n_parts`` (by their hash) of :func:`merge_memberships`'s result.

    Identical lists have equal hashes, so each partition merges its lists
    alone, and the ``n_parts`` partitions are merged side by side, as tasks;
    :func:`join_parts` puts them back in first-occurrence order: the same
    :class:`Memberships` as :func:`merge_memberships` of the same parts,
    array for array.

    >>> t, p = np.array([[1, 0, 1, 1]], bool), np.array([[1, 1, 0, 1]], bool)
    >>> chunks = [signature_counts(t[:, :2], p[:, :2]), signature_counts(t[:, 2:], p[:, 2:])]
    >>> joined = join_parts(*(merge_part(i, 3, *chunks) for i in range(3)))
    >>> whole = merge_memberships(*chunks)
    >>> joined.lists() == whole.lists() and joined.cnt.tolist() == whole.cnt.tolist()
    True
    """
    flat = _flat(parts)
    k, l_ = flat[0].n_truth, flat[0].n_pred
    ptr, el, cnt = _concatenated(flat)
    listed = np.flatnonzero(np.diff(ptr) > 0)
    listed_ptr, listed_el, _ = _take(ptr, el, cnt, listed)
    mine = listed[_hashes(listed_ptr, listed_el, k + l_) % np.uint64(n_parts) == np.uint64(index)]
    ptr, el, cnt = _take(ptr, el, cnt, mine)
    kept, counts = _dedupe_kept(ptr, el, cnt, k + l_)
    ptr, el, _ = _take(ptr, el, cnt, kept)
    if index != 0:
        return MembershipsPart(k, l_, ptr, el, counts, mine[kept])
    gram = sum((x.gram for x in flat), np.zeros((k + l_, k + l_), np.int64))
    return MembershipsPart(k, l_, ptr, el, counts, mine[kept], sum(x.n_items for x in flat), gram)


def join_parts(*parts: MembershipsPart) -> Memberships:
    """The :class:`Memberships` of the partitions of one merge (:func:`merge_part`), in first-occurrence order."""
    head = next(p for p in parts if p.gram is not None)
    assert head.gram is not None
    ptr, el, cnt = _concatenated([Memberships(p.n_truth, p.n_pred, 0, p.ptr, p.el, p.cnt, head.gram) for p in parts])
    order = np.argsort(np.concatenate([p.first for p in parts]), kind="stable")
    ptr, el, cnt = _take(ptr, el, cnt, order)
    return Memberships(head.n_truth, head.n_pred, int(head.n_items or 0), ptr, el, cnt, head.gram)


def subproblem(m: Memberships, required=(), keep=None):
    """The signatures containing every element of ``required``, those elements removed.

    ``keep`` ("truth" or "pred") also drops the elements of the other side
    (the one-sided families of the normalisers).  Returns ``(ptr, el, cnt)``
    with identical lists merged; with B non-empty, the items in B and nothing
    else are kept as one empty list (they are cells of B's rectangle).

    Examples
    --------
    >>> m = signature_counts(np.array([[1, 1, 0], [1, 0, 1]], bool), np.zeros((0, 3), bool))
    >>> ptr, el, cnt = subproblem(m, (0,))
    >>> ptr.tolist(), el.tolist(), cnt.tolist()   # item 0: in 0 and 1; item 1: in 0 only
    ([0, 1, 1], [1], [1, 1])
    """
    if keep not in (None, "truth", "pred"):
        raise InputError(f"keep must be 'truth', 'pred' or None, got {keep!r}")
    if required:  # only the signatures of the rarest required element are read
        first = min(required, key=lambda b: m.index[0][b + 1] - m.index[0][b])
        cand = m.index[1][m.index[0][first] : m.index[0][first + 1]]
        ptr, el, cnt = _take(m.ptr, m.el, m.cnt, cand)
    else:
        ptr, el, cnt = m.ptr, m.el, m.cnt
    n_sig = len(cnt)
    owner = np.repeat(np.arange(n_sig), np.diff(ptr))
    has = np.ones(n_sig, bool)
    drop = np.zeros(len(el), bool)
    for b in required:
        inb = el == b
        h = np.zeros(n_sig, bool)
        h[owner[inb]] = True
        has &= h
        drop |= inb
    if keep == "truth":
        drop |= el >= m.n_truth
    elif keep == "pred":
        drop |= el < m.n_truth
    idx = np.flatnonzero(has)
    sel = has[owner] & ~drop
    new = np.full(n_sig, -1, np.int64)
    new[idx] = np.arange(len(idx))
    counts = np.bincount(new[owner[sel]], minlength=len(idx))
    nptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nel = el[sel].astype(np.int32)
    ncnt = cnt[idx].astype(np.int64)
    # merge identical lists (an empty list stands for items in B only)
    empty = counts == 0
    n_empty = int(ncnt[empty].sum())
    if empty.any():
        keep_idx = np.flatnonzero(~empty)
        nptr, nel, ncnt = _take(nptr, nel, ncnt, keep_idx)
    nptr, nel, ncnt = _dedupe(nptr, nel, ncnt, m.n_elem)
    if n_empty and required:  # without B, an empty list is an item in no bicluster kept
        nptr = np.concatenate([nptr, nptr[-1:]])
        ncnt = np.concatenate([ncnt, [n_empty]]).astype(np.int64)
    return nptr, nel, ncnt


def one_side(m: Memberships, side: str):
    """:func:`subproblem` with no required element, keeping one side's elements."""
    return subproblem(m, (), keep=side)


def memberships_of_table(table) -> Memberships:
    """The signatures of one axis of two co-clusterings, from their contingency table (no mask, no pass).

    Each item is in exactly one truth cluster i and one pred cluster j: the
    distinct signatures are the non-zero cells ``[i, K + j]`` with ``n_ij``
    items, and the Gram table holds the cluster sizes and the table itself.
    ``table`` is a :class:`~daskbicl.kernels.coclustering.contingency.Table`
    (coordinate form; every cluster has at least one item).

    Examples
    --------
    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> m = memberships_of_table(Table.from_labels([0, 0, 1], [0, 1, 1]))
    >>> m.lists(), m.cnt.tolist(), m.gram.tolist()
    ([[0, 2], [0, 3], [1, 3]], [1, 1, 1], [[2, 0, 1, 1], [0, 1, 0, 1], [1, 0, 1, 0], [1, 1, 0, 2]])
    """
    k, l = len(table.truth_labels), len(table.pred_labels)
    rows, cols = np.asarray(table.rows, np.int64), np.asarray(table.cols, np.int64)
    counts = np.asarray(table.counts, np.int64)
    order = np.lexsort((cols, rows))
    rows, cols, counts = rows[order], cols[order], counts[order]
    el = np.empty(2 * len(counts), np.int32)
    el[0::2], el[1::2] = rows, k + cols
    gram = np.zeros((k + l, k + l), np.int64)
    np.add.at(gram, (rows, rows), counts)
    np.add.at(gram, (k + cols, k + cols), counts)
    np.add.at(gram, (rows, k + cols), counts)
    np.add.at(gram, (k + cols, rows), counts)
    return Memberships(k, l, int(counts.sum()), np.arange(0, 2 * len(counts) + 1, 2, dtype=np.int64), el, counts,
                       gram)
