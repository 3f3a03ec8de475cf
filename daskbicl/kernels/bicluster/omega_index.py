"""The omega index of two covers from their joint membership signatures (numpy + numba).

Two covers (overlapping clusterings) of the same n items: item i belongs to
the set T(i) of truth clusters and P(i) of pred clusters.  A pair of items
{i, j} *shares* a = |T(i) ∩ T(j)| truth clusters and b = |P(i) ∩ P(j)| pred
clusters.  The omega index (Collins & Dent 1988) compares the two counts
over all n(n-1)/2 pairs:

    observed  = #pairs with a == b,
    expected  = Σ_k (#pairs with a == k)(#pairs with b == k) / M,   M = n(n-1)/2,
    omega     = (observed − expected) / (M − expected).

Every quantity is a count of pairs by (a, b): :func:`pair_histogram` counts
them from the distinct joint signatures (the set T(i) ∪ P(i), one numbering:
truth clusters 0..K-1, pred clusters K..K+L-1) and the number of items having
each, never item by item.  Two classes of the same signature s contribute
C(cnt_s, 2) pairs sharing all of s; two different signatures s, s' contribute
cnt_s·cnt_s' pairs, and only the signature pairs that share a cluster are
visited (through the clusters each signature lists); every other pair shares
nothing (a = b = 0) and is counted by subtraction.  The work is
Σ_e (#signatures listing e)² / 2 merges of two short sorted lists.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...errors import InputError, TooLargeError

__all__ = ["omega_from_histogram", "pair_histogram", "pair_work"]

#: Up to this many items every pair count fits in int64 (C(n, 2) < 2**63).
MAX_ITEMS = 4_000_000_000


def _owners(ptr: np.ndarray, el: np.ndarray, n_elem: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the signatures listing each element."""
    sig = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    order = np.argsort(el, kind="stable")
    owner_ptr = np.concatenate([[0], np.cumsum(np.bincount(el, minlength=n_elem))]).astype(np.int64)
    return owner_ptr, sig[order]


def pair_work(ptr: np.ndarray, el: np.ndarray, n_elem: int) -> float:
    """Signature pairs :func:`pair_histogram` visits (an upper bound: Σ_e m_e² / 2)."""
    m = np.bincount(np.asarray(el, np.int64), minlength=n_elem).astype(np.float64)
    return float(np.sum(m * m) / 2.0)


def pair_histogram(ptr, el, cnt, n_items: int, n_truth: int, n_pred: int,
                   *, max_work: float = np.inf) -> np.ndarray:
    """``h[a, b]`` = number of pairs of items sharing a truth and b pred clusters.

    Parameters
    ----------
    ptr, el, cnt : ndarray
        Distinct non-empty joint signatures as CSR lists (elements ascending,
        truth clusters ``< n_truth``) and the number of items with each.
    n_items : int
        All items, those in no cluster included.
    n_truth, n_pred : int
        K and L.
    max_work : float
        Refuse (:class:`~daskbicl.errors.TooLargeError`) when
        :func:`pair_work` exceeds it.

    Examples
    --------
    >>> # items 0, 1 in truth cluster 0 and pred cluster 1 (element 1); item 2 in pred 1 only
    >>> h = pair_histogram(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([2, 1]), 3, 1, 1)
    >>> h.tolist()   # pair (0,1): a=1, b=1; pairs (0,2), (1,2): a=0, b=1
    [[0, 2], [0, 1]]
    """
    ptr = np.asarray(ptr, np.int64)
    el = np.asarray(el, np.int64)
    cnt = np.asarray(cnt, np.int64)
    if n_items > MAX_ITEMS:
        raise TooLargeError(f"{n_items} items: pair counts beyond {MAX_ITEMS} items are not supported")
    n_elem = n_truth + n_pred
    work = pair_work(ptr, el, n_elem)
    if work > max_work:
        raise TooLargeError(
            f"the pair count needs about {work:.3g} signature pairs, above the work limit "
            f"{max_work:.3g} (dask config daskbicl.max_work); raise it to compute anyway")
    lengths = np.diff(ptr)
    sig = np.repeat(np.arange(len(cnt)), lengths)
    truth_len = np.bincount(sig[el < n_truth], minlength=len(cnt))
    max_a = int(truth_len.max()) if len(cnt) else 0
    max_b = int((lengths - truth_len).max()) if len(cnt) else 0
    out = np.zeros((max_a + 1, max_b + 1), np.int64)
    if len(cnt):
        from .signature_pairs import add_shared_pairs  # numba: loaded only when a pair count runs

        owner_ptr, owner = _owners(ptr, el, n_elem)
        add_shared_pairs(ptr, el, cnt, owner_ptr, owner, n_truth, out)
    out[0, 0] += n_items * (n_items - 1) // 2 - int(out.sum(dtype=object))
    return out


def omega_from_histogram(h: np.ndarray) -> float:
    """The omega index from the (a, b) pair histogram (exact integers, one rounding).

    When every pair shares the same number of clusters on both sides the
    expected agreement is M and omega is 0/0; it is then 1 (the two covers
    cannot be told apart by pairs: the observed agreement is M too).

    Examples
    --------
    >>> omega_from_histogram(np.array([[3, 0], [0, 3]]))
    1.0
    >>> omega_from_histogram(np.array([[2, 1], [1, 2]]))
    0.3333333333333333
    """
    h = np.asarray(h).astype(object)
    m = int(h.sum())
    if m == 0:
        raise InputError("the omega index needs at least two items (no pair to compare)")
    k = min(h.shape)
    observed = sum(int(h[i, i]) for i in range(k))
    rows = [int(x) for x in h.sum(axis=1)]
    cols = [int(x) for x in h.sum(axis=0)]
    chance = sum(rows[i] * cols[i] for i in range(k))  # = expected · M
    if chance == m * m:
        return 1.0
    return float(Fraction(observed * m - chance, m * m - chance))
