"""Shared members of sparse bicluster masks from the positions of their True entries (compiled with numba).

:mod:`daskbicl.kernels.bicluster.mask_counting` finds each mask row's True
entries with ``np.flatnonzero`` (numpy scans a bool row many bytes at a
time, about a fifth of a compiled byte-by-byte scan); here those positions
are turned into per-element lists of the biclusters holding each element
(a counting sort: one pass to count, one to place) and every (truth, pred)
pair of biclusters listed for an element gets one count.  The cost is the
True entries plus ``sum_i |T_i|·|P_i|`` increments; nothing per False entry.
Scalar code only (numba compiles it quickly); counts are exact int64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["shared_from_positions"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)


@njit(cache=True, nogil=True)
def _by_element(where, row_start, ptr, cursor, members):
    """``members[ptr[i]:ptr[i + 1]]``: the rows listing element ``i`` (ascending), from each row's positions
    ``where[row_start[k]:row_start[k + 1]]``; ``ptr`` (m + 1) is zeros on entry, ``cursor`` (m) scratch."""
    for a in range(where.shape[0]):
        ptr[where[a] + 1] += 1
    for i in range(ptr.shape[0] - 1):
        ptr[i + 1] += ptr[i]
        cursor[i] = ptr[i]
    for k in range(row_start.shape[0] - 1):
        for a in range(row_start[k], row_start[k + 1]):
            i = where[a]
            members[cursor[i]] = k
            cursor[i] += 1


@njit(cache=True, nogil=True)
def _add_pairs(t_ptr, t_members, p_ptr, p_members, shared):
    """``shared[k, l] += 1`` for every element and every truth ``k`` and pred ``l`` listed for it."""
    for i in range(t_ptr.shape[0] - 1):
        for a in range(t_ptr[i], t_ptr[i + 1]):
            k = t_members[a]
            for b in range(p_ptr[i], p_ptr[i + 1]):
                shared[k, p_members[b]] += 1


def _lists(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr, members)`` of a bool mask (rows, m): per element, the rows that hold it."""
    where = [np.flatnonzero(row) for row in mask]
    row_start = np.zeros(mask.shape[0] + 1, np.int64)
    np.cumsum([w.size for w in where], out=row_start[1:])
    flat = np.concatenate(where) if where else np.zeros(0, np.int64)
    ptr = np.zeros(mask.shape[1] + 1, np.int64)
    members = np.empty(flat.size, np.int32)
    _by_element(flat, row_start, ptr, np.empty(mask.shape[1], np.int64), members)
    return ptr, members


def shared_from_positions(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The (K, L) int64 table ``shared[k, l] = #{i : t[k, i] and p[l, i]}`` of two bool masks (K, m), (L, m)."""
    shared = np.zeros((t.shape[0], p.shape[0]), np.int64)
    if t.shape[1] == 0 or not t.shape[0] or not p.shape[0]:
        return shared
    t_ptr, t_members = _lists(t)
    p_ptr, p_members = _lists(p)
    _add_pairs(t_ptr, t_members, p_ptr, p_members, shared)
    return shared
